# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""package_stage under the v0.18+ contract on a real control plane: the stage runs in a batch/v1 Job.

A cluster of its own that serves only the v0.20 CRDs (nodewright.nvidia.com), so that ``nodewright_api: auto`` picks
the v0.18+ contract. Its kube-controller-manager runs the Job controller and the garbage collector; kwok runs the
Job's pods (pod-ready, then the stock pod-complete stage for pods a Job owns; an image with "fail" fails its copy
init container, pod-init-fail.yaml). job_run.JobRun creates the Job job_layout lays out, watches it to its verdict,
records the node under ``nodewright.nvidia.com/nodeState_<cr>``, marks the Job recorded and applies delete_pod to it.
"""

from __future__ import annotations

import json
import uuid

import helpers
import pytest
from kubernetes import client as kclient
from module_runner import checkout_code
from nodewright_fixtures import FAIL_PKG_IMAGE, PKG_IMAGE

GROUP, VERSION, PLURAL = 'nodewright.nvidia.com', 'v1alpha1', 'nodewrights'
NAMESPACE = 'nodewright'
PREFIX = 'nodewright.nvidia.com/'


@pytest.fixture(scope='module')
def v020(v020):  # pylint: disable=redefined-outer-name
    """The session's v0.20 CRD cluster (conftest: its 2 kwok nodes, the namespace nodewright) with the clients here."""
    cluster = v020.cluster
    cluster.runner = v020.modules
    cluster.custom = kclient.CustomObjectsApi(cluster.api)
    cluster.batch = kclient.BatchV1Api(cluster.api)
    return cluster


@pytest.fixture(scope='module')
def layout(tmp_path_factory):
    """job_layout, pod_layout and cr_validation of this checkout (the names and labels the Job must have)."""
    with checkout_code(tmp_path_factory.mktemp('collection'), 'plugins.module_utils.contract.job_layout',
                       'plugins.module_utils.contract.pod_layout', 'plugins.module_utils.model.cr_validation',
                       'plugins.module_utils.model.api_generation') as code:
        yield dict(zip(('job_layout', 'pod_layout', 'cr_validation', 'api_generation'), code))


def _nodewright(cluster, image, **extra):
    """A NodeWright CR of one package (an image given as a bare repository, its version apart)."""
    name = f'jobs-{uuid.uuid4().hex[:6]}'
    doc = {'apiVersion': f'{GROUP}/{VERSION}', 'kind': 'NodeWright', 'metadata': {'name': name},
           'spec': {'nodeSelectors': {'matchLabels': {'nodewright.bridge/none': 'true'}},
                    'packages': {'tuning': dict({'version': '1.2.0', 'image': image, 'stageTimeout': '20m'}, **extra)}}}
    return cluster.custom.create_cluster_custom_object(GROUP, VERSION, PLURAL, doc)


def _state(cluster, node, cr_name):
    annotations = cluster.core.read_node(node).metadata.annotations or {}
    assert f'skyhook.nvidia.com/nodeState_{cr_name}' not in annotations
    text = annotations.get(f'{PREFIX}nodeState_{cr_name}')
    return json.loads(text) if text else {}


def _jobs(cluster, cr_name):
    return cluster.batch.list_namespaced_job(NAMESPACE, label_selector=f'{PREFIX}name={cr_name}').items


def _bare_pods(cluster):
    """Pods in the namespace that no Job owns (a bare stage pod, as v0.15 runs it)."""
    return [p for p in cluster.core.list_namespaced_pod(NAMESPACE).items
            if not any(ref.kind == 'Job' for ref in p.metadata.owner_references or [])]


def test_a_stage_runs_in_the_operators_job_and_is_recorded_under_the_new_keys(v020, layout):
    node = v020.node_names[0]
    cr = _nodewright(v020, PKG_IMAGE)
    name, uid, generation = cr['metadata']['name'], cr['metadata']['uid'], cr['metadata']['generation']

    result = v020.runner.run('package_stage', node=node, cr_name=name, package='tuning', stage='apply', timeout=120,
                             delete_pod='never')

    assert result['rc'] == 0, result
    assert result['outcome'] == 'succeeded' and result['changed'] is True
    package = layout['cr_validation'].build_cr(cr, stored=True).packages['tuning']
    job_name = layout['pod_layout'].stage_pod_name(name, package, 'apply', node)
    assert result['pod']['kind'] == 'Job' and result['pod']['name'] == job_name and result['pod']['namespace'] == NAMESPACE
    job = v020.batch.read_namespaced_job(job_name, NAMESPACE)
    nodewright = layout['api_generation'].NODEWRIGHT
    assert job.metadata.labels == layout['job_layout'].job_labels(name, package, 'apply', node, generation, nodewright)
    assert job.metadata.owner_references[0].uid == uid and job.metadata.owner_references[0].kind == 'NodeWright'
    assert job.spec.backoff_limit == 0 and job.spec.template.spec.active_deadline_seconds == 1200
    assert [c.name for c in job.spec.template.spec.containers] == ['done']
    assert any(c.type == 'Complete' and c.status == 'True' for c in job.status.conditions or [])
    # marked as the operator marks a Job it has recorded
    assert job.metadata.annotations[PREFIX + 'state-recorded'] == 'true' and job.spec.ttl_seconds_after_finished == 3600
    # the stage ran in the Job's pod, not in a bare pod
    assert not _bare_pods(v020)
    job_pod = v020.core.read_namespaced_pod(result['pod']['job_pod'], NAMESPACE)
    assert job_pod.metadata.owner_references[0].uid == job.metadata.uid and job_pod.status.phase == 'Succeeded'
    assert helpers.LOG_COMPLETED in result['logs']['tuning-apply']
    entry = _state(v020, node, name)['tuning|1.2.0']
    assert entry == {'name': 'tuning', 'version': '1.2.0', 'image': PKG_IMAGE, 'stage': 'apply', 'state': 'complete'}
    annotations = v020.core.read_node(node).metadata.annotations
    assert annotations[f'{PREFIX}version_{name}'] == 'v0.20.0'

    again = v020.runner.run('package_stage', node=node, cr_name=name, package='tuning', stage='apply', timeout=120)
    assert again['rc'] == 0 and again['outcome'] == 'skipped' and again['changed'] is False
    assert [j.metadata.uid for j in _jobs(v020, name)] == [job.metadata.uid]  # no second Job


