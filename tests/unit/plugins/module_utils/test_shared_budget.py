# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""shared_budget: the fleet rollout kept in a Lease, taken from by several runs (no I/O)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import random

import pytest

from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_model
from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_validation
from ansible_collections.nodewright.bridge.plugins.module_utils.planning import shared_budget as sb
from ansible_collections.nodewright.bridge.plugins.module_utils.planning.rollout_scheduler import RolloutScheduler

DEFAULT = cr_model.DEFAULT_COMPARTMENT
NODES = ['n%02d' % i for i in range(12)]
EXPIRY = 60


def rules(strategy, budget, count=12):
    policy = cr_validation.build_policy({'default': {'budget': budget, 'strategy': strategy}, 'compartments': []})
    sched = RolloutScheduler.build([(n, {}) for n in NODES[:count]], policy=policy)
    return sb.Rules.of(sched.compartment(DEFAULT))


FIXED_2 = ({'fixed': {'initialBatch': 2}}, {'count': 2})


def joined(mode, runs, nodes=NODES, now=0.0):
    state = sb.new_state(mode)
    for run in runs:
        sb.join(state, run, 'print', nodes, now, EXPIRY)
    return state


def test_lease_name_is_short_stable_and_distinct():
    long_name = 'gpu-driver-' * 10
    a = sb.lease_name(long_name, DEFAULT)
    assert len(a) <= 63 and a == sb.lease_name(long_name, DEFAULT)
    assert a != sb.lease_name(long_name, 'rack-a')
    assert sb.lease_name('Fleet.Driver', 'rack_a').startswith('nodewright-budget-fleet-driver-rack-a-')


def test_three_runs_never_exceed_the_batch_and_run_each_node_once():
    """Three runs over the same 12 nodes, in a random interleaving: never more than 2 in flight."""
    rule = rules(*FIXED_2)
    state = joined('batch', ['a', 'b', 'c'])
    rng = random.Random(7)
    running = {'a': [], 'b': [], 'c': []}
    queues = dict((r, list(NODES)) for r in running)
    ran, most, now = [], 0, 0.0
    while any(queues.values()) or any(running.values()):
        now += 0.1
        run = rng.choice(sorted(running))
        if running[run] and rng.random() < 0.5:
            node = running[run].pop(0)
            sb.finish(state, rule, run, {node: 'ok'})
            continue
        granted, finished, busy = sb.take(state, rule, run, queues[run], now, EXPIRY)
        queues[run] = [n for n in queues[run] if n not in finished and n not in granted]
        running[run].extend(granted)
        ran.extend(granted)
        most = max(most, len(state['slots']))
        assert len(state['slots']) <= 2
    assert sorted(ran) == NODES  # every node once, over all runs
    assert most == 2
    assert state['counters']['completed'] == 12 and state['counters']['scored'] == 6


def test_a_full_batch_takes_nothing_more_until_every_node_of_it_finished():
    rule = rules(*FIXED_2)
    state = joined('batch', ['a', 'b'])
    assert sb.take(state, rule, 'a', ['n00'], 1, EXPIRY)[0] == ['n00']
    assert sb.take(state, rule, 'b', ['n00', 'n01', 'n02'], 1, EXPIRY) == (['n01'], [], ['n00'])
    sb.finish(state, rule, 'b', {'n01': 'ok'})
    # n01's slot is free, but batch 1 (n00, n01) is not finished: the barrier holds for every run
    assert sb.take(state, rule, 'b', ['n02'], 2, EXPIRY)[0] == []
    records = sb.finish(state, rule, 'a', {'n00': 'ok'})
    assert [(r['number'], r['size'], sorted(r['ok'])) for r in records] == [(1, 2, ['n00', 'n01'])]
    assert sb.take(state, rule, 'b', ['n00', 'n02'], 3, EXPIRY) == (['n02'], ['n00'], [])
    assert state['batch']['number'] == 2


