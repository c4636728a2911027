# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""The shared budget's I/O: one Lease per rollout and compartment, changed by guarded writes.

The rules are module_utils/planning/shared_budget.py's; this file reads the Lease, asks them for the
next state and writes it back with the resourceVersion it read (a write in between makes the
server answer 409, and the change is worked out again from a fresh read). Used by the
``budgeted`` strategy (batch and sliding modes) and by the ``--limit`` driver.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import binascii
import datetime
import os
import socket
import time


from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube as kube_api
from ansible_collections.nodewright.bridge.plugins.module_utils.api import leases
from ansible_collections.nodewright.bridge.plugins.module_utils.planning import shared_budget
from ansible_collections.nodewright.bridge.plugins.module_utils.api.slot_mailbox import process_alive
from ansible_collections.nodewright.bridge.plugins.module_utils.planning.shared_budget import BudgetMismatch, BudgetStateError

DEFAULT_EXPIRY = 120
MIN_EXPIRY = 10
WRITE_ATTEMPTS = 30
POLL_SECONDS = 1.0


class BudgetError(Exception):
    """The shared budget cannot be used (its Lease holds nonsense, another rollout holds it, the API refuses)."""


def run_identity():
    """This run's name in the Lease: the controller's host name, its pid and a random suffix."""
    return '%s-%d-%s' % (socket.gethostname().split('.')[0][:30], os.getpid(),
                         binascii.hexlify(os.urandom(2)).decode('ascii'))


def host_identity():
    """This machine and process namespace (the boot ID and the pid namespace), or None where they cannot be told.

    A run registered with the same identity is a process of this machine whose pid this process can
    check: a run killed there (SIGKILL, a crash) is seen gone at once instead of at its expiry. Linux only.
    The kernel reuses a pid namespace's inode only once the namespace is gone, so a run whose identity a
    newer namespace took over is gone too: seeing it gone at once is right.
    """
    try:
        with open('/proc/sys/kernel/random/boot_id') as handle:
            boot = handle.read().strip()
        return '%s/%d' % (boot, os.stat('/proc/self/ns/pid').st_ino)
    except (IOError, OSError):
        return None


def _micro_time(epoch):
    return datetime.datetime.utcfromtimestamp(epoch).strftime('%Y-%m-%dT%H:%M:%S.%fZ')


