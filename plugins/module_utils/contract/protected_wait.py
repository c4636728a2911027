# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""A node's wait for its protected pods, as the node records it and as people see it. No I/O.

While a CR's drain waits for the pods of its ``podNonInterruptLabels`` (or pods that opted in with
the annotation ``OPT_IN``) to finish, the node carries ``bridge.nodewright.io/protected-wait_<cr>``:
JSON ``{"since": RFC 3339, "pods": ["namespace/name", ...], "parked": bool}``. ``since`` is written
once, so the wait's age spans runs; the annotation goes when the wait ends. From it come the CR's
``Blocked`` condition with reason ``NonInterruptPodsRunning`` (the operator's reason and message,
NVIDIA/nodewright operator/RELEASE_NOTES.md, Unreleased), the wait's Events and the report's
parked nodes (docs/semantics.md 34).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import json

from ansible_collections.nodewright.bridge.plugins.module_utils.model.constants import BRIDGE_PREFIX

WAIT_PREFIX = BRIDGE_PREFIX + '/protected-wait_'
# A workload's own say (the design's slice 3, not yet defined upstream, so under this collection's prefix: the
# operator does not read it): "true" protects the pod as podNonInterruptLabels would, "false" leaves it to the
# CR's selector. Any other value protects it too (never interrupt on a doubt) and is named in a warning.
OPT_IN = BRIDGE_PREFIX + '/non-interruptible'
OPT_IN_VALUES = ('true', 'false')
REASON = 'NonInterruptPodsRunning'
# the operator's wrapper.ReadyConditionNodeListLimit
NODE_LIST_LIMIT = 10


def key(cr_name):
    return WAIT_PREFIX + cr_name


def now_rfc3339(now=None):
    moment = datetime.datetime.utcfromtimestamp(now) if now is not None else datetime.datetime.utcnow()
    return moment.strftime('%Y-%m-%dT%H:%M:%SZ')


def parse_time(text):
    """Epoch seconds of an RFC 3339 UTC time written by ``now_rfc3339``; None when it is not one."""
    try:
        moment = datetime.datetime.strptime(text, '%Y-%m-%dT%H:%M:%SZ')
    except (TypeError, ValueError):
        return None
    return (moment - datetime.datetime(1970, 1, 1)).total_seconds()


def read(annotations, cr_name):
    """The node's wait record for ``cr_name`` (a dict), or None (none, or not one this collection wrote)."""
    text = (annotations or {}).get(key(cr_name))
    if not text:
        return None
    try:
        record = json.loads(text)
    except ValueError:
        return None
    if not isinstance(record, dict) or parse_time(record.get('since')) is None:
        return None
    return record


def encode(since, pods, parked):
    return json.dumps({'since': since, 'pods': sorted(pods), 'parked': bool(parked)}, sort_keys=True,
                      separators=(',', ':'))


def changes(annotations, cr_name, pods, parked, now=None):
    """The annotation change that records a wait on ``pods`` (``since`` kept from an earlier record); None if none."""
    earlier = read(annotations, cr_name)
    since = earlier['since'] if earlier else now_rfc3339(now)
    text = encode(since, pods, parked)
    if (annotations or {}).get(key(cr_name)) == text:
        return None
    return {key(cr_name): text}


def cleared(annotations, cr_name):
    """The annotation change that ends the wait record; None when there is none."""
    return {key(cr_name): None} if key(cr_name) in (annotations or {}) else None


def opt_in_problem(pod):
    """A message when the pod's ``OPT_IN`` annotation has a value other than true/false (it protects the pod)."""
    meta = pod.get('metadata') or {}
    value = (meta.get('annotations') or {}).get(OPT_IN)
    if value is None or str(value).strip().lower() in OPT_IN_VALUES:
        return None
    return ('pod %s/%s: annotation %s=%r is neither "true" nor "false"; the pod is treated as non-interruptible '
            '(never evicted, the drain waits for it)' % (meta.get('namespace'), meta.get('name'), OPT_IN, value))


def opted_in(pod):
    """Whether the pod asks not to be interrupted with ``OPT_IN`` (an unknown value counts as yes)."""
    value = ((pod.get('metadata') or {}).get('annotations') or {}).get(OPT_IN)
    return value is not None and str(value).strip().lower() != 'false'


def waiting_nodes(nodes, cr_name, complete=()):
    """``{node: record}`` of the nodes (Node objects) that wait for protected pods for ``cr_name``, complete ones apart."""
    found = {}
    for node in nodes:
        meta = node.get('metadata') or {}
        if meta.get('name') in complete:
            continue
        record = read(meta.get('annotations'), cr_name)
        if record is not None:
            found[meta.get('name')] = record
    return found


def condition_message(names):
    """The operator's Blocked message: ``2 nodes blocked by non-interrupt pods (a, b). Waiting.``"""
    names = sorted(names)
    count = len(names)
    listed = ', '.join(names[:NODE_LIST_LIMIT])
    if count > NODE_LIST_LIMIT:
        listed += ' (list truncated; see controller logs)'
    return '%d node%s blocked by non-interrupt pods (%s). Waiting.' % (count, '' if count == 1 else 's', listed)


def waited_seconds(record, now):
    since = parse_time((record or {}).get('since'))
    return max(0.0, now - since) if since is not None else 0.0
