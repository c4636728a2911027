# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""The Kubernetes objects the collection reads and writes: nodes, pods, Jobs, ConfigMaps, Leases, Events, CRs.

Every object goes in and comes out as a plain dict in the API's own JSON shape (camelCase
keys), so that the pure module_utils (node_state, pod_layout, drain_rules, ...) decide and
this layer only transports. Every failure becomes a ``KubeError`` whose message names the
request, the object and what the server said, so modules can ``fail_json`` with it as is.

How requests travel (the client, retries, errors, watches) is ``kube_transport``: a ``Kube`` holds a
``KubeTransport`` (``transport``) and speaks through it; the transport's public names are this module's
too, so callers import only ``kube``. What a client's owner keeps between requests (clients, node copies,
locks, refusals, validated CRs) is a ``KubeSession``, handed to every ``Kube`` it builds: no module global
holds one. Waiting is done with list-then-watch (``watch_until``), never with polling loops.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import collections
import copy
import os
import socket
import threading
import time
import types

from ansible_collections.nodewright.bridge.plugins.module_utils.model import api_generation
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import cr_handoff
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import drain_rules
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import node_annotations
from ansible_collections.nodewright.bridge.plugins.module_utils.model.constants import NODEWRIGHT_GROUP, SKYHOOK_GROUP, VERSION
# The transport's public names are kube's too: callers import only kube.
from ansible_collections.nodewright.bridge.plugins.module_utils.api.kube_transport import (  # noqa: F401 # pylint: disable=unused-import
    AUTH_ARG_SPEC, CLIENT_CLASSES, POOL_SIZE, RETRIED_STATUSES, USER_AGENT, WATCH_IDLE_SECONDS,
    Clients, Conflict, KubeError, KubeTransport, NodeGone, NotFound, SharedWatch, Unauthorized,
    Unavailable, WaitTimeout, auth_argument_spec, client_library, connection_params, describe,
    has_kubernetes, own_temp_files, preload, resource_version_number, unchecked)

GROUP_VERSIONS = types.MappingProxyType({SKYHOOK_GROUP: VERSION, NODEWRIGHT_GROUP: VERSION})
# Where the (cluster-scoped) NodeWright resources live, in the order they are looked up.
CR_PLACES = ((SKYHOOK_GROUP, 'skyhooks'), (NODEWRIGHT_GROUP, 'nodewrights'))
POLICY_PLACES = ((SKYHOOK_GROUP, 'deploymentpolicies'), (NODEWRIGHT_GROUP, 'deploymentpolicies'))


# how long a container log read is retried (Kube.pod_log): a gone kubelet must not cost an outage's wait
LOG_RETRY_SECONDS = 10

# Where the Events on nodes go. The API server takes an Event about a cluster-scoped object (a
# Node: involvedObject.namespace empty) only in the namespace "default" (core/v1 event validation),
# and `kubectl describe node` finds it there: it lists the events of all namespaces by
# involvedObject kind, name, namespace "" and uid. client-go's recorder (the operator's) writes
# them there too.
EVENT_NAMESPACE = 'default'
EVENT_COMPONENT = 'nodewright.bridge'
# An Event is best effort: one short try, no retry.
EVENT_TIMEOUT = 5


# How many nodes a session keeps as last read or written (RecentCache). The copy serves the steps of
# a node's sequence in flight (the starting point of the next read-modify-write, the uid of an
# Event, the raw keys behind an adopted view), so the bound must stay above the nodes one process
# has in flight at once: Ansible's forks (one node per worker), whose ceiling the sequence engine's
# connection pool (1024) is sized for. Beyond it the least recently used nodes go: a long-lived
# engine then holds what is in flight, not every node of a large fleet (a node object is tens of
# KiB). An evicted node is read again when next needed, as one never read is.
NODE_CACHE_SIZE = 1024


# How many ConfigMaps a session remembers as there (Kube.apply_configmap): one node-metadata ConfigMap per node in
# flight and one per package; the same bound as the nodes.
CONFIGMAP_CACHE_SIZE = NODE_CACHE_SIZE


class RecentCache(object):
    """Values by key (the nodes: by process id, API server and name), the least recently used dropped beyond ``size``.

    Without a lock, as the dict it replaces: each OrderedDict operation is one step under the
    GIL, and every step that races another (a key gone in between) is taken as "not there".
    """

    def __init__(self, size=NODE_CACHE_SIZE):
        self.size = size
        self._nodes = collections.OrderedDict()

    def __len__(self):
        return len(self._nodes)

    def __contains__(self, key):
        return key in self._nodes

    def get(self, key):
        node = self._nodes.get(key)
        if node is not None:
            try:
                self._nodes.move_to_end(key)
            except KeyError:
                pass  # dropped by another thread meanwhile: the caller still has the copy it read
        return node

    def put(self, key, node):
        self._nodes[key] = node
        try:
            self._nodes.move_to_end(key)
        except KeyError:
            pass
        while len(self._nodes) > self.size:
            try:
                self._nodes.popitem(last=False)
            except KeyError:
                break

    def pop(self, key):
        return self._nodes.pop(key, None)


