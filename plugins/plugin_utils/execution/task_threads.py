# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""A ``node_update`` task the sequence engine serves runs in a thread of ``ansible-playbook``, not a forked worker.

Why: Ansible runs each host's task in a worker, a fork of ``ansible-playbook`` that lives as long as
the task. A ``node_update`` task served by the sequence engine only sends one request and waits for
the node's result (sequence_engine.py), for the node's whole update; yet its worker costs what every
Ansible worker costs: about 12 MiB of its own memory on ansible-core 2.19, 23 MiB with a 1,000-host
inventory, plus the fork itself (measured: 250 nodes in flight, 5.9 GiB PSS, docs/dev/benchmarks.md). A
thread of ``ansible-playbook`` running the same TaskExecutor waits the same way for a few hundred KiB.

What the thread does is what ansible-core's WorkerProcess does after its fork (``WorkerProcess._run``):
a TaskExecutor on the host's task, then the result on TQM's final queue, where the strategy's results
thread reads every worker's. It stands in the worker's slot (``TaskThread``), so ``forks`` still bounds
how many tasks run at once, and everything after the result (callbacks, ``register``, handlers) is
core's own. What a fork gave the worker for free, the thread gets explicitly: its own copy of the task
(TaskExecutor post-validates the task in place), and the host and play context untouched.

Only where it is the same: ansible-core 2.19 and 2.20 (the WorkerProcess and TaskExecutor shapes below,
checked at import), a task whose action is node_update while the play's engine runs, with nothing a
thread cannot do as a process does: no ``timeout:`` (SIGALRM, main thread only), no ``async``, no
``environment:`` (it would be set in ``os.environ`` of ``ansible-playbook``). Any other task, and every
task with ``NODEWRIGHT_BRIDGE_TASK_THREADS=0``, forks a worker as before.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import contextlib
import threading

from ansible.executor.task_executor import TaskExecutor

from ansible_collections.nodewright.bridge.plugins.module_utils import cluster_modules
from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution import in_process

try:  # ansible-core 2.19 and 2.20: the shapes this file mirrors
    from ansible._internal._errors import _error_utils
    from ansible._internal._task import TaskContext
    from ansible.executor.task_result import _RawTaskResult
    from ansible.plugins import strategy as _strategy_module
    _EXECUTOR_ARGUMENTS = ('host', 'task', 'job_vars', 'play_context', 'loader', 'shared_loader_obj', 'final_q',
                           'variable_manager')
    _SHAPE_OK = (hasattr(_strategy_module, 'WorkerProcess')
                 and TaskExecutor.__init__.__code__.co_varnames[1:9] == _EXECUTOR_ARGUMENTS)
except ImportError:  # 2.16 - 2.18: workers as before (2.21 fails the shape check)
    _SHAPE_OK = False

THREADS_ENV = 'NODEWRIGHT_BRIDGE_TASK_THREADS'
NODE_UPDATE = 'node_update'

_IN_TASK_THREAD = threading.local()


def supported():
    """Whether this ansible-core's worker is the one this file mirrors, and the switch is not off."""
    return _SHAPE_OK and in_process.env_switch(THREADS_ENV)


def in_task_thread():
    """True inside a TaskThread (code that would otherwise fall back to work meant for a worker of its own)."""
    return getattr(_IN_TASK_THREAD, 'active', False)


def eligible(task):
    """Whether ``task`` may run in a thread: node_update, synchronous, no per-task environment or timeout."""
    module = cluster_modules.by_action(getattr(task, 'resolved_action', None) or task.action)
    return (module is not None and module.name == NODE_UPDATE and not task.async_val and not task.timeout
            and not task.environment)


class TaskThread(object):
    """One host's task in a thread, in a slot of TQM's worker list: what core reads of a WorkerProcess there."""

    pid = None  # no process: TQM's signal handler and has_dead_workers pass it by
    exitcode = None

    def __init__(self, final_q, task_vars, host, task, play_context, loader, variable_manager, shared_loader_obj,
                 worker_id, **dummy):
        self._final_q = final_q
        self._task_vars = task_vars
        self._host = host
        # TaskExecutor post-validates (templates) its task in place; a forked worker's task is its own copy,
        # and so is this one (the parent's task object is every host's)
        self._task = task.copy(exclude_parent=False)
        self._play_context = play_context
        self._loader = loader
        self._variable_manager = variable_manager
        self._shared_loader_obj = shared_loader_obj
        self.worker_id = worker_id
        self.worker_queue = None  # prompts (the only use) are not for a node_update task
        self._thread = None

    def start(self):
        self._thread = threading.Thread(target=self._run, name='nodewright-task-%s' % self._host.name)
        self._thread.daemon = True  # never holds ansible-playbook's exit: the engine's stop ends its wait
        self._thread.start()

    def is_alive(self):
        return self._thread is not None and self._thread.is_alive()

    def join(self, timeout=None):
        if self._thread is not None:
            self._thread.join(timeout)

    def terminate(self):
        """Nothing to kill: the task waits on the sequence engine, whose stop (the strategy's end) answers it."""

    def close(self):
        """A process's resources; a thread has none."""

    def _run(self):
        _IN_TASK_THREAD.active = True
        try:
            # TaskContext as 2.19 and 2.20 have it (2.21's has more fields, which its pylint asks for: the file is not
            # used there, _SHAPE_OK)
            with TaskContext(self._task):  # pylint: disable=missing-kwoa
                result = TaskExecutor(self._host, self._task, self._task_vars, self._play_context, self._loader,
                                      self._shared_loader_obj, self._final_q, self._variable_manager).run()
        except BaseException as exc:  # pylint: disable=broad-except
            # a worker would die of it (its parent reads a dead worker); a thread reports it as the task's failure
            result = _error_utils.result_dict_from_exception(exc)
        try:
            self._final_q.send_task_result(_RawTaskResult(host=self._host, task=self._task, return_data=result,
                                                          task_fields=self._task.dump_attrs()))
        except Exception as exc:  # pylint: disable=broad-except
            try:  # what a worker does: the error instead of a result that cannot be sent (its task fields omitted)
                self._final_q.send_task_result(_RawTaskResult(host=self._host, task=self._task, task_fields={},
                                                              return_data=_error_utils.result_dict_from_exception(exc)))
            except Exception:  # pylint: disable=broad-except
                pass  # the queue is gone: ansible-playbook is ending (Ctrl-C), nobody reads a result any more


@contextlib.contextmanager
def worker_for(task, engine_running):
    """Within the block, ansible-core's queueing starts ``task`` in a TaskThread when it may run in one.

    ``StrategyBase._queue_task`` builds a WorkerProcess by the name in its module; for the one call the name
    is a TaskThread. The strategy's loop is one thread, so no other queueing sees it.
    """
    if not (engine_running and supported() and eligible(task)):
        yield False
        return
    original = _strategy_module.WorkerProcess
    _strategy_module.WorkerProcess = TaskThread
    try:
        yield True
    finally:
        _strategy_module.WorkerProcess = original
