# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""The two generations of the NodeWright operator's contract, each one immutable value, and the choice for a cluster.

* ``SKYHOOK``: the v0.15 contract the collection speaks today (API group and key prefix ``skyhook.nvidia.com``),
  value for value what ``constants.py`` says (it derives its names from here).
* ``NODEWRIGHT``: the v0.18-v0.20 contract (API group and key prefix ``nodewright.nvidia.com``).
* ``choose(option, evidence)``: which of the two a cluster gets for the option ``nodewright_api``
  (``auto``, ``skyhook``, ``nodewright``), with a one-line reason naming the evidence; ``kube.Kube.generation_evidence``
  gathers the evidence and ``kube.Kube.generation`` holds the choice every module speaks.

The v0.15 names were checked against NVIDIA/nodewright at ``71ca22b8`` (operator/api/v1alpha1/skyhook_types.go
METADATA_PREFIX; internal/controller/skyhook_controller.go SkyhookOperatorOptions, SkyhookFinalizer, the ConfigMap
and pod labels, HandleAutoTaint; internal/wrapper/node.go; internal/wrapper/skyhook.go SetVersion; cmd/manager/main.go
LeaderElectionID). The v0.20 names, in NVIDIA/nodewright (part of the late history is stored as NVIDIA/skyhook):

* operator/api/nodewright/v1alpha1/nodewright_types.go @90d9979d: ``METADATA_PREFIX = "nodewright.nvidia.com"``,
  ``RuntimeRequiredCordonAnnotation = METADATA_PREFIX + "/runtimeRequiredCordon"`` (one per node, not per CR),
  ``IsPaused`` / ``IsDisabled`` read ``<prefix>/pause`` and ``<prefix>/disable``; kind NodeWright, plural nodewrights.
* operator/internal/controller/skyhook_controller.go @01cc2f2d: ``SkyhookFinalizer = "nodewright.nvidia.com/nodewright"``;
  env defaults ``NAMESPACE`` nodewright, ``AGENT_IMAGE`` ghcr.io/nvidia/nodewright/agent:latest,
  ``RUNTIME_REQUIRED_TAINT`` nodewright.nvidia.com=runtime-required:NoSchedule; the legacy
  skyhook.nvidia.com=runtime-required:NoSchedule is still recognised (tolerated, removed), never applied; the
  package ConfigMap's ``<prefix>/name`` label and ``/name``, ``/Package.Name``, ``/Package.Version`` annotations; the
  node-metadata ConfigMap's ``<prefix>/skyhook-node-meta`` label and ``/Node.name`` annotation (UpsertNodeLabelsAnnotationsPackages).
* operator/internal/controller/skyhook_controller_test.go @01cc2f2d: node annotations ``<prefix>/status_<cr>``,
  ``<prefix>/cordon_<cr>``, ``<prefix>/drainStart_<cr>`` (RFC 3339 nano) and ``<prefix>/drainBlocked_<cr>``.
* operator/internal/controller/annotations.go @262b5749: ``<prefix>/package`` on every package executor;
  ``autoTaintAnnotationKey``: ``<prefix>/autoTaint_<taint key, "/" -> ".">``, cut to 63 characters and right-trimmed of
  ``-_.`` (v0.15 wrote the taint key as it is).
* operator/internal/wrapper/zz.migration.0.18.0.go @8127a97c: the operator-owned per-CR node annotations
  ``nodeState_``, ``status_``, ``version_``, ``cordon_``, ``drainStart_``; ``autoTaint_`` and the ``ignore`` label are
  node-scoped; node conditions ``<prefix>/<cr>/NotReady`` and ``/Erroring``; users put their own keys under the same
  prefix (a ``nodewright.nvidia.com/pool`` label), so only these shapes are the operator's. internal/wrapper/node.go
  (Migrate): a node without ``nodewright.nvidia.com/version_<cr>`` gets its legacy keys copied to the new prefix,
  the legacy ones kept for the rollback window (``LEGACY_CLEANUP_DELAY``, 24 h).
