# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""An edit of a package's configMap, rolled out by nodewright.bridge.apply as the operator rolls it out.

skyhook/config-skyhook: the package ConfigMap keeps the data a rollout under way started with; once the package is
complete on every node the changed keys go to status.configUpdates, the package goes back to its config stage, the
ConfigMap takes the new data, and the config stage and the configInterrupt of the changed key run.
"""

from __future__ import annotations

import json
import uuid

import pytest
from kubernetes import client as kclient

from nodewright_fixtures import GROUP, PLURAL, VERSION, package, skyhook

pytestmark = pytest.mark.cluster

PREFIX = 'skyhook.nvidia.com'


def _apply(playbooks, name, namespace):
    return playbooks.run('nodewright.bridge.apply', extra_vars={
        'nodewright_cr_name': name, 'nodewright_namespace': namespace, 'nodewright_stage_timeout': 90})


def _state(cluster, node, name):
    return json.loads(cluster.core.read_node(node).metadata.annotations['%s/nodeState_%s' % (PREFIX, name)])


def test_an_edit_waits_for_the_rollout_under_way_then_reruns_config_and_its_config_interrupt(
        cluster, playbooks, modules, node, namespace):
    custom = kclient.CustomObjectsApi(cluster.api)
    name = 'cfg-%s' % uuid.uuid4().hex[:6]
    value = uuid.uuid4().hex[:8]
    cluster.core.patch_node(node, {'metadata': {'labels': {'nodewright.bridge/config-edit': value}}})
    tuning = package(configMap={'a.conf': 'v1', 'b.conf': 'keep'},
                     configInterrupts={'a.conf': {'type': 'service', 'services': ['rsyslog']}})
    custom.create_cluster_custom_object(GROUP, VERSION, PLURAL, skyhook(
        name, {'tuning': tuning}, selector={'nodewright.bridge/config-edit': value}))
    cm_name = '%s-tuning-1.2.0' % name
    try:
        first = _apply(playbooks, name, namespace)
        assert first.rc == 0, first
        assert cluster.core.read_namespaced_config_map(cm_name, namespace).data == {'a.conf': 'v1', 'b.conf': 'keep'}
        assert _state(cluster, node, name)['tuning|1.2.0']['stage'] == 'config'  # no interrupt of its own

        # the package still rolling out on the node (as a run stopped after its apply stage leaves it): the edit waits
        done = _state(cluster, node, name)
        rolling = dict(done, **{'tuning|1.2.0': dict(done['tuning|1.2.0'], stage='apply', state='in_progress')})
        key = '%s/nodeState_%s' % (PREFIX, name)
        cluster.core.patch_node(node, {'metadata': {'annotations': {key: json.dumps(rolling)}}})
        custom.patch_cluster_custom_object(GROUP, VERSION, PLURAL, name, {'spec': {'packages': {'tuning': {
            'configMap': {'a.conf': 'v2', 'b.conf': 'keep', 'c.conf': 'new'}}}}})
        waiting = modules.run('package_config', cr_name=name, namespace=namespace)
        assert not waiting.get('failed') and waiting['changed'] is False, waiting
        assert waiting['packages']['tuning']['action'] == 'wait' and waiting['packages']['tuning']['keys'] == ['a.conf', 'c.conf']
        assert cluster.core.read_namespaced_config_map(cm_name, namespace).data['a.conf'] == 'v1'
        assert not (custom.get_cluster_custom_object(GROUP, VERSION, PLURAL, name).get('status') or {}).get('configUpdates')
        cluster.core.patch_node(node, {'metadata': {'annotations': {key: json.dumps(done)}}})

        # complete everywhere: check mode says so and writes nothing
        checked = modules.run('package_config', check=True, cr_name=name, namespace=namespace)
        assert checked['changed'] is True and checked['applied'] == ['tuning'], checked
        assert cluster.core.read_namespaced_config_map(cm_name, namespace).data['a.conf'] == 'v1'
        assert _state(cluster, node, name) == done

        # the next apply rolls it out: configUpdates, then config and the configInterrupt of a.conf (rsyslog)
        second = _apply(playbooks, name, namespace)
        assert second.rc == 0, second
        cr = custom.get_cluster_custom_object(GROUP, VERSION, PLURAL, name)
        assert cr['status']['configUpdates'] == {'tuning': ['a.conf', 'c.conf']}
        assert cluster.core.read_namespaced_config_map(cm_name, namespace).data == {
            'a.conf': 'v2', 'b.conf': 'keep', 'c.conf': 'new'}
        entry = _state(cluster, node, name)['tuning|1.2.0']
        assert (entry['stage'], entry['state']) == ('post-interrupt', 'complete'), entry
        assert cr['status']['status'] == 'complete'
        labels = cluster.core.read_node(node).metadata.labels
        assert labels['%s/status_%s' % (PREFIX, name)] == 'complete'
        # the node's Events say what ran: config twice (first rollout, the edit), the configInterrupt once
        events = cluster.core.list_namespaced_event('default', field_selector='involvedObject.name=%s' % node).items
        messages = [e.message for e in events if name in e.message]
        assert sum('stage [config] complete' in m for m in messages) == 2, messages
        interrupts = [m for m in messages if m.startswith('Interrupted node')]
        assert len(interrupts) == 1 and interrupts[0].endswith(': service restart (rsyslog)'), messages

        # nothing differs any more: no edit, nothing written
        again = modules.run('package_config', cr_name=name, namespace=namespace)
        assert again['changed'] is False and again['packages'] == {}, again

        # bad input: an edit (no webhook here lets it in) that drops the key a configInterrupt names fails both
        # the module and the apply with the field path, and writes nothing (ConfigMap, node state, configUpdates)
        before = (_state(cluster, node, name), cluster.core.read_namespaced_config_map(cm_name, namespace).data,
                  custom.get_cluster_custom_object(GROUP, VERSION, PLURAL, name)['status'].get('configUpdates'),
                  cluster.core.read_node(node).metadata.labels.get('%s/status_%s' % (PREFIX, name)))
        custom.patch_cluster_custom_object(GROUP, VERSION, PLURAL, name, {'spec': {'packages': {'tuning': {
            'configMap': {'a.conf': None, 'b.conf': 'keep', 'c.conf': 'new'}}}}})
        refused = modules.run('package_config', cr_name=name, namespace=namespace)
        path = "packages.tuning.configInterrupts.a.conf: no configMap key 'a.conf'"
        assert refused.get('failed') and path in refused['msg'], refused
        broken = _apply(playbooks, name, namespace)
        assert broken.rc != 0 and path in broken.stdout, broken
        assert (_state(cluster, node, name), cluster.core.read_namespaced_config_map(cm_name, namespace).data,
                custom.get_cluster_custom_object(GROUP, VERSION, PLURAL, name)['status'].get('configUpdates'),
                cluster.core.read_node(node).metadata.labels.get('%s/status_%s' % (PREFIX, name))) == before
    finally:
        try:
            custom.delete_cluster_custom_object(GROUP, VERSION, PLURAL, name)
        except kclient.ApiException:
            pass
