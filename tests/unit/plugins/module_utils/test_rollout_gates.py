# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""rollout_gates: maintenance windows (days, overnight, time zones, DST), their validation, gate decisions."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime

import pytest

from ansible_collections.nodewright.bridge.plugins.module_utils.planning import rollout_gates as rg

UTC = datetime.timezone.utc


def _utc(*args):
    return datetime.datetime(*args, tzinfo=UTC)


def _windows(*entries):
    return rg.parse_windows(list(entries))


def _errors(func, *args):
    with pytest.raises(rg.GateConfigError) as info:
        func(*args)
    return info.value.errors


# ---------------------------------------------------------------------------- windows: open or not

def test_a_plain_window_is_open_from_start_to_end_exclusive():
    windows = _windows({'start': '09:00', 'end': '17:00'})
    assert not rg.window_open(windows, _utc(2026, 6, 1, 8, 59, 59))
    assert rg.window_open(windows, _utc(2026, 6, 1, 9, 0))
    assert rg.window_open(windows, _utc(2026, 6, 1, 16, 59, 59))
    assert not rg.window_open(windows, _utc(2026, 6, 1, 17, 0))


def test_no_windows_means_always_open():
    assert rg.window_open([], _utc(2026, 6, 1, 3, 0))
    assert rg.parse_windows(None) == []
    assert rg.next_opening([], _utc(2026, 6, 1)) is None


def test_an_overnight_window_belongs_to_the_day_it_starts_on():
    # 2026-06-01 is a Monday.
    windows = _windows({'days': ['mon'], 'start': '22:00', 'end': '04:00'})
    assert rg.window_open(windows, _utc(2026, 6, 1, 22, 0))     # Monday 22:00
    assert rg.window_open(windows, _utc(2026, 6, 2, 3, 59))     # Tuesday 03:59, the same window
    assert not rg.window_open(windows, _utc(2026, 6, 2, 4, 0))  # Tuesday 04:00: over
    assert not rg.window_open(windows, _utc(2026, 6, 2, 22, 0))  # Tuesday evening: not a window day
    assert not rg.window_open(windows, _utc(2026, 6, 1, 3, 0))  # Monday 03:00 belongs to Sunday's window


def test_days_take_short_and_full_names_in_any_case_and_ranges():
    windows = _windows({'days': ['MON', 'Wednesday', 'fri-sun'], 'start': '00:00', 'end': '24:00'})
    assert sorted(windows[0].days) == [0, 2, 4, 5, 6]
    assert rg.describe(windows[0]) == 'mon,wed,fri-sun 00:00-24:00 UTC'
    wrapped = _windows({'days': ['sat-mon'], 'start': '10:00', 'end': '11:00'})
    assert sorted(wrapped[0].days) == [0, 5, 6]
    assert rg.window_open(windows, _utc(2026, 6, 7, 23, 59))  # Sunday, end 24:00
    assert not rg.window_open(windows, _utc(2026, 6, 2, 12, 0))  # Tuesday


def test_a_window_in_a_time_zone_uses_its_local_wall_clock():
    windows = _windows({'days': ['mon-fri'], 'start': '22:00', 'end': '04:00', 'timezone': 'Europe/Berlin'})
    # Summer: Berlin is UTC+2; Monday 22:00 local is 20:00 UTC.
    assert not rg.window_open(windows, _utc(2026, 6, 1, 19, 59))
    assert rg.window_open(windows, _utc(2026, 6, 1, 20, 0))
    assert rg.window_open(windows, _utc(2026, 6, 2, 1, 59))
    assert not rg.window_open(windows, _utc(2026, 6, 2, 2, 0))
    # Winter: UTC+1.
    assert rg.window_open(windows, _utc(2026, 1, 5, 21, 0))
    assert not rg.window_open(windows, _utc(2026, 1, 5, 20, 59))
    # Friday's window runs into Saturday morning; Saturday's evening is closed.
    assert rg.window_open(windows, _utc(2026, 6, 6, 1, 0))
    assert not rg.window_open(windows, _utc(2026, 6, 6, 21, 0))


