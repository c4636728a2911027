# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""Where an async cluster task runs: as a module under ansible-core's async wrapper; node_update refuses async."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.nodewright.bridge.plugins.module_utils import cluster_modules
from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution import cluster_action
from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution import venue


class Task(object):
    def __init__(self, async_val):
        self.async_val = async_val
        self.check_mode = False
        self.diff = False


class Connection(object):
    transport = 'local'
    has_native_async = False


class PlayContext(object):
    become = False


def _action(module, async_val):
    """A ClusterAction for ``module`` whose _execute_module records its calls instead of running anything."""
    action = cluster_action.ClusterAction.__new__(cluster_action.ClusterAction)
    action._task, action._connection, action._play_context = Task(async_val), Connection(), PlayContext()
    action.MODULE, action.MODULE_CODE = cluster_modules.MODULES[module].fqcn, cluster_modules.MODULES[module].import_code()
    action.calls = []

    def execute_module(**kwargs):
        action.calls.append(kwargs)
        return {'started': 1, 'finished': 0, 'ansible_job_id': 'j1'}
    action._execute_module = execute_module
    return action


def test_the_plugin_takes_async_tasks():
    assert cluster_action.ClusterAction._supports_async is True


def test_an_async_task_runs_its_module_under_the_async_wrapper():
    action = _action('node_health', 30)
    assert venue.choose(action) == venue.MODULE
    result = venue.run(action, {'name': 'gpu-node-00'}, {})
    assert result['ansible_job_id'] == 'j1'
    assert action.calls == [{'module_name': 'nodewright.bridge.node_health', 'module_args': {'name': 'gpu-node-00'},
                             'task_vars': {}, 'wrap_async': True}]


def test_a_connection_with_its_own_async_is_not_wrapped():
    action = _action('node_health', 30)
    action._connection.has_native_async = True
    venue.run(action, {'name': 'gpu-node-00'}, {})
    assert action.calls[0]['wrap_async'] is False


def test_node_update_refuses_async_and_runs_nothing():
    action = _action('node_update', 30)
    result = venue.run(action, {'node': 'gpu-node-00'}, {})
    assert result['failed'] is True
    assert 'nodewright.bridge.node_update does not support async' in result['msg']
    assert action.calls == []
