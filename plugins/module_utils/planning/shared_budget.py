# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""One rollout budget shared by every run of a CR: the state kept in a Lease, and its rules.

Each (rollout, compartment) pair has one ``coordination.k8s.io`` Lease in the operator's
namespace. Its annotation ``nodewright.bridge/budget`` holds the compartment's **fleet
rollout**: the runs that take part (each with a heartbeat), the nodes in flight (a slot
each, held by one run, with an expiry), the nodes finished in this rollout, the batch (or
sliding group) being filled, and the counters the stop rule needs. Every change is a
read-modify-write guarded by the Lease's resourceVersion (plugin_utils/rollout/budget_lease.py does
the I/O); this module only computes the next state, so every rule is unit-tested here.

The rules are the DeploymentPolicy's, for the fleet as a whole (docs/shared-budget.md):

* **Batch mode.** The fleet runs one batch at a time. A batch opens with the size the
  policy gives after the batches scored so far (``CompartmentRollout.next_batch_size``, over
  every node any run has registered); any run may fill it with its own nodes, up to that
  size; it is scored (batchThreshold, failureThreshold, safetyLimit) when every node in it has
  finished and it is full, or nothing is left to take. Only then does the next batch open.
* **Sliding mode.** At most the current group size is in flight over all runs; every
  ``size`` nodes to finish form a group that is scored the same way.
* **A node runs once.** A node in flight or finished in this rollout is never taken again;
  a run that planned it skips it (``elsewhere``).
* **A dead run frees its slots.** A run renews its heartbeat and slots while it lives; once
  ``until`` passes, its slots are dropped (the node may be taken again: the node's update
  resumes from its annotations and adopts a running package pod) and its registration goes.
* **A rollout ends with its last run.** A run that joins a Lease with no live run starts a
  fresh rollout (nothing of an earlier one is kept); one that joins live runs must have the
  same ``fingerprint`` (the CR's version and the compartment's policy), or it is refused.

No I/O; ``now`` is epoch seconds, passed in.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json
import re

from ansible_collections.nodewright.bridge.plugins.module_utils.contract.pod_layout import safe_name
from ansible_collections.nodewright.bridge.plugins.module_utils.planning.rollout_scheduler import CompartmentRollout, batch_state, ceiling

ANNOTATION = 'nodewright.bridge/budget'
LABEL_SCOPE = 'nodewright.bridge/rollout'
LABEL_COMPARTMENT = 'nodewright.bridge/compartment'
LABEL_MANAGED_BY = 'app.kubernetes.io/managed-by'
MANAGED_BY = 'nodewright.bridge'
FORMAT = 1
MODES = ('batch', 'sliding')
OUTCOMES = ('ok', 'failed', 'removed')
NAME_MAX = 63  # a Lease's name must be a DNS subdomain; kept to a label so `kubectl get` shows it whole


class BudgetStateError(ValueError):
    """The Lease holds something this collection did not write (a hand edit): the run stops, clearly."""


class BudgetMismatch(ValueError):
    """Live runs of the Lease roll out something else (another version of the CR, another policy)."""


def slug(text):
    return re.sub(r'[^a-z0-9-]+', '-', text.lower()).strip('-') or 'x'


def lease_name(scope, compartment):
    """The Lease's name for a rollout ``scope`` (a CR's name) and a compartment: readable, unique, <= 63 chars."""
    # the pods' naming rule (hash suffix, truncation); a compartment may hold characters a name may not
    return safe_name(NAME_MAX, 'nodewright-budget', slug(scope), slug(compartment))


def fingerprint(*parts):
    """A short stable digest of what a run rolls out (JSON-able parts)."""
    text = json.dumps(parts, sort_keys=True, separators=(',', ':'), default=str)
    return hashlib.sha256(text.encode('utf-8')).hexdigest()[:16]


