# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""nodewright.bridge.role_package for real: the migration guide's gpu_tuning role (examples/roles/gpu_tuning), and the
same as a playbook (examples/playbooks/gpu_tuning), built unchanged with podman on the EE's trixie base, pushed to
the local registry, and its stages run as the NodeWright agent runs them (chrooted into the host's root,
SKYHOOK_DIR pointing at the package copied there) on a host root with no Python at all and an older glibc
(Debian bookworm minbase, 2.36 against the runtime's 2.41).

The real-node rollouts of the same image (nodewright.bridge.apply and the operator) are tests/kube/test_real_nodes.py's.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from base_image import ensure_base_image, host_root
from podman_env import podman_env

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT / 'tests'))
sys.path.insert(0, str(REPO_ROOT / 'tests' / 'cluster'))

# pylint: disable=wrong-import-position
import helpers  # noqa: E402
import images  # noqa: E402
from collection_path import link  # noqa: E402

ROLE = REPO_ROOT / 'examples' / 'roles' / 'gpu_tuning'
PLAYBOOK = REPO_ROOT / 'examples' / 'playbooks' / 'gpu_tuning' / 'gpu_tuning.yml'
IMAGE = 'localhost/nodewright-packages/gpu-tuning'
HOST_SUITE = 'bookworm'
PACKAGE_DIR = '/var/lib/skyhook/gpu-tuning'  # where the agent's init container copies /skyhook-package


@pytest.fixture(scope='module')
def env(tmp_path_factory):
    environment = podman_env()
    environment['ANSIBLE_COLLECTIONS_PATH'] = str(link(tmp_path_factory.mktemp('collections')))
    environment.update(ANSIBLE_NOCOLOR='1', ANSIBLE_LOCALHOST_WARNING='False', ANSIBLE_INVENTORY_UNPARSED_WARNING='False')
    return environment


@pytest.fixture(scope='module')
def base(env):
    return ensure_base_image(env)


@pytest.fixture
def host(tmp_path):
    """A fresh host root per test: the template copied, a sysctl that records its calls (the host's kernel is not
    the test's to change), the agent's package directory."""
    root = tmp_path / 'host'
    subprocess.run(['cp', '-a', str(host_root(HOST_SUITE)), str(root)], check=True)
    assert not list((root / 'usr' / 'bin').glob('python*')), 'the host root must have no Python'
    shim = root / 'usr' / 'local' / 'sbin' / 'sysctl'
    shim.write_text('#!/bin/sh\necho "sysctl $*" >> /var/log/sysctl-calls\n')
    shim.chmod(0o755)
    return root


def _playbook(env, tmp_path, check=False, **args):
    book = tmp_path / 'build.yml'
    book.write_text(json.dumps([{'hosts': 'localhost', 'gather_facts': False, 'tasks': [
        {'name': 'Build', 'nodewright.bridge.role_package': args, 'register': 'built'},
        {'name': 'Keep', 'ansible.builtin.copy': {'content': '{{ built | to_json }}', 'dest': str(tmp_path / 'out.json')},
         'check_mode': False}]}]))
    (tmp_path / 'out.json').unlink(missing_ok=True)
    cmd = [str(Path(sys.executable).with_name('ansible-playbook')), str(book)] + (['--check'] if check else [])
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False, timeout=1800)
    out = json.loads((tmp_path / 'out.json').read_text()) if (tmp_path / 'out.json').is_file() else None
    return proc, out


def _podman(env, *args):
    return subprocess.run(['podman', *args], env=env, capture_output=True, text=True, check=False)


def _install(env, ref, host):
    """The package as the stage pod's init container leaves it on the host: /skyhook-package copied to the host."""
    container = _podman(env, 'create', ref, '/bin/true').stdout.strip()
    try:
        target = host / PACKAGE_DIR.lstrip('/')
        target.parent.mkdir(parents=True, exist_ok=True)
        assert _podman(env, 'cp', f'{container}:/skyhook-package', str(target)).returncode == 0
    finally:
        _podman(env, 'rm', container)
    (target / 'configmaps').mkdir(exist_ok=True)
    return target


