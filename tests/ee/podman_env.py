# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""Podman set up for this machine without touching /etc: a containers.conf and a storage.conf of
our own under the cache, selected with CONTAINERS_CONF / CONTAINERS_STORAGE_CONF.

    env = podman_env()                      # os.environ plus the two variables
    run_podman(['run', '--rm', image, 'true'], env)
    smoke(image, env)                       # podman's own error plus a hint on failure

As a script it prints the two variables for a shell: eval "$(python3 tests/ee/podman_env.py)".

The machine the tests run on (CI too): root without systemd, cgroup v1, Debian's podman 4.3 with
runc, and no CAP_SYS_RESOURCE. What that needs is in _containers_conf().

Environment:
  NODEWRIGHT_CACHE_DIR   the project's cache (default ${XDG_CACHE_HOME:-~/.cache}/nodewright-bridge);
                         podman's storage and configuration go to its ee/ directory
"""

from __future__ import annotations

import ast
import fcntl
import hashlib
import inspect
import os
import resource
import subprocess
import sys
import time
import textwrap
from pathlib import Path

HINT = ('hint: podman runs here with tests/ee/podman_env.py\'s configuration (runc, cgroupfs, file events, ulimits '
        'within the hard limits) and its bridge network (CNI plugins, iptables); install them as .ci/run does')

# podman 4.3 starts conmon and runc with a hard RLIMIT_NPROC of 32768 whatever the caller's is (read
# from /proc/<runc>/limits here), and runc cannot raise a hard limit without CAP_SYS_RESOURCE: a
# container asking more (podman's default is 4194304) fails with "error setting rlimit type 6:
# operation not permitted". An execution environment runs a handful of processes; 32768 is plenty.
NPROC_CAP = 32768


class PodmanError(RuntimeError):
    """A podman command failed: its own output, then HINT."""


def cache_dir() -> Path:
    """The EE cache (podman's storage, its configuration, debootstrap's packages)."""
    root = os.environ.get('NODEWRIGHT_CACHE_DIR')
    if not root:
        root = os.path.join(os.environ.get('XDG_CACHE_HOME') or os.path.expanduser('~/.cache'), 'nodewright-bridge')
    return Path(root) / 'ee'


def ulimits() -> tuple[int, int]:
    """(nofile, nproc) a container may have here: at most this process's hard limits, which are what
    runc inherits, since it cannot go above them (no CAP_SYS_RESOURCE)."""
    nofile = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    nproc = resource.getrlimit(resource.RLIMIT_NPROC)[1]
    if nofile == resource.RLIM_INFINITY:
        nofile = 1048576
    if nproc == resource.RLIM_INFINITY or nproc > NPROC_CAP:
        nproc = NPROC_CAP
    return nofile, nproc


def _containers_conf(runtime: str) -> str:
    nofile, nproc = ulimits()
    return f'''# written by tests/ee/podman_env.py (selected with CONTAINERS_CONF); not edited by hand
[containers]
# podman's default ulimits are above the hard limits runc runs with here and it cannot raise them
default_ulimits = ["nofile={nofile}:{nofile}", "nproc={nproc}:{nproc}"]

[engine]
# podman's default is crun; .ci/run installs runc (podman's Debian package takes either)
runtime = "{runtime}"
# no systemd here: cgroups through the file system (cgroup v1), events to a file instead of the journal
cgroup_manager = "cgroupfs"
events_logger = "file"
'''


def _storage_conf(storage: Path) -> str:
    return f'''# written by tests/ee/podman_env.py (selected with CONTAINERS_STORAGE_CONF); not edited by hand
[storage]
driver = "overlay"
graphroot = "{storage}/graph"
runroot = "{storage}/run"
'''


def code_digest(function) -> str:
    """A hash of a function's code for an image tag: its syntax tree, so editing a comment or the
    layout does not rebuild an image."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    return hashlib.sha256(ast.dump(tree).encode()).hexdigest()


def lock_wait(lock, name: str) -> None:
    """flock lock, saying so when another caller holds it (its build can take minutes)."""
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        print(f'ee: waiting for another build of {name} ({lock.name})', file=sys.stderr)
        fcntl.flock(lock, fcntl.LOCK_EX)


