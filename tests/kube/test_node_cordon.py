# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""nodewright.bridge.node_cordon against the real API server: what needs the cluster's own client to set up (a foreign
cordon, two owners, concurrent writers, RBAC, an unreachable server). The owned cordon, its idempotence, check mode,
diff and bad input are the ansible-test integration target tests/integration/targets/node_cordon (make integration)."""

from __future__ import annotations

import json

CORDON = 'skyhook.nvidia.com/cordon_'
INHERITED = 'bridge.nodewright.io/cordon-inherited_'


def _node(cluster, name):
    node = cluster.core.read_node(name)
    return bool(node.spec.unschedulable), dict(node.metadata.annotations or {})


def test_a_foreign_cordon_survives_our_uncordon(cluster, modules, node):
    # Someone ran `kubectl cordon` before the rollout.
    cluster.core.patch_node(node, {'spec': {'unschedulable': True}})
    held = modules.run('node_cordon', name=node, owner='gpu-tuning')
    assert held['changed'] is True and held['inherited'] is True
    released = modules.run('node_cordon', name=node, owner='gpu-tuning', state='uncordoned')
    assert released['changed'] is True
    assert released['unschedulable'] is True
    assert 'cordoned by someone else' in released['message']
    unschedulable, annotations = _node(cluster, node)
    assert unschedulable is True
    assert not [k for k in annotations if k.startswith(CORDON) or k.startswith(INHERITED)]


def test_uncordon_of_a_node_we_never_cordoned_changes_nothing(cluster, modules, node):
    cluster.core.patch_node(node, {'spec': {'unschedulable': True}})
    result = modules.run('node_cordon', name=node, owner='gpu-tuning', state='uncordoned')
    assert result['changed'] is False and result['unschedulable'] is True
    assert 'not cordoned by gpu-tuning' in result['message']
    assert _node(cluster, node)[0] is True


def test_two_owners_the_node_stays_cordoned_until_the_last_releases(cluster, modules, node):
    modules.run('node_cordon', name=node, owner='cr-a')
    second = modules.run('node_cordon', name=node, owner='cr-b')
    assert second['inherited'] is False and second['owners'] == ['cr-a', 'cr-b']
    first_out = modules.run('node_cordon', name=node, owner='cr-a', state='uncordoned')
    assert first_out['unschedulable'] is True and 'still cordoned by cr-b' in first_out['message']
    last_out = modules.run('node_cordon', name=node, owner='cr-b', state='uncordoned')
    assert last_out['unschedulable'] is False
    assert _node(cluster, node)[0] is False


def test_the_old_option_names_work_and_are_deprecated(modules, node):
    new = modules.run('node_cordon', node=node, cr_name='gpu-tuning', state='uncordoned')
    assert not new.get('failed') and new['node'] == node
    assert 'deprecations' not in new
    old = modules.run('node_cordon', name=node, owner='gpu-tuning', state='uncordoned')
    assert not old.get('failed') and old['node'] == node
    # (ansible-core 2.19 nests each message in an event: match the text, not the layout)
    text = json.dumps(old['deprecations'])
    assert len(old['deprecations']) == 2
    assert "Alias 'name' is deprecated" in text and "Alias 'owner' is deprecated" in text


def test_unreachable_api_server_fails_clearly(cluster, modules, node):
    # host overrides the kubeconfig's server for every request, retries included
    result = modules.run('node_cordon', node=node, cr_name='gpu-tuning', host='https://127.0.0.1:1', api_outage_timeout=2)
    assert result['failed'] is True
    assert result['msg'].startswith(f'get node {node}: the Kubernetes API server at https://127.0.0.1:1 has not answered for 2s')
    assert 'cannot reach the Kubernetes API server at https://127.0.0.1:1' in result['msg']
    unschedulable, annotations = _node(cluster, node)
    assert unschedulable is False and CORDON + 'gpu-tuning' not in annotations


def test_rbac_denied_patch_fails_and_leaves_the_node_alone(cluster, modules, node, identity):
    reader = identity([{'apiGroups': [''], 'resources': ['nodes'], 'verbs': ['get', 'list', 'watch']}])
    result = modules.run('node_cordon', name=node, owner='gpu-tuning', **reader)
    assert result['failed'] is True
    assert f'patch node {node}: forbidden' in result['msg']
    assert result['status'] == 403
    unschedulable, annotations = _node(cluster, node)
    assert unschedulable is False and CORDON + 'gpu-tuning' not in annotations


def test_concurrent_writers_lose_nothing(cluster, modules, node):
    owners = [f'cr-{i}' for i in range(6)]
    handles = [modules.start('node_cordon', name=node, owner=o) for o in owners]
    handles.append(modules.start('node_state', name=node, action='ignore'))
    results = [modules.finish(h) for h in handles]
    assert all(r['rc'] == 0 for r in results), results
    unschedulable, annotations = _node(cluster, node)
    assert unschedulable is True
    assert sorted(k[len(CORDON):] for k in annotations if k.startswith(CORDON)) == owners
    assert cluster.core.read_node(node).metadata.labels['skyhook.nvidia.com/ignore'] == 'true'
    # Exactly one of them found the node schedulable and holds the real cordon; the others
    # saw it cordoned by a NodeWright owner, so none of them is marked inherited.
    assert not [k for k in annotations if k.startswith(INHERITED)]
