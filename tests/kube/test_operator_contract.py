# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The operator's contract as its own tools read it, after nodewright.bridge.apply rolled a CR from the cluster.

* the CR's status (what `kubectl get skyhooks` shows, `kubectl wait --for=condition=Ready` waits on, and the
  operator's e2e asserts check: skyhook/failure-skyhook, skyhook/simple-skyhook);
* the failed-package workflow: the failed pod stays for `kubectl skyhook package logs`; after the image is
  fixed the next apply replaces it, never adopts it;
* `kubectl skyhook reset` of a node a failing reboot package left cordoned: the next apply ends with the node
  schedulable, as the operator's would;
* a CR fix made while a stage hangs lands in the same run (skyhook/validate-packages): the hanging pod is deleted and
  the node planned again;
* the node conditions `skyhook.nvidia.com/<cr>/NotReady` and `/Erroring` and the node-metadata ConfigMap, as
  the operator's e2e asserts check them (skyhook/simple-skyhook, skyhook/failure-skyhook), and the status an
  ignored node and a reset node get.
"""

from __future__ import annotations

import threading
import time
import uuid

import pytest
from kubernetes import client as kclient
from kubernetes import watch as kwatch

from nodewright_fixtures import FAIL_PKG_IMAGE, GROUP, PLURAL, VERSION, package

pytestmark = pytest.mark.cluster

PREFIX = 'skyhook.nvidia.com'


def _pin(cluster, node):
    """A label only this test's node carries, for the CR's nodeSelectors."""
    value = uuid.uuid4().hex[:8]
    cluster.core.patch_node(node, {'metadata': {'labels': {'nodewright.bridge/contract': value}}})
    return {'nodewright.bridge/contract': value}


def _apply(playbooks, name, namespace, extra_args=(), **extra):
    variables = {'nodewright_cr_name': name, 'nodewright_namespace': namespace, 'nodewright_stage_timeout': 90,
                 'nodewright_interrupt_timeout': 90, 'nodewright_drain_timeout': 90}
    variables.update(extra)
    return playbooks.run('nodewright.bridge.apply', extra_vars=variables, extra_args=extra_args)


def _cr(cluster, name):
    return kclient.CustomObjectsApi(cluster.api).get_cluster_custom_object(GROUP, VERSION, PLURAL, name)


def _condition(status, ctype):
    return next((c for c in status.get('conditions') or [] if c['type'] == ctype), None)


def _annotations(cluster, node):
    return cluster.core.read_node(node).metadata.annotations or {}


def _node_conditions(cluster, node, name):
    """``{NotReady|Erroring: (status, reason)}`` of the CR's conditions on the node (the chainsaw asserts' fields)."""
    found = {}
    for cond in cluster.core.read_node(node).status.conditions or []:
        prefix = '%s/%s/' % (PREFIX, name)
        if cond.type.startswith(prefix):
            found[cond.type[len(prefix):]] = (cond.status, cond.reason)
    return found


def _status_of(cluster, node, name):
    """``(annotation, label)`` of the node's status_<cr>."""
    meta = cluster.core.read_node(node).metadata
    key = '%s/status_%s' % (PREFIX, name)
    return (meta.annotations or {}).get(key), (meta.labels or {}).get(key)


def _assert_node_metadata_configmap(cluster, namespace, node, name):
    """skyhook/simple-skyhook/assert.yaml's node-metadata ConfigMap: three keys, owned by the CR, labelled."""
    found = [cm for cm in cluster.core.list_namespaced_config_map(
        namespace, label_selector='%s/skyhook-node-meta=%s' % (PREFIX, name)).items
        if (cm.metadata.annotations or {}).get(PREFIX + '/Node.name') == node]
    assert len(found) == 1
    meta_cm = found[0]
    owner = meta_cm.metadata.owner_references
    assert [(o.api_version, o.kind, o.name, o.controller, o.block_owner_deletion) for o in owner] == [
        ('%s/%s' % (GROUP, VERSION), 'Skyhook', name, True, True)]
    assert sorted(meta_cm.data) == ['annotations.json', 'labels.json', 'packages.json']
    assert 'nodewright.bridge/contract' in meta_cm.data['labels.json']  # the node's own labels
    assert '%s/status_%s' % (PREFIX, name) in meta_cm.data['labels.json']
    for key in ('status_', 'nodeState_'):
        assert '%s/%s%s' % (PREFIX, key, name) in meta_cm.data['annotations.json']
    assert '"agentVersion"' in meta_cm.data['packages.json'] and '"driver"' in meta_cm.data['packages.json']


def _set_image(cluster, name, package_name, image):
    kclient.CustomObjectsApi(cluster.api).patch_cluster_custom_object(
        GROUP, VERSION, PLURAL, name, {'spec': {'packages': {package_name: {'image': image}}}})


