# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""rollout_scheduler: ceilings, compartment choice, batch sizes and the stop rule (docs/deployment_policy.md)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_model
from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_validation
from ansible_collections.nodewright.bridge.plugins.module_utils.planning.rollout_scheduler import (
    CompartmentRollout, RolloutScheduler, assign_compartment, ceiling)

DEFAULT = cr_model.DEFAULT_COMPARTMENT


def make_policy(default_budget=None, default_strategy=None, compartments=()):
    return cr_validation.build_policy({
        'default': {'budget': default_budget or {'percent': 100}, 'strategy': default_strategy or {'fixed': {}}},
        'compartments': list(compartments)})


def comp(name, labels, budget, strategy=None):
    item = {'name': name, 'selector': {'matchLabels': labels}, 'budget': budget}
    if strategy is not None:
        item['strategy'] = strategy
    return item


def make_nodes(count, labels=None, prefix='n'):
    return [('%s%02d' % (prefix, i), dict(labels or {})) for i in range(count)]


def single(strategy, budget, count, **kwargs):
    """A scheduler whose only populated compartment is the policy default."""
    return RolloutScheduler.build(make_nodes(count), policy=make_policy(budget, strategy), **kwargs)


def planned_sizes(scheduler, name=DEFAULT):
    return dict((c['name'], c['batch_sizes']) for c in scheduler.plan())[name]


def drive(rollout, failures):
    """Run every batch; the i-th batch fails its first failures[i] nodes (0 once the list is used up)."""
    sizes = []
    while True:
        batch = rollout.next_batch()
        if not batch:
            return sizes
        bad = failures[len(sizes)] if len(sizes) < len(failures) else 0
        rollout.record(batch[bad:], batch[:bad])
        sizes.append(len(batch))


def legacy_cr(budget):
    spec = {'interruptionBudget': budget} if budget is not None else {}
    return cr_validation.build_cr({'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'Skyhook',
                                   'metadata': {'name': 'legacy'}, 'spec': spec})


# --------------------------------------------------------------------------- ceilings


@pytest.mark.parametrize('budget,matched,expected', [
    ({'percent': 25}, 10, 2),     # docs table
    ({'percent': 30}, 10, 3),
    ({'percent': 10}, 5, 1),      # rounds down from 0.5, then max(1, 0)
    ({'percent': 1}, 100, 1),
    ({'percent': 30}, 2, 1),      # compartment_test.go
    ({'percent': 57}, 100, 57),   # integer formula (docs/semantics.md difference 2)
    ({'percent': 100}, 7, 7),
    ({'percent': 50}, 0, 0),      # no nodes matched
    ({'count': 3}, 10, 3),
    ({'count': 20}, 5, 20),
    ({'count': 3}, 0, 0),         # docs/semantics.md difference 3
])
def test_ceiling(budget, matched, expected):
    assert ceiling(budget, matched) == expected


# --------------------------------------------------------------------------- compartment choice


DOCS_OVERLAP = make_policy(compartments=[
    comp('us-west', {'region': 'us-west'}, {'count': 20}, {'exponential': {}}),
    comp('production', {'env': 'production'}, {'count': 10}, {'linear': {}}),
    comp('critical', {'priority': 'critical'}, {'count': 3}, {'fixed': {}}),
])


@pytest.mark.parametrize('labels,expected', [
    ({'region': 'us-west', 'env': 'production', 'priority': 'critical'}, 'critical'),
    ({'region': 'us-west', 'env': 'production'}, 'production'),
    ({'region': 'us-west', 'priority': 'critical'}, 'critical'),
    ({'region': 'us-west'}, 'us-west'),
    ({'env': 'production', 'other': 'x'}, 'production'),
    ({'region': 'eu-north'}, DEFAULT),
    ({}, DEFAULT),
])
def test_docs_overlap_example(labels, expected):
    assert assign_compartment(DOCS_OVERLAP.compartments, labels, {}) == expected


