# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""job_layout: the batch/v1 Job the v0.18-v0.20 operator wraps a stage pod in, and the verdict on a Job.

The expected values were derived by reading NVIDIA/nodewright: operator/internal/controller/job_builder.go and
job_builder_test.go @8311ca7b (jobLabels, nodeLabelValue, setJobPackage, jobFromPod, effectiveStageTimeout,
deadlineSeconds), the creation sites in skyhook_controller.go (ApplyPackage, Interrupt: setJobPackage, then
SetControllerReference; JobExists), job_controller.go @05e01958 (JobReconcile, jobFailureIsGenuine,
markJobProcessed) and pod_controller.go (podFailedGenuinely). The pods come from pod_layout, as the operator's Job
builders take them from its pod builders; every name hash below is ``printf %s <string> | sha256sum | cut -c1-8``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json

import pytest

from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_validation
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import job_layout as jl
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import pod_layout as pl
from ansible_collections.nodewright.bridge.plugins.module_utils.model.api_generation import NODEWRIGHT, SKYHOOK

UID = '5f0c2a4e-8d1b-4c7e-9a3f-1b2c3d4e5f60'
NODE = 'worker-7'
LONG_NODE = 'worker-' + 'x' * 70   # job_builder_test.go's "node name exceeds the label-value limit"
SHA = 'sha256:' + '0123456789abcdef' * 4
P = 'nodewright.nvidia.com/'

CR_DOC = {
    'apiVersion': 'nodewright.nvidia.com/v1alpha1', 'kind': 'NodeWright',
    'metadata': {'name': 'gpu-tuning'},
    'spec': {
        'packages': {
            'tuning': {'version': '1.2.3', 'image': 'ghcr.io/x/tuning', 'interrupt': {'type': 'reboot'},
                       'configMap': {'a.sh': 'echo a'}, 'gracefulShutdown': '45s'},
            'pinned': {'version': '0.1.0', 'image': 'ghcr.io/x/pinned', 'containerSHA': SHA},
            'slow': {'version': '1.0.0', 'image': 'ghcr.io/x/slow', 'stageTimeout': '90m',
                     'interrupt': {'type': 'service', 'services': ['kubelet']}},
            'unbounded': {'version': '1.0.0', 'image': 'ghcr.io/x/unbounded', 'stageTimeout': '0',
                          'interrupt': {'type': 'noop'}},
            'quick': {'version': '1.0.0', 'image': 'ghcr.io/x/quick', 'stageTimeout': '500ms'},
            'huge': {'version': '1.0.0', 'image': 'ghcr.io/x/huge', 'stageTimeout': '700000h'},
        },
    },
}

# The operator's configuration (pod_layout's keyword arguments), as a v0.20 operator has it.
OPTIONS = {'namespace': 'nodewright', 'agent_image': 'ghcr.io/nvidia/nodewright/agent:v0.20.0',
           'runtime_required_taint': 'nodewright.nvidia.com=runtime-required:NoSchedule', 'image_pull_secret': 'regcred',
           'cr_uid': UID, 'cr_generation': 4}
IDENTITY = {'cr_uid': UID, 'cr_generation': 4}

OWNER = [{'apiVersion': 'nodewright.nvidia.com/v1alpha1', 'kind': 'NodeWright', 'name': 'gpu-tuning', 'uid': UID,
          'controller': True, 'blockOwnerDeletion': True}]
# jobFromPod appends these to the pod's tolerations: unbounded, so a rebooting node does not evict the pod
JOB_TOLERATIONS = [{'key': 'node.kubernetes.io/not-ready', 'operator': 'Exists', 'effect': 'NoExecute'},
                   {'key': 'node.kubernetes.io/unreachable', 'operator': 'Exists', 'effect': 'NoExecute'}]
PAUSE_RESOURCES = {'limits': {'cpu': '100m', 'memory': '20Mi'}, 'requests': {'cpu': '100m', 'memory': '20Mi'}}
DISRUPTIONS_IGNORED = {'rules': [{'action': 'Ignore', 'onPodConditions': [{'type': 'DisruptionTarget', 'status': 'True'}]}]}


