# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""The objects the NodeWright operator creates to run package stages, built exactly as it builds them.

* the package ConfigMap (``<cr>-<package>-<version>``, the package's ``configMap``),
* the per-node metadata ConfigMap (``labels.json``, ``annotations.json``, ``packages.json``),
* the stage pod of a package (``apply``, ``config``, ``upgrade``, ``uninstall``,
  ``post-interrupt``): ``<pkg>-init`` copies the package to the host, the agent runs the
  stage (``<pkg>-<stage>``) and its check (``<pkg>-<stage>check``), a pause container
  keeps the pod alive,
* and the interrupt pod (``interrupt``, ``uninstall-interrupt``): one agent ``interrupt``
  container with the base64 JSON of the interrupt.

What a pod's status means is pod_verdicts'; whether a pod found under a stage pod's name is still the
CR's is stale_pods'.

Checked against NVIDIA/nodewright at commit ``71ca22b8`` (operator/internal/controller/
skyhook_controller.go: generateSafeName, UpsertNodeLabelsAnnotationsPackages, UpsertConfigmaps,
createInterruptPodForPackage, getAgentConfigEnvVars, createPodFromPackage, setPodResources;
skyhook_metadata.go; annotations.go; operator/api/v1alpha1/skyhook_types.go: Interrupt.ToArgs;
operator/internal/wrapper/skyhook.go: ResourceID, NodeOrder). The operator's own configuration (its
environment) is passed as keyword arguments whose defaults are the operator's defaults.

