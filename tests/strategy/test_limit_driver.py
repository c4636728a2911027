# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The --limit fallback (plugin_utils/rollout/limit_driver.py): the same scheduler without a strategy plugin."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

import yaml

from strategy_helpers import FAIL_TASKS, ansible_env, hosts, inventory

MODULE = 'ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout.limit_driver'


def test_limit_driver_runs_one_playbook_per_batch_and_stops(tmp_path, collections_dir):
    work = str(tmp_path)
    play = {'name': 'plain', 'hosts': 'all', 'gather_facts': False, 'tasks': FAIL_TASKS,
            'vars': {'fail_hosts': ['n03']}}
    with open(os.path.join(work, 'site.yml'), 'w') as handle:
        yaml.safe_dump([play], handle)
    with open(os.path.join(work, 'inventory.yml'), 'w') as handle:
        yaml.safe_dump(inventory(hosts(8, nodewright_labels={'pool': 'gpu'})), handle)
    policy = {'apiVersion': 'nodewright.nvidia.com/v1alpha1', 'kind': 'DeploymentPolicy', 'metadata': {'name': 'p'},
              'spec': {'default': {'budget': {'count': 2},
                                   'strategy': {'fixed': {'initialBatch': 2, 'failureThreshold': 1,
                                                          'safetyLimit': 100}}}}}
    with open(os.path.join(work, 'policy.yml'), 'w') as handle:
        yaml.safe_dump(policy, handle)
    env = ansible_env(collections_dir, work, PYTHONPATH=collections_dir)
    report = os.path.join(work, 'report.json')
    proc = subprocess.run([sys.executable, '-m', MODULE, '-i', 'inventory.yml', '--policy', 'policy.yml',
                           '--limit', '!n08', '--report', report, 'site.yml', '--', '-f', '4'],
                          cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, timeout=300, check=False)
    assert proc.returncode == 2, proc.stdout
    # one ansible-playbook run per batch, limited to that batch
    runs = [line for line in proc.stdout.splitlines() if line.startswith('nodewright: ') and '--limit @' in line]
    assert len(runs) == 2, proc.stdout
    assert proc.stdout.count('PLAY RECAP') == 2
    with open(report) as handle:
        data = json.load(handle)
    comp = data['compartments']['__default__']
    assert [b['hosts'] for b in comp['batches']] == [['n01', 'n02'], ['n03', 'n04']]
    assert comp['batches'][1]['failed'] == ['n03'] and comp['stopped'] is True
    assert comp['matched'] == 7  # --limit applied before the budget
    assert data['not_attempted'] == ['n05', 'n06', 'n07']


def test_limit_driver_rejects_a_bad_budget(tmp_path, collections_dir):
    env = ansible_env(collections_dir, str(tmp_path), PYTHONPATH=collections_dir)
    proc = subprocess.run([sys.executable, '-m', MODULE, '-i', 'localhost,', '--budget', 'percent=200', 'site.yml'],
                          cwd=str(tmp_path), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, timeout=120, check=False)
    assert proc.returncode == 1
    assert 'nodewright_interruption_budget.percent: 200 is greater than the maximum 100' in proc.stdout


