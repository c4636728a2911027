# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""The Events the collection leaves: on a node for each step (node_events' wording), on a CR; best effort.

``EventsAPI`` is the Event part of a ``kube.Kube`` (kube.py delegates ``node_event`` and ``cr_event`` to it). An
Event is worth less than the step it reports: one short try, never a retry, never an exception; the first failure
in a process is a warning for the caller's result, and after a refusal (401, 403) the client's session tries no
more. A node's Event names the node's uid (what ``kubectl describe node`` selects on), from the node as the session
last read it (nodes.py).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import socket
import time

from ansible_collections.nodewright.bridge.plugins.module_utils.api.kube_transport import KubeError, describe
from ansible_collections.nodewright.bridge.plugins.module_utils.api.client_state import ClientPart


# Where the Events on nodes go. The API server takes an Event about a cluster-scoped object (a
# Node: involvedObject.namespace empty) only in the namespace "default" (core/v1 event validation),
# and `kubectl describe node` finds it there: it lists the events of all namespaces by
# involvedObject kind, name, namespace "" and uid. client-go's recorder (the operator's) writes
# them there too.
EVENT_NAMESPACE = 'default'
EVENT_COMPONENT = 'nodewright.bridge'
# An Event is best effort: one short try, no retry.
EVENT_TIMEOUT = 5


class EventsAPI(ClientPart):
    """The Event requests of a ``kube.Kube``; a node's uid from ``nodes_api`` (nodes.py).

    From the state it shares with the client (client_state.py) at each use: the ``session`` (the Event failures,
    the node copies); from the transport the ``host``, the ``request_timeout``.
    """

    def __init__(self, state, nodes_api):
        super(EventsAPI, self).__init__(state)
        self.nodes_api = nodes_api
        self.core = self.transport.core

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
        node = self.session.nodes.get(self.nodes_api.node_key(node_name))
        try:
            if node is None:
                node = self.nodes_api.get_node(node_name)
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
