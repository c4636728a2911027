# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The plan report's lines: like nodes grouped, steps by when they run, long name lists cut, previews per node."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.nodewright.bridge.plugins.plugin_utils.reporting import plan_text

PENDING = [{'package': 'sysctl', 'version': '1.0', 'stage': 'apply', 'after': None},
           {'package': 'driver', 'version': '2.0', 'stage': 'apply', 'after': 'cordon'},
           {'package': 'tuning', 'version': '1.2', 'stage': 'apply', 'after': 'drain'},
           {'package': 'tuning', 'version': '1.2', 'stage': 'interrupt', 'after': 'drain'}]


def test_the_steps_by_when_they_run_each_package_once():
    assert plan_text.step_phases(PENDING) == [
        ('on the node as it is', ['sysctl 1.0 (apply)']), ('once cordoned', ['driver 2.0 (apply)']),
        ('after the drain', ['tuning 1.2 (apply, interrupt)'])]
    assert plan_text.step_phases([]) == []


def test_long_name_lists_are_cut_in_the_middle():
    assert plan_text.names(['a', 'b']) == 'a, b'
    assert plan_text.names(['n%02d' % i for i in range(20)]) == 'n00, n01, n02, n03, n04, ... n17, n18, n19 (20)'


def test_nodes_that_do_the_same_thing_are_one_group_and_their_previews_stay_per_node():
    phases = [list(p) for p in plan_text.step_phases(PENDING)]
    node = {'compartment': 'rack-a', 'complete': False, 'phases': phases, 'interrupt': {'type': 'reboot', 'services': []},
            'needs_drain': True}
    other = dict(node, compartment='rack-b')
    previewed = dict(node, evict=['ml/job-1'], pdb_blockers=[{'namespace': 'ml', 'name': 'job-1', 'pdbs': ['ml/pdb']}])
    cr = {'priority': 200, 'sequencing': 'node', 'budget': 'policy racks',
          'summary': {'matched': 4, 'complete': 1, 'to_update': 3, 'needs_drain': 3},
          'compartments': [{'name': '__default__', 'matched': 0, 'ceiling': 0, 'batch_sizes': []},
                           {'name': 'rack-a', 'matched': 3, 'ceiling': 2, 'batch_sizes': [2, 1], 'batches': [['a1', 'a2'], ['a3']]}],
          'nodes': {'a1': node, 'a2': previewed, 'a3': dict(node, complete=True), 'b1': other}}
    assert plan_text.cr_lines('gpu', cr) == [
        '== gpu (priority 200, sequencing node)',
        '   4 nodes: 1 complete, 3 to update (3 drained); policy racks',
        '   compartment rack-a: 3 nodes, ceiling 2, batches [2, 1]',
        '     batch 1: a1, a2',
        '     batch 2: a3',
        '   a1, a2 [rack-a]; interrupt reboot:',
        '     on the node as it is: sysctl 1.0 (apply)',
        '     once cordoned: driver 2.0 (apply)',
        '     after the drain: tuning 1.2 (apply, interrupt)',
        '     a2: its drain evicts 1 pod(s): ml/job-1',
        '     a2: BLOCKED NOW ml/job-1 by ml/pdb',
        '   b1 [rack-b]; interrupt reboot:',
        '     on the node as it is: sysctl 1.0 (apply)',
        '     once cordoned: driver 2.0 (apply)',
        '     after the drain: tuning 1.2 (apply, interrupt)']
