# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""What the fault tests (test_faults.py) watch and count: pod creations from the audit log, the
nodeState and cordons of the pool's nodes while a run goes on, and short-lived service-account
tokens signed with the cluster's own key.
"""

from __future__ import annotations

import base64
import collections
import json
import subprocess
import threading
import time
import urllib.parse
import uuid
from pathlib import Path

from kubernetes import client as kclient

from test_e2e_apply import STATE

CORDON = 'skyhook.nvidia.com/cordon_'
PACKAGE_ANNOTATION = 'skyhook.nvidia.com/package'
# A stage never goes back to an earlier one within a run of the apply playbook (no uninstall here).
STAGE_ORDER = {'apply': 0, 'config': 1, 'interrupt': 2, 'post-interrupt': 3}
STATE_ORDER = {'in_progress': 0, 'erroring': 0, 'unknown': 0, 'skipped': 1, 'complete': 1}


def audit_pod_creates(audit_log, namespace):
    """pod name -> how many times it was created for real (HTTP 201; dry runs and refusals left out)."""
    counts = collections.Counter()
    with open(audit_log, encoding='utf-8') as stream:
        for line in stream:
            if '"create"' not in line or '"pods"' not in line:
                continue
            event = json.loads(line)
            ref = event.get('objectRef') or {}
            if (event.get('verb') != 'create' or ref.get('resource') != 'pods' or ref.get('subresource')
                    or ref.get('namespace') != namespace or 'dryRun' in event.get('requestURI', '')):
                continue
            if (event.get('responseStatus') or {}).get('code') == 201:
                counts[ref.get('name')] += 1
    return counts


BRIDGE_UA = 'nodewright.bridge/'  # the collection's User-Agent (module_utils/api/kube_transport.USER_AGENT), up to its version


def audit_events(audit_log, needles=None):
    """The audit log's events (level Metadata, JSON lines), in the order the API server wrote them; a last line
    still being written is left out. The log is written before each response is sent (--audit-log-mode=blocking).
    ``needles``: only the lines that contain one of these strings are parsed (the log grows large)."""
    with open(audit_log, encoding='utf-8') as stream:
        for line in stream:
            if needles and not any(n in line for n in needles):
                continue
            try:
                yield json.loads(line)
            except ValueError:
                continue


def _is(event, verb, resource, namespace=None, name=None, subresource=None, agent=None, stage=None, query=None):
    ref = event.get('objectRef') or {}
    return (event.get('verb') == verb and ref.get('resource') == resource and ref.get('subresource') == subresource
            and (namespace is None or ref.get('namespace') == namespace) and (name is None or ref.get('name') == name)
            and (agent is None or (event.get('userAgent') or '').startswith(agent))
            and (stage is None or event.get('stage') == stage)
            and (query is None or query in urllib.parse.unquote(event.get('requestURI') or '')))


def refused_evictions(audit_log, namespace, pod):
    """How many times the collection asked to evict the pod and a PodDisruptionBudget refused it (429)."""
    return sum(1 for e in audit_events(audit_log, ['"eviction"'])
               if _is(e, 'create', 'pods', namespace, pod, subresource='eviction', agent=BRIDGE_UA)
               and (e.get('responseStatus') or {}).get('code') == 429)


def watch_opened(audit_log, resource, field_selector, namespace=None, after=None, shared=False):
    """The collection has a watch of ``resource`` with ``field_selector`` (e.g. metadata.name=<pod>) open: the API
    server started answering it (stage ResponseStarted); with ``after`` (a predicate, and the name it is about),
    one that came after an event ``after`` is true of. ``shared``: or the sequence engine's watch of every
    ``resource`` in ``namespace`` (no field selector: kube_transport.SharedWatch), which serves the wait then."""
    seen = after is None
    needles = ['"ResponseStarted"'] + ([after.name] if after is not None else [])
    for event in audit_events(audit_log, needles):
        if not seen:
            seen = after(event)
        elif _is(event, 'watch', resource, namespace, agent=BRIDGE_UA, stage='ResponseStarted') and (
                _is(event, 'watch', resource, query='fieldSelector=' + field_selector)
                or (shared and 'fieldSelector=' not in urllib.parse.unquote(event.get('requestURI') or ''))):
            return True
    return False


def pod_created(namespace, pod):
    """For watch_opened's ``after``: the collection created that pod."""
    def created(event):
        return _is(event, 'create', 'pods', namespace, pod, agent=BRIDGE_UA) and (
            event.get('responseStatus') or {}).get('code') == 201
    created.name = pod
    return created


def stage_pod_counts(audit_log, namespace, recorder):
    """(node, package, stage) -> pods created, from the audit log, named by what the recorder saw."""
    names = recorder.stage_of()
    counts = collections.Counter()
    for name, count in audit_pod_creates(audit_log, namespace).items():
        counts[names.get(name, ('?', name, '?'))] += count
    return counts


