# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""Batch progress shared between the ``budgeted`` strategy and the ``rollout`` callback.

Since ansible-core 2.19 ``TaskQueueManager.send_callback`` only dispatches the standard
``v2_*`` methods, so the strategy cannot send a callback its own batch events. Both plugins
run in the controller process, though, so the strategy records batches on a ``RolloutBus`` and
the callback subscribes to it. Ansible loads the strategy, the callback and the ``rollout_report``
action separately, each with nothing to hand the others: they meet at ``BUS``, this module's one
instance (they import it under the same name), the only state the module holds. Everything else
takes its bus: a ``Rollout`` knows the bus it was started on, and a test or a process of its own
(the ``--limit`` driver) makes a bus of its own.

Callbacks may be invoked from the strategy's result thread, hence the bus's lock; listeners are
called outside it so a slow listener cannot block the strategy's bookkeeping.

The report (``RolloutBus.report``) is the JSON document the callback writes to ``NODEWRIGHT_REPORT``
and the strategy publishes as the ``nodewright_rollout`` custom stat: the top-level
``compartments`` / ``not_attempted`` describe the most recent budgeted play, ``rollouts``
lists every budgeted play of the run in order. Each entry of ``rollouts`` has ``nodes``: per host,
its compartment, batch, status and ``steps``, the time intervals its tasks took (``task_steps``), which
the rollout timeline (``rollout_timeline.render``) draws.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import os
import tempfile
import threading
import time

from ansible_collections.nodewright.bridge.plugins.module_utils import cluster_modules
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import drain_rules
from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_model
from ansible_collections.nodewright.bridge.plugins.module_utils.model.duration import format_duration
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import node_steps

EVENTS = ('rollout_start', 'batch_start', 'batch_end', 'node_parked', 'node_rejoining', 'rollout_end')


class RolloutBus(object):
    """The rollouts of one run, in order, and who listens to their events.

    ``lock`` (reentrant) guards the rollouts recorded on the bus and everything in them: the functions below that
    take a rollout change it under its bus's lock.
    """

    def __init__(self):
        self.lock = threading.RLock()
        self.recorded = []  # Rollout, in the order they started
        self.listeners = []

    def subscribe(self, listener):
        """Call ``listener(event, payload)`` for every event in ``EVENTS`` from now on."""
        with self.lock:
            if listener not in self.listeners:
                self.listeners.append(listener)

    def reset(self):
        """Forget every rollout and listener (tests, or a controller that runs several playbooks)."""
        with self.lock:
            del self.recorded[:]
            del self.listeners[:]

    def publish(self, event, payload):
        """``payload`` (a copy for each) to every listener, called outside the lock."""
        with self.lock:
            listeners = list(self.listeners)
        for listener in listeners:
            listener(event, copy.deepcopy(payload))

    def start_rollout(self, play, mode, compartments, excluded=None):
        """Register a budgeted play; ``compartments`` are scheduler summaries (name, matched, ceiling...)."""
        rollout = Rollout(self, play, mode, compartments, excluded)
        with self.lock:
            self.recorded.append(rollout)
            payload = rollout.as_dict()
        self.publish('rollout_start', payload)
        return rollout

    def adopt(self, rollouts):
        """Record ``rollouts`` (dicts, as ``rollouts()`` gives them) that another process ran: apply's rollout without
        the budgeted strategy runs them in a task (builtin_rollout.py), whose result brings them here."""
        with self.lock:
            self.recorded.extend(FinishedRollout(r) for r in rollouts or () if isinstance(r, dict))

    def rollouts(self):
        """Every rollout of the bus as a dict, in order."""
        with self.lock:
            return [r.as_dict() for r in self.recorded]

    def report(self, nodes=True):
        """The JSON report: the latest rollout at the top level, every rollout under ``rollouts``.

        ``nodes=False`` leaves out each rollout's ``nodes`` (the timeline's steps: 2 to 3 KiB a node),
        for the custom stat, which AWX keeps with every job and hands to later workflow nodes.
        """
        all_rollouts = self.rollouts()
        if not all_rollouts:
            return {'compartments': {}, 'not_attempted': [], 'stopped': False, 'rollouts': []}
        if not nodes:
            for rollout in all_rollouts:
                del rollout['nodes']
        latest = dict(all_rollouts[-1])
        latest.pop('nodes', None)  # the latest rollout's nodes are in ``rollouts`` already: not twice
        latest['rollouts'] = all_rollouts
        return latest


