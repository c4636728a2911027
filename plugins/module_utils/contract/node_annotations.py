# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""The node annotations and labels the NodeWright operator reads and writes, in its exact formats.

* ``skyhook.nvidia.com/nodeState_<cr>``: JSON map ``"<package>|<version>"`` ->
  ``{"name", "version", "image", "containerSHA"?, "stage", "state"?, "restarts"?}``,
  encoded byte-for-byte as Go's ``encoding/json`` does (sorted map keys, struct field
  order, ``omitempty``, HTML-safe escapes, no spaces), so the operator sees no change
  when it takes the node over.
* ``skyhook.nvidia.com/status_<cr>``: annotation *and* label with the node status.
* ``skyhook.nvidia.com/cordon_<cr>``: ``"true"`` while the CR holds a cordon on the node.
* ``skyhook.nvidia.com/version_<cr>``: the operator version that last wrote the node.
* ``skyhook.nvidia.com/ignore``: label; ``"true"`` keeps the node out of every rollout.

No I/O: callers read and patch nodes.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible_collections.nodewright.bridge.plugins.module_utils.model.api_generation import SKYHOOK
from ansible_collections.nodewright.bridge.plugins.module_utils.model.constants import INHERITED_CORDON_PREFIX, TAINT_EFFECTS
from ansible_collections.nodewright.bridge.plugins.module_utils.model.stages import RERUN_STAGES, STAGES

STATES = ('complete', 'in_progress', 'skipped', 'erroring', 'unknown')
STATUSES = ('complete', 'blocked', 'waiting', 'disabled', 'paused', 'in_progress', 'erroring', 'unknown')

# The operator version these annotations are written for (the generation's ``operator_version``); the
# operator's node migration runs only for versions v0.5-v0.7 or no version at all, so a newer value
# lets it take nodes over as they are.
OPERATOR_VERSION = SKYHOOK.operator_version

_FIELDS = ('name', 'version', 'image', 'containerSHA', 'stage', 'state', 'restarts')
OMIT_EMPTY = ('containerSHA', 'state', 'restarts')  # omitempty in the operator's PackageStatus


class NodeStateError(ValueError):
    """The nodeState annotation of a node cannot be read."""


# Every function that names a key takes ``gen``: the api_generation.Generation whose keys the node carries
# (SKYHOOK, skyhook.nvidia.com/*, unless a caller says otherwise; the cluster modules pass kube.generation).

def node_state_key(cr_name, gen=SKYHOOK):
    return gen.node_state_key(cr_name)


def status_key(cr_name, gen=SKYHOOK):
    return gen.status_key(cr_name)


def cordon_key(cr_name, gen=SKYHOOK):
    return gen.cordon_key(cr_name)


def version_key(cr_name, gen=SKYHOOK):
    return gen.version_key(cr_name)


def unique_name(name, version):
    return '%s|%s' % (name, version)


def _go_json_string(value):
    # encoding/json escapes <, >, & and U+2028/U+2029 so output is safe inside HTML.
    text = json.dumps(value, ensure_ascii=False)
    return (text.replace('<', '\\u003c').replace('>', '\\u003e').replace('&', '\\u0026')
            .replace(u'\u2028', '\\u2028').replace(u'\u2029', '\\u2029'))


def _encode_status(status):
    parts = []
    for field in _FIELDS:
        value = status.get(field)
        if field in OMIT_EMPTY and not value:
            continue
        if field == 'restarts':
            parts.append('"restarts":%d' % int(value))
        else:
            parts.append('"%s":%s' % (field, _go_json_string(value if value is not None else '')))
    return '{' + ','.join(parts) + '}'


def encode(state):
    """The annotation value for a node state, exactly as the operator's json.Marshal writes it."""
    items = ['%s:%s' % (_go_json_string(key), _encode_status(state[key])) for key in sorted(state)]
    return '{' + ','.join(items) + '}'


