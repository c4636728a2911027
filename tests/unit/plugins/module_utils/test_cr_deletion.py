# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""cr_deletion: the deletion of a CR the operator's finalizer holds (HandleFinalizer, CleanupSCRMetadata, Uncordon)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible_collections.nodewright.bridge.plugins.module_utils.contract import cr_deletion
from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_validation
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import node_annotations
from ansible_collections.nodewright.bridge.plugins.module_utils.planning import node_plan
from ansible_collections.nodewright.bridge.plugins.module_utils.planning import planner
from ansible_collections.nodewright.bridge.plugins.module_utils.model.api_generation import NODEWRIGHT

P = 'skyhook.nvidia.com'


def _doc(annotations=None, deleted=True, finalizers=(cr_deletion.FINALIZER,)):
    meta = {'name': 'gone', 'annotations': dict(annotations or {}), 'finalizers': list(finalizers), 'generation': 3,
            'resourceVersion': '7'}
    if deleted:
        meta['deletionTimestamp'] = '2026-12-02T10:00:00Z'
    return {'apiVersion': P + '/v1alpha1', 'kind': 'Skyhook', 'metadata': meta,
            'spec': {'nodeSelectors': {'matchLabels': {'pool': 'gpu'}},
                     'packages': {'keep': {'version': '1.0.0', 'image': 'x/keep'},
                                  'clean': {'version': '2.0.0', 'image': 'x/clean', 'uninstall': {'enabled': True}}}}}


def _node(name, packages=(), raw=None):
    state = {}
    for pkg, version in packages:
        state = node_annotations.upsert(state, pkg, version, 'x/' + pkg, 'complete', 'config')[0]
    text = raw if raw is not None else node_annotations.encode(state)
    return {'name': name, 'labels': {'pool': 'gpu'}, 'annotations': {node_annotations.node_state_key('gone'): text}}


def test_a_deleted_cr_uninstalls_its_uninstall_enabled_packages():
    cr = cr_validation.build_cr(_doc())
    assert cr.deleting and cr.packages['clean'].is_uninstalling and not cr.packages['keep'].is_uninstalling
    assert not cr_validation.build_cr(_doc(deleted=False)).packages['clean'].is_uninstalling
    assert cr_deletion.being_deleted(_doc()) and not cr_deletion.being_deleted(_doc(finalizers=()))
    assert not cr_deletion.being_deleted(_doc(deleted=False))


def test_a_deleted_cr_plans_only_its_uninstalls_and_installs_nothing():
    cr = cr_validation.build_cr(_doc())
    fresh = node_plan.plan_node(cr, {})
    assert fresh['pending'] == [] and fresh['complete']  # nothing installs on a node the CR never reached
    state = node_annotations.upsert({}, 'clean', '2.0.0', 'x/clean', 'complete', 'config')[0]
    stages = [(s['package'], s['stage']) for s in node_plan.plan_node(cr, state)['pending']]
    assert stages == [('clean', 'uninstall')]  # and 'keep', missing on the node, is not installed
    live = node_plan.plan_node(cr_validation.build_cr(_doc(deleted=False)), {})
    assert set(s['package'] for s in live['pending'] if s['stage'] == 'apply') == {'keep', 'clean'}


def test_a_deleted_cr_records_nothing_and_runs_only_the_nodes_with_an_uninstall():
    cr = cr_validation.build_cr(_doc())
    failing = node_annotations.upsert({}, 'keep', '1.0.0', 'x/keep', 'erroring', 'apply')[0]
    nodes = [_node('n1', [('clean', '2.0.0')]), _node('n2', [('keep', '1.0.0')]),
             {'name': 'n3', 'labels': {'pool': 'gpu'}, 'annotations': {node_annotations.node_state_key('gone'): node_annotations.encode(failing)}}]
    plan = planner.plan_rollout(cr, nodes)
    assert plan['cr']['deleting']
    decision = planner.cr_decision(plan)
    # n3's failed package is not retried nor recorded complete (upstream failure-skyhook's cleanup): the finalizer goes
    assert (decision['runs'], decision['complete'], decision['record'], decision['release']) == (['n1'], [], [], [])


