# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""plugin_utils.rollout.gate_checks: the waits for a window and for the gates, on a fake clock; the HTTP error mapping."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import io
import ssl
from urllib.error import HTTPError, URLError

import pytest

from ansible_collections.nodewright.bridge.plugins.module_utils.planning import rollout_gates
from ansible_collections.nodewright.bridge.plugins.module_utils.api.kube import KubeError
from ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout import gate_checks as gates
from ansible_collections.nodewright.bridge.tests.unit.plugins.plugin_utils.fake_clock import MONDAY_5PM, FakeClock


def _windows(action='wait', timeout=86400, **window):
    window = dict({'start': '18:00', 'end': '20:00'}, **window)
    return rollout_gates.parse_window_settings({rollout_gates.VAR_WINDOWS: [window], rollout_gates.VAR_WINDOW_ACTION: action,
                                                rollout_gates.VAR_WINDOW_TIMEOUT: timeout})


# ---------------------------------------------------------------------------- windows

def test_inside_a_window_nothing_waits():
    clock = FakeClock(MONDAY_5PM + 3600)
    assert gates.wait_for_window(_windows(), clock, clock.sleep) is None
    assert clock.sleeps == []


def test_wait_sleeps_until_the_window_opens_reporting_each_poll():
    clock, messages = FakeClock(), []
    assert gates.wait_for_window(_windows(), clock, clock.sleep, messages.append) is None
    assert clock.now == MONDAY_5PM + 3600 and sum(clock.sleeps) == 3600
    assert len(messages) == 60 and max(clock.sleeps) <= gates.WINDOW_POLL_INTERVAL
    assert messages[0] == ('before the next batch: outside the maintenance windows (every day 18:00-20:00 UTC); '
                           'the next opens in 1 h (every day 18:00-20:00 UTC, at 2026-06-01 18:00 UTC); '
                           'waiting (0 s of 86400 s, nodewright_maintenance_timeout)')


def test_stop_outside_a_window_stops_at_once():
    clock = FakeClock()
    reason = gates.wait_for_window(_windows(action='stop'), clock, clock.sleep)
    assert reason.startswith('outside the maintenance windows (every day 18:00-20:00 UTC); the next opens in 1 h')
    assert reason.endswith('(nodewright_maintenance_action: stop)')
    assert clock.sleeps == []


def test_a_window_beyond_the_timeout_stops_without_waiting():
    clock = FakeClock()
    reason = gates.wait_for_window(_windows(timeout=1800), clock, clock.sleep)
    assert reason.endswith('; the next opens in 1 h (every day 18:00-20:00 UTC, at 2026-06-01 18:00 UTC): '
                           'later than nodewright_maintenance_timeout (1800 s) allows')
    assert clock.sleeps == []


def test_no_windows_never_wait():
    clock = FakeClock()
    assert gates.wait_for_window(rollout_gates.WindowSettings(), clock, clock.sleep) is None


# ---------------------------------------------------------------------------- gates

class FakeKube(object):
    def __init__(self, nodes):
        self.nodes = nodes
        self.selectors = []
        self.error = None

    def list_nodes(self, label_selector=None):
        self.selectors.append(label_selector)
        if self.error:
            raise self.error
        return {'items': list(self.nodes)}


def _node(name, ready='True'):
    return {'metadata': {'name': name}, 'status': {'conditions': [{'type': 'Ready', 'status': ready}]}}


def _firing(*names):
    return {'status': 'success', 'data': {'resultType': 'vector', 'result': [
        {'metric': {'alertname': n, 'alertstate': 'firing'}, 'value': [0, '1']} for n in names]}}


def _gates(query=None, kube=None, **settings):
    spec = dict({'timeout': 60, 'poll_interval': 10}, **settings)
    return gates.BatchGates(rollout_gates.parse_gates(spec), kube_factory=(lambda: kube), label_selector={'matchLabels': {
        'pool': 'gpu'}}, query=query)


