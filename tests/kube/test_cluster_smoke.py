# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""Smoke tests proving the test cluster is a real Kubernetes control plane.

Real: API server validation and admission, PDB-guarded eviction (disruption
controller), Deployment/ReplicaSet controllers, scheduler, node lifecycle.
Fake: the kubelets (kwok), whose behaviour the stages define, and the agent's
reboot (fake_reboots.py).
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import threading
import uuid

import pytest
from kubernetes import client as kclient

import fake_reboots
import helpers
import launcher

pytestmark = pytest.mark.cluster

SKYHOOK = ('skyhook.nvidia.com', 'v1alpha1', 'skyhooks')


# pylint: disable-next=too-many-arguments,too-many-positional-arguments
def _pod(name, node=None, init=('init-a', 'init-b', 'init-c'), restart='OnFailure', privileged=False, image='busybox:1.36'):
    sec = {'privileged': True} if privileged else None
    spec = {
        'restartPolicy': restart,
        'initContainers': [{'name': n, 'image': image, 'securityContext': sec} for n in init],
        'containers': [{'name': 'pause', 'image': 'registry.k8s.io/pause:3.10', 'securityContext': sec}],
        'terminationGracePeriodSeconds': 0,
    }
    if node:
        spec['nodeName'] = node
    if privileged:
        spec['hostPID'] = True
        spec['hostNetwork'] = True
    return {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': {'name': name}, 'spec': spec}


def _internal_ip(node):
    return next(a.address for a in node.status.addresses if a.type == 'InternalIP')


def test_server_version_and_kubectl(cluster):
    """/version reports the built release, and the preinstalled kubectl works with the kubeconfig."""
    want = launcher.versions()['K8S_VERSION']
    assert kclient.VersionApi(cluster.api).get_code().git_version == want
    kubectl = shutil.which('kubectl')
    assert kubectl, 'kubectl is not on PATH'
    out = subprocess.run([kubectl, '--kubeconfig', cluster.kubeconfig, 'get', 'nodes', '-o', 'json'],
                         capture_output=True, text=True, timeout=60, check=True)
    nodes = {n['metadata']['name']: n for n in json.loads(out.stdout)['items']}
    assert set(cluster.node_names) <= set(nodes)
    first = nodes[cluster.node_names[0]]
    assert first['status']['capacity']['nvidia.com/gpu'] == '8'
    assert first['metadata']['labels']['nodepool'] == 'gpu'
    assert first['metadata']['labels']['nvidia.com/gpu.product'] == 'NVIDIA-H100-80GB-HBM3'
    boot_ids = {n['status']['nodeInfo']['bootID'] for n in nodes.values()}
    assert len(boot_ids) == len(nodes), 'every node must have its own bootID'
    if cluster.info:
        # kwok reports the port of the kubelet log endpoint (pods/log) on every node.
        assert first['status']['daemonEndpoints']['kubeletEndpoint']['Port'] == cluster.info.ports['kubelet']


def test_deployment_pdb_eviction(cluster, namespace):
    """An Eviction is refused (429) while the PDB forbids it and allowed once the PDB permits it."""
    apps = kclient.AppsV1Api(cluster.api)
    policy = kclient.PolicyV1Api(cluster.api)
    labels = {'app': 'web'}
    replicas = 3
    apps.create_namespaced_deployment(namespace, {
        'apiVersion': 'apps/v1', 'kind': 'Deployment', 'metadata': {'name': 'web'},
        'spec': {'replicas': replicas, 'selector': {'matchLabels': labels},
                 'template': {'metadata': {'labels': labels},
                              'spec': {'nodeSelector': {'nodepool': 'gpu'},
                                       'containers': [{'name': 'web', 'image': 'nginx:1.27'}]}}}})
    helpers.wait_for(lambda: (apps.read_namespaced_deployment('web', namespace).status.ready_replicas or 0) == replicas,
                     60, what='deployment ready')
    pods = cluster.core.list_namespaced_pod(namespace, label_selector='app=web').items
    assert len(pods) == replicas
    for pod in pods:
        # Scheduled by the real scheduler onto fake nodes, started by kwok.
        assert pod.spec.node_name in cluster.node_names
        assert pod.status.phase == 'Running'

    policy.create_namespaced_pod_disruption_budget(namespace, {
        'apiVersion': 'policy/v1', 'kind': 'PodDisruptionBudget', 'metadata': {'name': 'web'},
        'spec': {'minAvailable': replicas, 'selector': {'matchLabels': labels}}})

    def pdb_settled(allowed):
        def check():
            pdb = policy.read_namespaced_pod_disruption_budget('web', namespace)
            st = pdb.status
            return (st and st.observed_generation == pdb.metadata.generation and st.current_healthy == replicas
                    and st.disruptions_allowed == allowed)
        return check

    helpers.wait_for(pdb_settled(0), 30, what='PDB disruptionsAllowed=0')
    victim = pods[0].metadata.name
    assert cluster.evict(namespace, victim) == 429

    policy.patch_namespaced_pod_disruption_budget('web', namespace, {'spec': {'minAvailable': replicas - 1}})
    helpers.wait_for(pdb_settled(1), 30, what='PDB disruptionsAllowed=1')
    assert cluster.evict(namespace, victim) == 201

    def victim_replaced():
        current = cluster.core.list_namespaced_pod(namespace, label_selector='app=web').items
        names = {p.metadata.name for p in current if p.status.phase == 'Running' and not p.metadata.deletion_timestamp}
        return victim not in names and len(names) == replicas
    helpers.wait_for(victim_replaced, 30, what='evicted pod replaced by the ReplicaSet')


@pytest.mark.parametrize('restart', ['OnFailure', 'Never'])
def test_privileged_pod_init_containers_complete(cluster, namespace, restart):
    """A privileged hostPID/hostNetwork pod pinned by nodeName runs; all init containers end with exit 0."""
    node = cluster.node_names[1]
    cluster.core.create_namespaced_pod(namespace, _pod('agent', node=node, restart=restart, privileged=True))
    pod = cluster.wait_pod(namespace, 'agent',
                           lambda p: p.status.phase == 'Running' and helpers.init_containers_succeeded(p),
                           what='Running with all init containers terminated exit 0')
    assert pod.spec.node_name == node
    assert pod.spec.host_pid and pod.spec.host_network
    assert [s[1:] for s in helpers.init_container_states(pod)] == [('terminated', 0, 'Completed')] * 3
    conds = {c.type: c.status for c in pod.status.conditions}
    assert conds['Initialized'] == 'True' and conds['Ready'] == 'True'
    node_ip = _internal_ip(cluster.core.read_node(node))
    assert pod.status.host_ip == node_ip
    assert pod.status.pod_ip == node_ip, 'a hostNetwork pod has the node IP'


def test_pod_marked_to_fail_by_label(cluster, namespace):
    """A pod labelled to fail: its init container exits 1 and the pod (restartPolicy Never) fails."""
    manifest = helpers.mark_pod_to_fail(_pod('doomed', node=cluster.node_names[2], restart='Never'),
                                        container='init-b', exit_code=1)
    cluster.core.create_namespaced_pod(namespace, manifest)
    pod = cluster.wait_pod(namespace, 'doomed', lambda p: p.status.phase == 'Failed', what='phase Failed')
    states = helpers.init_container_states(pod)
    assert states[0][1:3] == ('terminated', 0)
    assert states[1][1:3] == ('terminated', 1)
    assert states[2][1:] == ('waiting', None, 'PodInitializing')
    assert helpers.init_container_failed(pod) == ('init-b', 1)


def test_pod_fails_by_image(cluster, namespace):
    """An init container whose image contains "fail" fails (CrashLoopBackOff, exit 1) without any label."""
    manifest = _pod('by-image', node=cluster.node_names[3], init=('ok-1', 'pkg', 'ok-2'))
    manifest['spec']['initContainers'][1]['image'] = helpers.FAIL_IMAGE
    cluster.core.create_namespaced_pod(namespace, manifest)
    pod = cluster.wait_pod(namespace, 'by-image', lambda p: helpers.init_container_failed(p) is not None,
                           what='a failed init container')
    assert pod.status.phase == 'Pending'
    assert helpers.init_container_failed(pod) == ('pkg', 1)
    pkg = pod.status.init_container_statuses[1]
    assert pkg.state.waiting.reason == 'CrashLoopBackOff'
    assert pkg.restart_count == 1

    # It stays failed: the ready stage must not "heal" it a moment later. A negative assertion over 2 s (kwok's
    # stages act within a second of a change), checked all along so that a healing fails at once
    def still_failed():
        again = cluster.core.read_namespaced_pod('by-image', namespace)
        return helpers.init_container_failed(again) == ('pkg', 1) and again.status.phase == 'Pending'
    helpers.holds_for(still_failed, 2, interval=0.2, what='the pod failed (init container pkg exit 1, Pending)')


def test_pod_logs(cluster, namespace):
    """pods/log through the API server: every init container and container has its made-up log."""
    cluster.core.create_namespaced_pod(namespace, _pod('logged', node=cluster.node_names[4], init=('init-a', 'init-b')))
    cluster.wait_pod(namespace, 'logged', lambda p: p.status.phase == 'Running' and helpers.init_containers_succeeded(p),
                     what='Running with all init containers terminated exit 0')
    for init in ('init-a', 'init-b'):
        text = cluster.core.read_namespaced_pod_log('logged', namespace, container=init)
        assert text == helpers.expected_log(namespace, 'logged', init, 'busybox:1.36', exit_code=0)
        assert text.splitlines() == [f'nodewright-bridge fake log: pod {namespace}/logged container {init} image busybox:1.36',
                                     'stage completed: exit 0']
    assert cluster.pod_log(namespace, 'logged', 'pause') == helpers.expected_log(
        namespace, 'logged', 'pause', 'registry.k8s.io/pause:3.10', exit_code=None)
    assert cluster.pod_log(namespace, 'logged', 'init-b', tail_lines=1) == 'stage completed: exit 0\n'
    # The kubelet's answer when there is no previous instance.
    with pytest.raises(kclient.ApiException) as err:
        cluster.pod_log(namespace, 'logged', 'init-a', previous=True)
    assert err.value.status == 400 and 'previous terminated container' in err.value.body
    out = subprocess.run([shutil.which('kubectl'), '--kubeconfig', cluster.kubeconfig, '-n', namespace, 'logs', 'logged', '-c', 'init-a'],
                         capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout == helpers.expected_log(namespace, 'logged', 'init-a', 'busybox:1.36', exit_code=0)


def test_pod_logs_failing_init_container(cluster, namespace):
    """The failing init container's log ends with "stage failed: exit N"; one that never ran has none (400)."""
    manifest = helpers.mark_pod_to_fail(_pod('doomed', node=cluster.node_names[5], restart='Never'), container='init-b', exit_code=2)
    helpers.set_fake_log(manifest, 'init-b', 'applying tuning\nsysctl: permission denied')
    cluster.core.create_namespaced_pod(namespace, manifest)
    cluster.wait_pod(namespace, 'doomed', lambda p: p.status.phase == 'Failed', what='phase Failed')
    text = cluster.pod_log(namespace, 'doomed', 'init-b')
    assert text == helpers.expected_log(namespace, 'doomed', 'init-b', 'busybox:1.36', exit_code=2,
                                        extra='applying tuning\nsysctl: permission denied')
    assert text.splitlines()[1:] == ['applying tuning', 'sysctl: permission denied', 'stage failed: exit 2']
    assert cluster.pod_log(namespace, 'doomed', 'init-a').endswith('stage completed: exit 0\n')
    with pytest.raises(kclient.ApiException) as err:
        cluster.pod_log(namespace, 'doomed', 'init-c')
    assert err.value.status == 400 and 'is waiting to start: PodInitializing' in err.value.body

    # Failed by its image, in CrashLoopBackOff: the log (current or previous) is the failed instance's.
    manifest = _pod('crashing', node=cluster.node_names[5], init=('pkg',))
    manifest['spec']['initContainers'][0]['image'] = helpers.FAIL_IMAGE
    cluster.core.create_namespaced_pod(namespace, manifest)
    cluster.wait_pod(namespace, 'crashing', lambda p: helpers.init_container_failed(p) is not None, what='a failed init container')
    want = helpers.expected_log(namespace, 'crashing', 'pkg', helpers.FAIL_IMAGE, exit_code=1)
    assert cluster.pod_log(namespace, 'crashing', 'pkg') == want
    assert cluster.pod_log(namespace, 'crashing', 'pkg', previous=True) == want
    assert helpers.LOG_FAILED.format(exit_code=1) == 'stage failed: exit 1'


def test_node_reboot(cluster):
    """reboot_node: Ready goes False, the bootID changes, Ready comes back."""
    node = cluster.node_names[-1]
    old = helpers.boot_id(cluster.api, node)
    new = cluster.reboot_node(node)  # waits for Ready=False, then Ready=True
    assert new != old
    assert helpers.boot_id(cluster.api, node) == new
    assert helpers.node_ready(cluster.api, node) == 'True'
    # The new bootID is not reverted by what kwok does next (its node stages act within a second of the last
    # change, the label removal): a negative assertion over 2 s, checked all along
    helpers.holds_for(lambda: helpers.boot_id(cluster.api, node) == new and helpers.node_ready(cluster.api, node) == 'True',
                      2, interval=0.2, what=f'{node} Ready with bootID {new}')


def _interrupt_pod(name, node, payload, label=helpers.INTERRUPT_LABEL):
    """An interrupt pod as the operator (and node_interrupt) makes it: one init container "interrupt" with the base64 JSON."""
    arg = base64.b64encode(json.dumps(payload, separators=(',', ':')).encode()).decode()
    return {'apiVersion': 'v1', 'kind': 'Pod',
            'metadata': {'name': name, 'labels': {label: 'True'}},
            'spec': {'nodeName': node, 'restartPolicy': 'OnFailure', 'terminationGracePeriodSeconds': 0,
                     'initContainers': [{'name': 'interrupt', 'image': 'ghcr.io/nvidia/skyhook/agent:latest',
                                         'args': ['interrupt', '/root', '/var/lib/skyhook/smoke/tuning-1.0.0-uid-1', arg]}],
                     'containers': [{'name': 'pause', 'image': 'registry.k8s.io/pause:3.10'}]}}


@pytest.fixture
def reboot_nodes(cluster):
    """Two fresh nodes of its own for a test that reboots nodes, deleted afterwards."""
    names = [f'gpu-node-reboot-{uuid.uuid4().hex[:5]}' for dummy in range(2)]
    launcher.create_nodes(cluster.api, names)
    launcher.wait_nodes_ready(cluster.api, names, timeout=60)
    yield names
    for name in names:
        try:
            cluster.core.delete_node(name)
        except kclient.ApiException:
            pass


def _needs_fake_reboots(cluster):
    if not cluster.fake_reboots:
        pytest.skip('the cluster does not reboot nodes by itself (started with --no-fake-reboots)')


def test_node_restart_interrupt_pod_reboots_its_node(cluster, namespace, reboot_nodes):
    """fake-reboots: a node_restart interrupt pod reboots its node once (new bootID, Ready again); two nodes in parallel,
    one pod labelled as v0.15 labels it (skyhook.nvidia.com/interrupt), the other as v0.18+ (nodewright.nvidia.com/interrupt)."""
    _needs_fake_reboots(cluster)
    before = {n: helpers.boot_id(cluster.api, n) for n in reboot_nodes}
    pods = [cluster.core.create_namespaced_pod(namespace, _interrupt_pod(f'reboot-{i}', n, {'type': 'node_restart'}, label))
            for i, (n, label) in enumerate(zip(reboot_nodes, fake_reboots.INTERRUPT_LABELS))]
    records = [cluster.wait_fake_reboot(n, p.metadata.uid) for n, p in zip(reboot_nodes, pods)]
    for i, (node, record) in enumerate(zip(reboot_nodes, records)):
        assert record['state'] == 'done' and record['pod'] == f'{namespace}/reboot-{i}'
        assert record['previousBootID'] == before[node]
        assert helpers.boot_id(cluster.api, node) == record['bootID'] != before[node]
        assert helpers.node_ready(cluster.api, node) == 'True'
        assert helpers.NODE_NOT_READY_LABEL not in cluster.core.read_node(node).metadata.labels
    # Not one after the other: each started before the other had finished.
    assert records[0]['started'] < records[1]['finished'] and records[1]['started'] < records[0]['finished']
    # Once per pod: a change of the pod (a MODIFIED event) reboots nothing.
    cluster.core.patch_namespaced_pod('reboot-0', namespace, {'metadata': {'labels': {'touched': 'yes'}}})
    # a negative assertion over the time a reboot would take to begin (fake-reboots' delay after it sees the pod,
    # + 2 s), checked all along: the record and the bootID stay the first reboot's
    helpers.holds_for(lambda: cluster.fake_reboot_record(reboot_nodes[0]) == records[0]
                      and helpers.boot_id(cluster.api, reboot_nodes[0]) == records[0]['bootID'],
                      cluster.info.fake_reboot_delay + 2 if cluster.info else 3, interval=0.2,
                      what=f'no second reboot of {reboot_nodes[0]}')
    assert cluster.fake_reboot_record(reboot_nodes[0]) == records[0]
    assert helpers.boot_id(cluster.api, reboot_nodes[0]) == records[0]['bootID']


def test_other_interrupt_payloads_do_not_reboot(cluster, namespace, reboot_nodes):
    """service_restart, restart_all_services, no_op, a failing agent and an opted-out node: no reboot."""
    _needs_fake_reboots(cluster)
    busy, opted_out = reboot_nodes
    cluster.opt_out_of_fake_reboots(opted_out)
    before = {n: helpers.boot_id(cluster.api, n) for n in reboot_nodes}
    payloads = {'service': {'type': 'service_restart', 'services': ['containerd', 'kubelet']},
                'all-services': {'type': 'restart_all_services'}, 'noop': {'type': 'no_op'}}
    for name, payload in payloads.items():
        cluster.core.create_namespaced_pod(namespace, _interrupt_pod(name, busy, payload))
    cluster.core.create_namespaced_pod(namespace, helpers.mark_pod_to_fail(_interrupt_pod('agent-fails', busy, {'type': 'node_restart'})))
    cluster.core.create_namespaced_pod(namespace, _interrupt_pod('opted-out', opted_out, {'type': 'node_restart'}))
    for name in payloads:
        cluster.wait_pod(namespace, name, helpers.init_containers_succeeded, what='the interrupt container completed')
    cluster.wait_pod(namespace, 'agent-fails', lambda p: helpers.init_container_failed(p) is not None, what='the agent failed')
    cluster.wait_pod(namespace, 'opted-out', helpers.init_containers_succeeded, what='the interrupt container completed')
    # A node_restart pod created after them reboots the node once: its record shows the bootID
    # from before, so none of the earlier pods rebooted it (their reboots would have come first).
    last = cluster.core.create_namespaced_pod(namespace, _interrupt_pod('reboot', busy, {'type': 'node_restart'}))
    record = cluster.wait_fake_reboot(busy, last.metadata.uid)
    assert record['state'] == 'done' and record['previousBootID'] == before[busy] != record['bootID']
    assert helpers.boot_id(cluster.api, opted_out) == before[opted_out]
    assert cluster.fake_reboot_record(opted_out) is None
    assert helpers.node_ready(cluster.api, opted_out) == 'True'


def test_fake_reboots_decisions():
    """Which interrupt pods reboot their node (pure, no cluster)."""
    def pod(payload, node='n1', **meta):
        manifest = _interrupt_pod('p', node, payload)
        manifest['metadata'].update(meta)
        return manifest
    reboot = {'type': 'node_restart'}
    assert fake_reboots.reboot_decision(pod(reboot)) == (True, 'payload type node_restart')
    assert fake_reboots.reboot_decision(pod(reboot, node=None))[0] is None  # unbound: decided later
    for other in ('service_restart', 'restart_all_services', 'no_op'):
        assert fake_reboots.reboot_decision(pod({'type': other}))[0] is False
    assert fake_reboots.reboot_decision(pod(reboot, deletionTimestamp='2026-01-01T00:00:00Z'))[0] is False
    assert fake_reboots.reboot_decision(helpers.mark_pod_to_fail(pod(reboot)))[0] is False
    failing_image = pod(reboot)
    failing_image['spec']['initContainers'][0]['image'] = helpers.FAIL_IMAGE
    assert fake_reboots.reboot_decision(failing_image)[0] is False
    garbled = pod(reboot)
    garbled['spec']['initContainers'][0]['args'][3] = 'not base64!'
    assert fake_reboots.reboot_decision(garbled) == (False, 'no readable payload in init container "interrupt"')
    node = {'metadata': {'annotations': {launcher.KWOK_NODE_ANNOTATION: launcher.KWOK_NODE_ANNOTATION_VALUE}}}
    assert fake_reboots.node_unavailable(node) is None
    assert 'taken away' in fake_reboots.node_unavailable({'metadata': {}})
    node['metadata']['annotations'][helpers.NO_FAKE_REBOOT_ANNOTATION] = 'true'
    assert 'opted out' in fake_reboots.node_unavailable(node)


def test_fake_reboots_know_both_generations_interrupt_pods():
    """A v0.18+ interrupt pod (a stage Job's, labelled nodewright.nvidia.com/interrupt) reboots its node too; the pods
    each label's list found are forgotten only by a new list of that label (pure, no cluster)."""
    def pod(uid, label, payload):
        manifest = _interrupt_pod(uid, 'n1', payload)
        manifest['metadata'].update(uid=uid, labels={label: 'True'})
        return manifest
    legacy, current = fake_reboots.INTERRUPT_LABELS
    assert current == 'nodewright.nvidia.com/interrupt'
    assert fake_reboots.reboot_decision(pod('a', current, {'type': 'node_restart'})) == (True, 'payload type node_restart')
    assert fake_reboots.reboot_decision(pod('b', 'example.com/interrupt', {'type': 'node_restart'})) == (False, 'not an interrupt pod')
    rebooter = fake_reboots.Rebooter(api=None)
    for uid, label in (('old-1', legacy), ('old-2', legacy), ('new-1', current)):
        rebooter.consider(pod(uid, label, {'type': 'no_op'}))  # decided (never rebooted), so remembered
    assert rebooter.seen == {'old-1': legacy, 'old-2': legacy, 'new-1': current}
    rebooter.forget_except(['old-2'], legacy)
    assert rebooter.seen == {'old-2': legacy, 'new-1': current}
    rebooter.forget_except([], current)
    assert rebooter.seen == {'old-2': legacy}


def test_fake_reboots_watch_lists_again_after_410_and_errors():
    """The list+watch loop: a 410 (as an ERROR event or an exception) and any API error lead to a new list (pure)."""
    stop = threading.Event()

    def pod(uid, rv):
        return {'metadata': {'uid': uid, 'resourceVersion': rv}}

    class FakeApi:
        label = fake_reboots.INTERRUPT_LABEL

        def __init__(self):
            self.lists, self.watches, self.leases = 0, [], 0

        def list_pods(self):
            self.lists += 1
            if self.lists == 2:
                raise OSError('connection refused')  # the API server is away for a moment
            return [pod(f'listed-{self.lists}', '1')], str(self.lists * 100)

        def watch_pods(self, resource_version, timeout_seconds):
            assert timeout_seconds > 0
            self.watches.append(resource_version)
            if len(self.watches) == 1:
                yield {'type': 'ADDED', 'object': pod('added', '101')}
                yield {'type': 'BOOKMARK', 'object': {'metadata': {'resourceVersion': '150'}}}
                yield {'type': 'ERROR', 'object': {'code': 410, 'message': 'too old resource version'}}
            elif len(self.watches) == 2:
                raise kclient.ApiException(status=410, reason='Gone')
            elif len(self.watches) == 3:
                yield {'type': 'MODIFIED', 'object': pod('modified', '401')}  # the server ends the watch: resume at 401
            else:
                yield {'type': 'DELETED', 'object': pod('added', '402')}
                stop.set()

        def renew_lease(self, identity):
            assert identity == 'me'
            self.leases += 1

    class Seen:
        def __init__(self):
            self.considered, self.forgotten, self.kept = [], [], []

        def consider(self, obj):
            self.considered.append(obj['metadata']['uid'])

        def forget(self, uid):
            self.forgotten.append(uid)

        def forget_except(self, uids, label):
            assert label == FakeApi.label
            self.kept.append(list(uids))

    api, seen = FakeApi(), Seen()
    fake_reboots.watch_forever(api, seen, 'me', stop=stop)
    assert api.lists == 4 and api.watches == ['100', '300', '400', '401']
    assert seen.considered == ['listed-1', 'added', 'listed-3', 'listed-4', 'modified']
    assert seen.forgotten == ['added'] and seen.kept == [['listed-1'], ['listed-3'], ['listed-4']]
    assert api.leases >= 1


def test_take_node_away(cluster):
    """take_node_away: Ready=Unknown, unreachable taints, and the lease is no longer renewed."""
    name = f'gpu-node-gone-{uuid.uuid4().hex[:5]}'
    cluster.create_nodes([name])
    try:
        cluster.take_node_away(name)
        frozen = helpers.lease_renew_time(cluster.api, name)
        # kwok renews leases every 10 s: wait until it has renewed a live node's lease twice (a whole renewal
        # interval of kwok's has passed), the dead node's lease frozen all along
        live = next(n for n in cluster.node_names if n != name)
        renewals = [helpers.lease_renew_time(cluster.api, live)]

        def renewed_twice():
            assert helpers.lease_renew_time(cluster.api, name) == frozen, 'the lease of a dead node must not be renewed'
            now = helpers.lease_renew_time(cluster.api, live)
            if now != renewals[-1]:
                renewals.append(now)
            return len(renewals) >= 3
        helpers.wait_for(renewed_twice, 60, interval=0.5, what=f'kwok to renew the lease of {live} twice')
        node = cluster.core.read_node(name)
        assert launcher.node_ready_status(node) == 'Unknown'
        assert 'node.kubernetes.io/unreachable' in {t.key for t in node.spec.taints or []}
        assert helpers.lease_renew_time(cluster.api, name) == frozen, 'the lease of a dead node must not be renewed'
    finally:
        cluster.core.delete_node(name)
        cluster.node_names.remove(name)


def test_skyhook_crd_validates_server_side(cluster):
    """The Skyhook CRD is installed and its schema rejects invalid CRs (422) while accepting a valid one."""
    custom = kclient.CustomObjectsApi(cluster.api)
    name = f'smoke-{uuid.uuid4().hex[:6]}'

    def skyhook(package):
        return {'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'Skyhook', 'metadata': {'name': name},
                'spec': {'nodeSelectors': {'matchLabels': {'nodepool': 'gpu'}}, 'packages': {'tuning': package}}}

    valid = {'version': '1.0.0', 'image': 'ghcr.io/example/tuning', 'interrupt': {'type': 'reboot'}}
    bad_name = dict(valid, name='Bad_Name')
    bad_interrupt = dict(valid, interrupt={'type': 'explode'})
    for body, field in ((bad_name, 'spec.packages.tuning.name'), (bad_interrupt, 'spec.packages.tuning.interrupt.type')):
        with pytest.raises(kclient.ApiException) as err:
            custom.create_cluster_custom_object(*SKYHOOK, skyhook(body))
        assert err.value.status == 422
        assert field in err.value.body
    created = custom.create_cluster_custom_object(*SKYHOOK, skyhook(valid))
    try:
        # Schema defaults are applied by the server.
        assert created['spec']['priority'] == 200
    finally:
        custom.delete_cluster_custom_object(*SKYHOOK, name)
