# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The images the real test nodes pull (containerd, imagePullPolicy Always), built here with podman
and served by a local registry, since no registry on the internet can be reached.

    refs = ensure_images()      # {'agent': ..., 'pause': ..., 'packages': {...}, 'registry': URL}
    ensure_registry()           # the registry's URL, started when it does not answer
    stop_registry()

    python tests/cluster/images.py ensure          # prints the dict as JSON
    python tests/cluster/images.py registry-up     # prints the URL
    python tests/cluster/images.py registry-down

Images (all named localhost/...: a CR's image cuts at the first ':', so localhost:5000/... cannot be
used; the registry listens on 127.0.0.1:80):
  localhost/nodewright-agent:<tag>   the NodeWright agent, from upstream's source (the snapshot
      ../shared/upstream/nodewright-agent-and-e2e-<commit>.tar.xz): its wheel built with hatchling,
      jsonschema and its dependencies as wheels for Python 3.13, on tests/ee/base_image.py's trixie base;
      the entrypoint is upstream's, `python -m skyhook_agent.controller`
  localhost/nodewright-pause:<tag>   containerd's sandbox_image: tests/cluster/pause (Go, static) alone
  localhost/nodewright-packages/<name>:<version>   the test packages of tests/cluster/packages/<name>
      (NodeWright shellscript packages: /skyhook-package/config.json + skyhook_dir/), on the trixie
      base (GNU cp for the stage pods' init container). A CR names them by image and version, so the
      version is the tag; each build is also tagged <version>-<digest>, and <version> is moved to it.

<tag> is a digest of what goes into the image (sources, the Containerfile's text, the base's tag). An
image the registry already serves is not built (nor is podman asked anything); one that podman's
storage has is only pushed. Builds and pushes run niced, one per image at a time (flock).

The registry (Debian's docker-registry) is a machine-wide cache-like service: started detached on
the first call, it stays up between test runs; `registry-down` stops it. Its storage, config file, log
and pid file are under <cache>/registry.

Environment:
  NODEWRIGHT_CACHE_DIR   the project's cache (default ${XDG_CACHE_HOME:-~/.cache}/nodewright-bridge)
"""

from __future__ import annotations

import argparse
import fcntl
import functools
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
sys.path.insert(0, str(REPO_ROOT / 'tests' / 'ee'))

# pylint: disable=wrong-import-position
from base_image import base_image_name, ensure_base_image  # noqa: E402
from podman_env import HINT, PodmanError, build_once, cache_dir as ee_cache_dir, lock_wait, podman_env  # noqa: E402

REGISTRY_HOST = 'localhost'
REGISTRY_ADDR = '127.0.0.1:80'
REGISTRY_URL = f'http://{REGISTRY_ADDR}'
AGENT_REPOSITORY = f'{REGISTRY_HOST}/nodewright-agent'
PAUSE_REPOSITORY = f'{REGISTRY_HOST}/nodewright-pause'
PACKAGE_REPOSITORY = f'{REGISTRY_HOST}/nodewright-packages'
ARTIFACTS = REPO_ROOT / 'build' / 'artifacts' / 'node-images'
PAUSE_SOURCE = HERE / 'pause'
PACKAGES = HERE / 'packages'
# the versions each test package's image is built at (its config.json says the first)
PACKAGE_VERSIONS = {'proof': ('1.0.0', '1.1.0'), 'fails': ('1.0.0',), 'hang': ('1.0.0',)}

UPSTREAM_COMMIT = '71ca22b'
UPSTREAM_TARBALL = f'nodewright-agent-and-e2e-{UPSTREAM_COMMIT}.tar.xz'
AGENT_PREFIX = 'nodewright/agent/skyhook-agent/'
AGENT_CHANGELOG = 'nodewright/agent/CHANGELOG.md'
# the agent's build backend (pyproject.toml: hatchling) and its one dependency at upstream's vendored
# version (agent/vendor/lock_file), with jsonschema's own dependencies pinned: wheels only, cp313
HATCHLING = 'hatchling==1.33.0'
AGENT_REQUIREMENTS = ('jsonschema==4.23.0', 'attrs==26.1.0', 'jsonschema-specifications==2025.9.1',
                      'referencing==0.37.0', 'rpds-py==2026.9.1')
GO_BUILD_FLAGS = ('-trimpath', '-ldflags=-s -w -buildid=')

MANIFEST_TYPES = ('application/vnd.oci.image.manifest.v1+json', 'application/vnd.oci.image.index.v1+json',
                  'application/vnd.docker.distribution.manifest.v2+json',
                  'application/vnd.docker.distribution.manifest.list.v2+json')
REGISTRY_HINT = ('hint: the registry is Debian\'s docker-registry (apt-get install docker-registry, as .ci/run does) '
                 f'on {REGISTRY_ADDR}: nothing else may listen there')
GO_HINT = 'hint: the pause program is built with Go (/usr/local/go/bin/go or go on PATH), CGO_ENABLED=0, no modules'
UPSTREAM_HINT = f'hint: the agent is built from {UPSTREAM_TARBALL} in ../shared/upstream (beside the checkout) or /work/shared/upstream'


class ImageError(PodmanError):
    """A step of building, checking or pushing a node image failed: the step, its log file, the log's tail."""


# --------------------------------------------------------------------------- the registry

def cache_root() -> Path:
    """The project's cache (the parent of podman_env's ee/)."""
    return ee_cache_dir().parent


def registry_dir() -> Path:
    return cache_root() / 'registry'


def _registry_config(directory: Path) -> str:
    return f'''# written by tests/cluster/images.py; not edited by hand
version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: {directory / 'data'}
  delete:
    enabled: true
http:
  addr: {REGISTRY_ADDR}
  # only for the state of an upload across several registries; one here
  secret: nodewright-bridge-tests
'''


_STARTED: list[subprocess.Popen] = []
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # the registry is local: never through a proxy


def _request(method: str, path: str, headers: dict | None = None, data: bytes | None = None, timeout: float = 10):
    """(status, headers, body) of a request to the registry; status 0 when nothing answers."""
    req = urllib.request.Request(REGISTRY_URL + path, data=data, headers=headers or {}, method=method)
    try:
        with _DIRECT.open(req, timeout=timeout) as resp:
            return resp.status, resp.headers, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers, exc.read()
    except (urllib.error.URLError, OSError):
        return 0, {}, b''


def registry_answers() -> bool:
    """GET /v2/ answers as a registry does (200 and the distribution API header)."""
    status, headers = _request('GET', '/v2/', timeout=3)[:2]
    return status == 200 and headers.get('Docker-Distribution-Api-Version') == 'registry/2.0'


def _pid_alive(pid: int) -> bool:
    try:
        cmdline = Path(f'/proc/{pid}/cmdline').read_bytes()
    except OSError:
        return False
    return b'docker-registry' in cmdline


def _log_tail(path: Path, size: int = 3000) -> str:
    try:
        return path.read_text(encoding='utf-8', errors='replace')[-size:]
    except OSError:
        return ''


def ensure_registry(timeout: float = 30) -> str:
    """The registry's URL: docker-registry started detached (its own session) unless one answers on REGISTRY_ADDR.
    Under a flock, so two callers at once start one; returns once GET /v2/ answers."""
    if registry_answers():
        return REGISTRY_URL
    directory = registry_dir()
    (directory / 'data').mkdir(parents=True, exist_ok=True)
    with open(directory / '.lock', 'w', encoding='utf-8') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if registry_answers():
            return REGISTRY_URL
        binary = shutil.which('docker-registry')
        if not binary:
            raise ImageError(f'registry: docker-registry is not installed\n{REGISTRY_HINT}')
        config, log_path, pid_path = directory / 'config.yml', directory / 'registry.log', directory / 'registry.pid'
        config.write_text(_registry_config(directory), encoding='utf-8')
        cmd = [binary, 'serve', str(config)]
        if os.nice(0) > 0 and os.geteuid() == 0:
            # a niced caller (make test's background build) must not leave the nodes' image pulls niced
            cmd = ['nice', '-n', str(-os.nice(0)), *cmd]
        with open(log_path, 'a', encoding='utf-8') as log:
            log.write(f'--- {time.strftime("%Y-%m-%d %H:%M:%S")} {" ".join(cmd)}\n')
            log.flush()
            # pylint: disable-next=consider-using-with  # it outlives this call (and this process)
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, cwd=directory,
                                    start_new_session=True, close_fds=True)
        _STARTED.append(proc)  # never collected while this process runs (Popen warns of a running child)
        pid_path.write_text(f'{proc.pid}\n', encoding='utf-8')
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise ImageError(f'registry: docker-registry exited {proc.returncode} (log {log_path}):\n'
                                 f'{_log_tail(log_path)}'.rstrip() + f'\n{REGISTRY_HINT}')
            if registry_answers():
                print(f'images: registry started on {REGISTRY_URL} (pid {proc.pid}, log {log_path})', file=sys.stderr)
                return REGISTRY_URL
            time.sleep(0.2)
        proc.terminate()
        raise ImageError(f'registry: no answer on {REGISTRY_URL}/v2/ within {timeout:.0f} s (log {log_path}):\n'
                         f'{_log_tail(log_path)}'.rstrip() + f'\n{REGISTRY_HINT}')


def stop_registry(timeout: float = 10) -> bool:
    """Stop the registry ensure_registry started (its pid file); False when none of ours was running."""
    directory = registry_dir()
    pid_path = directory / 'registry.pid'
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / '.lock', 'w', encoding='utf-8') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            pid = int(pid_path.read_text(encoding='utf-8').strip())
        except (OSError, ValueError):
            return False
        stopped = False
        if _pid_alive(pid):
            os.kill(pid, signal.SIGTERM)
            deadline = time.monotonic() + timeout
            while _pid_alive(pid) and time.monotonic() < deadline:
                time.sleep(0.1)
            if _pid_alive(pid):
                os.kill(pid, signal.SIGKILL)
            stopped = True
        pid_path.unlink(missing_ok=True)
        return stopped


