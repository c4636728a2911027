# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""End to end: `ansible-playbook nodewright.bridge.apply` on the test cluster.

A 3-package CR (dependsOn, a reboot interrupt, configInterrupts) under a DeploymentPolicy with
two compartments, protected training pods that finish later, a package that fails on one node
(the rollout stops as the policy says), and a run killed midway whose re-run resumes without
re-creating a single package pod (counted by watching the pods the runs create).
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
import uuid

import pytest
import yaml
from kubernetes import client as kclient
from kubernetes import watch as kwatch

import helpers
import launcher

STATE = 'skyhook.nvidia.com/nodeState_'
STATUS = 'skyhook.nvidia.com/status_'
_INDEX = [2000]


def _cr_docs(name, pool, policy, failing_image=False):
    packages = {
        'kernel-tuning': {
            'version': '1.4.0', 'image': 'registry.local/kernel-tuning',
            'configMap': {'sysctl.conf': 'vm.swappiness=1\n', 'containerd.toml': 'x = 1\n'},
            'configInterrupts': {'containerd.toml': {'type': 'service', 'services': ['containerd']}},
        },
        'gpu-driver': {
            'version': '570.124.6', 'image': 'registry.local/gpu-driver',
            'dependsOn': {'kernel-tuning': '1.4.0'}, 'interrupt': {'type': 'reboot'},
        },
        'nccl-tuning': {
            'version': '2.21.5',
            # An image with "fail" in it makes the fake kubelet fail the copy container.
            'image': 'registry.local/fail-nccl' if failing_image else 'registry.local/nccl-tuning',
            'dependsOn': {'gpu-driver': '570.124.6'},
        },
    }
    cr = {'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'Skyhook', 'metadata': {'name': name},
          'spec': {'nodeSelectors': {'matchLabels': {'nodewright.bridge/pool': pool}},
                   'podNonInterruptLabels': {'matchLabels': {'workload': 'training'}},
                   'deploymentPolicy': policy, 'packages': packages}}
    return cr


def _policy(name, failure_threshold=None):
    linear = {'initialBatch': 1, 'delta': 1}
    if failure_threshold:
        linear['failureThreshold'] = failure_threshold
    return {'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'DeploymentPolicy', 'metadata': {'name': name},
            'spec': {'compartments': [
                {'name': 'rack-a', 'selector': {'matchLabels': {'rack': 'a'}}, 'budget': {'count': 1},
                 'strategy': {'fixed': {'initialBatch': 1}}},
                {'name': 'rack-b', 'selector': {'matchLabels': {'rack': 'b'}}, 'budget': {'percent': 100},
                 'strategy': {'linear': linear}}],
                'default': {'budget': {'count': 1}, 'strategy': {'fixed': {'initialBatch': 1}}}}}


class Pool:
    """Fresh nodes with a pool label (rack a / b), a CR file for them, and cleanup."""

    def __init__(self, cluster, tmp_path, racks):
        self.cluster = cluster
        self.id = uuid.uuid4().hex[:6]
        self.names = []
        per_node = {}
        for rack, count in racks.items():
            for i in range(count):
                name = f'e2e-{self.id}-{rack}{i}'
                self.names.append(name)
                per_node[name] = {'rack': rack}
        _INDEX[0] += 20
        launcher.create_nodes(cluster.api, self.names, labels={'nodewright.bridge/pool': self.id},
                              per_node_labels=per_node, start_index=_INDEX[0])
        launcher.wait_nodes_ready(cluster.api, self.names, timeout=60)
        self.tmp_path = tmp_path

    def write_cr(self, failure_threshold=None, failing_image=False):
        self.cr = f'e2e-{self.id}'
        docs = [_cr_docs(self.cr, self.id, f'policy-{self.id}', failing_image), _policy(f'policy-{self.id}', failure_threshold)]
        path = self.tmp_path / f'{self.cr}.yaml'
        path.write_text(yaml.safe_dump_all(docs, sort_keys=False))
        return path

    def node(self, name):
        return self.cluster.core.read_node(name)

    def state(self, name):
        text = (self.node(name).metadata.annotations or {}).get(STATE + self.cr)
        return json.loads(text) if text else {}

    def close(self):
        for name in self.names:
            try:
                self.cluster.core.delete_node(name)
            except kclient.ApiException:
                pass


