# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""drain_config: spec.drainConfig as the v0.19/v0.20 operator's drain applies it, and the drain-blocked contract.

Upstream (NVIDIA/nodewright): operator/internal/drain/drain.go @1211486a (DefaultOptions, OptionsFromConfig, TimedOut,
DecidePod, BlockedPod); operator/internal/controller/skyhook_controller.go @01cc2f2d (DrainNode,
EnsureNodeIsReadyForInterrupt, classifyEvictionRejection); skyhook_controller_test.go @01cc2f2d (the annotations'
values); cluster_state_v2.go @01cc2f2d (UpdateDrainBlockedCondition); operator/internal/wrapper/skyhook_conditions.go
(DrainBlockedConditionReason, DrainBlockedConditionMessage, FormatNodeList).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest

from ansible_collections.nodewright.bridge.plugins.module_utils.contract import drain_config as dc
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import drain_rules
from ansible_collections.nodewright.bridge.plugins.module_utils.model.api_generation import NODEWRIGHT, SKYHOOK

DEFAULTS = dc.normalize({})


def pod(name='web-0', namespace='apps', owners=None, volumes=None, deleting=False, tolerations=None):
    metadata = {'name': name, 'namespace': namespace, 'uid': 'uid-' + name}
    if owners is not None:
        metadata['ownerReferences'] = owners
    if deleting:
        metadata['deletionTimestamp'] = '2026-10-07T10:00:00Z'
    spec = {'containers': [{'name': 'c', 'image': 'busybox'}]}
    if volumes is not None:
        spec['volumes'] = volumes
    if tolerations is not None:
        spec['tolerations'] = tolerations
    return {'metadata': metadata, 'spec': spec, 'status': {'phase': 'Running'}}


RS = [{'kind': 'ReplicaSet', 'name': 'web', 'controller': True}]


def config(**fields):
    return dc.normalize(fields)


# ---------------------------------------------------------------- OptionsFromConfig


def test_defaults_are_drain_default_options():
    # drain.go @1211486a DefaultOptions: deleteEmptyDirData, force, ignoreDaemonSets true; disableEviction false
    assert DEFAULTS == {'deleteEmptyDirData': True, 'disableEviction': False, 'force': True, 'ignoreDaemonSets': True,
                        'timeout': None, 'gracePeriod': None, 'timeoutSeconds': None, 'gracePeriodSeconds': None}
    assert dc.normalize(None) is None
    # a nil field keeps its default (OptionsFromConfig); a plan's parsed dict normalizes to itself
    assert config(force=None, timeout=None) == DEFAULTS
    parsed = config(timeout='1m30s', gracePeriod='1500ms', force=False)
    assert dc.normalize(parsed) == parsed
    # gracePeriod rounded up to whole seconds; "0" timeout: no bound (TimedOut)
    assert (parsed['timeoutSeconds'], parsed['gracePeriodSeconds']) == (90, 2)
    assert config(timeout='0s')['timeoutSeconds'] is None


@pytest.mark.parametrize('value,problem', [
    ('10m', 'must be a dict'),
    ({'podSelector': {}}, 'unknown field podSelector'),
    ({'force': 'yes'}, "force must be a boolean, got 'yes'"),
    ({'timeout': 600}, 'timeout must be a duration string'),
    ({'timeout': '10'}, 'missing unit in duration'),
    ({'gracePeriod': '-1s'}, 'must be greater than or equal to 0'),
])
def test_invalid_drain_config_is_refused(value, problem):
    with pytest.raises(ValueError, match=problem):
        dc.normalize(value)


def test_rules_follow_decide_pod_and_explicit_fields_win():
    # DecidePod: the DaemonSet rule is ignoreDaemonSets; toleration.ToleratesTaint against the cordon taint
    assert dc.rules(DEFAULTS) == {'skip_daemonsets': True, 'unschedulable_toleration': 'taint'}
    assert dc.rules(config(ignoreDaemonSets=False))['skip_daemonsets'] is False
    assert dc.rules(config(ignoreDaemonSets=False), {'skip_daemonsets': True, 'skip_kube_system': False}) == {
        'skip_daemonsets': True, 'skip_kube_system': False, 'unschedulable_toleration': 'taint'}
    rules = drain_rules.DrainRules.from_dict(dc.rules(DEFAULTS))
    # a key-less Exists toleration tolerates the cordon (ToleratesTaint), an Equal one with a value does not
    assert drain_rules.classify_pod(pod(owners=RS, tolerations=[{'operator': 'Exists'}]), rules) == (
        'skip', 'tolerates-unschedulable')
    equal = [{'key': 'node.kubernetes.io/unschedulable', 'operator': 'Equal', 'value': 'x'}]
    assert drain_rules.classify_pod(pod(owners=RS, tolerations=equal), rules) == ('evict', 'evictable')