def test_the_finalizer_waits_blocks_or_finalizes_as_the_operators_switch():
    cr = cr_validation.build_cr(_doc())
    nodes = [_node('n1', [('keep', '1.0.0'), ('clean', '2.0.0')]), _node('n2', [('keep', '1.0.0')])]
    pending, malformed = cr_deletion.pending_uninstall(cr, nodes)
    assert pending == [('n1', 'clean|2.0.0')] and malformed == []
    assert cr_deletion.decide(cr, pending, malformed)['action'] == 'wait'
    paused = cr_validation.build_cr(_doc({P + '/pause': 'true'}))
    blocked = cr_deletion.decide(paused, pending, malformed)
    assert (blocked['action'], blocked['reason']) == ('blocked', 'PausedWithPendingUninstall')
    assert blocked['event'] == 'Cannot delete Skyhook gone: paused with uninstall work pending. Unpause to proceed.'
    disabled = cr_validation.build_cr(_doc({P + '/disable': 'true'}))
    assert cr_deletion.decide(disabled, pending, malformed)['reason'] == 'DisabledWithPendingUninstall'
    # paused with nothing pending: the deletion goes on
    assert cr_deletion.decide(paused, [], [])['action'] == 'finalize'
    pending, malformed = cr_deletion.pending_uninstall(cr, [_node('n3', raw='{not json')])
    assert malformed == ['n3'] and cr_deletion.decide(cr, pending, malformed)['reason'] == 'MalformedNodeState'


def test_the_condition_is_set_once_and_cleared():
    blocked = cr_deletion.decide(cr_validation.build_cr(_doc({P + '/pause': 'true'})), [('n1', 'clean|2.0.0')], [])
    other = {'type': 'Ready', 'status': 'False'}
    first = cr_deletion.blocked_conditions([other], blocked, 3, 'T1')
    assert first == [other, {'type': 'DeletionBlocked', 'status': 'True', 'reason': 'PausedWithPendingUninstall',
                             'message': blocked['message'], 'observedGeneration': 3, 'lastTransitionTime': 'T1'}]
    assert cr_deletion.blocked_conditions(first, blocked, 3, 'T2') is None
    assert cr_deletion.blocked_conditions(first, {'action': 'finalize'}, 3, 'T2') == [other]
    assert cr_deletion.blocked_conditions([other], {'action': 'wait'}, 3, 'T2') is None


def test_the_cleanup_removes_what_the_cr_wrote_and_only_its_own_cordon():
    state = node_annotations.encode(node_annotations.upsert({}, 'keep', '1.0.0', 'x/keep', 'complete', 'config')[0])
    annotations = {P + '/nodeState_gone': state, P + '/version_gone': 'v0.15.0', P + '/status_gone': 'complete',
                   P + '/cordon_gone': 'true', P + '/status_other': 'complete', 'bridge.nodewright.io/cordon-inherited_x': 'true'}
    labels = {P + '/status_gone': 'complete', P + '/status_other': 'complete', 'pool': 'gpu'}
    patch = cr_deletion.cleanup_patch('gone', annotations, labels, unschedulable=True)
    assert patch == {'spec': {'unschedulable': False},
                     'metadata': {'annotations': {P + '/cordon_gone': None, P + '/status_gone': None},
                                  'labels': {P + '/status_gone': None}}}
    # another CR holds a cordon too: the node stays cordoned; an empty state goes with its version record
    annotations.update({P + '/cordon_other': 'true', P + '/nodeState_gone': '{}'})
    patch = cr_deletion.cleanup_patch('gone', annotations, labels, unschedulable=True)
    assert 'spec' not in patch and patch['metadata']['annotations'][P + '/nodeState_gone'] is None
    assert patch['metadata']['annotations'][P + '/version_gone'] is None
    assert cr_deletion.cleanup_patch('gone', {}, {'pool': 'gpu'}, unschedulable=False) is None


