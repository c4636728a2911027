# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""nodewright.bridge.package_stage against the real API server (pods run by the fake kubelets)."""

from __future__ import annotations

import json


import helpers
from nodewright_fixtures import FAIL_PKG_IMAGE, PKG_IMAGE, package

STATE = 'skyhook.nvidia.com/nodeState_'
STATUS = 'skyhook.nvidia.com/status_'


def _annotations(cluster, node):
    return dict(cluster.core.read_node(node).metadata.annotations or {})


def _state(cluster, node, cr_name):
    text = _annotations(cluster, node).get(STATE + cr_name)
    return json.loads(text) if text else {}


def _pods(cluster, namespace):
    return cluster.core.list_namespaced_pod(namespace).items


def test_apply_runs_the_operator_pod_and_records_complete(cluster, modules, node, namespace, crs):
    cr = crs.create({'tuning': package(configMap={'sysctl.conf': 'vm.swappiness=10\n'}, env=[{'name': 'MODE', 'value': 'fast'}])})
    name, uid = cr['metadata']['name'], cr['metadata']['uid']
    result = modules.run('package_stage', node=node, cr_name=name, package='tuning', stage='apply', namespace=namespace,
                         delete_pod='never', timeout=60)
    assert result['rc'] == 0, result
    assert result['outcome'] == 'succeeded' and result['changed'] is True
    entry = _state(cluster, node, name)['tuning|1.2.0']
    assert entry == {'name': 'tuning', 'version': '1.2.0', 'image': PKG_IMAGE, 'stage': 'apply', 'state': 'complete'}
    annotations = _annotations(cluster, node)
    assert annotations[STATUS + name] == 'in_progress'  # as the operator: complete is decided per node, not per stage
    assert annotations['skyhook.nvidia.com/version_' + name] == 'v0.15.0'
    # The pod as the operator lays it out, pinned to the node, and its logs in the result.
    pod = cluster.core.read_namespaced_pod(result['pod']['name'], namespace)
    assert pod.spec.node_name == node and pod.spec.host_pid and pod.spec.host_network
    assert [c.name for c in pod.spec.init_containers] == ['tuning-init', 'tuning-apply', 'tuning-applycheck']
    assert pod.spec.init_containers[1].args == ['apply', '/root', f'/var/lib/skyhook/{name}/tuning-1.2.0-{uid}-1']
    env = {e.name: e.value for e in pod.spec.init_containers[1].env}
    assert env['MODE'] == 'fast' and env['SKYHOOK_RESOURCE_ID'] == f'{name}-{uid}-1_tuning_1.2.0'
    assert pod.metadata.labels == {'skyhook.nvidia.com/name': name, 'skyhook.nvidia.com/package': 'tuning-1.2.0'}
    assert pod.metadata.owner_references[0].uid == uid
    assert set(result['logs']) == {'tuning-init', 'tuning-apply', 'tuning-applycheck'}
    assert helpers.LOG_COMPLETED in result['logs']['tuning-apply']
    cm = cluster.core.read_namespaced_config_map(f'{name}-tuning-1.2.0', namespace)
    assert cm.data == {'sysctl.conf': 'vm.swappiness=10\n'}
    assert result['configmaps'][f'{name}-tuning-1.2.0'] == 'created'

    again = modules.run('package_stage', node=node, cr_name=name, package='tuning', stage='apply', namespace=namespace)
    assert again['rc'] == 0 and again['changed'] is False and again['outcome'] == 'skipped'
    assert len(_pods(cluster, namespace)) == 1  # no second pod


def test_pod_is_deleted_by_default(cluster, modules, node, namespace, crs):
    cr = crs.create({'tuning': package()})
    result = modules.run('package_stage', node=node, cr_name=cr['metadata']['name'], package='tuning', stage='apply',
                         namespace=namespace, timeout=60)
    assert result['rc'] == 0 and result['pod']['deleted'] is True
    helpers.wait_for(lambda: not _pods(cluster, namespace), 30, what='stage pod deleted')


def test_init_container_failure_ends_erroring_with_its_logs(cluster, modules, node, namespace, crs):
    cr = crs.create({'tuning': package(image=FAIL_PKG_IMAGE)})
    name = cr['metadata']['name']
    result = modules.run('package_stage', node=node, cr_name=name, package='tuning', stage='apply', namespace=namespace,
                         timeout=60)
    assert result['failed'] is True and result['outcome'] == 'failed'
    assert result['container'] == 'tuning-init' and result['exit_code'] == 1
    assert 'init container tuning-init failed (exit code 1' in result['msg'] and 'recorded as erroring' in result['msg']
    assert helpers.LOG_FAILED.format(exit_code=1) in result['logs']['tuning-init']
    assert helpers.LOG_FAILED.format(exit_code=1) in result['msg']  # the log tail is in the message
    entry = _state(cluster, node, name)['tuning|1.2.0']
    assert (entry['stage'], entry['state'], entry['restarts']) == ('apply', 'erroring', 1)
    labels = cluster.core.read_node(node).metadata.labels
    assert labels[STATUS + name] == 'erroring' and _annotations(cluster, node)[STATUS + name] == 'erroring'
    # the failed pod stays, as the operator leaves it (kubectl skyhook package logs finds it)
    assert result['pod']['deleted'] is False and len(_pods(cluster, namespace)) == 1


