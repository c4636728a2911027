# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""The batch/v1 Job the v0.18-v0.20 NodeWright operator runs a package stage in, built from the stage pod.

v0.15 runs each stage as a bare pod (pod_layout); v0.18+ wraps that same pod in a Job. ``job_manifest`` takes the
pod manifest pod_layout built (stage_pod / interrupt_pod) and lays out the Job around it as upstream does:

* ``job_manifest``: the Job (jobFromPod, plus what the creation sites add: the package annotation on the Job and
  its pod template, the controller reference to the CR),
* ``job_labels`` / ``node_label_value`` / ``job_selector``: the labels a Job and its pods carry, and the selectors
  the operator lists its Jobs by,
* ``stage_deadline_seconds``: the stage's time bound in whole seconds, or None,
* ``job_outcome``: running / succeeded / failed (or missing) from a Job's status, as JobReconcile reads it,
  with ``pod_failed_genuinely`` (the evidence a BackoffLimitExceeded needs),
* ``ttl_seconds_after_finished`` / ``processed_patch`` / ``job_processed``: the mark the operator puts on a
  finished Job once it has recorded it.

Checked against NVIDIA/nodewright (part of the late history is stored as NVIDIA/skyhook):

* operator/internal/controller/job_builder.go @8311ca7b (jobLabels, nodeLabelValue, setJobPackage,
  createJobFromPackage, createInterruptJobFromPackage, jobFromPod, effectiveStageTimeout, deadlineSeconds; jobFromPod
  is the same @e46c2bae) and job_builder_test.go @8311ca7b;
* operator/internal/controller/skyhook_controller.go (a v0.20 version with JobOperatorOptions: ApplyPackage and
  Interrupt, the creation sites; JobExists, deleteNodeJobs, HasRunningPackages, the Job selectors; the env defaults
  JOB_TTL_SUCCEEDED 1h, JOB_TTL_FAILED 24h, JOB_STAGE_TIMEOUT 1h, JOB_BACKOFF_LIMIT 3; interruptLabelValue "True",
  shellBinary "/bin/sh", pauseContainerName "pause");
* operator/internal/controller/job_controller.go @05e01958 (JobReconcile, hasJobCondition, jobFailure,
  jobFailureIsGenuine, markJobProcessed, recordJobRestarts, the state-recorded and restart-limit-exceeded
  annotations) and pod_controller.go (podFailedGenuinely, podFailureIsGenuine, podDeadlineExceeded);
* operator/internal/controller/annotations.go @262b5749 (SetPackages: the package annotation's JSON, as v0.15's);
* operator/internal/wrapper/skyhook.go, the NodeWright version (ResourceID: ``<name>-<uid>-<generation>``).

Where the source differs from the project's notes (the source wins):

* Names. A package Job is named as the v0.15 stage pod, ``safe_name(63, cr, package, version, stage, node)``: one
  per (CR, package, version, stage, node). An interrupt Job is named ``safe_name(63, cr, stage, interruptType,
  node)`` with the CR's interrupt type (``reboot``): one per (CR, stage, interrupt type, node), not per package (the
  operator runs one merged interrupt per node; the labels name the package it ran for). The Job takes the pod's name
  and namespace.
* ttlSecondsAfterFinished is NOT set at creation. JobReconcile sets it once it has recorded the outcome, in one
  merge patch with ``<prefix>/state-recorded: "true"``: JOB_TTL_SUCCEEDED (1 h) after Complete, JOB_TTL_FAILED
  (24 h) after Failed (also for a failure it did not believe), as ``int32(ttl.Seconds())`` (processed_patch).
* Annotations: ``<prefix>/resource-id`` is on the Job only; ``<prefix>/package`` (the JSON of SetPackages) is on the
  Job AND its pod template (setJobPackage: the pod watch reads it off the child pod). The template carries the Job's
  labels and that annotation, nothing else of the pod's metadata. The controller reference to the CR (kind and
  apiVersion of ``gen``) is set at the creation sites, as for pods only when the CR has a uid.
