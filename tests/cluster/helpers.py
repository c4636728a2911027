# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""Helpers for tests against the KWOK test cluster (see docs/dev/test-cluster.md).

Everything here talks to the real API server; the fake part is only the
kubelet, played by kwok according to the stages in tests/cluster/stages and
kwok's stock stages.

Failure and node life-cycle knobs:
  * init container failure of a pod you create:    mark_pod_to_fail(manifest)  (label nodewright.bridge/fail-init=true)
  * init container failure of a pod someone else
    creates (e.g. the operator):                    use an init container image containing "fail" (FAIL_IMAGE)
  * node NotReady (kubelet reports NotReady):       set_node_not_ready(api, name)
  * node reboot (NotReady, new bootID, Ready):      reboot_node(api, name)
  * node gone for good (no kubelet, lease stops):   take_node_away(api, name)

Reboots by the "agent": with fake-reboots running (launcher.up's default;
cluster.fake_reboots), an interrupt pod with a node_restart payload reboots
its node by itself about a second after it appears. fake_reboot_record(api,
name) is the node's record of the last one, wait_fake_reboot(api, name, uid)
waits for the one of a pod, and opt_out_of_fake_reboots(api, name) keeps a
node for tests that reboot it by hand. reboot_node and set_node_not_ready
wait while a fake reboot of the node runs, and a fake reboot waits while
they hold the node, so the two never interleave.

Pod logs (pods/log, served by kubelet_logs.py): pod_log(api, ns, pod, container)
returns what the API server returns; expected_log(...) is the exact text to
expect, e.g. a failed init container ends with "stage failed: exit 1".
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tarfile
import time
import uuid
from pathlib import Path

from kubernetes import client as kclient
from kubernetes import watch as kwatch

import fake_reboots
import kubelet_logs
import launcher

# Pod failure (tests/cluster/stages/pod-init-fail.yaml).
FAIL_LABEL = 'nodewright.bridge/fail-init'
FAIL_CONTAINER_ANNOTATION = 'nodewright.bridge/fail-init-container'
FAIL_EXIT_CODE_ANNOTATION = 'nodewright.bridge/fail-init-exit-code'
# Any init container image containing "fail" fails; this one reads as such.
FAIL_IMAGE = 'registry.invalid/nodewright/fail:1'

# kwok's stock chaos stage node/chaos/node-not-ready.yaml.
NODE_NOT_READY_LABEL = fake_reboots.NODE_NOT_READY_LABEL
# A holder that is not kwok: kwok does not renew a lease someone else holds
# until it expires, and this one expires in ten years.
GONE_LEASE_HOLDER = fake_reboots.GONE_LEASE_HOLDER
GONE_LEASE_SECONDS = 315360000

# Fake reboots (tests/cluster/fake_reboots.py).
INTERRUPT_LABEL = fake_reboots.INTERRUPT_LABEL                  # 'skyhook.nvidia.com/interrupt' = 'True'
FAKE_REBOOT_ANNOTATION = fake_reboots.REBOOT_ANNOTATION         # the JSON record of a node's last fake reboot
NO_FAKE_REBOOT_ANNOTATION = fake_reboots.OPT_OUT_ANNOTATION     # 'true': fake-reboots leaves the node alone

# Pod logs (tests/cluster/kubelet_logs.py): the lines of every container log.
LOG_HEADER = kubelet_logs.LOG_HEADER        # 'nodewright-bridge fake log: pod {namespace}/{pod} container {container} image {image}'
LOG_COMPLETED = kubelet_logs.LOG_COMPLETED  # 'stage completed: exit 0'
LOG_FAILED = kubelet_logs.LOG_FAILED        # 'stage failed: exit {exit_code}'
LOG_RUNNING = kubelet_logs.LOG_RUNNING      # 'container running'
FAKE_LOG_ANNOTATION = kubelet_logs.FAKE_LOG_ANNOTATION


class WaitTimeout(AssertionError):
    """A bounded wait ran out; an AssertionError so pytest reports it as a test failure."""


