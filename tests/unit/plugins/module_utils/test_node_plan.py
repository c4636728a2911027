# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""node_plan: the stages one node still has to run for one CR, in the operator's order."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_validation
from ansible_collections.nodewright.bridge.plugins.module_utils.planning import node_plan

REBOOT = {'type': 'reboot'}
UNINSTALL = {'enabled': True, 'apply': True}
CANCELLED = {'enabled': True, 'apply': False}


def make_cr(serial=False, status=None, **packages):
    doc = {'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'Skyhook', 'metadata': {'name': 'demo'},
           'spec': {'serial': serial, 'packages': packages}}
    if status is not None:
        doc['status'] = status
    return cr_validation.build_cr(doc)


def pkg(version='1.0.0', **extra):
    spec = {'version': version, 'image': 'ghcr.io/example/img'}
    spec.update(extra)
    return spec


def state(*entries):
    """entries: (name, version, stage, state)"""
    return dict(('%s|%s' % (n, v), {'name': n, 'version': v, 'image': 'ghcr.io/example/img', 'containerSHA': '',
                                    'stage': stage, 'state': st, 'restarts': 0}) for n, v, stage, st in entries)


def steps(plan):
    return [(s['package'], s['stage']) for s in plan['pending']]


def stages(plan):
    return [s['stage'] for s in plan['pending']]


# --------------------------------------------------------------------------- one package


@pytest.mark.parametrize('package,node,expected,drain', [
    # fresh node
    (pkg(), [], ['apply', 'config'], False),
    (pkg(interrupt=REBOOT), [], ['apply', 'config', 'interrupt', 'post-interrupt'], True),
    (pkg(interrupt={'type': 'noop'}), [], ['apply', 'config', 'interrupt', 'post-interrupt'], True),
    # resuming: a stage in progress or erroring runs again, a complete stage moves on
    (pkg(interrupt=REBOOT), [('tuning', '1.0.0', 'apply', 'in_progress')], ['apply', 'config', 'interrupt', 'post-interrupt'],
     True),
    (pkg(interrupt=REBOOT), [('tuning', '1.0.0', 'apply', 'erroring')], ['apply', 'config', 'interrupt', 'post-interrupt'],
     True),
    (pkg(interrupt=REBOOT), [('tuning', '1.0.0', 'apply', 'complete')], ['config', 'interrupt', 'post-interrupt'], True),
    (pkg(interrupt=REBOOT), [('tuning', '1.0.0', 'config', 'complete')], ['interrupt', 'post-interrupt'], True),
    (pkg(interrupt=REBOOT), [('tuning', '1.0.0', 'config', 'erroring')], ['config', 'interrupt', 'post-interrupt'], True),
    (pkg(interrupt=REBOOT), [('tuning', '1.0.0', 'interrupt', 'in_progress')], ['interrupt', 'post-interrupt'], True),
    (pkg(interrupt=REBOOT), [('tuning', '1.0.0', 'interrupt', 'complete')], ['post-interrupt'], False),
    (pkg(interrupt=REBOOT), [('tuning', '1.0.0', 'interrupt', 'skipped')], ['post-interrupt'], False),
    (pkg(interrupt=REBOOT), [('tuning', '1.0.0', 'post-interrupt', 'in_progress')], ['post-interrupt'], False),
    (pkg(), [('tuning', '1.0.0', 'apply', 'complete')], ['config'], False),
    (pkg(), [('tuning', '1.0.0', 'upgrade', 'in_progress')], ['upgrade', 'config'], False),
    # complete
    (pkg(interrupt=REBOOT), [('tuning', '1.0.0', 'post-interrupt', 'complete')], [], False),
    (pkg(), [('tuning', '1.0.0', 'config', 'complete')], [], False),
    # an older version on the node: upgrade; a newer one: apply (no downgrade uninstall, docs/uninstall.md)
    (pkg(version='2.0.0'), [('tuning', '1.0.0', 'config', 'complete')], ['upgrade', 'config'], False),
    (pkg(version='2.0.0', interrupt=REBOOT), [('tuning', '1.9.9', 'post-interrupt', 'complete')],
     ['upgrade', 'config', 'interrupt', 'post-interrupt'], True),
    (pkg(version='1.0.0'), [('tuning', '2.0.0', 'config', 'complete')], ['apply', 'config'], False),
    (pkg(version='1.0.0'), [('tuning', '1.0.0-rc.1', 'config', 'complete')], ['upgrade', 'config'], False),
    # another package's entry does not make this one an upgrade
    (pkg(version='2.0.0'), [('other', '1.0.0', 'config', 'complete')], ['apply', 'config'], False),
])
def test_single_package(package, node, expected, drain):
    plan = node_plan.plan_node(make_cr(tuning=package), state(*node))
    assert stages(plan) == expected
    assert plan['needs_drain'] is drain
    assert plan['complete'] is (expected == [])
    assert all(s['package'] == 'tuning' and s['version'] == package['version'] for s in plan['pending'])
    assert plan['blocked'] == []


