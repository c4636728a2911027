# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The operator's Prometheus series of a collection-run rollout, on a real Pushgateway scraped by a real Prometheus.

``nodewright.bridge.apply`` with ``nodewright_metrics_pushgateway`` pushes each CR's series (module rollout_metrics)
to a Pushgateway (github.com/prometheus/pushgateway, built by tests/cluster/build.sh); a Prometheus (the one of the
alert-gate tests) scrapes it every second with ``honor_labels: true``. The queries of the operator's own Grafana
dashboard then run through Prometheus' HTTP API and must answer what the nodes say.

The queries: NVIDIA/nodewright docs/metrics/dashboards/skyhook-dashboard.json @71ca22b8 (v0.15, ``skyhook_*``); the
v0.20 dashboard (docs/observability/dashboards/skyhook-dashboard.json @f85e3ee8) is the same with ``skyhook_`` ->
``nodewright_`` and ``skyhook_name`` -> ``nodewright_name``, less the package restarts target (its metric retired).
"""

from __future__ import annotations

import json
import re
import socket
import urllib.request
import uuid

import launcher
import operator_dashboard as dashboard
import pytest
from kubernetes import client as kclient

from nodewright_fixtures import GROUP, PLURAL, VERSION, package

pytestmark = pytest.mark.cluster

STATUSES, STATES = dashboard.STATUSES, dashboard.STATES
WARNING = re.compile(r'\[WARNING\]: the metrics of (\S+) were not written')
dashboard_queries, templated, scalar, Stack = dashboard.queries, dashboard.templated, dashboard.scalar, dashboard.Stack


def warnings_of(result):
    """A module's warnings as text (ansible-core 2.19 returns each as a structured event)."""
    return [w['event']['msg'] if isinstance(w, dict) else w for w in result.get('warnings') or []]


def free_port():
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


@pytest.fixture
def stack(tmp_path):
    made = Stack(tmp_path)
    yield made
    made.stop()


class Pool:
    """Three fresh nodes (rack a: 2, rack b: 1) and a DeploymentPolicy for them: rack-a fixed, the rest linear."""

    def __init__(self, cluster):
        self.cluster = cluster
        self.custom = kclient.CustomObjectsApi(cluster.api)
        tag = uuid.uuid4().hex[:6]
        self.labels = {'nodewright.bridge/metrics': tag}
        self.names = [f'mx-{tag}-a0', f'mx-{tag}-a1', f'mx-{tag}-b0']
        launcher.create_nodes(cluster.api, self.names, labels=self.labels,
                              per_node_labels={n: {'rack': n[-2]} for n in self.names}, start_index=3300)
        launcher.wait_nodes_ready(cluster.api, self.names, timeout=60)
        self.policy = f'mx-{tag}'
        self.custom.create_cluster_custom_object(GROUP, VERSION, 'deploymentpolicies', {
            'apiVersion': f'{GROUP}/{VERSION}', 'kind': 'DeploymentPolicy', 'metadata': {'name': self.policy},
            'spec': {'compartments': [{'name': 'rack-a', 'selector': {'matchLabels': {'rack': 'a'}},
                                       'budget': {'count': 1}, 'strategy': {'fixed': {'initialBatch': 1}}}],
                     'default': {'budget': {'count': 1}, 'strategy': {'linear': {'initialBatch': 1, 'delta': 1}}}}})

    def cr_status(self, name):
        return self.custom.get_cluster_custom_object(GROUP, VERSION, PLURAL, name)['status']

    def node_statuses(self, cr):
        """node -> its status_<cr> annotation (what the operator's node_status_count counts)."""
        return {n: (self.cluster.core.read_node(n).metadata.annotations or {}).get(f'{GROUP}/status_{cr}', 'unknown')
                for n in self.names}

    def close(self):
        for name in self.names:
            try:
                self.cluster.core.delete_node(name)
            except kclient.ApiException:
                pass
        self.custom.delete_cluster_custom_object(GROUP, VERSION, 'deploymentpolicies', self.policy)


@pytest.fixture
def pool(cluster):
    made = Pool(cluster)
    yield made
    made.close()


def _apply(playbooks, names, namespace, **extra):
    return playbooks.run('nodewright.bridge.apply', extra_vars=dict({
        'nodewright_cr_name': names, 'nodewright_namespace': namespace, 'nodewright_stage_timeout': 90}, **extra))


