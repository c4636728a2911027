# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
name: rollout
type: aggregate
short_description: Progress, ETA, summary and a JSON report for nodewright.bridge.budgeted plays
version_added: 0.1.0
description:
  - Prints one line per batch of a play run with the C(nodewright.bridge.budgeted) strategy
    (compartment, batch number, size, hosts ok and failed, progress, elapsed time and ETA), and a
    summary table at the end of the playbook.
  - Writes a JSON report when O(report) is set; the format is described in the collection's
    C(docs/strategy.md). The same document is the C(nodewright_rollout) custom stat.
  - Writes the rollout timeline, an HTML page drawn from the same report, when O(report_html) is set.
  - An aggregate callback; it works next to any stdout callback (including AWX's).
  - The strategy shares its batch state through the collection's C(plugin_utils) (ansible-core 2.19+
    only dispatches the standard callback events), so this callback prints nothing for plays that
    use other strategies.
  - When a play starts, in C(ansible-playbook) before the play's workers fork, it loads once what each
    of the collection's cluster tasks would otherwise load in its own worker (the cluster modules' code,
    the C(kubernetes) client, the templating plugins); the C(nodewright.bridge.budgeted) strategy does the same
    for its plays, so this matters for plays of other strategies (the C(nodewright.bridge.apply) playbook's
    plan and report plays, the maintenance role's plays).
author:
  - nodewright.bridge contributors (@nodewright)
requirements:
  - enable it, for example C(ANSIBLE_CALLBACKS_ENABLED=nodewright.bridge.rollout)
options:
  report:
    description:
      - Path of the JSON report, rewritten at the end of every budgeted play and of the playbook (with the run's
        custom stats as C(custom_stats) at its end, also when nothing was rolled out).
    type: path
    env:
      - name: NODEWRIGHT_REPORT
    ini:
      - section: callback_nodewright_rollout
        key: report
  report_html:
    description:
      - Path of the rollout timeline, the same report as one self-contained HTML page (per compartment and batch,
        a row per node with its steps as bars on a time axis; failures and stop reasons marked), rewritten when
        the JSON report is.
    type: path
    version_added: 0.1.0
    env:
      - name: NODEWRIGHT_REPORT_HTML
    ini:
      - section: callback_nodewright_rollout
        key: report_html
'''

EXAMPLES = r'''
# Enabled in ansible.cfg (in AWX: the project's ansible.cfg, or the job template's environment with
# ANSIBLE_CALLBACKS_ENABLED=nodewright.bridge.rollout and NODEWRIGHT_REPORT=...):
#
#   [defaults]
#   callbacks_enabled = nodewright.bridge.rollout
#
#   [callback_nodewright_rollout]
#   report = rollout-report.json
#   report_html = rollout-timeline.html
#
# It then reports every play of the nodewright.bridge.budgeted strategy, such as apply's rollout:
#
#   ansible-playbook nodewright.bridge.apply -e nodewright_cr=gpu-node-tuning.yaml
#
#   nodewright: [__default__] batch 1: size 2, ok 2, failed 0, progress 25%, elapsed 41s, ETA 2m03s
#   ...
#   NODEWRIGHT ROLLOUT SUMMARY
'''

import json
import os

from ansible.plugins.callback import CallbackBase

from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution import venue
from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution import core_internals
from ansible_collections.nodewright.bridge.plugins.plugin_utils.reporting import rollout_state
from ansible_collections.nodewright.bridge.plugins.plugin_utils.reporting import rollout_timeline


def _strategy_name(strategy):
    if not strategy:
        return 'budget'
    return next(iter(strategy))


def _table(rows):
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(rows[0]))]
    return ['  '.join(str(cell).ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in rows]


class CallbackModule(CallbackBase):
    """Renders the batches the budgeted strategy records in rollout_state."""

    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = 'aggregate'
    CALLBACK_NAME = 'nodewright.bridge.rollout'
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, *args, **kwargs):
        # the run's rollout bus, where the budgeted strategy records (rollout_state.BUS); a test may hand its own
        self.bus = kwargs.pop('bus', None) or rollout_state.BUS
        self.custom_stats = {}  # the run's custom stats, known at its end
        super(CallbackModule, self).__init__(*args, **kwargs)
        self.bus.subscribe(self._on_rollout_event)

    def _option(self, name, env):
        try:
            return self.get_option(name)
        except KeyError:
            return os.environ.get(env)

    # ------------------------------------------------------------------ strategy events

    def _on_rollout_event(self, event, payload):
        handler = getattr(self, '_show_' + event, None)
        if handler is not None:
            handler(payload)

    def _show_rollout_start(self, rollout):
        parts = []
        for name, comp in rollout_state.shown_compartments(rollout['compartments'].items()):
            parts.append('%s (%d host%s, ceiling %d, %s)' % (
                name, comp['matched'], '' if comp['matched'] == 1 else 's', comp['ceiling'],
                _strategy_name(comp['strategy'])))
        self._display.display('nodewright: rollout of play %r (%s window): %s'
                              % (rollout['play'], rollout['mode'], ', '.join(parts)))

    def _show_batch_end(self, batch):
        line = 'nodewright: [%s] %s %d: size %d, ok %d, failed %d, progress %d%%, elapsed %s, ETA %s' % (
            batch['compartment'], 'group' if batch['mode'] == 'sliding' else 'batch', batch['number'], batch['size'],
            len(batch['ok']), len(batch['failed']), batch['progress'], rollout_state.format_duration(batch['elapsed']),
            rollout_state.format_duration(batch['eta']))
        if batch.get('failed_batch'):
            line += ' (failed batch: %s)' % ', '.join(batch['failed'])
        if batch.get('stopped'):
            line += ' -- compartment stopped'
        self._display.display(line)

    def _show_node_parked(self, event):
        self._display.display('nodewright: [%s] %s parked: waits for protected pods %s since %s; its slot went to %s' % (
            event['compartment'], event['host'], ', '.join(event['pods']) or '(none listed)', event['since'] or 'now',
            ', '.join(event['replacements']) or 'no node (none waiting)'))

    def _show_node_rejoining(self, event):
        waited = event.get('waited')
        self._display.display('nodewright: [%s] %s rejoins after %s: takes the next free slot' % (
            event['compartment'], event['host'], rollout_state.format_duration(waited) if waited is not None else '?'))

    def _show_rollout_end(self, rollout):
        self._write_report()

    # ------------------------------------------------------------------ standard events

    def v2_playbook_on_play_start(self, play):
        # in ansible-playbook, before the play's workers fork: what every cluster task's worker would load for
        # itself is loaded once here and inherited (docs/in-process.md); an explicit event, never an import
        venue.prepare_parent()

    def v2_runner_on_ok(self, result):
        # apply's rollout without the budgeted strategy ran in a task (nodewright.bridge.rollout_run): its rollouts
        # join the report here, as the strategy's are recorded on the bus as they run
        dummy, task, data = core_internals.result_parts(result)
        action = getattr(task, 'resolved_action', None) or getattr(task, 'action', None) or ''
        if action.endswith('rollout_run') and isinstance(data.get('rollouts'), list):
            self.bus.adopt(data['rollouts'])
            self._write_report()

    def v2_playbook_on_stats(self, stats):
        # the run's custom stats in the JSON report too (a caller that runs the playbook, as the fleet does, reads
        # nodewright_apply_left there); a plain copy: the stats may hold Ansible's own string and container types
        custom = (getattr(stats, 'custom', None) or {}).get('_run') or {}
        self.custom_stats = json.loads(json.dumps(custom, default=str))
        all_rollouts = self.bus.rollouts()
        if not all_rollouts:
            if self.custom_stats:
                self._write_report()
            return
        rows = [('play', 'compartment', 'hosts', 'batches', 'ok', 'failed', 'progress', 'elapsed', 'result')]
        for rollout in all_rollouts:
            for name, comp in rollout_state.shown_compartments(rollout['compartments'].items()):
                result = rollout_state.compartment_result(rollout, name)
                rows.append((rollout['play'], name, comp['matched'], len(comp['batches']), comp['completed'],
                             comp['failed'], '%d%%' % comp['progress'],
                             rollout_state.format_duration(rollout['elapsed']), result))
        self._display.banner('NODEWRIGHT ROLLOUT SUMMARY', cows=False)
        for line in _table(rows):
            self._display.display(line)
        for rollout in all_rollouts:
            if rollout['not_attempted']:
                self._display.display('play %r: never admitted: %s' % (rollout['play'], ', '.join(rollout['not_attempted'])))
        path = self._write_report()
        if path:
            self._display.display('nodewright: report written to %s' % path)
        html = self._option('report_html', 'NODEWRIGHT_REPORT_HTML')
        if html:
            self._display.display('nodewright: timeline written to %s' % os.path.abspath(os.path.expanduser(html)))

    def _write_report(self):
        """Write the JSON report and the timeline where asked; the JSON report's path, or None."""
        path = self._option('report', 'NODEWRIGHT_REPORT')
        html = self._option('report_html', 'NODEWRIGHT_REPORT_HTML')
        if not path and not html:
            return None
        report = self.bus.report()
        if self.custom_stats:
            report = dict(report, custom_stats=self.custom_stats)
        if path:
            path = rollout_state.write_atomically(path, json.dumps(report, indent=2, sort_keys=True) + '\n')
        if html:
            rollout_state.write_atomically(html, rollout_timeline.render(report))
        return path