def test_the_alert_gate_waits_until_the_alert_is_gone():
    answers = [_firing('GPUXidErrors'), _firing('GPUXidErrors', 'Watchdog'), _firing('Watchdog')]
    batch_gates = _gates(query=lambda prom: answers.pop(0),
                         prometheus={'url': 'http://prom:9090', 'alert_regex': 'GPU.*'})
    clock, messages = FakeClock(), []
    assert batch_gates.wait(clock, clock.sleep, messages.append) is None
    assert clock.sleeps == [10, 10]
    assert messages == [
        'before the next batch: gate prometheus: alert GPUXidErrors firing; waiting (0 s of 60 s, nodewright_gates.timeout)',
        'before the next batch: gate prometheus: alert GPUXidErrors firing; waiting (10 s of 60 s, nodewright_gates.timeout)']


def test_a_gate_blocked_past_its_timeout_stops_the_rollout_with_the_reason():
    batch_gates = _gates(query=lambda prom: _firing('GPUXidErrors'), timeout=25,
                         prometheus={'url': 'http://prom:9090', 'alert_regex': 'GPU.*'})
    clock = FakeClock()
    assert batch_gates.wait(clock, clock.sleep) == 'gate prometheus: alert GPUXidErrors firing (waited 25 s)'
    assert clock.sleeps == [10, 10, 5]


def test_the_not_ready_gate_lists_the_selection_and_excuses_the_nodes_in_flight():
    kube = FakeKube([_node('a', 'False'), _node('b', 'False'), _node('c')])
    batch_gates = _gates(kube=kube, max_not_ready=1)
    assert batch_gates.probe()[0] == 'gate max_not_ready: 2 nodes NotReady in the selection (a, b), more than the 1 allowed'
    assert batch_gates.probe(rebooting=['a'])[0] is None
    assert kube.selectors == ['pool=gpu', 'pool=gpu']
    in_flight = [['a'], []]
    clock = FakeClock()
    kube.nodes = [_node('a', 'False'), _node('b', 'False'), _node('c')]

    def rebooting():
        if len(in_flight) == 1:
            kube.nodes = [_node('a'), _node('b'), _node('c')]
        return in_flight.pop(0) if len(in_flight) > 1 else in_flight[0]
    assert batch_gates.wait(clock, clock.sleep, rebooting=rebooting) is None


def test_both_gates_blocked_name_both_reasons():
    kube = FakeKube([_node('a', 'False')])
    batch_gates = _gates(kube=kube, query=lambda prom: _firing('NodeDown'), max_not_ready=0,
                         prometheus={'url': 'http://prom:9090', 'alert_regex': 'Node.*'})
    assert batch_gates.probe()[0] == ('gate max_not_ready: 1 node NotReady in the selection (a), more than the 0 allowed; '
                                      'gate prometheus: alert NodeDown firing')


def test_an_unreachable_prometheus_blocks_and_a_refused_token_stops_at_once():
    def down(prom):
        raise rollout_gates.GateQueryError('the Prometheus gate: cannot query http://prom:9090/api/v1/query: connection refused')

    clock = FakeClock()
    stop = _gates(query=down, timeout=20, prometheus={'url': 'http://prom:9090', 'alert_regex': '.*'}).wait(
        clock, clock.sleep)
    assert stop == ('gate prometheus: the Prometheus gate: cannot query http://prom:9090/api/v1/query: '
                    'connection refused (waited 20 s)')

    def refused(prom):
        raise rollout_gates.GateQueryError('the Prometheus gate: cannot query ...: HTTP 401 Unauthorized', permanent=True)
    clock = FakeClock()
    stop = _gates(query=refused, prometheus={'url': 'http://prom:9090', 'alert_regex': '.*'}).wait(clock, clock.sleep)
    assert stop.endswith('HTTP 401 Unauthorized (not waited for: this does not pass by itself)')
    assert clock.sleeps == []


