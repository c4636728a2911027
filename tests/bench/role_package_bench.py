# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""A role package against its bash twin: image size, build time (cold, a role change, nothing changed) and the time
of each stage's step on the same host root.

The role is the migration guide's gpu_tuning (examples/roles/gpu_tuning), built by nodewright.bridge.role_package
on the EE's trixie base; the twin is NVIDIA's shellscript package from its source (../shared/upstream
nodewright-packages-<commit>.tar.xz, shellscript/: config.json and skyhook_dir/, on the same base since its
busybox base cannot be pulled here) with the guide's scripts doing the same work (docs/migration.md). Each stage
step runs as the agent runs it: chrooted into a Debian bookworm minbase root (no Python), SKYHOOK_DIR set, the
configMap keys as files under ${SKYHOOK_DIR}/configmaps. Prints figures; asserts nothing about them.

    python tests/bench/role_package_bench.py [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
sys.path.insert(0, str(REPO_ROOT / 'tests'))
sys.path.insert(0, str(REPO_ROOT / 'tests' / 'ee'))
sys.path.insert(0, str(REPO_ROOT / 'tests' / 'cluster'))

# pylint: disable=wrong-import-position
import images  # noqa: E402
from base_image import ensure_base_image, host_root  # noqa: E402
from collection_path import link  # noqa: E402
from podman_env import podman_env  # noqa: E402

ROLE = REPO_ROOT / 'examples' / 'roles' / 'gpu_tuning'
IMAGE = 'localhost/nodewright-bench/gpu-tuning'
TWIN = 'localhost/nodewright-bench/shellscript'


def _podman(env, *args, check=True):
    out = subprocess.run(['podman', *args], env=env, capture_output=True, text=True, check=False)
    if check and out.returncode != 0:
        raise RuntimeError(f'podman {" ".join(args)}: {out.stdout}{out.stderr}')
    return out


def _build_role(env, base, work, role=ROLE):
    book = work / 'build.yml'
    book.write_text(json.dumps([{'hosts': 'localhost', 'gather_facts': False, 'tasks': [
        {'nodewright.bridge.role_package': {'role': str(role), 'version': '1.0.0', 'image': IMAGE, 'base_image': base,
                                            'push': False}, 'register': 'built'},
        {'ansible.builtin.copy': {'content': '{{ built | to_json }}', 'dest': str(work / 'built.json')}}]}]))
    started = time.monotonic()
    out = subprocess.run([str(Path(sys.executable).with_name('ansible-playbook')), str(book)], env=env,
                         capture_output=True, text=True, check=False)
    seconds = time.monotonic() - started
    if out.returncode != 0:
        raise RuntimeError(out.stdout[-3000:])
    return seconds, json.loads((work / 'built.json').read_text())


def _twin(env, base, work):
    """NVIDIA's shellscript package from its source, on the same base (the node images' recipe)."""
    files, version = images.nvidia_package_files('shellscript')
    context = work / 'twin'
    images._write_tree(files, context)  # pylint: disable=protected-access
    (context / 'Containerfile').write_text(images.package_containerfile(base, 'nvidia-shellscript', version))
    started = time.monotonic()
    _podman(env, 'build', '--timestamp', '0', '-t', f'{TWIN}:1.1.1', str(context))
    return time.monotonic() - started


def _layers(env, ref):
    """(the image's size, the sizes of the layers above the base) in bytes."""
    size = json.loads(_podman(env, 'image', 'inspect', ref).stdout)[0]['Size']
    history = json.loads(_podman(env, 'history', '--format', 'json', ref).stdout)
    return size, [entry.get('size', 0) for entry in history if entry.get('size')]


def _install(env, ref, host, name):
    container = _podman(env, 'create', ref, '/bin/true').stdout.strip()
    target = host / 'var' / 'lib' / 'skyhook' / name
    target.parent.mkdir(parents=True, exist_ok=True)
    _podman(env, 'cp', f'{container}:/skyhook-package', str(target))
    _podman(env, 'rm', container)
    (target / 'configmaps').mkdir(exist_ok=True)
    return target


def _step_seconds(host, name, mode):
    package = f'/var/lib/skyhook/{name}'
    (step,) = json.loads((host / package.lstrip('/') / 'config.json').read_text())['modes'][mode]
    # the step's file executed as it is (its shebang), as the agent executes it
    cmd = ['chroot', str(host), f'{package}/skyhook_dir/{step["path"]}', *step['arguments']]
    env = {'PATH': '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', 'SKYHOOK_DIR': package}
    started = time.monotonic()
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    seconds = time.monotonic() - started
    if out.returncode != 0:
        raise RuntimeError(f'{name} {mode}: rc {out.returncode}\n{out.stdout[-2000:]}{out.stderr[-2000:]}')
    return seconds


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n', 1)[0])
    parser.add_argument('--runs', type=int, default=3, help='runs of each stage (the median is printed)')
    args = parser.parse_args(argv)
    env = podman_env()
    base = ensure_base_image(env)
    work = Path(tempfile.mkdtemp(prefix='role-package-bench-'))
    env['ANSIBLE_COLLECTIONS_PATH'] = str(link(work / 'collections'))
    try:
        # cold: no runtime image, no package image, no cached build layers of either
        _podman(env, 'image', 'rm', '-f', f'{IMAGE}:1.0.0', check=False)
        for line in _podman(env, 'images', '--format', '{{.Repository}}:{{.Tag}}').stdout.split():
            if line.startswith('localhost/nodewright-bridge-role-runtime:'):
                _podman(env, 'image', 'rm', '-f', line, check=False)
        _podman(env, 'image', 'prune', '-f', check=False)
        cold, built = _build_role(env, base, work)
        unchanged, again = _build_role(env, base, work)
        changed_role = work / 'gpu_tuning'
        shutil.copytree(ROLE, changed_role)
        with open(changed_role / 'defaults' / 'main.yml', 'a', encoding='utf-8') as defaults:
            defaults.write('gpu_tuning_bench_marker: 1\n')
        role_change, dummy = _build_role(env, base, work, changed_role)
        _podman(env, 'image', 'rm', '-f', f'{IMAGE}:1.0.0', check=False)
        rebuilt_seconds, rebuilt = _build_role(env, base, work)
        twin_seconds = _twin(env, base, work)
        base_size = json.loads(_podman(env, 'image', 'inspect', base).stdout)[0]['Size']
        size, layers = _layers(env, f'{IMAGE}:1.0.0')
        twin_size, twin_layers = _layers(env, f'{TWIN}:1.1.1')
        print('role package build (gpu_tuning, podman, 2 cores):')
        print(f'  cold (runtime from PyPI and the base): {cold:6.1f} s   changed={built["changed"]}')
        print(f'  the role changed (runtime cached):     {role_change:6.1f} s')
        print(f'  nothing changed (not built):           {unchanged:6.1f} s   changed={again["changed"]}')
        print(f'  rebuilt from scratch, same digest:     {rebuilt_seconds:6.1f} s   '
              f'same image: {rebuilt["image_id"] == built["image_id"]}')
        print(f'  shellscript twin (NVIDIA source):      {twin_seconds:6.1f} s')
        print('image size (MB):')
        print(f'  base {base_size / 1e6:.1f}; role package {size / 1e6:.1f} (layers above the base: '
              f'{", ".join(f"{s / 1e6:.2f}" for s in layers[:-1])}); shellscript twin {twin_size / 1e6:.1f} '
              f'(above the base: {sum(twin_layers[:-1]) / 1e6:.3f})')

        host = work / 'host'
        subprocess.run(['cp', '-a', str(host_root('bookworm')), str(host)], check=True)
        (host / 'etc' / 'sysctl.d').mkdir(exist_ok=True)
        shim = host / 'usr' / 'local' / 'sbin' / 'sysctl'
        shim.write_text('#!/bin/sh\nexit 0\n')
        shim.chmod(0o755)
        _install(env, f'{IMAGE}:1.0.0', host, 'gpu-tuning')
        twin = _install(env, f'{TWIN}:1.1.1', host, 'shellscript')
        for key, script in images.SHELLSCRIPT_TWIN_CONFIGMAP.items():
            (twin / 'configmaps' / key).write_text(script)
        print(f'stage step on a bookworm host root without Python (median of {args.runs}, seconds):')
        print(f'  {"mode":14} {"role package":>12} {"shellscript":>12}')
        for mode in ('apply', 'apply-check', 'config', 'config-check'):
            role = statistics.median(_step_seconds(host, 'gpu-tuning', mode) for dummy in range(args.runs))
            bash = statistics.median(_step_seconds(host, 'shellscript', mode) for dummy in range(args.runs))
            print(f'  {mode:14} {role:12.2f} {bash:12.2f}')
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
