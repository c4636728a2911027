# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""Maintenance windows and the gates checked before each batch: parsing and decisions, no I/O.

Play variables (values arrive templated):

* ``nodewright_maintenance_windows``: a list of ``{days, start, end, timezone}``; a batch starts only
  while one of them is open (unset or ``[]``: always open). A batch that has started finishes.
* ``nodewright_maintenance_action``: ``wait`` (default) or ``stop`` when a batch is due outside every window.
* ``nodewright_maintenance_timeout``: the longest wait for a window, in seconds (default 86400).
* ``nodewright_gates``: ``{max_not_ready, prometheus: {...}, timeout, poll_interval}``.

Every problem is collected and raised together as GateConfigError, each prefixed with the variable
and the field path inside it (``nodewright_maintenance_windows[1].start: ...``), in the style of
plugin_utils/rollout/rollout_config.py's RolloutConfigError, which extends its errors with these.

The I/O (listing nodes, querying Prometheus, sleeping) is plugin_utils/rollout/gate_checks.py.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import re

from ansible_collections.nodewright.bridge.plugins.module_utils.model import label_selector as ls
from ansible_collections.nodewright.bridge.plugins.module_utils.contract.node_conditions import is_ready

try:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError
    HAS_ZONEINFO = True
except ImportError:  # Python < 3.9: only UTC windows work (ansible-test sanity imports this file there too)
    ZoneInfo = ZoneInfoNotFoundError = None
    HAS_ZONEINFO = False

VAR_WINDOWS = 'nodewright_maintenance_windows'
VAR_WINDOW_ACTION = 'nodewright_maintenance_action'
VAR_WINDOW_TIMEOUT = 'nodewright_maintenance_timeout'
VAR_GATES = 'nodewright_gates'
PLAY_VARS = (VAR_WINDOWS, VAR_WINDOW_ACTION, VAR_WINDOW_TIMEOUT, VAR_GATES)

WINDOW_ACTIONS = ('wait', 'stop')
# A day: every daily window opens within 24 hours of any moment, so a run started outside one
# reaches the next; a weekly window needs a longer timeout (the wait message says when it opens).
DEFAULT_WINDOW_TIMEOUT = 86400
# Half an hour: longer than an alert's usual ``for:`` and resolve delay or a node's reboot, so a
# transient does not stop the rollout; short enough that a real incident stops it while people watch.
DEFAULT_GATE_TIMEOUT = 1800
DEFAULT_POLL_INTERVAL = 10
DEFAULT_PROMETHEUS_TIMEOUT = 10
DAYS = ('mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun')
DAY_NAMES = ('monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday')
WINDOW_KEYS = ('days', 'start', 'end', 'timezone')
GATE_KEYS = ('max_not_ready', 'prometheus', 'timeout', 'poll_interval')
PROMETHEUS_KEYS = ('url', 'bearer_token', 'ca_path', 'validate_certs', 'alert_regex', 'alert_labels', 'timeout')
_TIME = re.compile(r'^([01][0-9]|2[0-3]):([0-5][0-9])\Z')
_URL = re.compile(r'^https?://[^/?#\s]+[^\s]*\Z')
ALERTS_QUERY = 'ALERTS{alertstate="firing"}'
# How many names a reason lists before "and N more".
MAX_NAMES = 10


class GateConfigError(ValueError):
    """The windows or gates variables are unusable; ``errors`` lists every problem."""

    def __init__(self, errors):
        self.errors = list(errors)
        super(GateConfigError, self).__init__(
            'invalid rollout configuration (%d problem%s):\n  - %s' % (
                len(self.errors), '' if len(self.errors) == 1 else 's', '\n  - '.join(self.errors)))


class GateQueryError(ValueError):
    """A gate could not be asked (Prometheus' answer is unusable, ...); ``permanent``: waiting will not fix it."""

    def __init__(self, message, permanent=False):
        super(GateQueryError, self).__init__(message)
        self.permanent = permanent