def test_an_api_error_blocks_the_not_ready_gate():
    kube = FakeKube([])
    kube.error = KubeError('list nodes: forbidden by the API server at https://k (nodes is forbidden)', 403)
    reason, permanent = _gates(kube=kube, max_not_ready=0).probe()
    assert reason == ('gate max_not_ready: cannot list the nodes: list nodes: forbidden by the API server at '
                      'https://k (nodes is forbidden)')
    assert permanent


def test_wait_before_batch_waits_again_when_the_window_closes_while_the_gates_block():
    windows = _windows(start='17:00', end='17:01')
    calls = []

    def query(prom):  # firing for the first two minutes, then clear
        calls.append(prom)
        return _firing('GPUXidErrors') if len(calls) <= 12 else _firing()
    batch_gates = _gates(query=query, timeout=600,
                         prometheus={'url': 'http://prom:9090', 'alert_regex': 'GPU.*'})
    clock = FakeClock()
    assert gates.wait_before_batch(windows, batch_gates, clock, clock.sleep) == (None, False)
    assert clock.now == MONDAY_5PM + 86400  # Tuesday 17:00: the next window


# ---------------------------------------------------------------------------- the HTTP errors

class FakeOpener(object):
    def __init__(self, error=None, body=b'{}'):
        self.error, self.body, self.requests = error, body, []

    def open(self, request, timeout=None):
        self.requests.append((request, timeout))
        if self.error:
            raise self.error
        return io.BytesIO(self.body)


def _prom(**extra):
    return rollout_gates.parse_gates({'prometheus': dict({'url': 'https://prom:9090', 'alert_regex': '.*'}, **extra)}).prometheus


def test_the_query_sends_the_alerts_query_and_the_token():
    opener = FakeOpener(body=b'{"status": "success", "data": {"resultType": "vector", "result": []}}')
    answer = gates.query_firing_alerts(_prom(bearer_token='tok', timeout=4), opener)
    assert answer['status'] == 'success'
    request, timeout = opener.requests[0]
    assert request.full_url == 'https://prom:9090/api/v1/query?query=ALERTS%7Balertstate%3D%22firing%22%7D'
    assert request.get_header('Authorization') == 'Bearer tok' and timeout == 4


@pytest.mark.parametrize('error, text, permanent', [
    (HTTPError('u', 401, 'Unauthorized', {}, io.BytesIO(b'')), 'HTTP 401 Unauthorized: an authentication problem', True),
    (HTTPError('u', 403, 'Forbidden', {}, io.BytesIO(b'')), 'HTTP 403 Forbidden: an authentication problem', True),
    (HTTPError('u', 400, 'Bad Request', {}, io.BytesIO(b'{"status":"error","errorType":"bad_data","error":"x"}')),
     'HTTP 400 Bad Request: bad_data: x', True),
    (HTTPError('u', 503, 'Service Unavailable', {}, io.BytesIO(b'')), 'HTTP 503 Service Unavailable', False),
    (URLError(ConnectionRefusedError(111, 'Connection refused')), 'Connection refused', False),
    (URLError(ssl.SSLCertVerificationError(1, 'certificate verify failed')), 'TLS certificate verification failed', True),
])
def test_http_errors_are_named(error, text, permanent):
    with pytest.raises(rollout_gates.GateQueryError) as info:
        gates.query_firing_alerts(_prom(), FakeOpener(error))
    assert str(info.value).startswith('the Prometheus gate: cannot query https://prom:9090/api/v1/query: ')
    assert text in str(info.value)
    assert info.value.permanent is permanent


def test_an_answer_that_is_not_json_is_named():
    with pytest.raises(rollout_gates.GateQueryError, match=r'the answer is not JSON \(is the URL Prometheus\?\)'):
        gates.query_firing_alerts(_prom(), FakeOpener(body=b'<html>'))


def test_a_missing_ca_file_is_a_clear_error(tmp_path):
    with pytest.raises(rollout_gates.GateQueryError, match='cannot read the CA file .*missing.pem'):
        gates.query_firing_alerts(_prom(ca_path=str(tmp_path / 'missing.pem')))
