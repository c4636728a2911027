# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""plugin_utils.rollout.admission: the one admission of the strategy and the --limit driver, on fakes.

Batches and sliding windows, the stop rules, maintenance windows and gates on a fake clock, check
mode, and two runs sharing one budget over an in-memory Lease store (the guarded writes of
plugin_utils/budget_lease.py run as they do against a cluster).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube as kube_api
from ansible_collections.nodewright.bridge.plugins.module_utils.planning import rollout_gates
from ansible_collections.nodewright.bridge.plugins.module_utils.planning import shared_budget as budget_rules
from ansible_collections.nodewright.bridge.plugins.module_utils.planning.rollout_scheduler import (
    RolloutScheduler, SlidingWindowScheduler)
from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_model
from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_validation
from ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout.admission import FAILED, OK, Admission, Reporter
from ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout import gate_checks
from ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout import budget_lease
from ansible_collections.nodewright.bridge.tests.unit.plugins.plugin_utils.fake_clock import MONDAY_5PM, FakeClock

DEFAULT = cr_model.DEFAULT_COMPARTMENT


class Heard(Reporter):
    """Every call the admission makes on its reporter, in order."""

    def __init__(self):
        self.calls = []

    def said(self, kind):
        return [c[1:] for c in self.calls if c[0] == kind]


def _recorder(kind):
    def record(self, *args):
        self.calls.append((kind,) + args)
    return record


for _kind in [n for n in vars(Reporter) if not n.startswith('_')]:
    setattr(Heard, _kind, _recorder(_kind))


def _policy(strategy, budget):
    return cr_validation.build_policy({'default': {'budget': budget, 'strategy': strategy}, 'compartments': []})


def _nodes(count):
    return [('n%d' % i, {}) for i in range(1, count + 1)]


def _batches(count=6, strategy=None, budget=None, **kwargs):
    strategy = strategy or {'fixed': {'initialBatch': 2, 'failureThreshold': 1, 'batchThreshold': 100, 'safetyLimit': 100}}
    scheduler = RolloutScheduler.build(_nodes(count), policy=_policy(strategy, budget or {'count': 2}))
    return Admission(scheduler, reporter=Heard(), **kwargs)


def test_a_batch_is_scored_when_its_last_node_ends_and_a_failed_batch_stops_the_compartment():
    admission = _batches()
    assert admission.admit() == {DEFAULT: ['n1', 'n2']}
    assert admission.admit() == {}  # a compartment with a batch in flight gets no second one
    assert admission.finish({'n1': OK}) == []
    assert admission.flying() == ['n1', 'n2'] and admission.busy
    [(comp, record)] = admission.finish({'n2': OK})
    assert comp == DEFAULT and record['number'] == 1 and record['ok'] == ['n1', 'n2'] and not record['failed_batch']
    assert not admission.busy
    assert admission.admit() == {DEFAULT: ['n3', 'n4']}
    [(comp, record)] = admission.finish({'n3': OK, 'n4': FAILED})
    assert record['failed_batch'] and record['stopped']
    assert admission.admit() == {}
    summary = admission.summary()
    assert summary['not_attempted'] == ['n5', 'n6'] and summary['deferred'] is None
    assert admission.policy_stopped()
    assert admission.reporter.said('batch_started') == [(DEFAULT, 1, ['n1', 'n2']), (DEFAULT, 2, ['n3', 'n4'])]
    assert [r['number'] for dummy, r in admission.reporter.said('scored')] == [1, 2]


def test_an_interrupted_batch_is_scored_with_its_unfinished_nodes_failed():
    admission = _batches(strategy={'fixed': {'initialBatch': 2}})
    admission.admit()
    [(dummy, record)] = admission.finish({'n1': OK, 'n2': FAILED}, unfinished=['n2'])
    assert record['ok'] == ['n1'] and record['failed'] == ['n2']


def test_sliding_admits_into_the_room_a_finished_node_leaves():
    scheduler = SlidingWindowScheduler.build(_nodes(4), policy=_policy({'fixed': {'initialBatch': 2}}, {'count': 2}))
    clock = FakeClock()
    admission = Admission(scheduler, sliding=True, reporter=Heard(), clock=clock)
    assert admission.admit() == {DEFAULT: ['n1', 'n2']}
    assert admission.admit() == {}
    assert admission.finish({'n1': OK}) == []
    assert admission.admit() == {DEFAULT: ['n3']}
    assert admission.flying() == ['n2', 'n3']
    [(dummy, record)] = admission.finish({'n2': OK})
    assert record['hosts'] == ['n1', 'n2']
    assert admission.reporter.said('admitted') == [(DEFAULT, ['n1', 'n2'], 2, 2), (DEFAULT, ['n3'], 2, 2)]