def test_the_stop_rule_is_the_fleets():
    """failureThreshold over the fleet's batches: one failure in a 2-node batch at batchThreshold 100."""
    strategy = {'fixed': {'initialBatch': 2, 'batchThreshold': 100, 'failureThreshold': 1, 'safetyLimit': 100}}
    rule = rules(strategy, {'count': 2})
    state = joined('batch', ['a', 'b'])
    sb.take(state, rule, 'a', ['n00'], 1, EXPIRY)
    sb.take(state, rule, 'b', ['n01'], 1, EXPIRY)
    sb.finish(state, rule, 'a', {'n00': 'failed'})
    records = sb.finish(state, rule, 'b', {'n01': 'ok'})
    assert records[0]['failed_batch'] and records[0]['stopped']
    assert 'failureThreshold 1' in state['counters']['stopped']
    assert sb.take(state, rule, 'a', ['n02'], 2, EXPIRY)[0] == []
    assert sb.holder_summary(state, rule) == '0 in flight (stopped), 2 runs'


def test_linear_growth_follows_the_fleets_batches():
    rule = rules({'linear': {'initialBatch': 1, 'delta': 1}}, {'count': 3})
    state = joined('batch', ['a', 'b'])
    sizes = []
    for now in range(1, 6):
        of_a = sb.take(state, rule, 'a', [n for n in NODES if n not in state['done']][:1], now, EXPIRY)[0]
        of_b = sb.take(state, rule, 'b', [n for n in NODES if n not in state['done'] and n not in of_a], now, EXPIRY)[0]
        sizes.append(len(of_a) + len(of_b))
        sb.finish(state, rule, 'a', dict((n, 'ok') for n in of_a))
        sb.finish(state, rule, 'b', dict((n, 'ok') for n in of_b))
    assert sizes[:3] == [1, 2, 3] and max(sizes) == 3  # 1, 2, then the ceiling, over both runs together


def test_a_dead_runs_slots_expire_and_its_node_is_taken_again():
    rule = rules(*FIXED_2)
    state = joined('batch', ['a', 'b'], now=0)
    assert sb.take(state, rule, 'a', ['n00', 'n01'], 1, EXPIRY)[0] == ['n00', 'n01']
    sb.renew(state, 'b', 50, EXPIRY)
    assert sb.take(state, rule, 'b', ['n00', 'n01'], 50, EXPIRY) == ([], [], ['n00', 'n01'])
    # a's heartbeat (until 61) passes; b renewed at 50 (until 110). a's nodes are orphans: still
    # counted in the batch (they may be cordoned), taken before any fresh node, wherever b has them
    sb.expire(state, 62)
    assert state['orphans'] == ['n00', 'n01'] and sorted(state['batch']['nodes']) == ['n00', 'n01']
    assert sb.take(state, rule, 'b', ['n02', 'n03', 'n00', 'n01'], 62, EXPIRY) == (['n00', 'n01'], [], [])
    assert sorted(state['runs']) == ['b'] and state['orphans'] == []
    # a comes back after its expiry: it is told, it does not silently go on
    with pytest.raises(sb.BudgetStateError, match='heartbeat expired'):
        sb.take(state, rule, 'a', ['n02'], 63, EXPIRY)
    assert sb.renew(state, 'a', 63, EXPIRY) is False


def test_the_outcome_of_a_run_that_lost_its_slot_is_not_counted():
    rule = rules(*FIXED_2)
    state = joined('batch', ['a', 'b'])
    sb.take(state, rule, 'a', ['n00'], 1, EXPIRY)
    sb.leave(state, 'a')
    sb.take(state, rule, 'b', ['n00'], 2, EXPIRY)
    sb.finish(state, rule, 'a', {'n00': 'failed'})
    assert state['done'] == {} and state['slots']['n00']['run'] == 'b'


def test_a_fresh_rollout_starts_when_the_last_run_is_gone_and_a_live_one_must_match():
    rule = rules(*FIXED_2)
    state = joined('batch', ['a'])
    sb.take(state, rule, 'a', ['n00', 'n01'], 1, EXPIRY)
    sb.finish(state, rule, 'a', {'n00': 'ok', 'n01': 'ok'})
    with pytest.raises(sb.BudgetMismatch, match='another version of the CR'):
        sb.join(state, 'b', 'other-print', NODES, 2, EXPIRY)
    sb.leave(state, 'a')
    assert sb.join(state, 'b', 'other-print', NODES, 3, EXPIRY) is True
    assert state['done'] == {} and state['counters']['scored'] == 0 and state['fingerprint'] == 'other-print'