class KubeSession(object):
    """What the ``Kube`` clients of one owner keep between their requests; the owner makes it and hands it to each.

    Who owns one (no module global does): a module run (cluster_modules/_runner.py: one per run, unless its caller
    hands one down), the steps and package threads of one node's sequence, the sequence engine (every node it runs),
    a play of the budgeted strategy (its shared budget, NotReady gate and batch-state writes). A ``Kube`` made
    without one (and without ``live_crs``) makes its own: it shares nothing with another client.

    * ``clients``: the API clients by connection options (kube_transport.Clients, with ``pool_size``
      connections each), so that the steps of one task (and, in the sequence engine, all its nodes)
      share one connection pool and parsed kubeconfig;
    * ``nodes``: the nodes as this session last read or wrote them (never dry-run answers), the
      starting point of a read-modify-write when the caller has no fresher copy (RecentCache);
    * ``configmaps``: the ConfigMaps this session saw exist (created, read or written), by process id, API
      server, namespace and name: one known there is read before it is written, one not known is created first
      (Kube.apply_configmap), so that neither asks the server for what it does not have (a 404);
    * ``validated_crs``: the CR models built from the documents this session read (cr_handoff.ValidatedCRs), by
      uid and resourceVersion: the plan and the steps of every node validate one version of a CR once;
    * writer locks: the writers of one node (Kube.update_node), of one ConfigMap (Kube.apply_configmap) with this
      session take turns;
    * ``event_failures`` / ``status_failures``: the first failure to write an Event / a node's status
      conditions, by process id and API server: warned once, and after a refusal (401, 403: no RBAC)
      not tried again.

    Every key starts with the process id, so that a forked worker that inherits a session never
    uses a client (and its sockets), a node or a lock of its parent. Nothing is created here but
    empty tables: no client, socket or thread, which would not survive a fork.
    """

    def __init__(self, pool_size=POOL_SIZE, node_cache_size=NODE_CACHE_SIZE):
        self.pool_size = pool_size
        self.clients = Clients(pool_size)
        self.nodes = RecentCache(node_cache_size)
        self.configmaps = RecentCache(CONFIGMAP_CACHE_SIZE)
        # the CR versions validated with this session (cr_handoff): one validation per version, not per step
        self.validated_crs = cr_handoff.ValidatedCRs()
        self.event_failures = {}
        self.status_failures = {}
        self._writer_locks = {}
        self._writer_locks_guard = threading.Lock()

    def writer_lock(self, host, *name):
        """The lock the writers of one object at ``host`` (``name``: its kind, and namespace and name) take turns
        with in this process."""
        with self._writer_locks_guard:
            return self._writer_locks.setdefault((os.getpid(), host) + name, threading.Lock())

    def node_lock(self, host, name):
        """The lock the writers of node ``name`` at ``host`` take turns with in this process."""
        return self.writer_lock(host, 'node', name)


