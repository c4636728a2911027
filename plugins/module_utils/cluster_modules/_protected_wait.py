# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""node_drain's wait for the protected pods: recorded on the node, reported, and without a batch slot.

The pods of the CR's ``podNonInterruptLabels`` (and pods that opted in, protected_wait.OPT_IN) must
finish before the drain evicts anything; none is ever evicted. While they run, the node carries its
wait record (protected_wait.key), a Warning Event goes on the node and on the CR when the wait
starts and again past the warning threshold, a Normal one on both when it ends, and, when the budgeted strategy gave the task its
mailbox (``park``), the node's batch slot goes back to its compartment until the pods are gone
(module_utils/api/slot_mailbox.py; docs/semantics.md 34). The wait is watched in slices, so a pause of
the CR, a stopped rollout and the warning threshold are noticed while it lasts.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible_collections.nodewright.bridge.plugins.module_utils.contract import drain_rules
from ansible_collections.nodewright.bridge.plugins.module_utils.model import duration
from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube as kube_api
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import node_conditions
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import node_events
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import protected_wait
from ansible_collections.nodewright.bridge.plugins.module_utils.api import slot_mailbox
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import _runner
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import cr_status

# How often a long wait looks up from its watch: a pause, a stopped rollout, the warning threshold.
SLICE_SECONDS = 15
# How often a node waiting for a slot looks whether its CR was paused meanwhile.
HOLD_LOOK_SECONDS = 5


def _pod_id(pod):
    meta = pod.get('metadata') or {}
    return '%s/%s' % (meta.get('namespace'), meta.get('name'))


