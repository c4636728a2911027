# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""What the interop tests share: the operator process, the fleet of fresh nodes and its CR, counting by watch and audit log."""

from __future__ import annotations

import datetime
import json
import os
import signal
import subprocess
import threading
import time
import uuid
from pathlib import Path

import yaml
from kubernetes import client as kclient
from kubernetes import watch as kwatch

import helpers
import launcher
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import operator_documents

NAMESPACE = 'skyhook'  # the operator's NAMESPACE, and the collection's nodewright_namespace default
GROUP, VERSION = 'skyhook.nvidia.com', 'v1alpha1'
STATE = 'skyhook.nvidia.com/nodeState_'
STATUS = 'skyhook.nvidia.com/status_'
CORDON = 'skyhook.nvidia.com/cordon_'
FAKE_REBOOT = 'nodewright.bridge/fake-reboot'  # tests/cluster/fake_reboots.py's record on the node
FINALIZER = 'skyhook.nvidia.com/skyhook'
LEASE = '3c22c1ae.nvidia.com'
OPERATOR_UA, BRIDGE_UA = 'manager/', 'nodewright.bridge/'
WRITE_VERBS = ('create', 'update', 'patch', 'delete', 'deletecollection')
# The stages of an install, in the order the operator runs them (a package entry's stage and state
# in nodeState say how far it got)
INSTALL_STAGES = ('apply', 'config', 'interrupt', 'post-interrupt')
OPERATOR_SETTINGS = {
    'ENABLE_WEBHOOKS': 'false', 'NAMESPACE': NAMESPACE, 'LOG_LEVEL': 'info', 'LOG_ENCODER': 'console',
    'METRICS_PORT': '127.0.0.1:0', 'PROBE_PORT': '127.0.0.1:0', 'AGENT_IMAGE': 'ghcr.io/nvidia/skyhook/agent:latest',
}
_INDEX = [3000]
# Out of cluster, controller-runtime takes the leader-election namespace only from the in-cluster
# file /var/run/secrets/kubernetes.io/serviceaccount/namespace (the operator has no setting for
# it) and refuses to start without it. The operator with LEADER_ELECTION=true therefore runs in a
# mount namespace of its own whose /var/run is an empty tmpfs holding just that file (NAMESPACE):
# nothing on the machine changes, and the lease lands where an in-cluster operator's would.
IN_CLUSTER_NAMESPACE = [
    'unshare', '--mount', '--propagation', 'private', 'sh', '-c',
    'run=$(readlink -f /var/run) && mount -t tmpfs nodewright-interop "$run" '
    '&& mkdir -p "$run/secrets/kubernetes.io/serviceaccount" '
    '&& printf %s "$1" > "$run/secrets/kubernetes.io/serviceaccount/namespace" && exec "$0"']


def nodewright_documents(name, pool, policy, gpu_driver='570.124.6', nccl='2.21.5'):
    """The CR (three packages: dependsOn, a reboot, configInterrupts) and a DeploymentPolicy with two compartments,
    as NodeWright documents (nodewright.nvidia.com)."""
    packages = {
        'kernel-tuning': {
            'version': '1.4.0', 'image': 'registry.local/kernel-tuning',
            'configMap': {'sysctl.conf': 'vm.swappiness=1\n', 'containerd.toml': 'x = 1\n'},
            'configInterrupts': {'containerd.toml': {'type': 'service', 'services': ['containerd']}},
        },
        'gpu-driver': {'version': gpu_driver, 'image': 'registry.local/gpu-driver',
                       'dependsOn': {'kernel-tuning': '1.4.0'}, 'interrupt': {'type': 'reboot'}},
        'nccl-tuning': {'version': nccl, 'image': 'registry.local/nccl-tuning', 'dependsOn': {'gpu-driver': gpu_driver}},
    }
    cr = {'apiVersion': 'nodewright.nvidia.com/v1alpha1', 'kind': 'NodeWright', 'metadata': {'name': name},
          'spec': {'nodeSelectors': {'matchLabels': {'nodewright.bridge/pool': pool}},
                   'deploymentPolicy': policy, 'packages': packages}}
    policy_doc = {'apiVersion': 'nodewright.nvidia.com/v1alpha1', 'kind': 'DeploymentPolicy', 'metadata': {'name': policy},
                  'spec': {'compartments': [
                      {'name': 'rack-a', 'selector': {'matchLabels': {'rack': 'a'}}, 'budget': {'count': 1},
                       'strategy': {'fixed': {'initialBatch': 1}}},
                      {'name': 'rack-b', 'selector': {'matchLabels': {'rack': 'b'}}, 'budget': {'count': 1},
                       'strategy': {'fixed': {'initialBatch': 1}}}],
                      'default': {'budget': {'count': 1}, 'strategy': {'fixed': {'initialBatch': 1}}}}}
    return [cr, policy_doc]


