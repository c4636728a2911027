# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""The deletion of a CR that carries the operator's finalizer, as the operator's HandleFinalizer finishes it.

A ``kubectl delete`` of such a CR only sets its deletionTimestamp; the object goes once the finalizer is
removed. Before that: every package with ``uninstall.enabled`` still in a node's state is uninstalled
(cr_model: a CR being deleted uninstalls those packages), deletion is blocked (a DeletionBlocked
condition, a Warning Event) while the CR is paused or disabled with such work pending or a node's state
cannot be read, and at the end each node loses what the CR wrote on it (its cordon if the CR holds it,
its annotations, labels and node conditions; the node state stays when it still lists packages) and the
finalizer goes.

The collection never adds the finalizer: without an always-on controller a ``kubectl delete`` would
wait for the next run (docs/semantics.md). Checked against NVIDIA/nodewright 71ca22b8
(internal/controller/skyhook_controller.go HandleFinalizer, cluster_state_v2.go HasUninstallWork,
internal/wrapper/node.go CleanupSCRMetadata and Uncordon). No I/O.

Every function that names a key takes ``gen`` (api_generation.SKYHOOK unless the caller says otherwise): the
finalizer (``skyhook.nvidia.com/skyhook``; ``nodewright.nvidia.com/nodewright`` in v0.18+,
operator/internal/controller/skyhook_controller.go @01cc2f2d SkyhookFinalizer), the node keys (node_state with
the same ``gen``: v0.18+ also writes ``drainStart_<cr>`` and ``drainBlocked_<cr>``, ``gen.cr_node_keys``) and the
node conditions. The v0.20 HandleFinalizer (skyhook_controller.go @4fa7fe39) words its DeletionBlocked messages and
events with the kind NodeWright where v0.15 says Skyhook; ``decide`` follows the generation's kind.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.nodewright.bridge.plugins.module_utils.contract import node_annotations
from ansible_collections.nodewright.bridge.plugins.module_utils.model.api_generation import SKYHOOK
from ansible_collections.nodewright.bridge.plugins.module_utils.model.constants import BRIDGE_PREFIX

# The v0.15 finalizer, for callers that name it; the functions read ``gen.finalizer``.
FINALIZER = SKYHOOK.finalizer
CONDITION = 'DeletionBlocked'

# HandleFinalizer's reason, condition message and Warning event per case; ``{kind}`` is the generation's CR kind.
_BLOCKED = {
    'malformed': ('MalformedNodeState',
                  'Cannot safely delete {kind}: malformed nodeState on one or more nodes. '
                  'Repair the nodeState annotation before deletion.',
                  'Cannot delete {kind} %s: malformed nodeState. Repair and retry.'),
    'paused': ('PausedWithPendingUninstall',
               '{kind} is paused with uninstall-enabled packages still tracked in nodeState. '
               'Unpause to let uninstall complete before deletion.',
               'Cannot delete {kind} %s: paused with uninstall work pending. Unpause to proceed.'),
    'disabled': ('DisabledWithPendingUninstall',
                 '{kind} is disabled with uninstall-enabled packages still tracked in nodeState. '
                 'Re-enable the {kind} to let uninstall complete before deletion.',
                 'Cannot delete {kind} %s: disabled with uninstall work pending. Re-enable to proceed.'),
}


def being_deleted(doc, gen=SKYHOOK):
    """The CR is deleted and waits for the operator's finalizer (the generation's)."""
    meta = doc.get('metadata') or {}
    return bool(meta.get('deletionTimestamp')) and gen.finalizer in (meta.get('finalizers') or [])


def pending_uninstall(cr, nodes, gen=SKYHOOK):
    """``(pending, malformed)``: ``[(node, package key)]`` still to uninstall, and the nodes whose state cannot be read.

    ``nodes``: planner.normalise_nodes' shape, the nodes the CR selects; their state is read under ``gen``'s key.
    """
    wanted = [node_annotations.unique_name(p.name, p.version) for p in cr.packages.values() if p.uninstall_enabled]
    key = node_annotations.node_state_key(cr.name, gen)
    pending, malformed = [], []
    for node in nodes:
        try:
            state = node_annotations.decode(node['annotations'].get(key), node['name'])
        except node_annotations.NodeStateError:
            malformed.append(node['name'])
            continue
        pending.extend((node['name'], k) for k in wanted if k in state)
    return pending, sorted(malformed)


