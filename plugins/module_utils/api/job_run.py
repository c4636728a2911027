# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""Running one stage as the v0.18-v0.20 NodeWright operator does: in a batch/v1 Job, through ``kube.Kube``.

``runner_for`` is the one place that chooses how a stage runs: a bare pod (pod_run.PodRun) under the v0.15
contract (api_generation.SKYHOOK), a Job (``JobRun``) under v0.18+ (NODEWRIGHT). Both have the interface
pod_run.run_recorded drives, so the recorded run (ConfigMaps, node writes, verdict, logs, cleanup) is the same.

A JobRun, in the operator's order (job_layout holds every decision; this file only sequences the requests):

* the Job is job_layout.job_manifest around the pod pod_layout built, in the pod's namespace (the generation's);
  ``retries`` is a package Job's backoffLimit (the attempts after the first, as JOB_BACKOFF_LIMIT); an interrupt
  Job restarts its pod in place (backoffLimit MaxInt32) and ``retries`` bounds the restarts, as for a pod;
* a Job found under the name is adopted while it is still the CR's (the labels name, package, stage and node, and
  the package annotation, as the CR asks now) and the node's state still wants it, so a handoff from a v0.20
  operator mid-stage does not start a second Job; one being deleted, whose package is invalid, no longer the
  CR's or a recorded failure is deleted (with its pods) and replaced;
* the verdict: a package Job by a watch of the Job (job_layout.job_outcome: Complete, Failed), with its pods read
  once at the end for a failure's evidence (a genuine BackoffLimitExceeded) and the logs; an interrupt Job by a
  watch of its pod (pod_verdicts.pod_outcome, ``retries`` restarts), as the operator's pod watch judges it;
* after the verdict is recorded on the node: job_layout.processed_patch on the Job (``<prefix>/state-recorded``
  and its TTL, as markJobProcessed), then ``delete_pod`` applied to the Job (propagation Background: its pods go
  with it).

NVIDIA/nodewright operator/internal/controller/job_controller.go @05e01958 (JobReconcile, markJobProcessed) and
skyhook_controller.go (v0.20: ApplyPackage, Interrupt, JobExists), as job_layout's docstring cites them.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible_collections.nodewright.bridge.plugins.module_utils.model import api_generation
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import job_layout
from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube as kube_api
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import pod_verdicts
from ansible_collections.nodewright.bridge.plugins.module_utils.api import pod_run
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import stale_pods
from ansible_collections.nodewright.bridge.plugins.module_utils.model.stages import INTERRUPT_STAGES

# The label the Job controller puts on a Job's pods (every Kubernetes version; 1.27+ also
# batch.kubernetes.io/job-name). A pod of an earlier Job of the same name may still carry it while
# the garbage collector deletes it: a pod is the Job's only when its owner reference names the Job's uid.
JOB_NAME_LABEL = 'job-name'


def runner_for(gen, kube, manifest, log_containers, cr, package, stage, cr_uid=None, cr_generation=None, **options):
    """The runner of one stage's pod ``manifest`` (pod_layout's): a JobRun under api_generation.NODEWRIGHT, else a
    pod_run.PodRun. ``options``: PodRun's (retries, timeout, delete, log_lines, entry, failed_is_stale, recheck).
    ``cr`` / ``package`` (a cr_model Package) / ``cr_uid`` / ``cr_generation``: what job_manifest lays the Job out
    with (the CR's identity in the cluster; the package's stageTimeout)."""
    if gen is api_generation.NODEWRIGHT:
        return JobRun(kube, manifest, log_containers, cr, package, stage, cr_uid=cr_uid, cr_generation=cr_generation,
                      gen=gen, **options)
    return pod_run.PodRun(kube, manifest, log_containers, stage=stage, gen=gen, **options)


def _meta(obj):
    return (obj or {}).get('metadata') or {}


def _template(job):
    return ((job or {}).get('spec') or {}).get('template') or {}


def _created(pod):
    return (_meta(pod).get('creationTimestamp') or '', _meta(pod).get('name') or '')


def owned_pods(pods, job_uid):
    """The pods of ``pods`` whose controller is the Job ``job_uid``, oldest first."""
    mine = [p for p in pods if any(ref.get('uid') == job_uid and ref.get('kind') == 'Job'
                                   for ref in _meta(p).get('ownerReferences') or [])]
    return sorted(mine, key=_created)


