# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The batch state a rollout keeps in its CR's status (BatchProcessingState) and continues from.

The rules are the operator's (NVIDIA/nodewright 71ca22b8: api/v1alpha1/deployment_policy_types.go
EvaluateBatchResult and CalculateBatchSize; internal/wrapper/compartment.go NewCompartmentWrapper and
GetNodesForNextBatch; internal/controller/cluster_state_v2.go resetSkyhookBatchState), and the asserts of
its deployment-policy/batch-state-reset and linear-strategy scenarios.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_validation
from ansible_collections.nodewright.bridge.plugins.module_utils.planning import status_rollup
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import node_annotations
from ansible_collections.nodewright.bridge.plugins.module_utils.planning import shared_budget
from ansible_collections.nodewright.bridge.plugins.module_utils.planning.rollout_scheduler import (
    RolloutScheduler, batch_state, batch_state_errors)

POLICY_DOC = {'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'DeploymentPolicy', 'metadata': {'name': 'p'},
              'spec': {'resetBatchStateOnCompletion': True,
                       'default': {'budget': {'count': 2}, 'strategy': {'exponential': {'initialBatch': 1, 'growthFactor': 2}}},
                       'compartments': [{'name': 'tier1', 'selector': {'matchLabels': {'tier': '1'}}, 'budget': {'count': 4},
                                         'strategy': {'exponential': {'initialBatch': 1, 'growthFactor': 2}}}]}}
CR_DOC = {'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'Skyhook', 'metadata': {'name': 'reset-test', 'generation': 1},
          'spec': {'deploymentPolicy': 'p', 'nodeSelectors': {'matchLabels': {'test': 'x'}},
                   'packages': {'quick': {'version': '3.21.0', 'image': 'alpine'}}}}


def _nodes(count):
    return [('n%d' % i, {'tier': '1', 'test': 'x'}) for i in range(count)]


def _policy():
    return cr_validation.build_policy(POLICY_DOC)


def _run_all(comp):
    while True:
        batch = comp.next_batch()
        if not batch:
            return
        comp.record(batch, [])


def test_the_state_leaves_zero_values_out_as_go_omitempty_does():
    assert batch_state(0, 0, 0, 0, 0, False, False) == {'currentBatch': 1}
    assert batch_state(3, 7, 1, 1, 4, True, True) == {'currentBatch': 4, 'completedNodes': 7, 'failedNodes': 1,
                                                      'consecutiveFailures': 1, 'lastBatchSize': 4,
                                                      'lastBatchFailed': True, 'shouldStop': True}


def test_a_compartment_counts_its_batches_as_the_operator_does():
    comp = RolloutScheduler.build(_nodes(8), policy=_policy()).compartment('tier1')
    _run_all(comp)
    # exponential 1, 2, 4 (ceiling 4), then the last 1: four batches, currentBatch 5
    assert [b['size'] for b in comp.batches] == [1, 2, 4, 1]
    assert comp.batch_state() == {'currentBatch': 5, 'completedNodes': 8, 'lastBatchSize': 1}


def test_a_new_rollout_continues_the_batch_state_it_is_given():
    state = {'currentBatch': 3, 'completedNodes': 3, 'lastBatchSize': 2}
    sched = RolloutScheduler.build(_nodes(8), policy=_policy(), batch_states={'tier1': state}, cr_name='reset-test')
    comp = sched.compartment('tier1')
    # the operator's CalculateBatchSize grows from LastBatchSize: 2 * 2 = 4, not initialBatch 1
    assert comp.next_batch_size() == 4 and comp.next_number == 3
    record = comp.record(comp.next_batch(), [])
    assert record['number'] == 3 and comp.batch_state()['currentBatch'] == 4


