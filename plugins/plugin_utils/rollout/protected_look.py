# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""Which of a rollout's waiting nodes run a protected pod now, so that selection prefers the others.

The design NodeWright's later releases follow (docs/designs/non-interruptible-workloads.md, slice 1) says selection
prefers unblocked nodes: a node whose drain would wait for a pod of the CR's ``podNonInterruptLabels`` is picked after
the nodes that would not. Asked before a batch is picked and before a parked node's slot is filled (admission.py):
one pod list over every namespace, filtered by the API server on that selector and on the pods' phase (Running or
Pending, the operator's HasNonInterruptWork), kept to the nodes whose drain would wait (the plan's ``needs_drain``:
a node that needs no interrupt is never held, whatever runs on it).

Not seen here: pods that opted in with the annotation ``bridge.nodewright.io/non-interruptible`` and match no selector
(an annotation cannot be selected on the server); such a node parks when it is picked, as before. When the list
fails the look says nothing (None) and the order stays the plan's: a preference, never a gate.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube as kube_api
from ansible_collections.nodewright.bridge.plugins.module_utils.api.kube import KubeError
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import drain_rules
from ansible_collections.nodewright.bridge.plugins.module_utils.model import label_selector

ACTIVE = 'status.phase!=Succeeded,status.phase!=Failed'


class ProtectedLook(object):
    """``look()``: the nodes of ``protected['nodes']`` that run a pod of ``protected['selector']`` now, or None.

    ``kube_factory``: a callable returning a module_utils.api.kube.Kube, called once, on the first look.
    """

    def __init__(self, protected, kube_factory):
        self.selector = protected.get('selector') or {}
        self.nodes = set(protected.get('nodes') or ())
        self.kube_factory = kube_factory
        self._kube = None
        self.error = None  # the last failed look's reason

    def __call__(self):
        if not self.nodes or not self.selector:
            return None
        try:
            if label_selector.selector_is_empty(label_selector.normalize_selector(self.selector)):
                return None
            if self._kube is None:
                self._kube = self.kube_factory()
            listing = self._kube.list_pods(label_selector=label_selector.to_query(self.selector), field_selector=ACTIVE)
        except (KubeError, ValueError) as exc:
            self.error = str(exc)
            return None
        running = drain_rules.protected_pods_running(listing.get('items') or [], self.selector)
        return set((pod.get('spec') or {}).get('nodeName') for pod in running) & self.nodes


def look_for(protected, connection, session=None):
    """The ProtectedLook of a phase's ``protected`` (rollout_config.Phase), or None when it has none."""
    if not protected or not protected.get('nodes'):
        return None
    return ProtectedLook(protected, lambda: kube_api.Kube(kube_api.connection_params(dict(connection)), session=session))
