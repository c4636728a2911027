# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""Batch progress shared between the ``budgeted`` strategy and the ``rollout`` callback.

Since ansible-core 2.19 ``TaskQueueManager.send_callback`` only dispatches the standard
``v2_*`` methods, so the strategy cannot send a callback its own batch events. Both plugins
run in the controller process, though, and import this module under the same name, so the
strategy records batches here and the callback subscribes to them. Callbacks may be invoked
from the strategy's result thread, hence the lock; listeners are called outside it so a
slow listener cannot block the strategy's bookkeeping.

The report (``report()``) is the JSON document the callback writes to ``NODEWRIGHT_REPORT``
and the strategy publishes as the ``nodewright_rollout`` custom stat: the top-level
``compartments`` / ``not_attempted`` describe the most recent budgeted play, ``rollouts``
lists every budgeted play of the run in order.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import threading
import time

_LOCK = threading.RLock()
_ROLLOUTS = []
_LISTENERS = []

EVENTS = ('rollout_start', 'batch_start', 'batch_end', 'rollout_end')


def subscribe(listener):
    """Call ``listener(event, payload)`` for every event in ``EVENTS`` from now on."""
    with _LOCK:
        if listener not in _LISTENERS:
            _LISTENERS.append(listener)


def reset():
    """Forget every rollout and listener (tests, or a controller that runs several playbooks)."""
    with _LOCK:
        del _ROLLOUTS[:]
        del _LISTENERS[:]


def _publish(event, payload):
    with _LOCK:
        listeners = list(_LISTENERS)
    for listener in listeners:
        listener(event, copy.deepcopy(payload))


def format_duration(seconds):
    """``12.3s``, ``4m05s`` or ``1h02m``; ``-`` when unknown."""
    if seconds is None:
        return '-'
    seconds = max(0.0, float(seconds))
    if seconds < 60:
        return '%.1fs' % seconds
    minutes, secs = divmod(int(round(seconds)), 60)
    if minutes < 60:
        return '%dm%02ds' % (minutes, secs)
    hours, minutes = divmod(minutes, 60)
    return '%dh%02dm' % (hours, minutes)


class Rollout(object):
    """One budgeted play: its compartments, their batches and the outcome."""

    def __init__(self, play, mode, compartments, excluded=None, clock=time.time):
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
        for comp in compartments:
            self.order.append(comp['name'])
            self.compartments[comp['name']] = {
                'matched': comp['matched'], 'ceiling': comp['ceiling'], 'strategy': comp['strategy'],
                'budget': comp['budget'], 'batches': [], 'running': {}, 'stopped': False, 'stop_reason': None,
                'completed': 0, 'failed': 0, 'removed': [], 'progress': 100 if not comp['matched'] else 0,
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
        return {'play': self.play, 'mode': self.mode, 'compartments': compartments,
                'not_attempted': list(self.not_attempted), 'stopped': self.stopped, 'ended': self.ended,
                'excluded': dict(self.excluded), 'elapsed': round(finished - self.started, 3),
                'finished': self.finished is not None, 'shared_budget': copy.deepcopy(self.shared_budget)}


def start_rollout(play, mode, compartments, excluded=None):
    """Register a budgeted play; ``compartments`` are scheduler summaries (name, matched, ceiling...)."""
    rollout = Rollout(play, mode, compartments, excluded)
    with _LOCK:
        _ROLLOUTS.append(rollout)
        payload = rollout.as_dict()
    _publish('rollout_start', payload)
    return rollout


def batch_started(rollout, compartment, number, hosts):
    with _LOCK:
        batch = {'number': number, 'size': len(hosts), 'hosts': list(hosts), 'started': rollout.clock()}
        rollout.compartments[compartment]['running'][number] = batch
        payload = {'play': rollout.play, 'mode': rollout.mode, 'compartment': compartment,
                   'number': number, 'size': len(hosts), 'hosts': list(hosts)}
    _publish('batch_start', payload)


def batch_finished(rollout, compartment, record, started=None):
    """Record a scored batch (a scheduler record: number, size, hosts, ok, failed, ...)."""
    with _LOCK:
        comp = rollout.compartments[compartment]
        running = comp['running'].pop(record['number'], None)
        if started is None:
            started = running['started'] if running else rollout.clock()
        entry = dict((k, copy.deepcopy(v)) for k, v in record.items())
        entry['elapsed'] = round(max(0.0, rollout.clock() - started), 3)
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
    _publish('batch_end', payload)


def shared_budget(rollout, info):
    """Record the run's part in a shared budget (a dict: run, leases, writes, max_in_flight, elsewhere)."""
    with _LOCK:
        rollout.shared_budget = dict(info)


def finish_rollout(rollout, compartments, not_attempted, ended=None):
    """Close a rollout with the scheduler's final per-compartment summaries."""
    with _LOCK:
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
            comp['matched'] = summary.get('matched', comp['matched'])
            comp['progress'] = summary['progress']
            comp['running'] = {}
            for key in ('max_in_flight',):
                if key in summary:
                    comp[key] = summary[key]
        rollout.stopped = any(c['stopped'] for c in rollout.compartments.values())
        payload = rollout.as_dict()
    _publish('rollout_end', payload)


def rollouts():
    with _LOCK:
        return [r.as_dict() for r in _ROLLOUTS]


def report():
    """The JSON report: the latest rollout at the top level, every rollout under ``rollouts``."""
    all_rollouts = rollouts()
    if not all_rollouts:
        return {'compartments': {}, 'not_attempted': [], 'stopped': False, 'rollouts': []}
    latest = dict(all_rollouts[-1])
    latest['rollouts'] = all_rollouts
    return latest
