# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The Events on a node: their wording (module_utils/contract/node_events.py) and how kube.Kube.node_event writes them.

The writes run against the scripted API server (fake_api): the body the API server receives, no
retry, one warning for the first failure, no more tries after a refusal.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube as kube_api
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import node_events as ev
from ansible_collections.nodewright.bridge.tests.unit.plugins.module_utils.fake_api import (
    FakeApiServer, node, status_body)

EVENTS = '/api/v1/namespaces/default/events'


# --------------------------------------------------------------------------- wording


def test_cordon_and_uncordon_name_the_node_and_the_cr():
    assert ev.cordoned('gpu-1', 'tuning') == ('Cordon', 'Normal', 'Cordoned node [gpu-1] for [skyhook:tuning]')
    assert ev.cordoned('gpu-1', 'tuning', inherited=True).message.endswith('(it was already cordoned by someone else)')
    assert ev.uncordoned('gpu-1', 'tuning') == ('Uncordon', 'Normal', 'Uncordoned node [gpu-1] for [skyhook:tuning]')
    still = ev.uncordoned('gpu-1', 'tuning', still_by=['other'], unschedulable=True)
    assert still.message == 'Released the cordon of [skyhook:tuning] on node [gpu-1]; it stays cordoned by [skyhook:other]'
    assert 'cordoned by someone else' in ev.uncordoned('gpu-1', 'tuning', still_by=[], unschedulable=True).message


def test_a_drain_counts_evictions_and_pdb_waits_and_names_the_cordoning_crs():
    plain = ev.drained('gpu-1', ['tuning'], evicted=3, skipped=2)
    assert plain == ('Drain', 'Normal', 'Drained node [gpu-1] for [skyhook:tuning]: 3 pod(s) evicted, 2 skipped')
    waited = ev.drained('gpu-1', [], evicted=1, skipped=0, pdb_waits=1, protected_wait=12.4)
    assert waited.message == ('Drained node [gpu-1]: 1 pod(s) evicted, 0 skipped, 1 waited for a PodDisruptionBudget, '
                              '12s waiting for protected pods')
    # under half a second rounds to nothing: no words about protected pods
    assert ev.drained('gpu-1', [], evicted=1, skipped=0, protected_wait=0.4).message == (
        'Drained node [gpu-1]: 1 pod(s) evicted, 0 skipped')
    failed = ev.drain_failed('gpu-1', ['a', 'b'], 'node gpu-1: 1 pod(s) could not be evicted\nmore')
    assert failed == ('Drain', 'Warning', 'Drain of node [gpu-1] for [skyhook:a], [skyhook:b] failed: '
                                          'node gpu-1: 1 pod(s) could not be evicted')


def test_package_stages_in_the_operators_words():
    assert ev.stage_applied('tuning', '1.2.0', 'apply', 'cr1') == (
        'Apply', 'Normal', 'Package [tuning:1.2.0] stage [apply] complete on [skyhook:cr1]')
    assert ev.stage_applied('tuning', '1.2.0', 'config', 'cr1', restarts=2).message.endswith('after 2 restart(s)')
    failed = ev.stage_failed('tuning', '1.2.0', 'apply', 'cr1', 'init container x failed (exit code 1)')
    assert failed == ('Apply', 'Warning',
                      'Package [tuning:1.2.0] stage [apply] erroring on [skyhook:cr1]: init container x failed (exit code 1)')


def test_interrupts_and_reboots():
    service = ev.interrupted('gpu-1', 'svc', '1.0', 'cr1', {'type': 'service', 'services': ['containerd', 'kubelet']},
                             covered=['other:2.0'])
    assert service == ('Interrupt', 'Normal', 'Interrupted node [gpu-1] package [svc:1.0] from [skyhook:cr1]: '
                                              'service restart (containerd, kubelet) (also for [other:2.0])')
    assert ev.interrupted('n', 'p', '1', 'c', {'type': 'restartAllServices'}).message.endswith('restart of all services')
    reboot = ev.rebooted('gpu-1', 'drv', '2.0', 'cr1', 'boot-a', 'boot-b')
    assert reboot == ('Reboot', 'Normal', 'Rebooted node [gpu-1] for package [drv:2.0] from [skyhook:cr1]: '
                                          'back Ready with a new boot ID (boot-a -> boot-b)')
    not_back = ev.interrupt_failed('gpu-1', 'drv', '2.0', 'cr1', {'type': 'reboot'}, 'the node did not come back')
    assert not_back.reason == 'Reboot' and not_back.type == 'Warning'
    assert not_back.message == 'Reboot of node [gpu-1] for package [drv:2.0] from [skyhook:cr1] failed: the node did not come back'
    failed = ev.interrupt_failed('gpu-1', 'svc', '1.0', 'cr1', {'type': 'service', 'services': ['x']}, 'exit code 1')
    assert failed.reason == 'Interrupt' and failed.message.startswith('Interrupt (service restart (x)) of node [gpu-1]')