def decode(text, where='nodeState'):
    """A node state dict from an annotation value; ``None`` or ``''`` is the empty state."""
    if text is None or text == '':
        return {}
    try:
        raw = json.loads(text)
    except ValueError as exc:
        raise NodeStateError('%s is not valid JSON: %s' % (where, exc))
    if not isinstance(raw, dict):
        raise NodeStateError('%s must be a JSON object keyed by "<package>|<version>"' % where)
    state = {}
    for key, entry in raw.items():
        if not isinstance(entry, dict):
            raise NodeStateError('%s[%r] must be an object' % (where, key))
        status = {
            'name': entry.get('name', ''),
            'version': entry.get('version', ''),
            'image': entry.get('image', ''),
            'containerSHA': entry.get('containerSHA', ''),
            'stage': entry.get('stage', ''),
            'state': entry.get('state', ''),
            'restarts': entry.get('restarts', 0),
        }
        if status['stage'] not in STAGES:
            raise NodeStateError('%s[%r].stage %r is not one of %s' % (where, key, status['stage'], ', '.join(STAGES)))
        if status['state'] not in STATES + ('',):
            raise NodeStateError('%s[%r].state %r is not one of %s' % (where, key, status['state'], ', '.join(STATES)))
        if not isinstance(status['restarts'], int) or isinstance(status['restarts'], bool):
            raise NodeStateError('%s[%r].restarts must be an integer' % (where, key))
        state[key] = status
    return state


def upsert(state, name, version, image, state_value, stage, restarts=0, container_sha=''):
    """A copy of ``state`` with one package entry set; ``(new_state, changed)``.

    As in the operator, the image does not count as a change (it follows the version).
    """
    if stage not in STAGES:
        raise ValueError('stage %r is not one of %s' % (stage, ', '.join(STAGES)))
    if state_value not in STATES:
        raise ValueError('state %r is not one of %s' % (state_value, ', '.join(STATES)))
    key = unique_name(name, version)
    entry = {'name': name, 'version': version, 'image': image, 'containerSHA': container_sha or '',
             'stage': stage, 'state': state_value, 'restarts': int(restarts or 0)}
    old = state.get(key)
    if old is not None and all(old.get(f) == entry[f] for f in _FIELDS if f != 'image'):
        return state, False
    new = dict(state)
    new[key] = entry
    return new, True


def remove(state, name, version):
    key = unique_name(name, version)
    if key not in state:
        return state, False
    new = dict(state)
    del new[key]
    return new, True


def cordon_owners(annotations, gen=SKYHOOK):
    """CR names holding a NodeWright cordon on a node (from its cordon_<cr> annotations)."""
    prefix = gen.cordon_prefix
    return sorted(k[len(prefix):] for k, v in (annotations or {}).items() if k.startswith(prefix))


def is_ignored(labels, gen=SKYHOOK):
    return (labels or {}).get(gen.ignore_label) == 'true'


# A node's status for a CR that says the CR is in the middle of rolling it.
ROLLING_STATUSES = ('in_progress', 'erroring')


def status_patch(cr_name, status, gen=SKYHOOK):
    """Metadata patch that records a node's status for a CR (annotation and label, as the operator)."""
    if status not in STATUSES:
        raise ValueError('status %r is not one of %s' % (status, ', '.join(STATUSES)))
    key = status_key(cr_name, gen)
    return {'metadata': {'annotations': {key: status}, 'labels': {key: status}}}


# The statuses node_state's action=record writes: what the operator writes on nodes it does not run
# (blocked: an ignored node its batch picks; unknown: a complete record its state no longer backs;
# paused / disabled: every node of a CR that is; waiting: a node of a resumed CR until its batch starts it).
RECORDED_STATUSES = ('blocked', 'unknown', 'paused', 'disabled', 'waiting')


def record_patch(cr_name, status, annotations, labels, gen=SKYHOOK):
    """Metadata patch that sets the node's status for the CR (annotation and label) to ``status``; None if it is so."""
    key = status_key(cr_name, gen)
    if (annotations or {}).get(key) == status and (labels or {}).get(key) == status:
        return None
    return status_patch(cr_name, status, gen)


def unrecord_complete(patch, cr_name, annotations, labels, gen=SKYHOOK):
    """``patch`` (a reset's) plus status ``unknown`` where the node's status for the CR says ``complete``.

    The operator's IntrospectNode on its next reconcile: a node recorded complete whose node state is
    no longer complete becomes unknown. The reset writes it at once, so the label does not keep saying
    complete until the next run. None stays None (nothing was reset).
    """
    key = status_key(cr_name, gen)
    if patch is None or 'complete' not in ((annotations or {}).get(key), (labels or {}).get(key)):
        return patch
    meta = dict(patch.get('metadata') or {})
    for part in ('annotations', 'labels'):
        meta[part] = dict(meta.get(part) or {}, **{key: 'unknown'})
    return dict(patch, metadata=meta)


