# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""cr_status: the CR's status as the operator writes it, from the nodes' annotations.

The expected shapes are the operator's (NVIDIA/nodewright 71ca22b8, cluster_state_v2.go ReportState,
CollectNodeStatus; skyhook_conditions.go) and the asserts of its own e2e scenarios (failure-skyhook,
simple-skyhook, batch-state-reset), quoted where they apply.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json

from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_validation
from ansible_collections.nodewright.bridge.plugins.module_utils.planning import status_rollup
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import drain_config
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import node_annotations
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import pod_layout
from ansible_collections.nodewright.bridge.plugins.module_utils.model.api_generation import NODEWRIGHT, SKYHOOK

NOW = '2026-12-02T10:00:00Z'
DOC = {
    'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'Skyhook',
    'metadata': {'name': 'failure-skyhook', 'generation': 2},
    'spec': {'nodeSelectors': {'matchLabels': {'pool': 'gpu'}},
             'packages': {'dexter': {'version': '1.2.3', 'image': 'ghcr.io/x/dexter'},
                          'failure': {'version': '1.2.3', 'image': 'ghcr.io/x/failure'}}},
}


def cr(doc=None):
    return cr_validation.build_cr(DOC if doc is None else doc)


def node(name, status=None, states=(), labels=None, raw_state=None):
    annotations = {}
    state = {}
    for package, stage, value in states:
        state = node_annotations.upsert(state, package, '1.2.3', 'ghcr.io/x/' + package, value, stage)[0]
    if state:
        annotations[node_annotations.node_state_key('failure-skyhook')] = node_annotations.encode(state)
    if raw_state is not None:
        annotations[node_annotations.node_state_key('failure-skyhook')] = raw_state
    if status:
        annotations[node_annotations.status_key('failure-skyhook')] = status
    return {'name': name, 'labels': dict(labels or {'pool': 'gpu'}), 'annotations': annotations}


DONE = (('dexter', 'config', 'complete'), ('failure', 'config', 'complete'))


def wanted(nodes, doc=None, **kwargs):
    doc = DOC if doc is None else doc
    model = cr(doc)
    return status_rollup.wanted_status(model, doc, status_rollup.status_nodes(model, nodes), now=NOW, **kwargs)


def test_observed_generation_moves_only_when_the_status_becomes_complete_as_the_operators_set_status():
    """wrapper/skyhook.go SetStatus: ObservedGeneration = Generation on the change into complete, and only then."""
    complete = [node('n1', 'complete', DONE)]
    # already complete at generation 2, the spec edited (generation 3): the status stays complete, the stamp stays 2
    edited = dict(DOC, metadata=dict(DOC['metadata'], generation=3), status={'status': 'complete', 'observedGeneration': 2})
    assert wanted(complete, doc=edited)['observedGeneration'] == 2
    # not complete: whatever it was stays
    rolling = dict(edited, status={'status': 'in_progress', 'observedGeneration': 2})
    assert wanted([node('n1', 'in_progress', (('dexter', 'config', 'in_progress'),))], doc=rolling)['observedGeneration'] == 2
    # becoming complete at generation 3: stamped 3
    assert wanted(complete, doc=rolling)['observedGeneration'] == 3


def test_a_failing_package_reads_as_the_operators_failure_scenario():
    status = wanted([node('n1', 'erroring', (('dexter', 'config', 'complete'), ('failure', 'apply', 'erroring')))])
    # skyhook/failure-skyhook/node-assert.yaml
    assert status['status'] == 'erroring' and status['completeNodes'] == '0/1'
    assert status['packageList'] == 'dexter:1.2.3,failure:1.2.3' and status['nodesInProgress'] == 1
    ready = [c for c in status['conditions'] if c['type'] == 'Ready'][0]
    assert ready == {'type': 'Ready', 'status': 'False', 'reason': 'Erroring', 'message': '0/1 nodes complete, 1 erroring (n1)',
                     'observedGeneration': 2, 'lastTransitionTime': NOW}
    assert status['nodeState']['n1']['failure|1.2.3']['state'] == 'erroring'


