# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The agent's reboot on the fake nodes: a node_restart interrupt pod reboots its node, once per pod.

On a real node the NodeWright agent in an interrupt pod (label
``skyhook.nvidia.com/interrupt=True``, or ``nodewright.nvidia.com/interrupt=True``
under the v0.18+ contract, where the pod is a stage Job's; one init container
``interrupt`` with the args ``interrupt /root <copy dir> <base64 JSON>``) reboots
the machine when the JSON's type is ``node_restart``. kwok only marks the init
container Completed. This process plays the reboot: it lists and watches interrupt
pods in all namespaces (one list and watch per label) and, for each pod whose
payload type is ``node_restart`` and that
is bound to a node (``spec.nodeName``) and not being deleted, reboots that
node once per pod UID, ``--delay`` seconds after it first saw the pod (so a
watcher sees the pod first), with the same steps as helpers.reboot_node:

1. claim the node: kwok's ``node-not-ready`` chaos label and the annotation
   ``nodewright.bridge/fake-reboot`` (state ``rebooting``) in one patch guarded
   by the node's resourceVersion. While someone else holds the label (a test
   in reboot_node or set_node_not_ready) it waits, up to ``--busy-timeout``;
2. wait for Ready=False (kwok: 1-2 s);
3. write a new UUID to ``status.nodeInfo.bootID``;
4. remove the label and record the reboot as ``done`` (again one guarded patch);
5. wait for Ready=True and check that the new bootID stuck.

Reboots of different nodes run in parallel (one thread each); two reboots of
one node run one after the other. Never rebooted: pods with another payload
type (``service_restart``, ``restart_all_services``, ``no_op``), pods whose
interrupt container kwok will fail (label ``nodewright.bridge/fail-init=true``
or an init container image containing ``fail``: the agent failed, so nothing
reboots), nodes that were taken away (helpers.take_node_away: kwok annotation
gone, or the Lease held by ``nodewright-bridge/node-gone``; checked before
every step, so a node taken away halfway stays down) and nodes annotated
``nodewright.bridge/no-fake-reboot=true`` (tests that play the agent by hand).

The node annotation ``nodewright.bridge/fake-reboot`` is a JSON record of the
last reboot: ``{"pod", "uid", "state", "previousBootID", "bootID", "started",
"finished"}`` with state ``rebooting``, ``done``, ``aborted`` (node taken away
or deleted) or ``failed``.

A Lease ``kube-system/nodewright-bridge-fake-reboots`` is renewed every 10 s
while the watch runs, so that tests can tell whether a cluster (one they did not
start) reboots nodes by itself. Every API error is logged and retried; one line
per decision goes to stderr (the component log).

Run by launcher.py as the component "fake-reboots" (run with python, no shebang on purpose):
    python tests/cluster/fake_reboots.py --kubeconfig KC [--delay 1.0]
"""

from __future__ import annotations

import argparse
import base64
import binascii
import datetime
import json
import os
import sys
import threading
import time
import uuid

# Labels, annotations and names shared with helpers.py (which re-exports them).
INTERRUPT_LABEL = 'skyhook.nvidia.com/interrupt'
INTERRUPT_LABEL_VALUE = 'True'
# Every generation's interrupt label (plugins/module_utils/model/api_generation.py: SKYHOOK, NODEWRIGHT interrupt_label).
INTERRUPT_LABELS = (INTERRUPT_LABEL, 'nodewright.nvidia.com/interrupt')
INTERRUPT_CONTAINER = 'interrupt'
REBOOT_TYPE = 'node_restart'
# kwok manages nodes with this annotation (launcher.KWOK_NODE_ANNOTATION);
# take_node_away removes it.
KWOK_NODE_ANNOTATION = 'kwok.x-k8s.io/node'
KWOK_NODE_ANNOTATION_VALUE = 'fake'
# kwok's stock chaos stage node/chaos/node-not-ready.yaml.
NODE_NOT_READY_LABEL = 'node-not-ready.stage.kwok.x-k8s.io'
# A holder that is not kwok: take_node_away hands the node's Lease to it.
GONE_LEASE_HOLDER = 'nodewright-bridge/node-gone'
NODE_LEASE_NAMESPACE = 'kube-node-lease'
# tests/cluster/stages/pod-init-fail.yaml fails such pods' init containers.
FAIL_LABEL = 'nodewright.bridge/fail-init'
FAIL_IMAGE_MARK = 'fail'
# The record of the node's last fake reboot (JSON), and the opt-out.
REBOOT_ANNOTATION = 'nodewright.bridge/fake-reboot'
OPT_OUT_ANNOTATION = 'nodewright.bridge/no-fake-reboot'
REBOOTING, DONE, ABORTED, FAILED = 'rebooting', 'done', 'aborted', 'failed'
# Renewed while the watch runs.
LEASE_NAMESPACE = 'kube-system'
LEASE_NAME = 'nodewright-bridge-fake-reboots'
LEASE_SECONDS = 30
LEASE_RENEW_SECONDS = 10
USER_AGENT = 'nodewright-test-cluster/fake-reboots'


def now_iso():
    """The current time as RFC 3339 with microseconds (metav1.MicroTime)."""
    return datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%S.%fZ')


# --------------------------------------------------------------------------
# decisions (pure: pods and nodes are dicts as the API returns them)

def interrupt_payload(pod):
    """The decoded JSON of the pod's interrupt container (args[3]); None when there is none or it is unreadable."""
    for container in ((pod.get('spec') or {}).get('initContainers') or []):
        if container.get('name') != INTERRUPT_CONTAINER:
            continue
        args = container.get('args') or []
        if len(args) < 4 or args[0] != 'interrupt':
            return None
        try:
            payload = json.loads(base64.b64decode(args[3], validate=True).decode('utf-8'))
        except (binascii.Error, ValueError):
            return None
        return payload if isinstance(payload, dict) else None
    return None