def version_patch(cr_name, version=None, gen=SKYHOOK):
    """Metadata patch that records which operator version's formats the node's annotations use
    (default: the generation's operator version)."""
    return {'metadata': {'annotations': {version_key(cr_name, gen): version or gen.operator_version}}}


def node_state_patch(cr_name, state, gen=SKYHOOK):
    """Metadata patch that writes the whole nodeState annotation (never a partial value)."""
    return {'metadata': {'annotations': {node_state_key(cr_name, gen): encode(state)}}}


def inherited_cordon_key(cr_name):
    return '%s%s' % (INHERITED_CORDON_PREFIX, cr_name)


def cordon_patch(cr_name, annotations=None, unschedulable=False, take_over=False, gen=SKYHOOK):
    """Cordon a node on behalf of a CR: unschedulable plus the CR's cordon annotation.

    When the node is already unschedulable and no NodeWright CR holds it (someone ran
    ``kubectl cordon``), the cordon is inherited, not held: we also record that in our own
    annotation so the matching uncordon leaves the node cordoned. ``None`` when the CR
    already holds its cordon.

    ``take_over``: the CR's records say it was rolling this node (its status for the node is
    in_progress or erroring). An unowned cordon there is the CR's own whose annotation was
    dropped (``kubectl skyhook reset`` removes ``cordon_<cr>``): the CR holds it again and
    releases it at the end, as the operator does. Not when our inherited marker says the
    cordon was someone else's before the CR came. A marker left on a node that is no longer
    cordoned (the admin uncordoned it) is stale and removed, so it cannot strand the node later.
    """
    annotations = annotations or {}
    if cordon_key(cr_name, gen) in annotations and unschedulable:
        return None
    marker = inherited_cordon_key(cr_name)
    patch = {'spec': {'unschedulable': True}, 'metadata': {'annotations': {cordon_key(cr_name, gen): 'true'}}}
    owners = cordon_owners(annotations, gen)
    # Inherited when nobody from NodeWright holds it, or when every holder only inherited
    # it: the foreign cordon must outlive all of them, whatever order they release in.
    foreign = unschedulable and (not owners or all(annotations.get(inherited_cordon_key(o)) == 'true' for o in owners))
    if foreign and take_over and not owners and annotations.get(marker) != 'true':
        foreign = False
    if foreign:
        patch['metadata']['annotations'][marker] = 'true'
    elif marker in annotations:
        patch['metadata']['annotations'][marker] = None
    return patch


def uncordon_patch(cr_name, annotations, unschedulable, gen=SKYHOOK):
    """Release a CR's cordon: ``(patch or None, schedulable_after)``.

    Removes only this CR's annotations. The node becomes schedulable only if this CR held
    the cordon (it was not inherited from someone else) and no other CR still holds one.
    """
    annotations = annotations or {}
    owners = cordon_owners(annotations, gen)
    if cr_name not in owners:
        return None, not unschedulable
    others = [o for o in owners if o != cr_name]
    inherited = annotations.get(inherited_cordon_key(cr_name)) == 'true'
    patch = {'metadata': {'annotations': {cordon_key(cr_name, gen): None}}}
    if inherited:
        patch['metadata']['annotations'][inherited_cordon_key(cr_name)] = None
    # a persistent cordon (runtimeRequiredCordonAfter) outlives every CR's cordon, as the operator's hasSkyhookCordon
    if unschedulable and not others and not inherited and not has_persistent_cordon(annotations, gen):
        patch['spec'] = {'unschedulable': False}
        return patch, True
    return patch, not unschedulable


def states_on_node(annotations, cr_name=None, gen=SKYHOOK):
    """``{cr: decoded nodeState}`` for every CR (or just ``cr_name``) with state on the node."""
    annotations = annotations or {}
    prefix = gen.node_state_prefix
    found = {}
    for key in sorted(annotations):
        if not key.startswith(prefix):
            continue
        owner = key[len(prefix):]
        if cr_name is None or owner == cr_name:
            found[owner] = decode(annotations[key], where='node annotation %s' % key)
    return found