def test_a_completed_rollout_reads_as_the_operators(cluster, playbooks, node, namespace, crs):
    cr = crs.create({'tuning': package(), 'driver': package(version='550.0.0')}, selector=_pin(cluster, node))
    name = cr['metadata']['name']
    run = _apply(playbooks, name, namespace)
    assert run.rc == 0, run

    status = _cr(cluster, name)['status']
    # the columns of kubectl get skyhooks and skyhook/simple-skyhook/assert.yaml
    assert status['status'] == 'complete' and status['completeNodes'] == '1/1'
    assert status['packageList'] == 'driver:550.0.0,tuning:1.2.0'
    assert status.get('nodesInProgress', 0) == 0  # omitted at zero, as the operator's omitempty
    assert status['nodeStatus'] == {node: 'complete'}
    assert set(status['nodeState'][node]) == {'driver|550.0.0', 'tuning|1.2.0'}
    assert status['observedGeneration'] == _cr(cluster, name)['metadata']['generation']
    # stamped with the version the collection speaks, as the operator's first reconcile does (the kubectl plugin
    # reads it before pause and disable); metadata only: the generation is still the one the user created
    metadata = _cr(cluster, name)['metadata']
    assert metadata['annotations'][PREFIX + '/version'] == 'v0.15.0' and metadata['generation'] == 1
    ready = _condition(status, 'Ready')
    assert (ready['status'], ready['reason']) == ('True', 'NodesConverged')  # kubectl wait --for=condition=Ready
    assert ready['message'] == '1/1 nodes complete (%s)' % node
    assert _condition(status, PREFIX + '/Ready')['status'] == 'True'
    assert status['compartmentStatuses']['__default__']['progressPercent'] == 100
    # the node, as skyhook/simple-skyhook/assert.yaml checks it
    assert _status_of(cluster, node, name) == ('complete', 'complete')
    assert _node_conditions(cluster, node, name) == {'NotReady': ('False', 'Complete'), 'Erroring': ('False', 'Not Erroring')}
    _assert_node_metadata_configmap(cluster, namespace, node, name)
    conditions = [c for c in cluster.core.read_node(node).status.conditions if c.type.startswith(PREFIX)]

    # a re-run finds the status as it should be: no write, and the node conditions are not written again
    version = _cr(cluster, name)['metadata']['resourceVersion']
    again = _apply(playbooks, name, namespace)
    assert again.rc == 0, again
    assert _cr(cluster, name)['metadata']['resourceVersion'] == version
    assert _cr(cluster, name)['status'] == status
    assert [c for c in cluster.core.read_node(node).status.conditions if c.type.startswith(PREFIX)] == conditions

    # kubectl skyhook node reset drops the nodeState only; the next run records the node waiting for its batch,
    # as the operator's reconciles settle it, even when it does not reach the node (here: no node in --limit)
    cluster.core.patch_node(node, {'metadata': {'annotations': {'%s/nodeState_%s' % (PREFIX, name): None}}})
    unreached = _apply(playbooks, name, namespace, extra_args=('--limit', 'localhost'))
    assert unreached.rc == 0, unreached
    assert _status_of(cluster, node, name) == ('waiting', 'waiting')
    assert _node_conditions(cluster, node, name)['NotReady'] == ('True', 'Incomplete')
    # kubectl skyhook node ignore, then the next run: the operator's node picker records the node blocked
    cluster.core.patch_node(node, {'metadata': {'labels': {PREFIX + '/ignore': 'true'}}})
    ignored = _apply(playbooks, name, namespace)
    assert ignored.rc == 0, ignored
    assert _status_of(cluster, node, name) == ('blocked', 'blocked')
    assert _node_conditions(cluster, node, name) == {'NotReady': ('True', 'Incomplete'), 'Erroring': ('False', 'Not Erroring')}