def _plain(value):
    """Builtin copies of ansible-core's tagged str/int/dict/list subclasses."""
    if isinstance(value, dict):
        return dict((_plain(k), _plain(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    for kind in (bool, int, float, str):
        if isinstance(value, kind):
            return kind(value)
    return value


def _names(names):
    names = list(names)
    text = ', '.join(names[:MAX_NAMES])
    if len(names) > MAX_NAMES:
        text += ' and %d more' % (len(names) - MAX_NAMES)
    return text


def _unknown_keys(value, known, where, errors):
    unknown = sorted(set(value) - set(known), key=str)
    if unknown:
        errors.append('%s: unknown keys %s (known: %s)' % (where, ', '.join(str(k) for k in unknown), ', '.join(known)))


def _seconds(value, where, default, errors, minimum=1):
    """An int >= ``minimum`` of seconds (``default`` when unset)."""
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        errors.append('%s: must be a whole number of seconds >= %d, got %r' % (where, minimum, value))
        return default
    return value


# ---------------------------------------------------------------------------- windows

UTC = datetime.timezone.utc


class Window(object):
    """One maintenance window: weekdays (0 = Monday), start and end in minutes after local midnight.

    ``end <= start`` is an overnight window: it belongs to the day it starts on (a Monday 22:00-04:00
    window runs until Tuesday 04:00). ``end`` may be 24:00 (1440), the end of the day.
    """

    def __init__(self, days, start, end, timezone='UTC', tz=UTC):
        self.days = frozenset(days)
        self.start = start
        self.end = end
        self.timezone = timezone
        self.tz = tz

    @property
    def overnight(self):
        return self.end <= self.start

    def __repr__(self):
        return 'Window(%s)' % describe(self)


def _hhmm(minutes):
    return '%02d:%02d' % divmod(minutes, 60)


def _day_list(days):
    if len(days) == 7:
        return 'every day'
    ordered = sorted(days)
    # Runs of consecutive days as ranges: mon-fri rather than mon,tue,wed,thu,fri.
    runs, run = [], [ordered[0]]
    for day in ordered[1:]:
        if day == run[-1] + 1:
            run.append(day)
        else:
            runs.append(run)
            run = [day]
    runs.append(run)
    return ','.join(DAYS[r[0]] if len(r) == 1 else '%s-%s' % (DAYS[r[0]], DAYS[r[-1]]) for r in runs)


def describe(window):
    """``mon-fri 22:00-04:00 Europe/Berlin`` (``(overnight)`` is implied by end <= start)."""
    return '%s %s-%s %s' % (_day_list(window.days), _hhmm(window.start), _hhmm(window.end), window.timezone)


def _parse_day(entry, where, errors):
    """Weekday numbers of ``mon``, ``Monday`` or a range ``mon-fri`` (``fri-mon`` wraps over the weekend)."""
    def one(name):
        name = name.strip().lower()
        for names in (DAYS, DAY_NAMES):
            if name in names:
                return names.index(name)
        return None
    if not isinstance(entry, str):
        errors.append('%s: must be a day name (mon, tue, ... or monday, ...), got %r' % (where, entry))
        return []
    ends = [one(part) for part in entry.split('-')] if '-' in entry else [one(entry)]
    if len(ends) > 2 or None in ends:
        errors.append('%s: %r is not a day (mon, tue, wed, thu, fri, sat, sun, the full names, or a range mon-fri)'
                      % (where, entry))
        return []
    if len(ends) == 1:
        return ends
    first, last = ends
    return [(first + i) % 7 for i in range((last - first) % 7 + 1)]


def _parse_days(value, where, errors):
    if value is None:
        return list(range(7))
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value:
        errors.append('%s: must be a non-empty list of days (leave it out for every day), got %r' % (where, value))
        return []
    days = []
    for index, entry in enumerate(value):
        days.extend(_parse_day(entry, '%s[%d]' % (where, index), errors))
    return days


def _parse_time(value, where, errors, allow_24=False):
    """Minutes after midnight of ``'HH:MM'``."""
    if isinstance(value, str) and allow_24 and value.strip() == '24:00':
        return 1440
    match = _TIME.match(value.strip()) if isinstance(value, str) else None
    if match:
        return int(match.group(1)) * 60 + int(match.group(2))
    hint = ''
    if isinstance(value, int) and not isinstance(value, bool):
        # YAML 1.1 (PyYAML, so Ansible) reads an unquoted 22:00 as the base-60 number 1320.
        hint = ' (an unquoted 22:00 is read by YAML as the number 1320: quote the time)'
    errors.append("%s: must be a time 'HH:MM' (00:00 to 23:59%s), got %r%s"
                  % (where, ', or 24:00' if allow_24 else '', value, hint))
    return None


def _parse_timezone(value, where, errors):
    if value is None or value == 'UTC':
        return 'UTC', UTC
    if not isinstance(value, str) or not value:
        errors.append('%s: must be an IANA time zone name such as Europe/Berlin, got %r' % (where, value))
        return 'UTC', UTC
    if not HAS_ZONEINFO:
        errors.append('%s: %s needs the zoneinfo module (Python 3.9 or later on the controller); '
                      'this Python has only UTC' % (where, value))
        return 'UTC', UTC
    try:
        return value, ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError, OSError) as exc:
        errors.append('%s: %r is not an IANA time zone known to this controller (%s; a system without '
                      'a time zone database needs the tzdata package)' % (where, value, exc))
        return 'UTC', UTC


def _parse_window(value, where, errors):
    if not isinstance(value, dict):
        errors.append('%s: must be a mapping with start, end and optionally days and timezone, got %s'
                      % (where, type(value).__name__))
        return None
    before = len(errors)
    _unknown_keys(value, WINDOW_KEYS, where, errors)
    days = _parse_days(value.get('days'), where + '.days', errors)
    start = end = None
    for key in ('start', 'end'):
        if value.get(key) is None:
            errors.append("%s.%s: is required ('HH:MM')" % (where, key))
    if value.get('start') is not None:
        start = _parse_time(value['start'], where + '.start', errors)
    if value.get('end') is not None:
        end = _parse_time(value['end'], where + '.end', errors, allow_24=True)
    if start is not None and start == end:
        errors.append('%s: start and end are both %s: a window must have a length (for the whole day: '
                      "start '00:00', end '24:00')" % (where, _hhmm(start)))
    name, tz = _parse_timezone(value.get('timezone'), where + '.timezone', errors)
    if len(errors) > before:
        return None
    return Window(days, start, end, name, tz)


def parse_windows(value):
    """The windows of ``nodewright_maintenance_windows`` (``[]`` when unset: no restriction)."""
    if value is None:
        return []
    value = _plain(value)
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        raise GateConfigError(['%s: must be a list of windows ({days, start, end, timezone}), got %s'
                               % (VAR_WINDOWS, type(value).__name__)])
    errors, windows = [], []
    for index, entry in enumerate(value):
        window = _parse_window(entry, '%s[%d]' % (VAR_WINDOWS, index), errors)
        if window is not None:
            windows.append(window)
    if errors:
        raise GateConfigError(errors)
    return windows


def as_datetime(now):
    """An aware datetime of ``now`` (an aware datetime or epoch seconds)."""
    if isinstance(now, datetime.datetime):
        if now.tzinfo is None or now.utcoffset() is None:
            raise ValueError('a naive datetime has no time zone; pass an aware datetime or epoch seconds')
        return now
    return datetime.datetime.fromtimestamp(now, UTC)


def _open(window, now):
    """Whether ``window`` is open at the aware datetime ``now``, on the local wall clock."""
    local = now.astimezone(window.tz)
    minute = local.hour * 60 + local.minute + local.second / 60.0
    today = local.weekday()
    if not window.overnight:
        return today in window.days and window.start <= minute < window.end
    return (today in window.days and minute >= window.start) \
        or ((today - 1) % 7 in window.days and minute < window.end)


def window_open(windows, now):
    """True when one of ``windows`` is open at ``now`` (aware datetime or epoch seconds); no windows: True.

    Times are the window's local wall clock (zoneinfo), also on the days daylight saving time
    changes: on the day clocks go forward, local times in the skipped hour never happen, so a window
    02:30-03:30 in Europe/Berlin opens at 03:00 (the first moment the wall clock is past 02:30) and a
    window entirely inside the skipped hour does not open that day; on the day clocks go back, the
    repeated hour happens twice, so a window 02:00-02:30 is open in both (an hour apart) and a window
    01:00-02:30 is open 01:00-02:30, closed for half an hour, then open again 02:00-02:30.
    """
    if not windows:
        return True
    now = as_datetime(now)
    return any(_open(window, now) for window in windows)


def _occurrence_start(window, day, now):
    """The first moment (UTC) at or after ``now`` at which ``window``'s occurrence starting on the local
    date ``day`` is open, or None (it is over, or it falls into a skipped hour of a DST change)."""
    naive = datetime.datetime.combine(day, datetime.time(*divmod(window.start, 60)))
    # fold=0 and fold=1 bracket the real start: equal on ordinary days, an hour apart around a change.
    low, high = sorted(naive.replace(tzinfo=window.tz, fold=fold).astimezone(UTC) for fold in (0, 1))

    def reached(moment):  # the wall clock shows the start (or later) on that date
        local = moment.astimezone(window.tz)
        return (local.date(), local.hour * 60 + local.minute) >= (day, window.start)
    if not reached(low):
        # A start in a skipped hour: the wall clock passes it at the change itself; bisect to the second.
        while (high - low).total_seconds() > 1:
            middle = low + (high - low) / 2
            if reached(middle):
                high = middle
            else:
                low = middle
        low = high.replace(microsecond=0)
    low = max(low, now)
    return low if _open(window, low) else None


def next_window(windows, now):
    """``(when, window)``: the next moment (aware, UTC) a window is open at or after ``now``, or ``(None, None)``.

    ``when`` is ``now`` when a window is open already.
    """
    now = as_datetime(now).astimezone(UTC)
    best = (None, None)
    for window in windows:
        if _open(window, now):
            return now, window
        today = now.astimezone(window.tz).date()
        for offset in range(8):
            day = today + datetime.timedelta(days=offset)
            if day.weekday() not in window.days:
                continue
            when = _occurrence_start(window, day, now)
            if when is not None and when >= now:
                if best[0] is None or when < best[0]:
                    best = (when, window)
                break
    return best


def next_opening(windows, now):
    """When the next window opens (an aware UTC datetime; ``now`` if one is open), None without any."""
    return next_window(windows, now)[0]


def _duration(seconds):
    seconds = int(round(seconds))
    if seconds < 120:
        return '%d s' % seconds
    hours, minutes = divmod(seconds // 60, 60)
    days, hours = divmod(hours, 24)
    parts = (('%d d' % days) if days else '', ('%d h' % hours) if hours else '', ('%d min' % minutes) if minutes else '')
    return ' '.join(p for p in parts if p)


def window_block(settings, now):
    """None when a batch may start at ``now``, else why not: ``outside the maintenance windows (...); the next
    opens in 2 h 13 min (mon-fri 22:00-04:00 Europe/Berlin, at 2026-06-01 22:00 CEST)``."""
    if not settings.windows:
        return None
    now = as_datetime(now).astimezone(UTC)
    when, window = next_window(settings.windows, now)
    if when is not None and when <= now:
        return None
    listed = '; '.join(describe(w) for w in settings.windows)
    if when is None:
        return 'outside the maintenance windows (%s); none opens in the next 8 days' % listed
    local = when.astimezone(window.tz)
    return 'outside the maintenance windows (%s); the next opens in %s (%s, at %s)' % (
        listed, _duration((when - now).total_seconds()), describe(window), local.strftime('%Y-%m-%d %H:%M %Z'))


class WindowSettings(object):
    """``windows`` (list of Window, empty: always open), ``action`` (wait | stop), ``timeout`` (seconds)."""

    def __init__(self, windows=(), action='wait', timeout=DEFAULT_WINDOW_TIMEOUT):
        self.windows = list(windows)
        self.action = action
        self.timeout = timeout

    @property
    def enabled(self):
        return bool(self.windows)


def parse_window_settings(play_vars):
    """WindowSettings from the play variables; GateConfigError lists every problem."""
    errors, windows = [], []
    try:
        windows = parse_windows(play_vars.get(VAR_WINDOWS))
    except GateConfigError as exc:
        errors.extend(exc.errors)
    action = _plain(play_vars.get(VAR_WINDOW_ACTION))
    if action is None:
        action = 'wait'
    if action not in WINDOW_ACTIONS:
        errors.append('%s: must be one of %s, got %r' % (VAR_WINDOW_ACTION, ', '.join(WINDOW_ACTIONS), action))
    timeout = _seconds(_plain(play_vars.get(VAR_WINDOW_TIMEOUT)), VAR_WINDOW_TIMEOUT, DEFAULT_WINDOW_TIMEOUT, errors)
    if errors:
        raise GateConfigError(errors)
    return WindowSettings(windows, action, timeout)


# ---------------------------------------------------------------------------- gates

class PrometheusSettings(object):
    """The alert gate: where Prometheus is and which firing alerts block a batch.

    ``alert_regex`` and the values of ``alert_labels`` are compiled patterns, matched in full
    (re.fullmatch) like PromQL's ``=~``: ``GPU.*`` matches GPUXidErrors, ``GPU`` alone does not.
    """

    def __init__(self, url, alert_regex, bearer_token=None, ca_path=None, validate_certs=True,
                 alert_labels=None, timeout=DEFAULT_PROMETHEUS_TIMEOUT):
        self.url = url.rstrip('/')
        self.alert_regex = alert_regex
        self.bearer_token = bearer_token
        self.ca_path = ca_path
        self.validate_certs = validate_certs
        self.alert_labels = dict(alert_labels or {})
        self.timeout = timeout

    def __repr__(self):  # never the token
        return 'PrometheusSettings(url=%r, alert_regex=%r)' % (self.url, self.alert_regex.pattern)


class GateSettings(object):
    """``max_not_ready`` (int or None: gate off), ``prometheus`` (PrometheusSettings or None), ``timeout``
    (seconds a blocked gate is waited for before the rollout stops), ``poll_interval`` (seconds)."""

    def __init__(self, max_not_ready=None, prometheus=None, timeout=DEFAULT_GATE_TIMEOUT,
                 poll_interval=DEFAULT_POLL_INTERVAL):
        self.max_not_ready = max_not_ready
        self.prometheus = prometheus
        self.timeout = timeout
        self.poll_interval = poll_interval

    @property
    def enabled(self):
        return self.max_not_ready is not None or self.prometheus is not None


def _regex(value, where, errors):
    if not isinstance(value, str) or not value:
        errors.append('%s: must be a non-empty regular expression (Python re, matched in full), got %r' % (where, value))
        return None
    try:
        return re.compile(value)
    except re.error as exc:
        errors.append('%s: %r is not a valid regular expression: %s' % (where, value, exc))
        return None


def _optional_string(value, where, errors):
    if value is not None and (not isinstance(value, str) or not value):
        errors.append('%s: must be a non-empty string, got %s' % (where, type(value).__name__))
        return None
    return value


def _parse_alert_labels(value, where, errors):
    if value is None:
        return {}
    if not isinstance(value, dict) or not value:
        errors.append('%s: must be a mapping of label name to regular expression, got %r' % (where, value))
        return {}
    return dict((str(key), _regex(pattern, '%s.%s' % (where, key), errors)) for key, pattern in value.items())


def _parse_prometheus(value, where, errors):
    if not isinstance(value, dict):
        errors.append('%s: must be a mapping with url and alert_regex, got %s' % (where, type(value).__name__))
        return None
    before = len(errors)
    _unknown_keys(value, PROMETHEUS_KEYS, where, errors)
    url = value.get('url')
    if not isinstance(url, str) or not _URL.match(url):
        errors.append('%s.url: must be an http:// or https:// URL of Prometheus (e.g. https://prometheus.example:9090), '
                      'got %r' % (where, url))
    if value.get('alert_regex') is None:
        errors.append('%s.alert_regex: is required (the alert names that block a batch; .* for any alert)' % where)
        regex = None
    else:
        regex = _regex(value['alert_regex'], where + '.alert_regex', errors)
    labels = _parse_alert_labels(value.get('alert_labels'), where + '.alert_labels', errors)
    token = _optional_string(value.get('bearer_token'), where + '.bearer_token', errors)
    ca_path = _optional_string(value.get('ca_path'), where + '.ca_path', errors)
    validate = value.get('validate_certs', True)
    if not isinstance(validate, bool):
        errors.append('%s.validate_certs: must be true or false, got %r' % (where, validate))
    timeout = _seconds(value.get('timeout'), where + '.timeout', DEFAULT_PROMETHEUS_TIMEOUT, errors)
    if len(errors) > before:
        return None
    return PrometheusSettings(url, regex, token, ca_path, validate, labels, timeout)


def parse_gates(value):
    """GateSettings of ``nodewright_gates`` (every gate off when unset); GateConfigError lists every problem."""
    if value is None:
        return GateSettings()
    value = _plain(value)
    if not isinstance(value, dict):
        raise GateConfigError(['%s: must be a mapping ({max_not_ready, prometheus, timeout, poll_interval}), got %s'
                               % (VAR_GATES, type(value).__name__)])
    errors = []
    _unknown_keys(value, GATE_KEYS, VAR_GATES, errors)
    max_not_ready = value.get('max_not_ready')
    whole = isinstance(max_not_ready, int) and not isinstance(max_not_ready, bool)
    if max_not_ready is not None and (not whole or max_not_ready < 0):
        errors.append('%s.max_not_ready: must be a whole number >= 0, got %r' % (VAR_GATES, max_not_ready))
    prometheus = None
    if value.get('prometheus') is not None:
        prometheus = _parse_prometheus(value['prometheus'], VAR_GATES + '.prometheus', errors)
    timeout = _seconds(value.get('timeout'), VAR_GATES + '.timeout', DEFAULT_GATE_TIMEOUT, errors)
    poll = _seconds(value.get('poll_interval'), VAR_GATES + '.poll_interval', DEFAULT_POLL_INTERVAL, errors)
    if errors:
        raise GateConfigError(errors)
    return GateSettings(max_not_ready, prometheus, timeout, poll)


def parse_play_vars(play_vars):
    """``(WindowSettings, GateSettings)`` from the play variables; one GateConfigError with every problem."""
    errors = []
    windows = gates = None
    try:
        windows = parse_window_settings(play_vars)
    except GateConfigError as exc:
        errors.extend(exc.errors)
    try:
        gates = parse_gates(play_vars.get(VAR_GATES))
    except GateConfigError as exc:
        errors.extend(exc.errors)
    if errors:
        raise GateConfigError(errors)
    return windows, gates


# ---------------------------------------------------------------------------- decisions

def _node_name(node):
    return (node.get('metadata') or {}).get('name') or '?'


def not_ready_blocking(nodes, selection, rebooting, max_not_ready):
    """Why the NotReady gate blocks, or None.

    ``nodes``: node dicts as the API returns them; ``selection``: a label selector (dict, kubectl string
    or None for every node given) of the CR's nodes; ``rebooting``: names of the nodes this rollout is
    taking down itself (draining, rebooting), which do not count. Blocks when more than ``max_not_ready``
    of the others are NotReady (no Ready condition True: False, Unknown or not reported yet).
    """
    if max_not_ready is None:
        return None
    selector = ls.normalize_selector(selection, 'selection') if selection is not None else None
    rebooting = set(rebooting or ())
    down, excused = [], []
    for node in nodes:
        if selector is not None and not ls.selector_matches(selector, (node.get('metadata') or {}).get('labels') or {}):
            continue
        if is_ready(node):
            continue
        (excused if _node_name(node) in rebooting else down).append(_node_name(node))
    if len(down) <= max_not_ready:
        return None
    reason = 'gate max_not_ready: %d node%s NotReady in the selection (%s), more than the %d allowed' % (
        len(down), '' if len(down) == 1 else 's', _names(sorted(down)), max_not_ready)
    if excused:
        reason += ' (not counted: %s, taken down by this rollout)' % _names(sorted(excused))
    return reason


def firing_alerts(query_result):
    """The label sets of the firing alerts in the JSON of ``/api/v1/query?query=ALERTS{alertstate="firing"}``.

    GateQueryError when the answer is not a successful vector (``status: error`` names Prometheus' error).
    """
    if not isinstance(query_result, dict):
        raise GateQueryError('the Prometheus gate: the query answer is not a JSON object')
    if query_result.get('status') != 'success':
        raise GateQueryError('the Prometheus gate: the query failed: status %r, %s: %s' % (
            query_result.get('status'), query_result.get('errorType') or 'no error type',
            query_result.get('error') or 'no error message'))
    data = query_result.get('data') or {}
    if data.get('resultType') != 'vector' or not isinstance(data.get('result'), list):
        raise GateQueryError('the Prometheus gate: expected a vector result, got %r' % data.get('resultType'))
    return [series.get('metric') or {} for series in data['result'] if isinstance(series, dict)]


def alerts_blocking(query_result, regex, labels=None):
    """Why the alert gate blocks, or None: ``gate prometheus: alert GPUXidErrors firing (on gpu-3)``.

    ``regex`` (a pattern or a string) must match the alertname in full, like PromQL's ``=~``; ``labels``
    (label name -> pattern) narrow it further, each in full too (a missing label is ''). The alertstate
    filter is the query's (pending alerts do not block).
    """
    pattern = re.compile(regex) if isinstance(regex, str) else regex
    label_patterns = dict((k, re.compile(v) if isinstance(v, str) else v) for k, v in (labels or {}).items())
    matched = {}
    for metric in firing_alerts(query_result):
        if metric.get('alertstate', 'firing') != 'firing':
            continue
        name = metric.get('alertname') or ''
        if not pattern.fullmatch(name):
            continue
        if any(not p.fullmatch(str(metric.get(k, ''))) for k, p in label_patterns.items()):
            continue
        where = metric.get('node') or metric.get('instance')
        places = matched.setdefault(name, set())
        if where:
            places.add(where)
    if not matched:
        return None
    parts = []
    for name in sorted(matched):
        places = sorted(matched[name])
        parts.append('%s firing%s' % (name, ' (on %s)' % _names(places) if places else ''))
    return 'gate prometheus: alert%s %s' % ('' if len(parts) == 1 else 's', '; '.join(parts))
