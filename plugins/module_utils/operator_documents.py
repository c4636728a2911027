# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""NodeWright documents as the documents a given operator serves (pure; no I/O).

The NodeWright operator of the v0.15 line (the one released as of this collection) serves only
``skyhook.nvidia.com/v1alpha1``: kinds ``Skyhook`` and ``DeploymentPolicy``. The announced
``nodewright.nvidia.com/v1alpha1`` group (kind ``NodeWright``) has the same spec but for the v0.20
fields (``drainConfig``, ``runtimeRequiredCordonAfter``, ``packages.<p>.stageTimeout``); the collection
reads both. ``to_skyhook`` turns a file written for the new group into one the released operator
accepts with ``kubectl apply -f``: the group and kind change, the spec does not (a v0.20 field stays,
and cr_model refuses it on the Skyhook, naming it), and what the API server sets on an object it
stored (status, resourceVersion, uid, ...) is dropped so that the documents apply to any cluster.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from ansible_collections.nodewright.bridge.plugins.module_utils.constants import (
    NODEWRIGHT_API_VERSION, NODEWRIGHT_GROUP, SKYHOOK_API_VERSION, SKYHOOK_GROUP)

# (apiVersion, kind) of the input -> kind for skyhook.nvidia.com/v1alpha1
_TO_SKYHOOK = {
    (SKYHOOK_API_VERSION, 'Skyhook'): 'Skyhook',
    (NODEWRIGHT_API_VERSION, 'NodeWright'): 'Skyhook',
    (SKYHOOK_API_VERSION, 'DeploymentPolicy'): 'DeploymentPolicy',
    (NODEWRIGHT_API_VERSION, 'DeploymentPolicy'): 'DeploymentPolicy',
}
# metadata the API server sets on a stored object: not part of a document to apply
SERVER_METADATA = ('resourceVersion', 'uid', 'creationTimestamp', 'generation', 'managedFields', 'selfLink',
                   'deletionTimestamp', 'deletionGracePeriodSeconds')


class DocumentError(ValueError):
    """A document that cannot be converted; the message names it by its position."""


def to_skyhook(docs):
    """Copies of ``docs`` as ``skyhook.nvidia.com/v1alpha1`` Skyhook / DeploymentPolicy documents.

    ``docs``: a list of documents (None entries, as an empty YAML document gives, are skipped).
    Raises DocumentError for anything that is not a Skyhook, NodeWright or DeploymentPolicy of
    either group.
    """
    if isinstance(docs, dict):
        docs = [docs]
    if not isinstance(docs, (list, tuple)):
        raise DocumentError('expected a list of documents, got %s' % type(docs).__name__)
    out = []
    for index, doc in enumerate(docs):
        if doc is None:
            continue
        if not isinstance(doc, dict):
            raise DocumentError('document %d: expected a mapping, got %s' % (index, type(doc).__name__))
        key = (doc.get('apiVersion'), doc.get('kind'))
        if key not in _TO_SKYHOOK:
            raise DocumentError('document %d: apiVersion %r kind %r is not a Skyhook or NodeWright CR or a '
                                'DeploymentPolicy of %s or %s' % (index, key[0], key[1], SKYHOOK_GROUP,
                                                                  NODEWRIGHT_GROUP))
        converted = copy.deepcopy(doc)
        converted['apiVersion'] = SKYHOOK_API_VERSION
        converted['kind'] = _TO_SKYHOOK[key]
        converted.pop('status', None)
        metadata = converted.get('metadata')
        if isinstance(metadata, dict):
            for field in SERVER_METADATA:
                metadata.pop(field, None)
        out.append(converted)
    return out