class ProtectedWait(object):
    """One wait of ``drain`` (node_drain's Drain) on ``node_name`` for the pods ``selector`` protects."""

    def __init__(self, drain, node_name, selector, clock=time.time):
        self.drain = drain
        self.kube = drain.kube
        self.module = drain.module
        self.params = drain.params
        self.node = node_name
        self.selector = selector
        self.clock = clock
        self.cr_name = self.params['cr_name'] or self.params['hold_for']
        park = self.params.get('park') or {}
        self.slot = slot_mailbox.NodeSlot.of(park)
        self.warn_after = park.get('warn_after')
        self.parked = False
        self.warned = False
        self.started = None
        self.held_looked = 0.0
        self.pods = None  # the node's pods when nothing protected ran at the first look

    def running(self, pods):
        return drain_rules.protected_pods_running(pods, self.selector)

    def run(self):
        """Seconds waited (0.0 when nothing protected ran at the first look); raises KubeError or ModuleFailed."""
        pods = self.kube.pods_on_node(self.node).get('items') or []
        for pod in pods:
            problem = protected_wait.opt_in_problem(pod)
            if problem:
                self.module.warn(problem)
        running = self.running(pods)
        if not running:
            self.pods = pods  # the drain plans from this list: no second one
            known = ((self.drain.node or {}).get('metadata') or {}).get('annotations')
            if self.cr_name and protected_wait.read(known, self.cr_name) is not None:
                self.clear_record()  # a record left by a run stopped mid-wait
            return 0.0
        self.started = self.clock()
        self.begin(running)
        self.watch()
        waited = round(self.clock() - self.started, 3)
        self.end(waited)
        return waited

    def begin(self, running):
        names = [_pod_id(p) for p in running]
        if self.slot is not None and not self.module.check_mode and self.slot.usable():
            self.parked = True
        since = self.write_record(names)
        if self.parked:
            self.slot.park(names, since)
        _runner.node_event(self.module, self.kube, self.node, node_events.protected_wait_started(
            self.node, self.cr_name, names, self.parked))
        self.cr_event(node_events.protected_wait_started(self.node, self.cr_name, names, self.parked), status=True)

    def watch(self):
        timeout = self.params['wait_for_timeout']
        last = {}

        def clear(objects):
            last.clear()
            last.update(objects)
            return not self.running(list(objects.values()))
        while True:
            left = timeout - (self.clock() - self.started)
            if left <= 0:
                running = self.running(list(last.values()))
                raise kube_api.KubeError(
                    'node %s: %d protected pod(s) are still Running or Pending after %ss, nothing was evicted: %s'
                    % (self.node, len(running), timeout, ', '.join(_pod_id(p) for p in running)))
            slice_seconds = min(left, SLICE_SECONDS)
            if self.warn_after is not None and not self.warned:
                # wake up when the warning is due, not at the next slice
                slice_seconds = min(slice_seconds, self.warn_after - (self.clock() - self.started))
            try:
                self.kube.watch_until('pods', clear, max(1, slice_seconds),
                                      field_selector='spec.nodeName=%s' % self.node,
                                      what='the protected pods on node %s to finish' % self.node)
                return
            except kube_api.WaitTimeout as exc:
                last.update(exc.last or {})
            self.look_up(self.running(list(last.values())))

    def look_up(self, running):
        """Between two slices: a pause of the CR, the warning threshold, the record of which pods still run."""
        if self.params['hold_for']:
            self.drain.check_hold(self.node)
        self.write_record([_pod_id(p) for p in running])
        waited = self.clock() - self.started
        if self.warn_after is not None and not self.warned and waited >= self.warn_after:
            self.warned = True
            names = [_pod_id(p) for p in running]
            message = node_events.protected_wait_long(self.node, self.cr_name, names, waited)
            _runner.node_event(self.module, self.kube, self.node, message)
            self.cr_event(message)
            self.module.warn(message.message)

    def end(self, waited):
        """The pods are gone: the slot again (a parked node), then the record goes."""
        if self.parked:
            self.slot.rejoin()
            try:
                self.slot.wait_answer(stop=self.hold_reason)
            except slot_mailbox.Stopped as exc:
                raise _runner.ModuleFailed('node %s: its protected pods finished after %s, but %s; nothing was evicted, '
                                           'the node stays cordoned and the next run resumes it'
                                           % (self.node, duration.format_duration(waited), exc), node=self.node,
                                           changed=False, protected_wait=waited)
        self.clear_record()
        ended = node_events.protected_wait_ended(self.node, self.cr_name, waited)
        _runner.node_event(self.module, self.kube, self.node, ended)
        self.cr_event(ended, status=True)  # both transitions on the CR too, where kubectl describe shows them

    def hold_reason(self):
        """While the node waits for a slot: a pause of the CR ends the task as node_drain's hold does (raises), looked
        at every few seconds (each look reads the node and the CR)."""
        if self.params['hold_for'] and self.clock() - self.held_looked >= HOLD_LOOK_SECONDS:
            self.held_looked = self.clock()
            self.drain.check_hold(self.node)
        return None

    # ------------------------------------------------------------------ the record and the CR's Event

    def write_record(self, names):
        """The node's wait record (since kept from an earlier one); returns its ``since``."""
        after = self._update(lambda annotations: protected_wait.changes(annotations, self.cr_name, names, self.parked))
        found = protected_wait.read(after, self.cr_name) if self.cr_name else None
        return (found or {}).get('since') or protected_wait.now_rfc3339()

    def clear_record(self):
        self._update(lambda annotations: protected_wait.cleared(annotations, self.cr_name))

    def _update(self, change_of):
        """Apply ``change_of(annotations)`` (an annotation patch or None) to the node, its NotReady condition following;
        the node's annotations after it (nothing written without a CR, or in check mode)."""
        if not self.cr_name or self.module.check_mode:
            return {}

        def mutate(node):
            change = change_of((node.get('metadata') or {}).get('annotations') or {})
            return {'metadata': {'annotations': change}} if change else None
        with self.drain.lock:
            after, dummy = self.kube.update_node(self.node, mutate, conditions=self.conditions())
        return ((after or {}).get('metadata') or {}).get('annotations') or {}

    def conditions(self):
        """The CR's node conditions follow the record: NotReady's reason says the node waits on purpose."""
        return node_conditions.writer(self.cr_name, gen=self.kube.generation)

    def cr_event(self, event, status=False):
        """The same words on the CR (the operator's Warning ``Drain`` on the NodeWright), when it is in the cluster;
        ``status``: its status too (the Blocked condition follows the node's record at once, not at the next
        transition of a node). Best effort: a refusal is a warning."""
        if not self.cr_name or self.module.check_mode:
            return
        try:
            doc = self.kube.get_cr(self.cr_name)
        except kube_api.KubeError:
            return  # a CR given only as a file: the node's Event says it
        if event is not None:
            warning = self.kube.cr_event(doc, event.reason, event.message, event_type=event.type)
            if warning:
                self.module.warn(warning)
        if status:
            try:
                cr_status.sync(self.kube, self.cr_name)
            except kube_api.KubeError as exc:
                self.module.warn(cr_status.refusal_warning(self.cr_name, exc))
