# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""rollout_scheduler: the sliding window (groups scored by completion) and halting."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import random

import pytest

from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_model
from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_validation
from ansible_collections.nodewright.bridge.plugins.module_utils.planning.rollout_scheduler import (
    RolloutScheduler, SlidingWindowScheduler)

DEFAULT = cr_model.DEFAULT_COMPARTMENT


def policy(budget=None, strategy=None, compartments=()):
    return cr_validation.build_policy({
        'default': {'budget': budget or {'percent': 100}, 'strategy': strategy or {'fixed': {}}},
        'compartments': list(compartments)})


def nodes(count, labels=None, prefix='n'):
    return [('%s%02d' % (prefix, i), dict(labels or {})) for i in range(count)]


def sliding(count, budget, strategy, **kwargs):
    return SlidingWindowScheduler.build(nodes(count), policy=policy(budget, strategy), order='inventory', **kwargs)


def run_random(sched, failing=(), seed=0):
    """Finish in-flight nodes in a random order until nothing is left; returns the max in flight seen."""
    rng = random.Random(seed)
    peak = 0
    flying = []
    while True:
        for batch in sched.admit().values():
            flying.extend(batch)
        peak = max(peak, len(flying))
        if not flying:
            return peak
        node = flying.pop(rng.randrange(len(flying)))
        sched.complete(node, node not in failing)


def run_barrier(sched, failing=()):
    """Finish everything in flight before admitting again: the batch-mode schedule."""
    sizes = []
    while True:
        admitted = sched.admit().get(DEFAULT, [])
        if not admitted:
            return sizes
        sizes.append(len(admitted))
        for node in admitted:
            sched.complete(node, node not in failing)


def group_sizes(sched, name=DEFAULT):
    return [g['size'] for g in sched.compartment(name).rollout.batches]


@pytest.mark.parametrize('seed', range(5))
def test_window_never_exceeds_the_ceiling_and_reaches_it(seed):
    sched = sliding(10, {'count': 3}, {'fixed': {'initialBatch': 3}})
    assert run_random(sched, seed=seed) == 3
    comp = sched.compartment(DEFAULT)
    assert comp.max_in_flight == 3
    assert group_sizes(sched) == [3, 3, 3, 1]
    scored = [h for g in comp.rollout.batches for h in g['hosts']]
    assert sorted(scored) == ['n%02d' % i for i in range(10)]
    assert sched.done and not sched.stopped and sched.not_attempted() == []


def test_a_finished_node_frees_its_slot_at_once():
    sched = sliding(6, {'count': 3}, {'fixed': {'initialBatch': 3}})
    assert sched.admit() == {DEFAULT: ['n00', 'n01', 'n02']}
    assert sched.admit() == {}
    assert sched.complete('n01', True) == []
    # no batch barrier: n00 and n02 are still running
    assert sched.admit() == {DEFAULT: ['n03']}
    assert sched.in_flight() == {DEFAULT: ['n00', 'n02', 'n03']}


def test_groups_are_formed_in_completion_order():
    sched = sliding(4, {'count': 2}, {'fixed': {'initialBatch': 2}})
    sched.admit()
    assert sched.complete('n01', True) == []
    sched.admit()  # n02
    records = sched.complete('n02', False)
    assert [(r['number'], r['hosts'], r['ok'], r['failed']) for r in records] == [(1, ['n01', 'n02'], ['n01'], ['n02'])]
    assert records[0]['failed_batch'] is True and records[0]['drain'] is False


def test_barrier_driving_reproduces_batch_mode_sizes():
    """Completing everything before admitting again gives exactly the batch scheduler's sizes."""
    cases = [
        ({'percent': 50}, {'exponential': {'initialBatch': 1, 'growthFactor': 2, 'safetyLimit': 100}}, 20,
         {'n03', 'n04'}),
        ({'count': 5}, {'linear': {'initialBatch': 1, 'delta': 2, 'safetyLimit': 100}}, 15, {'n05'}),
        ({'percent': 30}, {'fixed': {'initialBatch': 2}}, 9, set()),
    ]
    for budget, strategy, count, failing in cases:
        sched = sliding(count, budget, strategy)
        sizes = run_barrier(sched, failing)
        batch = RolloutScheduler.build(nodes(count), policy=policy(budget, strategy), order='inventory')
        expected = []
        rollout = batch.compartment(DEFAULT)
        while True:
            run = rollout.next_batch()
            if not run:
                break
            expected.append(len(run))
            rollout.record([n for n in run if n not in failing], [n for n in run if n in failing])
        assert sizes == expected, (budget, strategy)
        assert group_sizes(sched) == expected