def new_state(mode):
    return {'format': FORMAT, 'mode': mode, 'fingerprint': None, 'runs': {}, 'slots': {}, 'done': {},
            'orphans': [], 'parked': {}, 'rejoining': {}, 'batch': None, 'pending': [], 'counters': _fresh_counters()}


def _fresh_counters():
    return {'scored': 0, 'completed': 0, 'failed': 0, 'streak': 0, 'last_size': 0, 'last_failed': False,
            'stopped': None, 'group_size': 0}


# --------------------------------------------------------------------------- reading and writing

def _check(cond, where, what):
    if not cond:
        raise BudgetStateError('%s: %s' % (where, what))


def _check_number(value, where):
    _check(isinstance(value, (int, float)) and not isinstance(value, bool), where, 'must be a number, got %r' % (value,))


def parse_state(text, where):
    """The state in an annotation's text; BudgetStateError naming the field when it is not ours."""
    try:
        state = json.loads(text)
    except ValueError as exc:
        raise BudgetStateError('%s: annotation %s is not JSON (%s)' % (where, ANNOTATION, exc))
    _check(isinstance(state, dict), where, 'annotation %s must hold a JSON object' % ANNOTATION)
    _check(state.get('format') == FORMAT, where, 'format must be %d, got %r' % (FORMAT, state.get('format')))
    _check(state.get('mode') in MODES, where + '.mode', 'must be one of %s, got %r' % (', '.join(MODES), state.get('mode')))
    for key in ('runs', 'slots', 'done', 'counters'):
        _check(isinstance(state.get(key), dict), '%s.%s' % (where, key), 'must be an object, got %r' % (state.get(key),))
    for run, entry in state['runs'].items():
        at = '%s.runs[%s]' % (where, run)
        _check(isinstance(entry, dict), at, 'must be an object')
        _check_number(entry.get('until'), at + '.until')
        _check(isinstance(entry.get('nodes'), list) and all(isinstance(n, str) for n in entry['nodes']),
               at + '.nodes', 'must be a list of node names')
        _check(entry.get('host') is None or isinstance(entry['host'], str), at + '.host', 'must be a string')
        _check(entry.get('pid') is None or isinstance(entry['pid'], int), at + '.pid', 'must be an integer')
    for node, slot in state['slots'].items():
        at = '%s.slots[%s]' % (where, node)
        _check(isinstance(slot, dict) and isinstance(slot.get('run'), str), at, 'must be {run, until}, got %r' % (slot,))
        _check_number(slot.get('until'), at + '.until')
    for node, outcome in state['done'].items():
        _check(outcome in OUTCOMES, '%s.done[%s]' % (where, node), 'must be one of %s, got %r' % (', '.join(OUTCOMES), outcome))
    batch = state.get('batch')
    if batch is not None:
        _check(isinstance(batch, dict) and isinstance(batch.get('nodes'), dict), where + '.batch',
               'must be null or {number, size, nodes}, got %r' % (batch,))
        for key in ('number', 'size'):
            _check(isinstance(batch.get(key), int) and batch[key] > 0, '%s.batch.%s' % (where, key), 'must be a positive integer')
        for node, outcome in batch['nodes'].items():
            _check(outcome is None or outcome in OUTCOMES, '%s.batch.nodes[%s]' % (where, node), 'bad outcome %r' % (outcome,))
    _check(isinstance(state.get('orphans'), list) and all(isinstance(n, str) for n in state['orphans']),
           where + '.orphans', 'must be a list of node names')
    # nodes waiting for their protected pods, and nodes whose pods finished and that wait for a slot, each with the
    # run whose task waits (both absent before 0.2.0)
    for key in ('parked', 'rejoining'):
        state.setdefault(key, {})
        _check(isinstance(state[key], dict) and all(isinstance(r, str) for r in state[key].values()),
               '%s.%s' % (where, key), 'must be an object of node -> run')
    pending = state.get('pending')
    _check(isinstance(pending, list) and all(isinstance(p, list) and len(p) == 2 and p[1] in OUTCOMES for p in pending),
           where + '.pending', 'must be a list of [node, outcome]')
    counters = state['counters']
    for key in ('scored', 'completed', 'failed', 'streak', 'last_size', 'group_size'):
        _check(isinstance(counters.get(key), int) and counters[key] >= 0, '%s.counters.%s' % (where, key),
               'must be a non-negative integer, got %r' % (counters.get(key),))
    _check(isinstance(counters.get('last_failed'), bool), where + '.counters.last_failed', 'must be true or false')
    _check(counters.get('stopped') is None or isinstance(counters['stopped'], str), where + '.counters.stopped',
           'must be null or a reason')
    return state


