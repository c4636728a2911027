# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""Real nodes: NodeWright packages that really run, through the real agent, on a kubelet + containerd node.

One real node (tests/cluster/real_node.py) joins the session's cluster for this module; its images (the agent
built from upstream's source, the pause image, the test packages of tests/cluster/packages) are built here and
pulled from a local registry (tests/cluster/images.py). The packages' scripts run on the node's root (the
machine's filesystems, in the node's mount namespace) and append a proof line per stage run under the node's
/var/lib/nodewright-proof, which the tests read: each stage ran, once per rollout, in order, with the config
it was given. A reboot interrupt goes through the agent's real ``reboot``, which the node's shim hands to its
supervisor (kubelet, containerd and every container stop, a new boot ID, both start again). At the end the
node is removed and the machine is as it was (real_node.machine_snapshot).
"""

from __future__ import annotations

import shutil
import time
import uuid
from pathlib import Path

import pytest
from kubernetes import client as kclient

import real_support
from real_support import PREFIX, configs as _configs, real_node, start_real_node

pytestmark = pytest.mark.cluster


def _steps(result, node, kind):
    """The node's timeline steps of ``kind`` (cordon, wait, drain, ...) in the run's rollout report."""
    rollouts = (result.report or {}).get('rollouts') or []
    steps = [step for rollout in rollouts for step in (rollout['nodes'].get(node) or {}).get('steps', [])
             if step['kind'] == kind]
    assert steps, f'no {kind} step of {node} in the report'
    return steps


def _failures(result):
    """The failed tasks' messages of a playbook run (what a reader of its output looks for first)."""
    return '\n'.join(line for line in (result.stdout + result.stderr).splitlines()
                     if 'fatal:' in line or '"msg"' in line or 'FAILED' in line)[-4000:]


def _message(text, start):
    """The failed stage's message in a run's output: from ``start`` to the end of its JSON string."""
    at = text.find(start)
    return text[at:text.find('"', at)] if at >= 0 else None


@pytest.fixture(scope='module')
def real(cluster):
    """A real node in the cluster for this module (real_support.start_real_node)."""
    node, stop = start_real_node(cluster)
    yield node
    stop()


def _variables(real, cr, namespace, **extra):
    variables = {'nodewright_cr_name': cr, 'nodewright_namespace': namespace,
                 'nodewright_agent_image': real.images['agent'], 'nodewright_stage_timeout': 180,
                 'nodewright_interrupt_timeout': 240, 'nodewright_drain_timeout': 120}
    variables.update(extra)
    return variables


def _apply(playbooks, real, cr, namespace, **extra):
    return playbooks.run('nodewright.bridge.apply', extra_vars=_variables(real, cr, namespace, **extra))


def test_a_cr_rolls_out_on_a_real_node_each_stage_once_in_order(real, playbooks, namespace):
    resolv_before = (Path(real.cluster.info.real_nodes[real.name]['dir']) / 'resolv.conf').read_bytes()
    cr = real.create_cr({
        'base': real.package('proof', configMap={'settings.conf': 'mode=fast\n'}),
        'top': real.package('proof', version='1.1.0', dependsOn={'base': '1.0.0'}),
    })
    try:
        result = _apply(playbooks, real, cr, namespace)
        assert result.rc == 0, result
        base, top = real.stages(cr, 'base'), real.stages(cr, 'top')
        print(f'\nreal node {real.name}: base ran {base}; top ran {top}')
        assert base == ['apply', 'apply-check', 'config', 'config-check'], base
        assert top == ['apply', 'apply-check', 'config', 'config-check'], top
        # dependsOn: top's apply after base's last stage
        assert real.proof(cr, 'base')[-1]['time'] < real.proof(cr, 'top')[0]['time']
        assert _configs([line for line in real.proof(cr, 'base') if line['stage'] == 'config']) == [
            {'settings.conf': 'mode=fast\n'}]
        state = real.state(cr)
        assert {key: entry['state'] for key, entry in state.items()} == {'base|1.0.0': 'complete', 'top|1.1.0': 'complete'}
        node = real.node()
        assert not node.spec.unschedulable and node.metadata.labels.get(f'{PREFIX}/status_{cr}') == 'complete'
        # COPY_RESOLV=false: the node's resolv.conf is its own still
        assert (Path(real.cluster.info.real_nodes[real.name]['dir']) / 'resolv.conf').read_bytes() == resolv_before

        again = _apply(playbooks, real, cr, namespace)
        assert again.rc == 0, again
        assert real.stages(cr, 'base') == base and real.stages(cr, 'top') == top, 'a complete node ran again'
    finally:
        real.delete_cr(cr)