class Kube(object):
    """A thin client over the typed APIs that speaks plain dicts and raises KubeError.

    ``session``: the KubeSession its builder shares with its other clients (clients, node cache, node locks,
    refusals remembered); without one, that of ``live_crs`` (the sequence engine's), else a new one of its own.
    Its requests go through ``transport`` (a KubeTransport over the session's client for ``params``).
    """

    def __init__(self, params, live_crs=None, session=None):
        if session is None:
            session = getattr(live_crs, 'session', None)
        if session is None:
            session = KubeSession()
        self.session = session
        self.params = params
        self.transport = transport_for(params, session)
        # the typed APIs of the session's client (kube_transport: CoreV1Api, CustomObjectsApi...)
        self.configuration, self.api_client = self.transport.configuration, self.transport.api_client
        self.core, self.policy, self.custom = self.transport.core, self.transport.policy, self.transport.custom
        self.coordination, self.batch = self.transport.coordination, self.transport.batch
        # LiveCRs of a long-lived process (the sequence engine): get_cr answers from its watches
        self.live_crs = live_crs
        # warnings for the module's result that no request failed on (a best-effort write refused)
        self.warnings = []
        self._generation = None
        self.generation_reason = None  # why ``generation`` is what it is, once known

    # ------------------------------------------------------------------ the transport's part (kube_transport)

    @property
    def host(self):
        """The API server's URL."""
        return self.transport.host

    @property
    def request_timeout(self):
        return self.transport.request_timeout

    @property
    def outage_timeout(self):
        """Seconds a request rides out an API server that does not answer (KubeTransport.retrying); settable."""
        return self.transport.outage_timeout

    @outage_timeout.setter
    def outage_timeout(self, seconds):
        self.transport.outage_timeout = seconds

    def call(self, what, func, *args, **kwargs):
        """One request and its JSON body (KubeTransport.call: retries, deadlines, KubeError)."""
        return self.transport.call(what, func, *args, **kwargs)

    @property
    def generation(self):
        """The api_generation.Generation whose contract this client speaks (the option ``nodewright_api``).

        ``skyhook`` / ``nodewright``: that one, without a request (a controller that chose it already passes the
        choice down to every step; a wrong choice shows in the first CR read). ``auto``: api_generation.choose over
        ``generation_evidence`` for the module's ``cr_name``, once per client; its reason is ``generation_reason``.
        """
        if self._generation is None:
            option = self.params.get('nodewright_api') or api_generation.AUTO
            if option != api_generation.AUTO:
                self._generation = api_generation.by_name(option)
                self.generation_reason = 'nodewright_api=%s' % option
            else:
                self._generation, self.generation_reason = self._detected(self.params.get('cr_name'))
        return self._generation

    def _detected(self, cr_name):
        key = (self.host, cr_name)
        known = self.live_crs.generations.get(key) if self.live_crs is not None else None
        if known is not None:
            return known
        try:
            chosen = api_generation.choose(api_generation.AUTO, self.generation_evidence(api_generation.AUTO, cr_name=cr_name))
        except api_generation.GenerationError as exc:
            raise KubeError(str(exc))
        if self.live_crs is not None:
            self.live_crs.generations[key] = chosen
        return chosen

    # ------------------------------------------------------------------ nodes

    def _node_key(self, name):
        """The key of node ``name`` in the session's RecentCache: this process's copy from this API server."""
        return (os.getpid(), self.host, name)

    def get_node(self, name):
        """The node as the generation's operator sees it (``adopted``); this process keeps the node as read."""
        try:
            node = self.call(describe('get', 'node', name), self.core.read_node, name)
        except NotFound:
            raise self.node_gone(name)
        self.session.nodes.put(self._node_key(name), node)
        return self.adopted(node)[0]

    def adopted(self, node):
        """``(view, copies)``: the node as the v0.18+ operator sees it after its migration copy of the legacy
        keys (node_annotations.legacy_copies), and the copies the node still lacks; ``(node, {})`` under the legacy
        generation. ``node`` may be a view this client returned: the copies come from the node as read, which
        this process keeps (same resourceVersion)."""
        gen = self.generation
        if gen is api_generation.SKYHOOK or not node:
            return node, {}
        raw = self._as_read(node)
        copies = node_annotations.legacy_copies(raw, gen)
        return node_annotations.with_copies(raw, copies), copies

    def node_gone(self, name, what=None):
        """The NodeGone error for ``name``: "node deleted" if this process had read or written it (or ``what`` waits on it)."""
        known = self.session.nodes.pop(self._node_key(name)) is not None
        return NodeGone(name, self.host, deleted=bool(what) or known, what=what)

    def list_nodes(self, label_selector=None):
        """The node list, each node as the generation's operator sees it (``adopted``: read, never written)."""
        kwargs = {'label_selector': label_selector} if label_selector else {}
        listing = self.call(describe('list', 'nodes'), self.core.list_node, **kwargs)
        if self.generation is not api_generation.SKYHOOK:
            listing = dict(listing, items=[node_annotations.with_copies(n, node_annotations.legacy_copies(n, self.generation))
                                           for n in listing.get('items') or []])
        return listing

    def patch_node(self, name, patch, dry_run=False):
        kwargs = {'dry_run': 'All'} if dry_run else {}
        try:
            node = self.call(describe('patch', 'node', name), self.core.patch_node, name, patch, **kwargs)
        except NotFound:
            raise self.node_gone(name)
        if not dry_run:
            self.session.nodes.put(self._node_key(name), node)
        return node

    def update_node(self, name, mutate, node=None, dry_run=False, attempts=8, conditions=None, by_keys=None):
        """Read-modify-write of one node, safe against concurrent writers.

        ``mutate(node)`` returns a merge patch (or None: nothing to do). The patch carries the
        node's resourceVersion, so the server refuses it (409) if anyone wrote the node since
        it was read; then the node is read again and ``mutate`` asked again. Returns
        ``(node_after, patch_or_None)``. Writers of one process (a node's package threads) take
        turns, so that they do not make each other's copies stale.

        ``by_keys`` (annotation keys, or None): ``mutate`` decides from these annotations and from the
        keys it writes, nothing else on the node (pod_run.write_node_state): the patch is sent as a JSON
        patch that tests all of them at the values read (node_annotations.key_guarded_patch), so that only a
        change of one of them refuses it (422, then read again as after a 409), not a taint the node
        controller adds on a cordon or a status heartbeat written meanwhile.

        ``conditions(node) -> status patch or None`` (node_conditions.writer): after the write (or
        when there was nothing to write), the node's status conditions as they should be then; a patch
        goes to the status subresource (``sync_node_status``). Not in a dry run.
        """
        with self.session.node_lock(self.host, name):
            after, patch = self._update_node(name, mutate, node, dry_run, attempts, by_keys)
            if conditions is not None and not dry_run:
                after = self.sync_node_status(name, conditions, after, attempts)
            return after, patch

    def sync_node_status(self, name, conditions, node, attempts=8):
        """Strategic-merge-patch the node's status subresource with ``conditions(node)``; best effort.

        Nothing is sent when ``conditions`` returns None. The patch carries the node's resourceVersion: a
        409 (the kubelet or anyone wrote the node since) reads the node again and asks ``conditions`` again,
        so the conditions always follow the record they are computed from. Conditions of other types are
        kept (the list merges by type). Never raises: a refused write is one warning per process in
        ``self.warnings`` (after a 401/403 this process tries no more); a node gone is left to the next
        step. Returns the node after (or as it was).
        """
        key = (os.getpid(), self.host)
        earlier = self.session.status_failures.get(key)
        if earlier is not None and earlier.status in (401, 403):
            return node
        try:
            for attempt in range(attempts):
                if attempt:
                    node = self.get_node(name)
                patch = conditions(node)
                if not patch:
                    return node
                guarded = dict(patch, metadata={'resourceVersion': node['metadata']['resourceVersion']})
                try:
                    after = self.call(describe('patch', 'nodes/status', name), self.core.patch_node_status,
                                      name, guarded)
                except Conflict:
                    continue
                self.session.nodes.put(self._node_key(name), after)
                return after
            raise Conflict('patch node %s status: still conflicting after %d attempts' % (name, attempts), 409)
        except NotFound:
            return node
        except KubeError as exc:
            if earlier is None:
                self.session.status_failures[key] = exc
                self.warnings.append(
                    'the NodeWright conditions of node %s were not written: %s; the rollout goes on without them%s'
                    % (name, exc.message, ' (grant patch on nodes/status, examples/rbac/nodewright-bridge-apply.yaml; '
                                          'this process tries no more)' if exc.status in (401, 403) else ''))
            return node

    def _update_node(self, name, mutate, node, dry_run, attempts, by_keys=None):
        fresh = None
        for attempt in range(attempts):
            if attempt:
                node = fresh if fresh is not None else self.get_node(name)
                fresh = None
            else:
                # the node as this process last read or wrote it (the steps of one task write a
                # node one after the other), or the caller's copy if that is newer: if anyone wrote it
                # since, the guarded patch is refused and the node is read again, so a stale copy
                # costs a retry, never a lost change
                node = self._newest(node, self.session.nodes.get(self._node_key(name))) or self.get_node(name)
            raw = self._as_read(node)
            node, copies = self.adopted(node)
            patch = mutate(node)
            if not patch:
                return node, None
            # the migration copies go with the first change (the operator writes them with its first pass)
            merged = node_annotations.merge_copies(dict(patch), copies)
            guarded = node_annotations.key_guarded_patch(raw, merged, by_keys) if by_keys is not None else None
            if guarded is None:
                guarded = dict(merged, metadata=dict(merged.get('metadata') or {},
                                                     resourceVersion=node['metadata']['resourceVersion']))
            try:
                after = self.patch_node(name, guarded, dry_run=dry_run)
            except Conflict:
                continue
            except KubeError as exc:
                # a key-guarded patch refused (422): one of its keys changed (read again and retry), or its
                # tests hold on the node as it is now and the patch itself was refused (raised)
                if exc.status != 422 or not isinstance(guarded, list):
                    raise
                fresh = self.get_node(name)
                if node_annotations.guards_hold(self._as_read(fresh), guarded):
                    raise
                continue
            return self.adopted(after)[0], patch
        raise Conflict('patch node %s: still conflicting after %d attempts (other writers keep changing it)'
                       % (name, attempts), 409)

    @staticmethod
    def _newest(given, kept):
        """The newer of the caller's copy of a node and this process's (a package thread of the same node may have
        written it since the caller read it); the caller's when the versions cannot be compared."""
        if given is None or kept is None:
            return given or kept
        return kept if _newer(kept, given, opaque=False) else given

    def _as_read(self, node):
        """The node as the server has it (the session's copy of the same version), not the generation's view of it."""
        meta = node.get('metadata') or {}
        raw = self.session.nodes.get(self._node_key(meta.get('name')))
        if raw is None or (raw.get('metadata') or {}).get('resourceVersion') != meta.get('resourceVersion'):
            return node
        return raw

    # ------------------------------------------------------------------ events

    def node_event(self, node_name, reason, message, event_type='Normal', namespace=EVENT_NAMESPACE):
        """Leave a core/v1 Event on the node, reported by nodewright.bridge; best effort.

        Never raises and never retries: returns None, or, the first time writing an Event fails in
        this process, a warning for the caller's result. The node's uid (which `kubectl describe`
        selects on) comes from the node as this process last read it.
        """
        key = (os.getpid(), self.host)
        earlier = self.session.event_failures.get(key)
        if earlier is not None and earlier.status in (401, 403):
            return None
        node = self.session.nodes.get(self._node_key(node_name))
        try:
            if node is None:
                node = self.get_node(node_name)
        except KubeError:
            return None  # the step's own requests report a node that cannot be read
        involved = {'apiVersion': 'v1', 'kind': 'Node', 'name': node_name}
        if (node.get('metadata') or {}).get('uid'):
            involved['uid'] = node['metadata']['uid']
        body = self._event_body(involved, reason, message, event_type, namespace)
        try:
            self.call(describe('create', 'event', body['metadata']['name'], namespace), self.core.create_namespaced_event,
                      namespace, body, once=True, _request_timeout=min(self.request_timeout, EVENT_TIMEOUT))
        except KubeError as exc:
            if earlier is not None:
                return None
            self.session.event_failures[key] = exc
            refused = exc.status in (401, 403)
            return ('the %s Event on node %s was not written: %s; the rollout goes on without it (Events are best effort; '
                    '%s)' % (reason, node_name, exc.message,
                             'this process tries no more: grant create on events in namespace %s, see docs/events.md'
                             % namespace if refused else 'further failures are not reported'))
        return None

    def cr_event(self, doc, reason, message, event_type='Warning', namespace='default'):
        """An Event on a CR (a cluster-scoped object: its Events live in ``default``, as kubectl describe finds them).

        Best effort like ``node_event``: returns None, or a warning when it could not be written.
        """
        meta = doc.get('metadata') or {}
        involved = {'apiVersion': doc.get('apiVersion'), 'kind': doc.get('kind'), 'name': meta.get('name')}
        if meta.get('uid'):
            involved['uid'] = meta['uid']
        body = self._event_body(involved, reason, message, event_type, namespace)
        try:
            self.call(describe('create', 'event', body['metadata']['name'], namespace), self.core.create_namespaced_event,
                      namespace, body, once=True, _request_timeout=min(self.request_timeout, EVENT_TIMEOUT))
        except KubeError as exc:
            return 'the %s Event on %s was not written: %s' % (reason, meta.get('name'), exc.message)
        return None

    @staticmethod
    def _event_body(involved, reason, message, event_type, namespace):
        now = time.time()
        stamp = time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(now))
        node_name = involved['name']
        return {
            'apiVersion': 'v1', 'kind': 'Event',
            # as client-go names them: the object's name and the time in hex (a few random bits
            # against two events of one node in the same nanosecond, from two threads)
            'metadata': {'name': '%s.%x%s' % (node_name, int(now * 1e9), os.urandom(2).hex()), 'namespace': namespace},
            'involvedObject': involved,
            'reason': reason, 'message': message, 'type': event_type,
            'source': {'component': EVENT_COMPONENT},
            'reportingComponent': EVENT_COMPONENT, 'reportingInstance': socket.gethostname()[:128],
            'firstTimestamp': stamp, 'lastTimestamp': stamp, 'count': 1,
        }

    # ------------------------------------------------------------------ pods

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

    # ------------------------------------------------------------------ config maps

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
        same = ((current.get('data') or {}) == (manifest.get('data') or {})
                and _contains(cur_meta.get('labels') or {}, meta.get('labels') or {})
                and _contains(cur_meta.get('annotations') or {}, meta.get('annotations') or {}))
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

    # ------------------------------------------------------------------ leases (the shared budget)

    def get_lease(self, namespace, name):
        return self.call(describe('get', 'lease', name, namespace), self.coordination.read_namespaced_lease, name, namespace)

    def create_lease(self, namespace, body):
        """Create a Lease; Conflict when it exists (another run made it first: read it and go on)."""
        return self.call(describe('create', 'lease', body['metadata']['name'], namespace),
                         self.coordination.create_namespaced_lease, namespace, body)

    def replace_lease(self, namespace, body):
        """Replace a Lease; ``body`` carries the resourceVersion read, so a write in between is a Conflict (409)."""
        name = body['metadata']['name']
        return self.call(describe('update', 'lease', name, namespace), self.coordination.replace_namespaced_lease,
                         name, namespace, body)

    # ------------------------------------------------------------------ NodeWright resources

    def _get_first(self, what, name, places):
        for group, plural in places:
            try:
                return self.call(describe('get', '%s.%s' % (plural, group), name), self.custom.get_cluster_custom_object,
                                 group, GROUP_VERSIONS[group], plural, name)
            except NotFound:
                continue
        raise _not_found(what, name, self.host, places)

    def get_cr(self, name, api_version=None, fresh=False):
        """The Skyhook (skyhook.nvidia.com) or NodeWright (nodewright.nvidia.com) CR by name; with
        ``api_version`` (a document's), only in that document's group. From the process's live CRs when it has
        them, unless ``fresh`` (a write refused with a conflict: the server's copy is newer than the watch's)."""
        places = CR_PLACES
        if api_version:
            places = tuple(p for p in CR_PLACES if p[0] == api_version.split('/', 1)[0]) or CR_PLACES
        elif self.generation is api_generation.NODEWRIGHT:
            # the v0.18+ operator reconciles the NodeWright (a mirror of a legacy Skyhook is one); the legacy
            # object of the same name is read-only there and not what a rollout follows
            places = tuple(p for p in CR_PLACES if p[0] == NODEWRIGHT_GROUP)
        if self.live_crs is not None and not fresh:
            doc = self.live_crs.lookup(name, places, self.host)
            if doc is not None:
                return doc
        return self._get_first(CR_WHAT, name, places)

    def patch_cr_status(self, doc, patch):
        """Merge-patch the status subresource of a CR as ``doc`` (as read) names it; returns the CR after.

        ``patch`` is ``{'status': {...}}``; it carries ``doc``'s resourceVersion, so a write made since
        the read is a Conflict (409) and the caller computes the status again from fresh data.
        """
        group, version = doc['apiVersion'].split('/', 1)
        plural = dict(CR_PLACES).get(group, 'skyhooks')
        name = doc['metadata']['name']
        body = dict(patch, metadata={'resourceVersion': doc['metadata'].get('resourceVersion')})
        return self._observed(self.call(describe('patch', '%s.%s/status' % (plural, group), name),
                                        self.custom.patch_cluster_custom_object_status, group, version, plural, name, body,
                                        _content_type='application/merge-patch+json'))

    def patch_cr(self, doc, patch):
        """Merge-patch a CR as ``doc`` (as read) names it (its metadata: the finalizers); returns the CR after."""
        group, version = doc['apiVersion'].split('/', 1)
        plural = dict(CR_PLACES).get(group, 'skyhooks')
        name = doc['metadata']['name']
        return self._observed(self.call(describe('patch', '%s.%s' % (plural, group), name),
                                        self.custom.patch_cluster_custom_object, group, version, plural, name, patch,
                                        _content_type='application/merge-patch+json'))

    def _observed(self, doc):
        # a step that wrote the CR reads its own write next, even before the watch delivers it
        if self.live_crs is not None and doc:
            self.live_crs.observed(doc, self.host)
        return doc

    def get_policy(self, name):
        """A DeploymentPolicy by name: skyhook.nvidia.com, then nodewright.nvidia.com; the other way round once the
        client speaks ``nodewright`` (the v0.18+ operator reads a NodeWright's policy in its own group, and v0.21 serves
        no other). No request is spent on choosing: under ``auto`` not chosen yet, the legacy order."""
        places = POLICY_PLACES
        if self._chosen_generation() is api_generation.NODEWRIGHT:
            places = tuple(reversed(POLICY_PLACES))
        return self._get_first('DeploymentPolicy', name, places)

    def _chosen_generation(self):
        """``generation`` when it costs no request (an explicit ``nodewright_api``, or ``auto`` already detected),
        else None."""
        option = self.params.get('nodewright_api') or api_generation.AUTO
        if self._generation is None and option == api_generation.AUTO:
            return None
        return self.generation

    # ------------------------------------------------------------------ API generations (api_generation.choose)

    def served_groups(self):
        """{group: bool}: whether the API server serves each generation's CR, by discovery of ``/apis/<group>/<version>``.

        One GET per group: a 404 is not served (no CRD of the group); served is the resource list naming the CR's plural.
        """
        served = {}
        for generation in api_generation.GENERATIONS:
            try:
                doc = self.call(describe('get', 'API resources', generation.api_version), self.custom.get_api_resources,
                                generation.group, generation.version)
            except NotFound:
                served[generation.group] = False
                continue
            served[generation.group] = any(r.get('name') == generation.plural for r in doc.get('resources') or [])
        return served

    def generation_evidence(self, option='auto', cr_name=None, nodes=None):
        """The evidence api_generation.choose reads, with the fewest requests that settle the answer.

        Discovery of the two groups (2 GETs); the node keys from ``nodes``, the CR's nodes the caller already has (no
        read); then, only while api_generation.decided says more could change the answer, the NodeWright ``cr_name``
        (1 GET; without a name, one page of NodeWrights) and the operator's leases in the v0.18+ default namespace
        (a GET each, up to the first found). A read refused with 403 (no RBAC for it) goes in ``unread``.
        """
        found = api_generation.evidence(self.served_groups(), cr_name=cr_name, nodes=nodes)
        if api_generation.decided(option, found):
            return found
        found['nodewright_objects'] = self._nodewright_objects(cr_name, found['unread'])
        if api_generation.decided(option, found):
            return found
        found['leases'] = []
        for namespace, name in api_generation.NODEWRIGHT.lease_refs():
            if self._readable('lease %s/%s' % (namespace, name), found['unread'], self.get_lease, namespace, name):
                found['leases'].append((namespace, name))
                break
        return found

    def _nodewright_objects(self, cr_name, unread):
        """api_generation.object_evidence of the NodeWright ``cr_name`` (or of one page of them); None when refused."""
        gen = api_generation.NODEWRIGHT
        if cr_name:
            doc = self._readable('NodeWright %s' % cr_name, unread, self.call, describe('get', gen.crd_name, cr_name),
                                 self.custom.get_cluster_custom_object, gen.group, gen.version, gen.plural, cr_name)
        else:
            doc = self._readable('NodeWright objects', unread, self.call, describe('list', gen.crd_name),
                                 self.custom.list_cluster_custom_object, gen.group, gen.version, gen.plural, limit=20)
        if doc is None:
            return None
        return api_generation.object_evidence(([doc] if doc else []) if cr_name else doc.get('items') or [])

    @staticmethod
    def _readable(what, unread, read, *args, **kwargs):
        """``read(*args, **kwargs)``'s answer; {} when not found; None (and ``what`` noted in ``unread``) when refused with 403."""
        try:
            return read(*args, **kwargs)
        except NotFound:
            return {}
        except KubeError as exc:
            if exc.status != 403:
                raise
            unread.append('%s (forbidden)' % what)
            return None

    # ------------------------------------------------------------------ waiting (the loop: kube_transport)

    def watch_node(self, name, predicate, timeout, what):
        """``watch_until`` of one node: ``predicate(node)``; raises NodeGone ("node deleted") when it disappears."""
        def check(objects):
            if not objects:
                raise self.node_gone(name, what=what)
            return predicate(list(objects.values())[0])
        return self.watch_until('nodes', check, timeout, field_selector='metadata.name=%s' % name, what=what)

    def watch_until(self, kind, predicate, timeout, namespace=None, field_selector=None, label_selector=None,
                    what=None, on_event=None, since=None):
        """``transport.watch_until``; with ``since`` (the resourceVersion the caller knows of the one object a
        ``metadata.name=`` field selector names, in ``namespace``), served by the long-lived process's shared
        watch of that kind and namespace (LiveCRs.shared_watch) when there is one that can serve it."""
        shared = None
        if (resource_version_number(since) is not None and self.live_crs is not None and namespace
                and kind in SHARED_KINDS and not label_selector
                and on_event is None and (field_selector or '').startswith('metadata.name=') and ',' not in field_selector):
            shared = self.live_crs.shared_watch(kind, namespace, self.host)
        if shared is not None:
            started = time.time()
            what = what or 'the %s to change' % kind
            result = shared.wait(field_selector.split('=', 1)[1], predicate, timeout, since, what)
            if result is not SharedWatch.NOT_SERVED:
                return result
            timeout = max(1, timeout - (time.time() - started))
        return self.transport.watch_until(kind, predicate, timeout, namespace=namespace, field_selector=field_selector,
                                          label_selector=label_selector, what=what, on_event=on_event)