def interrupt_label(pod):
    """The interrupt label (of INTERRUPT_LABELS) the pod carries as True, or None."""
    labels = (pod.get('metadata') or {}).get('labels') or {}
    return next((key for key in INTERRUPT_LABELS if labels.get(key) == INTERRUPT_LABEL_VALUE), None)


def agent_fails(pod):
    """True when kwok will fail the pod's init container (pod-init-fail stage): the agent never reboots then."""
    meta = pod.get('metadata') or {}
    if (meta.get('labels') or {}).get(FAIL_LABEL) == 'true':
        return True
    return any(FAIL_IMAGE_MARK in (c.get('image') or '') for c in (pod.get('spec') or {}).get('initContainers') or [])


def reboot_decision(pod):  # pylint: disable=too-many-return-statements
    """(reboot, why) for an interrupt pod: reboot is True, False (never for this pod) or None (not yet: unbound)."""
    meta, spec = pod.get('metadata') or {}, pod.get('spec') or {}
    if interrupt_label(pod) is None:
        return False, 'not an interrupt pod'
    if meta.get('deletionTimestamp'):
        return False, 'being deleted'
    payload = interrupt_payload(pod)
    if payload is None:
        return False, f'no readable payload in init container "{INTERRUPT_CONTAINER}"'
    if payload.get('type') != REBOOT_TYPE:
        return False, f'payload type {payload.get("type")!r} is not {REBOOT_TYPE}'
    if agent_fails(pod):
        return False, 'its interrupt container is set to fail'
    if not spec.get('nodeName'):
        return None, 'not bound to a node yet'
    return True, f'payload type {REBOOT_TYPE}'


def node_unavailable(node):
    """Why a node must not be rebooted (taken away, opted out), or None."""
    meta = node.get('metadata') or {}
    annotations = meta.get('annotations') or {}
    if annotations.get(KWOK_NODE_ANNOTATION) != KWOK_NODE_ANNOTATION_VALUE:
        return f'not managed by kwok (annotation {KWOK_NODE_ANNOTATION} removed): taken away'
    if annotations.get(OPT_OUT_ANNOTATION) == 'true':
        return f'opted out ({OPT_OUT_ANNOTATION}=true)'
    return None


def ready_status(node):
    """The status of the node's Ready condition, or None."""
    for cond in (node.get('status') or {}).get('conditions') or []:
        if cond.get('type') == 'Ready':
            return cond.get('status')
    return None


def boot_id(node):
    """status.nodeInfo.bootID."""
    return ((node.get('status') or {}).get('nodeInfo') or {}).get('bootID')


def reboot_record(node):
    """The decoded fake-reboot annotation of a node, or None."""
    text = ((node.get('metadata') or {}).get('annotations') or {}).get(REBOOT_ANNOTATION)
    if not text:
        return None
    try:
        record = json.loads(text)
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


# --------------------------------------------------------------------------
# the API

class Gone(Exception):
    """The node was deleted or taken away: the reboot stops here and the node is left as it is."""