def label_difference(job, manifest, gen):
    """A few words on how a Job found under the name differs from the one ``manifest`` lays out, or None.

    What makes a Job the CR's for this stage (the operator's JobExists keys and the stage): the labels name,
    package, stage and node, and the package annotation (package, version, image, stage). Not the pod template:
    the v0.18+ operator's pod differs from pod_layout's in ways that do not change what runs (job_layout).
    """
    have, want = _meta(job).get('labels') or {}, manifest['metadata']['labels']
    for key in (gen.name_label, gen.package_label, job_layout.stage_label(gen), job_layout.node_label(gen)):
        if have.get(key) != want.get(key):
            return 'its label %s is %s, the CR asks for %s' % (key, have.get(key), want.get(key))
    have_package = (_meta(job).get('annotations') or {}).get(gen.package_annotation)
    want_package = manifest['metadata']['annotations'][gen.package_annotation]
    if have_package != want_package:
        return 'its package annotation is %s, the CR asks for %s' % (have_package, want_package)
    return None


class JobRun(object):
    """Create (or adopt) one stage Job, wait for its verdict by watch, collect its pod's logs, mark it, clean up.

    The interface of pod_run.PodRun (see there). ``pod_manifest``: the pod pod_layout built for the stage;
    ``manifest`` is the Job around it. ``job`` is the Job as last seen, ``job_pod`` its pod the verdict and logs
    come from. The ``timeout`` of the whole wait starts when the run is made.
    """

    kind = 'job'

    def __init__(self, kube, pod_manifest, log_containers, cr, package, stage, retries=0, timeout=600, delete='always',
                 log_lines=200, entry=None, failed_is_stale=True, recheck=None, gen=api_generation.NODEWRIGHT,
                 cr_uid=None, cr_generation=None):
        self.kube = kube
        self.gen = gen
        self.stage = stage
        self.interrupt = stage in INTERRUPT_STAGES
        self.manifest = job_layout.job_manifest(
            pod_manifest, cr, package, stage, pod_manifest['spec']['nodeName'], gen, cr_uid=cr_uid,
            cr_generation=cr_generation, stage_timeout=getattr(package, 'stage_timeout_text', None), backoff_limit=retries)
        self.namespace = self.manifest['metadata']['namespace']
        self.name = self.manifest['metadata']['name']
        self.node_name = pod_manifest['spec']['nodeName']
        self.log_containers = list(log_containers)
        self.retries = retries
        self.timeout = timeout
        self.delete = delete
        self.log_lines = log_lines
        self.entry = entry
        self.failed_is_stale = failed_is_stale
        self.recheck = recheck
        self.job = None
        self.job_pod = None
        self.pods = None          # the Job's pods, once read (owned_pods)
        self.verdict = {}
        self.found = None
        self.looked = False
        self.adopted = False
        self.replaced = None      # why a Job found under the name was deleted instead of adopted
        self.started = time.time()

    # ------------------------------------------------------------------ create or adopt

    def _what(self):
        return 'job %s/%s' % (self.namespace, self.name)

    def stale_reason(self, job, by_state=True):
        """Why ``job`` (found under the name) must be replaced rather than adopted, or None to adopt it.

        As stale_pods.stale_pod_reason for a pod: no longer the CR's (label_difference), or (``by_state``) not what
        the node's state asks for; and, as JobReconcile, a Job whose package annotation says invalid."""
        outcome = job_layout.job_outcome(job)
        if outcome['outcome'] == job_layout.MISSING:
            return outcome['message']
        difference = label_difference(job, self.manifest, self.gen)
        if difference:
            return 'it no longer matches the CR: %s' % difference
        if not by_state:
            return None
        entry = self.entry
        if entry is None:
            return "the node's state does not list its package (reset or rerun since it was created)"
        if entry.get('stage') != self.stage:
            return "the node's state is at stage %s, not %s" % (entry.get('stage'), self.stage)
        if entry.get('state') == 'complete':
            return "the node's state records stage %s complete: this run makes a new attempt" % self.stage
        if self.failed_is_stale and outcome['outcome'] == job_layout.FAILED:
            return 'it failed in an earlier attempt (recorded as %s)' % entry.get('state')
        return None

    def existing(self, replace=True, by_state=True):
        """The Job by that name when it is ours to adopt (same node, not being deleted, still the CR's), else None.

        A stale one (``stale_reason``) is deleted with its pods and waited for, so that a new one is created;
        ``replace=False`` (a dry run) only notes why (``replaced``). ``by_state=False``: judged on the CR alone.
        """
        try:
            job = self.kube.get_job(self.namespace, self.name)
        except kube_api.NotFound:
            return None
        meta = _meta(job)
        if meta.get('deletionTimestamp'):
            self.wait_deleted(meta.get('uid'))
            return None
        node_name = (_template(job).get('spec') or {}).get('nodeName')
        if node_name != self.node_name:
            raise kube_api.KubeError('%s exists for node %s, not for %s; refusing to adopt it'
                                     % (self._what(), node_name, self.node_name))
        why = self.stale_reason(job, by_state=by_state)
        if why:
            self.replaced = '%s was replaced: %s' % (self._what(), why)
            if not replace:
                return None
            self.kube.delete_job(self.namespace, self.name, uid=meta.get('uid'))
            self.wait_deleted(meta.get('uid'))
            return None
        return job

    def create(self, dry_run=False):
        return self.kube.create_job(self.namespace, self.manifest, dry_run=dry_run)

    def preflight(self, dry_run=True, check_mode=False):
        """Before any write: send the Job as a dry run (RBAC, admission, namespace); one already there is looked at
        (pod_run.look_by_dry_run). In check mode a stale Job is not deleted (``replaced`` says it would be)."""
        return pod_run.look_by_dry_run(self, dry_run, check_mode)

    def start(self):
        """Adopt the Job an earlier run (or the operator) left running, or create it (pod_run.create_or_adopt)."""
        self.job, self.adopted = pod_run.create_or_adopt(self)
        return self.job

    # ------------------------------------------------------------------ the verdict

    def wait(self):
        """The verdict (pod_verdicts.pod_outcome's keys; a package Job's also job_layout.job_outcome's ``message``,
        ``job_reason``, ``genuine``) once the Job (an interrupt Job: its pod) succeeded, failed or vanished; SUPERSEDED
        when ``recheck`` found that the CR no longer asks for the Job, which is then deleted with its pods."""
        self.verdict = pod_run.wait_rechecked(self)
        return self.verdict

    def wait_for(self, remaining):
        """The verdict within ``remaining`` seconds, else outcome ``timeout``."""
        try:
            if self.interrupt:
                return self._wait_for_pod(remaining)
            return self._wait_for_job(remaining)
        except kube_api.WaitTimeout:
            return {'outcome': 'timeout'}

    def _wait_for_job(self, remaining):
        uid = _meta(self.job).get('uid')
        last = {}

        def finished(objects):
            last['job'] = job = objects.get(uid)
            if job is not None:
                self.job = job
            return job_layout.job_outcome(job)['outcome'] != job_layout.RUNNING

        self.kube.watch_until('jobs', finished, remaining, namespace=self.namespace,
                              field_selector='metadata.name=%s' % self.name, what='%s to finish' % self._what(),
                              since=_meta(self.job).get('resourceVersion'))
        return self._job_verdict(last.get('job'))

    def _job_verdict(self, job):
        """The verdict on a finished (or vanished) package Job; a failure reads the Job's pods (its evidence)."""
        outcome = job_layout.job_outcome(job)
        pod = None
        if outcome['outcome'] == job_layout.FAILED:
            pods = self.read_pods()
            outcome = job_layout.job_outcome(job, child_pods=pods, entry={})
            genuine = [p for p in pods if job_layout.pod_failed_genuinely(p)]
            pod = (genuine or pods or [None])[-1]
            self.job_pod = pod
        if pod is not None:
            verdict = pod_verdicts.pod_outcome(pod)
        else:
            verdict = {'container': None, 'exit_code': None, 'reason': outcome['reason']}
        verdict.update(outcome=outcome['outcome'], restarts=int(outcome['restarts'] or 0), state=outcome['state'],
                       message=outcome['message'], job_reason=outcome['reason'], genuine=outcome['genuine'])
        if outcome['outcome'] == job_layout.MISSING:
            verdict['reason'] = outcome['reason']
        return verdict

    def _wait_for_pod(self, remaining):
        """An interrupt Job's verdict from its pod (restarted in place: ``retries`` restarts, as a bare pod's)."""
        uid = _meta(self.job).get('uid')
        verdict, seen = {}, []

        def finished(objects):
            pods = owned_pods(objects.values(), uid)
            if pods:
                seen.append(True)
                self.job_pod = pods[-1]
            elif not seen:
                return False   # the Job controller has not made it yet
            outcome = pod_verdicts.pod_outcome(pods[-1] if pods else None, retries=self.retries)
            verdict.clear()
            verdict.update(outcome)
            return outcome['outcome'] != pod_verdicts.RUNNING

        self.kube.watch_until('pods', finished, remaining, namespace=self.namespace,
                              label_selector='%s=%s' % (JOB_NAME_LABEL, self.name),
                              what='the pod of %s to finish' % self._what())
        return dict(verdict)

    def read_pods(self):
        """The Job's pods (one list, by its job-name label, kept), oldest first."""
        if self.pods is None:
            listing = self.kube.list_pods(self.namespace, label_selector='%s=%s' % (JOB_NAME_LABEL, self.name))
            self.pods = owned_pods(listing.get('items') or [], _meta(self.job).get('uid'))
        return self.pods

    def differs(self, wanted):
        """Why the running Job is not what the pod ``wanted`` (pod_layout's, of the CR as it is now) asks for, or None.

        The package annotation and, for a Job this run made, the init containers (an adopted Job's pod is the
        operator's: only its package annotation is compared)."""
        have_meta = {'annotations': dict(_meta(self.job).get('annotations') or {})}
        want_meta = {'annotations': dict(_meta(wanted).get('annotations') or {})}
        have, want = {'metadata': have_meta, 'spec': {}}, {'metadata': want_meta, 'spec': {}}
        if not self.adopted:
            have['spec']['initContainers'] = (_template(self.job).get('spec') or {}).get('initContainers') or []
            want['spec']['initContainers'] = (wanted.get('spec') or {}).get('initContainers') or []
        return stale_pods.stale_pod_reason(have, want, None, self.stage, by_state=False, gen=self.gen)

    def remove(self):
        """Delete the running Job with its pods and wait until it is gone (the CR no longer asks for it)."""
        uid = _meta(self.job).get('uid')
        self.kube.delete_job(self.namespace, self.name, uid=uid)
        self.wait_deleted(uid)

    # ------------------------------------------------------------------ after the verdict

    def logs(self):
        """Logs of every container of the Job's last pod that ran, ``{container: text}``; errors noted."""
        pod = self.job_pod
        if pod is None and self.job is not None:
            pods = self.read_pods()
            pod = self.job_pod = pods[-1] if pods else None
        if pod is None:
            return {}, dict((c, 'no pod of %s to read it from' % self._what()) for c in self.log_containers)
        return pod_run.container_logs(self.kube, self.namespace, _meta(pod).get('name'), pod, self.log_containers,
                                      self.log_lines)

    def progress(self):
        """Where the Job's last pod stood when the wait ended (pod_verdicts.pod_progress), or that it had none."""
        pod = self.job_pod
        if pod is None and self.job is not None:
            pods = self.read_pods()
            pod = self.job_pod = pods[-1] if pods else None
        return pod_verdicts.pod_progress(pod) or '%s had no pod' % self._what()

    def mark_processed(self):
        """job_layout.processed_patch on the finished Job (its outcome recorded, its TTL), as markJobProcessed; an
        interrupt Job failed past its restarts also gets ``<prefix>/restart-limit-exceeded``. Best effort: a Job
        already gone is left alone, any other refusal is a warning of the module."""
        outcome = self.verdict.get('outcome')
        if self.job is None or outcome not in (job_layout.SUCCEEDED, job_layout.FAILED) or job_layout.job_processed(self.job):
            return
        patch = job_layout.processed_patch(outcome, self.gen)
        if self.interrupt and outcome == job_layout.FAILED:
            patch['metadata']['annotations'][job_layout.restart_limit_annotation(self.gen)] = 'true'
        try:
            self.job = self.kube.patch_job(self.namespace, self.name, patch)
        except kube_api.NotFound:
            return
        except kube_api.KubeError as exc:
            self.kube.warnings.append('%s was not marked recorded (%s): a v0.18+ operator may record it again'
                                      % (self._what(), exc.message))

    def cleanup(self, succeeded):
        """Mark the Job recorded, then delete it (and its pods) per the delete policy; True if it was deleted."""
        if self.job is None:
            return False
        self.mark_processed()
        if self.delete == 'never' or (self.delete == 'on_success' and not succeeded):
            return False
        return self.kube.delete_job(self.namespace, self.name, uid=_meta(self.job).get('uid'))

    def describe(self, deleted):
        """The ``pod`` of the module's result: the Job (``kind``), and the pod its verdict came from."""
        return {'name': self.name, 'namespace': self.namespace, 'uid': _meta(self.job).get('uid'), 'kind': 'Job',
                'job_pod': _meta(self.job_pod).get('name') if self.job_pod else None,
                'adopted': self.adopted, 'deleted': deleted, 'replaced': self.replaced}

    def wait_deleted(self, uid):
        def gone(objects):
            return uid not in objects
        self.kube.watch_until('jobs', gone, max(1, self.timeout - (time.time() - self.started)), namespace=self.namespace,
                              field_selector='metadata.name=%s' % self.name,
                              what='the old %s to be deleted' % self._what())