def dump_state(state):
    return json.dumps(state, sort_keys=True, separators=(',', ':'))


# --------------------------------------------------------------------------- the fleet's compartment

class Rules(object):
    """What every run of a compartment agrees on: its budget and strategy (the local CompartmentRollout's)."""

    def __init__(self, name, budget, strategy, cap_to_ceiling=True, fixed_ceiling=None):
        self.name = name
        self.budget = dict(budget or {})
        self.strategy = strategy
        self.cap_to_ceiling = cap_to_ceiling
        self.fixed_ceiling = fixed_ceiling  # a budget-less compartment (the legacy default): its own ceiling

    @classmethod
    def of(cls, rollout):
        return cls(rollout.name, rollout.budget, rollout.strategy, rollout.cap_to_ceiling,
                   None if rollout.budget else rollout.ceiling)

    def identity(self):
        return {'compartment': self.name, 'budget': self.budget,
                'strategy': self.strategy.to_dict() if self.strategy else None}

    def ceiling(self, total):
        if self.fixed_ceiling is not None:
            return self.fixed_ceiling if total else 0
        return ceiling(self.budget, total)


def members(state):
    """Every node of the fleet's compartment: registered by a live run, or finished in this rollout (not removed)."""
    nodes = set(state['done'])
    for entry in state['runs'].values():
        nodes.update(entry['nodes'])
    return sorted(n for n in nodes if state['done'].get(n) != 'removed')


def untaken(state):
    """Members not finished, not in flight, not orphaned, not parked and not in the open batch."""
    batch = (state.get('batch') or {}).get('nodes') or {}
    parked = state.get('parked') or {}
    taken = (state['done'], state['slots'], batch, state['orphans'], parked)
    return [n for n in members(state) if not any(n in group for group in taken)]


def _scratch(state, rules):
    """A CompartmentRollout that holds the fleet's counters, to ask the policy's rules."""
    nodes = members(state)
    counters = state['counters']
    rollout = CompartmentRollout(rules.name, nodes, rules.ceiling(len(nodes)), rules.strategy,
                                 cap_to_ceiling=rules.cap_to_ceiling, budget=rules.budget)
    rollout.queue = untaken(state) + [n for n in state['slots'] if n not in state['done']] + list(state['orphans'])
    rollout.completed = counters['completed']
    rollout.failed = counters['failed']
    rollout.consecutive_failures = counters['streak']
    rollout.last_batch_size = counters['last_size']
    rollout.last_batch_failed = counters['last_failed']
    rollout.stopped = counters['stopped'] is not None
    rollout.stop_reason = counters['stopped']
    rollout.batches = [None] * counters['scored']
    return rollout


def next_size(state, rules):
    """The size of the next batch (or group) for the fleet (0: nothing left, or stopped)."""
    rollout = _scratch(state, rules)
    if rollout.stopped:
        return 0
    rollout.queue = untaken(state)
    return rollout.next_batch_size()