def forget_patch(cr_name, annotations, labels, gen=SKYHOOK):
    """``kubectl skyhook reset``: drop every annotation and label the CR keeps on a node, except the
    cordon (release that with uncordon_patch, so the node is not left unschedulable without an owner).
    None when there is nothing to drop. The v0.18+ generation's drainStart_ / drainBlocked_ go too."""
    annotations, labels = annotations or {}, labels or {}
    keys = [node_state_key(cr_name, gen), status_key(cr_name, gen), version_key(cr_name, gen),
            gen.auto_taint_prefix + cr_name, gen.drain_start_key(cr_name), gen.drain_blocked_key(cr_name)]
    patch = {'metadata': {}}
    gone = dict((k, None) for k in keys if k and k in annotations)
    if gone:
        patch['metadata']['annotations'] = gone
    if status_key(cr_name, gen) in labels:
        patch['metadata']['labels'] = {status_key(cr_name, gen): None}
    return patch if patch['metadata'] else None


def reset_patch(cr_name, annotations, package=None, version=None, stage=None, gen=SKYHOOK):
    """The metadata patch of ``kubectl skyhook node reset`` / ``package rerun`` for one node.

    * no package: drop the CR's whole nodeState annotation (every package re-runs);
    * a package (every version on the node, or just ``version``): drop its entries, so it
      re-runs from the start; with ``stage``, keep them but set that stage ``in_progress``
      so it re-runs from there.
    Returns ``(patch or None, [unique names reset])``.
    """
    key = node_state_key(cr_name, gen)
    annotations = annotations or {}
    if key not in annotations:
        return None, []
    state = decode(annotations[key], where='node annotation %s' % key)
    if package is None:
        return {'metadata': {'annotations': {key: None}}}, sorted(state)
    if stage is not None and stage not in RERUN_STAGES:
        raise ValueError('stage %r is not one of %s' % (stage, ', '.join(RERUN_STAGES)))
    hits = sorted(k for k, v in state.items() if v['name'] == package and (version is None or v['version'] == version))
    if not hits:
        return None, []
    new = dict(state)
    for hit in hits:
        if stage is None:
            del new[hit]
        else:
            entry = dict(new[hit])
            entry['stage'], entry['state'] = stage, 'in_progress'
            new[hit] = entry
    if new == state:
        return None, []
    if not new:
        return {'metadata': {'annotations': {key: None}}}, hits
    return node_state_patch(cr_name, new, gen), hits


def ignore_patch(labels, ignored, gen=SKYHOOK):
    """Set (or remove) the ignore label; None when it already is as wanted."""
    label = gen.ignore_label
    if is_ignored(labels, gen) == bool(ignored) and (ignored or label not in (labels or {})):
        return None
    return {'metadata': {'labels': {label: 'true' if ignored else None}}}


def stage_succeeded(state, name, version, image, stage, restarts=0, container_sha='', has_interrupt=False):
    """The node state after a package pod of ``stage`` succeeded (the operator's HandleCompletePod).

    * ``upgrade``: the entry is complete and every other version of the package is dropped;
    * ``uninstall``: with an interrupt, the package moves on to ``uninstall-interrupt``
      (in_progress); without, its entry is dropped (absent means uninstalled);
    * any other stage: the entry is ``complete`` at that stage.
    """
    if stage == 'uninstall':
        if has_interrupt:
            return upsert(state, name, version, image, 'in_progress', 'uninstall-interrupt', 0, container_sha)[0]
        return remove(state, name, version)[0]
    new = upsert(state, name, version, image, 'complete', stage, restarts, container_sha)[0]
    if stage == 'upgrade':
        new = dict((k, v) for k, v in new.items() if v['name'] != name or v['version'] == version)
    return new


def interrupt_succeeded(state, name, version, image, stage='interrupt', container_sha='', covered=()):
    """The node state after an interrupt pod succeeded.

    ``uninstall-interrupt`` ends the uninstall (the entry is dropped). ``interrupt`` completes
    the carrier's entry and, as the operator's ProgressSkipped, every package in ``covered``
    whose own interrupt was merged into this one (entry ``skipped`` at stage ``interrupt``).
    """
    if stage == 'uninstall-interrupt':
        return remove(state, name, version)[0]
    new = upsert(state, name, version, image, 'complete', 'interrupt', 0, container_sha)[0]
    for key, entry in list(new.items()):
        if entry['name'] in covered and entry['stage'] == 'interrupt' and entry['state'] == 'skipped':
            updated = dict(entry)
            updated['state'] = 'complete'
            new[key] = updated
    return new


