# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The node-disruption budget over a fleet: its rules (module_utils/planning/fleet_budget.py) and its Lease
(plugin_utils/execution/fleet_slots.py) over an in-memory Lease store with the API server's resourceVersion
checks: many nodes of several runs at once never hold more than ``count`` slots; a dead run's slots expire."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import threading
import time

import pytest

from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube as kube_api
from ansible_collections.nodewright.bridge.plugins.module_utils.planning import fleet_budget
from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution import fleet_slots


class LeaseStore(object):
    """get / create / replace of Leases as the API server does them (a stale resourceVersion is a Conflict)."""

    def __init__(self):
        self.leases = {}
        self.version = 0
        self.lock = threading.Lock()
        self.writes = 0

    def get_lease(self, namespace, name):
        with self.lock:
            if (namespace, name) not in self.leases:
                raise kube_api.NotFound('lease %s/%s not found' % (namespace, name))
            return copy.deepcopy(self.leases[(namespace, name)])

    def create_lease(self, namespace, body):
        with self.lock:
            key = (namespace, body['metadata']['name'])
            if key in self.leases:
                raise kube_api.Conflict('exists')
            self._store(key, body)

    def replace_lease(self, namespace, body):
        with self.lock:
            key = (namespace, body['metadata']['name'])
            if self.leases[key]['metadata']['resourceVersion'] != body['metadata'].get('resourceVersion'):
                raise kube_api.Conflict('stale')
            self._store(key, body)

    def _store(self, key, body):
        self.version += 1
        self.writes += 1
        body = copy.deepcopy(body)
        body['metadata']['resourceVersion'] = str(self.version)
        self.leases[key] = body

    def slots(self, namespace='skyhook', name='nodewright-fleet-gpu'):
        return fleet_budget.parse_state(self.leases[(namespace, name)]['metadata']['annotations'][fleet_budget.ANNOTATION])


def test_the_rules():
    state = {}
    assert fleet_budget.take(state, 'a/n1', 'r1', 100.0, 2, 60)
    assert fleet_budget.take(state, 'b/n1', 'r2', 100.0, 2, 60)
    assert not fleet_budget.take(state, 'c/n1', 'r2', 101.0, 2, 60)
    assert fleet_budget.take(state, 'a/n1', 'r1', 101.0, 2, 60) and state['a/n1']['until'] == 161.0  # its own: renewed
    fleet_budget.give_back(state, 'b/n1', 'someone else')
    assert 'b/n1' in state
    fleet_budget.give_back(state, 'b/n1', 'r2')
    assert fleet_budget.take(state, 'c/n1', 'r2', 102.0, 2, 60)
    # r1 died: its slot expires, and the room goes to the next node
    assert fleet_budget.take(state, 'd/n1', 'r3', 161.5, 2, 60) and sorted(state) == ['c/n1', 'd/n1']
    fleet_budget.renew(state, ['c/n1', 'd/n1'], 'r2', 161.8, 60)  # only r2's own
    assert state['c/n1']['until'] == 221.8 and state['d/n1']['until'] == 221.5
    assert fleet_budget.budget_count({'count': 3}, 99) == 3
    assert fleet_budget.budget_count({'percent': 10}, 25) == 2 and fleet_budget.budget_count({'percent': 1}, 5) == 1
    with pytest.raises(fleet_budget.FleetBudgetError):
        fleet_budget.parse_state('{"a/n1": 3}')


def test_the_option_each_run_gets_counts_the_fleets_selected_nodes():
    fleet = {'name': 'gpu', 'budget': {'percent': 50}, 'coordination': 'a', 'budget_namespace': 'skyhook',
             'clusters': {'a': {'kubeconfig': '/k/a', 'context': None}, 'b': {'kubeconfig': None, 'context': 'b'}}}
    plans = [{'item': ['a', 'cr1'], 'summary': {'matched': 4}}, {'item': ['a', 'cr2'], 'summary': {'matched': 6}},
             {'item': ['b', 'cr1'], 'summary': {'matched': 2}}]
    assert fleet_budget.node_option(fleet, plans) == {'fleet': 'gpu', 'count': 4, 'namespace': 'skyhook', 'kubeconfig': '/k/a'}
    assert fleet_budget.node_option(dict(fleet, budget=None), plans) is None
    outside = dict(fleet, coordination={'kubeconfig': '/k/coord', 'context': 'hub'})
    assert fleet_budget.node_option(outside, plans) == {'fleet': 'gpu', 'count': 4, 'namespace': 'skyhook',
                                                        'kubeconfig': '/k/coord', 'context': 'hub'}


def test_many_nodes_of_several_runs_never_hold_more_than_the_budget():
    store = LeaseStore()
    held, most, lock = [0], [0], threading.Lock()

    def node(run, name):
        slots = fleet_slots.FleetSlots(store, 'skyhook', 'gpu', 3, expiry=30, run=run, sleep=lambda s: time.sleep(0.01))
        with slots.held(name):
            with lock:
                held[0] += 1
                most[0] = max(most[0], held[0])
                assert len(store.slots()) <= 3
            time.sleep(0.02)
            with lock:
                held[0] -= 1
    threads = [threading.Thread(target=node, args=('run-%d' % (i % 3), 'c%d/n%d' % (i % 3, i))) for i in range(24)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert most[0] == 3 and store.slots() == {}


def test_a_waiting_node_is_told_once_and_a_dead_runs_slot_expires():
    store = LeaseStore()
    now = [1000.0]
    dead = fleet_slots.FleetSlots(store, 'skyhook', 'gpu', 1, expiry=30, run='dead', clock=lambda: now[0])
    dead.take('a/n1')  # and never gives it back
    told = []

    def sleep(seconds):
        now[0] += seconds
    alive = fleet_slots.FleetSlots(store, 'skyhook', 'gpu', 1, expiry=30, run='alive', clock=lambda: now[0], sleep=sleep)
    alive.take('b/n1', on_wait=told.append)
    assert now[0] >= 1030.0 and list(store.slots()) == ['b/n1']
    assert told == ['node b/n1 waits for the fleet budget gpu (1 nodes cordoned or rebooting at once)']


def test_a_lease_this_collection_did_not_write_is_refused():
    store = LeaseStore()
    store.create_lease('skyhook', {'metadata': {'name': 'nodewright-fleet-gpu', 'annotations': {fleet_budget.ANNOTATION: 'x'}}})
    with pytest.raises(fleet_slots.FleetBudgetError, match='is not JSON'):
        fleet_slots.FleetSlots(store, 'skyhook', 'gpu', 1).take('a/n1')