def test_interrupt_step_carries_the_interrupt():
    plan = node_plan.plan_node(make_cr(tuning=pkg(interrupt={'type': 'service', 'services': ['kubelet', 'containerd']})), {})
    step = plan['pending'][2]
    assert step['stage'] == 'interrupt'
    assert step['interrupt'] == {'type': 'service', 'services': ['containerd', 'kubelet']}
    assert plan['interrupt'] == {'type': 'service', 'services': ['containerd', 'kubelet'], 'package': 'tuning', 'wave': 1}
    assert plan['interrupts'] == [plan['interrupt']]


# --------------------------------------------------------------------------- uninstall


@pytest.mark.parametrize('package,node,expected,drain', [
    (pkg(uninstall=UNINSTALL), [('tuning', '1.0.0', 'config', 'complete')], ['uninstall'], False),
    (pkg(uninstall=UNINSTALL, interrupt=REBOOT), [('tuning', '1.0.0', 'post-interrupt', 'complete')],
     ['uninstall', 'uninstall-interrupt'], True),
    (pkg(uninstall=UNINSTALL, interrupt=REBOOT), [('tuning', '1.0.0', 'uninstall', 'erroring')],
     ['uninstall', 'uninstall-interrupt'], True),
    (pkg(uninstall=UNINSTALL, interrupt=REBOOT), [('tuning', '1.0.0', 'uninstall-interrupt', 'in_progress')],
     ['uninstall-interrupt'], True),
    # absent = uninstalled: nothing to do, not even an apply
    (pkg(uninstall=UNINSTALL), [], [], False),
    (pkg(uninstall=UNINSTALL, interrupt=REBOOT), [], [], False),
    # enabled alone does nothing
    (pkg(uninstall=CANCELLED), [('tuning', '1.0.0', 'config', 'complete')], [], False),
    # cancelled while the uninstall pod runs or fails: back to the install pipeline
    (pkg(uninstall=CANCELLED, interrupt=REBOOT), [('tuning', '1.0.0', 'uninstall', 'in_progress')],
     ['apply', 'config', 'interrupt', 'post-interrupt'], True),
    (pkg(uninstall=CANCELLED), [('tuning', '1.0.0', 'uninstall', 'erroring')], ['apply', 'config'], False),
])
def test_uninstall(package, node, expected, drain):
    plan = node_plan.plan_node(make_cr(tuning=package), state(*node))
    assert stages(plan) == expected
    assert plan['needs_drain'] is drain
    assert plan['complete'] is (expected == [])


def test_uninstall_interrupt_owns_the_merged_interrupt():
    plan = node_plan.plan_node(make_cr(tuning=pkg(uninstall=UNINSTALL, interrupt=REBOOT)),
                               state(('tuning', '1.0.0', 'config', 'complete')))
    assert plan['pending'][1]['interrupt'] == {'type': 'reboot', 'services': []}
    assert plan['interrupt']['package'] == 'tuning'


def test_uninstall_waits_for_the_stage_in_flight():
    plan = node_plan.plan_node(make_cr(tuning=pkg(uninstall=UNINSTALL)), state(('tuning', '1.0.0', 'apply', 'in_progress')))
    assert stages(plan) == ['apply', 'uninstall']