def test_halting_stops_what_waits_and_keeps_the_first_reason():
    admission = _batches(strategy={'fixed': {'initialBatch': 2}})
    admission.admit()
    assert admission.halt('any_errors_fatal') == [DEFAULT]
    assert admission.halt('again') == []
    admission.finish({'n1': OK, 'n2': OK})
    assert admission.admit() == {}
    assert admission.scheduler.compartment(DEFAULT).stop_reason == 'any_errors_fatal'


def _windows(action='wait', timeout=3600, start='18:00', end='20:00'):
    return rollout_gates.parse_window_settings({rollout_gates.VAR_WINDOWS: [{'start': start, 'end': end}],
                                                rollout_gates.VAR_WINDOW_ACTION: action, rollout_gates.VAR_WINDOW_TIMEOUT: timeout})


def test_outside_the_windows_for_good_the_rest_is_deferred_not_stopped():
    clock = FakeClock()
    admission = _batches(windows=_windows(action='stop'), clock=clock, sleep=clock.sleep)
    assert admission.admit() == {}
    assert admission.deferred.startswith('outside the maintenance windows')
    assert admission.summary()['deferred'] == admission.deferred
    assert not admission.policy_stopped() and admission.scheduler.stopped
    assert admission.reporter.said('deferred') == [('DEFERRED', admission.deferred, 'the next run')]
    assert clock.sleeps == []


def test_a_batch_waits_for_its_window_and_then_starts():
    clock = FakeClock()
    admission = _batches(windows=_windows(timeout=7200), clock=clock, sleep=clock.sleep)
    assert admission.admit() == {DEFAULT: ['n1', 'n2']}
    assert clock.now == MONDAY_5PM + 3600  # 18:00
    assert admission.reporter.said('waiting')[0][0] is None


class BlockingGates(object):
    """BatchGates over a fake NotReady listing that stays blocked."""

    def __init__(self, clock, not_ready=('x1', 'x2')):
        kube = _ListingKube([{'metadata': {'name': n}, 'status': {'conditions': [{'type': 'Ready', 'status': 'False'}]}}
                             for n in not_ready])
        self.gates = gate_checks.BatchGates(rollout_gates.parse_gates({'max_not_ready': 0, 'timeout': 60, 'poll_interval': 20}),
                                            kube_factory=lambda: kube)


class _ListingKube(object):
    def __init__(self, nodes):
        self.nodes = nodes

    def list_nodes(self, label_selector=None):
        return {'items': list(self.nodes)}


def test_a_gate_blocked_past_its_timeout_stops_the_rollout():
    clock = FakeClock()
    admission = _batches(gates=BlockingGates(clock).gates, clock=clock, sleep=clock.sleep)
    assert admission.admit() == {}
    reason = admission.scheduler.compartment(DEFAULT).stop_reason
    assert reason.startswith('gate max_not_ready: 2 nodes NotReady') and reason.endswith('(waited 60 s)')
    assert admission.policy_stopped() and admission.deferred is None
    assert clock.sleeps == [20, 20, 20]


def test_check_mode_says_what_would_hold_the_rollout_and_waits_for_nothing():
    clock = FakeClock()
    admission = _batches(gates=BlockingGates(clock).gates, clock=clock, sleep=clock.sleep, check_mode=True)
    assert admission.admit() == {DEFAULT: ['n1', 'n2']}
    assert [r[0][:26] for r in admission.reporter.said('would_wait')] == ['gate max_not_ready: 2 node']
    assert clock.sleeps == []


