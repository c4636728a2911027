# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The shared action plugin finds the task's module in the registry, however the task names it."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

import pytest

from ansible_collections.nodewright.bridge.plugins.module_utils import cluster_modules
from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution import cluster_action


class Task(object):
    def __init__(self, action, resolved_action):
        self.action = action
        self.resolved_action = resolved_action


def _action(task, cls=cluster_action.ClusterAction):
    plugin = cls.__new__(cls)  # no ActionBase.__init__: find_module reads only the task
    plugin._task = task
    return plugin


@pytest.mark.parametrize('action,resolved', [
    ('nodewright.bridge.rollout_plan', 'nodewright.bridge.rollout_plan'),
    ('rollout_plan', 'nodewright.bridge.rollout_plan'),  # a short name with collections:
    ('rollout_plan', 'ansible.legacy.rollout_plan'),
    ('nodewright.bridge.rollout_plan', None),  # no resolved action (an older task object): the action as written
])
def test_the_task_names_the_module(action, resolved):
    plugin = _action(Task(action, resolved))
    assert plugin.find_module() is None
    assert plugin.MODULE == 'nodewright.bridge.rollout_plan'
    assert plugin.MODULE_CODE is cluster_modules.MODULES['rollout_plan'].import_code()
    assert plugin.FILE_ARGUMENTS == ('cr', 'policy', 'nodes')
    # on the instance: the class (every symlinked plugin's) keeps no module
    assert cluster_action.ClusterAction.MODULE is None


def test_a_module_outside_the_registry_is_a_failed_task():
    message = _action(Task('nodewright.bridge.rollout_report', 'nodewright.bridge.rollout_report')).find_module()
    assert message.startswith('nodewright.bridge.rollout_report is not one of the cluster modules of nodewright.bridge')


def test_a_class_that_names_its_module_keeps_it():
    class Own(cluster_action.ClusterAction):
        MODULE = 'nw_explode'
        MODULE_CODE = object()

    plugin = _action(Task('nw_explode', 'ansible.legacy.nw_explode'), Own)
    assert plugin.find_module() is None and plugin.MODULE == 'nw_explode' and plugin.FILE_ARGUMENTS == ()


def _fresh_python(code):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    out = subprocess.run([sys.executable, '-c', code], env=env, check=True, stdout=subprocess.PIPE, timeout=120)
    return json.loads(out.stdout.decode('utf-8').strip().splitlines()[-1])


def test_importing_the_plugins_loads_no_module_code_and_a_play_start_loads_every_modules():
    # no import-time side effect (issue 43): the action plugins' base and the venue load nothing; the budgeted
    # strategy's play start (venue.PlayVenue.start, here its loading half) imports every cluster module's code
    # before the workers fork, so that they inherit it
    prefix = 'ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules.'
    loaded = _fresh_python(
        'import json, sys\n'
        'from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution import cluster_action, venue\n'
        'def code():\n'
        '    return sorted(m[len(%r):] for m in sys.modules if m.startswith(%r) and not m.rsplit(".", 1)[-1].startswith("_"))\n'
        'before = code()\n'
        'venue.load_module_code()\n'
        'print(json.dumps([before, code()]))\n' % (prefix, prefix))
    # before: only what the execution layer calls itself (the steps' definition; cr_status's sync, which the status
    # keeper runs), not the modules' code
    assert loaded[0] == ['cr_status', 'node_steps'] and set(cluster_modules.NAMES) <= set(loaded[1]), loaded