def test_a_reboot_goes_through_the_real_agent_and_the_node_comes_back(real, playbooks, namespace):
    cr = real.create_cr({'driver': real.package('proof', interrupt={'type': 'reboot'})})
    boot_before = real.node().status.node_info.boot_id
    reboots_before = len(real_node.reboots(real.cluster.info, real.name))
    try:
        result = _apply(playbooks, real, cr, namespace)
        assert result.rc == 0, _failures(result)
        lines = real.proof(cr, 'driver')
        stages = [line['stage'] for line in lines]
        print(f'\nreal node reboot: stages {stages}; shim calls {real_node.calls(real.cluster.info, real.name)}')
        assert stages == ['apply', 'apply-check', 'config', 'config-check', 'post-interrupt', 'post-interrupt-check'], stages
        reboots = real_node.reboots(real.cluster.info, real.name)[reboots_before:]
        assert len(reboots) == 1, reboots  # one "reboot", asked for by the agent through the shim
        boot_after = real.node().status.node_info.boot_id
        assert boot_after != boot_before and reboots[0]['boot_id'] == boot_after
        # the stages before the interrupt saw the old boot, the ones after it the new one
        assert {line['boot'] for line in lines[:4]} == {boot_before} and {line['boot'] for line in lines[4:]} == {boot_after}
        node = real.node()
        assert not node.spec.unschedulable
        assert real.state(cr)['driver|1.0.0']['state'] == 'complete'
    finally:
        real.delete_cr(cr)


def test_a_failing_package_fails_its_node_with_the_scripts_reason_then_a_fix_resumes_it(real, playbooks, namespace):
    cr = real.create_cr({'broken': real.package('fails')})
    try:
        failed = _apply(playbooks, real, cr, namespace, nodewright_stage_retries=0)
        assert failed.rc != 0, failed
        assert 'apply failed on purpose (exit 3)' in failed.stdout + failed.stderr, failed
        node = real.node()
        assert node.spec.unschedulable is not True or node.metadata.annotations.get(f'{PREFIX}/cordon_{cr}')
        assert node.metadata.labels.get(f'{PREFIX}/status_{cr}') == 'erroring'
        assert real.state(cr)['broken|1.0.0']['state'] == 'erroring'
        tries = real.stages(cr, 'broken')
        assert tries and set(tries) == {'apply'}, tries

        real.patch_cr(cr, {'packages': {'broken': real.package('fails', env=[{'name': 'FIX', 'value': '1'}])}})
        fixed = _apply(playbooks, real, cr, namespace)
        assert fixed.rc == 0, fixed
        assert real.state(cr)['broken|1.0.0']['state'] == 'complete'
        applies = [line for line in real.proof(cr, 'broken') if line['stage'] == 'apply']
        # the failed pod stays (delete_pod on_success) and the kubelet restarts its container (restartPolicy
        # OnFailure) as under the operator, until the fixed CR's run replaces it: then one run with the fix
        fixes = [line.get('fix') for line in applies]
        assert fixes[-1] == '1' and set(fixes[:-1]) == {'none'} and len(fixes) > len(tries), fixes
        assert real.stages(cr, 'broken')[-1] == 'apply-check'
        assert not real.node().spec.unschedulable
    finally:
        real.delete_cr(cr)


def _workload_pod_spec(real, command, grace):
    """A container of the test package image (Debian's sh and coreutils) that runs ``command``, on the real node."""
    return {'terminationGracePeriodSeconds': grace, 'tolerations': [real_node.REAL_NODE_TOLERATION],
            'containers': [{'name': 'work', 'image': real.images['packages']['proof']['versions']['1.0.0'],
                            'command': ['/bin/sh', '-c', command]}]}


# The protected pod's release: a file the test writes in the node's /var/lib/nodewright-proof (the pod's hostPath).
RELEASE_DIR = '/var/lib/nodewright-proof'


