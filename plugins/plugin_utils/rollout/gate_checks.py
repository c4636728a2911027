# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""The checks before each batch, on the controller: maintenance windows, NotReady nodes, Prometheus alerts.

The decisions are module_utils/planning/rollout_gates.py's; this file asks the cluster (through
module_utils/api/kube.py) and Prometheus (its HTTP query API, with urllib) and waits. Time is
injected (``clock`` returns epoch seconds, ``sleep`` waits), so the waits are tested with a
fake clock.

Blocked gates fail closed: when Prometheus or the API server cannot be asked, the gate is
blocked with that reason and waited for like a firing alert (an outage may end). A refused
token or certificate does not fix itself: it stops the rollout at once.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import ssl
import time

from urllib.error import HTTPError, URLError
from urllib.parse import urlencode
from urllib.request import HTTPRedirectHandler, HTTPSHandler, Request, build_opener

from ansible_collections.nodewright.bridge.plugins.module_utils.model import label_selector as ls
from ansible_collections.nodewright.bridge.plugins.module_utils.planning import rollout_gates
from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube as kube_api
from ansible_collections.nodewright.bridge.plugins.module_utils.api.kube import KubeError

# Seconds between two looks at the clock while waiting for a window (each look reports on_wait).
WINDOW_POLL_INTERVAL = 60