# upstream's agent and e2e snapshot (../shared/upstream, read-only): its chainsaw scenarios are the contract
UPSTREAM_E2E_TARBALL = 'nodewright-agent-and-e2e-71ca22b.tar.xz'
UPSTREAM_CHAINSAW = 'nodewright/k8s-tests/chainsaw/'


def upstream_snapshot(name=UPSTREAM_E2E_TARBALL):
    """The path of a tarball of ../shared/upstream (beside the checkout, or /work/shared/upstream); an error
    naming both places when neither has it."""
    repo = Path(__file__).resolve().parents[2]
    for base in (repo.parent / 'shared' / 'upstream', Path('/work/shared/upstream')):
        if (base / name).is_file():
            return base / name
    raise RuntimeError(f'no upstream snapshot: {name} is neither in ../shared/upstream nor /work/shared/upstream')


def upstream_scenario_files(scenario):
    """``{file name: text}``: the files of upstream's chainsaw scenario ``scenario`` (for example
    skyhook/config-skyhook), read from the snapshot as upstream wrote them."""
    prefix = f'{UPSTREAM_CHAINSAW}{scenario}/'
    with tarfile.open(upstream_snapshot()) as tar:
        return {m.name[len(prefix):]: tar.extractfile(m).read().decode() for m in tar
                if m.isfile() and m.name.startswith(prefix) and '/' not in m.name[len(prefix):]}


def wait_for(predicate, timeout=30.0, interval=0.25, what='condition'):
    """Poll predicate() until it returns a truthy value (returned) or timeout (WaitTimeout)."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        last = predicate()
        if last:
            return last
        if time.monotonic() > deadline:
            raise WaitTimeout(f'timed out after {timeout}s waiting for {what} (last value: {last!r})')
        time.sleep(interval)


def holds_for(check, seconds, interval=0.25, what='condition'):
    """A negative assertion over a period: poll check() for ``seconds`` and fail (AssertionError) the moment it is
    false, instead of looking once at the end of a fixed sleep. Returns check()'s last value."""
    end = time.monotonic() + seconds
    last = []

    def over():
        last[:] = [check()]
        if not last[0]:
            raise AssertionError(f'{what} stopped holding {seconds - (end - time.monotonic()):.1f}s into its {seconds}s '
                                 f'(value: {last[0]!r})')
        return time.monotonic() >= end
    wait_for(over, seconds + 30, interval, what=f'{what} for {seconds}s')
    return last[0]


_METRIC_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def apiserver_requests(api, **labels):
    """How many requests the API server has answered that match ``labels``: apiserver_request_total of its
    /metrics, summed over the series with those label values (verb, resource, subresource, scope, code, dry_run...).

    The cluster's own count of what clients asked, without an audit log: e.g. ``subresource='eviction',
    code='429'`` counts the evictions a PodDisruptionBudget refused, ``verb='LIST', resource='pods',
    scope='cluster'`` the lists of pods across namespaces (a list-then-watch of the pods of a node).
    """
    client = core_api(api).api_client
    config = client.configuration
    headers = dict((a['key'], a['value']) for a in config.auth_settings().values() if a.get('in') == 'header' and a.get('value'))
    # the client's own connection pool (its CA and TLS settings); no generated method reads /metrics
    resp = client.rest_client.pool_manager.request('GET', config.host + '/metrics', headers=headers, timeout=10)
    if resp.status != 200:
        raise AssertionError(f'GET /metrics of the API server: HTTP {resp.status}')
    total = 0.0
    for line in resp.data.decode('utf-8').splitlines():
        if not line.startswith('apiserver_request_total{'):
            continue
        series, dummy, value = line.rpartition(' ')
        found = dict(_METRIC_LABEL.findall(series[series.index('{'):]))
        if all(found.get(k) == str(v) for k, v in labels.items()):
            total += float(value)
    return int(total)


def core_api(api):
    """CoreV1Api for an ApiClient (or pass a CoreV1Api through)."""
    return api if isinstance(api, kclient.CoreV1Api) else kclient.CoreV1Api(api)


# --------------------------------------------------------------------------
# pods

