# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""planner: normalise_nodes, resolve_policy and plan_rollout end to end."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest
import yaml

from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_model
from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_validation
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import node_annotations
from ansible_collections.nodewright.bridge.plugins.module_utils.planning import planner

DEFAULT = cr_model.DEFAULT_COMPARTMENT
STATE_KEY = node_annotations.node_state_key('demo')
COMPLETE = node_annotations.encode({'tuning|1.0.0': {'name': 'tuning', 'version': '1.0.0', 'image': 'ghcr.io/example/tuning',
                                                     'stage': 'post-interrupt', 'state': 'complete'}})


def make_cr(spec_extra=None, name='demo'):
    spec = {'nodeSelectors': {'matchLabels': {'pool': 'gpu'}},
            'packages': {'tuning': {'version': '1.0.0', 'image': 'ghcr.io/example/tuning', 'interrupt': {'type': 'reboot'}}}}
    spec.update(spec_extra or {})
    return cr_validation.build_cr({'apiVersion': 'nodewright.nvidia.com/v1alpha1', 'kind': 'NodeWright',
                                   'metadata': {'name': name}, 'spec': spec})


def node(name, labels=None, annotations=None):
    return {'name': name, 'labels': dict({'pool': 'gpu'}, **(labels or {})), 'annotations': annotations or {}}


# --------------------------------------------------------------------------- normalise_nodes


def test_normalise_plain_list():
    nodes = planner.normalise_nodes([{'name': 'a', 'labels': {'x': 'y'}}, {'name': 'b', 'annotations': {'k': 'v'}}])
    assert nodes == [{'name': 'a', 'labels': {'x': 'y'}, 'annotations': {}, 'taints': []},
                     {'name': 'b', 'labels': {}, 'annotations': {'k': 'v'}, 'taints': []}]


def test_normalise_node_list():
    node_list = {'apiVersion': 'v1', 'kind': 'NodeList', 'items': [
        {'metadata': {'name': 'n1', 'labels': {'pool': 'gpu'}, 'annotations': {STATE_KEY: '{}'}}, 'spec': {}},
        {'metadata': {'name': 'n2'}, 'status': {}, 'spec': {'taints': [{'key': 'k', 'effect': 'NoSchedule'}]}}]}
    assert planner.normalise_nodes(node_list) == [
        {'name': 'n1', 'labels': {'pool': 'gpu'}, 'annotations': {STATE_KEY: '{}'}, 'taints': []},
        {'name': 'n2', 'labels': {}, 'annotations': {}, 'taints': [{'key': 'k', 'effect': 'NoSchedule'}]}]


def test_normalise_fixture_file(fixture_text):
    nodes = planner.normalise_nodes(yaml.safe_load(fixture_text('nodes10.yaml')))
    assert [n['name'] for n in nodes] == ['gpu-%02d' % i for i in range(10)]


@pytest.mark.parametrize('raw,needles', [
    ('nodes', ['must be a list of nodes or a NodeList, got str']),
    ({'items': 'x'}, ['must be a list of nodes or a NodeList, got dict']),
    ([{'name': 'a'}, {'name': 'a'}], ["nodes[1].name: 'a' appears more than once"]),
    ([{'metadata': {'name': 'a'}}, {'metadata': {'name': 'a'}}], ["nodes[1].name: 'a' appears more than once"]),
    ([{'labels': {}}], ['nodes[0].name: required, a non-empty string']),
    ([{'name': ''}], ['nodes[0].name: required, a non-empty string']),
    (['a'], ['nodes[0]: must be an object']),
    ([{'name': 'a', 'labels': {'x': 1}}], ['nodes[0].labels: must be a map of strings']),
    ([{'name': 'a', 'annotations': ['x']}], ['nodes[0].annotations: must be a map of strings']),
    ([{'name': 'a'}, 'b', {'name': 'a'}], ['nodes[1]: must be an object', "nodes[2].name: 'a' appears more than once"]),
])
def test_normalise_errors(raw, needles):
    with pytest.raises(cr_model.CRValidationError) as info:
        planner.normalise_nodes(raw)
    assert info.value.what == 'nodes'
    assert len(info.value.errors) == len(needles)
    for error, needle in zip(info.value.errors, needles):
        assert needle in error