* Two more pod differences: the forever-running ``pause`` container becomes ``done`` on the package image
  (``<image>:<version>`` or ``<image>@<containerSHA>``) running ``/bin/sh -c "exit 0"`` (a Job completes only when
  every container ends; it keeps pause's resources), and the tolerations gain ``node.kubernetes.io/not-ready`` and
  ``node.kubernetes.io/unreachable`` (Exists, NoExecute, no tolerationSeconds: the pod survives the reboot).
* Bounds. The stage timeout is the package's ``stageTimeout`` when set, else JOB_STAGE_TIMEOUT (1 h), rounded UP
  to whole seconds (a positive sub-second value gives 1) and clamped to 2147483647; 0 (or less) omits the deadline.
  A package Job bounds each attempt (the pod template's activeDeadlineSeconds) and has no Job-level deadline; its
  backoffLimit JOB_BACKOFF_LIMIT counts retries, so a stage runs at most backoffLimit + 1 times. An interrupt Job
  (restartPolicy OnFailure, hence no podFailurePolicy: the API forbids the pair) has backoffLimit 2147483647
  (math.MaxInt32, not "unset": an unset backoffLimit is 6) and the deadline on the Job.
* Selectors. The operator's "is a Job running for this package on this node" (JobExists) matches ``/name``,
  ``/package`` and ``/node`` and deliberately not ``/stage`` (two stages of one package share the host copy
  directory); job_selector's ``stage`` narrows further when asked. The ``/node`` label is the node name, or
  ``safe_name(63, node)`` (dots replaced, lowercased, hashed) only when the name is longer than 63 characters.
* Outcome. JobReconcile ignores a Job being deleted and deletes a Job whose package annotation says ``invalid``
  (both "missing" here: the operator makes a new one). A Failed condition with reason BackoffLimitExceeded is a
  package failure only when a retained attempt pod failed genuinely (podFailedGenuinely), an interrupt Job carries
  ``<prefix>/restart-limit-exceeded``, or the node's entry already reads erroring at the stage; otherwise the
  operator only marks the Job and the stage runs again. Any other failure reason (DeadlineExceeded,
  PodFailurePolicy, ...) is believed as is.
* The pod itself. v0.18+'s own pod builders differ from v0.15's (pod_layout): each configMap key is mounted on its
  own read-only subPath, the interrupt container asks for 256Mi (@8311ca7b; 64Mi @e46c2bae), the interrupt pod's
  metadata volume names the real (hashed) ConfigMap, PACKAGE_PRIORITY_CLASS_NAME sets priorityClassName, and the
  legacy runtime-required taint is tolerated beside the configured one. Those are the pod's: job_manifest takes the
  pod as given and changes only what jobFromPod changes.
* Later upstream (job_controller.go @05e01958) also stamps ``<prefix>/restart-allowance`` on a non-reboot interrupt
  Job at creation; job_builder.go @8311ca7b and the creation sites read do not, and neither does job_manifest.

Manifests are plain dicts in the API's camelCase, ready for the ``kubernetes`` client. No I/O and no
``kubernetes`` import.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json

from ansible_collections.nodewright.bridge.plugins.module_utils.model import api_generation
from ansible_collections.nodewright.bridge.plugins.module_utils.model import duration
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import pod_layout
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import pod_verdicts
from ansible_collections.nodewright.bridge.plugins.module_utils.model.stages import INTERRUPT_STAGES, POD_STAGES

# --------------------------------------------------------------------------- constants

# The operator's configuration (JobOperatorOptions env defaults).
JOB_TTL_SUCCEEDED = '1h'      # JOB_TTL_SUCCEEDED
JOB_TTL_FAILED = '24h'        # JOB_TTL_FAILED
JOB_STAGE_TIMEOUT = '1h'      # JOB_STAGE_TIMEOUT ("0": no time bound)
JOB_BACKOFF_LIMIT = 3         # JOB_BACKOFF_LIMIT (retries after the first attempt)

MAX_INT32 = 2147483647        # math.MaxInt32: an interrupt Job's backoffLimit, the deadline's clamp
INTERRUPT_BACKOFF_LIMIT = MAX_INT32
NODE_LABEL_MAX = 63

DONE_CONTAINER = 'done'
SHELL = '/bin/sh'
EXIT_ZERO_COMMAND = [SHELL, '-c', 'exit 0']
JOB_TOLERATIONS = (
    {'key': 'node.kubernetes.io/not-ready', 'operator': 'Exists', 'effect': 'NoExecute'},
    {'key': 'node.kubernetes.io/unreachable', 'operator': 'Exists', 'effect': 'NoExecute'},
)
DISRUPTION_POLICY = {'rules': [{'action': 'Ignore', 'onPodConditions': [{'type': 'DisruptionTarget', 'status': 'True'}]}]}

# Job condition types and the failure reasons the Job controller writes
COMPLETE, FAILED_CONDITION, FAILURE_TARGET = 'Complete', 'Failed', 'FailureTarget'
BACKOFF_LIMIT_EXCEEDED = 'BackoffLimitExceeded'
DEADLINE_EXCEEDED = 'DeadlineExceeded'
POD_FAILURE_POLICY = 'PodFailurePolicy'

# job_outcome verdicts (pod_verdicts')
RUNNING, SUCCEEDED, FAILED, MISSING = pod_verdicts.RUNNING, pod_verdicts.SUCCEEDED, pod_verdicts.FAILED, pod_verdicts.MISSING


def _key(gen, stem):
    return '%s/%s' % (gen.prefix, stem)


def stage_label(gen):
    return _key(gen, 'stage')


def node_label(gen):
    return _key(gen, 'node')


def generation_label(gen):
    return _key(gen, 'generation')


def resource_id_annotation(gen):
    return _key(gen, 'resource-id')


def state_recorded_annotation(gen):
    """Set to ``"true"`` by JobReconcile once it has written the Job's outcome to the node."""
    return _key(gen, 'state-recorded')


def restart_limit_annotation(gen):
    """Put on an interrupt Job the pod watch ended for restarting past its allowance (later upstream)."""
    return _key(gen, 'restart-limit-exceeded')


# --------------------------------------------------------------------------- labels and selectors


def node_label_value(node):
    """The ``<prefix>/node`` label value: the node name, or ``safe_name(63, node)`` past 63 characters."""
    if len(node) > NODE_LABEL_MAX:
        return pod_layout.safe_name(NODE_LABEL_MAX, node)
    return node


def job_labels(cr_name, package, stage, node, generation, gen, interrupt=False):
    """The labels of a Job and of its pod template (jobLabels): name, package, stage, node, generation (+ interrupt)."""
    labels = {
        gen.name_label: cr_name,
        gen.package_label: pod_layout.package_label(package),
        stage_label(gen): stage,
        node_label(gen): node_label_value(node),
        generation_label(gen): str(int(generation)),
    }
    if interrupt:
        labels[gen.interrupt_label] = pod_layout.INTERRUPT_LABEL_VALUE
    return labels


def job_selector(cr_name, gen, package=None, node=None, stage=None, interrupt=None):
    """Label selector (dict) for a CR's Jobs, narrowed by package, node, stage and interrupt.

    The operator lists: every Job of a CR (``/name``: pause, validation), a CR's Jobs on a node (``/name`` and
    ``/node``: the reboot reset), and the Jobs of one package on a node (``/name``, ``/package`` and ``/node``:
    JobExists, which is deliberately not stage-scoped). ``stage`` narrows to one stage; ``interrupt=True`` to
    interrupt Jobs (package Jobs carry no interrupt label: tell them apart by exclusion). Any unfinished Job it
    finds blocks a new one.
    """
    labels = {gen.name_label: cr_name}
    if package is not None:
        labels[gen.package_label] = pod_layout.package_label(package)
    if node is not None:
        labels[node_label(gen)] = node_label_value(node)
    if stage is not None:
        labels[stage_label(gen)] = stage
    if interrupt:
        labels[gen.interrupt_label] = pod_layout.INTERRUPT_LABEL_VALUE
    return labels


# --------------------------------------------------------------------------- the stage's time bound


def _nanoseconds(value, what):
    """A Go duration string, or whole seconds (int), in nanoseconds."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ValueError('%s must be a Go duration string or whole seconds, not %r' % (what, value))
    if isinstance(value, int):
        return value * duration.SECOND
    try:
        return duration.parse_go_duration(value)
    except ValueError as exc:
        raise ValueError('%s: %s' % (what, exc))


def stage_deadline_seconds(package=None, stage_timeout=None, job_stage_timeout=JOB_STAGE_TIMEOUT):
    """The stage's deadline in whole seconds, or None for no time bound (effectiveStageTimeout, deadlineSeconds).

    ``stage_timeout``: the package's ``stageTimeout`` (None: the package's own, ``package.stage_timeout_text``; a
    Skyhook package has none); unset, the operator's ``job_stage_timeout`` (JOB_STAGE_TIMEOUT). Either is a Go
    duration string or whole seconds. Rounded up (500ms is 1), clamped to 2147483647; 0 or less: None.
    """
    if stage_timeout is None and package is not None:
        stage_timeout = getattr(package, 'stage_timeout_text', None)
    if stage_timeout is not None:
        nanoseconds = _nanoseconds(stage_timeout, 'stageTimeout')
    else:
        nanoseconds = _nanoseconds(job_stage_timeout, 'JOB_STAGE_TIMEOUT')
    if nanoseconds <= 0:
        return None
    return min(duration.ceil_seconds(nanoseconds), MAX_INT32)


# --------------------------------------------------------------------------- the Job


def _identity(cr, cr_uid, cr_generation):
    uid = cr_uid if cr_uid is not None else getattr(cr, 'uid', None)
    generation = cr_generation if cr_generation is not None else getattr(cr, 'generation', None)
    return uid or '', int(generation or 0)


def _is_interrupt(stage, interrupt):
    """Whether the stage runs in an interrupt Job; ValueError for an unknown stage or a contradicting ``interrupt``."""
    if stage in INTERRUPT_STAGES:
        expected = True
    elif stage in POD_STAGES:
        expected = False
    else:
        raise ValueError('stage %r runs in no Job (one of %s)'
                         % (stage, ', '.join(POD_STAGES + INTERRUPT_STAGES)))
    if interrupt is not None and bool(interrupt) != expected:
        raise ValueError('stage %s runs in %s Job, not %s one' % (
            stage, 'an interrupt' if expected else 'a package', 'an interrupt' if interrupt else 'a package'))
    return expected


def _pod_package_annotation(meta):
    """The package annotation a pod carries, under either generation's key (None when it has none)."""
    annotations = meta.get('annotations') or {}
    for gen in api_generation.GENERATIONS:
        if gen.package_annotation in annotations:
            return annotations[gen.package_annotation]
    return None


def _check_pod(pod_manifest, package, stage, node):
    if not isinstance(pod_manifest, dict) or pod_manifest.get('kind') != 'Pod' or not isinstance(pod_manifest.get('spec'), dict):
        raise ValueError('a Job is built from a pod manifest (kind Pod, with a spec)')
    meta = pod_manifest.get('metadata') or {}
    if not meta.get('name'):
        raise ValueError('the pod manifest has no name (the Job takes it)')
    if pod_manifest['spec'].get('nodeName') != node:
        raise ValueError('the pod is for node %r, not %r' % (pod_manifest['spec'].get('nodeName'), node))
    text = _pod_package_annotation(meta)
    if text is not None:
        found = json.loads(text)
        want = (package.name, package.version, stage)
        if (found.get('name'), found.get('version'), found.get('stage')) != want:
            raise ValueError('the pod runs %s %s stage %s, not %s %s stage %s'
                             % ((found.get('name'), found.get('version'), found.get('stage')) + want))


def _template_spec(pod_spec, package, interrupt, deadline):
    spec = copy.deepcopy(pod_spec)
    for container in spec.get('containers') or []:
        if container.get('name') == pod_layout.PAUSE_CONTAINER:
            container['name'] = DONE_CONTAINER
            container['image'] = package.image_ref
            container['command'] = list(EXIT_ZERO_COMMAND)
    spec['tolerations'] = list(spec.get('tolerations') or []) + [dict(t) for t in JOB_TOLERATIONS]
    spec.pop('activeDeadlineSeconds', None)
    spec['restartPolicy'] = 'OnFailure' if interrupt else 'Never'
    if not interrupt and deadline is not None:
        spec['activeDeadlineSeconds'] = deadline
    return spec


def _job_spec(template, interrupt, deadline, backoff_limit):
    spec = {'parallelism': 1, 'completions': 1, 'podReplacementPolicy': 'Failed', 'template': template}
    if interrupt:
        spec['backoffLimit'] = INTERRUPT_BACKOFF_LIMIT
        if deadline is not None:
            spec['activeDeadlineSeconds'] = deadline
    else:
        spec['backoffLimit'] = backoff_limit
        spec['podFailurePolicy'] = copy.deepcopy(DISRUPTION_POLICY)
    return spec


def job_manifest(pod_manifest, cr, package, stage, node, gen, cr_uid=None, cr_generation=None, stage_timeout=None,
                 job_stage_timeout=JOB_STAGE_TIMEOUT, backoff_limit=JOB_BACKOFF_LIMIT, interrupt=None):
    """The Job the v0.18+ operator creates for ``pod_manifest`` (createJobFromPackage / createInterruptJobFromPackage).

    ``pod_manifest``: the pod pod_layout built for this package, stage and node (stage_pod, or interrupt_pod for
    ``interrupt`` / ``uninstall-interrupt``); it is not changed. ``package``: a cr_model Package or its key in
    ``cr.packages``. ``gen``: the api_generation contract the keys are named in (NODEWRIGHT for a v0.18+ operator).
    ``cr_uid`` / ``cr_generation``: those of the CR object the operator reconciles (default ``cr.uid`` /
    ``cr.generation``, else '' and 0): the ``/generation`` label, the resource-id annotation and, with a uid, the
    controller reference. ``stage_timeout`` / ``job_stage_timeout``: see stage_deadline_seconds. ``backoff_limit``:
    JOB_BACKOFF_LIMIT, retries a package Job gets. ``interrupt``: None derives it from the stage (a contradicting
    value is a ValueError).
    """
    package = pod_layout.package_of(cr, package)
    interrupt = _is_interrupt(stage, interrupt)
    if isinstance(backoff_limit, bool) or not isinstance(backoff_limit, int) or not 0 <= backoff_limit <= MAX_INT32:
        raise ValueError('JOB_BACKOFF_LIMIT must be a whole number from 0 to %d, not %r' % (MAX_INT32, backoff_limit))
    _check_pod(pod_manifest, package, stage, node)
    uid, generation = _identity(cr, cr_uid, cr_generation)
    deadline = stage_deadline_seconds(package, stage_timeout, job_stage_timeout)
    package_json = pod_layout.package_annotation(cr.name, package, stage)
    labels = job_labels(cr.name, package, stage, node, generation, gen, interrupt)

    template = {'metadata': {'labels': dict(labels), 'annotations': {gen.package_annotation: package_json}},
                'spec': _template_spec(pod_manifest['spec'], package, interrupt, deadline)}
    pod_meta = pod_manifest.get('metadata') or {}
    meta = {
        'name': pod_meta['name'],
        'namespace': pod_meta.get('namespace') or pod_layout.DEFAULT_NAMESPACE,
        'labels': labels,
        'annotations': {resource_id_annotation(gen): pod_layout.resource_id(cr.name, uid, generation),
                        gen.package_annotation: package_json},
    }
    if uid:
        # as for pods: only for a CR that exists, else the garbage collector deletes the Job
        meta['ownerReferences'] = [{'apiVersion': gen.api_version, 'kind': gen.kind, 'name': cr.name, 'uid': uid,
                                    'controller': True, 'blockOwnerDeletion': True}]
    return {'apiVersion': 'batch/v1', 'kind': 'Job', 'metadata': meta,
            'spec': _job_spec(template, interrupt, deadline, backoff_limit)}


# --------------------------------------------------------------------------- the outcome


def _get(obj, key):
    value = obj.get(key) if isinstance(obj, dict) else None
    return value if value is not None else {}


def _job_generation(job):
    """The generation whose name label the Job carries (NODEWRIGHT when neither's)."""
    labels = _get(_get(job, 'metadata'), 'labels')
    for gen in (api_generation.NODEWRIGHT, api_generation.SKYHOOK):
        if gen.name_label in labels:
            return gen
    return api_generation.NODEWRIGHT


def _condition(job, kind):
    """The Job's condition of type ``kind`` when its status is True, else None."""
    for condition in _get(_get(job, 'status'), 'conditions') or []:
        if isinstance(condition, dict) and condition.get('type') == kind and condition.get('status') == 'True':
            return condition
    return None


def _pod_failure_is_genuine(pod):
    for status in _get(pod, 'status').get('initContainerStatuses') or []:
        state = status.get('state') or {}
        terminated, waiting = state.get('terminated'), state.get('waiting')
        if terminated is not None and (terminated.get('exitCode') or 0) == 0:
            continue
        if terminated is not None:
            return terminated.get('reason') != 'ContainerStatusUnknown'
        return waiting is not None and waiting.get('reason') == 'CrashLoopBackOff'
    return False


def pod_failed_genuinely(pod):
    """Whether a Job's child pod failed by the package's own doing (podFailedGenuinely).

    Failed, not a disruption (no DisruptionTarget condition), and either killed by its own deadline (reason
    DeadlineExceeded) or with a failing init container: the first one not exited 0 exited non-zero (except the
    kubelet's ContainerStatusUnknown) or waits in CrashLoopBackOff. A pod the kubelet refused to admit has none.
    """
    status = _get(pod, 'status')
    if status.get('phase') != 'Failed':
        return False
    if any(c.get('type') == 'DisruptionTarget' and c.get('status') == 'True' for c in status.get('conditions') or []):
        return False
    return status.get('reason') == DEADLINE_EXCEEDED or _pod_failure_is_genuine(pod)


def _genuine(job, reason, gen, interrupt, child_pods, entry):
    """jobFailureIsGenuine: True, False, or None when the evidence it needs was not given."""
    if reason != BACKOFF_LIMIT_EXCEEDED:
        return True
    if interrupt and restart_limit_annotation(gen) in _get(_get(job, 'metadata'), 'annotations'):
        return True
    if child_pods is not None and any(pod_failed_genuinely(pod) for pod in child_pods):
        return True
    if entry is not None:
        package = _job_package(job, gen) or {}
        if entry and entry.get('stage') == package.get('stage') and entry.get('state') == 'erroring':
            return True
    return False if child_pods is not None and entry is not None else None


def _job_package(job, gen):
    text = _get(_get(job, 'metadata'), 'annotations').get(gen.package_annotation)
    try:
        value = json.loads(text) if text is not None else None
    except ValueError:
        value = None
    return value if isinstance(value, dict) else None


def _verdict(job, outcome, reason, message, **fields):
    status = _get(job, 'status')
    verdict = {'outcome': outcome, 'reason': reason, 'message': message,
               'active': int(status.get('active') or 0), 'succeeded': int(status.get('succeeded') or 0),
               'failed': int(status.get('failed') or 0), 'restarts': None, 'recorded': False,
               'genuine': None, 'state': None}
    verdict.update(fields)
    return verdict


def _finished(job, gen, interrupt, name, child_pods, entry):
    """The verdict on a Job with a Complete or Failed condition, or None when it has neither."""
    common = {'recorded': job_processed(job, gen),
              'restarts': None if interrupt else int(_get(job, 'status').get('failed') or 0)}
    complete = _condition(job, COMPLETE)
    if complete is not None:
        return _verdict(job, SUCCEEDED, complete.get('reason') or COMPLETE, 'job %s complete' % name,
                        state='complete', **common)
    failed = _condition(job, FAILED_CONDITION)
    if failed is None:
        return None
    reason = failed.get('reason') or FAILED_CONDITION
    genuine = _genuine(job, reason, gen, interrupt, child_pods, entry)
    message = 'job %s failed (%s)%s' % (name, reason, ': %s' % failed['message'] if failed.get('message') else '')
    if genuine is False:
        message += '; no attempt failed by the package itself: the operator runs the stage again'
    elif genuine is None:
        message += '; whether the package failed takes its attempt pods or the node state entry'
    return _verdict(job, FAILED, reason, message, genuine=genuine, state='erroring' if genuine else None, **common)


def job_outcome(job, child_pods=None, entry=None):
    """Whether a package or interrupt Job has finished, as JobReconcile reads it: a dict with

    * ``outcome``: ``running``, ``succeeded``, ``failed``, or ``missing`` (``job`` is None, is being deleted, or
      its package annotation says ``invalid``: the operator deletes it and makes a new one);
    * ``reason``: the condition's reason (``BackoffLimitExceeded``, ``DeadlineExceeded``, ``PodFailurePolicy``;
      ``CompletionsReached`` or ``Complete``), else ``FailureTarget`` (failing, pods being terminated),
      ``Suspended``, ``Active`` or ``Pending``; ``message``: one line for people;
    * ``active`` / ``succeeded`` / ``failed``: the status counts; ``restarts``: what the operator records as the
      entry's restarts, the failed attempts of a package Job (None for an interrupt Job, restarted in place);
    * ``recorded``: the operator has written this outcome (``<prefix>/state-recorded``);
    * ``genuine`` (failed only): whether the failure is the package's (jobFailureIsGenuine). Only a
      BackoffLimitExceeded needs evidence: ``child_pods`` (the Job's pods, by ``batch.kubernetes.io/controller-uid``)
      and ``entry`` (the package's node state entry, ``{}`` when the node has none). None when what was given
      cannot decide; ``state``: ``complete``, ``erroring`` (a genuine failure) or None.
    """
    if job is None:
        return _verdict(job, MISSING, 'JobNotFound', 'no job')
    gen = _job_generation(job)
    meta = _get(job, 'metadata')
    name = meta.get('name') or '?'
    if meta.get('deletionTimestamp'):
        return _verdict(job, MISSING, 'JobDeleting', 'job %s is being deleted' % name)
    if (_job_package(job, gen) or {}).get('invalid'):
        return _verdict(job, MISSING, 'PackageInvalid', 'job %s runs a package the CR no longer has' % name)
    interrupt = _get(meta, 'labels').get(gen.interrupt_label) == pod_layout.INTERRUPT_LABEL_VALUE
    verdict = _finished(job, gen, interrupt, name, child_pods, entry)
    if verdict is not None:
        return verdict
    status = _get(job, 'status')
    restarts = None if interrupt else int(status.get('failed') or 0)
    target = _condition(job, FAILURE_TARGET)
    if target is not None:
        reason, message = FAILURE_TARGET, 'job %s is failing (%s)' % (name, target.get('reason') or FAILURE_TARGET)
    elif _get(job, 'spec').get('suspend'):
        reason, message = 'Suspended', 'job %s is suspended (the CR is paused)' % name
    elif int(status.get('active') or 0):
        reason, message = 'Active', 'job %s is running' % name
    else:
        reason, message = 'Pending', 'job %s has no running pod' % name
    if restarts:
        message += ' after %d failed attempt%s' % (restarts, '' if restarts == 1 else 's')
    return _verdict(job, RUNNING, reason, message, restarts=restarts, recorded=job_processed(job, gen))


# --------------------------------------------------------------------------- the mark on a finished Job


def job_processed(job, gen=None):
    """Whether the operator has recorded the Job's outcome (jobProcessed)."""
    gen = gen or _job_generation(job)
    return _get(_get(job, 'metadata'), 'annotations').get(state_recorded_annotation(gen)) == 'true'


def ttl_seconds_after_finished(outcome, ttl_succeeded=JOB_TTL_SUCCEEDED, ttl_failed=JOB_TTL_FAILED):
    """The ttlSecondsAfterFinished the operator sets once it has recorded a finished Job (whole seconds, truncated).

    ``outcome``: ``succeeded`` or ``failed`` (or a job_outcome dict); the TTLs are Go duration strings or whole
    seconds (JOB_TTL_SUCCEEDED, JOB_TTL_FAILED), each at least one minute as the operator requires.
    """
    outcome = outcome.get('outcome') if isinstance(outcome, dict) else outcome
    if outcome not in (SUCCEEDED, FAILED):
        raise ValueError('only a finished job (succeeded or failed) gets a TTL, not %r' % (outcome,))
    what, value = ('JOB_TTL_SUCCEEDED', ttl_succeeded) if outcome == SUCCEEDED else ('JOB_TTL_FAILED', ttl_failed)
    nanoseconds = _nanoseconds(value, what)
    if nanoseconds < duration.MINUTE:
        raise ValueError('%s must be at least 1 minute, not %r' % (what, value))
    return min(nanoseconds // duration.SECOND, MAX_INT32)


def processed_patch(outcome, gen, ttl_succeeded=JOB_TTL_SUCCEEDED, ttl_failed=JOB_TTL_FAILED):
    """The merge patch the operator applies to a finished Job once recorded (markJobProcessed): the marker and TTL."""
    return {'metadata': {'annotations': {state_recorded_annotation(gen): 'true'}},
            'spec': {'ttlSecondsAfterFinished': ttl_seconds_after_finished(outcome, ttl_succeeded, ttl_failed)}}