def mark_pod_to_fail(manifest, container=None, exit_code=1):
    """Make kwok fail an init container of this pod manifest (a dict); returns it.

    container: name of the init container to fail (default: the first one)
    exit_code: its exit code
    With restartPolicy Never the pod ends Failed; otherwise it stays Pending
    with the container in CrashLoopBackOff (lastState terminated, exit code).
    """
    meta = manifest.setdefault('metadata', {})
    meta.setdefault('labels', {})[FAIL_LABEL] = 'true'
    ann = meta.setdefault('annotations', {})
    ann[FAIL_EXIT_CODE_ANNOTATION] = str(int(exit_code))
    if container:
        ann[FAIL_CONTAINER_ANNOTATION] = container
    return manifest


# pylint: disable-next=too-many-arguments,too-many-positional-arguments
def wait_pod(api, namespace, name, predicate, timeout=30.0, what=None):
    """Watch one pod until predicate(pod) is true; return that pod (a V1Pod)."""
    core = core_api(api)
    deadline = time.monotonic() + timeout
    last = None
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise WaitTimeout(f'timed out after {timeout}s waiting for pod {namespace}/{name}: '
                              f'{what or predicate.__name__}; last status: {last.status if last else None}')
        wat = kwatch.Watch()
        # The watch first replays the current state (ADDED), so a pod that is
        # already there is judged at once.
        for event in wat.stream(core.list_namespaced_pod, namespace, field_selector=f'metadata.name={name}',
                                timeout_seconds=max(1, int(remaining))):
            if event['type'] == 'DELETED':
                continue
            last = event['object']
            if predicate(last):
                wat.stop()
                return last
            if time.monotonic() > deadline:
                wat.stop()
                break


def init_container_states(pod):
    """[(name, state, exit code or None, reason)] per init container; a CrashLoopBackOff shows lastState's exit code."""
    out = []
    for st in (pod.status.init_container_statuses or []) if pod.status else []:
        if st.state and st.state.terminated:
            term = st.state.terminated
            out.append((st.name, 'terminated', term.exit_code, term.reason))
        elif st.state and st.state.waiting:
            last = st.last_state.terminated if st.last_state else None
            out.append((st.name, 'waiting', last.exit_code if last else None, st.state.waiting.reason))
        elif st.state and st.state.running:
            out.append((st.name, 'running', None, None))
        else:
            out.append((st.name, 'unknown', None, None))
    return out


def init_containers_succeeded(pod):
    """True when every init container of the pod is reported terminated with exit code 0."""
    wanted = [c.name for c in pod.spec.init_containers or []]
    states = {n: (s, code) for n, s, code, dummy in init_container_states(pod)}
    return bool(wanted) and all(states.get(n) == ('terminated', 0) for n in wanted)


def init_container_failed(pod):
    """(name, exit code) of the first init container that exited non-zero, else None."""
    for name, dummy, code, dummy in init_container_states(pod):
        if code not in (None, 0):
            return name, code
    return None


def pod_log(api, namespace, name, container=None, previous=False, **kwargs):
    """The log of a container through the API server (read_namespaced_pod_log); kwargs: tail_lines, timestamps, ...

    Raises kubernetes.client.ApiException as the server answers: 400 for a
    container that never ran (waiting) or a missing previous instance.
    """
    return core_api(api).read_namespaced_pod_log(name, namespace, container=container, previous=previous, **kwargs)


# pylint: disable-next=too-many-arguments,too-many-positional-arguments
def expected_log(namespace, pod, container, image, exit_code=None, extra=None):
    """The exact text pod_log() returns for a container instance (exit_code None: running).

    Two lines, or more with extra (the container's text in the pod's
    nodewright.bridge/fake-log annotation, a JSON object {container: text}):
        nodewright-bridge fake log: pod <namespace>/<pod> container <container> image <image>
        stage completed: exit 0  |  stage failed: exit <code>  |  container running
    """
    return kubelet_logs.expected_log(namespace, pod, container, image, exit_code, extra)