@pytest.mark.parametrize('node_state,expected', [
    ('complete', ['apply', 'config', 'interrupt', 'post-interrupt']),
    ('in_progress', ['uninstall-interrupt', 'apply', 'config', 'interrupt', 'post-interrupt']),
])
def test_late_cancelled_uninstall_reinstalls(node_state, expected):
    plan = node_plan.plan_node(make_cr(tuning=pkg(uninstall=CANCELLED, interrupt=REBOOT)),
                               state(('tuning', '1.0.0', 'uninstall-interrupt', node_state)))
    assert stages(plan) == expected
    assert plan['complete'] is False


def test_dependent_of_an_uninstalled_package_is_blocked():
    cr = make_cr(base=pkg(uninstall=UNINSTALL), app=pkg(dependsOn={'base': '1.0.0'}))
    plan = node_plan.plan_node(cr, state(('base', '1.0.0', 'config', 'complete')))
    assert steps(plan) == [('base', 'uninstall')]
    assert plan['blocked'] == [{'package': 'app', 'version': '1.0.0',
                                'reason': 'depends on base, which is being uninstalled'}]
    assert plan['complete'] is False
    # once it is installed, the dependent is left alone (the operator only blocks unfinished dependents)
    plan = node_plan.plan_node(cr, state(('base', '1.0.0', 'config', 'complete'), ('app', '1.0.0', 'config', 'complete')))
    assert steps(plan) == [('base', 'uninstall')]
    assert plan['blocked'] == []


# --------------------------------------------------------------------------- several packages


def _after(plan):
    return [(s['package'], s['stage'], s['after']) for s in plan['pending']]


def test_the_packages_without_an_interrupt_run_before_the_drain_as_upstreams_interrupt_scenario():
    # chainsaw skyhook/interrupt: jason (no interrupt) runs to config complete while the node is
    # cordoned and the protected pod still runs; everything else waits for the drain
    service = {'type': 'service', 'services': ['rsyslog']}
    cr = make_cr(jason=pkg('1.3.2'), dexter=pkg('1.2.3', interrupt=REBOOT), john=pkg('1.2.3', interrupt=service),
                 spencer=pkg('3.2.3', dependsOn={'dexter': '1.2.3'}),
                 baxter=pkg('3.3', interrupt=service, dependsOn={'spencer': '3.2.3'}),
                 foobar=pkg('1.2', dependsOn={'dexter': '1.2.3', 'baxter': '3.3'}))
    plan = node_plan.plan_node(cr, {})
    assert plan['needs_drain'] is True
    assert _after(plan)[:2] == [('jason', 'apply', 'cordon'), ('jason', 'config', 'cordon')]
    assert set(s['after'] for s in plan['pending'][2:]) == {'drain'}
    # the rest keeps the operator's order: the wave's merged interrupt after its packages' config
    assert steps(plan)[2:8] == [('dexter', 'apply'), ('john', 'apply'), ('dexter', 'config'), ('john', 'config'),
                                ('dexter', 'interrupt'), ('john', 'interrupt')]
    assert [s['package'] for s in plan['pending'][8:]] == ['dexter', 'john', 'spencer', 'spencer', 'baxter', 'baxter',
                                                           'baxter', 'baxter', 'foobar', 'foobar']


def test_the_cordon_is_taken_at_the_first_wave_that_needs_the_drain():
    # aa and bb need no interrupt and nothing that does: they run on the schedulable node; the
    # cordon comes with wave 3 (cc reboots); zz of wave 3 runs cordoned before the drain; dd
    # (depends on cc) waits for the drain with cc
    cr = make_cr(aa=pkg(), bb=pkg(dependsOn={'aa': '1.0.0'}), cc=pkg(interrupt=REBOOT, dependsOn={'bb': '1.0.0'}),
                 zz=pkg(dependsOn={'bb': '1.0.0'}), dd=pkg(dependsOn={'cc': '1.0.0'}))
    plan = node_plan.plan_node(cr, {})
    assert _after(plan) == [
        ('aa', 'apply', None), ('aa', 'config', None), ('bb', 'apply', None), ('bb', 'config', None),
        ('zz', 'apply', 'cordon'), ('zz', 'config', 'cordon'),
        ('cc', 'apply', 'drain'), ('cc', 'config', 'drain'), ('cc', 'interrupt', 'drain'),
        ('cc', 'post-interrupt', 'drain'), ('dd', 'apply', 'drain'), ('dd', 'config', 'drain')]


