# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The gates checked before each batch, against real servers (issue 14).

The alert gate asks a real Prometheus (built from github.com/prometheus/prometheus by
tests/cluster/build.sh) whose alert the tests switch on and off through its rule file; a bearer
token and a CA are tested through an HTTPS proxy in front of it. The NotReady gate lists the
nodes of the test cluster. The code under test is plugin_utils/rollout/gate_checks.py, imported in
this process from the checkout.
"""

from __future__ import annotations

import importlib
import time
import uuid

import launcher
import prometheus as prom_support
import pytest
from module_runner import checkout_code

ALERT = 'GPUXidErrors'
POOL_LABEL = 'nodewright.bridge/pool'


@pytest.fixture(scope='module')
def gates_code(tmp_path_factory):
    """(module_utils.planning.rollout_gates, plugin_utils.rollout.gate_checks) of this checkout."""
    with checkout_code(tmp_path_factory.mktemp('collection'), 'plugins.module_utils.planning.rollout_gates',
                       'plugins.plugin_utils.rollout.gate_checks') as code:
        yield code


@pytest.fixture(scope='module')
def prometheus(tmp_path_factory):
    server = prom_support.Prometheus(tmp_path_factory.mktemp('prometheus'))
    yield server
    server.stop()


@pytest.fixture(scope='module')
def tls(tmp_path_factory):
    return prom_support.make_tls(tmp_path_factory.mktemp('tls'))


@pytest.fixture(scope='module')
def proxy(prometheus, tls):  # pylint: disable=redefined-outer-name
    server = prom_support.BearerProxy(prometheus.url, 'the-right-token', tls['cert'], tls['key'])
    yield server
    server.stop()


def _gates(gates_code, prometheus_spec, **spec):  # pylint: disable=redefined-outer-name
    pure, io = gates_code
    settings = pure.parse_gates(dict({'prometheus': dict({'alert_regex': 'GPU.*', 'timeout': 5}, **prometheus_spec),
                                      'timeout': 60, 'poll_interval': 1}, **spec))
    return io.BatchGates(settings)


def test_the_alert_gate_blocks_while_the_alert_fires_and_clears_after(gates_code, prometheus):
    # pylint: disable=redefined-outer-name
    batch_gates = _gates(gates_code, {'url': prometheus.url})
    prometheus.set_alert('Watchdog', labels={'severity': 'none'})
    assert batch_gates.probe()[0] is None  # a firing alert that does not match the regex
    prometheus.set_alert(ALERT, labels={'node': 'gpu-node-03'})
    assert batch_gates.probe()[0] == 'gate prometheus: alert GPUXidErrors firing (on gpu-node-03)'

    # The wait polls the real Prometheus until the alert resolves (switched off 3 s into it).
    switched = []

    def on_wait(message):
        switched.append(message)
        if len(switched) == 3:
            prometheus.set_alert(ALERT, firing=False, wait=False)
    started = time.monotonic()
    assert batch_gates.wait(on_wait=on_wait) is None
    assert switched[0].startswith('before the next batch: gate prometheus: alert GPUXidErrors firing (on gpu-node-03); '
                                  'waiting (0 s of 60 s')
    assert time.monotonic() - started < 30
    prometheus.set_alert('Watchdog', firing=False)


def test_a_gate_that_stays_blocked_stops_with_its_reason(gates_code, prometheus):
    # pylint: disable=redefined-outer-name
    prometheus.set_alert(ALERT)
    try:
        assert _gates(gates_code, {'url': prometheus.url}, timeout=3).wait() == \
            'gate prometheus: alert GPUXidErrors firing (waited 3 s)'
    finally:
        prometheus.set_alert(ALERT, firing=False)


def test_through_https_the_right_token_and_ca_pass(gates_code, prometheus, proxy, tls):
    # pylint: disable=redefined-outer-name
    batch_gates = _gates(gates_code, {'url': proxy.url, 'bearer_token': 'the-right-token', 'ca_path': tls['ca']})
    assert batch_gates.probe()[0] is None
    prometheus.set_alert(ALERT)
    try:
        assert batch_gates.probe()[0] == 'gate prometheus: alert GPUXidErrors firing'
    finally:
        prometheus.set_alert(ALERT, firing=False)


def test_a_wrong_token_is_named_an_authentication_problem_and_stops_at_once(gates_code, proxy, tls):
    # pylint: disable=redefined-outer-name
    batch_gates = _gates(gates_code, {'url': proxy.url, 'bearer_token': 'a-wrong-token', 'ca_path': tls['ca']})
    reason = batch_gates.wait(sleep=lambda s: pytest.fail('a refused token must not be waited for'))
    assert reason == (f'gate prometheus: the Prometheus gate: cannot query {proxy.url}/api/v1/query: HTTP 401 '
                      'Unauthorized: an authentication problem, Prometheus (or the proxy in front of it) refused the '
                      'request; check nodewright_gates.prometheus.bearer_token: unauthorized: bearer token required '
                      '(not waited for: this does not pass by itself)')
    no_token = _gates(gates_code, {'url': proxy.url, 'ca_path': tls['ca']})
    assert 'HTTP 401 Unauthorized: an authentication problem' in no_token.probe()[0]


def test_a_wrong_ca_is_a_clear_tls_error(gates_code, proxy, tls):
    # pylint: disable=redefined-outer-name
    reason = _gates(gates_code, {'url': proxy.url, 'bearer_token': 'the-right-token',
                                 'ca_path': tls['other_ca']}).probe()[0]
    assert reason.startswith(f'gate prometheus: the Prometheus gate: cannot query {proxy.url}/api/v1/query: '
                             'TLS certificate verification failed (unable to get local issuer certificate); '
                             "give the CA that signed the server's certificate as nodewright_gates.prometheus.ca_path")
    # validate_certs: false skips the check (the token still counts).
    assert _gates(gates_code, {'url': proxy.url, 'bearer_token': 'the-right-token', 'validate_certs': False}).probe()[0] \
        is None


def test_an_unreachable_prometheus_blocks_with_the_reason(gates_code):
    # pylint: disable=redefined-outer-name
    port = launcher.free_port()
    reason = _gates(gates_code, {'url': f'http://127.0.0.1:{port}'}, timeout=2).wait()
    assert reason.startswith(f'gate prometheus: the Prometheus gate: cannot query http://127.0.0.1:{port}/api/v1/query: ')
    assert 'Connection refused' in reason and reason.endswith('(waited 2 s)')


def test_the_not_ready_gate_on_the_cluster(gates_code, cluster):  # pylint: disable=redefined-outer-name
    pure, io = gates_code
    pool = f'gate-{uuid.uuid4().hex[:6]}'
    names = [f'{pool}-{i}' for i in range(4)]
    outside = f'{pool}-other'
    launcher.create_nodes(cluster.api, names, labels={POOL_LABEL: pool}, start_index=2400)
    launcher.create_nodes(cluster.api, [outside], labels={POOL_LABEL: pool + '-other'}, start_index=2404)
    launcher.wait_nodes_ready(cluster.api, names + [outside], timeout=60)
    settings = pure.parse_gates({'max_not_ready': 1, 'timeout': 60, 'poll_interval': 1})
    kube_params = {'kubeconfig': cluster.kubeconfig}
    kube = importlib.import_module('ansible_collections.nodewright.bridge.plugins.module_utils.api.kube')
    batch_gates = io.BatchGates(settings, kube_factory=lambda: kube.Kube(kube_params),
                                label_selector={'matchLabels': {POOL_LABEL: pool}})
    try:
        assert batch_gates.probe()[0] is None
        cluster.set_node_not_ready(outside)  # outside the selection: never counted
        cluster.set_node_not_ready(names[0])
        assert batch_gates.probe()[0] is None  # 1 NotReady, 1 allowed
        cluster.set_node_not_ready(names[1])
        assert batch_gates.probe()[0] == (f'gate max_not_ready: 2 nodes NotReady in the selection ({names[0]}, '
                                          f'{names[1]}), more than the 1 allowed')
        assert batch_gates.probe(rebooting=[names[1]])[0] is None  # this rollout's own node is not counted
        # the selection as a kubectl string lists the same nodes (the CR's selector reaches the gate either way)
        listed = io.nodes_in_selection(kube.Kube(kube_params), f'{POOL_LABEL}={pool}')
        assert sorted(n['metadata']['name'] for n in listed) == names

        def recover(message):
            assert 'more than the 1 allowed' in message
            cluster.set_node_not_ready(names[0], not_ready=False)
        assert batch_gates.wait(on_wait=recover) is None
        assert batch_gates.probe()[0] is None
    finally:
        for name in names + [outside]:
            cluster.set_node_not_ready(name, not_ready=False, wait=False)
        for name in names + [outside]:
            cluster.core.delete_node(name)
