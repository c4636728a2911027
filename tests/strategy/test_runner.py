# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""One budgeted run through ansible-runner, the way AWX runs jobs: events and artifacts."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest
import yaml

from strategy_helpers import BIN_DIR, budgeted_play, core_version, hosts, inventory

ansible_runner = pytest.importorskip('ansible_runner')


def test_events_and_artifacts(tmp_path, collections_dir):
    private = tmp_path / 'runner'
    (private / 'project').mkdir(parents=True)
    (private / 'inventory').mkdir()
    strategy = {'fixed': {'initialBatch': 2, 'failureThreshold': 1, 'safetyLimit': 100}}
    play = budgeted_play(nodewright_policy={'default': {'budget': {'count': 2}, 'strategy': strategy}},
                         fail_hosts=['n03'])
    (private / 'project' / 'site.yml').write_text(yaml.safe_dump([play], sort_keys=False))
    (private / 'inventory' / 'hosts.yml').write_text(yaml.safe_dump(inventory(hosts(6)), sort_keys=False))
    report = str(tmp_path / 'report.json')
    envvars = {
        'PATH': BIN_DIR + os.pathsep + os.environ.get('PATH', ''),
        'ANSIBLE_COLLECTIONS_PATH': collections_dir,
        'ANSIBLE_COLLECTIONS_SCAN_SYS_PATH': 'false',
        'ANSIBLE_HOME': str(tmp_path / 'ansible-home'),
        'ANSIBLE_CALLBACKS_ENABLED': 'nodewright.bridge.rollout',
        'NODEWRIGHT_REPORT': report,
    }
    result = ansible_runner.run(private_data_dir=str(private), playbook='site.yml', envvars=envvars, quiet=True)
    events = list(result.events)
    stdout = [e.get('stdout', '') for e in events]

    assert result.status == 'failed' and result.rc == 2, '\n'.join(stdout)
    # banners and the callback's progress lines are Display output outside callbacks: verbose events
    verbose = '\n'.join(e.get('stdout', '') for e in events if e['event'] == 'verbose')
    assert 'NODEWRIGHT BATCH 1 [__default__] 2 hosts: n01, n02' in verbose
    assert 'NODEWRIGHT BATCH 2 [__default__] done: 1 ok, 1 failed, FAILED BATCH' in verbose
    assert 'nodewright: [__default__] batch 2: size 2, ok 1, failed 1, progress 66%' in verbose
    assert 'NODEWRIGHT ROLLOUT SUMMARY' in verbose
    # the custom stat reaches AWX as the job's artifacts
    stats = [e for e in events if e['event'] == 'playbook_on_stats']
    assert len(stats) == 1
    rollout = stats[0]['event_data']['artifact_data']['nodewright_rollout']
    comp = rollout['compartments']['__default__']
    assert [b['hosts'] for b in comp['batches']] == [['n01', 'n02'], ['n03', 'n04']]
    assert comp['stopped'] is True and rollout['not_attempted'] == ['n05', 'n06']
    # never-admitted hosts appear in the host summary (skipped), failed ones as failures
    assert stats[0]['event_data']['skipped'].get('n05') == 1 and stats[0]['event_data']['failures'] == {'n03': 1}
    # only the admitted hosts ran anything
    assert set(e['event_data'].get('host') for e in events if e['event'] == 'runner_on_start') == {'n01', 'n02', 'n03', 'n04'}
    if core_version() >= (2, 19):
        deprecations = '\n'.join(e.get('stdout', '') for e in events if e['event'] == 'deprecated')
        assert 'Use of strategy plugins not included in ansible.builtin are deprecated' in deprecations
    # runner's artifacts: per-event files and the full stdout
    artifacts = result.config.artifact_dir
    assert len(os.listdir(os.path.join(artifacts, 'job_events'))) == len(events)
    with open(os.path.join(artifacts, 'stdout')) as handle:
        assert 'NODEWRIGHT BATCH 2 [__default__] 2 hosts: n03, n04' in handle.read()
    with open(report) as handle:
        assert json.load(handle)['compartments'] == rollout['compartments']