# --------------------------------------------------------------------------- resolve_policy


POLICY_DOC = {'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'DeploymentPolicy', 'metadata': {'name': 'linear-4'},
              'spec': {'default': {'budget': {'count': 4}, 'strategy': {'linear': {}}}}}


def test_resolve_policy():
    assert planner.resolve_policy(make_cr(), [POLICY_DOC]) is None
    cr = make_cr({'deploymentPolicy': 'linear-4'})
    other = dict(POLICY_DOC, metadata={'name': 'other'})
    assert planner.resolve_policy(cr, [other, POLICY_DOC]).name == 'linear-4'
    with pytest.raises(cr_model.CRValidationError) as info:
        planner.resolve_policy(cr, [other])
    assert info.value.errors == ["spec.deploymentPolicy: DeploymentPolicy 'linear-4' was not given (pass it as policy, "
                                 "or put it in the same file)"]


def test_resolve_policy_validates_the_policy():
    bad = dict(POLICY_DOC, spec={'default': {'budget': {}, 'strategy': {'linear': {}}}})
    with pytest.raises(cr_model.CRValidationError):
        planner.resolve_policy(make_cr({'deploymentPolicy': 'linear-4'}), [bad])


# --------------------------------------------------------------------------- plan_rollout


def test_fixture_rollouts(fixture_text):
    nodes = planner.normalise_nodes(yaml.safe_load(fixture_text('nodes10.yaml')))
    crs, dummy = cr_model.split_documents(cr_model.load_yaml_documents(fixture_text('budget33.yaml')))
    result = planner.plan_rollout(cr_validation.build_cr(crs[0]), nodes)
    assert [c['batch_sizes'] for c in result['compartments']] == [[3, 3, 3, 1]]
    assert result['budget_source'] == 'interruptionBudget' and result['policy'] is None
    crs, policies = cr_model.split_documents(json.loads(fixture_text('linear4.json')))
    cr = cr_validation.build_cr(crs[0])
    result = planner.plan_rollout(cr, nodes, policy=planner.resolve_policy(cr, policies))
    assert [c['batch_sizes'] for c in result['compartments']] == [[1, 2, 3, 4]]
    assert result['budget_source'] == 'deploymentPolicy' and result['policy'] == 'linear-4'


def test_plan_rollout_node_classification():
    nodes = [
        node('n1'),
        node('n2', annotations={STATE_KEY: COMPLETE, node_annotations.status_key('demo'): 'complete'}),
        node('n3', labels={'skyhook.nvidia.com/ignore': 'true'}),
        {'name': 'cpu', 'labels': {'pool': 'cpu', 'skyhook.nvidia.com/ignore': 'true'}, 'annotations': {}},
        {'name': 'bare', 'labels': {}, 'annotations': {}},
        node('n4', annotations={node_annotations.cordon_key('demo'): 'true', node_annotations.cordon_key('other'): 'true'}),
    ]
    result = planner.plan_rollout(make_cr({'interruptionBudget': {'count': 1}}), nodes)
    assert result['unmatched'] == ['bare', 'cpu']       # the selector is checked before the ignore label
    assert result['ignored'] == ['n3']
    assert sorted(result['nodes']) == ['n1', 'n2', 'n4']
    assert result['summary'] == {'matched': 3, 'complete': 1, 'to_update': 2, 'needs_drain': 2, 'batches': 2}
    (compartment,) = result['compartments']
    assert compartment['name'] == DEFAULT
    assert compartment['already_complete'] == ['n2']
    assert compartment['batches'] == [['n1'], ['n4']]     # the complete node is not batched
    n1, n2, n4 = result['nodes']['n1'], result['nodes']['n2'], result['nodes']['n4']
    assert n1['compartment'] == DEFAULT and n1['status'] == 'unknown' and n1['complete'] is False
    assert [s['stage'] for s in n1['pending']] == ['apply', 'config', 'interrupt', 'post-interrupt']
    assert n1['needs_drain'] is True and n1['interrupt']['type'] == 'reboot'
    assert n2['complete'] is True and n2['pending'] == [] and n2['status'] == 'complete' and n2['needs_drain'] is False
    assert n4['cordoned_by'] == ['demo', 'other']
    assert result['cr'] == {'name': 'demo', 'kind': 'NodeWright', 'apiVersion': 'nodewright.nvidia.com/v1alpha1',
                            'priority': 200, 'sequencing': 'node', 'serial': False, 'paused': False, 'disabled': False,
                            'deleting': False, 'packages': ['tuning'], 'podNonInterruptLabels': {}, 'runtimeRequired': False,
                            'deploymentPolicy': None, 'drainConfig': cr_model.drain_config(None)}


