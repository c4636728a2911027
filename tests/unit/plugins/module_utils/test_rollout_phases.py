# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""Several CRs in one run: phases, sequencing node / all, paused and disabled, runtimeRequired."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.nodewright.bridge.plugins.module_utils.planning.planner import rollout_phases


def plan(name, nodes, complete=(), sequencing='node', policy=False, paused=False, disabled=False, runtime=False,
         cordoned_by=None, version='1.0.0'):
    cordoned_by = cordoned_by or {}
    return {
        'cr': {'name': name, 'sequencing': sequencing, 'paused': paused, 'disabled': disabled, 'runtimeRequired': runtime},
        'nodes': dict((n, {'complete': n in complete, 'compartment': 'rack-a' if policy else '__default__',
                           'cordoned_by': cordoned_by.get(n, [])}) for n in nodes),
        'cr_document': {'kind': 'Skyhook', 'metadata': {'name': name}, 'spec': {'packages': {'p': {'version': version}}}},
        'policy_document': {'kind': 'DeploymentPolicy', 'metadata': {'name': name + '-policy'}} if policy else None,
        'interruption_budget': None if policy else {'count': 2},
    }


def test_one_phase_per_cr_with_work_in_run_order():
    run = rollout_phases([plan('a', ['n1', 'n2'], complete=['n2']), plan('b', ['n1', 'n2'], policy=True)])
    assert [p['name'] for p in run['phases']] == ['a', 'b']
    phase = dict(run['phases'][0])
    # the CR's spec digest: runs of one CR share a budget only while they roll out the same spec
    assert len(phase.pop('budget_key')) == 16
    assert phase == {'name': 'a', 'interruption_budget': {'count': 2}, 'hosts': ['n1'], 'selector': None}
    other = rollout_phases([plan('a', ['n1'], version='2.0.0')])['phases'][0]
    assert other['budget_key'] != run['phases'][0]['budget_key']
    assert run['phases'][1]['hosts'] == {'n1': 'rack-a', 'n2': 'rack-a'}  # compartments pinned as planned
    assert run['phases'][1]['policy']['metadata']['name'] == 'b-policy'
    assert run['crs']['a']['complete'] == ['n2'] and run['crs']['a']['runs'] == ['n1']


def test_a_cr_with_nothing_to_do_has_no_phase():
    run = rollout_phases([plan('a', ['n1'], complete=['n1'], cordoned_by={'n1': ['a']})])
    assert run['phases'] == []
    assert run['crs']['a']['complete'] == ['n1'] and run['crs']['a']['release'] == ['n1']


def test_sequencing_node_blocks_only_nodes_an_earlier_cr_cannot_finish_in_this_run():
    run = rollout_phases([plan('a', ['n1', 'n2'], paused=True), plan('b', ['n2', 'n3'])])
    assert run['crs']['a']['skipped'].startswith('paused')
    assert run['crs']['b']['blocked'] == {'n2': ['a']} and run['crs']['b']['runs'] == ['n3']
    # an earlier CR that runs on the node in this run does not block it (the strategy orders them)
    run = rollout_phases([plan('a', ['n1']), plan('b', ['n1'])])
    assert run['crs']['b']['runs'] == ['n1'] and 'after_all' not in run['phases'][1]


def test_sequencing_all_gates_the_later_crs_until_it_is_complete_everywhere():
    # the gate's own sequencing decides (docs/ordering_of_skyhooks.md): b runs after a, and only if a succeeded
    run = rollout_phases([plan('a', ['n1', 'n2'], sequencing='all'), plan('b', ['n3'])])
    assert run['phases'][1]['after_all'] == ['a'] and run['crs']['b']['waiting_for'] == []
    # a later CR's sequencing all gates nothing before it: b runs on n3 as soon as it can
    run = rollout_phases([plan('a', ['n1', 'n2']), plan('b', ['n3'], sequencing='all')])
    assert 'after_all' not in run['phases'][1] and run['crs']['b']['runs'] == ['n3']
    # a gate that cannot finish in this run (paused): every later CR waits for a later run, on every node
    run = rollout_phases([plan('a', ['n1'], sequencing='all', paused=True), plan('b', ['n3']), plan('c', ['n1'])])
    assert run['crs']['b']['skipped'] == 'waits until a (sequencing all) is complete on every node'
    assert run['crs']['b']['waiting_for'] == ['a'] and run['crs']['c']['waiting_for'] == ['a']
    assert [p['name'] for p in run['phases']] == []
    # complete everywhere already, or disabled: nothing to wait for
    run = rollout_phases([plan('a', ['n1'], complete=['n1'], sequencing='all'), plan('b', ['n1'])])
    assert 'after_all' not in run['phases'][0] and run['phases'][0]['name'] == 'b'
    run = rollout_phases([plan('a', ['n1'], sequencing='all', disabled=True), plan('b', ['n1'])])
    assert run['crs']['b']['runs'] == ['n1'] and run['crs']['b']['waiting'] is None


