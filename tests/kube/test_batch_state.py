# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The batch state of a DeploymentPolicy rollout in the CR's status, kept from one run to the next as the operator keeps it.

deployment-policy/batch-state-reset (assert-override-complete.yaml: with `resetBatchStateOnCompletion: false`
the batch state survives the completion, `currentBatch > 1`), and the operator's
NewCompartmentWrapper: the next rollout continues from that state (its batch sizes grow from
`lastBatchSize`), where earlier versions of the collection started again at batch 1.
"""

from __future__ import annotations

import re
import uuid

import launcher
import pytest
from kubernetes import client as kclient

from nodewright_fixtures import GROUP, PLURAL, VERSION, package

pytestmark = pytest.mark.cluster

POLICY = {'resetBatchStateOnCompletion': True,
          'default': {'budget': {'count': 4}, 'strategy': {'exponential': {'initialBatch': 1, 'growthFactor': 2}}}}


@pytest.fixture
def pool(cluster):
    """Four fresh nodes with a label of their own."""
    value = uuid.uuid4().hex[:8]
    names = ['bs-%s-%d' % (value, i) for i in range(4)]
    launcher.create_nodes(cluster.api, names, labels={'nodewright.bridge/batch-state': value}, start_index=940)
    launcher.wait_nodes_ready(cluster.api, names, timeout=60)
    yield {'nodewright.bridge/batch-state': value}
    for name in names:
        cluster.core.delete_node(name)


@pytest.fixture
def policy(cluster):
    custom = kclient.CustomObjectsApi(cluster.api)
    name = 'bs-%s' % uuid.uuid4().hex[:6]
    custom.create_cluster_custom_object(GROUP, VERSION, 'deploymentpolicies', {
        'apiVersion': f'{GROUP}/{VERSION}', 'kind': 'DeploymentPolicy', 'metadata': {'name': name}, 'spec': POLICY})
    yield name
    custom.delete_cluster_custom_object(GROUP, VERSION, 'deploymentpolicies', name)


def _apply(playbooks, name, namespace):
    return playbooks.run('nodewright.bridge.apply', extra_vars={
        'nodewright_cr_name': name, 'nodewright_namespace': namespace, 'nodewright_stage_timeout': 90})


def _batches(run):
    """``[(number, size)]`` of the run's NODEWRIGHT BATCH banners."""
    return [(int(n), int(s)) for n, s in re.findall(r'NODEWRIGHT BATCH (\d+) \[[^\]]+\] (\d+) host', run.stdout)]


def _batch_state(cluster, name):
    status = kclient.CustomObjectsApi(cluster.api).get_cluster_custom_object(GROUP, VERSION, PLURAL, name)['status']
    return status['status'], status['compartmentStatuses']['__default__']['batchState']


def test_the_batch_state_survives_a_completion_and_the_next_rollout_continues_it(
        cluster, playbooks, namespace, crs, pool, policy):
    cr = crs.create({'quick': package()}, selector=pool, deploymentPolicy=policy,
                    deploymentPolicyOptions={'resetBatchStateOnCompletion': False})
    name = cr['metadata']['name']
    first = _apply(playbooks, name, namespace)
    assert first.rc == 0, first
    assert _batches(first) == [(1, 1), (2, 2), (3, 1)]
    # assert-override-complete.yaml: complete, and the batch state kept (currentBatch > 1)
    assert _batch_state(cluster, name) == ('complete', {'currentBatch': 4, 'completedNodes': 4, 'lastBatchSize': 1})

    # a new version of the package: the operator continues the kept state (exponential from lastBatchSize 1: 2, 2)
    kclient.CustomObjectsApi(cluster.api).patch_cluster_custom_object(
        GROUP, VERSION, PLURAL, name, {'spec': {'packages': {'quick': {'version': '1.2.1'}}}})
    second = _apply(playbooks, name, namespace)
    assert second.rc == 0, second
    assert _batches(second) == [(4, 2), (5, 2)]
    assert _batch_state(cluster, name) == ('complete', {'currentBatch': 6, 'completedNodes': 4, 'lastBatchSize': 2})

    # with the policy's resetBatchStateOnCompletion (the CR's override gone), a version change starts at batch 1
    # and the completion resets the state (assert-auto-reset-complete.yaml: currentBatch 1)
    kclient.CustomObjectsApi(cluster.api).patch_cluster_custom_object(
        GROUP, VERSION, PLURAL, name, {'spec': {'deploymentPolicyOptions': None, 'packages': {'quick': {'version': '1.2.2'}}}})
    third = _apply(playbooks, name, namespace)
    assert third.rc == 0, third
    assert _batches(third) == [(1, 1), (2, 2), (3, 1)]
    assert _batch_state(cluster, name) == ('complete', {'currentBatch': 1})