def test_plan_rollout_with_policy_compartments():
    policy = cr_validation.build_policy({
        'default': {'budget': {'percent': 50}, 'strategy': {'fixed': {}}},
        'compartments': [{'name': 'canary', 'selector': {'matchLabels': {'role': 'canary'}}, 'budget': {'count': 1},
                          'strategy': {'fixed': {}}}]}, name='pol')
    nodes = [node('c1', {'role': 'canary'}), node('c2', {'role': 'canary'}), node('w1'), node('w2'), node('w3'),
             node('w4', annotations={STATE_KEY: COMPLETE})]
    result = planner.plan_rollout(make_cr(), nodes, policy=policy)
    by_name = dict((c['name'], c) for c in result['compartments'])
    assert by_name['canary']['batches'] == [['c1'], ['c2']]
    assert by_name[DEFAULT]['ceiling'] == 2                  # 50% of the 4 default nodes
    assert by_name[DEFAULT]['batches'] == [['w1'], ['w2'], ['w3']]
    assert by_name[DEFAULT]['already_complete'] == ['w4']
    assert result['nodes']['c1']['compartment'] == 'canary' and result['nodes']['w4']['compartment'] == DEFAULT
    assert result['summary']['batches'] == 5


@pytest.mark.parametrize('order,expected', [('name', [['a'], ['b'], ['c']]), ('inventory', [['c'], ['a'], ['b']])])
def test_plan_rollout_order(order, expected):
    result = planner.plan_rollout(make_cr({'interruptionBudget': {'count': 1}}), [node('c'), node('a'), node('b')],
                                  order=order)
    assert result['compartments'][0]['batches'] == expected


def test_plan_rollout_config_changes():
    nodes = [node('n1', annotations={STATE_KEY: COMPLETE})]
    assert planner.plan_rollout(make_cr(), nodes)['summary']['to_update'] == 0
    result = planner.plan_rollout(make_cr(), nodes, config_changes={'tuning': ['key']})
    assert [s['stage'] for s in result['nodes']['n1']['pending']] == ['config']
    assert result['summary']['to_update'] == 1


@pytest.mark.parametrize('annotation,needle', [
    ('{broken', 'is not valid JSON'),
    ('{"tuning|1.0.0":{"name":"tuning","version":"1.0.0","image":"i","stage":"deploy"}}', "stage 'deploy' is not one of"),
])
def test_bad_annotation_names_the_node_and_holds_the_cr(annotation, needle):
    nodes = [node('good'), node('bad-node', annotations={STATE_KEY: annotation})]
    result = planner.plan_rollout(make_cr(), nodes)
    # the node is reported with the annotation and field at fault, and left out of the plan
    assert list(result['malformed']) == ['bad-node']
    assert result['malformed']['bad-node'].startswith('bad-node annotation %s' % STATE_KEY)
    assert needle in result['malformed']['bad-node']
    assert list(result['nodes']) == ['good'] and result['summary']['matched'] == 1
    # the operator's reconcile stops on it: no node of the CR starts, none is recorded
    decision = planner.cr_decision(result)
    assert decision['runs'] == [] and decision['record'] == [] and decision['complete'] == []
    assert 'bad-node' in decision['skipped'] and 'NodeStateMalformed' in decision['skipped']
    (warning,) = planner.plan_warnings(result)
    assert warning.startswith('NodeWright demo: ') and 'bad-node annotation' in warning and needle in warning
    # repaired: the CR runs again, nothing malformed
    nodes[1] = node('bad-node')
    repaired = planner.plan_rollout(make_cr(), nodes)
    assert repaired['malformed'] == {} and planner.cr_decision(repaired)['runs'] == ['bad-node', 'good']
    assert planner.plan_warnings(repaired) == []


