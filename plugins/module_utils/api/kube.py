# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""The Kubernetes objects the collection reads and writes: nodes, pods, Jobs, ConfigMaps, Leases, Events, CRs.

Every object goes in and comes out as a plain dict in the API's own JSON shape (camelCase
keys), so that the pure module_utils (node_state, pod_layout, drain_rules, ...) decide and
this layer only transports. Every failure becomes a ``KubeError`` whose message names the
request, the object and what the server said, so modules can ``fail_json`` with it as is.

``Kube`` is the one client callers hold; it is composed of one part per resource, each in its own module,
and each of its methods hands the call to the part that owns it: ``nodes`` (reads, guarded writes, status
conditions), ``workloads`` (pods, evictions, logs, PDBs, Jobs, ConfigMaps), ``events``, ``leases``, ``crs``
(the CRs and DeploymentPolicies), ``generation`` (which API generation the client speaks) and ``watches``
(the waits, and ``LiveCRs``: the watches a long-lived process shares). How requests travel (the client,
retries, errors, the watch loop) is ``kube_transport``: a ``Kube`` holds a ``KubeTransport`` (``transport``)
and its parts speak through it. What a client's owner keeps between requests (clients, node copies, locks,
refusals, validated CRs) is a ``KubeSession`` (``session``), handed to every ``Kube`` it builds: no module
global holds one. The names of those modules that callers use are this module's too, so callers import only
``kube``. Waiting is done with list-then-watch (``watch_until``), never with polling loops.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

# The parts' and the transport's public names are kube's too: callers import only kube.
from ansible_collections.nodewright.bridge.plugins.module_utils.api.kube_transport import (  # noqa: F401 # pylint: disable=unused-import
    AUTH_ARG_SPEC, CLIENT_CLASSES, POOL_SIZE, RETRIED_STATUSES, USER_AGENT, WATCH_IDLE_SECONDS,
    Clients, Conflict, KubeError, KubeTransport, NodeGone, NotFound, SharedWatch, Unauthorized,
    Unavailable, WaitTimeout, auth_argument_spec, client_library, connection_params, describe,
    has_kubernetes, own_temp_files, preload, resource_version_number, unchecked)
from ansible_collections.nodewright.bridge.plugins.module_utils.api.session import (  # noqa: F401 # pylint: disable=unused-import
    CONFIGMAP_CACHE_SIZE, NODE_CACHE_SIZE, KubeSession, RecentCache)
from ansible_collections.nodewright.bridge.plugins.module_utils.api.client_state import ClientState
from ansible_collections.nodewright.bridge.plugins.module_utils.api.nodes import NodesAPI
from ansible_collections.nodewright.bridge.plugins.module_utils.api.workloads import (  # noqa: F401 # pylint: disable=unused-import
    LOG_RETRY_SECONDS, ConfigMapsAPI, WorkloadsAPI)
from ansible_collections.nodewright.bridge.plugins.module_utils.api.events import (  # noqa: F401 # pylint: disable=unused-import
    EVENT_COMPONENT, EVENT_NAMESPACE, EVENT_TIMEOUT, EventsAPI)
from ansible_collections.nodewright.bridge.plugins.module_utils.api.leases import LeasesAPI
from ansible_collections.nodewright.bridge.plugins.module_utils.api.crs import (  # noqa: F401 # pylint: disable=unused-import
    CR_PLACES, CR_WHAT, GROUP_VERSIONS, POLICY_PLACES, CRsAPI)
from ansible_collections.nodewright.bridge.plugins.module_utils.api.generation import GenerationAPI
from ansible_collections.nodewright.bridge.plugins.module_utils.api.watches import (  # noqa: F401 # pylint: disable=unused-import
    CR_WATCH_RETRY_SECONDS, CR_WATCH_SECONDS, SHARED_KINDS, LiveCRs, WatchesAPI, list_method, transport_for)


