# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""End to end with several CRs in one file: priority order, sequencing all, runtimeRequired, pause."""

from __future__ import annotations

import json
import uuid

import yaml

import launcher

RUNTIME_TAINT = {'key': 'skyhook.nvidia.com', 'value': 'runtime-required', 'effect': 'NoSchedule'}


def _cr(name, pool, priority, **spec):
    body = {'nodeSelectors': {'matchLabels': {'nodewright.bridge/pool': pool}}, 'priority': priority,
            'interruptionBudget': {'count': 2},
            'packages': {'tuning': {'version': '1.0.0', 'image': f'registry.local/{name}',
                                    'interrupt': {'type': 'service', 'services': ['containerd']}}}}
    body.update(spec)
    return {'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'Skyhook', 'metadata': {'name': name}, 'spec': body}


def test_priority_sequencing_runtime_required_and_pause(cluster, playbooks, namespace, tmp_path):
    pool = uuid.uuid4().hex[:6]
    nodes = [f'multi-{pool}-{i}' for i in range(2)]
    launcher.create_nodes(cluster.api, nodes, labels={'nodewright.bridge/pool': pool}, start_index=2300)
    launcher.wait_nodes_ready(cluster.api, nodes, timeout=60)
    try:
        for name in nodes:
            cluster.core.patch_node(name, {'spec': {'taints': [RUNTIME_TAINT]}})
        first, second, paused = f'base-{pool}', f'late-{pool}', f'paused-{pool}'
        docs = [
            # listed out of order on purpose: priority decides
            _cr(second, pool, 300, runtimeRequired=True),
            # the first CR's sequencing all gates the later ones (docs/ordering_of_skyhooks.md)
            _cr(first, pool, 100, sequencing='all', runtimeRequired=True),
            dict(_cr(paused, pool, 400), metadata={'name': paused, 'annotations': {'skyhook.nvidia.com/pause': 'true'}}),
        ]
        path = tmp_path / 'crs.yaml'
        path.write_text(yaml.safe_dump_all(docs))
        result = playbooks.run('nodewright.bridge.apply', extra_vars={'nodewright_cr': str(path), 'nodewright_namespace': namespace})
        assert result.rc == 0, result
        out = result.stdout
        assert out.index(f'{first} (priority 100') < out.index(f'{second} (priority 300')
        assert f'{paused}: paused (skyhook.nvidia.com/pause=true), no batch starts' in out
        for name in nodes:
            node = cluster.core.read_node(name)
            annotations = node.metadata.annotations or {}
            assert node.metadata.labels[f'skyhook.nvidia.com/status_{first}'] == 'complete'
            assert node.metadata.labels[f'skyhook.nvidia.com/status_{second}'] == 'complete'
            assert f'skyhook.nvidia.com/nodeState_{paused}' not in annotations
            # Both runtimeRequired CRs are complete: the taint is gone.
            assert not [t for t in node.spec.taints or [] if t.key == 'skyhook.nvidia.com']
            assert not node.spec.unschedulable
        # The later CR's package pods were created after the first CR had finished everywhere (its sequencing
        # all held them until then): its state entries exist, in the operator's format.
        state = json.loads(cluster.core.read_node(nodes[0]).metadata.annotations[f'skyhook.nvidia.com/nodeState_{second}'])
        assert state['tuning|1.0.0']['stage'] == 'post-interrupt' and state['tuning|1.0.0']['state'] == 'complete'
    finally:
        for name in nodes:
            cluster.core.delete_node(name)


def test_sequencing_all_waits_while_an_earlier_cr_is_not_complete_everywhere(cluster, playbooks, namespace, tmp_path):
    pool = uuid.uuid4().hex[:6]
    nodes = [f'seq-{pool}-{i}' for i in range(2)]
    launcher.create_nodes(cluster.api, nodes, labels={'nodewright.bridge/pool': pool}, start_index=2320)
    launcher.wait_nodes_ready(cluster.api, nodes, timeout=60)
    try:
        first, second = f'paused-{pool}', f'waits-{pool}'
        held = dict(_cr(first, pool, 100, sequencing='all'),
                    metadata={'name': first, 'annotations': {'skyhook.nvidia.com/pause': 'true'}})
        docs = [held, _cr(second, pool, 200)]
        path = tmp_path / 'crs.yaml'
        path.write_text(yaml.safe_dump_all(docs))
        result = playbooks.run('nodewright.bridge.apply', extra_vars={'nodewright_cr': str(path), 'nodewright_namespace': namespace})
        assert result.rc == 0, result
        assert f'{second}: waits until {first} (sequencing all) is complete on every node' in result.stdout
        for name in nodes:
            annotations = cluster.core.read_node(name).metadata.annotations or {}
            assert f'skyhook.nvidia.com/nodeState_{second}' not in annotations
            assert f'skyhook.nvidia.com/nodeState_{first}' not in annotations
    finally:
        for name in nodes:
            cluster.core.delete_node(name)