def test_a_paused_cr_with_a_malformed_node_still_says_paused():
    cr = cr_validation.build_cr({'apiVersion': 'nodewright.nvidia.com/v1alpha1', 'kind': 'NodeWright',
                                 'metadata': {'name': 'demo', 'annotations': {'nodewright.nvidia.com/pause': 'true'}},
                                 'spec': {'nodeSelectors': {'matchLabels': {'pool': 'gpu'}},
                                          'packages': {'tt': {'version': '1.0.0', 'image': 'i'}}}})
    result = planner.plan_rollout(cr, [node('good'), node('bad', annotations={STATE_KEY: '{x'})])
    # the message names the NodeWright's own annotation (a Skyhook's is skyhook.nvidia.com/pause: planner.PAUSED)
    assert planner.cr_decision(result)['skipped'] == 'paused (nodewright.nvidia.com/pause=true), no batch starts'


def test_bad_annotation_on_an_unselected_node_is_ignored():
    nodes = [{'name': 'cpu', 'labels': {}, 'annotations': {STATE_KEY: '{broken'}}, node('gpu')]
    assert planner.plan_rollout(make_cr(), nodes)['unmatched'] == ['cpu']


def test_duplicate_node_names_rejected():
    with pytest.raises(cr_model.CRValidationError):
        planner.normalise_nodes([node('n1'), node('n1')])
    with pytest.raises(ValueError, match='duplicate node names'):
        planner.plan_rollout(make_cr(), [node('n1'), node('n1')])


def test_nodes_sharing_a_state_get_equal_plans():
    nodes = [node('n%d' % i) for i in range(3)]
    result = planner.plan_rollout(make_cr(), nodes)
    assert result['nodes']['n0']['pending'] == result['nodes']['n2']['pending']
    assert [s['stage'] for s in result['nodes']['n1']['pending']] == ['apply', 'config', 'interrupt', 'post-interrupt']


def test_a_complete_node_is_recorded_only_with_the_operators_whole_record():
    status = node_annotations.status_patch('demo', 'complete')['metadata']
    whole = dict(status['annotations'], **{STATE_KEY: COMPLETE, node_annotations.version_key('demo'): node_annotations.OPERATOR_VERSION})
    nodes = [
        node('whole', annotations=whole, labels=dict(status.get('labels', {}))),
        node('no-label', annotations=whole),
        node('old-version', annotations=dict(whole, **{node_annotations.version_key('demo'): 'v0.1.0'}),
             labels=dict(status.get('labels', {}))),
        node('pending', annotations=dict(status['annotations']), labels=dict(status.get('labels', {}))),
    ]
    result = planner.plan_rollout(make_cr({'interruptionBudget': {'count': 1}}), nodes)
    recorded = dict((n, p['recorded']) for n, p in result['nodes'].items())
    assert recorded == {'whole': True, 'no-label': not status.get('labels'), 'old-version': False, 'pending': False}


def test_an_ignored_node_with_work_left_is_to_be_recorded_blocked():
    key = node_annotations.status_key('demo')
    ignore = {'skyhook.nvidia.com/ignore': 'true'}
    nodes = [node('fresh', labels=ignore), node('done', labels=ignore, annotations={STATE_KEY: COMPLETE}),
             node('blocked', labels=dict(ignore, **{key: 'blocked'}), annotations={key: 'blocked'}),
             node('broken', labels=ignore, annotations={STATE_KEY: '{broken'}), node('normal')]
    result = planner.plan_rollout(make_cr({'interruptionBudget': {'count': 1}}), nodes)
    assert result['ignored'] == ['blocked', 'broken', 'done', 'fresh'] and result['to_block'] == ['fresh']
    assert sorted(result['nodes']) == ['normal']  # ignored nodes stay out of the rollout
    decision = planner.cr_decision(result)
    assert decision['record'] == [{'node': 'fresh', 'status': 'blocked'}, {'node': 'normal', 'status': 'waiting'}]
    assert decision['runs'] == ['normal']