def test_exponential_window_grows_after_good_groups_and_shrinks_after_a_bad_one():
    sched = sliding(20, {'count': 8}, {'exponential': {'initialBatch': 1, 'growthFactor': 2, 'safetyLimit': 100}})
    comp = sched.compartment(DEFAULT)
    windows = []
    failing = {'n03'}
    flying = []
    while not sched.done:
        for batch in sched.admit().values():
            flying.extend(batch)
        windows.append(comp.window)
        node = flying.pop(0)
        sched.complete(node, node not in failing)
    # 1 (n00), 2 (n01, n02), 4 with n03 failing -> halves to 2, then grows again, capped at the ceiling 8
    assert group_sizes(sched)[:4] == [1, 2, 4, 2]
    assert max(windows) <= 8
    assert comp.rollout.batches[2]['failed_batch'] is True


def test_failure_threshold_stops_admission_and_drains_the_window():
    sched = sliding(10, {'count': 2}, {'fixed': {'initialBatch': 2, 'failureThreshold': 1, 'safetyLimit': 100}})
    assert sched.admit() == {DEFAULT: ['n00', 'n01']}
    sched.complete('n00', False)
    sched.admit()  # n02 joins while n01 still runs
    records = sched.complete('n01', True)
    assert records[0]['failed_batch'] and records[0]['stopped']
    comp = sched.compartment(DEFAULT)
    reason = comp.rollout.stop_reason
    assert 'failureThreshold 1' in reason
    assert sched.admit() == {}
    drained = sched.complete('n02', False)
    assert drained[0]['drain'] is True and drained[0]['hosts'] == ['n02']
    assert comp.rollout.stop_reason == reason
    assert sched.done and sched.stopped
    assert sched.not_attempted() == ['n%02d' % i for i in range(3, 10)]
    summary = sched.summary()['compartments'][-1]
    assert summary['not_attempted'] == sched.not_attempted() and summary['max_in_flight'] == 2


def test_safety_limit_lets_failures_past_it_continue():
    # 4 nodes, groups of 1; the third group fails at 75% progress, above safetyLimit 50
    sched = sliding(4, {'count': 1}, {'fixed': {'initialBatch': 1, 'failureThreshold': 1, 'safetyLimit': 50}})
    run_random(sched, failing={'n02'})
    assert not sched.stopped and group_sizes(sched) == [1, 1, 1, 1]
    assert [g['failed_batch'] for g in sched.compartment(DEFAULT).rollout.batches] == [False, False, True, False]


def test_batch_threshold_scores_groups():
    strategy = {'fixed': {'initialBatch': 4, 'batchThreshold': 50, 'failureThreshold': 1, 'safetyLimit': 100}}
    sched = sliding(12, {'count': 4}, strategy)
    flying = []
    outcome = {'n00': False, 'n01': True, 'n02': True, 'n03': True, 'n04': False, 'n05': False, 'n06': False}
    while not sched.done:
        for batch in sched.admit().values():
            flying.extend(batch)
        node = flying.pop(0)
        sched.complete(node, outcome.get(node, True))
    first, second = sched.compartment(DEFAULT).rollout.batches[:2]
    assert (first['failed_batch'], second['failed_batch']) == (False, True)  # 75% >= 50, then 25% < 50
    # n08-n10 took the slots n04-n06 freed before the group was complete; they drain
    assert sched.stopped and sched.not_attempted() == ['n11']
    drain = sched.compartment(DEFAULT).rollout.batches[2]
    assert drain['drain'] and drain['hosts'] == ['n08', 'n09', 'n10']


