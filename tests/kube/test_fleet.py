# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""nodewright.bridge.fleet on three real control planes on this machine: stages in order, the canary first, a
failing canary that leaves the other clusters untouched, the gate between stages, clusters whose operator reconciles
the CR skipped or handed over, and bad fleets refused before any node in any cluster is touched (a context that does
not exist, a cluster without the CRD).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import threading
import time
import uuid

import awx_jobs
import helpers
import launcher
import pytest
import yaml
from kubernetes import client as kclient

from module_runner import PlaybookRunner
from nodewright_fixtures import FAIL_PKG_IMAGE, package, skyhook
from test_awx_jobs import ee  # noqa: F401  pylint: disable=unused-import
from test_operator_guard import LEASE as OPERATOR_LEASE, put_lease

pytestmark = pytest.mark.cluster

NAMESPACE = 'nw-fleet'
PREFIX = 'skyhook.nvidia.com'


class FleetCluster:
    """One cluster of the fleet: its id, its helpers.Cluster (admin), the nodes a test labels in it."""

    def __init__(self, cid, handle):
        self.id = cid
        self.handle = handle

    def nodes(self, label):
        return [n.metadata.name for n in self.handle.core.list_node(label_selector='nodewright.bridge/fleet=%s' % label).items]


@pytest.fixture(scope='module')
def fleet_clusters(cluster, tmp_path_factory):
    """Three clusters: the session's and two of their own (each 3 nodes), the operator namespace in each."""
    with helpers.own_cluster(tmp_path_factory.mktemp('fleet-b'), what='fleet cluster b', nodes=3) as second, \
            helpers.own_cluster(tmp_path_factory.mktemp('fleet-c'), what='fleet cluster c', nodes=3) as third:
        clusters = [FleetCluster('a', cluster), FleetCluster('b', second), FleetCluster('c', third)]
        for member in clusters:
            try:
                member.handle.create_namespace(NAMESPACE)
            except Exception:  # pylint: disable=broad-exception-caught
                pass  # the session cluster keeps it from an earlier test of this module
        yield clusters


@pytest.fixture
def labelled(fleet_clusters):
    """A fresh label on two new nodes of each cluster: ``label``."""
    value = uuid.uuid4().hex[:8]
    made = []
    for member in fleet_clusters:
        names = ['fl-%s-%s-%d' % (member.id, value, i) for i in range(2)]
        member.handle.create_nodes(names, labels={'nodewright.bridge/fleet': value})
        made.append((member, names))
    yield value
    for member, names in made:
        for name in names:
            member.handle.core.delete_node(name)


@pytest.fixture(scope='module')
def runner(cluster, tmp_path_factory):
    return PlaybookRunner(cluster.kubeconfig, tmp_path_factory.mktemp('fleet-playbooks'))


def _write(tmp_path, name, docs):
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(docs) if isinstance(docs, list) else yaml.safe_dump(docs))
    return str(path)


def _fleet(fleet_clusters, **extra):
    fleet = {'name': 'gpu', 'clusters': dict((m.id, {'kubeconfig': str(m.handle.kubeconfig)}) for m in fleet_clusters),
             'stages': [{'name': 'canary', 'clusters': ['a']}, {'name': 'rest', 'clusters': ['b', 'c'], 'max_concurrency': 2}]}
    fleet.update(extra)
    return fleet


def _inventory(tmp_path, fleet_clusters, groups):
    """An inventory whose hosts are the clusters (each with its nodewright_cluster_kubeconfig), in ``groups`` (name -> ids)."""
    handles = dict((m.id, m.handle) for m in fleet_clusters)
    return _write(tmp_path, 'clusters.yml', {'all': {'children': dict(
        (group, {'hosts': dict((cid, {'nodewright_cluster_kubeconfig': str(handles[cid].kubeconfig)}) for cid in ids)})
        for group, ids in groups.items())}})


def _run(runner, tmp_path, fleet, cr_file, check=False, inventory=None):
    work = tmp_path / 'fleet-work'
    return runner.run('nodewright.bridge.fleet', check=check, inventory=inventory, extra_vars={
        'nodewright_fleet': _write(tmp_path, 'fleet.yml', fleet), 'nodewright_cr': cr_file,
        'nodewright_fleet_dir': str(work), 'nodewright_fleet_apply_vars': {
            'nodewright_namespace': NAMESPACE, 'nodewright_stage_timeout': 90}}), work


def _start(runner, extra):
    """A fleet run started in the background: ``(process, its output lines so far, the thread reading them)``."""
    proc = runner.start('nodewright.bridge.fleet', extra_vars=extra)
    output = []
    reader = threading.Thread(target=lambda: output.extend(proc.stdout), daemon=True)
    reader.start()
    return proc, output, reader


def _state(member, node, cr_name):
    return member.handle.core.read_node(node).metadata.labels.get('%s/status_%s' % (PREFIX, cr_name))


