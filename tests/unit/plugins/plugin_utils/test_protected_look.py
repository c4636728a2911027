# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""plugin_utils.rollout.protected_look: the waiting nodes a protected pod holds now, with one filtered pod list."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.nodewright.bridge.plugins.module_utils.api.kube import KubeError
from ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout.protected_look import ProtectedLook, look_for

SELECTOR = {'matchLabels': {'workload': 'training'}, 'matchExpressions': [{'key': 'tier', 'operator': 'Exists'}]}


def _pod(name, node, phase='Running', labels=None):
    return {'metadata': {'namespace': 'ml', 'name': name, 'labels': labels or {'workload': 'training', 'tier': 'a'}},
            'spec': {'nodeName': node}, 'status': {'phase': phase}}


class Pods(object):
    def __init__(self, pods=(), error=None):
        self.pods, self.error, self.asked = list(pods), error, []

    def list_pods(self, namespace=None, field_selector=None, label_selector=None):
        self.asked.append((namespace, field_selector, label_selector))
        if self.error:
            raise self.error
        return {'items': self.pods}


def test_the_look_lists_once_on_the_server_side_selector_and_keeps_the_nodes_whose_drain_would_wait():
    kube = Pods([_pod('a', 'n1'), _pod('b', 'n2', phase='Pending'), _pod('c', 'n3'), _pod('d', 'n1', phase='Succeeded'),
                 _pod('e', 'n4', labels={'workload': 'inference'})])
    made = []
    look = ProtectedLook({'selector': SELECTOR, 'nodes': ['n1', 'n2', 'n4']}, lambda: made.append(1) or kube)
    # n3 runs one but needs no drain; n4's pod is not selected (the server would not return it: checked again here)
    assert look() == {'n1', 'n2'}
    assert kube.asked == [(None, 'status.phase!=Succeeded,status.phase!=Failed', 'workload=training,tier')]
    assert look() == {'n1', 'n2'} and made == [1]  # one client for every look


def test_without_a_selector_or_nodes_nothing_is_asked_and_a_failed_list_keeps_the_order():
    assert look_for(None, {}) is None and look_for({'selector': SELECTOR, 'nodes': []}, {}) is None
    kube = Pods()
    assert ProtectedLook({'selector': {}, 'nodes': ['n1']}, lambda: kube)() is None and kube.asked == []
    failing = ProtectedLook({'selector': SELECTOR, 'nodes': ['n1']}, lambda: Pods(error=KubeError('list pods: forbidden')))
    assert failing() is None and 'forbidden' in failing.error