def _check_dashboard(stack, cr, pool):
    """Every query of the v0.15 dashboard answers what the CR's nodes and status say."""
    statuses = pool.node_statuses(cr)
    status = pool.cr_status(cr)
    prom = stack.prometheus
    queries = dict((k, templated(v, cr)) for k, v in dashboard_queries('skyhook_', 'skyhook_name').items())
    assert scalar(prom.query(queries['Total Skyhooks'])) == 1
    assert scalar(prom.query(queries['Total Target Nodes'])) == len(pool.names)
    for s in STATUSES:
        wanted = sum(1 for v in statuses.values() if v == s)
        assert scalar(prom.query(queries[f'Node Status Distribution {s}'])) == wanted, s
        assert scalar(prom.query(queries[f'Node stat {s}'])) == wanted, s
        assert scalar(prom.query(queries[f'Skyhook Status Distribution {s}'])) == (1 if s == status['status'] else 0)
    assert scalar(prom.query(queries['Other States'])) == (1 if status['status'] in ('waiting', 'paused', 'disabled',
                                                                                     'unknown') else 0)
    assert scalar(prom.query(queries['Nodes in Other States'])) == sum(
        1 for v in statuses.values() if v in ('waiting', 'paused', 'disabled', 'unknown'))
    [row] = prom.query(queries['Skyhooks'])
    assert (row['metric']['skyhook_name'], row['metric']['status']) == (cr, status['status'])
    nodes = prom.query(queries['Nodes'])
    assert sorted((r['metric']['status'], float(r['value'][1])) for r in nodes) == \
        sorted((s, float(sum(1 for v in statuses.values() if v == s))) for s in set(statuses.values()))
    # the two packages, complete on every node, in their last stage (config: no interrupt)
    assert scalar(prom.query(queries['Package State Distribution complete'])) == 2 * len(pool.names)
    assert scalar(prom.query(queries['Package Stage Distribution config'])) == 2 * len(pool.names)
    for key in ('in_progress', 'erroring', 'skipped', 'unknown'):
        assert scalar(prom.query(queries[f'Package State Distribution {key}'])) == 0
    for key in ('Current Package Status state', 'Current Package Status stage', 'Current Package Status restarts'):
        rows = prom.query(queries[key])
        assert sorted(r['metric']['join-key'] for r in rows) == [f'{cr}-quick', f'{cr}-second'], key
    # the dashboard's variables
    assert cr in stack.label_values('skyhook_name', 'skyhook_status')
    assert sorted(stack.label_values('package_name', f'skyhook_package_state_count{{skyhook_name=~"{cr}"}}')) == \
        ['quick', 'second']
    return statuses, status


def _check_rollout_series(stack, cr, pool, status):
    """The compartments' gauges (no dashboard panel): the CR's status.compartmentStatuses, labelled as the operator."""
    rows = stack.prometheus.query(f'{{__name__=~"skyhook_rollout_.*", skyhook_name="{cr}"}}')
    got = dict(((r['metric']['__name__'], r['metric']['compartment_name'], r['metric']['strategy'],
                 r['metric']['policy_name']), float(r['value'][1])) for r in rows)
    strategies = {'rack-a': 'fixed', '__default__': 'linear'}
    for comp, entry in status['compartmentStatuses'].items():
        batch = entry.get('batchState') or {}
        for field, name in (('matched', 'matched_nodes'), ('ceiling', 'ceiling'), ('inProgress', 'in_progress'),
                            ('completed', 'completed'), ('progressPercent', 'progress_percent')):
            assert got.pop((f'skyhook_rollout_{name}', comp, strategies[comp], pool.policy)) == entry[field], (comp, name)
        for field, name in (('currentBatch', 'current_batch'), ('consecutiveFailures', 'consecutive_failures'),
                            ('shouldStop', 'should_stop')):
            assert got.pop((f'skyhook_rollout_{name}', comp, strategies[comp], pool.policy)) == float(batch.get(field) or 0)
    assert got == {}


