# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The Events a node's rollout leaves on it, found as `kubectl describe node` finds them.

node_update runs through the real ansible-playbook as the shipped apply identity (so the
nodewright-bridge-events role is what lets the Events in), in the task's worker and with every
step as its own module process. The Events are listed across all namespaces with the field
selector kubectl describe sends for a Node: involvedObject kind, name, namespace "" and uid.
"""

from __future__ import annotations

import uuid

import pytest

from test_node_update import _cr, _run

COMPONENT = 'nodewright.bridge'


def node_events(cluster, node):
    """The node's Events from nodewright.bridge, oldest first, selected as `kubectl describe node` selects them.

    (The node controller reports on the node too: RegisteredNode and the like.)
    """
    uid = cluster.core.read_node(node).metadata.uid
    selector = f'involvedObject.kind=Node,involvedObject.name={node},involvedObject.namespace=,involvedObject.uid={uid}'
    items = cluster.core.list_event_for_all_namespaces(field_selector=selector).items
    ours = [e for e in items if e.reporting_component == COMPONENT]
    assert all(e.source.component == COMPONENT and e.reporting_instance for e in ours), ours
    # the names are <node>.<time in hex>: in the order they were written
    return sorted(ours, key=lambda e: e.metadata.name)


def _workload(cluster, namespace, node):
    """A pod on the node, so that the drain evicts something."""
    name = f'work-{uuid.uuid4().hex[:5]}'
    cluster.core.create_namespaced_pod(namespace, {
        'metadata': {'name': name},
        'spec': {'nodeName': node, 'containers': [{'name': 'main', 'image': 'registry.local/app:1'}]}})
    cluster.wait_pod(namespace, name, lambda p: p.status.phase == 'Running')


def _event_warnings(result):
    return [w for w in result.get('warnings') or [] if 'Event on node' in str(w)]


@pytest.mark.parametrize('env', [{}, {'NODEWRIGHT_BRIDGE_IN_PROCESS': '0'}], ids=['worker', 'module-path'])
def test_every_step_of_an_update_leaves_an_event(cluster, playbooks, namespace, tmp_path, node, env):
    _workload(cluster, namespace, node)
    cr = f'ev-{uuid.uuid4().hex[:5]}'
    result = _run(playbooks, tmp_path, _cr(cr, node), node, namespace, env=env)
    assert result['status'] == 'updated', result
    assert not _event_warnings(result), result['warnings']
    events = node_events(cluster, node)
    assert all(e.metadata.namespace == 'default' and e.count == 1 and e.type == 'Normal' for e in events), events
    reasons = [e.reason for e in events]
    messages = [e.message for e in events]
    # the health gate passed (no change: no Event); each stage once, the reboot between the driver's stages
    # tuning (no interrupt) runs cordoned while the drain runs, as the operator runs it; driver starts once drained
    assert reasons[0] == 'Cordon' and reasons[-2:] == ['State', 'Uncordon'], messages
    assert messages[0] == f'Cordoned node [{node}] for [skyhook:{cr}]'
    drained = messages.index(f'Drained node [{node}] for [skyhook:{cr}]: 1 pod(s) evicted, 0 skipped')
    assert drained < messages.index(f'Package [driver:2.0.0] stage [apply] complete on [skyhook:{cr}]'), messages
    assert messages.index(f'Package [tuning:1.0.0] stage [apply] complete on [skyhook:{cr}]') < \
        messages.index(f'Package [tuning:1.0.0] stage [config] complete on [skyhook:{cr}]')
    applied = [m for e, m in zip(events, messages) if e.reason == 'Apply']
    assert sorted(applied) == sorted(f'Package [{p}] stage [{s}] complete on [skyhook:{cr}]' for p, s in (
        ('tuning:1.0.0', 'apply'), ('tuning:1.0.0', 'config'), ('driver:2.0.0', 'apply'), ('driver:2.0.0', 'config'),
        ('driver:2.0.0', 'post-interrupt'))), messages
    reboot = reasons.index('Reboot')
    assert messages[reboot].startswith(f'Rebooted node [{node}] for package [driver:2.0.0] from [skyhook:{cr}]: '
                                       'back Ready with a new boot ID')
    assert messages.index(f'Package [driver:2.0.0] stage [config] complete on [skyhook:{cr}]') < reboot < \
        messages.index(f'Package [driver:2.0.0] stage [post-interrupt] complete on [skyhook:{cr}]')
    assert messages[-2:] == [f'Skyhook [{cr}] complete.', f'Uncordoned node [{node}] for [skyhook:{cr}]']
    assert len(events) == 10, messages
    # a node with nothing left to do gets no Event
    again = _run(playbooks, tmp_path, _cr(cr, node), node, namespace, env=env)
    assert again['status'] == 'complete' and again['changed'] is False
    assert len(node_events(cluster, node)) == len(events)


def test_a_failed_stage_is_a_warning_and_the_node_stays_cordoned(cluster, playbooks, namespace, tmp_path, node):
    cr = f'evbad-{uuid.uuid4().hex[:5]}'
    result = _run(playbooks, tmp_path, _cr(cr, node, failing=True), node, namespace)
    assert result['failed'] is True and result['failed_step'] == 'driver apply', result
    events = node_events(cluster, node)
    warnings = [e for e in events if e.type == 'Warning']
    assert [(e.reason, e.message.split(': ')[0]) for e in warnings] == [
        ('Apply', f'Package [driver:2.0.0] stage [apply] erroring on [skyhook:{cr}]')], [e.message for e in events]
    assert 'init container' in warnings[0].message and 'log' not in warnings[0].message.split(': ', 1)[1]
    reasons = [e.reason for e in events]
    assert reasons[0] == 'Cordon' and 'Uncordon' not in reasons and 'State' not in reasons, reasons
    assert 'Drain' not in reasons  # nothing to evict on the node: the drain changed nothing, no Event


def test_check_mode_writes_no_event(cluster, playbooks, namespace, tmp_path, node):
    _workload(cluster, namespace, node)
    result = _run(playbooks, tmp_path, _cr(f'evchk-{uuid.uuid4().hex[:5]}', node), node, namespace, check=True)
    assert not result.get('failed'), result
    assert not node_events(cluster, node)