class Kube(object):
    """A thin client over the typed APIs that speaks plain dicts and raises KubeError.

    ``session``: the KubeSession its builder shares with its other clients (clients, node cache, node locks,
    refusals remembered); without one, that of ``live_crs`` (the sequence engine's), else a new one of its own.
    Its requests go through ``transport`` (a KubeTransport over the session's client for ``params``).

    Each resource's requests are a part's (``nodes_api``, ``workloads_api``, ...: a module each), which this
    client's methods call. A part is given the state it shares with this client (``state``, client_state.py) and
    reads from it, at each use, what the owner may change (``session``, ``live_crs``) and what all parts share
    (the transport, ``warnings``); the other parts it needs are given to it here.
    """

    def __init__(self, params, live_crs=None, session=None):
        if session is None:
            session = getattr(live_crs, 'session', None)
        if session is None:
            session = KubeSession()
        self.params = params
        self.transport = transport_for(params, session)
        # what the parts read at each use (client_state.py): the session, the LiveCRs of a long-lived process (the
        # sequence engine: get_cr answers from its watches), the warnings for the module's result that no request
        # failed on (a best-effort write refused)
        self.state = ClientState(params, self.transport, session, live_crs)
        # the typed APIs of the session's client (kube_transport: CoreV1Api, CustomObjectsApi...)
        self.configuration, self.api_client = self.transport.configuration, self.transport.api_client
        self.core, self.policy, self.custom = self.transport.core, self.transport.policy, self.transport.custom
        self.coordination, self.batch = self.transport.coordination, self.transport.batch
        # the parts, by resource
        self.leases_api = LeasesAPI(self.state)
        self.generation_api = GenerationAPI(self.state, self.leases_api)
        self.nodes_api = NodesAPI(self.state, self.generation_api)
        self.events_api = EventsAPI(self.state, self.nodes_api)
        self.workloads_api = WorkloadsAPI(self.state)
        self.configmaps_api = ConfigMapsAPI(self.state)
        self.crs_api = CRsAPI(self.state, self.generation_api)
        self.watches_api = WatchesAPI(self.state, self.nodes_api)

    # what the client's owner may change after building it (a status keeper hands it its session and live CRs)
    session = property(lambda self: self.state.session, lambda self, value: setattr(self.state, 'session', value))
    live_crs = property(lambda self: self.state.live_crs, lambda self, value: setattr(self.state, 'live_crs', value))
    warnings = property(lambda self: self.state.warnings, lambda self, value: setattr(self.state, 'warnings', value))

    # ------------------------------------------------------------------ the transport's part (kube_transport)

    @property
    def host(self):
        """The API server's URL."""
        return self.transport.host

    @property
    def request_timeout(self):
        return self.transport.request_timeout

    @property
    def outage_timeout(self):
        """Seconds a request rides out an API server that does not answer (KubeTransport.retrying); settable."""
        return self.transport.outage_timeout

    @outage_timeout.setter
    def outage_timeout(self, seconds):
        self.transport.outage_timeout = seconds

    def call(self, what, func, *args, **kwargs):
        """One request and its JSON body (KubeTransport.call: retries, deadlines, KubeError)."""
        return self.transport.call(what, func, *args, **kwargs)

    # ------------------------------------------------------------------ API generations (generation.py)

    @property
    def generation(self):
        """The api_generation.Generation whose contract this client speaks (GenerationAPI.generation)."""
        return self.generation_api.generation

    @property
    def generation_reason(self):
        """Why ``generation`` is what it is, once known (None before)."""
        return self.generation_api.generation_reason

    def served_groups(self):
        return self.generation_api.served_groups()

    def generation_evidence(self, option='auto', cr_name=None, nodes=None):
        return self.generation_api.generation_evidence(option=option, cr_name=cr_name, nodes=nodes)

    # ------------------------------------------------------------------ nodes (nodes.py)

    def get_node(self, name):
        return self.nodes_api.get_node(name)

    def adopted(self, node):
        return self.nodes_api.adopted(node)

    def node_gone(self, name, what=None):
        return self.nodes_api.node_gone(name, what=what)

    def list_nodes(self, label_selector=None):
        return self.nodes_api.list_nodes(label_selector=label_selector)

    def patch_node(self, name, patch, dry_run=False):
        return self.nodes_api.patch_node(name, patch, dry_run=dry_run)

    def update_node(self, name, mutate, node=None, dry_run=False, attempts=8, conditions=None, by_keys=None):
        return self.nodes_api.update_node(name, mutate, node=node, dry_run=dry_run, attempts=attempts, conditions=conditions,
                                          by_keys=by_keys)

    def sync_node_status(self, name, conditions, node, attempts=8):
        return self.nodes_api.sync_node_status(name, conditions, node, attempts=attempts)

    # ------------------------------------------------------------------ events (events.py)

    def node_event(self, node_name, reason, message, event_type='Normal', namespace=EVENT_NAMESPACE):
        return self.events_api.node_event(node_name, reason, message, event_type=event_type, namespace=namespace)

    def cr_event(self, doc, reason, message, event_type='Warning', namespace='default'):
        return self.events_api.cr_event(doc, reason, message, event_type=event_type, namespace=namespace)

    # ------------------------------------------------------------------ pods, PDBs, Jobs (workloads.py)

    def list_pods(self, namespace=None, field_selector=None, label_selector=None):
        return self.workloads_api.list_pods(namespace=namespace, field_selector=field_selector, label_selector=label_selector)

    def pods_on_node(self, node_name, label_selector=None):
        return self.workloads_api.pods_on_node(node_name, label_selector=label_selector)

    def get_pod(self, namespace, name):
        return self.workloads_api.get_pod(namespace, name)

    def create_pod(self, namespace, manifest, dry_run=False):
        return self.workloads_api.create_pod(namespace, manifest, dry_run=dry_run)

    def delete_pod(self, namespace, name, uid=None, grace_period_seconds=None, dry_run=False):
        return self.workloads_api.delete_pod(namespace, name, uid=uid, grace_period_seconds=grace_period_seconds, dry_run=dry_run)

    def evict_pod(self, namespace, name, dry_run=False, grace_period_seconds=None):
        return self.workloads_api.evict_pod(namespace, name, dry_run=dry_run, grace_period_seconds=grace_period_seconds)

    def pod_log(self, namespace, name, container, tail_lines=200, previous=False):
        return self.workloads_api.pod_log(namespace, name, container, tail_lines=tail_lines, previous=previous)

    def list_pdbs(self, namespace=None):
        return self.workloads_api.list_pdbs(namespace=namespace)

    def get_job(self, namespace, name):
        return self.workloads_api.get_job(namespace, name)

    def create_job(self, namespace, manifest, dry_run=False):
        return self.workloads_api.create_job(namespace, manifest, dry_run=dry_run)

    def patch_job(self, namespace, name, patch, dry_run=False):
        return self.workloads_api.patch_job(namespace, name, patch, dry_run=dry_run)

    def delete_job(self, namespace, name, uid=None, dry_run=False):
        return self.workloads_api.delete_job(namespace, name, uid=uid, dry_run=dry_run)

    # ------------------------------------------------------------------ config maps (workloads.py)

    def list_configmaps(self, namespace, label_selector=None):
        return self.configmaps_api.list_configmaps(namespace, label_selector=label_selector)

    def apply_configmap(self, manifest, dry_run=False, attempts=5, create_only=False):
        return self.configmaps_api.apply_configmap(manifest, dry_run=dry_run, attempts=attempts, create_only=create_only)

    # ------------------------------------------------------------------ leases: the shared budget (leases.py)

    def get_lease(self, namespace, name):
        return self.leases_api.get_lease(namespace, name)

    def create_lease(self, namespace, body):
        return self.leases_api.create_lease(namespace, body)

    def replace_lease(self, namespace, body):
        return self.leases_api.replace_lease(namespace, body)

    # ------------------------------------------------------------------ NodeWright resources (crs.py)

    def get_cr(self, name, api_version=None, fresh=False):
        return self.crs_api.get_cr(name, api_version=api_version, fresh=fresh)

    def patch_cr_status(self, doc, patch):
        return self.crs_api.patch_cr_status(doc, patch)

    def patch_cr(self, doc, patch):
        return self.crs_api.patch_cr(doc, patch)

    def get_policy(self, name):
        return self.crs_api.get_policy(name)

    # ------------------------------------------------------------------ waiting (watches.py; the loop: kube_transport)

    def watch_node(self, name, predicate, timeout, what):
        return self.watches_api.watch_node(name, predicate, timeout, what)

    def watch_until(self, kind, predicate, timeout, namespace=None, field_selector=None, label_selector=None,
                    what=None, on_event=None, since=None):
        return self.watches_api.watch_until(kind, predicate, timeout, namespace=namespace, field_selector=field_selector,
                                            label_selector=label_selector, what=what, on_event=on_event, since=since)
