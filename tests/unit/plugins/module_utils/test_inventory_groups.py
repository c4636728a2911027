# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""inventory_groups: group names, node progress, CR selection and the hosts of a plan (nodes inventory plugin)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

import pytest

from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_model
from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_validation
from ansible_collections.nodewright.bridge.plugins.module_utils.planning import inventory_groups as ig
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import node_annotations
from ansible_collections.nodewright.bridge.plugins.module_utils.model.constants import IGNORE_LABEL
from ansible_collections.nodewright.bridge.plugins.module_utils.planning import planner

IMAGE = 'ghcr.io/example/tuning'
STATE_KEY = node_annotations.node_state_key('gpu-tuning')
VALID_GROUP = re.compile(r'^[A-Za-z_][A-Za-z0-9_]*\Z')


def cr_doc(name='gpu-tuning', policy='two', **spec):
    body = {'nodeSelectors': {'matchLabels': {'pool': 'gpu'}},
            'packages': {'tuning': {'version': '1.2.0', 'image': IMAGE, 'interrupt': {'type': 'reboot'}},
                         'driver': {'version': '2.0.0', 'image': 'ghcr.io/example/driver'}}}
    if policy:
        body['deploymentPolicy'] = policy
    body.update(spec)
    return {'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'Skyhook', 'metadata': {'name': name}, 'spec': body}


def policy_doc(name='two'):
    return {'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'DeploymentPolicy', 'metadata': {'name': name},
            'spec': {'default': {'budget': {'count': 1}, 'strategy': {'fixed': {}}},
                     'compartments': [{'name': 'rack-a', 'selector': {'matchLabels': {'rack': 'a'}},
                                       'budget': {'count': 1}, 'strategy': {'linear': {}}}]}}


def entry(name, version, stage, state, image=IMAGE):
    return {'name': name, 'version': version, 'image': image, 'stage': stage, 'state': state}


def done():
    return {'tuning|1.2.0': entry('tuning', '1.2.0', 'post-interrupt', 'complete'),
            'driver|2.0.0': entry('driver', '2.0.0', 'config', 'complete', 'ghcr.io/example/driver')}


def api_node(name, labels=None, state=None, annotations=None, ip=None):
    """A Kubernetes Node as the API returns it."""
    all_annotations = {'kwok.x-k8s.io/node': 'fake', 'node.alpha.kubernetes.io/ttl': '0'}
    all_annotations.update(annotations or {})
    if state is not None:
        all_annotations[STATE_KEY] = node_annotations.encode(state)
    addresses = [{'type': 'Hostname', 'address': name}]
    if ip:
        addresses.insert(0, {'type': 'InternalIP', 'address': ip})
    return {'metadata': {'name': name, 'labels': dict({'pool': 'gpu'}, **(labels or {})), 'annotations': all_annotations},
            'status': {'addresses': addresses}}


def plan_of(nodes, policy=True, **cr_spec):
    cr = cr_validation.build_cr(cr_doc(policy='two' if policy else None, **cr_spec))
    compact = [ig.compact_node(n) for n in nodes]
    plan = planner.plan_rollout(cr, planner.normalise_nodes(compact), policy=cr_validation.build_policy(policy_doc()) if policy else None)
    return cr, plan, compact


# --------------------------------------------------------------------------- group names


@pytest.mark.parametrize('text,expected', [
    ('gpu-tuning', 'gpu_tuning'),
    ('a.b-c_d', 'a_b_c_d'),
    ('Rack A/1', 'Rack_A_1'),
    ('already_fine9', 'already_fine9'),
])
def test_safe_name(text, expected):
    assert ig.safe_name(text) == expected


@pytest.mark.parametrize('cr_name,expected', [
    ('gpu-tuning', 'nodewright_gpu_tuning'),
    ('nodes.example.com', 'nodewright_nodes_example_com'),
    ('needs-drain', 'nodewright_cr_needs_drain'),
    ('ignored', 'nodewright_cr_ignored'),
    ('state-x', 'nodewright_cr_state_x'),
    ('compartment-a', 'nodewright_cr_compartment_a'),
    ('statement', 'nodewright_statement'),
])
def test_cr_group_never_takes_another_group_of_the_plugin(cr_name, expected):
    assert ig.cr_group(cr_name) == expected
    assert VALID_GROUP.match(expected)


def test_compartment_groups_default_and_sanitising():
    groups = ig.compartment_groups(['__default__', 'rack-a', 'Rack_B', 'gpu.h100'])
    assert groups == {'__default__': 'nodewright_compartment_default', 'rack-a': 'nodewright_compartment_rack_a',
                      'Rack_B': 'nodewright_compartment_Rack_B', 'gpu.h100': 'nodewright_compartment_gpu_h100'}


def test_compartment_groups_that_would_collide_get_stable_distinct_suffixes():
    first = ig.compartment_groups(['a-b', 'a.b', 'c'])
    again = ig.compartment_groups(['c', 'a.b', 'a-b'])
    assert first == again
    assert first['c'] == 'nodewright_compartment_c'
    assert first['a-b'] != first['a.b']
    for name in ('a-b', 'a.b'):
        assert re.match(r'^nodewright_compartment_a_b_[0-9a-f]{6}\Z', first[name])


def test_a_compartment_named_default_does_not_take_the_default_group():
    groups = ig.compartment_groups(['__default__', 'default'])
    assert groups['__default__'] == 'nodewright_compartment_default'
    assert re.match(r'^nodewright_compartment_default_[0-9a-f]{6}\Z', groups['default'])


def test_all_groups_exist_even_without_hosts():
    cr, plan, dummy = plan_of([])
    groups = ig.all_groups(cr, plan)
    assert groups[:3] == ['nodewright', 'nodewright_gpu_tuning', 'nodewright_needs_drain']
    assert set(groups) >= {'nodewright_state_%s' % p for p in ig.PROGRESS}
    assert set(groups) >= {'nodewright_compartment_default', 'nodewright_compartment_rack_a'}
    assert 'nodewright_ignored' not in groups
    assert 'nodewright_ignored' in ig.all_groups(cr, plan, include_ignored=True)
    assert all(VALID_GROUP.match(g) for g in groups)


# --------------------------------------------------------------------------- progress


@pytest.mark.parametrize('plan,state,expected', [
    ({'complete': True, 'pending': []}, {}, 'complete'),
    # complete wins over a stale entry of another version
    ({'complete': True, 'pending': []}, {'tuning|1.0.0': entry('tuning', '1.0.0', 'apply', 'erroring')}, 'complete'),
    ({'complete': False, 'pending': [1]}, {'tuning|1.2.0': entry('tuning', '1.2.0', 'apply', 'erroring')}, 'erroring'),
    ({'complete': False, 'pending': [1]}, {'tuning|1.2.0': entry('tuning', '1.2.0', 'apply', 'erroring'),
                                           'driver|2.0.0': entry('driver', '2.0.0', 'apply', 'in_progress')}, 'erroring'),
    ({'complete': False, 'pending': [1]}, {'tuning|1.2.0': entry('tuning', '1.2.0', 'apply', 'in_progress')}, 'in_progress'),
    ({'complete': False, 'pending': [1]}, {'tuning|1.2.0': entry('tuning', '1.2.0', 'interrupt', 'skipped')}, 'in_progress'),
    ({'complete': False, 'pending': [1]}, {}, 'pending'),
    # part way through, between two stages: pending
    ({'complete': False, 'pending': [1]}, {'tuning|1.2.0': entry('tuning', '1.2.0', 'apply', 'complete')}, 'pending'),
    ({'complete': False, 'pending': []}, {}, 'blocked'),
])
def test_progress(plan, state, expected):
    assert ig.progress(plan, state) == expected


def test_progress_counts_only_the_crs_package_versions_when_told():
    state = {'tuning|1.0.0': entry('tuning', '1.0.0', 'apply', 'erroring')}
    plan = {'complete': False, 'pending': [1]}
    assert ig.progress(plan, state) == 'erroring'
    assert ig.progress(plan, state, package_keys={'tuning|1.2.0'}) == 'pending'


# --------------------------------------------------------------------------- nodes and CR documents


def test_compact_node_keeps_labels_nodewright_annotations_and_the_internal_ip():
    node = api_node('n1', labels={'rack': 'a'}, state=done(), ip='10.0.0.7',
                    annotations={'skyhook.nvidia.com/cordon_x': 'true', 'bridge.nodewright.io/cordon-inherited_x': 'true'})
    compact = ig.compact_node(node)
    assert compact['name'] == 'n1'
    assert compact['labels'] == {'pool': 'gpu', 'rack': 'a'}
    assert sorted(compact['annotations']) == sorted(['bridge.nodewright.io/cordon-inherited_x', STATE_KEY,
                                                     'skyhook.nvidia.com/cordon_x'])
    assert compact['internal_ip'] == '10.0.0.7'


def test_internal_ip_missing_or_other_types():
    assert ig.internal_ip({'metadata': {'name': 'x'}}) is None
    assert ig.internal_ip({'status': {'addresses': [{'type': 'ExternalIP', 'address': '1.2.3.4'}]}}) is None
    assert ig.internal_ip({'status': {'addresses': [{'type': 'InternalIP', 'address': ''},
                                                    {'type': 'InternalIP', 'address': '10.1.1.1'}]}}) == '10.1.1.1'


def test_select_cr_with_its_policy():
    cr, policies = cr_model.select_cr([cr_doc(), policy_doc()])
    assert cr['metadata']['name'] == 'gpu-tuning'
    assert [p['metadata']['name'] for p in policies] == ['two']


def test_select_cr_by_name_among_several():
    docs = [cr_doc('a'), cr_doc('b')]
    with pytest.raises(cr_model.CRValidationError) as exc:
        cr_model.select_cr(docs, source='cr file x.yaml')
    assert "holds several CRs ('a', 'b'); choose one with cr_name" in str(exc.value)
    assert 'cr file x.yaml' in str(exc.value)
    assert cr_model.select_cr(docs, 'b')[0]['metadata']['name'] == 'b'
    with pytest.raises(cr_model.CRValidationError, match="no Skyhook or NodeWright named 'c'"):
        cr_model.select_cr(docs, 'c')


def test_select_cr_from_a_kubectl_list():
    listing = {'apiVersion': 'v1', 'kind': 'List', 'items': [cr_doc('a'), policy_doc()]}
    cr, policies = cr_model.select_cr([listing])
    assert cr['metadata']['name'] == 'a' and len(policies) == 1


def test_select_cr_rejects_other_documents_and_files_without_a_cr():
    with pytest.raises(cr_model.CRValidationError, match='document 1'):
        cr_model.select_cr([{'apiVersion': 'v1', 'kind': 'ConfigMap'}])
    with pytest.raises(cr_model.CRValidationError, match='no Skyhook or NodeWright document found'):
        cr_model.select_cr([policy_doc()])


# --------------------------------------------------------------------------- hosts


def fleet():
    return [
        api_node('n-done', labels={'rack': 'a'}, state=done(), ip='10.0.0.1'),
        api_node('n-new', ip='10.0.0.2'),
        api_node('n-failing', state={'tuning|1.2.0': dict(entry('tuning', '1.2.0', 'apply', 'erroring'), restarts=3)},
                 annotations={node_annotations.status_key('gpu-tuning'): 'erroring'}),
        api_node('n-busy', labels={'rack': 'a'}, state={'driver|2.0.0': entry('driver', '2.0.0', 'apply', 'in_progress')},
                 annotations={node_annotations.cordon_key('gpu-tuning'): 'true'}, ip='10.0.0.4'),
        api_node('n-ignored', labels={IGNORE_LABEL: 'true'}, ip='10.0.0.5'),
        api_node('n-cpu', labels={'pool': 'cpu'}, ip='10.0.0.6'),
    ]


def by_name(hosts):
    return dict((h['name'], h) for h in hosts)


# the host variable with the node's read-only facts (its name pinned here)
FACTS = 'nodewright_node_facts'


def test_build_hosts_groups_and_vars():
    cr, plan, nodes = plan_of(fleet())
    hosts = ig.build_hosts(cr, plan, nodes)
    assert [h['name'] for h in hosts] == ['n-busy', 'n-done', 'n-failing', 'n-new']  # not ignored, not unselected
    found = by_name(hosts)

    done_host = found['n-done']
    assert done_host['groups'] == ['nodewright', 'nodewright_gpu_tuning', 'nodewright_compartment_rack_a',
                                   'nodewright_state_complete']
    assert done_host['vars'][FACTS]['complete'] is True
    assert done_host['vars'][FACTS]['pending'] == [] and done_host['vars'][FACTS]['needs_drain'] is False
    assert done_host['vars'][FACTS]['state'] == node_annotations.decode(node_annotations.encode(done()))
    assert done_host['vars']['ansible_host'] == '10.0.0.1' and done_host['vars']['ansible_connection'] == 'local'

    new = found['n-new']['vars']
    assert found['n-new']['groups'] == ['nodewright', 'nodewright_gpu_tuning', 'nodewright_compartment_default',
                                        'nodewright_state_pending', 'nodewright_needs_drain']
    assert new['nodewright_compartment'] == '__default__'
    assert [(s['package'], s['stage']) for s in new[FACTS]['pending']] == [
        ('driver', 'apply'), ('driver', 'config'),  # no interrupt: runs before the drain
        ('tuning', 'apply'), ('tuning', 'config'), ('tuning', 'interrupt'), ('tuning', 'post-interrupt')]
    assert new[FACTS]['interrupt']['type'] == 'reboot'
    assert new[FACTS]['status'] == 'unknown' and new[FACTS]['state'] == {}
    assert new['nodewright_labels'] == {'pool': 'gpu'}
    assert new[FACTS]['cr_name'] == 'gpu-tuning' and new['nodewright_node'] == 'n-new'
    assert new[FACTS]['ignored'] is False and new[FACTS]['blocked'] == []

    failing = found['n-failing']
    assert 'nodewright_state_erroring' in failing['groups']
    assert failing['vars'][FACTS]['progress'] == 'erroring' and failing['vars'][FACTS]['status'] == 'erroring'
    assert failing['vars'][FACTS]['state']['tuning|1.2.0']['restarts'] == 3
    assert 'ansible_host' not in failing['vars']  # no InternalIP

    busy = found['n-busy']
    assert busy['groups'][:4] == ['nodewright', 'nodewright_gpu_tuning', 'nodewright_compartment_rack_a',
                                  'nodewright_state_in_progress']
    assert busy['vars'][FACTS]['cordoned_by'] == ['gpu-tuning']


def test_build_hosts_with_ignored_nodes():
    cr, plan, nodes = plan_of(fleet())
    hosts = by_name(ig.build_hosts(cr, plan, nodes, include_ignored=True))
    ignored = hosts['n-ignored']
    assert ignored['groups'] == ['nodewright_ignored']
    assert ignored['vars'][FACTS]['ignored'] is True
    assert ignored['vars']['ansible_host'] == '10.0.0.5'
    assert 'nodewright_pending' not in ignored['vars'] and 'nodewright_compartment' not in ignored['vars']
    assert ignored['vars'][FACTS] == {'cr_name': 'gpu-tuning', 'status': 'unknown', 'cordoned_by': [], 'ignored': True}
    assert sorted(hosts) == ['n-busy', 'n-done', 'n-failing', 'n-ignored', 'n-new']


def test_build_hosts_connection_and_address_options():
    cr, plan, nodes = plan_of(fleet())
    hosts = by_name(ig.build_hosts(cr, plan, nodes, use_internal_ip=False, connection=None))
    assert all('ansible_host' not in h['vars'] and 'ansible_connection' not in h['vars'] for h in hosts.values())
    hosts = by_name(ig.build_hosts(cr, plan, nodes, connection='ssh'))
    assert hosts['n-new']['vars']['ansible_connection'] == 'ssh'


def test_build_hosts_legacy_budget_puts_everyone_in_default():
    cr, plan, nodes = plan_of(fleet(), policy=False, interruptionBudget={'percent': 50})
    hosts = ig.build_hosts(cr, plan, nodes)
    assert set(h['vars']['nodewright_compartment'] for h in hosts) == {'__default__'}
    assert all('nodewright_compartment_default' in h['groups'] for h in hosts)


def test_build_hosts_no_nodes():
    cr, plan, nodes = plan_of([api_node('n-cpu', labels={'pool': 'cpu'})])
    assert ig.build_hosts(cr, plan, nodes) == []


def test_build_hosts_values_are_not_shared_between_hosts():
    # the planner shares one plan between nodes in the same state
    cr, plan, nodes = plan_of([api_node('n1'), api_node('n2')])
    first, second = ig.build_hosts(cr, plan, nodes)
    assert first['vars'][FACTS]['pending'] == second['vars'][FACTS]['pending']
    first['vars'][FACTS]['pending'][0]['stage'] = 'changed'
    first['vars'][FACTS]['interrupt']['type'] = 'changed'
    assert second['vars'][FACTS]['pending'][0]['stage'] == 'apply'
    assert second['vars'][FACTS]['interrupt']['type'] == 'reboot'


def test_the_facts_are_one_dict_and_flat_until_2_0_0():
    cr, plan, nodes = plan_of(fleet())
    for host in ig.build_hosts(cr, plan, nodes, include_ignored=True):
        host_vars, facts = host['vars'], host['vars'][FACTS]
        assert set(facts) <= set(ig.FACT_KEYS)
        if not facts['ignored']:
            assert set(facts) == set(ig.FACT_KEYS)
        # the deprecated flat names hold the same values; the CR's name is not flat as nodewright_cr, which in the
        # node role and the playbooks is the CR documents (a host variable would win over the role's default)
        assert dict((key, host_vars[ig.FLAT_FACTS[key]]) for key in facts if key != 'cr_name') == \
            dict((key, value) for key, value in facts.items() if key != 'cr_name')
        assert 'nodewright_cr' not in host_vars
        # the inputs the inventory fills in stay flat, outside the facts: the CR's name is the node role's input
        assert host_vars['nodewright_cr_name'] == facts['cr_name'] == 'gpu-tuning'
        assert host_vars['nodewright_node'] == host['name'] and 'nodewright_labels' in host_vars
        assert not set(facts) & {'node', 'labels', 'compartment'}
    assert 'cr_name' not in ig.FLAT_FACTS and ig.FLAT_FACTS['needs_drain'] == 'nodewright_needs_drain'