def list_method(apis, kind, namespace):
    """``(list method, its positional arguments)`` of ``kind`` in ``namespace`` over ``apis`` (a KubeTransport's typed
    APIs): what a watch of ``kind`` lists and follows (the transport's ``lister``)."""
    if kind in _CR_KINDS:
        group, plural = _CR_KINDS[kind]
        return apis.custom.list_cluster_custom_object, (group, GROUP_VERSIONS[group], plural)
    if kind == 'pods':
        if namespace:
            return apis.core.list_namespaced_pod, (namespace,)
        return apis.core.list_pod_for_all_namespaces, ()
    if kind == 'nodes':
        return apis.core.list_node, ()
    if kind == 'jobs':
        if namespace:
            return apis.batch.list_namespaced_job, (namespace,)
        return apis.batch.list_job_for_all_namespaces, ()
    raise ValueError('watch_until cannot watch %r' % kind)


def transport_for(params, session):
    """The KubeTransport of ``session``'s client for the connection options in ``params``, whose watches know the
    resources' lists (``list_method``)."""
    return KubeTransport(params, session.clients, lister=list_method)


# The kinds a long-lived process watches once per namespace for all its waits by name (LiveCRs.shared_watch).
SHARED_KINDS = ('pods', 'jobs')
# What a CR lookup names in its NotFound.
CR_WHAT = 'Skyhook / NodeWright'


