# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""Action plugin for nodewright.bridge.node_update: the per-node sequence (plugin_utils/node_sequence.py)
over the collection's cluster modules, each step in the controller process or, delegated elsewhere, as a module."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.nodewright.bridge.plugins.module_utils import kube
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import node_cordon
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import node_drain
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import node_health
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import node_interrupt
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import node_state
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import node_update as module_code
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import operator_guard
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import package_stage
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import rollout_plan
from ansible_collections.nodewright.bridge.plugins.plugin_utils import in_process
from ansible_collections.nodewright.bridge.plugins.plugin_utils.cluster_action import ClusterAction
from ansible_collections.nodewright.bridge.plugins.plugin_utils.node_sequence import NodeSequence

STEP_MODULES = dict((code.__name__.rsplit('.', 1)[-1], code) for code in (
    rollout_plan, operator_guard, node_cordon, node_drain, package_stage, node_interrupt, node_health, node_state))


class ActionModule(ClusterAction):

    MODULE = 'nodewright.bridge.node_update'
    MODULE_CODE = module_code
    FILE_ARGUMENTS = ('cr',)

    def run_task(self, args, task_vars):
        """The sequence: each step in this process (a wave's packages in threads) or as a module."""
        params, invalid = in_process.validate(self.MODULE, module_code, args, check_mode=self._task.check_mode)
        if invalid is not None:
            return invalid
        # the connection options the task set, handed to every step (K8S_AUTH_* reach the steps through the environment)
        connection = dict((key, params[key]) for key in kube.AUTH_ARG_SPEC if args.get(key) is not None)
        if not self.runs_in_process():
            def run_module(module, step_args):
                return self._execute_module(module_name='nodewright.bridge.%s' % module, module_args=step_args,
                                            task_vars=task_vars)
            return NodeSequence(params, connection, run_module).run()

        def run_in_process(module, step_args):
            return in_process.run('nodewright.bridge.%s' % module, STEP_MODULES[module], step_args,
                                  check_mode=self._task.check_mode, diff=self._task.diff)
        # one environment and one API client for all the steps (and the package threads)
        with self.task_process():
            return NodeSequence(params, connection, run_in_process, parallel=True).run()
