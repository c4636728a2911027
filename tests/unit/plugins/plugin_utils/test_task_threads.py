# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""plugin_utils/execution/task_threads.py: which tasks may wait in a thread, and what a TaskThread sends when its task ends.

A whole play through the thread is in tests/strategy/test_in_process_runs.py (every core of the matrix) and
tests/kube/test_node_update.py (ansible-playbook's children counted while three nodes update).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import types

import pytest

from ansible.inventory.host import Host
from ansible.playbook.task import Task

from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution import task_threads

pytestmark = pytest.mark.skipif(not task_threads.supported(), reason='an ansible-core task_threads does not mirror')


def _task(action='nodewright.bridge.node_update', **fields):
    values = dict(resolved_action=action, action=action, async_val=0, timeout=0, environment=[])
    values.update(fields)
    return types.SimpleNamespace(**values)


@pytest.mark.parametrize('fields,eligible', [
    ({}, True),
    ({'resolved_action': 'ansible.legacy.node_update'}, True),   # found under another prefix: still ours
    ({'resolved_action': 'nodewright.bridge.node_drain'}, False),  # short cluster tasks keep their workers
    ({'resolved_action': 'ansible.builtin.command'}, False),
    ({'async_val': 60}, False),
    ({'timeout': 30}, False),   # SIGALRM works in the main thread only
    ({'environment': [{'K8S_AUTH_CONTEXT': 'x'}]}, False),   # would be set in ansible-playbook's own environment
])
def test_only_a_synchronous_node_update_without_environment_or_timeout_waits_in_a_thread(fields, eligible):
    assert task_threads.eligible(_task(**fields)) is eligible


def test_the_switch_and_a_running_engine_decide_whether_the_worker_is_swapped(monkeypatch):
    original = task_threads._strategy_module.WorkerProcess
    with task_threads.worker_for(_task(), engine_running=True) as threaded:
        assert threaded and task_threads._strategy_module.WorkerProcess is task_threads.TaskThread
    assert task_threads._strategy_module.WorkerProcess is original
    with task_threads.worker_for(_task(), engine_running=False) as threaded:
        assert not threaded and task_threads._strategy_module.WorkerProcess is original
    monkeypatch.setenv(task_threads.THREADS_ENV, '0')
    with task_threads.worker_for(_task(), engine_running=True) as threaded:
        assert not threaded and task_threads._strategy_module.WorkerProcess is original


class _Queue(object):
    def __init__(self, refuse=0):
        self.sent = []
        self.refuse = refuse

    def send_task_result(self, result):
        if self.refuse:
            self.refuse -= 1
            raise ValueError('cannot pickle it')
        self.sent.append(result)


def _run_thread(monkeypatch, executor_run, queue):
    class Executor(object):
        def __init__(self, host, task, *unused):
            self.task = task

        def run(self):
            return executor_run(self.task)

    monkeypatch.setattr(task_threads, 'TaskExecutor', Executor)
    task = Task()
    task.name = 'update'
    thread = task_threads.TaskThread(final_q=queue, task_vars={}, host=Host('n1'), task=task, play_context=None,
                                     loader=None, variable_manager=None, shared_loader_obj=None, worker_id=3,
                                     cliargs={})
    thread.start()
    thread.join(10)
    assert not thread.is_alive()
    return task, thread


def test_the_result_goes_on_the_final_queue_for_a_copy_of_the_task(monkeypatch):
    seen = []

    def run(task):
        seen.append(task)
        task.name = 'templated for n1'  # what post_validate does to the task it is given
        return {'changed': True}

    queue = _Queue()
    task, thread = _run_thread(monkeypatch, run, queue)
    assert [(r.host.name, r._return_data) for r in queue.sent] == [('n1', {'changed': True})]
    assert seen[0] is not task and seen[0]._uuid == task._uuid and task.name == 'update'  # the play's task untouched
    assert thread.worker_id == 3 and thread.pid is None and thread.exitcode is None


def test_an_exception_is_the_tasks_failure_and_an_unsendable_result_is_sent_as_an_error(monkeypatch):
    def run(task):
        raise RuntimeError('the executor broke')

    queue = _Queue()
    _run_thread(monkeypatch, run, queue)
    assert queue.sent[0]._return_data['failed'] is True and 'the executor broke' in queue.sent[0]._return_data['msg']

    queue = _Queue(refuse=1)
    _run_thread(monkeypatch, lambda task: {'ok': True}, queue)
    assert queue.sent[0]._return_data['failed'] is True and 'cannot pickle it' in str(queue.sent[0]._return_data)
    assert queue.sent[0].task_fields == {}

    queue = _Queue(refuse=2)  # the queue is gone (the run is ending): the thread ends quietly
    _run_thread(monkeypatch, lambda task: {'ok': True}, queue)
    assert queue.sent == []