class Api:
    """The few calls needed, on dicts (no model objects); list_pods and watch_pods select the pods with ``label``."""

    def __init__(self, kubeconfig, label=INTERRUPT_LABEL):
        self.label = label
        # pylint: disable-next=import-outside-toplevel
        from kubernetes import client as kclient, config as kconfig
        self.kclient = kclient
        self.api = kconfig.new_client_from_config(config_file=str(kubeconfig))
        self.api.user_agent = USER_AGENT
        self.core = kclient.CoreV1Api(self.api)
        self.coord = kclient.CoordinationV1Api(self.api)

    @staticmethod
    def _json(resp):
        return json.loads(resp.data.decode('utf-8'))

    def read_node(self, name):
        """The node as a dict; Gone when it was deleted."""
        try:
            return self._json(self.core.read_node(name, _preload_content=False, _request_timeout=30))
        except self.kclient.ApiException as exc:
            if exc.status == 404:
                raise Gone(f'node {name} was deleted') from exc
            raise

    def lease_holder(self, node_name):
        """holderIdentity of the node's Lease, or None."""
        try:
            lease = self._json(self.coord.read_namespaced_lease(node_name, NODE_LEASE_NAMESPACE, _preload_content=False,
                                                                _request_timeout=30))
        except self.kclient.ApiException as exc:
            if exc.status == 404:
                return None
            raise
        return (lease.get('spec') or {}).get('holderIdentity')

    def patch_node(self, name, body):
        """Strategic merge patch of the node's metadata; False on a resourceVersion conflict (409)."""
        try:
            self.core.patch_node(name, body, _request_timeout=30)
        except self.kclient.ApiException as exc:
            if exc.status == 409:
                return False
            if exc.status == 404:
                raise Gone(f'node {name} was deleted') from exc
            raise
        return True

    def patch_boot_id(self, name, new):
        """Write status.nodeInfo.bootID."""
        self.core.patch_node_status(name, {'status': {'nodeInfo': {'bootID': new}}}, _request_timeout=30)

    def list_pods(self):
        """(items, resourceVersion) of the interrupt pods (with this Api's label) in all namespaces."""
        data = self._json(self.core.list_pod_for_all_namespaces(
            label_selector=f'{self.label}={INTERRUPT_LABEL_VALUE}', _preload_content=False, _request_timeout=60))
        return data.get('items') or [], (data.get('metadata') or {}).get('resourceVersion')

    def watch_pods(self, resource_version, timeout_seconds):
        """Watch events (dicts, as sent: ERROR and BOOKMARK included) from resource_version on, until the server ends the watch."""
        # pylint: disable-next=import-outside-toplevel
        from kubernetes.watch.watch import iter_resp_lines
        resp = self.core.list_pod_for_all_namespaces(
            label_selector=f'{self.label}={INTERRUPT_LABEL_VALUE}', watch=True, resource_version=resource_version,
            allow_watch_bookmarks=True, timeout_seconds=timeout_seconds, _preload_content=False,
            _request_timeout=(10, timeout_seconds + 30))
        try:
            for line in iter_resp_lines(resp):
                if line and not line.isspace():
                    yield json.loads(line)
        finally:
            resp.close()
            resp.release_conn()

    def renew_lease(self, identity):
        """Create or renew this process's Lease in kube-system."""
        spec = {'holderIdentity': identity, 'leaseDurationSeconds': LEASE_SECONDS, 'renewTime': now_iso()}
        try:
            self.coord.patch_namespaced_lease(LEASE_NAME, LEASE_NAMESPACE, {'spec': spec}, _request_timeout=30)
        except self.kclient.ApiException as exc:
            if exc.status != 404:
                raise
            spec['acquireTime'] = spec['renewTime']
            self.coord.create_namespaced_lease(LEASE_NAMESPACE, {'metadata': {'name': LEASE_NAME}, 'spec': spec},
                                               _request_timeout=30)


# --------------------------------------------------------------------------
# the reboots

def log(msg):
    """One line on stderr, with the time."""
    sys.stderr.write(f'{datetime.datetime.now().strftime("%H:%M:%S.%f")[:-3]} {msg}\n')
    sys.stderr.flush()


