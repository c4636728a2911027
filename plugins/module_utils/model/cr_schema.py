# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""The OpenAPI v3 schemas of the NodeWright CRDs, and a structural validator for them.

The schemas below are written out from the upstream CustomResourceDefinitions: every field, type,
enum, pattern, bound, default, nullable and required list. A unit test walks the upstream CRD files
and fails if anything here differs, so this file stays equal to the schema the API server enforces.

- ``SKYHOOK_SPEC``: the legacy ``skyhook.nvidia.com/v1alpha1`` Skyhook, v0.15
  (``skyhook.nvidia.com_skyhooks.yaml``, NVIDIA/skyhook @71ca22b8).
- ``NODEWRIGHT_SPEC``: the ``nodewright.nvidia.com/v1alpha1`` NodeWright, v0.20
  (``nodewright.nvidia.com_nodewrights.yaml``, NVIDIA/nodewright @5a158dbc; the Go types in
  ``operator/api/nodewright/v1alpha1/nodewright_types.go`` @90d9979d). The same building blocks, plus
  ``drainConfig``, ``runtimeRequiredCordonAfter`` and ``packages.<p>.stageTimeout``, and patterns on
  ``image`` and ``containerSHA``.
- ``DEPLOYMENT_POLICY_SPEC``: the DeploymentPolicy of both groups (the v0.20 CRD equals v0.15's but
  for the group).

``spec_schema`` picks a CR's schema by its apiVersion. Unlike the API server, which prunes unknown
fields, the validator rejects them: a misspelt ``intterupt`` is almost always a mistake that would
silently do nothing. No I/O.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import difflib
import re

from ansible_collections.nodewright.bridge.plugins.module_utils.model.constants import NODEWRIGHT_GROUP

QUANTITY_PATTERN = (r'^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|'
                    r'([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$')
PACKAGE_NAME_PATTERN = r'^[a-z][-a-z0-9]{0,41}[a-z]$'
# v0.20 (nodewright.nvidia.com): no whitespace, not empty; a digest as sha256 and 64 lower-case hex digits
IMAGE_PATTERN = r'^\S+$'
CONTAINER_SHA_PATTERN = r'^sha256:[0-9a-f]{64}$'
INTERRUPT_TYPES = ['service', 'reboot', 'noop', 'restartAllServices']


def _string(**kw):
    node = {'type': 'string'}
    node.update(kw)
    return node


def _integer(**kw):
    node = {'type': 'integer'}
    node.update(kw)
    return node


def _boolean(**kw):
    node = {'type': 'boolean'}
    node.update(kw)
    return node


def _object(properties, required=None, **kw):
    node = {'type': 'object', 'properties': properties}
    if required:
        node['required'] = sorted(required)
    node.update(kw)
    return node


def _map_of(values):
    return {'type': 'object', 'additionalProperties': values}


def _array(items, **kw):
    node = {'type': 'array', 'items': items}
    node.update(kw)
    return node


def _quantity():
    return {'x-kubernetes-int-or-string': True, 'pattern': QUANTITY_PATTERN}


def _label_selector():
    return _object({
        'matchExpressions': _array(_object({
            'key': _string(),
            'operator': _string(),
            'values': _array(_string(), **{'x-kubernetes-list-type': 'atomic'}),
        }, required=['key', 'operator']), **{'x-kubernetes-list-type': 'atomic'}),
        'matchLabels': _map_of(_string()),
    }, **{'x-kubernetes-map-type': 'atomic'})


def _interrupt():
    return _object({
        'services': _array(_string()),
        'type': _string(enum=list(INTERRUPT_TYPES)),
    }, required=['type'])


def _key_ref(extra, required):
    props = {'key': _string()}
    props.update(extra)
    return _object(props, required=required, **{'x-kubernetes-map-type': 'atomic'})


def _env_var():
    return _object({
        'name': _string(),
        'value': _string(),
        'valueFrom': _object({
            'configMapKeyRef': _key_ref({'name': _string(default=''), 'optional': _boolean()}, ['key']),
            'fieldRef': _object({'apiVersion': _string(), 'fieldPath': _string()},
                                required=['fieldPath'], **{'x-kubernetes-map-type': 'atomic'}),
            'fileKeyRef': _key_ref({'optional': _boolean(default=False), 'path': _string(), 'volumeName': _string()},
                                   ['key', 'path', 'volumeName']),
            'resourceFieldRef': _object({'containerName': _string(), 'divisor': _quantity(), 'resource': _string()},
                                        required=['resource'], **{'x-kubernetes-map-type': 'atomic'}),
            'secretKeyRef': _key_ref({'name': _string(default=''), 'optional': _boolean()}, ['key']),
        }),
    }, required=['name'])