def _path(repository: str) -> str:
    """The registry's name of a repository: localhost/nodewright-agent -> nodewright-agent."""
    return repository.split('/', 1)[1]


def manifest(ref: str) -> tuple[str | None, str, bytes]:
    """(digest, media type, body) of the manifest the registry serves for repository:tag; digest None when none."""
    repository, tag = ref.rsplit(':', 1)
    status, headers, body = _request('GET', f'/v2/{_path(repository)}/manifests/{tag}',
                                     headers={'Accept': ', '.join(MANIFEST_TYPES)})
    if status != 200:
        return None, '', b''
    return headers.get('Docker-Content-Digest'), headers.get('Content-Type', ''), body


def registry_has(ref: str) -> bool:
    repository, tag = ref.rsplit(':', 1)
    status = _request('HEAD', f'/v2/{_path(repository)}/manifests/{tag}', headers={'Accept': ', '.join(MANIFEST_TYPES)})[0]
    return status == 200


def retag(ref: str, tag: str) -> None:
    """Point repository:tag at ref's manifest (a PUT of the same manifest, no podman) unless it already is."""
    repository = ref.rsplit(':', 1)[0]
    digest, media_type, body = manifest(ref)
    if digest is None:
        raise ImageError(f'retag: the registry does not serve {ref}')
    if manifest(f'{repository}:{tag}')[0] == digest:
        return
    reply = _request('PUT', f'/v2/{_path(repository)}/manifests/{tag}', headers={'Content-Type': media_type}, data=body)
    if reply[0] not in (200, 201):
        raise ImageError(f'retag: PUT {repository}:{tag} -> {digest}: HTTP {reply[0]}\n{reply[2][:2000].decode(errors="replace")}')