def test_the_failed_package_workflow(cluster, playbooks, node, namespace, crs):
    cr = crs.create({'tuning': package(image=FAIL_PKG_IMAGE)}, selector=_pin(cluster, node))
    name = cr['metadata']['name']
    run = _apply(playbooks, name, namespace)
    assert run.rc != 0
    assert 'status' in _cr(cluster, name), run

    status = _cr(cluster, name)['status']
    # skyhook/failure-skyhook/node-assert.yaml
    assert status['status'] == 'erroring' and status['completeNodes'] == '0/1' and status['nodesInProgress'] == 1
    assert (_condition(status, 'Ready')['status'], _condition(status, 'Ready')['reason']) == ('False', 'Erroring')
    # skyhook/failure-skyhook/node-assert.yaml
    assert _status_of(cluster, node, name) == ('erroring', 'erroring')
    assert _node_conditions(cluster, node, name) == {'NotReady': ('True', 'Incomplete'),
                                                     'Erroring': ('True', 'Package(s) Erroring or Unknown')}
    # the failed pod stays, as the operator leaves it: `kubectl skyhook package logs` lists pods by these labels
    failed = cluster.core.list_namespaced_pod(namespace, label_selector='%s/name=%s' % (PREFIX, name)).items
    assert [p.spec.node_name for p in failed] == [node]
    old_uid = failed[0].metadata.uid

    # fix the image, `kubectl skyhook package rerun tuning --node <node>` (drops the entry), apply again
    _set_image(cluster, name, 'tuning', 'registry.local/nodewright/tuning')
    state_key = '%s/nodeState_%s' % (PREFIX, name)
    cluster.core.patch_node(node, {'metadata': {'annotations': {state_key: None}}})
    fixed = _apply(playbooks, name, namespace)
    assert fixed.rc == 0, fixed
    pods = cluster.core.list_namespaced_pod(namespace, label_selector='%s/name=%s' % (PREFIX, name)).items
    assert old_uid not in [p.metadata.uid for p in pods]  # replaced, never adopted
    assert _cr(cluster, name)['status']['status'] == 'complete'
    assert _node_conditions(cluster, node, name) == {'NotReady': ('False', 'Complete'), 'Erroring': ('False', 'Not Erroring')}


def test_reset_of_a_node_a_failed_reboot_left_cordoned_ends_schedulable(cluster, playbooks, node, namespace, crs):
    cr = crs.create({'driver': package(image=FAIL_PKG_IMAGE, interrupt={'type': 'reboot'})}, selector=_pin(cluster, node))
    name = cr['metadata']['name']
    run = _apply(playbooks, name, namespace)
    assert run.rc != 0
    assert cluster.core.read_node(node).spec.unschedulable is True  # erroring and cordoned, as it should
    assert _cr(cluster, name)['status']['nodeStatus'] == {node: 'erroring'}

    # kubectl skyhook reset <cr>: the CLI's five annotations and the status label go; spec.unschedulable stays
    keys = ['nodeState_', 'status_', 'cordon_', 'version_', 'autoTaint_']
    cluster.core.patch_node(node, {'metadata': {'annotations': dict(('%s/%s%s' % (PREFIX, k, name), None) for k in keys),
                                                'labels': {'%s/status_%s' % (PREFIX, name): None}}})
    assert cluster.core.read_node(node).spec.unschedulable is True
    _set_image(cluster, name, 'driver', 'registry.local/nodewright/tuning')
    again = _apply(playbooks, name, namespace)
    assert again.rc == 0, again
    after = cluster.core.read_node(node)
    assert after.spec.unschedulable in (None, False), 'the reset left the node cordoned for good'
    assert not [k for k in (after.metadata.annotations or {}) if k.endswith('_' + name) and 'cordon' in k]


def test_an_admins_cordon_survives_and_a_stale_marker_does_not_strand_the_node(cluster, playbooks, node, namespace, crs):
    cluster.core.patch_node(node, {'spec': {'unschedulable': True}})  # the admin's kubectl cordon
    cr = crs.create({'driver': package(image=FAIL_PKG_IMAGE, interrupt={'type': 'reboot'})}, selector=_pin(cluster, node))
    name = cr['metadata']['name']
    assert _apply(playbooks, name, namespace).rc != 0
    assert _annotations(cluster, node).get('bridge.nodewright.io/cordon-inherited_' + name) == 'true'
    # the admin uncordons, then kubectl skyhook reset
    cluster.core.patch_node(node, {'spec': {'unschedulable': False}})
    keys = ['nodeState_', 'status_', 'cordon_', 'version_', 'autoTaint_']
    cluster.core.patch_node(node, {'metadata': {'annotations': dict(('%s/%s%s' % (PREFIX, k, name), None) for k in keys)}})
    _set_image(cluster, name, 'driver', 'registry.local/nodewright/tuning')
    assert _apply(playbooks, name, namespace).rc == 0
    after = cluster.core.read_node(node)
    assert after.spec.unschedulable in (None, False)
    assert 'bridge.nodewright.io/cordon-inherited_' + name not in (after.metadata.annotations or {})


@pytest.fixture
def three_nodes(cluster):
    """Three fresh nodes with a label of their own (the CR's selector), deleted afterwards."""
    # pylint: disable-next=import-outside-toplevel
    import launcher
    value = uuid.uuid4().hex[:8]
    names = ['n-pause-%s-%d' % (value, i) for i in range(3)]
    launcher.create_nodes(cluster.api, names, labels={'nodewright.bridge/contract': value}, start_index=900)
    launcher.wait_nodes_ready(cluster.api, names, timeout=60)
    yield names, {'nodewright.bridge/contract': value}
    for name in names:
        try:
            cluster.core.delete_node(name)
        except kclient.ApiException:
            pass