def _package(nodewright):
    """A package; ``nodewright``: the v0.20 group's, with stageTimeout and the image and containerSHA patterns."""
    props = {
        'agentImageOverride': _string(),
        'configInterrupts': _map_of(_interrupt()),
        'configMap': _map_of(_string()),
        'containerSHA': _string(),
        'dependsOn': _map_of(_string()),
        'env': _array(_env_var()),
        'gracefulShutdown': _string(),
        'image': _string(),
        'interrupt': _interrupt(),
        'name': _string(maxLength=43, pattern=PACKAGE_NAME_PATTERN),
        'resources': _object({
            'cpuLimit': _quantity(),
            'cpuRequest': _quantity(),
            'memoryLimit': _quantity(),
            'memoryRequest': _quantity(),
        }),
        'uninstall': _object({
            'apply': _boolean(default=False),
            'enabled': _boolean(default=False),
        }, required=['apply', 'enabled']),
        'version': _string(),
    }
    if nodewright:
        props['containerSHA'] = _string(pattern=CONTAINER_SHA_PATTERN)
        props['image'] = _string(pattern=IMAGE_PATTERN)
        props['stageTimeout'] = _string()  # a metav1.Duration, which the webhook decodes (duration.py)
    return _object(props, required=['image', 'version'])


def _drain_config():
    """spec.drainConfig (v0.20): every field nullable, the booleans defaulted as drain.DefaultOptions."""
    return _object({
        'deleteEmptyDirData': _boolean(default=True, nullable=True),
        'disableEviction': _boolean(default=False, nullable=True),
        'force': _boolean(default=True, nullable=True),
        'gracePeriod': _string(nullable=True),
        'ignoreDaemonSets': _boolean(default=True, nullable=True),
        'timeout': _string(nullable=True),
    })


def _cr_spec(nodewright):
    """The spec of a Skyhook (v0.15) or, with ``nodewright``, of a NodeWright (v0.20)."""
    props = {
        'additionalTolerations': _array(_object({
            'effect': _string(),
            'key': _string(),
            'operator': _string(),
            'tolerationSeconds': _integer(format='int64'),
            'value': _string(),
        })),
        'autoTaintNewNodes': _boolean(default=False),
        'deploymentPolicy': _string(),
        'deploymentPolicyOptions': _object({'resetBatchStateOnCompletion': _boolean(default=True)}),
        'interruptionBudget': _object({
            'count': _integer(minimum=0, nullable=True),
            'percent': _integer(minimum=0, maximum=100, nullable=True),
        }),
        'nodeSelectors': _label_selector(),
        'packages': _map_of(_package(nodewright)),
        'podNonInterruptLabels': _label_selector(),
        'priority': _integer(default=200, minimum=1),
        'runtimeRequired': _boolean(default=False),
        'sequencing': _string(default='node', enum=['all', 'node']),
        'serial': _boolean(default=False),
    }
    if nodewright:
        props['drainConfig'] = _drain_config()
        props['runtimeRequiredCordonAfter'] = _boolean(default=False)
    return _object(props)


SKYHOOK_SPEC = _cr_spec(False)
NODEWRIGHT_SPEC = _cr_spec(True)


def spec_schema(api_version):
    """The spec schema of a CR of ``api_version``: NODEWRIGHT_SPEC for the nodewright.nvidia.com group,
    SKYHOOK_SPEC for skyhook.nvidia.com (and for anything else, which cr_errors reports on its own)."""
    group = api_version.split('/', 1)[0] if isinstance(api_version, str) else None
    return NODEWRIGHT_SPEC if group == NODEWRIGHT_GROUP else SKYHOOK_SPEC


def _strategy_fields(extra):
    fields = {
        'batchThreshold': _integer(minimum=1, maximum=100),
        'failureThreshold': _integer(minimum=1),
        'initialBatch': _integer(minimum=1),
        'safetyLimit': _integer(minimum=1, maximum=100),
    }
    fields.update(extra)
    return _object(fields)


def _strategy():
    return _object({
        'exponential': _strategy_fields({'growthFactor': _integer(minimum=2)}),
        'fixed': _strategy_fields({}),
        'linear': _strategy_fields({'delta': _integer(minimum=1)}),
    })


def _budget():
    return _object({
        'count': _integer(minimum=1),
        'percent': _integer(minimum=1, maximum=100),
    })