def test_an_apply_run_shows_on_the_operators_dashboard_as_its_nodes_say(cluster, playbooks, namespace, crs, pool,
                                                                        stack):
    cr = crs.create({'quick': package(), 'second': package('2.0.0')}, prefix='mx', selector=pool.labels,
                    deploymentPolicy=pool.policy)['metadata']['name']
    result = _apply(playbooks, cr, namespace, nodewright_metrics_pushgateway=stack.pushgateway.url)
    assert result.rc == 0, result
    assert not WARNING.search(result.stdout + result.stderr), result

    # one group for the CR, replaced by the end push: the job, the CR's name label
    assert [g for g in stack.pushgateway.groups() if g.get('skyhook_name') == cr] == [
        {'job': 'nodewright-bridge', 'skyhook_name': cr}]
    prom = stack.prometheus
    prom.wait_query(templated(dashboard_queries('skyhook_', 'skyhook_name')['Node stat complete'], cr),
                    lambda r: r and float(r[0]['value'][1]) == len(pool.names), what='the end push scraped')
    statuses, status = _check_dashboard(stack, cr, pool)
    assert set(statuses.values()) == {'complete'} and status['status'] == 'complete'
    _check_rollout_series(stack, cr, pool, status)

    # the series' labels: the operator's and the job of the push; no instance (the Pushgateway's empty instance,
    # kept by honor_labels, is no label at all)
    [series] = prom.query(f'skyhook_node_status_count{{skyhook_name="{cr}", status="complete"}}')
    assert series['metric'] == {'__name__': 'skyhook_node_status_count', 'job': 'nodewright-bridge', 'skyhook_name': cr,
                                'status': 'complete'}, series
    # two pushes taken: the run's start (its nodes not complete yet) and its end
    pushes = re.search(r'^pushgateway_http_requests_total\{code="200",handler="push",method="put"\} (\d+)$',
                       stack.pushgateway.metrics(), re.M)
    assert pushes and int(pushes.group(1)) == 2, stack.pushgateway.metrics()