def test_without_an_interrupt_nothing_waits_for_a_cordon():
    plan = node_plan.plan_node(make_cr(aa=pkg(), bb=pkg(dependsOn={'aa': '1.0.0'})), {})
    assert plan['needs_drain'] is False and set(s['after'] for s in plan['pending']) == {None}
    # a package resuming after its interrupt (post-interrupt left) needs no drain either
    cr = make_cr(aa=pkg(interrupt=REBOOT), bb=pkg())
    plan = node_plan.plan_node(cr, state(('aa', '1.0.0', 'interrupt', 'complete')))
    assert plan['needs_drain'] is False and _after(plan) == [
        ('bb', 'apply', None), ('bb', 'config', None), ('aa', 'post-interrupt', None)]


def test_depends_on_waves():
    cr = make_cr(bb=pkg(dependsOn={'aa': '1.0.0'}), aa=pkg())
    plan = node_plan.plan_node(cr, {})
    assert [(s['package'], s['stage'], s['wave']) for s in plan['pending']] == [
        ('aa', 'apply', 1), ('aa', 'config', 1), ('bb', 'apply', 2), ('bb', 'config', 2)]


def test_waves_follow_the_graph_walk():
    # leaves first (by name), then every package whose dependencies are all done
    cr = make_cr(cc=pkg(dependsOn={'aa': '1.0.0', 'bb': '1.0.0'}), bb=pkg(dependsOn={'aa': '1.0.0'}), aa=pkg(), zz=pkg(),
                 dd=pkg(dependsOn={'zz': '1.0.0'}))
    plan = node_plan.plan_node(cr, {})
    waves = {}
    for step in plan['pending']:
        waves.setdefault(step['wave'], set()).add(step['package'])
    assert waves == {1: {'aa', 'zz'}, 2: {'bb', 'dd'}, 3: {'cc'}}


def test_complete_dependency_lets_the_dependent_start_in_wave_one():
    cr = make_cr(bb=pkg(dependsOn={'aa': '1.0.0'}), aa=pkg())
    plan = node_plan.plan_node(cr, state(('aa', '1.0.0', 'config', 'complete')))
    assert [(s['package'], s['stage'], s['wave']) for s in plan['pending']] == [('bb', 'apply', 1), ('bb', 'config', 1)]


@pytest.mark.parametrize('serial,expected', [
    (False, [('aa', 'apply'), ('bb', 'apply'), ('aa', 'config'), ('bb', 'config')]),
    (True, [('aa', 'apply'), ('aa', 'config'), ('bb', 'apply'), ('bb', 'config')]),
])
def test_serial_vs_stage_by_stage(serial, expected):
    assert steps(node_plan.plan_node(make_cr(serial=serial, bb=pkg(), aa=pkg()), {})) == expected


def interrupt_steps(plan):
    return dict((s['package'], s) for s in plan['pending'] if s['stage'] == 'interrupt')


@pytest.mark.parametrize('interrupts,merged,owner', [
    ({'aa': {'type': 'service', 'services': ['b']}, 'bb': REBOOT}, {'type': 'reboot', 'services': []}, 'bb'),
    ({'aa': REBOOT, 'bb': REBOOT}, {'type': 'reboot', 'services': []}, 'aa'),
    ({'aa': {'type': 'service', 'services': ['x', 'a']}, 'bb': {'type': 'service', 'services': ['b', 'a']}},
     {'type': 'service', 'services': ['a', 'b', 'x']}, 'aa'),
    ({'aa': {'type': 'service', 'services': ['a']}, 'bb': {'type': 'restartAllServices'}},
     {'type': 'restartAllServices', 'services': []}, 'bb'),
    ({'aa': {'type': 'noop'}, 'bb': {'type': 'service', 'services': ['s']}}, {'type': 'service', 'services': ['s']}, 'bb'),
])
def test_interrupt_merge_in_a_wave(interrupts, merged, owner):
    cr = make_cr(aa=pkg(interrupt=interrupts['aa']), bb=pkg(interrupt=interrupts['bb']))
    plan = node_plan.plan_node(cr, {})
    assert plan['interrupts'] == [dict(merged, package=owner, wave=1)]
    found = interrupt_steps(plan)
    other = 'bb' if owner == 'aa' else 'aa'
    assert found[owner]['interrupt'] == merged and 'skipped' not in found[owner]
    assert found[other]['skipped'] is True and found[other]['merged_into'] == owner
    assert 'interrupt' not in found[other]
    assert plan['needs_drain'] is True


