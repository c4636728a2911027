# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""The NodeWright model: the Skyhook / NodeWright CR and the DeploymentPolicy, loaded and defaulted as the operator has them.

* loading: the documents of a YAML (or JSON) stream, which are CRs and which policies, the one CR of a file
  (``select_cr``),
* defaulting: ``normalise_cr``, a CR's spec as the API server stores it (the CRD's defaults, cr_schema),
* the types: ``NodeWrightCR``, ``Package``, ``DeploymentPolicy``, ``CompartmentSpec`` and ``Strategy``, with the
  operator's defaults (the drain config, the compartment of an interruptionBudget), and what their fields mean (a
  configInterrupts key is a glob, an image reference has a repository, a tag and a digest).

A ``nodewright.nvidia.com/v1alpha1`` NodeWright is v0.20's: its image is a bare repository and it has fields a
``skyhook.nvidia.com/v1alpha1`` Skyhook (v0.15's) has not (drainConfig, stageTimeout, runtimeRequiredCordonAfter).

Validation (the CRD schema and the admission webhooks' rules) and the builders of these types from a valid
document are cr_validation's: it imports this module, never the reverse.

No I/O and no ``kubernetes`` import: callers pass dicts (or YAML text).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import re

from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_schema
from ansible_collections.nodewright.bridge.plugins.module_utils.model import duration
from ansible_collections.nodewright.bridge.plugins.module_utils.model.constants import (
    NODEWRIGHT_API_VERSION, NODEWRIGHT_GROUP, SKYHOOK_API_VERSION, SKYHOOK_GROUP, VERSION)
from ansible_collections.nodewright.bridge.plugins.module_utils.model import api_generation

try:
    import yaml
    HAS_YAML = True
except ImportError:  # pragma: no cover - PyYAML ships with ansible-core
    yaml = None
    HAS_YAML = False

CR_KINDS = {SKYHOOK_API_VERSION: 'Skyhook', NODEWRIGHT_API_VERSION: 'NodeWright'}
POLICY_API_VERSIONS = (SKYHOOK_API_VERSION, NODEWRIGHT_API_VERSION)
DEFAULT_COMPARTMENT = '__default__'
STRATEGY_TYPES = ('fixed', 'linear', 'exponential')


class CRValidationError(ValueError):
    """A CR or policy failed validation; ``errors`` lists every problem by field path."""

    def __init__(self, what, errors):
        self.what = what
        self.errors = list(errors)
        super(CRValidationError, self).__init__(
            '%s is invalid (%d problem%s):\n  - %s' % (
                what, len(self.errors), '' if len(self.errors) == 1 else 's', '\n  - '.join(self.errors)))


# --------------------------------------------------------------------------- loading


def load_yaml_documents(text, source='<input>'):
    """Every non-empty document of a YAML (or JSON) stream, as dicts."""
    if not HAS_YAML:
        raise CRValidationError(source, ['PyYAML is required to read YAML'])
    try:
        docs = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as exc:
        raise CRValidationError(source, ['not valid YAML: %s' % exc])
    bad = [i for i, d in enumerate(docs) if not isinstance(d, dict)]
    if bad:
        raise CRValidationError(source, ['document %d: must be a mapping, got %s' % (i + 1, type(docs[i]).__name__)
                                         for i in bad])
    return docs


def has_cr_kind(doc):
    """A document whose kind is a CR's (Skyhook or NodeWright), whatever its apiVersion: the filters pick
    CRs out of a file by kind, and rollout_plan then names a wrong apiVersion (``is_cr_document`` is the full check)."""
    return isinstance(doc, dict) and doc.get('kind') in CR_KINDS.values()


def is_cr_document(doc):
    return isinstance(doc, dict) and CR_KINDS.get(doc.get('apiVersion')) == doc.get('kind')


def is_nodewright_group(doc):
    """A document of the nodewright.nvidia.com group (served from v0.18; validated as v0.20's CRD and webhook)."""
    return isinstance(doc, dict) and cr_schema.spec_schema(doc.get('apiVersion')) is cr_schema.NODEWRIGHT_SPEC


def is_policy_document(doc):
    return isinstance(doc, dict) and doc.get('kind') == 'DeploymentPolicy'


def split_documents(docs, source='<input>'):
    """Sort documents into (CR docs, policy docs); anything else is an error."""
    crs, policies, errors = [], [], []
    for idx, doc in enumerate(docs):
        if is_cr_document(doc):
            crs.append(doc)
        elif is_policy_document(doc):
            policies.append(doc)
        else:
            errors.append('document %d: apiVersion %r kind %r is not a Skyhook (%s/%s), NodeWright (%s/%s) '
                          'or DeploymentPolicy' % (idx + 1, doc.get('apiVersion'), doc.get('kind'),
                                                   SKYHOOK_GROUP, VERSION, NODEWRIGHT_GROUP, VERSION))
    if errors:
        raise CRValidationError(source, errors)
    return crs, policies


def _expand_lists(docs):
    """Documents with any ``kind: List`` (``kubectl get skyhooks -o yaml``) replaced by its items."""
    expanded = []
    for doc in docs:
        if isinstance(doc, dict) and isinstance(doc.get('items'), list) and str(doc.get('kind', '')).endswith('List'):
            expanded.extend(doc['items'])
        else:
            expanded.append(doc)
    return expanded


def select_cr(docs, name=None, source='cr'):
    """``(CR document, DeploymentPolicy documents)`` out of a file's documents.

    ``name`` picks the CR when the file holds several; a file with several CRs needs it.
    """
    crs, policies = split_documents(_expand_lists(docs), source)
    if name:
        crs = [d for d in crs if (d.get('metadata') or {}).get('name') == name]
        if not crs:
            raise CRValidationError(source, ['no Skyhook or NodeWright named %r' % name])
    if not crs:
        raise CRValidationError(source, ['no Skyhook or NodeWright document found'])
    if len(crs) > 1:
        names = ', '.join(repr((d.get('metadata') or {}).get('name')) for d in crs)
        raise CRValidationError(source, ['holds several CRs (%s); choose one with cr_name' % names])
    return crs[0], policies


# --------------------------------------------------------------------------- defaulting


def normalise_cr(doc):
    """A copy of a CR document with its spec as the API server would store it (nulls pruned, defaults set), by the
    schema of its group (cr_schema.spec_schema)."""
    result = dict(doc)
    spec = doc.get('spec')
    result['spec'] = cr_schema.apply_defaults({} if spec is None else spec, cr_schema.spec_schema(doc.get('apiVersion')))
    return result


# --------------------------------------------------------------------------- model


class Strategy(object):
    """A rollout strategy with the operator's defaults filled in."""

    def __init__(self, kind, params):
        self.type = kind
        self.initial_batch = params.get('initialBatch', 1)
        self.batch_threshold = params.get('batchThreshold', 100)
        self.safety_limit = params.get('safetyLimit', 50)
        self.failure_threshold = params.get('failureThreshold')  # None: never stop
        self.delta = params.get('delta', 1) if kind == 'linear' else None
        self.growth_factor = params.get('growthFactor', 2) if kind == 'exponential' else None

    @classmethod
    def from_spec(cls, spec):
        if not spec:
            return None
        for kind in STRATEGY_TYPES:
            if spec.get(kind) is not None:
                return cls(kind, spec[kind] or {})
        return None

    def to_dict(self):
        params = {'initialBatch': self.initial_batch, 'batchThreshold': self.batch_threshold,
                  'safetyLimit': self.safety_limit, 'failureThreshold': self.failure_threshold}
        if self.type == 'linear':
            params['delta'] = self.delta
        if self.type == 'exponential':
            params['growthFactor'] = self.growth_factor
        return {self.type: params}


class CompartmentSpec(object):
    """One compartment of a policy (or the default / legacy-budget compartment)."""

    def __init__(self, name, selector, budget, strategy):
        self.name = name
        self.selector = selector  # None: the default compartment (takes the rest)
        self.budget = dict(budget or {})
        self.strategy = strategy  # Strategy or None

    def to_dict(self):
        return {'name': self.name, 'selector': self.selector, 'budget': self.budget,
                'strategy': self.strategy.to_dict() if self.strategy else None}


class DeploymentPolicy(object):
    def __init__(self, name, default, compartments, reset_on_completion=True):
        self.name = name
        self.default = default
        self.compartments = compartments
        self.reset_batch_state_on_completion = reset_on_completion

    def to_dict(self):
        return {'name': self.name, 'default': self.default.to_dict(),
                'compartments': [c.to_dict() for c in self.compartments],
                'resetBatchStateOnCompletion': self.reset_batch_state_on_completion}


class Package(object):
    """A package of a CR, defaulted and with the image tag handled as the operator does.

    ``nodewright``: a package of a nodewright.nvidia.com NodeWright (v0.20), whose image is a bare repository
    (``localhost:5000/org/pkg`` keeps its port) and which may carry a ``stageTimeout``.
    """

    def __init__(self, key, spec, nodewright=False):
        self.name = spec.get('name') or key
        self.version = spec['version']
        # A Skyhook: the operator cuts the image at its first ':' (its webhook refuses a tag other than the
        # version, its controller drops any tag: image_tag_problems). A NodeWright's image has neither tag nor
        # digest (its webhook refuses both) and is used whole. Then <image>:<version> or <image>@<containerSHA>.
        self.image = spec['image'] if nodewright else spec['image'].split(':', 1)[0]
        self.container_sha = spec.get('containerSHA') or ''
        self.agent_image_override = spec.get('agentImageOverride') or ''
        self.interrupt = _interrupt(spec.get('interrupt'))
        self.depends_on = dict(spec.get('dependsOn') or {})
        self.config_interrupts = dict((k, _interrupt(v)) for k, v in (spec.get('configInterrupts') or {}).items())
        self.config_map = dict(spec.get('configMap') or {})
        self.env = copy.deepcopy(spec.get('env') or [])
        self.resources = dict(spec.get('resources') or {}) or None
        self.graceful_shutdown = spec.get('gracefulShutdown')
        # stageTimeout (v0.20): None uses the operator's JOB_STAGE_TIMEOUT (1h); else whole seconds rounded up as
        # job_builder.go's activeDeadlineSeconds, 0 removing the time bound. Nothing acts on it yet.
        self.stage_timeout_text = spec.get('stageTimeout') if nodewright else None
        self.stage_timeout = _ceil_seconds(self.stage_timeout_text)
        uninstall = spec.get('uninstall') or {}
        self.uninstall_enabled = bool(uninstall.get('enabled', False))
        self.uninstall_apply = bool(uninstall.get('apply', False))
        # the operator's key for this package in node state ("name|version")
        self.unique_name = '%s|%s' % (self.name, self.version)

    @property
    def image_ref(self):
        if self.container_sha:
            return '%s@%s' % (self.image, self.container_sha)
        return '%s:%s' % (self.image, self.version)

    @property
    def is_uninstalling(self):
        return self.uninstall_enabled and self.uninstall_apply

    def to_dict(self):
        return {'name': self.name, 'version': self.version, 'image': self.image, 'image_ref': self.image_ref,
                'containerSHA': self.container_sha, 'agentImageOverride': self.agent_image_override,
                'interrupt': self.interrupt, 'dependsOn': self.depends_on,
                'configInterrupts': self.config_interrupts, 'configMap': self.config_map, 'env': self.env,
                'resources': self.resources, 'gracefulShutdown': self.graceful_shutdown,
                'stageTimeout': self.stage_timeout_text,
                'uninstall': {'enabled': self.uninstall_enabled, 'apply': self.uninstall_apply}}


def _interrupt(spec):
    if not spec:
        return None
    return {'type': spec['type'], 'services': list(spec.get('services') or [])}


def _ceil_seconds(text):
    """Whole seconds (rounded up) of a validated Go duration string; None for None."""
    return None if text is None else duration.ceil_seconds(duration.parse_go_duration(text))


def _glob_to_regex(pattern):
    """Go filepath.Match pattern as a regex: '*' and '?' never cross '/', '[^..]' negates."""
    out, i = [], 0
    while i < len(pattern):
        char = pattern[i]
        if char == '*':
            out.append('[^/]*')
        elif char == '?':
            out.append('[^/]')
        elif char == '\\' and i + 1 < len(pattern):
            i += 1
            out.append(re.escape(pattern[i]))
        elif char == '[':
            end = pattern.find(']', i + 1)
            if end < 0:
                raise ValueError('unterminated character class in %r' % pattern)
            body = pattern[i + 1:end]
            if body.startswith('^'):
                body = '^' + body[1:].replace('\\', '\\\\')
            else:
                body = body.replace('\\', '\\\\').replace('^', '\\^')
            out.append('[%s]' % body)
            i = end
        else:
            out.append(re.escape(char))
        i += 1
    return re.compile('^' + ''.join(out) + r'\Z')


def glob_match(pattern, name):
    """Go's filepath.Match(pattern, name) for configInterrupts keys; False for a bad pattern."""
    try:
        return bool(_glob_to_regex(pattern).match(name))
    except (ValueError, re.error):
        return False


def split_image_reference(image):
    """``(repository, tag, digest)`` of an image reference as NVIDIA/nodewright nodewright_types.go @90d9979d
    ``splitImageReference``: a trailing ``@digest`` first, then a ``:tag`` after the last '/' (a colon before it is a
    registry port). tag and digest are None without their separator, '' after an empty one (``repo:``)."""
    repository, tag, digest = image, None, None
    at = repository.rfind('@')
    if at >= 0:
        repository, digest = repository[:at], repository[at + 1:]
    colon = repository.rfind(':')
    if colon > repository.rfind('/'):
        repository, tag = repository[:colon], repository[colon + 1:]
    return repository, tag, digest


DRAIN_DEFAULTS = {'deleteEmptyDirData': True, 'disableEviction': False, 'force': True, 'ignoreDaemonSets': True}


def drain_config(value):
    """``spec.drainConfig`` as the operator applies it (drain.OptionsFromConfig, NVIDIA/nodewright
    operator/internal/drain/drain.go @1211486a): a boolean unset or null takes drain.DefaultOptions' value
    (unset drainConfig: every default, the drain of v0.15). ``timeout`` and ``gracePeriod`` stay as given
    (None when unset or null), with ``timeoutSeconds`` (rounded up; None when unset or 0: no bound, as
    drain.TimedOut) and ``gracePeriodSeconds`` (rounded up as OptionsFromConfig; None: each pod's own)."""
    given = value if isinstance(value, dict) else {}
    result = {}
    for key, default in DRAIN_DEFAULTS.items():
        result[key] = default if given.get(key) is None else bool(given[key])
    result['timeout'] = given.get('timeout')
    result['gracePeriod'] = given.get('gracePeriod')
    result['timeoutSeconds'] = _ceil_seconds(result['timeout']) or None
    result['gracePeriodSeconds'] = _ceil_seconds(result['gracePeriod'])
    return result


def legacy_compartment(budget, node_count):
    """The synthetic fixed compartment the operator builds from an ``interruptionBudget``.

    No budget means 100%. Its fixed batch is the budget's ceiling over all the nodes, at
    least 1 (so ``count: 0`` and ``percent: 0`` still move one node at a time).
    """
    budget = dict(budget or {}) or {'percent': 100}
    if budget.get('count') is not None:
        initial = max(1, min(node_count, budget['count']))
    elif node_count > 0:
        initial = max(1, node_count * budget['percent'] // 100)
    else:
        initial = 1
    return CompartmentSpec(DEFAULT_COMPARTMENT, None, budget, Strategy('fixed', {'initialBatch': initial}))


class NodeWrightCR(object):
    """A validated, defaulted Skyhook or NodeWright CR."""

    def __init__(self, doc):
        meta = doc.get('metadata') or {}
        spec = doc.get('spec') or {}
        self.api_version = doc['apiVersion']
        self.kind = doc['kind']
        self.name = meta['name']
        self.annotations = dict(meta.get('annotations') or {})
        self.labels = dict(meta.get('labels') or {})
        self.serial = bool(spec.get('serial', False))
        self.node_selector = spec.get('nodeSelectors') or {}
        self.pod_non_interrupt_labels = spec.get('podNonInterruptLabels') or {}
        self.deployment_policy = spec.get('deploymentPolicy') or ''
        budget = spec.get('interruptionBudget') or {}
        self.interruption_budget = dict((k, v) for k, v in budget.items() if v is not None)
        self.additional_tolerations = copy.deepcopy(spec.get('additionalTolerations') or [])
        self.runtime_required = bool(spec.get('runtimeRequired', False))
        nodewright = is_nodewright_group(doc)
        # v0.20 (a NodeWright only; a Skyhook has the defaults): nothing acts on these yet. The operator respects
        # runtimeRequiredCordonAfter only with runtimeRequired (its webhook accepts it alone).
        self.runtime_required_cordon_after = bool(spec.get('runtimeRequiredCordonAfter', False)) if nodewright else False
        self.drain_config = drain_config(spec.get('drainConfig') if nodewright else None)
        self.auto_taint_new_nodes = bool(spec.get('autoTaintNewNodes', False))
        self.priority = spec.get('priority', 200)
        self.sequencing = spec.get('sequencing', 'node')
        options = spec.get('deploymentPolicyOptions') or {}
        self.reset_batch_state_on_completion = options.get('resetBatchStateOnCompletion', True)
        self.packages = dict((key, Package(key, pkg, nodewright)) for key, pkg in (spec.get('packages') or {}).items())
        # A CR deleted while a finalizer holds it (the operator's) first uninstalls every package with
        # uninstall.enabled that a node still has (HasUninstallWork's finalizer case; cr_deletion.py)
        self.deleting = bool(meta.get('deletionTimestamp'))
        if self.deleting:
            for pkg in self.packages.values():
                if pkg.uninstall_enabled:
                    pkg.uninstall_apply = True
        status = doc.get('status') or {}
        # Keys of each package's configMap that changed since the nodes last applied it
        # (the operator keeps them in status.configUpdates).
        self.config_updates = dict((k, list(v or [])) for k, v in (status.get('configUpdates') or {}).items())
        # The status the CR last recorded per node (status.nodeStatus): it outlives `kubectl skyhook
        # reset`, which drops the node's own records, cordon annotation included.
        self.node_statuses = dict((k, v) for k, v in (status.get('nodeStatus') or {}).items() if isinstance(v, str))

    @property
    def api_gen(self):
        """The api_generation.Generation of the CR's own group: its annotations (pause, disable) are under its prefix."""
        return api_generation.by_api_version(self.api_version)

    @property
    def paused(self):
        return self.annotations.get(self.api_gen.pause_annotation) == 'true'

    @property
    def disabled(self):
        return self.annotations.get(self.api_gen.disable_annotation) == 'true'

    def legacy_compartment(self, node_count):
        """The synthetic fixed compartment the operator builds from this CR's ``interruptionBudget``."""
        return legacy_compartment(self.interruption_budget, node_count)

    def to_dict(self):
        return {'apiVersion': self.api_version, 'kind': self.kind, 'name': self.name,
                'serial': self.serial, 'nodeSelectors': self.node_selector,
                'podNonInterruptLabels': self.pod_non_interrupt_labels,
                'deploymentPolicy': self.deployment_policy, 'interruptionBudget': self.interruption_budget,
                'additionalTolerations': self.additional_tolerations, 'runtimeRequired': self.runtime_required,
                'runtimeRequiredCordonAfter': self.runtime_required_cordon_after, 'drainConfig': self.drain_config,
                'autoTaintNewNodes': self.auto_taint_new_nodes, 'priority': self.priority,
                'sequencing': self.sequencing, 'paused': self.paused, 'disabled': self.disabled,
                'packages': dict((k, p.to_dict()) for k, p in self.packages.items())}