@pytest.fixture
def cr():
    return cr_validation.build_cr(copy.deepcopy(CR_DOC))


def done(image):
    """The pause container as jobFromPod leaves it: renamed, on the package image, exiting 0 at once."""
    return {'name': 'done', 'image': image, 'command': ['/bin/sh', '-c', 'exit 0'], 'resources': PAUSE_RESOURCES}


def template_spec(pod, **changes):
    """The pod's spec with what jobFromPod changes; everything else (init containers, volumes, nodeName, hostPID,
    hostNetwork, imagePullSecrets, terminationGracePeriodSeconds) passes through, as job_builder_test.go expects of
    the init-container chain and the node pinning."""
    spec = copy.deepcopy(pod['spec'])
    spec['tolerations'] = spec['tolerations'] + JOB_TOLERATIONS
    spec.update(changes)
    return spec


def package_json(name, version, stage, image, sha=None):
    fields = '"name":"%s","version":"%s","skyhook":"gpu-tuning","stage":"%s","image":"%s"' % (name, version, stage, image)
    return '{%s%s}' % (fields, ',"containerSHA":"%s"' % sha if sha else '')


# --------------------------------------------------------------------------- the package Job


def test_package_job_is_the_operators(cr):
    """createJobFromPackage(tuning, apply) + setJobPackage + SetControllerReference (job_builder.go @8311ca7b,
    skyhook_controller.go ApplyPackage): the pod's name and namespace; the label set on Job and template; the
    resource-id on the Job only, the package annotation on both; run-to-completion spec without a TTL; Never, the
    DisruptionTarget rule, JOB_BACKOFF_LIMIT 3 and the default JOB_STAGE_TIMEOUT (1h) per attempt on the template."""
    pod = pl.stage_pod(cr, 'tuning', 'apply', NODE, **OPTIONS)
    before = copy.deepcopy(pod)
    labels = {P + 'name': 'gpu-tuning', P + 'package': 'tuning-1.2.3', P + 'stage': 'apply', P + 'node': NODE,
              P + 'generation': '4'}
    annotation = package_json('tuning', '1.2.3', 'apply', 'ghcr.io/x/tuning')
    expected = {
        'apiVersion': 'batch/v1', 'kind': 'Job',
        'metadata': {
            'name': 'gpu-tuning-tuning-1-2-3-apply-worker-7-32372943',
            'namespace': 'nodewright',
            'labels': labels,
            'annotations': {P + 'resource-id': 'gpu-tuning-%s-4' % UID, P + 'package': annotation},
            'ownerReferences': OWNER},
        'spec': {
            'parallelism': 1, 'completions': 1, 'podReplacementPolicy': 'Failed', 'backoffLimit': 3,
            'podFailurePolicy': DISRUPTIONS_IGNORED,
            'template': {
                'metadata': {'labels': labels, 'annotations': {P + 'package': annotation}},
                'spec': template_spec(pod, containers=[done('ghcr.io/x/tuning:1.2.3')], restartPolicy='Never',
                                      activeDeadlineSeconds=3600)}}}
    job = jl.job_manifest(pod, cr, 'tuning', 'apply', NODE, NODEWRIGHT, **IDENTITY)
    assert job == expected
    assert pod == before   # the pod manifest is not changed
    assert job['spec']['template']['spec']['terminationGracePeriodSeconds'] == 45
    assert job['spec']['template']['spec']['imagePullSecrets'] == [{'name': 'regcred'}]
    assert 'ttlSecondsAfterFinished' not in job['spec'] and 'activeDeadlineSeconds' not in job['spec']


def test_package_job_with_the_package_object_and_cr_identity(cr):
    """job_builder.go @8311ca7b: the same Job whether the package comes by key or as the object; uid and generation
    from the CR object when not given (wrapper ResourceID: <name>-<uid>-<generation>)."""
    pod = pl.stage_pod(cr, 'tuning', 'apply', NODE, **OPTIONS)
    by_key = jl.job_manifest(pod, cr, 'tuning', 'apply', NODE, NODEWRIGHT, **IDENTITY)
    cr.uid, cr.generation = UID, 4
    assert jl.job_manifest(pod, cr, cr.packages['tuning'], 'apply', NODE, NODEWRIGHT) == by_key


