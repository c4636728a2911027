# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""What a NodeWright's ``spec.drainConfig`` does to a drain, and the v0.20 drain-blocked contract. No I/O.

Read in NVIDIA/nodewright (the v0.19/v0.20 operator; stored in part under its old name NVIDIA/skyhook):

* ``operator/internal/drain/drain.go`` @1211486a: ``DefaultOptions`` (deleteEmptyDirData, force, ignoreDaemonSets
  true; disableEviction false), ``OptionsFromConfig`` (a field left nil keeps its default; ``gracePeriod`` rounded up
  to whole seconds), ``TimedOut`` (no start, no timeout or a zero one: never; else ``now >= start + timeout``) and
  ``DecidePod``: a pod that is neither Running nor Pending, one of the operator's package pods, one tolerating
  ``node.kubernetes.io/unschedulable:NoSchedule`` (``ToleratesTaint``), a pod whose controller is a DaemonSet when
  ``ignoreDaemonSets``, a ``kube-system`` pod and a mirror pod are left alone; then a pod with a deletionTimestamp is
  waited for (``terminating``: the drain is done when it is gone, the v0.19 change); then a pod with no controller
  ownerReference blocks the drain unless ``force`` (``unmanaged``), one with an ``emptyDir`` volume unless
  ``deleteEmptyDirData`` (``emptydir``); the others are deleted (``disableEviction``) or evicted. A blocking pod is
  never evicted: the drain waits for it to go. Eviction and deletion carry ``gracePeriodSeconds`` when set.
  ``BlockedPod`` (JSON ``namespace``, ``name``, ``reason``, ``detail`` omitempty) with the reasons
  ``PodDisruptionBudget``, ``UnmanagedPod``, ``EmptyDirData``.
* ``operator/internal/controller/skyhook_controller.go`` @01cc2f2d: ``DrainNode`` (the node drained: its
  ``drainStart_`` goes; else a missing ``drainStart_`` is written now, an elapsed timeout ends the drain there without
  evicting and keeps the blockers last recorded; an unmanaged or emptyDir pod is a blocker without detail; an eviction
  refused with 429 whose status has a cause of type ``DisruptionBudget`` is a blocker whose detail is that cause's
  message, verbatim (``drain_rules.pdb_cause``); any other refusal is an error), ``EnsureNodeIsReadyForInterrupt``
  (the blockers of each attempt go in ``drainBlocked_<cr>``; none: the annotation goes, as it goes once the node has
  drained; kept when the attempt failed before looking at a pod).
* ``operator/internal/controller/skyhook_controller_test.go`` @01cc2f2d: ``drainBlocked_<cr>`` holds
  ``json.Marshal([]drain.BlockedPod)``; ``drainStart_<cr>`` is ``time.RFC3339Nano``.
* ``operator/internal/controller/cluster_state_v2.go`` @01cc2f2d ``UpdateDrainBlockedCondition``: the CR's
  ``DrainBlocked`` condition is rebuilt on every pass from the nodes' ``drainBlocked_`` annotations (an unreadable one
  is skipped, a node with no interrupt drain waiting has its annotation cleared); none: the condition is removed;
  else True with ``DrainBlockedConditionReason`` and ``DrainBlockedConditionMessage`` over the CR's nodes.
* ``operator/internal/wrapper/skyhook_conditions.go`` (NVIDIA/nodewright, the version after @4fa7fe39 whose message
  falls back to the reason): the reason is the one kind of blocker seen, else ``MultipleCauses``; the message is
  ``"<n>/<total> nodes blocked draining (<names>)"`` (names past 10: ``(list truncated; see controller logs)``),
  then ``"<ns>/<pod> on <node>: <detail, or the reason>"`` per pod, nodes and pods sorted, at most 10 such lines
  and then ``(additional detail truncated; see controller logs)``, joined with ``"; "``.
* ``docs/architecture/interrupt-flow.md`` @1b950d89 and ``operator/RELEASE_NOTES.md`` (v0.19.0, v0.20.0) say the
  same in prose: v0.19 waits for evicted pods to terminate; in v0.20 a PDB refusal is a wait (retried every 30 s)
  bounded only by ``spec.drainConfig.timeout``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import json

from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_model
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import drain_rules
from ansible_collections.nodewright.bridge.plugins.module_utils.model import duration
from ansible_collections.nodewright.bridge.plugins.module_utils.contract.operator_presence import parse_time

BOOLEANS = ('disableEviction', 'deleteEmptyDirData', 'force', 'ignoreDaemonSets')
DURATIONS = ('timeout', 'gracePeriod')
# what cr_model.drain_config adds; accepted as input (a plan's drainConfig) and derived again from the durations
DERIVED = ('timeoutSeconds', 'gracePeriodSeconds')