def test_complete_nodes_converge_and_stamp_the_generation():
    status = wanted([node('n1', 'complete', DONE), node('n2', 'complete', DONE), node('other', labels={'pool': 'cpu'})])
    assert status['status'] == 'complete' and status['completeNodes'] == '2/2' and status['nodesInProgress'] == 0
    assert status['nodeStatus'] == {'n1': 'complete', 'n2': 'complete'} and status['observedGeneration'] == 2
    types = [(c['type'], c['status'], c['reason']) for c in status['conditions']]
    assert types[:2] == [('Ready', 'True', 'NodesConverged'), ('skyhook.nvidia.com/Ready', 'True', 'NodesConverged')]
    assert ('NodesIgnored', 'False', 'NodesIgnored') in types
    assert status['compartmentStatuses'] == {'__default__': {'matched': 2, 'ceiling': 2, 'inProgress': 0, 'completed': 2,
                                                             'progressPercent': 100, 'batchState': {'currentBatch': 1}}}


def test_the_aggregate_follows_collect_node_status():
    assert wanted([node('a', 'in_progress'), node('b', 'erroring')])['status'] == 'in_progress'
    assert wanted([node('a', 'erroring'), node('b', 'waiting')])['status'] == 'unknown'
    assert wanted([node('a', 'waiting'), node('b')])['status'] == 'unknown'
    assert wanted([node('a', 'blocked'), node('b', 'complete', DONE)])['status'] == 'blocked'
    assert wanted([])['status'] == 'complete'
    paused = copy.deepcopy(DOC)
    paused['metadata']['annotations'] = {'skyhook.nvidia.com/pause': 'true'}
    assert wanted([node('a', 'complete', DONE)], doc=paused)['status'] == 'paused'  # even when complete
    disabled = copy.deepcopy(DOC)
    disabled['metadata']['annotations'] = {'skyhook.nvidia.com/disable': 'true'}
    assert wanted([node('a', 'complete', DONE)], doc=disabled)['status'] == 'complete'
    assert wanted([node('a', 'in_progress')], doc=disabled)['status'] == 'disabled'
    assert wanted([node('a', 'complete', DONE)], policy_missing=True)['status'] == 'blocked'


def test_an_earlier_sequencing_all_cr_not_complete_holds_the_cr_waiting():
    # chainsaw skyhook/strict-order: aa's node still says blocked (an untolerated taint, since removed), but
    # the gate (priority 2, sequencing all) is not complete everywhere: aa is waiting (isBlockedByGlobalPredecessor)
    assert wanted([node('a', 'blocked')], waiting_for=['gate'])['status'] == 'waiting'
    assert wanted([node('a', 'blocked')])['status'] == 'blocked'
    assert wanted([node('a', 'complete', DONE)], waiting_for=['gate'])['status'] == 'complete'
    paused = copy.deepcopy(DOC)
    paused['metadata']['annotations'] = {'skyhook.nvidia.com/pause': 'true'}
    assert wanted([node('a', 'blocked')], doc=paused, waiting_for=['gate'])['status'] == 'paused'
    assert wanted([node('a', 'blocked')], policy_missing=True, waiting_for=['gate'])['status'] == 'blocked'


def test_the_ready_message_groups_nodes_in_the_operators_order():
    assert status_rollup.ready_message({'n1': 'complete', 'n2': 'in_progress', 'n3': 'waiting'}, 3) == (
        '1/3 nodes complete (n1), 1 in progress (n2), 1 waiting (n3)')
    many = dict(('n%02d' % i, 'unknown') for i in range(11))
    assert status_rollup.ready_message(many, 11) == '0/11 nodes complete, 11 unknown (list truncated; see controller logs)'


def test_a_malformed_node_state_is_reported_and_left_out():
    status = wanted([node('a-very-long-node-name', raw_state='{not json'), node('b', 'complete', DONE)])
    malformed = [c for c in status['conditions'] if c['type'] == 'NodeStateMalformed'][0]
    assert (malformed['status'], malformed['reason']) == ('True', 'ParseError')
    assert malformed['message'] == 'nodeState annotation cannot be parsed on 1 node(s): a-very-lon...'
    assert 'a-very-long-node-name' not in status['nodeState'] and status['status'] == 'unknown'


def test_ignored_nodes_are_named():
    status = wanted([node('a', labels={'pool': 'gpu', 'skyhook.nvidia.com/ignore': 'true'})])
    ignored = [c for c in status['conditions'] if c['type'] == 'NodesIgnored'][0]
    assert ignored['status'] == 'True' and ignored['message'] == 'Node [a] has ignore label set. Skipping.'