def test_a_cr_without_uid_owns_nothing(cr):
    """skyhook_controller.go ApplyPackage sets a controller reference; with no uid (a CR read from a file) none is
    set, as pod_layout does for pods, and the resource-id is <name>--0."""
    pod = pl.stage_pod(cr, 'tuning', 'config', NODE)
    job = jl.job_manifest(pod, cr, 'tuning', 'config', NODE, NODEWRIGHT)
    assert 'ownerReferences' not in job['metadata']
    assert job['metadata']['annotations'][P + 'resource-id'] == 'gpu-tuning--0'
    assert job['metadata']['labels'][P + 'generation'] == '0'
    assert job['metadata']['namespace'] == 'skyhook'   # the pod's namespace (pod_layout's default)


def test_the_done_container_takes_the_container_sha(cr):
    """job_builder.go @8311ca7b jobFromPod: the exit-0 container runs getPackageImage, <image>@<containerSHA> when the
    package pins one (the image the init-copy container already pulled)."""
    pod = pl.stage_pod(cr, 'pinned', 'config', NODE, **OPTIONS)
    job = jl.job_manifest(pod, cr, 'pinned', 'config', NODE, NODEWRIGHT, **IDENTITY)
    assert job['metadata']['name'] == 'gpu-tuning-pinned-0-1-0-config-worker-7-f6ca52af'
    assert job['spec']['template']['spec']['containers'] == [done('ghcr.io/x/pinned@' + SHA)]
    assert job['metadata']['annotations'][P + 'package'] == package_json('pinned', '0.1.0', 'config', 'ghcr.io/x/pinned', SHA)


# --------------------------------------------------------------------------- the interrupt Job


def test_interrupt_job_is_the_operators(cr):
    """createInterruptJobFromPackage(reboot, interrupt) + setJobPackage + SetControllerReference (job_builder.go
    @8311ca7b, skyhook_controller.go Interrupt): named after the interrupt type; the interrupt label "True"; OnFailure
    and no podFailurePolicy; backoffLimit math.MaxInt32; the whole-stage deadline on the Job, none on the template."""
    pod = pl.interrupt_pod(cr, 'tuning', {'type': 'reboot', 'services': []}, NODE, **OPTIONS)
    labels = {P + 'name': 'gpu-tuning', P + 'package': 'tuning-1.2.3', P + 'stage': 'interrupt', P + 'node': NODE,
              P + 'generation': '4', P + 'interrupt': 'True'}
    annotation = package_json('tuning', '1.2.3', 'interrupt', 'ghcr.io/x/tuning')
    expected = {
        'apiVersion': 'batch/v1', 'kind': 'Job',
        'metadata': {
            'name': 'gpu-tuning-interrupt-reboot-worker-7-00145c74',
            'namespace': 'nodewright',
            'labels': labels,
            'annotations': {P + 'resource-id': 'gpu-tuning-%s-4' % UID, P + 'package': annotation},
            'ownerReferences': OWNER},
        'spec': {
            'parallelism': 1, 'completions': 1, 'podReplacementPolicy': 'Failed', 'backoffLimit': 2147483647,
            'activeDeadlineSeconds': 3600,
            'template': {
                'metadata': {'labels': labels, 'annotations': {P + 'package': annotation}},
                'spec': template_spec(pod, containers=[done('ghcr.io/x/tuning:1.2.3')], restartPolicy='OnFailure')}}}
    assert jl.job_manifest(pod, cr, 'tuning', 'interrupt', NODE, NODEWRIGHT, **IDENTITY) == expected