# --------------------------------------------------------------------------- building

def _run_logged(step: str, cmd: list[str], log_path: Path, hint: str = HINT, **kwargs) -> None:
    """cmd with its output appended to log_path; a failure raises ImageError naming step and the log."""
    with open(log_path, 'a', encoding='utf-8') as log:
        log.write(f'$ {" ".join(cmd)}\n')
        log.flush()
        start_size, start = log.tell(), time.monotonic()
        try:
            proc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, check=False, **kwargs)
        except FileNotFoundError as exc:
            raise ImageError(f'{step}: {exc}\n{hint}') from exc
        log.write(f'exit {proc.returncode} after {time.monotonic() - start:.0f} s\n')
    if proc.returncode != 0:
        with open(log_path, encoding='utf-8', errors='replace') as reader:
            reader.seek(start_size)
            tail = reader.read()[-4000:]
        raise ImageError(f'{step} failed (exit {proc.returncode}; log {log_path}):\n{tail}'.rstrip() + f'\n{hint}')


def _digest(*parts) -> str:
    """A tag from the inputs: text, or (relative path, mode, bytes) triples of files."""
    digest = hashlib.sha256()
    for part in parts:
        if isinstance(part, (list, tuple)):
            for name, mode, data in sorted(part):
                digest.update(f'{name}\0{mode:o}\0'.encode() + hashlib.sha256(data).digest())
        else:
            digest.update(str(part).encode())
        digest.update(b'\0\0')
    return digest.hexdigest()[:16]


