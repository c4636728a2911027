# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""The NodeWright resources: the Skyhook / NodeWright CRs and the DeploymentPolicies, read and written.

``CRsAPI`` is the CR part of a ``kube.Kube`` (kube.py delegates ``get_cr``, ``patch_cr``, ``patch_cr_status`` and
``get_policy`` to it). Both API groups are served side by side (skyhook.nvidia.com, nodewright.nvidia.com): a
lookup tries them in the order the client's generation calls for (generation.py) and a NotFound names every place
it looked; a write goes to the group the document read names, its status guarded by the resourceVersion read. In
a long-lived process a CR is read from its watch and a write is handed to it (watches.LiveCRs), so that the steps
of every node read their CR without a request each and a step reads its own write at once.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import types

from ansible_collections.nodewright.bridge.plugins.module_utils.model import api_generation
from ansible_collections.nodewright.bridge.plugins.module_utils.model.constants import NODEWRIGHT_GROUP, SKYHOOK_GROUP, VERSION
from ansible_collections.nodewright.bridge.plugins.module_utils.api.kube_transport import NotFound, describe
from ansible_collections.nodewright.bridge.plugins.module_utils.api.client_state import ClientPart


GROUP_VERSIONS = types.MappingProxyType({SKYHOOK_GROUP: VERSION, NODEWRIGHT_GROUP: VERSION})
# Where the (cluster-scoped) NodeWright resources live, in the order they are looked up.
CR_PLACES = ((SKYHOOK_GROUP, 'skyhooks'), (NODEWRIGHT_GROUP, 'nodewrights'))
POLICY_PLACES = ((SKYHOOK_GROUP, 'deploymentpolicies'), (NODEWRIGHT_GROUP, 'deploymentpolicies'))
# What a CR lookup names in its NotFound.
CR_WHAT = 'Skyhook / NodeWright'


def not_found(what, name, host, places):
    """The NotFound of a lookup of ``name`` in ``places`` ((group, plural) pairs) that none of them has."""
    return NotFound('%s %s not found in the cluster at %s (looked for %s)'
                    % (what, name, host, ', '.join('%s.%s' % (plural, group) for group, plural in places)), 404)


class CRsAPI(ClientPart):
    """The CR and DeploymentPolicy requests of a ``kube.Kube``, through its transport.

    From the state it shares with the client (client_state.py) at each use: the ``live_crs`` (the long-lived
    process's watches, or None);
    the generation the client speaks is ``generation_api``'s (generation.py).
    """

    def __init__(self, state, generation_api):
        super(CRsAPI, self).__init__(state)
        self.generation_api = generation_api
        self.custom = self.transport.custom

    generation = property(lambda self: self.generation_api.generation)

    def _get_first(self, what, name, places):
        for group, plural in places:
            try:
                return self.call(describe('get', '%s.%s' % (plural, group), name), self.custom.get_cluster_custom_object,
                                 group, GROUP_VERSIONS[group], plural, name)
            except NotFound:
                continue
        raise not_found(what, name, self.host, places)

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
        if self.generation_api.chosen() is api_generation.NODEWRIGHT:
            places = tuple(reversed(POLICY_PLACES))
        return self._get_first('DeploymentPolicy', name, places)