def test_compartments_slide_independently():
    comps = [{'name': 'gpu', 'selector': {'matchLabels': {'role': 'gpu'}}, 'budget': {'count': 1},
              'strategy': {'fixed': {'initialBatch': 1, 'failureThreshold': 1, 'safetyLimit': 100}}}]
    node_list = nodes(3, {'role': 'gpu'}, 'g') + nodes(4, {}, 'c')
    sched = SlidingWindowScheduler.build(node_list, policy=policy({'count': 2}, {'fixed': {'initialBatch': 2}}, comps),
                                         order='inventory')
    assert sched.admit() == {'gpu': ['g00'], DEFAULT: ['c00', 'c01']}
    sched.complete('g00', False)
    assert sched.compartment('gpu').stopped and not sched.compartment(DEFAULT).stopped
    assert sched.admit() == {}
    sched.complete('c00', True)
    assert sched.admit() == {DEFAULT: ['c02']}
    sched.complete('c01', True)
    sched.complete('c02', True)
    run_random(sched)
    assert group_sizes(sched) == [2, 2] and sched.not_attempted() == ['g01', 'g02']


def test_halt_stops_admission_but_not_the_nodes_in_flight():
    sched = sliding(6, {'count': 2}, {'fixed': {'initialBatch': 2}})
    sched.admit()
    assert sched.halt('any_errors_fatal') == [DEFAULT]
    assert sched.admit() == {}
    sched.complete('n00', True)
    records = sched.complete('n01', True)
    assert records and records[0]['drain'] is True
    comp = sched.compartment(DEFAULT).rollout
    assert comp.stop_reason == 'any_errors_fatal' and sched.not_attempted() == ['n02', 'n03', 'n04', 'n05']
    assert sched.done


def test_unknown_or_idle_nodes_are_rejected():
    sched = sliding(3, {'count': 1}, {'fixed': {'initialBatch': 1}})
    with pytest.raises(ValueError, match='not part of this rollout'):
        sched.complete('zz', True)
    with pytest.raises(ValueError, match='not in flight'):
        sched.complete('n01', True)


def test_empty_compartments_are_done_at_once():
    comps = [{'name': 'gpu', 'selector': {'matchLabels': {'role': 'gpu'}}, 'budget': {'count': 1}}]
    sched = SlidingWindowScheduler.build(nodes(2), policy=policy({'count': 1}, None, comps))
    assert sched.compartment('gpu').done and sched.compartment('gpu').window == 0
    run_random(sched)
    assert sched.done and group_sizes(sched) == [1, 1]


def test_halt_on_the_batch_scheduler_marks_only_compartments_with_work_left():
    comps = [{'name': 'gpu', 'selector': {'matchLabels': {'role': 'gpu'}}, 'budget': {'count': 1}}]
    sched = RolloutScheduler.build(nodes(1, {'role': 'gpu'}, 'g') + nodes(4, {}, 'c'),
                                   policy=policy({'count': 2}, {'fixed': {'initialBatch': 2}}, comps))
    batches = sched.next_batches()
    sched.record('gpu', batches['gpu'], [])
    assert sched.halt('any_errors_fatal in batch 1') == [DEFAULT]
    default = sched.compartment(DEFAULT)
    assert default.stopped and default.stop_reason == 'any_errors_fatal in batch 1'
    assert not sched.compartment('gpu').stopped
    # the batch in flight can still be recorded; nothing new is handed out
    sched.record(DEFAULT, batches[DEFAULT], [])
    assert sched.next_batches() == {} and sched.not_attempted() == ['c02', 'c03']
    assert sched.halt('again') == []


def test_a_node_deleted_while_in_flight_is_scored_removed():
    sched = sliding(4, {'count': 2}, {'fixed': {'initialBatch': 2, 'failureThreshold': 1}})
    admitted = sched.admit()[DEFAULT]
    assert sched.complete(admitted[0], False, removed=True) == []
    [record] = sched.complete(admitted[1], True)
    assert record['removed'] == [admitted[0]] and record['ok'] == [admitted[1]] and record['failed'] == []
    assert record['failed_batch'] is False
    summary = sched.summary()['compartments'][0]
    assert summary['removed'] == [admitted[0]] and summary['matched'] == 3 and not summary['stopped']