def test_now_may_be_epoch_seconds_but_not_a_naive_datetime():
    windows = _windows({'start': '09:00', 'end': '17:00'})
    assert rg.window_open(windows, _utc(2026, 6, 1, 10, 0).timestamp())
    with pytest.raises(ValueError, match='naive'):
        rg.window_open(windows, datetime.datetime(2026, 6, 1, 10, 0))


def test_several_windows_any_one_open_is_enough():
    windows = _windows({'days': ['sat', 'sun'], 'start': '00:00', 'end': '24:00'},
                       {'days': ['mon-fri'], 'start': '02:00', 'end': '05:00'})
    assert rg.window_open(windows, _utc(2026, 6, 6, 12, 0))   # Saturday
    assert rg.window_open(windows, _utc(2026, 6, 2, 3, 0))    # Tuesday night
    assert not rg.window_open(windows, _utc(2026, 6, 2, 12, 0))
    when, window = rg.next_window(windows, _utc(2026, 6, 2, 12, 0))
    assert when == _utc(2026, 6, 3, 2, 0) and window is windows[1]
    assert rg.next_opening(windows, _utc(2026, 6, 5, 12, 0)) == _utc(2026, 6, 6, 0, 0)


def test_next_opening_is_now_inside_a_window_and_skips_to_the_next_window_day():
    windows = _windows({'days': ['mon'], 'start': '22:00', 'end': '04:00', 'timezone': 'Europe/Berlin'})
    inside = _utc(2026, 6, 2, 1, 0)
    assert rg.next_opening(windows, inside) == inside
    assert rg.next_opening(windows, _utc(2026, 6, 2, 2, 0)) == _utc(2026, 6, 8, 20, 0)
    assert rg.next_opening(windows, _utc(2026, 6, 1, 10, 0)) == _utc(2026, 6, 1, 20, 0)


def test_dst_spring_forward_a_start_in_the_skipped_hour_opens_at_the_change():
    # Europe/Berlin 2026-03-29 (a Sunday): 02:00 CET becomes 03:00 CEST at 01:00 UTC.
    windows = _windows({'start': '02:30', 'end': '03:30', 'timezone': 'Europe/Berlin'})
    assert not rg.window_open(windows, _utc(2026, 3, 29, 0, 59, 59))
    assert rg.window_open(windows, _utc(2026, 3, 29, 1, 0))       # 03:00 CEST
    assert not rg.window_open(windows, _utc(2026, 3, 29, 1, 30))  # 03:30 CEST
    assert rg.next_opening(windows, _utc(2026, 3, 28, 23, 0)) == _utc(2026, 3, 29, 1, 0)
    # A window entirely inside the skipped hour does not open that day: the next one is on Monday.
    skipped = _windows({'start': '02:10', 'end': '02:50', 'timezone': 'Europe/Berlin'})
    assert rg.next_opening(skipped, _utc(2026, 3, 28, 23, 0)) == _utc(2026, 3, 30, 0, 10)


def test_dst_fall_back_the_repeated_hour_is_in_the_window_twice():
    # Europe/Berlin 2026-10-25: 03:00 CEST becomes 02:00 CET at 01:00 UTC; 02:xx happens twice.
    windows = _windows({'start': '02:00', 'end': '02:30', 'timezone': 'Europe/Berlin'})
    assert rg.window_open(windows, _utc(2026, 10, 25, 0, 15))   # 02:15 CEST
    assert not rg.window_open(windows, _utc(2026, 10, 25, 0, 45))
    assert rg.window_open(windows, _utc(2026, 10, 25, 1, 15))   # 02:15 CET
    assert rg.next_opening(windows, _utc(2026, 10, 24, 23, 0)) == _utc(2026, 10, 25, 0, 0)


