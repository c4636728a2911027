# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""One rollout's admission: which nodes may start now, and what a finished node means for the rollout.

The rules are module_utils' (rollout_scheduler: batches, sliding windows and the stop rules;
shared_budget: the fleet's batches; rollout_gates: windows and gates); an ``Admission`` holds
one rollout's state between them, waits (windows, gates, the shared budget), writes the shared
budget's Leases (plugin_utils/budget_lease.py) and the CR's batch states (status_keeper), and
records batches in the rollout report (rollout_state). Both drivers use it, with nothing of
their own on admission:

* the budgeted strategy (plugins/strategy/budgeted.py) shows the stock linear or free loop only
  the hosts ``admitted()`` says are in flight, and tells ``finish()`` when they are done;
* the ``--limit`` driver (limit_driver.py) runs one ``ansible-playbook`` per wave of ``admit()``.

Call order: ``join()`` once (the shared budget), then ``admit()`` and ``finish()`` as nodes
start and end, ``halt()`` / ``defer()`` for stops decided outside the policy, ``leave()`` at
the end. What it says on the way goes to a ``Reporter``; ``ending()`` (a callable given by
the driver) says whether the run is stopping, so that no wait outlives it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout import gate_checks
from ansible_collections.nodewright.bridge.plugins.plugin_utils.reporting import rollout_state
from ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout import budget_lease
from ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout.fleet_share import FleetShare
from ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout.parked_nodes import FAILED, OK, REMOVED, ParkedNodes
# a stop reason that only defers the rest of the rollout (a window, a held CR): not a stopped rollout
DEFERRED_PREFIX = 'deferred: '


class Reporter(object):
    """What an Admission says on the way; this one says nothing. Each driver prints it its own way."""

    def batch_started(self, comp, number, names):
        """Batch mode: ``names`` start as batch ``number`` of ``comp``."""

    def admitted(self, comp, names, in_flight, window):
        """Sliding mode: ``names`` start; ``in_flight`` of the compartment's ``window`` are now running."""

    def scored(self, comp, record):
        """A batch (or a sliding group) of this run was scored: ``record`` as rollout_scheduler returns it."""

    def fleet_scored(self, comp, record):
        """A batch of the fleet (every run of a shared budget) was scored."""

    def joined(self, budget):
        """This run registered in the shared budget."""

    def waiting(self, comp, message):
        """Nothing may start yet (a window, a gate, the shared budget): ``comp`` is None for the whole rollout."""

    def would_wait(self, reason):
        """Check mode: a real run would wait here."""

    def deferred(self, title, reason, until):
        """A clean stop: nothing more starts; the nodes not started wait for ``until``."""

    def warning(self, message):
        """Something the user should know that does not stop the rollout."""

    def error(self, message):
        """Why the rollout stops (the shared budget cannot be used)."""

    def stopped(self, comp, reason):
        """At the end: ``comp`` stopped with ``reason`` (the policy, a gate, a halt or a deferral)."""

    def parked(self, comp, name, pods, replacements):
        """``name`` waits for its protected ``pods`` and gave its slot back; ``replacements`` took it."""

    def rejoining(self, comp, name, waited):
        """``name``'s protected pods finished after ``waited`` seconds: it takes the next free slot of ``comp``."""


