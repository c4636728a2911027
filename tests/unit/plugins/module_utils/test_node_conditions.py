# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""node_conditions: boot IDs and Ready, as node_interrupt's reboot wait and node_health read them; the CR's
NotReady / Erroring node conditions as the operator's UpdateCondition writes them."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible_collections.nodewright.bridge.plugins.module_utils.contract import node_conditions as nc
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import node_annotations
from ansible_collections.nodewright.bridge.plugins.module_utils.model.api_generation import NODEWRIGHT, SKYHOOK


def _node(boot='b1', ready='True'):
    status = {'nodeInfo': {'bootID': boot}} if boot is not None else {}
    if ready is not None:
        status['conditions'] = [{'type': 'MemoryPressure', 'status': 'False'}, {'type': 'Ready', 'status': ready}]
    return {'metadata': {'name': 'n1'}, 'status': status}


def test_boot_id_is_empty_until_reported():
    assert nc.boot_id(_node('abc')) == 'abc'
    assert nc.boot_id(_node(None)) == ''
    assert nc.boot_id({}) == ''


def test_ready_needs_the_condition_true():
    assert nc.is_ready(_node(ready='True')) is True
    assert nc.is_ready(_node(ready='False')) is False
    assert nc.is_ready(_node(ready='Unknown')) is False
    assert nc.is_ready(_node(ready=None)) is False
    assert nc.condition(_node(), 'MemoryPressure') is False


def test_rebooted_needs_a_new_boot_id_and_ready():
    assert nc.rebooted(_node('b2'), 'b1') is True
    assert nc.rebooted(_node('b1'), 'b1') is False           # still the old boot
    assert nc.rebooted(_node('b2', ready='False'), 'b1') is False
    assert nc.rebooted(_node(''), 'b1') is False             # no boot ID reported yet
    assert nc.rebooted(_node(None), '') is False


def test_pod_ready_runs_is_ready_and_is_not_deleting():
    pod = {'metadata': {}, 'status': {'phase': 'Running', 'conditions': [{'type': 'Ready', 'status': 'True'}]}}
    assert nc.pod_ready(pod) is True
    assert nc.pod_ready(dict(pod, metadata={'deletionTimestamp': '2026-01-01T00:00:00Z'})) is False
    assert nc.pod_ready(dict(pod, status={'phase': 'Pending', 'conditions': pod['status']['conditions']})) is False
    assert nc.pod_ready(dict(pod, status={'phase': 'Running', 'conditions': []})) is False


# --------------------------------------------------------------------------- the operator's NotReady / Erroring


NOW, LATER = '2026-05-01T10:00:00Z', '2026-05-01T11:00:00Z'
NOT_READY, ERRORING = 'skyhook.nvidia.com/demo/NotReady', 'skyhook.nvidia.com/demo/Erroring'


def _recorded(status=None, states=(), conditions=None):
    """A node whose record for CR demo is ``status`` and one entry per package state in ``states``."""
    state = {}
    for index, value in enumerate(states):
        state = node_annotations.upsert(state, 'p%d' % index, '1.0', 'img', value, 'apply')[0]
    annotations = {node_annotations.node_state_key('demo'): node_annotations.encode(state)} if state else {}
    if status:
        annotations[node_annotations.status_key('demo')] = status
    return {'metadata': {'name': 'n1', 'annotations': annotations},
            'status': {'conditions': list(conditions if conditions is not None
                                          else [{'type': 'Ready', 'status': 'True'}])}}


def _short(patch):
    return [(c['type'], c['status'], c['reason']) for c in patch['status']['conditions']]


def test_the_operators_conditions_word_for_word():
    # skyhook/simple-skyhook/assert.yaml (complete) and failure-skyhook/node-assert.yaml (erroring)
    complete = nc.cr_conditions('demo', 'complete', {}, NOW)
    assert complete == [
        {'type': NOT_READY, 'status': 'False', 'reason': 'Complete', 'message': 'Skyhook demo Ready',
         'lastHeartbeatTime': NOW, 'lastTransitionTime': NOW},
        {'type': ERRORING, 'status': 'False', 'reason': 'Not Erroring', 'message': 'Package Erroring or Unknown for demo',
         'lastHeartbeatTime': NOW, 'lastTransitionTime': NOW}]
    erroring = _short(nc.conditions_patch(_recorded('erroring', ['complete', 'erroring']), 'demo', NOW))
    assert erroring == [(NOT_READY, 'True', 'Incomplete'), (ERRORING, 'True', 'Package(s) Erroring or Unknown')]


