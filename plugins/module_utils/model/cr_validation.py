# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""Whether a Skyhook / NodeWright CR or a DeploymentPolicy is one the operator admits, and cr_model's types built from one.

Validation is the CRD schema (cr_schema) plus every rule of the operator's admission
webhooks (skyhook_webhook.go, deployment_policy_webhook.go), with a few checks the
operator only discovers later, at reconcile time (Go duration syntax, the annotation
key length limit for the CR name). All problems are collected and reported together,
each prefixed with its field path.

The two groups are validated as their own CRD and webhook: a ``skyhook.nvidia.com/v1alpha1``
Skyhook as v0.15's, a ``nodewright.nvidia.com/v1alpha1`` NodeWright as v0.20's (the schema
cr_schema.spec_schema picks; the webhook rules of NVIDIA/nodewright
``operator/api/nodewright/v1alpha1/nodewright_webhook.go`` @5a158dbc and ``nodewright_types.go``
@90d9979d: drainConfig and stageTimeout durations, a bare image). A field only the new group has
is refused on a Skyhook with the group it needs.

``build_cr`` and ``build_policy`` are the way from a document to the model: they validate it (CRValidationError
lists every problem), then build cr_model's types from its defaulted form. They live here so that the model
imports no validation: this module imports cr_model, never the reverse.

No I/O and no ``kubernetes`` import: callers pass dicts.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_schema
from ansible_collections.nodewright.bridge.plugins.module_utils.model import duration
from ansible_collections.nodewright.bridge.plugins.module_utils.model.constants import (
    NODE_STATE_PREFIX, NODEWRIGHT_API_VERSION, SKYHOOK_API_VERSION, TAINT_EFFECTS)
from ansible_collections.nodewright.bridge.plugins.module_utils.model.cr_model import (
    CR_KINDS, DEFAULT_COMPARTMENT, POLICY_API_VERSIONS, STRATEGY_TYPES, CompartmentSpec, CRValidationError,
    DeploymentPolicy, NodeWrightCR, Strategy, glob_match, is_cr_document, is_nodewright_group, normalise_cr,
    split_image_reference)
from ansible_collections.nodewright.bridge.plugins.module_utils.model import label_selector
from ansible_collections.nodewright.bridge.plugins.module_utils.model import semver
from ansible_collections.nodewright.bridge.plugins.module_utils.model.quantity import parse_quantity, is_go_duration

# The operator keys node annotations as skyhook.nvidia.com/nodeState_<cr name>; the part
# after the prefix is a label-key name of at most 63 characters.
_LONGEST_KEY_STEM = NODE_STATE_PREFIX.split('/', 1)[1]
_DNS_SUBDOMAIN = re.compile(r'^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z')
_PACKAGE_NAME = re.compile(cr_schema.go_pattern(cr_schema.PACKAGE_NAME_PATTERN))
_TOLERATION_OPERATORS = ('Exists', 'Equal')


# --------------------------------------------------------------------------- validation


def _budget_errors(budget, path):
    if not isinstance(budget, dict):
        return []
    has_percent, has_count = budget.get('percent') is not None, budget.get('count') is not None
    if not has_percent and not has_count:
        return ['%s: exactly one of percent or count must be set' % path]
    if has_percent and has_count:
        return ['%s: percent and count are mutually exclusive' % path]
    return []


def _strategy_errors(strategy, path):
    if not isinstance(strategy, dict):
        return []
    present = [k for k in STRATEGY_TYPES if strategy.get(k) is not None]
    if len(present) != 1:
        return ['%s: exactly one of fixed, linear, or exponential must be set%s' % (
            path, ' (got %s)' % ', '.join(present) if present else '')]
    return []