def test_nodes_with_taints_the_cr_does_not_tolerate_are_named():
    tainted = dict(node('b'), taints=[{'key': 'test-block', 'value': 'true', 'effect': 'NoSchedule'}])
    cordoned = dict(node('a', 'complete', DONE), taints=[{'key': 'node.kubernetes.io/unschedulable', 'effect': 'NoSchedule'}])
    status = wanted([cordoned, tainted])
    conditions = dict((c['type'], c) for c in status['conditions'])
    for ctype in ('TaintNotTolerable', 'skyhook.nvidia.com/TaintNotTolerable'):
        assert (conditions[ctype]['status'], conditions[ctype]['reason'], conditions[ctype]['message']) == (
            'True', 'TaintNotTolerable', 'Node [b] has taints that are not tolerable. Skipping.')
    clear = dict((c['type'], c) for c in wanted([cordoned])['conditions'])['TaintNotTolerable']
    assert (clear['status'], clear['message']) == ('False', 'All nodes have tolerable taints.')


def test_the_patch_is_none_when_nothing_changed_and_keeps_transition_times():
    nodes = [node('n1', 'complete', DONE)]
    first = wanted(nodes)
    doc = dict(DOC, status=dict((k, v) for k, v in first.items() if v not in (None, 0)))
    again = status_rollup.wanted_status(cr(doc), doc, status_rollup.status_nodes(cr(doc), nodes), now='2026-12-02T11:00:00Z')
    assert status_rollup.status_patch(doc['status'], again) is None  # same status: same lastTransitionTime, no write
    # a node starts: only what changed is sent, a condition's time moves only when its status does
    moved = status_rollup.wanted_status(cr(doc), doc, status_rollup.status_nodes(cr(doc), [node('n1', 'in_progress', DONE[:1])]),
                                        now='2026-12-02T12:00:00Z')
    patch = status_rollup.status_patch(doc['status'], moved)['status']
    assert patch['status'] == 'in_progress' and patch['nodeStatus'] == {'n1': 'in_progress'}
    assert 'packageList' not in patch
    ready = [c for c in patch['conditions'] if c['type'] == 'Ready'][0]
    ignored = [c for c in patch['conditions'] if c['type'] == 'NodesIgnored'][0]
    assert ready['lastTransitionTime'] == '2026-12-02T12:00:00Z' and ignored['lastTransitionTime'] == NOW


def test_the_operators_other_conditions_stay():
    theirs = {'type': 'DeletionBlocked', 'status': 'True', 'reason': 'PausedWithPendingUninstall', 'message': 'x'}
    doc = dict(DOC, status={'conditions': [theirs]})
    status = status_rollup.wanted_status(cr(doc), doc, status_rollup.status_nodes(cr(doc), [node('n1')]), now=NOW)
    assert status['conditions'][0] == theirs


def test_batch_state_is_kept_and_reset_on_completion_when_asked():
    with_policy = copy.deepcopy(DOC)
    with_policy['spec']['deploymentPolicyOptions'] = {'resetBatchStateOnCompletion': False}
    kept = {'__default__': {'batchState': {'currentBatch': 4, 'completedNodes': 3}}}
    doc = dict(with_policy, status={'status': 'in_progress', 'compartmentStatuses': kept})
    status = status_rollup.wanted_status(cr(doc), doc, status_rollup.status_nodes(cr(doc), [node('n1', 'complete', DONE)]), now=NOW)
    assert status['compartmentStatuses']['__default__']['batchState'] == {'currentBatch': 4, 'completedNodes': 3}
    reset = copy.deepcopy(doc)
    reset['spec']['deploymentPolicyOptions']['resetBatchStateOnCompletion'] = True
    status = status_rollup.wanted_status(cr(reset), reset, status_rollup.status_nodes(cr(reset), [node('n1', 'complete', DONE)]),
                                         now=NOW)
    assert status['compartmentStatuses']['__default__']['batchState'] == {'currentBatch': 1}
    # no options and no policy: the operator never resets
    assert status_rollup.reset_on_completion(DOC, None) is False
    assert status_rollup.reset_on_completion(DOC, {'spec': {}}) is True


def test_removed_nodes_leave_the_maps():
    doc = dict(DOC, status={'nodeStatus': {'gone': 'complete', 'n1': 'complete'}, 'nodeState': {'gone': {}}})
    status = status_rollup.wanted_status(cr(doc), doc, status_rollup.status_nodes(cr(doc), [node('n1', 'complete', DONE)]), now=NOW)
    patch = status_rollup.status_patch(doc['status'], status)['status']
    assert patch['nodeStatus'] == {'gone': None} and patch['nodeState']['gone'] is None


