# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The execution environment's base image, built without a registry: no registry base image can
be pulled here (only PyPI, deb.debian.org and the Go proxy are reachable), so debootstrap makes a
minimal Debian root file system and podman imports it.

    localhost/nodewright-ee-base:<tag>

The tag is a hash of what goes in (the recipe: _build's code, the suite, the mirror, the packages
and the local CA certificates copied in), so an image in podman's storage is reused as long as
they stay the same. One build at a time (flock on the cache): a second caller waits, then finds
the image. Cold: 2 to 4 minutes on 2 cores (debootstrap 100 s idle, 230 s with other jobs running;
the import 15 s); a changed recipe reads the packages from debootstrap's cache (<cache>/debs).

Environment:
  NW_EE_SUITE    the Debian suite (default trixie: Python 3.13)
  NW_EE_MIRROR   the Debian mirror (default http://deb.debian.org/debian)
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

# pylint: disable=wrong-import-position
from podman_env import PodmanError, build_once, cache_dir, code_digest, podman_env, run_podman, smoke  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO_ROOT / 'build' / 'artifacts' / 'ee'
BASE_REPOSITORY = 'localhost/nodewright-ee-base'
SUITE = os.environ.get('NW_EE_SUITE', 'trixie')
MIRROR = os.environ.get('NW_EE_MIRROR', 'http://deb.debian.org/debian')
# What ansible-builder 3.2's Containerfile runs in the base, beyond minbase (bash, coreutils, sed,
# getent, /usr/bin/env, apt-get): python3 (PYCMD /usr/bin/python3, its venv module for assemble's
# `python3 -m venv --without-pip`), `python3 -m pip` (Debian's pip: ensurepip is not in Debian's
# python3, so the definition sets options.skip_pip_install), CA certificates for pip's downloads.
PACKAGES = ('python3', 'python3-pip', 'ca-certificates')
# Certificates this machine added to its trust store (Debian's place for them): a TLS-inspecting
# egress proxy's CA, for one; pip in the image fails without them where the host's pip works.
LOCAL_CA_DIR = Path('/usr/local/share/ca-certificates')
DEBOOTSTRAP_HINT = ('hint: the base image is built with Debian\'s debootstrap from '
                    f'{MIRROR} (install debootstrap and debian-archive-keyring as .ci/run does)')


def _local_cas() -> list[Path]:
    if not LOCAL_CA_DIR.is_dir():
        return []
    return sorted(p for p in LOCAL_CA_DIR.rglob('*.crt') if p.is_file())


def base_tag() -> str:
    digest = hashlib.sha256()
    # the recipe's code, not the whole file: a comment or docstring edit does not rebuild the image
    digest.update(code_digest(_build).encode())
    digest.update(f'\0{SUITE}\0{MIRROR}\0{",".join(PACKAGES)}\0'.encode())
    for ca in _local_cas():
        digest.update(ca.name.encode() + b'\0' + ca.read_bytes())
    return digest.hexdigest()[:16]


def base_image_name() -> str:
    return f'{BASE_REPOSITORY}:{base_tag()}'


def _run_logged(cmd: list[str], log, hint: str, **kwargs) -> None:
    """cmd with its output appended to log; a failure raises PodmanError with the output's tail and hint."""
    log.write(f'$ {" ".join(cmd)}\n')
    log.flush()
    start = log.tell()
    try:
        proc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, check=False, **kwargs)
    except FileNotFoundError as exc:
        raise PodmanError(f'{exc}\n{hint}') from exc
    if proc.returncode != 0:
        log.flush()
        with open(log.name, encoding='utf-8', errors='replace') as reader:
            reader.seek(start)
            tail = reader.read()[-4000:]
        raise PodmanError(f'{" ".join(cmd)} failed (exit {proc.returncode}; log {log.name}):\n{tail}'.rstrip() + f'\n{hint}')