def decide(cr, pending, malformed, gen=SKYHOOK):
    """``{'action': 'blocked' | 'wait' | 'finalize', 'reason', 'message', 'event'}`` (HandleFinalizer's switch).

    The texts name the generation's kind (Skyhook, NodeWright) as that operator's do, so a status the collection
    wrote reads the same as one the operator wrote.
    """
    why = 'malformed' if malformed else 'paused' if cr.paused and pending else 'disabled' if cr.disabled and pending else None
    if why is not None:
        reason, message, event = (text.format(kind=gen.kind) for text in _BLOCKED[why])
        return {'action': 'blocked', 'reason': reason, 'message': message, 'event': event % cr.name}
    return {'action': 'wait' if pending else 'finalize', 'reason': None, 'message': None, 'event': None}


def blocked_conditions(conditions, decision, generation, now):
    """The status conditions with DeletionBlocked set (a blocked decision) or removed (any other); None if unchanged."""
    current = list(conditions or [])
    kept = [c for c in current if c.get('type') != CONDITION]
    if decision['action'] == 'blocked':
        old = next((c for c in current if c.get('type') == CONDITION), None)
        wanted = {'type': CONDITION, 'status': 'True', 'reason': decision['reason'], 'message': decision['message'],
                  'observedGeneration': generation, 'lastTransitionTime': now}
        if old is not None and all(old.get(k) == wanted[k] for k in ('status', 'reason', 'message')):
            return None
        return kept + [wanted]
    return kept if len(kept) != len(current) else None


def cleanup_patch(cr_name, annotations, labels, unschedulable, gen=SKYHOOK):
    """The node's metadata (and spec) patch that removes what the CR wrote on it, or None (CleanupSCRMetadata, Uncordon).

    The CR's cordon is released only when it holds it and did not inherit it, and no other CR holds one
    (node_annotations.uncordon_patch: a cordon someone else owns is never lifted). The node state and its
    version record stay while the state lists packages (what is on the host is still recorded).
    As CleanupSCRMetadata, every ``<gen.prefix>/*_<cr>`` key goes (so ``gen.cr_node_keys(cr)``, v0.18+'s
    ``drainStart_`` and ``drainBlocked_`` included); keys under the other generation's prefix are not this
    operator's to remove (the v0.18+ one prunes its legacy copies on its own schedule, node.go PruneLegacyMetadata).
    """
    annotations, labels = annotations or {}, labels or {}
    patch, dummy = node_annotations.uncordon_patch(cr_name, annotations, unschedulable, gen)
    patch = patch or {}
    meta = patch.setdefault('metadata', {})
    suffix = '_' + cr_name
    try:
        keep_state = bool(node_annotations.decode(annotations.get(node_annotations.node_state_key(cr_name, gen))))
    except node_annotations.NodeStateError:
        keep_state = False
    kept = (node_annotations.node_state_key(cr_name, gen), node_annotations.version_key(cr_name, gen)) if keep_state else ()
    for key in annotations:
        if key.endswith(suffix) and key.startswith((gen.prefix + '/', BRIDGE_PREFIX + '/')) and key not in kept:
            meta.setdefault('annotations', {})[key] = None
    for key in labels:
        if key.endswith(suffix) and key.startswith(gen.prefix + '/'):
            meta.setdefault('labels', {})[key] = None
    if not meta:
        patch.pop('metadata')
    return patch or None


def conditions_removal(cr_name, node, gen=SKYHOOK):
    """A strategic merge patch of the node's status removing the CR's node conditions (``<prefix>/<cr>/*``), or None."""
    prefix = '%s/%s/' % (gen.condition_prefix, cr_name)
    gone = [c['type'] for c in (node.get('status') or {}).get('conditions') or [] if c.get('type', '').startswith(prefix)]
    if not gone:
        return None
    return {'status': {'conditions': [{'type': t, '$patch': 'delete'} for t in gone]}}


def add_finalizer_patch(doc, gen=SKYHOOK):
    """A merge patch that adds the operator's finalizer to a CR that is not being deleted and lacks it, or None.

    Guarded by the resourceVersion: the finalizers are a list, which a merge patch replaces whole.
    """
    meta = doc.get('metadata') or {}
    finalizers = list(meta.get('finalizers') or [])
    if meta.get('deletionTimestamp') or gen.finalizer in finalizers:
        return None
    return {'metadata': {'finalizers': finalizers + [gen.finalizer], 'resourceVersion': meta.get('resourceVersion')}}


def finalizers_patch(doc, gen=SKYHOOK):
    """A merge patch of the CR's metadata without the operator's finalizer (only the generation's: another
    generation's finalizer belongs to that operator), guarded by its resourceVersion."""
    meta = doc.get('metadata') or {}
    return {'metadata': {'finalizers': [f for f in meta.get('finalizers') or [] if f != gen.finalizer],
                         'resourceVersion': meta.get('resourceVersion')}}