def _not_found(what, name, host, places):
    """The NotFound of a lookup of ``name`` in ``places`` ((group, plural) pairs) that none of them has."""
    return NotFound('%s %s not found in the cluster at %s (looked for %s)'
                    % (what, name, host, ', '.join('%s.%s' % (plural, group) for group, plural in places)), 404)


# The CR kinds the watches know ('skyhooks.skyhook.nvidia.com' -> (group, plural)).
_CR_KINDS = types.MappingProxyType(dict(('%s.%s' % (plural, group), (group, plural)) for group, plural in CR_PLACES))
# A CR watch's stream: renewed from its last resourceVersion after this many seconds (no list).
CR_WATCH_SECONDS = 300
# After a failed list (an outage), the next try is this many seconds later; meanwhile get_cr reads.
CR_WATCH_RETRY_SECONDS = 2.0


class LiveCRs(object):
    """The CRs a long-lived process (the sequence engine) reads at every step, kept current by watches.

    Why: a running rollout must notice a ``kubectl skyhook pause``, ``disable`` or a spec edit before
    its next pod (docs/semantics.md, "live pause"); reading the CR at every step costs a GET per step
    and node (and two 404s per step for a CR given as a file that the cluster does not have). One watch
    per CR name and API group, started on the first lookup, answers all the steps of all the nodes.

    ``lookup`` returns a copy of the CR as last seen, raises NotFound when no looked-up group has it,
    or returns None while a watch is not in sync (its first list, an outage): the caller reads the CR
    itself then, so the answer is never older than the watch's stream. A stream cut silently is
    noticed after WATCH_IDLE_SECONDS without a byte, and the CR is listed again. Without RBAC for
    ``list`` and ``watch`` on the CR's resource (a 401 or 403) the watch ends for good and every step
    reads the CR with its own GET, as without the engine.
    """

    def __init__(self, params, session=None):
        self.params = connection_params(params)
        # the session of the process's clients (the sequence engine's): its steps' Kube use it too; else one of its own
        self.session = session if session is not None else KubeSession()
        self.lock = threading.Lock()
        self.watches = {}
        # (host, CR name) -> (Generation, reason): what nodewright_api=auto chose there (Kube.generation), so
        # that the steps of every node of a play detect once, not once each
        self.generations = {}
        # (host, kind, namespace) -> SharedWatch: the stage pods' (Jobs') waits of every node, by one watch
        self.shared = {}

    def shared_watch(self, kind, namespace, host):
        """The process's SharedWatch of ``kind`` in ``namespace`` at ``host``, started on first use."""
        with self.lock:
            key = (host, kind, namespace)
            if key not in self.shared:
                self.shared[key] = SharedWatch(transport_for(self.params, self.session), kind, namespace)
            return self.shared[key]

    def lookup(self, name, places, host):
        """The CR ``name`` in the first of ``places`` ((group, plural) pairs) that has it; see the class."""
        for group, plural in places:
            with self.lock:
                key = (host, group, name)
                watch = self.watches.get(key)
                new = watch is None
                if new:
                    watch = self.watches[key] = _CrWatch(transport_for(self.params, self.session), '%s.%s' % (plural, group),
                                                         name)
            if not watch.settled.is_set():
                # every lookup waits for the watch's first list (one request, as the GET it replaces), not only
                # the first: the steps of a batch start together, and a list answered late (a 429 at the start
                # of a run, retried) would otherwise send each of them to GET the CR, twice for a CR as a file
                watch.settled.wait(watch.transport.request_timeout)
            found, doc = watch.current()
            if not found:
                return None
            if doc is not None:
                return doc
        raise _not_found(CR_WHAT, name, host, places)

    def observed(self, doc, host):
        """Take ``doc`` (a CR this process just wrote, as the server answered) if it is newer than the watch's copy."""
        key = (host, (doc.get('apiVersion') or '').split('/', 1)[0], (doc.get('metadata') or {}).get('name'))
        with self.lock:
            watch = self.watches.get(key)
        if watch is not None:
            watch.offer(doc)