DEPLOYMENT_POLICY_SPEC = _object({
    'compartments': _array(_object({
        'budget': _budget(),
        'name': _string(minLength=1),
        'selector': _label_selector(),
        'strategy': _strategy(),
    }, required=['budget', 'name', 'selector'])),
    'default': _object({
        'budget': _budget(),
        'strategy': _strategy(),
    }, required=['strategy']),
    'resetBatchStateOnCompletion': _boolean(default=True),
}, required=['default'])


# RE2's Perl classes are ASCII-only (\s is [\t\n\f\r ], without \v); Python's, on str, are Unicode.
_PERL_CLASSES = {'s': '\\t\\n\\f\\r ', 'd': '0-9', 'w': '0-9A-Za-z_'}


def go_pattern(pattern):
    """A Python regex that matches like Go's RE2 for an OpenAPI pattern.

    Without (?m), Go's ``$`` only matches at the very end; Python's also matches before
    a final newline, so an unescaped trailing ``$`` becomes ``\\Z``. The Perl classes
    ``\\s \\S \\d \\D \\w \\W`` become RE2's ASCII sets (so ``^\\S+$`` accepts a
    non-breaking space, as the API server does); a negated one inside brackets is left to
    Python's (never used by the CRDs).
    """
    out, idx, in_class = [], 0, False
    while idx < len(pattern):
        char = pattern[idx]
        if char == '\\' and idx + 1 < len(pattern):
            escaped = pattern[idx + 1]
            body = _PERL_CLASSES.get(escaped.lower())
            if body is not None and not in_class:
                out.append('[%s%s]' % ('^' if escaped.isupper() else '', body))
            elif body is not None and escaped.islower():
                out.append(body)
            else:
                out.append(char + escaped)
            idx += 2
            continue
        if char == '[' and not in_class:
            in_class = True
        elif char == ']' and in_class:
            in_class = False
        out.append(char)
        idx += 1
    result = ''.join(out)
    if result.endswith('$') and not result.endswith('\\$'):
        return result[:-1] + '\\Z'
    return result


# The keywords validate and apply_defaults act on, and those that change nothing for them (documentation; the
# int-or-string anyOf, which x-kubernetes-int-or-string stands for; atomic list and map types). A unit test checks
# that the upstream CRDs' spec schemas use no other.
VALIDATED_KEYWORDS = ('type', 'properties', 'additionalProperties', 'items', 'required', 'enum', 'pattern', 'maxLength',
                      'minLength', 'minimum', 'maximum', 'format', 'default', 'nullable', 'x-kubernetes-int-or-string')
ANNOTATION_KEYWORDS = ('description', 'example', 'anyOf', 'x-kubernetes-list-type', 'x-kubernetes-map-type')
INT_FORMATS = {'int32': 32, 'int64': 64}
_TYPE_NAMES = {'string': 'a string', 'integer': 'an integer', 'boolean': 'a boolean',
               'object': 'an object', 'array': 'a list'}


def _type_of(value):
    if value is None:
        return 'null'
    if isinstance(value, bool):
        return 'boolean'
    if isinstance(value, int):
        return 'integer'
    if isinstance(value, float):
        return 'number'
    if isinstance(value, str):
        return 'string'
    if isinstance(value, dict):
        return 'object'
    if isinstance(value, (list, tuple)):
        return 'array'
    return type(value).__name__


def _child(path, key):
    return '%s.%s' % (path, key) if path else str(key)


def _check_type(value, schema, path, errors):
    """Report a type mismatch; True when the value has the schema's type."""
    actual = _type_of(value)
    if value is None and schema.get('nullable'):
        return False
    if schema.get('x-kubernetes-int-or-string'):
        if actual in ('integer', 'string'):
            return True
        errors.append('%s: must be an integer or a string, got %s' % (path, actual))
        return False
    expected = schema.get('type')
    if expected and actual != expected:
        errors.append('%s: must be %s, got %s%s' % (
            path, _TYPE_NAMES.get(expected, expected), actual,
            '' if value is None else ' (%r)' % (value,)))
        return False
    return True


