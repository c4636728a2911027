# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""config_edits: a package configMap edit, rolled out as the operator does (UpsertConfigmaps, HandleConfigUpdates)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.nodewright.bridge.plugins.module_utils.planning import config_edits
from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_validation
from ansible_collections.nodewright.bridge.plugins.module_utils.planning import node_plan
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import node_annotations
from ansible_collections.nodewright.bridge.plugins.module_utils.model import stages


def _cr(data=None, updates=None, interrupt=None):
    tuning = {'version': '1.0.0', 'image': 'x/tuning', 'configMap': dict(data or {'a.conf': 'new', 'b.conf': 'same'}),
              'configInterrupts': {'a.conf': {'type': 'service', 'services': ['rsyslog']}}}
    if interrupt:
        tuning['interrupt'] = interrupt
    doc = {'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'Skyhook', 'metadata': {'name': 'cfg'},
           'spec': {'nodeSelectors': {'matchLabels': {'pool': 'gpu'}},
                    'packages': {'tuning': tuning, 'plain': {'version': '2.0.0', 'image': 'x/plain'}}},
           'status': {'configUpdates': updates} if updates else {}}
    return cr_validation.build_cr(doc, stored=True)


def _state(stage='config', state='complete', package='tuning', version='1.0.0'):
    return node_annotations.upsert({}, package, version, 'x/' + package, state, stage)[0]


def test_an_edit_is_the_keys_new_or_changed():
    cr = _cr()
    assert config_edits.edits(cr, {}) == []  # no ConfigMap yet: the first stage creates it
    assert config_edits.edits(cr, {'cfg-tuning-1.0.0': {'a.conf': 'new', 'b.conf': 'same'}}) == []
    ((package, keys),) = config_edits.edits(cr, {'cfg-tuning-1.0.0': {'a.conf': 'old', 'b.conf': 'same', 'gone': 'x'}})
    assert package.name == 'tuning' and keys == ['a.conf']  # a removed key is no change (as the operator compares)
    ((dummy, keys),) = config_edits.edits(cr, {'cfg-tuning-1.0.0': {'a.conf': 'new', 'b.conf': 'same', 'gone': 'x'}})
    assert keys == []  # only removed: the ConfigMap still takes the new data


def test_an_edit_waits_for_every_node_and_no_pod_left():
    cr = _cr()
    package = cr.packages['tuning']
    done = {'n1': _state(), 'n2': _state()}
    expected = {'action': 'apply', 'restart': [], 'all_complete': True, 'why': 'complete on every node'}
    assert config_edits.decide(cr, package, done) == expected
    rolling = {'n1': _state(), 'n2': _state(stage='apply', state='in_progress'), 'n3': {}}
    wait = config_edits.decide(cr, package, rolling)
    assert wait['action'] == 'wait' and '1/3 nodes complete' in wait['why']
    assert config_edits.decide(cr, package, done, pods_left={'n2'})['action'] == 'wait'


def test_an_erroring_config_interrupt_or_post_interrupt_is_restarted_at_once():
    cr = _cr(interrupt={'type': 'reboot'})
    package = cr.packages['tuning']
    for stage in stages.CONFIG_RESTARTED_STAGES:
        states = {'n1': _state(stage=stage, state='erroring'), 'n2': _state(stage='apply', state='in_progress')}
        decision = config_edits.decide(cr, package, states)
        assert decision['action'] == 'apply' and decision['restart'] == ['n1'] and not decision['all_complete']
    # erroring in apply: the edit is not what failed there
    assert config_edits.decide(cr, package, {'n1': _state(stage='apply', state='erroring')})['action'] == 'wait'


def test_an_uninstall_holds_the_edit():
    cr = _cr()
    decision = config_edits.decide(cr, cr.packages['tuning'], {'n1': _state(stage='uninstall', state='in_progress'),
                                                               'n2': _state()})
    assert decision['action'] == 'hold' and 'n1' in decision['why']


def test_package_complete_follows_the_interrupt_that_counts():
    package_state = _state(stage='config')
    assert node_plan.package_complete(_cr(), _cr().packages['tuning'], package_state)
    with_reboot = _cr(interrupt={'type': 'reboot'})
    assert not node_plan.package_complete(with_reboot, with_reboot.packages['tuning'], package_state)
    assert node_plan.package_complete(with_reboot, with_reboot.packages['tuning'], _state(stage='post-interrupt'))
    # recorded config updates: only a matching configInterrupt counts (HasInterrupt)
    updated = _cr(updates={'tuning': ['b.conf']}, interrupt={'type': 'reboot'})
    assert node_plan.package_complete(updated, updated.packages['tuning'], package_state)
    updated = _cr(updates={'tuning': ['a.conf']})
    assert not node_plan.package_complete(updated, updated.packages['tuning'], package_state)
    assert not node_plan.package_complete(updated, updated.packages['tuning'], _state(stage='config', state='erroring'))