def test_a_fleet_rolls_out_stage_by_stage_the_canary_first(fleet_clusters, labelled, runner, tmp_path):
    cr_name = 'fleet-%s' % labelled
    cr_file = _write(tmp_path, 'cr.yaml', skyhook(cr_name, {'quick': package()}, selector={'nodewright.bridge/fleet': labelled},
                                                  interruptionBudget={'count': 1}))
    # the clusters from an inventory (each host a cluster, its stage an inventory group), as an AWX inventory gives them
    inventory = _inventory(tmp_path, fleet_clusters, {'canary_clusters': ['a'], 'gpu_clusters': ['b', 'c']})
    fleet = {'name': 'gpu', 'stages': [{'name': 'canary', 'group': 'canary_clusters', 'soak': '2s'},
                                       {'name': 'rest', 'group': 'gpu_clusters', 'max_concurrency': 2}]}

    planned, work = _run(runner, tmp_path, fleet, cr_file, check=True, inventory=inventory)
    assert planned.rc == 0, planned
    # the fleet's plan: each stage, and each cluster's nodes to update and batches (interruptionBudget 1: two of 1)
    assert 'stage 1/2 canary: a (1 at once, soak 2s)' in planned.stdout, planned.stdout[-3000:]
    for cid in ('a', 'b', 'c'):
        assert re.search(r'%s: %s \(priority \d+, sequencing node\): 2 nodes, 2 to update, \d+ to drain; [^\n]*'
                         r'batches __default__ \[1, 1\]' % (cid, cr_name), planned.stdout), planned.stdout[-3000:]
    for member in fleet_clusters:
        assert all(_state(member, n, cr_name) is None for n in member.nodes(labelled)), 'check mode wrote a node state'

    run, work = _run(runner, tmp_path, fleet, cr_file, inventory=inventory)
    assert run.rc == 0, run
    for member in fleet_clusters:
        nodes = member.nodes(labelled)
        assert len(nodes) == 2 and all(_state(member, n, cr_name) == 'complete' for n in nodes), (member.id, nodes)
    report = json.loads((work / 'report.json').read_text())
    assert dict((c, r['outcome']) for c, r in report['clusters'].items()) == {'a': 'ok', 'b': 'ok', 'c': 'ok'}
    by_cluster = dict((r['cluster'], r) for r in report['rollouts'])
    # the canary finished (and soaked 2 s) before the rest started; b and c ran side by side
    canary_end = by_cluster['a']['started'] + by_cluster['a']['elapsed']
    assert by_cluster['b']['started'] >= canary_end + 2 and by_cluster['c']['started'] >= canary_end + 2, report
    assert abs(by_cluster['b']['started'] - by_cluster['c']['started']) < 15, report
    # each cluster's batches said in the fleet's output, with the cluster and the compartment
    for cid in ('a', 'b', 'c'):
        for batch in (1, 2):
            assert re.search(r'nodewright fleet: \[%s\] \[__default__\] batch %d: size 1, ok 1, failed 0' % (cid, batch),
                             run.stdout), run.stdout[-3000:]
    # the recap names each node with its cluster
    recap_hosts = set(re.findall(r'^(\S+/\S+)\s+:\s+ok=', run.stdout, re.M))
    assert recap_hosts == set('%s/%s' % (m.id, n) for m in fleet_clusters for n in m.nodes(labelled)), run.stdout[-3000:]


def test_a_failing_canary_leaves_the_other_clusters_untouched(fleet_clusters, labelled, runner, tmp_path):
    cr_name = 'fleet-broken-%s' % labelled
    cr_file = _write(tmp_path, 'cr.yaml', skyhook(cr_name, {'broken': package(image=FAIL_PKG_IMAGE)},
                                                  selector={'nodewright.bridge/fleet': labelled}, interruptionBudget={'count': 1}))
    run, work = _run(runner, tmp_path, _fleet(fleet_clusters), cr_file)
    assert run.rc == 2, run
    assert 'the fleet\'s rollout stopped: 1 cluster(s) failed (a), more than max_failures 0' in run.stdout, run.stdout[-3000:]
    report = json.loads((work / 'report.json').read_text())
    assert report['clusters']['a']['outcome'] == 'failed'
    assert report['clusters']['b']['outcome'] == report['clusters']['c']['outcome'] == 'not reached', report['clusters']
    for member in fleet_clusters[1:]:
        for node in member.nodes(labelled):
            body = member.handle.core.read_node(node)
            assert body.spec.unschedulable is not True and _state(member, node, cr_name) is None, (member.id, node)


