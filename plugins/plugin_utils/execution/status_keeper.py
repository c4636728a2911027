# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""Keeping a CR's status current while its nodes roll: one status write per burst of node transitions.

Every node transition a step writes (cordon, a stage's in_progress / complete / erroring, an interrupt,
the complete record) changes what the CR's status should say. Writing it after each would cost a
read of the CR and its nodes and a write per transition; the keeper coalesces them: the first
transition after a quiet spell starts a write ``interval`` seconds later, which covers every
transition in between (the status is computed from the nodes then, not from the transitions).

* ``ThreadedKeeper`` (the sequence engine: many nodes in one process): a thread per CR writes;
* ``DeferredKeeper`` (a node_update run in its own worker): one write when the node's sequence ends;
* ``BatchStateKeeper`` (the budgeted strategy): the batch state of each compartment
  (``compartmentStatuses[*].batchState``) when a phase starts and after each scored batch, and
  the nodes a batch starts (``nodePriority``), the parts of the status the nodes cannot tell.

A failed write never fails a node: it is warned about once (a refusal names the missing permission)
and, after a refusal (401, 403), not tried again in this process.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import threading
import time

from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube as kube_api
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import cr_status

# Seconds from the first transition of a burst to the write that covers it.
INTERVAL = 1.0


class _Keeper(object):
    def __init__(self, connection, cr_name):
        self.connection = connection
        self._params = None
        self.cr_name = cr_name
        # the sequence engine's kube.LiveCRs: the CR read from its watch (a conflict reads it afresh)
        self.live_crs = None
        # the kube.KubeSession its client shares with its owner's other clients (None: that of live_crs, else its own)
        self.session = None
        self.refused = False
        self.warnings = []
        self.writes = 0

    def write(self, batch_states=None, picked=()):
        """One sync of the CR's status; never raises (a failure becomes a warning, once)."""
        if self.refused:
            return
        try:
            changed = cr_status.sync(self.kube(), self.cr_name, batch_states=batch_states, picked=picked)[0]
            self.writes += int(changed)
        except kube_api.KubeError as exc:
            if exc.status in (401, 403):
                self.refused = True
            if not self.warnings:
                self.warnings.append(cr_status.refusal_warning(self.cr_name, exc))
        except Exception as exc:  # pylint: disable=broad-except
            # the status is a report of the nodes: whatever it cannot read must not stop a rollout
            if not self.warnings:
                self.warnings.append('the status of %s was not written: %s: %s' % (self.cr_name, type(exc).__name__, exc))

    def params(self):
        """The connection with the K8S_AUTH_* environment applied (kube.connection_params), worked out once."""
        if self._params is None:
            self._params = kube_api.connection_params(self.connection)
        return self._params

    def kube(self):
        return kube_api.Kube(self.params(), live_crs=self.live_crs, session=self.session)


class BatchStateKeeper(_Keeper):
    """The strategy's writer of a CR's batch states (one client for the phase; a write only when they change).

    ``session``: the kube.KubeSession of the strategy's clients in the play (PlayPhases'); None: its own.
    """

    def __init__(self, connection, cr_name, session=None):
        super(BatchStateKeeper, self).__init__(connection, cr_name)
        self.session = session
        self.client = None
        self.written = {}

    def kube(self):
        if self.client is None:
            self.client = kube_api.Kube(self.params(), session=self.session)
        return self.client

    def keep(self, batch_states):
        """Write ``batch_states`` (compartment -> BatchProcessingState) unless this keeper wrote them already."""
        fresh = dict((comp, state) for comp, state in batch_states.items() if self.written.get(comp) != state)
        if fresh:
            self.written.update(fresh)
            self.write(batch_states=fresh)

    def pick(self, names):
        """The nodes ``names`` start now: listed in ``status.nodePriority`` unless they are already."""
        self.write(picked=list(names))


class DeferredKeeper(_Keeper):
    """Marks transitions; ``flush`` writes once if there were any."""

    def __init__(self, connection, cr_name):
        super(DeferredKeeper, self).__init__(connection, cr_name)
        self.dirty = False

    def changed(self):
        self.dirty = True

    def flush(self):
        if self.dirty:
            self.dirty = False
            self.write()


class ThreadedKeeper(_Keeper):
    """A daemon thread writes ``interval`` seconds after the first transition of each burst."""

    def __init__(self, connection, cr_name, interval=INTERVAL, sleep=time.sleep):
        super(ThreadedKeeper, self).__init__(connection, cr_name)
        self.interval = interval
        self.sleep = sleep
        self.lock = threading.Lock()
        self.dirty = False
        self.thread = None

    def changed(self):
        with self.lock:
            self.dirty = True
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(target=self._run, name='status-%s' % self.cr_name, daemon=True)
                self.thread.start()

    def flush(self):
        self.changed()  # the thread writes it; the node's result does not wait for the CR's status

    def _run(self):
        while True:
            self.sleep(self.interval)
            if not self.take():
                return
            self.write()

    def take(self):
        """Claim the pending write: True if there was one (the thread ends when there is none)."""
        with self.lock:
            if not self.dirty:
                self.thread = None
                return False
            self.dirty = False
            return True

    def write_pending(self):
        """Write now what is pending (the engine's last act, so no transition of the play goes unwritten)."""
        if self.take():
            self.write()


class Keepers(object):
    """One keeper per CR in a process (the sequence engine's), made on first use.

    ``session``: the kube.KubeSession of the keepers' clients (a node's sequence in a worker: its steps'); None:
    that of the keeper's live CRs, else the keeper's own.
    """

    def __init__(self, make=ThreadedKeeper, live_crs_for=None, session=None):
        self.make = make
        # connection -> the process's kube.LiveCRs for it (the sequence engine's), or None
        self.live_crs_for = live_crs_for
        self.session = session
        self.lock = threading.Lock()
        self.by_cr = {}

    def get(self, connection, cr_name):
        with self.lock:
            if cr_name not in self.by_cr:
                keeper = self.by_cr[cr_name] = self.make(connection, cr_name)
                if self.live_crs_for is not None:
                    keeper.live_crs = self.live_crs_for(connection)
                if self.session is not None:
                    keeper.session = self.session
            return self.by_cr[cr_name]

    def write_pending(self):
        """Every keeper's pending write, now, one after the other (a play's end: the engine stops)."""
        with self.lock:
            keepers = list(self.by_cr.values())
        for keeper in keepers:
            keeper.write_pending()
