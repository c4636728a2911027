# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""plugin_utils.rollout.fleet_runs: a stage's clusters run at most max_concurrency at once, a run past the progress
deadline stopped, no cluster started once the fleet's failures exceed max_failures. Real processes stand in for the
apply runs (a shell per cluster, in a process group of its own)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import subprocess
import threading
import time

from ansible_collections.nodewright.bridge.plugins.module_utils.model import fleet_model
from ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout import fleet_runs


class Shells(object):
    """``popen`` for StageRun: each cluster's run is ``scripts[cluster]`` in sh; the most running at once is kept."""

    def __init__(self, scripts):
        self.scripts = scripts
        self.running = 0
        self.most = 0
        self.lock = threading.Lock()

    def __call__(self, argv, **kwargs):
        cluster = [a for a in argv if a.endswith('.vars.json')][0].split('/')[-1].split('.')[0]
        proc = subprocess.Popen(['sh', '-c', self.scripts[cluster]], **kwargs)
        with self.lock:
            self.running += 1
            self.most = max(self.most, self.running)
        original = proc.wait

        def wait(timeout=None):
            try:
                return original(timeout=timeout)
            finally:
                if proc.returncode is not None:
                    with self.lock:
                        self.running -= 1
                    proc.wait = original
        proc.wait = wait
        return proc


def _stage(tmp_path, scripts, stage, **fleet):
    definition = dict({'clusters': dict((c, {'context': c}) for c in scripts), 'stages': [stage]}, **fleet)
    parsed = fleet_model.parse_fleet(definition)
    shells = Shells(scripts)
    lines = []
    run = fleet_runs.StageRun(parsed, parsed.stages[0], {'nodewright_cr_name': 'gpu'}, str(tmp_path), lines.append,
                              popen=shells)
    return run, shells, lines


def test_at_most_max_concurrency_clusters_run_at_once_each_with_its_context(tmp_path):
    scripts = dict((c, 'sleep 0.3') for c in ('a', 'b', 'c', 'd'))
    run, shells, dummy = _stage(tmp_path, scripts, {'clusters': ['a', 'b', 'c', 'd'], 'max_concurrency': 2})
    results = run.run()
    assert shells.most == 2
    assert dict((c, r['outcome']) for c, r in results.items()) == dict((c, 'ok') for c in scripts)
    variables = json.loads((tmp_path / 'c.vars.json').read_text())
    assert variables == {'nodewright_cr_name': 'gpu', 'nodewright_context': 'c'}


def test_a_run_past_the_progress_deadline_is_stopped_and_counts_as_failed(tmp_path):
    run, dummy, lines = _stage(tmp_path, {'slow': 'sleep 30', 'quick': 'exit 0'}, {'clusters': ['slow', 'quick']},
                               progress_deadline='1s', max_failures=1)
    started = time.time()
    results = run.run()
    assert time.time() - started < 10
    assert results['slow']['outcome'] == fleet_runs.DEADLINE and results['quick']['outcome'] == fleet_runs.OK
    assert not run.over_budget()
    assert any('progress deadline' in line for line in lines)


def test_no_cluster_starts_once_the_failures_pass_max_failures(tmp_path):
    run, dummy, dummy2 = _stage(tmp_path, {'a': 'exit 2', 'b': 'exit 0', 'c': 'exit 0'},
                                {'clusters': ['a', 'b', 'c'], 'max_concurrency': 1})
    results = run.run()
    assert results['a']['outcome'] == fleet_runs.FAILED and results['a']['rc'] == 2
    assert results['b']['outcome'] == results['c']['outcome'] == fleet_runs.NOT_STARTED
    assert 'max_failures 0' in results['b']['msg'] and run.over_budget()


def test_each_nodes_outcome_comes_from_the_runs_report():
    report = {'rollouts': [{'nodes': {'n1': {'status': 'failed', 'compartment': 'c', 'batch': 1, 'steps': []}}},
                           {'nodes': {'n1': {'status': 'ok', 'compartment': 'c', 'batch': 1}, 'n2': {'status': 'ok'}}}]}
    assert fleet_runs.node_outcomes(report) == {'n1': {'status': 'ok', 'compartment': 'c', 'batch': 1},
                                                'n2': {'status': 'ok', 'compartment': None, 'batch': None}}
    assert fleet_runs.node_outcomes(None) == {}


def test_outside_the_maintenance_windows_for_good_the_stage_defers_and_starts_nothing(tmp_path):
    scripts = {'a': 'exit 0', 'b': 'exit 0'}
    definition = {'clusters': {'a': {}, 'b': {}}, 'stages': [{'clusters': ['a', 'b'], 'max_concurrency': 1}]}
    parsed = fleet_model.parse_fleet(definition)
    monday_noon = 1765195200.0  # 2025-12-08 12:00 UTC, a Monday
    apply_vars = {'nodewright_maintenance_windows': [{'days': ['sat'], 'start': '01:00', 'end': '02:00', 'timezone': 'UTC'}],
                  'nodewright_maintenance_action': 'stop'}
    lines = []
    run = fleet_runs.StageRun(parsed, parsed.stages[0], apply_vars, str(tmp_path), lines.append, popen=Shells(scripts),
                              clock=lambda: monday_noon)
    results = run.run()
    assert results['a']['outcome'] == fleet_runs.DEFERRED and results['b']['outcome'] == fleet_runs.NOT_STARTED
    assert run.deferred.startswith('a: ') and 'maintenance window' in results['b']['msg']
    assert not (tmp_path / 'a.log').exists()  # no apply ran
    assert not run.over_budget()