class PodRecorder:
    """Every pod created in a namespace while it runs, by watch: (name, uid, node, labels)."""

    def __init__(self, cluster, namespace):
        self.created = {}
        self.stop = threading.Event()
        self.core = kclient.CoreV1Api(cluster.api)
        self.namespace = namespace
        listing = self.core.list_namespaced_pod(namespace)
        self.rv = listing.metadata.resource_version
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        # A failed watch lists the pods again: resuming from the last resourceVersion would be
        # refused forever by an API server restarted with an empty watch cache (the fault tests).
        while not self.stop.is_set():
            try:
                for event in kwatch.Watch().stream(self.core.list_namespaced_pod, self.namespace, resource_version=self.rv,
                                                   timeout_seconds=5, _request_timeout=(3, 10)):
                    self._seen(event['object'])
                    self.rv = event['object'].metadata.resource_version
                    if self.stop.is_set():
                        return
                continue
            except Exception:  # pylint: disable=broad-exception-caught
                pass
            try:
                listing = self.core.list_namespaced_pod(self.namespace, _request_timeout=5)
            except Exception:  # pylint: disable=broad-exception-caught
                time.sleep(0.5)  # still down
                continue
            for pod in listing.items:
                self._seen(pod)
            self.rv = listing.metadata.resource_version

    def _seen(self, pod):
        self.created.setdefault(pod.metadata.uid, (pod.metadata.name, pod.spec.node_name, dict(pod.metadata.labels or {}),
                                                   dict(pod.metadata.annotations or {})))

    def finish(self):
        self.stop.set()
        self.thread.join(timeout=15)
        assert not self.thread.is_alive(), 'the pod recorder did not stop'
        return self.created

    def stage_of(self):
        """pod name -> (node, package, stage), of every package and interrupt pod seen."""
        out = {}
        for name, node, dummy, pod_annotations in self.created.values():
            info = json.loads(pod_annotations.get('skyhook.nvidia.com/package') or '{}')
            if info:
                out[name] = (node, info.get('name'), info.get('stage'))
        return out

    def stage_pods(self):
        """(node, package, stage) -> number of pods created, from the operator's package annotation."""
        counts = {}
        for name, node, labels, pod_annotations in self.created.values():
            del name
            info = json.loads(pod_annotations.get('skyhook.nvidia.com/package') or '{}')
            if not info:
                continue
            key = (node, info.get('name'), info.get('stage'))
            counts[key] = counts.get(key, 0) + 1
            assert labels  # every package pod carries the operator's labels
        return counts


@pytest.fixture
def pod_recorder(cluster):
    """PodRecorder factory; every recorder is stopped at teardown, even when the test failed."""
    made = []

    def make(namespace):
        recorder = PodRecorder(cluster, namespace)
        made.append(recorder)
        return recorder
    yield make
    for recorder in made:
        recorder.stop.set()
        recorder.thread.join(timeout=15)


@pytest.fixture
def pool_factory(cluster, tmp_path):
    made = []

    def make(racks):
        pool = Pool(cluster, tmp_path, racks)
        made.append(pool)
        return pool
    yield make
    for pool in made:
        pool.close()


def _apply(playbooks, path, namespace, **extra):
    variables = {'nodewright_cr': str(path), 'nodewright_namespace': namespace, 'nodewright_stage_timeout': 120,
                 'nodewright_interrupt_timeout': 120, 'nodewright_drain_timeout': 120}
    variables.update(extra)
    return variables


