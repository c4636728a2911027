# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""Maintenance windows and the gates before each batch, through `nodewright.bridge.apply` on the test cluster.

A window that closes mid-rollout: the batch running then finishes, the next one waits for the
next window. The NotReady gate and the alert gate (a real Prometheus) block the next batch and
release it; a gate still blocked at its timeout stops the rollout with its reason in the output
and the report.
"""

from __future__ import annotations

import datetime
import threading
import time

import helpers
import prometheus as prom_support
import pytest
from module_runner import RunningPlaybook
from test_shared_budget import STATUS, Fleet, _vars

ALERT = 'GPUXidErrors'


@pytest.fixture
def small_fleet(cluster, tmp_path):
    made = Fleet(cluster, tmp_path, count=4)
    yield made
    made.close()


def _complete_times(cluster, fleet):
    """node -> when its complete status label was first seen (sampled every 0.2 s by the caller's thread)."""
    seen = {}

    def sample(stop):
        while not stop.is_set():
            for node in cluster.core.list_node(label_selector=f'nodewright.bridge/pool={fleet.id}').items:
                if (node.metadata.labels or {}).get(STATUS + fleet.cr) == 'complete':
                    seen.setdefault(node.metadata.name, time.time())
            time.sleep(0.2)
    stop = threading.Event()
    thread = threading.Thread(target=sample, args=(stop,), daemon=True)
    thread.start()
    return seen, stop, thread


def test_a_window_that_closes_mid_rollout_lets_the_batch_finish_and_the_next_wait(cluster, playbooks, namespace, tmp_path):
    fleet = Fleet(cluster, tmp_path, count=6)
    try:
        _window_closes_mid_rollout(cluster, playbooks, namespace, fleet)
    finally:
        fleet.close()


def _window_closes_mid_rollout(cluster, playbooks, namespace, fleet):
    fleet.path.write_text(fleet.path.read_text().replace("count: 2", "count: 1"))  # 6 batches of 1 node (about 7 s each)
    # start about 22 s before the first window closes: a few batches run in it, the rest after the next opens.
    # A wall-clock timer, not a condition: windows are whole minutes (HH:MM), so the run starts at second 38
    now = datetime.datetime.now(datetime.timezone.utc)
    time.sleep((38 - now.second) % 60)
    now = datetime.datetime.now(datetime.timezone.utc)
    minute = now.replace(second=0, microsecond=0)

    def hhmm(delta):
        return (minute + datetime.timedelta(minutes=delta)).strftime('%H:%M')
    first_close = minute + datetime.timedelta(minutes=1)
    second_open = minute + datetime.timedelta(minutes=2)
    windows = [{'start': hhmm(0), 'end': hhmm(1), 'timezone': 'UTC'}, {'start': hhmm(2), 'end': hhmm(10), 'timezone': 'UTC'}]
    seen, stop, thread = _complete_times(cluster, fleet)
    run = RunningPlaybook(playbooks, 'nodewright.bridge.apply', extra_vars=_vars(
        fleet, namespace, nodewright_maintenance_windows=windows, nodewright_maintenance_timeout=600))
    result = run.finish(timeout=600)
    stop.set()
    thread.join(timeout=5)
    assert result.rc == 0, result
    assert 'NODEWRIGHT WAIT' in result.stdout and 'before the next batch: outside the maintenance windows' in result.stdout, result
    starts = [line for line in result.stdout.splitlines() if line.startswith('NODEWRIGHT BATCH') and 'host' in line]
    assert len(starts) == 6, starts
    # some node finished after the first window closed (its batch had started inside it) and no
    # node of a batch started after the close finished before the second window opened
    late = [n for n, t in seen.items() if t > first_close.timestamp()]
    assert late, seen
    in_between = [n for n, t in seen.items() if first_close.timestamp() + 8 < t < second_open.timestamp()]
    assert not in_between, (seen, first_close, second_open)
    assert any(t >= second_open.timestamp() for t in seen.values()), seen
    assert all(fleet.complete(n) for n in fleet.names)


def test_a_window_that_cannot_open_in_time_defers_the_rest_cleanly(cluster, playbooks, small_fleet, namespace):
    fleet = small_fleet
    later = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=3)).strftime('%H:%M')
    later_end = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=4)).strftime('%H:%M')
    result = playbooks.run('nodewright.bridge.apply', extra_vars=_vars(
        fleet, namespace, nodewright_maintenance_windows=[{'start': later, 'end': later_end}],
        nodewright_maintenance_timeout=60))
    assert result.rc == 0, result  # deferred, not failed
    assert 'NODEWRIGHT DEFERRED' in result.stdout and 'later than nodewright_maintenance_timeout (60 s)' in result.stdout
    assert not any(fleet.complete(n) or fleet.node(n).spec.unschedulable for n in fleet.names)


