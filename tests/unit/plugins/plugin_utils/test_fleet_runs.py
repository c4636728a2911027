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

import fake_clock


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


class FakeOperator(object):
    """fleet_operator for StageRun: ``active`` cluster contexts whose operator reconciles ``gpu``; ``left`` the
    successive answers of a handed-over cluster's plan (the last one repeats)."""

    def __init__(self, active, left=({},)):
        self.active = active
        self.answers = list(left)
        self.asked = []

    def reconciled(self, connection, cr_names, api=None):
        self.asked.append((connection['context'], list(cr_names), api))
        return [('gpu', 'its lease is held')] if connection['context'] in self.active else []

    def describe(self, found):
        return 'the NodeWright operator reconciles %s' % ', '.join(name for name, dummy in found)

    def left(self, connection, cr_names, api=None):
        return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]


def _guarded(tmp_path, operator, apply_vars=None, clock=None, **fleet):
    scripts = {'a': 'exit 0', 'b': 'exit 0'}
    definition = dict({'clusters': {'a': {'context': 'a'}, 'b': {'context': 'b', 'operator': 'handover'}},
                       'stages': [{'clusters': ['a', 'b']}]}, **fleet)
    parsed = fleet_model.parse_fleet(definition)
    lines = []
    clock = clock or fake_clock.FakeClock()
    run = fleet_runs.StageRun(parsed, parsed.stages[0], dict({'nodewright_cr_name': 'gpu'}, **(apply_vars or {})),
                              str(tmp_path), lines.append, popen=Shells(scripts), cr_names=['gpu'], operator=operator,
                              clock=clock, sleep=clock.sleep)
    return run, lines


def test_a_cluster_whose_operator_reconciles_the_cr_is_skipped_or_waited_for(tmp_path):
    not_done = {'gpu': {'erroring': [], 'not_done': ['n1', 'n2']}}
    operator = FakeOperator({'a', 'b'}, left=[not_done, {'gpu': {'erroring': [], 'not_done': ['n2']}}, {}])
    clock = fake_clock.FakeClock()
    run, lines = _guarded(tmp_path, operator, clock=clock)
    results = run.run()
    # a: skip (the default), nothing run there; b: handover, waited for until its operator left nothing
    assert results['a']['outcome'] == fleet_runs.SKIPPED and results['a']['rc'] is None
    assert results['a']['msg'] == ('skipped: the NodeWright operator reconciles gpu (operator: skip; nothing in this '
                                   'cluster was touched)')
    assert results['b']['outcome'] == fleet_runs.HANDED_OVER and results['b']['left'] == {}
    assert clock.sleeps == [fleet_runs.HANDOVER_POLL] * 2
    assert not (tmp_path / 'a.log').exists() and not (tmp_path / 'b.log').exists()  # no apply ran
    assert any('[b] stage stage-1: its operator has left b: gpu: 2 not complete (n1, n2)' in line for line in lines), lines
    assert not run.over_budget()


def test_a_handed_over_cluster_not_complete_by_the_progress_deadline_counts_as_failed(tmp_path):
    left = {'gpu': {'erroring': ['n1'], 'not_done': []}}
    run, dummy = _guarded(tmp_path, FakeOperator({'b'}, left=[left]), progress_deadline='25s', max_failures=0)
    results = run.run()
    assert results['a']['outcome'] == fleet_runs.OK  # no operator there: its apply ran
    assert results['b']['outcome'] == fleet_runs.DEADLINE and results['b']['elapsed'] >= 25
    assert results['b']['msg'].endswith('not complete after the progress deadline (25 s): b: gpu: 1 erroring (n1)')
    assert run.over_budget()


def test_no_operator_is_looked_for_when_the_run_forces_its_guard_off(tmp_path):
    for apply_vars in ({'nodewright_force': True}, {'nodewright_operator_guard': 'false'}):
        operator = FakeOperator({'a', 'b'})
        run, dummy = _guarded(tmp_path, operator, apply_vars=apply_vars)
        assert dict((c, r['outcome']) for c, r in run.run().items()) == {'a': 'ok', 'b': 'ok'}
        assert operator.asked == []
    operator = FakeOperator(set())
    run, dummy = _guarded(tmp_path, operator, apply_vars={'nodewright_api': 'nodewright'})
    run.run()
    assert sorted(operator.asked) == [('a', ['gpu'], 'nodewright'), ('b', ['gpu'], 'nodewright')]