def parse_taint(spec):
    """A taint from kubectl's ``key[=value]:effect`` syntax (the operator's RUNTIME_REQUIRED_TAINT).

    ValueError, naming the value, when the operator would refuse to start with it (no effect, an
    unknown effect, a removal ``-``, more than one ``:`` or ``=``, no key). An empty value
    (``key=:effect``) is no value, as in kubectl.
    """
    if not isinstance(spec, str) or not spec:
        raise ValueError('taint %r must be key[=value]:effect' % (spec,))
    if spec.endswith('-'):
        raise ValueError('taint %r ends in "-", which removes a taint; give key[=value]:effect' % (spec,))
    parts = spec.split(':')
    if len(parts) != 2:
        raise ValueError('taint %r must be key[=value]:effect (exactly one ":")' % (spec,))
    key_value, effect = parts
    if effect not in TAINT_EFFECTS:
        raise ValueError('taint %r: effect %r is not one of %s' % (spec, effect, ', '.join(TAINT_EFFECTS)))
    key_parts = key_value.split('=')
    if len(key_parts) > 2 or not key_parts[0]:
        raise ValueError('taint %r must be key[=value]:effect (one key, at most one "=")' % (spec,))
    taint = {'key': key_parts[0], 'effect': effect}
    if len(key_parts) == 2 and key_parts[1]:
        taint['value'] = key_parts[1]
    return taint


def tolerates(toleration, taint):
    """Kubernetes' Toleration.ToleratesTaint (no comparison operators): effect, key, then Exists or Equal."""
    if toleration.get('effect') and toleration['effect'] != taint.get('effect'):
        return False
    if toleration.get('key') and toleration['key'] != taint.get('key'):
        return False
    operator = toleration.get('operator') or 'Equal'
    if operator == 'Exists':
        return True
    return operator == 'Equal' and (toleration.get('value') or '') == (taint.get('value') or '')


def taint_text(taint):
    """``key[=value]:effect``, as kubectl writes a taint."""
    value = taint.get('value')
    return '%s%s:%s' % (taint.get('key') or '', '=' + value if value else '', taint.get('effect') or '')


# The taints the node lifecycle controller sets and lifts with a node condition (TaintNodesByCondition,
# NoExecuteTaintManager). The operator's picker blocks such a node only until its next reconcile after the
# condition clears; one run of the collection would leave it out altogether, so they are left to what
# watches health (node_health, the not-ready gate) instead of blocking the node (docs/semantics.md 25).
CONDITION_TAINTS = ('node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable',
                    'node.kubernetes.io/memory-pressure', 'node.kubernetes.io/disk-pressure',
                    'node.kubernetes.io/pid-pressure', 'node.kubernetes.io/network-unavailable')


def untolerated(taints, tolerations):
    """The taints (as ``taint_text``) that no toleration tolerates: the operator's CheckTaintToleration wants
    every taint of a node tolerated, whatever its effect, before it picks the node (CONDITION_TAINTS aside)."""
    considered = [t for t in taints or [] if t.get('key') not in CONDITION_TAINTS]
    return [taint_text(t) for t in considered if not any(tolerates(tol, t) for tol in tolerations)]


def is_new_node(annotations, gen=SKYHOOK):
    """No CR has written the node yet: it carries no ``<prefix>/`` annotation (HasSkyhookAnnotations)."""
    return not any(key.startswith(gen.prefix + '/') for key in annotations or {})


def auto_taint_patch(node, taint_spec, gen=SKYHOOK):
    """The operator's HandleAutoTaint on one node: the runtime-required taint and its marker; None if not due.

    Due on a new node (is_new_node) that lacks the taint (TaintExists: same key and effect). The
    marker is the generation's ``auto_taint_key`` (``skyhook.nvidia.com/autoTaint_<taint key>`` in
    v0.15, ``nodewright.nvidia.com/autoTaint_<key, "/" as ".">`` since v0.18), as the controller writes
    it (``kubectl skyhook reset`` removes ``autoTaint_<cr>``: an upstream mismatch, kept as it is).
    """
    taint = parse_taint(taint_spec)
    meta = node.get('metadata') or {}
    taints = list((node.get('spec') or {}).get('taints') or [])
    if not is_new_node(meta.get('annotations'), gen) or has_taint(taints, taint):
        return None
    return {'metadata': {'annotations': {gen.auto_taint_key(taint['key']): 'true'}}, 'spec': {'taints': taints + [taint]}}