def _score(state, rules, nodes, outcomes):
    """Score ``nodes`` (their outcomes) as the fleet's next batch; the record, counters updated."""
    rollout = _scratch(state, rules)
    # removed nodes already left members(); put them back for record(), which takes them out again
    rollout.nodes = sorted(set(rollout.nodes) | set(n for n in nodes if outcomes[n] == 'removed'))
    rollout.current = list(nodes)
    was_stopped = rollout.stopped
    record = rollout.record([n for n in nodes if outcomes[n] == 'ok'], [n for n in nodes if outcomes[n] == 'failed'],
                            [n for n in nodes if outcomes[n] == 'removed'])
    counters = state['counters']
    counters.update(scored=counters['scored'] + 1, completed=rollout.completed, failed=rollout.failed,
                    streak=rollout.consecutive_failures, last_size=rollout.last_batch_size,
                    last_failed=rollout.last_batch_failed)
    if rollout.stopped and not was_stopped:
        counters['stopped'] = rollout.stop_reason
    record['total'] = len(rollout.nodes)
    return record


# --------------------------------------------------------------------------- what a run does

def expire(state, now):
    """Drop runs whose heartbeat passed and slots whose expiry passed; the (node, run) pairs freed.

    A freed node is an **orphan**: its run died mid-update (it may be cordoned, a package pod may
    run). It keeps its place in the batch (or window), so the budget still counts it, and the next
    run that has it takes it before any fresh node (its update resumes from its annotations). An
    orphan no live run has goes: nobody can finish it in this rollout.
    """
    for run in [r for r, e in state['runs'].items() if e['until'] < now]:
        del state['runs'][run]
    freed = []
    for node, slot in list(state['slots'].items()):
        if slot['until'] < now or slot['run'] not in state['runs']:
            freed.append((node, slot['run']))
            _orphan(state, node)
    _drop_dead_parked(state)
    _drop_unwanted_orphans(state)
    return freed


def _drop_dead_parked(state):
    """A parked (or rejoining) node whose run is gone holds nothing: another run may take it (its task parks it
    again if its pods still run)."""
    for key in ('parked', 'rejoining'):
        waiting = state.setdefault(key, {})
        for node in [n for n, run in waiting.items() if run not in state['runs']]:
            del waiting[node]


def _orphan(state, node):
    del state['slots'][node]
    if node not in state['done'] and node not in state['orphans']:
        state['orphans'].append(node)


def _drop_unwanted_orphans(state):
    wanted = set()
    for entry in state['runs'].values():
        wanted.update(entry['nodes'])
    batch = state.get('batch')
    for node in [n for n in state['orphans'] if n not in wanted]:
        state['orphans'].remove(node)
        if batch is not None and batch['nodes'].get(node, 'x') is None:
            del batch['nodes'][node]


def seed_counters(rollout):
    """The counters a fresh fleet rollout starts from: what ``rollout`` resumed of the CR's batch state."""
    return {'scored': rollout.batches_before, 'streak': rollout.consecutive_failures,
            'last_size': rollout.last_batch_size, 'last_failed': rollout.last_batch_failed,
            'stopped': rollout.stop_reason if rollout.stopped else None}


def batch_state_of(state):
    """The fleet compartment's BatchProcessingState, for the CR's status."""
    counters = state['counters']
    return batch_state(counters['scored'], counters['completed'], counters['failed'], counters['streak'],
                       counters['last_size'], counters['last_failed'], counters['stopped'] is not None)


def join(state, run, print_, nodes, now, expiry, host=None, pid=None, seed=None):
    """Register ``run`` (its nodes) in the rollout; a fresh rollout when no live run is left.

    ``print_``: the fingerprint of what the run rolls out; ``host`` and ``pid``: where the run's process
    lives (a run on the same machine can tell when it is gone, see ``end_runs``); ``seed``: the counters
    a fresh rollout starts from (``seed_counters``: the batch state of the CR's status). Returns True
    when this started a fresh rollout.
    """
    expire(state, now)
    fresh = not state['runs']
    if fresh:
        mode = state['mode']
        state.clear()
        state.update(new_state(mode))
        state['fingerprint'] = print_
        if seed:
            state['counters'].update(seed)
    elif state['fingerprint'] != print_:
        raise BudgetMismatch('the runs %s roll out something else with this budget (fingerprint %s, this run %s): '
                             'another version of the CR or another policy; let them finish first'
                             % (', '.join(sorted(state['runs'])), state['fingerprint'], print_))
    entry = {'until': now + expiry, 'nodes': sorted(set(nodes))}
    if host is not None:
        entry.update(host=host, pid=pid)
    state['runs'][run] = entry
    return fresh