def _package_errors(key, pkg, all_packages, nodewright=False):
    """The webhook's rules for one package; ``nodewright``: a NodeWright's (v0.20), whose CRD pattern refuses an
    empty image itself."""
    path = 'spec.packages.%s' % key
    errors = []
    if not _PACKAGE_NAME.match(key) or len(key) > 43:
        errors.append('%s: package name %r is not valid, must match %s' % (path, key, cr_schema.PACKAGE_NAME_PATTERN))
    if pkg.get('name') not in (None, '', key):
        errors.append("%s.name: %r differs from the map key %r; do not set the name in the package's definition"
                      % (path, pkg.get('name'), key))
    version = pkg.get('version')
    if isinstance(version, str) and not semver.is_valid(version):
        errors.append('%s.version: %r is not a valid semantic version (for example 1.2.3)' % (path, version))
    if pkg.get('image') == '' and not nodewright:
        errors.append('%s.image: must not be empty' % path)
    config_map = pkg.get('configMap') if isinstance(pkg.get('configMap'), dict) else {}
    config_interrupts = pkg.get('configInterrupts') if isinstance(pkg.get('configInterrupts'), dict) else {}
    for pattern in sorted(config_interrupts):
        if pattern in config_map:
            continue
        if '*' in pattern:
            if not any(glob_match(pattern, k) for k in config_map):
                errors.append('%s.configInterrupts.%s: glob %r does not match any configMap key'
                              % (path, pattern, pattern))
        else:
            errors.append('%s.configInterrupts.%s: no configMap key %r' % (path, pattern, pattern))
    errors.extend(_resource_errors(pkg.get('resources'), path + '.resources'))
    uninstall = pkg.get('uninstall')
    if isinstance(uninstall, dict) and uninstall.get('apply') is True and uninstall.get('enabled') is not True:
        errors.append('%s.uninstall.apply: requires uninstall.enabled to be true' % path)
    graceful = pkg.get('gracefulShutdown')
    if isinstance(graceful, str) and not is_go_duration(graceful):
        errors.append('%s.gracefulShutdown: %r is not a duration such as 30s or 1m30s' % (path, graceful))
    depends_on = pkg.get('dependsOn') if isinstance(pkg.get('dependsOn'), dict) else {}
    for dep in sorted(depends_on):
        dep_version = depends_on[dep]
        target = all_packages.get(dep)
        if dep_version == '':
            errors.append('%s.dependsOn.%s: version is empty' % (path, dep))
        elif not isinstance(target, dict):
            errors.append('%s.dependsOn.%s: package %r is not in spec.packages' % (path, dep, dep))
        elif target.get('version') != dep_version:
            errors.append('%s.dependsOn.%s: needs %s version %r but spec.packages.%s.version is %r'
                          % (path, dep, dep, dep_version, dep, target.get('version')))
    return errors


def _resource_errors(res, path):
    if not isinstance(res, dict):
        return []
    keys = ('cpuRequest', 'cpuLimit', 'memoryRequest', 'memoryLimit')
    values = {}
    for key in keys:
        raw = res.get(key)
        if raw is None:
            continue
        try:
            values[key] = parse_quantity(raw)
        except ValueError:
            return []  # the schema check already reported it
    set_keys = [k for k in keys if values.get(k, 0) != 0]
    if set_keys and len(set_keys) != len(keys):
        missing = [k for k in keys if k not in set_keys]
        return ['%s: if any resource override is set, all of cpuRequest, cpuLimit, memoryRequest, memoryLimit '
                'must be set (missing %s)' % (path, ', '.join(missing))]
    if not set_keys:
        return []
    errors = []
    if values['cpuLimit'] < values['cpuRequest']:
        errors.append('%s.cpuLimit: %s must be >= cpuRequest (%s)' % (path, res['cpuLimit'], res['cpuRequest']))
    if values['memoryLimit'] < values['memoryRequest']:
        errors.append('%s.memoryLimit: %s must be >= memoryRequest (%s)' % (path, res['memoryLimit'], res['memoryRequest']))
    negative = [k for k in keys if values[k] <= 0]
    if negative:
        errors.append('%s: all resource values must be positive (%s)' % (path, ', '.join(negative)))
    return errors