def _real_workload(real, namespace, tag):
    """A protected pod that finishes by itself once the test releases it (_release), and two replicas under a PDB
    (maxUnavailable 1) that stop only after 3 s of their SIGTERM grace period; the replicas prefer the real node and
    move to a fake one. The release, not a fixed sleep: how long a run takes to reach the drain depends on the machine
    (seen: a 12 s sleep over before the drain looked, on a slow one), the wait must not."""
    core, apps = real.cluster.core, kclient.AppsV1Api(real.cluster.api)
    waits = f'while [ ! -e /release/training-{tag} ]; do sleep 0.2; done'
    spec = dict(_workload_pod_spec(real, waits, 30), nodeName=real.name, restartPolicy='Never',
                volumes=[{'name': 'release', 'hostPath': {'path': RELEASE_DIR, 'type': 'Directory'}}])
    spec['containers'][0]['volumeMounts'] = [{'name': 'release', 'mountPath': '/release', 'readOnly': True}]
    protected = {'metadata': {'name': f'training-{tag}', 'labels': {'workload': f'training-{tag}'}}, 'spec': spec}
    core.create_namespaced_pod(namespace, protected)
    graceful = 'trap "sleep 3; exit 0" TERM; while :; do sleep 0.2; done'
    spec = _workload_pod_spec(real, graceful, 20)
    spec['affinity'] = {'nodeAffinity': {'preferredDuringSchedulingIgnoredDuringExecution': [
        {'weight': 100, 'preference': {'matchExpressions': [
            {'key': 'kubernetes.io/hostname', 'operator': 'In', 'values': [real.name]}]}}]}}
    labels = {'app': f'serve-{tag}'}
    apps.create_namespaced_deployment(namespace, {
        'metadata': {'name': f'serve-{tag}'},
        'spec': {'replicas': 2, 'selector': {'matchLabels': labels},
                 'template': {'metadata': {'labels': labels}, 'spec': spec}}})
    kclient.PolicyV1Api(real.cluster.api).create_namespaced_pod_disruption_budget(namespace, {
        'metadata': {'name': f'serve-{tag}'}, 'spec': {'maxUnavailable': 1, 'selector': {'matchLabels': labels}}})

    def placed():
        pods = core.list_namespaced_pod(namespace, label_selector=f'app=serve-{tag}').items
        running = [p for p in pods if p.spec.node_name == real.name and p.status.phase == 'Running']
        return running if len(running) == 2 else None
    import helpers  # pylint: disable=import-outside-toplevel
    helpers.wait_for(placed, 180, interval=0.5, what='both replicas running on the real node')
    helpers.wait_for(lambda: core.read_namespaced_pod(protected['metadata']['name'], namespace).status.phase == 'Running',
                     120, interval=0.5, what='the protected pod running')
    return labels


def _release(real, tag):
    """The protected pod's file on the machine (the node's /var/lib/nodewright-proof is its proof directory)."""
    release = real_node.proof_dir(real.cluster.info, real.name) / f'training-{tag}'
    release.write_text('done\n', encoding='utf-8')
    return release