def test_health_state_and_long_failures():
    assert ev.health_failed('gpu-1', ['cr1'], 'not Ready') == (
        'Health', 'Warning', 'Node [gpu-1] for [skyhook:cr1] is not healthy: not Ready')
    assert ev.complete('cr1') == ('State', 'Normal', 'Skyhook [cr1] complete.')
    long_reason = ev.why('x' * 1000)
    assert len(long_reason) == ev.MAX_WHY and long_reason.endswith('...')
    assert ev.why('') == 'failed' and ev.why(None) == 'failed'


# --------------------------------------------------------------------------- writing


@pytest.fixture
def server():
    return FakeApiServer()


@pytest.fixture
def kube(server):
    made = server.kube()
    server.reply('GET', '/api/v1/nodes/gpu-1', body=node('gpu-1', 7, uid='uid-123'))
    made.get_node('gpu-1')  # the node as a step read it: the Event takes its uid from there
    return made


def test_an_event_is_a_core_v1_event_on_the_node_that_kubectl_describe_finds(server, kube):
    server.reply('POST', EVENTS, status=201, body=lambda request: request.body)
    assert kube.node_event('gpu-1', 'Cordon', 'Cordoned node [gpu-1] for [skyhook:c]') is None
    (sent,) = server.of('POST', EVENTS)
    body = sent.body
    # what `kubectl describe node` selects on: kind, name, namespace "" (none), uid
    assert body['involvedObject'] == {'apiVersion': 'v1', 'kind': 'Node', 'name': 'gpu-1', 'uid': 'uid-123'}
    assert body['metadata']['namespace'] == 'default' and body['metadata']['name'].startswith('gpu-1.')
    assert (body['reason'], body['type'], body['count']) == ('Cordon', 'Normal', 1)
    assert body['source'] == {'component': 'nodewright.bridge'} and body['reportingComponent'] == 'nodewright.bridge'
    assert body['reportingInstance'] and body['firstTimestamp'] == body['lastTimestamp']
    assert 'eventTime' not in body  # a legacy event: the namespace default is allowed for a cluster-scoped object


def test_a_failed_event_is_not_retried_and_warns_once(server, kube):
    unavailable = status_body(503, 'ServiceUnavailable', 'the server is currently unable to handle the request')
    server.reply('POST', EVENTS, status=503, body=unavailable)
    server.reply('POST', EVENTS, status=503, body=unavailable)
    server.reply('POST', EVENTS, status=201, body=lambda request: request.body)
    first = kube.node_event('gpu-1', 'Drain', 'm')
    assert 'the Drain Event on node gpu-1 was not written' in first and 'HTTP 503' in first, first
    assert 'further failures are not reported' in first
    assert kube.node_event('gpu-1', 'Apply', 'm') is None  # failed again: no second warning
    assert kube.node_event('gpu-1', 'Uncordon', 'm') is None  # a server that answers again gets the next ones
    assert len(server.of('POST', EVENTS)) == 3  # one request per Event: no retry


def test_a_refused_event_stops_the_events_of_the_process(server, kube):
    server.reply('POST', EVENTS, status=403,
                 body=status_body(403, 'Forbidden', 'events is forbidden: User "x" cannot create resource "events"'))
    warning = kube.node_event('gpu-1', 'Cordon', 'm')
    assert 'forbidden' in warning and 'grant create on events in namespace default' in warning, warning
    assert kube.node_event('gpu-1', 'Drain', 'm') is None
    assert len(server.of('POST', EVENTS)) == 1  # no more requests after the refusal


def test_an_unknown_node_is_read_once_and_a_missing_one_writes_nothing(server):
    kube = server.kube()
    server.reply('GET', '/api/v1/nodes/gone', status=404, body=status_body(404, 'NotFound', 'nodes "gone" not found'))
    assert kube.node_event('gone', 'Cordon', 'm') is None
    assert not server.of('POST', EVENTS)
    assert kube_api.EVENT_NAMESPACE == 'default'