def _tree(root: Path, prefix: str = '') -> list[tuple[str, int, bytes]]:
    return [(prefix + str(p.relative_to(root)), p.stat().st_mode & 0o777, p.read_bytes())
            for p in sorted(root.rglob('*')) if p.is_file() and '__pycache__' not in p.parts]


def _write_tree(files, dest: Path) -> None:
    for name, mode, data in files:
        path = dest / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        path.chmod(mode)


def _podman_build(step: str, ref: str, context: Path, containerfile: str, env: dict[str, str], log_path: Path) -> None:
    (context / 'Containerfile').write_text(containerfile, encoding='utf-8')
    _run_logged(step, ['nice', '-n', '19', 'podman', 'build', '--pull=never', '-f', str(context / 'Containerfile'),
                       '-t', ref, str(context)], log_path, env=env)


def _push(ref: str, env: dict[str, str], log_path: Path) -> None:
    ensure_registry()
    _run_logged(f'push {ref}', ['nice', '-n', '19', 'podman', 'push', '--tls-verify=false', ref, f'docker://{ref}'],
                log_path, env=env)


class _Image:  # pylint: disable=too-few-public-methods
    """One image: its reference, how to build it (build(ref, env, log_path)), a check after the build, and
    the podman references whose older tags a new build prunes from podman's storage (default: the repository)."""

    def __init__(self, repository: str, tag: str, build, check=None, prune=None):  # pylint: disable=too-many-arguments
        self.repository, self.tag, self.build, self.check = repository, tag, build, check
        self.ref = f'{repository}:{tag}'
        self.prune = prune or repository


def _ensure(image: _Image, env_of) -> str:
    """image.ref in the registry: nothing when it serves it; else built (unless podman has it), checked, pushed."""
    if registry_has(image.ref):
        return image.ref
    locks = cache_root() / 'node-images'
    locks.mkdir(parents=True, exist_ok=True)
    short = image.repository.rsplit('/', 1)[1]
    with open(locks / f'.{short}.lock', 'w', encoding='utf-8') as lock:
        lock_wait(lock, image.ref)
        if registry_has(image.ref):  # another caller pushed it meanwhile
            return image.ref
        env = env_of()
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        log_path = ARTIFACTS / f'{short}-{image.tag}.log'

        def build(log):
            log.write_text('', encoding='utf-8')
            image.build(image.ref, env, log)
        build_once(image.ref, env, f'.node-image-{short}.lock', log_path, build, image.prune)
        if image.check:
            image.check(image.ref, env, log_path)
        start = time.monotonic()
        _push(image.ref, env, log_path)
        print(f'images: pushed {image.ref} in {time.monotonic() - start:.0f} s', file=sys.stderr)
    return image.ref


# --------------------------------------------------------------------------- the agent

def upstream_tarball() -> Path:
    for base in (REPO_ROOT.parent / 'shared' / 'upstream', Path('/work/shared/upstream')):
        if (base / UPSTREAM_TARBALL).is_file():
            return base / UPSTREAM_TARBALL
    raise ImageError(f'agent: no upstream source: {UPSTREAM_TARBALL} is neither in ../shared/upstream nor /work/shared/upstream'
                     f'\n{UPSTREAM_HINT}')


@functools.lru_cache(maxsize=1)
def agent_source() -> tuple[list[tuple[str, int, bytes]], str]:
    """(files, version): upstream's skyhook-agent project (its tests left out) as (path under skyhook-agent/, mode,
    bytes), and the agent's newest release in upstream's CHANGELOG (what `make build build_version=` would stamp)."""
    files, version = [], None
    with tarfile.open(upstream_tarball(), mode='r:xz') as tar:
        for member in tar:
            if member.name == AGENT_CHANGELOG:
                found = re.search(r'^## \[agent/v(\d+\.\d+\.\d+)\]', tar.extractfile(member).read().decode(), re.M)
                version = found.group(1) if found else None
            rel = member.name[len(AGENT_PREFIX):]
            if member.isfile() and member.name.startswith(AGENT_PREFIX) and not rel.startswith('tests/'):
                files.append(('skyhook-agent/' + rel, member.mode & 0o777, tar.extractfile(member).read()))
    if not files or not version:
        raise ImageError(f'agent: {upstream_tarball()} has no {AGENT_PREFIX} or no agent release in {AGENT_CHANGELOG}')
    return files, version