def test_removed_nodes_leave_the_fleet_and_the_batch_is_judged_on_the_rest():
    strategy = {'fixed': {'initialBatch': 2, 'batchThreshold': 100, 'failureThreshold': 1, 'safetyLimit': 100}}
    rule = rules(strategy, {'count': 2})
    state = joined('batch', ['a'])
    sb.take(state, rule, 'a', ['n00', 'n01'], 1, EXPIRY)
    record = sb.finish(state, rule, 'a', {'n00': 'removed', 'n01': 'ok'})[0]
    assert record['removed'] == ['n00'] and not record['failed_batch'] and record['total'] == 11
    assert 'n00' not in sb.members(state)


def test_sliding_window_over_two_runs():
    rule = rules({'fixed': {'initialBatch': 3}}, {'count': 3})
    state = joined('sliding', ['a', 'b'])
    assert sb.take(state, rule, 'a', NODES[:2], 1, EXPIRY)[0] == ['n00', 'n01']
    assert sb.take(state, rule, 'b', NODES, 1, EXPIRY)[0] == ['n02']
    assert sb.take(state, rule, 'b', NODES[3:], 1, EXPIRY)[0] == []
    sb.finish(state, rule, 'a', {'n00': 'ok'})
    # no barrier: the freed slot is taken at once
    assert sb.take(state, rule, 'b', NODES[3:], 2, EXPIRY)[0] == ['n03']
    sb.finish(state, rule, 'a', {'n01': 'ok'})
    records = sb.finish(state, rule, 'b', {'n02': 'ok'})
    assert [r['hosts'] for r in records] == [['n00', 'n01', 'n02']]


def test_the_state_round_trips_and_hand_edits_are_named():
    rule = rules(*FIXED_2)
    state = joined('batch', ['a'])
    sb.take(state, rule, 'a', ['n00'], 1, EXPIRY)
    assert sb.parse_state(sb.dump_state(state), 'lease x') == state
    assert sb.holder_summary(state, rule) == '1 in flight (batch 1 of 2), 1 run'
    bad = json.loads(sb.dump_state(state))
    bad['slots']['n00'] = 'all of them'
    with pytest.raises(sb.BudgetStateError, match=r'lease x\.slots\[n00\]: must be \{run, until\}'):
        sb.parse_state(json.dumps(bad), 'lease x')
    with pytest.raises(sb.BudgetStateError, match='is not JSON'):
        sb.parse_state('nonsense{', 'lease x')
    bad = json.loads(sb.dump_state(state))
    bad['counters']['streak'] = -1
    with pytest.raises(sb.BudgetStateError, match=r'counters\.streak: must be a non-negative integer'):
        sb.parse_state(json.dumps(bad), 'lease x')
    bad = json.loads(sb.dump_state(state))
    bad['done'] = {'n01': 'maybe'}
    with pytest.raises(sb.BudgetStateError, match=r'done\[n01\]'):
        sb.parse_state(json.dumps(bad), 'lease x')


def test_an_orphan_no_live_run_has_leaves_the_batch():
    rule = rules(*FIXED_2)
    state = sb.new_state('batch')
    sb.join(state, 'a', 'print', ['n00', 'n01'], 0, EXPIRY)
    sb.join(state, 'b', 'print', ['n02', 'n03'], 0, EXPIRY)
    sb.take(state, rule, 'a', ['n00'], 1, EXPIRY)
    sb.take(state, rule, 'b', ['n02'], 1, EXPIRY)
    sb.renew(state, 'b', 55, EXPIRY)
    sb.expire(state, 62)  # a is gone, and nobody else has n00: the batch no longer waits for it
    assert state['orphans'] == [] and list(state['batch']['nodes']) == ['n02']
    assert sb.take(state, rule, 'b', ['n03'], 62, EXPIRY)[0] == ['n03']  # its place is free again
    assert sb.finish(state, rule, 'b', {'n02': 'ok'}) == []
    records = sb.finish(state, rule, 'b', {'n03': 'ok'})
    assert [r['hosts'] for r in records] == [['n02', 'n03']]


def test_sliding_orphans_hold_their_place_in_the_window():
    rule = rules({'fixed': {'initialBatch': 2}}, {'count': 2})
    state = joined('sliding', ['a', 'b'])
    sb.take(state, rule, 'a', ['n00', 'n01'], 1, EXPIRY)
    sb.leave(state, 'a')  # stopped mid-update: its nodes may still be cordoned
    assert sb.take(state, rule, 'b', ['n05', 'n06', 'n00'], 2, EXPIRY)[0] == ['n00']
    assert sb.take(state, rule, 'b', ['n05', 'n06'], 2, EXPIRY)[0] == []  # n01 still holds the other place