def test_window_block_says_when_the_next_window_opens():
    settings = rg.parse_window_settings({rg.VAR_WINDOWS: [
        {'days': ['mon-fri'], 'start': '22:00', 'end': '04:00', 'timezone': 'Europe/Berlin'}]})
    reason = rg.window_block(settings, _utc(2026, 6, 1, 17, 47))
    assert reason == ('outside the maintenance windows (mon-fri 22:00-04:00 Europe/Berlin); the next opens in '
                      '2 h 13 min (mon-fri 22:00-04:00 Europe/Berlin, at 2026-06-01 22:00 CEST)')
    assert rg.window_block(settings, _utc(2026, 6, 1, 20, 0)) is None
    assert rg.window_block(rg.WindowSettings(), _utc(2026, 6, 1, 17, 0)) is None


def test_window_settings_defaults_and_values():
    settings = rg.parse_window_settings({})
    assert (settings.windows, settings.action, settings.timeout, settings.enabled) == \
        ([], 'wait', rg.DEFAULT_WINDOW_TIMEOUT, False)
    settings = rg.parse_window_settings({rg.VAR_WINDOWS: {'start': '01:00', 'end': '02:00'},
                                         rg.VAR_WINDOW_ACTION: 'stop', rg.VAR_WINDOW_TIMEOUT: 600})
    assert (len(settings.windows), settings.action, settings.timeout, settings.enabled) == (1, 'stop', 600, True)


# ---------------------------------------------------------------------------- windows: validation

def test_every_window_problem_is_reported_with_its_path():
    errors = _errors(rg.parse_play_vars, {
        rg.VAR_WINDOWS: [
            {'start': '09:00', 'end': '17:00'},
            {'days': ['mon', 'funday'], 'start': '25:00', 'end': '17:60', 'timezone': 'Mars/Olympus', 'every': 1},
            {'start': 1320, 'end': '04:00'},
            {'start': '10:00', 'end': '10:00'},
            {'days': [], 'end': '04:00'},
            'nightly',
        ],
        rg.VAR_WINDOW_ACTION: 'skip', rg.VAR_WINDOW_TIMEOUT: 0})
    expected = [
        'nodewright_maintenance_windows[1]: unknown keys every',
        "nodewright_maintenance_windows[1].days[1]: 'funday' is not a day",
        "nodewright_maintenance_windows[1].start: must be a time 'HH:MM' (00:00 to 23:59), got '25:00'",
        "nodewright_maintenance_windows[1].end: must be a time 'HH:MM' (00:00 to 23:59, or 24:00), got '17:60'",
        "nodewright_maintenance_windows[1].timezone: 'Mars/Olympus' is not an IANA time zone",
        'nodewright_maintenance_windows[2].start: must be a time',
        'an unquoted 22:00 is read by YAML as the number 1320',
        'nodewright_maintenance_windows[3]: start and end are both 10:00',
        'nodewright_maintenance_windows[4].days: must be a non-empty list of days',
        "nodewright_maintenance_windows[4].start: is required ('HH:MM')",
        'nodewright_maintenance_windows[5]: must be a mapping',
        "nodewright_maintenance_action: must be one of wait, stop, got 'skip'",
        'nodewright_maintenance_timeout: must be a whole number of seconds >= 1, got 0',
    ]
    text = '\n'.join(errors)
    for part in expected:
        assert part in text, (part, errors)
    assert len(errors) == 12
    assert 'nodewright_maintenance_windows[0]' not in text


def test_windows_must_be_a_list():
    assert _errors(rg.parse_windows, 'mon 22:00-04:00') == [
        'nodewright_maintenance_windows: must be a list of windows ({days, start, end, timezone}), got str']


def test_the_error_lists_every_problem_in_its_message():
    exc = rg.GateConfigError(['a: one', 'b: two'])
    assert str(exc) == 'invalid rollout configuration (2 problems):\n  - a: one\n  - b: two'
    assert isinstance(exc, ValueError)


