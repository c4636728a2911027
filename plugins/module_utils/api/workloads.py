# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""The objects of a package's stage runs: pods (their evictions, logs and PDBs), Jobs, ConfigMaps.

Two parts of a ``kube.Kube`` (kube.py delegates to them). ``WorkloadsAPI``: the pods a stage runs or a drain
evicts (an eviction a PDB refuses is an answer, not a retry), their logs (retried briefly: a gone kubelet must not
cost an outage's wait), the PDBs, and the Jobs the v0.18+ operator runs its stages in; a delete names the
incarnation it means (the uid precondition). ``ConfigMapsAPI``: the ConfigMaps the stages share (a node's metadata,
a package's configuration), created or updated to match a manifest by guarded writes, the writers of one not yet
seen in a process taking turns (the client's session remembers which it saw).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import time

from ansible_collections.nodewright.bridge.plugins.module_utils.contract import drain_rules
from ansible_collections.nodewright.bridge.plugins.module_utils.api.kube_transport import Conflict, KubeError, NotFound, describe
from ansible_collections.nodewright.bridge.plugins.module_utils.api.client_state import ClientPart


# how long a container log read is retried (Kube.pod_log): a gone kubelet must not cost an outage's wait
LOG_RETRY_SECONDS = 10


class WorkloadsAPI(ClientPart):
    """The pod, PDB and Job requests of a ``kube.Kube``, through its transport."""

    def __init__(self, state):
        super(WorkloadsAPI, self).__init__(state)
        self.core, self.policy, self.batch = self.transport.core, self.transport.policy, self.transport.batch

    def list_pods(self, namespace=None, field_selector=None, label_selector=None):
        kwargs = {}
        if field_selector:
            kwargs['field_selector'] = field_selector
        if label_selector:
            kwargs['label_selector'] = label_selector
        if namespace:
            return self.call(describe('list', 'pods', namespace=namespace), self.core.list_namespaced_pod, namespace, **kwargs)
        return self.call(describe('list', 'pods'), self.core.list_pod_for_all_namespaces, **kwargs)

    def pods_on_node(self, node_name, label_selector=None):
        return self.list_pods(field_selector='spec.nodeName=%s' % node_name, label_selector=label_selector)

    def get_pod(self, namespace, name):
        return self.call(describe('get', 'pod', name, namespace), self.core.read_namespaced_pod, name, namespace)

    def create_pod(self, namespace, manifest, dry_run=False):
        kwargs = {'dry_run': 'All'} if dry_run else {}
        return self.call(describe('create', 'pod', manifest['metadata']['name'], namespace),
                         self.core.create_namespaced_pod, namespace, manifest, **kwargs)

    def delete_pod(self, namespace, name, uid=None, grace_period_seconds=None, dry_run=False):
        """Delete a pod (only that incarnation when ``uid`` is given); False if it was already gone."""
        body = {}
        if uid:
            body['preconditions'] = {'uid': uid}
        if grace_period_seconds is not None:
            body['gracePeriodSeconds'] = grace_period_seconds
        if dry_run:
            body['dryRun'] = ['All']
        return self._guarded_delete(describe('delete', 'pod', name, namespace), self.core.delete_namespaced_pod,
                                    name, namespace, body)

    def _guarded_delete(self, what, delete, name, namespace, body):
        """Send a delete; False when the object is gone or (the uid precondition failed) a newer one has its name."""
        try:
            self.call(what, delete, name, namespace, body=body)
        except (NotFound, Conflict):
            return False
        return True

    def evict_pod(self, namespace, name, dry_run=False, grace_period_seconds=None):
        """Evict through policy/v1 Eviction: 'evicted', 'gone' or ('blocked', message) on 429.

        Any other failure (403 RBAC, 500 misconfigured PDBs) raises KubeError.
        """
        body = {'apiVersion': 'policy/v1', 'kind': 'Eviction', 'metadata': {'name': name, 'namespace': namespace}}
        options = {}
        if dry_run:
            options['dryRun'] = ['All']
        if grace_period_seconds is not None:
            options['gracePeriodSeconds'] = grace_period_seconds
        if options:
            body['deleteOptions'] = options
        try:
            self.call(describe('evict', 'pod', name, namespace), self.core.create_namespaced_pod_eviction,
                      name, namespace, body, retry_throttled=False)
        except NotFound:
            return 'gone', None
        except KubeError as exc:
            if exc.status == 429:
                # the PDB's own words (its DisruptionBudget cause), else the Status message
                return 'blocked', drain_rules.pdb_cause(exc.body) or (exc.body or {}).get('message') or exc.message
            raise
        return 'evicted', None

    def pod_log(self, namespace, name, container, tail_lines=200, previous=False):
        """The container's log text, or None with the reason when the node cannot serve it.

        Retried for LOG_RETRY_SECONDS only: the API server reads a log from the node's kubelet, and a kubelet that
        is gone answers a 5xx through it, which the full retry would take for an API server outage and wait out
        (``api_outage_timeout`` per container); a log is worth less than that wait, and the reason names the
        node's error. A brief hiccup of a busy node or API server is still retried."""
        kwargs = {'container': container, 'raw_text': True, 'deadline': time.time() + LOG_RETRY_SECONDS}
        if tail_lines:
            kwargs['tail_lines'] = tail_lines
        if previous:
            kwargs['previous'] = True
        try:
            return self.call(describe('get', 'pods/log', name, namespace) + ' container %s' % container,
                             self.core.read_namespaced_pod_log, name, namespace, **kwargs), None
        except KubeError as exc:
            return None, exc.message

    def list_pdbs(self, namespace=None):
        if namespace:
            return self.call(describe('list', 'poddisruptionbudgets', namespace=namespace),
                             self.policy.list_namespaced_pod_disruption_budget, namespace)
        return self.call(describe('list', 'poddisruptionbudgets'), self.policy.list_pod_disruption_budget_for_all_namespaces)

    # ------------------------------------------------------------------ jobs (the v0.18+ operator's stages)

    def get_job(self, namespace, name):
        return self.call(describe('get', 'job', name, namespace), self.batch.read_namespaced_job, name, namespace)

    def create_job(self, namespace, manifest, dry_run=False):
        kwargs = {'dry_run': 'All'} if dry_run else {}
        return self.call(describe('create', 'job', manifest['metadata']['name'], namespace),
                         self.batch.create_namespaced_job, namespace, manifest, **kwargs)

    def patch_job(self, namespace, name, patch, dry_run=False):
        """Merge-patch a Job (its annotations, ttlSecondsAfterFinished); returns the Job after."""
        kwargs = {'dry_run': 'All'} if dry_run else {}
        return self.call(describe('patch', 'job', name, namespace), self.batch.patch_namespaced_job, name, namespace,
                         patch, _content_type='application/merge-patch+json', **kwargs)

    def delete_job(self, namespace, name, uid=None, dry_run=False):
        """Delete a Job and, in the background, its pods (only that incarnation when ``uid`` is given); False if
        it was already gone. Without propagationPolicy a batch/v1 Job is deleted orphaning its pods."""
        body = {'propagationPolicy': 'Background'}
        if uid:
            body['preconditions'] = {'uid': uid}
        if dry_run:
            body['dryRun'] = ['All']
        return self._guarded_delete(describe('delete', 'job', name, namespace), self.batch.delete_namespaced_job,
                                    name, namespace, body)


class ConfigMapsAPI(ClientPart):
    """The ConfigMap requests of a ``kube.Kube``, through its transport.

    From the state it shares with the client (client_state.py) at each use: the ``session`` (the ConfigMaps seen,
    the writers' turns).
    """

    def __init__(self, state):
        super(ConfigMapsAPI, self).__init__(state)
        self.core = self.transport.core

    def list_configmaps(self, namespace, label_selector=None):
        kwargs = {'label_selector': label_selector} if label_selector else {}
        return self.call(describe('list', 'configmaps', namespace=namespace), self.core.list_namespaced_config_map,
                         namespace, **kwargs)

    def apply_configmap(self, manifest, dry_run=False, attempts=5, create_only=False):
        """Create or update a ConfigMap to match ``manifest``: 'created', 'updated', 'unchanged' or, with
        ``create_only`` (a ConfigMap whose data only its owner's rules may change), 'kept' when it differs.

        One this process has not seen (the session's ``configmaps``) is created first: a node-metadata
        ConfigMap on its node's first stage, a package's on its first node, where a GET would only be
        refused (404); the create's 409 says it is there. One seen is read first. Several stages
        (and nodes) share a ConfigMap and may write it at the same time: a create that finds it
        already there, or an update that lost a race (409), reads it again and tries again; in one process
        (the sequence engine: every node) the writers of one not seen yet take turns, so that they do not race
        to create it.
        """
        meta = manifest['metadata']
        if (os.getpid(), self.host, meta['namespace'], meta['name']) in self.session.configmaps:
            return self._apply_configmap(manifest, dry_run, attempts, create_only)
        # not seen yet: the writers that would create it take turns, the first creates it and the others read it;
        # once seen, they read it at once, side by side (a package's ConfigMap is read by every node of a batch)
        with self.session.writer_lock(self.host, 'configmap', meta['namespace'], meta['name']):
            return self._apply_configmap(manifest, dry_run, attempts, create_only)

    def _apply_configmap(self, manifest, dry_run, attempts, create_only):
        meta = manifest['metadata']
        name, namespace = meta['name'], meta['namespace']
        kwargs = {'dry_run': 'All'} if dry_run else {}
        known = (os.getpid(), self.host, namespace, name)
        create = known not in self.session.configmaps
        for unused in range(attempts):
            if create:
                try:
                    self.call(describe('create', 'configmap', name, namespace), self.core.create_namespaced_config_map,
                              namespace, manifest, **kwargs)
                    if not dry_run:
                        self.session.configmaps.put(known, True)
                    return 'created'
                except Conflict:
                    pass  # there already (another stage or node, an earlier run, the operator): read it
            try:
                current = self.call(describe('get', 'configmap', name, namespace), self.core.read_namespaced_config_map,
                                    name, namespace)
            except NotFound:
                self.session.configmaps.pop(known)
                create = True  # gone since it was seen, or since the create's 409
                continue
            self.session.configmaps.put(known, True)
            create = False
            outcome = self._update_configmap(current, manifest, kwargs, create_only)
            if outcome is not None:
                return outcome
        raise Conflict('configmap %s/%s: still conflicting after %d attempts' % (namespace, name, attempts), 409)

    def _update_configmap(self, current, manifest, kwargs, create_only):
        """'unchanged', 'kept' (``create_only``), 'updated' by a patch guarded by ``current``'s resourceVersion,
        or None when that patch lost a race (409)."""
        meta, cur_meta = manifest['metadata'], current.get('metadata') or {}
        same = all(((current.get('data') or {}) == (manifest.get('data') or {}),
                    _contains(cur_meta.get('labels') or {}, meta.get('labels') or {}),
                    _contains(cur_meta.get('annotations') or {}, meta.get('annotations') or {})))
        if same:
            return 'unchanged'
        if create_only:
            return 'kept'
        patch = {'metadata': {'labels': meta.get('labels') or {}, 'annotations': meta.get('annotations') or {},
                              'resourceVersion': cur_meta.get('resourceVersion')},
                 'data': _replace_map(current.get('data') or {}, manifest.get('data') or {})}
        name, namespace = meta['name'], meta['namespace']
        try:
            self.call(describe('patch', 'configmap', name, namespace), self.core.patch_namespaced_config_map,
                      name, namespace, patch, **kwargs)
            return 'updated'
        except Conflict:
            return None


def _contains(have, want):
    return all(have.get(k) == v for k, v in want.items())


def _replace_map(current, wanted):
    """A merge patch turning ``current`` into exactly ``wanted`` (removed keys set to null)."""
    patch = dict(wanted)
    for key in current:
        if key not in wanted:
            patch[key] = None
    return patch