class SharedBudget(object):
    """One run's view of the shared budget of a rollout: a Lease per compartment.

    ``rules``: compartment name -> module_utils.planning.shared_budget.Rules; ``key``: what identifies the
    rollout's content (a CR's version) for the fingerprint.
    """

    def __init__(self, kube, namespace, scope, mode, rules, key=None, expiry=DEFAULT_EXPIRY, run=None,
                 clock=time.time, sleep=time.sleep):
        self.kube = kube
        self.namespace = namespace
        self.scope = scope
        self.mode = mode
        self.rules = dict(rules)
        self.expiry = max(MIN_EXPIRY, int(expiry))
        self.run = run or run_identity()
        self.clock = clock
        self.sleep = sleep
        self.prints = dict((c, shared_budget.fingerprint(key, r.identity(), mode)) for c, r in self.rules.items())
        self.names = dict((c, shared_budget.lease_name(scope, c)) for c in self.rules)
        self.states = {}  # compartment -> the state last read or written
        self.joined = set()
        self.last_renew = 0.0
        self.max_in_flight = {}  # compartment -> the most nodes in flight seen (all runs)
        self.writes = 0
        self.host = host_identity()

    def where(self, comp):
        return 'lease %s/%s' % (self.namespace, self.names[comp])

    # ------------------------------------------------------------------ the guarded write

    def _body(self, comp, state, lease=None):
        now = self.clock()
        meta = {'name': self.names[comp], 'namespace': self.namespace,
                'labels': {shared_budget.LABEL_MANAGED_BY: shared_budget.MANAGED_BY,
                           shared_budget.LABEL_SCOPE: shared_budget.slug(self.scope)[:63].strip('-'),
                           shared_budget.LABEL_COMPARTMENT: shared_budget.slug(comp)[:63].strip('-')},
                'annotations': {shared_budget.ANNOTATION: shared_budget.dump_state(state)}}
        if lease is not None:
            old = lease.get('metadata') or {}
            meta['resourceVersion'] = old.get('resourceVersion')
            meta['labels'] = dict(old.get('labels') or {}, **meta['labels'])
            meta['annotations'] = dict(old.get('annotations') or {}, **meta['annotations'])
        return {'apiVersion': 'coordination.k8s.io/v1', 'kind': 'Lease', 'metadata': meta,
                'spec': {'holderIdentity': shared_budget.holder_summary(state, self.rules[comp]),
                         'leaseDurationSeconds': self.expiry, 'renewTime': _micro_time(now)}}

    def update(self, comp, change):
        """Apply ``change(state)`` (returns what the caller wants back) to the compartment's Lease, guarded."""
        where = self.where(comp)

        def decide(lease):
            state = self._read_state(comp, lease, where)
            before = shared_budget.dump_state(state)
            gone = [r for r, pid in shared_budget.local_runs(state, self.host).items() if r != self.run and not process_alive(pid)]
            shared_budget.end_runs(state, gone)  # killed on this machine: no need to wait for their expiry
            try:
                answer = change(state)
            except (BudgetMismatch, BudgetStateError) as exc:
                raise BudgetError('the shared budget (%s): %s' % (where, exc))
            self.states[comp] = state
            if lease is not None and shared_budget.dump_state(state) == before:
                return None, answer  # nothing changed: no write
            return self._body(comp, state, lease), answer
        try:
            done = leases.guarded_update(self.kube, self.namespace, self.names[comp], decide, WRITE_ATTEMPTS)
        except kube_api.KubeError as exc:
            raise BudgetError('the shared budget (%s): %s' % (where, exc.message))
        if done is None:
            raise BudgetError('the shared budget (%s): still conflicting after %d attempts' % (where, WRITE_ATTEMPTS))
        answer, wrote = done
        if wrote:
            self.writes += 1
            self.max_in_flight[comp] = max(self.max_in_flight.get(comp, 0), len(self.states[comp]['slots']))
        return answer

    def _read_state(self, comp, lease, where):
        """The budget's state in ``lease`` (a new one when there is none); BudgetError when it is not this collection's."""
        if lease is None:
            return shared_budget.new_state(self.mode)
        text = ((lease.get('metadata') or {}).get('annotations') or {}).get(shared_budget.ANNOTATION)
        if text is None:
            raise BudgetError('the shared budget: %s has no annotation %s: it is not a budget this collection '
                              'wrote; delete it (kubectl delete lease -n %s %s) when no run of %s is active'
                              % (where, shared_budget.ANNOTATION, self.namespace, self.names[comp], self.scope))
        try:
            state = shared_budget.parse_state(text, where)
        except BudgetStateError as exc:
            raise BudgetError('the shared budget: %s; it was not written by this collection (edited by hand?): '
                              'delete it (kubectl delete lease -n %s %s) when no run of %s is active'
                              % (exc, self.namespace, self.names[comp], self.scope))
        if state['mode'] != self.mode:
            raise BudgetError('the shared budget: %s is used in %s mode by other runs; this run uses %s mode '
                              '(nodewright_admission must be the same for every run)' % (where, state['mode'], self.mode))
        return state

    # ------------------------------------------------------------------ what a run does

    def join(self, nodes, seeds=None):
        """Register this run with its nodes (``{compartment: [names]}``) in every compartment it has nodes in.

        ``seeds``: compartment -> the counters a fresh fleet rollout starts from (the CR's batch state).
        """
        now = self.clock()
        for comp, names in nodes.items():
            if comp not in self.rules or not names:
                continue
            seed = (seeds or {}).get(comp)
            self.update(comp, lambda s, names=names, seed=seed: shared_budget.join(
                s, self.run, self.prints[comp], names, now, self.expiry, self.host, os.getpid(), seed=seed))
            self.joined.add(comp)
        self.last_renew = now

    def take(self, comp, wanted):
        """``(granted, finished, busy)`` for ``wanted`` (see module_utils.planning.shared_budget.take)."""
        now = self.clock()
        return self.update(comp, lambda s: shared_budget.take(s, self.rules[comp], self.run, wanted, now, self.expiry))

    def finish(self, comp, outcomes):
        """Give back the slots of finished nodes (``{node: outcome}``); the fleet records this scored."""
        if not outcomes:
            return []
        return self.update(comp, lambda s: shared_budget.finish(s, self.rules[comp], self.run, outcomes))

    def park(self, comp, node):
        """``node`` waits for its protected pods: its slot and place in the fleet's batch go back (rules' ``park``)."""
        return self.update(comp, lambda s: shared_budget.park(s, self.run, node))

    def rejoin(self, comp, node):
        """``node``'s pods finished: it may be taken again."""
        return self.update(comp, lambda s: shared_budget.rejoin(s, self.run, node))

    def stopped(self, comp):
        state = self.states.get(comp)
        return state['counters']['stopped'] if state else None

    def batch_state(self, comp):
        """The fleet compartment's BatchProcessingState as last read or written (None before the join)."""
        state = self.states.get(comp)
        return shared_budget.batch_state_of(state) if state else None

    def renew_if_due(self):
        """Renew this run's heartbeat and slots once a third of the expiry has passed (called from the run loop)."""
        now = self.clock()
        if now - self.last_renew < self.expiry / 3.0:
            return
        self.last_renew = now
        for comp in sorted(self.joined):
            alive = self.update(comp, lambda s: shared_budget.renew(s, self.run, now, self.expiry))
            if not alive:
                raise BudgetError('the shared budget (%s): this run\'s heartbeat expired (not renewed for %d s: was '
                                  'the controller suspended?) and its slots were given up' % (self.where(comp), self.expiry))

    def wait(self, seconds=POLL_SECONDS):
        """Sleep between two polls of the budget, renewing as needed."""
        self.sleep(seconds)
        self.renew_if_due()

    def leave(self, quickly=False):
        """End this run's part: registrations and any slot still held go (best effort: expiry covers a failure).
        ``quickly``: a job being stopped (SIGTERM) waits little for an API server that does not answer."""
        if quickly:
            self.kube.outage_timeout = min(self.kube.outage_timeout, 5)
        for comp in sorted(self.joined):
            try:
                self.update(comp, lambda s: shared_budget.leave(s, self.run))
            except BudgetError:
                pass  # the heartbeat's expiry frees what this write could not
        self.joined = set()


def for_rollout(connection, scheduler, mode, scope, key=None, namespace=None, expiry=DEFAULT_EXPIRY, session=None):
    """The shared budget of a rollout over ``scheduler``'s compartments (not joined yet): one Lease each.

    ``connection``: the cluster modules' connection options (extra keys are ignored); ``scope``: the
    budget's name (every run of it shares the batches); ``key``: what identifies the rollout's content
    (a CR's spec digest; default the scope); ``namespace``: the Leases' (default: the operator namespace
    of the cluster's API generation, skyhook or nodewright); ``session``: the kube.KubeSession of the caller's
    clients (None: the budget's client has its own). KubeError when the cluster cannot be asked.
    """
    client = kube_api.Kube(kube_api.connection_params(dict(connection)), session=session)
    rules = dict((r.name, shared_budget.Rules.of(r)) for r in scheduler.rollouts)
    return SharedBudget(client, namespace or client.generation.default_namespace, scope, mode, rules,
                        key=scope if key is None else key, expiry=expiry)
