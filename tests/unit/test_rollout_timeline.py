# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The rollout timeline: the steps recorded in rollout_state, and the HTML page drawn from the report."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re

import pytest

from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution import node_sequence
from ansible_collections.nodewright.bridge.plugins.plugin_utils.reporting import rollout_state
from ansible_collections.nodewright.bridge.plugins.plugin_utils.reporting import rollout_timeline

T0 = 1767225600.0  # 2026-01-01 00:00:00 UTC
COMPARTMENT = {'name': 'rack-a', 'matched': 3, 'ceiling': 2, 'budget': {'percent': 50},
               'strategy': {'linear': {'initialBatch': 1, 'delta': 1}}}


def _update_result(failed_stage=False):
    """A node_update result as node_sequence makes it (steps with their kind, started, seconds), a PDB wait in its drain."""
    steps = [
        dict(step='plan', module='nodewright.bridge.rollout_plan', kind='plan', started=T0, seconds=0.5, changed=False),
        dict(step='cordon', module='nodewright.bridge.node_cordon', kind='cordon', started=T0 + 0.5, seconds=0.2, changed=True),
        dict(step='drain', module='nodewright.bridge.node_drain', kind='drain', started=T0 + 1, seconds=30, changed=True,
             protected_wait=10.0, evicted=2, skipped=1,
             pdb_waits=[{'pod': 'ml/web-0', 'pdbs': ['ml/web (maxUnavailable 1, disruptionsAllowed 0)'], 'attempts': 5,
                         'action': 'evicted', 'started': T0 + 12, 'seconds': 15.0}]),
        dict(step='driver apply', module='nodewright.bridge.package_stage', kind='stage', started=T0 + 31, seconds=5, changed=True),
    ]
    if failed_stage:
        steps.append(dict(step='nccl <apply>', module='nodewright.bridge.package_stage', kind='stage', started=T0 + 36, seconds=2,
                          changed=False, failed=True, msg='stage failed: exit 1 <script>alert(1)</script>'))
    else:
        steps += [
            dict(step='driver interrupt (reboot)', module='nodewright.bridge.node_interrupt', kind='interrupt', started=T0 + 36, seconds=20,
                 changed=True, rebooted=True),
            dict(step='health', module='nodewright.bridge.node_health', kind='health', started=T0 + 56, seconds=3, changed=False),
            dict(step='complete', module='nodewright.bridge.node_state', kind='state', started=T0 + 59, seconds=0.1, changed=True),
            dict(step='uncordon', module='nodewright.bridge.node_cordon', kind='uncordon', started=T0 + 59.1, seconds=0.1, changed=True),
        ]
    return {'changed': True, 'failed': failed_stage, 'steps': steps}


@pytest.fixture
def bus():
    """One rollout of 3 nodes: n1 updated, n2 failed (the compartment stopped), n3 never admitted, on a bus of its own."""
    bus = rollout_state.RolloutBus()
    clock = iter(T0 + i for i in range(0, 1000, 20))
    rollout = bus.start_rollout('roll <out>', 'batch', [COMPARTMENT])
    rollout.clock = lambda: next(clock)
    rollout.started = T0
    rollout_state.batch_started(rollout, 'rack-a', 1, ['n1'])
    rollout_state.task_finished(rollout, 'n1', 'node : Bring the node up to date', 'nodewright.bridge.node_update',
                                _update_result(), T0)
    rollout_state.task_finished(rollout, 'n1', 'skipped one', 'ansible.builtin.debug', {'skipped': True}, T0)
    rollout_state.batch_finished(rollout, 'rack-a', {'number': 1, 'size': 1, 'hosts': ['n1'], 'ok': ['n1'], 'failed': [],
                                                     'failed_batch': False, 'progress': 33, 'stopped': False})
    rollout_state.batch_started(rollout, 'rack-a', 2, ['n2'])
    rollout_state.task_finished(rollout, 'n2', 'node : Bring the node up to date', 'nodewright.bridge.node_update',
                                _update_result(failed_stage=True), T0 + 60)
    rollout_state.task_finished(rollout, 'n2', 'Tell <someone>', 'ansible.builtin.command', {'changed': True}, T0 + 100)
    rollout_state.batch_finished(rollout, 'rack-a', {'number': 2, 'size': 1, 'hosts': ['n2'], 'ok': [], 'failed': ['n2'],
                                                     'failed_batch': True, 'progress': 66, 'stopped': True})
    rollout_state.finish_rollout(rollout, [{'name': 'rack-a', 'stopped': True, 'completed': 1, 'failed': 1, 'progress': 66,
                                            'stop_reason': '1 consecutive failed batch (failureThreshold 1) <b>'}], ['n3'])
    return bus


