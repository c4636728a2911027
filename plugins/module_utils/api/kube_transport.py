# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""How the collection's requests reach the Kubernetes API (and the only import of ``kubernetes``).

The transport that ``kube.Kube`` holds (the resources are the modules ``kube.py`` composes: ``nodes``,
``workloads``, ``events``, ``leases``, ``crs``, ``generation``, ``watches``; ``session`` holds ``KubeSession``,
what their owner keeps between requests): the connection options and the client built from them (``Clients``, one per connection and session),
``call`` with its retries, deadlines and errors, and the list-then-watch loop. It knows no resource
and no rule of the operator: it imports nothing of ``contract`` or ``planning``, and keeps nothing in
module globals (who builds a ``Kube`` hands it its session).

``kubernetes`` is imported on first use, not when this file is imported: a process that never
talks to the cluster (``ansible-doc``, an action plugin's import in ``ansible-playbook``) does not
pay for it, and a process that forks workers loads it before the fork by calling ``preload``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import collections
import contextlib
import functools
import json
import os
import re
import threading
import time
import types

from ansible.module_utils.basic import env_fallback, missing_required_lib
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.nodewright.bridge.plugins.module_utils.model import api_generation
from ansible_collections.nodewright.bridge.plugins.module_utils.model import constants

# The parts of the kubernetes client this layer uses (client_library).
KubernetesLibrary = collections.namedtuple(
    'KubernetesLibrary', 'client config kube_config ApiException ConfigException urllib3')


def client_library():
    """The kubernetes client's modules and exception classes; ImportError when it is not installed.

    Imported here, on first use: after that every call is a lookup in ``sys.modules``.
    """
    from kubernetes import client as kclient
    from kubernetes import config as kconfig
    from kubernetes.config import kube_config as kconfig_loader
    from kubernetes.client.rest import ApiException
    from kubernetes.config.config_exception import ConfigException
    import urllib3
    return KubernetesLibrary(kclient, kconfig, kconfig_loader, ApiException, ConfigException, urllib3)


def has_kubernetes():
    """Whether the kubernetes client can be imported (importing it: the caller is about to use it)."""
    try:
        client_library()
    except ImportError:
        return False
    return True


def _read_only(**options):
    return types.MappingProxyType(dict(options))


# Names, aliases and K8S_AUTH_* variables of kubernetes.core's connection options (read-only:
# auth_argument_spec hands out copies).
AUTH_ARG_SPEC = types.MappingProxyType(dict(
    kubeconfig=_read_only(type='raw', fallback=(env_fallback, ['K8S_AUTH_KUBECONFIG'])),
    context=_read_only(type='str', fallback=(env_fallback, ['K8S_AUTH_CONTEXT'])),
    host=_read_only(type='str', fallback=(env_fallback, ['K8S_AUTH_HOST'])),
    api_key=_read_only(type='str', no_log=True, fallback=(env_fallback, ['K8S_AUTH_API_KEY'])),
    username=_read_only(type='str', fallback=(env_fallback, ['K8S_AUTH_USERNAME'])),
    password=_read_only(type='str', no_log=True, fallback=(env_fallback, ['K8S_AUTH_PASSWORD'])),
    validate_certs=_read_only(type='bool', aliases=['verify_ssl'], fallback=(env_fallback, ['K8S_AUTH_VERIFY_SSL'])),
    ca_cert=_read_only(type='path', aliases=['ssl_ca_cert'], fallback=(env_fallback, ['K8S_AUTH_SSL_CA_CERT'])),
    client_cert=_read_only(type='path', aliases=['cert_file'], fallback=(env_fallback, ['K8S_AUTH_CERT_FILE'])),
    client_key=_read_only(type='path', aliases=['key_file'], no_log=False, fallback=(env_fallback, ['K8S_AUTH_KEY_FILE'])),
    proxy=_read_only(type='str', fallback=(env_fallback, ['K8S_AUTH_PROXY'])),
    no_proxy=_read_only(type='str', fallback=(env_fallback, ['K8S_AUTH_NO_PROXY'])),
    proxy_headers=_read_only(type='dict', options=dict(
        proxy_basic_auth=dict(type='str', no_log=True), basic_auth=dict(type='str', no_log=True), user_agent=dict(type='str'))),
    impersonate_user=_read_only(type='str', fallback=(env_fallback, ['K8S_AUTH_IMPERSONATE_USER'])),
    impersonate_groups=_read_only(type='list', elements='str', fallback=(env_fallback, ['K8S_AUTH_IMPERSONATE_GROUPS'])),
    request_timeout=_read_only(type='int', default=30),
    api_outage_timeout=_read_only(type='int', default=60, fallback=(env_fallback, ['NODEWRIGHT_API_OUTAGE_TIMEOUT'])),
    nodewright_api=_read_only(type='str', default=api_generation.AUTO, choices=list(api_generation.OPTIONS),
                              fallback=(env_fallback, ['NODEWRIGHT_API'])),
))
# The options that make a client (a different request_timeout or outage wait shares it).
CONNECTION_KEYS = tuple(sorted(k for k in AUTH_ARG_SPEC if k not in ('request_timeout', 'api_outage_timeout')))

# Sent with every request, so that audit logs say which tool touched a node.
USER_AGENT = 'nodewright.bridge/%s' % constants.COLLECTION_VERSION


class KubeError(Exception):
    """A failed API request; ``status`` is the HTTP status (0: no answer from the server)."""

    def __init__(self, message, status=0, reason=None, body=None):
        super(KubeError, self).__init__(message)
        self.message = message
        self.status = status
        self.reason = reason
        self.body = body or {}


class NotFound(KubeError):
    pass


class NodeGone(NotFound):
    """The node is not in the cluster (deleted, by an autoscaler or by hand, or never there)."""

    def __init__(self, name, host, deleted=False, what=None):
        if deleted:
            message = 'node deleted: node %s was removed from the cluster at %s%s' % (
                name, host, ' while waiting for %s' % what if what else '')
        else:
            message = 'node %s does not exist in the cluster at %s (node deleted, or never joined)' % (name, host)
        super(NodeGone, self).__init__(message, 404)
        self.node = name


class Unauthorized(KubeError):
    """HTTP 401: the credentials were refused (an expired or revoked token)."""


class Unavailable(KubeError):
    """The API server did not answer for ``api_outage_timeout`` seconds (an outage of it or of etcd)."""


class Conflict(KubeError):
    pass


class WaitTimeout(KubeError):
    """``watch_until`` ran out of time; ``last`` holds the objects seen last."""

    def __init__(self, message, last=None):
        super(WaitTimeout, self).__init__(message)
        self.last = last


# The client classes every task uses. kubernetes.client loads them lazily, on first use.
CLIENT_CLASSES = ('Configuration', 'ApiClient', 'CoreV1Api', 'PolicyV1Api', 'CustomObjectsApi', 'CoordinationV1Api',
                  'BatchV1Api')


def preload():
    """Import the kubernetes client and load the client classes now; never raises.

    For a process that forks workers (ansible-playbook under the budgeted strategy, before its
    workers and the sequence engine fork): they inherit what it loaded and pay for it once, not
    per worker (docs/in-process.md). Without the client installed, nothing is loaded: the tasks
    run as modules then.
    """
    try:
        lib = client_library()
    except ImportError:
        return
    for name in CLIENT_CLASSES:
        getattr(lib.client, name)


def unchecked(func):
    """An API method without pydantic's check of its arguments.

    Newer clients (kubernetes 35+) wrap every API method in pydantic's validate_call, whose
    checker is built on the method's first call in each process (each forked worker) and then
    re-checks arguments this layer builds itself. ``raw_function`` is pydantic's documented way
    to the undecorated function; older clients have no wrapper and the method is used as it is.
    """
    raw = getattr(func, 'raw_function', None)
    owner = getattr(func, '__self__', None)
    if raw is None or owner is None:
        return func
    return functools.partial(raw, owner)


@contextlib.contextmanager
def own_temp_files():
    """Remove the certificate files the kubeconfig loader writes during the block, afterwards.

    The loader writes a kubeconfig's inline certificates to temporary files and removes them
    at exit. A forked Ansible worker ends without running exit handlers, so a task run in the
    worker cleans up after itself; files that existed before (the parent's) are left alone.
    """
    try:
        loader = client_library().kube_config
    except ImportError:
        loader = None
    registry = getattr(loader, '_temp_files', None)
    before = set(registry) if isinstance(registry, dict) else None
    try:
        yield
    finally:
        registry = getattr(loader, '_temp_files', None)
        if before is not None and isinstance(registry, dict):
            for key in [k for k in registry if k not in before]:
                try:
                    os.remove(registry.pop(key))
                except OSError:
                    pass


def auth_argument_spec():
    return dict((k, dict(v)) for k, v in AUTH_ARG_SPEC.items())


def connection_params(given):
    """The connection options in ``given`` (other keys and None values left out) as a module's params would have them:
    the argument spec's types, defaults and ``K8S_AUTH_*`` environment applied. A client that a controller process
    builds from a bare connection dict (the sequence engine's CR watches and status writes, the strategy's shared
    budget) gets its credential from here, so that one given only in the environment (AWX's bearer-token
    credential) reaches it as it reaches the modules. KubeError names a bad value."""
    spec = auth_argument_spec()
    result = ArgumentSpecValidator(spec).validate(dict((k, v) for k, v in given.items() if k in spec and v is not None))
    if result.error_messages:
        raise KubeError('the connection options: %s' % '; '.join(result.error_messages))
    return result.validated_parameters


def _server_message(exc):
    body = {}
    try:
        body = json.loads(exc.body) if exc.body else {}
    except (TypeError, ValueError):
        body = {}
    text = body.get('message') if isinstance(body, dict) else None
    return (text or exc.reason or 'no message').strip(), body if isinstance(body, dict) else {}


def describe(verb, resource, name=None, namespace=None):
    """'patch node gpu-1', 'create pod skyhook/x', 'list pods' - for messages."""
    what = '%s %s' % (verb, resource)
    if name:
        what += ' %s' % ('%s/%s' % (namespace, name) if namespace else name)
    elif namespace:
        what += ' in namespace %s' % namespace
    return what


def _build_configuration(params, lib):
    """A kubernetes Configuration from kubernetes.core-style options (``lib``: client_library())."""
    kubeconfig = params.get('kubeconfig')
    context = params.get('context')
    host = params.get('host')
    configuration = lib.client.Configuration()
    loaded = False
    try:
        if isinstance(kubeconfig, dict):
            lib.config.load_kube_config_from_dict(kubeconfig, context=context, client_configuration=configuration,
                                                  persist_config=False)
            loaded = True
        elif kubeconfig:
            path = os.path.expanduser(str(kubeconfig))
            if not os.path.exists(path):
                raise KubeError('kubeconfig %s does not exist' % path)
            lib.config.load_kube_config(config_file=path, context=context, client_configuration=configuration,
                                        persist_config=False)
            loaded = True
        elif not host:
            default = os.path.expanduser(os.environ.get('KUBECONFIG', '~/.kube/config').split(os.pathsep)[0])
            if os.path.exists(default):
                lib.config.load_kube_config(config_file=default, context=context, client_configuration=configuration,
                                            persist_config=False)
                loaded = True
            elif os.environ.get('KUBERNETES_SERVICE_HOST'):
                lib.config.load_incluster_config(client_configuration=configuration)
                loaded = True
    except lib.ConfigException as exc:
        raise KubeError('cannot load the Kubernetes configuration (kubeconfig=%s, context=%s): %s'
                        % (kubeconfig if not isinstance(kubeconfig, dict) else '<dict>', context, exc))
    if not loaded and not host:
        raise KubeError('no Kubernetes API server to talk to: set kubeconfig or host '
                        '(or K8S_AUTH_KUBECONFIG / K8S_AUTH_HOST), or create ~/.kube/config')
    _apply_overrides(configuration, params)
    # The kubeconfig loader installs a hook that reloads the kubeconfig (server included)
    # before requests, to refresh tokens; the explicit options must survive it.
    hook = getattr(configuration, 'refresh_api_key_hook', None)
    if hook is not None:
        def refresh_then_override(config):
            hook(config)
            # The loader's hook installs itself again on every call (kube_config._set_config):
            # without this, only the first request would keep the explicit options.
            config.refresh_api_key_hook = refresh_then_override
            _apply_overrides(config, params)
        configuration.refresh_api_key_hook = refresh_then_override
    # An unreachable server must fail in seconds, not after urllib3's default retries.
    configuration.retries = 1
    return configuration


def _impersonate(api_client, params, lib):
    """kubernetes.core's ``impersonate_user`` and ``impersonate_groups`` on every request of ``api_client``: the
    ``Impersonate-User`` header, and an ``Impersonate-Group`` header per group (the API server takes each header as
    one group; the client's headers are a dict, so they are added where its requests go to urllib3)."""
    user, groups = params.get('impersonate_user'), list(params.get('impersonate_groups') or [])
    if groups and not user:
        raise KubeError('impersonate_groups %s needs impersonate_user: the API server impersonates groups only '
                        'together with a user' % ', '.join(groups))
    if not user:
        return
    pool = api_client.rest_client.pool_manager
    plain = pool.request

    def request(method, url, *args, **kwargs):
        headers = lib.urllib3.HTTPHeaderDict(kwargs.get('headers') or {})
        headers['Impersonate-User'] = user
        for group in groups:
            headers.add('Impersonate-Group', group)
        kwargs['headers'] = headers
        return plain(method, url, *args, **kwargs)
    pool.request = request


def _apply_overrides(configuration, params):
    """Explicit connection options win over the kubeconfig, as in kubernetes.core."""
    if params.get('host'):
        configuration.host = params['host']
    if params.get('api_key'):
        configuration.api_key = {'authorization': 'Bearer %s' % params['api_key']}
    if params.get('username'):
        configuration.username = params['username']
    if params.get('password'):
        configuration.password = params['password']
    if params.get('username') and params.get('password'):
        configuration.api_key = {'authorization': configuration.get_basic_auth_token()}
    if params.get('validate_certs') is not None:
        configuration.verify_ssl = params['validate_certs']
    if params.get('ca_cert'):
        configuration.ssl_ca_cert = params['ca_cert']
    if params.get('client_cert'):
        configuration.cert_file = params['client_cert']
    if params.get('client_key'):
        configuration.key_file = params['client_key']
    if params.get('proxy'):
        configuration.proxy = params['proxy']
    if params.get('no_proxy'):
        configuration.no_proxy = params['no_proxy']
    headers = dict((k, v) for k, v in (params.get('proxy_headers') or {}).items() if v)
    if headers:
        # as kubernetes.core: urllib3's make_headers (user_agent, basic_auth, proxy_basic_auth as user:password)
        from urllib3.util import make_headers  # pylint: disable=import-outside-toplevel
        configuration.proxy_headers = make_headers(**headers)


# Answers that mean "the server cannot answer now", not "the request is wrong": retried (with
# backoff, for api_outage_timeout seconds) so that a rollout rides out an API server restart, a
# control-plane upgrade or an etcd blip. A 500 only when its message blames storage or time (a 500
# also says "more than one PodDisruptionBudget", which no retry mends).
RETRIED_STATUSES = (429, 502, 503, 504)
_TRANSIENT_500 = re.compile(r'etcd|timeout|timed out|deadline exceeded|unavailable|connection refused|try again later',
                            re.IGNORECASE)
RETRY_FIRST_DELAY = 0.5
RETRY_MAX_DELAY = 5.0
# A watch that receives no byte for this long is taken for silently cut (a dead NAT entry or proxy,
# a half-open connection): it is abandoned and opened again from the last resourceVersion seen. A
# healthy but quiet watch costs a new watch request every WATCH_IDLE_SECONDS (no list: at 1,000 nodes
# a list of the CR every 30 s left the steps that read the CR meanwhile to GET it).
WATCH_IDLE_SECONDS = 30


# Connections one client keeps open: a drain's concurrent evictions (node_drain takes this many at
# once) and a node's package threads, so that every step of a task shares one client. A process
# whose one client serves many nodes at once (plugin_utils/execution/sequence_engine.py) makes its session
# with a bigger pool.
POOL_SIZE = 16


class Clients(object):
    """The API clients of one ``KubeSession`` by connection options, each with ``pool_size`` connections: the requests
    of every ``Kube`` made with that session (the steps of one task; in the sequence engine, all its nodes) share one
    connection pool and one parsed kubeconfig per connection.

    Every key starts with the process id, so that a forked worker that inherits them never uses a client (and its
    sockets) of its parent. Made empty: no client, socket or thread, which would not survive a fork.
    """

    def __init__(self, pool_size=POOL_SIZE):
        self.pool_size = pool_size
        self._by_key = {}

    def client(self, params):
        """``(Configuration, ApiClient)`` for the connection options in ``params``, made on first use."""
        process = [os.getpid(), os.environ.get('KUBECONFIG'), os.environ.get('KUBERNETES_SERVICE_HOST')]
        key = json.dumps(process + [params.get(k) for k in CONNECTION_KEYS], sort_keys=True, default=str)
        if key not in self._by_key:
            lib = client_library()
            configuration = _build_configuration(params, lib)
            configuration.connection_pool_maxsize = self.pool_size
            api_client = lib.client.ApiClient(configuration)
            api_client.user_agent = USER_AGENT
            _impersonate(api_client, params, lib)
            self._by_key[key] = (configuration, api_client)
        return self._by_key[key]


class KubeTransport(object):
    """One connection's requests: ``call`` (retries, deadlines, KubeError) and list-then-watch (``watch_until``).

    The typed APIs (``core``, ``policy``, ``custom``, ``coordination``, ``batch``) share the client that
    ``clients`` (a ``Clients``: the caller's session's) has for the connection options in ``params``.
    ``lister(transport, kind, namespace)`` returns the list method a watch of ``kind`` follows and its
    positional arguments: which lists there are is the resources' knowledge (watches.py), not the transport's.
    """

    def __init__(self, params, clients, lister=None):
        try:
            lib = client_library()
        except ImportError as exc:
            raise KubeError(missing_required_lib('kubernetes') + ' (%s)' % exc)
        self.params = params
        self.lister = lister
        self.request_timeout = params.get('request_timeout') or 30
        outage = params.get('api_outage_timeout')
        self.outage_timeout = 60 if outage is None else max(0, outage)
        self.configuration, self.api_client = clients.client(params)
        self.core = lib.client.CoreV1Api(self.api_client)
        self.policy = lib.client.PolicyV1Api(self.api_client)
        self.custom = lib.client.CustomObjectsApi(self.api_client)
        self.coordination = lib.client.CoordinationV1Api(self.api_client)
        self.batch = lib.client.BatchV1Api(self.api_client)

    @property
    def host(self):
        return self.configuration.host

    # ------------------------------------------------------------------ plumbing

    def call(self, what, func, *args, **kwargs):
        """Run one request and return its JSON body as a dict (or text for logs).

        Retried while the server cannot answer (see RETRIED_STATUSES); ``retry_throttled=False``
        when a 429 is an answer (an eviction that a PodDisruptionBudget refuses); ``once=True``:
        sent once, never retried (a write that is worth less than the time a retry takes).
        """
        kwargs.setdefault('_request_timeout', self.request_timeout)
        kwargs['_preload_content'] = False
        raw_text = kwargs.pop('raw_text', False)
        retry_throttled = kwargs.pop('retry_throttled', True)
        once = kwargs.pop('once', False)
        deadline = kwargs.pop('deadline', None)
        resp = self.retrying(what, lambda: unchecked(func)(*args, **kwargs), retry_throttled, deadline=deadline, once=once)
        data = resp.data
        if isinstance(data, bytes):
            data = data.decode('utf-8', 'replace')
        if raw_text:
            return data
        return json.loads(data) if data else {}

    def retrying(self, what, send, retry_throttled=True, deadline=None, once=False):
        """``send()``, again with backoff while the API server cannot answer, until ``api_outage_timeout``.

        Every request the collection sends may be sent twice: reads, resourceVersion-guarded or
        merge patches, deletes with a uid precondition and evictions are idempotent, and a create
        that finds its object made by the first try is a conflict its callers adopt. ``deadline``
        (a time.time() value) ends the retries earlier (a wait's own timeout).
        """
        lib = client_library()
        started = time.time()
        delay = RETRY_FIRST_DELAY
        while True:
            try:
                return send()
            except lib.ApiException as exc:
                error = self.error(what, exc)
                if not _transient(exc, retry_throttled):
                    raise error
            except (lib.urllib3.exceptions.HTTPError, OSError) as exc:
                error = KubeError('%s: cannot reach the Kubernetes API server at %s: %s' % (what, self.host, _short(exc)))
            if once:
                raise error
            stop = started + self.outage_timeout
            if deadline is not None:
                stop = min(stop, deadline)
            now = time.time()
            if now >= stop:
                if not self.outage_timeout:
                    raise error
                raise Unavailable('%s: the Kubernetes API server at %s has not answered for %ds (an outage of the API '
                                  'server or etcd?); last error: %s' % (what, self.host, round(now - started),
                                                                        error.message), error.status)
            time.sleep(min(delay, stop - now))
            delay = min(delay * 2, RETRY_MAX_DELAY)

    def error(self, what, exc):
        message, body = _server_message(exc)
        status = exc.status or 0
        if status == 404:
            return NotFound('%s: not found (%s)' % (what, message), status, exc.reason, body)
        if status == 409:
            return Conflict('%s: conflict (%s)' % (what, message), status, exc.reason, body)
        if status == 401:
            return Unauthorized('%s: authentication failed: the API server at %s refused the credentials (401 %s); '
                                'the token may have expired or been revoked: give a valid one and run again'
                                % (what, self.host, message), status, exc.reason, body)
        if status == 403:
            return KubeError('%s: forbidden by the API server at %s (%s)' % (what, self.host, message),
                             status, exc.reason, body)
        return KubeError('%s: HTTP %s %s (%s)' % (what, status, exc.reason or '', message), status, exc.reason, body)

    # ------------------------------------------------------------------ waiting

    def watch_until(self, kind, predicate, timeout, namespace=None, field_selector=None, label_selector=None,
                    what=None, on_event=None):
        """Wait, by watch, until ``predicate(objects)`` returns a truthy value, and return it.

        ``objects`` maps uid -> object for every ``kind`` ('pods', 'nodes' or 'jobs') matching the
        selectors, kept current from one list and then watch events (re-listed only if the
        watch expires). Raises WaitTimeout after ``timeout`` seconds.
        """
        deadline = time.time() + timeout
        what = what or 'the %s to change' % kind
        selectors = {}
        if field_selector:
            selectors['field_selector'] = field_selector
        if label_selector:
            selectors['label_selector'] = label_selector
        objects, rv = self._list_for_watch(kind, namespace, selectors)
        result = predicate(objects)
        while not result:
            remaining = deadline - time.time()
            if remaining <= 0:
                raise WaitTimeout('timed out after %ss waiting for %s' % (timeout, what), last=objects)
            resp = self._open_watch(kind, namespace, rv, remaining, selectors, deadline)
            if resp is None:
                relist = True
            else:
                try:
                    rv, result, relist = self._follow(resp, kind, objects, rv, predicate, deadline, on_event)
                finally:
                    resp.close()
                    resp.release_conn()
            if relist and not result:
                objects, rv = self._list_for_watch(kind, namespace, selectors)
                result = predicate(objects)
        return result

    def _open_watch(self, kind, namespace, rv, remaining, selectors, deadline):
        """The streamed response of a watch of ``kind`` from resourceVersion ``rv``, for ``remaining`` seconds.

        None when the server refuses ``rv`` as expired with the watch's own status (410) rather
        than with an ERROR event: both mean "list again", as client-go's reflector reads them.
        Retried while the server cannot answer, until the wait's ``deadline`` at the latest.
        """
        func, args = self._list_func(kind, namespace)
        kwargs = dict(selectors, watch=True, resource_version=rv, timeout_seconds=max(1, int(remaining + 0.999)),
                      allow_watch_bookmarks=True, _preload_content=False,
                      # the read timeout is per read: a stream silent for that long is taken for cut
                      _request_timeout=(self.request_timeout, WATCH_IDLE_SECONDS))
        try:
            return self.retrying('watch %s' % kind, lambda: unchecked(func)(*args, **kwargs), deadline=deadline)
        except KubeError as exc:
            if exc.status == 410:
                return None
            raise

    def _follow(self, resp, kind, objects, rv, predicate, deadline, on_event):
        """Apply one watch stream's events to ``objects``: ``(resourceVersion, result, relist)``.

        Reads until ``predicate`` is satisfied, the deadline passes, the server ends the stream or
        it is cut. ``relist``: list again rather than resume from ``rv``, because the server said
        ``rv`` is too old (410). A stream that went silent (WATCH_IDLE_SECONDS) or was cut is resumed
        from ``rv``, as client-go's reflector resumes: the server sends every event after ``rv`` again,
        those lost with the connection included, or answers 410 when it no longer has them.
        """
        urllib3 = client_library().urllib3
        result = None
        try:
            for line in _lines(resp):
                event = json.loads(line)
                etype, obj = event.get('type'), event.get('object') or {}
                meta = obj.get('metadata') or {}
                if etype == 'ERROR':
                    if obj.get('code') == 410:
                        return rv, result, True
                    raise KubeError('watch %s: %s' % (kind, obj.get('message')), obj.get('code') or 0)
                rv = meta.get('resourceVersion') or rv
                if etype == 'BOOKMARK':
                    continue
                if etype == 'DELETED':
                    objects.pop(meta.get('uid'), None)
                else:
                    objects[meta.get('uid')] = obj
                if on_event:
                    on_event(etype, obj)
                result = predicate(objects)
                if result or time.time() >= deadline:
                    break
        except (urllib3.exceptions.HTTPError, OSError):
            # The stream went silent (a quiet watch or a dead connection: ReadTimeoutError) or was cut (a
            # server restart, a reset): carry on from the last version seen
            pass
        return rv, result, False

    def _list_for_watch(self, kind, namespace, selectors):
        func, args = self._list_func(kind, namespace)
        listing = self.call(describe('list', kind, namespace=namespace), func, *args, **selectors)
        objects = dict(((o.get('metadata') or {}).get('uid'), o) for o in listing.get('items') or [])
        return objects, (listing.get('metadata') or {}).get('resourceVersion')

    def _list_func(self, kind, namespace):
        """``(list method, its positional arguments)`` of ``kind`` in ``namespace``: the ``lister``'s answer."""
        if self.lister is None:
            raise ValueError('watch_until cannot watch %r: this transport was made without a lister' % kind)
        return self.lister(self, kind, namespace)


# A wait served by a SharedWatch starts once the watch has seen the version its caller knows; a watch this
# many seconds behind leaves the wait to its own list and watch.
SHARED_CATCH_UP_SECONDS = 5.0
# After a failed list (an outage), a SharedWatch tries again this many seconds later.
SHARED_RETRY_SECONDS = 2.0
# A SharedWatch's stream is renewed from its last resourceVersion after this many seconds (no list).
SHARED_WATCH_SECONDS = 300


def resource_version_number(value):
    """A resourceVersion as a number, or None when it is not one (then it cannot be compared)."""
    text = str(value or '')
    return int(text) if text.isdigit() else None


def newer(doc, than, opaque=True):
    """Whether ``doc``'s resourceVersion is after ``than``'s (etcd revisions); ``opaque``: the answer when either is
    not a number."""
    mine, theirs = [resource_version_number((d.get('metadata') or {}).get('resourceVersion')) for d in (doc, than)]
    if mine is None or theirs is None:
        return opaque
    return mine > theirs


class _Discard(dict):
    """The ``objects`` a SharedWatch hands to KubeTransport._follow: it keeps its own index (by name), not this."""

    def __setitem__(self, key, value):
        pass


class SharedWatch(object):
    """All objects of one kind in one namespace, listed once and followed by one watch, for many waits by name.

    Why: a rollout waits for every stage pod (or Job) by name: one list and one watch per stage and node
    (3 per node at 24 nodes). In a long-lived process (the sequence engine: kube.LiveCRs.shared_watch) one
    watch of the namespace serves them all, and each wait is woken only by events of its own object.

    A wait names the object and the resourceVersion its caller knows of it (``since``: the create's or
    the read's answer) and starts once the watch has seen that version or a later one, so that it never
    judges from a view older than what its caller saw (a pod just created is not taken for one gone).
    resourceVersions are compared as numbers, as the API server issues them from etcd; a version that is
    not a number, a watch that does not catch up within SHARED_CATCH_UP_SECONDS (or is relisting), and a
    watch that cannot list (401, 403, 404) leave the wait to its own list and watch: ``wait`` returns
    NOT_SERVED.
    """

    NOT_SERVED = object()

    def __init__(self, transport, kind, namespace):
        self.transport = transport
        self.kind = kind
        self.namespace = namespace
        self.lock = threading.Lock()
        self.by_name = {}     # name -> {uid: object}
        self.version = -1     # the newest resourceVersion seen, as a number
        self.synced = False   # listed, and followed since
        self.dead = False     # cannot list or compare versions: no wait is served
        self.waiters = {}     # name -> set of threading.Event (woken by that name's events)
        threading.Thread(target=self.run, name='shared watch %s %s' % (kind, namespace), daemon=True).start()

    def wait(self, name, predicate, timeout, since, what):
        """``predicate({uid: object})`` over the objects named ``name``, once truthy (returned); WaitTimeout after
        ``timeout`` seconds; NOT_SERVED (see the class) when this watch cannot serve the wait."""
        since = resource_version_number(since)
        if since is None or self.dead:
            return self.NOT_SERVED
        started = time.time()
        deadline, catch_up = started + timeout, started + SHARED_CATCH_UP_SECONDS
        wake = threading.Event()
        with self.lock:
            self.waiters.setdefault(name, set()).add(wake)
        view = {}
        try:
            while True:
                wake.clear()
                with self.lock:
                    if self.dead:
                        return self.NOT_SERVED
                    ready = self.synced and self.version >= since
                    if ready:
                        view = dict(self.by_name.get(name) or {})
                if ready:
                    result = predicate(view)
                    if result:
                        return result
                    catch_up = None
                elif catch_up is None or time.time() >= catch_up:
                    return self.NOT_SERVED  # behind what the caller saw (or relisting): the wait's own watch
                remaining = deadline - time.time()
                if remaining <= 0:
                    raise WaitTimeout('timed out after %ss waiting for %s' % (timeout, what), last=view)
                wake.wait(remaining if catch_up is None else min(remaining, max(0.01, catch_up - time.time())))
        finally:
            with self.lock:
                waiting = self.waiters.get(name)
                waiting.discard(wake)
                if not waiting:
                    del self.waiters[name]

    def run(self):
        while True:
            try:
                objects, version = self.transport._list_for_watch(self.kind, self.namespace, {})
                self._listed(objects, version)
                self._follow(version)  # returns when the server wants a new list
            except KubeError as exc:
                self._set(synced=False, dead=exc.status in (401, 403, 404))
                if self.dead:
                    return
                time.sleep(SHARED_RETRY_SECONDS)
            if self.dead:
                return

    def _listed(self, objects, version):
        number = resource_version_number(version)
        by_name = {}
        for uid, obj in objects.items():
            by_name.setdefault((obj.get('metadata') or {}).get('name'), {})[uid] = obj
        with self.lock:
            self.by_name = by_name
            if number is None:
                self.dead = True  # versions that are not numbers cannot be compared
            else:
                self.version = max(self.version, number)
            self.synced = not self.dead
            wakes = [w for waiting in self.waiters.values() for w in waiting]
        for wake in wakes:
            wake.set()

    def _follow(self, version):
        while not self.dead:
            deadline = time.time() + SHARED_WATCH_SECONDS
            resp = self.transport._open_watch(self.kind, self.namespace, version, SHARED_WATCH_SECONDS, {}, deadline)
            if resp is None:
                return
            try:
                version, unused, relist = self.transport._follow(resp, self.kind, _Discard(), version, lambda objs: None,
                                                                 deadline, self._event)
            finally:
                resp.close()
                resp.release_conn()
            if relist:
                self._set(synced=False)
                return

    def _event(self, etype, obj):
        meta = obj.get('metadata') or {}
        name, uid, number = meta.get('name'), meta.get('uid'), resource_version_number(meta.get('resourceVersion'))
        with self.lock:
            named = self.by_name.setdefault(name, {})
            if etype == 'DELETED':
                named.pop(uid, None)
            else:
                named[uid] = obj
            if not named:
                del self.by_name[name]
            if number is not None:
                self.version = max(self.version, number)
            wakes = list(self.waiters.get(name) or ())
        for wake in wakes:
            wake.set()

    def _set(self, synced, dead=False):
        with self.lock:
            self.synced = synced
            self.dead = self.dead or dead
            wakes = [w for waiting in self.waiters.values() for w in waiting]
        for wake in wakes:
            wake.set()


def _transient(exc, retry_throttled=True):
    """Whether an ApiException says "not now" (retry) rather than "no" (fail)."""
    status = exc.status or 0
    if status == 429:
        return retry_throttled
    if status in RETRIED_STATUSES:
        return True
    return status == 500 and bool(_TRANSIENT_500.search(_server_message(exc)[0]))


def _short(exc):
    text = str(exc)
    return text if len(text) < 300 else text[:297] + '...'


def _lines(resp):
    """Complete lines of a streamed watch response."""
    pending = b''
    for chunk in resp.stream(amt=None, decode_content=False):
        pending += chunk
        while b'\n' in pending:
            line, pending = pending.split(b'\n', 1)
            if line.strip():
                yield line.decode('utf-8')
    if pending.strip():
        yield pending.decode('utf-8')