def test_bad_fleets_fail_before_any_cluster_is_touched(fleet_clusters, labelled, runner, tmp_path, monkeypatch):
    cr_name = 'fleet-bad-%s' % labelled
    cr_file = _write(tmp_path, 'cr.yaml', skyhook(cr_name, {'quick': package()}, selector={'nodewright.bridge/fleet': labelled}))
    # a context that the cluster's kubeconfig does not have
    fleet = _fleet(fleet_clusters)
    fleet['clusters']['c']['context'] = 'nowhere'
    run, dummy = _run(runner, tmp_path, fleet, cr_file)
    assert run.rc != 0 and 'nowhere' in run.stdout, run
    # the same cluster in two stages, a stage without clusters, a soak that is not a duration: every one named
    fleet = _fleet(fleet_clusters, stages=[{'name': 'canary', 'clusters': ['a'], 'soak': 'soon'},
                                           {'name': 'rest', 'clusters': ['a', 'b', 'c']}, {'name': 'empty', 'clusters': []}])
    run, dummy = _run(runner, tmp_path, fleet, cr_file)
    assert run.rc != 0, run
    for field in ('stages[0].soak', 'stages[1].clusters[0]: cluster a is already in stages[0]', 'stages[2].clusters'):
        assert field in run.stdout, (field, run.stdout[-3000:])
    # an inventory group that does not exist, and one whose cluster is already in another stage
    inventory = _inventory(tmp_path, fleet_clusters, {'canary_clusters': ['a'], 'gpu_clusters': ['a', 'b', 'c']})
    run, dummy = _run(runner, tmp_path, {'stages': [{'name': 'canary', 'group': 'canary_clusters'},
                                                    {'name': 'rest', 'group': 'gpu_clusters'},
                                                    {'name': 'late', 'group': 'gpu-clusters'}]}, cr_file, inventory=inventory)
    assert run.rc != 0, run
    for field in ("stages[2].group: 'gpu-clusters' is not a group of the inventory",
                  'stages[1].clusters[0]: cluster a is already in stages[0]'):
        assert field in run.stdout, (field, run.stdout[-3000:])
    # an AWX Kubernetes bearer-token credential on the job: its K8S_AUTH_HOST would reach every cluster at one server
    with monkeypatch.context() as env:
        env.setenv('K8S_AUTH_HOST', fleet_clusters[0].handle.api.configuration.host)
        env.setenv('K8S_AUTH_API_KEY', 'a-token')
        run, dummy = _run(runner, tmp_path, _fleet(fleet_clusters), cr_file)
    assert run.rc != 0, run
    assert ("K8S_AUTH_HOST, K8S_AUTH_API_KEY set in the environment: it wins over every cluster's kubeconfig"
            in run.stdout), run.stdout[-3000:]
    assert 'Plan every CR on every cluster' not in run.stdout, 'a cluster was asked before the refusal'
    for member in fleet_clusters:
        assert all(_state(member, n, cr_name) is None for n in member.nodes(labelled))


def test_a_cluster_without_the_crd_is_refused_before_any_node_is_touched(
        fleet_clusters, labelled, runner, tmp_path, tmp_path_factory):
    cr_name = 'fleet-nocrd-%s' % labelled
    cr_file = _write(tmp_path, 'cr.yaml', skyhook(cr_name, {'quick': package()}, selector={'nodewright.bridge/fleet': labelled}))
    with helpers.own_cluster(tmp_path_factory.mktemp('fleet-nocrd'), what='a cluster without the CRDs', nodes=1,
                             crds=False) as bare:
        fleet = _fleet(fleet_clusters)
        fleet['clusters']['bare'] = {'kubeconfig': str(bare.kubeconfig)}
        fleet['stages'][1]['clusters'].append('bare')
        run, dummy = _run(runner, tmp_path, fleet, cr_file)
    assert run.rc != 0, run
    assert 'bare' in run.stdout, run.stdout[-3000:]
    for member in fleet_clusters:
        assert all(_state(member, n, cr_name) is None for n in member.nodes(labelled))


class DisruptionSampler(threading.Thread):
    """Every 0.1 s, the labelled nodes cordoned or not Ready over every cluster: the most at once (``peak``)."""

    def __init__(self, fleet_clusters, label):
        super().__init__(daemon=True)
        self.clusters = fleet_clusters
        self.label = label
        self.stop = threading.Event()
        self.peak = 0
        self.samples = 0

    def disrupted(self):
        count = 0
        for member in self.clusters:
            for node in member.handle.core.list_node(label_selector='nodewright.bridge/fleet=%s' % self.label).items:
                ready = any(c.type == 'Ready' and c.status == 'True' for c in node.status.conditions or [])
                count += bool(node.spec.unschedulable) or not ready
        return count

    def run(self):
        while not self.stop.wait(0.1):
            self.peak = max(self.peak, self.disrupted())
            self.samples += 1