def test_node_priority_lists_the_picked_nodes_until_complete_and_counts_the_ones_removed():
    # NodePicker.upsertPick / RemoveNodePriority: a picked node keeps its first pick time, a complete one
    # leaves the list and adds one to the offset (chainsaw skyhook/strict-order: worker2 starts with order 1)
    current = {'nodePriority': {'worker': '2026-12-02T10:00:00Z'}, 'nodeOrderOffset': 0}
    priority, offset = status_rollup.node_priority(current, {'worker': 'complete', 'worker2': 'waiting'}, NOW,
                                                   picked=['worker2'])
    assert (priority, offset) == ({'worker2': NOW}, 1)
    assert pod_layout.node_order_from_status({'nodePriority': priority, 'nodeOrderOffset': offset}, 'worker2') == 1
    # already listed: the first time stays; a node rolling that no batch listed (the node role alone) is added
    priority, offset = status_rollup.node_priority({'nodePriority': {'a': '2026-12-02T09:00:00Z'}},
                                                   {'a': 'in_progress', 'b': 'erroring', 'c': 'waiting'}, NOW, picked=['a'])
    assert (priority, offset) == ({'a': '2026-12-02T09:00:00Z', 'b': NOW}, 0)
    # the status carries them; a write that changes nothing else sends only what changed
    status = wanted([node('a', 'in_progress')])
    assert status['nodePriority'] == {'a': NOW} and status['nodeOrderOffset'] == 0


def test_the_cr_is_stamped_with_the_version_once_and_an_operator_stamp_is_kept():
    # Skyhook.SetVersion: kubectl skyhook pause/disable read skyhook.nvidia.com/version to know the operator's version
    assert status_rollup.version_annotation_patch({'metadata': {'name': 'x'}}) == {
        'metadata': {'annotations': {'skyhook.nvidia.com/version': node_annotations.OPERATOR_VERSION}}}
    assert status_rollup.version_annotation_patch({'metadata': {'annotations': {'skyhook.nvidia.com/version': ''}}})
    operator_stamp = {'metadata': {'annotations': {'skyhook.nvidia.com/version': 'v0.20.1'}}}
    assert status_rollup.version_annotation_patch(operator_stamp) is None


def _types(status):
    return dict((c['type'], (c['status'], c['reason'])) for c in status['conditions'])


def test_uninstall_conditions_follow_the_node_states_as_update_uninstall_conditions():
    # skyhook/uninstall-cancel-during-interrupt and uninstall-fix-config: present only while true
    running = wanted([node('n1', 'in_progress', (('dexter', 'uninstall-interrupt', 'in_progress'),
                                                 ('failure', 'config', 'complete')))])
    assert _types(running)['UninstallInProgress'] == ('True', 'UninstallInProgress')
    assert 'UninstallFailed' not in _types(running)
    failing = wanted([node('n1', 'erroring', (('dexter', 'uninstall', 'erroring'),)), node('n2', 'complete', DONE)])
    assert _types(failing)['UninstallFailed'] == ('True', 'UninstallPodFailing')
    assert _types(failing)['UninstallInProgress'][0] == 'True'
    # the cycle over: both go, other conditions (the operator's own) stay
    doc = copy.deepcopy(DOC)
    doc['status'] = {'conditions': failing['conditions'] + [{'type': 'Transition', 'status': 'True', 'reason': 'Started'}]}
    done = wanted([node('n1', 'complete', DONE)], doc=doc)
    assert 'UninstallInProgress' not in _types(done) and 'UninstallFailed' not in _types(done)
    assert 'Transition' in _types(done)


def _by_type(status):
    return dict((c['type'], c) for c in status['conditions'])


def test_the_legacy_transition_condition_carries_the_status_as_its_reason_and_is_restamped_on_a_new_message():
    first = wanted([node('n1', 'in_progress', (('dexter', 'apply', 'in_progress'),))])
    transition = _by_type(first)['skyhook.nvidia.com/Transition']
    assert transition == dict(_by_type(first)['Ready'], type='skyhook.nvidia.com/Transition', reason='in_progress')
    # the same status, another message (a node more complete): a new lastTransitionTime, as the operator refreshes it
    doc = dict(DOC, status=dict(first))
    later = status_rollup.wanted_status(cr(doc), doc, status_rollup.status_nodes(cr(doc), [
        node('n1', 'in_progress', (('dexter', 'config', 'complete'), ('failure', 'apply', 'in_progress'))),
        node('n2', 'complete', DONE)]), now='2026-12-02T12:00:00Z')
    assert _by_type(later)['skyhook.nvidia.com/Transition']['lastTransitionTime'] == '2026-12-02T12:00:00Z'
    # while Ready (False both times) keeps its time
    assert _by_type(later)['Ready']['lastTransitionTime'] == NOW