def test_the_node_conditions_and_the_finalizer_go():
    node = {'status': {'conditions': [{'type': 'Ready'}, {'type': P + '/gone/NotReady'}, {'type': P + '/gone/Erroring'},
                                      {'type': P + '/other/NotReady'}]}}
    assert cr_deletion.conditions_removal('gone', node) == {'status': {'conditions': [
        {'type': P + '/gone/NotReady', '$patch': 'delete'}, {'type': P + '/gone/Erroring', '$patch': 'delete'}]}}
    assert cr_deletion.conditions_removal('gone', {'status': {}}) is None
    doc = _doc(finalizers=('other/x', cr_deletion.FINALIZER))
    assert cr_deletion.finalizers_patch(doc) == {'metadata': {'finalizers': ['other/x'], 'resourceVersion': '7'}}


def test_the_finalizer_is_added_once_and_never_to_a_cr_being_deleted():
    doc = {'metadata': {'name': 'x', 'resourceVersion': '7', 'finalizers': ['other/keep']}}
    assert cr_deletion.add_finalizer_patch(doc) == {
        'metadata': {'finalizers': ['other/keep', cr_deletion.FINALIZER], 'resourceVersion': '7'}}
    assert cr_deletion.add_finalizer_patch({'metadata': {'finalizers': [cr_deletion.FINALIZER]}}) is None
    assert cr_deletion.add_finalizer_patch({'metadata': {'deletionTimestamp': '2026-12-03T00:00:00Z'}}) is None


# --------------------------------------------------------------------------- the v0.18+ generation (gen=NODEWRIGHT)

NW = 'nodewright.nvidia.com'


def _nw_doc(annotations=None, deleted=True, finalizers=(NODEWRIGHT.finalizer,)):
    doc = _doc(annotations, deleted, finalizers)
    doc.update(apiVersion=NODEWRIGHT.api_version, kind='NodeWright')
    return doc


def _nw_node(name, packages=(), raw=None):
    node = _node(name, packages, raw)
    node['annotations'] = {node_annotations.node_state_key('gone', NODEWRIGHT): node['annotations'][node_annotations.node_state_key('gone')]}
    return node


def test_nodewright_finalizer_is_its_own():
    """operator/internal/controller/skyhook_controller.go @01cc2f2d: SkyhookFinalizer = "nodewright.nvidia.com/nodewright";
    HandleFinalizer (@4fa7fe39) adds and removes only that one."""
    assert NODEWRIGHT.finalizer == NW + '/nodewright'
    assert cr_deletion.being_deleted(_nw_doc(), gen=NODEWRIGHT)
    assert not cr_deletion.being_deleted(_nw_doc(finalizers=(cr_deletion.FINALIZER,)), gen=NODEWRIGHT)
    assert not cr_deletion.being_deleted(_nw_doc())  # the default (skyhook) generation looks for its own
    added = cr_deletion.add_finalizer_patch({'metadata': {'resourceVersion': '7', 'finalizers': ['other/keep']}}, NODEWRIGHT)
    assert added == {'metadata': {'finalizers': ['other/keep', NW + '/nodewright'], 'resourceVersion': '7'}}
    assert cr_deletion.add_finalizer_patch({'metadata': {'finalizers': [NW + '/nodewright']}}, gen=NODEWRIGHT) is None
    removed = cr_deletion.finalizers_patch(_nw_doc(finalizers=('other/x', NW + '/nodewright')), gen=NODEWRIGHT)
    assert removed == {'metadata': {'finalizers': ['other/x'], 'resourceVersion': '7'}}
    assert 'skyhook.nvidia.com/' not in json.dumps([added, removed])