def test_uninstall_interrupt_job(cr):
    """job_builder.go @8311ca7b: the uninstall-interrupt stage runs in an interrupt Job too (its stage label, its
    name <cr>-uninstall-interrupt-<type>-<node>)."""
    pod = pl.interrupt_pod(cr, 'tuning', {'type': 'reboot'}, NODE, stage='uninstall-interrupt', **OPTIONS)
    job = jl.job_manifest(pod, cr, 'tuning', 'uninstall-interrupt', NODE, NODEWRIGHT, interrupt=True, **IDENTITY)
    assert job['metadata']['name'] == 'gpu-tuning-uninstall-interrupt-reboot-worker-7-1dc81186'
    assert job['metadata']['labels'][P + 'stage'] == 'uninstall-interrupt'
    assert job['metadata']['labels'][P + 'interrupt'] == 'True'
    assert job['spec']['template']['spec']['restartPolicy'] == 'OnFailure'


# --------------------------------------------------------------------------- stageTimeout


@pytest.mark.parametrize('package,options,deadline', [
    ('tuning', {}, 3600),                                  # unset: JOB_STAGE_TIMEOUT's default, 1h
    ('tuning', {'job_stage_timeout': '2h'}, 7200),         # unset: the operator's own JOB_STAGE_TIMEOUT
    ('tuning', {'job_stage_timeout': '0'}, None),          # the operator's "0": no bound
    ('slow', {'job_stage_timeout': '0'}, 5400),            # the package's own wins over the operator's
    ('unbounded', {}, None),                               # the package's "0" removes the bound
    ('quick', {}, 1),                                      # 500ms rounds up, never to 0 (which insta-fails)
    ('huge', {}, 2147483647),                              # clamped to what the apiserver accepts
    ('tuning', {'stage_timeout': '1m30.5s'}, 91),          # an explicit stageTimeout, rounded up
])
def test_package_job_deadline_per_attempt(cr, package, options, deadline):
    """job_builder.go @8311ca7b effectiveStageTimeout / deadlineSeconds, job_builder_test.go "stage bounds": a package
    Job bounds each attempt on the pod template and never the Job, and keeps its retry budget when unbounded."""
    pod = pl.stage_pod(cr, package, 'apply', NODE, **OPTIONS)
    job = jl.job_manifest(pod, cr, package, 'apply', NODE, NODEWRIGHT, **dict(IDENTITY, **options))
    assert job['spec']['template']['spec'].get('activeDeadlineSeconds') == deadline
    assert 'activeDeadlineSeconds' not in job['spec']
    assert job['spec']['backoffLimit'] == 3


@pytest.mark.parametrize('package,interrupt,options,deadline', [
    ('tuning', {'type': 'reboot'}, {}, 3600),
    ('slow', {'type': 'service', 'services': ['kubelet']}, {}, 5400),
    ('unbounded', {'type': 'noop'}, {}, None),
    ('tuning', {'type': 'reboot'}, {'job_stage_timeout': 0}, None),
])
def test_interrupt_job_deadline_spans_the_stage(cr, package, interrupt, options, deadline):
    """job_builder.go @8311ca7b: an interrupt Job's bound is on the Job (it must span the reboot), unbounded backoff."""
    pod = pl.interrupt_pod(cr, package, interrupt, NODE, **OPTIONS)
    job = jl.job_manifest(pod, cr, package, 'interrupt', NODE, NODEWRIGHT, **dict(IDENTITY, **options))
    assert job['spec'].get('activeDeadlineSeconds') == deadline
    assert 'activeDeadlineSeconds' not in job['spec']['template']['spec']
    assert job['spec']['backoffLimit'] == 2147483647


def test_backoff_limit_is_the_operators_option(cr):
    """job_builder.go @8311ca7b: a package Job's backoffLimit is JOB_BACKOFF_LIMIT (0: one attempt, no retry)."""
    pod = pl.stage_pod(cr, 'tuning', 'apply', NODE, **OPTIONS)
    assert jl.job_manifest(pod, cr, 'tuning', 'apply', NODE, NODEWRIGHT, backoff_limit=0)['spec']['backoffLimit'] == 0
    for bad in (-1, True, '3', 2 ** 31):
        with pytest.raises(ValueError, match='JOB_BACKOFF_LIMIT'):
            jl.job_manifest(pod, cr, 'tuning', 'apply', NODE, NODEWRIGHT, backoff_limit=bad)