def agent_containerfile(base: str, version: str) -> str:
    """Upstream's containers/agent.Dockerfile with what can be had here: the trixie base for both stages (no
    registry images), pip instead of hatch's venv, the packages in /usr/local instead of a distroless image's."""
    requirements = ' '.join(AGENT_REQUIREMENTS)
    pip = 'python3 -m pip --no-cache-dir'
    return f'''# generated by tests/cluster/images.py
FROM {base} AS builder
COPY skyhook-agent /src/skyhook-agent
# `hatch version {version}` of upstream's make build, then its wheel with the pinned hatchling; the
# dependencies as wheels for this Python (3.13: the agent's f-strings do not parse on 3.11)
RUN sed -i 's/^__version__ = .*/__version__ = "{version}"/' /src/skyhook-agent/src/skyhook_agent/__about__.py \\
 && {pip} install --root-user-action=ignore {HATCHLING} \\
 && {pip} wheel --no-deps --no-build-isolation -w /wheels /src/skyhook-agent \\
 && {pip} download --no-deps --only-binary=:all: -d /wheels {requirements}

FROM {base}
COPY --from=builder /wheels /tmp/wheels
RUN {pip} install --root-user-action=ignore --no-index --only-binary=:all: --find-links=/tmp/wheels skyhook-agent=={version} {requirements} \\
 && rm -rf /tmp/wheels \\
 && ln -s /usr/bin/python3 /usr/local/bin/python \\
 && python -c 'import skyhook_agent.controller'
LABEL org.opencontainers.image.title=skyhook-agent org.opencontainers.image.version={version} \\
      org.opencontainers.image.revision={UPSTREAM_COMMIT} org.opencontainers.image.licenses=Apache-2.0
# as upstream: root, so that the agent can chroot into the node's root (mounted at /root)
USER 0:0
ENTRYPOINT ["python", "-m", "skyhook_agent.controller"]
'''


def check_agent(ref: str, env: dict[str, str], log_path: Path) -> None:
    """The agent imports and runs: its CLI with a mode it does not have prints its configuration and exits 0
    without touching the root it is given (main() returns before anything else)."""
    _run_logged(f'check {ref}', ['podman', 'run', '--rm', '--network=none', '-e', 'COPY_RESOLV=false',
                                 '-e', 'SKYHOOK_RESOURCE_ID=check_agent_0.0.0', ref, 'dry-run', '/nonexistent', '/copy'],
                log_path, env=env, timeout=120)
    text = _log_tail(log_path, 4000)
    if 'CLI CONFIGURATION' not in text or "doesn't support the dry-run mode" not in text:
        raise ImageError(f'check {ref}: the controller did not print its configuration and warning (log {log_path}):\n{text}')


def agent_image(base: str) -> _Image:
    files, version = agent_source()
    containerfile = agent_containerfile(base, version)

    def build(ref, env, log_path):
        with tempfile.TemporaryDirectory(dir=cache_root() / 'node-images', prefix='agent-') as tmp:
            _write_tree(files, Path(tmp))
            _podman_build(f'build {ref}', ref, Path(tmp), containerfile, env, log_path)
    return _Image(AGENT_REPOSITORY, _digest(files, containerfile), build, check_agent)


# --------------------------------------------------------------------------- the pause image

def go_binary() -> str:
    found = shutil.which('go') or ('/usr/local/go/bin/go' if os.access('/usr/local/go/bin/go', os.X_OK) else None)
    if not found:
        raise ImageError(f'pause: no Go toolchain\n{GO_HINT}')
    return found


def _go_env() -> dict[str, str]:
    # static, this toolchain only, no module downloads (the program has no dependencies)
    return {**os.environ, 'CGO_ENABLED': '0', 'GOTOOLCHAIN': 'local', 'GOPROXY': 'off', 'GOFLAGS': '', 'GOWORK': 'off'}


PAUSE_CONTAINERFILE = '''# generated by tests/cluster/images.py
FROM scratch
COPY pause /pause
# as Kubernetes' pause image
USER 65535:65535
ENTRYPOINT ["/pause"]
'''


def check_pause(ref: str, env: dict[str, str], log_path: Path) -> None:
    _run_logged(f'check {ref}', ['podman', 'run', '--rm', '--network=none', ref, '-v'], log_path, env=env, timeout=120)