def local_runs(state, host):
    """``{run: pid}`` of the runs registered from ``host`` (the caller checks whether their process lives)."""
    return dict((run, entry['pid']) for run, entry in state['runs'].items()
                if host is not None and entry.get('host') == host and entry.get('pid') is not None)


def end_runs(state, runs):
    """Runs known to be gone (their process no longer exists): expired now, not at their ``until``."""
    for run in runs:
        if run in state['runs']:
            state['runs'][run]['until'] = -1


def renew(state, run, now, expiry):
    """The run's heartbeat and slots, for ``expiry`` more seconds. False when the run had expired meanwhile."""
    expire(state, now)
    entry = state['runs'].get(run)
    if entry is None:
        return False
    entry['until'] = now + expiry
    for slot in state['slots'].values():
        if slot['run'] == run:
            slot['until'] = now + expiry
    return True


def leave(state, run):
    """The run is over: its registration goes, and any slot it still holds is freed (the node may be taken again)."""
    state['runs'].pop(run, None)
    for node, slot in list(state['slots'].items()):
        if slot['run'] == run:
            _orphan(state, node)  # a node the run did not finish (it was stopped): another run may resume it
    _drop_dead_parked(state)
    _drop_unwanted_orphans(state)


def take(state, rules, run, wanted, now, expiry):
    """Give ``run`` slots for nodes of ``wanted`` (in its order) as the fleet's batch or window allows.

    Returns ``(granted, finished, busy)``: the nodes the run may start now; the nodes of ``wanted``
    that finished in this rollout (the run must not run them); and those another run has in flight
    (the run keeps them for later: if that run dies, they come back).
    """
    expire(state, now)
    if run not in state['runs']:
        raise BudgetStateError('run %s is no longer registered in the budget: its heartbeat expired (was the '
                               'controller suspended?) and its slots were given up' % run)
    finished = [n for n in wanted if n in state['done']]
    parked = state.setdefault('parked', {})
    # a node whose protected pods finished is its run's to take (its task waits for that run's slot)
    rejoining = state.setdefault('rejoining', {})

    def another_runs(node):
        in_slot = node in state['slots'] and state['slots'][node]['run'] != run
        return in_slot or parked.get(node, run) != run or rejoining.get(node, run) != run
    busy = [n for n in wanted if n not in state['done'] and another_runs(n)]
    # an orphan already has its place in the batch or window: taking it needs no room
    orphans = [n for n in wanted if n in state['orphans']]
    skip = set(finished) | set(state['slots']) | set(state['orphans']) | set(parked) | set(busy)
    batch = state.get('batch') or {'nodes': {}}
    candidates = [n for n in wanted if n not in skip and n not in batch['nodes']]
    room = _room(state, rules)
    granted = orphans + candidates[:max(0, room)]
    if granted:
        # the heartbeat goes on with the slots granted now, so a run's slots never outlive it: a slot granted between
        # two renewals was otherwise orphaned with its run, before its own expiry (seen in the AWX cancel test)
        state['runs'][run]['until'] = max(state['runs'][run]['until'], now + expiry)
    for node in granted:
        rejoining.pop(node, None)
        state['slots'][node] = {'run': run, 'until': now + expiry}
        if node in state['orphans']:
            state['orphans'].remove(node)
        elif state['mode'] == 'batch':
            state['batch']['nodes'][node] = None
    return granted, finished, busy


