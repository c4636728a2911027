# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""The nodes: read as the API generation's operator sees them, written under a guard, their status conditions.

``NodesAPI`` is the node part of a ``kube.Kube`` (kube.py delegates its node methods to it). A node read or
written is kept in the client's session (``KubeSession.nodes``): the starting point of the next read-modify-write,
the raw keys behind a generation's view, the uid of an Event (events.py). A write carries the resourceVersion read,
or tests the annotation keys its decision read (``by_keys``), and is computed again on a refusal; the writers of
one node in a process take turns (the session's node lock). Under the v0.18+ contract a node is read with the
operator's migration copies of its legacy keys, and the copies go with its first write (node_annotations).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.nodewright.bridge.plugins.module_utils.model import api_generation
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import node_annotations
from ansible_collections.nodewright.bridge.plugins.module_utils.api.kube_transport import Conflict, KubeError, NodeGone, NotFound, describe, newer
from ansible_collections.nodewright.bridge.plugins.module_utils.api.client_state import ClientPart


class NodesAPI(ClientPart):
    """The node requests of a ``kube.Kube``, through its transport.

    From the state it shares with the client (client_state.py) at each use: the ``session`` (node copies, node
    locks, the status writes refused: its owner may hand the client another), the ``warnings`` it adds to. The
    generation the client speaks is ``generation_api``'s (generation.py), decided on its first need.
    """

    def __init__(self, state, generation_api):
        super(NodesAPI, self).__init__(state)
        self.generation_api = generation_api
        self.core = self.transport.core

    generation = property(lambda self: self.generation_api.generation)

    def node_key(self, name):
        """The key of node ``name`` in the session's RecentCache: this process's copy from this API server."""
        return (os.getpid(), self.host, name)

    def get_node(self, name):
        """The node as the generation's operator sees it (``adopted``); this process keeps the node as read."""
        try:
            node = self.call(describe('get', 'node', name), self.core.read_node, name)
        except NotFound:
            raise self.node_gone(name)
        self.session.nodes.put(self.node_key(name), node)
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
        known = self.session.nodes.pop(self.node_key(name)) is not None
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
            self.session.nodes.put(self.node_key(name), node)
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
        the client's ``warnings`` (after a 401/403 this process tries no more); a node gone is left to the next
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
                self.session.nodes.put(self.node_key(name), after)
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
                node = self._newest(node, self.session.nodes.get(self.node_key(name))) or self.get_node(name)
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
        return kept if newer(kept, given, opaque=False) else given

    def _as_read(self, node):
        """The node as the server has it (the session's copy of the same version), not the generation's view of it."""
        meta = node.get('metadata') or {}
        raw = self.session.nodes.get(self.node_key(meta.get('name')))
        if raw is None or (raw.get('metadata') or {}).get('resourceVersion') != meta.get('resourceVersion'):
            return node
        return raw
