# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""node_conditions: boot IDs and Ready, as node_interrupt's reboot wait and node_health read them."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.nodewright.bridge.plugins.module_utils import node_conditions as nc


def _node(boot='b1', ready='True'):
    status = {'nodeInfo': {'bootID': boot}} if boot is not None else {}
    if ready is not None:
        status['conditions'] = [{'type': 'MemoryPressure', 'status': 'False'}, {'type': 'Ready', 'status': ready}]
    return {'metadata': {'name': 'n1'}, 'status': status}


def test_boot_id_is_empty_until_reported():
    assert nc.boot_id(_node('abc')) == 'abc'
    assert nc.boot_id(_node(None)) == ''
    assert nc.boot_id({}) == ''


def test_ready_needs_the_condition_true():
    assert nc.is_ready(_node(ready='True')) is True
    assert nc.is_ready(_node(ready='False')) is False
    assert nc.is_ready(_node(ready='Unknown')) is False
    assert nc.is_ready(_node(ready=None)) is False
    assert nc.condition(_node(), 'MemoryPressure') is False


def test_rebooted_needs_a_new_boot_id_and_ready():
    assert nc.rebooted(_node('b2'), 'b1') is True
    assert nc.rebooted(_node('b1'), 'b1') is False           # still the old boot
    assert nc.rebooted(_node('b2', ready='False'), 'b1') is False
    assert nc.rebooted(_node(''), 'b1') is False             # no boot ID reported yet
    assert nc.rebooted(_node(None), '') is False


def test_pod_ready_runs_is_ready_and_is_not_deleting():
    pod = {'metadata': {}, 'status': {'phase': 'Running', 'conditions': [{'type': 'Ready', 'status': 'True'}]}}
    assert nc.pod_ready(pod) is True
    assert nc.pod_ready(dict(pod, metadata={'deletionTimestamp': '2026-01-01T00:00:00Z'})) is False
    assert nc.pod_ready(dict(pod, status={'phase': 'Pending', 'conditions': pod['status']['conditions']})) is False
    assert nc.pod_ready(dict(pod, status={'phase': 'Running', 'conditions': []})) is False
