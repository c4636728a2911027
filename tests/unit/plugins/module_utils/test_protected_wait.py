# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""protected_wait (the node's wait record, the workload's opt-in) and slot_mailbox (the strategy's mailbox)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import threading

import pytest

from ansible_collections.nodewright.bridge.plugins.module_utils.contract import drain_rules
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import protected_wait as pw
from ansible_collections.nodewright.bridge.plugins.module_utils.api import slot_mailbox


def _pod(name, labels=None, annotations=None, phase='Running'):
    return {'metadata': {'name': name, 'namespace': 'ml', 'labels': labels or {}, 'annotations': annotations or {}},
            'status': {'phase': phase}, 'spec': {}}


def test_the_record_keeps_its_start_across_runs_and_goes_when_the_wait_ends():
    first = pw.changes({}, 'gpu', ['ml/b', 'ml/a'], True, now=0)
    assert first == {pw.key('gpu'): '{"parked":true,"pods":["ml/a","ml/b"],"since":"1970-01-01T00:00:00Z"}'}
    later = pw.changes(first, 'gpu', ['ml/a'], True, now=3600)
    assert pw.read(dict(first, **later), 'gpu')['since'] == '1970-01-01T00:00:00Z'
    assert pw.changes(first, 'gpu', ['ml/a', 'ml/b'], True, now=99) is None  # nothing new: no write
    assert pw.cleared(first, 'gpu') == {pw.key('gpu'): None} and pw.cleared({}, 'gpu') is None
    assert pw.waited_seconds(pw.read(first, 'gpu'), 90) == 90.0
    assert pw.read({pw.key('gpu'): '{"since": "yesterday"}'}, 'gpu') is None


def test_a_workload_opts_in_with_its_annotation_and_an_unknown_value_protects_it_with_a_warning():
    pods = [_pod('a', annotations={pw.OPT_IN: 'true'}), _pod('b', annotations={pw.OPT_IN: 'False'}),
            _pod('c', annotations={pw.OPT_IN: 'yes please'}), _pod('d', labels={'workload': 'training'}),
            _pod('e', annotations={pw.OPT_IN: 'true'}, phase='Succeeded'), _pod('f')]
    running = drain_rules.protected_pods_running(pods, None)
    assert [p['metadata']['name'] for p in running] == ['a', 'c']
    running = drain_rules.protected_pods_running(pods, {'matchLabels': {'workload': 'training'}})
    assert [p['metadata']['name'] for p in running] == ['a', 'c', 'd']
    assert pw.opt_in_problem(pods[2]) == (
        'pod ml/c: annotation bridge.nodewright.io/non-interruptible=\'yes please\' is neither "true" nor "false"; the '
        'pod is treated as non-interruptible (never evicted, the drain waits for it)')
    assert pw.opt_in_problem(pods[0]) is None and pw.opt_in_problem(pods[5]) is None
    plan = dict((e['name'], (e['action'], e['reason'])) for e in drain_rules.plan_drain(pods))
    assert plan['a'] == ('skip', 'protected') and plan['c'] == ('skip', 'protected')
    assert plan['b'] == ('evict', 'evictable') and plan['f'] == ('evict', 'evictable')


def test_the_mailbox_carries_a_park_then_a_rejoin_and_the_answer(tmp_path):
    box = slot_mailbox.Mailbox.create()
    try:
        assert oct(os.stat(box.directory).st_mode & 0o777) == '0o700'
        slot = slot_mailbox.NodeSlot.of({'dir': box.directory, 'host': 'gpu-01', 'pid': os.getpid()})
        assert slot.usable()
        slot.park(['ml/train-0'], '2026-12-06T23:00:00Z')
        slot.rejoin()
        assert box.read() == [('gpu-01', 'park', {'pods': ['ml/train-0'], 'since': '2026-12-06T23:00:00Z'}),
                              ('gpu-01', 'rejoin', {})]
        assert box.read() == []  # each message once
        answered = []
        waiter = threading.Thread(target=lambda: answered.append(slot.wait_answer()))
        waiter.start()
        box.answer('gpu-01', True)
        waiter.join(5)
        assert answered == [None]
        box.answer('gpu-01', False, 'the rollout of compartment gpu stopped')
        with pytest.raises(slot_mailbox.Stopped, match='compartment gpu stopped'):
            slot.wait_answer()
        with pytest.raises(slot_mailbox.Stopped, match='paused'):
            slot.wait_answer(stop=lambda: 'paused')
    finally:
        box.close()
    with pytest.raises(slot_mailbox.Stopped, match='the play ended'):
        slot.wait_answer()
    assert slot_mailbox.NodeSlot.of(None) is None and slot_mailbox.NodeSlot.of({'dir': '/x'}) is None


def test_a_waiting_task_gives_up_when_ansible_playbook_is_gone(tmp_path):
    slot = slot_mailbox.NodeSlot(str(tmp_path), 'gpu-01', pid=2 ** 22 + 12345)
    with pytest.raises(slot_mailbox.Stopped, match='is gone'):
        slot.wait_answer()


def test_the_nodes_notready_condition_says_it_waits_on_purpose_while_the_record_is_there():
    from ansible_collections.nodewright.bridge.plugins.module_utils.contract import node_conditions, node_annotations
    annotations = {node_annotations.status_key('gpu'): 'in_progress', pw.key('gpu'): pw.encode('2026-12-06T23:00:00Z', [], True)}
    node = {'metadata': {'name': 'n1', 'annotations': annotations}, 'status': {'conditions': []}}
    patch = node_conditions.conditions_patch(node, 'gpu', 'now')
    not_ready = patch['status']['conditions'][0]
    assert (not_ready['type'], not_ready['status'], not_ready['reason']) == (
        'skyhook.nvidia.com/gpu/NotReady', 'True', 'NonInterruptPodsRunning')
    # the wait over: back to the operator's Incomplete, replaced because the reason changed
    node['status']['conditions'] = patch['status']['conditions']
    del annotations[pw.key('gpu')]
    [again] = [c for c in node_conditions.conditions_patch(node, 'gpu', 'later')['status']['conditions']
               if c['type'].endswith('/NotReady')]
    assert again['reason'] == 'Incomplete'