class _NoRedirect(HTTPRedirectHandler):
    """A redirect would carry the bearer token to wherever it points: refuse it, name the target."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


def _ssl_context(prometheus):
    try:
        context = ssl.create_default_context(cafile=prometheus.ca_path)
    except (OSError, ssl.SSLError) as exc:
        raise rollout_gates.GateQueryError('the Prometheus gate: cannot read the CA file %s (ca_path): %s'
                                           % (prometheus.ca_path, exc), permanent=True)
    if not prometheus.validate_certs:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context


def _http_error(where, exc):
    try:
        body = json.loads(exc.read().decode('utf-8', 'replace'))
    except (ValueError, OSError):
        body = {}
    detail = ''
    if isinstance(body, dict) and body.get('error'):
        detail = ': %s: %s' % (body.get('errorType') or 'error', body['error'])
    if exc.code in (401, 403):
        return rollout_gates.GateQueryError(
            '%s: HTTP %d %s: an authentication problem, Prometheus (or the proxy in front of it) refused the '
            'request; check nodewright_gates.prometheus.bearer_token%s' % (where, exc.code, exc.reason, detail),
            permanent=True)
    if 300 <= exc.code < 400:
        return rollout_gates.GateQueryError('%s: HTTP %d redirect to %s; give that URL as nodewright_gates.prometheus.url'
                                            % (where, exc.code, exc.headers.get('Location')), permanent=True)
    # 5xx may pass (Prometheus restarting, a proxy without a backend); 4xx are the query's or the URL's fault.
    return rollout_gates.GateQueryError('%s: HTTP %d %s%s' % (where, exc.code, exc.reason, detail), permanent=exc.code < 500)


def _url_error(where, exc):
    reason = getattr(exc, 'reason', exc)
    if isinstance(reason, ssl.SSLCertVerificationError):
        return rollout_gates.GateQueryError('%s: TLS certificate verification failed (%s); give the CA that signed the '
                                            "server's certificate as nodewright_gates.prometheus.ca_path"
                                            % (where, getattr(reason, "verify_message", None) or reason), permanent=True)
    if isinstance(reason, ssl.SSLError):
        return rollout_gates.GateQueryError('%s: TLS error: %s' % (where, reason), permanent=True)
    return rollout_gates.GateQueryError('%s: %s' % (where, reason))


def query_firing_alerts(prometheus, opener=None):
    """The JSON answer of ``GET <url>/api/v1/query?query=ALERTS{alertstate="firing"}``.

    ``prometheus``: module_utils' PrometheusSettings. GateQueryError with ``the Prometheus gate: cannot
    query <url>/api/v1/query: <reason>``; ``permanent`` for refused credentials and certificates.
    """
    endpoint = prometheus.url + '/api/v1/query'
    where = 'the Prometheus gate: cannot query %s' % endpoint
    headers = {'Accept': 'application/json'}
    if prometheus.bearer_token:
        headers['Authorization'] = 'Bearer %s' % prometheus.bearer_token
    request = Request(endpoint + '?' + urlencode({'query': rollout_gates.ALERTS_QUERY}), headers=headers)
    if opener is None:
        handlers = [_NoRedirect()]
        if endpoint.startswith('https:'):
            handlers.append(HTTPSHandler(context=_ssl_context(prometheus)))
        opener = build_opener(*handlers)
    try:
        with opener.open(request, timeout=prometheus.timeout) as resp:
            text = resp.read().decode('utf-8', 'replace')
    except HTTPError as exc:
        raise _http_error(where, exc)
    except URLError as exc:
        raise _url_error(where, exc)
    except OSError as exc:  # a read timeout (socket.timeout) after the connection was made
        raise rollout_gates.GateQueryError('%s: %s' % (where, exc or type(exc).__name__))
    try:
        return json.loads(text)
    except ValueError:
        raise rollout_gates.GateQueryError('%s: the answer is not JSON (is the URL Prometheus?): %r' % (where, text[:200]))


def nodes_in_selection(kube, label_selector=None):
    """The node dicts the API lists for ``label_selector`` (a kubectl string, a LabelSelector dict or None: all)."""
    if isinstance(label_selector, (dict, list)):
        label_selector = ls.to_query(ls.normalize_selector(label_selector, 'selection'))
    return kube.list_nodes(label_selector=label_selector or None).get('items') or []


def gates_for(settings, connection, label_selector=None, names=None, session=None):
    """The BatchGates of ``settings`` (module_utils' GateSettings) for a rollout's selection, or None when no gate is set.

    ``connection``: the cluster modules' connection options, for the NotReady gate's listing (one client,
    made when the gate is first checked, with ``session``: the kube.KubeSession of the caller's clients, None: its
    own); ``label_selector``: the CR's node selection, else ``names``.
    """
    if settings is None or not settings.enabled:
        return None
    return BatchGates(settings, label_selector=label_selector, names=None if label_selector else names,
                      kube_factory=lambda: kube_api.Kube(kube_api.connection_params(dict(connection)), session=session))


class BatchGates(object):
    """The gates of ``nodewright_gates`` (module_utils' GateSettings) for one rollout's selection.

    ``kube_factory``: a callable returning a module_utils.api.kube.Kube, called once when the NotReady gate is
    first checked; ``label_selector``: the CR's node selection; ``query``: how Prometheus is asked
    (query_firing_alerts, replaced in tests).
    """

    def __init__(self, settings, kube_factory=None, label_selector=None, query=query_firing_alerts, names=None):
        self.settings = settings
        self.names = None if names is None else set(names)  # without a selector: the nodes of these names
        self.kube_factory = kube_factory
        self.label_selector = label_selector
        self.query = query
        self._kube = None

    @property
    def enabled(self):
        return self.settings.enabled

    def _not_ready(self, rebooting):
        try:
            if self._kube is None:
                self._kube = self.kube_factory()
            nodes = nodes_in_selection(self._kube, self.label_selector)
            if self.names is not None:
                nodes = [n for n in nodes if (n.get('metadata') or {}).get('name') in self.names]
        except KubeError as exc:
            return 'gate max_not_ready: cannot list the nodes: %s' % exc, exc.status in (401, 403)
        return rollout_gates.not_ready_blocking(nodes, None, rebooting, self.settings.max_not_ready), False

    def _alerts(self):
        prometheus = self.settings.prometheus
        try:
            answer = self.query(prometheus)
            return rollout_gates.alerts_blocking(answer, prometheus.alert_regex, prometheus.alert_labels), False
        except rollout_gates.GateQueryError as exc:
            return 'gate prometheus: %s' % exc, exc.permanent

    def probe(self, rebooting=()):
        """``(reason, permanent)``: why a batch may not start now (None: it may), and whether waiting is useless."""
        results = []
        if self.settings.max_not_ready is not None:
            results.append(self._not_ready(set(rebooting or ())))
        if self.settings.prometheus is not None:
            results.append(self._alerts())
        reasons = [reason for reason, _permanent in results if reason]
        if not reasons:
            return None, False
        return '; '.join(reasons), any(permanent for reason, permanent in results if reason)

    def wait(self, clock=time.time, sleep=time.sleep, on_wait=None, rebooting=()):
        """Poll until every gate is clear (None) or ``timeout`` has passed (the stop reason).

        ``rebooting``: names, or a callable returning them at each poll (nodes still in flight);
        ``on_wait(message)`` is called at every poll that finds a gate blocked.
        """
        started = clock()
        timeout, poll = self.settings.timeout, self.settings.poll_interval
        while True:
            reason, permanent = self.probe(rebooting() if callable(rebooting) else rebooting)
            if reason is None:
                return None
            waited = clock() - started
            if permanent:
                return '%s (not waited for: this does not pass by itself)' % reason
            if waited >= timeout:
                return '%s (waited %d s)' % (reason, round(waited))
            if on_wait is not None:
                on_wait('before the next batch: %s; waiting (%d s of %d s, nodewright_gates.timeout)'
                        % (reason, round(waited), timeout))
            sleep(min(poll, timeout - waited))


class StartLook(object):
    """The maintenance windows and gates (each None when off) as one rollout looks at them without waiting: now
    (``block_now``), at most once per poll interval while its hosts run (``look``), once in check mode (``look_once``).
    What waits before a batch is ``wait_before_batch``."""

    def __init__(self, windows, gates, clock=time.time):
        self.windows = windows if windows is not None and windows.enabled else None
        self.gates = gates if gates is not None and gates.enabled else None
        self.clock = clock
        self.blocked = None  # why they blocked when last looked ('': they did not; None: not looked yet)
        self.probed = 0.0

    @property
    def enabled(self):
        return self.windows is not None or self.gates is not None

    def block_now(self, rebooting):
        """Why a start is blocked right now (None: it is not); ``rebooting()``: the nodes the NotReady gate skips."""
        reason = rollout_gates.window_block(self.windows, self.clock()) if self.windows is not None else None
        if reason is None and self.gates is not None:
            reason = self.gates.probe(rebooting())[0]
        return reason

    def look(self, rebooting, on_block):
        """While hosts run: look again once per poll interval; True when nothing blocks. ``on_block(reason)`` is told
        each new reason."""
        poll = self.gates.settings.poll_interval if self.gates is not None else 10
        if self.blocked is None or self.clock() - self.probed >= poll:
            self.probed = self.clock()
            reason = self.block_now(rebooting)
            if reason is not None and reason != self.blocked:
                on_block(reason)
            self.blocked = reason or ''
        return not self.blocked

    def look_once(self, rebooting):
        """Check mode: why a real run would wait, the first time only (None after that, or when nothing blocks)."""
        if self.blocked is not None:
            return None
        reason = self.block_now(rebooting)
        self.blocked = reason or ''
        return reason


def wait_for_window(settings, clock=time.time, sleep=time.sleep, on_wait=None, poll_interval=WINDOW_POLL_INTERVAL):
    """Until a maintenance window is open: None then, else the stop reason.

    ``settings``: module_utils' WindowSettings. ``stop`` stops at once outside a window; ``wait`` waits
    up to ``timeout`` seconds, looking every ``poll_interval`` seconds (``on_wait(message)`` each time),
    and stops at once when the next window opens later than the timeout allows.
    """
    started = clock()
    while True:
        now = clock()
        reason = rollout_gates.window_block(settings, now)
        if reason is None:
            return None
        if settings.action == 'stop':
            return '%s (nodewright_maintenance_action: stop)' % reason
        opening = rollout_gates.next_opening(settings.windows, now)
        waited = now - started
        if opening is None or opening.timestamp() > started + settings.timeout:
            return '%s: later than nodewright_maintenance_timeout (%d s) allows%s' % (
                reason, settings.timeout, ' (waited %d s)' % round(waited) if waited >= 1 else '')
        if on_wait is not None:
            on_wait('before the next batch: %s; waiting (%d s of %d s, nodewright_maintenance_timeout)'
                    % (reason, round(waited), settings.timeout))
        sleep(max(0.0, min(poll_interval, opening.timestamp() - now)))


def wait_before_batch(windows, gates, clock=time.time, sleep=time.sleep, on_wait=None, rebooting=()):
    """Wait for a maintenance window, then for the gates: ``(reason, deferred)``, ``(None, False)`` when a batch may start.

    ``windows``: WindowSettings (or None: no windows); ``gates``: BatchGates (or None). ``deferred`` is
    True when no window opens in time (the rest of the rollout waits for a later run, a clean stop)
    and False when a gate stayed blocked (the rollout stops). When the window closes while the gates
    are waited for, the next window is waited for again (a batch starts only inside one).
    """
    while True:
        if windows is not None:
            stop = wait_for_window(windows, clock, sleep, on_wait)
            if stop is not None:
                return stop, True
        if gates is not None and gates.enabled:
            stop = gates.wait(clock, sleep, on_wait, rebooting)
            if stop is not None:
                return stop, False
        if windows is None or rollout_gates.window_open(windows.windows, clock()):
            return None, False
