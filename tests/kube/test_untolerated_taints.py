# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""A node with a taint the CR does not tolerate, as the operator's node picker treats it (skyhook/strict-order,
taint-scheduling): blocked, no package pod, TaintNotTolerable on the CR; tolerated once the CR says so."""

from __future__ import annotations

import uuid

import pytest
from kubernetes import client as kclient

from nodewright_fixtures import GROUP, PLURAL, VERSION, package, skyhook

pytestmark = pytest.mark.cluster

PREFIX = 'skyhook.nvidia.com'
TAINT = {'key': 'test-block', 'value': 'true', 'effect': 'NoSchedule'}


def _apply(playbooks, name, namespace):
    return playbooks.run('nodewright.bridge.apply', extra_vars={
        'nodewright_cr_name': name, 'nodewright_namespace': namespace, 'nodewright_stage_timeout': 90})


def test_an_untolerated_taint_blocks_the_node_until_the_cr_tolerates_it(cluster, playbooks, node, namespace):
    custom = kclient.CustomObjectsApi(cluster.api)
    name = 'taint-%s' % uuid.uuid4().hex[:6]
    value = uuid.uuid4().hex[:8]
    cluster.core.patch_node(node, {'metadata': {'labels': {'nodewright.bridge/taint': value}},
                                   'spec': {'taints': [TAINT]}})
    custom.create_cluster_custom_object(GROUP, VERSION, PLURAL, skyhook(
        name, {'tuning': package()}, selector={'nodewright.bridge/taint': value}))
    try:
        blocked = _apply(playbooks, name, namespace)
        assert blocked.rc == 0, blocked
        meta = cluster.core.read_node(node).metadata
        status_key = '%s/status_%s' % (PREFIX, name)
        assert (meta.annotations.get(status_key), meta.labels.get(status_key)) == ('blocked', 'blocked')
        assert '%s/nodeState_%s' % (PREFIX, name) not in (meta.annotations or {})  # nothing ran there
        assert cluster.core.list_namespaced_pod(namespace, field_selector='spec.nodeName=%s' % node).items == []
        conditions = dict((c['type'], c) for c in custom.get_cluster_custom_object(GROUP, VERSION, PLURAL, name)
                          ['status']['conditions'])
        assert (conditions['TaintNotTolerable']['status'], conditions['TaintNotTolerable']['message']) == (
            'True', 'Node [%s] has taints that are not tolerable. Skipping.' % node)

        # the CR tolerates it now: the node rolls out, the condition clears
        custom.patch_cluster_custom_object(GROUP, VERSION, PLURAL, name, {'spec': {'additionalTolerations': [
            {'key': 'test-block', 'operator': 'Equal', 'value': 'true', 'effect': 'NoSchedule'}]}})
        rolled = _apply(playbooks, name, namespace)
        assert rolled.rc == 0, rolled
        meta = cluster.core.read_node(node).metadata
        assert meta.labels.get(status_key) == 'complete'
        cr = custom.get_cluster_custom_object(GROUP, VERSION, PLURAL, name)
        conditions = dict((c['type'], c) for c in cr['status']['conditions'])
        assert conditions['TaintNotTolerable']['status'] == 'False' and cr['status']['status'] == 'complete'
    finally:
        try:
            custom.delete_cluster_custom_object(GROUP, VERSION, PLURAL, name)
        except kclient.ApiException:
            pass


RUNTIME_TAINT = {'key': PREFIX, 'value': 'runtime-required', 'effect': 'NoSchedule'}


def _runtime_tainted(cluster, node):
    return [t for t in cluster.core.read_node(node).spec.taints or [] if t.key == PREFIX]


def test_auto_taint_new_nodes_taints_a_new_node_first_and_the_rollout_lifts_it(cluster, playbooks, node, namespace):
    # HandleAutoTaint: a node no CR has written yet gets the runtime-required taint at once, even while the CR is
    # paused; completing the runtimeRequired CR lifts it; a node the CR has written is never tainted again
    custom = kclient.CustomObjectsApi(cluster.api)
    name = 'auto-%s' % uuid.uuid4().hex[:6]
    value = uuid.uuid4().hex[:8]
    cluster.core.patch_node(node, {'metadata': {'labels': {'nodewright.bridge/auto': value}}})
    doc = skyhook(name, {'tuning': package()}, selector={'nodewright.bridge/auto': value},
                  runtimeRequired=True, autoTaintNewNodes=True)
    doc['metadata']['annotations'] = {'%s/pause' % PREFIX: 'true'}
    custom.create_cluster_custom_object(GROUP, VERSION, PLURAL, doc)
    try:
        paused = _apply(playbooks, name, namespace)
        assert paused.rc == 0, paused
        meta = cluster.core.read_node(node).metadata
        assert [(t.key, t.value, t.effect) for t in _runtime_tainted(cluster, node)] == [
            (PREFIX, 'runtime-required', 'NoSchedule')]
        assert meta.annotations['%s/autoTaint_%s' % (PREFIX, PREFIX)] == 'true'
        assert meta.labels['%s/status_%s' % (PREFIX, name)] == 'paused'
        assert cluster.core.list_namespaced_pod(namespace, field_selector='spec.nodeName=%s' % node).items == []

        custom.patch_cluster_custom_object(GROUP, VERSION, PLURAL, name,
                                           {'metadata': {'annotations': {'%s/pause' % PREFIX: None}}})
        rolled = _apply(playbooks, name, namespace)
        assert rolled.rc == 0, rolled
        assert cluster.core.read_node(node).metadata.labels['%s/status_%s' % (PREFIX, name)] == 'complete'
        assert _runtime_tainted(cluster, node) == []  # the runtimeRequired CR is complete: lifted
        again = _apply(playbooks, name, namespace)
        assert again.rc == 0 and _runtime_tainted(cluster, node) == [], again  # not a new node any more
    finally:
        try:
            custom.delete_cluster_custom_object(GROUP, VERSION, PLURAL, name)
        except kclient.ApiException:
            pass
