# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The deletion of a CR that carries the operator's finalizer, finished by nodewright.bridge.apply as the operator would.

skyhook/delete-blocked-when-paused and skyhook/uninstall-on-delete: `kubectl delete` of a paused CR with an
uninstall-enabled package on a node is blocked (DeletionBlocked condition, Warning Event), the CR stays; once
resumed, the next apply uninstalls the package, cleans the node up and removes the finalizer, and the CR is gone.
The finalizer is the one apply adds with nodewright_add_finalizer, as the operator's first reconcile adds it.
"""

from __future__ import annotations

import uuid

import pytest
from kubernetes import client as kclient

from nodewright_fixtures import GROUP, PLURAL, VERSION, package, skyhook

pytestmark = pytest.mark.cluster

PREFIX = 'skyhook.nvidia.com'
FINALIZER = PREFIX + '/skyhook'


def _apply(playbooks, name, namespace, **extra):
    variables = {'nodewright_cr_name': name, 'nodewright_namespace': namespace, 'nodewright_stage_timeout': 90}
    variables.update(extra)
    return playbooks.run('nodewright.bridge.apply', extra_vars=variables)


def _get(custom, name):
    try:
        return custom.get_cluster_custom_object(GROUP, VERSION, PLURAL, name)
    except kclient.ApiException as exc:
        if exc.status == 404:
            return None
        raise


def test_a_deleted_cr_is_uninstalled_then_released_and_a_pause_blocks_it(cluster, playbooks, node, namespace):
    custom = kclient.CustomObjectsApi(cluster.api)
    name = 'del-%s' % uuid.uuid4().hex[:6]
    value = uuid.uuid4().hex[:8]
    cluster.core.patch_node(node, {'metadata': {'labels': {'nodewright.bridge/deletion': value}}})
    doc = skyhook(name, {'clean': package(uninstall={'enabled': True}, interrupt={'type': 'reboot'}),
                         'keep': package(version='2.0.0')},
                  selector={'nodewright.bridge/deletion': value})
    custom.create_cluster_custom_object(GROUP, VERSION, PLURAL, doc)
    try:
        # nodewright_add_finalizer: the finalizer goes on as the operator's first reconcile adds it (metadata only)
        installed = _apply(playbooks, name, namespace, nodewright_add_finalizer=True)
        assert installed.rc == 0, installed
        meta = _get(custom, name)['metadata']
        assert meta['finalizers'] == [FINALIZER] and meta['generation'] == 1
        state_key = '%s/nodeState_%s' % (PREFIX, name)
        assert 'clean|1.2.0' in cluster.core.read_node(node).metadata.annotations[state_key]

        # paused, then kubectl delete: the deletion waits, blocked (the operator's HandleFinalizer)
        custom.patch_cluster_custom_object(GROUP, VERSION, PLURAL, name,
                                           {'metadata': {'annotations': {PREFIX + '/pause': 'true'}}})
        custom.delete_cluster_custom_object(GROUP, VERSION, PLURAL, name)
        held = _apply(playbooks, name, namespace)
        assert held.rc == 0, held
        cr = _get(custom, name)
        assert cr is not None and cr['metadata'].get('deletionTimestamp')
        blocked = [c for c in cr['status']['conditions'] if c['type'] == 'DeletionBlocked']
        assert [(c['status'], c['reason']) for c in blocked] == [('True', 'PausedWithPendingUninstall')]
        events = cluster.core.list_namespaced_event('default', field_selector='involvedObject.name=%s' % name).items
        assert [(e.type, e.reason, e.involved_object.kind) for e in events] == [('Warning', 'DeletionBlocked', 'Skyhook')]
        assert events[0].message == 'Cannot delete Skyhook %s: paused with uninstall work pending. Unpause to proceed.' % name
        assert 'clean|1.2.0' in cluster.core.read_node(node).metadata.annotations[state_key]  # nothing ran

        # kubectl skyhook resume: the next apply uninstalls the package, cleans the node up, lets the CR go
        custom.patch_cluster_custom_object(GROUP, VERSION, PLURAL, name,
                                           {'metadata': {'annotations': {PREFIX + '/pause': None}}})
        released = _apply(playbooks, name, namespace)
        assert released.rc == 0, released
        assert _get(custom, name) is None, 'the finalizer was not removed'
        after = cluster.core.read_node(node)
        annotations = after.metadata.annotations or {}
        # the node state stays while it lists a package (keep is still on the host), without the uninstalled one
        assert 'clean|' not in annotations[state_key] and 'keep|2.0.0' in annotations[state_key]
        assert [k for k in annotations if k.endswith('_' + name) and k != state_key
                and not k.startswith(PREFIX + '/version_')] == []
        assert [k for k in (after.metadata.labels or {}) if k.endswith('_' + name)] == []
        assert [c.type for c in after.status.conditions or [] if c.type.startswith('%s/%s/' % (PREFIX, name))] == []
        assert after.spec.unschedulable in (None, False)
    finally:
        if _get(custom, name) is not None:
            custom.patch_cluster_custom_object(GROUP, VERSION, PLURAL, name, {'metadata': {'finalizers': None}})
            try:
                custom.delete_cluster_custom_object(GROUP, VERSION, PLURAL, name)
            except kclient.ApiException:
                pass
