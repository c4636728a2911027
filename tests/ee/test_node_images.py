# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The real test nodes' images (tests/cluster/images.py) without a Kubernetes node: the local registry serves
them, the agent's controller runs, the test packages' steps run through the real agent, and the pause image
stops on SIGTERM.

The package stages are played as a node plays them, with podman instead of the kubelet: each container of the
collection's own stage pod (pod_layout.stage_pod: the package image's init container, then the agent's stage
and check containers, their args, env and mounts) runs in turn, the pod's hostPath ``/`` being a scratch "host
root" (the machine's /usr read-only in it, for the host's /bin/sh and coreutils) and its ConfigMap volumes
directories in the kubelet's layout (``..data`` symlinks). Nothing touches the real machine's files.

The first run builds the images (docs/dev/test-cluster.md, "Real-node images"); later runs take about a minute.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT / 'tests' / 'cluster'))
sys.path.insert(0, str(REPO_ROOT / 'tests'))

# pylint: disable=wrong-import-position
import images  # noqa: E402
from collection_path import importable  # noqa: E402
from podman_env import podman_env  # noqa: E402

NODE = 'images-node'
PROOF_CONFIG = {'settings.conf': 'mode=proof\nlevel=3\n', 'empty.txt': ''}


@pytest.fixture(scope='module')
def env():
    return podman_env()


def _refs(refs):
    yield refs['agent']
    yield refs['pause']
    for entry in refs['packages'].values():
        yield from entry['versions'].values()
        yield from entry['builds'].values()


@pytest.fixture(scope='module')
def refs(env):
    """The images' references; each pulled from the registry as a node pulls it (podman's storage may have the
    build already, then only the manifest is read)."""
    result = images.ensure_images()
    for ref in _refs(result):
        proc = subprocess.run(['podman', 'pull', '--tls-verify=false', '-q', f'docker://{ref}'], env=env,
                              capture_output=True, text=True, check=False, timeout=300)
        assert proc.returncode == 0, f'podman pull {ref}: {proc.stdout}{proc.stderr}'
    return result


@pytest.fixture(scope='module')
def layout():
    importable()
    # pylint: disable=import-outside-toplevel
    from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_validation
    from ansible_collections.nodewright.bridge.plugins.module_utils.contract import pod_layout
    return cr_validation, pod_layout


def test_registry_serves_every_manifest(refs):
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    for ref in _refs(refs):
        repository, tag = ref.rsplit(':', 1)
        assert repository.startswith('localhost/'), ref
        req = urllib.request.Request(f'{refs["registry"]}/v2/{repository.split("/", 1)[1]}/manifests/{tag}',
                                     headers={'Accept': ', '.join(images.MANIFEST_TYPES)})
        with opener.open(req, timeout=10) as resp:
            body = json.loads(resp.read())
            assert resp.headers['Content-Type'] in images.MANIFEST_TYPES, ref
        assert body['schemaVersion'] == 2 and body['layers'], (ref, body)
    for entry in refs['packages'].values():  # the version tag is the build's
        for version, ref in entry['versions'].items():
            assert images.manifest(ref)[0] == images.manifest(entry['builds'][version])[0], ref