def test_config_updates_are_replaced_when_every_node_was_complete_else_added():
    current = {'tuning': ['old.conf'], 'other': ['x']}
    assert config_edits.config_updates_after(current, 'tuning', ['a.conf'], True) == {'tuning': ['a.conf'], 'other': ['x']}
    assert config_edits.config_updates_after(current, 'tuning', ['a.conf', 'old.conf'], False) == {
        'tuning': ['old.conf', 'a.conf'], 'other': ['x']}
    assert config_edits.config_updates_after(current, 'tuning', [], True) == {'other': ['x']}
    assert current == {'tuning': ['old.conf'], 'other': ['x']}  # not changed in place


def test_the_package_goes_back_to_config_and_the_plan_runs_its_config_interrupt():
    cr = _cr(updates={'tuning': ['a.conf']}, interrupt={'type': 'reboot'})
    state = dict(_state(stage='post-interrupt'), **_state(package='plain', version='2.0.0'))
    after, changed = config_edits.restarted_state(state, cr.packages['tuning'])
    assert changed and after['tuning|1.0.0']['stage'] == 'config' and after['tuning|1.0.0']['state'] == 'in_progress'
    assert after['plain|2.0.0'] == state['plain|2.0.0']
    assert config_edits.restarted_state(after, cr.packages['tuning']) == (after, False)
    steps = [(s['package'], s['stage']) for s in node_plan.plan_node(cr, after)['pending']]
    # the config stage, then the configInterrupt of the changed key (rsyslog, not the package's reboot)
    assert steps == [('tuning', 'config'), ('tuning', 'interrupt'), ('tuning', 'post-interrupt')]
    assert node_plan.plan_node(cr, after)['interrupt']['type'] == 'service'


def test_a_version_change_drops_the_packages_config_updates_as_handle_version_change_does():
    updates = {'tuning': ['a.conf'], 'gone': ['x.conf']}
    cr = _cr(updates=updates)
    at_cr_version = {'n1': _state(), 'n2': _state(stage='post-interrupt', state='in_progress')}
    assert config_edits.dropped_by_version_change(cr, at_cr_version) == []
    # an older version on a node: the upgrade starts, the edit's keys go (and only packages with keys are named)
    older = {'n1': _state(), 'n2': dict(_state(version='0.9.0'), **_state(package='plain', version='1.0.0'))}
    assert config_edits.dropped_by_version_change(cr, older) == ['tuning']
    # a package the CR no longer has
    assert config_edits.dropped_by_version_change(cr, {'n1': _state(package='gone')}) == ['gone']
    # the node already upgrading (the keys went when it started), a downgrade, an uninstall cycle: nothing
    upgrading = dict(_state(version='0.9.0'), **_state(stage='upgrade', state='in_progress'))
    newer = _state(version='1.1.0')
    uninstalling = dict(_state(version='0.9.0'), **_state(stage='uninstall', state='in_progress'))
    for state in (upgrading, newer, uninstalling):
        assert config_edits.dropped_by_version_change(cr, {'n1': state}) == [], state
    assert config_edits.dropped_by_version_change(_cr(), older) == []  # no keys recorded: nothing to drop
    # after the drop the new version plans no config interrupt (the package has no interrupt of its own)
    cr.config_updates = {}
    plan = node_plan.plan_node(cr, {})
    assert not plan['interrupts'], plan


def _glob_cr(patterns, updates, data=None):
    """config-skyhook's update-glob.yaml: dexter (its own interrupt a reboot), ``patterns`` as its configInterrupts."""
    dexter = {'version': '1.2.3', 'image': 'x/agentless', 'interrupt': {'type': 'reboot'},
              'configInterrupts': patterns, 'configMap': dict(data or {'game.properties': 'changed via glob\n'})}
    doc = {'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'Skyhook', 'metadata': {'name': 'config-skyhook'},
           'spec': {'nodeSelectors': {'matchLabels': {'pool': 'gpu'}}, 'packages': {'dexter': dexter}},
           'status': {'configUpdates': updates} if updates else {}}
    return cr_validation.build_cr(doc, stored=True)