class Rebooter:  # pylint: disable=too-many-instance-attributes
    """Decides per interrupt pod and runs each reboot in a thread of its own."""

    # pylint: disable-next=too-many-arguments,too-many-positional-arguments
    def __init__(self, api, delay=1.0, step_timeout=30.0, busy_timeout=600.0, poll=0.1):
        self.api = api
        self.delay = delay
        self.step_timeout = step_timeout
        self.busy_timeout = busy_timeout
        self.poll = poll
        self.seen = {}  # pod UIDs decided on (rebooted, or never to be) -> the interrupt label they were listed by
        self.lock = threading.Lock()
        self.node_locks = {}

    # ---- pods

    def consider(self, pod):
        """Look at one interrupt pod (from the list or a watch event); start its reboot once per UID."""
        meta = pod.get('metadata') or {}
        uid = meta.get('uid')
        if not uid:
            return
        with self.lock:
            if uid in self.seen:
                return
            reboot, why = reboot_decision(pod)
            if reboot is None:
                return  # a later event (bound) decides
            self.seen[uid] = interrupt_label(pod)
        where = f'pod {meta.get("namespace")}/{meta.get("name")} (uid {uid})'
        node = (pod.get('spec') or {}).get('nodeName')
        if not reboot:
            log(f'{where}: no reboot: {why}')
            return
        log(f'{where}: rebooting node {node} in {self.delay:g}s ({why})')
        source = {'pod': f'{meta.get("namespace")}/{meta.get("name")}', 'uid': uid}
        threading.Thread(target=self._run, args=(node, source), name=f'reboot-{node}', daemon=True).start()

    def forget_except(self, uids, label=INTERRUPT_LABEL):
        """After a re-list of the pods with label: forget those that no longer exist (their DELETED events may have
        been missed); the pods of another label's list are left alone."""
        keep = set(uids)
        with self.lock:
            self.seen = {uid: key for uid, key in self.seen.items() if uid in keep or key != label}

    def forget(self, uid):
        """A pod was deleted; it never comes back with this UID."""
        with self.lock:
            self.seen.pop(uid, None)

    # ---- one reboot

    def _node_lock(self, node):
        with self.lock:
            return self.node_locks.setdefault(node, threading.Lock())

    def _run(self, node, source):
        time.sleep(self.delay)
        started = time.monotonic()
        try:
            with self._node_lock(node):
                outcome = self.reboot(node, source)
        except Gone as exc:
            outcome = f'aborted: {exc}'
        except Exception as exc:  # pylint: disable=broad-exception-caught
            # Whatever happens to one reboot, the watch and the other reboots go on.
            outcome = f'failed: {exc!r}'
        log(f'node {node} for pod {source["pod"]}: {outcome} ({time.monotonic() - started:.1f}s)')

    def _check(self, node, obj=None):
        """The node (read now unless given); Gone when it was deleted or taken away."""
        obj = obj or self.api.read_node(node)
        why = node_unavailable(obj)
        if why and why.startswith('not managed'):
            raise Gone(f'node {node} {why}')
        if self.api.lease_holder(node) == GONE_LEASE_HOLDER:
            raise Gone(f'node {node} taken away (its Lease is held by {GONE_LEASE_HOLDER})')
        return obj

    def _wait_ready(self, node, status):
        """Poll until Ready has this status; Gone when the node goes away meanwhile, None on timeout."""
        deadline = time.monotonic() + self.step_timeout
        while True:
            obj = self._retry(self.api.read_node, node)
            why = node_unavailable(obj)
            if why and why.startswith('not managed'):
                raise Gone(f'node {node} {why}')
            if ready_status(obj) == status:
                return obj
            if time.monotonic() > deadline:
                return None
            time.sleep(self.poll)

    def _retry(self, func, *args):
        """func(*args), retried for up to step_timeout while the API fails (Gone is passed on at once)."""
        deadline = time.monotonic() + self.step_timeout
        while True:
            try:
                return func(*args)
            except Gone:
                raise
            except Exception as exc:  # pylint: disable=broad-exception-caught
                if time.monotonic() > deadline:
                    raise
                log(f'{getattr(func, "__name__", func)}{args}: {exc!r}; retrying')
                time.sleep(0.5)

    def _write(self, node, obj, labels, record):
        """One patch of the not-ready label and the record, guarded by the resourceVersion of obj."""
        body = {'metadata': {'resourceVersion': obj['metadata']['resourceVersion'], 'labels': labels,
                             'annotations': {REBOOT_ANNOTATION: json.dumps(record, sort_keys=True)}}}
        return self.api.patch_node(node, body)

    def reboot(self, node, source):
        """Claim, NotReady, new bootID, Ready: returns what happened (a log line). Raises Gone."""
        record, why = self._claim(node, source)
        if record is None:
            return why
        old = record['previousBootID']
        try:
            # 2. NotReady (Ready was True when the node was claimed, so this False is ours)
            if self._wait_ready(node, 'False') is None:
                self._release(node, dict(record, state=FAILED, finished=now_iso()))
                return f'failed: Ready did not turn False within {self.step_timeout:g}s; label removed'
            # 3. the new bootID
            self._retry(self._check, node)
            new = str(uuid.uuid4())
            self._retry(self.api.patch_boot_id, node, new)
            # 4. up again, unless the node was taken away meanwhile (the guarded patch sees that);
            # the record stays "rebooting" until Ready is back, so reboot_node waits that long
            self._release(node, dict(record, bootID=new))
            # 5. Ready, with the new bootID
            back = self._wait_ready(node, 'True')
        except Gone as exc:
            self._record_only(node, dict(record, state=ABORTED, finished=now_iso(), reason=str(exc)))
            raise
        except Exception as exc:
            # Do not leave the node NotReady and claimed: give it back, then report.
            try:
                self._release(node, dict(record, state=FAILED, finished=now_iso(), reason=repr(exc)))
            except Exception as again:  # pylint: disable=broad-exception-caught
                log(f'node {node}: could not release it after {exc!r}: {again!r}')
            raise
        if back is None:
            outcome = f'failed: bootID {new} written, but Ready did not come back within {self.step_timeout:g}s'
        elif boot_id(back) != new:
            outcome = f'failed: bootID is {boot_id(back)} after Ready came back, expected {new}'
        else:
            outcome = f'rebooted: bootID {old} -> {new}'
        state = DONE if outcome.startswith('rebooted') else FAILED
        self._record_only(node, dict(record, state=state, bootID=new, finished=now_iso()))
        return outcome

    def _claim(self, node, source):
        """1. Set the not-ready label and the record once the node is Ready and nobody else holds the label.

        Returns (record, None) when claimed, else (None, why). Ready=True is required as well, so
        that a node whose label was just removed (Ready not yet back) is not taken for rebooted.
        """
        deadline = time.monotonic() + self.busy_timeout
        waited = False
        while True:
            obj = self._retry(self.api.read_node, node)
            why = node_unavailable(obj)
            if why:
                return None, f'skipped: node {why}'
            labels = (obj.get('metadata') or {}).get('labels') or {}
            mine = reboot_record(obj) or {}
            if labels.get(NODE_NOT_READY_LABEL) and mine.get('uid') == source['uid'] and mine.get('state') == REBOOTING:
                return mine, None  # our claim went through although its answer was lost (retried)
            if labels.get(NODE_NOT_READY_LABEL) is None and ready_status(obj) == 'True':
                self._retry(self._check, node, obj)
                record = dict(source, state=REBOOTING, previousBootID=boot_id(obj), started=now_iso())
                if self._retry(self._write, node, obj, {NODE_NOT_READY_LABEL: 'true'}, record):
                    return record, None
                continue  # the node changed meanwhile: read it again
            if time.monotonic() > deadline:
                return None, (f'gave up: the node was not Ready or kept its {NODE_NOT_READY_LABEL} label '
                              f'for {self.busy_timeout:g}s')
            if not waited:
                log(f'node {node}: waiting until it is Ready without the {NODE_NOT_READY_LABEL} label '
                    '(someone else reboots it, or it is not ready)')
                waited = True
            time.sleep(self.poll * 2)

    def _release(self, node, record):
        """Remove the not-ready label and write the record; Gone (label left) if the node was taken away."""
        while True:
            obj = self._retry(self._check, node)
            if self._retry(self._write, node, obj, {NODE_NOT_READY_LABEL: None}, record):
                return

    def _record_only(self, node, record):
        """Write the record without touching the label (a node taken away stays as it is)."""
        try:
            self._retry(self.api.patch_node, node, {'metadata': {'annotations': {REBOOT_ANNOTATION: json.dumps(record, sort_keys=True)}}})
        except Gone:
            pass  # deleted: nothing to record on
        except Exception as exc:  # pylint: disable=broad-exception-caught
            log(f'node {node}: could not record the reboot ({record.get("state")}): {exc!r}')