def test_docs_overlap_example_through_build():
    nodes = [('all-three', {'region': 'us-west', 'env': 'production', 'priority': 'critical'}),
             ('west-prod', {'region': 'us-west', 'env': 'production'}),
             ('west', {'region': 'us-west'}),
             ('plain', {})]
    scheduler = RolloutScheduler.build(nodes, policy=DOCS_OVERLAP)
    assert dict((n, scheduler.compartment_of(n)) for n, dummy in nodes) == {
        'all-three': 'critical', 'west-prod': 'production', 'west': 'us-west', 'plain': DEFAULT}
    assert [c.name for c in scheduler.compartments] == ['us-west', 'production', 'critical', DEFAULT]


@pytest.mark.parametrize('compartments,counts,expected', [
    # same strategy: the smaller ceiling wins
    ([comp('big', {'a': '1'}, {'count': 5}, {'fixed': {}}), comp('small', {'b': '1'}, {'count': 2}, {'fixed': {}})], {}, 'small'),
    # same strategy and ceiling: the smaller name wins
    ([comp('zeta', {'a': '1'}, {'count': 2}, {'linear': {}}), comp('alpha', {'b': '1'}, {'count': 2}, {'linear': {}})], {},
     'alpha'),
    # percent ceilings are taken over the nodes each selector matches: 50% of 10 = 5 > 50% of 4 = 2
    ([comp('wide', {'a': '1'}, {'percent': 50}, {'fixed': {}}), comp('narrow', {'b': '1'}, {'percent': 50}, {'fixed': {}})],
     {'wide': 10, 'narrow': 4}, 'narrow'),
    ([comp('wide', {'a': '1'}, {'percent': 50}, {'fixed': {}}), comp('narrow', {'b': '1'}, {'percent': 50}, {'fixed': {}})],
     {'wide': 4, 'narrow': 10}, 'wide'),
    # strategy beats ceiling
    ([comp('fixed-big', {'a': '1'}, {'count': 50}, {'fixed': {}}),
      comp('exp-small', {'b': '1'}, {'count': 1}, {'exponential': {}})], {}, 'fixed-big'),
    # a compartment without a strategy ranks after exponential
    ([comp('nostrat', {'a': '1'}, {'count': 1}), comp('exp', {'b': '1'}, {'count': 9}, {'exponential': {}})], {}, 'exp'),
])
def test_tie_breaks(compartments, counts, expected):
    policy = make_policy(compartments=compartments)
    assert assign_compartment(policy.compartments, {'a': '1', 'b': '1'}, counts) == expected


def test_percent_tie_break_counts_come_from_the_nodes():
    policy = make_policy(compartments=[comp('wide', {'a': '1'}, {'percent': 50}, {'fixed': {}}),
                                       comp('narrow', {'b': '1'}, {'percent': 50}, {'fixed': {}})])
    nodes = [('both', {'a': '1', 'b': '1'})] + make_nodes(9, {'a': '1'}, 'a') + make_nodes(3, {'b': '1'}, 'b')
    scheduler = RolloutScheduler.build(nodes, policy=policy)
    assert scheduler.compartment_of('both') == 'narrow'
    assert len(scheduler.compartment('narrow').nodes) == 4
    assert scheduler.compartment('narrow').ceiling == 2    # 50% of the 4 nodes assigned to it


def test_pinned_compartments():
    policy = make_policy(compartments=[comp('canary', {'role': 'canary'}, {'count': 1})])
    nodes = [('x', {'role': 'canary'}), ('y', {})]
    scheduler = RolloutScheduler.build(nodes, policy=policy, compartment_of={'x': DEFAULT, 'y': 'canary'})
    assert scheduler.compartment_of('x') == DEFAULT
    assert scheduler.compartment_of('y') == 'canary'
    with pytest.raises(ValueError, match="compartment 'nope' is not in the policy"):
        RolloutScheduler.build(nodes, policy=policy, compartment_of={'x': 'nope'})


# --------------------------------------------------------------------------- batch progressions