def test_the_fleet_budget_bounds_the_nodes_disrupted_across_clusters(fleet_clusters, labelled, runner, tmp_path):
    cr_name = 'fleet-budget-%s' % labelled
    # a reboot on every node: each cordoned, drained, rebooted; each cluster alone would take both its nodes at once
    cr_file = _write(tmp_path, 'cr.yaml', skyhook(cr_name, {'tuning': package(interrupt={'type': 'reboot'})},
                                                  selector={'nodewright.bridge/fleet': labelled}, interruptionBudget={'count': 2}))
    fleet = _fleet(fleet_clusters, stages=[{'name': 'all', 'clusters': ['a', 'b', 'c']}], budget={'count': 2},
                   budget_namespace=NAMESPACE)
    sampler = DisruptionSampler(fleet_clusters, labelled)
    sampler.start()
    try:
        run, work = _run(runner, tmp_path, fleet, cr_file)
    finally:
        sampler.stop.set()
        sampler.join()
    print('fleet budget 2: most nodes cordoned or rebooting at once over 3 clusters %d (%d samples)'
          % (sampler.peak, sampler.samples))
    assert run.rc == 0, run
    for member in fleet_clusters:
        assert all(_state(member, n, cr_name) == 'complete' for n in member.nodes(labelled)), member.id
    assert sampler.samples > 20 and 1 <= sampler.peak <= 2, (sampler.peak, sampler.samples)
    # the budget held nodes back (alone, each cluster would have disrupted both its nodes at once: 6 over the fleet)
    logs = ''.join((work / ('%s.log' % m.id)).read_text() for m in fleet_clusters)
    assert 'waits for the fleet budget gpu (2 nodes cordoned or rebooting at once)' in logs
    # every slot given back: the Lease in the coordination cluster is empty
    lease = kclient.CoordinationV1Api(fleet_clusters[0].handle.api).read_namespaced_lease('nodewright-fleet-gpu', NAMESPACE)
    assert json.loads(lease.metadata.annotations['nodewright.bridge/fleet-slots']) == {}


def _running_applies(work):
    """The processes still running an apply of the fleet run whose work directory is ``work``."""
    found = subprocess.run(['pgrep', '-f', str(work)], stdout=subprocess.PIPE, text=True, check=False).stdout.split()
    return [pid for pid in found if int(pid) != os.getpid()]


def test_a_killed_fleet_run_stops_its_clusters_runs_and_the_next_run_resumes(fleet_clusters, labelled, runner, tmp_path):
    cr_name = 'fleet-resume-%s' % labelled
    cr_file = _write(tmp_path, 'cr.yaml', skyhook(cr_name, {'tuning': package(interrupt={'type': 'reboot'})},
                                                  selector={'nodewright.bridge/fleet': labelled}, interruptionBudget={'count': 1}))
    work = tmp_path / 'fleet-work'
    extra = {'nodewright_fleet': _write(tmp_path, 'fleet.yml', _fleet(fleet_clusters)), 'nodewright_cr': cr_file,
             'nodewright_fleet_dir': str(work), 'nodewright_fleet_apply_vars': {'nodewright_namespace': NAMESPACE}}
    proc, output, dummy = _start(runner, extra)
    canary = fleet_clusters[0]
    deadline = time.monotonic() + 120
    while not any(canary.handle.core.read_node(n).spec.unschedulable for n in canary.nodes(labelled)):
        assert time.monotonic() < deadline and proc.poll() is None, ''.join(output)[-3000:]
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGTERM)  # as AWX cancels a job
    proc.wait(timeout=90)
    # the cluster's apply run stopped with the fleet's run (it is in a process group of its own): within seconds, where
    # it alone would go on for its second node
    deadline = time.monotonic() + 15
    while _running_applies(work):
        assert time.monotonic() < deadline, 'apply runs outlived the fleet run: %s' % _running_applies(work)
        time.sleep(0.5)
    assert 'PLAY RECAP' not in (work / 'a.log').read_text(), 'the canary\'s apply ran to its end'
    (tmp_path / 'again').mkdir()
    resumed, dummy = _run(runner, tmp_path / 'again', _fleet(fleet_clusters), cr_file)
    assert resumed.rc == 0, resumed
    for member in fleet_clusters:
        for node in member.nodes(labelled):
            assert _state(member, node, cr_name) == 'complete', (member.id, node)
            assert member.handle.core.read_node(node).spec.unschedulable is not True, (member.id, node)


