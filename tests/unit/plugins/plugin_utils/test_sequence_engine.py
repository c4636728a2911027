# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The sequence engine's process life and wire, with real forks and sockets.

The engine runs node sequences for workers. Here ``run_sequence`` (the node sequence itself,
tested in test_node_sequence.py and on the test cluster) is replaced before the engine forks,
so each test controls what a "sequence" does inside the engine's own process; "workers" are
forked children of the test process, which plays ansible-playbook.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import signal
import threading
import time

import pytest

from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution import node_sequence
from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution import sequence_engine


def _wait_for(predicate, timeout=10.0, what='condition'):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError('timed out waiting for %s' % what)


def _pid_alive(pid):
    try:
        done, dummy = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        # not our child: ask the kernel
        try:
            os.kill(pid, 0)
        except OSError:
            return False
        status = open('/proc/%d/stat' % pid).read().rsplit(')', 1)[1].split()[0] if os.path.exists('/proc/%d' % pid) else 'X'
        return status not in ('Z', 'X')
    return done == 0


def _in_worker(func):
    """Run func() in a forked child ("a worker" of this process) and return what it returns (JSON)."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        try:
            data = json.dumps({'value': func()})
        except BaseException as exc:  # pylint: disable=broad-except
            data = json.dumps({'error': repr(exc)})
        os.write(write_end, data.encode())
        os._exit(0)
    os.close(write_end)
    chunks = []
    while True:
        chunk = os.read(read_end, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(read_end)
    os.waitpid(pid, 0)
    out = json.loads(b''.join(chunks).decode())
    assert 'error' not in out, out['error']
    return out['value']


@pytest.fixture
def engine_with(monkeypatch):
    """Start an engine whose run_sequence is ``fake``; stopped at the end of the test."""
    started = []
    monkeypatch.delenv(sequence_engine.ADDRESS_ENV, raising=False)

    def start(fake):
        monkeypatch.setattr(sequence_engine, 'run_sequence', fake)
        engine = sequence_engine.start()
        assert engine is not None
        started.append(engine)
        return engine
    yield start
    for engine in started:
        engine.stop()


def _submit(node='n1'):
    path = sequence_engine.address()
    if path is None:
        return 'no engine'
    return sequence_engine.submit(path, {'node': node}, {}, False, False)


def test_a_worker_gets_the_result_computed_in_the_engine_process(engine_with):
    def fake(params, connection, check_mode, diff, cancelled=None, keepers=None, live_crs=None):
        return {'pid': os.getpid(), 'node': params['node'], 'check_mode': check_mode, 'live': type(live_crs).__name__}
    engine = engine_with(fake)
    result = _in_worker(lambda: _submit('gpu-7'))
    assert result['node'] == 'gpu-7' and result['check_mode'] is False
    # the steps read the CR from the engine's watches
    assert result['live'] == 'LiveCRs'
    assert result['pid'] == engine.pid != os.getpid()
    assert result['ran_in'] == 'sequence engine'


def test_only_the_starter_and_its_direct_children_use_the_engine(engine_with):
    engine = engine_with(lambda *a, **k: {})
    # the starting process itself (ansible-playbook: its task threads) and its workers
    assert sequence_engine.address() == engine.path
    assert _in_worker(sequence_engine.address) is not None
    # a grandchild (a nested run started from a task) inherits the variable, not the engine
    assert _in_worker(lambda: _in_worker(sequence_engine.address)) is None


def test_sequences_of_many_workers_run_at_once(engine_with):
    # every sequence waits for all the others: they only get past the barrier if they run concurrently
    barrier = threading.Barrier(8, timeout=20)

    def fake(params, connection, check_mode, diff, cancelled=None, keepers=None, live_crs=None):
        barrier.wait()
        return {'node': params['node']}
    engine_with(fake)
    results = [None] * 8
    threads = [threading.Thread(target=lambda i=i: results.__setitem__(i, _in_worker(lambda: _submit('n%d' % i))))
               for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert sorted(r['node'] for r in results) == ['n%d' % i for i in range(8)]


def test_a_sequence_stops_before_its_next_step_when_its_worker_is_gone(engine_with, tmp_path):
    marker = tmp_path / 'steps'

    def fake(params, connection, check_mode, diff, cancelled=None, keepers=None, live_crs=None):
        # as the real step runner does: ask before each step (here a step is a short sleep)
        done = 0
        try:
            for dummy in range(500):
                if cancelled():
                    raise sequence_engine.Cancelled()
                done += 1
                marker.write_text('running %d' % done)
                time.sleep(0.02)
        except sequence_engine.Cancelled:
            marker.write_text('cancelled after %d' % done)
            raise
        return {'steps': done}
    engine_with(fake)
    pid = os.fork()
    if pid == 0:
        _submit()
        os._exit(0)
    _wait_for(lambda: marker.exists() and marker.read_text().startswith('running'), what='the sequence to start')
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    text = _wait_for(lambda: marker.read_text() if marker.read_text().startswith('cancelled') else None,
                     what='the engine to stop the sequence')
    assert int(text.split()[-1]) < 500


def test_the_step_runner_refuses_a_step_once_cancelled(monkeypatch):
    ran = []
    monkeypatch.setattr(sequence_engine.in_process, 'run', lambda *a, **k: ran.append(a) or {})
    sequence_engine.step_runner(False, False, cancelled=lambda: False)('node_state', {'node': 'n1'})
    assert len(ran) == 1
    with pytest.raises(sequence_engine.Cancelled):
        sequence_engine.step_runner(False, False, cancelled=lambda: True)('node_state', {'node': 'n1'})
    assert len(ran) == 1


def test_a_cancelled_package_thread_stops_the_sequence_without_a_failure_record():
    # a wave of two packages in threads: Cancelled from a thread reaches the caller as itself
    def run_step(module, args):
        if module == 'rollout_plan':
            return {'cr': {'name': 'c', 'kind': 'Skyhook'}, 'nodes': {'n1': {
                'complete': False, 'needs_drain': False, 'cordoned_by': [],
                'pending': [{'package': 'a', 'stage': 'apply', 'wave': 0}, {'package': 'b', 'stage': 'apply', 'wave': 0}]}}}
        raise sequence_engine.Cancelled()
    params = {'node': 'n1', 'cr': {'kind': 'Skyhook'}, 'cr_name': None, 'operator_guard': False}
    params.update(dict.fromkeys(('namespace', 'agent_image', 'pause_image', 'image_pull_secret', 'copy_dir_root',
                                 'agent_log_root', 'runtime_required_taint', 'delete_pod', 'stage_retries',
                                 'stage_timeout'), None))
    sequence = node_sequence.NodeSequence(params, {}, run_step, parallel=True)
    with pytest.raises(sequence_engine.Cancelled):
        sequence.run()


def test_a_worker_is_told_when_the_engine_dies_under_it(engine_with):
    def fake(params, connection, check_mode, diff, cancelled=None, keepers=None, live_crs=None):
        os._exit(3)
    engine_with(fake)
    result = _in_worker(lambda: _submit('gpu-3'))
    assert result['failed'] is True
    assert 'sequence engine' in result['msg'] and 'gpu-3' in result['msg'] and 're-run resumes' in result['msg']


def test_no_engine_means_the_worker_runs_the_sequence_itself(tmp_path):
    assert sequence_engine.submit(str(tmp_path / 'no-socket'), {'node': 'n1'}, {}, False, False) is None


def test_stop_ends_the_engine_and_removes_its_socket(engine_with):
    engine = engine_with(lambda *a, **k: {})
    pid, directory = engine.pid, engine.directory
    assert os.path.exists(engine.path)
    engine.stop()
    assert not _pid_alive(pid)
    assert not os.path.exists(directory)
    assert sequence_engine.ADDRESS_ENV not in os.environ
    engine.stop()  # idempotent


def test_the_engine_ends_when_the_process_that_started_it_is_gone(monkeypatch):
    monkeypatch.delenv(sequence_engine.ADDRESS_ENV, raising=False)
    monkeypatch.setattr(sequence_engine, 'run_sequence', lambda *a, **k: {})
    read_end, write_end = os.pipe()
    starter = os.fork()
    if starter == 0:
        # plays ansible-playbook: starts an engine, forks a worker that outlives it, dies without stop()
        engine = sequence_engine.start()
        worker = os.fork()
        if worker == 0:
            time.sleep(30)
            os._exit(0)
        os.write(write_end, json.dumps([engine.pid, worker]).encode())
        os._exit(0)
    os.close(write_end)
    engine_pid, worker_pid = json.loads(os.read(read_end, 1024).decode())
    os.close(read_end)
    os.waitpid(starter, 0)
    try:
        _wait_for(lambda: not _pid_alive(engine_pid), what='the engine to end after its starter')
    finally:
        os.kill(worker_pid, signal.SIGKILL)


def test_the_engine_can_be_switched_off(monkeypatch):
    monkeypatch.setenv(sequence_engine.ENGINE_ENV, '0')
    assert not sequence_engine.enabled()
    monkeypatch.setenv(sequence_engine.ENGINE_ENV, 'true')
    assert sequence_engine.enabled()
    # cluster tasks off the in-process path: no engine either
    monkeypatch.setenv('NODEWRIGHT_BRIDGE_IN_PROCESS', '0')
    assert not sequence_engine.enabled()
    monkeypatch.setenv('NODEWRIGHT_BRIDGE_IN_PROCESS', 'nonsense')  # unreadable: the default (on)
    assert sequence_engine.enabled()


def test_the_nodes_of_one_connection_share_one_set_of_cr_watches():
    by_connection = sequence_engine.LiveCRsByConnection()
    one = by_connection.get({'kubeconfig': '/a', 'context': None})
    assert by_connection.get({'context': None, 'kubeconfig': '/a'}) is one
    assert by_connection.get({'kubeconfig': '/b'}) is not one
    # nothing is watched before a step asks for a CR
    assert one.watches == {}