def _build(name: str, env: dict[str, str], log) -> None:
    cache = cache_dir()
    rootfs = cache / 'base-rootfs'
    debs = cache / 'debs'
    shutil.rmtree(rootfs, ignore_errors=True)
    debs.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    # --cache-dir keeps the downloaded .debs: a rebuild for a changed recipe reads them from disk
    _run_logged(['debootstrap', '--variant=minbase', f'--include={",".join(PACKAGES)}', f'--cache-dir={debs}',
                 SUITE, str(rootfs), MIRROR], log, DEBOOTSTRAP_HINT)
    cas = _local_cas()
    if cas:
        dest = rootfs / 'usr/local/share/ca-certificates'
        dest.mkdir(parents=True, exist_ok=True)
        for ca in cas:
            shutil.copy2(ca, dest / ca.name)
        _run_logged(['chroot', str(rootfs), 'update-ca-certificates'], log, DEBOOTSTRAP_HINT)
    # what an image does not need: package lists and archives (apt-get update reads them again)
    for sub in ('var/lib/apt/lists', 'var/cache/apt'):
        shutil.rmtree(rootfs / sub, ignore_errors=True)
        (rootfs / sub).mkdir(parents=True)
    log.write(f'debootstrap and CA certificates: {time.monotonic() - t0:.0f} s\n')
    t1 = time.monotonic()
    log.write(f'$ tar -C {rootfs} -c . | podman import ... - {name}\n')
    log.flush()
    tar = subprocess.Popen(['tar', '--numeric-owner', '-C', str(rootfs), '-c', '.'], stdout=subprocess.PIPE)
    try:
        # PEP 668: trixie's python3 is "externally managed"; ansible-builder's stages set this themselves,
        # the image has it for any other pip run in it (a user's additional_build_steps, a test's)
        run_podman(['import', '--change', 'ENV PIP_BREAK_SYSTEM_PACKAGES=1', '--change', 'CMD ["/bin/bash"]',
                    '--message', f'debootstrap --variant=minbase {SUITE} {MIRROR}', '-', name], env, stdin=tar.stdout)
    finally:
        tar.stdout.close()
        tar.wait()
    if tar.returncode != 0:
        raise PodmanError(f'tar of {rootfs} failed (exit {tar.returncode})')
    log.write(f'import: {time.monotonic() - t1:.0f} s\n')
    shutil.rmtree(rootfs, ignore_errors=True)


def ensure_base_image(env: dict[str, str] | None = None) -> str:
    """The base image's name, built if podman's storage does not have it."""
    env = podman_env() if env is None else env
    name = base_image_name()

    def build(log_path):
        start = time.monotonic()
        with open(log_path, 'w', encoding='utf-8') as log:
            _build(name, env, log)
            log.write(f'base image {name}: {time.monotonic() - start:.0f} s\n')
    build_once(name, env, '.base.lock', ARTIFACTS / f'base-{name.rsplit(":", 1)[1]}.log', build, BASE_REPOSITORY)
    smoke(name, env)
    return name


def host_root(suite: str = 'bookworm') -> Path:
    """A Debian ``suite`` minbase root file system (no Python), made once with debootstrap and kept in the cache: a
    stand-in for a node's host root where a package's steps run chrooted (tests/ee/test_role_package.py, the role
    package benchmark). Copy it before changing it."""
    import fcntl  # pylint: disable=import-outside-toplevel
    root = cache_dir() / f'host-root-{suite}'
    with open(cache_dir() / f'.host-root-{suite}.lock', 'w', encoding='utf-8') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (root / '.complete').is_file():
            shutil.rmtree(root, ignore_errors=True)
            out = subprocess.run(['debootstrap', '--variant=minbase', suite, str(root), MIRROR],
                                 capture_output=True, text=True, check=False)
            if out.returncode != 0:
                raise PodmanError(f'debootstrap {suite} failed:\n{out.stdout[-3000:]}{out.stderr[-3000:]}\n{DEBOOTSTRAP_HINT}')
            (root / '.complete').write_text('ok', encoding='utf-8')
    return root
