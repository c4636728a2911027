# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""The CR a plan was made with, handed down to the steps that carry the plan out; what a step does when the CR changed.

A run plans with one version of a CR (apply's batch plan on localhost, node_update's plan of its node) and then
acts on it for minutes or hours, while the CR in the cluster may be edited, or deleted and created again. The
operator reconciles against the CR as it is at each reconcile; the bridge does the same with one rule, here:

* the plan hands down the CR's *identity* (``identity``: name, uid, generation, resourceVersion);
* every later step compares it with the CR as it reads it then (``change``):

  - ``SAME``: the spec the plan was made from (the API server bumps ``metadata.generation`` on every spec edit,
    and only then; a pause, a label or a status write keeps it) -- the step goes on;
  - ``NEW_GENERATION``: the spec was edited -- the node is planned again from the CR as it is now (node_update's
    replan, as for a stage pod superseded by an edit), before any new pod, as the operator's next reconcile does;
  - ``REPLACED``: another uid, the CR was deleted and created again -- another object, whose records are not the
    plan's: the node stops with a message that says so (a new run plans it).

A CR given as a document (a file) was never stored: it has no uid or generation, and nothing to compare.

``ValidatedCRs``: the CRs a process has validated, by uid and resourceVersion (a stored document is the same
document at the same resourceVersion), so that the plan and every step of every node in one process (the
sequence engine) validate one version of a CR once, not once per step. No I/O.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import collections
import os

SAME = 'same'
NEW_GENERATION = 'new generation'
REPLACED = 'replaced'

# the CR versions a process keeps validated: a run follows a few CRs, each edited now and then
VALIDATED_CACHE_SIZE = 32


def identity(doc):
    """``{'name', 'uid', 'generation', 'resource_version'}`` of a CR document (None where a file's lacks them)."""
    meta = (doc or {}).get('metadata') or {}
    generation = meta.get('generation')
    return {
        'name': meta.get('name'),
        'uid': meta.get('uid') or None,
        'generation': int(generation) if generation is not None else None,
        'resource_version': meta.get('resourceVersion') or None,
    }


def change(planned, now):
    """How the CR ``now`` (an identity) differs from the one the plan was made with (``planned``, an identity).

    ``SAME`` when either side is no stored CR (no uid) or when uid and generation agree; ``REPLACED`` when the
    uids differ; ``NEW_GENERATION`` when only the generations do.
    """
    if not planned or not now or not planned.get('uid') or not now.get('uid'):
        return SAME
    if planned['uid'] != now['uid']:
        return REPLACED
    if planned.get('generation') is not None and now.get('generation') is not None \
            and int(planned['generation']) != int(now['generation']):
        return NEW_GENERATION
    return SAME


def describe(outcome, planned, now):
    """The words for ``change``'s outcome: what changed since the plan (empty for ``SAME``)."""
    name = (now or {}).get('name') or (planned or {}).get('name') or 'the CR'
    if outcome == REPLACED:
        return ('%s was deleted and created again since the node was planned (uid %s, now %s): another CR, whose '
                'records are not the plan\'s; the node is left as it is, a new run plans it'
                % (name, planned.get('uid'), now.get('uid')))
    if outcome == NEW_GENERATION:
        return ('%s changed since the node was planned (generation %s, now %s): the node is planned again from it'
                % (name, planned.get('generation'), now.get('generation')))
    return ''


def stored_cr(kube, doc, build):
    """``build(doc, stored=True)`` (cr_validation.build_cr) for a CR as the cluster returned it, once per version in the
    process of ``kube`` (its session's ``validated_crs``); a client without a session builds it each time."""
    session = getattr(kube, 'session', None)
    if session is None:
        return build(doc, stored=True)
    return session.validated_crs.get(doc, True, lambda: build(doc, stored=True))


def cache_key(doc, stored):
    """The key of a validated CR: a stored document by name, uid and resourceVersion; None for one that cannot
    be told apart from another by its metadata (a file's, or a stored one without a resourceVersion)."""
    found = identity(doc)
    if not stored or not found['uid'] or not found['resource_version']:
        return None
    return (found['name'], found['uid'], found['resource_version'], (doc.get('apiVersion') or ''))


class ValidatedCRs(object):
    """The CR models one process has built from stored documents, at most ``size``, the least recently used out.

    ``get(doc, stored, build)``: the model for ``doc``, ``build()`` run only for a version not seen yet (its
    error is not kept: an invalid CR fails every step that reads it, as before). The models are shared: callers
    read them and never change them. Keys start with the process id, so that a fork never takes its parent's.
    Without a lock, as kube.RecentCache: each OrderedDict operation is one step under the GIL, and two
    threads that build one version at once both build it (the same model).
    """

    def __init__(self, size=VALIDATED_CACHE_SIZE):
        self.size = size
        self.models = collections.OrderedDict()
        self.builds = 0  # models built, not taken from the table (what the tests count)

    def get(self, doc, stored, build):
        key = cache_key(doc, stored)
        if key is not None:
            key = (os.getpid(),) + key
            model = self.models.get(key)
            if model is not None:
                try:
                    self.models.move_to_end(key)
                except KeyError:
                    pass  # dropped by another thread meanwhile: the model is still this version's
                return model
        model = build()
        self.builds += 1
        if key is not None:
            self.models[key] = model
            while len(self.models) > self.size:
                try:
                    self.models.popitem(last=False)
                except KeyError:
                    break
        return model
