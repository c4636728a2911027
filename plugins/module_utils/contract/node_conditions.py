# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""What a node or pod object reports about itself (its boot ID, its conditions), and the two node
conditions the operator writes for each CR.

* The predicates (``condition``, ``is_ready``, ``rebooted``, ``pod_ready``): one set for every module
  that waits on a node or a pod (node_interrupt's reboot wait, node_health).
* ``cr_conditions`` / ``conditions_patch``: ``<prefix>/<cr>/NotReady`` and ``<prefix>/<cr>/Erroring`` in the
  node's ``status.conditions``, as the operator's ``skyhookNode.UpdateCondition`` (internal/wrapper/node.go)
  derives them from the node's record for the CR; ``kube.Kube.update_node(conditions=...)`` writes them.

Each function that names a condition takes ``gen`` (api_generation.SKYHOOK unless the caller says otherwise):
the prefix, the CR's record on the node and the NotReady message are the generation's. The v0.18+ operator
(NVIDIA/nodewright operator/internal/wrapper/node.go @042b7591, UpdateCondition, importing
operator/api/nodewright/v1alpha1) writes ``nodewright.nvidia.com/<cr>/NotReady`` with the message
``NodeWright <cr> Ready`` and replaces its NotReady whenever the reason *or* the message differs (so a condition
carried over from the legacy prefix with the old message is rewritten); Erroring keeps the v0.15 rule (replaced
only while its message is the operator's). v0.15 (71ca22b8) writes ``Skyhook <cr> Ready`` and replaces either
condition only while its message is the operator's.

No I/O: callers pass the objects they read or watched.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime

from ansible_collections.nodewright.bridge.plugins.module_utils.contract import node_annotations
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import protected_wait
from ansible_collections.nodewright.bridge.plugins.module_utils.model.api_generation import SKYHOOK


def condition(obj, kind):
    """True when the object (a node or a pod) has the condition ``kind`` with status True."""
    for cond in (obj.get('status') or {}).get('conditions') or []:
        if cond.get('type') == kind:
            return cond.get('status') == 'True'
    return False


def is_ready(obj):
    """The Ready condition of a node or a pod."""
    return condition(obj, 'Ready')


def not_ready_reason(node):
    """None while the node's Ready condition is True; else what the node (its kubelet, or the node lifecycle
    controller once the kubelet stopped posting) says: ``node <name> is not Ready (<status>, <reason>: <message>)``."""
    name = (node.get('metadata') or {}).get('name') or '?'
    for cond in (node.get('status') or {}).get('conditions') or []:
        if cond.get('type') == 'Ready':
            if cond.get('status') == 'True':
                return None
            detail = ', '.join(x for x in (cond.get('status'), cond.get('reason')) if x)
            message = (cond.get('message') or '').strip()
            return 'node %s is not Ready (%s%s)' % (name, detail or 'no status', ': ' + message if message else '')
    return 'node %s is not Ready (no Ready condition)' % name


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


def condition_type(cr_name, kind, gen=SKYHOOK):
    """``<prefix>/<cr>/NotReady`` or ``.../Erroring``: the operator names them under its own metadata prefix."""
    return gen.node_condition_type(cr_name, kind)


def ready_message(cr_name, gen=SKYHOOK):
    """NotReady's message: ``Skyhook <cr> Ready`` (v0.15), ``NodeWright <cr> Ready`` (v0.18+, node.go @042b7591);
    the operator recognises its own condition by it, so it must be the generation's word for word."""
    return '%s %s Ready' % (gen.kind, cr_name)


def _rewrites_not_ready(gen):
    """The v0.18+ operator replaces its NotReady on any reason or message change (node.go @042b7591); v0.15 only
    while the message is its own. Keyed on the generation so SKYHOOK keeps the v0.15 rule exactly."""
    return gen.name != SKYHOOK.name


def now_text():
    """The current time as the API writes a metav1.Time (RFC 3339, seconds, UTC)."""
    return datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')


def cr_conditions(cr_name, status, state, now, gen=SKYHOOK, waiting=False):
    """The two conditions of ``cr_name`` for a node whose status for it is ``status`` and nodeState ``state``.

    NotReady is False (reason Complete) while the node is complete for the CR, else True (Incomplete);
    Erroring is True (reason "Package(s) Erroring or Unknown") while any package entry is erroring or
    unknown, else False (Not Erroring). The operator asks IsComplete() of the nodeState; the collection's
    record of that is the node's status ``complete`` (written when the plan has nothing left, so both
    flip in the same write as the status, as the operator's SetStatus(complete) and UpdateCondition do).
    Both times are ``now``, as the operator sets them on every change. ``waiting``: the node waits for its
    protected pods (protected_wait's record): NotReady's reason is ``NonInterruptPodsRunning`` (the CR's Blocked
    reason) instead of ``Incomplete``, so the node says it waits on purpose (the collection's, docs/semantics.md 34).
    """
    complete = status == 'complete'
    incomplete = protected_wait.REASON if waiting else INCOMPLETE_REASON
    erroring = any((entry or {}).get('state') in ERRORING_STATES for entry in (state or {}).values())
    return [
        {'type': condition_type(cr_name, NOT_READY, gen), 'status': 'False' if complete else 'True',
         'reason': COMPLETE_REASON if complete else incomplete, 'message': ready_message(cr_name, gen),
         'lastHeartbeatTime': now, 'lastTransitionTime': now},
        {'type': condition_type(cr_name, ERRORING, gen), 'status': 'True' if erroring else 'False',
         'reason': ERRORING_REASON if erroring else NOT_ERRORING_REASON,
         'message': 'Package Erroring or Unknown for %s' % cr_name,
         'lastHeartbeatTime': now, 'lastTransitionTime': now},
    ]


def _stale(old, wanted, gen):
    """Whether UpdateCondition replaces ``old`` (the node's condition of ``wanted``'s type; None: missing)."""
    if old is None:
        return True
    if _rewrites_not_ready(gen) and wanted['type'].endswith('/' + NOT_READY):
        return (old.get('reason'), old.get('message')) != (wanted['reason'], wanted['message'])
    return old.get('reason') != wanted['reason'] and old.get('message') == wanted['message']


def conditions_patch(node, cr_name, now, gen=SKYHOOK):
    """The status patch (strategic merge, conditions keyed by type) that brings the CR's two conditions on
    ``node`` (an API node dict) up to date, or None when they already are.

    As UpdateCondition: a missing condition is added; one whose reason differs is replaced whole (status,
    reason, message, both times), but only while its message is the operator's (a condition of that type
    with another message is left alone); one with the same reason is not touched (no heartbeat refresh).
    Under the v0.18+ generation NotReady is replaced on any reason or message change (see the module docstring).
    A nodeState annotation that cannot be read changes nothing (the step that reads it reports it).
    """
    meta = node.get('metadata') or {}
    annotations = meta.get('annotations') or {}
    try:
        state = node_annotations.decode(annotations.get(node_annotations.node_state_key(cr_name, gen)))
    except node_annotations.NodeStateError:
        return None
    have = dict((c.get('type'), c) for c in (node.get('status') or {}).get('conditions') or [])
    waiting = protected_wait.read(annotations, cr_name) is not None
    wanted = cr_conditions(cr_name, annotations.get(node_annotations.status_key(cr_name, gen)), state, now, gen, waiting)
    changed = [c for c in wanted if _stale(have.get(c['type']), c, gen)]
    return {'status': {'conditions': changed}} if changed else None


def writer(cr_name, clock=now_text, gen=SKYHOOK):
    """``conditions(node) -> patch or None`` for ``kube.Kube.update_node``: the CR's conditions as of the write."""
    return lambda node: conditions_patch(node, cr_name, clock(), gen)