def _cycle_errors(packages):
    """dependsOn cycles, each reported once as a -> b -> a."""
    graph = {}
    for key, pkg in packages.items():
        deps = pkg.get('dependsOn') if isinstance(pkg, dict) and isinstance(pkg.get('dependsOn'), dict) else {}
        graph[key] = sorted(d for d in deps if d in packages)
    errors, state, stack = [], {}, []
    reported = set()

    def visit(node):
        state[node] = 'active'
        stack.append(node)
        for dep in graph[node]:
            if state.get(dep) == 'active':
                cycle = stack[stack.index(dep):] + [dep]
                signature = frozenset(cycle)
                if signature not in reported:
                    reported.add(signature)
                    errors.append('spec.packages.%s.dependsOn: dependency cycle %s' % (cycle[0], ' -> '.join(cycle)))
            elif dep not in state:
                visit(dep)
        stack.pop()
        state[node] = 'done'

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return errors


def _metadata_errors(doc, cluster_scoped_name_only=True):
    meta = doc.get('metadata')
    if meta is None:
        return ['metadata.name: required field is missing']
    if not isinstance(meta, dict):
        return ['metadata: must be an object']
    name = meta.get('name')
    if name is None:
        return ['metadata.name: required field is missing']
    if not isinstance(name, str) or not _DNS_SUBDOMAIN.match(name) or len(name) > 253:
        return ['metadata.name: %r must be a lowercase DNS-1123 subdomain' % (name,)]
    errors = []
    if cluster_scoped_name_only and meta.get('namespace'):
        errors.append('metadata.namespace: the resource is cluster-scoped; remove namespace %r' % meta['namespace'])
    for field in ('annotations', 'labels'):
        value = meta.get(field)
        if value is not None and (not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values())):
            errors.append('metadata.%s: must be a map of strings' % field)
    return errors


def _toleration_errors(tolerations):
    errors = []
    if not isinstance(tolerations, list):
        return errors
    for idx, tol in enumerate(tolerations):
        if not isinstance(tol, dict):
            continue
        path = 'spec.additionalTolerations[%d]' % idx
        operator = tol.get('operator')
        if operator not in (None, '') and operator not in _TOLERATION_OPERATORS:
            errors.append('%s.operator: %r is not one of Exists, Equal' % (path, operator))
        if operator == 'Exists' and tol.get('value'):
            errors.append('%s.value: must be empty when operator is Exists' % path)
        effect = tol.get('effect')
        if effect not in (None, '') and effect not in TAINT_EFFECTS:
            errors.append('%s.effect: %r is not one of %s' % (path, effect, ', '.join(TAINT_EFFECTS)))
        # the rules Kubernetes applies when the operator creates the package pods
        if not tol.get('key') and operator != 'Exists':
            errors.append('%s.operator: must be Exists when key is empty' % path)
        if tol.get('tolerationSeconds') is not None and effect != 'NoExecute':
            errors.append('%s.tolerationSeconds: only allowed with effect NoExecute' % path)
    return errors


def cr_name_errors(name, path='name'):
    """Problems with a CR name used outside a CR (module options): DNS name, annotation key length."""
    if not isinstance(name, str) or not _DNS_SUBDOMAIN.match(name) or len(name) > 253:
        return ['%s: %r must be a lowercase DNS-1123 subdomain (a Skyhook / NodeWright CR name)' % (path, name)]
    if len(_LONGEST_KEY_STEM + name) > 63:
        return ['%s: %r is too long: the node annotation %s%s must stay within 63 characters '
                'after the prefix (at most %d characters for the name)'
                % (path, name, NODE_STATE_PREFIX, name, 63 - len(_LONGEST_KEY_STEM))]
    return []


def image_tag_problems(doc):
    """``spec.packages.<key>.image``: the packages whose image carries a tag other than their version, one text
    each. The operator's webhook refuses them; its controller cuts the tag off (``Packages.Images``), so the
    version is the tag whatever the image says. A Skyhook's rule (skyhook_webhook.go @2ff297d4): a NodeWright's
    image takes no tag at all (``image_reference_problems``), so this is empty for one."""
    if is_nodewright_group(doc):
        return []
    spec = doc.get('spec') if isinstance(doc, dict) else None
    packages = spec.get('packages') if isinstance(spec, dict) else None
    problems = []
    for key in sorted(packages) if isinstance(packages, dict) else ():
        pkg = packages[key] if isinstance(packages[key], dict) else {}
        image, version = pkg.get('image'), pkg.get('version')
        if isinstance(image, str) and ':' in image and isinstance(version, str):
            name, tag = image.split(':', 1)
            if tag != version:
                problems.append("spec.packages.%s.image: tag %r of %r does not match the package version %r; leave "
                                "the tag off (the version is the tag)" % (key, tag, name, version))
    return problems


