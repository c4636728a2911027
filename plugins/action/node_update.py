# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""Action plugin for nodewright.bridge.node_update: the per-node sequence (plugin_utils/execution/node_sequence.py)
over the collection's cluster modules, each step in the controller process or, delegated elsewhere, as a module.

Its own file, not a symlink to the shared one (node_cordon.py): the sequence runs its steps itself. Its module's
name, code and file arguments are the registry's (module_utils/cluster_modules), as the others'.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.nodewright.bridge.plugins.module_utils import cluster_modules
from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube
from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution import in_process
from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution import sequence_engine
from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution import task_threads
from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution import fork_preload
from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution.cluster_action import ClusterAction
from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution.node_sequence import NodeSequence


# The stock strategies load this class in the parent process, and the workers that run its tasks are
# forked from it: the kubernetes client and the templating plugins loaded here are loaded once per run
# instead of once per worker (docs/in-process.md).
fork_preload.before_fork()


class ActionModule(ClusterAction):

    def run_task(self, args, task_vars):
        """The sequence: each step in this process (a wave's packages in threads) or as a module."""
        params, invalid = in_process.validate(self.MODULE, self.MODULE_CODE, args, check_mode=self._task.check_mode)
        if invalid is not None:
            return invalid
        # the connection options the task set, handed to every step (K8S_AUTH_* reach the steps through the environment)
        connection = dict((key, params[key]) for key in kube.AUTH_ARG_SPEC if args.get(key) is not None)
        if not self.runs_in_process():
            def run_module(module, step_args):
                return self._execute_module(module_name=cluster_modules.MODULES[module].fqcn, module_args=step_args,
                                            task_vars=task_vars)
            return dict(NodeSequence(params, connection, run_module, check_mode=self._task.check_mode).run(),
                        ran_in='modules')

        check_mode, diff = self._task.check_mode, self._task.diff
        engine = sequence_engine.address() if sequence_engine.enabled() else None
        if engine and not self.task_environment():
            # the play's sequence engine runs it (one process for every node in flight); this worker waits
            result = sequence_engine.submit(engine, params, connection, check_mode, diff)
            if result is not None:
                return result
        if task_threads.in_task_thread():
            # a thread of ansible-playbook itself: the sequence's client, connections and threads would be
            # inherited by every worker forked after them; only the engine or a worker of its own runs it
            return {'failed': True, 'msg': 'node_update of %s: the controller\'s sequence engine did not answer; the node '
                                           'keeps the state it recorded, a re-run resumes it' % params.get('node')}
        # one environment and one API client for all the steps (and the package threads)
        with self.task_process():
            return dict(sequence_engine.run_sequence(params, connection, check_mode, diff), ran_in='worker')