def test_an_unknown_package_state_is_erroring_and_in_progress_is_not():
    assert _short(nc.conditions_patch(_recorded('in_progress', ['unknown']), 'demo', NOW))[1][1:] == (
        'True', 'Package(s) Erroring or Unknown')
    assert _short(nc.conditions_patch(_recorded('in_progress', ['in_progress', 'skipped']), 'demo', NOW)) == [
        (NOT_READY, 'True', 'Incomplete'), (ERRORING, 'False', 'Not Erroring')]


def test_the_first_write_adds_both_and_other_conditions_are_not_in_the_patch():
    patch = nc.conditions_patch(_recorded('in_progress', ['in_progress']), 'demo', NOW)
    assert [c['type'] for c in patch['status']['conditions']] == [NOT_READY, ERRORING]
    assert list(patch) == ['status'] and list(patch['status']) == ['conditions']


def test_nothing_to_write_while_the_reasons_are_unchanged():
    node = _recorded('in_progress', ['in_progress'])
    node['status']['conditions'] += nc.cr_conditions('demo', 'in_progress', {}, NOW)
    assert nc.conditions_patch(node, 'demo', LATER) is None  # no heartbeat refresh, as UpdateCondition


def test_only_the_condition_whose_reason_changes_is_replaced_whole():
    node = _recorded('complete', ['complete'])
    node['status']['conditions'] += nc.cr_conditions('demo', 'in_progress', {}, NOW)
    patch = nc.conditions_patch(node, 'demo', LATER)
    assert patch == {'status': {'conditions': [
        {'type': NOT_READY, 'status': 'False', 'reason': 'Complete', 'message': 'Skyhook demo Ready',
         'lastHeartbeatTime': LATER, 'lastTransitionTime': LATER}]}}


def test_a_condition_of_that_type_with_another_message_is_left_alone():
    node = _recorded('complete', ['complete'])
    foreign = dict(nc.cr_conditions('demo', 'in_progress', {}, NOW)[0], message='set by hand')
    node['status']['conditions'] += [foreign, nc.cr_conditions('demo', 'complete', {}, NOW)[1]]
    assert nc.conditions_patch(node, 'demo', LATER) is None


def test_a_reset_node_flips_back_to_incomplete():
    # kubectl skyhook reset: no status, no state; the operator's next reconcile says Incomplete
    node = _recorded(None, [], conditions=nc.cr_conditions('demo', 'complete', {}, NOW))
    assert _short(nc.conditions_patch(node, 'demo', LATER)) == [(NOT_READY, 'True', 'Incomplete')]


def test_an_unreadable_state_writes_nothing():
    node = _recorded('in_progress')
    node['metadata']['annotations'][node_annotations.node_state_key('demo')] = '{broken'
    assert nc.conditions_patch(node, 'demo', NOW) is None


def test_the_writer_stamps_the_time_of_the_write():
    write = nc.writer('demo', clock=lambda: LATER)
    assert write(_recorded('in_progress'))['status']['conditions'][0]['lastTransitionTime'] == LATER
    assert len(nc.now_text()) == len('2026-05-01T10:00:00Z') and nc.now_text().endswith('Z')


# --------------------------------------------------------------------------- the v0.18+ generation (gen=NODEWRIGHT)


NW_NOT_READY, NW_ERRORING = 'nodewright.nvidia.com/demo/NotReady', 'nodewright.nvidia.com/demo/Erroring'


def _nw_recorded(status=None, states=(), conditions=()):
    """A node as the v0.18+ operator keys it for CR demo: nodewright.nvidia.com/nodeState_demo and status_demo."""
    state = {}
    for index, value in enumerate(states):
        state = node_annotations.upsert(state, 'p%d' % index, '1.0', 'img', value, 'apply')[0]
    annotations = {node_annotations.node_state_key('demo', NODEWRIGHT): node_annotations.encode(state)} if state else {}
    if status:
        annotations[node_annotations.status_key('demo', NODEWRIGHT)] = status
    return {'metadata': {'name': 'n1', 'annotations': annotations}, 'status': {'conditions': list(conditions)}}