* operator/internal/controller/mirror_controller.go @273d50a0: a legacy Skyhook or DeploymentPolicy is mirrored into
  the same-named new-group object, stamped ``nodewright.nvidia.com/mirrored-from`` (the legacy name) and
  ``nodewright.nvidia.com/mirrored-generation``; an object without the stamp is user-made and left alone.
* cmd/manager/main.go (v0.18+, the notes' @1826d339): ``reconcileLeaseID = "3c22c1ae.nvidia.com"`` and
  ``webhookBootstrapLeaseID = "nodewright-webhook-bootstrap.nvidia.com"``, both in the operator's namespace.
  operator/RELEASE_NOTES.md @1ae01466: the second lease came with **v0.16.1** (#243), not v0.18, so it does not
  tell a v0.18 operator from a v0.16.1 / v0.17 one; v0.20.0 (2026-10-06) is the version stamped; the
  ``DrainBlocked`` CR condition and ``drainBlocked_<cr>`` annotation are v0.20's.
* internal/wrapper/skyhook.go (v0.18+, ``SetVersion``): the CR annotation ``<prefix>/version``.

No I/O, and no import from the collection (constants.py imports this module).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import collections
import json

AUTO, SKYHOOK_NAME, NODEWRIGHT_NAME = 'auto', 'skyhook', 'nodewright'
OPTIONS = (AUTO, SKYHOOK_NAME, NODEWRIGHT_NAME)

# The operator's limit on the part of an annotation key after its prefix (annotations.go annotationNameMaxLength).
_ANNOTATION_NAME_MAX = 63


class GenerationError(ValueError):
    """An option the cluster cannot serve, an unknown generation, or evidence that contradicts itself."""


_FIELDS = (
    'name',                     # 'skyhook' | 'nodewright': the option value that asks for it
    'group', 'version',         # the API group and the version it serves
    'kind', 'plural',           # the CR
    'policy_kind', 'policy_plural',
    'prefix',                   # of every annotation, label and node condition the operator writes
    'operator_version',         # what the operator stamps in version_<cr> (and the CR's <prefix>/version)
    'default_namespace',        # the operator's NAMESPACE default (its pods, ConfigMaps, Jobs, leases)
    'default_agent_image',      # AGENT_IMAGE
    'runtime_required_taint',   # RUNTIME_REQUIRED_TAINT (kubectl's key[=value]:effect), the one applied
    'recognised_runtime_required_taints',  # every taint the operator treats as that one (tolerates, removes)
    'leases',                   # the operator's leader-election Lease names (in its namespace)
    'finalizer',
    'auto_taint_dots',          # True: the autoTaint_ name has the taint key's "/" as "." and is cut to 63
    # v0.18+ only (None on the legacy generation)
    'drain_start_stem', 'drain_blocked_stem', 'runtime_required_cordon_stem', 'drain_blocked_condition',
    'mirrored_from_stem', 'mirrored_generation_stem',
)


def _key(prefix, stem):
    return None if stem is None else '%s/%s' % (prefix, stem)


class Generation(collections.namedtuple('Generation', _FIELDS)):
    """The names and defaults of one contract; immutable (a namedtuple), compared by value.

    The keys derive from ``prefix`` as the operator builds them (``<prefix>/<stem><cr name>``); a key the
    generation does not have is None.
    """

    __slots__ = ()

    def __repr__(self):
        return 'Generation(%s: %s)' % (self.name, self.api_version)

    # ------------------------------------------------------------------ the API

    @property
    def api_version(self):
        return '%s/%s' % (self.group, self.version)

    @property
    def crd_name(self):
        """The CR's CustomResourceDefinition, ``<plural>.<group>``."""
        return '%s.%s' % (self.plural, self.group)

    # ------------------------------------------------------------------ on a CR

    @property
    def pause_annotation(self):
        return _key(self.prefix, 'pause')

    @property
    def disable_annotation(self):
        return _key(self.prefix, 'disable')

    @property
    def version_annotation(self):
        """The CR annotation the operator stamps with its version (Skyhook.SetVersion)."""
        return _key(self.prefix, 'version')

    @property
    def mirrored_from_annotation(self):
        """On a new-group object the mirror controller made: the legacy object's name (None: no mirror)."""
        return _key(self.prefix, self.mirrored_from_stem)

    @property
    def mirrored_generation_annotation(self):
        return _key(self.prefix, self.mirrored_generation_stem)

    # ------------------------------------------------------------------ on a node (stems end in the CR's name)

    @property
    def node_state_prefix(self):
        return _key(self.prefix, 'nodeState_')

    @property
    def status_prefix(self):
        """Annotation and label."""
        return _key(self.prefix, 'status_')

    @property
    def cordon_prefix(self):
        return _key(self.prefix, 'cordon_')

    @property
    def version_prefix(self):
        return _key(self.prefix, 'version_')

    @property
    def auto_taint_prefix(self):
        """Followed by the runtime-required taint's key (see auto_taint_key), not by a CR name."""
        return _key(self.prefix, 'autoTaint_')

    @property
    def drain_start_prefix(self):
        return _key(self.prefix, self.drain_start_stem)

    @property
    def drain_blocked_prefix(self):
        return _key(self.prefix, self.drain_blocked_stem)

    @property
    def ignore_label(self):
        return _key(self.prefix, 'ignore')

    @property
    def runtime_required_cordon_annotation(self):
        """One per node: the persistent cordon of runtimeRequiredCordonAfter (None: no such field)."""
        return _key(self.prefix, self.runtime_required_cordon_stem)

    @property
    def condition_prefix(self):
        """Node condition types are ``<condition_prefix>/<cr>/NotReady`` and ``.../Erroring``."""
        return self.prefix

    # ------------------------------------------------------------------ on pods, Jobs and ConfigMaps

    @property
    def name_label(self):
        return _key(self.prefix, 'name')

    @property
    def package_label(self):
        return _key(self.prefix, 'package')

    @property
    def interrupt_label(self):
        return _key(self.prefix, 'interrupt')

    @property
    def package_annotation(self):
        return _key(self.prefix, 'package')

    @property
    def package_name_annotation(self):
        return _key(self.prefix, 'Package.Name')

    @property
    def package_version_annotation(self):
        return _key(self.prefix, 'Package.Version')

    @property
    def node_meta_label(self):
        return _key(self.prefix, 'skyhook-node-meta')

    @property
    def node_name_annotation(self):
        return _key(self.prefix, 'Node.name')

    # ------------------------------------------------------------------ keys of one CR

    def node_state_key(self, cr_name):
        return self.node_state_prefix + cr_name

    def status_key(self, cr_name):
        return self.status_prefix + cr_name

    def cordon_key(self, cr_name):
        return self.cordon_prefix + cr_name

    def version_key(self, cr_name):
        return self.version_prefix + cr_name

    def drain_start_key(self, cr_name):
        return None if self.drain_start_prefix is None else self.drain_start_prefix + cr_name

    def drain_blocked_key(self, cr_name):
        return None if self.drain_blocked_prefix is None else self.drain_blocked_prefix + cr_name

    def auto_taint_key(self, taint_key):
        """The node annotation that marks a node the operator auto-tainted with ``taint_key``."""
        if not self.auto_taint_dots:
            return self.auto_taint_prefix + taint_key
        name = 'autoTaint_' + taint_key.replace('/', '.')
        if len(name) > _ANNOTATION_NAME_MAX:
            name = name[:_ANNOTATION_NAME_MAX].rstrip('-_.')
        return '%s/%s' % (self.prefix, name)

    def node_condition_type(self, cr_name, kind):
        """``<prefix>/<cr>/NotReady`` or ``<prefix>/<cr>/Erroring``."""
        return '%s/%s/%s' % (self.condition_prefix, cr_name, kind)

    def node_annotation_prefixes(self):
        """The stems of the operator's per-CR node annotations (each followed by a CR name)."""
        return tuple(p for p in (self.node_state_prefix, self.status_prefix, self.version_prefix, self.cordon_prefix,
                                 self.drain_start_prefix, self.drain_blocked_prefix) if p)

    def cr_node_keys(self, cr_name):
        """The node annotations the operator owns for ``cr_name`` (the status label has the status key)."""
        return tuple(p + cr_name for p in self.node_annotation_prefixes())

    def lease_refs(self, namespace=None):
        """``(namespace, name)`` of each operator lease, in ``namespace`` (default: the operator's default)."""
        return tuple((namespace or self.default_namespace, name) for name in self.leases)

    def describe(self):
        """'skyhook.nvidia.com/v1alpha1 skyhooks', for messages."""
        return '%s %s' % (self.api_version, self.plural)


_LEASE = '3c22c1ae.nvidia.com'
_BOOTSTRAP_LEASE = 'nodewright-webhook-bootstrap.nvidia.com'
_LEGACY_TAINT = 'skyhook.nvidia.com=runtime-required:NoSchedule'

SKYHOOK = Generation(
    name=SKYHOOK_NAME, group='skyhook.nvidia.com', version='v1alpha1', kind='Skyhook', plural='skyhooks',
    policy_kind='DeploymentPolicy', policy_plural='deploymentpolicies', prefix='skyhook.nvidia.com',
    operator_version='v0.15.0', default_namespace='skyhook', default_agent_image='ghcr.io/nvidia/skyhook/agent:latest',
    runtime_required_taint=_LEGACY_TAINT, recognised_runtime_required_taints=(_LEGACY_TAINT,),
    leases=(_LEASE,), finalizer='skyhook.nvidia.com/skyhook', auto_taint_dots=False,
    drain_start_stem=None, drain_blocked_stem=None, runtime_required_cordon_stem=None, drain_blocked_condition=None,
    mirrored_from_stem=None, mirrored_generation_stem=None)

NODEWRIGHT = Generation(
    name=NODEWRIGHT_NAME, group='nodewright.nvidia.com', version='v1alpha1', kind='NodeWright', plural='nodewrights',
    policy_kind='DeploymentPolicy', policy_plural='deploymentpolicies', prefix='nodewright.nvidia.com',
    operator_version='v0.20.0', default_namespace='nodewright',
    default_agent_image='ghcr.io/nvidia/nodewright/agent:latest',
    runtime_required_taint='nodewright.nvidia.com=runtime-required:NoSchedule',
    recognised_runtime_required_taints=('nodewright.nvidia.com=runtime-required:NoSchedule', _LEGACY_TAINT),
    leases=(_LEASE, _BOOTSTRAP_LEASE), finalizer='nodewright.nvidia.com/nodewright', auto_taint_dots=True,
    drain_start_stem='drainStart_', drain_blocked_stem='drainBlocked_', runtime_required_cordon_stem='runtimeRequiredCordon',
    drain_blocked_condition='DrainBlocked', mirrored_from_stem='mirrored-from', mirrored_generation_stem='mirrored-generation')

GENERATIONS = (SKYHOOK, NODEWRIGHT)


def by_name(name):
    """SKYHOOK for 'skyhook', NODEWRIGHT for 'nodewright'."""
    for generation in GENERATIONS:
        if name == generation.name:
            return generation
    raise GenerationError('unknown NodeWright API generation %r (one of: %s)' % (name, ', '.join(g.name for g in GENERATIONS)))


def by_api_version(api_version):
    """The generation of a document's ``apiVersion`` ('skyhook.nvidia.com/v1alpha1', 'nodewright.nvidia.com/v1alpha1')."""
    for generation in GENERATIONS:
        if api_version == generation.api_version:
            return generation
    raise GenerationError('unknown NodeWright apiVersion %r (one of: %s)'
                          % (api_version, ', '.join(g.api_version for g in GENERATIONS)))


# --------------------------------------------------------------------------- the evidence


def _decoded(text):
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return text


def _cr_names(generation, annotations, labels):
    """The CR names the node carries the operator's per-CR keys of ``generation`` for."""
    names = set()
    for key in annotations:
        for stem in generation.node_annotation_prefixes():
            if key.startswith(stem) and len(key) > len(stem):
                names.add(key[len(stem):])
    names.update(key[len(generation.status_prefix):] for key in labels
                 if key.startswith(generation.status_prefix) and len(key) > len(generation.status_prefix))
    return names


def _state_conflict(node_name, annotations, cr_name):
    old_key, new_key = SKYHOOK.node_state_key(cr_name), NODEWRIGHT.node_state_key(cr_name)
    if old_key not in annotations or new_key not in annotations or NODEWRIGHT.version_key(cr_name) in annotations:
        return None
    if _decoded(annotations[old_key]) == _decoded(annotations[new_key]):
        return None
    return ('node %s: %s and %s disagree, and no %s says a v0.18+ operator adopted the node (so neither copy is known to '
            'be current): remove the stale one, or set nodewright_api' % (node_name, old_key, new_key, NODEWRIGHT.version_key(cr_name)))


def node_key_evidence(nodes, cr_name=None):
    """What the nodes' own keys say, from nodes the caller already has: ``(node_prefixes, conflicts)``.

    ``node_prefixes``: {node name: sorted prefixes} under which the node carries the operator's per-CR keys of
    ``cr_name`` (of any CR when None): a ``nodeState_``, ``status_``, ``version_``, ``cordon_``, ``drainStart_`` or
    ``drainBlocked_`` annotation, or the ``status_`` label (zz.migration.0.18.0.go @8127a97c). Other keys under a prefix
    are not counted: users put their own there (a ``nodewright.nvidia.com/quickstart`` label).

    ``conflicts``: one message per node and CR whose ``skyhook.nvidia.com/nodeState_<cr>`` and
    ``nodewright.nvidia.com/nodeState_<cr>`` disagree (as JSON) while the node has no
    ``nodewright.nvidia.com/version_<cr>``. With that key the v0.18+ operator has adopted the node
    (internal/wrapper/node.go Migrate) and the legacy copy is the rollback window's, stale by design: not a conflict.
    """
    node_prefixes, conflicts = {}, []
    for node in nodes or ():
        meta = node.get('metadata') or {}
        name = meta.get('name') or '?'
        annotations, labels = meta.get('annotations') or {}, meta.get('labels') or {}
        found = dict((g.prefix, _cr_names(g, annotations, labels)) for g in GENERATIONS)
        if cr_name is not None:
            found = dict((prefix, names & set([cr_name])) for prefix, names in found.items())
        node_prefixes[name] = sorted(prefix for prefix, names in found.items() if names)
        for both in sorted(found[SKYHOOK.prefix] & found[NODEWRIGHT.prefix]):
            conflict = _state_conflict(name, annotations, both)
            if conflict:
                conflicts.append(conflict)
    return node_prefixes, conflicts


def object_evidence(docs):
    """{name: the mirrored-from stamp or None} of NodeWright objects (as the API returns them)."""
    return dict(((d.get('metadata') or {}).get('name'), ((d.get('metadata') or {}).get('annotations') or {}).get(
        NODEWRIGHT.mirrored_from_annotation)) for d in docs or ())


def evidence(served, cr_name=None, nodes=None, nodewright_objects=None, leases=None, unread=None):
    """The evidence ``choose`` reads, as a dict.

    ``served``: {group: bool}, whether the API server serves the CR plural of each group's v1alpha1 (discovery).
    ``cr_name``: the CR the decision is for (None: any). ``nodes``: the node documents the caller has (its CR's
    nodes; None: none looked at). ``nodewright_objects``: {name: mirrored-from stamp or None} (object_evidence) of
    the NodeWright objects looked at (None: not looked up). ``leases``: the ``(namespace, name)`` operator leases that
    exist among those looked up (None: not looked up). ``unread``: what could not be read (a refused lease GET).
    """
    node_prefixes, conflicts = node_key_evidence(nodes, cr_name) if nodes is not None else (None, [])
    return {
        'served': dict(served or {}),
        'cr_name': cr_name,
        'nodes': None if nodes is None else len(nodes),
        'node_prefixes': node_prefixes,
        'conflicts': conflicts,
        'nodewright_objects': None if nodewright_objects is None else dict(nodewright_objects),
        'leases': None if leases is None else sorted(tuple(ref) for ref in leases),
        'unread': list(unread or ()),
    }


# --------------------------------------------------------------------------- the choice


def _served(evidence):
    served = evidence.get('served') or {}
    for generation in GENERATIONS:
        if not isinstance(served.get(generation.group), bool):
            raise GenerationError('the evidence must say whether %s is served (True or False), not %r'
                                  % (generation.describe(), served.get(generation.group)))
    return served


def _names(names, limit=3):
    names = sorted(names)
    return ', '.join(names[:limit]) + (' and %d more' % (len(names) - limit) if len(names) > limit else '')


def _v018_signs(evidence):
    """What says a v0.18+ operator works the cluster: its per-CR node keys, its NodeWright objects, its leases."""
    signs = []
    cr_keys = '%s/*_%s keys' % (NODEWRIGHT.prefix, evidence.get('cr_name')) if evidence.get('cr_name') else '%s/* keys' % NODEWRIGHT.prefix
    nodes = [n for n, prefixes in (evidence.get('node_prefixes') or {}).items() if NODEWRIGHT.prefix in prefixes]
    if nodes:
        signs.append('node %s carr%s the operator\'s %s' % (_names(nodes), 'ies' if len(nodes) == 1 else 'y', cr_keys))
    objects = evidence.get('nodewright_objects') or {}
    mirrored = [name for name, source in objects.items() if source]
    if mirrored:
        signs.append('NodeWright %s mirrored from the legacy group (%s)' % (_names(mirrored), NODEWRIGHT.mirrored_from_annotation))
    native = [name for name, source in objects.items() if not source]
    if native:
        signs.append('NodeWright %s made in the new group' % _names(native))
    leases = ['%s/%s' % ref for ref in evidence.get('leases') or () if ref in NODEWRIGHT.lease_refs()]
    if leases:
        signs.append('lease %s (the v0.18+ default namespace)' % _names(leases))
    return signs


def _absent(evidence):
    """Why no v0.18+ operator is evident: what was looked at and found nothing, what was not looked at."""
    cr_name = evidence.get('cr_name')
    parts = []
    if evidence.get('nodes') is None:
        parts.append('no nodes looked at')
    else:
        count = evidence['nodes']
        for_cr = ' for %s' % cr_name if cr_name else ''
        parts.append('no %s keys%s on %d node%s' % (NODEWRIGHT.prefix, for_cr, count, '' if count == 1 else 's'))
    if evidence.get('nodewright_objects') is None:
        parts.append('NodeWright objects not looked up')
    else:
        parts.append('no NodeWright %s' % cr_name if cr_name else 'no NodeWright object')
    if evidence.get('leases') is None:
        parts.append('leases not looked up')
    else:
        parts.append('no operator lease in namespace %s' % NODEWRIGHT.default_namespace)
        early = ['%s/%s' % ref for ref in evidence['leases'] if ref[1] == _BOOTSTRAP_LEASE]
        if early:
            parts.append('lease %s says v0.16.1 or later, not v0.18' % _names(early))
    parts.extend('could not read %s' % what for what in evidence.get('unread') or ())
    return ', '.join(parts)


def decided(option, evidence):
    """Whether more evidence (NodeWright objects, leases) could still change ``choose``'s answer (False: ask on)."""
    if option != AUTO or evidence.get('conflicts'):
        return True
    served = evidence.get('served') or {}
    if not (served.get(SKYHOOK.group) is True and served.get(NODEWRIGHT.group) is True):
        return True
    return bool(_v018_signs(evidence))


def choose(option, evidence):
    """The generation for a cluster and a one-line reason naming the evidence: ``(Generation, reason)``.

    ``option`` is ``nodewright_api``: ``auto``, ``skyhook`` or ``nodewright``; ``evidence`` is what ``evidence()``
    (or ``kube.Kube.generation_evidence``) builds. The rules:

    1. An explicit ``skyhook`` or ``nodewright`` wins, when the cluster serves that group's CR; when it does not,
       GenerationError names the missing CRD (``skyhooks.skyhook.nvidia.com`` / ``nodewrights.nodewright.nvidia.com``).
       Only ``served`` is read then.
    2. ``auto``, conflicting node keys (node_key_evidence): GenerationError naming each node and its two keys.
    3. ``auto``, only one group served: that one (v0.21 drops the legacy group; a v0.15-v0.17 cluster has only it).
    4. ``auto``, both served (a v0.18+ chart installs both CRDs, and keeps them when uninstalled):
       NODEWRIGHT when a v0.18+ operator is evident (``_v018_signs``: a node carrying the operator's
       ``nodewright.nvidia.com/*_<cr>`` keys, a NodeWright object (mirrored: ``nodewright.nvidia.com/mirrored-from``,
       or made in the new group), or an operator lease in the v0.18+ default namespace ``nodewright``), else SKYHOOK.
       The lease ``nodewright-webhook-bootstrap.nvidia.com`` alone elsewhere is not a sign: v0.16.1 has it too.
    5. ``auto``, neither served: SKYHOOK, "no NodeWright CRD served" (the collection's contract on a bare cluster).
    """
    if option not in OPTIONS:
        raise GenerationError('nodewright_api must be one of %s, not %r' % (', '.join(OPTIONS), option))
    served = _served(evidence)
    if option != AUTO:
        generation = by_name(option)
        if not served[generation.group]:
            other = NODEWRIGHT if generation is SKYHOOK else SKYHOOK
            hint = ' (it serves %s: nodewright_api=%s or auto)' % (other.describe(), other.name) if served[other.group] else ''
            raise GenerationError('nodewright_api=%s, but the cluster does not serve %s: the CRD %s is missing%s'
                                  % (option, generation.describe(), generation.crd_name, hint))
        return generation, 'nodewright_api=%s: the cluster serves %s' % (option, generation.describe())
    if evidence.get('conflicts'):
        raise GenerationError('nodewright_api=auto cannot tell the generation: %s' % '; '.join(evidence['conflicts']))
    old, new = served[SKYHOOK.group], served[NODEWRIGHT.group]
    if not old and not new:
        return SKYHOOK, 'auto: no NodeWright CRD served (neither %s nor %s): %s' % (SKYHOOK.crd_name, NODEWRIGHT.crd_name, SKYHOOK.name)
    if old != new:
        generation = SKYHOOK if old else NODEWRIGHT
        return generation, 'auto: only %s is served: %s' % (generation.describe(), generation.name)
    signs = _v018_signs(evidence)
    if signs:
        return NODEWRIGHT, 'auto: both groups are served and a v0.18+ operator is evident (%s): nodewright' % '; '.join(signs)
    return SKYHOOK, 'auto: both groups are served and no v0.18+ operator is evident (%s): skyhook' % _absent(evidence)