@pytest.mark.parametrize('strategy,budget,count,expected', [
    ({'fixed': {'initialBatch': 3}}, {'count': 10}, 10, [3, 3, 3, 1]),
    ({'fixed': {}}, {'percent': 100}, 3, [1, 1, 1]),
    ({'linear': {'initialBatch': 1, 'delta': 1}}, {'count': 15}, 15, [1, 2, 3, 4, 5]),       # docs: 1 -> 2 -> 3 -> 4 -> 5
    ({'linear': {'initialBatch': 2, 'delta': 2}}, {'count': 100}, 20, [2, 4, 6, 8]),
    ({'exponential': {'initialBatch': 1, 'growthFactor': 2}}, {'count': 31}, 31, [1, 2, 4, 8, 16]),  # docs: 1 -> ... -> 16
    ({'exponential': {'growthFactor': 3}}, {'percent': 100}, 13, [1, 3, 9]),
    # every batch is capped by the budget ceiling
    ({'exponential': {}}, {'count': 5}, 20, [1, 2, 4, 5, 5, 3]),
    ({'linear': {'initialBatch': 1, 'delta': 1}}, {'count': 4}, 10, [1, 2, 3, 4]),
    ({'linear': {}}, {'count': 2}, 7, [1, 2, 2, 2]),
    ({'fixed': {'initialBatch': 5}}, {'count': 2}, 6, [2, 2, 2]),
    ({'exponential': {}}, {'percent': 25}, 20, [1, 2, 4, 5, 5, 3]),
    # and by the nodes left
    ({'exponential': {'initialBatch': 4}}, {'percent': 100}, 5, [4, 1]),
])
def test_progressions_capped(strategy, budget, count, expected):
    assert planned_sizes(single(strategy, budget, count)) == expected


@pytest.mark.parametrize('strategy,budget,count,expected', [
    ({'exponential': {}}, {'count': 5}, 20, [1, 2, 4, 8, 5]),
    ({'linear': {}}, {'count': 2}, 10, [1, 2, 3, 4]),
    ({'fixed': {'initialBatch': 5}}, {'count': 2}, 6, [5, 1]),
])
def test_progressions_uncapped_like_the_operator(strategy, budget, count, expected):
    assert planned_sizes(single(strategy, budget, count, cap_to_ceiling=False)) == expected


def test_compartment_without_strategy_uses_its_ceiling():
    policy = make_policy(compartments=[comp('pool', {'pool': 'x'}, {'percent': 30})])
    scheduler = RolloutScheduler.build(make_nodes(10, {'pool': 'x'}), policy=policy)
    assert planned_sizes(scheduler, 'pool') == [3, 3, 3, 1]
    assert planned_sizes(scheduler, DEFAULT) == []


@pytest.mark.parametrize('budget,count,expected', [
    ({'percent': 33}, 10, [3, 3, 3, 1]),
    ({'count': 4}, 10, [4, 4, 2]),
    (None, 10, [10]),
    ({'percent': 0}, 10, [1] * 10),
    ({'count': 0}, 10, [1] * 10),
    ({'percent': 50}, 1, [1]),
])
def test_legacy_interruption_budget(budget, count, expected):
    scheduler = RolloutScheduler.build(make_nodes(count), legacy_cr=legacy_cr(budget))
    assert [c.name for c in scheduler.compartments] == [DEFAULT]
    assert planned_sizes(scheduler) == expected


def test_no_policy_and_no_cr_runs_everything_at_once():
    assert planned_sizes(RolloutScheduler.build(make_nodes(7))) == [7]
    assert planned_sizes(RolloutScheduler.build([])) == []


def test_plan_does_not_advance_the_scheduler():
    scheduler = single({'fixed': {'initialBatch': 2}}, {'percent': 100}, 4)
    plan = scheduler.plan()
    assert plan[-1]['batches'] == [['n00', 'n01'], ['n02', 'n03']]
    assert scheduler.next_batches() == {DEFAULT: ['n00', 'n01']}


# --------------------------------------------------------------------------- step by step


def rollout(strategy, count=20, budget=None, **kwargs):
    scheduler = single(strategy, budget or {'count': 100}, count, **kwargs)
    return scheduler.compartment(DEFAULT)


