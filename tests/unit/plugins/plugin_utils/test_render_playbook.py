# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The render's data and generated parts: steps from the plan's ids, tasks from the one sequence definition."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

import yaml

from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_model
from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_validation
from ansible_collections.nodewright.bridge.plugins.module_utils.planning import planner
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import node_steps
from ansible_collections.nodewright.bridge.plugins.plugin_utils.rendering import render_playbook
from ansible_collections.nodewright.bridge.plugins.plugin_utils.rendering.render_playbook import render_data
from ansible_collections.nodewright.bridge.tests.unit.plugins.module_utils.step_options import option_names

PACKAGES = {
    'kernel-tuning': {
        'version': '1.4.0', 'image': 'registry.local/tuning',
        'interrupt': {'type': 'service', 'services': ['containerd']},
        'configMap': {'apply.sh': '#!/bin/bash\nset -e\nsysctl -w vm.swappiness=1\n'},
    },
    'nic-tuning': {'version': '0.3.0', 'image': 'registry.local/tuning',
                   'interrupt': {'type': 'service', 'services': ['kubelet']}},
    'gpu-agent': {
        'version': '2.1.0', 'image': 'registry.local/tuning',
        'dependsOn': {'kernel-tuning': '1.4.0', 'nic-tuning': '0.3.0'},
        'configMap': {'agent.conf': 'level: {{ not_a_template }}\nmode: "{% raw %}"\n'},
    },
}

SETTINGS = {'nodewright_namespace': 'skyhook', 'nodewright_drain_timeout': 600, 'nodewright_health_pod_selector': ''}


def cr_document(packages=None, name='demo'):
    return {'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'Skyhook', 'metadata': {'name': name},
            'spec': {'nodeSelectors': {'matchLabels': {'pool': 'a'}},
                     'podNonInterruptLabels': {'matchLabels': {'workload': 'training'}},
                     'interruptionBudget': {'count': 1},
                     'packages': copy.deepcopy(packages or PACKAGES)}}


def render_input(packages=None, from_cluster=False, nodes=None):
    """``nw_r`` of render.yml's "Write the playbook" task, for a CR over ``nodes`` (fresh ones by default)."""
    doc = cr_document(packages)
    cr = cr_validation.build_cr(doc)
    nodes = nodes or [{'name': 'n1', 'labels': {'pool': 'a'}, 'annotations': {}}]
    plan = planner.plan_rollout(cr, nodes)
    plan.update(cr_document=doc, policy_document=None, interruption_budget={'count': 1})
    fresh_node = {'name': 'fresh', 'labels': {'pool': 'a'}, 'annotations': {}}
    fresh = planner.plan_rollout(cr, [fresh_node])['nodes']['fresh']
    return {'cr': plan['cr'], 'cr_document': doc, 'policy_document': None, 'interruption_budget': {'count': 1},
            'from_cluster': from_cluster, 'source': '/tmp/demo.yaml', 'rendered_at': '2026-01-01T00:00:00Z',
            'dest': '/tmp/out/demo.playbook.yml', 'group': 'nodewright_demo', 'fresh': fresh, 'settings': SETTINGS,
            'render': render_data(plan, fresh)}


class _Loader(yaml.SafeLoader):  # pylint: disable=too-many-ancestors
    """YAML with Ansible's !unsafe tag."""


_Loader.add_constructor('!unsafe', lambda loader, node: loader.construct_scalar(node))


def _load(text):
    return yaml.load(text + "\n", Loader=_Loader)  # noqa: S506 - a SafeLoader with the !unsafe tag; as placed, a line follows


def test_the_playbook_steps_are_the_plan_ids_with_upgrades_beside_their_apply():
    old = {'name': 'old', 'labels': {'pool': 'a'}, 'annotations': {
        'skyhook.nvidia.com/nodeState_demo': ('{"nic-tuning|0.2.0": {"name": "nic-tuning", "version": "0.2.0", '
                                              '"image": "x", "stage": "post-interrupt", "state": "complete"}}')}}
    r = render_input(nodes=[old])
    data = r['render']
    assert data['upgrades'] == ['nic-tuning']
    assert data['playbook_steps'] == [
        'kernel-tuning:apply', 'nic-tuning:upgrade', 'nic-tuning:apply', 'kernel-tuning:config', 'nic-tuning:config',
        'kernel-tuning:interrupt service containerd,kubelet', 'nic-tuning:interrupt (merged into kernel-tuning)',
        'kernel-tuning:post-interrupt', 'nic-tuning:post-interrupt', 'gpu-agent:apply', 'gpu-agent:config']
    assert data['unsupported'] == {}
    assert data['nodes']['to_update'] == ['old']
    assert data['policy_text'] == 'the CR\'s interruptionBudget {"count": 1}'


def test_policy_text_names_compartments_and_strategies():
    policy = {'metadata': {'name': 'p'}, 'spec': {
        'compartments': [{'name': 'c1', 'budget': {'percent': 10}, 'strategy': {'linear': {}}}],
        'default': {'budget': {'count': 2}, 'strategy': {'fixed': {'initialBatch': 1}}}}}
    assert render_playbook.policy_text(policy, None) == \
        'DeploymentPolicy p: compartment c1 budget {"percent": 10} linear; default budget {"count": 2} fixed'