def _check_scalar(value, schema, path, errors):
    enum = schema.get('enum')
    if enum is not None and value not in enum:
        errors.append('%s: %r is not one of %s' % (path, value, ', '.join(repr(e) for e in enum)))
    if isinstance(value, str):
        pattern = schema.get('pattern')
        if pattern and not re.search(go_pattern(pattern), value):
            errors.append('%s: %r does not match %s' % (path, value, pattern))
        if 'maxLength' in schema and len(value) > schema['maxLength']:
            errors.append('%s: %r is longer than %d characters' % (path, value, schema['maxLength']))
        if 'minLength' in schema and len(value) < schema['minLength']:
            errors.append('%s: must be at least %d character(s) long' % (path, schema['minLength']))
    elif isinstance(value, int) and not isinstance(value, bool):
        if 'minimum' in schema and value < schema['minimum']:
            errors.append('%s: %d is less than the minimum %d' % (path, value, schema['minimum']))
        if 'maximum' in schema and value > schema['maximum']:
            errors.append('%s: %d is greater than the maximum %d' % (path, value, schema['maximum']))
        bits = INT_FORMATS.get(schema.get('format'))
        if bits and not -(1 << (bits - 1)) <= value < 1 << (bits - 1):
            errors.append('%s: %d is out of the %s range' % (path, value, schema['format']))


def apply_defaults(value, schema):
    """A copy of ``value`` as the API server stores it before validation.

    Structural-schema rules: ``null`` in a field that is not ``nullable`` is pruned, then
    every missing field with a ``default`` gets it (so ``uninstall: {enabled: true}`` gains
    ``apply: false`` and satisfies ``required``), and a default that is an object is defaulted
    in turn (apiextensions-apiserver's defaulting.Default). A ``null`` kept by ``nullable`` is
    not defaulted (``drainConfig: {force: null}`` stays null). Unknown fields are kept for
    ``validate`` to report.
    """
    if isinstance(value, dict) and isinstance(schema, dict) and schema.get('type') == 'object':
        properties = schema.get('properties')
        additional = schema.get('additionalProperties')
        result = {}
        for key, item in value.items():
            child = (properties or {}).get(key) if properties is not None else None
            if child is None and isinstance(additional, dict):
                child = additional
            if item is None and child is not None and not child.get('nullable'):
                continue
            result[key] = apply_defaults(item, child) if child is not None else item
        for key, child in (properties or {}).items():
            if key not in result and 'default' in child:
                result[key] = apply_defaults(copy.deepcopy(child['default']), child)
        return result
    if isinstance(value, list) and isinstance(schema, dict) and isinstance(schema.get('items'), dict):
        return [apply_defaults(item, schema['items']) for item in value]
    return value


def _did_you_mean(key, properties):
    """`` (did you mean X?)`` for a misspelled field: the known field closest to ``key``, if one is close."""
    close = difflib.get_close_matches(str(key), sorted(properties or ()), n=1, cutoff=0.75)
    return ' (did you mean %s?)' % close[0] if close else ''


def validate(value, schema, path, errors):
    """Append every schema violation of ``value`` to ``errors`` as ``<path>: <problem>``."""
    if not _check_type(value, schema, path, errors):
        return
    if isinstance(value, dict):
        properties = schema.get('properties')
        additional = schema.get('additionalProperties')
        for key in schema.get('required', []):
            if key not in value:
                errors.append('%s: required field is missing' % _child(path, key))
        for key in sorted(value, key=str):
            child = _child(path, key)
            if properties is not None and key in properties:
                validate(value[key], properties[key], child, errors)
            elif isinstance(additional, dict):
                validate(value[key], additional, child, errors)
            else:
                errors.append('%s: unknown field%s' % (child, _did_you_mean(key, properties)))
    elif isinstance(value, (list, tuple)):
        items = schema.get('items')
        if items:
            for idx, item in enumerate(value):
                validate(item, items, '%s[%d]' % (path, idx), errors)
    else:
        _check_scalar(value, schema, path, errors)


def fields_only_in(value, schema, other, path):
    """The paths of the fields of ``value`` that ``schema`` knows and ``other`` does not, at any depth
    (a NodeWright field on a Skyhook: ``fields_only_in(spec, NODEWRIGHT_SPEC, SKYHOOK_SPEC, 'spec')``)."""
    found = []
    if isinstance(value, dict) and isinstance(schema, dict) and isinstance(other, dict):
        properties, other_properties = schema.get('properties') or {}, other.get('properties') or {}
        additional, other_additional = schema.get('additionalProperties'), other.get('additionalProperties')
        for key in sorted(value, key=str):
            child = _child(path, key)
            if key in properties and key not in other_properties:
                found.append(child)
            elif key in properties:
                found.extend(fields_only_in(value[key], properties[key], other_properties[key], child))
            elif isinstance(additional, dict) and isinstance(other_additional, dict):
                found.extend(fields_only_in(value[key], additional, other_additional, child))
    elif isinstance(value, (list, tuple)) and isinstance(schema, dict) and isinstance(other, dict):
        for idx, item in enumerate(value):
            found.extend(fields_only_in(item, schema.get('items'), other.get('items'), '%s[%d]' % (path, idx)))
    return found
