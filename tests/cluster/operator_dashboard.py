# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The NodeWright operator's Grafana dashboard as queries, and a Pushgateway with a Prometheus that scrapes it, for the
metrics tests (tests/kube/test_rollout_metrics.py, tests/interop/test_operator_metrics.py).

``queries(prefix, label)``: ``{panel: PromQL}`` of NVIDIA/nodewright docs/metrics/dashboards/skyhook-dashboard.json
@71ca22b8 (v0.15: ``queries('skyhook_', 'skyhook_name')``); the v0.20 dashboard
(docs/observability/dashboards/skyhook-dashboard.json @f85e3ee8) is the same with ``skyhook_`` -> ``nodewright_`` and
``skyhook_name`` -> ``nodewright_name``, less the package restarts target (``restarts=False``). ``templated`` fills the
dashboard's variables as Grafana does for one CR and every package; ``on_job`` adds a ``job`` matcher to every
selector (the operator's series and the pushed ones side by side). ``Stack(workdir)``: a Pushgateway and a Prometheus
scraping it every second with ``honor_labels: true`` (and any ``targets`` given: ``{job: host:port}``).
"""

from __future__ import annotations

import json
import re
import urllib.parse
import urllib.request

import prometheus as prom_support

STATUSES = ('complete', 'blocked', 'waiting', 'disabled', 'paused', 'in_progress', 'erroring', 'unknown')
STATES = ('complete', 'in_progress', 'erroring', 'skipped', 'unknown')
DASHBOARD_STAGES = ('apply', 'config', 'interrupt', 'post-interrupt', 'uninstall', 'upgrade')


def queries(prefix, label, restarts=True):
    """``{panel: PromQL}`` of the operator's dashboard, its variables ``$skyhook`` and ``$package`` left in."""
    status, nodes = f'{prefix}status', f'{prefix}node_status_count'
    sel = f'{label}=~"$skyhook"'
    others = ('waiting', 'paused', 'disabled', 'unknown')
    table_order = ('erroring', 'blocked', 'paused', 'disabled', 'in_progress', 'waiting', 'complete')
    found = {
        'Total Skyhooks': f'count({status}{{status!=""}} == 1)',
        'Other States': ' + '.join(f'(sum({status}{{status="{s}"}} == 1) or vector(0))' for s in others),
        'Skyhooks': ' or\n'.join(f'({status}{{status="{s}"}} == 1)' for s in table_order),
        'Total Target Nodes': f'sum({prefix}node_target_count{{{sel}}}) or vector(0)',
        'Nodes in Other States': ' + \n'.join(f'sum({nodes}{{{sel}, status="{s}"}} or vector(0))' for s in others),
        'Nodes': ' or\n'.join(f'({nodes}{{{sel}, status="{s}"}} > 0)' for s in table_order),
    }
    for s in STATUSES:
        found[f'Skyhook Status Distribution {s}'] = f'sum({status}{{status="{s}"}} == 1) or vector(0)'
        found[f'Node Status Distribution {s}'] = f'sum({nodes}{{{sel}, status="{s}"}})'
        found[f'Node stat {s}'] = f'sum({nodes}{{{sel}, status="{s}"}}) or vector(0)'
    package_sel = f'{sel}, package_name=~"$package"'
    for stage in DASHBOARD_STAGES:
        found[f'Package Stage Distribution {stage}'] = \
            f'sum({prefix}package_stage_count{{{package_sel}, stage="{stage}"}}) or vector(0)'
    for state in STATES:
        found[f'Package State Distribution {state}'] = \
            f'sum({prefix}package_state_count{{{package_sel}, state="{state}"}}) or vector(0)'
    tables = [('state', f'{prefix}package_state_count{{{package_sel}}} > 0'),
              ('stage', f'{prefix}package_stage_count{{{package_sel}}} > 0')]
    if restarts:
        tables.append(('restarts', f'{prefix}package_restarts_count{{{package_sel}}}'))
    for name, inner in tables:
        found[f'Current Package Status {name}'] = \
            f'label_join(\n    {inner},\n    "join-key", "-", "{label}", "package_name"\n)'
    return found


def templated(expr, cr):
    """The query as Grafana sends it for the CR (a name has no regex character but ``.``) and every package."""
    return expr.replace('$skyhook', cr).replace('$package', '.*')


def on_job(expr, job):
    """``expr`` with ``job="<job>"`` in each of its selectors (``skyhook_status{`` -> ``skyhook_status{job="x", ``)."""
    return re.sub(r'\b((?:skyhook|nodewright)_[a-z_]+)\{', lambda m: '%s{job="%s", ' % (m.group(1), job), expr)


def scalar(result):
    assert len(result) == 1, result
    return float(result[0]['value'][1])


def shape(result, skip=('__name__', 'job', 'instance')):
    """A query's answer as comparable rows: each row's labels but ``skip``, and its value."""
    return sorted((json.dumps(dict((k, v) for k, v in r['metric'].items() if k not in skip), sort_keys=True),
                   r['value'][1]) for r in result)


class Stack:
    """A Pushgateway and a Prometheus that scrapes it every second (honor_labels, as for any Pushgateway)."""

    def __init__(self, workdir, targets=None):
        self.pushgateway = prom_support.Pushgateway(workdir / 'pushgateway')
        scrape = [{'job_name': 'pushgateway', 'honor_labels': True, 'scrape_interval': '1s',
                   'static_configs': [{'targets': [self.pushgateway.address]}]}]
        scrape.extend({'job_name': job, 'scrape_interval': '1s', 'static_configs': [{'targets': [address]}]}
                      for job, address in sorted((targets or {}).items()))
        try:
            self.prometheus = prom_support.Prometheus(workdir / 'prometheus', scrape_interval='1s', scrape_configs=scrape)
        except Exception:
            self.pushgateway.stop()
            raise

    def label_values(self, label, match):
        url = f'{self.prometheus.url}/api/v1/label/{label}/values?' + urllib.parse.urlencode({'match[]': match})
        with urllib.request.urlopen(url, timeout=10) as resp:
            return json.loads(resp.read())['data']

    def stop(self):
        self.prometheus.stop()
        self.pushgateway.stop()