def test_a_run_known_gone_expires_at_once():
    """A run of this machine whose process is gone (the I/O layer checks the pid): its slots are orphans now."""
    rule = rules(*FIXED_2)
    state = sb.new_state('batch')
    sb.join(state, 'a', 'print', NODES, 0, EXPIRY, host='boot/4026531836', pid=4242)
    sb.join(state, 'b', 'print', NODES, 0, EXPIRY, host='other-machine/1', pid=4242)
    sb.take(state, rule, 'a', ['n00', 'n01'], 1, EXPIRY)
    assert sb.local_runs(state, 'boot/4026531836') == {'a': 4242}
    assert sb.local_runs(state, None) == {}
    sb.end_runs(state, ['a'])
    assert sb.take(state, rule, 'b', ['n02', 'n00', 'n01'], 2, EXPIRY)[0] == ['n00', 'n01']  # long before 61
    assert sorted(state['runs']) == ['b']
    assert sb.parse_state(sb.dump_state(state), 'lease x') == state


def test_a_parked_node_frees_its_place_in_the_fleets_batch_and_no_other_run_takes_it_until_it_rejoins():
    rule = rules(*FIXED_2)
    state = joined('batch', ['a', 'b'])
    assert sb.take(state, rule, 'a', ['n00', 'n01'], 1, EXPIRY)[0] == ['n00', 'n01']
    assert sb.park(state, 'a', 'n00') is True
    assert state['parked'] == {'n00': 'a'} and 'n00' not in state['slots'] and sorted(state['batch']['nodes']) == ['n01']
    assert sb.park(state, 'b', 'n01') is False  # not b's to park
    # b may fill the place n00 gave back; n00 itself is busy (a's task waits for its pods)
    assert sb.take(state, rule, 'b', ['n00', 'n02'], 2, EXPIRY) == (['n02'], [], ['n00'])
    records = sb.finish(state, rule, 'a', {'n01': 'ok'}) + sb.finish(state, rule, 'b', {'n02': 'ok'})
    assert [(r['number'], sorted(r['ok'])) for r in records] == [(1, ['n01', 'n02'])]
    sb.rejoin(state, 'a', 'n00')
    assert state['parked'] == {} and state['rejoining'] == {'n00': 'a'}
    # another run that has n00 too never takes it: its task waits for run a's slot
    assert sb.take(state, rule, 'b', ['n00'], 3, EXPIRY) == ([], [], ['n00'])
    assert sb.take(state, rule, 'a', ['n00', 'n03'], 3, EXPIRY)[0] == ['n00', 'n03']
    assert state['rejoining'] == {}
    # a dead run's parked node is free for anyone
    sb.park(state, 'a', 'n03')
    sb.leave(state, 'a')
    assert state['parked'] == {}


def test_a_lease_written_before_parked_nodes_existed_still_reads():
    state = joined('batch', ['a'])
    del state['parked']
    again = sb.parse_state(sb.dump_state(state), 'lease x')
    assert again['parked'] == {}
    with pytest.raises(sb.BudgetStateError, match='parked'):
        sb.parse_state(sb.dump_state(dict(state, parked=['n00'])), 'lease x')


def test_a_slot_granted_between_two_renewals_never_outlives_its_runs_heartbeat():
    rule = rules(*FIXED_2)
    state = joined('batch', ['a'], now=0.0)
    assert sb.take(state, rule, 'a', ['n00', 'n01'], 15.0, EXPIRY)[0] == ['n00', 'n01']
    # a's heartbeat goes on with the slots: all end at 75, so they are freed when their run is gone, not before
    assert state['runs']['a']['until'] == state['slots']['n00']['until'] == 15.0 + EXPIRY
    # a poll that grants nothing (the batch is full) leaves the heartbeat alone: no Lease write for nothing
    assert sb.take(state, rule, 'a', ['n02'], 20.0, EXPIRY)[0] == []
    assert state['runs']['a']['until'] == 15.0 + EXPIRY
    assert sb.expire(state, 70.0) == [] and 'n00' in state['slots']
    assert sorted(sb.expire(state, 76.0)) == [('n00', 'a'), ('n01', 'a')]