def test_a_stopped_compartment_stays_stopped_until_a_reset():
    state = {'currentBatch': 4, 'consecutiveFailures': 3, 'shouldStop': True, 'lastBatchSize': 1, 'lastBatchFailed': True}
    sched = RolloutScheduler.build(_nodes(4), policy=_policy(), batch_states={'tier1': state}, cr_name='reset-test')
    comp = sched.compartment('tier1')
    assert comp.stopped and comp.next_batch() == [] and comp.not_attempted() == ['n0', 'n1', 'n2', 'n3']
    assert 'kubectl skyhook deployment-policy reset reset-test' in comp.stop_reason
    assert comp.batch_state()['shouldStop'] is True
    # after `deployment-policy reset` the status says {currentBatch: 1}: a fresh start
    fresh = RolloutScheduler.build(_nodes(4), policy=_policy(), batch_states={'tier1': {'currentBatch': 1}})
    assert fresh.compartment('tier1').next_batch() == ['n0']


def test_a_bad_batch_state_is_named_field_by_field():
    assert batch_state_errors({'currentBatch': -1, 'shouldStop': 'yes', 'newField': 1}, 'tier1') == [
        'tier1.currentBatch: must be a non-negative integer, got -1', 'tier1.shouldStop: must be a boolean, got \'yes\'']
    assert batch_state_errors([], 'tier1') == ['tier1: must be a mapping, got list']
    assert batch_state_errors({'currentBatch': True}, 'c') == ['c.currentBatch: must be a non-negative integer, got True']


def test_a_fresh_fleet_rollout_starts_from_the_resumed_counters():
    sched = RolloutScheduler.build(_nodes(8), policy=_policy(), batch_states={'tier1': {'currentBatch': 3, 'lastBatchSize': 2}})
    seed = shared_budget.seed_counters(sched.compartment('tier1'))
    state = shared_budget.new_state('batch')
    assert shared_budget.join(state, 'run-1', 'fp', ['n0', 'n1'], 100.0, 60, seed=seed)
    assert shared_budget.batch_state_of(state) == {'currentBatch': 3, 'lastBatchSize': 2}
    rules = shared_budget.Rules.of(sched.compartment('tier1'))
    assert shared_budget.next_size(state, rules) == 2  # 2 * 2 = 4, capped by the two nodes registered
    # a run joining live runs keeps the fleet's counters, whatever it resumed
    assert not shared_budget.join(state, 'run-2', 'fp', ['n2'], 101.0, 60, seed={'scored': 9})
    assert shared_budget.batch_state_of(state)['currentBatch'] == 3


def _node(name, version, status='complete'):
    value = 'complete' if status == 'complete' else 'in_progress'
    state = node_annotations.upsert({}, 'quick', version, 'alpine', value, 'config')[0]
    return {'name': name, 'labels': {'tier': '1', 'test': 'x'},
            'annotations': {node_annotations.node_state_key('reset-test'): node_annotations.encode(state),
                            node_annotations.status_key('reset-test'): status}}


def _doc(spec_options=None, compartments=None, status='complete'):
    doc = dict(CR_DOC, spec=dict(CR_DOC['spec']))
    if spec_options is not None:
        doc['spec']['deploymentPolicyOptions'] = spec_options
    doc['status'] = {'status': status, 'compartmentStatuses': compartments or {
        'tier1': {'matched': 2, 'ceiling': 2, 'inProgress': 0, 'completed': 2, 'progressPercent': 100,
                  'batchState': {'currentBatch': 3, 'completedNodes': 2, 'lastBatchSize': 1}}}}
    return doc