def test_apply_package_names_a_running_package_and_stays_after_the_rollout():
    running = wanted([node('n1', 'in_progress', (('dexter', 'config', 'complete'), ('failure', 'apply', 'in_progress'))),
                      node('n2', 'in_progress', (('dexter', 'apply', 'in_progress'),))])
    apply = _by_type(running)['ApplyPackage']
    assert apply == {'type': 'ApplyPackage', 'status': 'True', 'reason': 'ApplyPackage', 'observedGeneration': 2,
                     'message': 'Applying package [failure:1.2.3] to node [n1]', 'lastTransitionTime': NOW}
    assert _by_type(running)['skyhook.nvidia.com/ApplyPackage'] == dict(apply, type='skyhook.nvidia.com/ApplyPackage')
    # n1's package ends, n2's still runs: the condition moves to it
    doc = dict(DOC, status=dict(running))
    moved = status_rollup.wanted_status(cr(doc), doc, status_rollup.status_nodes(cr(doc), [
        node('n1', 'complete', DONE), node('n2', 'in_progress', (('dexter', 'apply', 'in_progress'),))]), now=NOW)
    assert _by_type(moved)['ApplyPackage']['message'] == 'Applying package [dexter:1.2.3] to node [n2]'
    # nothing runs any more: the last one stays, as the operator never removes it
    doc = dict(DOC, status=dict(moved))
    done = status_rollup.wanted_status(cr(doc), doc, status_rollup.status_nodes(cr(doc), [
        node('n1', 'complete', DONE), node('n2', 'complete', DONE)]), now='2026-12-02T12:00:00Z')
    assert _by_type(done)['ApplyPackage'] == _by_type(moved)['ApplyPackage']
    # before any pod started: none
    assert 'ApplyPackage' not in _by_type(wanted([node('n1')]))


def test_blocked_names_the_packages_whose_dependency_is_being_or_has_been_uninstalled():
    doc = copy.deepcopy(DOC)
    doc['spec']['packages']['failure']['dependsOn'] = {'dexter': '1.2.3'}
    doc['spec']['packages']['dexter']['uninstall'] = {'enabled': True, 'apply': True}
    cycling = wanted([node('n1', 'in_progress', (('dexter', 'uninstall', 'in_progress'),))], doc=doc)
    assert _by_type(cycling)['Blocked'] == {
        'type': 'Blocked', 'status': 'True', 'reason': 'DependencyUninstalled', 'observedGeneration': 2,
        'message': 'package failure is blocked: dependency dexter is being uninstalled', 'lastTransitionTime': NOW}
    gone = wanted([node('n1', 'in_progress', ())], doc=doc)
    assert _by_type(gone)['Blocked']['message'] == 'package failure is blocked: dependency dexter has been uninstalled'
    # failure complete everywhere: the broken dependency blocks nothing; and a node that cannot be read rules out "done"
    finished = wanted([node('n1', 'complete', (('failure', 'config', 'complete'),))], doc=doc)
    unreadable = wanted([node('n1'), node('n2', raw_state='{not json')], doc=doc)
    assert 'Blocked' not in _by_type(finished) and 'Blocked' not in _by_type(unreadable)
    assert 'Blocked' not in _by_type(wanted([node('n1', 'complete', DONE)]))


def test_node_boot_ids_list_the_crs_nodes_and_drop_the_gone_ones():
    doc = dict(DOC, status={'nodeBootIds': {'n1': 'old', 'gone': 'b-9'}})
    status = wanted([node('n1'), node('n2'), node('other', labels={'pool': 'cpu'})], doc=doc,
                    boot_ids={'n1': 'b-1', 'n2': None, 'other': 'b-3'})
    assert status['nodeBootIds'] == {'n1': 'b-1', 'n2': ''}
    assert status_rollup.status_patch(doc['status'], status)['status']['nodeBootIds'] == {'n1': 'b-1', 'n2': '', 'gone': None}
    # without boot IDs (a caller that did not read the nodes' status) the field is left as it is
    assert 'nodeBootIds' not in status_rollup.status_patch(doc['status'], wanted([node('n1')], doc=doc))['status']