def test_without_zoneinfo_only_utc_windows_work(monkeypatch):
    monkeypatch.setattr(rg, 'HAS_ZONEINFO', False)
    assert len(_windows({'start': '01:00', 'end': '02:00', 'timezone': 'UTC'})) == 1
    errors = _errors(rg.parse_windows, [{'start': '01:00', 'end': '02:00', 'timezone': 'Europe/Berlin'}])
    assert errors == ['nodewright_maintenance_windows[0].timezone: Europe/Berlin needs the zoneinfo module '
                      '(Python 3.9 or later on the controller); this Python has only UTC']


# ---------------------------------------------------------------------------- gates: validation

def test_gates_default_to_off():
    gates = rg.parse_gates(None)
    assert (gates.max_not_ready, gates.prometheus, gates.enabled) == (None, None, False)
    assert (gates.timeout, gates.poll_interval) == (rg.DEFAULT_GATE_TIMEOUT, rg.DEFAULT_POLL_INTERVAL)


def test_gates_parse_every_field():
    gates = rg.parse_gates({'max_not_ready': 0, 'timeout': 60, 'poll_interval': 2, 'prometheus': {
        'url': 'https://prom.example:9090/', 'bearer_token': 's3cret', 'ca_path': '/etc/ca.pem',
        'validate_certs': False, 'alert_regex': 'GPU.*', 'alert_labels': {'severity': 'critical|page'}, 'timeout': 3}})
    prom = gates.prometheus
    assert (gates.max_not_ready, gates.timeout, gates.poll_interval, gates.enabled) == (0, 60, 2, True)
    assert (prom.url, prom.bearer_token, prom.ca_path, prom.validate_certs, prom.timeout) == \
        ('https://prom.example:9090', 's3cret', '/etc/ca.pem', False, 3)
    assert prom.alert_regex.pattern == 'GPU.*' and prom.alert_labels['severity'].pattern == 'critical|page'
    assert 's3cret' not in repr(prom)


def test_every_gate_problem_is_reported_with_its_path():
    errors = _errors(rg.parse_gates, {'max_not_ready': -1, 'timeout': 'long', 'poll_interval': 0, 'extra': 1,
                                      'prometheus': {'url': 'ftp://prom', 'alert_regex': '(', 'bearer_token': 5,
                                                     'validate_certs': 'yes', 'timeout': True, 'alert_labels': []}})
    assert errors == [
        'nodewright_gates: unknown keys extra (known: max_not_ready, prometheus, timeout, poll_interval)',
        'nodewright_gates.max_not_ready: must be a whole number >= 0, got -1',
        "nodewright_gates.prometheus.url: must be an http:// or https:// URL of Prometheus "
        "(e.g. https://prometheus.example:9090), got 'ftp://prom'",
        "nodewright_gates.prometheus.alert_regex: '(' is not a valid regular expression: "
        "missing ), unterminated subpattern at position 0",
        'nodewright_gates.prometheus.alert_labels: must be a mapping of label name to regular expression, got []',
        'nodewright_gates.prometheus.bearer_token: must be a non-empty string, got int',
        "nodewright_gates.prometheus.validate_certs: must be true or false, got 'yes'",
        'nodewright_gates.prometheus.timeout: must be a whole number of seconds >= 1, got True',
        "nodewright_gates.timeout: must be a whole number of seconds >= 1, got 'long'",
        'nodewright_gates.poll_interval: must be a whole number of seconds >= 1, got 0',
    ]


def test_the_alert_regex_is_required_and_gates_must_be_a_mapping():
    assert _errors(rg.parse_gates, {'prometheus': {'url': 'http://p:9090'}}) == [
        'nodewright_gates.prometheus.alert_regex: is required (the alert names that block a batch; .* for any alert)']
    assert _errors(rg.parse_gates, ['max_not_ready']) == [
        'nodewright_gates: must be a mapping ({max_not_ready, prometheus, timeout, poll_interval}), got list']


def test_parse_play_vars_collects_the_problems_of_windows_and_gates_together():
    errors = _errors(rg.parse_play_vars, {rg.VAR_WINDOW_TIMEOUT: -5, rg.VAR_GATES: {'max_not_ready': 'two'}})
    assert errors == ['nodewright_maintenance_timeout: must be a whole number of seconds >= 1, got -5',
                      "nodewright_gates.max_not_ready: must be a whole number >= 0, got 'two'"]
    windows, gates = rg.parse_play_vars({})
    assert not windows.enabled and not gates.enabled