def test_a_sliding_window_with_nodes_in_flight_only_looks_at_the_gates():
    clock = FakeClock()
    scheduler = SlidingWindowScheduler.build(_nodes(4), policy=_policy({'fixed': {'initialBatch': 2}}, {'count': 2}))
    blocked = BlockingGates(clock, not_ready=())
    admission = Admission(scheduler, sliding=True, reporter=Heard(), gates=blocked.gates, clock=clock,
                          sleep=clock.sleep)
    assert admission.admit() == {DEFAULT: ['n1', 'n2']}
    blocked.gates._kube.nodes.append({'metadata': {'name': 'x'}, 'status': {'conditions': [{'type': 'Ready', 'status': 'False'}]}})
    admission.finish({'n1': OK})
    clock.now += 20
    assert admission.admit() == {}  # blocked: nothing more starts while n2 runs, and nothing waits
    assert clock.sleeps == []
    assert 'admitting nothing while gate max_not_ready' in admission.reporter.said('waiting')[-1][1]


def _two_compartment_scheduler():
    """Compartments a (n1-n4) and b (m1, m2), batches of one."""
    compartments = [{'name': name, 'selector': {'matchLabels': {'pool': name}}, 'budget': {'count': 1},
                     'strategy': {'fixed': {'initialBatch': 1}}} for name in ('a', 'b')]
    policy = cr_validation.build_policy({'default': {'budget': {'count': 1}, 'strategy': {'fixed': {'initialBatch': 1}}},
                                         'compartments': compartments})
    nodes = [('n%d' % i, {'pool': 'a'}) for i in range(1, 5)] + [('m%d' % i, {'pool': 'b'}) for i in range(1, 3)]
    return RolloutScheduler.build(nodes, policy=policy)


def _two_compartments(**kwargs):
    return Admission(_two_compartment_scheduler(), reporter=Heard(), **kwargs)


def test_independent_compartments_start_their_next_batch_while_others_run():
    admission = _two_compartments(independent=True)
    assert admission.admit() == {'a': ['n1'], 'b': ['m1']}
    admission.finish({'n1': OK})  # a scored; b's batch still runs
    assert admission.admit() == {'a': ['n2']}
    assert sorted(admission.flying()) == ['m1', 'n2']
    admission.finish({'n2': OK})
    assert admission.admit() == {'a': ['n3']}
    admission.finish({'m1': OK})
    assert admission.admit() == {'b': ['m2']}


def test_independent_compartments_only_look_at_the_gates_while_a_batch_runs():
    clock = FakeClock()
    blocked = BlockingGates(clock, not_ready=())
    admission = _two_compartments(independent=True, gates=blocked.gates, clock=clock, sleep=clock.sleep)
    assert admission.admit() == {'a': ['n1'], 'b': ['m1']}
    blocked.gates._kube.nodes.append({'metadata': {'name': 'x'}, 'status': {'conditions': [{'type': 'Ready', 'status': 'False'}]}})
    admission.finish({'n1': OK})
    clock.now += 20
    assert admission.admit() == {}  # blocked: a's next batch waits, and nothing waits while m1 runs
    assert clock.sleeps == []
    assert 'admitting nothing while gate max_not_ready' in admission.reporter.said('waiting')[-1][1]


# ---------------------------------------------------------------------------- two runs, one shared budget

class LeaseStore(object):
    """The Lease calls of kube.Kube over a dict, with resourceVersion conflicts as the API server answers them."""

    def __init__(self):
        self.leases = {}
        self.version = 0

    def get_lease(self, namespace, name):
        if (namespace, name) not in self.leases:
            raise kube_api.NotFound('leases %s not found' % name, 404)
        return copy.deepcopy(self.leases[(namespace, name)])

    def _store(self, namespace, body):
        self.version += 1
        body = copy.deepcopy(body)
        body['metadata']['resourceVersion'] = str(self.version)
        self.leases[(namespace, body['metadata']['name'])] = body
        return body

    def create_lease(self, namespace, body):
        if (namespace, body['metadata']['name']) in self.leases:
            raise kube_api.Conflict('exists', 409)
        return self._store(namespace, body)

    def replace_lease(self, namespace, body):
        have = self.leases[(namespace, body['metadata']['name'])]
        if body['metadata'].get('resourceVersion') != have['metadata']['resourceVersion']:
            raise kube_api.Conflict('changed', 409)
        return self._store(namespace, body)