def test_the_node_tasks_are_the_sequence_definition_with_jinja_values():
    r = render_input()
    parts = render_playbook.playbook_parts(r)
    loaded = _load('block:\n' + parts['block'] + '\nrescue:\n' + parts['rescue'])
    tasks = loaded['block']
    modules = [[k for k in t if k.startswith(('nodewright.', 'ansible.'))][0] for t in tasks]
    # the definition's order: cordon, drain, the pending steps, health, complete, uncordon
    assert modules[:2] == ['nodewright.bridge.node_cordon', 'nodewright.bridge.node_drain']
    assert modules[-3:] == ['nodewright.bridge.node_health', 'nodewright.bridge.node_state', 'nodewright.bridge.node_cordon']
    outer = [t for t, m in zip(tasks, modules) if m not in ('nodewright.bridge.package_stage', 'nodewright.bridge.node_interrupt')]
    steps = [s for s in node_steps.STEPS if not s.is_pending]
    for task, step in zip(outer, steps):
        args = task['nodewright.bridge.' + step.module]
        assert set(args) <= set(option_names(step)), step
        assert args['node'] == '{{ inventory_hostname }}'
    assert outer[1]['nodewright.bridge.node_drain']['timeout'] == '{{ nodewright_drain_timeout }}'
    assert outer[1]['nodewright.bridge.node_drain']['wait_for'] == {'matchLabels': {'workload': 'training'}}
    assert [t.get('when') for t in outer] == ['nw_needs_drain', 'nw_needs_drain', 'nw_needs_drain', None,
                                              'nw_needs_drain or nw_cordoned']
    interrupt = [t for t in tasks if 'nodewright.bridge.node_interrupt' in t][0]
    assert interrupt['when'] == "'kernel-tuning:interrupt service containerd,kubelet' in nw_pending"
    assert interrupt['nodewright.bridge.node_interrupt']['covered'] == ['nic-tuning']
    assert '# nic-tuning 0.3.0: interrupt - merged into the interrupt of kernel-tuning' in parts['block']
    stage = [t for t in tasks if 'nodewright.bridge.package_stage' in t][0]
    assert stage['nodewright.bridge.package_stage'] == {'node': '{{ inventory_hostname }}', 'package': 'kernel-tuning',
                                                        'stage': 'apply'}
    # the playbook's own Jinja is never tagged
    assert '!unsafe' not in parts['block'] + parts['rescue'] + parts['module_defaults']
    rescue, = loaded['rescue']
    assert rescue['when'] == 'nodewright_uncordon_on_failure | bool and (nw_needs_drain or nw_cordoned)'
    assert rescue['nodewright.bridge.node_cordon']['state'] == 'uncordoned'


def test_a_rendered_nodewrights_drain_carries_its_drain_config():
    r = render_input()
    assert 'drain_config' not in _load('block:\n' + render_playbook.playbook_parts(r)['block'])['block'][1][
        'nodewright.bridge.node_drain']  # a Skyhook has none
    drain = cr_model.drain_config({'force': False, 'timeout': '10m'})
    r['cr'] = dict(r['cr'], kind='NodeWright', drainConfig=drain)
    task = _load('block:\n' + render_playbook.playbook_parts(r)['block'])['block'][1]
    assert task['nodewright.bridge.node_drain']['drain_config'] == drain


def test_a_reboot_remembers_the_boot_for_the_health_gate():
    packages = {'driver': {'version': '1.0.0', 'image': 'x', 'interrupt': {'type': 'reboot'}}}
    parts = render_playbook.playbook_parts(render_input(packages))
    tasks = _load(parts['block'])
    names = [t['name'] for t in tasks]
    assert names[names.index('driver 1.0.0: interrupt, reboot') + 1] == 'Remember the boot before the reboot, for the health check'
    health = [t for t in tasks if 'nodewright.bridge.node_health' in t][0]
    assert health['nodewright.bridge.node_health']['boot_id_not'] == '{{ nw_boot_before_reboot | default(omit, true) }}'
    assert 'a new boot ID after the reboot' in health['name']


def test_without_an_interrupt_there_is_no_cordon_drain_or_health_task():
    packages = {'conf': {'version': '1.0.0', 'image': 'x'}}
    parts = render_playbook.playbook_parts(render_input(packages))
    tasks = _load(parts['block'])
    assert [t['name'] for t in tasks] == ['conf 1.0.0: apply', 'conf 1.0.0: config', 'Record demo complete on the node',
                                          "Uncordon (only demo's own cordon is released)"]
    assert 'nodewright.bridge.node_interrupt' not in parts['module_defaults']


def test_the_embedded_cr_reads_back_and_jinja_in_it_is_tagged():
    r = render_input()
    parts = render_playbook.playbook_parts(r)
    assert _load(parts['cr_document']) == {'nw_cr_document': r['cr_document']}
    assert '              agent.conf: !unsafe |\n                level: {{ not_a_template }}\n' in parts['cr_document']
    assert parts['cr_document'].count('!unsafe') == 1
    defaults = _load(parts['module_defaults'])
    assert defaults['nodewright.bridge.package_stage']['cr'] == '{{ nw_documents }}'
    assert defaults['nodewright.bridge.node_interrupt']['timeout'] == '{{ nodewright_interrupt_timeout }}'
    assert _load(parts['settings']) == SETTINGS
    assert _load(parts['playbook_steps'])['nw_playbook_steps'] == r['render']['playbook_steps']


def test_the_header_describes_packages_and_merged_interrupts():
    head = render_playbook.header(dict(render_input(), **render_input()['render']))
    assert head.startswith('---\n# demo.playbook.yml: NodeWright CR demo as a playbook\n')
    for needle in ('#   nodes:       labelled pool=a',
                   '#     3. gpu-agent 2.1.0 (registry.local/tuning); depends on kernel-tuning 1.4.0, nic-tuning 0.3.0',
                   '#   interrupt 1:  restart containerd, kubelet, run by kernel-tuning (merged with the interrupts of nic-tuning)',
                   '#   cordon for demo -> wait for protected pods, drain ->',
                   '#   -> health check -> record demo complete -> uncordon'):
        assert needle in head, needle
    assert all(line.startswith('#') for line in head.splitlines()[1:])