def test_limit_driver_defers_outside_the_maintenance_windows(tmp_path, collections_dir):
    """--gates FILE: a window that cannot open within the timeout defers every batch, a clean stop (rc 0)."""
    import datetime  # pylint: disable=import-outside-toplevel
    work = str(tmp_path)
    with open(os.path.join(work, 'site.yml'), 'w') as handle:
        yaml.safe_dump([{'hosts': 'all', 'gather_facts': False, 'tasks': [{'ansible.builtin.debug': {'msg': 'ran'}}]}], handle)
    with open(os.path.join(work, 'inventory.yml'), 'w') as handle:
        yaml.safe_dump(inventory(hosts(3)), handle)
    later = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=3)
    gates = {'nodewright_maintenance_windows': [{'start': later.strftime('%H:%M'),
                                                 'end': (later + datetime.timedelta(hours=1)).strftime('%H:%M')}],
             'nodewright_maintenance_timeout': 60}
    with open(os.path.join(work, 'gates.yml'), 'w') as handle:
        yaml.safe_dump(gates, handle)
    env = ansible_env(collections_dir, work, PYTHONPATH=collections_dir)
    proc = subprocess.run([sys.executable, '-m', MODULE, '-i', 'inventory.yml', '--budget', 'count=1', '--gates', 'gates.yml',
                           'site.yml'], cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout
    assert 'deferred: outside the maintenance windows' in proc.stdout and 'later than nodewright_maintenance_timeout (60 s)' in proc.stdout
    assert 'PLAY RECAP' not in proc.stdout  # no batch ran
    # a bad file is refused before anything runs
    with open(os.path.join(work, 'gates.yml'), 'w') as handle:
        yaml.safe_dump({'nodewright_maintenance_windows': [{'start': '10:00', 'end': '10:00'}]}, handle)
    proc = subprocess.run([sys.executable, '-m', MODULE, '-i', 'inventory.yml', '--budget', 'count=1', '--gates', 'gates.yml',
                           'site.yml'], cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, timeout=120, check=False)
    assert proc.returncode == 1 and 'nodewright_maintenance_windows[0]' in proc.stdout, proc.stdout


def test_limit_driver_without_lockstep_runs_each_compartment_on_its_own(tmp_path, collections_dir):
    """--no-lockstep: a run per compartment batch, at once; the fast compartment does not wait for the slow one."""
    work = str(tmp_path)
    play = {'name': 'work', 'hosts': 'all', 'gather_facts': False,
            'tasks': [{'ansible.builtin.shell': '{{ nw_command }}', 'changed_when': False}]}
    with open(os.path.join(work, 'site.yml'), 'w') as handle:
        yaml.safe_dump([play], handle)
    # slow's one task ends 10 s after fast's last one ran (its marker), and fails if that never comes: fast does not
    # wait for slow, however long each ansible-playbook run takes on a busy machine (seen: 6-8 s each under load)
    marker = os.path.join(work, 'f03-ran')
    waits = 'for i in $(seq 900); do [ -e %s ] && break; sleep 0.2; done; [ -e %s ] && sleep 10' % (marker, marker)
    host_map = hosts(1, 's', nodewright_labels={'pool': 'slow'}, nw_command=waits)
    host_map.update(hosts(2, 'f', nodewright_labels={'pool': 'fast'}, nw_command='sleep 0.1'))
    host_map.update(hosts(1, 'f', start=3, nodewright_labels={'pool': 'fast'}, nw_command='sleep 0.1; touch %s' % marker))
    with open(os.path.join(work, 'inventory.yml'), 'w') as handle:
        yaml.safe_dump(inventory(host_map), handle)
    compartments = [{'name': name, 'selector': {'matchLabels': {'pool': name}}, 'budget': {'count': 1},
                     'strategy': {'fixed': {'initialBatch': 1}}} for name in ('slow', 'fast')]
    policy = {'apiVersion': 'nodewright.nvidia.com/v1alpha1', 'kind': 'DeploymentPolicy', 'metadata': {'name': 'p'},
              'spec': {'default': {'budget': {'count': 1}, 'strategy': {'fixed': {'initialBatch': 1}}},
                       'compartments': compartments}}
    with open(os.path.join(work, 'policy.yml'), 'w') as handle:
        yaml.safe_dump(policy, handle)
    env = ansible_env(collections_dir, work, PYTHONPATH=collections_dir)
    report = os.path.join(work, 'report.json')
    proc = subprocess.run([sys.executable, '-m', MODULE, '-i', 'inventory.yml', '--policy', 'policy.yml', '--no-lockstep',
                           '--report', report, 'site.yml'],
                          cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout
    # the two compartments' first runs start together (their ansible-playbook output interleaves)
    assert proc.stdout.index('nodewright: running fast: f01\n') < proc.stdout.index('nodewright: [slow] batch 1:'), proc.stdout
    assert proc.stdout.index('nodewright: running slow: s01\n') < proc.stdout.index('nodewright: [fast] batch 1:'), proc.stdout
    with open(report) as handle:
        data = json.load(handle)
    slow, fast = data['compartments']['slow']['batches'], data['compartments']['fast']['batches']
    assert [b['hosts'] for b in fast] == [['f01'], ['f02'], ['f03']] and [b['hosts'] for b in slow] == [['s01']]
    ended = [b['started'] + b['elapsed'] for b in fast]
    # fast's three batches, one after the other, all ended while slow's one ran
    assert ended[2] < slow[0]['started'] + slow[0]['elapsed'], (fast, slow)
    # (the report rounds times to the millisecond)
    assert fast[1]['started'] >= ended[0] - 0.002 and fast[2]['started'] >= ended[1] - 0.002, fast