def image_reference_problems(key, image):
    """``spec.packages.<key>.image`` of a NodeWright: an inline tag or digest, which its webhook refuses (the version
    supplies the tag and containerSHA pins the digest; nodewright_webhook.go @5a158dbc). One text, or none."""
    if not isinstance(image, str):
        return []
    repository, tag, digest = split_image_reference(image)
    inline = ['tag %r' % tag] if tag is not None else []
    inline += ['digest %r' % digest] if digest is not None else []
    if not inline:
        return []
    return ["spec.packages.%s.image: %r carries an inline %s; image must be a bare repository (%r): put the version "
            "in version (it supplies the tag) and a digest in containerSHA" % (key, image, ' and '.join(inline), repository)]


def _duration_problems(value, path, hint):
    """A metav1.Duration field of a NodeWright: it must decode (time.ParseDuration) and, as the webhook checks, not
    be negative. Not a string: the schema reported it, or it is unset."""
    if not isinstance(value, str):
        return []
    try:
        nanoseconds = duration.parse_go_duration(value)
    except ValueError as exc:
        return ['%s: %r is not a duration such as 30s or 1m30s (%s)' % (path, value, exc)]
    if nanoseconds < 0:
        return ['%s: %r must be greater than or equal to 0 (%s)' % (path, value, hint)]
    return []


def nodewright_spec_errors(spec):
    """The rules a NodeWright's webhook adds to a Skyhook's (NVIDIA/nodewright nodewright_webhook.go @5a158dbc
    ``Validate``, ``DrainConfig.Validate`` of nodewright_types.go @90d9979d), every one reported: drainConfig.timeout
    and gracePeriod and each package's stageTimeout decode and are not negative; each image is a bare repository.
    runtimeRequiredCordonAfter without runtimeRequired is accepted (the operator ignores it then)."""
    errors = []
    drain = spec.get('drainConfig')
    if isinstance(drain, dict):
        errors.extend(_duration_problems(drain.get('timeout'), 'spec.drainConfig.timeout', 'unset or 0: no timeout'))
        errors.extend(_duration_problems(drain.get('gracePeriod'), 'spec.drainConfig.gracePeriod',
                                         "unset: each pod's terminationGracePeriodSeconds"))
    packages = spec.get('packages')
    for key in sorted(packages) if isinstance(packages, dict) else ():
        pkg = packages[key]
        if isinstance(pkg, dict):
            errors.extend(_duration_problems(pkg.get('stageTimeout'), 'spec.packages.%s.stageTimeout' % key,
                                             'unset: the operator default; 0: no time bound'))
            errors.extend(image_reference_problems(key, pkg.get('image')))
    return errors


def _nodewright_field_errors(spec, schema_errors):
    """A Skyhook's schema errors, each NodeWright-only field's ``unknown field`` named for the group it needs."""
    needs = dict(('%s: unknown field' % path, path)
                 for path in cr_schema.fields_only_in(spec, cr_schema.NODEWRIGHT_SPEC, cr_schema.SKYHOOK_SPEC, 'spec'))
    return ['%s: %s needs %s (kind NodeWright); a %s Skyhook has no such field' % (
        needs[error], needs[error].rsplit('.', 1)[-1], NODEWRIGHT_API_VERSION, SKYHOOK_API_VERSION)
        if error in needs else error for error in schema_errors]


