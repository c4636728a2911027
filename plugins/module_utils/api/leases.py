# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""The Leases (coordination.k8s.io/v1): the shared budget's store, and the operator's leader leases.

``LeasesAPI`` is the Lease part of a ``kube.Kube`` (kube.py delegates to it). The shared budget of a CR's runs
(planning/shared_budget.py, its I/O plugin_utils/rollout/budget_lease.py) and the fleet's node-disruption budget
(plugin_utils/execution/fleet_slots.py) each live in a Lease written by replace with the resourceVersion read
(``guarded_update``), so that two runs never both win a write; the API generation's detection
(generation.py) reads the v0.18+ operator's leader leases. Apart from the other resources: no code is shared
with them.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.nodewright.bridge.plugins.module_utils.api.kube_transport import Conflict, NotFound, describe
from ansible_collections.nodewright.bridge.plugins.module_utils.api.client_state import ClientPart


class LeasesAPI(ClientPart):
    """The Lease requests of a ``kube.Kube`` (``state``: what it shares with its parts, client_state.py)."""

    def __init__(self, state):
        super(LeasesAPI, self).__init__(state)
        self.coordination = self.transport.coordination

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


def guarded_update(kube, namespace, name, change, attempts):
    """Read the Lease ``name`` (None when it does not exist), let ``change(lease)`` decide, write it guarded.

    ``change`` returns ``(body, answer)``: the Lease to create (``lease`` None) or to replace (carrying the read
    resourceVersion), or ``body`` None for no write. A write another run made in between (Conflict) is worked out
    again from a fresh read, at most ``attempts`` times. Returns ``(answer, wrote)``, or None when it still conflicted.
    KubeError of the requests goes to the caller. ``kube``: anything with get_lease, create_lease and replace_lease.
    """
    for dummy in range(attempts):
        try:
            lease = kube.get_lease(namespace, name)
        except NotFound:
            lease = None
        body, answer = change(lease)
        if body is None:
            return answer, False
        try:
            if lease is None:
                kube.create_lease(namespace, body)
            else:
                kube.replace_lease(namespace, body)
        except Conflict:
            continue  # another run wrote it (or created it) meanwhile
        return answer, True
    return None