def test_a_drain_waits_for_protected_pods_and_evicts_real_pods_with_their_grace_period(real, playbooks, namespace, tmp_path):
    import helpers  # pylint: disable=import-outside-toplevel
    import module_runner  # pylint: disable=import-outside-toplevel
    with module_runner.checkout_code(tmp_path, 'plugins.module_utils.contract.protected_wait') as (protected_wait,):
        key_of = protected_wait.key  # the node's record of a drain waiting for its protected pods
    tag = uuid.uuid4().hex[:5]
    labels = _real_workload(real, namespace, tag)
    cr = real.create_cr({'tuning': real.package('proof', interrupt={'type': 'service', 'services': ['containerd']})},
                        podNonInterruptLabels={'matchLabels': {'workload': f'training-{tag}'}})
    core = real.cluster.core
    calls_before = len(real_node.calls(real.cluster.info, real.name))
    release = None
    try:
        run = module_runner.launch(playbooks, 'nodewright.bridge.apply', extra_vars=_variables(real, cr, namespace))
        # the drain found the protected pod running: the node carries its wait record; the pod finishes 6 s later
        helpers.wait_for(lambda: key_of(cr) in (real.node().metadata.annotations or {}), 300, interval=0.5,
                         what='the drain waiting for the protected pod')
        time.sleep(6)
        release = _release(real, tag)
        result = run.finish(timeout=600)
        assert result.rc == 0, result
        training = core.read_namespaced_pod(f'training-{tag}', namespace)
        assert training.status.phase == 'Succeeded'  # never evicted: it finished
        finished = max(s.state.terminated.finished_at for s in training.status.container_statuses).timestamp()
        calls = real_node.calls(real.cluster.info, real.name)[calls_before:]
        print(f'\nreal drain: shim calls {calls}; protected pod finished at {finished:.1f}')
        # the service interrupt went through the agent's systemctl (the node's shim), after the protected pod
        restarts = [line.split() for line in calls if ' systemctl restart ' in line]
        assert [words[3:] for words in restarts] == [['containerd']], calls
        assert float(restarts[0][0]) > finished
        # the replicas: evicted from the real node (the PDB one at a time), each stopped by its own SIGTERM
        # handler after its 3 s, and now on fake nodes
        pods = core.list_namespaced_pod(namespace, label_selector=f"app={labels['app']}").items
        assert len(pods) == 2 and all(p.spec.node_name != real.name for p in pods), [(p.metadata.name, p.spec.node_name) for p in pods]
        events = core.list_namespaced_event(namespace, field_selector='reason=Killing').items
        assert sum(1 for e in events if (e.involved_object.name or '').startswith(f'serve-{tag}')) == 2, events
        drain, = _steps(result, real.name, 'drain')
        wait, = _steps(result, real.name, 'wait')
        print(f'real drain: waited {wait["finished"] - wait["started"]:.1f} s for the protected pod, drained in '
              f'{drain["finished"] - drain["started"]:.1f} s: {drain.get("detail")} {drain.get("waits")}')
        # the protected pod's 6 s and more were waited out first; then two evictions (the PDB lets the second one
        # through once the first pod's replacement is Ready on a fake node, while the first still runs its handler),
        # the drain waiting until both pods were gone: at least the 3 s of a SIGTERM handler
        assert wait['finished'] >= finished - 1 and wait['finished'] - wait['started'] >= 5, wait
        assert drain['finished'] - drain['started'] >= 3, drain
        assert key_of(cr) not in (real.node().metadata.annotations or {})  # the record went with the wait
        proof = [line['stage'] for line in real.proof(cr, 'tuning')]
        assert proof == ['apply', 'apply-check', 'config', 'config-check', 'post-interrupt', 'post-interrupt-check'], proof
        assert not real.node().spec.unschedulable
    finally:
        if release is None:
            release = _release(real, tag)  # a failed wait: the pod must not outlive the test
        real.delete_cr(cr)
        kclient.AppsV1Api(real.cluster.api).delete_namespaced_deployment(f'serve-{tag}', namespace)
        release.unlink(missing_ok=True)


def _new_stages(real, cr, package, before):
    """The stages ``package`` ran since ``before`` proof lines."""
    return [line['stage'] for line in real.proof(cr, package)[before:]]


def test_a_config_edit_an_upgrade_and_an_uninstall_each_run_their_stages_once_on_the_host(real, playbooks, namespace):
    cr = real.create_cr({'tuning': real.package(
        'proof', configMap={'a.conf': 'v1\n', 'b.conf': 'keep\n'}, uninstall={'enabled': True},
        configInterrupts={'a.conf': {'type': 'service', 'services': ['rsyslog']}})})
    info = real.cluster.info
    try:
        first = _apply(playbooks, real, cr, namespace)
        assert first.rc == 0, _failures(first)
        assert real.stages(cr, 'tuning') == ['apply', 'apply-check', 'config', 'config-check']

        # the edit: config again with the new data, then the configInterrupt of a.conf (systemctl through the shim)
        seen, calls_before = len(real.proof(cr, 'tuning')), len(real_node.calls(info, real.name))
        real.patch_cr(cr, {'packages': {'tuning': {'configMap': {'a.conf': 'v2\n', 'b.conf': 'keep\n'}}}})
        edited = _apply(playbooks, real, cr, namespace)
        assert edited.rc == 0, _failures(edited)
        stages = _new_stages(real, cr, 'tuning', seen)
        restarts = [c for c in real_node.calls(info, real.name)[calls_before:] if ' systemctl restart ' in c]
        print(f'\nreal config edit: {stages}; shim {restarts}')
        assert stages == ['config', 'config-check', 'post-interrupt', 'post-interrupt-check'], stages
        assert [c.split()[3:] for c in restarts] == [['rsyslog']], restarts
        config = [line for line in real.proof(cr, 'tuning')[seen:] if line['stage'] == 'config']
        assert _configs(config) == [{'a.conf': 'v2\n', 'b.conf': 'keep\n'}]

        # the upgrade: the new version's upgrade step (from the old version), its check and config, nothing else
        seen = len(real.proof(cr, 'tuning'))
        real.patch_cr(cr, {'packages': {'tuning': {'version': '1.1.0'}}})
        upgraded = _apply(playbooks, real, cr, namespace)
        assert upgraded.rc == 0, _failures(upgraded)
        lines = real.proof(cr, 'tuning')[seen:]
        print(f'real upgrade: {[(line["stage"], line["version"]) for line in lines]}')
        assert [line['stage'] for line in lines] == ['upgrade', 'upgrade-check', 'config', 'config-check']
        assert {line['version'] for line in lines} == {'1.1.0'}
        assert (lines[0]['from'], lines[0]['to']) == ('1.0.0', '1.1.0'), lines[0]
        assert list(real.state(cr)) == ['tuning|1.1.0']

        # the uninstall: its two steps, once; the node keeps the operator's empty record
        seen = len(real.proof(cr, 'tuning'))
        real.patch_cr(cr, {'packages': {'tuning': {'uninstall': {'enabled': True, 'apply': True}}}})
        removed = _apply(playbooks, real, cr, namespace)
        assert removed.rc == 0, _failures(removed)
        stages = _new_stages(real, cr, 'tuning', seen)
        print(f'real uninstall: {stages}; node state {real.state(cr)}')
        assert stages == ['uninstall', 'uninstall-check'], stages
        installed = real_node.proof_dir(info, real.name) / cr / 'tuning.installed'
        assert not installed.exists()
        again = _apply(playbooks, real, cr, namespace)
        assert again.rc == 0 and _new_stages(real, cr, 'tuning', seen) == stages, 'an uninstalled package ran again'
    finally:
        real.delete_cr(cr)