def cr_errors(doc, stored=False):
    """Every problem of a Skyhook / NodeWright document, by field path.

    ``stored``: the document was read from the API server, which admitted it: a tag that is not the version is
    what the controller cuts off (``image_tag_problems``), not an error; a document to be applied is refused
    for it as the webhook refuses it. A NodeWright's image is refused with a tag either way: the v0.20
    controller does not cut it off.
    """
    if not isinstance(doc, dict):
        return ['must be an object']
    errors = []
    if not is_cr_document(doc):
        errors.append('apiVersion/kind: %r/%r is not %s' % (
            doc.get('apiVersion'), doc.get('kind'),
            ' or '.join('%s %s' % (kind, api) for api, kind in sorted(CR_KINDS.items()))))
    errors.extend(_metadata_errors(doc))
    name = (doc.get('metadata') or {}).get('name') if isinstance(doc.get('metadata'), dict) else None
    if isinstance(name, str) and _DNS_SUBDOMAIN.match(name):
        errors.extend(cr_name_errors(name, 'metadata.name'))
    for key in sorted(doc):
        if key not in ('apiVersion', 'kind', 'metadata', 'spec', 'status'):
            errors.append('%s: unknown field' % key)
    return errors + _spec_errors(doc, stored)


def _spec_errors(doc, stored):
    """The schema of the document's group, then the webhook's rules for it."""
    schema = cr_schema.spec_schema(doc.get('apiVersion'))
    nodewright = schema is cr_schema.NODEWRIGHT_SPEC
    spec = normalise_cr(doc).get('spec')
    errors = []
    cr_schema.validate(spec, schema, 'spec', errors)
    if doc.get('apiVersion') == SKYHOOK_API_VERSION:
        errors = _nodewright_field_errors(spec, errors)
    if not isinstance(spec, dict):
        return errors
    budget = spec.get('interruptionBudget')
    if isinstance(budget, dict) and budget.get('percent') is not None and budget.get('count') is not None:
        errors.append('spec.interruptionBudget: percent and count are mutually exclusive')
    if spec.get('deploymentPolicy') and isinstance(budget, dict) and \
            (budget.get('percent') is not None or budget.get('count') is not None):
        errors.append('spec.deploymentPolicy: deploymentPolicy and interruptionBudget are mutually exclusive')
    for field in ('nodeSelectors', 'podNonInterruptLabels'):
        errors.extend(label_selector.selector_errors(spec.get(field), 'spec.' + field))
    errors.extend(_toleration_errors(spec.get('additionalTolerations')))
    packages = spec.get('packages')
    if isinstance(packages, dict):
        for key in sorted(packages):
            if isinstance(packages[key], dict):
                errors.extend(_package_errors(key, packages[key], packages, nodewright))
        errors.extend(_cycle_errors(packages))
    if nodewright:
        errors.extend(nodewright_spec_errors(spec))
    elif not stored:
        errors.extend(image_tag_problems(doc))
    return errors