class BlackHole:
    """A TCP port that takes connections and never answers (a Pushgateway behind a dead proxy, a firewall that drops)."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(('127.0.0.1', 0))
        self.sock.listen(16)
        self.url = 'http://127.0.0.1:%d' % self.sock.getsockname()[1]

    def close(self):
        self.sock.close()


def test_a_pushgateway_that_does_not_answer_is_warned_about_once_and_the_rollout_goes_on(cluster, playbooks, namespace,
                                                                                         crs, pool):
    first = crs.create({'quick': package()}, prefix='mxa', selector=pool.labels, deploymentPolicy=pool.policy)
    second = crs.create({'second': package('2.0.0')}, prefix='mxb', selector=pool.labels, deploymentPolicy=pool.policy)
    names = [first['metadata']['name'], second['metadata']['name']]
    hole = BlackHole()
    try:
        result = _apply(playbooks, names, namespace, nodewright_metrics_pushgateway=hole.url)
    finally:
        hole.close()
    assert result.rc == 0, result
    for name in names:
        assert pool.cr_status(name)['status'] == 'complete'
        assert set(pool.node_statuses(name).values()) == {'complete'}
    # one warning in the run (the start's first push); the other CR and the end round are not warned about again
    warnings = WARNING.findall(result.stdout + result.stderr)
    assert warnings == [sorted(names)[0]], result
    text = (result.stdout + result.stderr).replace('\n', ' ')
    assert (f'cannot push the metrics to the Pushgateway: PUT {hole.url}/metrics/job/nodewright-bridge/skyhook_name/'
            f'{sorted(names)[0]}: timed out') in re.sub(r'\s+', ' ', text), result


def _put(url, text, method='PUT'):
    request = urllib.request.Request(url, method=method, data=text.encode() if text is not None else None)
    with urllib.request.urlopen(request, timeout=10) as resp:
        return resp.status


def test_a_push_the_pushgateway_refuses_leaves_the_crs_group_as_it_was(modules, crs, pool, stack):
    cr = crs.create({'quick': package()}, prefix='mx', selector=pool.labels)['metadata']['name']
    base = stack.pushgateway.url
    group = f'{base}/metrics/job/nodewright-bridge/skyhook_name/{cr}'
    # what the group held before (an earlier push of the CR), and another job's skyhook_status as a counter: the
    # Pushgateway refuses (HTTP 400) any push that would make a family inconsistent, and keeps what it had
    _put(group, f'# TYPE skyhook_node_target_count gauge\nskyhook_node_target_count{{skyhook_name="{cr}"}} 42\n')
    _put(f'{base}/metrics/job/saboteur', '# TYPE skyhook_status counter\nskyhook_status{skyhook_name="other"} 1\n')

    refused = modules.run('rollout_metrics', cr_name=cr, pushgateway_url=base)
    assert refused['rc'] == 0 and not refused['pushed'] and not refused['changed'], refused
    assert refused['error'].startswith(f'the metrics of {cr} were not written (the sink keeps what it had: nothing '
                                       f'half-written): cannot push the metrics to the Pushgateway: PUT {group}: HTTP 400 '
                                       'Bad Request: pushed metrics are invalid or inconsistent with existing metrics')
    assert warnings_of(refused) == [refused['error'] + '; the rollout goes on (on_error=fail stops the play on it)']
    held = [line for line in stack.pushgateway.metrics().splitlines()
            if f'skyhook_name="{cr}"' in line and not line.startswith(('push_time_seconds', 'push_failure_time'))]
    assert held == [f'skyhook_node_target_count{{instance="",job="nodewright-bridge",skyhook_name="{cr}"}} 42']

    # the other job gone, the next push replaces the CR's group whole
    _put(f'{base}/metrics/job/saboteur', None, method='DELETE')
    pushed = modules.run('rollout_metrics', cr_name=cr, pushgateway_url=base)
    assert pushed['rc'] == 0 and pushed['pushed'] and pushed['group_url'] == group, pushed
    text = stack.pushgateway.metrics()
    assert f'skyhook_node_target_count{{instance="",job="nodewright-bridge",skyhook_name="{cr}"}} 3' in text
    assert f'skyhook_status{{instance="",job="nodewright-bridge",skyhook_name="{cr}",status="complete"}} 0' in text

    # state absent: the group goes, as the operator stops exporting a deleted CR's series
    gone = modules.run('rollout_metrics', cr_name=cr, pushgateway_url=base, state='absent')
    assert gone['rc'] == 0 and gone['pushed'] and gone['changed'], gone
    assert [g for g in stack.pushgateway.groups() if g.get('skyhook_name') == cr] == []


def test_on_error_fail_fails_with_the_url_and_a_closed_port_is_named(modules, crs, pool):
    cr = crs.create({'quick': package()}, prefix='mx', selector=pool.labels)['metadata']['name']
    url = f'http://127.0.0.1:{free_port()}'
    warned = modules.run('rollout_metrics', cr_name=cr, pushgateway_url=url)
    assert warned['rc'] == 0 and not warned['pushed'] and 'Connection refused' in warned['error'], warned
    assert warnings_of(warned) == [warned['error'] + '; the rollout goes on (on_error=fail stops the play on it)']
    failed = modules.run('rollout_metrics', cr_name=cr, pushgateway_url=url, on_error='fail')
    assert failed['rc'] == 1 and failed['failed'], failed
    assert failed['msg'].startswith(f'the metrics of {cr} were not written (the sink keeps what it had: nothing '
                                    f'half-written): cannot push the metrics to the Pushgateway: PUT {url}/metrics/job/'
                                    f'nodewright-bridge/skyhook_name/{cr}: ')


# ---------------------------------------------------------------------------- v0.18-v0.20: nodewright_* and the twins

NW = 'nodewright.nvidia.com'
# what differs between a series and its twin (and in a label_join of them)
TWIN_NAMES = ('__name__', 'nodewright_name', 'skyhook_name', 'join-key')
NW_TUNING = {'version': '1.0.0', 'image': 'registry.local/nodewright/tuning'}
NW_DRIVER = {'version': '2.0.0', 'image': 'registry.local/nodewright/driver',
             'interrupt': {'type': 'service', 'services': ['containerd']}}


def _nw_state(driver_stage):
    """A node's nodeState: tuning complete in config, driver complete in ``driver_stage``."""
    return json.dumps({'driver|2.0.0': {'name': 'driver', 'version': '2.0.0', 'image': NW_DRIVER['image'],
                                        'stage': driver_stage, 'state': 'complete'},
                       'tuning|1.0.0': {'name': 'tuning', 'version': '1.0.0', 'image': NW_TUNING['image'],
                                        'stage': 'config', 'state': 'complete'}}, separators=(',', ':'), sort_keys=True)