def test_stage_deadline_seconds():
    """job_builder.go @8311ca7b deadlineSeconds: ceil, at least 1 for a positive value, clamped; 0 or less: none."""
    assert jl.stage_deadline_seconds() == 3600
    assert jl.stage_deadline_seconds(stage_timeout=1) == 1
    assert jl.stage_deadline_seconds(stage_timeout='1ns') == 1
    assert jl.stage_deadline_seconds(stage_timeout='-5s') is None
    assert jl.stage_deadline_seconds(job_stage_timeout='45m') == 2700
    with pytest.raises(ValueError, match='stageTimeout'):
        jl.stage_deadline_seconds(stage_timeout='soon')
    with pytest.raises(ValueError, match='JOB_STAGE_TIMEOUT'):
        jl.stage_deadline_seconds(job_stage_timeout=1.5)


# --------------------------------------------------------------------------- labels, names, selectors


def test_long_node_name_hashes_the_label_only(cr):
    """job_builder.go @8311ca7b nodeLabelValue and job_builder_test.go "node name exceeds the label-value limit": the
    /node label is generateSafeName(63, node) (54 bytes + '-' + sha256[:8] of the whole name); nodeName keeps it all."""
    pod = pl.stage_pod(cr, 'tuning', 'apply', LONG_NODE, **OPTIONS)
    job = jl.job_manifest(pod, cr, 'tuning', 'apply', LONG_NODE, NODEWRIGHT, **IDENTITY)
    hashed = 'worker-' + 'x' * 47 + '-526532f0'
    assert len(hashed) == 63
    assert job['metadata']['labels'][P + 'node'] == hashed
    assert job['spec']['template']['metadata']['labels'][P + 'node'] == hashed
    assert job['spec']['template']['spec']['nodeName'] == LONG_NODE
    assert job['metadata']['name'] == 'gpu-tuning-tuning-1-2-3-apply-worker-' + 'x' * 17 + '-fec1a318'
    assert jl.node_label_value(LONG_NODE) == hashed
    assert jl.node_label_value('x' * 63) == 'x' * 63
    assert jl.node_label_value('Node.A') == 'Node.A'   # up to 63 characters the name is kept as it is


def test_job_selector(cr):
    """skyhook_controller.go: JobExists lists by /name, /package and /node (not /stage); deleteNodeJobs by /name and
    /node; ValidateRunningPackages by /name; stage and interrupt narrow further."""
    pkg = cr.packages['tuning']
    assert jl.job_selector('gpu-tuning', NODEWRIGHT) == {P + 'name': 'gpu-tuning'}
    assert jl.job_selector('gpu-tuning', NODEWRIGHT, node=LONG_NODE) == {
        P + 'name': 'gpu-tuning', P + 'node': jl.node_label_value(LONG_NODE)}
    assert jl.job_selector('gpu-tuning', NODEWRIGHT, package=pkg, node=NODE) == {
        P + 'name': 'gpu-tuning', P + 'package': 'tuning-1.2.3', P + 'node': NODE}
    one = jl.job_selector('gpu-tuning', NODEWRIGHT, package=pkg, node=NODE, stage='apply')
    assert one == {P + 'name': 'gpu-tuning', P + 'node': NODE, P + 'package': 'tuning-1.2.3', P + 'stage': 'apply'}
    assert jl.job_selector('gpu-tuning', NODEWRIGHT, interrupt=True)[P + 'interrupt'] == 'True'
    # every selector matches the labels of the Job it is for
    pod = pl.stage_pod(cr, 'tuning', 'apply', NODE, **OPTIONS)
    labels = jl.job_manifest(pod, cr, 'tuning', 'apply', NODE, NODEWRIGHT, **IDENTITY)['metadata']['labels']
    assert all(labels[key] == value for key, value in one.items())