def _cordoned_by(real, cr):
    node = real.node()
    return bool(node.spec.unschedulable) and f'{PREFIX}/cordon_{cr}' in (node.metadata.annotations or {})


def test_an_image_missing_from_the_registry_fails_its_node_with_the_kubelets_reason_and_a_fixed_image_resumes(
        real, playbooks, namespace):
    absent = real.images['packages']['proof']['image'].rsplit('/', 1)[0] + '/absent'
    cr = real.create_cr({'tuning': {'version': '1.0.0', 'image': absent,
                                    'interrupt': {'type': 'service', 'services': ['containerd']}}})
    try:
        failed = _apply(playbooks, real, cr, namespace, nodewright_stage_timeout=30)
        text = failed.stdout + failed.stderr
        assert failed.rc != 0, failed
        print(f'\nreal missing image: {_message(text, "did not finish")}')
        assert 'did not finish within 30s' in text and 'init container tuning-init waiting' in text, _failures(failed)
        assert ('ImagePullBackOff' in text or 'ErrImagePull' in text) and f'{absent}:1.0.0' in text, _failures(failed)
        # cordoned for its interrupt (the drain comes before the stage), erroring, nothing ran on the host
        assert _cordoned_by(real, cr)
        assert real.node().metadata.labels.get(f'{PREFIX}/status_{cr}') == 'erroring'
        assert real.state(cr)['tuning|1.0.0']['state'] == 'erroring'
        assert real.stages(cr, 'tuning') == []

        real.patch_cr(cr, {'packages': {'tuning': {'image': real.images['packages']['proof']['image']}}})
        fixed = _apply(playbooks, real, cr, namespace)
        assert fixed.rc == 0, _failures(fixed)
        assert real.stages(cr, 'tuning') == ['apply', 'apply-check', 'config', 'config-check', 'post-interrupt',
                                             'post-interrupt-check']
        assert not real.node().spec.unschedulable and real.state(cr)['tuning|1.0.0']['state'] == 'complete'
    finally:
        real.delete_cr(cr)


def test_a_script_that_hangs_past_its_timeout_fails_its_node_and_a_fixed_cr_reruns_it(real, playbooks, namespace):
    cr = real.create_cr({'stuck': real.package('hang')})
    try:
        failed = _apply(playbooks, real, cr, namespace, nodewright_stage_timeout=25)
        text = failed.stdout + failed.stderr
        assert failed.rc != 0, failed
        print(f'\nreal hang: {_message(text, "did not finish")}')
        assert 'did not finish within 25s' in text and 'init container stuck-apply running since' in text, _failures(failed)
        assert real.state(cr)['stuck|1.0.0']['state'] == 'erroring'
        assert real.node().metadata.labels.get(f'{PREFIX}/status_{cr}') == 'erroring'
        assert [line.get('sleep') for line in real.proof(cr, 'stuck')] == ['86400']

        real.patch_cr(cr, {'packages': {'stuck': real.package('hang', env=[{'name': 'HANG_SECONDS', 'value': '1'}])}})
        fixed = _apply(playbooks, real, cr, namespace)
        assert fixed.rc == 0, _failures(fixed)
        assert [(line['stage'], line.get('sleep')) for line in real.proof(cr, 'stuck')] == [
            ('apply', '86400'), ('apply', '1'), ('apply-check', None)]
        assert real.state(cr)['stuck|1.0.0']['state'] == 'complete'
    finally:
        real.delete_cr(cr)


