# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The apply playbook on a cluster that serves the v0.20 CRDs (nodewright.nvidia.com, and the legacy group beside them as
a v0.20 chart installs it; for the last test only nodewright.nvidia.com, as v0.21's chart leaves it), as the shipped
identities; ``nodewright_api`` left at auto.

No v0.20 operator can be built here (docs/api-generations.md), so the nodes "as a v0.20 operator leaves them" are
written from its source: the keys of operator/internal/wrapper/node.go (NVIDIA/nodewright @042b7591: nodeState_,
status_ annotation and label, version_ with the operator's version) and the nodeState JSON of
operator/api/v1alpha1 PackageStatus (Go encoding/json: map keys sorted, fields in struct order, omitempty), and a
legacy node as its migration finds it (operator/internal/wrapper/zz.migration.0.18.0.go @8127a97c).
"""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

import pytest
from kubernetes import client as kclient

import helpers  # noqa: E402  (tests/cluster, on the path by conftest)
import launcher  # noqa: E402  (tests/cluster, on the path by conftest)

NW, SH = 'nodewright.nvidia.com', 'skyhook.nvidia.com'
TUNING = {'version': '1.0.0', 'image': 'registry.local/nodewright/tuning', 'configMap': {'a.conf': 'x=1\n'},
          'stageTimeout': '5m'}
DRIVER = {'version': '2.0.0', 'image': 'registry.local/nodewright/driver',
          'interrupt': {'type': 'service', 'services': ['containerd']}}
SETTINGS = {'nodewright_stage_timeout': 120, 'nodewright_interrupt_timeout': 120, 'nodewright_drain_timeout': 120,
            # the pods stay, so that the test counts every pod the runs created
            'nodewright_delete_pod': 'never'}


def _entry(name, pkg, stage, state='complete'):
    # PackageStatus in struct order: name, version, image, containerSHA (omitempty), stage, state, restarts (omitempty)
    return '{"name":%s,"version":%s,"image":%s,"stage":%s,"state":%s}' % tuple(
        json.dumps(v) for v in (name, pkg['version'], pkg['image'], stage, state))


def _node_state(entries):
    """The nodeState annotation: a JSON map "<package>|<version>" -> PackageStatus, keys sorted, no spaces."""
    return '{%s}' % ','.join('%s:%s' % (json.dumps(key), text) for key, text in sorted(entries.items()))


COMPLETE = _node_state({'driver|2.0.0': _entry('driver', DRIVER, 'post-interrupt'),
                        'tuning|1.0.0': _entry('tuning', TUNING, 'config')})
# driver's stages up to config done; its interrupt and post-interrupt are left
MID_STAGE = _node_state({'driver|2.0.0': _entry('driver', DRIVER, 'config'),
                         'tuning|1.0.0': _entry('tuning', TUNING, 'config')})


class Fleet:
    """Nodes of one test and its NodeWright CR, removed afterwards."""

    def __init__(self, v020, names):
        self.cluster = v020.cluster
        self.custom = kclient.CustomObjectsApi(self.cluster.api)
        tag = uuid.uuid4().hex[:6]
        self.cr = f'nw-{tag}'
        self.nodes = [f'{n}-{tag}' for n in names]
        launcher.create_nodes(self.cluster.api, self.nodes, labels={'pool': self.cr})
        launcher.wait_nodes_ready(self.cluster.api, self.nodes, timeout=60)

    def create_cr(self, drain=None):
        doc = {'apiVersion': f'{NW}/v1alpha1', 'kind': 'NodeWright', 'metadata': {'name': self.cr},
               'spec': {'nodeSelectors': {'matchLabels': {'pool': self.cr}}, 'interruptionBudget': {'count': 1},
                        # v0.20 fields (the CRD on the API server validates them as well)
                        'drainConfig': drain or {'timeout': '2m', 'gracePeriod': '5s'},
                        'packages': {'tuning': dict(TUNING), 'driver': dict(DRIVER)}}}
        return self.custom.create_cluster_custom_object(NW, 'v1alpha1', 'nodewrights', doc)

    def annotate(self, node, annotations, labels=None):
        self.cluster.core.patch_node(node, {'metadata': {'annotations': annotations, 'labels': labels or {}}})

    def node(self, name):
        return self.cluster.core.read_node(name)

    def pods(self):
        """(node, pod name) of every pod of the CR in namespace nodewright (the runs delete none: delete_pod never; under
        the v0.18+ contract they are the pods of the stages' Jobs)."""
        listing = self.cluster.core.list_namespaced_pod('nodewright', label_selector=f'{NW}/name={self.cr}')
        return sorted((p.spec.node_name, p.metadata.name) for p in listing.items)

    def get_cr(self):
        return self.custom.get_cluster_custom_object(NW, 'v1alpha1', 'nodewrights', self.cr)

    def close(self):
        try:
            self.custom.delete_cluster_custom_object(NW, 'v1alpha1', 'nodewrights', self.cr)
        except kclient.ApiException:
            pass
        for name in self.nodes:
            try:
                self.cluster.core.delete_node(name)
            except kclient.ApiException:
                pass
        self.cluster.core.delete_collection_namespaced_pod('nodewright', label_selector=f'{NW}/name={self.cr}')


@pytest.fixture
def fleet(v020):
    made = []

    def make(*names):
        made.append(Fleet(v020, names))
        return made[-1]
    yield make
    for one in made:
        one.close()


def _apply(v020, fleet_, **extra):
    result = v020.playbooks.run('nodewright.bridge.apply', extra_vars=dict(SETTINGS, nodewright_cr_name=fleet_.cr, **extra))
    assert result.rc == 0, result
    return result


def _legacy_keys(node):
    meta = node.metadata
    keys = list(meta.annotations or {}) + list(meta.labels or {}) + [c.type for c in node.status.conditions or []]
    return sorted(k for k in keys if k.startswith(SH + '/'))


def test_apply_on_a_v020_cluster_writes_only_nodewright_keys_and_a_rerun_creates_nothing(v020, fleet):
    nodes = fleet('a', 'b')
    nodes.create_cr()
    _apply(v020, nodes)
    pods = nodes.pods()
    # tuning apply + config, driver apply + config + its interrupt + post-interrupt, on each node
    assert sorted(node for node, dummy in pods) == sorted(nodes.nodes * 6), pods
    for name in nodes.nodes:
        node = nodes.node(name)
        annotations, labels = node.metadata.annotations, node.metadata.labels
        assert _legacy_keys(node) == [], 'no skyhook.nvidia.com key on a v0.20 cluster'
        state = json.loads(annotations[f'{NW}/nodeState_{nodes.cr}'])
        assert {k: (v['stage'], v['state']) for k, v in state.items()} == {
            'driver|2.0.0': ('post-interrupt', 'complete'), 'tuning|1.0.0': ('config', 'complete')}
        assert annotations[f'{NW}/status_{nodes.cr}'] == labels[f'{NW}/status_{nodes.cr}'] == 'complete'
        assert annotations[f'{NW}/version_{nodes.cr}'] == 'v0.20.0'
        assert f'{NW}/cordon_{nodes.cr}' not in annotations and not node.spec.unschedulable
        # nothing to drain: no drainStart_ / drainBlocked_ left
        assert not [k for k in annotations if k.startswith((f'{NW}/drainStart_', f'{NW}/drainBlocked_'))]
        conditions = {c.type: c.reason for c in node.status.conditions}
        assert conditions[f'{NW}/{nodes.cr}/NotReady'] == 'Complete'
    for pod in v020.cluster.core.list_namespaced_pod('nodewright', label_selector=f'{NW}/name={nodes.cr}').items:
        assert not [k for k in list(pod.metadata.labels) + list(pod.metadata.annotations or {}) if k.startswith(SH)]
        # every stage in a Job, as the v0.18+ operator runs it: no bare stage pod
        assert [ref.kind for ref in pod.metadata.owner_references or []] == ['Job'], pod.metadata.name
    jobs = kclient.BatchV1Api(v020.cluster.api).list_namespaced_job('nodewright', label_selector=f'{NW}/name={nodes.cr}')
    assert len(jobs.items) == len(pods)
    cr = nodes.get_cr()
    assert cr['status']['status'] == 'complete'
    types = {c['type'] for c in cr['status']['conditions']}
    assert {'Ready', f'{NW}/Ready'} <= types and not [t for t in types if t.startswith(SH)]
    assert cr['metadata']['annotations'][f'{NW}/version'] == 'v0.20.0'

    _apply(v020, nodes)
    assert nodes.pods() == pods, 'a second run creates no pod'


def test_nodes_a_v020_operator_left_and_a_legacy_node_are_not_rerun(v020, fleet):
    nodes = fleet('done', 'mid', 'legacy')
    done, mid, legacy = nodes.nodes
    cr = nodes.cr
    nodes.annotate(done, {f'{NW}/nodeState_{cr}': COMPLETE, f'{NW}/status_{cr}': 'complete', f'{NW}/version_{cr}': 'v0.20.0'},
                   {f'{NW}/status_{cr}': 'complete'})
    nodes.annotate(mid, {f'{NW}/nodeState_{cr}': MID_STAGE, f'{NW}/status_{cr}': 'in_progress', f'{NW}/version_{cr}': 'v0.20.0'},
                   {f'{NW}/status_{cr}': 'in_progress'})
    # what a v0.15 operator (or the collection) left, before the v0.20 operator's migration copied it
    nodes.annotate(legacy, {f'{SH}/nodeState_{cr}': COMPLETE, f'{SH}/status_{cr}': 'complete', f'{SH}/version_{cr}': 'v0.15.0'},
                   {f'{SH}/status_{cr}': 'complete', f'{SH}/pool': 'users-own'})
    nodes.create_cr()
    _apply(v020, nodes)
    pods = nodes.pods()
    assert [node for node, dummy in pods] == [mid, mid], 'only the mid-stage node runs, and only what is left: %s' % pods
    # the interrupt pod is named for the CR, stage and interrupt type (pod_layout.interrupt_pod_name), the other for the package
    assert sorted(name.split(cr + '-', 1)[1].rsplit('-' + mid, 1)[0] for dummy, name in pods) == [
        'driver-2-0-0-post-interrupt', 'interrupt-service'], pods
    for name in nodes.nodes:
        state = json.loads(nodes.node(name).metadata.annotations[f'{NW}/nodeState_{cr}'])
        assert {v['state'] for v in state.values()} == {'complete'}, (name, state)
    node = nodes.node(legacy)
    annotations, labels = node.metadata.annotations, node.metadata.labels
    # adopted as the v0.20 operator's migration adopts it: copied under the new prefix, the legacy keys kept for its
    # rollback window, the user's own skyhook.nvidia.com/pool label not the operator's to copy
    assert annotations[f'{NW}/nodeState_{cr}'] == annotations[f'{SH}/nodeState_{cr}'] == COMPLETE
    assert annotations[f'{NW}/version_{cr}'] == 'v0.20.0' and annotations[f'{SH}/version_{cr}'] == 'v0.15.0'
    assert labels[f'{NW}/status_{cr}'] == labels[f'{SH}/status_{cr}'] == 'complete'
    assert f'{NW}/pool' not in labels
    assert nodes.get_cr()['status']['status'] == 'complete'


def test_a_legacy_node_state_that_cannot_be_read_is_named_and_nothing_is_written(v020, fleet):
    nodes = fleet('bad')
    cr = nodes.cr
    bad = nodes.nodes[0]
    nodes.annotate(bad, {f'{SH}/nodeState_{cr}': '{not json'})

    def written(node):
        # what a run could write: the keys under the operators' and the collection's prefixes, the cordon, the taints
        # (kwok's heartbeats and the control plane's own labels change the rest of the node meanwhile)
        ours = (NW + '/', SH + '/', 'bridge.nodewright.io/')
        keys = dict((k, v) for part in (node.metadata.annotations, node.metadata.labels) for k, v in (part or {}).items()
                    if k.startswith(ours))
        # (the node lifecycle controller lifts a new node's not-ready taint in its own time: only our taints count)
        taints = sorted(t.key for t in node.spec.taints or [] if t.key.split('/')[0] in (NW, SH))
        return keys, node.spec.unschedulable, taints, sorted(
            c.type for c in node.status.conditions or [] if c.type.startswith(ours))

    before = written(nodes.node(bad))
    nodes.create_cr()
    result = v020.playbooks.run('nodewright.bridge.apply', extra_vars=dict(SETTINGS, nodewright_cr_name=cr))
    assert result.rc != 0, result
    assert f'{SH}/nodeState_{cr}' in result.stdout, result.stdout[-3000:]
    assert written(nodes.node(bad)) == before and nodes.pods() == []


def test_runtime_required_cordon_after_cordons_the_node_as_its_taint_comes_off(v020, fleet):
    nodes = fleet('rr')
    name, cr = nodes.nodes[0], nodes.cr
    v020.cluster.core.patch_node(name, {'spec': {'taints': [
        {'key': NW, 'value': 'runtime-required', 'effect': 'NoSchedule'}]}})
    doc = {'apiVersion': f'{NW}/v1alpha1', 'kind': 'NodeWright', 'metadata': {'name': cr},
           'spec': {'nodeSelectors': {'matchLabels': {'pool': cr}}, 'runtimeRequired': True,
                    'runtimeRequiredCordonAfter': True, 'packages': {'tuning': dict(TUNING)}}}
    nodes.custom.create_cluster_custom_object(NW, 'v1alpha1', 'nodewrights', doc)
    _apply(v020, nodes)
    node = nodes.node(name)
    assert not [t for t in node.spec.taints or [] if t.key == NW], 'the runtime-required taint is off'
    assert node.spec.unschedulable and node.metadata.annotations[f'{NW}/runtimeRequiredCordon'] == 'true'
    assert f'{NW}/cordon_{cr}' not in node.metadata.annotations, 'the persistent cordon is no CR\'s cordon'
    # an admin uncordons by hand: the mark goes at the next run, the node stays schedulable
    v020.cluster.core.patch_node(name, {'spec': {'unschedulable': False}})
    _apply(v020, nodes)
    node = nodes.node(name)
    assert not node.spec.unschedulable and f'{NW}/runtimeRequiredCordon' not in node.metadata.annotations


def test_a_drain_config_without_force_is_held_by_an_unmanaged_pod_and_the_cr_says_why(v020, fleet):
    """spec.drainConfig.force false (NVIDIA/nodewright drain.go @1211486a DecidePod): a pod without a controller blocks
    the drain; the node records it in drainBlocked_<cr> (skyhook_controller.go @01cc2f2d) and the CR's DrainBlocked
    condition names it (cluster_state_v2.go @01cc2f2d UpdateDrainBlockedCondition); both go once it has left."""
    nodes = fleet('held')
    name, cr = nodes.nodes[0], nodes.cr
    nodes.create_cr(drain={'force': False})
    solo = f'solo-{cr}'
    core = v020.cluster.core
    core.create_namespaced_pod('default', {'metadata': {'name': solo}, 'spec': {
        'nodeName': name, 'containers': [{'name': 'main', 'image': 'registry.local/app:1'}]}})
    v020.cluster.wait_pod('default', solo, lambda p: p.status.phase == 'Running')
    try:
        settings = dict(SETTINGS, nodewright_cr_name=cr, nodewright_drain_timeout=5)
        held = v020.playbooks.run('nodewright.bridge.apply', extra_vars=settings)
        assert held.rc != 0, held
        annotations = nodes.node(name).metadata.annotations
        assert json.loads(annotations[f'{NW}/drainBlocked_{cr}']) == [
            {'namespace': 'default', 'name': solo, 'reason': 'UnmanagedPod'}]
        assert f'{NW}/drainStart_{cr}' in annotations
        conditions = {c['type']: c for c in nodes.get_cr()['status']['conditions']}
        assert conditions['DrainBlocked']['status'] == 'True' and conditions['DrainBlocked']['reason'] == 'UnmanagedPod'
        assert conditions['DrainBlocked']['message'] == f'1/1 nodes blocked draining ({name}); default/{solo} on {name}: UnmanagedPod'
    finally:
        core.delete_namespaced_pod(solo, 'default', grace_period_seconds=0)
    helpers.wait_for(lambda: solo not in [p.metadata.name for p in core.list_namespaced_pod('default').items], 30,
                     what='the unmanaged pod to go')
    _apply(v020, nodes)
    annotations = nodes.node(name).metadata.annotations
    assert not [k for k in annotations if k.startswith((f'{NW}/drainStart_', f'{NW}/drainBlocked_'))]
    assert 'DrainBlocked' not in {c['type'] for c in nodes.get_cr()['status']['conditions']}


def test_an_upgrade_over_nodes_the_collection_rolled_on_the_legacy_contract_reruns_nothing(v020, fleet):
    """The v0.15 days: a Skyhook, rolled by the collection speaking the legacy contract. The upgrade: the v0.18+
    operator mirrors it into a NodeWright of the same name (mirror_controller.go @273d50a0: stamped mirrored-from).
    The next run (auto) speaks the new contract, adopts the nodes by the migration copy, and starts no Job."""
    nodes = fleet('up1', 'up2')
    cr = nodes.cr
    spec = {'nodeSelectors': {'matchLabels': {'pool': cr}}, 'interruptionBudget': {'count': 1},
            'packages': {'tuning': dict((k, v) for k, v in TUNING.items() if k != 'stageTimeout'), 'driver': dict(DRIVER)}}
    nodes.custom.create_cluster_custom_object(SH, 'v1alpha1', 'skyhooks', {
        'apiVersion': f'{SH}/v1alpha1', 'kind': 'Skyhook', 'metadata': {'name': cr}, 'spec': spec})
    core = v020.cluster.core
    try:
        _apply(v020, nodes, nodewright_api='skyhook', nodewright_namespace='skyhook')
        legacy = dict((n, nodes.node(n).metadata.annotations[f'{SH}/nodeState_{cr}']) for n in nodes.nodes)
        assert all(f'{NW}/nodeState_{cr}' not in nodes.node(n).metadata.annotations for n in nodes.nodes)
        nodes.custom.create_cluster_custom_object(NW, 'v1alpha1', 'nodewrights', {
            'apiVersion': f'{NW}/v1alpha1', 'kind': 'NodeWright', 'spec': spec, 'metadata': {
                'name': cr, 'annotations': {f'{NW}/mirrored-from': cr, f'{NW}/mirrored-generation': '1'}}})
        _apply(v020, nodes)  # auto: both groups served, the mirror is the v0.18+ operator's trace
        assert nodes.pods() == [], 'no stage runs again after the upgrade'
        for name in nodes.nodes:
            annotations = nodes.node(name).metadata.annotations
            assert annotations[f'{NW}/nodeState_{cr}'] == annotations[f'{SH}/nodeState_{cr}'] == legacy[name]
            assert annotations[f'{NW}/version_{cr}'] == 'v0.20.0' and annotations[f'{SH}/version_{cr}'] == 'v0.15.0'
        assert nodes.get_cr()['status']['status'] == 'complete'
    finally:
        nodes.custom.delete_cluster_custom_object(SH, 'v1alpha1', 'skyhooks', cr)
        core.delete_collection_namespaced_pod('skyhook', label_selector=f'{SH}/name={cr}')


def test_an_erroring_and_a_drain_blocked_node_a_v020_operator_left_run_only_what_is_left(v020, fleet):
    """Erroring: driver's apply failed there (the operator retries an erroring stage from where it failed).
    Drain-blocked: cordoned by the CR for driver's interrupt, its drain held by a pod since gone
    (drainStart_ / drainBlocked_ as skyhook_controller.go @01cc2f2d writes them). Neither re-runs tuning."""
    nodes = fleet('err', 'held')
    err, held = nodes.nodes
    cr = nodes.cr
    erroring = _node_state({'driver|2.0.0': _entry('driver', DRIVER, 'apply', 'erroring'),
                            'tuning|1.0.0': _entry('tuning', TUNING, 'config')})
    nodes.annotate(err, {f'{NW}/nodeState_{cr}': erroring, f'{NW}/status_{cr}': 'erroring', f'{NW}/version_{cr}': 'v0.20.0'},
                   {f'{NW}/status_{cr}': 'erroring'})
    blocked = json.dumps([{'namespace': 'default', 'name': 'gone', 'reason': 'PodDisruptionBudget'}], separators=(',', ':'))
    # a drain that began a moment ago (RFC 3339 with nanoseconds), well within the CR's drainConfig.timeout
    started = time.strftime('%Y-%m-%dT%H:%M:%S.123456789Z', time.gmtime())
    nodes.annotate(held, {f'{NW}/nodeState_{cr}': MID_STAGE, f'{NW}/status_{cr}': 'in_progress', f'{NW}/version_{cr}': 'v0.20.0',
                          f'{NW}/cordon_{cr}': 'true', f'{NW}/drainStart_{cr}': started,
                          f'{NW}/drainBlocked_{cr}': blocked}, {f'{NW}/status_{cr}': 'in_progress'})
    v020.cluster.core.patch_node(held, {'spec': {'unschedulable': True}})
    nodes.create_cr()
    _apply(v020, nodes)
    ran = {}
    for node, name in nodes.pods():
        ran.setdefault(node, []).append(name.split(cr + '-', 1)[1].rsplit('-' + node, 1)[0])
    assert sorted(ran[err]) == ['driver-2-0-0-apply', 'driver-2-0-0-config', 'driver-2-0-0-post-interrupt', 'interrupt-service']
    assert sorted(ran[held]) == ['driver-2-0-0-post-interrupt', 'interrupt-service']
    for name in nodes.nodes:
        node = nodes.node(name)
        annotations = node.metadata.annotations
        assert {v['state'] for v in json.loads(annotations[f'{NW}/nodeState_{cr}']).values()} == {'complete'}
        assert not node.spec.unschedulable and f'{NW}/cordon_{cr}' not in annotations
        assert f'{NW}/drainBlocked_{cr}' not in annotations and f'{NW}/drainStart_{cr}' not in annotations


# ------------------------------------------------------------ a cluster as v0.21 leaves it: only nodewright.nvidia.com

LEGACY_CRDS = (f'skyhooks.{SH}', f'deploymentpolicies.{SH}')
ONLY_NEW = 'auto: only nodewright.nvidia.com/v1alpha1 nodewrights is served: nodewright'


def _serves_legacy(cluster):
    """Whether discovery still names the legacy group or serves its resources."""
    if SH in {g.name for g in kclient.ApisApi(cluster.api).get_api_versions().groups}:
        return True
    try:
        return bool(kclient.CustomObjectsApi(cluster.api).get_api_resources(SH, 'v1alpha1').resources)
    except kclient.ApiException as exc:
        if exc.status == 404:
            return False
        raise


@pytest.fixture
def only_nodewright(v020):
    """The v0.20 cluster as v0.21's chart leaves it: the legacy CRDs deleted (their objects with them), so only
    nodewright.nvidia.com (NodeWright, DeploymentPolicy) is served; installed again afterwards for the tests after it
    (cheaper than a cluster of its own: a second or two each way)."""
    ext = kclient.ApiextensionsV1Api(v020.cluster.api)
    try:
        for name in LEGACY_CRDS:
            ext.delete_custom_resource_definition(name)
        helpers.wait_for(lambda: not _serves_legacy(v020.cluster), 60, what='the legacy group to be served no more')
        names = {c.metadata.name for c in ext.list_custom_resource_definition().items}
        assert names == {f'nodewrights.{NW}', f'deploymentpolicies.{NW}'}, names
        yield v020
    finally:
        launcher.install_crds(v020.cluster.api, launcher.crds_dir())
        helpers.wait_for(lambda: _serves_legacy(v020.cluster), 60, what='the legacy group to be served again')


def _legacy_traces(node):
    """Every key, condition and taint under the legacy group on a node (a taint's key is the group itself)."""
    meta = node.metadata
    keys = list(meta.annotations or {}) + list(meta.labels or {}) + [c.type for c in node.status.conditions or []]
    taints = [f'taint {t.key}={t.value}:{t.effect}' for t in node.spec.taints or []
              if t.key == SH or t.key.startswith(SH + '/')]
    return sorted(k for k in keys if k.startswith(SH + '/')) + taints


def _legacy_requests(audit_log, since):
    """(verb, path, code) of every request the collection (its User-Agent) sent to the legacy group after ``since``."""
    seen = []
    with open(audit_log, encoding='utf-8') as log:
        log.seek(since)
        for line in log:
            if f'/apis/{SH}/' not in line or '"nodewright.bridge/' not in line:
                continue
            event = json.loads(line)
            if event.get('stage') == 'ResponseComplete' and event.get('userAgent', '').startswith('nodewright.bridge/'):
                seen.append((event['verb'], event['requestURI'].split('?', 1)[0], event['responseStatus'].get('code')))
    return seen


def test_a_cluster_serving_only_the_nodewright_group_as_v021_leaves_it_rolls_out_without_a_legacy_key(
        only_nodewright, fleet):
    """issue 45: v0.21's chart drops skyhook.nvidia.com. auto picks nodewright from discovery alone; the run completes 6
    nodes (a service interrupt each, under a DeploymentPolicy of the new group) and a runtimeRequired CR lifts the new
    taint (one node tainted beforehand, one by autoTaintNewNodes); nothing under the legacy prefix is written anywhere,
    the only requests to the legacy group are reads answered 404, and no line of the output names it."""
    v020 = only_nodewright
    nodes, rr = fleet('a', 'b', 'c', 'd', 'e', 'f'), fleet('rr', 'new')
    custom, core = nodes.custom, v020.cluster.core
    policy = f'{nodes.cr}-policy'
    custom.create_cluster_custom_object(NW, 'v1alpha1', 'deploymentpolicies', {
        'apiVersion': f'{NW}/v1alpha1', 'kind': 'DeploymentPolicy', 'metadata': {'name': policy},
        'spec': {'default': {'budget': {'count': 3}, 'strategy': {'fixed': {'initialBatch': 3}}}}})
    core.patch_node(rr.nodes[0], {'spec': {'taints': [
        {'key': NW, 'value': 'runtime-required', 'effect': 'NoSchedule'}]}})
    specs = ((nodes, {'deploymentPolicy': policy, 'packages': {'tuning': dict(TUNING), 'driver': dict(DRIVER)}}),
             (rr, {'runtimeRequired': True, 'autoTaintNewNodes': True, 'packages': {'tuning': dict(TUNING)}}))
    for fleet_, spec in specs:
        custom.create_cluster_custom_object(NW, 'v1alpha1', 'nodewrights', {
            'apiVersion': f'{NW}/v1alpha1', 'kind': 'NodeWright', 'metadata': {'name': fleet_.cr},
            'spec': dict(spec, nodeSelectors={'matchLabels': {'pool': fleet_.cr}})})
    since = Path(v020.cluster.info.audit_log).stat().st_size
    try:
        result = v020.playbooks.run('nodewright.bridge.apply', extra_args=('-v',), extra_vars=dict(
            SETTINGS, nodewright_api='auto', nodewright_cr_name=[nodes.cr, rr.cr]))
    finally:
        custom.delete_cluster_custom_object(NW, 'v1alpha1', 'deploymentpolicies', policy)
    assert result.rc == 0, result
    output = result.stdout + result.stderr
    # the plan's choice (-v shows the plan and the fact the later tasks pass on), from discovery alone
    assert ONLY_NEW in output and '"nw_api": "nodewright"' in output, output[-4000:]
    # not a word of the missing group: no warning, error or note names it (ansible's own warnings are not about it:
    # the third-party strategy's deprecation, GroupTuple in record_nodes.yml, the empty nw_apply_edits group)
    assert SH not in output, [line for line in output.splitlines() if SH in line][:10]
    warnings = [line for line in output.splitlines() if 'WARNING' in line]
    assert not [w for w in warnings if any(word in w.lower() for word in ('skyhook', '404', 'not found', 'served'))], \
        warnings

    for name in nodes.nodes + rr.nodes:
        node = nodes.node(name)
        assert _legacy_traces(node) == [], name
        assert not node.spec.unschedulable and not [t for t in node.spec.taints or [] if t.key == NW], name
    for fleet_ in (nodes, rr):
        for name in fleet_.nodes:
            annotations, labels = nodes.node(name).metadata.annotations, nodes.node(name).metadata.labels
            assert annotations[f'{NW}/status_{fleet_.cr}'] == labels[f'{NW}/status_{fleet_.cr}'] == 'complete', name
            assert annotations[f'{NW}/version_{fleet_.cr}'] == 'v0.20.0'
        cr = fleet_.get_cr()
        size = len(fleet_.nodes)
        assert (cr['status']['status'], cr['status']['completeNodes']) == ('complete', f'{size}/{size}'), cr['status']
        assert not [t['type'] for t in cr['status']['conditions'] if t['type'].startswith(SH)]
        assert not [k for k in list(cr['metadata'].get('annotations') or {}) + cr['metadata'].get('finalizers', [])
                    if k.startswith(SH)]
    # the new node was tainted for the runtimeRequired CR by the new marker (the taint itself is off again)
    assert nodes.node(rr.nodes[1]).metadata.annotations[f'{NW}/autoTaint_{NW}'] == 'true'
    # every stage in a Job in namespace nodewright, none of its keys under the legacy prefix
    pods = core.list_namespaced_pod('nodewright', label_selector=f'{NW}/name in ({nodes.cr},{rr.cr})').items
    assert len(pods) == 6 * 6 + 2 * 2, len(pods)
    for pod in pods:
        assert not [k for k in list(pod.metadata.labels) + list(pod.metadata.annotations or {}) if k.startswith(SH)]
    assert not core.list_pod_for_all_namespaces(label_selector=f'{SH}/name').items

    # what the collection asked of the legacy group: its discovery (auto) and the Skyhook of each CR's name (the
    # same-name comparison), each answered 404; never a write, never its DeploymentPolicy (read in the new group)
    legacy = _legacy_requests(v020.cluster.info.audit_log, since)
    asked = {f'/apis/{SH}/v1alpha1'} | {f'/apis/{SH}/v1alpha1/skyhooks/{cr}' for cr in (nodes.cr, rr.cr)}
    assert legacy and {(verb, code) for verb, dummy, code in legacy} == {('get', 404)}, legacy
    assert {path for dummy, path, code in legacy} <= asked, legacy