def test_apply_rolls_out_with_reboots_protected_pods_and_two_compartments(cluster, playbooks, pool_factory, namespace, pod_recorder):
    pool = pool_factory({'a': 2, 'b': 2})
    path = pool.write_cr()
    boots = {name: helpers.boot_id(cluster.core, name) for name in pool.names}
    # A training job on one node of rack b, which finishes once the run has reached that node (cordoned it).
    trainee = pool.names[2]
    cluster.core.create_namespaced_pod(namespace, {
        'metadata': {'name': 'train', 'labels': {'workload': 'training'}},
        'spec': {'nodeName': trainee, 'restartPolicy': 'Never', 'containers': [{'name': 't', 'image': 'registry.local/train:1'}]}})
    cluster.wait_pod(namespace, 'train', lambda p: p.status.phase == 'Running')
    finished_at, problems = {}, []

    def training_runs():
        pod = cluster.core.read_namespaced_pod('train', namespace)
        return pod.status.phase == 'Running' and pod.metadata.deletion_timestamp is None

    def finish_training():
        try:
            helpers.wait_for(lambda: cluster.core.read_node(trainee).spec.unschedulable, 600, interval=0.5,
                             what=f'the run to cordon {trainee}')
            # a timer: the node's steps after the cordon (its drain waits for the training pod) go on for 5 s
            # with the pod running, and it is never evicted meanwhile (checked all along)
            helpers.holds_for(training_runs, 5, interval=0.5, what='the training pod running, not evicted')
            finished_at['t'] = time.time()
            cluster.core.patch_namespaced_pod_status('train', namespace, {'status': {'phase': 'Succeeded'}})
        except Exception as exc:  # pylint: disable=broad-exception-caught
            problems.append(exc)
    timer = threading.Thread(target=finish_training, daemon=True)
    timer.start()
    recorder = pod_recorder(namespace)
    result = playbooks.run('nodewright.bridge.apply', extra_vars=_apply(playbooks, path, namespace))
    created = recorder.finish()
    timer.join(timeout=30)  # done unless the run ended before it reached the training node
    assert not problems, problems
    assert result.rc == 0, result
    assert finished_at, 'the training pod was not finished by the test'

    for name in pool.names:
        node = pool.node(name)
        state = pool.state(name)
        assert {k: (v['stage'], v['state']) for k, v in state.items()} == {
            'kernel-tuning|1.4.0': ('config', 'complete'),
            'gpu-driver|570.124.6': ('post-interrupt', 'complete'),
            'nccl-tuning|2.21.5': ('config', 'complete')}, name
        assert node.metadata.labels[STATUS + pool.cr] == 'complete'
        assert not node.spec.unschedulable, f'{name} was left cordoned'
        assert helpers.boot_id(cluster.core, name) != boots[name], f'{name} did not reboot'
    # The protected pod was never evicted, and its node's work started only after it finished.
    train = cluster.core.read_namespaced_pod('train', namespace)
    assert train.status.phase == 'Succeeded' and train.metadata.deletion_timestamp is None
    trainee_pods = [labels for name, node, labels, ann in created.values() if node == trainee]
    assert trainee_pods, 'no package pod ran on the training node'
    # its drain waited for it (the report's wait for the protected pods on that node)
    waits = [s for r in result.report['rollouts'] for s in (r['nodes'].get(trainee) or {}).get('steps', []) if s['kind'] == 'wait']
    assert waits and waits[-1]['finished'] - waits[-1]['started'] >= 1, (waits, finished_at)
    # Every stage ran exactly once on every node.
    counts = recorder.stage_pods()
    assert set(counts.values()) == {1}
    # apply and config of the 3 packages, the driver's interrupt and post-interrupt
    assert len([k for k in counts if k[0] == pool.names[0]]) == 8
    # Compartments: rack-a (fixed 1) ran its 2 nodes in 2 batches.
    batches = result.report['compartments'] if result.report else {}
    assert [b['size'] for b in batches['rack-a']['batches']] == [1, 1]
    # rack-b: the training node is picked last (selection prefers the nodes no protected pod holds) and parks when
    # its drain finds the pod (apply's shared budget: another run may take its place), so that batch ends with no
    # node, not judged; once the pod is gone the node completes in a batch of its own (docs/semantics.md 34)
    rack_b = batches['rack-b']['batches']
    assert [b['size'] for b in rack_b] == [1, 1, 1], rack_b
    assert [b['hosts'] for b in rack_b] == [[pool.names[3]], [], [trainee]], rack_b


def test_a_failing_package_stops_the_rollout_as_the_policy_says(cluster, playbooks, pool_factory, namespace):
    pool = pool_factory({'b': 3})
    path = pool.write_cr(failure_threshold=1, failing_image=True)
    result = playbooks.run('nodewright.bridge.apply', extra_vars=_apply(playbooks, path, namespace))
    assert result.rc != 0, result
    first = [n for n in pool.names if pool.state(n)]
    assert len(first) == 1, 'only the first batch (1 node) may have been touched'
    failed = first[0]
    entry = pool.state(failed)['nccl-tuning|2.21.5']
    assert (entry['stage'], entry['state']) == ('apply', 'erroring')
    node = pool.node(failed)
    assert node.spec.unschedulable is True, 'a failed node stays cordoned'
    assert node.metadata.labels[STATUS + pool.cr] == 'erroring'
    assert 'stage failed: exit 1' in result.stdout  # the stage log is in the failure message
    for name in pool.names:
        if name != failed:
            assert not pool.state(name) and not pool.node(name).spec.unschedulable
    assert result.report and result.report['compartments']['rack-b']['batches'][-1]['stopped'] is True


def test_a_killed_run_resumes_without_rerunning_completed_stages(cluster, playbooks, pool_factory, namespace, pod_recorder):
    pool = pool_factory({'a': 3})
    path = pool.write_cr()
    recorder = pod_recorder(namespace)
    proc = playbooks.start('nodewright.bridge.apply', extra_vars=_apply(playbooks, path, namespace))

    def one_done_one_started():
        done = [n for n in pool.names if (pool.node(n).metadata.labels or {}).get(STATUS + pool.cr) == 'complete']
        started = [n for n in pool.names if n not in done and pool.state(n)]
        return done and started
    try:
        helpers.wait_for(one_done_one_started, 240, interval=0.5, what='one node complete and the next one started')
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # ansible-playbook and its workers, mid-batch
        proc.wait()
    result = playbooks.run('nodewright.bridge.apply', extra_vars=_apply(playbooks, path, namespace))
    recorder.finish()  # a watcher thread left running would outlive the test session
    counts = recorder.stage_pods()
    assert result.rc == 0, result
    for name in pool.names:
        assert {v['state'] for v in pool.state(name).values()} == {'complete'}
        assert not pool.node(name).spec.unschedulable
    # Not a single stage pod was created twice: completed stages were not re-run, and a pod
    # that was running when the run was killed was adopted, not created again.
    assert counts and set(counts.values()) == {1}, counts
    assert len(counts) == 3 * 8