def test_a_v015_and_a_v020_cluster_each_speak_their_own_contract(fleet_clusters, v020, labelled, runner, tmp_path):
    """The same CR name in both: a Skyhook in a v0.15 cluster, a NodeWright in a v0.20 one; each cluster's run detects
    its own API generation, and each node carries only its cluster's keys."""
    name = 'fleet-gen-%s' % labelled
    legacy = fleet_clusters[1]
    for member in (legacy.handle, v020.cluster):
        try:
            member.create_namespace('skyhook' if member is legacy.handle else 'nodewright')
        except Exception:  # pylint: disable=broad-exception-caught
            pass  # there already
    nodes = ['fl-v020-%s-%d' % (labelled, i) for i in range(2)]
    v020.cluster.create_nodes(nodes, labels={'nodewright.bridge/fleet': labelled})
    spec = skyhook(name, {'quick': package()}, selector={'nodewright.bridge/fleet': labelled})['spec']
    legacy_api = kclient.CustomObjectsApi(legacy.handle.api)
    new_api = kclient.CustomObjectsApi(v020.cluster.api)
    legacy_api.create_cluster_custom_object(PREFIX, 'v1alpha1', 'skyhooks', {
        'apiVersion': PREFIX + '/v1alpha1', 'kind': 'Skyhook', 'metadata': {'name': name}, 'spec': spec})
    new_api.create_cluster_custom_object('nodewright.nvidia.com', 'v1alpha1', 'nodewrights', {
        'apiVersion': 'nodewright.nvidia.com/v1alpha1', 'kind': 'NodeWright', 'metadata': {'name': name}, 'spec': spec})
    try:
        fleet = {'name': 'gens', 'clusters': {'v015': {'kubeconfig': str(legacy.handle.kubeconfig)},
                                              'v020': {'kubeconfig': str(v020.cluster.kubeconfig)}},
                 'stages': [{'name': 'old', 'clusters': ['v015']}, {'name': 'new', 'clusters': ['v020']}]}
        run = runner.run('nodewright.bridge.fleet', extra_vars={
            'nodewright_fleet': _write(tmp_path, 'fleet.yml', fleet), 'nodewright_cr_name': name,
            'nodewright_fleet_dir': str(tmp_path / 'work'), 'nodewright_fleet_apply_vars': {'nodewright_stage_timeout': 90}})
        assert run.rc == 0, run
        for node in legacy.nodes(labelled):
            labels = legacy.handle.core.read_node(node).metadata.labels
            assert labels['%s/status_%s' % (PREFIX, name)] == 'complete', labels
        for node in nodes:
            meta = v020.cluster.core.read_node(node).metadata
            assert meta.labels['nodewright.nvidia.com/status_%s' % name] == 'complete', meta.labels
            assert not [k for k in list(meta.labels) + list(meta.annotations or {}) if k.startswith(PREFIX + '/')], meta
    finally:
        legacy_api.delete_cluster_custom_object(PREFIX, 'v1alpha1', 'skyhooks', name)
        new_api.delete_cluster_custom_object('nodewright.nvidia.com', 'v1alpha1', 'nodewrights', name)
        for node in nodes:
            v020.cluster.core.delete_node(node)


def test_a_gate_that_holds_the_canary_fails_it_and_within_max_failures_the_next_stage_goes_on(
        fleet_clusters, labelled, runner, tmp_path):
    """The NotReady gate given to every cluster's run is checked for each cluster before it starts: a NotReady node in
    cluster c, the canary, holds it (and fails it after the gate's timeout); with max_failures 1 the failure is
    counted, not gated, so the next stage, a and b, whose nodes are Ready, rolls out."""
    cr_name = 'fleet-gate-%s' % labelled
    cr_file = _write(tmp_path, 'cr.yaml', skyhook(cr_name, {'quick': package()}, selector={'nodewright.bridge/fleet': labelled}))
    third = fleet_clusters[2]
    down = third.nodes(labelled)[0]
    third.handle.set_node_not_ready(down)
    # a NotReady node in cluster a that the CR does not select: not counted (each cluster's selection is)
    first = fleet_clusters[0].handle
    other = 'fl-other-%s' % labelled
    first.create_nodes([other])
    first.set_node_not_ready(other)
    try:
        run = runner.run('nodewright.bridge.fleet', extra_vars={
            'nodewright_fleet': _write(tmp_path, 'fleet.yml', _fleet(fleet_clusters, max_failures=1, stages=[
                {'name': 'canary', 'clusters': ['c']}, {'name': 'rest', 'clusters': ['a', 'b']}])),
            'nodewright_cr': cr_file,
            'nodewright_fleet_dir': str(tmp_path / 'work'), 'nodewright_fleet_apply_vars': {
                'nodewright_namespace': NAMESPACE, 'nodewright_gates': {'max_not_ready': 0, 'timeout': 5, 'poll_interval': 1}}})
    finally:
        third.handle.set_node_not_ready(down, not_ready=False)
        first.core.delete_node(other)
    assert run.rc == 2, run
    report = json.loads((tmp_path / 'work' / 'report.json').read_text())
    assert report['clusters']['a']['outcome'] == report['clusters']['b']['outcome'] == 'ok', report['clusters']
    assert report['clusters']['c']['outcome'] == 'failed' and 'max_not_ready' in report['clusters']['c']['msg'], report
    assert all(_state(third, n, cr_name) is None for n in third.nodes(labelled))
    assert "the fleet's rollout stopped" not in run.stdout, run.stdout[-3000:]
    assert '1 cluster(s) failed (c); the rollout went on within max_failures' in run.stdout, run.stdout[-3000:]
    for member in fleet_clusters[:2]:
        assert all(_state(member, n, cr_name) == 'complete' for n in member.nodes(labelled)), member.id