# The run's bus: the budgeted strategy (play_phases) records on it, the rollout callback subscribes to it and writes
# its report, the rollout_report action (a worker forked from ansible-playbook) reads it. Ansible loads the three
# separately and hands them nothing in common: this one instance is where they meet. Nothing else in this module
# holds state.
BUS = RolloutBus()


class FinishedRollout(object):
    """A rollout another process recorded and finished: only its dict (RolloutBus.adopt)."""

    def __init__(self, data):
        self.data = copy.deepcopy(data)

    def as_dict(self):
        return copy.deepcopy(self.data)


class Rollout(object):
    """One budgeted play: its compartments, their batches and the outcome; recorded on ``bus`` (a RolloutBus)."""

    def __init__(self, bus, play, mode, compartments, excluded=None, clock=time.time):
        self.bus = bus
        self.clock = clock
        self.play = play
        self.mode = mode
        self.started = clock()
        self.finished = None
        self.ended = None
        self.stopped = False
        self.not_attempted = []
        self.excluded = dict(excluded or {})
        self.shared_budget = None  # the run's part in a shared budget (Leases, writes, most in flight), if any
        self.compartments = {}
        self.order = []
        self.nodes = {}  # host -> {'compartment', 'batch', 'status', 'steps'} (the timeline)
        for comp in compartments:
            self.order.append(comp['name'])
            self.compartments[comp['name']] = {
                'matched': comp['matched'], 'ceiling': comp['ceiling'], 'strategy': comp['strategy'],
                'budget': comp['budget'], 'batches': [], 'running': {}, 'stopped': False, 'stop_reason': None,
                'completed': 0, 'failed': 0, 'removed': [], 'progress': 100 if not comp['matched'] else 0,
                'parked': [],
            }

    def eta(self, name):
        """Seconds left for a compartment at the rate seen so far (None before the first batch)."""
        comp = self.compartments[name]
        processed = comp['completed'] + comp['failed']
        if comp['stopped'] or processed >= comp['matched']:
            return 0.0
        if not processed:
            return None
        return (self.clock() - self.started) * (comp['matched'] - processed) / processed

    def as_dict(self):
        compartments = {}
        for name in self.order:
            comp = self.compartments[name]
            entry = dict((k, copy.deepcopy(v)) for k, v in comp.items() if k != 'running')
            entry['running'] = sorted(comp['running'].values(), key=lambda b: b['number'])
            compartments[name] = entry
        finished = self.finished if self.finished is not None else self.clock()
        nodes = dict((host, dict(entry, steps=[dict(s) for s in entry['steps']])) for host, entry in self.nodes.items())
        return {'play': self.play, 'started': round(self.started, 3), 'nodes': nodes, 'mode': self.mode, 'compartments': compartments,
                'not_attempted': list(self.not_attempted), 'stopped': self.stopped, 'ended': self.ended,
                'excluded': dict(self.excluded), 'elapsed': round(finished - self.started, 3),
                'finished': self.finished is not None, 'shared_budget': copy.deepcopy(self.shared_budget)}


def _node(rollout, host):
    entry = rollout.nodes.get(host)
    if entry is None:
        entry = rollout.nodes[host] = {'compartment': None, 'batch': None, 'status': 'running', 'steps': []}
    return entry