# --------------------------------------------------------------------------- the v0.18+ generation (gen=NODEWRIGHT)

NW = 'nodewright.nvidia.com'
NW_DOC = dict(copy.deepcopy(DOC), apiVersion=NODEWRIGHT.api_version, kind='NodeWright')


def nw_node(name, status=None, states=(), labels=None, taints=None):
    """A node as the v0.18+ operator keys it for failure-skyhook (nodewright.nvidia.com/nodeState_, status_)."""
    legacy = node(name, status, states, labels)
    renamed = dict((key.replace('skyhook.nvidia.com/', NW + '/', 1), value) for key, value in legacy['annotations'].items())
    return dict(legacy, annotations=renamed, taints=list(taints or []))


def nw_wanted(nodes, doc=None, **kwargs):
    doc = NW_DOC if doc is None else doc
    model = cr(doc)
    return status_rollup.wanted_status(model, doc, status_rollup.status_nodes(model, nodes, gen=NODEWRIGHT), now=NOW,
                                       gen=NODEWRIGHT, **kwargs)


def test_nodewright_writes_the_prefixed_twins_and_the_transition_under_its_prefix():
    """operator/internal/wrapper/skyhook_conditions.go @4fa7fe39 (AddSkyhookConditionWithLegacy,
    LegacySkyhookConditionType, LegacySkyhookConditionTransition = METADATA_PREFIX + "/Transition", METADATA_PREFIX =
    nodewright.nvidia.com) and controller/cluster_state_v2.go @01cc2f2d (UpdateCondition: Ready with its twin, then
    the Transition; the node picker's TaintNotTolerable and NodesIgnored with theirs)."""
    status = nw_wanted([nw_node('n1', 'complete', DONE), nw_node('n2', 'in_progress', DONE[:1])])
    assert [c['type'] for c in status['conditions']] == [
        'Ready', NW + '/Ready', NW + '/Transition', 'TaintNotTolerable', NW + '/TaintNotTolerable',
        'NodesIgnored', NW + '/NodesIgnored']
    by_type = _by_type(status)
    assert by_type[NW + '/Ready'] == dict(by_type['Ready'], type=NW + '/Ready')
    assert by_type[NW + '/Transition'] == dict(by_type['Ready'], type=NW + '/Transition', reason='in_progress')
    assert status['nodeStatus'] == {'n1': 'complete', 'n2': 'in_progress'} and status['completeNodes'] == '1/2'
    assert 'skyhook.nvidia.com/' not in json.dumps(status)
    assert status_rollup.transition_type(NODEWRIGHT) == NW + '/Transition' and status_rollup.TRANSITION == 'skyhook.nvidia.com/Transition'


def test_nodewright_owns_the_same_conditions_under_its_prefix():
    """skyhook_conditions.go @4fa7fe39: twins for Ready, TaintNotTolerable, NodesIgnored, DeploymentPolicyNotFound and
    ApplyPackage (skyhook_controller.go @4fa7fe39 ApplyPackage); Blocked, UninstallInProgress, UninstallFailed,
    NodeStateMalformed (cluster_state_v2.go @01cc2f2d), DeletionBlocked and DrainBlocked bare; DeletionBlocked not ours,
    DrainBlocked derived from the nodes' drainBlocked_ (UpdateDrainBlockedCondition, same file)."""
    assert status_rollup.owned_conditions(NODEWRIGHT) == (
        'Ready', NW + '/Ready', 'NodesIgnored', NW + '/NodesIgnored', 'TaintNotTolerable', NW + '/TaintNotTolerable',
        'NodeStateMalformed', 'DeploymentPolicyNotFound', NW + '/DeploymentPolicyNotFound', 'UninstallInProgress',
        'UninstallFailed', 'Blocked', NW + '/Transition', 'ApplyPackage', NW + '/ApplyPackage', 'DrainBlocked')
    assert status_rollup.OWNED_CONDITIONS == status_rollup.owned_conditions(SKYHOOK) == status_rollup.owned_conditions()
    assert 'DrainBlocked' not in status_rollup.OWNED_CONDITIONS
    # a stale twin of ours goes, and a DrainBlocked no node records any more; a legacy-prefixed condition stays
    drain = {'type': 'DrainBlocked', 'status': 'True', 'reason': 'PodDisruptionBudget', 'message': 'x'}
    legacy = {'type': 'skyhook.nvidia.com/Ready', 'status': 'False', 'reason': 'Progressing', 'message': 'y'}
    stale = {'type': NW + '/DeploymentPolicyNotFound', 'status': 'True', 'reason': 'DeploymentPolicyNotFound'}
    doc = dict(NW_DOC, status={'conditions': [drain, legacy, stale]})
    conditions = nw_wanted([nw_node('n1', 'complete', DONE)], doc=doc)['conditions']
    assert conditions[0] == legacy and not set([stale['type'], 'DrainBlocked']) & set(c['type'] for c in conditions)