def set_fake_log(manifest, container, text):
    """Put extra text into one container's fake log (pod manifest dict; returns it)."""
    ann = manifest.setdefault('metadata', {}).setdefault('annotations', {})
    texts = json.loads(ann.get(FAKE_LOG_ANNOTATION) or '{}')
    texts[container] = text
    ann[FAKE_LOG_ANNOTATION] = json.dumps(texts)
    return manifest


def evict(api, namespace, name):
    """Ask for an Eviction (policy/v1); return the HTTP status (201 allowed, 429 refused by a PDB)."""
    core = core_api(api)
    body = kclient.V1Eviction(metadata=kclient.V1ObjectMeta(name=name, namespace=namespace))
    try:
        core.create_namespaced_pod_eviction(name, namespace, body)
    except kclient.ApiException as exc:
        return exc.status
    return 201


# --------------------------------------------------------------------------
# nodes

def node_ready(api, name):
    """Status of the node's Ready condition: 'True', 'False', 'Unknown' or None."""
    return launcher.node_ready_status(core_api(api).read_node(name))


def boot_id(api, name):
    """status.nodeInfo.bootID of a node."""
    return core_api(api).read_node(name).status.node_info.boot_id


def wait_node_ready(api, name, status='True', timeout=30.0):
    """Wait until the node's Ready condition has the given status."""
    return wait_for(lambda: node_ready(api, name) == status, timeout, what=f'node {name} Ready={status}')


def _claim_not_ready(core, name, timeout):
    """Set the node-not-ready label once no fake reboot of the node runs (guarded by the resourceVersion).

    fake-reboots does the same the other way round (it waits while the label is set), so a
    reboot by hand and a fake one never interleave.
    """
    deadline = time.monotonic() + timeout
    while True:
        node = core.read_node(name, _preload_content=False)
        node = json.loads(node.data.decode('utf-8'))
        record = fake_reboots.reboot_record(node)
        if record and record.get('state') == fake_reboots.REBOOTING:
            if time.monotonic() > deadline:
                raise WaitTimeout(f'timed out after {timeout}s waiting for the fake reboot of node {name} '
                                  f'(for pod {record.get("pod")}) to end')
            time.sleep(0.1)
            continue
        try:
            core.patch_node(name, {'metadata': {'resourceVersion': node['metadata']['resourceVersion'],
                                                'labels': {NODE_NOT_READY_LABEL: 'true'}}})
            return
        except kclient.ApiException as exc:
            if exc.status != 409:
                raise


def set_node_not_ready(api, name, not_ready=True, wait=True, timeout=30.0):
    """Have the fake kubelet report Ready=False (or, with not_ready=False, recover).

    The node keeps its lease, like a node whose kubelet runs but that is
    unhealthy; it stays NotReady until called again with not_ready=False.
    A fake reboot of the node that is under way is waited for first.
    """
    core = core_api(api)
    if not_ready:
        _claim_not_ready(core, name, timeout)
    else:
        core.patch_node(name, {'metadata': {'labels': {NODE_NOT_READY_LABEL: None}}})
    if wait:
        wait_node_ready(api, name, 'False' if not_ready else 'True', timeout)


def reboot_node(api, name, timeout=30.0):
    """Simulate a reboot: NotReady, a new status.nodeInfo.bootID, Ready again. Returns the new bootID.

    Verifies every step: Ready goes False, the bootID changes, Ready comes
    back True and the new bootID survives it (kwok's node-initialize keeps a
    bootID that is set). A fake reboot of the node that is under way is
    waited for first (up to timeout), and a fake reboot waits for this one.
    """
    core = core_api(api)
    new = str(uuid.uuid4())
    set_node_not_ready(core, name, True, wait=True, timeout=timeout)
    old = boot_id(core, name)
    core.patch_node_status(name, {'status': {'nodeInfo': {'bootID': new}}})
    set_node_not_ready(core, name, False, wait=True, timeout=timeout)
    got = boot_id(core, name)
    if got != new or got == old:
        raise AssertionError(f'reboot of {name}: bootID is {got}, expected {new} (was {old})')
    return new