def batch_started(rollout, compartment, number, hosts):
    with rollout.bus.lock:
        batch = {'number': number, 'size': len(hosts), 'hosts': list(hosts), 'started': rollout.clock()}
        rollout.compartments[compartment]['running'][number] = batch
        for host in hosts:
            _node(rollout, host).update(compartment=compartment, batch=number, status='running')
        payload = {'play': rollout.play, 'mode': rollout.mode, 'compartment': compartment,
                   'number': number, 'size': len(hosts), 'hosts': list(hosts)}
    rollout.bus.publish('batch_start', payload)


def batch_finished(rollout, compartment, record, started=None):
    """Record a scored batch (a scheduler record: number, size, hosts, ok, failed, ...)."""
    with rollout.bus.lock:
        comp = rollout.compartments[compartment]
        running = comp['running'].pop(record['number'], None)
        if started is None:
            started = running['started'] if running else rollout.clock()
        entry = dict((k, copy.deepcopy(v)) for k, v in record.items())
        entry['elapsed'] = round(max(0.0, rollout.clock() - started), 3)
        entry['started'] = round(started, 3)
        outcomes = dict([(h, 'ok') for h in record['ok']] + [(h, 'failed') for h in record['failed']]
                        + [(h, 'removed') for h in record.get('removed') or ()])
        for host in record.get('hosts') or list(outcomes):
            # sliding mode admits hosts one by one: a host's group (its "batch") is known once it is scored
            _node(rollout, host).update(compartment=compartment, batch=record['number'],
                                        status=outcomes.get(host, 'failed'))
        comp['batches'].append(entry)
        comp['completed'] += len(record['ok'])
        comp['failed'] += len(record['failed'])
        if record.get('removed'):
            # nodes deleted from the cluster mid-batch leave the compartment (its total too)
            comp['removed'].extend(record['removed'])
            comp['matched'] -= len(record['removed'])
        comp['progress'] = record.get('progress', comp['progress'])
        if record.get('stopped'):
            comp['stopped'] = True
        eta = rollout.eta(compartment)
        payload = dict(entry, play=rollout.play, mode=rollout.mode, compartment=compartment,
                       matched=comp['matched'], eta=eta, stopped=comp['stopped'])
    rollout.bus.publish('batch_end', payload)


def node_parked(rollout, compartment, host, pods, since, replacements):
    """``host`` waits for its protected ``pods`` (since ``since``, RFC 3339) and gave its slot to ``replacements``."""
    with rollout.bus.lock:
        entry = _node(rollout, host)
        entry.update(compartment=compartment, status='parked',
                     parked={'since': since, 'pods': list(pods), 'at': round(rollout.clock(), 3)})
        comp = rollout.compartments[compartment]
        if host not in comp['parked']:
            comp['parked'].append(host)
        payload = {'play': rollout.play, 'compartment': compartment, 'host': host, 'pods': list(pods),
                   'since': since, 'replacements': list(replacements)}
    rollout.bus.publish('node_parked', payload)


def node_rejoining(rollout, compartment, host):
    """``host``'s protected pods finished: it waits for a slot in ``compartment``'s next batch."""
    with rollout.bus.lock:
        entry = _node(rollout, host)
        parked = entry.get('parked') or {}
        parked['rejoined'] = round(rollout.clock(), 3)
        entry.update(status='rejoining', parked=parked)
        comp = rollout.compartments[compartment]
        comp['parked'] = [h for h in comp['parked'] if h != host]
        waited = parked['rejoined'] - parked['at'] if parked.get('at') is not None else None
        payload = {'play': rollout.play, 'compartment': compartment, 'host': host, 'waited': waited}
    rollout.bus.publish('node_rejoining', payload)


def node_settled(rollout, compartment, host, outcome):
    """A parked ``host`` ended before it took a slot again (``outcome``: ok, failed or removed): counted, no batch."""
    with rollout.bus.lock:
        _node(rollout, host).update(compartment=compartment, status=outcome)
        comp = rollout.compartments[compartment]
        comp['parked'] = [h for h in comp['parked'] if h != host]
        if outcome == 'ok':
            comp['completed'] += 1
        elif outcome == 'failed':
            comp['failed'] += 1


