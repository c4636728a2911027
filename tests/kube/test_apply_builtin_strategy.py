# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""nodewright.bridge.apply without the budgeted strategy (nodewright_rollout_strategy: builtin, or an ansible-core that
cannot load it): the stock linear strategy, the rollout driven from one task (nodewright.bridge.rollout_run), and
the same batches, CR status, report, recap and exit codes as the strategy's (tests/kube/test_batch_state.py asserts
the strategy's batches of this policy). Runs in a kube shard on the pinned ansible-core, and on the versions of the matrix that run every test
(tests/strategy/run_matrix.sh).
"""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import launcher
import pytest
from kubernetes import client as kclient

from module_runner import PlaybookRunner
from nodewright_fixtures import FAIL_PKG_IMAGE, GROUP, PLURAL, VERSION, package

pytestmark = pytest.mark.cluster

POLICY = {'default': {'budget': {'count': 4}, 'strategy': {'exponential': {'initialBatch': 1, 'growthFactor': 2}}}}
DEPRECATION = 'Use of strategy plugins not included in ansible.builtin are deprecated'


@pytest.fixture(scope='module')
def without_strategy(playbooks, tmp_path_factory):
    """Playbooks run with a copy of the collection that has no strategy plugin: what an ansible-core that cannot load
    third-party strategies leaves of it (the rest are links to this checkout)."""
    root = tmp_path_factory.mktemp('no-strategy')
    repo = Path(__file__).resolve().parents[2]
    bridge = root / 'ansible_collections' / 'nodewright' / 'bridge'
    (bridge / 'plugins').mkdir(parents=True)
    for entry in repo.iterdir():
        if entry.name not in ('plugins', '.git', 'build', '.venv'):
            (bridge / entry.name).symlink_to(entry)
    for entry in (repo / 'plugins').iterdir():
        if entry.name != 'strategy':
            (bridge / 'plugins' / entry.name).symlink_to(entry)
    return PlaybookRunner(playbooks.kubeconfig, root, plan_kubeconfig=playbooks.plan_kubeconfig,
                          admin_kubeconfig=playbooks.admin_kubeconfig)


def _new_pool(cluster):
    value = uuid.uuid4().hex[:8]
    names = ['bi-%s-%d' % (value, i) for i in range(4)]
    launcher.create_nodes(cluster.api, names, labels={'nodewright.bridge/builtin': value}, start_index=960)
    launcher.wait_nodes_ready(cluster.api, names, timeout=60)
    return names, {'nodewright.bridge/builtin': value}


@pytest.fixture
def pools(cluster):
    """``pools()``: four fresh nodes with a label of their own, each call; deleted afterwards."""
    made = []

    def make():
        made.append(_new_pool(cluster))
        return made[-1]
    yield make
    for names, dummy in made:
        for name in names:
            cluster.core.delete_node(name)


@pytest.fixture
def policy(cluster):
    custom = kclient.CustomObjectsApi(cluster.api)
    name = 'bi-%s' % uuid.uuid4().hex[:6]
    custom.create_cluster_custom_object(GROUP, VERSION, 'deploymentpolicies', {
        'apiVersion': f'{GROUP}/{VERSION}', 'kind': 'DeploymentPolicy', 'metadata': {'name': name}, 'spec': POLICY})
    yield name
    custom.delete_cluster_custom_object(GROUP, VERSION, 'deploymentpolicies', name)


def _apply(playbooks, name, namespace, check=False, strategy='builtin'):
    extra_vars = {'nodewright_cr_name': name, 'nodewright_namespace': namespace, 'nodewright_stage_timeout': 90}
    if strategy is not None:
        extra_vars['nodewright_rollout_strategy'] = strategy
    return playbooks.run('nodewright.bridge.apply', check=check, extra_vars=extra_vars)


def _recap(run):
    """host -> {ok, changed, failed, skipped} from the PLAY RECAP."""
    recap = {}
    for host, counts in re.findall(r'^(\S+)\s+:\s+(ok=.*)$', run.stdout, re.M):
        recap[host] = dict((k, int(v)) for k, v in re.findall(r'(\w+)=(\d+)', counts))
    return recap


def _batches(report):
    """``[(number, size)]`` of every batch of the report's rollouts."""
    return [(b['number'], b['size']) for r in report['rollouts'] for c in r['compartments'].values() for b in c['batches']]


