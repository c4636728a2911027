# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""planner's decisions: the policy a CR rolls out with, paused / disabled, sequencing, runtimeRequired,
the run order and the facts the playbooks report (rollout_plan's ``decision``)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_model
from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_validation
from ansible_collections.nodewright.bridge.plugins.module_utils.planning import planner

POLICY_DOC = {'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'DeploymentPolicy', 'metadata': {'name': 'linear-4'},
              'spec': {'default': {'budget': {'count': 4}, 'strategy': {'linear': {}}}}}


def make_cr(spec_extra=None, name='demo', annotations=None):
    spec = {'nodeSelectors': {'matchLabels': {'pool': 'gpu'}},
            'packages': {'tuning': {'version': '1.0.0', 'image': 'ghcr.io/example/tuning'}}}
    spec.update(spec_extra or {})
    return cr_validation.build_cr({'apiVersion': 'nodewright.nvidia.com/v1alpha1', 'kind': 'NodeWright',
                                   'metadata': {'name': name, 'annotations': annotations or {}}, 'spec': spec})


def plan(name, nodes, complete=(), priority=200, sequencing='node', paused=False, disabled=False, runtime=False,
         status=None, cordoned_by=None, needs_drain=()):
    status, cordoned_by = status or {}, cordoned_by or {}
    return {
        'cr': {'name': name, 'priority': priority, 'sequencing': sequencing, 'paused': paused, 'disabled': disabled,
               'runtimeRequired': runtime},
        'nodes': dict((n, {'complete': n in complete, 'compartment': '__default__', 'status': status.get(n, 'unknown'),
                           'cordoned_by': cordoned_by.get(n, []), 'needs_drain': n in needs_drain}) for n in nodes),
        'summary': {'matched': len(nodes), 'to_update': len(nodes) - len(complete), 'needs_drain': len(needs_drain)},
        'policy': None, 'interruption_budget': {'count': 2},
        'cr_document': {'kind': 'Skyhook', 'metadata': {'name': name}}, 'policy_document': None,
    }


# --------------------------------------------------------------------------- choose_policy


def test_a_cr_without_deployment_policy_has_none_and_its_budget_applies():
    assert planner.choose_policy(make_cr(), [POLICY_DOC], fetch=lambda name: pytest.fail('no fetch')) == (None, None, None)


def test_the_bundled_policy_wins_over_the_cluster():
    policy, doc, source = planner.choose_policy(make_cr({'deploymentPolicy': 'linear-4'}), [POLICY_DOC],
                                                fetch=lambda name: pytest.fail('no fetch'))
    assert (policy.name, doc, source) == ('linear-4', POLICY_DOC, 'bundled')


def test_a_missing_policy_is_read_from_the_cluster_or_refused_without_one():
    asked = []
    policy, doc, source = planner.choose_policy(make_cr({'deploymentPolicy': 'linear-4'}), [],
                                                fetch=lambda name: asked.append(name) or POLICY_DOC)
    assert (policy.name, source, asked) == ('linear-4', 'cluster', ['linear-4'])
    with pytest.raises(cr_model.CRValidationError) as info:
        planner.choose_policy(make_cr({'deploymentPolicy': 'linear-4'}), [])
    assert 'was not given' in info.value.errors[0]


def test_a_given_policy_wins_is_narrowed_to_the_policy_and_must_match_the_cr():
    cr = make_cr({'deploymentPolicy': 'linear-4'})
    cr_doc = {'apiVersion': 'nodewright.nvidia.com/v1alpha1', 'kind': 'NodeWright', 'metadata': {'name': 'demo'}}
    policy, doc, source = planner.choose_policy(cr, [], given=[cr_doc, POLICY_DOC], fetch=lambda name: pytest.fail('no'))
    assert (policy.name, doc, source) == ('linear-4', POLICY_DOC, 'given')
    other = dict(POLICY_DOC, metadata={'name': 'other'})
    with pytest.raises(cr_model.CRValidationError) as info:
        planner.choose_policy(cr, [], given=[other], where='policy file p.yaml')
    assert info.value.what == 'policy file p.yaml'
    assert info.value.errors == ["is 'other' but the CR names spec.deploymentPolicy 'linear-4'"]
    with pytest.raises(cr_model.CRValidationError) as info:
        planner.choose_policy(cr, [], given=[POLICY_DOC, POLICY_DOC])
    assert (info.value.what, info.value.errors) == ('policy', ['must hold exactly one DeploymentPolicy, got 2 documents'])


def test_an_invalid_given_policy_names_its_file():
    bad = dict(POLICY_DOC, spec={'default': {'budget': {}, 'strategy': {'linear': {}}}})
    with pytest.raises(cr_model.CRValidationError) as info:
        planner.choose_policy(make_cr(), [], given=[bad], where='policy file p.yaml')
    assert info.value.what.endswith('(from policy file p.yaml)')


# --------------------------------------------------------------------------- one CR


def test_paused_and_disabled_crs_start_nothing_and_say_why():
    paused = planner.cr_decision(plan('a', ['n1', 'n2'], complete=['n2'], paused=True, cordoned_by={'n2': ['a']}))
    # every node says paused, the operator's IntrospectNode (then only those that do not say so yet)
    assert paused == {'runs': [], 'complete': [], 'release': [], 'rolling': [], 'skipped': planner.PAUSED,
                      'record': [{'node': 'n1', 'status': 'paused'}, {'node': 'n2', 'status': 'paused'}],
                      'pending': ['n1']}
    paused['record'] = planner.cr_decision(plan('a', ['n1', 'n2'], complete=['n2'], paused=True,
                                                status={'n2': 'paused'}))['record']
    assert paused['record'] == [{'node': 'n1', 'status': 'paused'}]
    both = planner.cr_decision(plan('a', ['n1'], paused=True, disabled=True))
    assert both['skipped'] == 'disabled (skyhook.nvidia.com/disable=true), left alone'  # disabled wins the message
    assert both['record'] == [{'node': 'n1', 'status': 'paused'}]  # the node's status follows the CR's: paused
    # enabled again: a node not complete waits for its batch, a complete one gets its complete record
    again = planner.cr_decision(plan('a', ['n1', 'n2'], complete=['n2'], status={'n1': 'disabled', 'n2': 'disabled'}))
    assert again['record'] == [{'node': 'n1', 'status': 'waiting'}] and again['complete'] == ['n2']
    assert planner.cr_warnings(make_cr()) == []
    both = make_cr(annotations={'nodewright.nvidia.com/pause': 'true', 'nodewright.nvidia.com/disable': 'true'})
    assert planner.cr_warnings(both) == [
        'NodeWright demo is paused (nodewright.nvidia.com/pause=true): the operator would not start any batch',
        'NodeWright demo is disabled (nodewright.nvidia.com/disable=true): the operator would not act on it']


@pytest.mark.parametrize('budget', [{'count': 0}, {'percent': 0}])
def test_a_budget_of_0_says_it_rolls_one_node_per_batch(budget):
    cr = make_cr({'interruptionBudget': budget})
    key = list(budget)[0]
    assert planner.cr_warnings(cr) == [
        'NodeWright demo: interruptionBudget {%s: 0} rolls one node per batch, as the operator does (a batch has at '
        'least one node), not none; write {count: 1} to say so, or pause the CR to roll nothing' % key]
    # and it does: batches of one
    nodes = [{'name': 'n%d' % i, 'labels': {'pool': 'gpu'}} for i in range(3)]
    assert planner.plan_rollout(cr, planner.normalise_nodes(nodes))['compartments'][0]['batch_sizes'] == [1, 1, 1]
    assert planner.cr_warnings(make_cr({'interruptionBudget': {'count': 1}})) == []


def test_plan_decision_reports_the_nodes_and_the_line():
    one = plan('a', ['n1', 'n2', 'n3', 'n4'], complete=['n1'], runtime=True, needs_drain=['n3'],
               status={'n1': 'complete', 'n2': 'erroring'}, cordoned_by={'n1': ['a'], 'n4': ['a', 'b']})
    decision = planner.plan_decision(one)
    assert decision['runs'] == ['n2', 'n3', 'n4']
    assert decision['complete'] == ['n1'] and decision['release'] == ['n1']  # runtimeRequired: the taint is checked
    assert decision['runtime_required_crs'] == ['a']
    assert decision['erroring'] == ['n2'] and decision['not_done'] == ['n3', 'n4'] and decision['needs_drain'] == ['n3']
    assert decision['with_state'] == ['n1', 'n2', 'n4']  # a status, or the CR's cordon
    assert decision['budget'] == 'interruptionBudget {"count": 2}'
    assert decision['line'] == 'a (priority 200, sequencing node): 4 nodes, 3 to update, 1 to drain; interruptionBudget {"count": 2} '
    paused = planner.plan_decision(dict(plan('b', ['n1'], paused=True), policy='linear-4'))
    assert paused['line'].endswith('; policy linear-4 (paused: skipped)') and paused['skipped'] == planner.PAUSED


# --------------------------------------------------------------------------- several CRs


def test_the_run_takes_the_crs_by_priority_then_name_whatever_the_input_order():
    plans = [plan('c', ['n1'], priority=100), plan('b', ['n1'], priority=200), plan('a', ['n1'], priority=200)]
    assert planner.run_order(plans) == ['c', 'a', 'b']
    run = planner.rollout_phases(plans)
    assert run['order'] == ['c', 'a', 'b'] and [p['name'] for p in run['phases']] == ['c', 'a', 'b']


def test_nodes_blocked_by_an_earlier_crs_sequencing_wait_with_a_message():
    run = planner.rollout_phases([plan('a', ['n1', 'n2'], priority=100, paused=True), plan('b', ['n1', 'n2', 'n3'])])
    assert run['crs']['a']['waiting'] == planner.PAUSED
    assert run['crs']['b']['blocked'] == {'n1': ['a'], 'n2': ['a']} and run['crs']['b']['runs'] == ['n3']
    assert run['crs']['b']['waiting'] == 'nodes waiting for an earlier CR (sequencing node): n1, n2'
    free = planner.rollout_phases([plan('a', ['n1'], priority=100, complete=['n1']), plan('b', ['n1'])])
    assert free['crs']['b']['waiting'] is None and free['crs']['b']['runs'] == ['n1']


def test_sequencing_all_waits_for_a_later_run_but_keeps_its_records():
    run = planner.rollout_phases([plan('a', ['n1'], priority=100, paused=True, sequencing='all'),
                                  plan('b', ['n2', 'n3'], complete=['n3'], cordoned_by={'n3': ['b']})])
    assert run['crs']['b']['runs'] == [] and run['phases'] == []
    assert run['crs']['b']['waiting'] == 'waits until a (sequencing all) is complete on every node'
    assert run['crs']['b']['complete'] == ['n3'] and run['crs']['b']['release'] == ['n3']


def test_runtime_required_lists_every_runtime_required_cr_of_a_node_and_records_its_complete_nodes():
    a = plan('a', ['n1', 'n2'], priority=100, runtime=True, complete=['n1'])
    a['nodes']['n1']['recorded'] = True
    b = plan('b', ['n1'], runtime=True, complete=['n1'])
    b['nodes']['n1']['recorded'] = True
    c = plan('c', ['n3'], complete=['n3'])
    c['nodes']['n3']['recorded'] = True
    run = planner.rollout_phases([c, b, a])
    assert run['runtime_required'] == {'n1': ['a', 'b'], 'n2': ['a']}
    assert run['crs']['a']['complete'] == ['n1'] and run['crs']['b']['complete'] == ['n1']  # the taint is checked
    assert run['crs']['c']['complete'] == []  # recorded, no runtime-required taint


def test_the_nodes_the_cr_was_rolling_are_decided_before_the_run():
    # n1 on the node, n2 only in the CR's status (a CLI reset removed the node's record), n3 not started
    made = plan('a', ['n1', 'n2', 'n3', 'n4'], complete=['n4'], status={'n1': 'erroring'})
    made['nodes']['n2']['cr_status'] = 'in_progress'
    made['nodes']['n4']['cr_status'] = 'in_progress'  # complete: nothing to take over
    assert planner.cr_decision(made)['rolling'] == ['n1', 'n2']
