# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""nodewright.bridge.node_drain against the real API server (real PDBs, controllers and scheduler).

Check mode, the preflight, a budget that holds a drain to its timeout, protected pods that do not finish in time
and bad input are the ansible-test integration target's (tests/integration/targets/node_drain).
"""

from __future__ import annotations

import json

from kubernetes import client as kclient

import helpers


def _apps(cluster):
    return kclient.AppsV1Api(cluster.api)


def _policy(cluster):
    return kclient.PolicyV1Api(cluster.api)


def _template(labels, node, **spec):
    # nodeName pins replacements to the same node too, as a node-local workload would be.
    body = {'nodeName': node, 'containers': [{'name': 'main', 'image': 'registry.local/app:1'}]}
    body.update(spec)
    return {'metadata': {'labels': labels}, 'spec': body}


def _deployment(cluster, namespace, name, node, replicas):
    labels = {'app': name}
    _apps(cluster).create_namespaced_deployment(namespace, {
        'metadata': {'name': name},
        'spec': {'replicas': replicas, 'selector': {'matchLabels': labels}, 'template': _template(labels, node)}})
    return _wait_running(cluster, namespace, f'app={name}', replicas)


def _wait_running(cluster, namespace, selector, count):
    def ready():
        pods = [p for p in cluster.core.list_namespaced_pod(namespace, label_selector=selector).items
                if p.status.phase == 'Running' and not p.metadata.deletion_timestamp]
        return pods if len(pods) == count else None
    return helpers.wait_for(ready, 60, what=f'{count} running pods for {selector}')


def _pdb(cluster, namespace, name, min_available, expected):
    policy = _policy(cluster)
    policy.create_namespaced_pod_disruption_budget(namespace, {
        'metadata': {'name': name}, 'spec': {'minAvailable': min_available, 'selector': {'matchLabels': {'app': name}}}})
    _pdb_settled(cluster, namespace, name, expected)


def _pdb_settled(cluster, namespace, name, allowed):
    policy = _policy(cluster)

    def check():
        pdb = policy.read_namespaced_pod_disruption_budget(name, namespace)
        st = pdb.status
        return st and st.observed_generation == pdb.metadata.generation and st.disruptions_allowed == allowed
    helpers.wait_for(check, 30, what=f'PDB {name} disruptionsAllowed={allowed}')


def _refused_evictions(cluster):
    """Evictions the API server has refused with 429 (a PodDisruptionBudget) so far, dry runs left out."""
    return helpers.apiserver_requests(cluster.api, subresource='eviction', code='429', dry_run='')


def _wait_refused(cluster, before, count, timeout=60):
    """Until the API server has refused ``count`` more evictions (429) than ``before``: the drain is held by the PDB."""
    helpers.wait_for(lambda: _refused_evictions(cluster) - before >= count, timeout,
                     what=f'{count} evictions refused (429) by the PodDisruptionBudget')


def _node_pod_lists(cluster):
    """Lists of pods across namespaces the API server has answered: a drain's wait for the protected pods of its
    node starts with one (list, then watch, of spec.nodeName=<node>); nothing else in the cluster lists them
    in steady state (the controllers' informers watch on from their first list)."""
    return helpers.apiserver_requests(cluster.api, verb='LIST', resource='pods', scope='cluster')


def _wait_protected_wait(cluster, handle, before, timeout=60):
    """Until the drain ``handle`` has listed the pods of its node (its wait for the protected pods has begun)."""
    def begun():
        assert handle[1].poll() is None, 'the drain ended before it waited for the protected pod'
        return _node_pod_lists(cluster) > before
    helpers.wait_for(begun, timeout, interval=0.3, what='the drain to list the pods of its node (its wait for the protected pods)')


def _uids(cluster, namespace, selector):
    return {p.metadata.uid for p in cluster.core.list_namespaced_pod(namespace, label_selector=selector).items}


def _by_name(result):
    return {e['name']: e for e in result['pods']}


def test_drain_evicts_workloads_and_skips_by_the_rules(cluster, modules, node, namespace):
    modules.run('node_cordon', name=node, owner='drain-test')
    web = _deployment(cluster, namespace, 'web', node, 2)
    # A DaemonSet pod (real controller), a pod tolerating the cordon, a kube-system pod, a finished pod.
    labels = {'app': 'agent'}
    _apps(cluster).create_namespaced_daemon_set(namespace, {
        'metadata': {'name': 'agent'},
        'spec': {'selector': {'matchLabels': labels},
                 'template': {'metadata': {'labels': labels},
                              'spec': {'nodeSelector': {'kubernetes.io/hostname': node},
                                       'containers': [{'name': 'a', 'image': 'registry.local/agent:1'}]}}}})
    _wait_running(cluster, namespace, 'app=agent', 1)
    for pod_ns, name, extra in (
            (namespace, 'tolerant', {'tolerations': [{'key': 'node.kubernetes.io/unschedulable', 'operator': 'Exists'}]}),
            ('kube-system', f'sys-{node}'[:60], {}),
            (namespace, 'done', {'restartPolicy': 'Never'})):
        body = _template({'app': name[:20]}, node, **extra)
        cluster.core.create_namespaced_pod(pod_ns, {'metadata': dict(body['metadata'], name=name), 'spec': body['spec']})
        cluster.wait_pod(pod_ns, name, lambda p: p.status.phase == 'Running')
    cluster.core.patch_namespaced_pod_status('done', namespace, {'status': {'phase': 'Succeeded'}})
    try:
        result = modules.run('node_drain', name=node, timeout=60)
        assert result['rc'] == 0, result
        pods = _by_name(result)
        for pod in web:
            assert pods[pod.metadata.name]['action'] == 'evicted'
            assert pods[pod.metadata.name]['uid'] == pod.metadata.uid
            assert pods[pod.metadata.name]['finished'] >= pods[pod.metadata.name]['started']
        reasons = {e['reason'] for e in result['pods'] if e['action'] == 'skipped'}
        assert {'daemonset', 'tolerates-unschedulable', 'kube-system', 'finished'} <= reasons
        assert result['evicted'] == 2 and result['changed'] is True
        # The evicted pods are gone; the ReplicaSet's replacements have new UIDs.
        assert not {p.metadata.uid for p in web} & _uids(cluster, namespace, 'app=web')
        assert cluster.core.read_namespaced_pod('tolerant', namespace).status.phase == 'Running'
    finally:
        cluster.core.delete_namespaced_pod(f'sys-{node}'[:60], 'kube-system', grace_period_seconds=0)


def test_pdb_blocks_then_allows(cluster, modules, node, namespace):
    web = _deployment(cluster, namespace, 'web', node, 2)
    _pdb(cluster, namespace, 'web', 2, 0)
    refused = _refused_evictions(cluster)
    handle = modules.start('node_drain', name=node, timeout=90)
    # the first eviction of each web pod is refused (429, the API server counts it), so the drain retries it with
    # backoff (5 s) and the PDB relaxed meanwhile lets the retry through
    _wait_refused(cluster, refused, 2)
    _policy(cluster).patch_namespaced_pod_disruption_budget('web', namespace, {'spec': {'minAvailable': 1}})
    result = modules.finish(handle)
    assert result['rc'] == 0, result
    entries = [e for e in result['pods'] if e['namespace'] == namespace]
    assert {e['action'] for e in entries} == {'evicted'}
    assert max(e['attempts'] for e in entries) >= 2
    assert any(f'{namespace}/web' in pdb for e in entries for pdb in e['pdbs'])
    assert not {p.metadata.uid for p in web} & _uids(cluster, namespace, 'app=web')


def test_statefulset_pod_returning_under_the_same_name_is_not_waited_for(cluster, modules, node, namespace):
    labels = {'app': 'db'}
    _apps(cluster).create_namespaced_stateful_set(namespace, {
        'metadata': {'name': 'db'},
        'spec': {'replicas': 1, 'serviceName': 'db', 'selector': {'matchLabels': labels},
                 'template': _template(labels, node)}})
    old = _wait_running(cluster, namespace, 'app=db', 1)[0]
    assert old.metadata.name == 'db-0'
    result = modules.run('node_drain', name=node, timeout=60)
    assert result['rc'] == 0, result
    assert _by_name(result)['db-0']['action'] == 'evicted'
    # The StatefulSet brings db-0 back on the same node, under the same name, with a new UID.
    new = _wait_running(cluster, namespace, 'app=db', 1)[0]
    assert new.metadata.name == 'db-0' and new.metadata.uid != old.metadata.uid
    assert new.spec.node_name == node


def test_wait_for_protected_pods_to_finish(cluster, modules, node, namespace):
    web = _deployment(cluster, namespace, 'web', node, 1)
    body = _template({'workload': 'training'}, node, restartPolicy='Never')
    cluster.core.create_namespaced_pod(namespace, {'metadata': dict(body['metadata'], name='train'), 'spec': body['spec']})
    cluster.wait_pod(namespace, 'train', lambda p: p.status.phase == 'Running')
    lists, refused = _node_pod_lists(cluster), helpers.apiserver_requests(cluster.api, subresource='eviction')
    handle = modules.start('node_drain', name=node, wait_for={'matchLabels': {'workload': 'training'}}, timeout=60)
    _wait_protected_wait(cluster, handle, lists)
    # Nothing is evicted while the training pod runs: no eviction asked, the web pod still there, for the 1.5 s the
    # training pod runs on (the protected_wait > 0.5 below), failing at once if an eviction comes
    helpers.holds_for(lambda: helpers.apiserver_requests(cluster.api, subresource='eviction') == refused
                      and _uids(cluster, namespace, 'app=web') == {web[0].metadata.uid}, 1.5, interval=0.3,
                      what='no eviction while the training pod runs')
    cluster.core.patch_namespaced_pod_status('train', namespace, {'status': {'phase': 'Succeeded'}})
    result = modules.finish(handle)
    assert result['rc'] == 0, result
    assert result['protected_wait'] > 0.5  # it waited (how long depends on the machine's load)
    entries = _by_name(result)
    assert entries['train']['action'] == 'skipped'
    assert entries[web[0].metadata.name]['action'] == 'evicted'


def test_rbac_without_eviction_fails_and_evicts_nothing(cluster, modules, node, namespace, identity):
    web = _deployment(cluster, namespace, 'web', node, 1)
    reader = identity([{'apiGroups': [''], 'resources': ['nodes', 'pods'], 'verbs': ['get', 'list', 'watch']},
                       {'apiGroups': ['policy'], 'resources': ['poddisruptionbudgets'], 'verbs': ['get', 'list']}])
    result = modules.run('node_drain', name=node, **reader)
    assert result['failed'] is True and 'forbidden' in result['msg'] and 'evict pod' in result['msg']
    assert _uids(cluster, namespace, 'app=web') == {web[0].metadata.uid}


def test_a_pause_written_during_the_wait_for_protected_pods_evicts_nothing(cluster, modules, node, namespace, crs):
    # kubectl skyhook pause while the drain waits for a training pod: the operator would start
    # nothing more, so the drain made for the CR evicts nothing once the wait ends
    cr = crs.create({'tuning': {'version': '1.0.0', 'image': 'registry.local/tuning', 'interrupt': {'type': 'reboot'}}},
                    prefix='hold')['metadata']['name']
    web = _deployment(cluster, namespace, 'web', node, 1)
    body = _template({'workload': 'training'}, node, restartPolicy='Never')
    cluster.core.create_namespaced_pod(namespace, {'metadata': dict(body['metadata'], name='train'), 'spec': body['spec']})
    cluster.wait_pod(namespace, 'train', lambda p: p.status.phase == 'Running')
    lists = _node_pod_lists(cluster)
    handle = modules.start('node_drain', name=node, wait_for={'matchLabels': {'workload': 'training'}}, timeout=60,
                           hold_for=cr)
    _wait_protected_wait(cluster, handle, lists)  # the pause comes during the wait for the protected pod
    crs.custom.patch_cluster_custom_object('skyhook.nvidia.com', 'v1alpha1', 'skyhooks', cr,
                                           {'metadata': {'annotations': {'skyhook.nvidia.com/pause': 'true'}}})
    cluster.core.patch_namespaced_pod_status('train', namespace, {'status': {'phase': 'Succeeded'}})
    result = modules.finish(handle)
    assert result['failed'] is True and result['held'] == 'paused', result
    assert f'{cr} is paused' in result['msg'] and 'nothing is evicted' in result['msg'] and result['changed'] is False
    assert _uids(cluster, namespace, 'app=web') == {web[0].metadata.uid}
    # the cordon for a paused CR is refused the same way; a CR that is not in the cluster holds nothing
    cordon = modules.run('node_cordon', name=node, owner=cr, hold=True)
    assert cordon['failed'] is True and cordon['held'] == 'paused' and 'no cordon is taken' in cordon['msg'], cordon
    assert not cluster.core.read_node(node).spec.unschedulable
    free = modules.run('node_cordon', name=node, owner='no-such-cr', hold=True)
    assert free['rc'] == 0 and free['held'] is True and cluster.core.read_node(node).spec.unschedulable


def _bare_pod(cluster, namespace, name, node):
    body = _template({'app': name}, node)
    cluster.core.create_namespaced_pod(namespace, {'metadata': dict(body['metadata'], name=name), 'spec': body['spec']})
    cluster.wait_pod(namespace, name, lambda p: p.status.phase == 'Running')


def test_drain_config_without_force_is_held_by_an_unmanaged_pod_and_records_it(cluster, modules, node, namespace):
    # spec.drainConfig.force false: a pod without a controller is never evicted and blocks the drain (DecidePod,
    # NVIDIA/nodewright operator/internal/drain/drain.go @1211486a); the node says so in drainBlocked_<cr>
    web = _deployment(cluster, namespace, 'web', node, 1)
    _bare_pod(cluster, namespace, 'solo', node)
    args = dict(name=node, drain_config={'force': False}, cr_name='dc', nodewright_api='nodewright', timeout=8)
    result = modules.run('node_drain', **args)
    assert result['failed'] is True and f'{namespace}/solo (UnmanagedPod)' in result['msg'], result
    assert result['drain_blocked'] == [{'namespace': namespace, 'name': 'solo', 'reason': 'UnmanagedPod'}]
    entries = _by_name(result)
    assert (entries['solo']['action'], entries['solo']['reason'], entries['solo']['block']) == (
        'blocked', 'unmanaged', 'UnmanagedPod')
    assert entries[web[0].metadata.name]['action'] == 'evicted'  # the others go meanwhile
    assert cluster.core.read_namespaced_pod('solo', namespace).metadata.deletion_timestamp is None
    annotations = cluster.core.read_node(node).metadata.annotations
    assert json.loads(annotations['nodewright.nvidia.com/drainBlocked_dc']) == result['drain_blocked']
    assert annotations['nodewright.nvidia.com/drainStart_dc'].endswith('Z')
    # drainConfig.timeout counts from that drain start: past it, nothing more is evicted (DrainNode's DrainTimeout)
    replacement = _wait_running(cluster, namespace, 'app=web', 1)
    timed = modules.run('node_drain', **dict(args, drain_config={'force': False, 'timeout': '5s'}))
    assert timed['failed'] is True and timed['drain_timed_out'] is True and 'nothing more is evicted' in timed['msg']
    assert _uids(cluster, namespace, 'app=web') == {p.metadata.uid for p in replacement}
    # the blocker goes: the drain goes through and both annotations go
    cluster.core.delete_namespaced_pod('solo', namespace, grace_period_seconds=0)
    helpers.wait_for(lambda: not [p for p in cluster.core.list_namespaced_pod(namespace).items if p.metadata.name == 'solo'],
                     30, what='the unmanaged pod to go')
    again = modules.run('node_drain', **args)
    assert again['rc'] == 0 and again['drain_blocked'] == [], again
    annotations = cluster.core.read_node(node).metadata.annotations or {}
    assert not [k for k in annotations if k.startswith(('nodewright.nvidia.com/drainStart_', 'nodewright.nvidia.com/drainBlocked_'))]


def test_drain_config_disable_eviction_deletes_instead_of_evicting(cluster, modules, node, namespace):
    web = _deployment(cluster, namespace, 'web', node, 1)
    _pdb(cluster, namespace, 'web', 1, 0)  # an eviction would be refused
    # an explicit disable_eviction wins: evicted, so refused, and the refusal quotes the PDB (the DisruptionBudget cause)
    held = modules.run('node_drain', name=node, drain_config={'disableEviction': True}, disable_eviction=False, timeout=5)
    assert held['failed'] is True and [b['reason'] for b in held['drain_blocked']] == ['PodDisruptionBudget'], held
    assert 'disruption budget web' in held['drain_blocked'][0]['detail']
    assert _uids(cluster, namespace, 'app=web') == {web[0].metadata.uid}
    result = modules.run('node_drain', name=node, drain_config={'disableEviction': True, 'gracePeriod': '0s'}, timeout=30)
    assert result['rc'] == 0, result
    assert _by_name(result)[web[0].metadata.name]['action'] == 'deleted'
    assert web[0].metadata.uid not in _uids(cluster, namespace, 'app=web')