def test_a_kubelet_that_dies_mid_stage_fails_its_node_with_the_nodes_reason_and_a_rerun_resumes_the_stage(
        real, playbooks, namespace):
    import helpers  # pylint: disable=import-outside-toplevel
    info = real.cluster.info
    cr = real.create_cr({'stuck': real.package('hang', env=[{'name': 'HANG_SECONDS', 'value': '100'}])})
    try:
        started = time.time()
        run = playbooks.start('nodewright.bridge.apply', extra_vars={
            'nodewright_cr_name': cr, 'nodewright_namespace': namespace, 'nodewright_agent_image': real.images['agent'],
            'nodewright_stage_timeout': 75})
        helpers.wait_for(lambda: real.stages(cr, 'stuck') == ['apply'], 120, interval=0.5, what='the apply step running')
        real_node.stop_kubelet(info, real.name)
        out, dummy = run.communicate(timeout=300)
        print(f'\nreal kubelet gone: {_message(out, "did not finish")}')
        assert run.returncode != 0
        assert 'did not finish within 75s' in out and 'is not Ready (Unknown, NodeStatusUnknown' in out, out[-3000:]
        # the failure comes at the stage's timeout: reading the logs of a gone kubelet is not waited out as an outage
        assert time.time() - started < 75 + 60, time.time() - started
        assert real.state(cr)['stuck|1.0.0']['state'] == 'erroring'

        # the kubelet back: the stage's container ran on meanwhile (containerd kept it); the rerun adopts its pod
        # and records its end: the script ran once
        real_node.start_kubelet(info, real.name)
        real_node.wait_ready(info, real.name)
        resumed = _apply(playbooks, real, cr, namespace)
        assert resumed.rc == 0, _failures(resumed)
        assert real.stages(cr, 'stuck') == ['apply', 'apply-check'], real.proof(cr, 'stuck')
        assert real.state(cr)['stuck|1.0.0']['state'] == 'complete'
    finally:
        real_node.start_kubelet(info, real.name)
        real.delete_cr(cr)


def _stage_events(real, cr):
    """The stages the node's Events say completed for ``cr``, in order ('stage [apply] complete', ...)."""
    events = real.cluster.core.list_namespaced_event('default', field_selector=f'involvedObject.name={real.name}').items
    done = sorted((int(e.metadata.resource_version), e.message) for e in events
                  if cr in (e.message or '') and 'stage [' in (e.message or '') and '] complete' in (e.message or ''))
    return [message.split('stage [', 1)[1].split(']', 1)[0] for dummy, message in done]