def test_nodewright_reads_its_node_states_and_words_the_block_as_nodewright():
    """operator/internal/controller/skyhook_controller.go @4fa7fe39 HandleFinalizer: the node states under
    nodewright.nvidia.com/nodeState_<cr>; the DeletionBlocked messages and Warning events say NodeWright."""
    cr = cr_validation.build_cr(_nw_doc())
    nodes = [_nw_node('n1', [('keep', '1.0.0'), ('clean', '2.0.0')]), _node('n2', [('clean', '2.0.0')])]
    pending, malformed = cr_deletion.pending_uninstall(cr, nodes, gen=NODEWRIGHT)
    assert pending == [('n1', 'clean|2.0.0')] and malformed == []  # n2's legacy key is not the v0.18+ record
    # cr_model reads the pause annotation (its own generation wiring); decide only words the outcome
    paused = cr_validation.build_cr(_doc({P + '/pause': 'true'}))
    blocked = cr_deletion.decide(paused, pending, malformed, gen=NODEWRIGHT)
    assert blocked == {'action': 'blocked', 'reason': 'PausedWithPendingUninstall',
                       'message': 'NodeWright is paused with uninstall-enabled packages still tracked in nodeState. '
                                  'Unpause to let uninstall complete before deletion.',
                       'event': 'Cannot delete NodeWright gone: paused with uninstall work pending. Unpause to proceed.'}
    disabled = cr_deletion.decide(cr_validation.build_cr(_doc({P + '/disable': 'true'})), pending, [], NODEWRIGHT)
    assert disabled['message'] == ('NodeWright is disabled with uninstall-enabled packages still tracked in nodeState. '
                                   'Re-enable the NodeWright to let uninstall complete before deletion.')
    malformed = cr_deletion.decide(cr, [], ['n3'], NODEWRIGHT)
    assert (malformed['message'], malformed['event']) == (
        'Cannot safely delete NodeWright: malformed nodeState on one or more nodes. Repair the nodeState annotation '
        'before deletion.', 'Cannot delete NodeWright gone: malformed nodeState. Repair and retry.')


def test_nodewright_cleanup_removes_its_keys_drain_ones_included_and_leaves_the_legacy_ones():
    """operator/internal/wrapper/node.go @042b7591 CleanupSCRMetadata and Uncordon: every nodewright.nvidia.com/*_<cr>
    annotation and label goes (drainStart_, drainBlocked_ included: api_generation.NODEWRIGHT.cr_node_keys), the CR's
    node conditions nodewright.nvidia.com/<cr>/* go; the legacy skyhook.nvidia.com copies are the rollback window's
    (PruneLegacyMetadata), not CleanupSCRMetadata's."""
    annotations = dict((key, 'x') for key in NODEWRIGHT.cr_node_keys('gone'))
    annotations.update({NW + '/nodeState_gone': '{}', NW + '/cordon_gone': 'true', NW + '/status_other': 'complete',
                        P + '/status_gone': 'complete', P + '/cordon_gone': 'true', 'bridge.nodewright.io/cordon-inherited_x': 'true'})
    labels = {NW + '/status_gone': 'complete', P + '/status_gone': 'complete', 'pool': 'gpu'}
    patch = cr_deletion.cleanup_patch('gone', annotations, labels, unschedulable=True, gen=NODEWRIGHT)
    assert patch == {'spec': {'unschedulable': False},
                     'metadata': {'annotations': dict((key, None) for key in (
                         NW + '/nodeState_gone', NW + '/status_gone', NW + '/version_gone', NW + '/cordon_gone',
                         NW + '/drainStart_gone', NW + '/drainBlocked_gone')),
                         'labels': {NW + '/status_gone': None}}}
    assert 'skyhook.nvidia.com/' not in json.dumps(patch)
    node = {'status': {'conditions': [{'type': NW + '/gone/NotReady'}, {'type': NW + '/gone/Erroring'},
                                      {'type': P + '/gone/NotReady'}, {'type': NW + '/other/NotReady'}]}}
    removal = cr_deletion.conditions_removal('gone', node, gen=NODEWRIGHT)
    assert removal == {'status': {'conditions': [
        {'type': NW + '/gone/NotReady', '$patch': 'delete'}, {'type': NW + '/gone/Erroring', '$patch': 'delete'}]}}