def test_the_glob_edit_after_an_earlier_edit_waits_for_the_interrupt_the_glob_now_asks_then_follows_it():
    # upstream's config-skyhook, last step: the earlier edit (ui.properties, no configInterrupt then) left dexter at
    # config/complete with ui.properties in status.configUpdates; the new CR's glob matches that key, so (as the
    # operator's IsPackageComplete counts it) the package owes the glob's interrupt first and the edit waits for it
    rsyslog = {'type': 'service', 'services': ['rsyslog']}
    cr = _glob_cr({'*.properties': rsyslog}, {'dexter': ['ui.properties']})
    dexter = cr.packages['dexter']
    ((package, keys),) = config_edits.edits(cr, {'config-skyhook-dexter-1.2.3': {
        'game.properties': 'changed\n', 'ui.properties': 'changed\n'}})
    assert package is dexter and keys == ['game.properties']  # ui.properties removed: no changed key
    at_config = _state(stage='config', package='dexter', version='1.2.3')
    assert not node_plan.package_complete(cr, dexter, at_config)
    decision = config_edits.decide(cr, dexter, {'n1': at_config})
    assert decision['action'] == 'wait'
    # the run's rollout runs that interrupt; the apply playbook then decides the waiting edit again
    assert config_edits.waiting({'dexter': decision}) == ['dexter']
    plan = node_plan.plan_node(cr, at_config)
    assert [(s['package'], s['stage']) for s in plan['pending']] == [('dexter', 'interrupt'), ('dexter', 'post-interrupt')]
    assert (plan['interrupt']['type'], plan['interrupt']['services']) == ('service', ['rsyslog'])
    done = _state(stage='post-interrupt', package='dexter', version='1.2.3')
    after = config_edits.decide(cr, dexter, {'n1': done})
    assert after['action'] == 'apply' and after['all_complete'] and config_edits.waiting({'dexter': after}) == []
    # applied: the earlier edit's keys replaced by this one's, dexter back in config, and the plan runs the config
    # stage, then the glob's interrupt for game.properties (not the package's reboot), then post-interrupt
    cr.config_updates = config_edits.config_updates_after(cr.config_updates, 'dexter', keys, after['all_complete'])
    assert cr.config_updates == {'dexter': ['game.properties']}
    restarted = config_edits.restarted_state(done, dexter)[0]
    plan = node_plan.plan_node(cr, restarted)
    assert [s['stage'] for s in plan['pending']] == ['config', 'interrupt', 'post-interrupt']
    assert (plan['interrupt']['type'], plan['interrupt']['services']) == ('service', ['rsyslog'])


def test_a_key_two_globs_match_with_different_interrupts_runs_both_merged_as_the_operator():
    # GetConfigInterrupts adds every matching pattern's interrupt (one per type and services); fudgeInterrupt
    # keeps the highest priority (a reboot wins) and merges the services of service interrupts
    services = _glob_cr({'*.properties': {'type': 'service', 'services': ['rsyslog']},
                         'game.*': {'type': 'service', 'services': ['cron', 'rsyslog']}}, {'dexter': ['game.properties']})
    assert node_plan.config_interrupts(services, services.config_updates) == {'dexter': [
        {'type': 'service', 'services': ['rsyslog']}, {'type': 'service', 'services': ['cron', 'rsyslog']}]}
    restarted = config_edits.restarted_state(_state(stage='post-interrupt', package='dexter', version='1.2.3'),
                                             services.packages['dexter'])[0]
    merged = node_plan.plan_node(services, restarted)['interrupt']
    assert (merged['type'], merged['services']) == ('service', ['cron', 'rsyslog'])
    reboot = _glob_cr({'*.properties': {'type': 'service', 'services': ['rsyslog']}, 'game.*': {'type': 'reboot'}},
                      {'dexter': ['game.properties']})
    assert node_plan.plan_node(reboot, restarted)['interrupt']['type'] == 'reboot'
    # a key no pattern matches: no interrupt at all (with config updates, not even the package's own reboot)
    none = _glob_cr({'*.conf': {'type': 'reboot'}}, {'dexter': ['game.properties']},
                    data={'game.properties': 'x', 'a.conf': 'y'})
    assert node_plan.config_interrupts(none, none.config_updates) == {}
    assert [s['stage'] for s in node_plan.plan_node(none, restarted)['pending']] == ['config']