def _room(state, rules):
    counters = state['counters']
    if counters['stopped'] is not None:
        return 0
    if state['mode'] == 'sliding':
        if not counters['group_size']:
            counters['group_size'] = next_size(state, rules)
        return counters['group_size'] - len(state['slots']) - len(state['orphans'])
    if state['batch'] is None:
        size = next_size(state, rules)
        if not size:
            return 0
        state['batch'] = {'number': counters['scored'] + 1, 'size': size, 'nodes': {}}
    batch = state['batch']
    return batch['size'] - len(batch['nodes'])


def finish(state, rules, run, outcomes):
    """Record finished nodes (``{node: 'ok' | 'failed' | 'removed'}``) and give their slots back.

    Returns the fleet records scored by this change (a batch or group is scored by whichever run
    finishes its last node).
    """
    for node, outcome in outcomes.items():
        if outcome not in OUTCOMES:
            raise ValueError('%s: outcome must be one of %s, got %r' % (node, ', '.join(OUTCOMES), outcome))
        slot = state['slots'].get(node)
        if slot is not None and slot['run'] != run:
            continue  # this run's slot expired and another run took the node: the outcome is that run's to give
        state['slots'].pop(node, None)
        state.setdefault('parked', {}).pop(node, None)
        state.setdefault('rejoining', {}).pop(node, None)
        state['done'][node] = outcome
        if state['mode'] == 'batch':
            batch = state.get('batch')
            if batch is not None and node in batch['nodes']:
                batch['nodes'][node] = outcome
        else:
            state['pending'].append([node, outcome])
    return settle(state, rules)


def park(state, run, node):
    """``node`` waits for its protected pods (docs/semantics.md 34): its slot and its place in the open batch are
    given back, so another node may take them; it is not counted until ``rejoin``. False if the run no longer
    holds it (its slot expired)."""
    slot = state['slots'].get(node)
    if slot is None or slot['run'] != run:
        return False
    del state['slots'][node]
    batch = state.get('batch')
    if batch is not None and node in batch['nodes'] and batch['nodes'][node] is None:
        del batch['nodes'][node]
    state.setdefault('parked', {})[node] = run
    return True


def rejoin(state, run, node):
    """A parked node's pods finished: it counts for the next batch's size again, and only its run may take it."""
    if state.setdefault('parked', {}).pop(node, None) is not None:
        state.setdefault('rejoining', {})[node] = run


def settle(state, rules):
    """Score what is complete: the open batch (batch mode) or full groups (sliding mode)."""
    records = []
    if state['mode'] == 'batch':
        batch = state.get('batch')
        if batch is not None and batch['nodes'] and all(o is not None for o in batch['nodes'].values()):
            if len(batch['nodes']) >= batch['size'] or not untaken(state) or state['counters']['stopped'] is not None:
                nodes = sorted(batch['nodes'])
                record = _score(state, rules, nodes, batch['nodes'])
                record['number'] = batch['number']
                state['batch'] = None
                records.append(record)
        return records
    counters = state['counters']
    while state['pending']:
        size = counters['group_size'] or next_size(state, rules) or len(state['pending'])
        last = not state['slots'] and not state['orphans'] and (not untaken(state) or counters['stopped'] is not None)
        if len(state['pending']) < size and not last:
            break
        group, state['pending'] = state['pending'][:size], state['pending'][size:]
        outcomes = dict((n, o) for n, o in group)
        record = _score(state, rules, [n for n, dummy in group], outcomes)
        records.append(record)
        counters['group_size'] = next_size(state, rules)
    return records


def holder_summary(state, rules):
    """What `kubectl get lease` shows as HOLDER: the nodes in flight against the limit, and the runs."""
    counters = state['counters']
    if counters['stopped'] is not None:
        limit = 'stopped'
    elif state['mode'] == 'batch':
        batch = state.get('batch')
        limit = 'batch %d of %d' % (batch['number'], batch['size']) if batch else 'between batches'
    else:
        limit = 'window %d' % counters['group_size']
    runs = len(state['runs'])
    return '%d in flight (%s), %d run%s' % (len(state['slots']), limit, runs, '' if runs == 1 else 's')