def test_interrupts_merge_per_wave():
    service = {'type': 'service', 'services': ['x']}
    cr = make_cr(aa=pkg(interrupt=REBOOT), bb=pkg(dependsOn={'aa': '1.0.0'}, interrupt=service))
    plan = node_plan.plan_node(cr, {})
    assert plan['interrupts'] == [{'type': 'reboot', 'services': [], 'package': 'aa', 'wave': 1},
                                  {'type': 'service', 'services': ['x'], 'package': 'bb', 'wave': 2}]
    assert plan['interrupt'] == plan['interrupts'][0]


# fudgeInterruptWithPriority vectors from skyhook_controller_test.go
UPSTREAM_PACKAGES = {'foo': [{'type': 'service', 'services': ['foo', 'bar']}],
                     'bar': [{'type': 'service', 'services': ['ducks', 'kittens']}],
                     'buz': [{'type': 'service', 'services': ['foo', 'log']}]}


@pytest.mark.parametrize('names,by_package,merged,owner', [
    (['foo', 'bar', 'buz'], UPSTREAM_PACKAGES,
     {'type': 'service', 'services': ['bar', 'ducks', 'foo', 'kittens', 'log']}, 'bar'),
    (['foo', 'bar', 'buz', 'omg'], dict(UPSTREAM_PACKAGES, omg=[{'type': 'reboot', 'services': []}]),
     {'type': 'reboot', 'services': []}, 'omg'),
    (['foo', 'bar'], dict(UPSTREAM_PACKAGES, bogus=[{'type': 'reboot', 'services': []}]),
     {'type': 'service', 'services': ['bar', 'ducks', 'foo', 'kittens']}, 'bar'),
    (['x', 'y'], {'x': [{'type': 'noop', 'services': []}], 'y': [{'type': 'noop', 'services': []}]},
     {'type': 'noop', 'services': []}, 'x'),
    ([], UPSTREAM_PACKAGES, None, None),
])
def test_merge_interrupts_upstream_vectors(names, by_package, merged, owner):
    assert node_plan.merge_interrupts(names, by_package) == (merged, owner)


def test_merge_interrupts_does_not_modify_its_input():
    by_package = {'aa': [{'type': 'service', 'services': ['z']}], 'bb': [{'type': 'service', 'services': ['a']}]}
    node_plan.merge_interrupts(['aa', 'bb'], by_package)
    assert by_package == {'aa': [{'type': 'service', 'services': ['z']}], 'bb': [{'type': 'service', 'services': ['a']}]}


# --------------------------------------------------------------------------- configuration changes


def config_pkg(**extra):
    return pkg(interrupt=REBOOT, configMap={'a.sh': '1', 'b.conf': '2'},
               configInterrupts={'*.sh': {'type': 'service', 'services': ['kubelet']}}, **extra)


DONE = state(('tuning', '1.0.0', 'post-interrupt', 'complete'))


def test_config_change_with_config_interrupt():
    plan = node_plan.plan_node(make_cr(tuning=config_pkg()), DONE, config_changes={'tuning': ['a.sh']})
    assert stages(plan) == ['config', 'interrupt', 'post-interrupt']
    assert plan['pending'][1]['interrupt'] == {'type': 'service', 'services': ['kubelet']}   # not the package's reboot
    assert plan['needs_drain'] is True


def test_config_change_without_config_interrupt_runs_only_config():
    # HasInterrupt looks only at configInterrupts once the package has config updates
    plan = node_plan.plan_node(make_cr(tuning=config_pkg()), DONE, config_changes={'tuning': ['b.conf']})
    assert stages(plan) == ['config']
    assert plan['needs_drain'] is False
    assert plan['interrupts'] == []