class NodeWatch:
    """Samples the pool's nodes every 0.3 s while a run goes on (and through outages).

    Records nodeState entries that vanished or went back to an earlier stage or state
    (``rollbacks``) and nodes seen cordoned without the CR's ``cordon_`` ownership annotation
    (``unowned_cordons``).
    """

    def __init__(self, core, names, cr):
        self.core = core
        self.names = list(names)
        self.cr = cr
        self.best = {}
        self.rollbacks = []
        self.unowned_cordons = []
        self.samples = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stop.is_set():
            try:
                nodes = {n.metadata.name: n for n in self.core.list_node(_request_timeout=3).items}
            except Exception:  # pylint: disable=broad-exception-caught
                time.sleep(0.3)
                continue
            for name in self.names:
                if name in nodes:
                    self._check(nodes[name])
            self.samples += 1
            time.sleep(0.3)

    def _check(self, node):
        name = node.metadata.name
        annotations = node.metadata.annotations or {}
        if node.spec.unschedulable and annotations.get(CORDON + self.cr) != 'true':
            self.unowned_cordons.append((time.time(), name))
        state = json.loads(annotations.get(STATE + self.cr) or '{}')
        for key, entry in state.items():
            rank = (STAGE_ORDER.get(entry.get('stage'), -1), STATE_ORDER.get(entry.get('state'), 0))
            old = self.best.get((name, key))
            if old is not None and rank < old:
                self.rollbacks.append((name, key, old, rank))
            self.best[(name, key)] = max(rank, old or rank)
        for (node_name, key) in list(self.best):
            if node_name == name and key not in state:
                self.rollbacks.append((name, key, self.best[(node_name, key)], 'gone'))

    def finish(self):
        self.stop.set()
        self.thread.join(timeout=10)
        return self


def invalid_entries(node, cr):
    """What is wrong with a node's nodeState for cr (every entry must be a whole record), as strings."""
    text = (node.metadata.annotations or {}).get(STATE + cr)
    if not text:
        return []
    try:
        state = json.loads(text)
    except ValueError as exc:
        return [f'{node.metadata.name}: nodeState is not JSON: {exc}']
    problems = []
    for key, entry in state.items():
        name, dummy, version = key.partition('|')
        if not isinstance(entry, dict) or entry.get('name') != name or entry.get('version') != version:
            problems.append(f'{node.metadata.name}: {key}: not a record of that package: {entry!r}')
        elif entry.get('stage') not in STAGE_ORDER or entry.get('state') not in STATE_ORDER:
            problems.append(f'{node.metadata.name}: {key}: stage/state {entry.get("stage")}/{entry.get("state")}')
    return problems


def unowned_cordon(node, cr):
    annotations = node.metadata.annotations or {}
    return bool(node.spec.unschedulable) and annotations.get(CORDON + cr) != 'true'


# ---------------------------------------------------------------------- short-lived tokens

ISSUER = 'https://kubernetes.default.svc.cluster.local'


def _b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b'=').decode()


def mint_sa_token(sa_key, namespace, name, uid, expires):
    """An RS256 service-account JWT signed with the cluster's key (sa.key), valid until ``expires`` (epoch).

    The TokenRequest API refuses lifetimes under 10 minutes; a token signed with the same key
    the API server verifies with can expire whenever a test needs.
    """
    now = int(time.time())
    header = {'alg': 'RS256', 'typ': 'JWT'}
    claims = {'iss': ISSUER, 'aud': [ISSUER], 'sub': f'system:serviceaccount:{namespace}:{name}',
              'iat': now - 300, 'nbf': now - 300, 'exp': int(expires), 'jti': str(uuid.uuid4()),
              'kubernetes.io': {'namespace': namespace, 'serviceaccount': {'name': name, 'uid': uid}}}
    signing_input = (_b64(json.dumps(header).encode()) + '.' + _b64(json.dumps(claims).encode())).encode()
    signature = subprocess.run(['openssl', 'dgst', '-sha256', '-sign', str(sa_key)], input=signing_input,
                               capture_output=True, check=True).stdout
    return signing_input.decode() + '.' + _b64(signature)


def token_kubeconfig(kubeconfig, token, path):
    """A copy of kubeconfig that authenticates with token instead."""
    # pylint: disable-next=import-outside-toplevel
    import yaml
    cfg = yaml.safe_load(Path(kubeconfig).read_text(encoding='utf-8'))
    for user in cfg['users']:
        user['user'] = {'token': token}
    Path(path).write_text(yaml.safe_dump(cfg, sort_keys=False), encoding='utf-8')
    Path(path).chmod(0o600)
    return str(path)


def token_works(server, ca_file, token):
    """HTTP status of GET /api/v1/nodes with that token (200 accepted, 401 refused)."""
    cfg = kclient.Configuration()
    cfg.host = server
    cfg.ssl_ca_cert = ca_file
    cfg.api_key = {'authorization': 'Bearer ' + token}
    with kclient.ApiClient(cfg) as api:
        try:
            kclient.CoreV1Api(api).list_node(limit=1, _request_timeout=5)
            return 200
        except kclient.ApiException as exc:
            return exc.status