VERSIONS = {'kernel-tuning': '1.4.0', 'gpu-driver': '570.124.6', 'nccl-tuning': '2.21.5'}
TIMEOUTS = {'nodewright_stage_timeout': 120, 'nodewright_interrupt_timeout': 120, 'nodewright_drain_timeout': 120}


def apply(playbooks, group, **extra):
    """``ansible-playbook nodewright.bridge.apply`` for the fleet's CR, read from the cluster."""
    variables = dict(TIMEOUTS, nodewright_cr_name=group.cr)
    variables.update(extra)
    return playbooks.run('nodewright.bridge.apply', extra_vars=variables, run_timeout=900)


def ready(node):
    return any(c.type == 'Ready' and c.status == 'True' for c in (node.status.conditions or []))


def completed_stages(entry):
    """The install stages a nodeState entry says are done (``skipped`` interrupts count: merged into another)."""
    if not entry or entry.get('stage') not in INSTALL_STAGES:
        return set()
    index = INSTALL_STAGES.index(entry['stage'])
    done = set(INSTALL_STAGES[:index])
    if entry.get('state') in ('complete', 'skipped'):
        done.add(entry['stage'])
    return done


class Fleet:
    """Fresh fake GPU nodes (racks a and b) with a pool label of their own, their CR in the cluster, and clean-up."""

    def __init__(self, cluster, tmp_path, racks):
        self.cluster = cluster
        self.core = cluster.core
        self.custom = kclient.CustomObjectsApi(cluster.api)
        self.id = uuid.uuid4().hex[:6]
        self.cr = f'io-{self.id}'
        self.policy = f'io-policy-{self.id}'
        self.tmp_path = tmp_path
        self.names, per_node = [], {}
        for rack, count in racks.items():
            for i in range(count):
                name = f'io-{self.id}-{rack}{i}'
                self.names.append(name)
                per_node[name] = {'rack': rack}
        _INDEX[0] += 20
        launcher.create_nodes(cluster.api, self.names, labels={'nodewright.bridge/pool': self.id},
                              per_node_labels=per_node, start_index=_INDEX[0])
        launcher.wait_nodes_ready(cluster.api, self.names, timeout=60)
        self.created = False

    def documents(self, **versions):
        """The operator's documents (Skyhook, DeploymentPolicy), from the NodeWright ones by the collection's to_skyhook."""
        return operator_documents.to_skyhook(nodewright_documents(self.cr, self.id, self.policy, **versions))

    def create(self, **versions):
        cr, policy = self.documents(**versions)
        self.custom.create_cluster_custom_object(GROUP, VERSION, 'deploymentpolicies', policy)
        self.custom.create_cluster_custom_object(GROUP, VERSION, 'skyhooks', cr)
        self.created = True
        path = Path(self.tmp_path) / f'{self.cr}.yaml'
        path.write_text(yaml.safe_dump_all([cr, policy], sort_keys=False))
        return path

    def bump(self, **versions):
        """Change package versions of the CR in the cluster (an upgrade)."""
        cr = self.documents(**versions)[0]
        self.custom.patch_cluster_custom_object(GROUP, VERSION, 'skyhooks', self.cr, {'spec': {'packages': cr['spec']['packages']}})

    def nodes(self):
        """The fleet's nodes, one list call: name -> V1Node."""
        listing = self.core.list_node(label_selector=f'nodewright.bridge/pool={self.id}')
        return {node.metadata.name: node for node in listing.items}

    def state_of(self, node):
        text = (node.metadata.annotations or {}).get(STATE + self.cr)
        return json.loads(text) if text else {}

    def states(self):
        return {name: self.state_of(node) for name, node in self.nodes().items()}

    def complete_of(self, node, versions):
        """Every package of ``versions`` (name -> version) complete, status complete, schedulable, Ready."""
        state = self.state_of(node)
        return ((node.metadata.annotations or {}).get(STATUS + self.cr) == 'complete' and not node.spec.unschedulable
                and ready(node) and all((state.get(f'{pkg}|{ver}') or {}).get('state') == 'complete' for pkg, ver in versions.items()))

    def completed(self, versions):
        """The names of the nodes complete for ``versions``."""
        return [name for name, node in self.nodes().items() if self.complete_of(node, versions)]

    def all_complete(self, versions):
        return len(self.completed(versions)) == len(self.names)

    def settle(self, timeout=120):
        """Wait until the fake reboots the interrupt pods asked for are over.

        On the fake nodes an interrupt pod finishes at once and the reboot follows (fake-reboots,
        1 s after it saw the pod), so the operator records a node complete before its reboot has
        happened. Once no interrupt pod of these nodes is left, a reboot still due starts within that
        delay; then every node must be Ready with no reboot under way.
        """
        def no_interrupt_pods():
            pods = self.core.list_namespaced_pod(NAMESPACE, label_selector='skyhook.nvidia.com/interrupt=True').items
            return not [p for p in pods if p.spec.node_name in self.names]
        wait_until(no_interrupt_pods, timeout, 'the interrupt pods of %s to be gone' % self.cr)
        # fake-reboots' delay (1 s after it saw a pod) + a margin: a reboot still due has begun (its record on the
        # node says 'rebooting') and rebooted() below waits for it. A condition in truth: each interrupt pod's
        # reboot recorded on its node (helpers.wait_fake_reboot by the pod's uid), if the pods' uids were kept
        time.sleep(2.5)

        def rebooted():
            nodes = self.nodes()
            return len(nodes) == len(self.names) and all(
                ready(node) and json.loads((node.metadata.annotations or {}).get(FAKE_REBOOT) or '{}').get('state') != 'rebooting'
                for node in nodes.values())
        wait_until(rebooted, timeout, 'the reboots of %s to be over' % self.cr)

    def midway(self, versions):
        """Some node complete and another one on its way (a handoff in the middle of a rollout)."""
        nodes = self.nodes()
        done = [n for n, node in nodes.items() if self.complete_of(node, versions)]
        on_the_way = [n for n, node in nodes.items() if self.state_of(node) and n not in done]
        return bool(done and on_the_way)

    def cr_annotations(self):
        """The CR's annotations as the cluster has them now."""
        doc = self.custom.get_cluster_custom_object(GROUP, VERSION, 'skyhooks', self.cr)
        return doc['metadata'].get('annotations') or {}

    def leftover_cordons(self):
        """Nodes still cordoned, or still carrying a cordon ownership record of any CR."""
        out = {}
        for name, node in self.nodes().items():
            records = sorted(k for k in (node.metadata.annotations or {}) if k.startswith(CORDON))
            if node.spec.unschedulable or records:
                out[name] = {'unschedulable': bool(node.spec.unschedulable), 'records': records}
        return out

    def cr_status(self):
        return (self.custom.get_cluster_custom_object(GROUP, VERSION, 'skyhooks', self.cr).get('status') or {})

    def close(self):
        if self.created:
            for plural, name in (('skyhooks', self.cr), ('deploymentpolicies', self.policy)):
                try:
                    # the operator's finalizer: nobody may be left to remove it
                    self.custom.patch_cluster_custom_object(GROUP, VERSION, plural, name, {'metadata': {'finalizers': None}})
                    self.custom.delete_cluster_custom_object(GROUP, VERSION, plural, name)
                except kclient.ApiException:
                    pass
        for name in self.names:
            try:
                self.core.delete_node(name)
            except kclient.ApiException:
                pass


