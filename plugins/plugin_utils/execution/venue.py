# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""Where a cluster task runs: decided here, and nowhere else (docs/in-process.md).

A cluster task's module code runs in one of four places:

* ``module``: as an ordinary Ansible module (AnsiballZ) on the task's host. A task delegated to
  another host, with ``become`` or ``async`` (under ansible-core's async wrapper), without the ``kubernetes``
  client on the controller, or with ``NODEWRIGHT_BRIDGE_IN_PROCESS=0``. (node_update then runs each of its steps
  that way; it refuses ``async``.)
* ``worker``: in the process that runs the task, the module's code imported once in
  ``ansible-playbook`` (in_process.py): no AnsiballZ, no new Python.
* ``sequence engine``: node_update only, while the play's engine runs (sequence_engine.py) and the
  task sets no ``environment:``: one process runs every node in flight; the task only waits.
* ``rollout task``: node_update sequences of apply's rollout without the budgeted strategy
  (``BatchThreads``, the rollout_run action): every node of a batch in a thread of that one task.

How a task that waits on the engine waits is the other half: in a thread of ``ansible-playbook``
rather than a forked worker, where ansible-core's worker is the shape task_threads.py mirrors.

The action plugins make one call (``run``). The budgeted strategy holds a ``PlayVenue``: ``start``
when a play starts (what the workers share is loaded, the engine forked), ``queueing`` around each
task it queues, ``stop`` when the play ends; the rollout callback calls ``prepare_parent`` when a play
of another strategy starts. Importing this file loads nothing and starts nothing.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import contextlib
import gc
import threading
import time

from ansible_collections.nodewright.bridge.plugins.module_utils import cluster_modules
from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube
from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution import fork_preload
from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution import in_process
from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution import sequence_engine
from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution import task_threads
from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution.node_sequence import NodeSequence

MODULE = 'modules'
WORKER = 'worker'
ENGINE = 'sequence engine'
# apply's rollout without the budgeted strategy: every node of a batch in a thread of one task (BatchThreads)
ROLLOUT_TASK = 'rollout task'
NODE_UPDATE = '%s.node_update' % cluster_modules.COLLECTION


def on_controller(action):
    """True when ``action``'s module would run on this controller, as this user, synchronously."""
    task = action._task
    return (action.MODULE_CODE is not None and kube.has_kubernetes() and in_process.env_switch(in_process.IN_PROCESS_ENV)
            and getattr(action._connection, 'transport', None) == 'local'
            and not action._play_context.become and not task.async_val)


def choose(action):
    """The venue of the task ``action`` (a ClusterAction) runs: MODULE, WORKER or ENGINE."""
    if not on_controller(action):
        return MODULE
    if (action.MODULE == NODE_UPDATE and sequence_engine.enabled() and sequence_engine.address()
            and not action.task_environment()):
        return ENGINE
    return WORKER


def run(action, args, task_vars):
    """The task's module with ``args`` (its files already read) where ``choose`` says: the task's result."""
    if action.MODULE == NODE_UPDATE:
        return _node_update(action, args, task_vars)
    task = action._task
    if choose(action) == MODULE:
        # an async task: the module started under ansible-core's async wrapper, as ansible.builtin's normal action does
        wrap_async = bool(task.async_val) and not action._connection.has_native_async
        return action._execute_module(module_name=action.MODULE, module_args=args, task_vars=task_vars,
                                      wrap_async=wrap_async)
    with action.task_process():
        return in_process.run(action.MODULE, action.MODULE_CODE, args, check_mode=task.check_mode, diff=task.diff)


def _node_update(action, args, task_vars):
    """node_update's sequence: in the engine, in this process, or its steps as modules."""
    task = action._task
    if task.async_val:
        # its steps are modules run one after the other, each waited for: no one job for async_status to follow
        return {'failed': True, 'msg': '%s does not support async: its steps run one after the other, each a module '
                                       'of its own; run it without async (the budgeted strategy updates nodes side by '
                                       'side)' % NODE_UPDATE}
    params, invalid = in_process.validate(action.MODULE, action.MODULE_CODE, args, check_mode=task.check_mode)
    if invalid is not None:
        return invalid
    # the connection options the task set, handed to every step (K8S_AUTH_* reach the steps through the environment)
    connection = dict((key, params[key]) for key in kube.AUTH_ARG_SPEC if args.get(key) is not None)
    venue = choose(action)
    if venue == MODULE:
        def run_module(module, step_args):
            return action._execute_module(module_name=cluster_modules.MODULES[module].fqcn, module_args=step_args,
                                          task_vars=task_vars)
        return dict(NodeSequence(params, connection, run_module, check_mode=task.check_mode).run(), ran_in=MODULE)
    if venue == ENGINE:
        # the play's sequence engine runs it (one process for every node in flight); this task waits
        result = sequence_engine.submit(sequence_engine.address(), params, connection, task.check_mode, task.diff)
        if result is not None:
            return result
    if task_threads.in_task_thread():
        # a thread of ansible-playbook itself: the sequence's client, connections and threads would be
        # inherited by every worker forked after them; only the engine or a worker of its own runs it
        return {'failed': True, 'msg': 'node_update of %s: the controller\'s sequence engine did not answer; the node '
                                       'keeps the state it recorded, a re-run resumes it' % params.get('node')}
    # one environment and one API client for all the steps (and the package threads)
    with action.task_process():
        return dict(sequence_engine.run_sequence(params, connection, task.check_mode, task.diff), ran_in=WORKER)


def load_module_code():
    """Import every cluster module's code (and so what it imports) into this process; what forks inherit it."""
    for module in cluster_modules.MODULES.values():
        module.import_code()


def prepare_parent():
    """Load, in ansible-playbook before a play's workers fork, what each cluster task's worker would load for
    itself: the cluster modules' code, the ``kubernetes`` client classes and the templating plugins. Called when a
    play starts (the budgeted strategy's PlayVenue.start; the rollout callback for plays of other strategies);
    loading twice costs nothing. Never raises: it is an optimisation."""
    try:
        load_module_code()
    except Exception:  # pylint: disable=broad-except
        pass  # a worker imports its module's code itself, and reports what fails there
    fork_preload.before_fork()


class PlayVenue(object):
    """The execution side of one play of the budgeted strategy: what its workers share, its sequence engine."""

    def __init__(self, engine=None):
        self.engine = engine

    @classmethod
    def start(cls, fork_lock=None):
        """Before the play's first worker forks: load what every worker (and the engine) would load for itself,
        freeze it out of the collector's writes, and fork the engine where it may run.

        ``fork_lock``: held while forking the engine (Ansible's display lock, as its workers do).
        """
        prepare_parent()
        # Every worker is a fork of this process and lives as long as its host's task (a node's
        # whole update). Python's collector walks every object a process holds and so writes to
        # (copies) the pages they are on: freezing what exists now keeps them shared with the
        # workers (the collector of a worker skips them). Measured: the workers' private memory
        # drops to a fraction (docs/dev/benchmarks.md).
        gc.freeze()
        return cls(sequence_engine.start(fork_lock=fork_lock) if sequence_engine.enabled() else None)

    @contextlib.contextmanager
    def queueing(self, task):
        """Around ansible-core's queueing of ``task``: a node_update task the engine serves waits in a thread."""
        with task_threads.worker_for(task, self.engine is not None) as threaded:
            yield threaded

    def stop(self):
        """The play ended (or was stopped): the engine ends with it. Idempotent."""
        engine, self.engine = self.engine, None
        if engine is not None:
            engine.stop()


class BatchThreads(object):
    """The venue of apply's rollout without the budgeted strategy (the rollout_run action, builtin_rollout.py):
    the node_update sequences of a batch, each in a thread of the task's process, sharing one EngineState (one
    API client, the CRs' watches, one status keeper per CR) as the sequence engine's threads do.

    ``options_of(phase, name)``: node_update's arguments for host ``name`` in ``phase``.
    """

    def __init__(self, options_of, check_mode=False, diff=False):
        self.options_of = options_of
        self.check_mode = check_mode
        self.diff = diff
        self.code = cluster_modules.MODULES['node_update'].import_code()
        self.state = sequence_engine.EngineState()

    def validate(self, phase, name):
        """``(params, connection)`` of ``name``'s sequence in ``phase``, or ``(None, failed result)``."""
        args = self.options_of(phase, name)
        params, invalid = in_process.validate(NODE_UPDATE, self.code, args, check_mode=self.check_mode)
        if invalid is not None:
            return None, invalid
        return params, dict((key, params[key]) for key in kube.AUTH_ARG_SPEC if args.get(key) is not None)

    def __call__(self, phase, names):
        """Run ``names`` of ``phase`` at once, each in a thread: ``{name: result}`` once every one ended."""
        results = {}
        lock = threading.Lock()

        def one(name):
            started = time.time()
            params, connection = self.validate(phase, name)
            if params is None:
                result = connection
            else:
                result = sequence_engine.run_sequence(params, connection, self.check_mode, self.diff,
                                                      keepers=self.state.keepers,
                                                      live_crs=self.state.live_crs.get(connection))
                result['ran_in'] = ROLLOUT_TASK
            result['_started'] = started
            with lock:
                results[name] = result
        threads = [threading.Thread(target=one, args=(name,), name='node-%s' % name, daemon=True) for name in names]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return results

    def close(self):
        """The rollout ended: the last batch states and node transitions written (the keepers' pending writes)."""
        self.state.keepers.write_pending()
