# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""Running one NodeWright pod (a package stage or an interrupt) to its end, through ``kube.Kube``.

Shared by package_stage and node_interrupt: ``run_recorded`` is their whole pod run. The decisions
are pure (pod_layout builds the pod, pod_verdicts judges its status, stale_pods says whether a pod found
under its name is still the CR's, node_state encodes the annotations); this file only sequences the
requests:

    node-metadata ConfigMap -> nodeState in_progress -> pod -> (watch) -> nodeState result -> delete pod

The in_progress record goes before the pod (the operator writes it just after its create), so no moment of a
killed run leaves a pod that the node's state does not list: such a pod is deleted and made again by the next run,
as by the operator (its ValidateRunningPackages), which would run its stage twice. A kill between the record and
the create leaves the stage in progress with no pod, which the next run, or the operator (its ApplyPackage creates
the pod of an in_progress package that has none), starts once.

Every function (and class) that names a key takes ``gen``, the api_generation.Generation of the
node's and the pods' keys (SKYHOOK, ``skyhook.nvidia.com/*``, unless the caller says otherwise) and
passes it on to node_state and pod_layout. A CR's own pause / disable annotations are those of the
CR's API group (:func:`cr_generation`): a NodeWright CR is paused by ``nodewright.nvidia.com/pause``
(NVIDIA/nodewright operator/api/nodewright/v1alpha1/nodewright_types.go @90d9979d, IsPaused / IsDisabled).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import time

from ansible_collections.nodewright.bridge.plugins.module_utils.model import api_generation
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import cr_handoff
from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_model
from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_validation
from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube as kube_api
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import node_conditions
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import node_annotations
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import pod_layout
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import pod_verdicts
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import stale_pods
from ansible_collections.nodewright.bridge.plugins.module_utils.model.api_generation import SKYHOOK

DELETE_POLICIES = ('always', 'on_success', 'never')

# Operator settings a pod is built with; module options of the same names.
# namespace, agent_image and runtime_required_taint default to the API generation's (pod_layout.defaults; with_defaults).
OPERATOR_OPTIONS = dict(
    namespace=dict(type='str'),
    agent_image=dict(type='str'),
    pause_image=dict(type='str', default=pod_layout.DEFAULT_PAUSE_IMAGE),
    image_pull_secret=dict(type='str', default=pod_layout.DEFAULT_IMAGE_PULL_SECRET, no_log=False),
    copy_dir_root=dict(type='str', default=pod_layout.DEFAULT_COPY_DIR_ROOT),
    agent_log_root=dict(type='str', default=pod_layout.DEFAULT_AGENT_LOG_ROOT),
    runtime_required_taint=dict(type='str'),
)

# The options of a recorded pod run, the same in package_stage and node_interrupt
# (documented once: doc_fragments/operator_pods.py, RUN and LOGS).
RUN_OPTIONS = dict(
    node=dict(type='str', required=True),
    cr=dict(type='raw'),
    cr_name=dict(type='str'),
    package=dict(type='str', required=True),
    timeout=dict(type='int', default=1800),
    # one name from the role down (nodewright_stage_retries -> node_update's stage_retries -> here); retries, its
    # old name, was also an Ansible task keyword
    stage_retries=dict(type='int', default=0, aliases=['retries'],
                       deprecated_aliases=[dict(name='retries', version='2.0.0', collection_name='nodewright.bridge')]),
    delete_pod=dict(type='str', default='on_success', choices=list(DELETE_POLICIES)),
    # rerun a complete stage (as kubectl skyhook package rerun); force, its old name, also meant the operator
    # guard's override in node_update, operator_guard and the node role
    rerun=dict(type='bool', default=False, aliases=['force'],
               deprecated_aliases=[dict(name='force', version='2.0.0', collection_name='nodewright.bridge')]),
    log_lines=dict(type='int', default=200),
    collect_logs=dict(type='str', default='always', choices=['always', 'on_failure']),
    preflight=dict(type='bool', default=True),
    cr_identity=dict(type='dict', options=dict(uid=dict(type='str'), generation=dict(type='int'))),
)


def pod_module_args(**options):
    """The AnsibleModule keywords of a pod module: connection, operator and run options, plus its own ``options``."""
    argument_spec = kube_api.auth_argument_spec()
    argument_spec.update(OPERATOR_OPTIONS)
    argument_spec.update(copy.deepcopy(RUN_OPTIONS))
    argument_spec.update(options)
    return dict(argument_spec=argument_spec, supports_check_mode=True, required_one_of=[('cr', 'cr_name')])


def with_defaults(params, gen):
    """``params`` with the generation's operator defaults (namespace, agent image, runtime-required taint) where unset."""
    defaults = pod_layout.defaults(gen)
    return dict(params, **dict((key, params.get(key) or value) for key, value in defaults.items()))


def operator_settings(params):
    return dict((key, params[key]) for key in OPERATOR_OPTIONS if key != 'namespace')


def load_cr(kube, cr_arg, cr_name):
    """``(NodeWrightCR, document)`` from the ``cr`` argument (a document or the documents of a file,
    read by the action plugin) or, without it, from the cluster by ``cr_name``."""
    if cr_arg is None:
        if not cr_name:
            raise cr_model.CRValidationError('cr', ['give cr (a document or a file) or cr_name (read from the cluster)'])
        doc = kube.get_cr(cr_name)
        return stored_cr(kube, doc), doc
    docs = cr_arg if isinstance(cr_arg, list) else [cr_arg]
    if not all(isinstance(d, dict) for d in docs):
        raise cr_model.CRValidationError('cr', ['must be a CR document, a list of documents or a file path'])
    doc = cr_model.select_cr(docs, cr_name, 'cr')[0]
    return cr_validation.build_cr(doc), doc


def stored_cr(kube, doc):
    """The NodeWrightCR of ``doc``, a CR as the cluster returned it: validated once per version in this process
    (cr_handoff.stored_cr), shared with every step that reads that version. Read it, never change it."""
    return cr_handoff.stored_cr(kube, doc, cr_validation.build_cr)


def planned_change(params, doc):
    """The failure of a pod step whose CR ``doc`` (read now) is no longer the one its node was planned with (the
    ``cr_identity`` option; the rule is cr_handoff.change), or None: ``superseded`` for a new generation
    (node_update plans the node again), ``cr_replaced`` for another uid (node_update stops the node). None for a CR
    given as a document. Returns ``(message, fields)`` for ModuleFailed."""
    if params.get('cr') is not None or not params.get('cr_identity'):
        return None
    planned = dict(params['cr_identity'], name=params.get('cr_name'))
    now = cr_handoff.identity(doc)
    outcome = cr_handoff.change(planned, now)
    if outcome == cr_handoff.SAME:
        return None
    reason = cr_handoff.describe(outcome, planned, now)
    message = '%s %s on node %s: %s; nothing was changed' % (
        params['package'], params.get('stage') or 'interrupt', params['node'], reason)
    fields = dict(node=params['node'], changed=False)
    if outcome == cr_handoff.NEW_GENERATION:
        fields['superseded'] = reason
    else:
        fields['cr_replaced'] = True
    return message, fields


def cr_generation(api_version, gen=SKYHOOK):
    """The generation whose pause and disable keys a CR carries: that of its own ``apiVersion``.

    The operator reads them from the CR's own prefix (IsPaused / IsDisabled), so a NodeWright CR is paused by
    ``nodewright.nvidia.com/pause`` and a Skyhook CR by ``skyhook.nvidia.com/pause``, whichever generation the
    nodes' keys are in. ``gen`` when the apiVersion is none of the CRs' (a document without one).
    """
    try:
        return api_generation.by_api_version(api_version)
    except api_generation.GenerationError:
        return gen


def held(kube, cr, node, cr_from_file=False, gen=SKYHOOK):
    """Why no new pod may start on ``node`` for ``cr`` now, or None: the CR paused or disabled (read from the
    cluster at this step: a pause written during a run stops it before its next pod), the node ignored.

    ``cr_from_file``: the CR came as a document; its copy in the cluster, if there is one, is the one a
    ``kubectl skyhook pause`` writes to, so it is read (one GET per pod step; 404: none).
    The pause / disable keys are the CR's group's (:func:`cr_generation`), the ignore label ``gen``'s.
    Returns ``(kind, message)``: kind ``paused``, ``disabled`` or ``ignored``.
    """
    annotations = cr.annotations
    if cr_from_file:
        annotations = _annotations_in_cluster(kube, cr.name, cr.api_version, annotations)[0]
    labels = (node.get('metadata') or {}).get('labels') or {}
    return hold_reason(cr.name, annotations, node['metadata']['name'], labels, gen=gen,
                       cr_gen=cr_generation(cr.api_version, gen))


def held_by_name(kube, cr_name, node, gen=SKYHOOK):
    """``held`` for a step that knows the CR by name only (a cordon, a drain): the CR as the cluster has it now
    (one GET; a CR that is not in the cluster holds nothing, the node's ignore label still does). The pause /
    disable keys are those of the group the CR was found in, the ignore label ``gen``'s."""
    labels = (node.get('metadata') or {}).get('labels') or {}
    annotations, cr_gen = _annotations_in_cluster(kube, cr_name, None, {}, gen)
    return hold_reason(cr_name, annotations, node['metadata']['name'], labels, gen=gen, cr_gen=cr_gen)


def _annotations_in_cluster(kube, name, api_version, default, gen=SKYHOOK):
    """``(annotations, generation of the CR found)`` of the CR in the cluster; ``(default, gen)`` when there is none."""
    try:
        doc = kube.get_cr(name, api_version)
    except kube_api.NotFound:
        return default, gen
    return (doc.get('metadata') or {}).get('annotations') or {}, cr_generation(doc.get('apiVersion'), gen)


def hold_reason(cr_name, cr_annotations, node_name, node_labels, gen=SKYHOOK, cr_gen=None):
    """``(kind, message)`` or None: the operator starts no pod for a paused or disabled CR, nor on an ignored node.

    ``cr_gen``: the generation of the CR's own group, whose pause / disable keys it carries (None: ``gen``);
    ``gen``: that of the node's ignore label.
    """
    cr_gen = cr_gen or gen
    for kind, key, undo in (('paused', cr_gen.pause_annotation, 'kubectl skyhook resume %s' % cr_name),
                            ('disabled', cr_gen.disable_annotation, 'kubectl skyhook enable %s' % cr_name)):
        if (cr_annotations or {}).get(key) == 'true':
            return kind, ('%s is %s (%s=true): no new pod starts on node %s; the node is left as it is (%s, then run '
                          'again to continue where it stopped)' % (cr_name, kind, key, node_name, undo))
    if node_annotations.is_ignored(node_labels, gen):
        return 'ignored', ('node %s carries %s=true: no new pod starts on it for %s (kubectl skyhook node unignore %s, '
                           'then run again)' % (node_name, gen.ignore_label, cr_name, node_name))
    return None


def read_entry(kube, node_name, cr_name, key, gen=SKYHOOK):
    """``(node, its annotations, the CR's nodeState entry `key` or None)``: one GET of the node (``gen``'s nodeState key)."""
    node = kube.get_node(node_name)
    annotations = (node.get('metadata') or {}).get('annotations') or {}
    state_key = node_annotations.node_state_key(cr_name, gen)
    state = node_annotations.decode(annotations.get(state_key), where='node %s annotation %s' % (node_name, state_key))
    return node, annotations, state.get(key)


def skipped_if_complete(result, current, stage, rerun, started, what):
    """``result`` as a skipped run when the entry ``current`` already has ``stage`` complete (and not ``rerun``), else None.

    ``what`` names the step in the message, e.g. ``'gpu-driver|1.0 stage apply'``.
    """
    if not current or current['stage'] != stage or current['state'] != 'complete' or rerun:
        return None
    result.update(outcome='skipped', entry=current, duration=round(time.time() - started, 3),
                  msg='%s is already complete on node %s' % (what, result['node']))
    return result


def set_entry(state, package, stage, value, restarts=0):
    """``state`` with ``package``'s entry (a cr_model package) at ``stage`` in state ``value``."""
    return node_annotations.upsert(state, package.name, package.version, package.image, value, stage, restarts,
                                   package.container_sha)[0]


def write_node_state(kube, node_name, cr_name, transform, status=None, dry_run=False, annotations=None, node=None,
                     gen=SKYHOOK):
    """Read-modify-write of the CR's nodeState on a node (guarded by the keys it reads and writes).

    ``transform(state) -> new_state`` works on the decoded state; the whole annotation is
    written at once (never a partial value), with ``status_<cr>`` if given and ``version_<cr>``,
    plus ``annotations`` (key -> value, None removes) in the same patch. ``node``: a fresh read
    of the node to start from (saves a GET). The CR's node conditions follow the new record
    (node_conditions; a status write only when they change, never in a dry run). The nodeState,
    status and version keys are ``gen``'s, and ``version_<cr>`` says ``gen``'s operator version.
    Returns ``(state_after, changed)``.
    """
    seen = {}
    extra = annotations
    state_key = node_annotations.node_state_key(cr_name, gen)

    def mutate(node):
        annotations = (node.get('metadata') or {}).get('annotations') or {}
        state = node_annotations.decode(annotations.get(state_key), where='node %s annotation %s' % (node_name, state_key))
        new = transform(state)
        seen['state'] = new
        patch = {'metadata': {'annotations': {}, 'labels': {}}}
        if new != state:
            # the last package uninstalled leaves '{}', as the operator's json.Marshal of an empty map writes it
            patch['metadata']['annotations'].update(node_annotations.node_state_patch(cr_name, new, gen)['metadata']['annotations'])
        for key, value in (extra or {}).items():
            if annotations.get(key) != value:
                patch['metadata']['annotations'][key] = value
        if status is not None and annotations.get(node_annotations.status_key(cr_name, gen)) != status:
            status_patch = node_annotations.status_patch(cr_name, status, gen)['metadata']
            patch['metadata']['annotations'].update(status_patch['annotations'])
            patch['metadata']['labels'].update(status_patch['labels'])
        if not patch['metadata']['annotations'] and not patch['metadata']['labels']:
            return None
        if annotations.get(node_annotations.version_key(cr_name, gen)) != gen.operator_version:
            patch['metadata']['annotations'].update(node_annotations.version_patch(cr_name, gen=gen)['metadata']['annotations'])
        if not patch['metadata']['labels']:
            del patch['metadata']['labels']
        return patch

    # mutate reads these annotations only: guarded by them, not by the node's version (kube.Kube.update_node)
    read = [state_key, node_annotations.status_key(cr_name, gen), node_annotations.version_key(cr_name, gen)] + list(extra or ())
    dummy, patch = kube.update_node(node_name, mutate, node=node, dry_run=dry_run, by_keys=read,
                                    conditions=node_conditions.writer(cr_name, gen=gen))
    return seen.get('state', {}), patch is not None


# How often a running stage pod is checked against the CR as it is now (PodRun.recheck): the operator's
# reconciles compare the running pods with the CR on every pass (a fix of a hanging stage lands).
RECHECK_SECONDS = 10
SUPERSEDED = 'superseded'


def wait_rechecked(runner):
    """``runner.wait_for(seconds)`` until the verdict, asking ``runner.recheck(runner)`` every RECHECK_SECONDS meanwhile.

    A reason from ``recheck`` means the CR no longer asks for what runs: ``runner.remove()``, verdict SUPERSEDED.
    The whole wait ends ``runner.timeout`` seconds after ``runner.started`` (verdict outcome ``timeout``).
    """
    deadline = runner.started + runner.timeout
    while True:
        remaining = max(1, deadline - time.time())
        if runner.recheck is None or remaining <= RECHECK_SECONDS:
            return runner.wait_for(remaining)
        verdict = runner.wait_for(RECHECK_SECONDS)
        if verdict.get('outcome') != 'timeout':
            return verdict
        why = runner.recheck(runner)
        if why:
            runner.remove()
            return {'outcome': SUPERSEDED, 'reason': why}


def container_logs(kube, namespace, name, pod, containers, log_lines):
    """``(logs, unavailable)``: the log of each of ``containers`` of pod ``namespace/name`` (``pod``: as last seen)
    that ran, ``{container: text}``, and why a log could not be read, ``{container: error}``."""
    statuses = dict((s.get('name'), s) for s in ((pod or {}).get('status') or {}).get('initContainerStatuses') or [])
    logs, unavailable = {}, {}
    for container in containers:
        status = statuses.get(container) or {}
        state = status.get('state') or {}
        if not status or ('waiting' in state and not status.get('lastState')):
            continue  # never started: nothing to read
        previous = 'waiting' in state and bool((status.get('lastState') or {}).get('terminated'))
        text, error = kube.pod_log(namespace, name, container, tail_lines=log_lines, previous=previous)
        if text is None:
            unavailable[container] = error
        else:
            logs[container] = text
    return logs, unavailable


def look_by_dry_run(runner, dry_run, check_mode):
    """A runner's preflight (a ``PodRun`` or a job_run.JobRun): the object found under its name to adopt, or None.

    The dry-run create goes first: on a node this CR has not run on (nearly every node of a rollout) nothing is
    there, and a GET would only be refused (404). The server answers AlreadyExists (409) only once authorisation
    and admission have accepted the object, so a 409 is the dry run passed and the object found: it is then read
    and adopted or replaced (``runner.existing``). Without dry runs nothing is sent: ``start`` creates first.
    Sets ``runner.found`` and ``runner.looked``.
    """
    runner.found, runner.looked = None, dry_run
    if dry_run:
        try:
            runner.create(dry_run=True)
        except kube_api.Conflict:
            runner.found = runner.existing(replace=not check_mode)
    return runner.found


def create_or_adopt(runner):
    """A runner's start: ``(object, adopted)``, the object the preflight found, else created, else (409) the one
    under its name adopted.

    After a look (the preflight's), a 409 is an object another run created since: judged on the CR alone
    (``by_state=False``), and the conflict raised if that is not ours to adopt. Without a look, a 409 is one an
    earlier run left: adopted, or replaced when stale (deleted, waited for, and created again), as the look would
    have done.
    """
    if runner.found is not None:
        return runner.found, True
    try:
        return runner.create(), False
    except kube_api.Conflict as exc:
        conflict = exc
    found = runner.existing(by_state=not runner.looked)
    if found is not None:
        return found, True
    if runner.looked:
        raise conflict
    return runner.create(), False


class PodRun(object):
    """Create (or adopt) one pod, wait for its verdict by watch, collect logs, clean up (the v0.15 operator's way).

    The interface ``run_recorded`` drives, which job_run.JobRun shares: ``preflight``, ``start``, ``wait``, ``logs``,
    ``cleanup``, ``describe``; ``recheck(runner)`` calls back ``differs`` and ``remove``; a timed-out
    stage's message asks ``progress``.
    """

    kind = 'pod'

    def __init__(self, kube, manifest, log_containers, retries=0, timeout=600, delete='always', log_lines=200,
                 entry=None, stage=None, failed_is_stale=True, recheck=None, gen=SKYHOOK):
        self.kube = kube
        # the generation whose package annotation the manifest and a pod found under its name carry
        self.gen = gen
        # ``recheck(runner) -> why or None``: asked every RECHECK_SECONDS while the pod runs (``runner.differs(wanted)``
        # compares); a reason means the CR no longer asks for this pod (an edit made while the stage ran): it is
        # deleted, verdict SUPERSEDED
        self.recheck = recheck
        self.manifest = manifest
        self.namespace = manifest['metadata']['namespace']
        self.name = manifest['metadata']['name']
        self.log_containers = list(log_containers)
        self.retries = retries
        self.timeout = timeout
        self.delete = delete
        self.log_lines = log_lines
        self.pod = None
        self.found = None
        self.looked = False
        self.adopted = False
        # the package's nodeState entry when the module started and the stage the pod is for: a pod
        # found under the name is adopted only while it is still the CR's pod for that state
        self.entry = entry
        self.stage = stage
        self.failed_is_stale = failed_is_stale
        self.replaced = None  # why a pod found under the name was deleted instead of adopted
        self.started = time.time()

    def existing(self, replace=True, by_state=True):
        """The pod by that name when it is ours to adopt (same node, not being deleted, still the CR's pod).

        A pod that no longer matches the CR or the node's state (stale_pods.stale_pod_reason) is deleted
        and waited for, and None returned, so a new one is created; ``replace=False`` (a dry run) only
        notes why (``replaced``) and deletes nothing. ``by_state=False``: judged on the CR alone (a pod
        another run created a moment ago, after the node's state this run read).
        """
        try:
            pod = self.kube.get_pod(self.namespace, self.name)
        except kube_api.NotFound:
            return None
        meta = pod.get('metadata') or {}
        if meta.get('deletionTimestamp'):
            self.wait_deleted(meta.get('uid'))
            return None
        if (pod.get('spec') or {}).get('nodeName') != self.manifest['spec']['nodeName']:
            raise kube_api.KubeError('pod %s/%s exists on node %s, not on %s; refusing to adopt it'
                                     % (self.namespace, self.name, (pod.get('spec') or {}).get('nodeName'),
                                        self.manifest['spec']['nodeName']))
        if self.stage is not None:
            why = stale_pods.stale_pod_reason(pod, self.manifest, self.entry, self.stage, retries=self.retries,
                                              failed_is_stale=self.failed_is_stale, by_state=by_state, gen=self.gen)
            if why:
                self.replaced = 'pod %s/%s was replaced: %s' % (self.namespace, self.name, why)
                if not replace:
                    return None
                self.kube.delete_pod(self.namespace, self.name, uid=meta.get('uid'), grace_period_seconds=0)
                self.wait_deleted(meta.get('uid'))
                return None
        return pod

    def create(self, dry_run=False):
        return self.kube.create_pod(self.namespace, self.manifest, dry_run=dry_run)

    def preflight(self, dry_run=True, check_mode=False):
        """Before any write: send the pod as a dry run (RBAC, admission, namespace); one already there is looked
        at (:func:`look_by_dry_run`). In check mode a stale pod is not deleted (``replaced`` says it would be)."""
        return look_by_dry_run(self, dry_run, check_mode)

    def start(self):
        """Adopt a pod left running by an earlier, interrupted run (as the operator does), or create it."""
        self.pod, self.adopted = create_or_adopt(self)
        return self.pod

    def wait(self):
        """The verdict (pod_verdicts.pod_outcome) once the pod succeeded, failed (after ``retries``) or vanished; SUPERSEDED
        (with ``reason``) when ``recheck`` found that the CR no longer asks for the pod, which is then deleted."""
        return wait_rechecked(self)

    def differs(self, wanted):
        """Why the running pod is not the pod ``wanted`` (a pod manifest of the CR as it is now), or None."""
        return stale_pods.stale_pod_reason(self.pod, wanted, None, self.stage, by_state=False, gen=self.gen)

    def remove(self):
        """Delete the running pod at once and wait until it is gone (the CR no longer asks for it)."""
        uid = self.pod['metadata'].get('uid')
        self.kube.delete_pod(self.namespace, self.name, uid=uid, grace_period_seconds=0)
        self.wait_deleted(uid)

    def wait_for(self, remaining):
        uid = self.pod['metadata']['uid']
        verdict = {}

        def finished(objects):
            pod = objects.get(uid)
            outcome = pod_verdicts.pod_outcome(pod, retries=self.retries)
            verdict.clear()
            verdict.update(outcome)
            if pod is not None:
                self.pod = pod
            return outcome['outcome'] != pod_verdicts.RUNNING

        try:
            self.kube.watch_until('pods', finished, remaining, namespace=self.namespace,
                                  field_selector='metadata.name=%s' % self.name,
                                  what='pod %s/%s to finish' % (self.namespace, self.name),
                                  since=self.pod['metadata'].get('resourceVersion'))
        except kube_api.WaitTimeout:
            verdict['outcome'] = 'timeout'
        return dict(verdict)

    def logs(self):
        """Logs of every container that ran (what a stage printed), ``{container: text}``; errors noted."""
        return container_logs(self.kube, self.namespace, self.name, self.pod, self.log_containers, self.log_lines)

    def progress(self):
        """Where the pod stood when the wait ended (pod_verdicts.pod_progress of the last pod the watch saw)."""
        return pod_verdicts.pod_progress(self.pod)

    def describe(self, deleted):
        """The ``pod`` of the module's result."""
        return {'name': self.name, 'namespace': self.namespace, 'uid': self.pod['metadata'].get('uid'),
                'adopted': self.adopted, 'deleted': deleted, 'replaced': self.replaced}

    def cleanup(self, succeeded):
        """Delete the pod per the delete policy; True if it was deleted."""
        if self.pod is None or self.delete == 'never' or (self.delete == 'on_success' and not succeeded):
            return False
        return self.kube.delete_pod(self.namespace, self.name, uid=self.pod['metadata'].get('uid'))

    def wait_deleted(self, uid):
        def gone(objects):
            return uid not in objects
        self.kube.watch_until('pods', gone, max(1, self.timeout - (time.time() - self.started)), namespace=self.namespace,
                              field_selector='metadata.name=%s' % self.name,
                              what='the old pod %s/%s to be deleted' % (self.namespace, self.name))


class NodeRecord(object):
    """How one pod run is recorded in a CR's nodeState on a node: the state callbacks of ``run_recorded``.

    ``in_progress(state) -> state`` is written (with ``status_<cr>`` in_progress and ``annotations``)
    once the pod exists, and first sent as a dry run; ``succeeded(state, restarts) -> state`` after
    success (with ``success_annotations``); ``failed(state, restarts) -> state`` after a failure (with
    ``status_<cr>`` erroring); ``restarts``: the pod's restart count. ``key`` names the entry the result reports (``<package>|<version>``),
    ``before`` is that entry as the node had it when the module started (for the diff). ``gen``: the generation
    whose nodeState / status / version keys the writes use.
    """

    def __init__(self, node_name, cr_name, key, before, in_progress, succeeded, failed,
                 annotations=None, success_annotations=None, gen=SKYHOOK):
        self.gen = gen
        self.node_name = node_name
        self.cr_name = cr_name
        self.key = key
        self.before = before
        self.in_progress = in_progress
        self.succeeded = succeeded
        self.failed = failed
        self.annotations = annotations
        self.success_annotations = success_annotations


class RecordedRun(object):
    """What ``run_recorded`` did: the facts a module adds to its own result and failure message."""

    def __init__(self):
        self.planned = False        # check mode: nothing was written
        self.adopted = None         # the pod the preflight found to adopt, or None
        self.planned_state = {}     # the nodeState the in_progress dry run answered with (when sent)
        self.configmaps = {}        # ConfigMap name -> created / updated / unchanged
        self.verdict = {}           # PodRun.wait(): pod_verdicts.pod_outcome, or outcome 'timeout'
        self.outcome = None         # the verdict's outcome, or what ``settle`` made of it
        self.succeeded = False
        self.restarts = 0
        self.final_state = {}       # the nodeState after the run was recorded
        self.logs = {}
        self.unavailable = {}
        self.deleted = False


def timed_out_detail(runner, kube, node_name):
    """What a stage's or interrupt's timeout message adds: where its pod stood (``runner.progress``) and, when the
    node is not Ready (its kubelet gone, say), what the node reports. One GET of the node, on this path only."""
    words = [runner.progress()]
    try:
        words.append(node_conditions.not_ready_reason(kube.get_node(node_name)))
    except kube_api.KubeError:
        pass  # the message goes without the node's word; the timeout is what failed the stage
    return '; '.join(w for w in words if w)


def _preflight(module, kube, runner, record, node, done):
    """Step 1 of run_recorded: a pod to adopt, and (preflight or check mode) the pod and the in_progress write as dry runs."""
    dry_runs = module.params['preflight'] or module.check_mode
    done.adopted = runner.preflight(dry_run=dry_runs, check_mode=module.check_mode)
    if dry_runs:
        done.planned_state = write_node_state(kube, record.node_name, record.cr_name, record.in_progress,
                                              status='in_progress', dry_run=True, annotations=record.annotations,
                                              node=node, gen=record.gen)[0]


def run_recorded(module, kube, runner, record, result, started, configmaps=(), node=None, settle=None, create_only=()):
    """Run ``runner``'s pod (a ``PodRun``, or a job_run.JobRun: the pod in a Job) and record it on the node as the operator does; returns a ``RecordedRun``.

    The requests, in this order (the pod modules' tests and the API-request bench count them):

    1. preflight: unless ``preflight`` is false (and not in check mode), the pod (read only if the server says it
       exists: :func:`look_by_dry_run`) and the in_progress node write (``node``: a fresh read) as dry runs;
    2. check mode: ``result`` gets ``changed``, ``outcome`` planned, ``manifest``, ``adopt``,
       ``entry`` and ``duration``, and the run stops (``planned`` is set);
    3. apply ``configmaps`` (those named in ``create_only`` only created when missing), write in_progress, then
       create (or adopt: :func:`create_or_adopt`) the pod; if the create fails, the error is raised and the node's
       state stays in progress with no pod, as a run killed at that moment leaves it (the next run creates it);
    4. wait for the pod by watch; ``settle(verdict) -> outcome`` may then wait for more (a reboot);
    5. read the logs (always on failure, on success with ``collect_logs=always``);
    6. write the success, or erroring with the restart count, and delete the pod per its policy.

    ``result`` (the module's result so far) gets ``changed``, ``outcome``, ``entry``, ``logs``,
    ``logs_unavailable``, ``duration``, ``pod`` and, in diff mode, ``diff``. A failure is not raised:
    the module reads ``succeeded`` and words its own message. Uses the module's ``preflight``,
    ``collect_logs`` options, ``check_mode`` and ``_diff``; ``started``: the module's start time.
    """
    params, done = module.params, RecordedRun()
    _preflight(module, kube, runner, record, node, done)
    if module.check_mode:
        done.planned = True
        result.update(changed=True, outcome='planned', manifest=runner.manifest, adopt=done.adopted is not None,
                      replace=runner.replaced,
                      entry=done.planned_state.get(record.key), duration=round(time.time() - started, 3))
        return done

    done.configmaps = dict((cm['metadata']['name'], kube.apply_configmap(cm, create_only=cm['metadata']['name'] in create_only))
                           for cm in configmaps)
    write_node_state(kube, record.node_name, record.cr_name, record.in_progress, status='in_progress',
                     annotations=record.annotations, gen=record.gen)
    result['changed'] = True
    _start_recorded(runner, record)
    done.verdict = runner.wait()
    if done.verdict.get('outcome') == SUPERSEDED:
        # the CR changed under the stage: its pod is gone and the node's state stays in progress for the next plan
        done.outcome = SUPERSEDED
        result.update(outcome=SUPERSEDED, superseded=done.verdict['reason'], duration=round(time.time() - started, 3),
                      pod={'name': runner.name, 'namespace': runner.namespace, 'deleted': True})
        return done
    done.outcome = settle(done.verdict) if settle is not None else done.verdict.get('outcome')
    done.succeeded = done.outcome == pod_verdicts.SUCCEEDED
    if not done.succeeded or params['collect_logs'] == 'always':
        done.logs, done.unavailable = runner.logs()
    done.restarts = int(done.verdict.get('restarts') or 0)
    _record_verdict(kube, record, done)
    done.deleted = runner.cleanup(done.succeeded)
    result.update(outcome=done.outcome, entry=done.final_state.get(record.key), logs=done.logs,
                  logs_unavailable=done.unavailable, duration=round(time.time() - started, 3),
                  pod=runner.describe(done.deleted))
    if module._diff:
        result['diff'] = node_annotations.node_diff(record.node_name, record.before, done.final_state.get(record.key), key=record.key)
    return done


def _start_recorded(runner, record):
    """Step 3's create (or adopt), after the in_progress record; a failure is raised with what the node now says."""
    try:
        runner.start()
    except kube_api.KubeError as exc:
        # the record stays: a run killed at this moment leaves the same, which the next run (or the operator) resumes
        exc.message = '%s; node %s records %s in progress with no %s: the next run creates it' % (
            exc.message, record.node_name, record.key, runner.kind)
        exc.args = (exc.message,)
        raise


def _record_verdict(kube, record, done):
    """The nodeState write after the verdict: the success, or erroring (with status_<cr> erroring)."""
    def transform(current_state):
        return (record.succeeded if done.succeeded else record.failed)(current_state, done.restarts)
    if done.succeeded:
        done.final_state = write_node_state(kube, record.node_name, record.cr_name, transform,
                                            annotations=record.success_annotations, gen=record.gen)[0]
    else:
        done.final_state = write_node_state(kube, record.node_name, record.cr_name, transform, status='erroring',
                                            gen=record.gen)[0]