class Operator:
    """One operator process (out of cluster, as upstream's local development runs it); its log in a file."""

    def __init__(self, binary, kubeconfig, log_path, leader_election=False, settings=None):
        env = dict(os.environ, KUBECONFIG=str(kubeconfig), **dict(OPERATOR_SETTINGS, **(settings or {})))
        env['LEADER_ELECTION'] = 'true' if leader_election else 'false'
        self.log_path = Path(log_path)
        cmd = [binary]
        if leader_election:
            cmd = IN_CLUSTER_NAMESPACE + [binary, NAMESPACE]
        with open(self.log_path, 'wb') as out:
            self.proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                                         cwd=str(self.log_path.parent))
        deadline = time.monotonic() + 120
        while 'Starting workers' not in self.log():
            if self.proc.poll() is not None:
                raise AssertionError(f'the operator exited ({self.proc.returncode}) before it started its workers:\n{self.log()[-3000:]}')
            if time.monotonic() > deadline:
                self.stop()
                raise AssertionError(f'the operator did not start its workers within 120 s:\n{self.log()[-3000:]}')
            time.sleep(0.2)

    def log(self):
        try:
            return self.log_path.read_text(encoding='utf-8', errors='replace')
        except OSError:
            return ''

    def running(self):
        return self.proc.poll() is None

    def stop(self):
        """SIGTERM (as Kubernetes stops its pod), SIGKILL after 15 s."""
        if self.proc.poll() is not None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
        except OSError:
            pass
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