def test_a_role_built_unchanged_as_a_package_rolls_out_configures_and_uninstalls_on_a_real_node(
        real, playbooks, namespace, tmp_path):
    # the migration guide's gpu_tuning role (examples/roles/gpu_tuning), built by nodewright.bridge.package and pushed
    # to the registry the node pulls from; the package brings its own Python and ansible-core
    role = Path(__file__).resolve().parents[2] / 'examples' / 'roles' / 'gpu_tuning'
    repository = 'localhost/nodewright-packages/gpu-tuning'
    packages = real_support.build_role_package(role, '1.0.0', repository, tmp_path)
    spec = packages['gpu-tuning']
    assert spec['interrupt'] == {'type': 'service', 'services': ['containerd']}, spec
    cr = real.create_cr({'gpu-tuning': dict(spec, uninstall={'enabled': True})})
    info = real.cluster.info
    sysctl = real_node.etc_dir(info, real.name, 'sysctl.d') / '90-gpu.conf'
    dropin = real_node.etc_dir(info, real.name, 'containerd') / 'conf.d' / '90-nvidia.toml'
    calls_before = len(real_node.calls(info, real.name))  # the node's shim log holds the earlier tests' calls too
    try:
        first = _apply(playbooks, real, cr, namespace)
        assert first.rc == 0, _failures(first)
        # the role's files on the node's root, its sysctl handler run in the stage, its containerd restart the
        # package's interrupt (systemctl through the node's shim: the node's containerd restarted)
        assert sysctl.read_text() == 'vm.swappiness = 1\nnet.core.rmem_max = 134217728\n'
        assert 'default_runtime_name = "nvidia"' in dropin.read_text()
        calls = real_node.calls(info, real.name)[calls_before:]
        assert [c.split()[1:] for c in calls if ' sysctl ' in c] == [['sysctl', '--system']], calls
        assert [c.split()[3:] for c in calls if ' systemctl restart ' in c] == [['containerd']], calls
        stages = _stage_events(real, cr)
        print(f'\nrole package on {real.name}: {stages}')
        # one event per stage pod (a stage and its check are one pod), each once
        assert stages == ['apply', 'config', 'post-interrupt'], stages
        state = real.state(cr)['gpu-tuning|1.0.0']
        assert (state['stage'], state['state']) == ('post-interrupt', 'complete'), state

        # a second rollout runs nothing: the node is complete
        again = _apply(playbooks, real, cr, namespace)
        assert again.rc == 0 and _stage_events(real, cr) == stages, 'a complete node ran again'

        # a configMap edit: config runs again with the new variable, then the key's configInterrupt
        calls_before = len(real_node.calls(info, real.name))
        edit = dict(spec['configMap'], gpu_tuning_default_runtime='nvidia-cdi')
        real.patch_cr(cr, {'packages': {'gpu-tuning': {'configMap': edit}}})
        edited = _apply(playbooks, real, cr, namespace)
        assert edited.rc == 0, _failures(edited)
        assert 'default_runtime_name = "nvidia-cdi"' in dropin.read_text()
        new = _stage_events(real, cr)[len(stages):]
        assert new == ['config', 'post-interrupt'], new
        restarts = [c for c in real_node.calls(info, real.name)[calls_before:] if ' systemctl restart ' in c]
        assert [c.split()[3:] for c in restarts] == [['containerd']], restarts

        # an upgrade: the role built again as 1.1.0 (a new default), the CR's version bumped; the role has no
        # tasks/upgrade.yml, so the upgrade stage runs nothing of it and config runs its tasks at the new version
        upgraded_role = tmp_path / 'gpu_tuning'
        shutil.copytree(role, upgraded_role)
        defaults = upgraded_role / 'defaults' / 'main.yml'
        defaults.write_text(defaults.read_text().replace('gpu_tuning_rmem_max: 134217728', 'gpu_tuning_rmem_max: 268435456'))
        newer = real_support.build_role_package(upgraded_role, '1.1.0', repository, tmp_path / 'v110')['gpu-tuning']
        seen = len(_stage_events(real, cr))
        real.patch_cr(cr, {'packages': {'gpu-tuning': {'version': newer['version'], 'configMap': {
            'gpu_tuning_rmem_max': None}}}})
        upgraded = _apply(playbooks, real, cr, namespace)
        assert upgraded.rc == 0, _failures(upgraded)
        print(f'role package upgrade: {_stage_events(real, cr)[seen:]}')
        assert 'net.core.rmem_max = 268435456' in sysctl.read_text()
        assert list(real.state(cr)) == ['gpu-tuning|1.1.0'] and real.state(cr)['gpu-tuning|1.1.0']['state'] == 'complete'

        # the uninstall: the role's uninstall tasks revert its files
        real.patch_cr(cr, {'packages': {'gpu-tuning': {'uninstall': {'enabled': True, 'apply': True}}}})
        removed = _apply(playbooks, real, cr, namespace)
        assert removed.rc == 0, _failures(removed)
        assert not sysctl.exists() and not dropin.exists()
        assert 'gpu-tuning|1.1.0' not in real.state(cr)
    finally:
        real.delete_cr(cr)


