# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""nodewright.bridge.node_health against the real API server."""

from __future__ import annotations

import helpers


def test_ready_node_passes_and_a_stale_boot_id_times_out(cluster, modules, node):
    boot = helpers.boot_id(cluster.core, node)
    ok = modules.run('node_health', name=node)
    assert ok['rc'] == 0 and ok['ready'] is True and ok['boot_id'] == boot and ok['changed'] is False
    stale = modules.run('node_health', name=node, boot_id_not=boot, timeout=3)
    assert stale['failed'] is True and 'still the one from before the reboot' in stale['msg']


def test_waits_for_the_reboot_and_the_workload(cluster, modules, node, namespace):
    boot = helpers.boot_id(cluster.core, node)
    handle = modules.start('node_health', name=node, boot_id_not=boot, pod_selector='app=exporter', timeout=60)
    cluster.reboot_node(node)
    cluster.core.create_namespaced_pod(namespace, {
        'metadata': {'name': 'exporter', 'labels': {'app': 'exporter'}},
        'spec': {'nodeName': node, 'containers': [{'name': 'e', 'image': 'registry.local/exporter:1'}]}})
    result = modules.finish(handle)
    assert result['rc'] == 0, result
    assert result['boot_id'] != boot and result['pods'] == {f'{namespace}/exporter': True}


def test_missing_pods_fail_naming_the_count(modules, node):
    result = modules.run('node_health', name=node, pod_selector={'matchLabels': {'app': 'nothing'}}, timeout=2)
    assert result['failed'] is True and '0 found, 1 needed' in result['msg']