def test_a_failing_stage_fails_its_job_and_is_recorded_erroring_with_the_pods_logs(v020):
    node = v020.node_names[1]
    cr = _nodewright(v020, FAIL_PKG_IMAGE)
    name = cr['metadata']['name']

    result = v020.runner.run('package_stage', node=node, cr_name=name, package='tuning', stage='apply', timeout=120)

    assert result['failed'] is True and result['outcome'] == 'failed', result
    assert result['container'] == 'tuning-init' and result['exit_code'] == 1
    assert helpers.LOG_FAILED.format(exit_code=1) in result['logs']['tuning-init']
    entry = _state(v020, node, name)['tuning|1.2.0']
    assert (entry['stage'], entry['state'], entry['restarts']) == ('apply', 'erroring', 1)
    # the failed Job stays (delete_pod on_success), failed by its backoff limit and marked recorded
    jobs = _jobs(v020, name)
    assert len(jobs) == 1 and result['pod']['deleted'] is False
    assert any(c.type == 'Failed' and c.reason == 'BackoffLimitExceeded' for c in jobs[0].status.conditions or [])
    assert jobs[0].spec.ttl_seconds_after_finished == 86400
    assert not _bare_pods(v020)


def test_a_succeeded_job_is_deleted_with_its_pods_by_default(v020):
    node = v020.node_names[0]
    cr = _nodewright(v020, PKG_IMAGE)
    name = cr['metadata']['name']

    result = v020.runner.run('package_stage', node=node, cr_name=name, package='tuning', stage='apply', timeout=120,
                             collect_logs='on_failure')

    assert result['rc'] == 0 and result['pod']['deleted'] is True, result
    assert not _jobs(v020, name)
    # propagation Background: the garbage collector deletes the Job's pods too (a Job deleted without a policy
    # orphans them)
    helpers.wait_for(lambda: not [p for p in v020.core.list_namespaced_pod(NAMESPACE).items
                                  if (p.metadata.labels or {}).get('job-name') == result['pod']['name']],
                     30, what="the deleted Job's pods to go")


def test_an_interrupt_runs_in_an_interrupt_job(v020):
    node = v020.node_names[1]
    cr = _nodewright(v020, PKG_IMAGE, interrupt={'type': 'service', 'services': ['containerd']})
    name = cr['metadata']['name']

    result = v020.runner.run('node_interrupt', node=node, cr_name=name, package='tuning', timeout=120, delete_pod='never')

    assert result['rc'] == 0 and result['outcome'] == 'succeeded', result
    assert result['pod']['kind'] == 'Job'
    job = v020.batch.read_namespaced_job(result['pod']['name'], NAMESPACE)
    assert job.metadata.labels[PREFIX + 'interrupt'] == 'True' and job.spec.backoff_limit == 2147483647
    assert job.spec.template.spec.restart_policy == 'OnFailure'
    assert job.metadata.annotations[PREFIX + 'state-recorded'] == 'true'
    assert _state(v020, node, name)['tuning|1.2.0']['state'] == 'complete'
    assert not _bare_pods(v020)


def test_a_reboot_interrupt_job_reboots_its_node_and_is_scored_by_the_new_boot(v020):
    node = v020.node_names[1]
    cr = _nodewright(v020, PKG_IMAGE, interrupt={'type': 'reboot'})
    name = cr['metadata']['name']
    before = v020.core.read_node(node).status.node_info.boot_id

    result = v020.runner.run('node_interrupt', node=node, cr_name=name, package='tuning', timeout=120, delete_pod='never')

    assert result['rc'] == 0 and result['outcome'] == 'succeeded' and result['rebooted'] is True, result
    assert result['pod']['kind'] == 'Job'
    job = v020.batch.read_namespaced_job(result['pod']['name'], NAMESPACE)
    assert job.metadata.labels[PREFIX + 'interrupt'] == 'True'
    after = v020.core.read_node(node).status.node_info.boot_id
    assert after != before and (result['boot_id_before'], result['boot_id_after']) == (before, after)
    assert _state(v020, node, name)['tuning|1.2.0']['state'] == 'complete'
    # the boot ID the run waited for is gone from the node once the reboot is recorded
    assert f'nodewright.bridge/boot-id-before-interrupt_{name}' not in (v020.core.read_node(node).metadata.annotations or {})