def test_nvidias_shellscript_and_tuning_packages_run_on_a_real_node_as_users_run_them(real, playbooks, namespace):
    # NVIDIA's own packages, built from their source (tests/cluster/images.py): shellscript running the guide's role as
    # bash (the role package's twin: the same files on the node as tests above check), and tuning with a sysctl file
    nvidia = real.images['nvidia']
    cr = real.create_cr({
        'gpu-tuning-sh': {'image': nvidia['shellscript']['image'], 'version': nvidia['shellscript']['version'],
                          'interrupt': {'type': 'service', 'services': ['containerd']},
                          'configMap': dict(real_support.images.SHELLSCRIPT_TWIN_CONFIGMAP)},
        'tuning': {'image': nvidia['tuning']['image'], 'version': nvidia['tuning']['version'],
                   'configMap': {'sysctl.conf': 'fs.inotify.max_user_watches=524288\n'}},
    })
    info = real.cluster.info
    etc_sysctl = real_node.etc_dir(info, real.name, 'sysctl.d')
    dropin = real_node.etc_dir(info, real.name, 'containerd') / 'conf.d' / '90-nvidia.toml'
    calls_before = len(real_node.calls(info, real.name))
    try:
        result = _apply(playbooks, real, cr, namespace)
        assert result.rc == 0, _failures(result)
        # the twin left what the role package leaves (test_a_role_built_unchanged_as_a_package_...)
        assert (etc_sysctl / '90-gpu.conf').read_text() == 'vm.swappiness = 1\nnet.core.rmem_max = 134217728\n'
        assert dropin.read_text() == '[plugins."io.containerd.grpc.v1.cri".containerd]\ndefault_runtime_name = "nvidia"\n'
        # tuning's drop-in, named after the package (its update_settings.sh), and its sysctl -p of the configMap file
        (tuned,) = list(etc_sysctl.glob('999-*-tuning.conf'))
        assert tuned.read_text() == 'fs.inotify.max_user_watches=524288\n'
        calls = [' '.join(c.split()[1:]) for c in real_node.calls(info, real.name)[calls_before:]]
        assert 'sysctl --system' in calls and any(c.startswith('sysctl -p ') for c in calls), calls
        assert [c for c in calls if c.startswith('systemctl restart')] == ['systemctl restart containerd'], calls
        stages = _stage_events(real, cr)
        print(f'\nNVIDIA packages on {real.name}: {stages}')
        state = real.state(cr)
        assert {k: (v['stage'], v['state']) for k, v in state.items()} == {
            f'gpu-tuning-sh|{nvidia["shellscript"]["version"]}': ('post-interrupt', 'complete'),
            f'tuning|{nvidia["tuning"]["version"]}': ('config', 'complete')}, state
    finally:
        real.delete_cr(cr)
        for path in (etc_sysctl / '90-gpu.conf', dropin, *etc_sysctl.glob('999-*-tuning.conf')):
            if path.exists():
                path.unlink()


def test_a_failing_role_task_fails_its_node_with_the_tasks_name_and_message_then_a_fix_resumes_it(
        real, playbooks, namespace, tmp_path):
    # the guide's role package on a host where one of its tasks cannot succeed (a file where the role makes its
    # containerd drop-in directory): the node fails with the task's name and Ansible's message; the host fixed,
    # a rerun resumes the node and completes it
    role = Path(__file__).resolve().parents[2] / 'examples' / 'roles' / 'gpu_tuning'
    spec = real_support.build_role_package(role, '1.0.0', 'localhost/nodewright-packages/gpu-tuning', tmp_path)['gpu-tuning']
    info = real.cluster.info
    blocker = real_node.etc_dir(info, real.name, 'containerd') / 'conf.d'
    shutil.rmtree(blocker, ignore_errors=True)  # an earlier rollout's directory
    blocker.write_text('not a directory\n')
    cr = real.create_cr({'gpu-tuning': spec})
    try:
        failed = _apply(playbooks, real, cr, namespace, nodewright_stage_retries=0)
        assert failed.rc != 0, failed
        out = failed.stdout + failed.stderr
        assert 'Directory for containerd drop-ins' in out and '/etc/containerd/conf.d' in out, _failures(failed)
        assert real.state(cr)['gpu-tuning|1.0.0']['state'] == 'erroring'
        assert real.node().metadata.labels.get(f'{PREFIX}/status_{cr}') == 'erroring'

        blocker.unlink()
        fixed = _apply(playbooks, real, cr, namespace)
        assert fixed.rc == 0, _failures(fixed)
        entry = real.state(cr)['gpu-tuning|1.0.0']
        assert (entry['stage'], entry['state']) == ('post-interrupt', 'complete'), entry
        assert (blocker / '90-nvidia.toml').is_file() and not real.node().spec.unschedulable
    finally:
        real.delete_cr(cr)
        if blocker.is_file():
            blocker.unlink()
        shutil.rmtree(blocker, ignore_errors=True)
        for path in real_node.etc_dir(info, real.name, 'sysctl.d').glob('90-gpu.conf'):
            path.unlink()