@pytest.mark.parametrize('strategy,failures,expected', [
    # shrink after a failed batch while progress < safetyLimit
    ({'linear': {}}, [0, 0, 1], [1, 2, 3, 2, 3, 4, 5]),             # 3 fails at 30% -> 2
    ({'exponential': {}}, [0, 0, 1], [1, 2, 4, 2, 4, 7]),          # 4 fails at 35% -> 2
    ({'exponential': {}}, [1], [1, 1, 2, 4, 8, 4]),                # never below 1
    ({'linear': {'initialBatch': 4, 'delta': 3, 'safetyLimit': 80}}, [0, 4], [4, 7, 4, 5]),   # fails at 55% < 80
    ({'linear': {'initialBatch': 4, 'delta': 3}}, [0, 4], [4, 7, 9]),                         # fails at 55% >= 50
    # no shrink once progress >= safetyLimit
    ({'linear': {'initialBatch': 2}}, [0, 0, 0, 1], [2, 3, 4, 5, 6]),   # 5 fails at 70% -> 6
    ({'exponential': {'initialBatch': 10}}, [1], [10, 10]),             # fails at 50%, not < 50
    ({'linear': {'safetyLimit': 10}}, [0, 1], [1, 2, 3, 4, 5, 5]),      # fails at 15% >= 10
])
def test_batch_sizes_react_to_failures(strategy, failures, expected):
    assert drive(rollout(strategy), failures) == expected


@pytest.mark.parametrize('threshold,failed_batch,next_size', [(50, False, 3), (51, True, 1)])
def test_batch_threshold(threshold, failed_batch, next_size):
    comp_rollout = rollout({'linear': {'initialBatch': 2, 'batchThreshold': threshold}})
    batch = comp_rollout.next_batch()
    record = comp_rollout.record(batch[1:], batch[:1])        # 1 of 2 fails: 50% success
    assert record['failed_batch'] is failed_batch
    assert comp_rollout.consecutive_failures == (1 if failed_batch else 0)
    assert comp_rollout.next_batch_size() == next_size


def test_stop_after_failure_threshold_below_safety_limit():
    comp_rollout = rollout({'fixed': {'failureThreshold': 2}}, count=10)
    assert drive(comp_rollout, [1, 1, 1]) == [1, 1]
    assert comp_rollout.stopped is True
    assert comp_rollout.done is True
    assert comp_rollout.stop_reason == ('2 consecutive failed batches (failureThreshold 2) at 20% progress, '
                                        'below safetyLimit 50%')
    assert comp_rollout.not_attempted() == ['n%02d' % i for i in range(2, 10)]
    assert comp_rollout.next_batch() == [] and comp_rollout.next_batch_size() == 0
    summary = comp_rollout.summary()
    assert summary['stopped'] is True and summary['failed'] == 2 and summary['completed'] == 0
    assert summary['not_attempted'] == comp_rollout.not_attempted()
    assert [b['stopped'] for b in summary['batches']] == [False, True]


def test_failures_past_safety_limit_do_not_stop():
    comp_rollout = rollout({'fixed': {'initialBatch': 2, 'failureThreshold': 1, 'safetyLimit': 30}}, count=10)
    assert drive(comp_rollout, [0, 0, 2, 2, 2]) == [2, 2, 2, 2, 2]
    assert comp_rollout.stopped is False
    assert comp_rollout.failed == 6 and comp_rollout.completed == 4
    assert comp_rollout.not_attempted() == []


def test_consecutive_failures_reset_after_a_good_batch():
    comp_rollout = rollout({'fixed': {'failureThreshold': 2}}, count=10)
    assert drive(comp_rollout, [1, 0, 1, 1]) == [1, 1, 1, 1]
    assert comp_rollout.stopped is True
    assert comp_rollout.progress == 40
    assert [b['failed_batch'] for b in comp_rollout.batches] == [True, False, True, True]


@pytest.mark.parametrize('initial,stopped', [(5, False), (4, True)])
def test_progress_includes_the_batch_just_scored(initial, stopped):
    # 10 nodes, safetyLimit 50, failureThreshold 1: a first batch of 5 failing brings progress to 50%,
    # which is not below safetyLimit, so the rollout goes on; a batch of 4 (40%) stops it.
    comp_rollout = rollout({'fixed': {'initialBatch': initial, 'failureThreshold': 1}}, count=10)
    batch = comp_rollout.next_batch()
    record = comp_rollout.record([], batch)
    assert record['progress'] == initial * 10
    assert comp_rollout.stopped is stopped