def take_node_away(api, name, wait=True, timeout=30.0):
    """The node dies for good: no more heartbeats, Ready=Unknown, unreachable taints.

    kwok stops managing it (annotation removed) and its lease is handed to a
    holder that never renews it, so the node lifecycle controller sees a dead
    kubelet, as when a machine is switched off. The Ready condition is set
    to Unknown at once (as the controller would after the grace period) so
    tests need not wait for it. Nothing brings the node back.
    """
    core = core_api(api)
    # kwok ignores the annotation change itself (it only drops nodes on
    # delete), but without it kwok would pick the node up again after a
    # restart.
    core.patch_node(name, {'metadata': {'annotations': {launcher.KWOK_NODE_ANNOTATION: None}}})
    coord = kclient.CoordinationV1Api(core.api_client)
    coord.patch_namespaced_lease(name, 'kube-node-lease', {'spec': {
        'holderIdentity': GONE_LEASE_HOLDER, 'leaseDurationSeconds': GONE_LEASE_SECONDS}})
    now = time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())
    conds = [{'type': t, 'status': 'Unknown', 'reason': 'NodeStatusUnknown',
              'message': 'Kubelet stopped posting node status.', 'lastTransitionTime': now}
             for t in ('Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure')]
    core.patch_node_status(name, {'status': {'conditions': conds}})
    if wait:
        def tainted():
            node = core.read_node(name)
            keys = {t.key for t in node.spec.taints or []}
            return launcher.node_ready_status(node) == 'Unknown' and 'node.kubernetes.io/unreachable' in keys
        wait_for(tainted, timeout, what=f'node {name} Unknown with the unreachable taint')


def fake_reboot_record(api, name):
    """The node's record of its last fake reboot (dict: pod, uid, state, previousBootID, bootID, started, finished), or None.

    state: 'rebooting', 'done', 'aborted' (node deleted or taken away meanwhile) or 'failed'.
    """
    node = core_api(api).read_node(name, _preload_content=False)
    return fake_reboots.reboot_record(json.loads(node.data.decode('utf-8')))


def wait_fake_reboot(api, name, pod_uid, timeout=30.0):
    """Wait until fake-reboots has finished the reboot of node name for the pod with this UID; returns the record."""
    def finished():
        record = fake_reboot_record(api, name)
        return record if record and record.get('uid') == pod_uid and record.get('state') != fake_reboots.REBOOTING else None
    return wait_for(finished, timeout, interval=0.1, what=f'the fake reboot of node {name} for pod uid {pod_uid}')


def opt_out_of_fake_reboots(api, name, opt_out=True):
    """Annotate the node so that fake-reboots never reboots it (tests that play the agent by hand), or undo that."""
    core_api(api).patch_node(name, {'metadata': {'annotations': {NO_FAKE_REBOOT_ANNOTATION: 'true' if opt_out else None}}})


def fake_reboots_running(api):
    """True when fake-reboots watches this cluster (its Lease in kube-system is being renewed)."""
    return launcher.fake_reboots_holder(core_api(api).api_client) is not None


def lease_renew_time(api, name):
    """renewTime of the node's Lease in kube-node-lease."""
    return kclient.CoordinationV1Api(core_api(api).api_client).read_namespaced_lease(name, 'kube-node-lease').spec.renew_time


# --------------------------------------------------------------------------
# a handle for tests

