# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""One run's part in a shared budget, as its Admission (admission.py) holds it.

The shared budget itself (the fleet's batches, the Lease writes) is budget_lease.SharedBudget; this is what one
run keeps of it between the admission's calls: the slots it gave back, the nodes other runs finished, why the
budget could not be used, which waits it has announced, and when it last asked. A ``FleetShare`` without a budget
(``budget`` None) says so to every question: a rollout of its own.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.nodewright.bridge.plugins.module_utils.planning import shared_budget
from ansible_collections.nodewright.bridge.plugins.plugin_utils.reporting import rollout_state
from ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout import budget_lease

OK = 'ok'


class FleetShare(object):
    """``budget`` (a budget_lease.SharedBudget, not yet joined, or None), told to ``reporter``; ``halt(reason)``
    stops the rollout when the budget cannot be used."""

    def __init__(self, budget, reporter, halt):
        self.budget = budget
        self.reporter = reporter
        self.halt = halt
        self.released = set()  # hosts whose slot was given back
        self.elsewhere = {}  # hosts other runs finished: name -> outcome
        self.failure = None  # why the shared budget could not be used (the rollout stopped)
        self.announced = set()  # compartments whose wait for the budget was reported
        self.refused = set()  # compartments the budget granted nothing when last asked (independent batches read it)
        self.polled = 0.0  # when the budget was last asked (while hosts run, it is asked every POLL_SECONDS)

    def failed(self, exc):
        """The shared budget cannot be used: nothing more starts (hosts in flight finish), and the reason is told."""
        reason = 'shared budget: %s' % (getattr(exc, 'message', None) or exc)
        self.reporter.error(reason)
        if self.budget is not None:
            self.budget.joined = set()  # nothing more is written: the slots expire (or the next run clears them)
        self.budget = None
        self.failure = reason
        self.halt(reason)

    def join(self, rollouts):
        """Register the run with the queues of ``rollouts`` (the scheduler's); False (and stopped) if that failed."""
        if self.budget is None:
            return True
        for rollout in rollouts:
            rollout.leave_stops_to_fleet()
        try:
            # a fresh fleet rollout continues the batch state the CR's status had (rollout_config.build_scheduler)
            self.budget.join(dict((r.name, list(r.queue)) for r in rollouts),
                             seeds=dict((r.name, shared_budget.seed_counters(r)) for r in rollouts))
        except budget_lease.BudgetError as exc:
            self.failed(exc)
            return False
        self.reporter.joined(self.budget)
        return True

    def call(self, method, *args):
        """``budget.<method>(*args)``; a BudgetError fails the share (the result is then None)."""
        try:
            return getattr(self.budget, method)(*args)
        except budget_lease.BudgetError as exc:
            self.failed(exc)
            return None

    def renew(self):
        """Keep the run's slots and registration alive (called from the driver's loop)."""
        if self.budget is not None:
            self.call('renew_if_due')

    def leave(self, compartment_of, record):
        """End the run's part; ``record`` (a rollout_state.Rollout, or None) records it. Returns name -> outcome of the
        hosts other runs finished."""
        if self.budget is None:
            return {}
        budget, self.budget = self.budget, None
        budget.leave()
        grouped = {}
        for name in sorted(self.elsewhere):
            grouped.setdefault(compartment_of(name), []).append(name)
        if record is not None:
            rollout_state.shared_budget(record, {
                'run': budget.run, 'leases': [budget.where(c) for c in sorted(budget.names)], 'writes': budget.writes,
                'max_in_flight': dict(budget.max_in_flight), 'elsewhere': dict(self.elsewhere),
                'elsewhere_by_compartment': grouped})
        return dict(self.elsewhere)

    def abandon(self):
        """The run is being stopped (SIGTERM): its unfinished nodes go back at once, as orphans, nothing recorded.
        True if there was a budget to leave."""
        budget, self.budget = self.budget, None
        if budget is None:
            return False
        budget.leave(quickly=True)
        return True

    def stop_reason(self, comp):
        """Why the fleet's compartment ``comp`` stopped (by any run's batch), or None."""
        return self.budget.stopped(comp) if self.budget is not None else None

    def in_flight(self):
        """The nodes in flight over every run (slots and orphans)."""
        names = set()
        if self.budget is not None:
            for state in self.budget.states.values():
                names.update(state['slots'])
                names.update(state.get('orphans') or ())
        return names

    def batch_state(self, comp):
        """The fleet's batch state of ``comp`` (the CR's status), or None without a budget."""
        return self.budget.batch_state(comp) if self.budget is not None else None

    def take(self, comp, waiting):
        """Ask the fleet's batch or window for nodes of ``waiting`` (the run's queue of ``comp``, a scheduler compartment).

        ``(granted, waiting)``: the nodes to start, and the queue without them and without the nodes other
        runs finished (the ones they run go to its back); None when the budget failed.
        """
        answer = self.call('take', comp.name, list(waiting))
        if answer is None:
            return None
        granted, finished, busy = answer
        state = self.budget.states.get(comp.name) or {'done': {}}
        for name in finished:
            self.elsewhere[name] = state['done'].get(name, OK)
        comp.forget(finished)
        gone = set(finished) | set(busy) | set(granted)
        waiting = [n for n in waiting if n not in gone] + [n for n in waiting if n in busy and n not in granted]
        if granted:
            self.announced.discard(comp.name)
        return granted, waiting

    def wait(self, comps):
        """Wait for the budget between two polls (each compartment's wait reported once); False if it failed."""
        for comp in comps:
            if comp not in self.announced:
                self.announced.add(comp)
                state = self.budget.states.get(comp) or {'slots': {}}
                others = sorted(set(s['run'] for s in state['slots'].values() if s['run'] != self.budget.run))
                self.reporter.waiting(comp, 'the shared budget is in use (%d in flight, runs %s); polling every %.0f s' % (
                    len(state['slots']), ', '.join(others) or 'none', budget_lease.POLL_SECONDS))
        self.call('wait')
        return self.budget is not None  # a failed wait dropped the budget

    def release(self, outcomes, compartment_of):
        """Give the slots of finished hosts back with their outcomes (one write per compartment): ``[(comp, records)]``
        of the fleet's batches that scored."""
        by_comp = {}
        for name, outcome in outcomes.items():
            if name not in self.released:
                self.released.add(name)
                by_comp.setdefault(compartment_of(name), {})[name] = outcome
        scored = []
        for comp, given in sorted(by_comp.items()):
            if self.budget is None:
                break
            records = self.call('finish', comp, given)
            if records is None:
                break
            scored.append((comp, records))
        return scored