@pytest.mark.parametrize('strategy,expected', [
    ({'fixed': {}}, [1] * 10),
    # exponential shrinks to 1 while below safetyLimit, then grows again despite the failures
    ({'exponential': {}}, [1, 1, 1, 1, 1, 2, 3]),
])
def test_no_failure_threshold_never_stops(strategy, expected):
    comp_rollout = rollout(strategy, count=10)
    assert drive(comp_rollout, [99] * 20) == expected
    assert comp_rollout.stopped is False and comp_rollout.failed == 10
    assert comp_rollout.not_attempted() == []


def test_two_compartments_progress_independently():
    policy = make_policy(default_budget={'count': 100}, default_strategy={'fixed': {'initialBatch': 2}},
                         compartments=[comp('canary', {'role': 'canary'}, {'count': 1},
                                            {'fixed': {'failureThreshold': 1}})])
    nodes = make_nodes(3, {'role': 'canary'}, 'c') + make_nodes(4)
    scheduler = RolloutScheduler.build(nodes, policy=policy)
    first = scheduler.next_batches()
    assert first == {'canary': ['c00'], DEFAULT: ['n00', 'n01']}
    assert scheduler.next_batches() == first               # a batch in flight stays the batch
    scheduler.record('canary', [], ['c00'])                 # 1 of 3 failed: 33% < safetyLimit 50
    assert scheduler.compartment('canary').stopped is True
    assert scheduler.next_batches() == {DEFAULT: ['n00', 'n01']}
    scheduler.record(DEFAULT, ['n00', 'n01'], [])
    assert scheduler.next_batches() == {DEFAULT: ['n02', 'n03']}
    scheduler.record(DEFAULT, ['n02', 'n03'], [])
    assert scheduler.next_batches() == {}
    assert scheduler.done is True and scheduler.stopped is True
    assert scheduler.not_attempted() == ['c01', 'c02']
    summary = scheduler.summary()
    assert summary['stopped'] is True and summary['not_attempted'] == ['c01', 'c02']


def test_record_rejects_bad_outcomes():
    comp_rollout = rollout({'fixed': {'initialBatch': 2}}, count=4)
    with pytest.raises(ValueError, match='no batch in flight'):
        comp_rollout.record([], [])
    batch = comp_rollout.next_batch()
    with pytest.raises(ValueError, match='not in the current batch'):
        comp_rollout.record(batch + ['stranger'], [])
    with pytest.raises(ValueError, match='no outcome for'):
        comp_rollout.record(batch[:1], [])
    record = comp_rollout.record(batch, batch[:1])          # in both lists: counts as failed
    assert record['failed'] == batch[:1] and record['ok'] == batch[1:]


def test_done_nodes_are_not_batched_but_count_as_progress():
    done = ['n%02d' % i for i in range(5)]
    scheduler = single({'fixed': {'failureThreshold': 1}}, {'count': 100}, 10, done=done)
    comp_rollout = scheduler.compartment(DEFAULT)
    assert comp_rollout.already_complete == done
    assert comp_rollout.progress == 50
    plan = scheduler.plan()[-1]
    assert plan['already_complete'] == done
    assert plan['batches'] == [['n%02d' % i] for i in range(5, 10)]
    batch = comp_rollout.next_batch()
    assert batch == ['n05']
    comp_rollout.record([], batch)
    assert comp_rollout.progress == 60
    assert comp_rollout.stopped is False      # without the done nodes it would stop at 10%
    fresh = single({'fixed': {'failureThreshold': 1}}, {'count': 100}, 10).compartment(DEFAULT)
    fresh.record([], fresh.next_batch())
    assert fresh.stopped is True


def test_all_done_compartment():
    scheduler = single({'fixed': {}}, {'count': 1}, 3, done=['n00', 'n01', 'n02'])
    assert scheduler.done is True
    assert scheduler.next_batches() == {}
    assert scheduler.compartment(DEFAULT).progress == 100


