# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""node_health's run against a scripted API server (fake_api): the waits (node Ready, a new boot ID, the pods
Ready), their timeouts and messages, the Warning Event of a failed check, and that a check changes nothing.

The timeouts go to kube.watch_until as they are given; a fraction of a second keeps the tests short (the pods'
wait gets at least 1 s, as the module gives it).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import node_health
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules._runner import ModuleFailed
from ansible_collections.nodewright.bridge.tests.unit.plugins.module_utils.cluster_support import (
    NODE_PATH, NODES, PODS, FakeModule, api_server, calls, events_of, execute, pod, pod_list)
from ansible_collections.nodewright.bridge.tests.unit.plugins.module_utils.fake_api import (
    Pause, event, node, node_list, status_body)

CORDON = 'skyhook.nvidia.com/cordon_demo'


@pytest.fixture
def server():
    return api_server()


def booted(resource_version, boot_id, ready=True):
    doc = node('n1', resource_version, annotations={CORDON: 'true'}, ready=ready, unschedulable=True)
    doc['status']['nodeInfo'] = {'bootID': boot_id}
    return doc


def check(server, **params):
    result = node_health.run(FakeModule(node_health, **params), server.kube())
    assert server.pending() == []
    return result


def test_a_ready_node_passes_at_once_and_nothing_changes(server):
    server.reply('GET', NODE_PATH, body=booted(5, 'boot-1'))
    server.reply('GET', NODES, body=node_list(6, booted(5, 'boot-1')))

    result = check(server)

    assert dict(result, waited=None) == {'changed': False, 'node': 'n1', 'ready': True, 'boot_id': 'boot-1',
                                         'waited': None}
    assert calls(server) == ['GET ' + NODE_PATH, 'GET ' + NODES]
    assert server.of('GET', NODES)[0].query['fieldSelector'] == 'metadata.name=n1'
    assert events_of(server) == []          # a check that passes leaves no Event


def test_the_check_waits_for_a_not_ready_node_to_become_ready(server):
    server.reply('GET', NODE_PATH, body=booted(5, 'boot-1', ready=False))
    server.reply('GET', NODES, body=node_list(6, booted(5, 'boot-1', ready=False)))
    server.stream('GET', NODES, [event('MODIFIED', booted(7, 'boot-1', ready=False)), event('MODIFIED', booted(8, 'boot-1'))])

    result = check(server)

    assert result['ready'] is True and result['boot_id'] == 'boot-1'
    assert calls(server) == ['GET ' + NODE_PATH, 'GET ' + NODES, 'GET %s watch' % NODES]
    assert server.of('GET', NODES, watch=True)[0].query['resourceVersion'] == '6'


def test_after_a_reboot_the_check_waits_for_another_boot_id_not_just_ready(server):
    server.reply('GET', NODE_PATH, body=booted(5, 'boot-1'))
    server.reply('GET', NODES, body=node_list(6, booted(5, 'boot-1')))     # Ready, but not rebooted yet
    server.stream('GET', NODES, [event('MODIFIED', booted(7, 'boot-2', ready=False)), event('MODIFIED', booted(8, 'boot-2'))])

    result = check(server, boot_id_not='boot-1')

    assert result['boot_id'] == 'boot-2'
    assert len(server.of('GET', NODES, watch=True)) == 1


def test_a_node_still_on_its_old_boot_id_at_the_timeout_fails_saying_so(server, monkeypatch):
    server.reply('GET', NODE_PATH, body=booted(5, 'boot-1'))
    server.reply('GET', NODES, body=node_list(6, booted(5, 'boot-1')), repeat=True)
    server.stream('GET', NODES, [Pause(0.2)], repeat=True)

    module = execute(monkeypatch, node_health, FakeModule(node_health, boot_id_not='boot-1', timeout=0.3), server.kube())

    assert module.failed == {'msg': 'node n1 is not healthy after 0.3s: Ready=True, boot ID boot-1 (still the one from '
                                    'before the reboot)', 'node': 'n1'}
    assert events_of(server) == [('Health', 'Warning', 'Node [n1] for [skyhook:demo] is not healthy: ' + module.failed['msg'])]


def test_a_node_not_ready_at_the_timeout_fails_naming_its_state(server):
    server.reply('GET', NODE_PATH, body=booted(5, 'boot-1', ready=False))
    server.reply('GET', NODES, body=node_list(6, booted(5, 'boot-1', ready=False)), repeat=True)
    server.stream('GET', NODES, [Pause(0.2)], repeat=True)

    with pytest.raises(ModuleFailed) as exc:
        check(server, timeout=0.3)

    assert exc.value.msg == 'node n1 is not healthy after 0.3s: Ready=False, boot ID boot-1'


def test_the_pods_matching_the_selector_are_waited_for_until_enough_are_ready(server):
    server.reply('GET', NODE_PATH, body=booted(5, 'boot-1'))
    server.reply('GET', NODES, body=node_list(6, booted(5, 'boot-1')))
    first = pod('gpu-a', labels={'app': 'gpu'}, ready=True)
    other = pod('web-a', labels={'app': 'web'}, ready=False)            # not matching: not waited for
    server.reply('GET', PODS, body=pod_list(20, first, other))
    server.stream('GET', PODS, [event('ADDED', pod('gpu-b', labels={'app': 'gpu'}, phase='Pending', ready=False)),
                                event('MODIFIED', pod('gpu-b', labels={'app': 'gpu'}, ready=True))])

    result = check(server, pod_selector='app=gpu', min_pods=2)

    assert result['pods'] == {'ns/gpu-a': True, 'ns/gpu-b': True}
    assert [r.query['fieldSelector'] for r in server.of('GET', PODS)] == ['spec.nodeName=n1'] * 2
    assert result['changed'] is False


def test_pods_not_ready_at_the_timeout_fail_the_check_naming_them(server, monkeypatch):
    server.reply('GET', NODE_PATH, body=booted(5, 'boot-1'))
    server.reply('GET', NODES, body=node_list(6, booted(5, 'boot-1')))
    server.reply('GET', PODS, body=pod_list(20, pod('gpu-a', labels={'app': 'gpu'}, ready=True),
                                            pod('gpu-b', labels={'app': 'gpu'}, ready=False)), repeat=True)
    server.stream('GET', PODS, [Pause(0.4)], repeat=True)

    module = execute(monkeypatch, node_health, FakeModule(node_health, pod_selector='app=gpu', min_pods=3, timeout=0.3),
                     server.kube())

    assert module.failed == {'msg': 'node n1: pods matching pod_selector not Ready after 0.3s (2 found, 3 needed): '
                                    'ns/gpu-a (Ready), ns/gpu-b (not Ready)', 'node': 'n1'}
    assert [e[:2] for e in events_of(server)] == [('Health', 'Warning')]


def test_an_invalid_pod_selector_fails_before_any_request(server, monkeypatch):
    module = execute(monkeypatch, node_health, FakeModule(node_health, pod_selector={'matchLabels': 'x'}), server.kube())
    assert module.failed['node'] == 'n1' and 'pod_selector' in module.failed['msg']
    assert server.requests == []


def test_a_node_that_does_not_exist_fails_as_deleted(server, monkeypatch):
    server.reply('GET', NODE_PATH, status=404, body=status_body(404, 'NotFound', 'nodes "n1" not found'))

    module = execute(monkeypatch, node_health, FakeModule(node_health), server.kube())

    assert module.failed['node_deleted'] is True and module.failed['status'] == 404
    assert module.failed['msg'].startswith('node n1 does not exist in the cluster')
    assert events_of(server) == []
