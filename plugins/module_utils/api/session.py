# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""What the ``Kube`` clients of one owner keep between their requests: ``KubeSession`` and its bounded ``RecentCache``.

Its owner (a module run, a node's sequence, the sequence engine, a budgeted play) makes it and hands it to each
``kube.Kube`` it builds: no module global holds one. The resources' parts of a ``Kube`` (nodes.py, workloads.py,
events.py) read and fill the session of their client. Apart from kube.py so that what is kept between requests
reads in one place, and so that ``watches.LiveCRs`` can make one without importing kube.py (which imports them all
and re-exports these names).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import collections
import os
import threading

from ansible_collections.nodewright.bridge.plugins.module_utils.contract import cr_handoff
from ansible_collections.nodewright.bridge.plugins.module_utils.api.kube_transport import POOL_SIZE, Clients


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