def test_check_mode_shows_the_pod_and_creates_nothing(cluster, modules, node, namespace, crs):
    cr = crs.create({'tuning': package(configMap={'a': 'b'})})
    name = cr['metadata']['name']
    result = modules.run('package_stage', node=node, cr_name=name, package='tuning', stage='config', namespace=namespace,
                         check=True)
    assert result['rc'] == 0 and result['changed'] is True and result['outcome'] == 'planned'
    assert result['manifest']['spec']['nodeName'] == node
    assert result['entry']['state'] == 'in_progress' and result['entry']['stage'] == 'config'
    assert not _pods(cluster, namespace)
    assert not cluster.core.list_namespaced_config_map(namespace, label_selector=f'skyhook.nvidia.com/name={name}').items
    assert STATE + name not in _annotations(cluster, node)


def test_a_pod_left_by_an_interrupted_run_is_adopted(cluster, modules, node, namespace, crs):
    cr = crs.create({'tuning': package()})
    name = cr['metadata']['name']
    planned = modules.run('package_stage', node=node, cr_name=name, package='tuning', stage='apply', namespace=namespace,
                          check=True)
    # what a run killed after its in_progress write left behind: the pod and the entry
    cluster.core.create_namespaced_pod(namespace, planned['manifest'])
    entry = {'tuning|1.2.0': {'name': 'tuning', 'version': '1.2.0', 'image': PKG_IMAGE, 'stage': 'apply',
                              'state': 'in_progress'}}
    cluster.core.patch_node(node, {'metadata': {'annotations': {STATE + name: json.dumps(entry)}}})
    first_uid = cluster.core.read_namespaced_pod(planned['manifest']['metadata']['name'], namespace).metadata.uid
    result = modules.run('package_stage', node=node, cr_name=name, package='tuning', stage='apply', namespace=namespace,
                         delete_pod='never')
    assert result["rc"] == 0, result
    assert result["pod"]["adopted"] is True and result["pod"]["uid"] == first_uid
    assert len(_pods(cluster, namespace)) == 1


def test_a_pod_the_nodes_state_does_not_list_is_replaced(cluster, modules, node, namespace, crs):
    # killed before its in_progress write (or `kubectl skyhook node reset` since): the operator deletes such a pod
    cr = crs.create({'tuning': package()})
    name = cr['metadata']['name']
    planned = modules.run('package_stage', node=node, cr_name=name, package='tuning', stage='apply', namespace=namespace,
                          check=True)
    cluster.core.create_namespaced_pod(namespace, planned['manifest'])
    first_uid = cluster.core.read_namespaced_pod(planned['manifest']['metadata']['name'], namespace).metadata.uid
    result = modules.run('package_stage', node=node, cr_name=name, package='tuning', stage='apply', namespace=namespace,
                         delete_pod='never')
    assert result["rc"] == 0, result
    assert result["pod"]["adopted"] is False and result["pod"]["uid"] != first_uid
    assert "the node's state does not list its package" in result["pod"]["replaced"]


def test_upgrade_drops_the_old_version(cluster, modules, node, namespace, crs):
    cr = crs.create({'tuning': package(version='2.0.0')})
    name = cr['metadata']['name']
    old = {'tuning|1.0.0': {'name': 'tuning', 'version': '1.0.0', 'image': PKG_IMAGE, 'stage': 'post-interrupt',
                            'state': 'complete'}}
    cluster.core.patch_node(node, {'metadata': {'annotations': {STATE + name: json.dumps(old)}}})
    result = modules.run('package_stage', node=node, cr_name=name, package='tuning', stage='upgrade', namespace=namespace)
    assert result['rc'] == 0, result
    assert list(_state(cluster, node, name)) == ['tuning|2.0.0']