Every function whose output names a key (a label, an annotation, the runtime-required toleration)
takes ``gen``, the api_generation.Generation the cluster speaks: SKYHOOK (``skyhook.nvidia.com/*``,
the v0.15 operator) unless the caller says otherwise, so every caller that does not pass it gets what
it got before. The v0.18+ names (NODEWRIGHT, ``nodewright.nvidia.com/*``) are those of NVIDIA/nodewright
operator/internal/controller/skyhook_controller.go @01cc2f2d (the pod and ConfigMap labels and
annotations, the env defaults) and operator/internal/controller/annotations.go @262b5749 (the package
annotation). What did not change in v0.20 stays fixed here: the mount paths (``/skyhook-package/...``),
COPY_DIR_ROOT ``/var/lib/skyhook``, AGENT_LOG_ROOT ``/var/log/skyhook`` and the agent's ``SKYHOOK_*``
variables.

Manifests are plain dicts in the API's camelCase, ready for the ``kubernetes`` client. Fields
the operator leaves at their zero value are left out (the API server fills in its defaults).

No I/O and no ``kubernetes`` import.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import copy
import datetime
import hashlib
import json

from ansible_collections.nodewright.bridge.plugins.module_utils.model.api_generation import SKYHOOK
from ansible_collections.nodewright.bridge.plugins.module_utils.model.constants import INTERRUPT_LABEL_VALUE, UNSCHEDULABLE_TAINT
from ansible_collections.nodewright.bridge.plugins.module_utils.contract.node_annotations import parse_taint
from ansible_collections.nodewright.bridge.plugins.module_utils.model.quantity import duration_seconds, parse_quantity
from ansible_collections.nodewright.bridge.plugins.module_utils.model.stages import INTERRUPT_STAGES, POD_STAGES

# --------------------------------------------------------------------------- constants

INTERRUPT_CONTAINER = 'interrupt'
PAUSE_CONTAINER = 'pause'
ROOT_VOLUME = 'root-mount'
NODE_METADATA_MOUNT = '/skyhook-package/node-metadata'
CONFIGMAP_MOUNT = '/skyhook-package/configmaps'

# The operator's configuration: SkyhookOperatorOptions env defaults
# (operator/internal/controller/skyhook_controller.go:75-83), those of the v0.15 operator (SKYHOOK).
# NAMESPACE, AGENT_IMAGE and RUNTIME_REQUIRED_TAINT changed in v0.18: defaults(gen) gives a generation's.
DEFAULT_NAMESPACE = 'skyhook'                                            # NAMESPACE
DEFAULT_IMAGE_PULL_SECRET = ''                                           # IMAGE_PULL_SECRET (none)
DEFAULT_COPY_DIR_ROOT = '/var/lib/skyhook'                               # COPY_DIR_ROOT
# RUNTIME_REQUIRED_TAINT: DEFAULT_RUNTIME_REQUIRED_TAINT (constants)
DEFAULT_PAUSE_IMAGE = 'registry.k8s.io/pause:3.10'                      # PAUSE_IMAGE
DEFAULT_AGENT_IMAGE = 'ghcr.io/nvidia/skyhook/agent:latest'             # AGENT_IMAGE
DEFAULT_AGENT_LOG_ROOT = '/var/log/skyhook'                              # AGENT_LOG_ROOT

# Interrupt.ToArgs renames the CR's interrupt types to the agent's.
AGENT_INTERRUPT_TYPES = {
    'reboot': 'node_restart',
    'service': 'service_restart',
    'noop': 'no_op',
    'restartAllServices': 'restart_all_services',
}

# Fixed resources of the pause container (both pods) and of the interrupt container.
PAUSE_RESOURCES = {'cpu': '100m', 'memory': '20Mi'}
INTERRUPT_RESOURCES = {'cpu': '500m', 'memory': '64Mi'}

# The operator truncates package names to 43 characters in container names (they are at
# most 43 long already: the CRD pattern and MaxLength).
_CONTAINER_PACKAGE_CHARS = 43


def defaults(gen=SKYHOOK):
    """The operator's env defaults that depend on its generation, under the names of the pod modules' options.

    The v0.18+ operator (NODEWRIGHT) runs in namespace ``nodewright`` with agent
    ``ghcr.io/nvidia/nodewright/agent:latest`` and applies ``nodewright.nvidia.com=runtime-required:NoSchedule``
    (NVIDIA/nodewright operator/internal/controller/skyhook_controller.go @01cc2f2d, SkyhookOperatorOptions). The
    other defaults stay module constants for both: COPY_DIR_ROOT and AGENT_LOG_ROOT did not change in v0.20.
    The builders below use these when ``namespace`` / ``agent_image`` / ``runtime_required_taint`` are None.
    """
    return {'namespace': gen.default_namespace, 'agent_image': gen.default_agent_image,
            'runtime_required_taint': gen.runtime_required_taint}


# --------------------------------------------------------------------------- Go encoding/json


class _Struct(list):
    """(key, value) pairs that encode in this order, as a Go struct does (a dict encodes sorted, as a Go map)."""


def _go_string(text):
    # encoding/json's string escaping: the same short escapes as Python's json module, plus the
    # HTML-safe \u003c \u003e \u0026 and the JavaScript line separators \u2028 \u2029.
    encoded = json.dumps(text, ensure_ascii=False)
    return (encoded.replace('<', '\\u003c').replace('>', '\\u003e').replace('&', '\\u0026')
            .replace(u'\u2028', '\\u2028').replace(u'\u2029', '\\u2029'))


def go_json(value):
    """``value`` encoded as Go's ``json.Marshal`` would: no spaces, map keys sorted by bytes, HTML-safe.

    Dicts are maps (keys sorted); :class:`_Struct` pairs keep their order; ``None`` is ``null``.
    """
    if value is None:
        return 'null'
    if isinstance(value, bool):
        return 'true' if value else 'false'
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return _go_string(value)
    if isinstance(value, _Struct):
        return '{' + ','.join('%s:%s' % (_go_string(k), go_json(v)) for k, v in value) + '}'
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: k.encode('utf-8'))
        return '{' + ','.join('%s:%s' % (_go_string(k), go_json(value[k])) for k in keys) + '}'
    if isinstance(value, (list, tuple)):
        return '[' + ','.join(go_json(v) for v in value) + ']'
    raise TypeError('cannot encode %r as Go JSON' % (value,))


def _go_string_map(value):
    """A map[string]string field: ``null`` when it has no entries.

    The operator reads nodes from the API server, which omits empty maps; Go then holds a nil
    map, and json.Marshal writes a nil map as ``null``.
    """
    return go_json(dict(value) if value else None)


# --------------------------------------------------------------------------- names


def safe_name(limit, *parts):
    """The operator's generateSafeName: a name of at most ``limit`` characters, unique per input.

    The parts are joined with ``-`` and every ``.`` becomes ``-``; the first 8 hex digits of the
    SHA-256 of that whole string (before truncation and before lowercasing) are the suffix. The
    string is cut to ``limit - 9`` bytes, then ``<string>-<hash>`` is lowercased.
    """
    if limit < 10:
        raise ValueError('limit %d leaves no room for the name (the hash suffix takes 9 characters)' % limit)
    name = '-'.join(parts).replace('.', '-')
    raw = name.encode('utf-8')
    digest = hashlib.sha256(raw).hexdigest()[:8]
    room = limit - len(digest) - 1
    if len(raw) > room:
        # Go slices bytes; names are ASCII in practice (DNS names), so no character is split
        name = raw[:room].decode('utf-8', 'replace')
    return ('%s-%s' % (name, digest)).lower()


def package_label(package):
    """Value of the ``<prefix>/package`` pod label: ``<name>-<version>`` (the same in every generation)."""
    return '%s-%s' % (package.name, package.version)


def pod_labels(cr_name, package=None, interrupt=None, gen=SKYHOOK):
    """Label selector (dict) for the pods of a CR, of one package, or of its interrupt pods.

    ``interrupt=True`` selects interrupt pods only; ``False`` and ``None`` do not filter (stage
    pods have no interrupt label at all: select them by exclusion). The keys are ``gen``'s: a v0.18+
    operator labels its pods ``nodewright.nvidia.com/name`` etc., and a selector must find the pods it made.
    """
    labels = {gen.name_label: cr_name}
    if package is not None:
        labels[gen.package_label] = package_label(package)
    if interrupt:
        labels[gen.interrupt_label] = INTERRUPT_LABEL_VALUE
    return labels


def package_configmap_name(cr_name, package):
    """``<cr>-<package>-<version>``, lowercased (dots kept: a ConfigMap name may have them)."""
    return ('%s-%s-%s' % (cr_name, package.name, package.version)).lower()


def node_metadata_configmap_name(cr_name, node_name):
    return safe_name(253, cr_name, node_name, 'metadata')


def stage_pod_name(cr_name, package, stage, node_name):
    return safe_name(63, cr_name, package.name, package.version, stage, node_name)


def interrupt_pod_name(cr_name, interrupt_type, stage, node_name):
    """Uses the CR's interrupt type (``reboot``), not the agent's (``node_restart``)."""
    return safe_name(63, cr_name, stage, interrupt_type, node_name)


def init_container_names(package_name, stage):
    """The init containers of a pod for this stage, in the order they run."""
    if stage in INTERRUPT_STAGES:
        return [INTERRUPT_CONTAINER]
    _check_stage(stage, POD_STAGES, 'stage pod')
    short = package_name[:_CONTAINER_PACKAGE_CHARS]
    return ['%s-init' % short, '%s-%s' % (short, stage), '%s-%scheck' % (short, stage)]


def log_containers(package_name, stage):
    """Containers whose logs tell what a stage did: every init container (the copy step can fail too)."""
    return init_container_names(package_name, stage)


# --------------------------------------------------------------------------- the operator's derived values


def cr_identity(doc):
    """``(uid, generation, status)`` of a CR document as the API returns it.

    A document from a file was never stored: its uid and generation are None, its status ``{}``.
    The uid and generation are what the builders below take as ``cr_uid`` / ``cr_generation``.
    """
    meta = doc.get('metadata') or {}
    return meta.get('uid') or None, meta.get('generation'), doc.get('status') or {}


def _owner_identity(cr, cr_uid=None, cr_generation=None):
    """(uid, generation) the objects carry: the arguments, else ``cr.uid`` / ``cr.generation``, else ``('', 0)``."""
    uid = cr_uid if cr_uid is not None else getattr(cr, 'uid', None)
    generation = cr_generation if cr_generation is not None else getattr(cr, 'generation', None)
    return uid or '', int(generation or 0)


def resource_id(cr_name, uid, generation):
    """The CR's ResourceID: ``<name>-<uid>-<generation>``."""
    return '%s-%s-%d' % (cr_name, uid, generation)


def copy_dir(cr_name, package, uid, generation, copy_dir_root=DEFAULT_COPY_DIR_ROOT):
    """Host directory (under /root in the pod) the package is copied to and run from."""
    return '%s/%s/%s-%s-%s-%d' % (copy_dir_root, cr_name, package.name, package.version, uid, generation)


def agent_version(agent_image=DEFAULT_AGENT_IMAGE):
    """The operator's AgentVersion: the text after the image's last ``:``.

    For an image pinned as ``repo:tag@sha256:<hex>`` (as the Helm chart does) that is the digest's
    hex, not the tag; reproduced as is.
    """
    return agent_image.split(':')[-1]


def agent_image_for(package, agent_image=DEFAULT_AGENT_IMAGE):
    """The package's agentImageOverride when set, else the operator's agent image."""
    return package.agent_image_override or agent_image


def agent_env(cr_name, package, uid='', generation=0, node_order=0,
              copy_dir_root=DEFAULT_COPY_DIR_ROOT, agent_log_root=DEFAULT_AGENT_LOG_ROOT):
    """The five variables the operator gives every agent container, in its order.

    SKYHOOK_RESOURCE_ID is ``<cr>-<uid>-<generation>_<package>_<version>``: the agent runs an
    interrupt once per value, so it changes with every new generation of the CR.
    """
    return [
        {'name': 'SKYHOOK_LOG_DIR', 'value': '%s/%s' % (agent_log_root, cr_name)},
        {'name': 'SKYHOOK_ROOT_DIR', 'value': '%s/%s' % (copy_dir_root, cr_name)},
        {'name': 'COPY_RESOLV', 'value': 'false'},
        {'name': 'SKYHOOK_RESOURCE_ID', 'value': '%s_%s_%s' % (resource_id(cr_name, uid, generation),
                                                               package.name, package.version)},
        {'name': 'SKYHOOK_NODE_ORDER', 'value': str(int(node_order))},
    ]


def _parse_time(text):
    # metav1.Time is RFC 3339 in UTC with a Z; fromisoformat before 3.11 wants +00:00
    try:
        return datetime.datetime.fromisoformat(str(text).replace('Z', '+00:00'))
    except ValueError:
        return None


def node_order_from_status(status, node_name):
    """SKYHOOK_NODE_ORDER for a node from a CR's ``status`` (the operator's Skyhook.NodeOrder).

    The node's index in ``status.nodePriority`` sorted by time, then name, plus
    ``status.nodeOrderOffset``; 0 when the node is not listed.
    """
    status = status or {}
    priority = status.get('nodePriority') or {}
    if node_name not in priority:
        return 0
    far_past = datetime.datetime(1, 1, 1, tzinfo=datetime.timezone.utc)

    def sort_key(name):
        when = _parse_time(priority[name])
        if when is not None and when.tzinfo is None:
            when = when.replace(tzinfo=datetime.timezone.utc)
        return (when or far_past, name)

    ordered = sorted(priority, key=sort_key)
    return int(status.get('nodeOrderOffset') or 0) + ordered.index(node_name)


def runtime_required_toleration(runtime_required_taint=None, gen=SKYHOOK):
    """Equal toleration of one runtime-required taint (None: the one ``gen``'s operator applies by default)."""
    taint = parse_taint(gen.runtime_required_taint if runtime_required_taint is None else runtime_required_taint)
    toleration = {'key': taint['key'], 'operator': 'Equal'}
    if taint.get('value'):
        toleration['value'] = taint['value']
    toleration['effect'] = taint['effect']
    return toleration


def runtime_required_tolerations(runtime_required_taint=None, gen=SKYHOOK):
    """The Equal tolerations of the runtime-required taint(s) a package pod carries (runtimeRequired or not).

    With the generation's default taint (or None) every taint that generation recognises as the
    runtime-required one, in its order: the v0.18+ operator applies ``nodewright.nvidia.com=runtime-required``
    and still tolerates and removes the legacy ``skyhook.nvidia.com=runtime-required`` a v0.15 operator left
    on a node (skyhook_controller.go @01cc2f2d), so a pod must not be kept off such a node; SKYHOOK
    recognises one, so its pods carry one toleration, as before. A taint the caller configured otherwise is
    the operator's RUNTIME_REQUIRED_TAINT override: that one alone.
    """
    if runtime_required_taint is None or runtime_required_taint == gen.runtime_required_taint:
        specs = gen.recognised_runtime_required_taints
    else:
        specs = (runtime_required_taint,)
    return [runtime_required_toleration(spec, gen) for spec in specs]


def picker_tolerations(cr, runtime_required_taint=None, gen=SKYHOOK):
    """The tolerations the operator's node picker checks a node's taints against (SelectNodes): the cordon
    (unschedulable, NoSchedule), the CR's additionalTolerations and, for a runtimeRequired CR only, the
    runtime-required taint(s) (:func:`runtime_required_tolerations`). A node with another taint is blocked,
    although its pods (bound by nodeName) would run."""
    tolerations = [{'key': UNSCHEDULABLE_TAINT, 'operator': 'Exists', 'effect': 'NoSchedule'}]
    tolerations += copy.deepcopy(cr.additional_tolerations)
    if cr.runtime_required:
        tolerations += runtime_required_tolerations(runtime_required_taint, gen)
    return tolerations


def pod_tolerations(cr, runtime_required_taint=None, gen=SKYHOOK):
    """Cordon (unschedulable, Exists), the runtime-required taint(s), then the CR's additionalTolerations."""
    cordon = [{'key': UNSCHEDULABLE_TAINT, 'operator': 'Exists'}]
    return cordon + runtime_required_tolerations(runtime_required_taint, gen) + copy.deepcopy(cr.additional_tolerations)


def interrupt_json(interrupt):
    """The JSON the agent receives for an interrupt: ``{"type":<agent type>,"services":[...]}``.

    The type is renamed (reboot -> node_restart, service -> service_restart, noop -> no_op,
    restartAllServices -> restart_all_services); ``services`` is left out when empty.
    """
    kind = interrupt['type']
    fields = _Struct([('type', AGENT_INTERRUPT_TYPES.get(kind, kind))])
    if interrupt.get('services'):
        fields.append(('services', list(interrupt['services'])))
    return go_json(fields)


def interrupt_arg(interrupt):
    """Interrupt.ToArgs: standard base64 (with padding) of :func:`interrupt_json`."""
    return base64.b64encode(interrupt_json(interrupt).encode('utf-8')).decode('ascii')


def package_annotation(cr_name, package, stage, invalid=False):
    """The value of the ``<prefix>/package`` pod annotation (SetPackages): the image without its tag.

    Only the key is the generation's (the caller's ``gen.package_annotation``); the JSON is the same.
    """
    fields = _Struct([('name', package.name), ('version', package.version), ('skyhook', cr_name),
                      ('stage', stage), ('image', package.image)])
    if package.container_sha:
        fields.append(('containerSHA', package.container_sha))
    if invalid:
        fields.append(('invalid', True))
    return go_json(fields)


def owner_references(cr, uid):
    """The controller reference the operator sets on everything it creates (SetControllerReference)."""
    return [{'apiVersion': cr.api_version, 'kind': cr.kind, 'name': cr.name, 'uid': uid,
             'controller': True, 'blockOwnerDeletion': True}]


def _metadata(cr, name, namespace, labels, annotations, uid):
    meta = {'name': name, 'namespace': namespace, 'labels': labels, 'annotations': annotations}
    if uid:
        # Only for a CR that exists in the cluster: with a uid nobody owns, the garbage
        # collector would delete the object.
        meta['ownerReferences'] = owner_references(cr, uid)
    return meta


def _or(value, default):
    """``value``, or ``default`` when it is None (an empty string given on purpose is kept)."""
    return default if value is None else value


def package_of(cr, package):
    """``package`` (a cr_model Package, or its key in the CR) as the CR's Package; ValueError naming an unknown one."""
    if isinstance(package, str):
        try:
            return cr.packages[package]
        except KeyError:
            raise ValueError('CR %r has no package %r' % (cr.name, package))
    return package


def _check_stage(stage, allowed, what):
    if stage not in allowed:
        raise ValueError('stage %r does not run in a %s (one of %s)' % (stage, what, ', '.join(allowed)))


# --------------------------------------------------------------------------- ConfigMaps


def package_configmap(cr, package, namespace=None, cr_uid=None, gen=SKYHOOK):
    """The package ConfigMap (UpsertConfigmaps), or None for a package without ``configMap``.

    The operator also leaves it untouched while the package is being uninstalled on any node.
    ``namespace`` None: ``gen``'s default (:func:`defaults`); the label and annotations are ``gen``'s.
    """
    package = package_of(cr, package)
    if not package.config_map:
        return None
    uid = _owner_identity(cr, cr_uid)[0]
    annotations = {gen.name_label: cr.name, gen.package_name_annotation: package.name,
                   gen.package_version_annotation: package.version}
    return {
        'apiVersion': 'v1',
        'kind': 'ConfigMap',
        'metadata': _metadata(cr, package_configmap_name(cr.name, package), _or(namespace, gen.default_namespace),
                              {gen.name_label: cr.name}, annotations, uid),
        'data': dict(package.config_map),
    }


def _interrupt_struct(interrupt):
    fields = _Struct([('type', interrupt['type'])])
    if interrupt.get('services'):
        fields.append(('services', list(interrupt['services'])))
    return fields


def packages_json(cr, agent_image=DEFAULT_AGENT_IMAGE):
    """``packages.json`` of the node metadata ConfigMap (SkyhookMetadata): what the agent knows of the CR.

    ``{"agentVersion": <tag of the operator's agent image>, "packages": {<key>: {"name", "version",
    "image" (without tag), "agentImageOverride"?, "interrupt"?, "configInterrupts"?}}}``; interrupt
    types as in the CR (not renamed).
    """
    packages = {}
    for key, package in cr.packages.items():
        fields = _Struct([('name', package.name), ('version', package.version), ('image', package.image)])
        if package.agent_image_override:
            fields.append(('agentImageOverride', package.agent_image_override))
        if package.interrupt:
            fields.append(('interrupt', _interrupt_struct(package.interrupt)))
        if package.config_interrupts:
            fields.append(('configInterrupts', dict((k, _interrupt_struct(v))
                                                    for k, v in package.config_interrupts.items())))
        packages[key] = fields
    return go_json(_Struct([('agentVersion', agent_version(agent_image)), ('packages', packages)]))


def _get(obj, key):
    return obj.get(key) if isinstance(obj, dict) else None


def _node_parts(node):
    """(name, labels, annotations) of an API node dict, or of a ``{name, labels, annotations}`` dict."""
    meta = _get(node, 'metadata')
    if meta is None:
        meta = node
    return meta.get('name'), meta.get('labels') or {}, meta.get('annotations') or {}


def node_metadata_configmap(cr, node, namespace=None, agent_image=None, cr_uid=None, gen=SKYHOOK):
    """The per-node metadata ConfigMap (UpsertNodeLabelsAnnotationsPackages).

    Data: ``annotations.json`` and ``labels.json`` (the node's maps as Go encodes them: sorted
    keys, HTML-safe escapes, ``null`` when empty) and ``packages.json`` (:func:`packages_json`).
    None when the node has neither labels nor annotations: the operator then creates nothing.
    ``namespace`` / ``agent_image`` None: ``gen``'s defaults; the label (``<prefix>/skyhook-node-meta``,
    so named in v0.20 too) and annotations are ``gen``'s.
    """
    name, labels, annotations = _node_parts(node)
    if not labels and not annotations:
        return None
    uid = _owner_identity(cr, cr_uid)[0]
    return {
        'apiVersion': 'v1',
        'kind': 'ConfigMap',
        'metadata': _metadata(cr, node_metadata_configmap_name(cr.name, name), _or(namespace, gen.default_namespace),
                              {gen.node_meta_label: cr.name},
                              {gen.name_label: cr.name, gen.node_name_annotation: name}, uid),
        'data': {
            'annotations.json': _go_string_map(annotations),
            'labels.json': _go_string_map(labels),
            'packages.json': packages_json(cr, _or(agent_image, gen.default_agent_image)),
        },
    }


# --------------------------------------------------------------------------- pods


def _quantity(value):
    return value if isinstance(value, str) else str(value)


def _fixed_resources(amounts):
    return {'limits': dict(amounts), 'requests': dict(amounts)}


def package_resources(package):
    """setPodResources: the package's ``resources`` as container resources, or None (LimitRange applies).

    None when the package sets none, or only zeros. A missing field is ``0`` (the webhook allows
    all four or none).
    """
    res = package.resources or {}
    values = dict((k, res.get(k)) for k in ('cpuRequest', 'cpuLimit', 'memoryRequest', 'memoryLimit'))
    if not any(v is not None and parse_quantity(v) != 0 for v in values.values()):
        return None
    values = dict((k, '0' if v is None else _quantity(v)) for k, v in values.items())
    return {'limits': {'cpu': values['cpuLimit'], 'memory': values['memoryLimit']},
            'requests': {'cpu': values['cpuRequest'], 'memory': values['memoryRequest']}}


def termination_grace_period(package):
    """Whole seconds of ``gracefulShutdown`` (truncated, as int64(Duration.Seconds())), or None."""
    if package.graceful_shutdown in (None, ''):
        return None
    return int(duration_seconds(package.graceful_shutdown))


def _pause_container(pause_image):
    return {'name': PAUSE_CONTAINER, 'image': pause_image, 'resources': _fixed_resources(PAUSE_RESOURCES)}


def _pod(cr, name, namespace, labels, annotations, uid, volumes, init_containers, node_name,
         pause_image, image_pull_secret, runtime_required_taint, gen):
    spec = {
        'volumes': volumes,
        'initContainers': init_containers,
        'containers': [_pause_container(pause_image)],
        'restartPolicy': 'OnFailure',
        'nodeName': node_name,
        'hostNetwork': True,
        'hostPID': True,
        'tolerations': pod_tolerations(cr, runtime_required_taint, gen),
    }
    if image_pull_secret:
        spec['imagePullSecrets'] = [{'name': image_pull_secret}]
    return {'apiVersion': 'v1', 'kind': 'Pod',
            'metadata': _metadata(cr, name, namespace, labels, annotations, uid),
            'spec': spec}


def _stage_volumes(cr, package, node_name):
    """(volumes, mounts) of a stage pod: the host's ``/`` at ``/root``, the node's metadata ConfigMap and, for a
    package with a ``configMap``, the package ConfigMap; every container mounts them all."""
    metadata_volume = safe_name(63, 'metadata', node_name)
    volumes = [
        {'name': ROOT_VOLUME, 'hostPath': {'path': '/'}},
        {'name': metadata_volume, 'configMap': {'name': node_metadata_configmap_name(cr.name, node_name)}},
    ]
    mounts = [
        {'name': ROOT_VOLUME, 'mountPath': '/root', 'mountPropagation': 'HostToContainer'},
        {'name': metadata_volume, 'mountPath': NODE_METADATA_MOUNT},
    ]
    if package.config_map:
        volumes.append({'name': package.name, 'configMap': {'name': package_configmap_name(cr.name, package)}})
        mounts.append({'name': package.name, 'mountPath': CONFIGMAP_MOUNT})
    return volumes, mounts


def stage_pod(cr, package, stage, node_name, namespace=None, agent_image=None,
              pause_image=DEFAULT_PAUSE_IMAGE, copy_dir_root=DEFAULT_COPY_DIR_ROOT,
              agent_log_root=DEFAULT_AGENT_LOG_ROOT, image_pull_secret=DEFAULT_IMAGE_PULL_SECRET,
              runtime_required_taint=None, node_order=0, cr_uid=None, cr_generation=None, gen=SKYHOOK):
    """The pod that runs one stage of a package on a node (createPodFromPackage + SetPackages).

    ``package`` is a cr_model Package or its key in ``cr.packages``; ``stage`` one of stages.POD_STAGES.
    ``node_order`` is SKYHOOK_NODE_ORDER (:func:`node_order_from_status`); ``cr_uid`` / ``cr_generation``
    those of the CR in the cluster (they name the copy directory and SKYHOOK_RESOURCE_ID; the
    uid also sets the owner reference). The rest is the operator's configuration; ``namespace``,
    ``agent_image`` and ``runtime_required_taint`` None are ``gen``'s defaults (:func:`defaults`), and the
    labels, the package annotation and the tolerations are ``gen``'s.
    """
    package = package_of(cr, package)
    _check_stage(stage, POD_STAGES, 'stage pod')
    namespace, agent_image = _or(namespace, gen.default_namespace), _or(agent_image, gen.default_agent_image)
    uid, generation = _owner_identity(cr, cr_uid, cr_generation)
    target = copy_dir(cr.name, package, uid, generation, copy_dir_root)
    volumes, mounts = _stage_volumes(cr, package, node_name)

    image = agent_image_for(package, agent_image)
    env = copy.deepcopy(package.env) + agent_env(cr.name, package, uid, generation, node_order,
                                                 copy_dir_root, agent_log_root)
    init_name, stage_name, check_name = init_container_names(package.name, stage)
    containers = [
        {'name': init_name, 'image': package.image_ref, 'imagePullPolicy': 'Always',
         'command': ['/bin/sh'],
         'args': ['-c', 'mkdir -p /root/${SKYHOOK_DIR} && cp -r /skyhook-package/* /root/${SKYHOOK_DIR}'],
         'env': [{'name': 'SKYHOOK_DIR', 'value': target}]},
        {'name': stage_name, 'image': image, 'imagePullPolicy': 'Always',
         'args': [stage.lower(), '/root', target], 'env': env},
        {'name': check_name, 'image': image, 'imagePullPolicy': 'Always',
         'args': [(stage + '-check').lower(), '/root', target], 'env': copy.deepcopy(env)},
    ]
    resources = package_resources(package)
    for container in containers:
        container['securityContext'] = {'privileged': True}
        container['volumeMounts'] = copy.deepcopy(mounts)
        if resources:
            container['resources'] = copy.deepcopy(resources)

    pod = _pod(cr, stage_pod_name(cr.name, package, stage, node_name), namespace,
               pod_labels(cr.name, package, gen=gen), {gen.package_annotation: package_annotation(cr.name, package, stage)},
               uid, volumes, containers, node_name, pause_image, image_pull_secret, runtime_required_taint, gen)
    grace = termination_grace_period(package)
    if grace is not None:
        pod['spec']['terminationGracePeriodSeconds'] = grace
    return pod


def interrupt_pod(cr, package, interrupt, node_name, namespace=None, agent_image=None,
                  stage='interrupt', pause_image=DEFAULT_PAUSE_IMAGE, copy_dir_root=DEFAULT_COPY_DIR_ROOT,
                  agent_log_root=DEFAULT_AGENT_LOG_ROOT, image_pull_secret=DEFAULT_IMAGE_PULL_SECRET,
                  runtime_required_taint=None, node_order=0, cr_uid=None, cr_generation=None, gen=SKYHOOK):
    """The pod that runs an interrupt on a node for a package (createInterruptPodForPackage + SetPackages).

    ``interrupt`` is ``{'type', 'services'}`` as in cr_model (the package's, or the merged one of
    node_plan.merge_interrupts); ``stage`` is ``interrupt`` or ``uninstall-interrupt``. The agent
    gets ``interrupt /root <copy dir> <base64 JSON>`` whatever the stage; no package env, no
    package resources, no gracefulShutdown. ``gen`` and the None defaults as in :func:`stage_pod`.
    """
    package = package_of(cr, package)
    _check_stage(stage, INTERRUPT_STAGES, 'interrupt pod')
    namespace, agent_image = _or(namespace, gen.default_namespace), _or(agent_image, gen.default_agent_image)
    if not interrupt or not interrupt.get('type'):
        raise ValueError('an interrupt pod needs an interrupt with a type')
    uid, generation = _owner_identity(cr, cr_uid, cr_generation)
    target = copy_dir(cr.name, package, uid, generation, copy_dir_root)
    volumes = [
        {'name': ROOT_VOLUME, 'hostPath': {'path': '/'}},
        # As upstream: named differently from the stage pod's, and pointing at
        # "<cr>-<node>-metadata" (dots replaced), which is not the metadata ConfigMap's name
        # (that one has a hash suffix). No container mounts it, and the kubelet does not set
        # up volumes that nothing mounts, so the missing ConfigMap does not block the pod.
        {'name': safe_name(63, cr.name, node_name, 'metadata'),
         'configMap': {'name': ('%s-%s-metadata' % (cr.name, node_name)).replace('.', '-')}},
    ]
    container = {
        'name': INTERRUPT_CONTAINER,
        'image': agent_image_for(package, agent_image),
        'args': ['interrupt', '/root', target, interrupt_arg(interrupt)],
        'env': agent_env(cr.name, package, uid, generation, node_order, copy_dir_root, agent_log_root),
        'securityContext': {'privileged': True},
        'volumeMounts': [{'name': ROOT_VOLUME, 'mountPath': '/root', 'mountPropagation': 'HostToContainer'}],
        'resources': _fixed_resources(INTERRUPT_RESOURCES),
    }
    labels = pod_labels(cr.name, package, interrupt=True, gen=gen)
    return _pod(cr, interrupt_pod_name(cr.name, interrupt['type'], stage, node_name), namespace, labels,
                {gen.package_annotation: package_annotation(cr.name, package, stage)}, uid, volumes, [container],
                node_name, pause_image, image_pull_secret, runtime_required_taint, gen)
