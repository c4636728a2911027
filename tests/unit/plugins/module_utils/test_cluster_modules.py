# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The registry of the cluster modules (module_utils/cluster_modules) and the places that must follow it:
meta/runtime.yml, the module and action plugin files, the sequence engine, node_steps and the timeline."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest
import yaml

from ansible_collections.nodewright.bridge.plugins.module_utils import cluster_modules
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import node_steps
from ansible_collections.nodewright.bridge.plugins.plugin_utils.reporting import rollout_state
from ansible_collections.nodewright.bridge.plugins.plugin_utils.reporting import rollout_timeline

REPO_ROOT = os.path.realpath(os.path.join(os.path.dirname(__file__), '..', '..', '..', '..'))
ACTION_DIR = os.path.join(REPO_ROOT, 'plugins', 'action')
# The one action file the others import, and the action plugins that are files of their own: node_update
# (runs the sequence) and rollout_report (no cluster module: it writes the timeline on the controller).
SHARED_ACTION = 'node_cordon.py'
OWN_ACTIONS = ('node_update.py', 'rollout_report.py', 'role_package.py', 'rollout_run.py', 'fleet_stage.py')


def test_the_action_group_cluster_of_meta_runtime_is_the_registry():
    with open(os.path.join(REPO_ROOT, 'meta', 'runtime.yml')) as handle:
        runtime = yaml.safe_load(handle)
    assert runtime['action_groups']['cluster'] == list(cluster_modules.NAMES)


@pytest.mark.parametrize('name', cluster_modules.NAMES)
def test_every_registered_module_has_its_code_documentation_and_action_plugin(name):
    module = cluster_modules.MODULES[name]
    assert module.fqcn == 'nodewright.bridge.' + name
    code = module.import_code()
    # node_update's code is its options only: the action plugin runs the sequence
    assert callable(code.module_args) and (name == 'node_update' or callable(code.execute))
    assert os.path.isfile(os.path.join(REPO_ROOT, 'plugins', 'modules', name + '.py'))
    assert os.path.exists(os.path.join(ACTION_DIR, name + '.py'))
    # the arguments read as files on the controller are options of the module
    options = code.module_args()['argument_spec']
    assert set(module.file_arguments) <= set(options), module.file_arguments


def test_the_action_plugins_are_one_import_of_one_file_but_node_update_and_the_controller_ones():
    files = sorted(f for f in os.listdir(ACTION_DIR) if f.endswith('.py'))
    assert files == sorted([name + '.py' for name in cluster_modules.NAMES] + ['rollout_report.py', 'role_package.py', 'rollout_run.py', 'fleet_stage.py'])
    shared = 'from ansible_collections.nodewright.bridge.plugins.action.%s import ActionModule' % SHARED_ACTION[:-3]
    for name in files:
        path = os.path.join(ACTION_DIR, name)
        # no symlinks: antsibull-docs takes a symlinked action plugin for an alias of the module it points to
        assert not os.path.islink(path), name
        if name in OWN_ACTIONS or name == SHARED_ACTION:
            continue
        with open(path) as handle:
            code = [line for line in handle.read().splitlines() if line and not line.startswith('#')
                    and not line.startswith(('from __future__', '__metaclass__'))]
        # the docstring, then the one import
        assert code[-1].startswith(shared) and sum(1 for line in code if line.startswith(('from ', 'import '))) == 1, name


def test_the_sequence_engine_runs_the_registered_steps():
    steps = set(module.name for module in cluster_modules.step_modules())
    # the engine runs a step by the registry's entry (its FQCN and code: sequence_engine.step_runner)
    assert steps and all(cluster_modules.MODULES[name].fqcn == 'nodewright.bridge.' + name
                         and cluster_modules.MODULES[name].import_code() is not None for name in steps)
    # every module the sequence definition names is a registered step
    used = set(step.module for step in node_steps.STEPS + node_steps.RESCUE if not step.is_pending)
    assert used <= steps
    assert 'node_update' not in steps


def test_every_kind_is_one_the_timeline_draws():
    colours = set(kind for kind, dummy, dummy_label in rollout_timeline.COLOURS)
    kinds = set(module.kind for module in cluster_modules.step_modules()) | set(['uncordon', 'task'])
    assert kinds <= set(rollout_state.KINDS) <= colours


@pytest.mark.parametrize('action,name', [
    ('nodewright.bridge.node_drain', 'node_drain'),
    ('node_drain', 'node_drain'),
    ('ansible.legacy.node_drain', 'node_drain'),
    ('nodewright.bridge.rollout_report', None),
    ('ansible.builtin.copy', None),
    (None, None),
])
def test_by_action_finds_the_module_however_the_task_names_it(action, name):
    found = cluster_modules.by_action(action)
    assert (found.name if found is not None else None) == name


@pytest.mark.parametrize('module,args,kind', [
    ('node_cordon', {'state': 'uncordoned'}, 'uncordon'),
    ('node_cordon', {}, 'cordon'),
    ('node_drain', {}, 'drain'),
    ('package_stage', {'stage': 'apply'}, 'stage'),
    ('node_interrupt', {}, 'interrupt'),
    ('rollout_plan', {}, 'plan'),
    ('cr_status', {}, 'task'),
    ('someone_elses', {}, 'task'),
])
def test_step_kind(module, args, kind):
    assert node_steps.step_kind(module, args) == kind
