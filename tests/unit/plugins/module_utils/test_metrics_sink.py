# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""metrics_sink: the Pushgateway client (its group paths, PUT and DELETE, the errors) against a local HTTP server
that answers as a Pushgateway does, and the textfile written atomically. The real Pushgateway, scraped by a real
Prometheus, is in tests/kube/test_rollout_metrics.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import http.server
import os
import socket
import threading
import time

import pytest

from ansible_collections.nodewright.bridge.plugins.module_utils.api import metrics_sink


class _Handler(http.server.BaseHTTPRequestHandler):
    def _any(self):
        length = int(self.headers.get('Content-Length') or 0)
        body = self.rfile.read(length) if length else b''
        self.server.requests.append((self.command, self.path, dict(self.headers), body.decode('utf-8')))
        status, answer, headers = self.server.answers.pop(0) if self.server.answers else (200, b'', {})
        time.sleep(self.server.delay)
        self.send_response(status)
        for key, val in headers.items():
            self.send_header(key, val)
        self.send_header('Content-Length', str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    do_PUT = do_DELETE = do_POST = _any  # noqa: N815 - http.server's names

    def log_message(self, format, *args):  # pylint: disable=redefined-builtin
        pass


class FakePushgateway(object):
    """An HTTP server on 127.0.0.1 that records each request and answers 200 (or what ``answer`` queued)."""

    def __init__(self):
        self.server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), _Handler)
        self.server.requests, self.server.answers, self.server.delay = [], [], 0
        self.url = 'http://127.0.0.1:%d' % self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={'poll_interval': 0.05}, daemon=True)
        self.thread.start()

    @property
    def requests(self):
        return self.server.requests

    def answer(self, status, body=b'', headers=None):
        self.server.answers.append((status, body, headers or {}))

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def gateway():
    made = FakePushgateway()
    yield made
    made.stop()


def free_port():
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


TEXT = '# TYPE skyhook_node_target_count gauge\nskyhook_node_target_count{skyhook_name="a"} 3\n'


def test_group_paths_name_the_job_and_the_grouping_labels_sorted_and_encode_what_a_path_cannot_hold():
    assert metrics_sink.group_path('nodewright-bridge', {'skyhook_name': 'gpu-tuning'}) == \
        '/metrics/job/nodewright-bridge/skyhook_name/gpu-tuning'
    assert metrics_sink.group_path('j', {'zone': 'b', 'cluster': 'a'}) == '/metrics/job/j/cluster/a/zone/b'
    encoded = base64.urlsafe_b64encode(b'a/b').decode()
    assert metrics_sink.group_path('j', {'team': 'a/b', 'empty': ''}) == \
        '/metrics/job/j/empty@base64/=/team@base64/%s' % encoded
    assert metrics_sink.group_path('my job') == '/metrics/job/my%20job'
    assert metrics_sink.Pushgateway('http://pg:9091/').group_url('j', {'x': 'y'}) == 'http://pg:9091/metrics/job/j/x/y'


def test_a_push_puts_the_text_to_the_crs_group_with_the_content_type_and_the_token(gateway):
    client = metrics_sink.Pushgateway(gateway.url, bearer_token='s3cret')
    target = client.push('nodewright-bridge', {'nodewright_name': 'gpu'}, TEXT)
    assert target == gateway.url + '/metrics/job/nodewright-bridge/nodewright_name/gpu'
    method, path, headers, body = gateway.requests[0]
    assert (method, path, body) == ('PUT', '/metrics/job/nodewright-bridge/nodewright_name/gpu', TEXT)
    assert headers['Content-Type'] == 'text/plain; version=0.0.4; charset=utf-8'
    assert headers['Authorization'] == 'Bearer s3cret'
    assert 's3cret' not in repr(client)

    client.delete('nodewright-bridge', {'nodewright_name': 'gpu'})
    assert gateway.requests[1][:2] == ('DELETE', '/metrics/job/nodewright-bridge/nodewright_name/gpu')
    metrics_sink.Pushgateway(gateway.url).push('j', {}, TEXT)
    assert 'Authorization' not in gateway.requests[2][2]