def test_each_runs_progress_lines_are_said_with_its_cluster(tmp_path):
    script = ('printf "TASK [x]\\nnodewright: [__default__] batch 1: size 2, ok 2, failed 0, progress 50%%\\n"; sleep 0.7; '
              'printf "nodewright: [__default__] batch 2: size 2, ok 1, failed 1, progress 100%%\\nok: [n1]\\n'
              'nodewright: report written to r.json\\n"')
    run, dummy, lines = _stage(tmp_path, {'a': script}, {'clusters': ['a']})
    assert run.run()['a']['outcome'] == fleet_runs.OK
    said = [line for line in lines if line.startswith('nodewright fleet: [a] [')]
    assert said == ['nodewright fleet: [a] [__default__] batch 1: size 2, ok 2, failed 0, progress 50%',
                    'nodewright fleet: [a] [__default__] batch 2: size 2, ok 1, failed 1, progress 100%'], lines


def test_a_line_still_being_written_waits_for_its_end():
    lines = []
    progress = fleet_runs.RunProgress('c', lines.append)

    class Chunks(object):
        def __init__(self, chunks):
            self.chunks = list(chunks)

        def read(self):
            return self.chunks.pop(0) if self.chunks else ''
    handle = Chunks(['nodewright: [gpu] batch 1: si', 'ze 4\nnodewright: rollout of play', ''])
    progress.read(handle)
    assert lines == []
    progress.read(handle)
    assert lines == ['nodewright fleet: [c] [gpu] batch 1: size 4']
    # as ansible-runner's event stream and a terminal's colours wrap it
    progress.read(Chunks([' \n\x1b[Ke30=\x1b[4D\x1b[K\x1b[KeyJ1dWlk==\x1b[64D\x1b[Knodewright: [gpu] batch 2: \x1b[0;32mok\x1b[0m\n']))
    assert lines[-1] == 'nodewright fleet: [c] [gpu] batch 2: ok'


def test_each_run_logs_with_the_stock_stdout_callback_and_reports_with_the_rollout_one(tmp_path, monkeypatch):
    # under AWX the fleet's own run prints with ansible-runner's awx_display (its lines wrapped in event escapes)
    monkeypatch.setenv('ANSIBLE_STDOUT_CALLBACK', 'awx_display')
    monkeypatch.setenv('ANSIBLE_CALLBACKS_ENABLED', 'ansible.posix.profile_tasks')
    runner_callbacks, own = tmp_path / 'artifacts' / 'callback', tmp_path / 'own-callbacks'
    runner_callbacks.mkdir(parents=True)
    (runner_callbacks / 'awx_display.py').write_text('# ansible-runner patches Display when this is imported\n')
    monkeypatch.setenv('ANSIBLE_CALLBACK_PLUGINS', '%s:%s' % (runner_callbacks, own))
    argv, env, report, log = fleet_runs.apply_command('c1', {'kubeconfig': '/k/c1.yaml', 'context': None},
                                                      {'nodewright_cr_name': 'gpu'}, str(tmp_path), check_mode=True)
    assert env['ANSIBLE_STDOUT_CALLBACK'] == 'ansible.builtin.default'
    assert env['ANSIBLE_CALLBACK_PLUGINS'] == str(own)  # not ansible-runner's
    assert env['ANSIBLE_CALLBACKS_ENABLED'] == 'ansible.posix.profile_tasks,nodewright.bridge.rollout'
    assert env['NODEWRIGHT_REPORT'] == report and log.endswith('c1.log') and argv[-1] == '--check'
    assert json.loads((tmp_path / 'c1.vars.json').read_text()) == {'nodewright_cr_name': 'gpu', 'nodewright_kubeconfig': '/k/c1.yaml'}