def test_nodewright_reads_its_ignore_label_node_keys_and_runtime_required_taints():
    """controller/cluster_state_v2.go @01cc2f2d CheckNodeIgnoreLabel ("<METADATA_PREFIX>/ignore") and the picker's
    tolerations, NewNodePicker(GetRuntimeRequiredTolerations()) in skyhook_controller.go @4fa7fe39: every recognised
    runtime-required taint (nodewright.nvidia.com and the legacy skyhook.nvidia.com one) for a runtimeRequired CR."""
    ignored = nw_wanted([nw_node('a', labels={'pool': 'gpu', NW + '/ignore': 'true'}),
                         nw_node('b', labels={'pool': 'gpu', 'skyhook.nvidia.com/ignore': 'true'})])
    assert _by_type(ignored)[NW + '/NodesIgnored']['message'] == 'Node [a] has ignore label set. Skipping.'
    required = copy.deepcopy(NW_DOC)
    required['spec']['runtimeRequired'] = True
    legacy_taint = {'key': 'skyhook.nvidia.com', 'value': 'runtime-required', 'effect': 'NoSchedule'}
    new_taint = {'key': NW, 'value': 'runtime-required', 'effect': 'NoSchedule'}
    both = [nw_node('a', taints=[legacy_taint]), nw_node('b', taints=[new_taint])]
    assert _by_type(nw_wanted(both, doc=required))['TaintNotTolerable']['status'] == 'False'
    # v0.15 recognises its one taint: the new one is not tolerated there
    model = cr(required)
    old = status_rollup.wanted_status(model, required, status_rollup.status_nodes(model, [dict(node('b'), taints=[new_taint])]), now=NOW)
    assert _by_type(old)['TaintNotTolerable']['message'] == 'Node [b] has taints that are not tolerable. Skipping.'
    # the node state under the legacy key is not the v0.18+ record
    assert nw_wanted([node('c', 'complete', DONE)])['nodeStatus'] == {'c': 'unknown'}


def test_nodewright_apply_package_twin_version_stamp_and_batch_reset():
    """skyhook_controller.go @4fa7fe39 ApplyPackage (AddSkyhookConditionWithLegacy: ApplyPackage and
    nodewright.nvidia.com/ApplyPackage) and internal/wrapper/skyhook.go SetVersion (the CR's <prefix>/version, the
    generation's operator_version v0.20.0); the version-change reset reads nodewright.nvidia.com/nodeState_<cr>."""
    running = nw_wanted([nw_node('n1', 'in_progress', (('dexter', 'apply', 'in_progress'),))])
    apply = _by_type(running)['ApplyPackage']
    assert _by_type(running)[NW + '/ApplyPackage'] == dict(apply, type=NW + '/ApplyPackage')
    assert status_rollup.version_annotation_patch({'metadata': {'annotations': {'skyhook.nvidia.com/version': 'v0.15.0'}}},
                                                  gen=NODEWRIGHT) == {'metadata': {'annotations': {NW + '/version': 'v0.20.0'}}}
    assert status_rollup.version_annotation_patch({'metadata': {'annotations': {NW + '/version': 'v0.20.1'}}}, NODEWRIGHT) is None
    doc = copy.deepcopy(NW_DOC)
    doc['spec']['packages']['dexter']['version'] = '1.3.0'
    doc['spec']['deploymentPolicyOptions'] = {'resetBatchStateOnCompletion': True}
    doc['status'] = {'compartmentStatuses': {'__default__': {'batchState': {'currentBatch': 3}}}}
    nodes = [nw_node('n1', 'complete', DONE)]
    assert status_rollup.resumed_batch_states(cr(doc), doc, nodes, gen=NODEWRIGHT) == {}
    assert status_rollup.resumed_batch_states(cr(doc), doc, nodes) == {'__default__': {'currentBatch': 3}}


