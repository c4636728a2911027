# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""A scripted Kubernetes API server at the HTTP layer, for unit tests of ``kube.Kube`` and its callers.

The fake stands in for the urllib3 pool manager of the ``kubernetes`` client that a ``Kube``
uses (``kube.api_client.rest_client.pool_manager``), so everything above the socket runs as
in production: ``kube.py``'s own code, the typed API methods (URL, query and body
serialisation, content types), ``ApiException.from_response`` for error statuses, and
urllib3's own ``HTTPResponse`` (``data``, ``stream``, its exception wrapping when a stream is
cut). Nothing of the typed client is mocked.

Use::

    server = FakeApiServer()
    kube = server.kube()                                  # a Kube talking to this server
    server.reply('GET', '/api/v1/nodes/n1', body=node_doc)
    server.reply('PATCH', '/api/v1/nodes/n1', status=409, body=status_body(409, 'Conflict', 'changed'))
    server.reply('PATCH', '/api/v1/nodes/n1', body=lambda request: dict(node_doc, ...))
    server.stream('GET', '/api/v1/nodes', [event('MODIFIED', node_doc)], cut=True)   # a watch
    ...
    assert [r.method for r in server.requests] == ['GET', 'PATCH', ...]

Answers are scripted per (method, path), first in first out; ``repeat=True`` keeps the last
answer for every further request. A list and a watch of the same path are told apart by the
``watch`` query parameter: ``reply`` answers requests without it, ``stream`` requests with it.
A request nobody scripted fails the test with an AssertionError that names it. Every request
is recorded (``server.requests``) with its parsed query and JSON body.

