# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""What the admission (plugin_utils/rollout/admission.py) says during a budgeted play, as banners on Ansible's display.

The texts users, the rollout callback and the tests read (``NODEWRIGHT BATCH 2 [gpu] 4 hosts: ...``);
the --limit driver says the same events as ``nodewright: ...`` lines (limit_driver.LineReporter).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.utils.display import Display

from ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout import admission

display = Display()

PREFIX = 'nodewright.bridge.budgeted: '


def plural(count, word='host'):
    """``1 host``, ``2 hosts``."""
    return '%d %s%s' % (count, word, '' if count == 1 else 's')


class Banners(admission.Reporter):
    """What the admission says, as banners and lines on the display. ``play``: the strategy's play state
    (play_phases.PlayPhases: ``sliding``, ``label(comp)``, ``compartment_rollout(comp)``)."""

    def __init__(self, play):
        self.play = play

    def _where(self, comp=None):
        return self.play.label(comp)

    def _kind(self):
        return 'GROUP' if self.play.sliding else 'BATCH'

    def batch_started(self, comp, number, names):
        display.banner('NODEWRIGHT BATCH %d [%s] %s: %s' % (number, self._where(comp), plural(len(names)), ', '.join(names)),
                       cows=False)

    def admitted(self, comp, names, in_flight, window):
        display.display('NODEWRIGHT ADMIT [%s] %s (in flight %d of window %d)'
                        % (self._where(comp), ', '.join(names), in_flight, window))

    def scored(self, comp, record):
        status = 'FAILED BATCH' if record['failed_batch'] else 'ok'
        if record.get('drain'):
            status += ' (hosts in flight when the compartment stopped)'
        removed = ', %d removed (node deleted)' % len(record['removed']) if record.get('removed') else ''
        if record.get('parked'):
            removed += ', %d parked (%s)' % (len(record['parked']), ', '.join(record['parked']))
        line = 'NODEWRIGHT %s %d [%s] done: %d ok, %d failed%s, %s; progress %d%%' % (
            self._kind(), record['number'], self._where(comp), len(record['ok']), len(record['failed']), removed, status,
            record['progress'])
        rollout = self.play.compartment_rollout(comp)
        if rollout.stopped and not record.get('drain'):
            line += '; COMPARTMENT STOPPED: %s' % rollout.stop_reason
        display.banner(line, cows=False)

    def fleet_scored(self, comp, record):
        display.banner('NODEWRIGHT FLEET %s %d [%s] scored: %d nodes over every run, %d ok, %d failed, %s; fleet progress '
                       '%d%%%s' % (self._kind(), record['number'], self._where(comp), record['size'], len(record['ok']),
                                   len(record['failed']), 'FAILED BATCH' if record['failed_batch'] else 'ok',
                                   record['progress'], '; STOPPED' if record['stopped'] else ''), cows=False)

    def joined(self, budget):
        display.display('NODEWRIGHT SHARED BUDGET %s: run %s joined %s' % (
            budget.scope, budget.run, ', '.join(budget.where(c) for c in sorted(budget.joined))))

    def waiting(self, comp, message):
        display.display('NODEWRIGHT WAIT [%s]: %s' % (self._where(comp), message))

    def would_wait(self, reason):
        display.display('NODEWRIGHT CHECK MODE [%s]: a real run would wait here: %s' % (self._where(), reason))

    def deferred(self, title, reason, until):
        display.banner('NODEWRIGHT %s [%s]: %s; the hosts not started wait for %s' % (title, self._where(), reason, until),
                       cows=False)

    def warning(self, message):
        display.warning(PREFIX + message)

    def error(self, message):
        display.error(PREFIX + message)

    def stopped(self, comp, reason):
        display.banner('NODEWRIGHT ROLLOUT STOPPED [%s]: %s' % (self.play.label(comp), reason), cows=False)

    def parked(self, comp, name, pods, replacements):
        display.display('NODEWRIGHT PARKED [%s] %s waits for protected pods (%s); its batch slot goes to %s' % (
            self._where(comp), name, ', '.join(pods) or 'none listed',
            ', '.join(replacements) or 'the next node (none waiting)'))

    def rejoining(self, comp, name, waited):
        display.display('NODEWRIGHT REJOIN [%s] %s: its protected pods finished after %.0f s; it takes the next free slot'
                        % (self._where(comp), name, waited))