def policy_errors(doc):
    """Every problem of a DeploymentPolicy document, or of a bare policy spec."""
    if not isinstance(doc, dict):
        return ['must be an object']
    errors = []
    if 'kind' in doc or 'apiVersion' in doc:
        if doc.get('kind') != 'DeploymentPolicy' or doc.get('apiVersion') not in POLICY_API_VERSIONS:
            errors.append('apiVersion/kind: %r/%r is not DeploymentPolicy %s' % (
                doc.get('apiVersion'), doc.get('kind'), ' or '.join(POLICY_API_VERSIONS)))
        errors.extend(_metadata_errors(doc))
        for key in sorted(doc):
            if key not in ('apiVersion', 'kind', 'metadata', 'spec', 'status'):
                errors.append('%s: unknown field' % key)
        spec = doc.get('spec')
        if spec is None:
            errors.append('spec: required field is missing')
            return errors
    else:
        spec = doc
    spec = cr_schema.apply_defaults(spec, cr_schema.DEPLOYMENT_POLICY_SPEC)
    cr_schema.validate(spec, cr_schema.DEPLOYMENT_POLICY_SPEC, 'spec', errors)
    if not isinstance(spec, dict):
        return errors
    default = spec.get('default')
    if isinstance(default, dict):
        errors.extend(_budget_errors(default.get('budget') or {}, 'spec.default.budget'))
        errors.extend(_strategy_errors(default.get('strategy'), 'spec.default.strategy'))
    compartments = spec.get('compartments')
    if isinstance(compartments, list):
        names, selectors = {}, []
        for idx, comp in enumerate(compartments):
            if not isinstance(comp, dict):
                continue
            name = comp.get('name')
            path = 'spec.compartments[%d]' % idx
            if name == DEFAULT_COMPARTMENT:
                errors.append('%s.name: %r is reserved and cannot be used' % (path, name))
            elif isinstance(name, str) and name in names:
                errors.append('%s.name: %r is not unique (also spec.compartments[%d])' % (path, name, names[name]))
            elif isinstance(name, str):
                names[name] = idx
            if 'budget' in comp:
                errors.extend(_budget_errors(comp.get('budget'), path + '.budget'))
            if comp.get('strategy') is not None:
                errors.extend(_strategy_errors(comp.get('strategy'), path + '.strategy'))
            errors.extend(label_selector.selector_errors(comp.get('selector'), path + '.selector'))
            for other_idx, other in selectors:
                if _normalise_selector(other) == _normalise_selector(comp.get('selector')):
                    errors.append('%s.selector: identical to the selector of spec.compartments[%d]' % (path, other_idx))
                    break
            selectors.append((idx, comp.get('selector')))
    return errors


def _normalise_selector(selector):
    selector = selector if isinstance(selector, dict) else {}
    return (selector.get('matchLabels') or {}, selector.get('matchExpressions') or [])


# --------------------------------------------------------------------------- builders


def build_cr(doc, stored=False):
    """A NodeWrightCR from a document; CRValidationError lists every problem. ``stored``: read from the API
    server (``cr_errors``)."""
    errors = cr_errors(doc, stored=stored)
    if errors:
        raise CRValidationError(_describe(doc, 'CR'), errors)
    return NodeWrightCR(normalise_cr(doc))


def build_policy(doc, name=None):
    """A DeploymentPolicy from a full document or a bare ``spec`` dict."""
    errors = policy_errors(doc)
    if errors:
        raise CRValidationError(_describe(doc, 'DeploymentPolicy'), errors)
    if 'spec' in doc and ('kind' in doc or 'apiVersion' in doc):
        spec = doc['spec']
        name = (doc.get('metadata') or {}).get('name') or name
    else:
        spec = doc
    spec = cr_schema.apply_defaults(spec, cr_schema.DEPLOYMENT_POLICY_SPEC)
    default = spec['default']
    default_spec = CompartmentSpec(DEFAULT_COMPARTMENT, None, default.get('budget'),
                                   Strategy.from_spec(default.get('strategy')))
    compartments = [CompartmentSpec(c['name'], c.get('selector') or {}, c['budget'], Strategy.from_spec(c.get('strategy')))
                    for c in spec.get('compartments') or []]
    return DeploymentPolicy(name or '<inline>', default_spec, compartments,
                            spec.get('resetBatchStateOnCompletion', True))


def with_policy_problems(cr_error, policy_docs):
    """``cr_error`` (the CR's CRValidationError) with every problem of ``policy_docs`` (the DeploymentPolicies given
    beside the CR, its file's or the ``policy`` option's) added, each naming its policy: one run lists every
    problem of what the user gave, not the CR's first and the policy's on the next run."""
    whats, extra = [], []
    for doc in policy_docs or ():
        errors = policy_errors(doc)
        if errors:
            whats.append(_describe(doc, 'DeploymentPolicy'))
            extra.extend('%s: %s' % (whats[-1], error) for error in errors)
    if not extra:
        return cr_error
    return CRValidationError('%s (and its %s)' % (cr_error.what, ', '.join(whats)), list(cr_error.errors) + extra)


def _describe(doc, what):
    if isinstance(doc, dict):
        meta = doc.get('metadata') if isinstance(doc.get('metadata'), dict) else {}
        kind = doc.get('kind') or what
        if meta.get('name'):
            return '%s %r' % (kind, meta['name'])
        return kind
    return what
