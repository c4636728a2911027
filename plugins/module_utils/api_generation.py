# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""The two generations of the NodeWright operator's contract, each one immutable value, and the choice for a cluster.

* ``SKYHOOK``: the v0.15 contract the collection speaks today (API group and key prefix ``skyhook.nvidia.com``),
  value for value what ``constants.py`` says (it derives its names from here).
* ``NODEWRIGHT``: the v0.18-v0.20 contract (API group and key prefix ``nodewright.nvidia.com``).

Nothing chooses between them yet: every module still speaks ``SKYHOOK``.

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

    @property
    def policy_crd_name(self):
        return '%s.%s' % (self.policy_plural, self.group)

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


def by_group(group):
    for generation in GENERATIONS:
        if group == generation.group:
            return generation
    raise GenerationError('unknown NodeWright API group %r (one of: %s)' % (group, ', '.join(g.group for g in GENERATIONS)))