def test_apply_without_the_strategy_rolls_the_same_batches_and_reports_them(
        cluster, playbooks, without_strategy, namespace, crs, pools, policy):
    names, selector = pools()
    cr = crs.create({'quick': package()}, selector=selector, deploymentPolicy=policy)
    name = cr['metadata']['name']

    planned = _apply(playbooks, name, namespace, check=True)
    assert planned.rc == 0, planned
    assert all(cluster.core.read_node(n).spec.unschedulable is not True for n in names)

    # nodewright_rollout_strategy unset (auto): the collection has no strategy plugin, the builtin path is chosen
    run = _apply(without_strategy, name, namespace, strategy=None)
    assert run.rc == 0, run
    assert DEPRECATION not in run.stdout + run.stderr, 'the budgeted strategy was loaded'
    assert 'PLAY [NodeWright apply | roll the CRs out, lowest priority first (without the budgeted strategy)]' in run.stdout
    # the strategy's batches of this policy (test_batch_state.py): exponential from 1, budget 4
    assert _batches(run.report) == [(1, 1), (2, 2), (3, 1)], run.report
    assert sorted(run.report['rollouts'][-1]['nodes']) == sorted(names)
    recap = _recap(run)
    # each node's own task changed it (the first host also ran the rollout's task, changed too)
    assert re.findall(r'^changed: \[(\S+)\] => \{\n\s+"msg"', run.stdout, re.M) != [], run.stdout[-3000:]
    for node in names:
        assert recap[node]['changed'] >= 1 and recap[node]['failed'] == 0, recap
    status = kclient.CustomObjectsApi(cluster.api).get_cluster_custom_object(GROUP, VERSION, PLURAL, name)['status']
    assert status['status'] == 'complete', status
    for node in names:
        assert cluster.core.read_node(node).spec.unschedulable is not True

    # chosen by the variable, with the strategy there: nothing left to do, nothing changed
    again = _apply(playbooks, name, namespace)
    assert again.rc == 0, again
    assert DEPRECATION not in again.stdout + again.stderr, 'the budgeted strategy was loaded'
    assert all(_recap(again).get(n, {}).get('changed', 0) == 0 for n in names), again.stdout[-3000:]


def _outcome(run, names):
    """What a user of either path sees: rc, the batches (size, failed count), stopped, never admitted, failed hosts."""
    rollout = run.report['rollouts'][-1]
    comp = rollout['compartments']['__default__']
    recap = _recap(run)
    return {'rc': run.rc, 'batches': [(b['size'], len(b['failed'])) for b in comp['batches']], 'stopped': comp['stopped'],
            'not_attempted': len(rollout['not_attempted']), 'failed_hosts': sum(1 for n in names if recap[n]['failed'])}


def test_failing_nodes_give_the_strategys_batches_stop_and_exit_code(cluster, playbooks, namespace, crs, pools, policy):
    outcomes = {}
    for strategy in ('budgeted', 'builtin'):
        names, selector = pools()
        cr = crs.create({'broken': package(image=FAIL_PKG_IMAGE)}, selector=selector, deploymentPolicy=policy)
        run = _apply(playbooks, cr['metadata']['name'], namespace, strategy=strategy)
        outcomes[strategy] = _outcome(run, names)
    print(outcomes)
    assert outcomes['builtin'] == outcomes['budgeted']
    assert outcomes['builtin']['rc'] == 2 and outcomes['builtin']['failed_hosts'] >= 1


def test_bad_node_options_fail_before_any_node_is_touched(cluster, playbooks, namespace, crs, pools, policy):
    names, selector = pools()
    cr = crs.create({'quick': package()}, selector=selector, deploymentPolicy=policy)
    run = playbooks.run('nodewright.bridge.apply', extra_vars={
        'nodewright_cr_name': cr['metadata']['name'], 'nodewright_namespace': namespace,
        'nodewright_rollout_strategy': 'builtin', 'nodewright_stage_retries': 'many'})
    assert run.rc != 0, run
    assert 'stage_retries' in run.stdout, run.stdout[-3000:]
    # the plan play records the nodes as waiting, as with the strategy; the rollout starts nothing on them
    assert 'no node touched' in run.stdout, run.stdout[-3000:]
    assert cluster.core.list_namespaced_pod(namespace).items == []
    for node in names:
        assert cluster.core.read_node(node).spec.unschedulable is not True