def test_agent_controller_runs(env, refs):
    proc = subprocess.run(['podman', 'run', '--rm', '--pull=never', '--network=none', '-e', 'COPY_RESOLV=false',
                           '-e', 'SKYHOOK_RESOURCE_ID=test_agent_1.0.0', refs['agent'], 'nomode', '/nonexistent', '/copy'],
                          env=env, capture_output=True, text=True, check=False, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert 'mode: nomode' in proc.stdout and 'SKYHOOK_RESOURCE_ID: test_agent_1.0.0' in proc.stdout
    assert "doesn't support the nomode mode" in proc.stderr
    out = subprocess.run(['podman', 'run', '--rm', '--pull=never', '--network=none', '--entrypoint', 'python', refs['agent'],
                          '-c', 'import importlib.metadata as m, sys; print(sys.version_info[:2], m.version("skyhook-agent"), '
                                'm.version("jsonschema"))'], env=env, capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == f"(3, 13) {refs['agent_version']} 4.23.0"


def test_pause_stops_on_sigterm(env, refs):
    name = f'nodewright-pause-test-{int(time.time() * 1000)}'
    subprocess.run(['podman', 'run', '-d', '--pull=never', '--network=none', '--name', name, refs['pause']], env=env,
                   capture_output=True, text=True, check=True, timeout=120)
    try:
        time.sleep(1)
        state = subprocess.run(['podman', 'inspect', '-f', '{{.State.Running}}', name], env=env, capture_output=True,
                               text=True, check=True).stdout.strip()
        assert state == 'true'
        start = time.monotonic()
        # SIGTERM, and SIGKILL only after 20 s: a pause that ignored SIGTERM would take that long
        subprocess.run(['podman', 'stop', '-t', '20', name], env=env, capture_output=True, check=True, timeout=60)
        assert time.monotonic() - start < 10
        inspect = subprocess.run(['podman', 'inspect', '-f', '{{.State.ExitCode}}', name], env=env, capture_output=True,
                                 text=True, check=True).stdout.strip()
        assert inspect == '0'
        logs = subprocess.run(['podman', 'logs', name], env=env, capture_output=True, text=True, check=True)
        assert 'pause: terminated' in logs.stdout + logs.stderr
    finally:
        subprocess.run(['podman', 'rm', '-f', name], env=env, capture_output=True, check=False)


# --------------------------------------------------------------------------- stage pods played with podman

class Node:
    """A scratch host root and the stage pods' ConfigMaps, for podman runs of a pod's containers."""

    def __init__(self, tmp_path: Path, env, layout):
        self.root, self.env, self.cms, self.layout = tmp_path / 'host', env, tmp_path / 'configmaps', layout
        for sub in ('dev', 'etc', 'tmp', 'var/lib', 'var/log', 'usr'):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        for link in ('bin', 'lib', 'lib64', 'sbin'):  # as on this machine (merged /usr), for the chroot
            (self.root / link).symlink_to(f'usr/{link}')
        # the node's boot id (proof lines carry it), a file of its own as a real node's namespace could have
        self.boot_id = tmp_path / 'boot_id'
        self.boot_id.write_text('0b0e1d00-0000-4000-8000-000000000001\n', encoding='utf-8')
        self.configmaps = {}

    def add_configmap(self, configmap):
        """The ConfigMap as the kubelet lays out a configMap volume: files in a timestamped directory,
        ``..data`` pointing to it, one symlink per key."""
        if configmap is None:
            return
        name = configmap['metadata']['name']
        directory = self.cms / name
        stamp = directory / '..2026_01_01_00_00_00.000000001'
        stamp.mkdir(parents=True, exist_ok=True)
        for key, value in configmap['data'].items():
            (stamp / key).write_text(value, encoding='utf-8')
            if not (directory / key).is_symlink():
                (directory / key).symlink_to(f'..data/{key}')
        if not (directory / '..data').is_symlink():
            (directory / '..data').symlink_to(stamp.name)
        self.configmaps[name] = directory

    def command(self, pod, container, detach=False):
        volumes = {v['name']: v for v in pod['spec']['volumes']}
        args = ['podman', 'run', '--pull=never', '--network=none']
        args += ['-d'] if detach else ['--rm']
        if (container.get('securityContext') or {}).get('privileged'):
            args.append('--privileged')
        for var in container.get('env') or []:
            args += ['-e', f'{var["name"]}={var["value"]}']
        for mount in container.get('volumeMounts') or []:
            volume = volumes[mount['name']]
            if 'hostPath' in volume:
                assert volume['hostPath']['path'] == '/'
                args += ['-v', f'{self.root}:{mount["mountPath"]}', '-v', f'/usr:{mount["mountPath"]}/usr:ro',
                         '-v', f'/dev/null:{mount["mountPath"]}/dev/null',
                         '-v', f'{self.boot_id}:{mount["mountPath"]}/proc/sys/kernel/random/boot_id:ro']
            else:
                args += ['-v', f'{self.configmaps[volume["configMap"]["name"]]}:{mount["mountPath"]}:ro']
        if container.get('command'):
            args += ['--entrypoint', json.dumps(container['command'])]
        return [*args, container['image'], *(container.get('args') or [])]

    def run_pod(self, pod):
        """The pod's init containers in turn, as the kubelet runs them: (container name, exit code, output) of each
        run, up to the first that fails."""
        runs = []
        for container in pod['spec']['initContainers']:
            proc = subprocess.run(self.command(pod, container), env=self.env, capture_output=True, text=True,
                                  check=False, timeout=300)
            runs.append((container['name'], proc.returncode, proc.stdout + proc.stderr))
            if proc.returncode != 0:
                break
        return runs

    def proof(self, cr_name, package):
        """The proof file's lines as dicts (tests/cluster/packages/_lib/proof.sh)."""
        path = self.root / 'var/lib/nodewright-proof' / cr_name / f'{package}.log'
        if not path.exists():
            return []
        return [dict(field.split('=', 1) for field in line.split(' ')) for line in path.read_text(encoding='utf-8').splitlines()]


def _cr(layout, name, package, version, generation=1, image=None, **fields):  # pylint: disable=too-many-arguments
    """A Skyhook CR of one package (named ``package``, of the test package image ``image``, default the same), with
    the uid and generation the API server would give it (the copy directory and SKYHOOK_RESOURCE_ID carry them)."""
    cr_validation = layout[0]
    doc = {'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'Skyhook',
           'metadata': {'name': name, 'uid': f'00000000-0000-0000-0000-{generation:012d}', 'generation': generation},
           'spec': {'nodeSelectors': {'matchLabels': {'nodewright.bridge/images': 'true'}},
                    'packages': {package: dict({'version': version, 'image': f'{images.PACKAGE_REPOSITORY}/{image or package}'},
                                               **fields)}}}
    cr = cr_validation.build_cr(doc, stored=True)
    cr.identity = {'cr_uid': doc['metadata']['uid'], 'cr_generation': generation}
    return cr


def _stage(node, refs, cr, package, stage):
    pod_layout = node.layout[1]
    node.add_configmap(pod_layout.package_configmap(cr, package, cr_uid=cr.identity['cr_uid']))
    node.add_configmap(pod_layout.node_metadata_configmap(cr, {'name': NODE, 'labels': {'nodewright.bridge/images': 'true'}},
                                                          agent_image=refs['agent']))
    pod = pod_layout.stage_pod(cr, package, stage, NODE, agent_image=refs['agent'], pause_image=refs['pause'], **cr.identity)
    return pod, node.run_pod(pod)


def _ok(runs, count=3):
    assert len(runs) == count and all(run[1] == 0 for run in runs), '\n'.join(f'--- {n}: exit {rc}\n{out}' for n, rc, out in runs)


def test_proof_package_stages_through_the_agent(env, refs, layout, tmp_path):
    node = Node(tmp_path, env, layout)
    name = 'images-proof'
    # the CR names the package otherwise than its image does: the proof file is the CR's name's
    cr = _cr(layout, name, 'tuning', '1.0.0', image='proof', configMap=PROOF_CONFIG)
    for stage in ('apply', 'config'):  # config's init copies over apply's copy (GNU cp and the ConfigMap symlinks)
        _ok(_stage(node, refs, cr, 'tuning', stage)[1])
    interrupt = layout[1].interrupt_pod(cr, 'tuning', {'type': 'noop', 'services': []}, NODE, agent_image=refs['agent'], **cr.identity)
    _ok(node.run_pod(interrupt), 1)
    _ok(_stage(node, refs, cr, 'tuning', 'post-interrupt')[1])
    upgraded = _cr(layout, name, 'tuning', '1.1.0', generation=2, image='proof')
    _ok(_stage(node, refs, upgraded, 'tuning', 'upgrade')[1])
    pod, runs = _stage(node, refs, upgraded, 'tuning', 'uninstall')
    _ok(runs)

    lines = node.proof(name, 'tuning')
    assert [(line['stage'], line['version']) for line in lines] == [
        ('apply', '1.0.0'), ('apply-check', '1.0.0'), ('config', '1.0.0'), ('config-check', '1.0.0'),
        ('post-interrupt', '1.0.0'), ('post-interrupt-check', '1.0.0'), ('upgrade', '1.1.0'), ('upgrade-check', '1.1.0'),
        ('uninstall', '1.1.0'), ('uninstall-check', '1.1.0')]
    config = {k[3:]: base64.b64decode(v).decode() for k, v in lines[2].items() if k.startswith('cm.')}
    assert config == PROOF_CONFIG
    assert (lines[6]['from'], lines[6]['to']) == ('1.0.0', '1.1.0')
    resource = next(v['value'] for v in pod['spec']['initContainers'][1]['env'] if v['name'] == 'SKYHOOK_RESOURCE_ID')
    assert lines[-1]['resource'] == resource == f'{name}-00000000-0000-0000-0000-000000000002-2_tuning_1.1.0'
    assert lines[0]['resource'] == f'{name}-00000000-0000-0000-0000-000000000001-1_tuning_1.0.0'
    assert all(line['package'] == 'tuning' and line['image'] == 'proof' and line['time'].endswith('Z') for line in lines)
    assert {line['boot'] for line in lines} == {node.boot_id.read_text(encoding='utf-8').strip()}
    assert not (node.root / 'var/lib/nodewright-proof' / name / 'tuning.installed').exists()
    # the agent's own records on the "host": the noop interrupt's flag, the package's history
    skyhook = node.root / 'var/lib/skyhook' / name
    assert list((skyhook / 'interrupts/flags').glob('*_tuning_1.0.0/no_op.complete'))
    history = json.loads((skyhook / 'history/proof.json').read_text(encoding='utf-8'))
    assert [h['version'] for h in history['history']] == ['uninstalled', '1.1.0', '1.0.0']


def test_fails_package_fails_until_fixed(env, refs, layout, tmp_path):
    node = Node(tmp_path, env, layout)
    runs = _stage(node, refs, _cr(layout, 'images-fails', 'fails', '1.0.0'), 'fails', 'apply')[1]
    assert len(runs) == 2 and runs[0][1] == 0 and runs[1][1] != 0, runs
    assert 'fails: apply failed on purpose' in runs[1][2]
    fixed = _cr(layout, 'images-fails', 'fails', '1.0.0', generation=2, env=[{'name': 'FIX', 'value': '1'}])
    _ok(_stage(node, refs, fixed, 'fails', 'apply')[1])
    assert [(line['stage'], line['fix']) for line in node.proof('images-fails', 'fails') if line['stage'] == 'apply'] == [
        ('apply', 'none'), ('apply', '1')]


def test_hang_package_keeps_running(env, refs, layout, tmp_path):
    node = Node(tmp_path, env, layout)
    cr = _cr(layout, 'images-hang', 'hang', '1.0.0')
    pod_layout = layout[1]
    node.add_configmap(pod_layout.node_metadata_configmap(cr, {'name': NODE, 'labels': {'a': 'b'}}, agent_image=refs['agent']))
    pod = pod_layout.stage_pod(cr, 'hang', 'apply', NODE, agent_image=refs['agent'], **cr.identity)
    init, apply = pod['spec']['initContainers'][:2]
    _ok(node.run_pod(dict(pod, spec=dict(pod['spec'], initContainers=[init]))), 1)
    container = subprocess.run(node.command(pod, apply, detach=True), env=env, capture_output=True, text=True,
                               check=True, timeout=120).stdout.strip()
    try:
        deadline = time.monotonic() + 60
        while not node.proof('images-hang', 'hang') and time.monotonic() < deadline:
            time.sleep(0.5)
        assert [line['stage'] for line in node.proof('images-hang', 'hang')] == ['apply']
        time.sleep(2)
        running = subprocess.run(['podman', 'inspect', '-f', '{{.State.Running}}', container], env=env,
                                 capture_output=True, text=True, check=True).stdout.strip()
        assert running == 'true' and node.proof('images-hang', 'hang')[0]['sleep'] == '86400'
    finally:
        subprocess.run(['podman', 'rm', '-f', '-t', '0', container], env=env, capture_output=True, check=False)