class Operators:
    def __init__(self, cluster, binary, tmp_path):
        self.cluster, self.binary, self.tmp_path = cluster, binary, Path(tmp_path)
        self.started = []

    def start(self, leader_election=False, **settings):
        """An operator process; ``settings``: environment variables over OPERATOR_SETTINGS (AGENT_IMAGE=...)."""
        op = Operator(self.binary, self.cluster.kubeconfig, self.tmp_path / f'operator-{len(self.started)}.log',
                      leader_election=leader_election, settings=settings)
        self.started.append(op)
        return op

    def stop_all(self):
        for op in self.started:
            op.stop()


class PodRecorder:
    """Every pod created in the operator's namespace while it runs, by watch: uid -> (time, node, package, stage, version)."""

    def __init__(self, cluster, nodes):
        self.core = kclient.CoreV1Api(cluster.api)
        self.nodes = set(nodes)
        self.created = {}
        self.stop = threading.Event()
        self.rv = self.core.list_namespaced_pod(NAMESPACE).metadata.resource_version
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stop.is_set():
            try:
                for event in kwatch.Watch().stream(self.core.list_namespaced_pod, NAMESPACE, resource_version=self.rv,
                                                   timeout_seconds=5):
                    pod = event['object']
                    self.rv = pod.metadata.resource_version
                    # only a pod ADDED after the list is one created since: a pod made before it (a finished stage's
                    # pod still being deleted) shows up here as MODIFIED or DELETED
                    if event['type'] == 'ADDED' and pod.spec.node_name in self.nodes and pod.metadata.uid not in self.created:
                        info = json.loads((pod.metadata.annotations or {}).get('skyhook.nvidia.com/package') or '{}')
                        self.created[pod.metadata.uid] = (time.time(), pod.spec.node_name, info.get('name'), info.get('stage'),
                                                          info.get('version'))
                    if self.stop.is_set():
                        return
            except Exception:  # pylint: disable=broad-exception-caught
                time.sleep(0.5)  # an expired watch: carry on from the last resourceVersion

    def since(self, moment):
        return [c for c in self.created.values() if c[0] >= moment]

    def close(self):
        self.stop.set()
        self.thread.join(timeout=15)


def _ts(text):
    return datetime.datetime.fromisoformat(text.replace('Z', '+00:00')).timestamp()


def audit_caught_up(cluster, timeout=30):
    """Until the audit log shows a request of our own made now (a GET of a ConfigMap that does not exist, by a name
    of its own): the events of the requests answered before it are written by then (each is written as its request
    ends, --audit-log-mode=blocking), where a fixed sleep would only guess."""
    mark = f'audit-mark-{uuid.uuid4().hex[:12]}'
    try:
        kclient.CoreV1Api(cluster.api).read_namespaced_config_map(mark, 'default')
    except kclient.ApiException as exc:
        if exc.status != 404:
            raise

    def seen():
        with open(cluster.info.audit_log, encoding='utf-8') as handle:
            return any(mark in line for line in handle)
    wait_until(seen, timeout, f'the audit log to show the request for {mark}', interval=0.1)


def audit_writes(cluster, agent, since, nodes):
    """Non-dry-run writes of one user agent since ``since`` (epoch s): {'nodes': {node: n}, 'pods created': n, 'other': {...}}."""
    audit_caught_up(cluster)
    nodes = set(nodes)
    out = {'nodes': dict((n, 0) for n in nodes), 'pods created': 0, 'other': {}}
    seen = set()
    with open(cluster.info.audit_log, encoding='utf-8') as handle:
        for line in handle:
            if agent not in line:
                continue
            event = json.loads(line)
            if (not (event.get('userAgent') or '').startswith(agent) or event['auditID'] in seen
                    or event.get('verb') not in WRITE_VERBS or 'dryRun=' in (event.get('requestURI') or '')
                    or _ts(event['requestReceivedTimestamp']) < since):
                continue
            seen.add(event['auditID'])
            ref = event.get('objectRef') or {}
            if ref.get('resource') == 'nodes' and ref.get('name') in nodes:
                out['nodes'][ref['name']] += 1
            elif ref.get('resource') == 'pods' and event['verb'] == 'create' and not ref.get('subresource'):
                out['pods created'] += 1
            else:
                key = '%s %s' % (event['verb'], ref.get('resource'))
                out['other'][key] = out['other'].get(key, 0) + 1
    return out


def wait_until(predicate, timeout, what, interval=0.5):
    return helpers.wait_for(predicate, timeout=timeout, interval=interval, what=what)
