# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The shared budget: several `nodewright.bridge.apply` runs of one CR at once, on the test cluster.

Three runs over 12 nodes with an interruptionBudget of 2 (the nodes in flight, cordoned and
holding a slot in the CR's Lease, sampled all along by InFlight) are AWX's three slices in
test_awx_jobs.py, which uses this file's Fleet and InFlight. Here: a run killed with SIGKILL on
this machine frees its slots at once; a suspended one after their expiry, and the others finish
its nodes. A Lease edited by hand to nonsense
stops the run with a clear message before any node is touched.
"""

from __future__ import annotations

import collections
import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
import yaml
from kubernetes import client as kclient

import helpers
import launcher
from module_runner import RunningPlaybook
from test_e2e_apply import Pool, PodRecorder, pod_recorder  # noqa: F401  pylint: disable=unused-import

STATE = 'skyhook.nvidia.com/nodeState_'
STATUS = 'skyhook.nvidia.com/status_'
CORDON = 'skyhook.nvidia.com/cordon_'
ANNOTATION = 'nodewright.bridge/budget'
_INDEX = [3000]


class Fleet(Pool):
    """12 fresh nodes with a pool label and a CR (interruptionBudget count 2) for them (Pool's node and close)."""

    def __init__(self, cluster, tmp_path, count=12, version='1.0.0'):  # pylint: disable=super-init-not-called
        self.cluster = cluster
        self.id = uuid.uuid4().hex[:6]
        self.cr = f'fleet-{self.id}'
        self.names = [f'fleet-{self.id}-{i:02d}' for i in range(count)]
        _INDEX[0] += 20
        launcher.create_nodes(cluster.api, self.names, labels={'nodewright.bridge/pool': self.id}, start_index=_INDEX[0])
        launcher.wait_nodes_ready(cluster.api, self.names, timeout=60)
        self.tmp_path = tmp_path
        self.path = self.write(version)

    def write(self, version):
        # a package pod takes about 2 s, so that the runs overlap for most of the rollout; the
        # service interrupt makes every node cordoned and drained while it is in flight
        cr = {'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'Skyhook', 'metadata': {'name': self.cr},
              'spec': {'nodeSelectors': {'matchLabels': {'nodewright.bridge/pool': self.id}},
                       'interruptionBudget': {'count': 2},
                       'packages': {'tuning': {'version': version, 'image': 'registry.local/slow-2s/tuning',
                                               'configMap': {'sysctl.conf': 'vm.swappiness=1\n'},
                                               'interrupt': {'type': 'service', 'services': ['containerd']}}}}}
        path = self.tmp_path / f'{self.cr}.yaml'
        path.write_text(yaml.safe_dump(cr, sort_keys=False))
        return path

    def complete(self, name):
        return (self.node(name).metadata.labels or {}).get(STATUS + self.cr) == 'complete'


class InFlight:
    """Samples, every 0.2 s, the fleet's cordoned nodes (also by their ``rack`` label, for compartments) and the slots
    in the namespace's budget Leases."""

    def __init__(self, cluster, fleet, namespace):
        self.core = cluster.core
        self.coordination = kclient.CoordinationV1Api(cluster.api)
        self.fleet, self.namespace = fleet, namespace
        self.most_cordoned = self.most_slots = 0
        self.most_by_rack = {}  # rack -> most of its nodes cordoned at once
        self.racks_at_once = 0  # most racks with a node cordoned at the same moment
        self.runs_seen = set()
        self.run_hosts = {}  # run -> its host identity in the Lease (boot ID / pid namespace)
        self.example = None
        self.samples = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        names = set(self.fleet.names)
        while not self.stop.is_set():
            try:
                nodes = self.core.list_node(label_selector=f'nodewright.bridge/pool={self.fleet.id}', _request_timeout=3).items
                leases = self.coordination.list_namespaced_lease(self.namespace, _request_timeout=3).items
            except Exception:  # pylint: disable=broad-exception-caught
                time.sleep(0.2)
                continue
            cordoned = [n for n in nodes if n.metadata.name in names and n.spec.unschedulable]
            slots = 0
            for lease in leases:
                text = (lease.metadata.annotations or {}).get(ANNOTATION)
                if text:
                    state = json.loads(text)
                    slots += len(state['slots'])
                    self.runs_seen.update(state['runs'])
                    self.run_hosts.update((run, entry.get('host')) for run, entry in state['runs'].items())
                    if len(state['slots']) > 1 and len(state['runs']) > 1 and self.example is None:
                        self.example = (lease.metadata.name, lease.spec.holder_identity, text)  # what the docs show
            self.most_cordoned = max(self.most_cordoned, len(cordoned))
            racks = collections.Counter((n.metadata.labels or {}).get('rack') for n in cordoned)
            racks.pop(None, None)
            for rack, count in racks.items():
                self.most_by_rack[rack] = max(self.most_by_rack.get(rack, 0), count)
            self.racks_at_once = max(self.racks_at_once, len(racks))
            self.most_slots = max(self.most_slots, slots)
            self.samples += 1
            time.sleep(0.2)

    def finish(self):
        self.stop.set()
        self.thread.join(timeout=10)
        return self


@pytest.fixture
def fleet(cluster, tmp_path):
    made = Fleet(cluster, tmp_path)
    yield made
    made.close()


def _vars(fleet, namespace, **extra):
    variables = {'nodewright_cr': str(fleet.path), 'nodewright_namespace': namespace, 'nodewright_stage_timeout': 120,
                 'nodewright_interrupt_timeout': 120, 'nodewright_drain_timeout': 120}
    variables.update(extra)
    return variables


def _stages_once(counts, fleet):
    """Every node ran the same stages (apply, config, interrupt, post-interrupt), each pod exactly once, killed
    runs included: the in_progress record precedes every pod (docs/reliability.md), so no pod is ever replaced."""
    per_node = dict((n, sorted(k[1:] for k in counts if k[0] == n)) for n in fleet.names)
    assert len(per_node[fleet.names[0]]) >= 3, per_node
    assert all(stages == per_node[fleet.names[0]] for stages in per_node.values()), per_node
    repeated = dict((key, count) for key, count in counts.items() if count != 1)
    assert not repeated, repeated
    return True


def _leases(cluster, namespace):
    return kclient.CoordinationV1Api(cluster.api).list_namespaced_lease(namespace).items


def _victim_then_others(playbooks, fleet, namespace, extra):
    """One run in its first batch (a node of it cordoned), then two more runs of the CR."""
    victim = RunningPlaybook(playbooks, 'nodewright.bridge.apply', extra_vars=_vars(fleet, namespace, **extra))
    helpers.wait_for(lambda: 'NODEWRIGHT BATCH 1' in victim.output and any(fleet.node(n).spec.unschedulable for n in fleet.names),
                     240, interval=0.3, what='the first run in its first batch')
    others = [RunningPlaybook(playbooks, 'nodewright.bridge.apply', extra_vars=_vars(fleet, namespace, **extra))
              for dummy in range(2)]
    # both have joined the shared budget (a run of their pid in the Lease) and compete for the victim's slots
    helpers.wait_for(lambda: all(_joined(fleet.cluster, namespace, run) or not run.running() for run in others),
                     240, interval=0.3, what='the other two runs registered in the shared budget')
    return victim, others


def _joined(cluster, namespace, run):
    """The run (its name carries ansible-playbook's pid) is registered in one of the namespace's budget Leases."""
    for lease in _leases(cluster, namespace):
        state = json.loads((lease.metadata.annotations or {}).get(ANNOTATION) or '{}')
        if any(f'-{run.pid}-' in name for name in state.get('runs') or {}):
            return True
    return False


def _taken_over(cluster, namespace, victim_run, timeout):
    """Seconds until no slot in the namespace's Leases is held by a run of the victim's pid."""
    started = time.time()

    def gone():
        for lease in _leases(cluster, namespace):
            state = json.loads((lease.metadata.annotations or {}).get(ANNOTATION) or '{}')
            if any(f'-{victim_run.pid}-' in slot['run'] for slot in (state.get('slots') or {}).values()):
                return False
        return True
    helpers.wait_for(gone, timeout, interval=0.3, what="the victim's slots given up")
    return time.time() - started


def _check_the_fleet(fleet, watch, recorder, results):
    for result in results:
        assert result.rc == 0, result
    assert watch.most_cordoned <= 2 and watch.most_slots <= 2
    for name in fleet.names:
        assert fleet.complete(name), name
        assert not fleet.node(name).spec.unschedulable, name
    # the victim's nodes were finished by the others, resumed, not re-run: every stage pod once
    assert _stages_once(recorder.stage_pods(), fleet)


def test_a_run_killed_on_this_machine_frees_its_slots_at_once(cluster, playbooks, fleet, namespace, pod_recorder):
    """SIGKILL (AWX's cancel): a run of the same machine sees the victim's process gone, without its expiry (120 s)."""
    recorder = pod_recorder(namespace)
    watch = InFlight(cluster, fleet, namespace)
    victim, others = _victim_then_others(playbooks, fleet, namespace, {})
    os.killpg(victim.pid, signal.SIGKILL)
    victim.finish(timeout=30)
    freed = _taken_over(cluster, namespace, victim, 60)
    results = [run.finish(timeout=900) for run in others]
    watch.finish()
    recorder.finish()
    print(f'killed run: its slots were given up {freed:.1f} s after the kill (expiry 120 s); most in flight '
          f'{watch.most_cordoned} cordoned / {watch.most_slots} slots')
    assert freed < 30
    _check_the_fleet(fleet, watch, recorder, results)


def test_a_suspended_run_frees_its_slots_after_the_expiry_and_the_others_finish(
        cluster, playbooks, fleet, namespace, pod_recorder):
    """A run that stops renewing but whose process lives (SIGSTOP; or a run killed on another machine): the expiry frees it."""
    recorder = pod_recorder(namespace)
    watch = InFlight(cluster, fleet, namespace)
    victim, others = _victim_then_others(playbooks, fleet, namespace, {'nodewright_slot_expiry': 15})
    os.killpg(victim.pid, signal.SIGSTOP)
    stopped_at = time.time()
    try:
        freed = _taken_over(cluster, namespace, victim, 120)
        results = [run.finish(timeout=900) for run in others]
    finally:
        os.killpg(victim.pid, signal.SIGKILL)
        os.killpg(victim.pid, signal.SIGCONT)
        victim.finish(timeout=30)
    watch.finish()
    recorder.finish()
    print(f'suspended run: its slots were given up {freed:.1f} s after SIGSTOP (expiry 15 s); the others done '
          f'{time.time() - stopped_at:.1f} s after it; most in flight {watch.most_cordoned} cordoned / {watch.most_slots} slots')
    assert freed >= 10, 'the slots of a live (suspended) run were taken before their expiry'
    assert any('WAIT' in r.stdout for r in results), 'the others waited for the suspended run\'s slots'
    _check_the_fleet(fleet, watch, recorder, results)


def test_a_lease_edited_by_hand_stops_the_run_clearly_and_touches_no_node(cluster, playbooks, fleet, namespace):
    sys.path.insert(0, str(playbooks.root))
    # pylint: disable-next=import-outside-toplevel,import-error
    from ansible_collections.nodewright.bridge.plugins.module_utils.planning.shared_budget import lease_name
    name = lease_name(fleet.cr, '__default__')
    kclient.CoordinationV1Api(cluster.api).create_namespaced_lease(namespace, {
        'metadata': {'name': name, 'annotations': {ANNOTATION: '{"slots": "all of them"'}}, 'spec': {}})
    result = playbooks.run('nodewright.bridge.apply', extra_vars=_vars(fleet, namespace))
    assert result.rc != 0, result
    assert f'lease {namespace}/{name}: annotation {ANNOTATION} is not JSON' in result.stdout + result.stderr, result
    assert f'kubectl delete lease -n {namespace} {name}' in result.stdout + result.stderr
    assert 'Traceback' not in result.stdout + result.stderr
    for node_name in fleet.names:
        node = fleet.node(node_name)
        assert not node.spec.unschedulable and STATE + fleet.cr not in (node.metadata.annotations or {}), node_name
    # with the Lease deleted, the same run goes through
    kclient.CoordinationV1Api(cluster.api).delete_namespaced_lease(name, namespace)
    result = playbooks.run('nodewright.bridge.apply', extra_vars=_vars(fleet, namespace))
    assert result.rc == 0, result
    assert all(fleet.complete(n) for n in fleet.names)


def _local_rollout(tmp_path, playbooks, strategy_vars=None):
    """6 local hosts whose one task logs its start and end (2 s apart); the inventory, the playbook and its log."""
    log = tmp_path / 'ran.log'
    (tmp_path / 'inventory.yml').write_text(yaml.safe_dump({'all': {'hosts': dict(
        (f'h{i}', {'ansible_connection': 'local', 'ansible_python_interpreter': sys.executable}) for i in range(6))}}))
    play = {'hosts': 'all', 'gather_facts': False, 'tasks': [
        {'name': 'one host at work for 2 s, logged', 'ansible.builtin.shell':
         f'echo "start {{{{ inventory_hostname }}}} $(date +%s.%N)" >> {log}; sleep 2; '
         f'echo "end {{{{ inventory_hostname }}}} $(date +%s.%N)" >> {log}'}]}
    if strategy_vars is not None:
        play.update(strategy='nodewright.bridge.budgeted', vars=strategy_vars)
    (tmp_path / 'site.yml').write_text(yaml.safe_dump([play]))
    env = dict(os.environ, PYTHONPATH=str(playbooks.root), ANSIBLE_COLLECTIONS_PATH=str(playbooks.root),
               K8S_AUTH_KUBECONFIG=playbooks.kubeconfig, ANSIBLE_RETRY_FILES_ENABLED='False', ANSIBLE_FORKS='10')
    return log, env


def _most_at_once(log):
    """(most hosts at work at once, the hosts that started, sorted) from the log's start/end lines."""
    events = sorted((float(t), kind, host) for kind, host, t in (line.split() for line in log.read_text().splitlines()))
    running, most = set(), 0
    for dummy, kind, host in events:
        if kind == 'start':
            running.add(host)
            most = max(most, len(running))
        else:
            running.discard(host)
    return most, sorted(host for dummy, kind, host in events if kind == 'start')


def _run_two(cmd, tmp_path, env):
    procs = [subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for dummy in range(2)]
    outputs = [p.communicate(timeout=300)[0] for p in procs]
    for proc, output in zip(procs, outputs):
        assert proc.returncode == 0, output
    return outputs


def test_two_limit_drivers_share_one_budget(cluster, playbooks, namespace, tmp_path):
    """The --limit driver (no strategy plugin) with --shared-budget: two drivers over the same 6 hosts, budget 2."""
    log, env = _local_rollout(tmp_path, playbooks)
    cmd = [sys.executable, '-m', 'ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout.limit_driver',
           '-i', 'inventory.yml', '--budget', 'count=2', '--shared-budget', f'drivers-{namespace}',
           '--budget-namespace', namespace, '--ansible-playbook', str(Path(sys.executable).with_name('ansible-playbook')),
           'site.yml']
    outputs = _run_two(cmd, tmp_path, env)
    most, starts = _most_at_once(log)
    print(f'limit drivers: most hosts at work at once {most}; starts {starts}')
    assert starts == [f'h{i}' for i in range(6)], starts  # every host once over both drivers
    assert most == 2
    assert any('finished by other runs of the shared budget' in out for out in outputs), outputs


@pytest.mark.parametrize('window', ['batch', 'sliding'])
def test_two_plays_of_your_own_share_one_budget(cluster, playbooks, namespace, tmp_path, window):
    """A play of your own on the budgeted strategy, run twice at once: batch and sliding mode keep to the budget."""
    log, env = _local_rollout(tmp_path, playbooks, {
        'nodewright_interruption_budget': {'count': 2}, 'nodewright_admission': window,
        'nodewright_shared_budget': {'name': f'own-{window}', 'namespace': namespace, 'slot_expiry': 30}})
    cmd = [str(Path(sys.executable).with_name('ansible-playbook')), '-i', 'inventory.yml', 'site.yml']
    outputs = _run_two(cmd, tmp_path, env)
    most, starts = _most_at_once(log)
    print(f'{window}: most hosts at work at once {most}; starts {starts}')
    assert starts == [f'h{i}' for i in range(6)], starts
    assert most == 2
    assert any('finished by other runs' in out for out in outputs), outputs


def test_check_mode_takes_no_slot_and_writes_no_lease(cluster, playbooks, fleet, namespace):
    result = playbooks.run('nodewright.bridge.apply', extra_vars=_vars(fleet, namespace), check=True)
    assert result.rc == 0, result
    assert 'not taken in check mode (nothing is written)' in result.stdout
    assert not _leases(cluster, namespace)
    assert not any(fleet.node(n).spec.unschedulable or fleet.complete(n) for n in fleet.names)


def test_two_runs_over_three_independent_compartments_hold_each_compartments_budget(
        cluster, playbooks, namespace, tmp_path, pod_recorder):  # noqa: F811  pylint: disable=redefined-outer-name
    """Issue 29's faults: with compartments that do not wait for each other (apply's default), two concurrent runs
    of one CR over three compartments (budget 1 each) never disrupt more than a compartment's budget in it, finish
    every node and run every stage pod once."""
    pool = Pool(cluster, tmp_path, {'a': 3, 'b': 3, 'c': 3})
    try:
        cr, policy = f'three-{pool.id}', f'three-policy-{pool.id}'
        docs = [{'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'Skyhook', 'metadata': {'name': cr},
                 'spec': {'nodeSelectors': {'matchLabels': {'nodewright.bridge/pool': pool.id}}, 'deploymentPolicy': policy,
                          'packages': {'tuning': {'version': '1.0.0', 'image': 'registry.local/slow-2s/tuning',
                                                  'interrupt': {'type': 'service', 'services': ['containerd']}}}}},
                {'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'DeploymentPolicy', 'metadata': {'name': policy},
                 'spec': {'compartments': [
                     {'name': f'rack-{rack}', 'selector': {'matchLabels': {'rack': rack}}, 'budget': {'count': 1},
                      'strategy': {'fixed': {'initialBatch': 1}}} for rack in 'abc'],
                     'default': {'budget': {'count': 1}, 'strategy': {'fixed': {'initialBatch': 1}}}}}]
        path = tmp_path / f'{cr}.yaml'
        path.write_text(yaml.safe_dump_all(docs, sort_keys=False))
        variables = {'nodewright_cr': str(path), 'nodewright_namespace': namespace, 'nodewright_stage_timeout': 120,
                     'nodewright_interrupt_timeout': 120, 'nodewright_drain_timeout': 120}
        recorder = pod_recorder(namespace)
        watch = InFlight(cluster, pool, namespace)
        runs = [RunningPlaybook(playbooks, 'nodewright.bridge.apply', extra_vars=variables) for dummy in range(2)]
        results = [run.finish(timeout=900) for run in runs]
        watch.finish()
        recorder.finish()
        print(f'two runs, three compartments: most cordoned at once per rack {watch.most_by_rack}, '
              f'racks cordoned at once {watch.racks_at_once}')
        for result in results:
            assert result.rc == 0, result
        assert watch.most_by_rack and all(count <= 1 for count in watch.most_by_rack.values()), watch.most_by_rack
        assert watch.racks_at_once >= 2, 'the compartments never had a node in flight at the same time'
        for name in pool.names:
            node = pool.node(name)
            assert (node.metadata.labels or {}).get(STATUS + cr) == 'complete', name
            assert not node.spec.unschedulable, name
        pool.cr = cr
        assert _stages_once(recorder.stage_pods(), pool)
    finally:
        pool.close()