def test_nodewright_drain_blocked_is_derived_from_the_nodes_drain_blocked_annotations():
    """controller/cluster_state_v2.go @01cc2f2d UpdateDrainBlockedCondition: rebuilt from each node's drainBlocked_<cr>
    (json.Marshal([]drain.BlockedPod), skyhook_controller_test.go @01cc2f2d), an unreadable one skipped; none: removed.
    Reason and message: wrapper/skyhook_conditions.go DrainBlockedConditionReason / DrainBlockedConditionMessage."""
    key = NODEWRIGHT.drain_blocked_key('failure-skyhook')
    assert key == NW + '/drainBlocked_failure-skyhook'
    pdb = drain_config.encode_blocked([drain_config.blocked_pod('default', 'web-0', 'PodDisruptionBudget',
                                                                'The disruption budget web needs 2 healthy pods and has 2 currently')])
    solo = drain_config.encode_blocked([drain_config.blocked_pod('default', 'solo', 'UnmanagedPod')])

    def blocked(name, value, status='in_progress', states=DONE[:1]):
        with_record = nw_node(name, status, states)
        with_record['annotations'][key] = value
        return with_record
    nodes = [blocked('n1', pdb), blocked('n2', solo), blocked('n3', '{not json'), nw_node('n4', 'in_progress', DONE[:1]),
             blocked('n5', solo, 'complete', DONE)]  # a complete node waits on no drain: its record is not read
    cond = _by_type(nw_wanted(nodes))['DrainBlocked']
    assert cond == {'type': 'DrainBlocked', 'status': 'True', 'reason': 'MultipleCauses', 'observedGeneration': 2,
                    'lastTransitionTime': NOW,
                    'message': '2/5 nodes blocked draining (n1, n2); default/web-0 on n1: The disruption budget web needs 2 '
                               'healthy pods and has 2 currently; default/solo on n2: UnmanagedPod'}
    assert _by_type(nw_wanted(nodes[1:2] + nodes[3:]))['DrainBlocked']['reason'] == 'UnmanagedPod'
    # no record left: the condition goes; the v0.15 operator has none, whatever a node carries
    assert 'DrainBlocked' not in _by_type(nw_wanted(nodes[2:]))
    legacy = node('n1', 'in_progress', DONE[:1])
    legacy['annotations']['skyhook.nvidia.com/drainBlocked_failure-skyhook'] = solo
    assert 'DrainBlocked' not in _by_type(wanted([legacy]))


def test_nodes_waiting_for_their_protected_pods_set_blocked_with_the_operators_reason_until_they_are_complete():
    from ansible_collections.nodewright.bridge.plugins.module_utils.contract import protected_wait
    waiting = node('gpu-b', status='in_progress', states=(('dexter', 'apply', 'complete'),))
    waiting['annotations'][protected_wait.key('failure-skyhook')] = protected_wait.encode(
        '2026-12-02T09:00:00Z', ['ml/train-0'], True)
    other = node('gpu-a', status='in_progress', states=(('dexter', 'apply', 'complete'),))
    other['annotations'][protected_wait.key('failure-skyhook')] = protected_wait.encode('2026-12-02T09:30:00Z', ['x/y'], False)
    status = wanted([waiting, other])
    [blocked] = [c for c in status['conditions'] if c['type'] == 'Blocked']
    assert (blocked['status'], blocked['reason'], blocked['message']) == (
        'True', 'NonInterruptPodsRunning', '2 nodes blocked by non-interrupt pods (gpu-a, gpu-b). Waiting.')
    # Ready stays false while they wait (the operator's: deliberately waiting is not ready)
    [ready] = [c for c in status['conditions'] if c['type'] == 'Ready']
    assert ready['status'] == 'False'
    # a complete node's stale record does not count; with none left the condition goes
    done = node('gpu-b', status='complete', states=DONE)
    done['annotations'][protected_wait.key('failure-skyhook')] = waiting['annotations'][protected_wait.key('failure-skyhook')]
    assert not [c for c in wanted([done])['conditions'] if c['type'] == 'Blocked']
    # a record this collection did not write is no wait
    odd = node('gpu-c', status='in_progress', states=(('dexter', 'apply', 'complete'),))
    odd['annotations'][protected_wait.key('failure-skyhook')] = 'not json'
    assert not [c for c in wanted([odd])['conditions'] if c['type'] == 'Blocked']
    many = ['n%02d' % i for i in range(12)]
    assert protected_wait.condition_message(many) == (
        '12 nodes blocked by non-interrupt pods (n00, n01, n02, n03, n04, n05, n06, n07, n08, n09 (list truncated; see '
        'controller logs)). Waiting.')