def test_a_pushgateway_that_does_not_answer_is_a_sink_error_naming_the_url():
    port = free_port()
    client = metrics_sink.Pushgateway('http://127.0.0.1:%d' % port, timeout=2)
    with pytest.raises(metrics_sink.SinkError) as caught:
        client.push('j', {'skyhook_name': 'a'}, TEXT)
    message = str(caught.value)
    assert message.startswith('cannot push the metrics to the Pushgateway: PUT http://127.0.0.1:%d/metrics/job/j/'
                              'skyhook_name/a: ' % port)
    assert 'Connection refused' in message


def test_a_slow_pushgateway_times_out(gateway):
    gateway.server.delay = 1
    started = time.monotonic()
    with pytest.raises(metrics_sink.SinkError, match='timed out'):
        metrics_sink.Pushgateway(gateway.url, timeout=0.2).push('j', {}, TEXT)
    assert time.monotonic() - started < 0.9


def test_refusals_say_what_to_check(gateway):
    gateway.answer(400, b'text format parsing error in line 1: unexpected end of input stream\n')
    with pytest.raises(metrics_sink.SinkError) as caught:
        metrics_sink.Pushgateway(gateway.url).push('j', {}, 'garbage{')
    assert str(caught.value).endswith('HTTP 400 Bad Request: text format parsing error in line 1: unexpected end of '
                                      'input stream')
    gateway.answer(401, b'no')
    with pytest.raises(metrics_sink.SinkError, match=r'HTTP 401 Unauthorized: an authentication problem, the '
                                                     r'Pushgateway \(or the proxy in front of it\) refused the request; '
                                                     r'check the bearer token: no'):
        metrics_sink.Pushgateway(gateway.url, bearer_token='wrong').push('j', {}, TEXT)
    # a redirect is not followed (it would carry the token): it is named
    gateway.answer(307, b'', {'Location': 'http://elsewhere:9091/metrics/job/j'})
    with pytest.raises(metrics_sink.SinkError, match='HTTP 307 redirect to http://elsewhere:9091/metrics/job/j; give that URL'):
        metrics_sink.Pushgateway(gateway.url, bearer_token='t').push('j', {}, TEXT)
    assert len(gateway.requests) == 3


def test_an_unreadable_ca_file_is_named(tmp_path):
    client = metrics_sink.Pushgateway('https://127.0.0.1:1', ca_path=str(tmp_path / 'missing.pem'))
    with pytest.raises(metrics_sink.SinkError, match=r'cannot read the CA file .*missing.pem \(ca_path\)'):
        client.push('j', {}, TEXT)


def test_the_textfile_is_replaced_atomically_and_removed(tmp_path):
    path = metrics_sink.write_textfile(str(tmp_path), 'nodewright-bridge_gpu', TEXT)
    assert path == str(tmp_path / 'nodewright-bridge_gpu.prom')
    assert open(path).read() == TEXT and oct(os.stat(path).st_mode & 0o777) == '0o644'
    metrics_sink.write_textfile(str(tmp_path), 'nodewright-bridge_gpu', TEXT.replace(' 3', ' 4'))
    assert open(path).read().endswith(' 4\n')
    assert sorted(os.listdir(str(tmp_path))) == ['nodewright-bridge_gpu.prom']  # no temporary file left
    assert metrics_sink.remove_textfile(str(tmp_path), 'nodewright-bridge_gpu') is True
    assert metrics_sink.remove_textfile(str(tmp_path), 'nodewright-bridge_gpu') is False
    with pytest.raises(metrics_sink.SinkError, match='cannot write the metrics file .*/nowhere/x.prom: '):
        metrics_sink.write_textfile(str(tmp_path / 'nowhere'), 'x', TEXT)