class Cluster:
    """A running test cluster: kubeconfig, API client, node names and the helpers above as methods."""

    def __init__(self, kubeconfig, node_names=None, info=None):
        self.kubeconfig = str(kubeconfig)
        self.info = info  # launcher.ClusterInfo when we started it, None when reused
        self.api = launcher.api_client_from_kubeconfig(self.kubeconfig)
        self.core = kclient.CoreV1Api(self.api)
        if node_names is None:
            node_names = sorted(n.metadata.name for n in self.core.list_node().items
                                if (n.metadata.annotations or {}).get(launcher.KWOK_NODE_ANNOTATION)
                                == launcher.KWOK_NODE_ANNOTATION_VALUE)
        self.node_names = list(node_names)
        self._fake_reboots = None

    @property
    def fake_reboots(self):
        """True when node_restart interrupt pods reboot their nodes by themselves (fake-reboots runs)."""
        if self._fake_reboots is None:
            self._fake_reboots = self.info.fake_reboots if self.info else fake_reboots_running(self.api)
        return self._fake_reboots

    def close(self):
        """Release the API client's connections."""
        self.api.close()

    def create_nodes(self, names, labels=None, per_node_labels=None, wait=True):
        """Add fake GPU nodes (see launcher.create_nodes); waits until they are Ready."""
        launcher.create_nodes(self.api, names, labels=labels, per_node_labels=per_node_labels)
        if wait:
            launcher.wait_nodes_ready(self.api, names, timeout=60)
        self.node_names.extend(names)
        return list(names)

    def reboot_node(self, name, timeout=30.0):
        """See reboot_node()."""
        return reboot_node(self.api, name, timeout)

    def take_node_away(self, name, wait=True, timeout=30.0):
        """See take_node_away()."""
        return take_node_away(self.api, name, wait, timeout)

    def set_node_not_ready(self, name, not_ready=True, wait=True, timeout=30.0):
        """See set_node_not_ready()."""
        return set_node_not_ready(self.api, name, not_ready, wait, timeout)

    def fake_reboot_record(self, name):
        """See fake_reboot_record()."""
        return fake_reboot_record(self.api, name)

    def wait_fake_reboot(self, name, pod_uid, timeout=30.0):
        """See wait_fake_reboot()."""
        return wait_fake_reboot(self.api, name, pod_uid, timeout)

    def opt_out_of_fake_reboots(self, name, opt_out=True):
        """See opt_out_of_fake_reboots()."""
        return opt_out_of_fake_reboots(self.api, name, opt_out)

    def wait_pod(self, namespace, name, predicate, timeout=30.0, what=None):
        """See wait_pod()."""
        return wait_pod(self.api, namespace, name, predicate, timeout, what)

    def evict(self, namespace, name):
        """See evict()."""
        return evict(self.api, namespace, name)

    def pod_log(self, namespace, name, container=None, previous=False, **kwargs):
        """See pod_log()."""
        return pod_log(self.api, namespace, name, container, previous, **kwargs)

    def create_namespace(self, name, timeout=30.0):
        """Create a namespace and wait for its default service account (pods need it)."""
        self.core.create_namespace(kclient.V1Namespace(metadata=kclient.V1ObjectMeta(name=name)))

        def has_sa():
            try:
                return self.core.read_namespaced_service_account('default', name)
            except kclient.ApiException as exc:
                if exc.status == 404:
                    return None
                raise
        wait_for(has_sa, timeout, what=f'default service account in {name}')
        return name

    def delete_namespace(self, name):
        """Delete a namespace without waiting (kwok deletes its pods at once)."""
        try:
            self.core.delete_namespace(name, propagation_policy='Background')
        except kclient.ApiException as exc:
            if exc.status != 404:
                raise


@contextlib.contextmanager
def own_cluster(state_dir, what='the test cluster', **up_args):
    """A cluster started in ``state_dir`` (``launcher.up(**up_args)``) as a Cluster, stopped afterwards.

    For the fixtures that need a cluster of their own (an audit log, restarts). A cluster that cannot
    start fails the test (never a skip); NODEWRIGHT_KEEP_CLUSTER_LOGS keeps the component logs.
    """
    try:
        info = launcher.up(state_dir=state_dir, **up_args)
    except Exception as exc:  # pylint: disable=broad-exception-caught
        import pytest  # pylint: disable=import-outside-toplevel
        pytest.fail(f'{what} could not be started: {exc}', pytrace=False)
    handle = Cluster(info.kubeconfig, node_names=info.nodes, info=info)
    try:
        yield handle
    finally:
        handle.close()
        launcher.down(state_dir, keep_state=bool(os.environ.get('NODEWRIGHT_KEEP_CLUSTER_LOGS')))