# ---------------------------------------------------------------- DecidePod's blockers


@pytest.mark.parametrize('the_pod,settings,expected', [
    (pod(), {}, None),                                                     # force defaults true: evicted
    (pod(), {'force': False}, dc.UNMANAGED),                               # no controller
    (pod(owners=[{'kind': 'ReplicaSet', 'name': 'x'}]), {'force': False}, dc.UNMANAGED),   # an owner, not a controller
    (pod(owners=RS), {'force': False}, None),
    (pod(owners=RS, volumes=[{'name': 'v', 'emptyDir': {}}]), {}, None),
    (pod(owners=RS, volumes=[{'name': 'v', 'emptyDir': {}}]), {'deleteEmptyDirData': False}, dc.EMPTY_DIR),
    (pod(volumes=[{'name': 'v', 'emptyDir': {}}]), {'force': False, 'deleteEmptyDirData': False}, dc.UNMANAGED),
    (pod(owners=RS, volumes=[{'name': 'v', 'configMap': {'name': 'c'}}]), {'deleteEmptyDirData': False}, None),
    (pod(deleting=True), {'force': False}, None),                          # terminating: waited for, never blocks
])
def test_blocker(the_pod, settings, expected):
    assert dc.blocker(the_pod, config(**settings)) == expected


def test_timed_out_is_drain_timed_out():
    assert not dc.timed_out(None, 60, 1000)
    assert not dc.timed_out(100, None, 1000)
    assert not dc.timed_out(100, 0, 1000)
    assert not dc.timed_out(100, 60, 159.9)
    assert dc.timed_out(100, 60, 160)          # !now.Before(start + timeout)


# ---------------------------------------------------------------- the node annotations


def test_drain_start_is_rfc3339_nano_utc():
    # skyhook_controller_test.go @01cc2f2d: time.Now().Format(time.RFC3339Nano)
    assert dc.format_start(1791367200.0) == '2026-10-07T10:00:00Z'
    assert dc.format_start(1791367200.25) == '2026-10-07T10:00:00.25Z'
    assert dc.parse_start('2026-10-07T10:00:00.123456789Z') == pytest.approx(1791367200.123456789)
    assert dc.parse_start('2026-10-07T12:00:00+02:00') == 1791367200.0
    with pytest.raises(ValueError, match='error parsing drain start annotation'):
        dc.parse_start('not-a-time')


def test_drain_blocked_is_json_marshal_of_blocked_pods():
    pods = [dc.blocked_pod('default', 'web-0', dc.PDB, 'The disruption budget web needs 2 healthy pods & has 2 <now>'),
            dc.blocked_pod('default', 'solo', dc.UNMANAGED)]
    text = dc.encode_blocked(pods)
    assert text == ('[{"namespace":"default","name":"web-0","reason":"PodDisruptionBudget","detail":"The disruption '
                    'budget web needs 2 healthy pods \\u0026 has 2 \\u003cnow\\u003e"},'
                    '{"namespace":"default","name":"solo","reason":"UnmanagedPod"}]')
    assert json.loads(text) == pods
    assert dc.decode_blocked(text) == pods
    assert dc.decode_blocked('null') == []
    for bad in ('{', '{"a": 1}', '[1]'):
        with pytest.raises(ValueError):
            dc.decode_blocked(bad)


