# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""rollout_state.RolloutBus: where the budgeted strategy records its rollouts and the rollout callback hears of them.

A bus is an object: two buses share nothing, a rollout records on the bus it was started on, and the strategy's
side, the callback and rollout_report meet at the run's one bus (rollout_state.BUS) unless handed their own.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import threading

from ansible_collections.nodewright.bridge.plugins.callback import rollout as rollout_callback
from ansible_collections.nodewright.bridge.plugins.plugin_utils.reporting import rollout_state

COMPARTMENT = {'name': 'rack-a', 'matched': 2, 'ceiling': 1, 'strategy': None, 'budget': {'count': 1}}
EMPTY = {'compartments': {}, 'not_attempted': [], 'stopped': False, 'rollouts': []}


def _record(bus, play='play'):
    rollout = bus.start_rollout(play, 'batch', [COMPARTMENT])
    rollout_state.batch_started(rollout, 'rack-a', 1, ['n1'])
    rollout_state.batch_finished(rollout, 'rack-a', {'number': 1, 'size': 1, 'hosts': ['n1'], 'ok': ['n1'], 'failed': [],
                                                     'progress': 50})
    rollout_state.finish_rollout(rollout, [{'name': 'rack-a', 'stopped': False, 'stop_reason': None, 'completed': 1,
                                            'failed': 0, 'progress': 50}], ['n2'])
    return rollout


def test_two_buses_share_no_rollout_and_no_listener():
    one, other = rollout_state.RolloutBus(), rollout_state.RolloutBus()
    heard_one, heard_other = [], []
    one.subscribe(lambda event, payload: heard_one.append(event))
    other.subscribe(lambda event, payload: heard_other.append(event))
    rollout = _record(one)
    assert rollout.bus is one
    assert heard_one == ['rollout_start', 'batch_start', 'batch_end', 'rollout_end'] and heard_other == []
    assert [r['play'] for r in one.rollouts()] == ['play'] and other.rollouts() == [] and other.report() == EMPTY
    one.reset()
    assert one.report() == EMPTY and one.listeners == []


def test_a_listener_gets_a_copy_and_is_called_outside_the_buss_lock():
    bus = rollout_state.RolloutBus()
    outside = []

    def listener(event, payload):
        # another thread can take the bus's lock while a listener runs: a slow listener blocks no bookkeeping
        taker = threading.Thread(target=lambda: outside.append(bus.lock.acquire(timeout=2) and bus.lock.release() is None))
        taker.start()
        taker.join()
        payload['play'] = 'changed by a listener'
    bus.subscribe(listener)
    bus.subscribe(listener)  # once is enough
    _record(bus)
    assert outside == [True] * 4 and bus.rollouts()[0]['play'] == 'play'


def test_the_strategy_callback_and_report_meet_at_the_runs_bus_unless_given_their_own():
    assert isinstance(rollout_state.BUS, rollout_state.RolloutBus)
    default = rollout_callback.CallbackModule()
    try:
        assert default.bus is rollout_state.BUS and default._on_rollout_event in rollout_state.BUS.listeners
    finally:
        rollout_state.BUS.listeners.remove(default._on_rollout_event)  # the test process's bus as it was
    own = rollout_state.RolloutBus()
    callback = rollout_callback.CallbackModule(bus=own)
    assert callback.bus is own and callback._on_rollout_event in own.listeners
    assert callback._on_rollout_event not in rollout_state.BUS.listeners


def test_the_json_report_carries_the_runs_custom_stats_also_when_nothing_was_rolled_out(tmp_path, monkeypatch):
    import json  # pylint: disable=import-outside-toplevel
    from ansible.executor.stats import AggregateStats  # pylint: disable=import-outside-toplevel
    path = tmp_path / 'report.json'
    monkeypatch.setenv('NODEWRIGHT_REPORT', str(path))
    callback = rollout_callback.CallbackModule(bus=rollout_state.RolloutBus())
    stats = AggregateStats()
    callback.v2_playbook_on_stats(stats)
    assert not path.exists()  # nothing rolled out and no custom stat: no report, as before
    stats.set_custom_stats('nodewright_apply_left', {'gpu': {'erroring': ['n2'], 'not_done': []}})
    callback.v2_playbook_on_stats(stats)
    report = json.loads(path.read_text())
    assert report['custom_stats'] == {'nodewright_apply_left': {'gpu': {'erroring': ['n2'], 'not_done': []}}}
    assert report['rollouts'] == []
