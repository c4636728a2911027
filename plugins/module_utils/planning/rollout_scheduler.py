# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""The NodeWright rollout scheduler: compartments, ceilings, batch sizes and the stop rule.

Semantics follow the NodeWright DeploymentPolicy documentation (docs/deployment_policy.md
upstream); where the operator's code differs, the difference is listed in
docs/semantics.md of this collection. In short:

* Each node belongs to exactly one compartment: the matching compartment with the safest
  strategy (fixed > linear > exponential > none), then the smaller ceiling, then the
  smaller name; nodes matching none go to ``__default__``.
* ceiling = ``count``, or ``max(1, matched * percent // 100)`` (integer arithmetic),
  and 0 when the compartment matched no node.
* Batch sizes: fixed keeps ``initialBatch``; linear adds ``delta`` after a good batch and
  subtracts it after a failed one; exponential multiplies / divides by ``growthFactor``.
  Shrinking only happens while progress < ``safetyLimit``. Every batch is capped by the
  compartment's ceiling (the documented contract) and by the nodes left.
* A batch fails when ``ok * 100 // size < batchThreshold``. After ``failureThreshold``
  consecutive failed batches while progress < ``safetyLimit`` the compartment stops.
  Progress is ``processed * 100 // nodes`` where processed counts every node that has
  finished, successfully or not, including the batch just scored.

The scheduler is driven step by step (``next_batches`` -> run -> ``record``) so the
strategy plugin can feed real outcomes back; ``plan`` simulates an all-success run.
No I/O.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from ansible_collections.nodewright.bridge.plugins.module_utils.model import label_selector
from ansible_collections.nodewright.bridge.plugins.module_utils.model.cr_model import DEFAULT_COMPARTMENT, legacy_compartment

STRATEGY_SAFETY = {'fixed': 0, 'linear': 1, 'exponential': 2, None: 3}
NODE_ORDERS = ('name', 'inventory')

# The operator's BatchProcessingState (a CR's status.compartmentStatuses[*].batchState): what a rollout
# keeps of a compartment's batches from one reconcile, and one rollout, to the next.
BATCH_STATE_FIELDS = {'currentBatch': int, 'consecutiveFailures': int, 'completedNodes': int, 'failedNodes': int,
                      'shouldStop': bool, 'lastBatchSize': int, 'lastBatchFailed': bool}


def batch_state(scored, completed, failed, streak, last_size, last_failed, stopped):
    """The BatchProcessingState of a compartment after ``scored`` batches (zero values left out, as Go's omitempty)."""
    state = {'currentBatch': scored + 1, 'consecutiveFailures': streak, 'completedNodes': completed,
             'failedNodes': failed, 'shouldStop': bool(stopped), 'lastBatchSize': last_size,
             'lastBatchFailed': bool(last_failed)}
    return dict((key, value) for key, value in state.items() if value)


def batch_state_errors(state, where):
    """What is wrong with a BatchProcessingState read from a CR's status (someone else may have written it)."""
    if not isinstance(state, dict):
        return ['%s: must be a mapping, got %s' % (where, type(state).__name__)]
    errors = []
    for key, value in sorted(state.items()):
        kind = BATCH_STATE_FIELDS.get(key)
        if kind is None:
            continue  # a field of a newer operator: not ours to judge
        if kind is bool and not isinstance(value, bool):
            errors.append('%s.%s: must be a boolean, got %r' % (where, key, value))
        elif kind is int and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            errors.append('%s.%s: must be a non-negative integer, got %r' % (where, key, value))
    return errors


def ceiling(budget, matched):
    """Maximum nodes in flight for a budget over ``matched`` nodes (0 when none matched)."""
    if matched <= 0:
        return 0
    if budget.get('count') is not None:
        return budget['count']
    return max(1, matched * budget['percent'] // 100)


def assign_compartment(spec_compartments, labels, selector_counts):
    """The compartment a node with ``labels`` belongs to (the operator's overlap rule).

    ``selector_counts`` maps compartment name -> how many of the CR's nodes its selector
    matches; the tie-break compares ceilings over those counts (at least 1).
    """
    best, best_key = DEFAULT_COMPARTMENT, None
    for comp in spec_compartments:
        if not label_selector.matches(comp.selector, labels):
            continue
        kind = comp.strategy.type if comp.strategy else None
        key = (STRATEGY_SAFETY[kind], ceiling(comp.budget, max(1, selector_counts.get(comp.name, 0))), comp.name)
        if best_key is None or key < best_key:
            best, best_key = comp.name, key
    return best


# How a node of a sliding window ended.
OK, FAILED, REMOVED = 'ok', 'failed', 'removed'


class CompartmentRollout(object):
    """The batch state of one compartment, advanced one batch at a time."""

    def __init__(self, name, nodes, ceiling_value, strategy, done=(), cap_to_ceiling=True, selector=None,
                 budget=None):
        self.name = name
        self.nodes = list(nodes)
        self.selector = selector
        self.budget = dict(budget or {})
        self.ceiling = ceiling_value
        self.strategy = strategy
        self.cap_to_ceiling = cap_to_ceiling
        done = set(done)
        self.already_complete = [n for n in self.nodes if n in done]
        self.queue = [n for n in self.nodes if n not in done]
        self.completed = len(self.already_complete)
        self.failed = 0
        self.removed = []  # nodes deleted from the cluster while in a batch: out of the counts
        self.consecutive_failures = 0
        self.last_batch_size = 0
        self.last_batch_failed = False
        self.stopped = False
        self.stop_reason = None
        self.current = None
        # the slots the batch in flight opened with: a node that parks gives its slot to the next node of
        # the queue, so the batch keeps its size (what the record and the growth rules see)
        self.current_slots = 0
        # nodes that left their batch to wait for their protected pods, not counted until they take a slot
        # again (docs/semantics.md 34); the ones of the batch in flight, for its record
        self.parked = []
        self.batch_parked = []
        # parked nodes whose pods finished: at the front of the queue, before any fresh node
        self.rejoining = []
        # batches an earlier rollout of the CR scored, when this one continues its batch state
        # (the CR's status, see resume): the numbers go on from there
        self.batches_before = 0
        self.batches = []  # history: {'number', 'size', 'hosts', 'ok', 'failed', 'failed_batch', 'progress'}
        # False when a shared budget runs the compartment for the fleet (module_utils/planning/shared_budget.py):
        # the fleet's batches, not this run's share of them, decide when it stops
        self.judged = True

    # -- strategy parameters with defaults for a compartment without a strategy
    @property
    def batch_threshold(self):
        return self.strategy.batch_threshold if self.strategy else 100

    @property
    def safety_limit(self):
        return self.strategy.safety_limit if self.strategy else 50

    @property
    def failure_threshold(self):
        return self.strategy.failure_threshold if self.strategy else None

    @property
    def total(self):
        return len(self.nodes)

    @property
    def progress(self):
        """Percent of the compartment's nodes processed (complete or failed)."""
        if not self.nodes:
            return 100
        return (self.completed + self.failed) * 100 // len(self.nodes)

    @property
    def done(self):
        return self.stopped or (not self.queue and self.current is None and not self.parked)

    @property
    def in_flight(self):
        return list(self.current or [])

    @property
    def next_number(self):
        """The number of the next batch (the operator's currentBatch)."""
        return self.batches_before + len(self.batches) + 1

    def resume(self, state, cr_name=None):
        """Continue from a persisted BatchProcessingState, as the operator's compartment does on each reconcile.

        The batch number, the last batch's size and outcome (what the next size grows or shrinks
        from) and the failure streak carry over; ``shouldStop`` keeps the compartment stopped until
        ``kubectl skyhook deployment-policy reset`` (or a completion with resetBatchStateOnCompletion).
        The completed and failed counts are not taken: they are recounted from the nodes.
        """
        self.batches_before = max(0, (state.get('currentBatch') or 1) - 1)
        self.consecutive_failures = state.get('consecutiveFailures') or 0
        self.last_batch_size = state.get('lastBatchSize') or 0
        self.last_batch_failed = bool(state.get('lastBatchFailed'))
        if state.get('shouldStop') and self.queue:
            self.stopped = True
            self.stop_reason = ('stopped by an earlier rollout (the CR\'s status.compartmentStatuses.%s.batchState.'
                                'shouldStop); `kubectl skyhook deployment-policy reset %s` starts it again'
                                % (self.name, cr_name or '<cr>'))

    @property
    def rollout(self):
        """The compartment's batch state: itself (a SlidingCompartment's is the rollout it wraps)."""
        return self

    def stop(self, reason):
        """Stop the compartment with ``reason``; one already stopped keeps its first reason. True if this call stopped it."""
        if self.stopped:
            return False
        self.stopped, self.stop_reason = True, reason
        return True

    def leave_stops_to_fleet(self):
        """A shared budget runs the compartment (module_utils/planning/shared_budget.py): the fleet's batches, not this
        run's share of them, decide when it stops."""
        self.judged = False

    def start(self, batch, queue):
        """Put ``batch`` (what the fleet's batch granted this run, maybe nothing) in flight; ``queue``: the nodes still waiting."""
        if batch:
            if self.current is not None:
                raise ValueError('compartment %s has a batch in flight' % self.name)
            self.current = list(batch)
            self.current_slots = len(batch)
        self.queue = list(queue)
        self._taken(batch)

    def forget(self, nodes):
        """Take ``nodes`` (finished by other runs of a shared budget) out of the queue."""
        gone = set(nodes)
        self.queue = [n for n in self.queue if n not in gone]

    def batch_state(self):
        """This compartment's BatchProcessingState, for the CR's status."""
        return batch_state(self.batches_before + len(self.batches), self.completed, self.failed,
                           self.consecutive_failures, self.last_batch_size, self.last_batch_failed, self.stopped)

    def next_batch_size(self):
        """Size of the next batch from the outcomes so far (0 when nothing is left)."""
        remaining = len(self.queue)
        if remaining == 0 or self.stopped:
            return 0
        strategy = self.strategy
        shrink = self.last_batch_failed and self.progress < self.safety_limit
        if strategy is None:
            size = self.ceiling
        elif strategy.type == 'fixed' or self.last_batch_size == 0:
            size = strategy.initial_batch
        elif strategy.type == 'linear':
            size = max(1, self.last_batch_size - strategy.delta) if shrink else self.last_batch_size + strategy.delta
        else:
            if shrink:
                size = max(1, self.last_batch_size // strategy.growth_factor)
            else:
                size = min(self.last_batch_size * strategy.growth_factor, len(self.nodes))
        if self.cap_to_ceiling and self.ceiling > 0:
            size = min(size, self.ceiling)
        return max(1, min(size, remaining))

    def next_batch(self):
        """The batch to run now: the one in flight, or a new one (``[]`` when done or stopped)."""
        if self.current is not None:
            return list(self.current)
        size = self.next_batch_size()
        if size == 0:
            return []
        self.current, self.queue = self.queue[:size], self.queue[size:]
        self.current_slots = size
        self._taken(self.current)
        return list(self.current)

    def _taken(self, names):
        taken = set(names or ())
        self.rejoining = [n for n in self.rejoining if n not in taken]

    # -- nodes waiting for their protected pods (docs/semantics.md 34)

    def park(self, node, replace=True):
        """``node`` of the batch in flight waits for its protected pods: it leaves the batch, not counted, and
        (``replace``) its slot goes to the next node of the queue. Returns the nodes that took it ([] or one)."""
        if self.current is None or node not in self.current:
            raise ValueError('compartment %s: %s is not in the batch in flight' % (self.name, node))
        self.current.remove(node)
        self.parked.append(node)
        self.batch_parked.append(node)
        taken = self.queue[:1] if replace and not self.stopped else []
        self.join_batch(taken, self.queue[len(taken):])
        return taken

    def slot_has_taker(self):
        """Whether a slot given back now could be used: a node waits in the queue, or another parked node may rejoin
        and take it. Without either, parking would only end the batch empty (docs/semantics.md 34)."""
        return not self.stopped and bool(self.queue or self.parked)

    def join_batch(self, names, queue):
        """``names`` take the slots parked nodes gave back in the batch in flight; ``queue``: the nodes still waiting."""
        self.current.extend(names)
        self.queue = list(queue)
        self._taken(names)

    def prefer_unblocked(self, blocked):
        """The queue reordered so that ``blocked`` nodes (they would wait for their protected pods if picked now) come
        after every other waiting node, each group in its order; the rejoining nodes stay first (their pods are gone).
        Selection prefers unblocked nodes (docs/semantics.md 34); a blocked node is still picked when no other is left."""
        blocked = set(blocked or ())
        if not blocked.intersection(self.queue):
            return
        rejoining = set(self.rejoining)
        head = [n for n in self.queue if n in rejoining]
        rest = [n for n in self.queue if n not in rejoining]
        self.queue = head + [n for n in rest if n not in blocked] + [n for n in rest if n in blocked]

    def rejoin(self, node):
        """A parked node's pods finished: it goes to the front of the queue (after the nodes that rejoined before it)."""
        if node not in self.parked:
            raise ValueError('compartment %s: %s is not parked' % (self.name, node))
        self.parked.remove(node)
        self.queue.insert(len(self.rejoining), node)
        self.rejoining.append(node)

    def settle_parked(self, node, outcome):
        """A parked node ended before it took a slot again (``ok``, ``failed`` or ``removed``): counted, no batch judged."""
        for place in (self.parked, self.rejoining, self.queue):
            if node in place:
                place.remove(node)
        if outcome == 'removed':
            self.removed.append(node)
            self.nodes = [n for n in self.nodes if n != node]
        elif outcome == 'ok':
            self.completed += 1
        else:
            self.failed += 1

    def record(self, ok, failed, removed=()):
        """Score the batch in flight. Every node of the batch must be in ``ok``, ``failed`` or ``removed``.

        ``removed``: nodes deleted from the cluster while in the batch. As the operator drops a
        deleted node from its compartment (its status and batch counts), they leave the compartment:
        not counted ok or failed, not in its total, and the batch is judged on the nodes that stayed
        (a batch of removed nodes only is no batch: the strategy's growth and streak do not move).
        """
        if self.current is None:
            raise ValueError('compartment %s has no batch in flight' % self.name)
        ok, failed, removed = set(ok), set(failed), set(removed)
        batch = self.current
        unknown = (ok | failed | removed) - set(batch)
        if unknown:
            raise ValueError('compartment %s: %s not in the current batch %s' % (self.name, sorted(unknown), batch))
        missing = [n for n in batch if n not in ok and n not in failed and n not in removed]
        if missing:
            raise ValueError('compartment %s: no outcome for %s' % (self.name, missing))
        removed_nodes = [n for n in batch if n in removed]
        failed_nodes = [n for n in batch if n in failed and n not in removed]
        ok_nodes = [n for n in batch if n in ok and n not in failed and n not in removed]
        size = max(self.current_slots, len(batch))
        self.removed.extend(removed_nodes)
        self.nodes = [n for n in self.nodes if n not in removed]
        self.completed += len(ok_nodes)
        self.failed += len(failed_nodes)
        scored = len(ok_nodes) + len(failed_nodes)
        batch_failed = bool(scored) and len(ok_nodes) * 100 // scored < self.batch_threshold
        progress = self.progress
        if scored and self.judged:
            self._judge(batch_failed, progress)
            self.last_batch_size = size
            self.last_batch_failed = batch_failed
        record = {'number': self.next_number, 'size': size, 'hosts': list(batch), 'ok': ok_nodes,
                  'failed': failed_nodes, 'failed_batch': batch_failed, 'progress': progress,
                  'stopped': self.stopped}
        if removed_nodes:
            record['removed'] = removed_nodes
        if self.batch_parked:
            record['parked'] = list(self.batch_parked)
        self.batches.append(record)
        self.current, self.current_slots, self.batch_parked = None, 0, []
        return record

    def _judge(self, batch_failed, progress):
        """The stop rule after a scored batch: failureThreshold consecutive failed batches below safetyLimit."""
        if not batch_failed:
            self.consecutive_failures = 0
            return
        self.consecutive_failures += 1
        threshold = self.failure_threshold
        if threshold is not None and progress < self.safety_limit and self.consecutive_failures >= threshold:
            self.stopped = True
            self.stop_reason = ('%d consecutive failed batch%s (failureThreshold %d) at %d%% progress, below '
                                'safetyLimit %d%%' % (self.consecutive_failures,
                                                      '' if self.consecutive_failures == 1 else 'es',
                                                      threshold, progress, self.safety_limit))

    def not_attempted(self):
        """Nodes never put in a batch (what a stopped rollout leaves behind)."""
        return list(self.queue)

    def summary(self):
        return {
            'name': self.name,
            'matched': len(self.nodes),
            'ceiling': self.ceiling,
            'strategy': self.strategy.to_dict() if self.strategy else None,
            'budget': self.budget,
            'already_complete': list(self.already_complete),
            'batches': copy.deepcopy(self.batches),
            'completed': self.completed,
            'failed': self.failed,
            'removed': list(self.removed),
            'parked': list(self.parked),
            'progress': self.progress,
            'stopped': self.stopped,
            'stop_reason': self.stop_reason,
            'not_attempted': self.not_attempted(),
        }


class _CompartmentSet(object):
    """What every scheduler over several compartments has in common."""

    compartments = ()
    _by_name = {}

    def compartment(self, name):
        return self._by_name[name]

    @property
    def done(self):
        return all(c.done for c in self.compartments)

    @property
    def stopped(self):
        return any(c.stopped for c in self.compartments)

    @property
    def rollouts(self):
        """Every compartment's batch state (CompartmentRollout), in the policy's order."""
        return [c.rollout for c in self.compartments]

    def index_of(self, name):
        """The compartment's place in the policy's order (banners and waves follow it)."""
        return [c.name for c in self.compartments].index(name)


class RolloutScheduler(_CompartmentSet):
    """All compartments of one rollout; compartments advance independently."""

    def __init__(self, compartments):
        self.compartments = list(compartments)
        self._by_name = dict((c.name, c) for c in self.compartments)
        self._node_compartment = {}
        for comp in self.compartments:
            for node in comp.nodes:
                self._node_compartment[node] = comp.name

    @classmethod
    def build(cls, nodes, policy=None, legacy_cr=None, order='name', done=(), cap_to_ceiling=True,
              compartment_of=None, batch_states=None, cr_name=None):
        """A scheduler over ``nodes`` (an ordered list of ``(name, labels)``).

        Exactly one of ``policy`` (a DeploymentPolicy) or ``legacy_cr`` (a CR whose
        ``interruptionBudget`` becomes the synthetic fixed compartment) is used; with
        neither, everything runs in one batch (the operator's default of 100%).
        ``compartment_of`` optionally pins nodes to compartments by name (the strategy
        plugin's ``nodewright_compartment`` hostvar) instead of label matching.
        ``batch_states``: compartment name -> the BatchProcessingState this rollout continues
        (``CompartmentRollout.resume``; ``cr_name`` names the CR in a stop reason).
        """
        scheduler = cls._build(nodes, policy, legacy_cr, order, done, cap_to_ceiling, compartment_of)
        for comp in scheduler.compartments:
            state = (batch_states or {}).get(comp.name)
            if state and comp.strategy is not None:
                comp.resume(state, cr_name)
        return scheduler

    @classmethod
    def _build(cls, nodes, policy, legacy_cr, order, done, cap_to_ceiling, compartment_of):
        if order not in NODE_ORDERS:
            raise ValueError('order must be one of %s, got %r' % (', '.join(NODE_ORDERS), order))
        nodes = list(nodes)
        names = [n for n, dummy in nodes]
        if len(set(names)) != len(names):
            dupes = sorted(set(n for n in names if names.count(n) > 1))
            raise ValueError('duplicate node names: %s' % ', '.join(dupes))
        if order == 'name':
            nodes = sorted(nodes, key=lambda item: item[0])
        if policy is None:
            budget = legacy_cr.interruption_budget if legacy_cr is not None else None
            default = legacy_compartment(budget, len(nodes))
            return cls([CompartmentRollout(DEFAULT_COMPARTMENT, [n for n, dummy in nodes],
                                           default.strategy.initial_batch if nodes else 0, default.strategy,
                                           done=done, cap_to_ceiling=cap_to_ceiling, budget=default.budget)])
        specs = list(policy.compartments)
        known = set(c.name for c in specs) | set([DEFAULT_COMPARTMENT])
        counts = dict((c.name, sum(1 for dummy, labels in nodes if label_selector.matches(c.selector, labels)))
                      for c in specs)
        members = dict((c.name, []) for c in specs)
        members[DEFAULT_COMPARTMENT] = []
        for name, labels in nodes:
            pinned = (compartment_of or {}).get(name)
            if pinned is not None:
                if pinned not in known:
                    raise ValueError('node %s: compartment %r is not in the policy (known: %s)'
                                     % (name, pinned, ', '.join(sorted(known))))
                members[pinned].append(name)
            else:
                members[assign_compartment(specs, labels, counts)].append(name)
        rollouts = []
        for spec in specs + [policy.default]:
            matched = members[spec.name]
            rollouts.append(CompartmentRollout(spec.name, matched, ceiling(spec.budget, len(matched)), spec.strategy,
                                               done=done, cap_to_ceiling=cap_to_ceiling, selector=spec.selector,
                                               budget=spec.budget))
        return cls(rollouts)

    def compartment_of(self, node):
        return self._node_compartment.get(node)

    def next_batches(self):
        """compartment name -> batch to run now, for every compartment with work left."""
        batches = {}
        for comp in self.compartments:
            batch = comp.next_batch()
            if batch:
                batches[comp.name] = batch
        return batches

    def record(self, compartment, ok, failed, removed=()):
        return self._by_name[compartment].record(ok, failed, removed)

    def not_attempted(self):
        return [n for c in self.compartments for n in c.not_attempted()]

    def halt(self, reason):
        """Stop every compartment that still has nodes to run, with ``reason``.

        For stops decided outside the policy (``any_errors_fatal``, a run loop that ended early, a
        maintenance window that did not open). Compartments already stopped keep their own reason;
        finished ones are left alone. Returns the names of the compartments this call stopped.
        """
        # a compartment whose parked nodes wait for their pods has nodes to run too: they take no slot again
        return [c.name for c in self.compartments if (c.queue or c.parked) and c.stop(reason)]

    def summary(self):
        return {'compartments': [c.summary() for c in self.compartments],
                'stopped': self.stopped,
                'not_attempted': self.not_attempted()}

    def plan(self):
        """Batches per compartment if every batch succeeds (the scheduler itself is not advanced)."""
        sim = copy.deepcopy(self)
        while not sim.done:
            batches = sim.next_batches()
            if not batches:
                break
            for name, batch in batches.items():
                sim.record(name, batch, [])
        return [{'name': c.name, 'matched': len(c.nodes), 'ceiling': c.ceiling,
                 'strategy': c.strategy.to_dict() if c.strategy else None, 'budget': c.budget,
                 'selector': c.selector, 'already_complete': list(c.already_complete),
                 'batch_sizes': [b['size'] for b in c.batches],
                 'batches': [b['hosts'] for b in c.batches]} for c in sim.compartments]


# --------------------------------------------------------------------------- halting and the sliding window
#
# Added for the ``nodewright.bridge.budgeted`` strategy plugin. Nothing above changes; the
# sliding window reuses CompartmentRollout for sizing and scoring so both modes share one
# set of rules.


class SlidingCompartment(object):
    """One compartment run as a sliding window instead of batch after batch.

    How it maps onto the batch rules (docs/strategy.md of the collection):

    * **Groups replace batches.** Group ``k`` has the size the batch rules give after groups
      ``1..k-1`` (``CompartmentRollout.next_batch_size``: the strategy's growth and shrink,
      capped by the ceiling and by the nodes not yet scored). Group ``k`` is made of the
      next ``size`` nodes to *finish*, in the order they finish; it is scored as soon as the
      last of them finishes, with the same batchThreshold / failureThreshold / safetyLimit
      rules as a batch. The last group is whatever finishes after the queue ran dry.
    * **The window.** At most ``size`` of the current group are in flight at once, never more
      than the compartment's ceiling; a finished node frees its slot at once (no barrier).
      A shrinking group size admits nothing until enough in-flight nodes finish.
    * **Stopping.** When a group stops the compartment nothing more is admitted; the nodes in
      flight still finish (they cannot be recalled) and are scored together as one last
      ``drain`` group that does not change the stop reason.

    ``rollout.queue`` holds every node not yet scored (waiting, in flight or finished but not
    yet grouped), so ``next_batch_size`` caps groups correctly and ``not_attempted`` is the
    never-admitted nodes once everything admitted has been scored.
    """

    def __init__(self, rollout):
        self.rollout = rollout
        self.waiting = list(rollout.queue)
        self.in_flight = []
        self.pending = []  # finished, not yet in a scored group: [(node, outcome)], outcome OK / FAILED / REMOVED
        self.group_size = rollout.next_batch_size()
        self.max_in_flight = 0

    @property
    def name(self):
        return self.rollout.name

    @property
    def stopped(self):
        return self.rollout.stopped

    @property
    def done(self):
        return not self.in_flight and not self.pending and (self.stopped or not self.waiting)

    @property
    def window(self):
        """How many nodes may be in flight now (0 once stopped)."""
        return 0 if self.stopped else self.group_size

    def admit(self):
        """Nodes to start now: fill the window from the waiting queue."""
        room = self.window - len(self.in_flight)
        if room <= 0 or not self.waiting:
            return []
        take, self.waiting = self.waiting[:room], self.waiting[room:]
        self.in_flight.extend(take)
        self.max_in_flight = max(self.max_in_flight, len(self.in_flight))
        return take

    def start(self, granted, waiting):
        """Put ``granted`` (what the fleet's window granted this run, maybe nothing) in flight; ``waiting``: the rest.

        When nothing waits here any more, the rest went to other runs of the shared budget: what this
        run finished and is not yet scored is its last group, scored now (before ``granted`` runs).
        Returns that group's record, or None.
        """
        self.waiting = list(waiting)
        record = None if self.waiting else self.close_group()
        self.in_flight.extend(granted)
        self.max_in_flight = max(self.max_in_flight, len(self.in_flight))
        return record

    def forget(self, nodes):
        """Take ``nodes`` (finished by other runs of a shared budget) out of the compartment."""
        gone = set(nodes)
        self.waiting = [n for n in self.waiting if n not in gone]
        self.rollout.forget(nodes)

    def close_group(self):
        """Score what finished as the last group when nothing is left to run here (None: nothing to score).

        With a shared budget, the nodes this run did not get went to other runs: what it finished is its
        last group.
        """
        if not self.pending or self.in_flight or (self.waiting and not self.stopped):
            return None
        group, self.pending = self.pending, []
        return self._score(group)

    def complete(self, node, ok, removed=False):
        """Record that ``node`` finished (``removed``: deleted from the cluster); returns the group records this scored (0 or 1)."""
        if node not in self.in_flight:
            raise ValueError('compartment %s: %s is not in flight' % (self.name, node))
        self.in_flight.remove(node)
        self.pending.append((node, REMOVED if removed else OK if ok else FAILED))
        if not self.stopped and len(self.pending) >= self.group_size:
            group, self.pending = self.pending[:self.group_size], self.pending[self.group_size:]
            return [self._score(group)]
        if self.pending and not self.in_flight and (self.stopped or not self.waiting):
            group, self.pending = self.pending, []
            return [self._score(group)]
        return []

    def _score(self, group):
        rollout = self.rollout
        hosts = [n for n, dummy in group]
        members = set(hosts)
        rollout.queue = [n for n in rollout.queue if n not in members]
        rollout.current = hosts
        drain, reason, streak = rollout.stopped, rollout.stop_reason, rollout.consecutive_failures
        record = rollout.record([n for n, o in group if o == OK], [n for n, o in group if o == FAILED],
                                [n for n, o in group if o == REMOVED])
        if drain:
            # the nodes that were in flight when the compartment stopped: keep the reason
            rollout.stopped, rollout.stop_reason, rollout.consecutive_failures = True, reason, streak
            record['stopped'] = True
        record['drain'] = drain
        if not rollout.stopped:
            self.group_size = rollout.next_batch_size()
        return record

    def summary(self):
        summary = self.rollout.summary()
        summary.update({'window': self.window, 'max_in_flight': self.max_in_flight,
                        'in_flight': list(self.in_flight), 'not_attempted': list(self.waiting)})
        return summary


class SlidingWindowScheduler(_CompartmentSet):
    """All compartments of a rollout, each run as a sliding window (see SlidingCompartment).

    Drive it with ``admit()`` (nodes to start) and ``complete(node, ok)`` (a node finished);
    compartments advance independently. Pure, no I/O.
    """

    def __init__(self, scheduler):
        self.scheduler = scheduler
        self.compartments = [SlidingCompartment(c) for c in scheduler.compartments]
        self._by_name = dict((c.name, c) for c in self.compartments)

    @classmethod
    def build(cls, nodes, **kwargs):
        """Same arguments as ``RolloutScheduler.build``."""
        return cls(RolloutScheduler.build(nodes, **kwargs))

    def compartment_of(self, node):
        return self.scheduler.compartment_of(node)

    def admit(self):
        """compartment name -> nodes to start now (only compartments with something to start)."""
        admitted = {}
        for comp in self.compartments:
            nodes = comp.admit()
            if nodes:
                admitted[comp.name] = nodes
        return admitted

    def complete(self, node, ok, removed=False):
        """Record a finished node; returns the group records this scored (a list, usually empty)."""
        name = self.scheduler.compartment_of(node)
        if name is None:
            raise ValueError('%s is not part of this rollout' % node)
        return self._by_name[name].complete(node, ok, removed)

    def in_flight(self):
        return dict((c.name, list(c.in_flight)) for c in self.compartments if c.in_flight)

    def halt(self, reason):
        """Stop admitting in every compartment with nodes waiting (in-flight nodes still finish)."""
        halted = []
        for comp in self.compartments:
            if not comp.waiting or not comp.rollout.stop(reason):
                continue
            halted.append(comp.name)
            comp.close_group()
        return halted

    def not_attempted(self):
        return [n for c in self.compartments for n in c.waiting]

    def summary(self):
        return {'compartments': [c.summary() for c in self.compartments],
                'stopped': self.stopped,
                'not_attempted': self.not_attempted()}