def test_annotation_changes():
    start, blocked = NODEWRIGHT.drain_start_key('gpu'), NODEWRIGHT.drain_blocked_key('gpu')
    assert (start, blocked) == ('nodewright.nvidia.com/drainStart_gpu', 'nodewright.nvidia.com/drainBlocked_gpu')
    solo = [dc.blocked_pod('default', 'solo', dc.UNMANAGED)]
    # StartDrain writes the start once; SetDrainBlocked writes the list, or removes it when empty
    assert dc.annotation_changes({}, NODEWRIGHT, 'gpu', start=1791367200.0, blocked=solo) == {
        start: '2026-10-07T10:00:00Z', blocked: dc.encode_blocked(solo)}
    annotations = {start: '2026-10-07T09:00:00Z', blocked: dc.encode_blocked(solo)}
    assert dc.annotation_changes(annotations, NODEWRIGHT, 'gpu', start=1791367200.0, blocked=solo) == {}
    assert dc.annotation_changes(annotations, NODEWRIGHT, 'gpu', blocked=[]) == {blocked: None}
    # drained: ClearDrainStart and SetDrainBlocked(nil); nothing to remove, nothing to write
    assert dc.annotation_changes(annotations, NODEWRIGHT, 'gpu', drained=True) == {start: None, blocked: None}
    assert dc.annotation_changes({}, NODEWRIGHT, 'gpu', drained=True) == {}
    # the v0.15 operator has no such keys
    assert dc.annotation_changes({}, SKYHOOK, 'gpu', start=1.0, blocked=solo) == {}


# ---------------------------------------------------------------- DrainBlocked


def test_condition_reason_is_the_one_kind_or_multiple_causes():
    unmanaged = dc.blocked_pod('a', 'p', dc.UNMANAGED)
    pdb = dc.blocked_pod('a', 'q', dc.PDB, 'budget')
    assert dc.condition_reason({'n1': [unmanaged], 'n2': [dict(unmanaged, name='r')]}) == dc.UNMANAGED
    assert dc.condition_reason({'n1': [pdb]}) == dc.PDB
    # two kinds on one node, or on different nodes
    assert dc.condition_reason({'n1': [unmanaged, pdb]}) == dc.MULTIPLE
    assert dc.condition_reason({'n1': [unmanaged], 'n2': [pdb]}) == dc.MULTIPLE


def test_condition_message_as_the_docs_example():
    # docs/architecture/interrupt-flow.md @1b950d89
    blocks = {'node-c': [dc.blocked_pod('default', 'db-0', dc.UNMANAGED)],
              'node-a': [dc.blocked_pod('default', 'web-0', dc.PDB,
                                        'The disruption budget web-pdb needs 3 healthy pods and has 3 currently')]}
    assert dc.condition_message(blocks, 5) == (
        '2/5 nodes blocked draining (node-a, node-c); '
        'default/web-0 on node-a: The disruption budget web-pdb needs 3 healthy pods and has 3 currently; '
        'default/db-0 on node-c: UnmanagedPod')


def test_condition_message_truncates_names_and_detail_lines():
    blocks = dict(('n%02d' % i, [dc.blocked_pod('ns', 'p%02d' % i, dc.EMPTY_DIR)]) for i in range(11))
    message = dc.condition_message(blocks, 20)
    head = '11/20 nodes blocked draining (list truncated; see controller logs); '
    tail = '; (additional detail truncated; see controller logs)'
    assert message.startswith(head) and message.endswith(tail)
    lines = message[len(head):-len(tail)].split('; ')
    assert lines == ['ns/p%02d on n%02d: EmptyDirData' % (i, i) for i in range(10)]
    # pods sorted by namespace, then name, within a node
    two = {'n': [dc.blocked_pod('b', 'a', dc.UNMANAGED), dc.blocked_pod('a', 'z', dc.UNMANAGED)]}
    assert dc.condition_message(two, 1) == '1/1 nodes blocked draining (n); a/z on n: UnmanagedPod; b/a on n: UnmanagedPod'


def test_condition_is_removed_without_blockers():
    assert dc.condition({}, 3, 7) is None
    assert dc.condition({'n1': []}, 3, 7) is None
    assert dc.condition({'n1': [dc.blocked_pod('a', 'p', dc.UNMANAGED)], 'n2': []}, 3, 7) == {
        'type': 'DrainBlocked', 'status': 'True', 'reason': 'UnmanagedPod', 'observedGeneration': 7,
        'message': '1/3 nodes blocked draining (n1); a/p on n1: UnmanagedPod'}