def has_taint(taints, taint):
    return any(t.get('key') == taint['key'] and t.get('effect') == taint['effect'] for t in taints or [])


def runtime_taint_patch(node, taint_spec, required_crs, gen=SKYHOOK):
    """Remove the runtime-required taint once every CR in ``required_crs`` is complete on the node.

    The operator's HandleRuntimeRequired: ``required_crs`` are the node's runtimeRequired CRs;
    their ``status_<cr>`` annotations must all say ``complete``. None when nothing is to do.
    The v0.18+ operator also removes the legacy taint it still recognises (never applies).
    """
    wanted = [parse_taint(taint_spec)] + [parse_taint(t) for t in gen.recognised_runtime_required_taints
                                          if t != gen.runtime_required_taint]
    meta = node.get('metadata') or {}
    annotations = meta.get('annotations') or {}
    if any(annotations.get(status_key(cr, gen)) != 'complete' for cr in required_crs):
        return None
    taints = list((node.get('spec') or {}).get('taints') or [])
    wanted_keys = [(w['key'], w['effect'], w.get('value', '')) for w in wanted]
    kept = [t for t in taints if (t.get('key'), t.get('effect'), t.get('value') or '') not in wanted_keys]
    if len(kept) == len(taints):
        return None
    return {'spec': {'taints': kept or None}}


# runtimeRequiredCordonAfter (v0.19+; NVIDIA/nodewright operator/internal/controller/skyhook_controller_test.go,
# "HandleRuntimeRequired with runtimeRequiredCordonAfter"; internal/wrapper/node.go hasSkyhookCordon): when the
# runtime-required taint comes off a node and a runtimeRequired CR selecting it sets the field, the node is cordoned in
# the same write and marked ``<prefix>/runtimeRequiredCordon: "true"``; that mark keeps it cordoned when every CR's
# cordon_ is released; an admin releases it by removing the mark with the cordon; a node uncordoned by hand keeps
# its schedulability and loses the mark.

def persistent_cordon(taint_patch, gen=SKYHOOK):
    """``taint_patch`` (runtime_taint_patch's removal) plus the persistent cordon and its mark."""
    key = gen.runtime_required_cordon_annotation
    if taint_patch is None or key is None:
        return taint_patch
    meta = dict(taint_patch.get('metadata') or {})
    meta['annotations'] = dict(meta.get('annotations') or {}, **{key: 'true'})
    return dict(taint_patch, spec=dict(taint_patch.get('spec') or {}, unschedulable=True), metadata=meta)


def has_persistent_cordon(annotations, gen=SKYHOOK):
    key = gen.runtime_required_cordon_annotation
    return key is not None and key in (annotations or {})


def stale_persistent_cordon_patch(annotations, unschedulable, gen=SKYHOOK):
    """The mark of a persistent cordon on a node someone uncordoned by hand, removed; None otherwise."""
    if unschedulable or not has_persistent_cordon(annotations, gen):
        return None
    return {'metadata': {'annotations': {gen.runtime_required_cordon_annotation: None}}}


def node_diff(node_name, before, after, key=None):
    """A module's diff of a node (``key``: one nodeState entry ``<package>|<version>``, whose before/after these are)."""
    header = 'node/%s' % node_name if key is None else 'node/%s %s' % (node_name, key)
    if key is not None:
        before, after = {'entry': before}, {'entry': after}
    return {'before': before, 'after': after, 'before_header': header, 'after_header': header}


# ---------------------------------------------------------------- a legacy node under the v0.18+ generation
# The v0.18+ operator's migration copy (operator/internal/wrapper/zz.migration.0.18.0.go @8127a97c,
# migrateNodePrefixToNodeWright): every operator-owned key still under skyhook.nvidia.com/ gets a copy under
# nodewright.nvidia.com/ unless that key exists (an explicit new value wins); the legacy keys stay (the
# rollback window). Operator-owned are the annotation stems below and the ignore and status_ labels; a user's
# own skyhook.nvidia.com/pool label is not. The collection sees a node as that operator does after the copy,
# and writes the copies with its first change to the node, so the two prefixes never disagree unmarked.

MIGRATED_ANNOTATION_STEMS = ('nodeState_', 'status_', 'version_', 'cordon_', 'drainStart_', 'autoTaint_')


def _owned_label(stem):
    return stem == 'ignore' or stem.startswith('status_')