# --------------------------------------------------------------------------
# list + watch

def _lease_loop(api, identity, watching, stop):
    """Renew the Lease every LEASE_RENEW_SECONDS while the watch runs."""
    while not stop.is_set():
        if watching.is_set():
            try:
                api.renew_lease(identity)
            except Exception as exc:  # pylint: disable=broad-exception-caught
                log(f'lease renewal failed: {exc!r}')
        stop.wait(LEASE_RENEW_SECONDS if watching.is_set() else 0.2)


class _Ready:
    """Set watching (and take the Lease: the launcher waits for it) once every stream has listed its pods."""

    def __init__(self, api, identity, streams, watching):
        self.api, self.identity, self.watching = api, identity, watching
        self.waiting = set(streams)
        self.lock = threading.Lock()

    def listed(self, stream, count):
        with self.lock:
            if stream in self.waiting:
                self.waiting.discard(stream)
                log(f'watching interrupt pods labelled {stream.label} ({count} now)')
            if self.waiting or self.watching.is_set():
                return
            # a failure here fails this list; the stream's next list tries again
            self.api.renew_lease(self.identity)
            self.watching.set()
            log(f'lease {LEASE_NAMESPACE}/{LEASE_NAME} held as {self.identity}')


def _resync(api, rebooter, ready):
    """List the interrupt pods (of api's label), decide on each; returns the list's resourceVersion."""
    items, rv = api.list_pods()
    rebooter.forget_except((p['metadata']['uid'] for p in items), api.label)
    for pod in items:
        rebooter.consider(pod)
    ready.listed(api, len(items))
    return rv