def shared_budget(rollout, info):
    """Record the run's part in a shared budget (a dict: run, leases, writes, max_in_flight, elsewhere)."""
    with rollout.bus.lock:
        rollout.shared_budget = dict(info)


def shown_compartments(compartments):
    """``[(name, compartment)]`` of ``compartments`` (``(name, compartment)`` pairs: a rollout's of ``rollouts()``, or a
    plan's) that its lines and summary show: all but the policy's default compartment when it matched no node and
    another compartment did (every node in a named one)."""
    comps = list(compartments)
    return [(name, comp) for name, comp in comps
            if not (name == cr_model.DEFAULT_COMPARTMENT and not comp.get('matched') and not comp.get('batches')
                    and any(other.get('matched') for dummy, other in comps))]


def compartment_result(rollout, name):
    """The summary's word for compartment ``name`` of ``rollout`` (a dict of ``rollouts()``): stopped, complete or ended
    early. Hosts that other runs of a shared budget finished (AWX slices, a second run) count: this run's part ended
    there, and the summary says how many."""
    comp = rollout['compartments'][name]
    others = ((rollout.get('shared_budget') or {}).get('elsewhere_by_compartment') or {}).get(name) or ()
    if comp['stopped']:
        return 'STOPPED: %s' % comp['stop_reason']
    if comp['completed'] + comp['failed'] + len(others) >= comp['matched']:
        return 'complete' + (' (%d by other runs)' % len(others) if others else '')
    return 'ended early (%s)' % (rollout['ended'] or 'incomplete')


def finish_rollout(rollout, compartments, not_attempted, ended=None):
    """Close a rollout with the scheduler's final per-compartment summaries."""
    with rollout.bus.lock:
        rollout.finished = rollout.clock()
        rollout.ended = ended
        rollout.not_attempted = list(not_attempted)
        for summary in compartments:
            comp = rollout.compartments[summary['name']]
            comp['stopped'] = summary['stopped']
            comp['stop_reason'] = summary['stop_reason']
            comp['completed'] = summary['completed']
            comp['failed'] = summary['failed']
            comp['removed'] = list(summary.get('removed') or [])
            comp['parked'] = list(summary.get('parked') or [])
            comp['matched'] = summary.get('matched', comp['matched'])
            comp['progress'] = summary['progress']
            comp['running'] = {}
            for key in ('max_in_flight',):
                if key in summary:
                    comp[key] = summary[key]
        rollout.stopped = any(c['stopped'] for c in rollout.compartments.values())
        payload = rollout.as_dict()
    rollout.bus.publish('rollout_end', payload)


# ---------------------------------------------------------------------- the timeline

# What a step interval is, for the timeline's colours; every interval has one of these kinds: the steps' kinds
# (module_utils/cluster_modules, node_steps.step_kind), a drain's protected-pods wait, any other task.
KINDS = ('plan', 'guard', 'cordon', 'wait', 'drain', 'stage', 'interrupt', 'health', 'state', 'uncordon', 'task')
# tasks that only bring other tasks in: their own result is no step of the node
_CONTROL_ACTIONS = frozenset(['include_tasks', 'include_role', 'import_tasks', 'import_role', 'meta'])
# a 200-node rollout keeps a few thousand intervals: each is a few short strings
NAME_CHARS = 120
DETAIL_CHARS = 300


def _interval(name, kind, started, finished, ok, changed=False, detail=None, waits=None):
    step = {'name': str(name)[:NAME_CHARS], 'kind': kind, 'started': round(started, 3),
            'finished': round(max(started, finished), 3), 'ok': bool(ok), 'changed': bool(changed),
            'detail': str(detail or '')[:DETAIL_CHARS]}
    if waits:
        step['waits'] = waits
    return step