def pause_image() -> _Image:
    go = go_binary()
    version = subprocess.run([go, 'env', 'GOVERSION'], capture_output=True, text=True, check=False, env=_go_env()).stdout.strip()
    if not version:
        raise ImageError(f'pause: `{go} env GOVERSION` printed nothing\n{GO_HINT}')
    files = _tree(PAUSE_SOURCE)

    def build(ref, env, log_path):
        with tempfile.TemporaryDirectory(dir=cache_root() / 'node-images', prefix='pause-') as tmp:
            _run_logged(f'go build {PAUSE_SOURCE}', ['nice', '-n', '19', go, 'build', *GO_BUILD_FLAGS, '-o', f'{tmp}/pause', '.'],
                        log_path, hint=GO_HINT, cwd=PAUSE_SOURCE, env=_go_env())
            _podman_build(f'build {ref}', ref, Path(tmp), PAUSE_CONTAINERFILE, env, log_path)
    return _Image(PAUSE_REPOSITORY, _digest(files, version, ' '.join(GO_BUILD_FLAGS), PAUSE_CONTAINERFILE), build, check_pause)


# --------------------------------------------------------------------------- the test packages

def package_files(name: str, version: str) -> list[tuple[str, int, bytes]]:
    """What goes to /skyhook-package/: the package's directory with config.json at ``version``, the shared
    proof.sh and package.env (name and version for the scripts) in skyhook_dir."""
    source = PACKAGES / name
    config = json.loads((source / 'config.json').read_text(encoding='utf-8'))
    if config.get('package_name') != name:
        raise ImageError(f'package {name}: {source / "config.json"} says package_name {config.get("package_name")!r}')
    config['package_version'] = version
    files = [f for f in _tree(source) if f[0] != 'config.json']
    files.append(('config.json', 0o644, (json.dumps(config, indent=2) + '\n').encode()))
    files.append(('skyhook_dir/proof.sh', 0o644, (PACKAGES / '_lib' / 'proof.sh').read_bytes()))
    files.append(('skyhook_dir/package.env', 0o644, f'PACKAGE_NAME={name}\nPACKAGE_VERSION={version}\n'.encode()))
    return [('skyhook-package/' + f[0], f[1], f[2]) for f in files]


def package_containerfile(base: str, name: str, version: str) -> str:
    return f'''# generated by tests/cluster/images.py
FROM {base}
# the stage pods' init container copies /skyhook-package/* to the node (GNU cp: the base's coreutils)
COPY skyhook-package/ /skyhook-package/
LABEL org.opencontainers.image.title=nodewright-test-package-{name} org.opencontainers.image.version={version}
'''


def package_image(base: str, name: str, version: str) -> _Image:
    files = package_files(name, version)
    containerfile = package_containerfile(base, name, version)
    repository = f'{PACKAGE_REPOSITORY}/{name}'

    def build(ref, env, log_path):
        with tempfile.TemporaryDirectory(dir=cache_root() / 'node-images', prefix=f'{name}-') as tmp:
            _write_tree(files, Path(tmp))
            _podman_build(f'build {ref}', ref, Path(tmp), containerfile, env, log_path)
    return _Image(repository, f'{version}-{_digest(files, containerfile)}', build, prune=f'{repository}:{version}-*')


# --------------------------------------------------------------------------- NVIDIA's packages

# NVIDIA's package repository (NVIDIA/nodewright-packages), snapshot in ../shared/upstream: the packages the real node
# runs as users run them, built from their source on the trixie base (their busybox base cannot be pulled here)
NVIDIA_PACKAGES_TARBALL = 'nodewright-packages-3f9169b.tar.xz'
NVIDIA_PACKAGES = ('shellscript', 'tuning')
# the migration guide's gpu_tuning role as bash for NVIDIA's shellscript package (its configMap): the role
# package's twin (docs/migration.md step b's alternative), in the real-node tests and the role package benchmark
SHELLSCRIPT_TWIN_CONFIGMAP = {
    'apply.sh': '''#!/bin/bash
set -e
printf 'vm.swappiness = 1\\nnet.core.rmem_max = 134217728\\n' > /etc/sysctl.d/90-gpu.conf
sysctl --system
mkdir -p /etc/containerd/conf.d
printf '[plugins."io.containerd.grpc.v1.cri".containerd]\\ndefault_runtime_name = "nvidia"\\n' \\
  > /etc/containerd/conf.d/90-nvidia.toml
''',
    'apply_check.sh': '''#!/bin/bash
grep -q 'vm.swappiness = 1' /etc/sysctl.d/90-gpu.conf
grep -q 'default_runtime_name = "nvidia"' /etc/containerd/conf.d/90-nvidia.toml
''',
}