class Admission(object):
    """One rollout's admission state over ``scheduler`` (a RolloutScheduler, or a SlidingWindowScheduler when ``sliding``).

    ``budget``: a plugin_utils.rollout.budget_lease.SharedBudget not yet joined, or None; ``windows``:
    module_utils' WindowSettings; ``gates``: plugin_utils.rollout.gate_checks.BatchGates; ``keeper``: a
    status_keeper.BatchStateKeeper writing the CR's batch states and picked nodes, or None;
    ``record``: the rollout_state.Rollout batches are recorded in; ``check_mode``: windows and
    gates are only looked at, nothing waits.
    """

    def __init__(self, scheduler, sliding=False, record=None, reporter=None, budget=None, windows=None, gates=None,
                 keeper=None, check_mode=False, ending=None, clock=time.time, sleep=time.sleep, independent=False,
                 protected_look=None):
        self.scheduler = scheduler
        self.sliding = sliding
        # batch mode: each compartment starts its next batch once its own is scored, while others run (the driver
        # asks on every pass); else in waves (the driver asks only when no batch is in flight)
        self.independent = independent and not sliding
        self.record = record
        self.reporter = reporter or Reporter()
        # the run's part in a shared budget (fleet_share.py; ``budget`` None: a rollout of its own)
        self.share = FleetShare(budget, self.reporter, self.halt)
        self.look = gate_checks.StartLook(windows, gates, clock)  # the windows and gates, and what was seen of them
        self.keeper = keeper
        self.check_mode = check_mode
        self.ending = ending or (lambda: False)
        self.clock = clock
        self.sleep = sleep
        self.active = {}  # batch mode: compartment -> the names of its batch in flight
        self.finished = {}  # batch mode: name -> outcome, for hosts of a batch still in flight
        self.in_flight = {}  # sliding mode: name -> when it was admitted
        self.admit_times = {}  # sliding mode: name -> when it was admitted, kept after it finished (group intervals)
        self.deferred = None  # why the rest waits for a later run (a clean stop, not a failure)
        # batch mode: nodes whose task waits for their protected pods, their slot given back (parked_nodes.py)
        self.parking = ParkedNodes()
        # batch mode: () -> the waiting nodes that would wait for their protected pods if picked now (or None: not
        # known), asked before a batch is picked and before a parked node's slot is filled: they are picked last
        self.protected_look = protected_look

    # what the drivers read of the shared budget (the share holds it)
    @property
    def budget(self):
        return self.share.budget

    @budget.setter
    def budget(self, value):
        self.share.budget = value

    @property
    def budget_failure(self):
        return self.share.failure

    @property
    def elsewhere(self):
        return self.share.elsewhere

    # ------------------------------------------------------------------ what is in flight

    def flying(self):
        """The names this run has in flight."""
        if self.sliding:
            return list(self.in_flight)
        return [n for names in self.active.values() for n in names] + self.parking.names()

    @property
    def busy(self):
        return bool(self.in_flight or self.active or self.parking)

    def fleet_in_flight(self):
        """Nodes the rollout has in flight over every run of a shared budget: the NotReady gate does not count them."""
        return set(self.flying()) | self.share.in_flight()

    def policy_stopped(self):
        """Whether a compartment stopped for a reason other than a deferral (the policy, a failure, a halt)."""
        return any(r.stopped and not (r.stop_reason or '').startswith(DEFERRED_PREFIX) for r in self.scheduler.rollouts)

    # ------------------------------------------------------------------ stops decided outside the policy

    def halt(self, reason):
        """Nothing more starts: every compartment with nodes waiting stops with ``reason``."""
        return self.scheduler.halt(reason)

    def defer(self, reason, title='DEFERRED', until='the next run'):
        """A clean stop: outside the maintenance windows (DEFERRED), or the CR held mid-run (HELD)."""
        if self.deferred is not None:
            return
        self.deferred = reason
        self.halt(DEFERRED_PREFIX + reason)
        self.reporter.deferred(title, reason, until)

    # ------------------------------------------------------------------ the shared budget

    def join(self):
        """Register this run in the shared budget with its nodes; False (and the rollout stopped) if that failed."""
        return self.share.join(self.scheduler.rollouts)

    def budget_failed(self, exc):
        """The shared budget cannot be used: nothing more starts (hosts in flight finish), and the reason is told."""
        self.share.failed(exc)

    def renew(self):
        """Keep this run's slots and registration alive (called from the driver's loop)."""
        self.share.renew()

    def leave(self):
        """End this run's part in the shared budget; the report records it. The hosts other runs finished: name -> outcome."""
        return self.share.leave(self.scheduler.compartment_of, self.record)

    def abandon(self):
        """The run is being stopped (SIGTERM): its unfinished nodes go back to the shared budget at once, as orphans,
        nothing recorded. True if there was a budget to leave."""
        return self.share.abandon()

    def _sync_stop(self, comp):
        """A fleet compartment stopped (by any run's batch): this run's compartment stops with the same reason."""
        reason = self.share.stop_reason(comp)
        if reason is None:
            return False
        self.scheduler.compartment(comp).rollout.stop(reason)
        return True

    def _take(self, comp, waiting):
        """The shared budget's grant to ``comp`` (FleetShare.take), the fleet's stop followed; None when it failed."""
        taken = self.share.take(comp, waiting)
        if taken is not None:
            self._sync_stop(comp.name)
        return taken

    def _release(self, outcomes):
        """Give the slots of finished hosts back with their outcomes; the fleet's batches they complete are scored."""
        for comp, records in self.share.release(outcomes, self.scheduler.compartment_of):
            for record in records:
                self.reporter.fleet_scored(comp, record)
            self._sync_stop(comp)
            if records:
                self.keep_batch_states([comp])

    # ------------------------------------------------------------------ the CR's status

    def keep_batch_states(self, comps=None):
        """The batch state of the compartments (``comps``: only these) in the CR's status.

        The fleet's when a shared budget runs the compartment (any run that scores a fleet batch
        writes it), else this run's; a compartment without a strategy has none.
        """
        if self.keeper is None:
            return
        states = {}
        for rollout in self.scheduler.rollouts:
            if rollout.strategy is None or (comps is not None and rollout.name not in comps):
                continue
            fleet = self.share.batch_state(rollout.name)
            states[rollout.name] = fleet if fleet is not None else rollout.batch_state()
        self._keeper_call(self.keeper.keep, states)

    def _pick(self, names):
        """The hosts start: the CR's status lists them as picked (nodePriority) before their first pod reads it
        (SKYHOOK_NODE_ORDER), as the operator's node picker does; one status write per batch."""
        if self.keeper is not None and names:
            self._keeper_call(self.keeper.pick, names)

    def _keeper_call(self, method, argument):
        known = len(self.keeper.warnings)
        method(argument)
        for warning in self.keeper.warnings[known:]:
            self.reporter.warning(warning)

    # ------------------------------------------------------------------ windows and gates

    def _wait(self, seconds):
        if self.budget is not None:
            self.budget.wait(seconds)  # keeps this run's slots and registration alive
        else:
            self.sleep(seconds)

    def clear_to_start(self):
        """Before a batch (or an admission): the maintenance windows and the gates. False: nothing may start.

        Batch mode (and sliding mode with nothing in flight) waits here, as the settings say; a
        sliding window with hosts in flight only looks (every poll interval) and admits nothing
        while blocked. Outside a window for good, the rest is deferred (a clean stop); a gate that
        stays blocked stops the rollout with its reason.
        """
        look = self.look
        if not look.enabled:
            return True
        if self.check_mode:
            # a check run shows the whole rollout: say what would hold it, wait for nothing
            reason = look.look_once(self.fleet_in_flight)
            if reason:
                self.reporter.would_wait(reason)
            return True
        if self._running():
            # hosts run: nothing waits here, nothing starts while blocked (looked at every poll interval)
            return look.look(self.fleet_in_flight, lambda reason: self.reporter.waiting(
                None, 'admitting nothing while %s (%d host(s) in flight finish first)' % (reason, len(self.flying()))))
        try:
            reason, deferral = gate_checks.wait_before_batch(
                look.windows, look.gates, clock=self.clock, sleep=self._wait,
                on_wait=lambda message: self.reporter.waiting(None, message), rebooting=self.fleet_in_flight)
        except budget_lease.BudgetError as exc:
            self.share.failed(exc)
            return False
        if reason is not None and deferral:
            self.defer(reason)
        elif reason is not None:
            self.halt(reason)
        return reason is None and not self.ending()

    def _running(self):
        """Whether hosts run while admission is asked (sliding, or independent batches): then nothing may wait."""
        return bool(self.in_flight if self.sliding else self.independent and self.active)

    # ------------------------------------------------------------------ admission

    def admit(self):
        """Start what may start now: compartment -> names (only compartments that start something).

        Batch mode: the next batch of every compartment without one in flight (in waves, the strategy and
        the --limit driver ask when no batch is in flight; ``independent``, on every pass, and nothing waits
        while batches run: windows and gates are looked at, the shared budget polled). Sliding mode:
        what the windows have room for.
        """
        if self.ending():
            self.parking.deny(self.scheduler, 'the play is ending')
            return {}
        started = self._admit_sliding() if self.sliding else self._admit_batches()
        self.parking.deny(self.scheduler)
        for comp in sorted(started, key=self.scheduler.index_of):
            names = started[comp]
            self.parking.answer_rejoined(names)
            self._pick(names)
            if self.sliding:
                now = self.clock()
                for name in names:
                    self.in_flight[name] = self.admit_times[name] = now
                window = self.scheduler.compartment(comp)
                self.reporter.admitted(comp, names, len(window.in_flight), window.window)
            else:
                self.active[comp] = list(names)
                number = self.scheduler.compartment(comp).next_number
                if self.record is not None:
                    rollout_state.batch_started(self.record, comp, number, names)
                self.reporter.batch_started(comp, number, names)
        return started

    def _admit_batches(self):
        pending = [c for c in self.scheduler.compartments if c.name not in self.active]
        if any(c.queue and not c.stopped for c in pending) and not self.clear_to_start():
            return {}
        self._prefer_unblocked([c for c in pending if c.queue and not c.stopped])
        # while batches run, compartments the budget refused are asked again on a later pass, not on every one; a
        # compartment that starts asking (its own batch was scored) is asked at once
        granted = self._from_budget(pending, lambda comp: comp.queue, lambda comp, taken: comp.start(*taken),
                                    asking_anew=lambda asking: not asking <= self.share.refused)
        if granted is not None:
            return granted
        batches = {}
        for comp in pending:
            batch = comp.next_batch()
            if batch:
                batches[comp.name] = batch
        return batches

    def _admit_sliding(self):
        if any(c.waiting and not c.stopped for c in self.scheduler.compartments) and not self.clear_to_start():
            return {}
        granted = self._from_budget(self.scheduler.compartments, lambda comp: comp.waiting, self._start_window)
        return granted if granted is not None else self.scheduler.admit()

    def _start_window(self, comp, taken):
        """Sliding mode: the nodes the shared budget granted ``comp`` enter its window (a group it completes is scored)."""
        record = comp.start(*taken)
        if record is not None:
            self._scored(comp.name, record)

    def _from_budget(self, comps, waiting_of, start, asking_anew=lambda asking: False):
        """What the shared budget grants ``comps`` now, ``{comp: names}`` (only compartments granted something), each
        started with ``start(comp, (granted, waiting))``; None without a shared budget (the scheduler alone decides).

        ``waiting_of(comp)``: the compartment's nodes waiting to start. While this run's hosts run, the budget is
        asked at most every POLL_SECONDS (sooner when ``asking_anew(names of the compartments asking)``) and nothing
        waits; with nothing running, a refusal waits for the next poll (reported once per compartment) and asks
        again, until something is granted, no compartment waits, or the run ends.
        """
        while self.budget is not None:
            asking = set(c.name for c in comps if waiting_of(c) and not c.stopped)
            if self._running() and not asking_anew(asking) and self.clock() - self.share.polled < budget_lease.POLL_SECONDS:
                return {}
            self.share.polled = self.clock()
            granted_to, waiting = {}, []
            for comp in comps:
                if comp.stopped or not waiting_of(comp):
                    continue
                taken = self._take(comp, waiting_of(comp))
                if taken is None:
                    return {}
                start(comp, taken)
                if taken[0]:
                    granted_to[comp.name] = taken[0]
                elif waiting_of(comp) and not comp.stopped:
                    waiting.append(comp.name)
            self.share.refused = set(waiting)
            if granted_to or not waiting or self._running() or not self.share.wait(waiting) or self.ending():
                return granted_to
        return None

    # ------------------------------------------------------------------ nodes waiting for their protected pods

    def park(self, name, pods=(), since=None):
        """Batch mode: ``name``, of a batch in flight, waits for its protected pods: it leaves the batch and its slot
        goes to the next node of its compartment's queue. Returns what started in its place, ``{comp: [names]}``
        as ``admit()`` does (the driver shows them to the loop); ``{}`` when nothing did or ``name`` is not in a batch.
        """
        comp = self.scheduler.compartment_of(name)
        names = self.active.get(comp)
        if self.sliding or names is None or name not in names:
            return {}
        rollout = self.scheduler.compartment(comp)
        if self.budget is None and not rollout.slot_has_taker():
            # nothing could take its slot (no node queued, none parked to rejoin): it keeps its place and waits in
            # its batch, as the operator's node does, rather than end the batch empty; its rejoin goes on at once
            return {}
        names.remove(name)
        self.parking.parked[name] = {'comp': comp, 'since': since, 'pods': list(pods), 'at': self.clock()}
        granted = self._replace(rollout, name)
        names.extend(granted)
        self.reporter.parked(comp, name, list(pods), granted)
        if self.record is not None:
            rollout_state.node_parked(self.record, comp, name, list(pods), since, granted)
        started = {comp: granted} if granted else {}
        for started_names in started.values():
            self.parking.answer_rejoined(started_names)
            self._pick(started_names)
        if not names:
            self._score_empty(comp)
        return started

    def _prefer_unblocked(self, comps):
        """``comps``' queues with the nodes held by protected pods now put last (one look for all of them)."""
        if self.protected_look is None or self.sliding or not comps:
            return
        blocked = self.protected_look()
        for comp in comps:
            comp.prefer_unblocked(blocked)

    def _replace(self, rollout, name):
        """The nodes that take the slot ``name`` gave back (at most one; the shared budget's batch decides there)."""
        if rollout.queue and not rollout.stopped:
            self._prefer_unblocked([rollout])
        if self.budget is None:
            return rollout.park(name)
        rollout.park(name, replace=False)
        self.share.call('park', rollout.name, name)
        if self.budget is None:
            return []  # the budget failed
        if rollout.stopped or not rollout.queue:
            return []
        taken = self._take(rollout, rollout.queue)
        if taken is None:
            return []
        granted, queue = taken
        rollout.join_batch(granted, queue)
        return granted

    def _score_empty(self, comp):
        """Every node of the batch parked and none took a slot: the batch ends, not judged (no node was scored)."""
        del self.active[comp]
        record = self.scheduler.record(comp, [], [], [])
        self._scored(comp, record)

    def rejoin(self, name):
        """``name``'s protected pods finished: it takes a slot in its compartment's next batch, before any fresh node."""
        entry = self.parking.parked.pop(name, None)
        if entry is None:
            self.parking.answer(name, True)  # it never left its batch (its park came too late): it goes on
            return
        comp = entry['comp']
        self.parking.rejoining[name] = entry
        rollout = self.scheduler.compartment(comp)
        rollout.rejoin(name)
        if self.budget is not None:
            self.share.call('rejoin', comp, name)
        self.reporter.rejoining(comp, name, self.clock() - entry['at'])
        if self.record is not None:
            rollout_state.node_rejoining(self.record, comp, name)

    def take_answers(self):
        """The replies due to waiting tasks, once each: ``[(name, go, reason)]``."""
        return self.parking.take_answers()

    # ------------------------------------------------------------------ the end of nodes

    def finish(self, outcomes, unfinished=()):
        """Nodes in flight ended: ``outcomes`` name -> ok / failed / removed. The records scored: ``[(comp, record)]``.

        ``unfinished``: those of ``outcomes`` the run gives up on before they finished (an interrupted
        run); their slots in the shared budget stay taken until ``leave()`` (freed then, not scored for
        the fleet). Batch mode scores a compartment's batch once every node of it ended; sliding mode
        scores a group whenever the window's rules say one is complete.
        """
        if self.budget is not None:
            self._release(dict((n, o) for n, o in outcomes.items() if n not in unfinished))
        ended = dict(outcomes)
        # a parked node whose task ended before it took a slot again (a failure, a pause): counted, no batch
        settled = self.parking.settle(ended, self.scheduler, self.record)
        if self.sliding:
            return self._finish_sliding(ended)
        self.finished.update(ended)
        scored = settled
        for comp, names in sorted(self.active.items(), key=lambda item: self.scheduler.index_of(item[0])):
            if not all(n in self.finished for n in names):
                continue
            del self.active[comp]
            results = [self.finished.pop(n) for n in names]
            record = self.scheduler.record(comp, [n for n, r in zip(names, results) if r == OK],
                                           [n for n, r in zip(names, results) if r == FAILED],
                                           [n for n, r in zip(names, results) if r == REMOVED])
            if self._sync_stop(comp):
                record['stopped'] = True  # this run's share of the fleet's batch that stopped the compartment
            self.keep_batch_states([comp])
            self._scored(comp, record)
            scored.append((comp, record))
        return scored

    def _finish_sliding(self, ended):
        scored = []
        for name, outcome in ended.items():
            started = self.in_flight.pop(name)
            comp = self.scheduler.compartment_of(name)
            records = self.scheduler.complete(name, outcome == OK, removed=outcome == REMOVED)
            fleet_stopped = self._sync_stop(comp)
            if records:
                self.keep_batch_states([comp])
            for record in records:
                if fleet_stopped and not record.get('drain'):
                    record['stopped'] = True
                group_start = min([started] + [self.admit_times.get(n, started) for n in record['hosts']])
                self._scored(comp, record, started=group_start)
                scored.append((comp, record))
        return scored

    def _scored(self, comp, record, started=None):
        self.reporter.scored(comp, record)
        if self.record is not None:
            rollout_state.batch_finished(self.record, comp, record, started=started)

    def close(self, ended=None):
        """The end of the rollout: leave the shared budget, record the end in the report, say which compartments stopped.

        Returns ``(summary, elsewhere)``: the summary (``summary()``), and the hosts other runs of a shared
        budget finished (name -> outcome). ``ended``: why the driver's loop ended early, for the report.
        """
        elsewhere = self.leave()
        summary = self.summary()
        if self.record is not None:
            rollout_state.finish_rollout(self.record, summary['compartments'], summary['not_attempted'], ended=ended)
        for comp in summary['compartments']:
            if comp['stopped']:
                self.reporter.stopped(comp['name'], comp['stop_reason'])
        return summary, elsewhere

    def summary(self):
        """The scheduler's summary (rollout_scheduler), with ``deferred`` (None, or why the rest waits)."""
        summary = self.scheduler.summary()
        summary['deferred'] = self.deferred
        return summary