def test_the_not_ready_gate_blocks_the_next_batch_until_the_node_recovers(cluster, playbooks, small_fleet, namespace):
    fleet = small_fleet
    sick = fleet.names[-1]
    cluster.set_node_not_ready(sick)
    run = RunningPlaybook(playbooks, 'nodewright.bridge.apply', extra_vars=_vars(
        fleet, namespace, nodewright_gates={'max_not_ready': 0, 'timeout': 120, 'poll_interval': 2}))
    try:
        # the gate holds the next batch (its NODEWRIGHT WAIT line names the node), then the node recovers
        helpers.wait_for(lambda: f'gate max_not_ready: 1 node NotReady in the selection ({sick})' in run.output
                         or not run.running(), 120, interval=0.3, what='the NotReady gate to hold the next batch')
    finally:
        cluster.set_node_not_ready(sick, not_ready=False)
    result = run.finish(timeout=600)
    assert result.rc == 0, result
    assert f'gate max_not_ready: 1 node NotReady in the selection ({sick})' in result.stdout, result
    assert all(fleet.complete(n) for n in fleet.names)


def test_the_alert_gate_blocks_then_releases_and_stops_the_rollout_at_its_timeout(cluster, playbooks, small_fleet,
                                                                                  namespace, tmp_path):
    fleet = small_fleet
    server = prom_support.Prometheus(tmp_path / 'prometheus')
    try:
        server.set_alert(ALERT, labels={'node': fleet.names[0]})
        gates = {'prometheus': {'url': server.url, 'alert_regex': 'GPU.*'}, 'timeout': 5, 'poll_interval': 1}
        # blocked for longer than the timeout: the rollout stops before any node, with the gate's reason
        result = playbooks.run('nodewright.bridge.apply', extra_vars=_vars(fleet, namespace, nodewright_gates=gates))
        assert result.rc != 0, result
        assert 'NODEWRIGHT ROLLOUT STOPPED' in result.stdout and 'gate prometheus: alert GPUXidErrors firing' in result.stdout
        reasons = [c['stop_reason'] for c in result.report['compartments'].values() if c['stopped']]
        assert reasons and all('gate prometheus: alert GPUXidErrors firing' in r and 'waited' in r for r in reasons), reasons
        assert not any(fleet.node(n).spec.unschedulable or fleet.complete(n) for n in fleet.names)

        # blocked, then the alert resolves once the gate has held the rollout: the rollout goes on
        gates['timeout'] = 120
        run = RunningPlaybook(playbooks, 'nodewright.bridge.apply', extra_vars=_vars(fleet, namespace, nodewright_gates=gates))
        try:
            helpers.wait_for(lambda: ('NODEWRIGHT WAIT' in run.output and 'gate prometheus: alert GPUXidErrors firing' in run.output)
                             or not run.running(), 120, interval=0.3, what='the alert gate to hold the rollout')
        finally:
            server.set_alert(ALERT, firing=False)
        result = run.finish(timeout=600)
        assert result.rc == 0, result
        assert 'NODEWRIGHT WAIT' in result.stdout and 'gate prometheus: alert GPUXidErrors firing' in result.stdout
        assert all(fleet.complete(n) for n in fleet.names)
    finally:
        server.stop()