class _CrWatch(object):
    """One CR by name, in one API group: a daemon thread lists it, then follows its watch (through ``transport``)."""

    def __init__(self, transport, kind, name):
        self.transport = transport
        self.kind = kind
        self.name = name
        self.lock = threading.Lock()
        self.synced = threading.Event()
        # set once the first list answered or the watch gave up for good (401, 403): lookups wait for no more
        self.settled = threading.Event()
        self.doc = None
        threading.Thread(target=self.run, name='cr-watch %s %s' % (kind, name), daemon=True).start()

    def current(self):
        """``(in sync, a copy of the CR or None when it does not exist)``."""
        with self.lock:
            if not self.synced.is_set():
                return False, None
            return True, copy.deepcopy(self.doc)

    def offer(self, doc):
        with self.lock:
            if self.doc is None or _newer(doc, self.doc):
                self.doc = doc

    def run(self):
        selectors = {'field_selector': 'metadata.name=%s' % self.name}
        while True:
            try:
                objects, rv = self.transport._list_for_watch(self.kind, None, selectors)
                self._set(objects, True)
                self.follow(objects, rv, selectors)  # returns when the server wants a new list
            except NotFound:
                # the group is not served (no such CRD): nothing to watch, the CR is not there
                self._set({}, True)
                return
            except KubeError as exc:
                self._set({}, False)
                if exc.status in (401, 403):
                    self.settled.set()
                    return  # not allowed to list or watch it: the steps GET it (never in sync)
                time.sleep(CR_WATCH_RETRY_SECONDS)

    def follow(self, objects, rv, selectors):
        """Follow the watch from ``rv`` until the server wants a new list (410) or the stream went silent."""
        def on_event(unused_type, unused_obj):
            self._set(objects, True)
        while True:
            deadline = time.time() + CR_WATCH_SECONDS
            resp = self.transport._open_watch(self.kind, None, rv, CR_WATCH_SECONDS, selectors, deadline)
            if resp is None:
                return
            try:
                rv, unused, relist = self.transport._follow(resp, self.kind, objects, rv, lambda objs: None, deadline,
                                                            on_event)
            finally:
                resp.close()
                resp.release_conn()
            if relist:
                self._set(objects, False)
                return

    def _set(self, objects, synced):
        with self.lock:
            self.doc = next(iter(objects.values()), None)
            if synced:
                self.synced.set()
                self.settled.set()
            else:
                self.synced.clear()


def _newer(doc, than, opaque=True):
    """Whether ``doc``'s resourceVersion is after ``than``'s (etcd revisions); ``opaque``: the answer when either is
    not a number."""
    mine, theirs = [resource_version_number((d.get('metadata') or {}).get('resourceVersion')) for d in (doc, than)]
    if mine is None or theirs is None:
        return opaque
    return mine > theirs


def _contains(have, want):
    return all(have.get(k) == v for k, v in want.items())


def _replace_map(current, wanted):
    """A merge patch turning ``current`` into exactly ``wanted`` (removed keys set to null)."""
    patch = dict(wanted)
    for key in current:
        if key not in wanted:
            patch[key] = None
    return patch