def test_a_node_not_complete_that_says_nothing_or_complete_is_to_be_recorded_waiting():
    key = node_annotations.status_key('demo')
    record = {key: 'complete'}
    nodes = [node('reset', labels=record, annotations=dict(record)),                 # kubectl skyhook node reset
             node('label-only', labels=record),
             node('done', labels=record, annotations=dict(record, **{STATE_KEY: COMPLETE})),
             node('running', labels={key: 'in_progress'}, annotations={key: 'in_progress'}),
             node('failed', labels={key: 'erroring'}, annotations={key: 'erroring'}),
             node('queued', labels={key: 'waiting'}, annotations={key: 'waiting'}),
             node('fresh')]
    result = planner.plan_rollout(make_cr({'interruptionBudget': {'count': 1}}), nodes)
    stale = dict((n, p['stale_complete']) for n, p in result['nodes'].items())
    assert stale == {'reset': True, 'label-only': True, 'done': False, 'running': False, 'failed': False,
                     'queued': False, 'fresh': False}
    # IntrospectNode's settled state (complete -> unknown -> waiting): waiting for the node's batch; a node in
    # progress or erroring keeps its status, one already waiting is not written again
    assert planner.cr_decision(result)['record'] == [
        {'node': n, 'status': 'waiting'} for n in ('fresh', 'label-only', 'reset')]
    # a paused CR records every node paused (IntrospectNode), not waiting
    paused = make_cr({'interruptionBudget': {'count': 1}})
    paused.annotations['nodewright.nvidia.com/pause'] = 'true'
    assert planner.cr_decision(planner.plan_rollout(paused, nodes))['record'] == [
        {'node': n, 'status': 'paused'} for n in sorted(result['nodes'])]


def test_a_node_with_a_taint_the_cr_does_not_tolerate_is_left_out_and_blocked():
    taint = {'key': 'test-block', 'value': 'true', 'effect': 'NoSchedule'}
    cordon = {'key': 'node.kubernetes.io/unschedulable', 'effect': 'NoSchedule'}
    # a condition taint of the node lifecycle controller is left to the health checks and the not-ready gate
    not_ready = [{'key': 'node.kubernetes.io/not-ready', 'effect': 'NoSchedule'},
                 {'key': 'node.kubernetes.io/unreachable', 'effect': 'NoExecute'}]
    nodes = [dict(node('tainted'), taints=[taint]), dict(node('cordoned'), taints=[cordon] + not_ready), node('plain'),
             dict(node('done', annotations={STATE_KEY: COMPLETE}), taints=[taint])]
    result = planner.plan_rollout(make_cr(), nodes)
    assert result['untolerated'] == {'tainted': ['test-block=true:NoSchedule'], 'done': ['test-block=true:NoSchedule']}
    assert sorted(result['nodes']) == ['cordoned', 'plain'] and result['to_block'] == ['tainted']
    assert {'node': 'tainted', 'status': 'blocked'} in planner.cr_decision(result)['record']
    # an additionalToleration that matches lets it in
    tolerant = make_cr({'additionalTolerations': [{'key': 'test-block', 'operator': 'Exists'}]})
    assert planner.plan_rollout(tolerant, nodes)['untolerated'] == {}


@pytest.mark.parametrize('toleration,taint,expected', [
    ({'operator': 'Exists'}, {'key': 'a', 'effect': 'NoExecute'}, True),             # empty key + Exists: every taint
    ({'key': 'a', 'operator': 'Exists'}, {'key': 'a', 'value': 'x', 'effect': 'NoSchedule'}, True),
    ({'key': 'a', 'value': 'x'}, {'key': 'a', 'value': 'x', 'effect': 'NoSchedule'}, True),  # Equal by default
    ({'key': 'a', 'value': 'y'}, {'key': 'a', 'value': 'x', 'effect': 'NoSchedule'}, False),
    ({'key': 'a', 'operator': 'Exists', 'effect': 'NoExecute'}, {'key': 'a', 'effect': 'NoSchedule'}, False),
    ({'key': 'b', 'operator': 'Exists'}, {'key': 'a', 'effect': 'PreferNoSchedule'}, False),
    ({'key': 'a', 'operator': 'Gt', 'value': '1'}, {'key': 'a', 'value': '2', 'effect': 'NoSchedule'}, False),
])
def test_tolerates_is_kubernetes_rule(toleration, taint, expected):
    assert node_annotations.tolerates(toleration, taint) is expected