def test_two_fleet_runs_at_once_share_one_budget(fleet_clusters, labelled, runner, tmp_path):
    """Two fleet runs of the same fleet name over different clusters (a and b; c), their budget in a coordination
    cluster given by its kubeconfig: together never more than the budget cordoned or rebooting."""
    cr_name = 'fleet-two-%s' % labelled
    cr_file = _write(tmp_path, 'cr.yaml', skyhook(cr_name, {'tuning': package(interrupt={'type': 'reboot'})},
                                                  selector={'nodewright.bridge/fleet': labelled}, interruptionBudget={'count': 2}))
    coordination = {'kubeconfig': str(fleet_clusters[0].handle.kubeconfig)}
    connections = dict((m.id, {'kubeconfig': str(m.handle.kubeconfig)}) for m in fleet_clusters)
    first = {'name': 'shared', 'clusters': {'a': connections['a'], 'b': connections['b']}, 'budget': {'count': 2},
             'coordination': coordination, 'budget_namespace': NAMESPACE, 'stages': [{'name': 'ab', 'clusters': ['a', 'b']}]}
    second = {'name': 'shared', 'clusters': {'c': connections['c']}, 'budget': {'count': 2}, 'coordination': coordination,
              'budget_namespace': NAMESPACE, 'stages': [{'name': 'c', 'clusters': ['c']}]}
    apply_vars = {'nodewright_namespace': NAMESPACE, 'nodewright_stage_timeout': 90}
    sampler = DisruptionSampler(fleet_clusters, labelled)
    sampler.start()
    try:
        other, output, reader = _start(runner, {
            'nodewright_fleet': _write(tmp_path, 'second.yml', second), 'nodewright_cr': cr_file,
            'nodewright_fleet_dir': str(tmp_path / 'second'), 'nodewright_fleet_apply_vars': apply_vars})
        run = runner.run('nodewright.bridge.fleet', extra_vars={
            'nodewright_fleet': _write(tmp_path, 'first.yml', first), 'nodewright_cr': cr_file,
            'nodewright_fleet_dir': str(tmp_path / 'first'), 'nodewright_fleet_apply_vars': apply_vars})
        assert other.wait(timeout=600) == 0, ''.join(output)[-3000:]
        reader.join()
    finally:
        sampler.stop.set()
        sampler.join()
    print('two fleet runs, budget 2: most nodes cordoned or rebooting at once over 3 clusters %d (%d samples)'
          % (sampler.peak, sampler.samples))
    assert run.rc == 0, run
    for member in fleet_clusters:
        assert all(_state(member, n, cr_name) == 'complete' for n in member.nodes(labelled)), member.id
    assert sampler.samples > 20 and 1 <= sampler.peak <= 2, (sampler.peak, sampler.samples)


def test_a_cluster_whose_api_server_stops_mid_rollout_stops_the_fleet_and_a_later_run_finishes(
        fleet_clusters, labelled, runner, tmp_path, monkeypatch):
    """Cluster b's API server stops while b rolls out (its run gives up after the outage timeout): b fails, the fleet
    stops before c; once the API server is back, the next run finishes b (its cordoned node released) and c."""
    monkeypatch.setenv('NODEWRIGHT_API_OUTAGE_TIMEOUT', '8')
    cr_name = 'fleet-outage-%s' % labelled
    cr_file = _write(tmp_path, 'cr.yaml', skyhook(cr_name, {'tuning': package(interrupt={'type': 'reboot'})},
                                                  selector={'nodewright.bridge/fleet': labelled}, interruptionBudget={'count': 1}))
    fleet = _fleet(fleet_clusters, stages=[{'name': 'canary', 'clusters': ['a']},
                                           {'name': 'rest', 'clusters': ['b', 'c'], 'max_concurrency': 1}])
    extra = {'nodewright_fleet': _write(tmp_path, 'fleet.yml', fleet), 'nodewright_cr': cr_file,
             'nodewright_fleet_dir': str(tmp_path / 'first'),
             'nodewright_fleet_apply_vars': {'nodewright_namespace': NAMESPACE, 'nodewright_stage_timeout': 120}}
    second = fleet_clusters[1]
    second_nodes = second.nodes(labelled)
    proc, output, reader = _start(runner, extra)
    deadline = time.monotonic() + 180
    while not any(second.handle.core.read_node(n).spec.unschedulable for n in second_nodes):
        assert time.monotonic() < deadline and proc.poll() is None, ''.join(output)[-3000:]
        time.sleep(0.2)
    launcher.stop_component(second.handle.info, 'kube-apiserver')
    try:
        assert proc.wait(timeout=300) == 2, ''.join(output)[-3000:]
        reader.join()
    finally:
        launcher.start_component(second.handle.info, 'kube-apiserver')
    text = ''.join(output)
    assert "the fleet's rollout stopped: 1 cluster(s) failed (b)" in text, text[-3000:]
    report = json.loads((tmp_path / 'first' / 'report.json').read_text())
    assert report['clusters']['b']['outcome'] == 'failed' and report['clusters']['c']['outcome'] == 'not started', report
    assert all(_state(fleet_clusters[2], n, cr_name) is None for n in fleet_clusters[2].nodes(labelled))
    # the API server back (its controllers and kwok watching again), the next run finishes b and c
    launcher.wait_until('cluster b answers again', lambda: second.handle.core.list_node(limit=1) is not None, 120)
    # the fake kubelet anew, as a kubelet resyncs its pods after an outage: kwok does not play again a pod's stage
    # that the outage failed (a stage pod left Running for good would hold the next run until its timeout)
    launcher.stop_component(second.handle.info, 'kwok')
    launcher.start_component(second.handle.info, 'kwok')
    (tmp_path / 'again').mkdir()
    again, dummy = _run(runner, tmp_path / 'again', fleet, cr_file)
    assert again.rc == 0, again
    for member in fleet_clusters:
        for node in member.nodes(labelled):
            assert _state(member, node, cr_name) == 'complete', (member.id, node)
            assert member.handle.core.read_node(node).spec.unschedulable is not True, (member.id, node)