def test_a_nodewright_cr_publishes_the_v020_series_and_their_legacy_twins_with_the_same_answers(v020, stack):
    cluster, custom = v020.cluster, kclient.CustomObjectsApi(v020.cluster.api)
    cr = f'mxnw-{uuid.uuid4().hex[:6]}'
    nodes = [f'{cr}-0', f'{cr}-1']
    launcher.create_nodes(cluster.api, nodes, labels={'pool': cr})
    try:
        launcher.wait_nodes_ready(cluster.api, nodes, timeout=60)
        # what the v0.20 operator (or the collection) left: one node complete, one between its config and interrupt
        for name, stage, status in ((nodes[0], 'post-interrupt', 'complete'), (nodes[1], 'config', 'in_progress')):
            cluster.core.patch_node(name, {'metadata': {'annotations': {f'{NW}/nodeState_{cr}': _nw_state(stage),
                                                                        f'{NW}/status_{cr}': status}}})
        custom.create_cluster_custom_object(NW, 'v1alpha1', 'nodewrights', {
            'apiVersion': f'{NW}/v1alpha1', 'kind': 'NodeWright', 'metadata': {'name': cr},
            'spec': {'nodeSelectors': {'matchLabels': {'pool': cr}}, 'interruptionBudget': {'count': 1},
                     'packages': {'tuning': dict(NW_TUNING), 'driver': dict(NW_DRIVER)}}})
        pushed = v020.modules.run('rollout_metrics', cr_name=cr, pushgateway_url=stack.pushgateway.url,
                                  nodewright_api='nodewright')
        assert pushed['rc'] == 0 and pushed['pushed'], pushed
        assert pushed['group_url'].endswith(f'/metrics/job/nodewright-bridge/nodewright_name/{cr}')
        prom = stack.prometheus
        current = dict((k, templated(v, cr)) for k, v in dashboard_queries('nodewright_', 'nodewright_name',
                                                                           restarts=False).items())
        legacy = dict((k, templated(v, cr)) for k, v in dashboard_queries('skyhook_', 'skyhook_name',
                                                                          restarts=False).items())
        prom.wait_query(current['Total Target Nodes'], lambda r: r and float(r[0]['value'][1]) == 2, what='the push')
        prom.wait_query(legacy['Total Target Nodes'], lambda r: r and float(r[0]['value'][1]) == 2, what='the twins')
        expected = {'Total Skyhooks': 1, 'Node stat complete': 1, 'Node stat in_progress': 1, 'Node stat erroring': 0,
                    'Skyhook Status Distribution in_progress': 1, 'Skyhook Status Distribution complete': 0,
                    'Package State Distribution complete': 4, 'Package Stage Distribution config': 3,
                    'Package Stage Distribution post-interrupt': 1, 'Package Stage Distribution apply': 0}
        for key, value in expected.items():
            assert scalar(prom.query(current[key])) == value, key
        # every query of the v0.20 dashboard answers as its v0.15 twin (the legacy series): the same shape and values
        for key, expr in current.items():
            assert dashboard.shape(prom.query(expr), skip=TWIN_NAMES) == \
                dashboard.shape(prom.query(legacy[key]), skip=TWIN_NAMES), key
        assert cr in stack.label_values('nodewright_name', 'nodewright_status')

        # PUBLISH_LEGACY_METRICS=false: the twins go from the group (and, a scrape later, from Prometheus)
        again = v020.modules.run('rollout_metrics', cr_name=cr, pushgateway_url=stack.pushgateway.url,
                                 nodewright_api='nodewright', legacy_metrics=False)
        assert again['rc'] == 0 and again['pushed'] and 'skyhook_' not in again['metrics'], again
        prom.wait_query(f'skyhook_node_target_count{{skyhook_name="{cr}"}}', lambda r: r == [], what='the twins gone')
        assert scalar(prom.query(current['Total Target Nodes'])) == 2
    finally:
        try:
            custom.delete_cluster_custom_object(NW, 'v1alpha1', 'nodewrights', cr)
        except kclient.ApiException:
            pass
        for name in nodes:
            try:
                cluster.core.delete_node(name)
            except kclient.ApiException:
                pass