def build_once(name: str, env: dict[str, str], lock_file: str, log_path: Path, build, repository: str) -> None:
    """Build image ``name`` with ``build(log_path)`` unless podman's storage has it: under a flock in the cache,
    so that two callers (make test's background build, a test) never build it twice; older tags of
    ``repository`` pruned after."""
    if image_exists(name, env):
        return
    cache = cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / lock_file, 'w', encoding='utf-8') as lock:
        lock_wait(lock, name)
        if image_exists(name, env):  # another caller built it while this one waited
            return
        log_path.parent.mkdir(parents=True, exist_ok=True)
        start = time.monotonic()
        print(f'ee: building {name} (log {log_path})', file=sys.stderr)
        build(log_path)
        print(f'ee: built {name} in {time.monotonic() - start:.0f} s', file=sys.stderr)
        prune(repository, name, env)


def write_config(conf_dir: Path | None = None, runtime: str = 'runc', storage: Path | None = None) -> dict[str, str]:
    """Write containers.conf and storage.conf into conf_dir (default <cache>/conf); returns the two
    variables that select them. Rewritten only when the content changes, so concurrent callers
    never see a half-written file (a rename otherwise)."""
    cache = cache_dir()
    conf_dir = Path(conf_dir) if conf_dir else cache / 'conf'
    storage = Path(storage) if storage else cache / 'storage'
    conf_dir.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name, text, var in (('containers.conf', _containers_conf(runtime), 'CONTAINERS_CONF'),
                            ('storage.conf', _storage_conf(storage), 'CONTAINERS_STORAGE_CONF')):
        path = conf_dir / name
        if not path.exists() or path.read_text(encoding='utf-8') != text:
            tmp = path.with_name(f'.{name}.{os.getpid()}')
            tmp.write_text(text, encoding='utf-8')
            tmp.replace(path)
        paths[var] = str(path)
    return paths


def podman_env(env: dict[str, str] | None = None, **config) -> dict[str, str]:
    """A copy of env (default os.environ) that selects this machine's podman configuration;
    config goes to write_config (conf_dir, runtime, storage)."""
    result = dict(os.environ if env is None else env)
    result.update(write_config(**config))
    return result


def run_podman(args: list[str], env: dict[str, str], **kwargs) -> subprocess.CompletedProcess:
    """podman <args>, output captured; a failure raises PodmanError with podman's output and HINT."""
    cmd = ['podman', *args]
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False, **kwargs)
    except FileNotFoundError as exc:
        raise PodmanError(f'{exc}\n{HINT}') from exc
    if proc.returncode != 0:
        raise PodmanError(f'{" ".join(cmd)} failed (exit {proc.returncode}):\n{proc.stdout}{proc.stderr}'.rstrip() + f'\n{HINT}')
    return proc


def image_exists(image: str, env: dict[str, str]) -> bool:
    try:
        proc = subprocess.run(['podman', 'image', 'exists', image], env=env, capture_output=True, text=True, check=False)
    except FileNotFoundError as exc:
        raise PodmanError(f'{exc}\n{HINT}') from exc
    if proc.returncode not in (0, 1):  # 1: no such image; anything else is podman failing
        raise PodmanError(f'podman image exists {image} failed (exit {proc.returncode}):\n{proc.stderr}'.rstrip() + f'\n{HINT}')
    return proc.returncode == 0


def smoke(image: str, env: dict[str, str]) -> None:
    """podman run --rm <image> true: can this machine run a container at all. On podman's default
    network, the bridge the build's RUN steps use (a missing iptables shows here, not mid-build)."""
    run_podman(['run', '--rm', image, 'true'], env, timeout=120)


def prune(repository: str, keep: str, env: dict[str, str], count: int = 3) -> None:
    """Remove all but the newest count tags of repository (keep among them): each change of an
    image's inputs makes a new tag. The newest few stay for the other checkouts sharing the cache;
    an image a container still uses is left (podman refuses), and so are the untagged stage images,
    podman's layer cache for the next build (`podman image prune` removes them)."""
    proc = subprocess.run(['podman', 'images', '--format', '{{.Repository}}:{{.Tag}}', '--sort', 'created',
                           '--filter', f'reference={repository}'], env=env, capture_output=True, text=True, check=False)
    names = [n for n in proc.stdout.split() if n != keep]  # newest first
    for name in names[count - 1:]:
        subprocess.run(['podman', 'rmi', name], env=env, capture_output=True, check=False)


def main() -> int:
    for var, path in write_config().items():
        print(f'export {var}={path}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
