# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""nodewright.bridge.apply and plan on bad input: a clear message before any node is touched."""

from __future__ import annotations

import uuid

import yaml

STATE = 'skyhook.nvidia.com/nodeState_'


def _cr(name, pool, **spec):
    body = {'nodeSelectors': {'matchLabels': {'nodewright.bridge/pool': pool}},
            'packages': {'tuning': {'version': '1.0.0', 'image': 'registry.local/tuning', 'interrupt': {'type': 'reboot'}}}}
    body.update(spec)
    return {'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'Skyhook', 'metadata': {'name': name}, 'spec': body}


def _untouched(cluster, node, name):
    obj = cluster.core.read_node(node)
    assert STATE + name not in (obj.metadata.annotations or {})
    assert not obj.spec.unschedulable


def test_an_invalid_cr_fails_with_its_field_paths(cluster, playbooks, node, tmp_path):
    name = f'bad-{uuid.uuid4().hex[:6]}'
    doc = _cr(name, 'x', interruptionBudget={'percent': 50, 'count': 2})
    doc['spec']['packages']['tuning']['interrupt'] = {'type': 'shutdown'}
    path = tmp_path / 'bad.yaml'
    path.write_text(yaml.safe_dump(doc))
    result = playbooks.run('nodewright.bridge.apply', extra_vars={'nodewright_cr': str(path)})
    assert result.rc != 0
    assert 'spec.interruptionBudget: percent and count are mutually exclusive' in result.stdout
    assert "spec.packages.tuning.interrupt.type: 'shutdown' is not one of" in result.stdout
    assert 'NODEWRIGHT BATCH' not in result.stdout
    _untouched(cluster, node, name)


def test_a_missing_policy_is_named(cluster, playbooks, node, tmp_path):
    name = f'nopolicy-{uuid.uuid4().hex[:6]}'
    path = tmp_path / 'cr.yaml'
    path.write_text(yaml.safe_dump(_cr(name, 'x', deploymentPolicy='no-such-policy')))
    result = playbooks.run('nodewright.bridge.apply', extra_vars={'nodewright_cr': str(path)})
    assert result.rc != 0 and 'NODEWRIGHT BATCH' not in result.stdout
    assert 'DeploymentPolicy no-such-policy not found' in result.stdout
    _untouched(cluster, node, name)


def test_a_selector_that_matches_nothing_plans_zero_nodes(cluster, playbooks, tmp_path):
    name = f'empty-{uuid.uuid4().hex[:6]}'
    path = tmp_path / 'cr.yaml'
    path.write_text(yaml.safe_dump(_cr(name, 'matches-nothing')))
    result = playbooks.run('nodewright.bridge.apply', extra_vars={'nodewright_cr': str(path)})
    assert result.rc == 0, result
    assert f'{name} (priority 200, sequencing node): 0 nodes, 0 to update' in result.stdout
    plan = playbooks.run('nodewright.bridge.plan', extra_vars={'nodewright_cr': str(path)})
    assert plan.rc == 0, plan
    assert '0 nodes: 0 complete, 0 to update' in plan.stdout