def _hold_operator_lease(member, seconds=600):
    """A NodeWright operator that reconciles in ``member``: its leader Lease held and just renewed (skyhook's)."""
    try:
        member.handle.create_namespace('skyhook')
    except Exception:  # pylint: disable=broad-exception-caught
        pass  # an earlier test made it
    put_lease(member.handle, 'skyhook', duration=seconds)


def _release_operator_lease(member):
    try:
        kclient.CoordinationV1Api(member.handle.api).delete_namespaced_lease(OPERATOR_LEASE, 'skyhook')
    except kclient.ApiException:
        pass


def _complete_as_the_operator(source, target, label, cr_name):
    """``target``'s nodes left as an operator that completed the CR leaves them: a node ``source``'s canary run
    completed, its NodeWright labels and annotations copied (the same CR, the same packages)."""
    body = source.handle.core.read_node(source.nodes(label)[0])

    def own(values):
        return dict((k, v) for k, v in (values or {}).items() if k.startswith(PREFIX) and cr_name in k)
    patch = {'metadata': {'labels': own(body.metadata.labels), 'annotations': own(body.metadata.annotations)}}
    assert patch['metadata']['labels'] and patch['metadata']['annotations'], body.metadata
    for node in target.nodes(label):
        target.handle.core.patch_node(node, patch)


def test_a_cluster_whose_operator_reconciles_the_cr_is_skipped_or_handed_over(fleet_clusters, labelled, runner, tmp_path):
    """b's operator reconciles the CR (handover: the fleet waits for it); c's too (skip, the default): neither cluster
    is touched, the canary a is rolled out, and the run ends once b's operator completed its nodes."""
    cr_name = 'fleet-operator-%s' % labelled
    doc = skyhook(cr_name, {'quick': package()}, selector={'nodewright.bridge/fleet': labelled}, interruptionBudget={'count': 1})
    cr_file = _write(tmp_path, 'cr.yaml', doc)
    canary, handed, skipped = fleet_clusters
    fleet = _fleet(fleet_clusters)
    fleet['clusters']['b']['operator'] = 'handover'
    work = tmp_path / 'fleet-work'
    extra = {'nodewright_fleet': _write(tmp_path, 'fleet.yml', fleet), 'nodewright_cr': cr_file,
             'nodewright_fleet_dir': str(work), 'nodewright_fleet_apply_vars': {'nodewright_namespace': NAMESPACE}}
    for member in (handed, skipped):
        kclient.CustomObjectsApi(member.handle.api).create_cluster_custom_object(PREFIX, 'v1alpha1', 'skyhooks', doc)
        _hold_operator_lease(member)
    try:
        proc, output, reader = _start(runner, extra)
        deadline = time.monotonic() + 120
        while '[b] stage rest: handed over: the NodeWright operator reconciles %s' % cr_name not in ''.join(output):
            assert time.monotonic() < deadline and proc.poll() is None, ''.join(output)[-3000:]
            time.sleep(0.2)
        assert all(_state(canary, n, cr_name) == 'complete' for n in canary.nodes(labelled))
        time.sleep(3)  # the fleet waits for b's operator, touching nothing there
        for member in (handed, skipped):
            for node in member.nodes(labelled):
                body = member.handle.core.read_node(node)
                assert body.spec.unschedulable is not True and _state(member, node, cr_name) is None, (member.id, node)
        assert proc.poll() is None, ''.join(output)[-3000:]
        _complete_as_the_operator(canary, handed, labelled, cr_name)
        assert proc.wait(timeout=60) == 0, ''.join(output)[-3000:]
        reader.join(timeout=10)
    finally:
        for member in (handed, skipped):
            _release_operator_lease(member)
            kclient.CustomObjectsApi(member.handle.api).delete_cluster_custom_object(PREFIX, 'v1alpha1', 'skyhooks', cr_name)
    text = ''.join(output)
    report = json.loads((work / 'report.json').read_text())
    assert dict((c, r['outcome']) for c, r in report['clusters'].items()) == {'a': 'ok', 'b': 'handed over', 'c': 'skipped'}
    assert report['clusters']['c']['msg'].startswith('skipped: the NodeWright operator reconciles %s (' % cr_name), report
    assert 'operator: skip; nothing in this cluster was touched' in report['clusters']['c']['msg']
    assert re.search(r'\[b\] stage rest: its operator has left b: %s: 2 not complete' % cr_name, text), text[-3000:]
    assert not (work / 'b.log').exists() and not (work / 'c.log').exists(), 'an apply ran where the operator reconciles'
    for node in skipped.nodes(labelled):
        assert _state(skipped, node, cr_name) is None, node


