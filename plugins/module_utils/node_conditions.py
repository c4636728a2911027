# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""What a node or pod object reports about itself (its boot ID, its conditions), and the two node
conditions the operator writes for each CR.

* The predicates (``condition``, ``is_ready``, ``rebooted``, ``pod_ready``): one set for every module
  that waits on a node or a pod (node_interrupt's reboot wait, node_health).
* ``cr_conditions`` / ``conditions_patch``: ``skyhook.nvidia.com/<cr>/NotReady`` and
  ``skyhook.nvidia.com/<cr>/Erroring`` in the node's ``status.conditions``, as the operator's
  ``skyhookNode.UpdateCondition`` (internal/wrapper/node.go) derives them from the node's record
  for the CR; ``kube.Kube.update_node(conditions=...)`` writes them.

No I/O: callers pass the objects they read or watched.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime

from ansible_collections.nodewright.bridge.plugins.module_utils import node_state
from ansible_collections.nodewright.bridge.plugins.module_utils.constants import PREFIX


def condition(obj, kind):
    """True when the object (a node or a pod) has the condition ``kind`` with status True."""
    for cond in (obj.get('status') or {}).get('conditions') or []:
        if cond.get('type') == kind:
            return cond.get('status') == 'True'
    return False


def is_ready(obj):
    """The Ready condition of a node or a pod."""
    return condition(obj, 'Ready')


def boot_id(node):
    """The node's ``status.nodeInfo.bootID`` ('' when it has not reported one); it changes with every boot."""
    return ((node.get('status') or {}).get('nodeInfo') or {}).get('bootID') or ''


def rebooted(node, before):
    """The node reports a boot ID other than ``before`` and is Ready: it has come back from a reboot."""
    current = boot_id(node)
    return bool(current) and current != before and is_ready(node)


def pod_ready(pod):
    """A pod that runs, is Ready and is not being deleted."""
    return (pod.get('status') or {}).get('phase') == 'Running' and is_ready(pod) \
        and not (pod.get('metadata') or {}).get('deletionTimestamp')


# --------------------------------------------------------------------------- the conditions the operator writes

NOT_READY = 'NotReady'
ERRORING = 'Erroring'
# the operator's reasons and messages (UpdateCondition), word for word
COMPLETE_REASON, INCOMPLETE_REASON = 'Complete', 'Incomplete'
ERRORING_REASON, NOT_ERRORING_REASON = 'Package(s) Erroring or Unknown', 'Not Erroring'
# package states that make the Erroring condition True (StateErroring, StateUnknown)
ERRORING_STATES = ('erroring', 'unknown')


def condition_type(cr_name, kind):
    """``skyhook.nvidia.com/<cr>/NotReady`` or ``.../Erroring`` (the operator uses this prefix for both API groups)."""
    return '%s/%s/%s' % (PREFIX, cr_name, kind)


def now_text():
    """The current time as the API writes a metav1.Time (RFC 3339, seconds, UTC)."""
    return datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')


def cr_conditions(cr_name, status, state, now):
    """The two conditions of ``cr_name`` for a node whose status for it is ``status`` and nodeState ``state``.

    NotReady is False (reason Complete) while the node is complete for the CR, else True (Incomplete);
    Erroring is True (reason "Package(s) Erroring or Unknown") while any package entry is erroring or
    unknown, else False (Not Erroring). The operator asks IsComplete() of the nodeState; the collection's
    record of that is the node's status ``complete`` (written when the plan has nothing left, so both
    flip in the same write as the status, as the operator's SetStatus(complete) and UpdateCondition do).
    Both times are ``now``, as the operator sets them on every change.
    """
    complete = status == 'complete'
    erroring = any((entry or {}).get('state') in ERRORING_STATES for entry in (state or {}).values())
    return [
        {'type': condition_type(cr_name, NOT_READY), 'status': 'False' if complete else 'True',
         'reason': COMPLETE_REASON if complete else INCOMPLETE_REASON, 'message': 'Skyhook %s Ready' % cr_name,
         'lastHeartbeatTime': now, 'lastTransitionTime': now},
        {'type': condition_type(cr_name, ERRORING), 'status': 'True' if erroring else 'False',
         'reason': ERRORING_REASON if erroring else NOT_ERRORING_REASON,
         'message': 'Package Erroring or Unknown for %s' % cr_name,
         'lastHeartbeatTime': now, 'lastTransitionTime': now},
    ]


def conditions_patch(node, cr_name, now):
    """The status patch (strategic merge, conditions keyed by type) that brings the CR's two conditions on
    ``node`` (an API node dict) up to date, or None when they already are.

    As UpdateCondition: a missing condition is added; one whose reason differs is replaced whole (status,
    reason, message, both times), but only while its message is the operator's (a condition of that type
    with another message is left alone); one with the same reason is not touched (no heartbeat refresh).
    A nodeState annotation that cannot be read changes nothing (the step that reads it reports it).
    """
    meta = node.get('metadata') or {}
    annotations = meta.get('annotations') or {}
    try:
        state = node_state.decode(annotations.get(node_state.node_state_key(cr_name)))
    except node_state.NodeStateError:
        return None
    have = dict((c.get('type'), c) for c in (node.get('status') or {}).get('conditions') or [])
    changed = []
    for wanted in cr_conditions(cr_name, annotations.get(node_state.status_key(cr_name)), state, now):
        old = have.get(wanted['type'])
        if old is None or (old.get('reason') != wanted['reason'] and old.get('message') == wanted['message']):
            changed.append(wanted)
    return {'status': {'conditions': changed}} if changed else None


def writer(cr_name, clock=now_text):
    """``conditions(node) -> patch or None`` for ``kube.Kube.update_node``: the CR's conditions as of the write."""
    return lambda node: conditions_patch(node, cr_name, clock())