def test_job_labels_under_the_legacy_generation(cr):
    """job_builder.go @8311ca7b names every key <METADATA_PREFIX>/...: under SKYHOOK the same keys, skyhook.nvidia.com,
    and the owner reference is to the Skyhook kind."""
    pod = pl.stage_pod(cr, 'tuning', 'apply', NODE, **OPTIONS)
    job = jl.job_manifest(pod, cr, 'tuning', 'apply', NODE, SKYHOOK, **IDENTITY)
    assert sorted(job['metadata']['labels']) == ['skyhook.nvidia.com/generation', 'skyhook.nvidia.com/name',
                                                 'skyhook.nvidia.com/node', 'skyhook.nvidia.com/package',
                                                 'skyhook.nvidia.com/stage']
    assert sorted(job['metadata']['annotations']) == ['skyhook.nvidia.com/package', 'skyhook.nvidia.com/resource-id']
    assert job['metadata']['ownerReferences'][0]['kind'] == 'Skyhook'
    assert job['metadata']['ownerReferences'][0]['apiVersion'] == 'skyhook.nvidia.com/v1alpha1'


# --------------------------------------------------------------------------- refusals


def test_refusals(cr):
    """job_builder.go @8311ca7b builds a Job from the pod of the same package, stage and node, for the stages its two
    builders take; anything else is refused rather than laid out wrongly."""
    pod = pl.stage_pod(cr, 'tuning', 'apply', NODE, **OPTIONS)
    with pytest.raises(ValueError, match='for node'):
        jl.job_manifest(pod, cr, 'tuning', 'apply', 'worker-8', NODEWRIGHT)
    with pytest.raises(ValueError, match='stage apply, not tuning 1.2.3 stage config'):
        jl.job_manifest(pod, cr, 'tuning', 'config', NODE, NODEWRIGHT)
    with pytest.raises(ValueError, match='runs in no Job'):
        jl.job_manifest(pod, cr, 'tuning', 'reboot', NODE, NODEWRIGHT)
    with pytest.raises(ValueError, match='package Job, not an interrupt'):
        jl.job_manifest(pod, cr, 'tuning', 'apply', NODE, NODEWRIGHT, interrupt=True)
    with pytest.raises(ValueError, match='no package'):
        jl.job_manifest(pod, cr, 'missing', 'apply', NODE, NODEWRIGHT)
    with pytest.raises(ValueError, match='pod manifest'):
        jl.job_manifest({'kind': 'ConfigMap'}, cr, 'tuning', 'apply', NODE, NODEWRIGHT)


# --------------------------------------------------------------------------- job_outcome


def job(conditions=(), interrupt=False, annotations=None, **status):
    labels = {P + 'name': 'gpu-tuning', P + 'package': 'tuning-1.2.3', P + 'stage': 'interrupt' if interrupt else 'apply'}
    if interrupt:
        labels[P + 'interrupt'] = 'True'
    stage = 'interrupt' if interrupt else 'apply'
    meta = {'name': 'j1', 'labels': labels,
            'annotations': dict({P + 'package': package_json('tuning', '1.2.3', stage, 'ghcr.io/x/tuning')}, **(annotations or {}))}
    status = dict(status, conditions=[dict(type=kind, status='True', reason=reason, message=message)
                                      for kind, reason, message in conditions])
    return {'apiVersion': 'batch/v1', 'kind': 'Job', 'metadata': meta, 'spec': {}, 'status': status}


