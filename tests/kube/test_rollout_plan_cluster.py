# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""nodewright.bridge.rollout_plan reading the CR, its DeploymentPolicy and the nodes from the cluster."""

from __future__ import annotations

import json
import uuid

import launcher
from kubernetes import client as kclient

GROUP, VERSION = 'skyhook.nvidia.com', 'v1alpha1'


def _cr(name, selector_value, policy=None):
    spec = {'nodeSelectors': {'matchLabels': {'nodewright.bridge/pool': selector_value}},
            'packages': {'tuning': {'version': '1.2.0', 'image': 'ghcr.io/example/tuning',
                                    'interrupt': {'type': 'reboot'}}}}
    if policy:
        spec['deploymentPolicy'] = policy
    else:
        spec['interruptionBudget'] = {'count': 2}
    return {'apiVersion': f'{GROUP}/{VERSION}', 'kind': 'Skyhook', 'metadata': {'name': name}, 'spec': spec}


def test_plan_from_the_cluster(cluster, modules):
    custom = kclient.CustomObjectsApi(cluster.api)
    pool = uuid.uuid4().hex[:8]
    names = [f'plan-{pool}-{i}' for i in range(5)]
    cr_name, policy_name = f'plan-{pool}', f'rollout-{pool}'
    launcher.create_nodes(cluster.api, names, labels={'nodewright.bridge/pool': pool}, start_index=900)
    # One node already finished the package: the plan must leave it out.
    state = {'tuning|1.2.0': {'name': 'tuning', 'version': '1.2.0', 'image': 'ghcr.io/example/tuning',
                              'stage': 'post-interrupt', 'state': 'complete'}}
    cluster.core.patch_node(names[0], {'metadata': {'annotations': {
        f'skyhook.nvidia.com/nodeState_{cr_name}': json.dumps(state)}}})
    custom.create_cluster_custom_object(GROUP, VERSION, 'deploymentpolicies', {
        'apiVersion': f'{GROUP}/{VERSION}', 'kind': 'DeploymentPolicy', 'metadata': {'name': policy_name},
        'spec': {'default': {'budget': {'count': 4},
                             'strategy': {'linear': {'initialBatch': 1, 'delta': 1}}}}})
    custom.create_cluster_custom_object(GROUP, VERSION, 'skyhooks', _cr(cr_name, pool, policy_name))
    try:
        result = modules.run('rollout_plan', cr_name=cr_name)
        assert result['rc'] == 0, result
        assert result['sources'] == {'cr': 'cluster', 'policy': 'cluster', 'nodes': 'cluster'}
        assert result['policy'] == policy_name
        assert sorted(result['nodes']) == names  # only the nodes the CR selects, none of the others
        assert result['summary']['complete'] == 1 and result['summary']['to_update'] == 4
        assert result['nodes'][names[1]]['needs_drain'] is True
        assert [c['batch_sizes'] for c in result['compartments'] if c['batch_sizes']] == [[1, 2, 1]]
    finally:
        custom.delete_cluster_custom_object(GROUP, VERSION, 'skyhooks', cr_name)
        custom.delete_cluster_custom_object(GROUP, VERSION, 'deploymentpolicies', policy_name)
        for name in names:
            cluster.core.delete_node(name)


def test_plan_errors_name_what_is_missing(cluster, modules):
    custom = kclient.CustomObjectsApi(cluster.api)
    missing = modules.run('rollout_plan', cr_name='no-such-cr')
    assert missing['failed'] is True
    assert 'Skyhook / NodeWright no-such-cr not found' in missing['msg']

    name = f'dangling-{uuid.uuid4().hex[:6]}'
    custom.create_cluster_custom_object(GROUP, VERSION, 'skyhooks', _cr(name, 'none', 'no-such-policy'))
    try:
        result = modules.run('rollout_plan', cr_name=name)
        assert result['failed'] is True
        assert 'DeploymentPolicy no-such-policy not found' in result['msg']
    finally:
        custom.delete_cluster_custom_object(GROUP, VERSION, 'skyhooks', name)


def test_a_selector_that_matches_nothing_plans_zero_nodes(cluster, modules):
    custom = kclient.CustomObjectsApi(cluster.api)
    name = f'empty-{uuid.uuid4().hex[:6]}'
    custom.create_cluster_custom_object(GROUP, VERSION, 'skyhooks', _cr(name, 'matches-nothing'))
    try:
        result = modules.run('rollout_plan', cr_name=name)
        assert result['rc'] == 0, result
        assert result['nodes'] == {} and result['summary']['matched'] == 0
        assert result['sources'] == {'cr': 'cluster', 'nodes': 'cluster'}
    finally:
        custom.delete_cluster_custom_object(GROUP, VERSION, 'skyhooks', name)