def test_nodes_left_out_and_not_complete_keep_a_sequencing_all_cr_from_completing_everywhere():
    # chainsaw skyhook/strict-order: the gate (sequencing all) cannot run on the tainted node, so the CRs
    # after it wait on every node, as the operator's IsComplete counts every node the CR selects
    taint = {'key': 'test-block', 'value': 'true', 'effect': 'NoSchedule'}
    nodes = [node('worker'), dict(node('worker2'), taints=[taint]), node('ignored', labels={'skyhook.nvidia.com/ignore': 'true'}),
             dict(node('done', annotations={node_annotations.node_state_key('gate'): COMPLETE}), taints=[taint])]
    gate = planner.plan_rollout(make_cr({'priority': 2, 'sequencing': 'all'}, name='gate'), nodes)
    assert gate['left_out'] == ['ignored', 'worker2']  # done is complete: it holds nothing
    later = planner.plan_rollout(make_cr({'priority': 3}, name='aa'), nodes)
    run = planner.rollout_phases([gate, later])
    assert run['crs']['gate']['runs'] == ['worker']
    assert run['crs']['aa']['runs'] == [] and run['crs']['aa']['waiting_for'] == ['gate']
    # the gate picks worker2 and records it blocked; aa, held whole, picks no node: its picker never marks the tainted
    # or ignored node blocked, and IntrospectNode records them waiting as the rest (assert-gate-blocks-worker)
    assert {'node': 'worker2', 'status': 'blocked'} in run['crs']['gate']['record']
    assert run['crs']['aa']['record'] == [{'node': n, 'status': 'waiting'} for n in ('done', 'ignored', 'worker', 'worker2')]
    # a status the node already records other than unknown / paused / disabled is kept (nothing written)
    erroring = [dict(n, annotations={node_annotations.status_key('aa'): 'erroring'}) if n['name'] == 'worker2' else n
                for n in nodes]
    run = planner.rollout_phases([gate, planner.plan_rollout(make_cr({'priority': 3}, name='aa'), erroring)])
    assert [r['node'] for r in run['crs']['aa']['record']] == ['done', 'ignored', 'worker']
    # once the taint is gone and the gate can finish everywhere in this run, aa runs after it
    free = [n for n in nodes if n['name'] != 'worker2'] + [node('worker2')]
    run = planner.rollout_phases([planner.plan_rollout(make_cr({'priority': 2, 'sequencing': 'all'}, name='gate'),
                                                       [n for n in free if n['name'] != 'ignored']),
                                  planner.plan_rollout(make_cr({'priority': 3}, name='aa'), free)])
    assert run['phases'][1]['after_all'] == ['gate']


def test_new_nodes_of_a_runtime_required_cr_with_auto_taint_are_listed_for_the_taint():
    runtime = {'key': 'skyhook.nvidia.com', 'value': 'runtime-required', 'effect': 'NoSchedule'}
    nodes = [node('new'), node('written', annotations={STATE_KEY: COMPLETE}), dict(node('tainted'), taints=[runtime]),
             node('other-pool', labels={'pool': 'cpu'}), node('new-ignored', labels={'skyhook.nvidia.com/ignore': 'true'})]
    auto = make_cr({'runtimeRequired': True, 'autoTaintNewNodes': True})
    # getAutoTaintNodes: selected, no skyhook.nvidia.com/ annotation, without the taint (ignored or not)
    assert planner.plan_rollout(auto, nodes)['auto_taint'] == ['new', 'new-ignored']
    assert planner.plan_rollout(make_cr({'runtimeRequired': True}), nodes)['auto_taint'] == []
    assert planner.plan_rollout(make_cr({'autoTaintNewNodes': True}), nodes)['auto_taint'] == []