def _task_kind(name, module, data):
    """The kind of a collection module's own task (not a step of node_update): the step kind of the arguments it ran
    with. A node_cordon result without them (one that failed before they were read) has its task's name to go by."""
    args = (data.get('invocation') or {}).get('module_args')
    if args is None and module == 'node_cordon':
        args = {'state': 'uncordoned'} if 'uncordon' in str(name).lower() else {}
    return node_steps.step_kind(module, args or {})


def _module_steps(name, kind, record, started, finished):
    """The interval(s) of one collection module's result: a drain is its protected-pods wait, then the drain."""
    failed = bool(record.get('failed') or record.get('unreachable'))
    detail = record.get('msg') if failed else (record.get('message') or '')
    if kind != 'drain':
        return [_interval(name, kind, started, finished, not failed, record.get('changed'), detail)]
    steps = []
    protected = min(float(record.get('protected_wait') or 0.0), max(0.0, finished - started))
    if protected > 0:
        detail = 'waited %s for the protected pods to finish' % format_duration(protected)
        if record.get('parked'):
            detail += ', parked: its batch slot went to the next node meanwhile'
        steps.append(_interval('wait for protected pods', 'wait', started, started + protected, True, False, detail))
    waits = record.get('pdb_waits')
    if waits is None:
        waits = drain_rules.pdb_waits(record.get('pods'), started)
    if not failed:
        detail = 'evicted %s, skipped %s' % (record.get('evicted', 0), record.get('skipped', 0))
        if waits:
            detail += '; %d pod(s) waited on a PodDisruptionBudget' % len(waits)
    steps.append(_interval(name, 'drain', started + protected, finished, not failed, record.get('changed'), detail, waits))
    return steps


def task_steps(name, action, data, started, finished):
    """The timeline intervals of one task's result on one host; [] for a skipped task.

    node_update's result is its steps (each with ``started`` and ``seconds``); the collection's
    other modules get their kind (a cordon, a drain...); any other task is one ``task`` interval.
    """
    data = data if isinstance(data, dict) else {}
    module = str(action or '').rsplit('.', 1)[-1]
    if data.get('skipped') or module in _CONTROL_ACTIONS:
        return []
    sequence = data.get('steps')
    if module == 'node_update' and isinstance(sequence, list) and sequence:
        steps, cursor = [], started
        for record in sequence:
            begin = record.get('started', cursor)
            cursor = begin + float(record.get('seconds') or 0.0)
            # node_sequence puts the kind in every record. No fallback for records without one: a report's JSON
            # (rollout_report's report option) holds the intervals made here, kinds and all, never these records.
            steps.extend(_module_steps(record.get('step'), record.get('kind') or 'task', record, begin, cursor))
        return steps
    registered = cluster_modules.by_action(module)
    if registered is not None and registered.is_step:
        return _module_steps(name, _task_kind(name, module, data), data, started, finished)
    failed = data.get('failed') or data.get('unreachable')
    return [_interval(name, 'task', started, finished, not failed, data.get('changed'), data.get('msg') if failed else '')]


def task_finished(rollout, host, name, action, data, started=None):
    """Record a task's result on a host of the rollout as the host's timeline steps."""
    finished = rollout.clock()
    steps = task_steps(name, action, data, finished if started is None else started, finished)
    if steps:
        with rollout.bus.lock:
            _node(rollout, host)['steps'].extend(steps)


def write_atomically(path, text):
    """Write ``text`` to ``path`` (made absolute, its directory created), then rename: a reader never sees half of it."""
    path = os.path.abspath(os.path.expanduser(path))
    directory = os.path.dirname(path)
    if not os.path.isdir(directory):
        os.makedirs(directory)
    fd, tmp = tempfile.mkstemp(prefix='.nodewright-report-', dir=directory)
    try:
        with os.fdopen(fd, 'w', encoding='utf-8') as handle:
            handle.write(text)
        os.rename(tmp, path)
    except Exception:
        os.unlink(tmp)
        raise
    return path