BACKOFF = ('Failed', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit')
FAILED_POD = {'status': {'phase': 'Failed', 'initContainerStatuses': [
    {'name': 'tuning-init', 'state': {'terminated': {'exitCode': 0}}},
    {'name': 'tuning-apply', 'state': {'terminated': {'exitCode': 3, 'reason': 'Error'}}}]}}
REJECTED_POD = {'status': {'phase': 'Failed', 'reason': 'OutOfcpu'}}
DEADLINE_POD = {'status': {'phase': 'Failed', 'reason': 'DeadlineExceeded', 'initContainerStatuses': [
    {'name': 'tuning-init', 'state': {'waiting': {'reason': 'ImagePullBackOff'}}}]}}
EVICTED_POD = {'status': {'phase': 'Failed', 'conditions': [{'type': 'DisruptionTarget', 'status': 'True'}],
                          'initContainerStatuses': FAILED_POD['status']['initContainerStatuses']}}


def test_job_outcome_complete():
    """job_controller.go @05e01958 JobReconcile: a Complete condition is a completion (recorded complete); restarts
    are the failed attempts before it (job.Status.Failed)."""
    verdict = jl.job_outcome(job([('Complete', 'CompletionsReached', 'Reached expected number of succeeded pods')],
                                 succeeded=1, failed=1))
    assert verdict == {'outcome': 'succeeded', 'reason': 'CompletionsReached', 'message': 'job j1 complete',
                       'active': 0, 'succeeded': 1, 'failed': 1, 'restarts': 1, 'recorded': False,
                       'genuine': None, 'state': 'complete'}
    marked = jl.job_outcome(job([('Complete', '', '')], annotations={P + 'state-recorded': 'true'}, succeeded=1))
    assert (marked['reason'], marked['recorded']) == ('Complete', True)


@pytest.mark.parametrize('reason', ['DeadlineExceeded', 'PodFailurePolicy', 'MaxFailedIndexesExceeded'])
def test_job_outcome_failures_believed_as_they_are(reason):
    """job_controller.go @05e01958 jobFailureIsGenuine: any reason but BackoffLimitExceeded is genuine on its own."""
    verdict = jl.job_outcome(job([('Failed', reason, 'Job was active longer than specified deadline')], failed=1))
    assert (verdict['outcome'], verdict['reason'], verdict['genuine'], verdict['state']) == ('failed', reason, True, 'erroring')
    assert verdict['message'] == 'job j1 failed (%s): Job was active longer than specified deadline' % reason


@pytest.mark.parametrize('pods,entry,genuine', [
    (None, None, None),                                         # nothing to judge by
    ([FAILED_POD], None, True),                                 # a retained attempt exited non-zero
    ([DEADLINE_POD], None, True),                               # an attempt killed by its own deadline
    ([REJECTED_POD, EVICTED_POD], {}, False),                   # only admission rejections and a disruption
    ([REJECTED_POD], {'stage': 'apply', 'state': 'erroring'}, True),   # the pod watch saw the failure
    ([REJECTED_POD], {'stage': 'config', 'state': 'erroring'}, False),
    ([REJECTED_POD], None, None),
])
def test_job_outcome_backoff_limit_needs_evidence(pods, entry, genuine):
    """job_controller.go @05e01958 jobFailureIsGenuine + pod_controller.go podFailedGenuinely: BackoffLimitExceeded is
    the package's failure only with a genuinely failed attempt pod or the entry erroring at the Job's stage."""
    verdict = jl.job_outcome(job([BACKOFF], failed=4), child_pods=pods, entry=entry)
    assert (verdict['outcome'], verdict['genuine']) == ('failed', genuine)
    assert verdict['state'] == ('erroring' if genuine else None)
    assert verdict['restarts'] == 4
    if genuine is False:
        assert verdict['message'].endswith('the operator runs the stage again')


def test_job_outcome_interrupt_ended_past_its_restart_allowance():
    """job_controller.go @05e01958: an interrupt Job the pod watch ended carries restart-limit-exceeded, which is its
    evidence (its pods are gone); an interrupt Job's restarts are the pod watch's, not the Job's."""
    ended = job([BACKOFF], interrupt=True, annotations={P + 'restart-limit-exceeded': '3'}, failed=0)
    verdict = jl.job_outcome(ended)
    assert (verdict['outcome'], verdict['genuine'], verdict['restarts']) == ('failed', True, None)
    assert jl.job_outcome(job([BACKOFF], interrupt=True))['genuine'] is None


@pytest.mark.parametrize('item,expected', [
    (job(active=1), ('running', 'Active', 'job j1 is running', 0)),
    (job(active=1, failed=2), ('running', 'Active', 'job j1 is running after 2 failed attempts', 2)),
    (job(), ('running', 'Pending', 'job j1 has no running pod', 0)),
    (job([('FailureTarget', 'BackoffLimitExceeded', '')], failed=4),
     ('running', 'FailureTarget', 'job j1 is failing (BackoffLimitExceeded) after 4 failed attempts', 4)),
    (dict(job(), spec={'suspend': True}), ('running', 'Suspended', 'job j1 is suspended (the CR is paused)', 0)),
    (job(interrupt=True, active=1, failed=1), ('running', 'Active', 'job j1 is running', None)),
])
def test_job_outcome_running(item, expected):
    """job_controller.go @05e01958 handleActiveJob: a Job without a terminal condition is still running, FailureTarget
    included (the Job controller is still terminating its pods); a package Job's failed count is its restarts."""
    verdict = jl.job_outcome(item)
    assert (verdict['outcome'], verdict['reason'], verdict['message'], verdict['restarts']) == expected
    assert verdict['state'] is None


def test_job_outcome_missing():
    """job_controller.go @05e01958 JobReconcile: a Job being deleted is left alone, one whose package is invalid is
    deleted (the operator then builds a new one): neither has an outcome to record."""
    assert jl.job_outcome(None)['outcome'] == 'missing'
    deleting = job([('Complete', 'CompletionsReached', '')])
    deleting['metadata']['deletionTimestamp'] = '2026-05-01T10:00:00Z'
    assert (jl.job_outcome(deleting)['outcome'], jl.job_outcome(deleting)['reason']) == ('missing', 'JobDeleting')
    invalid = job(active=1)
    invalid['metadata']['annotations'][P + 'package'] = json.dumps({'name': 'tuning', 'stage': 'apply', 'invalid': True})
    assert jl.job_outcome(invalid)['reason'] == 'PackageInvalid'


def test_job_outcome_reads_the_legacy_generation_keys():
    """The same rules on a Job keyed skyhook.nvidia.com (the generation whose name label it carries)."""
    legacy = job(interrupt=True, active=1)
    legacy['metadata']['labels'] = dict((k.replace(P, 'skyhook.nvidia.com/'), v) for k, v in legacy['metadata']['labels'].items())
    assert jl.job_outcome(legacy)['restarts'] is None   # the interrupt label is found under its prefix


def test_pod_failed_genuinely():
    """pod_controller.go podFailedGenuinely: Failed, not disrupted, its own deadline or a real step failure."""
    assert jl.pod_failed_genuinely(FAILED_POD)
    assert jl.pod_failed_genuinely(DEADLINE_POD)
    assert not jl.pod_failed_genuinely(REJECTED_POD)
    assert not jl.pod_failed_genuinely(EVICTED_POD)
    unknown = {'status': {'phase': 'Failed', 'initContainerStatuses': [
        {'state': {'terminated': {'exitCode': 137, 'reason': 'ContainerStatusUnknown'}}}]}}
    assert not jl.pod_failed_genuinely(unknown)
    crashloop = {'status': {'phase': 'Failed', 'initContainerStatuses': [{'state': {'waiting': {'reason': 'CrashLoopBackOff'}}}]}}
    assert jl.pod_failed_genuinely(crashloop)
    assert not jl.pod_failed_genuinely({'status': {'phase': 'Running'}})


# --------------------------------------------------------------------------- the TTL, set once recorded


def test_ttl_is_set_by_outcome_once_recorded():
    """job_controller.go @05e01958 markJobProcessed: one patch, the state-recorded marker and int32(ttl.Seconds()) of
    JOB_TTL_SUCCEEDED (1h) or JOB_TTL_FAILED (24h); none at creation (job_builder_test.go "TTL unset at creation")."""
    assert jl.ttl_seconds_after_finished('succeeded') == 3600
    assert jl.ttl_seconds_after_finished('failed') == 86400
    assert jl.ttl_seconds_after_finished({'outcome': 'failed'}, ttl_failed='90m59.9s') == 5459
    assert jl.processed_patch('succeeded', NODEWRIGHT) == {
        'metadata': {'annotations': {'nodewright.nvidia.com/state-recorded': 'true'}},
        'spec': {'ttlSecondsAfterFinished': 3600}}
    with pytest.raises(ValueError, match='finished'):
        jl.ttl_seconds_after_finished('running')
    with pytest.raises(ValueError, match='at least 1 minute'):
        jl.ttl_seconds_after_finished('succeeded', ttl_succeeded='30s')
    marked = job(annotations={P + 'state-recorded': 'true'})
    assert jl.job_processed(marked) and jl.job_processed(marked, NODEWRIGHT)
    assert not jl.job_processed(job()) and not jl.job_processed(marked, SKYHOOK)