@pytest.mark.parametrize('order,expected', [
    ('name', [['a'], ['b'], ['c']]),
    ('inventory', [['c'], ['a'], ['b']]),
])
def test_node_order(order, expected):
    nodes = [('c', {}), ('a', {}), ('b', {})]
    scheduler = RolloutScheduler.build(nodes, policy=make_policy({'count': 1}), order=order)
    assert scheduler.plan()[-1]['batches'] == expected


def test_build_errors():
    with pytest.raises(ValueError, match='order must be one of'):
        RolloutScheduler.build(make_nodes(2), order='random')
    with pytest.raises(ValueError, match='duplicate node names: n00'):
        RolloutScheduler.build(make_nodes(2) + [('n00', {})])


def test_compartment_rollout_direct():
    direct = CompartmentRollout('x', ['a', 'b', 'c'], 2, cr_model.Strategy('linear', {}))
    assert drive(direct, []) == [1, 2]
    assert direct.summary()['completed'] == 3


# --------------------------------------------------------------------------- nodes deleted mid-batch


def test_a_node_deleted_in_a_batch_leaves_the_compartment_uncounted():
    # like the operator, which drops a deleted node from its status and batch counts
    comp_rollout = rollout({'linear': {'initialBatch': 2, 'delta': 1, 'failureThreshold': 1}}, count=6)
    batch = comp_rollout.next_batch()
    record = comp_rollout.record(batch[1:], [], removed=batch[:1])
    assert record['removed'] == batch[:1] and record['ok'] == batch[1:] and record['failed'] == []
    assert record['failed_batch'] is False and comp_rollout.stopped is False
    assert comp_rollout.total == 5 and comp_rollout.completed == 1 and comp_rollout.failed == 0
    assert comp_rollout.progress == 20  # 1 of the 5 nodes left
    assert comp_rollout.next_batch_size() == 3  # the batch counted as a good batch of 2
    summary = comp_rollout.summary()
    assert summary['removed'] == batch[:1] and summary['matched'] == 5


def test_a_batch_of_deleted_nodes_only_does_not_move_the_strategy():
    comp_rollout = rollout({'linear': {'initialBatch': 1, 'delta': 1, 'failureThreshold': 1}}, count=4)
    first = comp_rollout.next_batch()
    comp_rollout.record([], [], removed=first)
    assert comp_rollout.stopped is False and comp_rollout.consecutive_failures == 0
    assert comp_rollout.next_batch_size() == 1  # still the initial batch: nothing was judged
    second = comp_rollout.next_batch()
    comp_rollout.record([], second)  # a real failure still stops it (failureThreshold 1)
    assert comp_rollout.stopped is True and comp_rollout.failed == 1 and comp_rollout.removed == first


def test_the_remaining_nodes_of_a_batch_are_judged_without_the_deleted_one():
    comp_rollout = rollout({'fixed': {'initialBatch': 2, 'failureThreshold': 1, 'batchThreshold': 100}}, count=6)
    batch = comp_rollout.next_batch()
    record = comp_rollout.record([], [batch[1]], removed=[batch[0]])
    assert record['failed_batch'] is True and comp_rollout.stopped is True
    assert comp_rollout.failed == 1 and comp_rollout.total == 5


def test_nodes_held_by_protected_pods_wait_at_the_back_of_the_queue_and_a_rejoining_node_stays_first():
    rollout = RolloutScheduler.build([('n%d' % i, {}) for i in range(1, 7)], legacy_cr=None).compartments[0]
    rollout.queue = ['n1', 'n2', 'n3', 'n4', 'n5', 'n6']
    rollout.rejoining = ['n1']
    rollout.prefer_unblocked({'n1', 'n2', 'n4', 'gone'})
    assert rollout.queue == ['n1', 'n3', 'n5', 'n6', 'n2', 'n4']
    rollout.prefer_unblocked(set())
    assert rollout.queue == ['n1', 'n3', 'n5', 'n6', 'n2', 'n4']