def test_a_run_resumes_the_status_batch_state_unless_a_reset_is_due():
    doc = _doc()
    cr = cr_validation.build_cr(doc)
    same, changed = [_node('n0', '3.21.0')], [_node('n0', '3.20.0')]
    # the CR's version equals the nodes': the state carries over
    assert status_rollup.resumed_batch_states(cr, doc, same, POLICY_DOC) == {
        'tier1': {'currentBatch': 3, 'completedNodes': 2, 'lastBatchSize': 1}}
    # a version change with resetBatchStateOnCompletion (the policy's): batch 1 again
    assert status_rollup.resumed_batch_states(cr, doc, changed, POLICY_DOC) == {}
    # the CR's override false wins over the policy's true: the state carries over
    doc = _doc({'resetBatchStateOnCompletion': False})
    assert status_rollup.resumed_batch_states(cr_validation.build_cr(doc), doc, changed, POLICY_DOC)['tier1']['currentBatch'] == 3
    # a state someone else broke is not continued
    doc = _doc(compartments={'tier1': {'batchState': {'currentBatch': 'two'}}})
    assert status_rollup.resumed_batch_states(cr, doc, same, POLICY_DOC) == {}
    assert status_rollup.resumed_batch_states(cr, dict(CR_DOC), same, POLICY_DOC) == {}


def _wanted(doc, nodes, **kwargs):
    cr = cr_validation.build_cr(doc)
    return status_rollup.wanted_status(cr, doc, status_rollup.status_nodes(cr, nodes), policy=_policy(), policy_doc=POLICY_DOC,
                                       now='2026-12-02T10:00:00Z', **kwargs)


def test_the_running_rollouts_batch_state_is_written_and_reset_once_complete():
    running = [_node('n0', '3.21.0'), _node('n1', '3.21.0', status='in_progress')]
    doc = _doc(status='in_progress')
    status = _wanted(doc, running, batch_states={'tier1': {'currentBatch': 2, 'lastBatchSize': 1, 'completedNodes': 1}})
    assert status['compartmentStatuses']['tier1']['batchState'] == {'currentBatch': 2, 'lastBatchSize': 1, 'completedNodes': 1}
    # complete with the policy's reset: {currentBatch: 1} (assert-auto-reset-complete.yaml), whatever the run gives
    done = [_node('n0', '3.21.0'), _node('n1', '3.21.0')]
    status = _wanted(doc, done, batch_states={'tier1': {'currentBatch': 3, 'lastBatchSize': 1}})
    assert status['compartmentStatuses']['tier1']['batchState'] == {'currentBatch': 1}
    # complete with the CR's override false: the run's last state stays (assert-override-complete.yaml: currentBatch > 1)
    doc = _doc({'resetBatchStateOnCompletion': False}, status='in_progress')
    status = _wanted(doc, done, batch_states={'tier1': {'currentBatch': 3, 'lastBatchSize': 1}})
    assert status['compartmentStatuses']['tier1']['batchState'] == {'currentBatch': 3, 'lastBatchSize': 1}


def test_the_status_patch_nulls_what_a_nested_map_lost():
    # a JSON merge patch merges nested maps: what a batchState or a node's state lost must be sent as null
    current = {'compartmentStatuses': {'tier1': {'matched': 2, 'ceiling': 2, 'inProgress': 0, 'completed': 2,
                                                 'progressPercent': 100,
                                                 'batchState': {'currentBatch': 3, 'completedNodes': 2, 'lastBatchSize': 1}}},
               'nodeState': {'n0': {'quick|3.20.0': {'name': 'quick'}}}}
    wanted = {'status': None, 'completeNodes': None, 'packageList': None, 'nodesInProgress': None,
              'observedGeneration': None, 'conditions': [], 'nodeStatus': {}, 'nodePriority': {}, 'nodeOrderOffset': 0,
              'nodeState': {'n0': {'quick|3.21.0': {'name': 'quick'}}},
              'compartmentStatuses': {'tier1': dict(current['compartmentStatuses']['tier1'], batchState={'currentBatch': 1})}}
    patch = status_rollup.status_patch(current, wanted)['status']
    assert patch['compartmentStatuses'] == {'tier1': {'batchState': {'currentBatch': 1, 'completedNodes': None,
                                                                     'lastBatchSize': None}}}
    assert patch['nodeState'] == {'n0': {'quick|3.21.0': {'name': 'quick'}, 'quick|3.20.0': None}}