def legacy_copies(node, gen=SKYHOOK, legacy=SKYHOOK):
    """``{'annotations': {...}, 'labels': {...}}``: the migration copies the node lacks under ``gen``; {} when
    ``gen`` is the legacy generation itself or nothing is missing. A legacy nodeState that is not valid JSON
    is a NodeStateError naming its key (the copy would carry it into the new key)."""
    if gen.prefix == legacy.prefix:
        return {}
    meta = node.get('metadata') or {}
    old, new = legacy.prefix + '/', gen.prefix + '/'
    copies = {}
    for part, owned in (('annotations', lambda stem: stem.startswith(MIGRATED_ANNOTATION_STEMS)),
                        ('labels', _owned_label)):
        have = meta.get(part) or {}
        found = {}
        for key in sorted(have):
            stem = key[len(old):]
            if not key.startswith(old) or not owned(stem) or (new + stem) in have:
                continue
            if stem.startswith('nodeState_'):
                decode(have[key], where='node %s annotation %s' % (meta.get('name'), key))
            found[new + stem] = have[key]
        if found:
            copies[part] = found
    return copies


def with_copies(node, copies):
    """The node as it is once ``copies`` (legacy_copies) are written: a new object, the input untouched."""
    if not copies:
        return node
    meta = dict(node.get('metadata') or {})
    for part, values in copies.items():
        meta[part] = dict(meta.get(part) or {}, **values)
    return dict(node, metadata=meta)


def merge_copies(patch, copies):
    """``patch`` (a merge patch of the node, or None) with ``copies`` written first; the patch's own keys win."""
    if patch is None or not copies:
        return patch
    meta = dict(patch.get('metadata') or {})
    for part, values in copies.items():
        meta[part] = dict(values, **(meta.get(part) or {}))
    return dict(patch, metadata=meta)


def _pointer(*parts):
    """A JSON pointer (RFC 6901) to ``parts``: '~' and '/' inside a part escaped (annotation keys have '/')."""
    return ''.join('/' + part.replace('~', '~0').replace('/', '~1') for part in parts)


def key_guarded_patch(node, patch, read=()):
    """The merge ``patch`` of a node's annotations and labels as a JSON patch (RFC 6902) guarded by its keys, or None.

    Each key written, and each annotation in ``read`` (what the patch was decided from), is first tested
    at the value it has in ``node`` (the copy the patch was computed from),
    ``null`` when absent (the API server's JSON patch, evanphx/json-patch, takes a test of null to hold for a
    missing member: tests/kube/test_node_state.py checks it): the write is refused (422) only if one of those
    keys changed since, not when anything else on the node did (a taint the node controller adds on a cordon,
    a status heartbeat), as a resourceVersion guard would. None when the patch writes anything but the two
    maps, or the node lacks a map it writes (``add`` of a member needs its map): guard by resourceVersion then.
    """
    meta_patch = (patch or {}).get('metadata') or {}
    if set(patch or {}) - set(['metadata']) or set(meta_patch) - set(['annotations', 'labels']):
        return None
    meta = node.get('metadata') or {}
    ops = []
    for part in ('annotations', 'labels'):
        changes = meta_patch.get(part) or {}
        have = meta.get(part)
        if changes and not isinstance(have, dict):
            return None
        held = sorted(set(read) - set(changes)) if part == 'annotations' and isinstance(have, dict) else []
        for key in held:
            ops.append({'op': 'test', 'path': _pointer('metadata', part, key), 'value': have.get(key)})
        for key in sorted(changes):
            path = _pointer('metadata', part, key)
            ops.append({'op': 'test', 'path': path, 'value': have.get(key)})
            if changes[key] is not None:
                ops.append({'op': 'add', 'path': path, 'value': changes[key]})
            elif key in have:
                ops.append({'op': 'remove', 'path': path})
    return ops if any(op['op'] != 'test' for op in ops) else None


def guards_hold(node, ops):
    """Whether every ``test`` of ``ops`` (key_guarded_patch) holds on ``node``: a refused guarded patch whose tests
    still hold was refused for another reason (an invalid value), not because its keys changed."""
    for op in ops:
        if op['op'] != 'test':
            continue
        part, key = op['path'].split('/', 3)[2:]
        key = key.replace('~1', '/').replace('~0', '~')
        if ((node.get('metadata') or {}).get(part) or {}).get(key) != op['value']:
            return False
    return True