def test_a_disabled_cr_blocks_no_node_of_a_later_one():
    # the operator skips a disabled CR when it orders them (IsNodeReadyForSkyhook); a paused one blocks
    run = rollout_phases([plan('a', ['n1'], disabled=True), plan('b', ['n1'])])
    assert run['crs']['b']['blocked'] == {} and run['crs']['b']['runs'] == ['n1']


def test_paused_and_disabled_crs_record_and_release_nothing():
    run = rollout_phases([plan('a', ['n1'], complete=['n1'], cordoned_by={'n1': ['a']}, disabled=True)])
    assert run['crs']['a']['complete'] == [] and run['crs']['a']['release'] == [] and run['phases'] == []


def test_runtime_required_crs_per_node_and_documents_on_request():
    run = rollout_phases([plan('a', ['n1', 'n2'], runtime=True), plan('b', ['n2'], runtime=True)], with_documents=True)
    assert run['runtime_required'] == {'n1': ['a'], 'n2': ['a', 'b']}
    assert [d['kind'] for d in run['crs']['a']['documents']] == ['Skyhook']
    assert rollout_phases([plan('a', ['n1'])])['crs']['a']['documents'] is None


def test_complete_nodes_are_recorded_only_when_the_record_is_missing_or_a_taint_may_remain():
    done = plan('a', ['n1', 'n2', 'n3'], complete=['n1', 'n2', 'n3'])
    done['nodes']['n1']['recorded'] = True
    done['nodes']['n2']['recorded'] = False
    assert rollout_phases([done])['crs']['a']['complete'] == ['n2', 'n3']
    tainted = plan('b', ['n1'], complete=['n1'], runtime=True)
    tainted['nodes']['n1']['recorded'] = True
    assert rollout_phases([tainted])['crs']['b']['complete'] == ['n1']  # the runtime-required taint is checked


def test_the_filter_hands_each_phase_its_cr_as_a_host_variable():
    from ansible_collections.nodewright.bridge.plugins.filter.rollout_phases import FilterModule
    run_phases = FilterModule().filters()['rollout_phases']
    plans = [plan('a', ['n1', 'n2'])]
    plain_run = run_phases(plans)
    run = run_phases(plans, with_documents=True, phase_var='nw_apply_cr')
    assert 'host_vars' not in plain_run['phases'][0]
    value = run['phases'][0]['host_vars']['nw_apply_cr']
    assert value['name'] == 'a' and value['rolling'] == run['crs']['a']['rolling']
    assert value['docs'] == run['crs']['a']['documents'] and value['identity'] == run['crs']['a']['cr_identity']


def test_a_cr_with_protected_pods_names_the_nodes_whose_drain_would_wait_for_them():
    protected = {'matchLabels': {'workload': 'training'}}
    cr = plan('a', ['n1', 'n2', 'n3'], complete=['n3'])
    cr['cr']['podNonInterruptLabels'] = protected
    cr['nodes']['n1']['needs_drain'] = True  # n2 needs no interrupt: never held, whatever runs on it
    phase = rollout_phases([cr])['phases'][0]
    assert phase['protected'] == {'selector': protected, 'nodes': ['n1']}
    assert 'protected' not in rollout_phases([plan('b', ['n1'])])['phases'][0]
