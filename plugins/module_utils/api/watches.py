# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""The waits: list-then-watch of each kind, and the watches a long-lived process shares (``LiveCRs``).

The loop itself (list, watch from the list's version, resume, relist on 410) is the transport's
(kube_transport); here is what the resources add to it. ``list_method``: what a watch of each kind lists,
``transport_for`` the transport that knows them. ``WatchesAPI``, the wait part of a ``kube.Kube`` (kube.py
delegates ``watch_until`` and ``watch_node`` to it): a wait by name served by the long-lived process's shared
watch of its kind and namespace when there is one. ``LiveCRs``: the CRs and stage pods (Jobs) the sequence engine's
steps read and wait on, kept current by one watch each (a CR by name and API group: ``_CrWatch``; the pods or Jobs
of a namespace: kube_transport.SharedWatch), and the API generation detected per CR (generation.py). Apart from
kube.py so that ``LiveCRs`` is built without it (the engine builds one per connection and hands it to every
``Kube`` of its steps).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import threading
import time
import types

from ansible_collections.nodewright.bridge.plugins.module_utils.api.crs import CR_PLACES, CR_WHAT, GROUP_VERSIONS, not_found
from ansible_collections.nodewright.bridge.plugins.module_utils.api.kube_transport import (
    KubeError, KubeTransport, NotFound, SharedWatch, connection_params, newer, resource_version_number)
from ansible_collections.nodewright.bridge.plugins.module_utils.api.session import KubeSession
from ansible_collections.nodewright.bridge.plugins.module_utils.api.client_state import ClientPart


# The kinds a long-lived process watches once per namespace for all its waits by name (LiveCRs.shared_watch).
SHARED_KINDS = ('pods', 'jobs')

# The CR kinds the watches know ('skyhooks.skyhook.nvidia.com' -> (group, plural)).
_CR_KINDS = types.MappingProxyType(dict(('%s.%s' % (plural, group), (group, plural)) for group, plural in CR_PLACES))

# A CR watch's stream: renewed from its last resourceVersion after this many seconds (no list).
CR_WATCH_SECONDS = 300
# After a failed list (an outage), the next try is this many seconds later; meanwhile get_cr reads.
CR_WATCH_RETRY_SECONDS = 2.0


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


class WatchesAPI(ClientPart):
    """The waits of a ``kube.Kube``: its transport's loop, or its ``live_crs``' shared watch.

    From the state it shares with the client (client_state.py) at each use: the ``live_crs`` (the long-lived
    process's watches, or None);
    a node gone is ``nodes_api``'s NodeGone (nodes.py).
    """

    def __init__(self, state, nodes_api):
        super(WatchesAPI, self).__init__(state)
        self.nodes_api = nodes_api

    def watch_node(self, name, predicate, timeout, what):
        """``watch_until`` of one node: ``predicate(node)``; raises NodeGone ("node deleted") when it disappears."""
        def check(objects):
            if not objects:
                raise self.nodes_api.node_gone(name, what=what)
            return predicate(list(objects.values())[0])
        return self.watch_until('nodes', check, timeout, field_selector='metadata.name=%s' % name, what=what)

    def watch_until(self, kind, predicate, timeout, namespace=None, field_selector=None, label_selector=None,
                    what=None, on_event=None, since=None):
        """``transport.watch_until``; with ``since`` (the resourceVersion the caller knows of the one object a
        ``metadata.name=`` field selector names, in ``namespace``), served by the long-lived process's shared
        watch of that kind and namespace (LiveCRs.shared_watch) when there is one that can serve it."""
        shared = None
        one_object = (field_selector or '').startswith('metadata.name=') and ',' not in field_selector
        shareable = kind in SHARED_KINDS and not label_selector and on_event is None and one_object
        if resource_version_number(since) is not None and self.live_crs is not None and namespace and shareable:
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
        raise not_found(CR_WHAT, name, host, places)

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
            if self.doc is None or newer(doc, self.doc):
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