def test_bad_input_changes_nothing(cluster, modules, node, namespace, crs):
    cr = crs.create({'tuning': package()})
    name = cr['metadata']['name']
    unknown = modules.run('package_stage', node=node, cr_name=name, package='nope', stage='apply', namespace=namespace)
    assert unknown['failed'] is True and "package 'nope' is not in Skyhook" in unknown['msg']
    missing_ns = modules.run('package_stage', node=node, cr_name=name, package='tuning', stage='apply',
                             namespace='no-such-namespace')
    assert missing_ns['failed'] is True and 'no-such-namespace' in missing_ns['msg']
    missing_node = modules.run('package_stage', node='no-such-node-z', cr_name=name, package='tuning', stage='apply',
                               namespace=namespace)
    assert missing_node['failed'] is True and 'node no-such-node-z does not exist' in missing_node['msg']
    invalid = modules.run('package_stage', node=node, package='tuning', stage='apply', namespace=namespace,
                          cr={'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'Skyhook', 'metadata': {'name': 'x'},
                              'spec': {'packages': {'tuning': {'version': '1', 'image': 'i', 'interrupt': {'type': 'shutdown'}}}}})
    assert invalid['failed'] is True and 'spec.packages.tuning.interrupt.type' in invalid['msg']
    assert not _pods(cluster, namespace)
    assert not cluster.core.list_namespaced_config_map(namespace, label_selector=f'skyhook.nvidia.com/name={name}').items
    assert STATE + name not in _annotations(cluster, node)


def test_rbac_denied_pod_create_changes_nothing(cluster, modules, node, namespace, crs, identity):
    cr = crs.create({'tuning': package(configMap={'a': 'b'})})
    name = cr['metadata']['name']
    limited = identity([
        {'apiGroups': [''], 'resources': ['nodes'], 'verbs': ['get', 'list', 'watch', 'patch']},
        {'apiGroups': [''], 'resources': ['pods', 'configmaps'], 'verbs': ['get', 'list', 'watch']},
        {'apiGroups': ['skyhook.nvidia.com'], 'resources': ['skyhooks'], 'verbs': ['get']}])
    result = modules.run('package_stage', node=node, cr_name=name, package='tuning', stage='apply', namespace=namespace,
                         **limited)
    assert result['failed'] is True and 'create pod' in result['msg'] and 'forbidden' in result['msg']
    assert not cluster.core.list_namespaced_config_map(namespace, label_selector=f'skyhook.nvidia.com/name={name}').items
    assert STATE + name not in _annotations(cluster, node)


def test_two_stages_on_one_node_at_once_lose_nothing(cluster, modules, node, namespace, crs):
    cr = crs.create({'alpha': package(), 'beta': package(version='3.1.0'), 'gamma': package(version='0.1.0')})
    name = cr['metadata']['name']
    handles = [modules.start('package_stage', node=node, cr_name=name, package=p, stage='apply', namespace=namespace)
               for p in ('alpha', 'beta', 'gamma')]
    handles.append(modules.start('node_cordon', name=node, owner=name))
    results = [modules.finish(h) for h in handles]
    assert all(r['rc'] == 0 for r in results), results
    state = _state(cluster, node, name)
    assert sorted(state) == ['alpha|1.2.0', 'beta|3.1.0', 'gamma|0.1.0']
    assert {e['state'] for e in state.values()} == {'complete'}
    assert _annotations(cluster, node)['skyhook.nvidia.com/cordon_' + name] == 'true'


def test_without_the_preflight_a_refused_pod_leaves_its_stage_in_progress_and_the_next_run_runs_it_once(
        cluster, modules, node, namespace, crs, identity):
    # node_update turns the dry runs off for a package's later stages on a node; a pod the API server refuses then
    # fails its stage after the in_progress record, which goes before every pod (so that no kill leaves a pod the
    # node's state does not list): the stage stays in progress with no pod, as a run killed there leaves it
    cr = crs.create({'tuning': package(configMap={'a': 'b'})})
    name = cr['metadata']['name']
    limited = identity([
        {'apiGroups': [''], 'resources': ['nodes'], 'verbs': ['get', 'list', 'watch', 'patch']},
        {'apiGroups': [''], 'resources': ['pods'], 'verbs': ['get', 'list', 'watch']},
        {'apiGroups': [''], 'resources': ['configmaps'], 'verbs': ['get', 'list', 'watch', 'create', 'patch', 'update']},
        {'apiGroups': ['skyhook.nvidia.com'], 'resources': ['skyhooks'], 'verbs': ['get']}])
    result = modules.run('package_stage', node=node, cr_name=name, package='tuning', stage='apply', namespace=namespace,
                         preflight=False, **limited)
    assert result['failed'] is True and 'create pod' in result['msg'] and 'forbidden' in result['msg'], result
    assert f'node {node} records tuning|1.2.0 in progress with no pod: the next run creates it' in result['msg'], result
    entry = _state(cluster, node, name)['tuning|1.2.0']
    assert (entry['stage'], entry['state']) == ('apply', 'in_progress')
    assert _annotations(cluster, node)[STATUS + name] == 'in_progress'
    assert not _pods(cluster, namespace)

    done = modules.run('package_stage', node=node, cr_name=name, package='tuning', stage='apply', namespace=namespace,
                       preflight=False, timeout=60)
    assert done['rc'] == 0 and done['outcome'] == 'succeeded', done
    # the one pod of the stage: none was there to adopt or replace
    assert (done['pod']['adopted'], done['pod']['replaced']) == (False, None), done['pod']
    assert _state(cluster, node, name)['tuning|1.2.0']['state'] == 'complete'
