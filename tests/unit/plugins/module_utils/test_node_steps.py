# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The one definition of the per-node sequence, and the copies that must follow it (the maintenance role)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import yaml

from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import node_steps
from ansible_collections.nodewright.bridge.plugins.plugin_utils.rendering.render_playbook import RenderedValues
from ansible_collections.nodewright.bridge.tests.unit.plugins.module_utils.step_options import option_names

REPO = os.path.realpath(os.path.join(os.path.dirname(__file__), '..', '..', '..', '..'))
MAINTENANCE = os.path.join(REPO, 'roles', 'maintenance', 'tasks', 'main.yml')
# A read the maintenance role adds before the user's step (the boot ID to compare after it).
MAINTENANCE_ONLY = ('nw_maint_before',)


def test_the_sequence_order():
    assert [(s.key, s.module, s.when) for s in node_steps.STEPS] == [
        ('pending, before the cordon', None, node_steps.ALWAYS),
        ('cordon', 'node_cordon', node_steps.IF_DRAINED),
        ('pending, cordoned', None, node_steps.IF_DRAINED),
        ('drain', 'node_drain', node_steps.IF_DRAINED),
        ('pending', None, node_steps.ALWAYS), ('health', 'node_health', node_steps.IF_DRAINED),
        ('complete', 'node_state', node_steps.ALWAYS), ('uncordon', 'node_cordon', node_steps.IF_CORDON_HELD)]
    assert [(s.key, s.module) for s in node_steps.RESCUE] == [('uncordon after failure', 'node_cordon')]
    assert [s.pending_after for s in node_steps.STEPS if s.is_pending] == [None, 'cordon', 'drain']


def test_each_pending_step_goes_where_its_after_says():
    pending = [{'id': 'a', 'after': None}, {'id': 'b', 'after': 'cordon'}, {'id': 'c', 'after': 'drain'},
               {'id': 'd'}]  # a plan from before ``after``: after the drain, as every step then
    places = [s for s in node_steps.STEPS if s.is_pending]
    assert [[p['id'] for p in node_steps.pending_part(s, pending)] for s in places] == [['a'], ['b'], ['c', 'd']]


def test_when_a_step_applies():
    assert node_steps.applies(node_steps.IF_DRAINED, drained=True, cordon_held=False)
    assert not node_steps.applies(node_steps.IF_DRAINED, drained=False, cordon_held=True)
    assert node_steps.applies(node_steps.IF_CORDON_HELD, drained=False, cordon_held=True)
    assert not node_steps.applies(node_steps.IF_CORDON_HELD, drained=False, cordon_held=False)
    rescue = node_steps.ON_FAILURE_IF_ASKED
    assert node_steps.applies(rescue, False, True, failed=True, uncordon_on_failure=True)
    assert not node_steps.applies(rescue, False, True, failed=True, uncordon_on_failure=False)
    assert not node_steps.applies(rescue, False, False, failed=True, uncordon_on_failure=True)


class _Source(node_steps.ValueSource):
    node, cr = 'n1', 'demo'

    def setting(self, name):
        return 'value of ' + name

    tuning = setting

    def setting_if_set(self, name):
        return node_steps.OMIT

    def protected_pods(self):
        return node_steps.OMIT

    def boot_before_reboot(self):
        return 'boot-1'

    def runtime_required_crs(self):
        return []

    def cr_source(self):
        return {'cr_name': 'demo'}


def test_omitted_values_are_not_passed():
    drain = dict((s.key, s) for s in node_steps.STEPS)['drain']
    assert drain.args(_Source()) == {'node': 'n1', 'wait_for_timeout': 'value of wait_for_protected_timeout',
                                     'timeout': 'value of drain_timeout', 'preflight': 'value of drain_preflight',
                                     'skip': 'value of drain_skip', 'hold_for': 'demo'}
    health = dict((s.key, s) for s in node_steps.STEPS)['health']
    assert health.args(_Source())['boot_id_not'] == 'boot-1' and 'pod_selector' not in health.args(_Source())


def test_the_drain_passes_a_drain_config_when_the_source_has_one():
    class NodeWrightSource(_Source):
        def drain_config(self):
            return {'force': False}
    drain = dict((s.key, s) for s in node_steps.STEPS)['drain']
    assert drain.args(NodeWrightSource())['drain_config'] == {'force': False}
    assert 'drain_config' in option_names(drain)


def test_pending_calls():
    src = _Source()
    assert node_steps.pending_call(src, {'package': 'a', 'stage': 'config'}) == (
        'package_stage', {'node': 'n1', 'package': 'a', 'stage': 'config'})
    interrupt = {'type': 'reboot', 'services': []}
    assert node_steps.pending_call(src, {'package': 'a', 'stage': 'interrupt', 'interrupt': interrupt, 'covers': ['b']}) == (
        'node_interrupt', {'node': 'n1', 'package': 'a', 'stage': 'interrupt', 'interrupt': interrupt, 'covered': ['b']})
    assert node_steps.pending_call(src, {'package': 'b', 'stage': 'interrupt', 'skipped': True, 'merged_into': 'a'}) is None
    assert node_steps.reboots({'interrupt': interrupt}) and not node_steps.reboots({'stage': 'apply'})
    settings = node_steps.pod_settings(src, 'node_interrupt')
    assert settings['timeout'] == 'value of interrupt_timeout' and settings['cr_name'] == 'demo'
    assert node_steps.pod_settings(src, 'package_stage')['timeout'] == 'value of stage_timeout'


def _cluster_tasks(tasks, section='block'):
    """(section, module, task) of every nodewright.bridge task, blocks walked in order."""
    out = []
    for task in tasks:
        for key in ('block', 'rescue'):
            if key in task:
                out.extend(_cluster_tasks(task[key], 'rescue' if key == 'rescue' else section))
        modules = [k for k in task if k.startswith('nodewright.bridge.')]
        if modules and task.get('register') not in MAINTENANCE_ONLY:
            out.append((section, modules[0][len('nodewright.bridge.'):], task))
    return out


def test_the_maintenance_role_has_the_definitions_cluster_steps():
    """The role is hand-written (the user's step sits in the middle): its cluster steps must stay the definition's."""
    with open(MAINTENANCE) as handle:
        tasks = yaml.safe_load(handle)
    found = [(section, module, sorted(task['nodewright.bridge.' + module])) for section, module, task in _cluster_tasks(tasks)]
    # no CR in a maintenance window: the steps about the CR's state on the node are not there
    expected = [('block', s.module, option_names(s)) for s in node_steps.STEPS
                if s.module and not s.records_state]
    expected += [('rescue', s.module, option_names(s)) for s in node_steps.RESCUE]
    assert found == expected


def test_the_maintenance_role_reads_the_same_settings():
    with open(MAINTENANCE) as handle:
        tasks = yaml.safe_load(handle)
    rendered = RenderedValues({'cr': {'name': 'x', 'podNonInterruptLabels': {}}, 'runtime_required_crs': [],
                               'from_cluster': True, 'fresh': {'pending': []}})
    steps = [s for s in node_steps.STEPS if s.module and not s.records_state] + list(node_steps.RESCUE)
    for (dummy, module, task), step in zip(_cluster_tasks(tasks), steps):
        args = task['nodewright.bridge.' + module]
        for option, expression in step.args(rendered).items():
            if isinstance(expression, str) and expression.startswith('{{ nodewright_') and '|' not in expression:
                assert args[option] == expression, (step.key, option)
