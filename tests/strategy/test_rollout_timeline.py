# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The rollout timeline on every ansible-core of the matrix.

The strategy records each host's steps in the controller process; the rollout_report action reads
them in the worker that ansible-core forks for its task, and the callback writes them at the end of
the run. Both pages must be the same, with a bar for every step of every host, on each core.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from strategy_helpers import DEFAULT, budgeted_play, hosts, inventory

TASKS = [
    {'name': 'prepare', 'ansible.builtin.debug': {'msg': 'prepare {{ inventory_hostname }}'}},
    {'name': 'maybe fail', 'ansible.builtin.fail': {'msg': 'injected failure on {{ inventory_hostname }}'},
     'when': 'inventory_hostname in (fail_hosts | default([]))'},
    {'name': 'finish', 'ansible.builtin.debug': {'msg': 'finish {{ inventory_hostname }}'}},
]

BAR = re.compile(r'<div class="bar[^"]*"[^>]*data-node="([^"]*)" data-step="([^"]*)" data-index="(\d+)"')


def _bars(page):
    return sorted((node, int(index)) for node, _step, index in BAR.findall(page))


def test_the_playbooks_page_and_the_callbacks_page_show_every_step(run_playbook, tmp_path):
    page_path = str(tmp_path / 'from-play.html')
    report_play = {'name': 'report', 'hosts': 'localhost', 'gather_facts': False,
                   'tasks': [{'name': 'timeline', 'register': 'timeline',
                              'nodewright.bridge.rollout_report': {'path': page_path}},
                             {'name': 'what it wrote', 'ansible.builtin.debug': {'var': 'timeline'}}]}
    callback_path = str(tmp_path / 'from-callback.html')
    run = run_playbook([budgeted_play(TASKS, nodewright_interruption_budget={'count': 2}, fail_hosts=['n03']),
                        report_play], inventory(hosts(4)), env={'NODEWRIGHT_REPORT_HTML': callback_path})
    assert run.rc != 0, run  # n03 failed
    nodes = run.report['rollouts'][0]['nodes']
    assert sorted(nodes) == ['n01', 'n02', 'n03', 'n04'], run.report['rollouts'][0]
    expected = sorted((host, index) for host, node in nodes.items() for index in range(len(node['steps'])))
    # every host ran its tasks (n03 up to its failure), each a step with its own bar
    assert [s['name'] for s in nodes['n01']['steps']] == ['prepare', 'finish'], nodes['n01']
    assert [s['name'] for s in nodes['n03']['steps']] == ['prepare', 'maybe fail'], nodes['n03']
    assert nodes['n03']['status'] == 'failed' and nodes['n03']['steps'][-1]['ok'] is False, nodes['n03']
    with open(page_path, encoding='utf-8') as handle:
        from_play = handle.read()
    assert _bars(from_play) == expected
    assert 'injected failure on n03' in from_play
    assert "'nodes': 4" in run.stdout or '"nodes": 4' in run.stdout, run.stdout
    with open(callback_path, encoding='utf-8') as handle:
        assert handle.read() == from_play
    assert run.compartment(DEFAULT)['batches'][0]['hosts'] == ['n01', 'n02']


def test_check_mode_writes_no_page(run_playbook, tmp_path):
    page_path = str(tmp_path / 'never.html')
    report_play = {'name': 'report', 'hosts': 'localhost', 'gather_facts': False,
                   'tasks': [{'name': 'timeline', 'nodewright.bridge.rollout_report': {'path': page_path}}]}
    run = run_playbook([budgeted_play(TASKS, nodewright_interruption_budget={'count': 2}), report_play],
                       inventory(hosts(2)), args=['--check'])
    assert run.rc == 0, run
    assert 'changed: [localhost]' in run.stdout, run.stdout
    assert not os.path.exists(page_path)