def test_nodewright_conditions_are_the_v018_operators_word_for_word():
    """operator/internal/wrapper/node.go @042b7591 UpdateCondition: "<METADATA_PREFIX>/<cr>/NotReady" and
    "/Erroring" with METADATA_PREFIX = nodewright.nvidia.com, message "NodeWright <cr> Ready"."""
    assert nc.condition_type('demo', nc.NOT_READY, NODEWRIGHT) == NW_NOT_READY
    assert nc.condition_type('demo', nc.ERRORING, gen=NODEWRIGHT) == NW_ERRORING
    assert nc.ready_message('demo', NODEWRIGHT) == 'NodeWright demo Ready'
    assert nc.ready_message('demo') == nc.ready_message('demo', SKYHOOK) == 'Skyhook demo Ready'
    assert nc.cr_conditions('demo', 'complete', {}, NOW, gen=NODEWRIGHT) == [
        {'type': NW_NOT_READY, 'status': 'False', 'reason': 'Complete', 'message': 'NodeWright demo Ready',
         'lastHeartbeatTime': NOW, 'lastTransitionTime': NOW},
        {'type': NW_ERRORING, 'status': 'False', 'reason': 'Not Erroring', 'message': 'Package Erroring or Unknown for demo',
         'lastHeartbeatTime': NOW, 'lastTransitionTime': NOW}]


def test_nodewright_reads_its_own_node_record_and_writes_nothing_under_skyhook():
    """operator/internal/wrapper/node.go @042b7591: State() and Status() read nodewright.nvidia.com/nodeState_<cr> and
    status_<cr>; the legacy skyhook.nvidia.com keys are not the v0.18+ operator's record once it has migrated the node."""
    node = _nw_recorded('erroring', ['complete', 'erroring'])
    patch = nc.conditions_patch(node, 'demo', NOW, gen=NODEWRIGHT)
    assert _short(patch) == [(NW_NOT_READY, 'True', 'Incomplete'), (NW_ERRORING, 'True', 'Package(s) Erroring or Unknown')]
    assert 'skyhook.nvidia.com/' not in json.dumps(patch)
    # a node with only the legacy record: nothing of it counts under NODEWRIGHT
    legacy = _recorded('complete', ['erroring'], conditions=[])
    assert _short(nc.conditions_patch(legacy, 'demo', NOW, gen=NODEWRIGHT)) == [
        (NW_NOT_READY, 'True', 'Incomplete'), (NW_ERRORING, 'False', 'Not Erroring')]
    assert nc.writer('demo', clock=lambda: LATER, gen=NODEWRIGHT)(node) == nc.conditions_patch(node, 'demo', LATER, NODEWRIGHT)


def test_nodewright_rewrites_a_not_ready_whose_message_differs_and_keeps_the_erroring_rule():
    """operator/internal/wrapper/node.go @042b7591 UpdateCondition: NotReady is replaced when its reason or its message
    differs (a condition the 0.18 migration carried over with "Skyhook <cr> Ready" is rewritten), Erroring only when its
    reason differs while the message is the operator's; v0.15 (71ca22b8) keeps a NotReady with another message."""
    carried = dict(nc.cr_conditions('demo', 'complete', {}, NOW, NODEWRIGHT)[0], message='Skyhook demo Ready')
    foreign_erroring = dict(nc.cr_conditions('demo', 'in_progress', {}, NOW, NODEWRIGHT)[1], message='set by hand',
                            reason='Hand')
    node = _nw_recorded('complete', ['complete'], conditions=[carried, foreign_erroring])
    assert nc.conditions_patch(node, 'demo', LATER, gen=NODEWRIGHT) == {'status': {'conditions': [
        {'type': NW_NOT_READY, 'status': 'False', 'reason': 'Complete', 'message': 'NodeWright demo Ready',
         'lastHeartbeatTime': LATER, 'lastTransitionTime': LATER}]}}
    # the same node as SKYHOOK keys it: the v0.15 rule leaves a NotReady with another message alone
    old = _recorded('complete', ['complete'], conditions=[
        dict(nc.cr_conditions('demo', 'complete', {}, NOW)[0], message='NodeWright demo Ready'),
        nc.cr_conditions('demo', 'complete', {}, NOW)[1]])
    assert nc.conditions_patch(old, 'demo', LATER) is None


def test_not_ready_reason_is_what_the_node_or_its_lifecycle_controller_says():
    def node(*conditions):
        return {'metadata': {'name': 'gpu-1'}, 'status': {'conditions': list(conditions)}}
    assert nc.not_ready_reason(node({'type': 'Ready', 'status': 'True', 'reason': 'KubeletReady'})) is None
    assert nc.not_ready_reason(node({'type': 'MemoryPressure', 'status': 'False'}, {
        'type': 'Ready', 'status': 'Unknown', 'reason': 'NodeStatusUnknown',
        'message': 'Kubelet stopped posting node status.'})) == (
        'node gpu-1 is not Ready (Unknown, NodeStatusUnknown: Kubelet stopped posting node status.)')
    assert nc.not_ready_reason(node({'type': 'Ready', 'status': 'False'})) == 'node gpu-1 is not Ready (False)'
    assert nc.not_ready_reason(node()) == 'node gpu-1 is not Ready (no Ready condition)'