def nvidia_package_files(name: str) -> tuple[list[tuple[str, int, bytes]], str]:
    """(files under skyhook-package/, the package's version from its config.json) of NVIDIA's package ``name``."""
    tarball = upstream_tarball().parent / NVIDIA_PACKAGES_TARBALL
    prefix = f'nodewright-packages/{name}/'
    files = []
    with tarfile.open(tarball) as tar:
        for member in tar.getmembers():
            inside = member.name[len(prefix):]
            if member.isfile() and member.name.startswith(prefix) and (
                    inside == 'config.json' or inside.startswith('skyhook_dir/')):
                files.append(('skyhook-package/' + inside, member.mode & 0o777, tar.extractfile(member).read()))
    if not files:
        raise ImageError(f'NVIDIA package {name}: not in {tarball}')
    config = json.loads(next(data for path, _mode, data in files if path == 'skyhook-package/config.json'))
    return files, config['package_version']


def nvidia_package_image(base: str, name: str) -> tuple[_Image, str]:
    files, version = nvidia_package_files(name)
    containerfile = package_containerfile(base, f'nvidia-{name}', version)
    repository = f'{PACKAGE_REPOSITORY}/nvidia-{name}'

    def build(ref, env, log_path):
        with tempfile.TemporaryDirectory(dir=cache_root() / 'node-images', prefix=f'nvidia-{name}-') as tmp:
            _write_tree(files, Path(tmp))
            _podman_build(f'build {ref}', ref, Path(tmp), containerfile, env, log_path)
    return _Image(repository, f'{version}-{_digest(files, containerfile)}', build,
                  prune=f'{repository}:{version}-*'), version


# --------------------------------------------------------------------------- all of them

def ensure_images() -> dict:
    """The node images' references, each built and pushed when the registry does not serve it:
    {'registry': URL, 'agent': ref, 'agent_version': upstream's, 'pause': ref,
     'packages': {name: {'image': repository, 'versions': {version: repository:version},
                         'builds': {version: repository:version-digest}}},
     'nvidia': {name: {'image': repository, 'version': its config.json's}}}   (NVIDIA's shellscript and tuning)"""
    url = ensure_registry()
    base = base_image_name()  # its tag only (no podman); built when an image needs building
    state = {}

    def env_of():
        if 'env' not in state:
            state['env'] = podman_env()
            ensure_base_image(state['env'])
        return state['env']
    result = {'registry': url, 'agent_version': agent_source()[1],
              'agent': _ensure(agent_image(base), env_of), 'pause': _ensure(pause_image(), env_of), 'packages': {}}
    for name, versions in PACKAGE_VERSIONS.items():
        entry = result['packages'][name] = {'image': f'{PACKAGE_REPOSITORY}/{name}', 'versions': {}, 'builds': {}}
        for version in versions:
            built = _ensure(package_image(base, name, version), env_of)
            retag(built, version)
            entry['versions'][version] = f'{entry["image"]}:{version}'
            entry['builds'][version] = built
    result['nvidia'] = {}
    for name in NVIDIA_PACKAGES:
        image, version = nvidia_package_image(base, name)
        retag(_ensure(image, env_of), version)
        result['nvidia'][name] = {'image': image.repository, 'version': version}
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n', 1)[0])
    parser.add_argument('command', choices=('ensure', 'registry-up', 'registry-down'),
                        help='ensure: build/push what the registry lacks, print the references as JSON; '
                             'registry-up: start the registry, print its URL; registry-down: stop it')
    args = parser.parse_args(argv)
    try:
        if args.command == 'ensure':
            start = time.monotonic()
            refs = ensure_images()
            print(json.dumps(refs, indent=2))
            print(f'images: ready in {time.monotonic() - start:.1f} s', file=sys.stderr)
        elif args.command == 'registry-up':
            print(ensure_registry())
        else:
            print('registry stopped' if stop_registry() else 'registry: none of ours was running', file=sys.stderr)
    except PodmanError as exc:
        print(exc, file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