def _run(store, run, clock, ending=lambda: False):
    scheduler = RolloutScheduler.build(_nodes(4), policy=_policy({'fixed': {'initialBatch': 2}}, {'count': 2}))
    rules = dict((r.name, budget_rules.Rules.of(r)) for r in scheduler.rollouts)
    budget = budget_lease.SharedBudget(store, 'skyhook', 'gpu', 'batch', rules, key='gpu', run=run, clock=clock,
                                       sleep=clock.sleep)
    return Admission(scheduler, reporter=Heard(), budget=budget, clock=clock, sleep=clock.sleep, ending=ending)


def test_two_runs_share_the_fleets_batches_and_each_skips_what_the_other_finished():
    store, clock = LeaseStore(), FakeClock()
    first = _run(store, 'run-a', clock)
    second = _run(store, 'run-b', clock, ending=lambda: bool(clock.sleeps))  # gives up after one wait, not polling on
    assert first.join() and second.join()
    assert first.admit() == {DEFAULT: ['n1', 'n2']}
    assert second.admit() == {}  # the fleet's batch of 2 is in flight in the other run
    [(comp, message)] = second.reporter.said('waiting')
    assert comp == DEFAULT and message.startswith('the shared budget is in use (2 in flight, runs run-a)')
    first.finish({'n1': OK, 'n2': OK})
    [(dummy, fleet)] = first.reporter.said('fleet_scored')
    assert fleet['number'] == 1 and fleet['ok'] == ['n1', 'n2']
    second.ending = lambda: False
    assert second.admit() == {DEFAULT: ['n3', 'n4']}
    assert second.elsewhere == {'n1': OK, 'n2': OK}
    second.finish({'n3': OK, 'n4': FAILED})
    assert first.admit() == {}  # nothing left: the other run finished it
    assert first.leave() == {'n3': OK, 'n4': FAILED}
    assert second.leave() == {'n1': OK, 'n2': OK}
    assert first.budget is None and first.budget_failure is None


def test_two_runs_with_independent_compartments_share_each_compartments_batch():
    store, clock = LeaseStore(), FakeClock()
    runs = []
    for run in ('run-a', 'run-b'):
        scheduler = _two_compartment_scheduler()
        rules = dict((r.name, budget_rules.Rules.of(r)) for r in scheduler.rollouts)
        budget = budget_lease.SharedBudget(store, 'skyhook', 'gpu', 'batch', rules, key='gpu', run=run, clock=clock,
                                           sleep=clock.sleep)
        runs.append(Admission(scheduler, reporter=Heard(), budget=budget, clock=clock, sleep=clock.sleep,
                              independent=True, ending=lambda: bool(clock.sleeps)))
    first, second = runs
    assert first.join() and second.join()
    assert first.admit() == {'a': ['n1'], 'b': ['m1']}
    assert second.admit() == {}  # each compartment's fleet batch (1) is in flight in the other run
    first.finish({'n1': OK})  # a's fleet batch scored while b's still runs
    clock.sleeps[:] = []
    # the second run, idle, takes a's next fleet batch at once: b's batch in the first run does not hold it
    assert second.admit() == {'a': ['n2']}
    assert second.elsewhere == {'n1': OK}
    # the first run, with m1 in flight, asks again without waiting: a's fleet batch is the second run's
    assert first.admit() == {} and clock.sleeps == []
    second.finish({'n2': OK})
    first.finish({'m1': OK})
    clock.now += budget_lease.POLL_SECONDS
    assert first.admit() == {'a': ['n3'], 'b': ['m2']}
    # never more than one node of a compartment in flight over both runs
    for comp in ('a', 'b'):
        assert max(first.budget.max_in_flight.get(comp, 0), second.budget.max_in_flight.get(comp, 0)) == 1


def test_a_budget_that_cannot_be_written_stops_the_rollout_with_its_reason():
    class Refusing(LeaseStore):
        def get_lease(self, namespace, name):
            raise kube_api.KubeError('get lease: forbidden', 403)
    clock = FakeClock()
    admission = _run(Refusing(), 'run-a', clock)
    assert not admission.join()
    assert admission.budget is None and admission.budget_failure.startswith('shared budget: the shared budget (lease skyhook/')
    assert admission.admit() == {} and admission.policy_stopped()
    assert admission.reporter.said('error') == [(admission.budget_failure,)]


# --------------------------------------------------------------------------- nodes that wait for their protected pods

def _fixed(count, size, **kwargs):
    return _batches(count, strategy={'fixed': {'initialBatch': size}}, budget={'count': size}, independent=True, **kwargs)


