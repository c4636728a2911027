# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""Faults in the middle of `ansible-playbook nodewright.bridge.apply` (issue 13), on a cluster of their own.

The API server stopped for 20 s (during a drain, a package pod and a reboot wait), etcd restarted,
a node deleted while it is in a batch, a watch cut silently, a token that expires mid-run and
SIGTERM to ansible-playbook. After each: the run finishes, or fails only the affected hosts with a
message that names the fault; a re-run finishes; every node ends complete and uncordoned, no node
was ever cordoned without its ``cordon_`` ownership record, no nodeState entry was lost or went
back; and what the runs created is counted from the audit log: every stage pod once per node
(the interrupted step's pod is adopted by the re-run, not created again).

The cluster is this module's (``launcher.up`` in a temp dir, audit log on): the session cluster
of the other tests is never restarted. Each test prints one line, ``FAULT <name>: ...``, with its
figures (``pytest -s``). The CR: ``prep`` (a slow image: its pods start after 5 s, see
tests/cluster/stages/pod-slow.yaml) then ``driver`` with a reboot interrupt; 6 stage pods a node.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest
import yaml
from kubernetes import client as kclient

import fault_support as fs
import helpers
import launcher
import stall_proxy
from module_runner import PlaybookRunner, launch
from test_e2e_apply import STATUS, PodRecorder, Pool, _apply

SLOW = '5s'
STAGES = [('prep', 'apply'), ('prep', 'config'), ('driver', 'apply'), ('driver', 'config'),
          ('driver', 'interrupt'), ('driver', 'post-interrupt')]
OUTAGE = 20.0


def _cr(name, pool, policy, driver_image='registry.local/driver'):
    packages = {
        'prep': {'version': '1.0.0', 'image': f'registry.local/slow-{SLOW}/prep'},
        'driver': {'version': '2.0.0', 'image': driver_image, 'dependsOn': {'prep': '1.0.0'},
                   'interrupt': {'type': 'reboot'}},
    }
    return {'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'Skyhook', 'metadata': {'name': name},
            'spec': {'nodeSelectors': {'matchLabels': {'nodewright.bridge/pool': pool}},
                     'deploymentPolicy': policy, 'packages': packages}}


def _policy(name):
    # every node of the pool in one batch: the fault hits a batch in flight
    return {'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'DeploymentPolicy', 'metadata': {'name': name},
            'spec': {'compartments': [{'name': 'rack-a', 'selector': {'matchLabels': {'rack': 'a'}},
                                       'budget': {'percent': 100}, 'strategy': {'fixed': {'initialBatch': 3}}}],
                     'default': {'budget': {'count': 1}, 'strategy': {'fixed': {'initialBatch': 1}}}}}


class FaultPool(Pool):
    """A Pool (test_e2e_apply) with the fault tests' CR."""

    def write_cr(self, failure_threshold=None, failing_image=False, **package_options):
        del failure_threshold, failing_image
        self.cr = f'e2e-{self.id}'
        docs = [_cr(self.cr, self.id, f'policy-{self.id}', **package_options), _policy(f'policy-{self.id}')]
        path = self.tmp_path / f'{self.cr}.yaml'
        path.write_text(yaml.safe_dump_all(docs, sort_keys=False))
        return path


@pytest.fixture(scope='module')
def fcluster(tmp_path_factory):
    """A cluster of this module's own, with an audit log; stopped after the module."""
    with helpers.own_cluster(tmp_path_factory.mktemp('fault-cluster'), 'the fault test cluster', nodes=1, audit=True) as handle:
        yield handle


@pytest.fixture(scope='module')
def fplaybooks(fcluster, tmp_path_factory):  # pylint: disable=redefined-outer-name
    return PlaybookRunner(fcluster.kubeconfig, tmp_path_factory.mktemp('fault-playbooks'))


class Scene:
    """One fault test: its pool, namespace, recorder and node watch; the checks every fault ends with."""

    def __init__(self, cluster, tmp_path, nodes, hand_reboot=()):
        self.cluster = cluster
        self.info = cluster.info
        self.pool = FaultPool(cluster, tmp_path, {'a': nodes})
        self.path = self.pool.write_cr()
        self.cr = self.pool.cr
        self.names = self.pool.names
        for index in hand_reboot:
            cluster.opt_out_of_fake_reboots(self.names[index])
        self.namespace = f'f-{self.pool.id}'
        # after an API server restart the controllers (the namespace's service account) take a while
        cluster.create_namespace(self.namespace, timeout=120)
        self.recorder = PodRecorder(cluster, self.namespace)
        self.watch = fs.NodeWatch(cluster.core, self.names, self.cr)

    def variables(self, **extra):
        return _apply(None, self.path, self.namespace, **extra)

    def close(self):
        self.recorder.stop.set()
        self.watch.stop.set()
        self.pool.close()
        try:
            self.cluster.delete_namespace(self.namespace)
        except Exception:  # pylint: disable=broad-exception-caught
            pass

    # -------------------------------------------------------------- moments

    def pods(self, node=None):
        """The package/interrupt pods of the namespace now: [(node, package, stage, phase, name)]."""
        out = []
        for pod in self.cluster.core.list_namespaced_pod(self.namespace, _request_timeout=5).items:
            info = fs.json.loads((pod.metadata.annotations or {}).get(fs.PACKAGE_ANNOTATION) or '{}')
            if info and (node is None or pod.spec.node_name == node) and not pod.metadata.deletion_timestamp:
                out.append((pod.spec.node_name, info.get('name'), info.get('stage'), pod.status.phase, pod.metadata.name))
        return out

    def wait_pod(self, node, package, stage, timeout=180, phase='Pending'):
        def there():
            return [p for p in self.pods(node) if p[1:3] == (package, stage) and (phase is None or p[3] == phase)]
        return helpers.wait_for(there, timeout, interval=0.2, what=f'a {package} {stage} pod on {node}')[0]

    def wait_drain_blocked(self, node, blocker, timeout=120):
        def blocked():
            obj = self.cluster.core.read_node(node)
            pods = {p.metadata.name for p in self.cluster.core.list_namespaced_pod(self.namespace).items}
            return obj.spec.unschedulable and blocker in pods
        helpers.wait_for(blocked, timeout, interval=0.2, what=f'{node} cordoned with {blocker} still on it')
        # well into the drain's eviction retries: its eviction refused (429) twice, as the audit log shows
        helpers.wait_for(lambda: fs.refused_evictions(self.info.audit_log, self.namespace, blocker) >= 2, timeout,
                         interval=0.3, what=f'the eviction of {blocker} refused twice by its PDB')

    def block_drain(self, node):
        """A pod on node that a PDB keeps from being evicted; returns (pod, PDB) names."""
        labels = {'app': f'blocker-{node}'}
        self.cluster.core.create_namespaced_pod(self.namespace, {
            'metadata': {'name': f'blocker-{node}'[:63], 'labels': labels},
            'spec': {'nodeName': node, 'containers': [{'name': 'c', 'image': 'registry.local/serve:1'}]}})
        kclient.PolicyV1Api(self.cluster.api).create_namespaced_pod_disruption_budget(self.namespace, {
            'metadata': {'name': f'pdb-{node}'[:63]}, 'spec': {'minAvailable': 1, 'selector': {'matchLabels': labels}}})
        self.cluster.wait_pod(self.namespace, f'blocker-{node}'[:63], lambda p: p.status.phase == 'Running')
        return f'blocker-{node}'[:63], f'pdb-{node}'[:63]

    def unblock_drain(self, pdb):
        kclient.PolicyV1Api(self.cluster.api).delete_namespaced_pod_disruption_budget(pdb, self.namespace)

    def outage(self, seconds=OUTAGE, component='kube-apiserver'):
        """Stop a control-plane component for ``seconds`` (a 2 s SIGTERM grace, then SIGKILL); returns the time away."""
        return launcher.restart_component(self.info, component, down_seconds=seconds, stop_timeout=2.0)

    # -------------------------------------------------------------- verdicts

    def assert_all_complete(self, skip=()):
        for name in self.names:
            if name in skip:
                continue
            node = self.cluster.core.read_node(name)
            state = self.pool.state(name)
            assert {k: (v['stage'], v['state']) for k, v in state.items()} == {
                'prep|1.0.0': ('config', 'complete'), 'driver|2.0.0': ('post-interrupt', 'complete')}, name
            assert node.metadata.labels[STATUS + self.cr] == 'complete', name
            assert not node.spec.unschedulable, f'{name} was left cordoned'

    def assert_nothing_lost(self):
        self.watch.finish()
        assert self.watch.samples > 5, 'the node watch hardly sampled'
        assert not self.watch.rollbacks, f'nodeState entries lost or rolled back: {self.watch.rollbacks[:5]}'
        assert not self.watch.unowned_cordons, f'cordoned without the cordon_ record: {self.watch.unowned_cordons[:5]}'
        for name in self.names:
            try:
                node = self.cluster.core.read_node(name)
            except kclient.ApiException:
                continue  # deleted on purpose
            assert not fs.invalid_entries(node, self.cr)
            assert not fs.unowned_cordon(node, self.cr), name

    def rerun_and_check(self, playbooks):
        """Run the apply again; it must finish every node with nothing lost or run twice: ``(result, seconds, summary)``."""
        t0 = time.monotonic()
        again = playbooks.run('nodewright.bridge.apply', extra_vars=self.variables())
        seconds = time.monotonic() - t0
        assert again.rc == 0, again
        self.assert_all_complete()
        self.assert_nothing_lost()
        return again, seconds, self.assert_each_stage_once()

    def counts(self):
        """(node, package, stage) -> pods created, over every run of this scene (audit log)."""
        return fs.stage_pod_counts(self.info.audit_log, self.namespace, self.recorder)

    def assert_each_stage_once(self, nodes=None, allow=()):
        """Every stage pod of ``nodes`` created exactly once (``allow``: keys that may be twice); returns a summary."""
        counts = self.counts()
        nodes = self.names if nodes is None else nodes
        expected = {(n, p, s) for n in nodes for p, s in STAGES}
        again = {k: v for k, v in counts.items() if v > 1}
        missing = expected - set(counts)
        assert not missing, f'stage pods never created: {sorted(missing)}'
        assert not (set(again) - set(allow)), f'created more than once: {again}'
        others = {k: v for k, v in counts.items() if k not in expected}
        return f'{sum(v for k, v in counts.items() if k in expected)} stage pods created for {len(nodes)} nodes x {len(STAGES)} stages, ' \
               f're-created: {again or "none"}' + (f', other pods: {others}' if others else '')


@pytest.fixture
def scene(fcluster, tmp_path):  # pylint: disable=redefined-outer-name
    made = []

    def make(nodes, hand_reboot=()):
        made.append(Scene(fcluster, tmp_path, nodes, hand_reboot))
        return made[-1]
    yield make
    for item in made:
        item.close()


def _failures(result):
    """The 'fatal:' / 'failed:' lines of a run's output."""
    return [line for line in result.stdout.splitlines() if line.startswith(('fatal:', 'failed:'))]


def _message(line):
    """The "message" of a fatal: line of a run's output (or the line)."""
    text = line.partition('=> ')[2]
    try:
        return fs.json.loads(text).get('message') or line
    except ValueError:
        return line


# ------------------------------------------------------------------ a. the API server away for 20 s

@pytest.mark.slow
def test_api_server_stopped_during_drain_package_pod_and_reboot_wait(fcluster, fplaybooks, scene):  # pylint: disable=redefined-outer-name
    # One node, so that every outage falls at the moment it is meant for. The timeouts leave room
    # for KWOK, the fake kubelet, which after a restart of the API server may take a minute or more
    # to act on a pod again (its retries back off); a real kubelet resyncs every few seconds.
    sc = scene(1, hand_reboot=(0,))
    node = sc.names[0]
    blocker, pdb = sc.block_drain(node)
    slow = {'nodewright_stage_timeout': 300, 'nodewright_interrupt_timeout': 300, 'nodewright_drain_timeout': 300}
    run = launch(fplaybooks, 'nodewright.bridge.apply', extra_vars=sc.variables(**slow))
    away = {}
    try:
        sc.wait_drain_blocked(node, blocker)
        away['drain'] = sc.outage()
        sc.unblock_drain(pdb)
        # prep has no interrupt: it ran before the cordon (ProcessInterrupt); driver's pods come after the drain
        # its image finishes at once and the pod is deleted on success: wait for its record on the node instead
        helpers.wait_for(lambda: 'driver|2.0.0' in sc.pool.state(node), 180, interval=0.2,
                         what=f'driver started on {node}')
        away['pod'] = sc.outage()
        sc.wait_pod(node, 'driver', 'interrupt', phase=None)
        away['reboot'] = sc.outage()
        # kwok, like the controllers, takes a while to watch again after three restarts
        fcluster.reboot_node(node, timeout=90)
    finally:
        result = run.finish(timeout=600)
    failed = _failures(result)
    if result.rc != 0:
        # only an outage may be the reason
        assert failed and all('API server' in line or 'apiserver' in line.lower() for line in failed), (
            f'{result}\n--- kwok log (tail) ---\n{launcher._tail(Path(fcluster.info.state_dir) / "logs" / "kwok.log", 40)}')  # pylint: disable=protected-access
    again, rerun_seconds, summary = sc.rerun_and_check(fplaybooks)
    print(f'\nFAULT apiserver-down: outages {", ".join(f"{k} {v:.1f}s" for k, v in away.items())}; '
          f'run rc {result.rc} in {run.duration:.0f}s ({len(failed)} failed tasks), re-run rc {again.rc} '
          f'in {rerun_seconds:.0f}s; {summary}')


# ------------------------------------------------------------------ b. etcd restarted, data kept

def test_etcd_restarted_mid_batch(fcluster, fplaybooks, scene):  # pylint: disable=redefined-outer-name
    del fcluster
    sc = scene(2)
    run = launch(fplaybooks, 'nodewright.bridge.apply', extra_vars=sc.variables())
    try:
        sc.wait_pod(sc.names[0], 'prep', 'apply')
        away = sc.outage(seconds=4, component='etcd')
    finally:
        result = run.finish(timeout=600)
    failed = _failures(result)
    if result.rc != 0:
        assert failed and all('etcd' in line or 'API server' in line for line in failed), result
    again, rerun_seconds, summary = sc.rerun_and_check(fplaybooks)
    print(f'\nFAULT etcd-restart: away {away:.1f}s; run rc {result.rc} in {run.duration:.0f}s '
          f'({len(failed)} failed tasks), re-run rc {again.rc} in {rerun_seconds:.0f}s; {summary}')


# ------------------------------------------------------------------ c. a node deleted in its batch

def test_node_deleted_while_its_package_pod_runs(fcluster, fplaybooks, scene):  # pylint: disable=redefined-outer-name
    sc = scene(2)
    gone, stays = sc.names
    run = launch(fplaybooks, 'nodewright.bridge.apply', extra_vars=sc.variables())
    try:
        sc.wait_pod(gone, 'prep', 'apply')
        fcluster.core.delete_node(gone)
        deleted_at = time.monotonic()
    finally:
        result = run.finish(timeout=600)
    failed = _failures(result)
    assert [line for line in failed if gone in line] and all('node deleted' in line for line in failed if gone in line), result
    assert not [line for line in failed if stays in line], result
    sc.assert_all_complete(skip=(gone,))
    sc.assert_nothing_lost()
    summary = sc.assert_each_stage_once(nodes=[stays])
    comp = (result.report or {}).get('compartments', {}).get('rack-a')
    assert comp, result.report
    batch = comp['batches'][-1]
    # removed from its compartment, as the operator drops deleted nodes: neither ok nor failed
    assert stays in batch['ok'] and gone not in batch['ok'] and gone not in batch['failed'], comp
    assert batch.get('removed') == [gone] and comp.get('removed') == [gone] and comp.get('failed') == 0, comp
    assert '1 removed (node deleted)' in result.stdout, result
    print(f'\nFAULT node-deleted: run rc {result.rc} in {run.duration:.0f}s ({run.duration - (deleted_at - run.started):.0f}s '
          f'after the delete); compartment rack-a: matched {comp.get("matched")}, completed {comp.get("completed")}, '
          f'failed {comp.get("failed")}, batch ok {batch["ok"]} failed {batch["failed"]}; {summary}')


# ------------------------------------------------------------------ d. a watch cut silently

def test_watch_cut_silently_while_a_package_pod_runs(fcluster, scene, tmp_path):  # pylint: disable=redefined-outer-name
    sc = scene(2)
    proxy = stall_proxy.StallProxy(fcluster.info.ports['kube-apiserver']).start()
    try:
        through = PlaybookRunner(proxy.write_kubeconfig(fcluster.kubeconfig, tmp_path / 'proxy.kubeconfig'),
                                 tmp_path / 'proxy-playbooks')
        (tmp_path / 'proxy-playbooks').mkdir(exist_ok=True)
        timeout = 90
        run = launch(through, 'nodewright.bridge.apply', extra_vars=sc.variables(nodewright_stage_timeout=timeout))
        try:
            node, pkg, stage, dummy, name = sc.wait_pod(sc.names[0], 'prep', 'apply')
            # the run's watch of the pod is open (the API server has begun answering it: the audit log); in the
            # sequence engine the stage pods' waits share one watch of the namespace
            helpers.wait_for(lambda: fs.watch_opened(fcluster.info.audit_log, 'pods', f'metadata.name={name}', sc.namespace,
                                                     shared=True),
                             60, interval=0.1, what=f'the watch of pod {name} open')
            cut = proxy.cut_existing()
            cut_at = time.monotonic()
            fcluster.wait_pod(sc.namespace, name, lambda p: p.status.phase == 'Running', timeout=60)
            running_at = time.monotonic()
            helpers.wait_for(lambda: sc.pool.state(node).get('prep|1.0.0', {}).get('state') == 'complete'
                             or sc.pool.state(node).get('prep|1.0.0', {}).get('stage') == 'config',
                             timeout + 30, interval=0.2, what=f'{pkg} {stage} recorded on {node}')
            recorded_at = time.monotonic()
        finally:
            result = run.finish(timeout=600)
    finally:
        proxy.close()
    assert result.rc == 0, result
    stuck = recorded_at - running_at
    assert stuck < timeout, f'the wait was stuck {stuck:.0f}s, beyond its {timeout}s timeout'
    sc.assert_all_complete()
    sc.assert_nothing_lost()
    summary = sc.assert_each_stage_once()
    print(f'\nFAULT watch-cut: {cut} connections cut {running_at - cut_at:.1f}s before the pod finished; '
          f'the finish was recorded {stuck:.1f}s after it (stage timeout {timeout}s); run rc {result.rc} '
          f'in {run.duration:.0f}s; {summary}')


# ------------------------------------------------------------------ e. a token that expires mid-run

JWT_LEEWAY = 60  # the API server accepts a token this long past its exp (go-jose's leeway)


def test_token_expiring_mid_run(fcluster, fplaybooks, scene, tmp_path):  # pylint: disable=redefined-outer-name
    sc = scene(2)
    info = fcluster.info
    account = f'runner-{sc.pool.id}'
    sa = fcluster.core.create_namespaced_service_account(sc.namespace, {'metadata': {'name': account}})
    rbac = kclient.RbacAuthorizationV1Api(fcluster.api)
    rbac.create_cluster_role_binding({
        'metadata': {'name': account},
        'roleRef': {'apiGroup': 'rbac.authorization.k8s.io', 'kind': 'ClusterRole', 'name': 'cluster-admin'},
        'subjects': [{'kind': 'ServiceAccount', 'name': account, 'namespace': sc.namespace}]})
    # a drain that waits 40 s keeps the run going well past the token's end
    dummy, pdb = sc.block_drain(sc.names[0])
    unblock = threading.Timer(40, sc.unblock_drain, (pdb,))
    unblock.start()
    try:
        valid_for = 12  # seconds into the run: past the plan, inside the first batch
        # a JWT's exp is whole seconds: the test's clock must use the same second the token carries
        expires = int(time.time() - JWT_LEEWAY + valid_for)
        token = fs.mint_sa_token(os.path.join(info.state_dir, 'sa.key'), sc.namespace, account, sa.metadata.uid, expires)
        assert fs.token_works(info.server, info.ca_file, token) == 200, 'the minted token is not accepted'
        limited = PlaybookRunner(fs.token_kubeconfig(fcluster.kubeconfig, token, tmp_path / 'token.kubeconfig'),
                                 tmp_path / 'token-playbooks')
        (tmp_path / 'token-playbooks').mkdir(exist_ok=True)
        run = launch(limited, 'nodewright.bridge.apply', extra_vars=sc.variables())
        result = run.finish(timeout=600)
        # refused from exp + leeway on, once the API server's 10 s cache of the last success runs out
        refused_at = expires + JWT_LEEWAY
        assert time.time() > refused_at, f'the run ended before the token expired: {result!r}'
        helpers.wait_for(lambda: fs.token_works(info.server, info.ca_file, token) == 401, 15, interval=1,
                         what='the token to be refused')
    finally:
        rbac.delete_cluster_role_binding(account)
        unblock.join()
    assert result.rc != 0, result
    failed = _failures(result)
    assert failed and all('authentication' in line.lower() for line in failed), result
    sc.assert_nothing_lost()
    touched = [n for n in sc.names if sc.pool.state(n)]
    again, rerun_seconds, summary = sc.rerun_and_check(fplaybooks)
    print(f'\nFAULT token-expired: refused {valid_for}s into the run; run rc {result.rc} after {run.duration:.0f}s, '
          f'{len(failed)} failed tasks, e.g. {_message(failed[0])!r}; nodes touched {len(touched)}; re-run rc {again.rc} '
          f'in {rerun_seconds:.0f}s; {summary}')


# ------------------------------------------------------------------ f. SIGTERM to ansible-playbook

def _terminate(run, whole_group):
    """SIGTERM to ansible-playbook (or its process group); waits for it; returns what was left behind."""
    t0 = time.monotonic()
    if whole_group:
        os.killpg(run.pid, signal.SIGTERM)
    else:
        os.kill(run.pid, signal.SIGTERM)
    try:
        run.proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        pass
    exited = time.monotonic() - t0
    # workers of the run that outlived it (same process group) would race the re-run
    deadline = time.monotonic() + 20
    orphans = True
    while time.monotonic() < deadline:
        try:
            os.killpg(run.pid, 0)
        except ProcessLookupError:
            orphans = False
            break
        time.sleep(0.2)
    if orphans:
        os.killpg(run.pid, signal.SIGKILL)
    result = run.finish(timeout=30)
    return {'rc': result.rc, 'exit_s': round(exited, 1), 'orphans': orphans}


@pytest.mark.slow
def test_sigterm_during_drain_package_pod_and_reboot_wait(fcluster, fplaybooks, scene):  # pylint: disable=redefined-outer-name
    sc = scene(1, hand_reboot=(0,))
    node = sc.names[0]
    blocker, pdb = sc.block_drain(node)
    kills = {}
    # what ansible-runner does on a cancel (AWX) is SIGKILL to the process group
    # (Runner.handle_termination); a plain SIGTERM goes to the main process or the group
    run = launch(fplaybooks, 'nodewright.bridge.apply', extra_vars=sc.variables())
    sc.wait_drain_blocked(node, blocker)
    kills['drain (pid)'] = _terminate(run, whole_group=False)
    sc.unblock_drain(pdb)
    # prep ran beside the drain (it has no interrupt) and is complete: driver's pods come after the drain. A driver
    # image that finishes at once ends before a SIGTERM can find its pod running: this run's takes SLOW (driver has
    # not started, so its image may change)
    sc.pool.write_cr(driver_image=f'registry.local/slow-{SLOW}/driver')
    run = launch(fplaybooks, 'nodewright.bridge.apply', extra_vars=sc.variables())
    sc.wait_pod(node, 'driver', 'apply', phase='Pending')
    kills['package pod (group)'] = _terminate(run, whole_group=True)
    run = launch(fplaybooks, 'nodewright.bridge.apply', extra_vars=sc.variables())
    interrupt = sc.wait_pod(node, 'driver', 'interrupt', phase=None)[4]
    # the interrupt pod done, the reboot awaited: the run watches the node (after it created that pod; the audit log)
    helpers.wait_for(lambda: fs.watch_opened(fcluster.info.audit_log, 'nodes', f'metadata.name={node}',
                                             after=fs.pod_created(sc.namespace, interrupt)),
                     120, interval=0.2, what=f'the run to wait for the reboot of {node}')
    kills['reboot wait (pid)'] = _terminate(run, whole_group=False)
    fcluster.reboot_node(node)  # the reboot happens while no run watches
    assert not [k for k, v in kills.items() if v['orphans']], f'workers outlived ansible-playbook: {kills}'
    again, rerun_seconds, summary = sc.rerun_and_check(fplaybooks)
    print(f'\nFAULT sigterm: {kills}; final re-run rc {again.rc} in {rerun_seconds:.0f}s; {summary}')


def test_the_stall_proxy_relays_and_cuts(fcluster, tmp_path):  # pylint: disable=redefined-outer-name
    """The proxy itself: a request through it works, a cut connection goes silent, a new one works."""
    proxy = stall_proxy.StallProxy(fcluster.info.ports['kube-apiserver']).start()
    try:
        api = launcher.api_client_from_kubeconfig(proxy.write_kubeconfig(fcluster.kubeconfig, tmp_path / 'p.kubeconfig'))
        core = kclient.CoreV1Api(api)
        assert core.list_node().items
        accepted = proxy.accepted
        assert proxy.cut_existing() >= 1
        t0 = time.monotonic()
        # the pooled connection is silent: urllib3's read timeout, then its retry on a new connection
        assert core.list_node(_request_timeout=(2, 2)).items
        assert time.monotonic() - t0 >= 2 and proxy.accepted == accepted + 1
        assert proxy.open_connections() == (1, 1)
        api.close()
        fresh = launcher.api_client_from_kubeconfig(tmp_path / 'p.kubeconfig')
        assert kclient.CoreV1Api(fresh).list_node().items
        fresh.close()
    finally:
        proxy.close()


def test_a_component_restarts_with_its_ports_and_data(fcluster):  # pylint: disable=redefined-outer-name
    """launcher.restart_component: same port, etcd data kept, cluster.json names the new process."""
    info = fcluster.info
    marker = f'kept-{threading.get_ident()}'
    fcluster.core.create_namespaced_config_map('default', {'metadata': {'name': marker}})
    old = dict(info.pids)
    launcher.restart_component(info, 'etcd', down_seconds=1)
    launcher.restart_component(info, 'kube-apiserver', down_seconds=1, stop_timeout=2)
    assert fcluster.core.read_namespaced_config_map(marker, 'default').metadata.name == marker
    saved = launcher.ClusterInfo.load(info.state_dir)
    assert saved.pids['etcd'] != old['etcd'] and saved.pids['kube-apiserver'] != old['kube-apiserver']
    assert launcher.component_running(saved, 'etcd') and launcher.component_running(saved, 'kube-apiserver')
    fcluster.core.delete_namespaced_config_map(marker, 'default')