def _step(host, mode):
    """One agent step, as the v6 agent runs it: chrooted into the host, the host's PATH, SKYHOOK_DIR set."""
    config = json.loads((host / PACKAGE_DIR.lstrip('/') / 'config.json').read_text())
    (step,) = config['modes'][mode]
    assert step['on_host'] is True
    cmd = ['chroot', str(host), f'{PACKAGE_DIR}/skyhook_dir/{step["path"]}', *step['arguments']]  # its shebang
    env = {'PATH': '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', 'SKYHOOK_DIR': PACKAGE_DIR}
    return subprocess.run(cmd, env=env, capture_output=True, text=True, check=False, timeout=600)


def _changed(proc):
    found = re.search(r'localhost\s+: ok=\d+\s+changed=(\d+)', proc.stdout)
    assert found, proc.stdout[-3000:]
    return int(found.group(1))


def test_the_guide_role_builds_reproducibly_pushes_and_runs_its_stages_on_a_host_without_python(
        env, base, host, tmp_path):
    registry = images.ensure_registry()
    assert registry
    tag = f'1.0.0-{uuid.uuid4().hex[:8]}'  # a tag the registry has not (it keeps what earlier runs pushed)
    ref = f'{IMAGE}:{tag}'
    _podman(env, 'image', 'rm', '-f', ref)
    args = dict(role=str(ROLE), version='1.0.0', tag=tag, image=IMAGE, base_image=base, tls_verify=False)
    # check mode: the package described, nothing built
    proc, checked = _playbook(env, tmp_path, check=True, **args)
    assert proc.returncode == 0 and checked['changed'] is True, proc.stdout[-3000:]
    assert _podman(env, 'image', 'exists', ref).returncode == 1
    proc, built = _playbook(env, tmp_path, **args)
    assert proc.returncode == 0 and built['changed'] is True, proc.stdout[-3000:]
    restart = {'type': 'service', 'services': ['containerd']}
    assert built['package'] == {'gpu-tuning': {
        'image': IMAGE, 'version': tag, 'interrupt': restart,
        'configInterrupts': {'gpu_tuning_default_runtime': restart},
        'configMap': {'gpu_tuning_default_runtime': 'nvidia', 'gpu_tuning_rmem_max': '134217728',
                      'gpu_tuning_swappiness': '1'}}}
    assert built['context_digest'] == checked['context_digest']
    # the digest the registry serves for the tag is the one returned
    assert images.manifest(ref)[0] == built['digest'], (images.manifest(ref)[0], built['digest'])
    # the same role again: not built, the same image; built from scratch again (not pushed: the registry is not
    # asked): the same image too
    proc, again = _playbook(env, tmp_path, **args)
    assert proc.returncode == 0 and again['changed'] is False and again['image_id'] == built['image_id'], again
    assert _podman(env, 'image', 'rm', ref).returncode == 0
    proc, rebuilt = _playbook(env, tmp_path, **dict(args, push=False))
    assert rebuilt['changed'] is True and rebuilt['image_id'] == built['image_id'], (rebuilt, built)
    # not in podman's storage, but the registry has this content: pulled, not built, not changed, the same digest
    assert _podman(env, 'image', 'rm', ref).returncode == 0
    proc, pulled = _playbook(env, tmp_path, **args)
    assert proc.returncode == 0 and pulled['changed'] is False and pulled['image_id'] == built['image_id'], pulled
    assert pulled['digest'] == built['digest']

    package = _install(env, ref, host)
    # a role task that fails fails the step, with the task's name and the module's message in the step's log
    failed = _step(host, 'apply')
    assert failed.returncode != 0
    assert 'TASK [gpu_tuning : Kernel settings for GPU training]' in failed.stdout, failed.stdout[-3000:]
    assert 'Destination directory /etc/sysctl.d does not exist' in failed.stdout
    # fixed on the host, the same step resumes the role
    (host / 'etc' / 'sysctl.d').mkdir()
    (package / 'configmaps' / 'gpu_tuning_swappiness').write_text('5\n')
    applied = _step(host, 'apply')
    assert applied.returncode == 0, applied.stdout[-3000:]
    assert (host / 'etc/sysctl.d/90-gpu.conf').read_text() == 'vm.swappiness = 5\nnet.core.rmem_max = 134217728\n'
    assert 'default_runtime_name = "nvidia"' in (host / 'etc/containerd/conf.d/90-nvidia.toml').read_text()
    # the sysctl handler ran in the stage; the containerd restart is the package's interrupt, left to NodeWright
    assert (host / 'var/log/sysctl-calls').read_text() == 'sysctl --system\n'
    assert 'left to NodeWright: the package interrupt (service restart of containerd)' in applied.stdout
    assert _step(host, 'apply-check').returncode == 0
    again = _step(host, 'apply')
    assert again.returncode == 0 and _changed(again) == 0, again.stdout[-3000:]
    # a configMap edit: config-check finds the change to come, config makes it, config-check passes
    (package / 'configmaps' / 'gpu_tuning_default_runtime').write_text('nvidia-cdi\n')
    pending = _step(host, 'config-check')
    assert pending.returncode == 1
    assert ('config-check failed: in check mode these tasks would change the host: '
            'gpu_tuning : Make containerd use the NVIDIA runtime by default') in pending.stdout, pending.stdout[-3000:]
    configured = _step(host, 'config')
    assert configured.returncode == 0 and _changed(configured) == 1, configured.stdout[-3000:]
    assert 'default_runtime_name = "nvidia-cdi"' in (host / 'etc/containerd/conf.d/90-nvidia.toml').read_text()
    assert _step(host, 'config-check').returncode == 0
    # uninstall reverts; its check passes after it, not before
    assert _step(host, 'uninstall-check').returncode == 1
    assert _step(host, 'uninstall').returncode == 0
    assert not (host / 'etc/sysctl.d/90-gpu.conf').exists() and not (host / 'etc/containerd/conf.d/90-nvidia.toml').exists()
    assert _step(host, 'uninstall-check').returncode == 0
    assert not list((host / 'usr' / 'bin').glob('python*'))
    # the next stage pod's init container copies the package over this directory while a step of the pod it replaces
    # may still run (the agent lets a step finish on SIGTERM): the copy must succeed (a step executing the
    # package's own ld.so made it fail with "Text file busy" on a real node)
    source = _install(env, ref, tmp_path / 'image-copy')  # the image's /skyhook-package, as the new pod has it
    running = subprocess.Popen(  # pylint: disable=consider-using-with
        ['chroot', str(host), f'{PACKAGE_DIR}/skyhook_dir/nodewright_role_stage.sh', 'apply'],
        env={'PATH': '/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin', 'SKYHOOK_DIR': PACKAGE_DIR},
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    helpers.wait_for(lambda: list((package / 'skyhook_dir' / 'runtime' / 'lib').glob('ld.so.step-*')), 30,
                     what='the step to start its Python')
    (source / 'configmaps').rmdir()
    copied = subprocess.run(f'cp -r {source}/* {package}/', shell=True, capture_output=True, text=True, check=False)
    assert copied.returncode == 0, copied.stderr
    running.wait(timeout=300)  # the replaced pod's step: its result is no one's (its files changed under it)
    running.stdout.close()
    assert not list((package / 'skyhook_dir' / 'runtime' / 'lib').glob('ld.so.step-*'))  # each step's own, removed
    # the new pod's step runs on the copied package (the role installed again, then uninstalled again)
    again = _step(host, 'apply')
    assert again.returncode == 0 and (host / 'etc/sysctl.d/90-gpu.conf').is_file(), again.stdout[-3000:]
    assert _step(host, 'uninstall').returncode == 0
    # a host the runtime is not built for: the step says so, naming both machines, and runs nothing
    (package / 'skyhook_dir' / 'runtime' / 'arch').write_text('aarch64\n')
    foreign = _step(host, 'apply')
    assert foreign.returncode == 1
    assert "this role package's runtime is built for aarch64; the host is x86_64" in foreign.stderr, foreign.stderr
    assert not (host / 'etc/sysctl.d/90-gpu.conf').exists()
    _podman(env, 'image', 'rm', ref)


def test_the_guide_playbook_builds_and_its_plays_run_on_the_host_with_its_stages(env, base, host, tmp_path):
    # the guide's role as a playbook (examples/playbooks/gpu_tuning): plays on hosts: gpu_nodes, handlers of its
    # own, the runtime key read only in a template; the uninstall stage a task file of its directory
    ref = f'{IMAGE}-playbook:1.0.0'
    proc, built = _playbook(env, tmp_path, playbook=str(PLAYBOOK), version='1.0.0', image=f'{IMAGE}-playbook',
                            base_image=base, push=False, stages={'uninstall': 'uninstall.yml'})
    assert proc.returncode == 0, proc.stdout[-3000:]
    restart = {'type': 'service', 'services': ['containerd']}
    assert built['playbook'] == 'gpu_tuning.yml' and built['mapped_handlers'] == {'Restart containerd': restart}
    assert built['package']['gpu-tuning']['configInterrupts'] == {'gpu_tuning_default_runtime': restart}
    assert [h.split(':')[0] for h in built['unmapped_handlers']] == ["playbook gpu_tuning.yml play 'GPU tuning' handler 'Reload sysctl'"]
    assert sorted(built['stages']) == ['apply', 'apply-check', 'config', 'config-check', 'uninstall', 'uninstall-check']
    package = _install(env, ref, host)
    (host / 'etc' / 'sysctl.d').mkdir()
    (package / 'configmaps' / 'gpu_tuning_swappiness').write_text('5\n')
    assert _step(host, 'apply-check').returncode != 0  # all to do
    applied = _step(host, 'apply')
    assert applied.returncode == 0, applied.stdout[-3000:]
    assert 'PLAY [GPU tuning]' in applied.stdout and 'TASK [Make containerd use the NVIDIA runtime by default]' in applied.stdout
    assert (host / 'etc/sysctl.d/90-gpu.conf').read_text() == 'vm.swappiness = 5\nnet.core.rmem_max = 134217728\n'
    assert 'default_runtime_name = "nvidia"' in (host / 'etc/containerd/conf.d/90-nvidia.toml').read_text()
    assert (host / 'var/log/sysctl-calls').read_text() == 'sysctl --system\n'  # the handler that stays, in the stage
    assert 'left to NodeWright: the package interrupt (service restart of containerd)' in applied.stdout
    assert _step(host, 'apply-check').returncode == 0
    again = _step(host, 'apply')
    assert again.returncode == 0 and _changed(again) == 0, again.stdout[-3000:]
    # a configMap edit of the key only the template reads: config-check finds it, config makes it
    (package / 'configmaps' / 'gpu_tuning_default_runtime').write_text('nvidia-cdi\n')
    assert _step(host, 'config-check').returncode == 1
    configured = _step(host, 'config')
    assert configured.returncode == 0 and _changed(configured) == 1, configured.stdout[-3000:]
    assert 'default_runtime_name = "nvidia-cdi"' in (host / 'etc/containerd/conf.d/90-nvidia.toml').read_text()
    # uninstall: the task file, in a play of its own with the playbook's handlers
    assert _step(host, 'uninstall-check').returncode == 1
    removed = _step(host, 'uninstall')
    assert removed.returncode == 0, removed.stdout[-3000:]
    assert not (host / 'etc/sysctl.d/90-gpu.conf').exists() and not (host / 'etc/containerd/conf.d/90-nvidia.toml').exists()
    assert _step(host, 'uninstall-check').returncode == 0
    _podman(env, 'image', 'rm', ref)


@pytest.mark.parametrize('case, message', [
    ('missing role', 'role /nonexistent/gpu_tuning: not a directory, and not found in'),
    ('missing stage file', 'stages.config: role gpu_tuning has no tasks/reconfigure.yml'),
    ('vault', 'vault-encrypted file(s) vars/secrets.yml would be baked into the image'),
    ('inline vault', 'role gpu_tuning: inline !vault value(s) defaults/main.yml: gpu_tuning_token would be baked into '
                     'the image'),
    ('missing collection', 'role gpu_tuning needs the collection example.missing: not found in the collections paths'),
    ('empty stage file', 'stages.uninstall: role gpu_tuning tasks/uninstall.yml has no task'),
])
def test_bad_input_fails_naming_the_thing_at_fault_and_builds_nothing(env, base, tmp_path, case, message):
    role = tmp_path / 'gpu_tuning'
    shutil.copytree(ROLE, role)
    args = dict(role=str(role), version='9.9.9', image=f'{IMAGE}-bad', base_image=base, push=False)
    if case == 'missing role':
        args['role'] = '/nonexistent/gpu_tuning'
    elif case == 'missing stage file':
        args['stages'] = {'config': 'tasks/reconfigure.yml'}
    elif case == 'vault':
        (role / 'vars').mkdir()
        (role / 'vars' / 'secrets.yml').write_text('$ANSIBLE_VAULT;1.1;AES256\n61626364\n')
    elif case == 'inline vault':
        with open(role / 'defaults' / 'main.yml', 'a', encoding='utf-8') as defaults:
            defaults.write('gpu_tuning_token: !vault |\n  $ANSIBLE_VAULT;1.1;AES256\n  61626364\n')
    elif case == 'empty stage file':
        (role / 'tasks' / 'uninstall.yml').write_text('---\n# to do\n')
    else:
        with open(role / 'tasks' / 'main.yml', 'a', encoding='utf-8') as tasks:
            tasks.write('\n- name: Needs a collection\n  example.missing.thing: {}\n')
    proc, out = _playbook(env, tmp_path, **args)
    assert proc.returncode != 0 and out is None
    assert message in proc.stdout, proc.stdout[-3000:]
    assert _podman(env, 'image', 'exists', f'{IMAGE}-bad:9.9.9').returncode == 1


def test_a_collection_role_by_fqcn_brings_the_collections_its_tasks_use(env, base, host, tmp_path):
    # a role of an installed collection, named by FQCN, whose tasks use a module of another collection: both
    # collections are found on the controller's collections path and the module runs from the package on the host
    root = tmp_path / 'collections' / 'ansible_collections'
    tools = root / 'example' / 'tools'
    (tools / 'plugins' / 'modules').mkdir(parents=True)
    (tools / 'galaxy.yml').write_text('namespace: example\nname: tools\nversion: 1.0.0\nreadme: README.md\n'
                                      'authors: [x]\n')
    (tools / 'plugins' / 'modules' / 'stamp.py').write_text(
        '#!/usr/bin/python\nfrom ansible.module_utils.basic import AnsibleModule\n\n\ndef main():\n'
        '    module = AnsibleModule(argument_spec=dict(path=dict(type="str", required=True)))\n'
        '    with open(module.params["path"], "w") as out:\n        out.write("stamped\\n")\n'
        '    module.exit_json(changed=True)\n\n\nmain()\n')
    role = root / 'example' / 'gpu' / 'roles' / 'stamp'
    (role / 'tasks').mkdir(parents=True)
    (root / 'example' / 'gpu' / 'galaxy.yml').write_text('namespace: example\nname: gpu\nversion: 1.0.0\n'
                                                         'readme: README.md\nauthors: [x]\n')
    (role / 'tasks' / 'main.yml').write_text('- name: Stamp the host\n  example.tools.stamp:\n    path: /etc/stamped\n')
    search = dict(env, ANSIBLE_COLLECTIONS_PATH=f'{env["ANSIBLE_COLLECTIONS_PATH"]}:{tmp_path / "collections"}')
    ref = f'{IMAGE}-fqcn:1.0.0'
    proc, built = _playbook(search, tmp_path, role='example.gpu.stamp', version='1.0.0', image=f'{IMAGE}-fqcn',
                            base_image=base, push=False, gather_facts=False)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert built['role'] == 'stamp' and built['collections'] == ['example.tools'], built
    assert built['package'] == {'stamp': {'image': f'{IMAGE}-fqcn', 'version': '1.0.0'}}
    _install(env, ref, host)
    stamped = _step(host, 'apply')
    assert stamped.returncode == 0, stamped.stdout[-3000:]
    assert (host / 'etc' / 'stamped').read_text() == 'stamped\n'
    _podman(env, 'image', 'rm', ref)