def test_config_updates_from_the_cr_status():
    cr = make_cr(status={'configUpdates': {'tuning': ['a.sh']}}, tuning=config_pkg())
    assert stages(node_plan.plan_node(cr, state(('tuning', '1.0.0', 'config', 'complete')))) == ['interrupt', 'post-interrupt']
    assert node_plan.plan_node(cr, state(('tuning', '1.0.0', 'post-interrupt', 'complete')))['complete'] is True
    # without the recorded updates the package's own reboot applies
    plan = node_plan.plan_node(cr, state(('tuning', '1.0.0', 'config', 'complete')), config_updates={})
    assert plan['interrupt']['type'] == 'reboot'


def test_config_changes_for_unknown_or_empty_packages_are_ignored():
    plan = node_plan.plan_node(make_cr(tuning=config_pkg()), DONE, config_changes={'other': ['a.sh'], 'tuning': []})
    assert plan['complete'] is True


def test_config_interrupts_deduplicated():
    cr = make_cr(tuning=pkg(configMap={'a.sh': '1', 'b.sh': '2', 'c.conf': '3'},
                            configInterrupts={'*.sh': {'type': 'service', 'services': ['kubelet']},
                                              'c.conf': {'type': 'reboot'}}))
    assert node_plan.config_interrupts(cr, {'tuning': ['a.sh', 'b.sh']}) == {
        'tuning': [{'type': 'service', 'services': ['kubelet']}]}
    assert node_plan.config_interrupts(cr, {'tuning': ['c.conf', 'a.sh']}) == {
        'tuning': [{'type': 'reboot', 'services': []}, {'type': 'service', 'services': ['kubelet']}]}
    assert node_plan.config_interrupts(cr, {'tuning': ['nothing']}) == {}


@pytest.mark.parametrize('old,new,expected', [
    ({'a': '1', 'b': '2'}, {'a': '1', 'b': '3', 'c': '4'}, ['b', 'c']),
    ({'a': '1'}, {'a': '1'}, []),
    ({'a': '1', 'gone': 'x'}, {'a': '1'}, []),     # removed keys are not "changed" (HandleConfigUpdates)
    (None, {'z': '', 'a': 'x'}, ['a', 'z']),
    ({'a': '1'}, None, []),
])
def test_changed_config_keys(old, new, expected):
    assert node_plan.changed_config_keys(old, new) == expected


# --------------------------------------------------------------------------- ids and covers


def test_every_step_has_the_signature_the_rendered_playbooks_use_as_id():
    service = {'type': 'service', 'services': ['containerd']}
    cr = make_cr(aa=pkg(interrupt=service), bb=pkg(interrupt={'type': 'service', 'services': ['kubelet']}),
                 cc=pkg(dependsOn={'aa': '1.0.0'}, interrupt=REBOOT))
    plan = node_plan.plan_node(cr, {})
    assert [s['id'] for s in plan['pending']] == [
        'aa:apply', 'bb:apply', 'aa:config', 'bb:config', 'aa:interrupt service containerd,kubelet',
        'bb:interrupt (merged into aa)', 'aa:post-interrupt', 'bb:post-interrupt',
        'cc:apply', 'cc:config', 'cc:interrupt reboot', 'cc:post-interrupt']
    assert all(node_plan.step_id(s) == s['id'] for s in plan['pending'])


def test_covers_lists_the_packages_merged_into_the_interrupt_of_the_same_wave():
    cr = make_cr(aa=pkg(interrupt=REBOOT), bb=pkg(interrupt={'type': 'noop'}),
                 cc=pkg(dependsOn={'aa': '1.0.0'}, interrupt={'type': 'noop'}),
                 dd=pkg(dependsOn={'aa': '1.0.0'}, interrupt={'type': 'noop'}))
    plan = node_plan.plan_node(cr, {})
    runs = [(s['package'], s['wave'], s['covers']) for s in plan['pending'] if 'interrupt' in s]
    assert runs == [('aa', 1, ['bb']), ('cc', 2, ['dd'])]
    # only a step that runs an interrupt has covers
    assert all('covers' not in s for s in plan['pending'] if 'interrupt' not in s)


def test_an_interrupt_alone_in_its_wave_covers_nothing():
    plan = node_plan.plan_node(make_cr(aa=pkg(interrupt=REBOOT)), {})
    assert [s.get('covers') for s in plan['pending']] == [None, None, [], None]
    assert [s['id'] for s in plan['pending']][2] == 'aa:interrupt reboot'