# drain.BlockReason, and the condition's reason for more than one kind
PDB = 'PodDisruptionBudget'
UNMANAGED = 'UnmanagedPod'
EMPTY_DIR = 'EmptyDirData'
MULTIPLE = 'MultipleCauses'
REASONS = (PDB, UNMANAGED, EMPTY_DIR)
# drain.Decision reasons of the two pods that block (a node_drain pod entry's reason)
DECISION_REASONS = {UNMANAGED: 'unmanaged', EMPTY_DIR: 'emptydir'}

# wrapper.ReadyConditionNodeListLimit, drainBlockedDetailLineLimit
LIST_LIMIT = 10


def normalize(value):
    """A ``drainConfig`` (the CR's field, or cr_model.drain_config's dict) as cr_model.drain_config gives it, or None
    for None. Raises ValueError naming every problem: not a dict, an unknown key, a boolean that is not one, a
    duration that Go's time.ParseDuration refuses or that is negative (the webhook's rule)."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ValueError('drain_config must be a dict (a CR\'s spec.drainConfig), got %s' % type(value).__name__)
    problems = ['unknown field %s' % key for key in sorted(str(k) for k in value if k not in BOOLEANS + DURATIONS + DERIVED)]
    for key in BOOLEANS:
        if value.get(key) is not None and not isinstance(value[key], bool):
            problems.append('%s must be a boolean, got %r' % (key, value[key]))
    for key in DURATIONS:
        text = value.get(key)
        if text is None:
            continue
        if not isinstance(text, str):
            problems.append('%s must be a duration string such as 30s, got %r' % (key, text))
            continue
        try:
            negative = duration.parse_go_duration(text) < 0
        except ValueError as exc:
            problems.append('%s: %r is not a duration such as 30s or 1m30s (%s)' % (key, text, exc))
            continue
        if negative:
            problems.append('%s: %r must be greater than or equal to 0' % (key, text))
    if problems:
        raise ValueError('invalid drain_config: %s' % '; '.join(problems))
    return cr_model.drain_config(dict((k, v) for k, v in value.items() if k not in DERIVED))


def rules(config, explicit=None):
    """The DrainRules fields of a drain under ``config`` (normalize's dict): ``explicit`` (the fields a caller set)
    win; ``skip_daemonsets`` is ``ignoreDaemonSets``, and a toleration counts as tolerating the cordon by Kubernetes'
    ``ToleratesTaint`` (``taint``), as DecidePod decides."""
    fields = dict(explicit or {})
    fields.setdefault('skip_daemonsets', config['ignoreDaemonSets'])
    fields.setdefault('unschedulable_toleration', 'taint')
    return fields


def has_controller(pod):
    """metav1.GetControllerOf(pod) != nil: an ownerReference with ``controller: true``."""
    refs = ((pod or {}).get('metadata') or {}).get('ownerReferences') or []
    return any((ref or {}).get('controller') for ref in refs)


def has_empty_dir(pod):
    return any('emptyDir' in (volume or {}) for volume in ((pod or {}).get('spec') or {}).get('volumes') or [])


def blocker(pod, config):
    """Why ``pod``, one the drain rules would evict, blocks the drain under ``config`` (DecidePod's ActionBlock):
    UNMANAGED (no controller, ``force`` false), EMPTY_DIR (an emptyDir volume, ``deleteEmptyDirData`` false), or
    None: it is evicted (or deleted). A terminating pod is never a blocker: it is waited for."""
    if drain_rules.is_terminating(pod):
        return None
    if not config['force'] and not has_controller(pod):
        return UNMANAGED
    if not config['deleteEmptyDirData'] and has_empty_dir(pod):
        return EMPTY_DIR
    return None


def timed_out(started, timeout_seconds, now):
    """drain.TimedOut: ``started`` (epoch seconds; None: no drain start) plus ``timeout_seconds`` (None or 0: no
    timeout) is reached at ``now``."""
    if started is None or not timeout_seconds:
        return False
    return now >= started + timeout_seconds


# --------------------------------------------------------------------------- the node annotations


def format_start(epoch):
    """``drainStart_``'s value: ``time.RFC3339Nano`` of a UTC time (trailing zeros of the fraction dropped, none
    when whole)."""
    moment = datetime.datetime(1970, 1, 1) + datetime.timedelta(seconds=epoch)
    text = moment.strftime('%Y-%m-%dT%H:%M:%S')
    fraction = ('%06d' % moment.microsecond).rstrip('0')
    return '%s%sZ' % (text, '.' + fraction if fraction else '')


def parse_start(text):
    """Epoch seconds of a ``drainStart_`` value; ValueError when it is not RFC 3339 (DrainStartedAt's error)."""
    epoch = parse_time(text)
    if epoch is None:
        raise ValueError('error parsing drain start annotation: %r is not an RFC 3339 time' % (text,))
    return epoch


def blocked_pod(namespace, name, reason, detail=''):
    """A drain.BlockedPod (``detail`` omitted when empty, as its omitempty tag)."""
    pod = {'namespace': namespace or '', 'name': name or '', 'reason': reason}
    if detail:
        pod['detail'] = detail
    return pod


_GO_ESCAPES = (('<', '\\u003c'), ('>', '\\u003e'), ('&', '\\u0026'), (u'\u2028', '\\u2028'), (u'\u2029', '\\u2029'))


def encode_blocked(pods):
    """``drainBlocked_``'s value: Go's ``json.Marshal`` of the BlockedPods (compact, fields in the struct's order,
    HTML characters escaped)."""
    ordered = []
    for pod in pods:
        item = '{"namespace":%s,"name":%s,"reason":%s' % tuple(
            json.dumps(pod.get(k) or '', ensure_ascii=False) for k in ('namespace', 'name', 'reason'))
        if pod.get('detail'):
            item += ',"detail":%s' % json.dumps(pod['detail'], ensure_ascii=False)
        ordered.append(item + '}')
    text = '[%s]' % ','.join(ordered)
    for raw, escaped in _GO_ESCAPES:
        text = text.replace(raw, escaped)
    return text


def decode_blocked(text):
    """The BlockedPods of a ``drainBlocked_`` value; ValueError when it is not a JSON list of them."""
    try:
        value = json.loads(text)
    except (TypeError, ValueError) as exc:
        raise ValueError('drainBlocked annotation is not JSON: %s' % exc)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(p, dict) for p in value):
        raise ValueError('drainBlocked annotation is not a list of blocked pods')
    return [blocked_pod(p.get('namespace'), p.get('name'), p.get('reason') or '', p.get('detail') or '') for p in value]


def annotation_changes(annotations, gen, cr_name, start=None, blocked=None, drained=False):
    """The node annotation changes (key -> value, None removes) for the drain of ``cr_name`` under ``gen``; {} when
    the generation has no such keys (SKYHOOK) or nothing changes.

    ``start``: the drain start (epoch seconds), written only when the node has none (StartDrain); ``blocked``: the
    BlockedPods to record (an empty list removes the record; None leaves it); ``drained``: the node drained, both go
    (ClearDrainStart, SetDrainBlocked(nil)).
    """
    start_key, blocked_key = gen.drain_start_key(cr_name), gen.drain_blocked_key(cr_name)
    if start_key is None or blocked_key is None:
        return {}
    annotations = annotations or {}
    wanted = {}
    if drained:
        wanted = {start_key: None, blocked_key: None}
    else:
        if start is not None and start_key not in annotations:
            wanted[start_key] = format_start(start)
        if blocked is not None:
            wanted[blocked_key] = encode_blocked(blocked) if blocked else None
    return dict((k, v) for k, v in wanted.items() if annotations.get(k) != v)


# --------------------------------------------------------------------------- the CR's DrainBlocked condition


def _node_list(names):
    """wrapper.FormatNodeList."""
    if not names:
        return ''
    if len(names) > LIST_LIMIT:
        return ' (list truncated; see controller logs)'
    return ' (%s)' % ', '.join(names)


def condition_reason(blocks):
    """DrainBlockedConditionReason over ``blocks`` (node name -> BlockedPods): the one kind seen, else MULTIPLE."""
    seen = set(pod.get('reason') for pods in blocks.values() for pod in pods)
    if len(seen) == 1 and list(seen)[0] in REASONS:
        return list(seen)[0]
    return MULTIPLE


def condition_message(blocks, total):
    """DrainBlockedConditionMessage over ``blocks`` (node name -> BlockedPods) of ``total`` selected nodes."""
    names = sorted(blocks)
    lines = ['%d/%d nodes blocked draining%s' % (len(names), total, _node_list(names))]
    shown, truncated = 0, False
    for name in names:
        for pod in sorted(blocks[name], key=lambda p: (p.get('namespace') or '', p.get('name') or '')):
            if shown >= LIST_LIMIT:
                truncated = True
                continue
            lines.append('%s/%s on %s: %s' % (pod.get('namespace'), pod.get('name'), name,
                                              pod.get('detail') or pod.get('reason')))
            shown += 1
    if truncated:
        lines.append('(additional detail truncated; see controller logs)')
    return '; '.join(lines)


def condition(blocks, total, generation, ctype='DrainBlocked'):
    """The DrainBlocked condition (without lastTransitionTime) for ``blocks`` (node name -> BlockedPods; nodes
    without any are left out), or None when no node is blocked: the condition is removed."""
    blocks = dict((name, pods) for name, pods in (blocks or {}).items() if pods)
    if not blocks:
        return None
    return {'type': ctype, 'status': 'True', 'reason': condition_reason(blocks),
            'message': condition_message(blocks, total), 'observedGeneration': generation}