def _watch_stream(api, rebooter, ready, watch_seconds, stop):
    """List, then watch from the list's resourceVersion; re-list on 410 Gone and after errors."""
    rv = None
    backoff = 0.5
    while not stop.is_set():
        try:
            if rv is None:
                rv = _resync(api, rebooter, ready)
            for event in api.watch_pods(rv, watch_seconds):
                kind, obj = event.get('type'), event.get('object') or {}
                if kind == 'ERROR':
                    code = obj.get('code')
                    log(f'watch error {code}: {obj.get("message")}; listing again')
                    rv = None
                    break
                new_rv = (obj.get('metadata') or {}).get('resourceVersion')
                if new_rv:
                    rv = new_rv
                if kind in ('ADDED', 'MODIFIED'):
                    rebooter.consider(obj)
                elif kind == 'DELETED':
                    rebooter.forget((obj.get('metadata') or {}).get('uid'))
                if stop.is_set():
                    break
            backoff = 0.5
        except Exception as exc:  # pylint: disable=broad-exception-caught
            status = getattr(exc, 'status', None)
            if status == 410:
                log('resourceVersion too old (410); listing again')
            else:
                log(f'watch failed: {exc!r}; listing again in {backoff:g}s')
                stop.wait(backoff)
                backoff = min(backoff * 2, 5.0)
            rv = None


# pylint: disable-next=too-many-arguments,too-many-positional-arguments
def watch_forever(api, rebooter, identity, watch_seconds=240, stop=None, more=()):
    """Watch api's interrupt pods here and those of each Api in more (another label) in a thread of its own; the
    Lease (renewed through api) is taken once every one of them has listed its pods."""
    stop = stop or threading.Event()
    watching = threading.Event()
    ready = _Ready(api, identity, (api, *more), watching)
    threading.Thread(target=_lease_loop, args=(api, identity, watching, stop), name='lease', daemon=True).start()
    for other in more:
        threading.Thread(target=_watch_stream, args=(other, rebooter, ready, watch_seconds, stop),
                         name=f'watch-{other.label}', daemon=True).start()
    _watch_stream(api, rebooter, ready, watch_seconds, stop)


def main(argv=None):
    """Watch and reboot until killed."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--kubeconfig', required=True)
    parser.add_argument('--delay', type=float, default=1.0, help='seconds between seeing a pod and rebooting its node')
    parser.add_argument('--step-timeout', type=float, default=30.0, help='how long to wait for Ready to change')
    parser.add_argument('--busy-timeout', type=float, default=600.0,
                        help='how long to wait while someone else holds the node-not-ready label')
    args = parser.parse_args(argv)
    api, *more = (Api(args.kubeconfig, label) for label in INTERRUPT_LABELS)
    rebooter = Rebooter(api, delay=args.delay, step_timeout=args.step_timeout, busy_timeout=args.busy_timeout)
    identity = f'fake-reboots/{os.getpid()}'
    log(f'fake-reboots: node_restart interrupt pods reboot their node after {args.delay:g}s')
    try:
        watch_forever(api, rebooter, identity, more=more)
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == '__main__':
    sys.exit(main())