def test_a_parked_node_gives_its_slot_to_the_next_node_and_takes_one_again_before_any_fresh_node():
    admission = _fixed(7, 3)
    assert admission.admit() == {DEFAULT: ['n1', 'n2', 'n3']}
    # n1 waits for its training pod: n4 takes its slot in batch 1 at once
    assert admission.park('n1', ['ml/train-0'], '2026-12-06T23:00:00Z') == {DEFAULT: ['n4']}
    assert admission.flying() == ['n2', 'n3', 'n4', 'n1'] and admission.busy
    assert admission.reporter.said('parked') == [(DEFAULT, 'n1', ['ml/train-0'], ['n4'])]
    [(dummy, record)] = admission.finish({'n2': OK, 'n3': OK, 'n4': OK})
    assert record['hosts'] == ['n2', 'n3', 'n4'] and record['parked'] == ['n1'] and record['size'] == 3
    assert not record['failed_batch']
    assert admission.admit() == {DEFAULT: ['n5', 'n6', 'n7']}
    # its pods finished: it waits for the next batch, at its front; its task is told only then
    admission.rejoin('n1')
    assert admission.take_answers() == []
    admission.finish({'n5': OK, 'n6': OK, 'n7': OK})
    assert admission.admit() == {DEFAULT: ['n1']}
    assert admission.take_answers() == [('n1', True, '')]
    [(dummy, record)] = admission.finish({'n1': OK})
    assert record['hosts'] == ['n1'] and record['number'] == 3
    summary = admission.summary()['compartments'][0]
    assert summary['completed'] == 7 and summary['failed'] == 0 and summary['parked'] == []
    assert not admission.busy


def test_selection_prefers_nodes_no_protected_pod_holds_and_takes_a_held_one_only_when_none_is_left():
    held = {'n1', 'n4'}
    looks = []

    def look():
        looks.append(sorted(held))
        return set(held)

    admission = _fixed(6, 3, protected_look=look)
    # n1 runs a training pod: the first batch takes n2, n3 and n5 (n4 is held too)
    assert admission.admit() == {DEFAULT: ['n2', 'n3', 'n5']}
    # n3 parks after all (a pod that opted in by annotation, not seen by the look): its slot goes to n6, not n1 or n4
    assert admission.park('n3', ['ml/late-0']) == {DEFAULT: ['n6']}
    admission.finish({'n2': OK, 'n5': OK, 'n6': OK})
    # n4's job ended; n1's runs on: n4 first, n1 only because nothing else is left (it parks when its drain looks)
    held.discard('n4')
    assert admission.admit() == {DEFAULT: ['n4', 'n1']}
    assert len(looks) == 3  # before each batch and before the parked node's slot was filled
    summary = admission.summary()['compartments'][0]
    assert summary['parked'] == ['n3']


def test_a_node_that_nothing_could_replace_keeps_its_place_in_its_batch_and_no_empty_batch_is_recorded():
    admission = _fixed(2, 1)
    assert admission.admit() == {DEFAULT: ['n1']}
    admission.finish({'n1': OK})
    assert admission.admit() == {DEFAULT: ['n2']}
    # the last node waits for its pods: no node is queued and none parked, so it keeps its slot
    assert admission.park('n2', ['ml/train-0']) == {} and admission.flying() == ['n2']
    assert admission.reporter.said('parked') == []
    admission.rejoin('n2')
    assert admission.take_answers() == [('n2', True, '')]  # it never left its batch: it goes on at once
    [(dummy, record)] = admission.finish({'n2': OK})
    assert record['hosts'] == ['n2'] and 'parked' not in record and record['number'] == 2
    assert admission.summary()['compartments'][0]['completed'] == 2


def test_an_unknown_look_keeps_the_order_and_a_sliding_window_never_looks():
    admission = _fixed(4, 2, protected_look=lambda: None)
    assert admission.admit() == {DEFAULT: ['n1', 'n2']}
    asked = []
    scheduler = SlidingWindowScheduler.build(_nodes(4), policy=_policy({'fixed': {'initialBatch': 2}}, {'count': 2}))
    sliding = Admission(scheduler, sliding=True, reporter=Heard(), protected_look=lambda: asked.append(1) or {'n1'})
    assert sliding.admit() == {DEFAULT: ['n1', 'n2']} and asked == []  # sliding windows keep their slot (no parking)