class KubeconfigPerCluster:
    """An AWX custom credential type per cluster, as docs/fleet.md's AWX section sets it up: its injector writes the
    cluster's kubeconfig to a file of the job's private data dir and names it in an environment variable
    (``<ID>_KUBECONFIG``), which the cluster's inventory host variable reads."""

    def __init__(self, kubeconfigs):
        self.kubeconfigs = kubeconfigs  # cluster id -> the kubeconfig's path here

    def inject(self, private_data_dir):
        env_dir = private_data_dir / 'env'
        env_dir.mkdir(mode=0o700, exist_ok=True)
        env = {}
        for cid, path in self.kubeconfigs.items():
            written = env_dir / ('tmp-kubeconfig-%s' % cid)
            written.write_text(open(path, encoding='utf-8').read())
            written.chmod(0o600)
            env['%s_KUBECONFIG' % cid.upper()] = '%s/env/%s' % (awx_jobs.CONTAINER_ROOT, written.name)
        return env


def test_an_awx_job_rolls_the_fleet_out_with_a_credential_per_cluster(fleet_clusters, labelled, ee, tmp_path):
    """The fleet as an AWX job template runs it in the collection's execution environment: the clusters an inventory's
    hosts in a group per stage, each reached with the kubeconfig its own credential injects, nothing else set."""
    cr_name = 'fleet-awx-%s' % labelled
    doc = skyhook(cr_name, {'quick': package()}, selector={'nodewright.bridge/fleet': labelled}, interruptionBudget={'count': 1})
    root = awx_jobs.CONTAINER_ROOT
    project = {
        'ansible.cfg': '[defaults]\ncallbacks_enabled = nodewright.bridge.rollout\n',
        'playbooks/fleet.yml': '---\n- name: Roll the fleet out\n  ansible.builtin.import_playbook: nodewright.bridge.fleet\n',
        'fleet.yml': yaml.safe_dump({'name': 'gpu', 'stages': [
            {'name': 'canary', 'group': 'canary_clusters'}, {'name': 'rest', 'group': 'gpu_clusters'}]}),
        'cr.yaml': yaml.safe_dump(doc),
    }
    hostvars = dict((m.id, {'nodewright_cluster_kubeconfig': "{{ lookup('ansible.builtin.env', '%s_KUBECONFIG') }}" % m.id.upper()})
                    for m in fleet_clusters)
    inventory = {'_meta': {'hostvars': hostvars}, 'all': {'children': ['canary_clusters', 'gpu_clusters', 'ungrouped']},
                 'canary_clusters': {'hosts': ['a']}, 'gpu_clusters': {'hosts': ['b', 'c']}}
    ident = str(uuid.uuid4().int % 90000 * 10 + 10000)
    extra_vars = {'nodewright_fleet': '%s/project/fleet.yml' % root, 'nodewright_cr': '%s/project/cr.yaml' % root,
                  'nodewright_fleet_dir': '%s/artifacts/%s/fleet' % (root, ident), 'awx_job_id': ident,
                  'nodewright_fleet_apply_vars': {'nodewright_namespace': NAMESPACE, 'nodewright_stage_timeout': 120}}
    image, podman = ee
    credential = KubeconfigPerCluster(dict((m.id, m.handle.kubeconfig) for m in fleet_clusters))
    job = awx_jobs.AwxJob(tmp_path, ident, image, podman, project, 'playbooks/fleet.yml', inventory, extra_vars, credential)
    result = job.start().finish(timeout=600)
    assert result.status == 'successful' and result.rc == 0, result
    for member in fleet_clusters:
        nodes = member.nodes(labelled)
        assert len(nodes) == 2 and all(_state(member, n, cr_name) == 'complete' for n in nodes), (member.id, result)
    # as the AWX user sees it: a host per node with its cluster in the recap, each cluster's batches in the output
    stats = result.stats()
    assert set(stats['ok']) >= set('%s/%s' % (m.id, n) for m in fleet_clusters for n in m.nodes(labelled)), stats
    assert stats['failures'] == {} and stats['dark'] == {}, stats
    assert re.search(r'nodewright fleet: \[c\] \[__default__\] batch 2: size 1, ok 1', result.stdout), result
    report = json.loads((result.artifacts / 'fleet' / 'report.json').read_text())
    assert dict((c, r['outcome']) for c, r in report['clusters'].items()) == {'a': 'ok', 'b': 'ok', 'c': 'ok'}, report
