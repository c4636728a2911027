# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""What the tests of the cluster modules' ``run`` share (test_cluster_*.py): an AnsibleModule stand-in, a clock
for the code that sleeps, pod documents, and a look at the requests a run sent to the fake API server (fake_api).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import threading

import pytest

from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube as kube_api
from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube_transport
from ansible_collections.nodewright.bridge.tests.unit.plugins.module_utils.fake_api import FakeApiServer

NODE_PATH = '/api/v1/nodes/n1'
NODE_STATUS_PATH = NODE_PATH + '/status'
NODES = '/api/v1/nodes'
PODS = '/api/v1/pods'  # the pods of every namespace (a node's pods: fieldSelector spec.nodeName)
EVENTS = '/api/v1/namespaces/default/events'


class Ended(BaseException):
    """exit_json / fail_json ended the module, as AnsibleModule's do."""


class FakeModule(object):
    """What a cluster module reads of an AnsibleModule: params (its spec's defaults, then ``params``), check and
    diff mode, ``warn``; ``exit_json`` / ``fail_json`` record the result and end the run."""

    def __init__(self, code, check_mode=False, diff=False, **params):
        spec = code.module_args()['argument_spec']
        self.params = dict((name, option.get('default')) for name, option in spec.items())
        self.params.update(node='n1', nodewright_api='skyhook')
        self.params.update(params)
        self.check_mode = check_mode
        self._diff = diff
        self.warnings = []
        self.exited = None
        self.failed = None

    def warn(self, warning):
        self.warnings.append(warning)

    def exit_json(self, **result):
        self.exited = result
        raise Ended()

    def fail_json(self, msg, **result):
        self.failed = dict(result, msg=msg)
        raise Ended()


def execute(monkeypatch, code, module, kube):
    """``code.execute(module)`` (the module's whole run: _runner's error handling, exit_json / fail_json) with
    ``kube`` as the client it builds; returns the module, its ``exited`` or ``failed`` set."""
    monkeypatch.setattr(kube_api, 'Kube', lambda params, live_crs=None, session=None: kube)
    with pytest.raises(Ended):
        code.execute(module)
    return module


def api_server():
    """A FakeApiServer that takes every Event a module writes (best effort; test_node_events tests them)."""
    made = FakeApiServer()
    made.reply('POST', EVENTS, status=201, body={}, repeat=True)
    return made


def fast_retries(monkeypatch):
    """kube's retries of a refused or unanswered request after milliseconds instead of seconds."""
    monkeypatch.setattr(kube_transport, 'RETRY_FIRST_DELAY', 0.01)
    monkeypatch.setattr(kube_transport, 'RETRY_MAX_DELAY', 0.02)


class FakeClock(object):
    """``time`` for a module that sleeps: ``time()`` starts at ``start`` and moves only by ``sleep`` (recorded in
    ``slept``). Install with ``monkeypatch.setattr(the_module, 'time', clock)``; the client's own waits
    (kube.watch_until) keep the real clock."""

    def __init__(self, start=1000000.0):
        self.now = start
        self.slept = []
        self.lock = threading.Lock()

    def time(self):
        with self.lock:
            return self.now

    def sleep(self, seconds):
        with self.lock:
            self.slept.append(seconds)
            self.now += seconds


def pod(name, namespace='ns', uid=None, phase='Running', labels=None, annotations=None, owners=None, deleting=False,
        tolerations=None, ready=None, node_name='n1', resource_version=30):
    """A Pod document as the API lists it (the fields drain_rules and node_conditions read)."""
    meta = {'name': name, 'namespace': namespace, 'uid': uid or 'uid-' + name, 'resourceVersion': str(resource_version),
            'labels': dict(labels or {}), 'annotations': dict(annotations or {})}
    if owners:
        meta['ownerReferences'] = [{'kind': kind, 'name': owner, 'uid': 'uid-' + owner, 'controller': True}
                                   for kind, owner in owners]
    if deleting:
        meta['deletionTimestamp'] = '2026-05-01T10:00:00Z'
    status = {'phase': phase}
    if ready is not None:
        status['conditions'] = [{'type': 'Ready', 'status': 'True' if ready else 'False'}]
    return {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': meta,
            'spec': {'nodeName': node_name, 'tolerations': list(tolerations or [])}, 'status': status}


def pod_list(resource_version, *pods):
    return {'apiVersion': 'v1', 'kind': 'PodList', 'metadata': {'resourceVersion': str(resource_version)},
            'items': list(pods)}


def calls(server, without=(EVENTS,)):
    """The requests as ``METHOD path[ dry-run| watch]``, in order (the Events left out: see ``events_of``)."""
    return ['%s %s%s' % (r.method, r.path, ' dry-run' if r.query.get('dryRun') or dry_run_body(r) else
                         ' watch' if r.watch else '')
            for r in server.requests if r.path not in without]


def dry_run_body(request):
    """An eviction or a delete that asks for a dry run in its body (deleteOptions / DeleteOptions)."""
    body = request.body or {}
    if isinstance(body, list):  # a JSON patch: its dry run is in the query
        return False
    return (body.get('deleteOptions') or {}).get('dryRun') == ['All'] or body.get('dryRun') == ['All']


def events_of(server):
    """(reason, type, message) of the Events written on the node."""
    return [(r.body['reason'], r.body['type'], r.body['message']) for r in server.of('POST', EVENTS)]