Bodies are dicts (sent as JSON), a callable ``body(request) -> dict`` (to echo what was sent),
or bytes/str (sent as they are, e.g. a pod log); ``Stored`` keeps one object (a node) that GETs
read and PATCHes change. A watch answer is a list of pieces, each a
dict (one watch event, as ``event()`` builds it), raw bytes, a ``Pause(seconds)`` (the server
is silent that long) or an exception instance (the connection fails there: pass
``ConnectionResetError()``, or ``socket.timeout()`` for a read timeout); ``cut=True`` appends a
reset. A stream that just ends is the server closing the watch (its ``timeoutSeconds``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import io
import itertools
import json
import threading
import time

from urllib.parse import parse_qsl, urlsplit

import urllib3

from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube as kube_api

_HOSTS = itertools.count(1)

REASONS = {200: 'OK', 201: 'Created', 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found',
           409: 'Conflict', 410: 'Gone', 422: 'Unprocessable Entity', 429: 'Too Many Requests',
           500: 'Internal Server Error'}


def status_body(code, reason, message):
    """A metav1.Status as the API server sends it with an error (``reason``: 'Conflict', 'AlreadyExists', ...)."""
    return {'kind': 'Status', 'apiVersion': 'v1', 'metadata': {}, 'status': 'Failure', 'message': message,
            'reason': reason, 'code': code}


def event(etype, obj):
    """One watch event: ``etype`` ADDED, MODIFIED, DELETED, BOOKMARK or ERROR (then ``obj`` is a Status)."""
    return {'type': etype, 'object': obj}


def gone_event(message='too old resource version: 1 (42)'):
    """The ERROR event an API server sends when a watch's resourceVersion has expired."""
    return event('ERROR', status_body(410, 'Expired', message))


def node(name, resource_version, labels=None, annotations=None, uid=None, ready=True, **spec):
    """A Node document as the API returns it (only the fields tests look at)."""
    return {'apiVersion': 'v1', 'kind': 'Node',
            'metadata': {'name': name, 'uid': uid or 'uid-%s' % name, 'resourceVersion': str(resource_version),
                         'labels': dict(labels or {}), 'annotations': dict(annotations or {})},
            'spec': dict(spec),
            'status': {'conditions': [{'type': 'Ready', 'status': 'True' if ready else 'False'}]}}


def node_list(resource_version, *nodes):
    return {'apiVersion': 'v1', 'kind': 'NodeList', 'metadata': {'resourceVersion': str(resource_version)},
            'items': list(nodes)}


def merge_patch(target, patch):
    """``target`` with a JSON merge patch (RFC 7386) applied, as the API server applies one: None removes a key."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    merged = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = merge_patch(merged.get(key), value)
    return merged


def _unpointer(path):
    return [part.replace('~1', '/').replace('~0', '~') for part in path.split('/')[1:]]


def json_patch(target, ops):
    """``target`` with a JSON patch (RFC 6902: test, add, remove) applied as kube-apiserver applies one
    (evanphx/json-patch: a test of null holds for a missing member); None when a test fails."""
    doc = copy.deepcopy(target)
    for op in ops:
        parts = _unpointer(op['path'])
        parent = doc
        for part in parts[:-1]:
            parent = parent[part]
        if op['op'] == 'test':
            if parent.get(parts[-1]) != op['value']:
                return None
        elif op['op'] == 'add':
            parent[parts[-1]] = copy.deepcopy(op['value'])
        elif op['op'] == 'remove':
            del parent[parts[-1]]
        else:
            raise AssertionError('json_patch: op %r not served here' % op['op'])
    return doc


def written(body):
    """What a node patch ``body`` writes: ``{'annotations': {...}, 'labels': {...}}`` (None: removed), from a merge patch
    or a key-guarded JSON patch (node_annotations.key_guarded_patch)."""
    if not isinstance(body, list):
        meta = dict(body.get('metadata') or {})
        meta.pop('resourceVersion', None)
        return meta
    changes = {}
    for op in body:
        if op['op'] != 'test':
            unused, part, key = _unpointer(op['path'])
            changes.setdefault(part, {})[key] = op.get('value')
    return changes


def guard(body):
    """How a node patch is guarded: ``('resourceVersion', rv)`` or ``('keys', {part/key: value tested})``."""
    if not isinstance(body, list):
        return 'resourceVersion', (body.get('metadata') or {}).get('resourceVersion')
    return 'keys', dict(('/'.join(_unpointer(op['path'])[1:]), op['value']) for op in body if op['op'] == 'test')


class Refused(object):
    """What a callable body answers for a refusal: the HTTP ``status`` and the Status ``body``."""

    def __init__(self, status, body):
        self.status = status
        self.body = body


class Stored(object):
    """One object as the server keeps it, for ``reply(..., body=stored.get)`` / ``body=stored.patch``.

    ``get`` answers the object; ``patch`` merges the request's body into it (a ``resourceVersion``
    in the patch is the client's guard, not a change), or applies it when it is a JSON patch (a
    failed ``test``: 422, as the server answers), and answers the result one resourceVersion
    on; with ``dryRun`` it answers the same but keeps the object as it was. ``doc`` is the object now.
    """

    def __init__(self, doc):
        self.doc = copy.deepcopy(doc)

    def get(self, request):
        return copy.deepcopy(self.doc)

    def patch(self, request):
        body = copy.deepcopy(request.body)
        if isinstance(body, list):
            after = json_patch(self.doc, body)
            if after is None:
                return Refused(422, status_body(422, 'Invalid', 'the server rejected our request due to an error in '
                                                                'our request'))
        else:
            (body.get('metadata') or {}).pop('resourceVersion', None)
            after = merge_patch(self.doc, body)
        after['metadata']['resourceVersion'] = str(int(self.doc['metadata']['resourceVersion']) + 1)
        if not request.query.get('dryRun'):
            self.doc = after
        return copy.deepcopy(after)

    def patch_status(self, request):
        """A strategic merge patch of the status subresource: ``status.conditions`` merge by ``type``."""
        body = copy.deepcopy(request.body)
        (body.get('metadata') or {}).pop('resourceVersion', None)
        after = copy.deepcopy(self.doc)
        conditions = after.setdefault('status', {}).setdefault('conditions', [])
        for wanted in (body.get('status') or {}).get('conditions') or []:
            index = next((i for i, c in enumerate(conditions) if c.get('type') == wanted['type']), None)
            if index is None:
                conditions.append(wanted)
            else:
                conditions[index] = dict(conditions[index], **wanted)
        after['metadata']['resourceVersion'] = str(int(self.doc['metadata']['resourceVersion']) + 1)
        if not request.query.get('dryRun'):
            self.doc = after
        return copy.deepcopy(after)


class Pause(object):
    """A silence of ``seconds`` in a streamed answer (the server sends nothing meanwhile)."""

    def __init__(self, seconds):
        self.seconds = seconds


class Request(object):
    """One request as the fake received it."""

    def __init__(self, method, url, body, headers, timeout):
        parts = urlsplit(url)
        self.method = method
        self.url = url
        self.path = parts.path
        self.query = dict(parse_qsl(parts.query, keep_blank_values=True))
        self.headers = dict(headers or {})
        self.timeout = timeout
        self.raw_body = body
        self.body = json.loads(body) if body else None

    @property
    def watch(self):
        return self.query.get('watch', '').lower() in ('true', '1')

    def __repr__(self):
        return '%s %s%s' % (self.method, self.path, '?' + urlsplit(self.url).query if urlsplit(self.url).query else '')


class _Wire(object):
    """A response body as a socket delivers it: one piece per read, then the end or an error."""

    def __init__(self, pieces):
        self._pieces = list(pieces)
        self.closed = False

    def read(self, amt=None):
        while self._pieces:
            piece = self._pieces.pop(0)
            if isinstance(piece, Pause):
                time.sleep(piece.seconds)
                continue
            if isinstance(piece, BaseException):
                self.closed = True
                raise piece
            if not self._pieces:
                self.closed = True
            return piece
        self.closed = True
        return b''

    def close(self):
        self.closed = True


def _encode(body, end=b''):
    """A body as bytes: a dict or list as JSON (a watch event ends with a newline), text as UTF-8."""
    if isinstance(body, (dict, list)):
        return json.dumps(body).encode('utf-8') + end
    if isinstance(body, str):
        return body.encode('utf-8')
    return body or b''


class _Answer(object):

    def __init__(self, status, body, headers, pieces, delay):
        self.status = status
        self.body = body
        self.headers = headers
        self.pieces = pieces
        self.delay = delay

    def response(self, request):
        if self.delay:
            time.sleep(self.delay)
        headers = {'Content-Type': 'application/json'}
        headers.update(self.headers or {})
        if self.pieces is not None:
            wire = _Wire([p if isinstance(p, (Pause, BaseException)) else _encode(p, b'\n') for p in self.pieces])
        else:
            body, status = (self.body(request) if callable(self.body) else self.body), self.status
            if isinstance(body, Refused):
                body, status = body.body, body.status
            wire = io.BytesIO(_encode(body))
            return urllib3.HTTPResponse(body=wire, headers=headers, status=status,
                                        reason=REASONS.get(status, 'Unknown'), preload_content=False,
                                        decode_content=False, request_method=request.method, request_url=request.url)
        return urllib3.HTTPResponse(body=wire, headers=headers, status=self.status,
                                    reason=REASONS.get(self.status, 'Unknown'), preload_content=False,
                                    decode_content=False, request_method=request.method, request_url=request.url)


class FakeApiServer(object):
    """The pool manager of a ``kubernetes`` client, answering from a script (see the module docstring)."""

    def __init__(self):
        self.host = 'https://fake-apiserver-%d.invalid:6443' % next(_HOSTS)
        self.requests = []
        self._script = {}
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ the script

    def reply(self, method, path, status=200, body=None, headers=None, repeat=False, delay=0):
        """Answer the next ``method path`` request (without ``watch``) with ``status`` and ``body``."""
        self._add((method.upper(), path, False), _Answer(status, body, headers, None, delay), repeat)
        return self

    def stream(self, method, path, pieces, cut=False, status=200, repeat=False, delay=0):
        """Answer the next watch of ``path`` with a streamed body of ``pieces`` (see the module docstring)."""
        pieces = list(pieces) + ([ConnectionResetError(104, 'Connection reset by peer')] if cut else [])
        self._add((method.upper(), path, True), _Answer(status, None, None, pieces, delay), repeat)
        return self

    def _add(self, key, answer, repeat):
        with self._lock:
            self._script.setdefault(key, []).append((answer, repeat))

    def pending(self):
        """The scripted answers nobody asked for yet, as ``(method, path, watch)`` keys."""
        with self._lock:
            return [key for key, answers in self._script.items() for answer, repeat in answers if not repeat]

    def of(self, method=None, path=None, watch=None):
        """The recorded requests with this method / path / watch-ness (None: any)."""
        return [r for r in self.requests if (method is None or r.method == method.upper())
                and (path is None or r.path == path) and (watch is None or r.watch == watch)]

    # ------------------------------------------------------------------ the client's side

    def kube(self, session=None, **params):
        """A ``kube.Kube`` whose client talks to this server (a host of its own: no client, node cache or lock shared;
        ``session``: the kube.KubeSession it shares with another client, None: one of its own)."""
        params.setdefault('host', self.host)
        # the v0.15 contract, as the controller passes its choice to every step; a test of the detection
        # (nodewright_api=auto) or of the v0.18+ contract says so
        params.setdefault('nodewright_api', 'skyhook')
        kube = kube_api.Kube(params, session=session)
        self.install(kube.api_client)
        return kube

    def install(self, api_client):
        """Make ``api_client`` (a ``kubernetes.client.ApiClient``) send its requests here."""
        api_client.rest_client.pool_manager = self

    def request(self, method, url, fields=None, body=None, headers=None, timeout=None, preload_content=True,
                **kwargs):
        """urllib3 ``PoolManager.request``, as ``kubernetes.client.rest.RESTClientObject`` calls it."""
        request = Request(method.upper(), url, body, headers, timeout)
        with self._lock:
            self.requests.append(request)
            answers = self._script.get((request.method, request.path, request.watch)) or []
            if not answers:
                raise AssertionError('unscripted request %r (scripted: %s)'
                                     % (request, sorted(self._script) or 'nothing'))
            answer, repeat = answers[0]
            if not (repeat and len(answers) == 1):
                answers.pop(0)
        return answer.response(request)

    def clear(self):
        """Close nothing: the fake holds no connections (``RESTClientObject.close`` calls this)."""
