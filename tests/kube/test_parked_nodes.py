# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""Training never pays: a node held by a protected pod gives its batch slot back (docs/semantics.md 34).

On the shared test cluster, `nodewright.bridge.apply` of a CR in the cluster (a reboot package, fixed batches of 2,
`podNonInterruptLabels: {workload: training}`) over 5 fresh nodes, the first of which runs a training pod: the
other 4 complete while it runs (its node parked, cordoned, its pod never evicted, the wait on the node and in the
CR's status), then the pod ends and the node completes in a batch of its own. And the preflight the operator keeps:
a CR whose packages need no interrupt leaves a node with a protected pod uncordoned and undrained.
"""

from __future__ import annotations

import json
import threading
import time
import uuid

import helpers
import launcher
import pytest
from kubernetes import client as kclient

from nodewright_fixtures import GROUP, PLURAL, VERSION, package

pytestmark = pytest.mark.cluster

WAIT_KEY = 'bridge.nodewright.io/protected-wait_'
STATUS_KEY = 'skyhook.nvidia.com/status_'
TRAINING = {'workload': 'training'}
OPT_IN = 'bridge.nodewright.io/non-interruptible'


@pytest.fixture
def pool(cluster):
    """Five fresh nodes with a label of their own, in name order."""
    value = uuid.uuid4().hex[:8]
    names = ['pk-%s-%d' % (value, i) for i in range(5)]
    launcher.create_nodes(cluster.api, names, labels={'nodewright.bridge/parked': value}, start_index=960)
    launcher.wait_nodes_ready(cluster.api, names, timeout=60)
    yield names, {'nodewright.bridge/parked': value}
    for name in names:
        try:
            cluster.core.delete_node(name)
        except kclient.ApiException:
            pass


def _training_pod(cluster, namespace, node, name='train-0', opted_in=False):
    """A running training pod on ``node``: selected by the CR's podNonInterruptLabels, or (``opted_in``) protected by
    the workload's own annotation only, which the look before a batch cannot select on the server."""
    metadata = {'name': name, 'labels': {'workload': 'notebook'} if opted_in else dict(TRAINING)}
    if opted_in:
        metadata['annotations'] = {OPT_IN: 'true'}
    cluster.core.create_namespaced_pod(namespace, {
        'metadata': metadata,
        'spec': {'nodeName': node, 'restartPolicy': 'Never', 'containers': [{'name': 't', 'image': 'registry.local/train:1'}]}})
    cluster.wait_pod(namespace, name, lambda p: p.status.phase == 'Running')


def _status(cluster, name):
    return kclient.CustomObjectsApi(cluster.api).get_cluster_custom_object(GROUP, VERSION, PLURAL, name).get('status') or {}


def _events(cluster, node):
    items = cluster.core.list_event_for_all_namespaces(field_selector='involvedObject.name=%s' % node).items
    return [(e.reason, e.type, e.message or '') for e in items]


def test_a_node_held_by_its_training_pod_gives_its_slot_back_and_completes_after_the_pod(
        cluster, playbooks, namespace, crs, pool):
    names, selector = pool
    trainee, others = names[0], names[1:]
    cr = crs.create({'gpu-driver': package(interrupt={'type': 'reboot'})}, selector=selector,
                    interruptionBudget={'count': 2}, podNonInterruptLabels={'matchLabels': dict(TRAINING)})
    name = cr['metadata']['name']
    # opted in by its annotation: the look before each batch (which prefers unblocked nodes) does not see it, so the
    # node is picked first and parks when its drain finds the pod
    _training_pod(cluster, namespace, trainee, opted_in=True)
    run = playbooks.start('nodewright.bridge.apply', extra_vars={
        'nodewright_cr_name': name, 'nodewright_namespace': namespace, 'nodewright_stage_timeout': 90,
        'nodewright_interrupt_timeout': 90, 'nodewright_protected_wait_warning': '3s'})
    output = []
    reader = threading.Thread(target=lambda: output.extend(run.stdout), daemon=True)
    reader.start()
    seen = {'record': None, 'blocked': None}
    started = time.time()

    def others_complete():
        node = cluster.core.read_node(trainee)
        # all along: the training node cordoned once the run reached it, its pod running, never evicted
        pod = cluster.core.read_namespaced_pod('train-0', namespace)
        assert pod.status.phase == 'Running' and pod.metadata.deletion_timestamp is None, 'the training pod was touched'
        record = (node.metadata.annotations or {}).get(WAIT_KEY + name)
        if record:
            seen['record'] = json.loads(record)
            assert node.spec.unschedulable, 'a parked node keeps its cordon'
        blocked = [c for c in _status(cluster, name).get('conditions') or [] if c['type'] == 'Blocked']
        if blocked:
            seen['blocked'] = blocked[0]
        return all(cluster.core.read_node(n).metadata.labels.get(STATUS_KEY + name) == 'complete' for n in others)
    helpers.wait_for(others_complete, 180, interval=0.5, what='the other four nodes to complete')
    others_done = time.time() - started
    # the four others completed while the training pod still ran: the parked node held nothing up
    assert seen['record'] and seen['record']['pods'] == [namespace + '/train-0'] and seen['record']['parked'] is True
    assert seen['blocked'] and seen['blocked']['reason'] == 'NonInterruptPodsRunning', seen
    assert seen['blocked']['message'] == '1 node blocked by non-interrupt pods (%s). Waiting.' % trainee
    assert run.poll() is None, 'the run ended before the training pod did'
    cluster.core.patch_namespaced_pod_status('train-0', namespace, {'status': {'phase': 'Succeeded'}})
    code = run.wait(timeout=180)
    reader.join(timeout=10)
    text = ''.join(output)
    assert code == 0, text[-4000:]
    for node_name in names:
        node = cluster.core.read_node(node_name)
        assert node.metadata.labels[STATUS_KEY + name] == 'complete', node_name
        assert not node.spec.unschedulable, '%s was left cordoned' % node_name
        assert WAIT_KEY + name not in (node.metadata.annotations or {})
    assert not [c for c in _status(cluster, name).get('conditions') or [] if c['type'] == 'Blocked']
    assert 'NODEWRIGHT PARKED [%s/__default__] %s waits for protected pods (%s/train-0); its batch slot goes to %s' % (
        name, trainee, namespace, names[2]) in text, text[-4000:]
    assert 'NODEWRIGHT REJOIN [%s/__default__] %s' % (name, trainee) in text
    # batches of at most 2 at any time: n0 and n1 (n0 parks, n2 takes its slot), n3 and n4, then n0 again
    batches = [line.split(': ', 1)[1].strip(' *') for line in text.splitlines()
               if line.startswith('NODEWRIGHT BATCH') and 'host' in line and 'done' not in line]
    assert batches == ['%s, %s' % (trainee, names[1]), '%s, %s' % (names[3], names[4]), trainee], batches
    assert 'done: 2 ok, 0 failed, 1 parked (%s), ok' % trainee in text
    events = _events(cluster, trainee)
    reasons = [(r, t) for r, t, m in events if 'non-interrupt' in m.lower()]
    assert ('Drain', 'Warning') in reasons and ('Drain', 'Normal') in reasons, events
    # both transitions on the CR too
    cr_events = [(e.reason, e.type) for e in cluster.core.list_event_for_all_namespaces(
        field_selector='involvedObject.name=%s' % name).items if 'non-interrupt' in (e.message or '').lower()]
    assert ('Drain', 'Warning') in cr_events and ('Drain', 'Normal') in cr_events, cr_events
    long_wait = [m for r, t, m in events if 'has waited' in m]
    assert long_wait and 'still waiting (nothing is interrupted)' in long_wait[0]
    assert others_done < 120


def _batch_lines(text):
    return [line.split(': ', 1)[1].strip(' *') for line in text.splitlines()
            if line.startswith('NODEWRIGHT BATCH') and 'host' in line and 'done' not in line]


def test_selection_prefers_the_nodes_no_training_pod_holds(cluster, playbooks, namespace, crs, pool):
    names, selector = pool
    held, others = names[0], names[1:]
    cr = crs.create({'gpu-driver': package(interrupt={'type': 'reboot'})}, selector=selector,
                    interruptionBudget={'count': 1}, podNonInterruptLabels={'matchLabels': dict(TRAINING)})
    name = cr['metadata']['name']
    _training_pod(cluster, namespace, held)
    run = playbooks.start('nodewright.bridge.apply', extra_vars={
        'nodewright_cr_name': name, 'nodewright_namespace': namespace, 'nodewright_stage_timeout': 90,
        'nodewright_interrupt_timeout': 90})
    output = []
    reader = threading.Thread(target=lambda: output.extend(run.stdout), daemon=True)
    reader.start()

    def others_complete():
        # the held node is not even cordoned while the others roll: it was picked last, not parked early
        assert not cluster.core.read_node(held).spec.unschedulable, 'the held node was picked before the others'
        return all(cluster.core.read_node(n).metadata.labels.get(STATUS_KEY + name) == 'complete' for n in others)
    helpers.wait_for(others_complete, 150, interval=0.3, what='the four nodes no training pod holds to complete')
    cluster.core.patch_namespaced_pod_status('train-0', namespace, {'status': {'phase': 'Succeeded'}})
    code = run.wait(timeout=150)
    reader.join(timeout=10)
    text = ''.join(output)
    assert code == 0, text[-4000:]
    assert _batch_lines(text) == others + [held], text[-4000:]
    assert cluster.core.read_node(held).metadata.labels[STATUS_KEY + name] == 'complete'


def test_a_cr_that_needs_no_interrupt_leaves_a_node_with_a_protected_pod_uncordoned_and_undrained(
        cluster, playbooks, namespace, crs, pool):
    names, selector = pool
    cr = crs.create({'tuning': package()}, selector=selector, interruptionBudget={'count': 5},
                    podNonInterruptLabels={'matchLabels': dict(TRAINING)})
    name = cr['metadata']['name']
    _training_pod(cluster, namespace, names[0])
    cordoned = []
    stop = threading.Event()

    def watch_cordon():
        while not stop.is_set():
            if cluster.core.read_node(names[0]).spec.unschedulable:
                cordoned.append(time.time())
            time.sleep(0.2)
    watcher = threading.Thread(target=watch_cordon, daemon=True)
    watcher.start()
    try:
        result = playbooks.run('nodewright.bridge.apply', extra_vars={
            'nodewright_cr_name': name, 'nodewright_namespace': namespace, 'nodewright_stage_timeout': 90})
    finally:
        stop.set()
        watcher.join(timeout=5)
    assert result.rc == 0, result
    assert not cordoned, 'the node was cordoned although nothing it has left needs an interrupt'
    assert cluster.core.read_node(names[0]).metadata.labels[STATUS_KEY + name] == 'complete'
    pod = cluster.core.read_namespaced_pod('train-0', namespace)
    assert pod.status.phase == 'Running' and pod.metadata.deletion_timestamp is None
    assert 'NODEWRIGHT PARKED' not in result.stdout
    steps = [s['kind'] for r in result.report['rollouts'] for s in (r['nodes'].get(names[0]) or {}).get('steps', [])]
    assert steps and 'drain' not in steps and 'cordon' not in steps and 'wait' not in steps, steps
