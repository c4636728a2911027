# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""The node-disruption budget over a fleet, as a node's sequence takes part in it (node_update's ``fleet_budget``).

One Lease in the fleet's coordination cluster (``nodewright-fleet-<fleet>``) holds the slots
(module_utils/planning/fleet_budget.py); every write is guarded by the resourceVersion read, so runs in
different processes, on different machines, never hand out more than ``count`` slots. A node's sequence that
will cordon its node holds a slot from before its cordon until its sequence ends (``FleetSlots.held``), renewed by
a thread while it runs: a run that dies leaves slots that expire after ``slot_expiry`` seconds.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import contextlib
import os
import socket
import threading
import time

from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube as kube_api
from ansible_collections.nodewright.bridge.plugins.module_utils.api import leases
from ansible_collections.nodewright.bridge.plugins.module_utils.planning import fleet_budget

WRITE_ATTEMPTS = 20
POLL_SECONDS = 2.0


class FleetBudgetError(Exception):
    """The fleet budget cannot be used (its cluster unreachable, its Lease not this collection's)."""


class FleetSlots(object):
    """The fleet budget ``fleet`` (at most ``count`` slots) in ``kube``'s cluster, namespace ``namespace``."""

    def __init__(self, kube, namespace, fleet, count, expiry=60, run=None, clock=time.time, sleep=time.sleep):
        self.kube = kube
        self.namespace = namespace
        self.name = fleet_budget.lease_name(fleet)
        self.fleet = fleet
        self.count = count
        self.expiry = max(10, int(expiry))
        self.run = run or '%s/%d/%d' % (socket.gethostname(), os.getpid(), threading.get_ident())
        self.clock = clock
        self.sleep = sleep

    def _body(self, state, lease=None):
        meta = {'name': self.name, 'namespace': self.namespace,
                'labels': {fleet_budget.LABEL_FLEET: self.fleet[:63]},
                'annotations': {fleet_budget.ANNOTATION: fleet_budget.dump_state(state)}}
        if lease is not None:
            old = lease.get('metadata') or {}
            meta['resourceVersion'] = old.get('resourceVersion')
            meta['annotations'] = dict(old.get('annotations') or {}, **meta['annotations'])
        return {'apiVersion': 'coordination.k8s.io/v1', 'kind': 'Lease', 'metadata': meta,
                'spec': {'holderIdentity': '%d of %d slots' % (len(state), self.count),
                         'leaseDurationSeconds': self.expiry}}

    def update(self, change):
        """``change(state)`` applied to the Lease, guarded by its resourceVersion; what ``change`` returns."""
        where = 'the fleet budget (lease %s/%s)' % (self.namespace, self.name)

        def decide(lease):
            text = ((lease or {}).get('metadata') or {}).get('annotations', {}).get(fleet_budget.ANNOTATION)
            try:
                state = fleet_budget.parse_state(text)
            except fleet_budget.FleetBudgetError as exc:
                raise FleetBudgetError('%s: %s' % (where, exc))
            before = fleet_budget.dump_state(state)
            answer = change(state)
            if lease is not None and fleet_budget.dump_state(state) == before:
                return None, answer
            return self._body(state, lease), answer
        try:
            done = leases.guarded_update(self.kube, self.namespace, self.name, decide, WRITE_ATTEMPTS)
        except kube_api.KubeError as exc:
            raise FleetBudgetError('%s: %s' % (where, exc.message))
        if done is None:
            raise FleetBudgetError('%s: still conflicting after %d attempts' % (where, WRITE_ATTEMPTS))
        return done[0]

    def take(self, key, on_wait=None):
        """Wait until ``key`` holds a slot (polling every POLL_SECONDS); ``on_wait(message)`` is told once."""
        told = False
        while not self.update(lambda state: fleet_budget.take(state, key, self.run, self.clock(), self.count, self.expiry)):
            if not told and on_wait is not None:
                on_wait('node %s waits for the fleet budget %s (%d nodes cordoned or rebooting at once)'
                        % (key, self.fleet, self.count))
                told = True
            self.sleep(POLL_SECONDS)

    def renew(self, key):
        self.update(lambda state: fleet_budget.renew(state, [key], self.run, self.clock(), self.expiry))

    def give_back(self, key):
        self.update(lambda state: fleet_budget.give_back(state, key, self.run))

    @contextlib.contextmanager
    def held(self, key, on_wait=None):
        """``key`` holds a slot for the block (taken before, given back after, renewed every third of the expiry)."""
        self.take(key, on_wait)
        done = threading.Event()

        def renew():
            while not done.wait(self.expiry / 3.0):
                try:
                    self.renew(key)
                except FleetBudgetError:
                    pass  # the next renewal tries again; the slot expires only after slot_expiry
        thread = threading.Thread(target=renew, name='fleet-slot-%s' % key, daemon=True)
        thread.start()
        try:
            yield
        finally:
            done.set()
            thread.join()
            try:
                self.give_back(key)
            except FleetBudgetError:
                pass  # it expires


def for_node(options, session=None):
    """The FleetSlots of node_update's ``fleet_budget`` option (its connection is the coordination cluster's)."""
    connection = dict((k, options.get(k)) for k in ('kubeconfig', 'context') if options.get(k))
    client = kube_api.Kube(kube_api.connection_params(connection), session=session)
    return FleetSlots(client, options.get('namespace') or 'skyhook', options['fleet'], options['count'],
                      expiry=options.get('slot_expiry') or 60)