# ---------------------------------------------------------------------------- gates: decisions

def _node(name, ready='True', labels=None):
    conditions = [{'type': 'Ready', 'status': ready}] if ready is not None else []
    return {'metadata': {'name': name, 'labels': labels or {'pool': 'gpu'}}, 'status': {'conditions': conditions}}


def test_not_ready_blocks_only_beyond_the_allowed_count():
    nodes = [_node('a'), _node('b', 'False'), _node('c', 'Unknown'), _node('d', None)]
    assert rg.not_ready_blocking(nodes, None, (), 3) is None
    assert rg.not_ready_blocking(nodes, None, (), 2) == (
        'gate max_not_ready: 3 nodes NotReady in the selection (b, c, d), more than the 2 allowed')
    assert rg.not_ready_blocking(nodes, None, (), None) is None


def test_not_ready_ignores_nodes_outside_the_selection_and_those_the_rollout_takes_down():
    nodes = [_node('a', 'False'), _node('b', 'False'), _node('cpu', 'False', {'pool': 'cpu'})]
    assert rg.not_ready_blocking(nodes, {'matchLabels': {'pool': 'gpu'}}, ['a'], 0) == (
        'gate max_not_ready: 1 node NotReady in the selection (b), more than the 0 allowed '
        '(not counted: a, taken down by this rollout)')
    assert rg.not_ready_blocking(nodes, 'pool=gpu', ['a', 'b'], 0) is None
    assert rg.not_ready_blocking(nodes, 'pool=gpu', (), 1) is not None


def _alerts(*metrics, **answer):
    result = {'status': 'success', 'data': {'resultType': 'vector', 'result': [
        {'metric': dict(m, __name__='ALERTS', alertstate='firing'), 'value': [1780000000.0, '1']} for m in metrics]}}
    result.update(answer)
    return result


def test_alerts_block_when_an_alertname_matches_in_full():
    answer = _alerts({'alertname': 'GPUXidErrors', 'node': 'gpu-3'}, {'alertname': 'GPUXidErrors', 'node': 'gpu-1'},
                     {'alertname': 'Watchdog'})
    assert rg.alerts_blocking(answer, 'GPU.*') == 'gate prometheus: alert GPUXidErrors firing (on gpu-1, gpu-3)'
    assert rg.alerts_blocking(answer, 'GPU') is None  # fullmatch, like PromQL =~
    assert rg.alerts_blocking(answer, '.*') == ('gate prometheus: alerts GPUXidErrors firing (on gpu-1, gpu-3); '
                                                'Watchdog firing')
    assert rg.alerts_blocking(_alerts(), '.*') is None


def test_alert_labels_narrow_the_match():
    answer = _alerts({'alertname': 'NodeDown', 'severity': 'warning', 'instance': 'n1:9100'},
                     {'alertname': 'NodeDown', 'severity': 'critical', 'instance': 'n2:9100'})
    assert rg.alerts_blocking(answer, 'Node.*', {'severity': 'critical'}) == \
        'gate prometheus: alert NodeDown firing (on n2:9100)'
    assert rg.alerts_blocking(answer, 'Node.*', {'team': 'gpu'}) is None


def test_an_unusable_prometheus_answer_is_a_clear_error():
    with pytest.raises(rg.GateQueryError, match="query failed: status 'error', bad_data: parse error"):
        rg.alerts_blocking({'status': 'error', 'errorType': 'bad_data', 'error': 'parse error'}, '.*')
    with pytest.raises(rg.GateQueryError, match="expected a vector result, got 'matrix'"):
        rg.alerts_blocking({'status': 'success', 'data': {'resultType': 'matrix', 'result': []}}, '.*')
    with pytest.raises(rg.GateQueryError, match='not a JSON object'):
        rg.alerts_blocking(['nope'], '.*')