@pytest.fixture
def report(bus):
    # through JSON, as the callback writes it and the browser test reads it
    return json.loads(json.dumps(bus.report()))


def _bars(page):
    return re.findall(r'<div class="bar[^"]*"[^>]*data-node="([^"]*)" data-step="([^"]*)" data-index="(\d+)"', page)


def test_node_update_is_recorded_as_its_steps_the_drain_split_at_the_protected_wait(report):
    nodes = report['rollouts'][0]['nodes']
    assert 'nodes' not in report  # the latest rollout's nodes are under rollouts only
    n1 = nodes['n1']
    assert (n1['compartment'], n1['batch'], n1['status']) == ('rack-a', 1, 'ok')
    assert [(s['name'], s['kind']) for s in n1['steps']] == [
        ('plan', 'plan'), ('cordon', 'cordon'), ('wait for protected pods', 'wait'), ('drain', 'drain'),
        ('driver apply', 'stage'), ('driver interrupt (reboot)', 'interrupt'), ('health', 'health'),
        ('complete', 'state'), ('uncordon', 'uncordon')]
    wait, drain = n1['steps'][2:4]
    assert (wait['started'], wait['finished'], drain['started'], drain['finished']) == (T0 + 1, T0 + 11, T0 + 11, T0 + 31)
    assert drain['waits'][0]['pod'] == 'ml/web-0' and 'disruptionsAllowed 0' in drain['waits'][0]['pdbs'][0]
    assert '1 pod(s) waited on a PodDisruptionBudget' in drain['detail']
    n2 = nodes['n2']
    assert n2['status'] == 'failed'
    assert [s['ok'] for s in n2['steps']][-2:] == [False, True]  # the failed stage, then the user's own task
    assert n2['steps'][-1] == {'name': 'Tell <someone>', 'kind': 'task', 'started': T0 + 100, 'finished': n2['steps'][-1]['finished'],
                               'ok': True, 'changed': True, 'detail': ''}
    assert report['rollouts'][0]['compartments']['rack-a']['batches'][0]['started'] == T0


def test_the_custom_stats_report_leaves_the_timeline_out_and_the_store_keeps_it(report, bus):
    lean = json.loads(json.dumps(bus.report(nodes=False)))
    assert 'nodes' not in lean and all('nodes' not in r for r in lean['rollouts'])
    assert lean['rollouts'][0]['compartments'] == report['rollouts'][0]['compartments']
    assert set(bus.report()['rollouts'][0]['nodes']) == {'n1', 'n2'}


def test_a_modules_own_task_gets_its_kind_and_pdb_waits():
    drain = rollout_state.task_steps('Wait for protected pods, then drain', 'nodewright.bridge.node_drain', {
        'changed': True, 'protected_wait': 0, 'evicted': 1, 'skipped': 0,
        'pods': [{'namespace': 'ml', 'name': 'a', 'attempts': 1, 'started': 0.1, 'finished': 0.2, 'pdbs': []},
                 {'namespace': 'ml', 'name': 'b', 'attempts': 3, 'started': 0.1, 'finished': 6.1, 'pdbs': ['ml/b-pdb'],
                  'action': 'evicted', 'manifest': {'big': 'x' * 1000}}]}, T0, T0 + 7)
    assert [(s['kind'], s['started']) for s in drain] == [('drain', T0)]
    assert drain[0]['waits'] == [{'pod': 'ml/b', 'attempts': 3, 'action': 'evicted', 'pdbs': ['ml/b-pdb'],
                                  'started': T0 + 0.1, 'seconds': 6.0}]
    uncordon = rollout_state.task_steps('Uncordon (only the owner\'s cordon is released)', 'nodewright.bridge.node_cordon',
                                        {'changed': True}, T0, T0 + 1)
    assert uncordon[0]['kind'] == 'uncordon'
    assert rollout_state.task_steps('x', 'ansible.builtin.include_tasks', {}, T0, T0 + 1) == []


