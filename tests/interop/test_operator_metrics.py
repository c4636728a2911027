# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The real NodeWright operator's /metrics and the series the collection pushes, for the same CR on the same cluster.

The collection rolls the interop CR out (three packages, a reboot, two compartments) with
``nodewright_metrics_pushgateway``; then the v0.15 operator (built from ../shared/upstream) starts, agrees that every
node is complete and exports its own series. One Prometheus scrapes both (the Pushgateway with ``honor_labels``, the
operator's plain-HTTP metrics endpoint): every query of the operator's dashboard, run once for each side (a ``job``
matcher added), answers the same rows and values; and the operator's exposition of the CR equals the module's, series
for series.
"""

from __future__ import annotations

import re
import urllib.request

import interop_support as support
import launcher
import operator_dashboard as dashboard
import pytest

SAMPLE = re.compile(r'^(skyhook_[a-z_]+)\{(.*)\} (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
IGNORED = ('job', 'instance')


def series_of(text, cr):
    """``{(name, labels): value}`` of the CR's ``skyhook_*`` samples in a text exposition (job / instance left out)."""
    out = {}
    for line in text.splitlines():
        match = SAMPLE.match(line)
        if not match:
            continue
        labels = frozenset((k, v) for k, v in LABEL.findall(match.group(2)) if k not in IGNORED)
        if ('skyhook_name', cr) in labels:
            out[(match.group(1), labels)] = float(match.group(3))
    return out


@pytest.fixture
def operator_port():
    return launcher.free_port()


@pytest.fixture
def stack(tmp_path, operator_port):
    made = dashboard.Stack(tmp_path, targets={'nodewright-operator': f'127.0.0.1:{operator_port}'})
    yield made
    made.stop()


def test_the_dashboard_reads_the_same_for_the_collections_push_and_the_operators_own_metrics(
        playbooks, operators, fleet, stack, operator_port, figures):
    group = fleet()
    group.create()
    result = support.apply(playbooks, group, nodewright_metrics_pushgateway=stack.pushgateway.url)
    assert result.rc == 0, result
    assert group.all_complete(support.VERSIONS)
    group.settle()

    operators.start(METRICS_PORT=f'127.0.0.1:{operator_port}')
    support.wait_until(lambda: group.cr_status().get('status') == 'complete', 60, 'the operator to report the CR complete')
    prom = stack.prometheus
    target = f'skyhook_node_target_count{{skyhook_name="{group.cr}"}}'
    for job in ('nodewright-operator', 'nodewright-bridge'):
        prom.wait_query(dashboard.on_job(target, job), lambda r: r and float(r[0]['value'][1]) == len(group.names),
                        what=f'the series of {job}')

    # series for series: the operator's exposition of the CR and the group the run pushed at its end
    with urllib.request.urlopen(f'http://127.0.0.1:{operator_port}/metrics', timeout=10) as resp:
        operator_text = resp.read().decode('utf-8')
    pushed = stack.pushgateway.metrics()
    theirs, mine = series_of(operator_text, group.cr), series_of(pushed, group.cr)
    figures(series_compared=len(theirs))
    assert theirs and set(name for name, dummy in theirs) == set(name for name, dummy in mine)
    assert {k: v for k, v in mine.items() if theirs.get(k) != v} == {}, {k: v for k, v in theirs.items() if mine.get(k) != v}
    assert set(mine) == set(theirs)

    # the dashboard: each query once per side
    queries = dashboard.queries('skyhook_', 'skyhook_name')
    differ = {}
    for panel, expr in sorted(queries.items()):
        expr = dashboard.templated(expr, group.cr)
        operator_rows = dashboard.shape(prom.query(dashboard.on_job(expr, 'nodewright-operator')))
        bridge_rows = dashboard.shape(prom.query(dashboard.on_job(expr, 'nodewright-bridge')))
        if operator_rows != bridge_rows:
            differ[panel] = (operator_rows, bridge_rows)
    figures(panels_compared=len(queries))
    assert differ == {}