class CreationRecorder:
    """The creation resourceVersion of every pod added in a namespace, by watch (etcd's versions are ordered)."""

    def __init__(self, cluster, namespace):
        self.core = kclient.CoreV1Api(cluster.api)
        self.namespace = namespace
        self.created = {}
        self.stop = threading.Event()
        self.rv = self.core.list_namespaced_pod(namespace).metadata.resource_version
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stop.is_set():
            for event in kwatch.Watch().stream(self.core.list_namespaced_pod, self.namespace, resource_version=self.rv,
                                               timeout_seconds=2):
                pod = event['object']
                self.rv = pod.metadata.resource_version
                if event['type'] == 'ADDED':
                    self.created.setdefault(pod.metadata.uid, (pod.metadata.name, int(pod.metadata.resource_version)))

    def finish(self):
        self.stop.set()
        self.thread.join(timeout=10)
        return self.created


def _start_until_a_pod(playbooks, recorder, name, namespace, stage_timeout):
    """apply of the CR started in the background, returned once its first package pod exists."""
    run = playbooks.start('nodewright.bridge.apply', extra_vars={
        'nodewright_cr_name': name, 'nodewright_namespace': namespace, 'nodewright_stage_timeout': stage_timeout})
    deadline = time.time() + 120
    while not recorder.created and time.time() < deadline:
        time.sleep(0.2)
    assert recorder.created, 'no package pod started'
    return run


def test_a_pause_during_a_run_starts_no_new_pod_and_a_resume_continues(cluster, playbooks, three_nodes, namespace, crs):
    nodes, selector = three_nodes
    cr = crs.create({'tuning': package(image='registry.local/slow-3s/tuning')}, selector=selector,
                    interruptionBudget={'count': 1})
    name = cr['metadata']['name']
    recorder = CreationRecorder(cluster, namespace)
    run = _start_until_a_pod(playbooks, recorder, name, namespace, stage_timeout=90)
    # kubectl skyhook pause <cr>
    paused = kclient.CustomObjectsApi(cluster.api).patch_cluster_custom_object(
        GROUP, VERSION, PLURAL, name, {'metadata': {'annotations': {PREFIX + '/pause': 'true'}}})
    pause_rv = int(paused['metadata']['resourceVersion'])
    out, dummy = run.communicate(timeout=300)
    created = recorder.finish()
    after = sorted(pod for pod, rv in created.values() if rv > pause_rv)
    assert after == [], 'pods created after the pause: %s\n%s' % (after, out[-4000:])
    assert run.returncode != 0 and 'is paused (skyhook.nvidia.com/pause=true): no new pod starts' in out
    assert 'NODEWRIGHT HELD' in out
    assert _cr(cluster, name)['status']['status'] == 'paused'
    untouched = [n for n in nodes if '%s/nodeState_%s' % (PREFIX, name) not in _annotations(cluster, n)]
    assert len(untouched) == 2, 'the batches after the paused one started'

    # kubectl skyhook resume <cr>: the next run continues where the pause stopped it
    kclient.CustomObjectsApi(cluster.api).patch_cluster_custom_object(
        GROUP, VERSION, PLURAL, name, {'metadata': {'annotations': {PREFIX + '/pause': None}}})
    resumed = _apply(playbooks, name, namespace)
    assert resumed.rc == 0, resumed
    status = _cr(cluster, name)['status']
    assert status['status'] == 'complete' and status['completeNodes'] == '3/3'


def test_a_fix_made_while_a_stage_hangs_lands_in_the_same_run(cluster, playbooks, node, namespace, crs):
    # upstream e2e skyhook/validate-packages: a package that hangs is fixed in the CR while its stage runs; the
    # operator's reconciles compare the running pod with the CR, delete it and run the fixed one
    cr = crs.create({'tuning': package(image='registry.local/slow-10m/tuning')}, selector=_pin(cluster, node))
    name = cr['metadata']['name']
    recorder = CreationRecorder(cluster, namespace)
    started = time.time()
    run = _start_until_a_pod(playbooks, recorder, name, namespace, stage_timeout=600)
    _set_image(cluster, name, 'tuning', 'registry.local/nodewright/tuning')
    out, dummy = run.communicate(timeout=300)
    seconds = time.time() - started
    created = recorder.finish()
    assert run.returncode == 0, out[-4000:]
    assert seconds < 120, 'the run waited for the hanging stage (%.0f s)' % seconds
    status = _cr(cluster, name)['status']
    assert status['status'] == 'complete' and status['nodeState'][node]['tuning|1.2.0']['image'] == \
        'registry.local/nodewright/tuning'
    assert len(created) >= 2  # the hanging pod, then the fixed one
    leftover = [p.metadata.name for p in cluster.core.list_namespaced_pod(namespace).items
                if 'slow-10m' in p.spec.init_containers[0].image]
    assert leftover == []