def test_node_sequence_records_each_steps_start_and_keeps_only_the_pdb_waits_of_a_drain():
    clock = iter([T0, T0 + 4])
    pods = [{'namespace': 'ml', 'name': 'p', 'attempts': 2, 'started': 1.0, 'finished': 3.0, 'pdbs': ['ml/pdb']}]
    sequence = node_sequence.NodeSequence({'node': 'n1'}, {}, lambda module, args: {'changed': True, 'pods': pods},
                                          clock=lambda: next(clock))
    sequence.step('drain', 'node_drain', {})
    record = sequence.steps[0]
    assert (record['started'], record['seconds']) == (T0, 4.0)
    assert 'pods' not in record and record['pdb_waits'][0]['started'] == T0 + 1.0


def test_every_step_has_its_bar_and_everything_from_the_cluster_is_escaped(report):
    page = rollout_timeline.render(report)
    expected = [(host, step['name'], i) for host, node in report['rollouts'][0]['nodes'].items()
                for i, step in enumerate(node['steps'])]
    found = [(node, step.replace('&lt;', '<').replace('&gt;', '>'), int(i)) for node, step, i in _bars(page)]
    assert sorted(found) == sorted(expected)
    assert '<script>' not in page and '<b>' not in page.replace('<b>Stopped:</b>', '').replace('<b>STOPPED</b>', '') \
        .replace('<b>failed batch</b>', '').replace('<b>compartment stopped</b>', '')
    assert 'roll &lt;out&gt;' in page and 'nccl &lt;apply&gt;' in page
    assert 'http' not in page.lower().replace('http-equiv', '')  # no external asset, no fetch
    assert '<script' not in page


def test_failures_the_stop_reason_and_the_batch_sizes_against_the_policy_are_shown(report):
    page = rollout_timeline.render(report)
    assert page.count('class="bar failed"') == 1
    assert 'failed at &quot;nccl &lt;apply&gt;&quot;: stage failed: exit 1 &lt;script&gt;' in page
    assert '<b>Stopped:</b> 1 consecutive failed batch (failureThreshold 1) &lt;b&gt;' in page
    assert 'batch 2: 1 node <small>(policy: linear, budget 50% \u2192 2)' in page
    assert 'Never admitted: n3' in page
    assert 'pod ml/web-0 waited 15.0s on PDB ml/web (maxUnavailable 1, disruptionsAllowed 0)' in page
    assert page.count('class="pdbwait"') == 2  # n1's and n2's drains


def test_the_axis_has_round_ticks_over_the_rollout():
    assert rollout_timeline.ticks(100) == list(range(0, 101, 10))
    assert rollout_timeline.ticks(200) == [0, 30, 60, 90, 120, 150, 180]
    assert rollout_timeline.ticks(4) == [0, 1, 2, 3, 4]
    assert len(rollout_timeline.ticks(86400 * 30)) <= 11


def test_an_empty_report_and_a_rollout_without_nodes_render():
    page = rollout_timeline.render(rollout_state.RolloutBus().report())
    assert 'No budgeted rollout was recorded.' in page and page.startswith('<!DOCTYPE html>')
    comp = dict(COMPARTMENT, batches=[], completed=0, failed=0, progress=100)
    empty = {'rollouts': [{'play': 'p', 'mode': 'sliding', 'compartments': {'c': comp}, 'nodes': {}, 'not_attempted': [],
                           'excluded': {'x': 'failed <before>'}, 'elapsed': 0}]}
    page = rollout_timeline.render(empty)
    assert 'data-step' not in page and 'Left out: x (failed &lt;before&gt;)' in page
    # an older report (no nodes, no rollouts list) still renders its compartments
    assert 'data-compartment="c"' in rollout_timeline.render(dict(empty['rollouts'][0]))
