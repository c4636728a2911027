# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""nodewright.bridge.node_state against the real API server: reading, resetting and completing node states that a test
writes first. Ignore, unignore and a reset without a CR are the ansible-test integration target
tests/integration/targets/node_state (make integration)."""

from __future__ import annotations

import json

from kubernetes.client.rest import ApiException

from module_runner import checkout_code

KEY = 'skyhook.nvidia.com/nodeState_gpu-tuning'
STATE = {
    'a|1.0': {'name': 'a', 'version': '1.0', 'image': 'reg/a', 'stage': 'config', 'state': 'complete'},
    'b|2.0': {'name': 'b', 'version': '2.0', 'image': 'reg/b', 'stage': 'apply', 'state': 'erroring', 'restarts': 2},
}


def _annotate(cluster, node):
    cluster.core.patch_node(node, {'metadata': {
        'annotations': {KEY: json.dumps(STATE), 'skyhook.nvidia.com/status_gpu-tuning': 'erroring',
                        'skyhook.nvidia.com/nodeState_other': json.dumps({})},
        'labels': {'skyhook.nvidia.com/status_gpu-tuning': 'erroring'}}})


def _annotations(cluster, node):
    return dict(cluster.core.read_node(node).metadata.annotations or {})


def test_read_decodes_every_cr(cluster, modules, node):
    _annotate(cluster, node)
    result = modules.run('node_state', name=node)
    assert result['changed'] is False
    assert sorted(result['states']) == ['gpu-tuning', 'other']
    assert result['states']['gpu-tuning']['b|2.0']['restarts'] == 2
    assert result['states']['gpu-tuning']['a|1.0']['containerSHA'] == ''
    assert result['status'] == {'gpu-tuning': 'erroring'}
    only = modules.run('node_state', name=node, cr='gpu-tuning')
    assert list(only['states']) == ['gpu-tuning']


def test_reset_one_package_then_all(cluster, modules, node):
    _annotate(cluster, node)
    check = modules.run('node_state', name=node, cr='gpu-tuning', action='reset', package='b', check=True)
    assert check['changed'] is True and check['reset'] == ['b|2.0']
    assert json.loads(_annotations(cluster, node)[KEY]) == STATE

    one = modules.run('node_state', name=node, cr='gpu-tuning', action='reset', package='b', diff=True)
    assert one['changed'] is True and one['reset'] == ['b|2.0']
    assert list(json.loads(_annotations(cluster, node)[KEY])) == ['a|1.0']
    assert 'b|2.0' in one['diff']['before']['states']['gpu-tuning']
    assert 'b|2.0' not in one['diff']['after']['states']['gpu-tuning']

    rerun = modules.run('node_state', name=node, cr='gpu-tuning', action='reset', package='a', stage='config')
    entry = json.loads(_annotations(cluster, node)[KEY])['a|1.0']
    assert rerun['changed'] is True and (entry['stage'], entry['state']) == ('config', 'in_progress')

    everything = modules.run('node_state', name=node, cr='gpu-tuning', action='reset')
    annotations = _annotations(cluster, node)
    assert everything['changed'] is True and KEY not in annotations
    assert 'skyhook.nvidia.com/nodeState_other' in annotations  # another CR's state is untouched
    again = modules.run('node_state', name=node, cr='gpu-tuning', action='reset')
    assert again['changed'] is False and again['reset'] == []


def test_a_corrupt_annotation_is_reported_not_overwritten(cluster, modules, node):
    cluster.core.patch_node(node, {'metadata': {'annotations': {KEY: '{not json'}}})
    result = modules.run('node_state', name=node, cr='gpu-tuning', action='reset', package='a')
    assert result['failed'] is True
    assert node in result['msg'] and KEY in result['msg']
    assert _annotations(cluster, node)[KEY] == '{not json'


def test_complete_records_status_and_lifts_the_runtime_taint(cluster, modules, node):
    taint = {'key': 'skyhook.nvidia.com', 'value': 'runtime-required', 'effect': 'NoSchedule'}
    cluster.core.patch_node(node, {'spec': {'taints': [taint]}})
    done = {'a|1.0': {'name': 'a', 'version': '1.0', 'image': 'reg/a', 'stage': 'config', 'state': 'complete'}}
    cluster.core.patch_node(node, {'metadata': {'annotations': {KEY: json.dumps(done)}}})
    # Another runtimeRequired CR is not complete on the node yet: the taint stays.
    first = modules.run('node_state', name=node, cr='gpu-tuning', action='complete', runtime_required_crs=['gpu-tuning', 'other'])
    assert first['changed'] is True and first['status'] == {'gpu-tuning': 'complete'}
    assert 'skyhook.nvidia.com=runtime-required:NoSchedule' in first['taints']
    labels = cluster.core.read_node(node).metadata.labels
    assert labels['skyhook.nvidia.com/status_gpu-tuning'] == 'complete'
    # the operator's node conditions follow the record (skyhook/simple-skyhook/assert.yaml)
    conditions = dict((c.type, (c.status, c.reason)) for c in cluster.core.read_node(node).status.conditions)
    assert conditions['skyhook.nvidia.com/gpu-tuning/NotReady'] == ('False', 'Complete')
    second = modules.run('node_state', name=node, cr='gpu-tuning', action='complete', runtime_required_crs=['gpu-tuning'])
    assert second['changed'] is True and second['taints'] == []
    assert not cluster.core.read_node(node).spec.taints
    assert modules.run('node_state', name=node, cr='gpu-tuning', action='complete')['changed'] is False


def test_complete_is_refused_while_a_package_is_erroring(cluster, modules, node):
    _annotate(cluster, node)  # b|2.0 is erroring
    result = modules.run('node_state', name=node, cr='gpu-tuning', action='complete')
    assert result['failed'] is True and 'b|2.0 still in progress or erroring' in result['msg']
    assert _annotations(cluster, node)['skyhook.nvidia.com/status_gpu-tuning'] == 'erroring'


def test_the_api_servers_json_patch_takes_a_test_of_null_for_a_missing_key(cluster, node, tmp_path):
    """What node_annotations.key_guarded_patch (the nodeState writes' guard) relies on: the key-guarded patch of an
    absent key lands, the same patch once the key is there is refused (422), and a change elsewhere on the node
    (the cordon's taint, written by the node controller) does not refuse a patch computed before it."""
    with checkout_code(tmp_path, 'plugins.module_utils.contract.node_annotations') as (node_state,):
        _check_the_null_test(cluster, node, node_state)


def _check_the_null_test(cluster, node, node_state):
    read = cluster.core.api_client.sanitize_for_serialization(cluster.core.read_node(node))
    ops = node_state.key_guarded_patch(read, {'metadata': {'annotations': {KEY: '{}'}}})
    assert ops[0] == {'op': 'test', 'path': '/metadata/annotations/skyhook.nvidia.com~1nodeState_gpu-tuning', 'value': None}
    cluster.core.patch_node(node, {'spec': {'unschedulable': True}})  # someone else's write since the read
    cluster.core.patch_node(node, ops)
    assert _annotations(cluster, node)[KEY] == '{}'
    try:
        cluster.core.patch_node(node, ops)  # stale now: the key is there
        raise AssertionError('a failed test was not refused')
    except ApiException as exc:
        assert exc.status == 422, exc
    assert _annotations(cluster, node)[KEY] == '{}'
    cluster.core.patch_node(node, {'spec': {'unschedulable': None}})