def test_a_node_that_rejoins_goes_before_fresh_nodes_and_a_batch_whose_nodes_all_parked_is_not_judged():
    admission = _fixed(4, 1)
    assert admission.admit() == {DEFAULT: ['n1']}
    assert admission.park('n1') == {DEFAULT: ['n2']}
    assert admission.park('n2') == {DEFAULT: ['n3']}
    admission.rejoin('n1')
    [(dummy, record)] = admission.finish({'n3': OK})
    assert record['parked'] == ['n1', 'n2'] and record['hosts'] == ['n3']
    assert admission.admit() == {DEFAULT: ['n1']}  # before n4
    assert admission.take_answers() == [('n1', True, '')]
    admission.finish({'n1': OK})
    assert admission.admit() == {DEFAULT: ['n4']}
    # the last fresh node parks too, and nothing is left to take its slot: the batch ends, not judged
    assert admission.park('n4') == {}
    [(dummy, empty)] = admission.reporter.said('scored')[-1:]
    assert empty['hosts'] == [] and empty['parked'] == ['n4'] and not empty['failed_batch']
    rollout = admission.scheduler.compartment(DEFAULT)
    assert rollout.consecutive_failures == 0 and rollout.last_batch_size == 1
    assert admission.busy and not rollout.done  # two nodes still wait for their pods
    admission.rejoin('n2')
    assert admission.admit() == {DEFAULT: ['n2']}


def test_a_stopped_rollout_tells_its_waiting_nodes_once_and_a_parked_node_that_fails_is_counted_without_a_batch():
    admission = _batches(6, strategy={'fixed': {'initialBatch': 2, 'failureThreshold': 1, 'safetyLimit': 100}},
                         independent=True)
    admission.admit()
    assert admission.park('n1') == {DEFAULT: ['n3']}
    admission.finish({'n2': FAILED, 'n3': FAILED})  # a failed batch: the compartment stops
    assert admission.admit() == {}
    [(name, go, reason)] = admission.take_answers()
    assert name == 'n1' and go is False and 'stopped' in reason and 'before node n1 took a batch slot again' in reason
    assert admission.admit() == {} and admission.take_answers() == []  # told once
    [(comp, settled)] = admission.finish({'n1': FAILED})  # its task ends: failed, counted, no batch judged
    assert comp == DEFAULT and settled == {'hosts': ['n1'], 'ok': [], 'failed': ['n1'], 'removed': [], 'settled': True}
    assert admission.scheduler.compartment(DEFAULT).failed == 3 and not admission.busy


def test_a_park_that_comes_after_its_batch_or_outside_batches_changes_nothing_and_its_rejoin_goes_on():
    admission = _fixed(3, 2)
    admission.admit()
    assert admission.park('n3') == {}  # not in a batch in flight
    admission.rejoin('n3')
    assert admission.take_answers() == [('n3', True, '')]
    windows = SlidingWindowScheduler.build(_nodes(2), policy=_policy({'fixed': {'initialBatch': 1}}, {'count': 1}))
    sliding = Admission(windows, sliding=True)
    sliding.admit()
    assert sliding.park('n1') == {} and sliding.flying() == ['n1']


def test_under_a_shared_budget_a_parked_node_frees_its_fleet_slot_for_any_run_and_takes_one_again():
    store, clock = LeaseStore(), FakeClock()
    first = _run(store, 'run-a', clock)
    assert first.join()
    assert first.admit() == {DEFAULT: ['n1', 'n2']}
    assert first.park('n1', ['ml/train-0']) == {DEFAULT: ['n3']}
    state = first.budget.states[DEFAULT]
    assert state['parked'] == {'n1': 'run-a'} and sorted(state['slots']) == ['n2', 'n3']
    assert sorted(state['batch']['nodes']) == ['n2', 'n3']
    first.finish({'n2': OK, 'n3': OK})
    assert first.admit() == {DEFAULT: ['n4']}  # n1 still waits: the fleet's next batch takes the fresh node
    first.rejoin('n1')
    assert first.budget.states[DEFAULT]['parked'] == {}
    first.finish({'n4': OK})
    assert first.admit() == {DEFAULT: ['n1']}
    assert first.take_answers() == [('n1', True, '')]
    first.finish({'n1': OK})
    assert first.leave() == {}
    assert store.leases  # every write went through the Lease
