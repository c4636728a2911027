# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""cr_schema: equal to the upstream CRDs' openAPIV3Schema, and the validator's behaviour."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

import pytest

from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_model
from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_validation
from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_schema

SKYHOOKS = 'skyhook.nvidia.com_skyhooks.yaml'
POLICIES = 'skyhook.nvidia.com_deploymentpolicies.yaml'
NODEWRIGHTS = 'v0.20/nodewright.nvidia.com_nodewrights.yaml'
V020_POLICIES = 'v0.20/nodewright.nvidia.com_deploymentpolicies.yaml'
# Documentation-only keywords; every other keyword must be equal on both sides.
IGNORED = ('description', 'example')
INT_OR_STRING_ANYOF = [{'type': 'integer'}, {'type': 'string'}]


def _root_schema(crd):
    versions = crd['spec']['versions']
    assert [v['name'] for v in versions] == ['v1alpha1']
    return versions[0]['schema']['openAPIV3Schema']


def _normalise(node, path, problems):
    """Drop documentation keywords; fold the int-or-string anyOf into x-kubernetes-int-or-string."""
    out = dict((k, v) for k, v in node.items() if k not in IGNORED)
    if 'anyOf' in out:
        if out['anyOf'] != INT_OR_STRING_ANYOF or not out.get('x-kubernetes-int-or-string'):
            problems.append('%s: upstream anyOf %r is not the int-or-string form the model knows' % (path, out['anyOf']))
        del out['anyOf']
    return out


def schema_differences(upstream, ours, path='spec'):
    """Every difference between two schema trees, as readable lines."""
    problems = []
    up = _normalise(upstream, path, problems)
    mine = dict((k, v) for k, v in ours.items() if k not in IGNORED)
    for key in sorted(set(up) | set(mine)):
        if key not in mine:
            problems.append('%s: keyword %s=%r is upstream but not in cr_schema' % (path, key, up[key]))
        elif key not in up:
            problems.append('%s: keyword %s=%r is in cr_schema but not upstream' % (path, key, mine[key]))
        elif key == 'properties':
            names_up, names_mine = set(up[key]), set(mine[key])
            for name in sorted(names_up - names_mine):
                problems.append('%s.%s: property missing from cr_schema' % (path, name))
            for name in sorted(names_mine - names_up):
                problems.append('%s.%s: property not in the upstream CRD' % (path, name))
            for name in sorted(names_up & names_mine):
                problems.extend(schema_differences(up[key][name], mine[key][name], '%s.%s' % (path, name)))
        elif key in ('items', 'additionalProperties') and isinstance(up[key], dict) and isinstance(mine[key], dict):
            problems.extend(schema_differences(up[key], mine[key], '%s[%s]' % (path, key)))
        elif key == 'required':
            if sorted(up[key]) != sorted(mine[key]):
                problems.append('%s: required %r upstream, %r in cr_schema' % (path, sorted(up[key]), sorted(mine[key])))
        elif up[key] != mine[key]:
            problems.append('%s: %s is %r upstream, %r in cr_schema' % (path, key, up[key], mine[key]))
    return problems


SPEC_SCHEMAS = [
    (SKYHOOKS, cr_schema.SKYHOOK_SPEC),
    (POLICIES, cr_schema.DEPLOYMENT_POLICY_SPEC),
    (NODEWRIGHTS, cr_schema.NODEWRIGHT_SPEC),
    (V020_POLICIES, cr_schema.DEPLOYMENT_POLICY_SPEC),   # v0.20's DeploymentPolicy schema is v0.15's
]
SPEC_IDS = ['Skyhook-v0.15', 'DeploymentPolicy-v0.15', 'NodeWright-v0.20', 'DeploymentPolicy-v0.20']


@pytest.mark.parametrize('crd_file,ours', SPEC_SCHEMAS, ids=SPEC_IDS)
def test_spec_schema_equals_upstream_crd(crd_documents, crd_file, ours):
    upstream = _root_schema(crd_documents[crd_file])['properties']['spec']
    problems = schema_differences(upstream, ours)
    assert problems == [], '\n'.join(['cr_schema differs from %s:' % crd_file] + problems)


def test_schema_comparison_detects_drift():
    # The comparison itself must notice each kind of difference.
    base = {'type': 'object', 'properties': {'a': {'type': 'integer', 'minimum': 1}}, 'required': ['a']}
    assert schema_differences(base, base) == []
    drifted = [
        {'type': 'object', 'properties': {'a': {'type': 'integer', 'minimum': 0}}, 'required': ['a']},
        {'type': 'object', 'properties': {'a': {'type': 'integer'}}, 'required': ['a']},
        {'type': 'object', 'properties': {'a': {'type': 'integer', 'minimum': 1}, 'b': {'type': 'string'}},
         'required': ['a']},
        {'type': 'object', 'properties': {'a': {'type': 'string', 'minimum': 1}}, 'required': ['a']},
        {'type': 'object', 'properties': {'a': {'type': 'integer', 'minimum': 1}}},
        {'type': 'object', 'properties': {'a': {'type': 'integer', 'minimum': 1, 'nullable': True}}, 'required': ['a']},
    ]
    for other in drifted:
        assert schema_differences(base, other), other
        assert schema_differences(other, base), other


def test_crd_identity_matches_model(crd_documents):
    skyhook = crd_documents[SKYHOOKS]['spec']
    policy = crd_documents[POLICIES]['spec']
    assert skyhook['group'] == cr_model.SKYHOOK_GROUP == policy['group']
    assert skyhook['names']['kind'] == 'Skyhook'
    assert policy['names']['kind'] == 'DeploymentPolicy'
    assert skyhook['scope'] == policy['scope'] == 'Cluster'
    assert cr_model.CR_KINDS['%s/%s' % (skyhook['group'], skyhook['versions'][0]['name'])] == 'Skyhook'


def test_v020_crd_identity_matches_model(crd_documents):
    nodewright = crd_documents[NODEWRIGHTS]['spec']
    policy = crd_documents[V020_POLICIES]['spec']
    assert nodewright['group'] == cr_model.NODEWRIGHT_GROUP == policy['group']
    assert nodewright['names']['kind'] == 'NodeWright'
    assert policy['names']['kind'] == 'DeploymentPolicy'
    assert nodewright['scope'] == policy['scope'] == 'Cluster'
    api_version = '%s/%s' % (nodewright['group'], nodewright['versions'][0]['name'])
    assert cr_model.CR_KINDS[api_version] == 'NodeWright'
    assert api_version in cr_model.POLICY_API_VERSIONS
    assert cr_schema.spec_schema(api_version) is cr_schema.NODEWRIGHT_SPEC


@pytest.mark.parametrize('crd_file,api_version,kind', [
    (SKYHOOKS, 'skyhook.nvidia.com/v1alpha1', 'Skyhook'),
    (NODEWRIGHTS, 'nodewright.nvidia.com/v1alpha1', 'NodeWright'),
])
def test_crd_top_level_fields_are_accepted(crd_documents, crd_file, api_version, kind):
    # Every top-level property of the CRD (apiVersion, kind, metadata, spec, status) is known to cr_errors.
    top = sorted(_root_schema(crd_documents[crd_file])['properties'])
    assert top == ['apiVersion', 'kind', 'metadata', 'spec', 'status']
    doc = {'apiVersion': api_version, 'kind': kind, 'metadata': {'name': 'x'}, 'spec': {}, 'status': {}}
    assert cr_validation.cr_errors(doc) == []


def _keywords(node, found):
    """Every keyword (and its values, for the few whose value changes the validation) of a schema tree."""
    for key, value in node.items():
        found.setdefault(key, set())
        if key in ('format', 'x-kubernetes-list-type', 'x-kubernetes-map-type'):
            found[key].add(value)
    for child in (node.get('properties') or {}).values():
        _keywords(child, found)
    for key in ('items', 'additionalProperties'):
        if isinstance(node.get(key), dict):
            _keywords(node[key], found)
    return found


@pytest.mark.parametrize('crd_file', [SKYHOOKS, POLICIES, NODEWRIGHTS, V020_POLICIES])
def test_validator_knows_every_keyword_of_the_upstream_spec_schemas(crd_documents, crd_file):
    found = _keywords(_root_schema(crd_documents[crd_file])['properties']['spec'], {})
    unknown = sorted(set(found) - set(cr_schema.VALIDATED_KEYWORDS) - set(cr_schema.ANNOTATION_KEYWORDS))
    assert unknown == [], 'the validator does not handle %s (%s)' % (unknown, crd_file)
    # only the values the validator implements: integer formats, atomic lists and maps (no uniqueness to check)
    assert found.get('format', set()) <= set(cr_schema.INT_FORMATS)
    assert found.get('x-kubernetes-list-type', set()) <= {'atomic'}
    assert found.get('x-kubernetes-map-type', set()) <= {'atomic'}


def _validate(value, schema):
    errors = []
    cr_schema.validate(value, schema, 'spec', errors)
    return errors


@pytest.mark.parametrize('value,expected', [
    ({'priority': 5}, []),
    ({'priority': 'x'}, ["spec.priority: must be an integer, got string ('x')"]),
    ({'priority': True}, ['spec.priority: must be an integer, got boolean (True)']),
    ({'priority': 0}, ['spec.priority: 0 is less than the minimum 1']),
    ({'serial': 'yes'}, ["spec.serial: must be a boolean, got string ('yes')"]),
    ({'sequencing': 'global'}, ["spec.sequencing: 'global' is not one of 'all', 'node'"]),
    ({'interruptionBudget': {'percent': None, 'count': None}}, []),          # nullable
    ({'interruptionBudget': {'percent': 101}}, ['spec.interruptionBudget.percent: 101 is greater than the maximum 100']),
    ({'interruptionBudget': {'count': -1}}, ['spec.interruptionBudget.count: -1 is less than the minimum 0']),
    ({'bogus': 1}, ['spec.bogus: unknown field']),
    ({'packages': []}, ['spec.packages: must be an object, got array ([])']),
    ({'packages': {'pkg': {'version': '1.0.0'}}}, ['spec.packages.pkg.image: required field is missing']),
    ({'packages': {'pkg': {'version': '1.0.0', 'image': 'i', 'resources': {'cpuLimit': 2}}}}, []),
    ({'packages': {'pkg': {'version': '1.0.0', 'image': 'i', 'resources': {'cpuLimit': '2 cores'}}}},
     ["spec.packages.pkg.resources.cpuLimit: '2 cores' does not match %s" % cr_schema.QUANTITY_PATTERN]),
    ({'packages': {'pkg': {'version': '1.0.0', 'image': 'i', 'resources': {'cpuLimit': 1.5}}}},
     ['spec.packages.pkg.resources.cpuLimit: must be an integer or a string, got number']),
    ({'packages': {'pkg': {'version': '1.0.0', 'image': 'i', 'name': 'x' * 44}}},
     ["spec.packages.pkg.name: %r does not match %s" % ('x' * 44, cr_schema.PACKAGE_NAME_PATTERN),
      "spec.packages.pkg.name: %r is longer than 43 characters" % ('x' * 44)]),
    ({'additionalTolerations': [{'key': 'k'}, {'tolerationSeconds': 'x'}]},
     ["spec.additionalTolerations[1].tolerationSeconds: must be an integer, got string ('x')"]),
])
def test_validate_skyhook_spec(value, expected):
    assert _validate(value, cr_schema.SKYHOOK_SPEC) == expected
    # the shared building blocks: a NodeWright spec says the same of each
    assert _validate(value, cr_schema.NODEWRIGHT_SPEC) == expected


SHA = 'sha256:' + '0123456789abcdef' * 4


def _package(**extra):
    spec = {'version': '1.0.0', 'image': 'ghcr.io/nvidia/skyhook-packages/shellscript'}
    spec.update(extra)
    return {'packages': {'pkg': spec}}


@pytest.mark.parametrize('value,expected', [
    ({'drainConfig': {}}, []),
    ({'drainConfig': {'timeout': '10m', 'gracePeriod': '30s', 'disableEviction': True, 'deleteEmptyDirData': False,
                      'force': False, 'ignoreDaemonSets': False}}, []),
    ({'drainConfig': {'timeout': None, 'gracePeriod': None, 'disableEviction': None, 'deleteEmptyDirData': None,
                      'force': None, 'ignoreDaemonSets': None}}, []),                                  # all nullable
    ({'drainConfig': {'timeout': 600}}, ['spec.drainConfig.timeout: must be a string, got integer (600)']),
    ({'drainConfig': {'force': 'yes'}}, ["spec.drainConfig.force: must be a boolean, got string ('yes')"]),
    ({'drainConfig': {'podSelector': {}}}, ['spec.drainConfig.podSelector: unknown field']),
    ({'drainConfig': []}, ['spec.drainConfig: must be an object, got array ([])']),
    ({'runtimeRequiredCordonAfter': True}, []),
    ({'runtimeRequiredCordonAfter': 'true'}, ["spec.runtimeRequiredCordonAfter: must be a boolean, got string ('true')"]),
    (_package(stageTimeout='20m'), []),
    (_package(stageTimeout=1200), ['spec.packages.pkg.stageTimeout: must be a string, got integer (1200)']),
    (_package(containerSHA=SHA), []),
    (_package(containerSHA='sha256:abc'),
     ["spec.packages.pkg.containerSHA: 'sha256:abc' does not match ^sha256:[0-9a-f]{64}$"]),
    (_package(containerSHA=SHA.upper().replace('SHA256', 'sha256')),
     ["spec.packages.pkg.containerSHA: %r does not match ^sha256:[0-9a-f]{64}$" % SHA.upper().replace('SHA256', 'sha256')]),
    (_package(image='ghcr.io/x y'), ["spec.packages.pkg.image: 'ghcr.io/x y' does not match ^\\S+$"]),
    (_package(image=''), ["spec.packages.pkg.image: '' does not match ^\\S+$"]),
    (_package(image='ghcr.io/x:1.0.0'), []),                      # the CRD takes a tag: only the webhook refuses it
    (_package(image=u'ghcr.io/x\u00a0y'), []),                   # RE2's \\S is ASCII: a no-break space is not \\s
    (_package(image='ghcr.io/x\ty'), ["spec.packages.pkg.image: 'ghcr.io/x\\ty' does not match ^\\S+$"]),
])
def test_validate_nodewright_spec(value, expected):
    assert _validate(value, cr_schema.NODEWRIGHT_SPEC) == expected


@pytest.mark.parametrize('value,paths', [
    ({'drainConfig': {}}, ['spec.drainConfig']),
    ({'runtimeRequiredCordonAfter': False, 'priority': 3}, ['spec.runtimeRequiredCordonAfter']),
    (_package(stageTimeout='1m', containerSHA=SHA), ['spec.packages.pkg.stageTimeout']),
    ({'packages': {'b': {'stageTimeout': '1m'}, 'a': {'stageTimeout': None}}},
     ['spec.packages.a.stageTimeout', 'spec.packages.b.stageTimeout']),
    ({'priority': 3, 'packages': {'a': {'image': 'i'}}}, []),
    ({'packages': 'x'}, []),
])
def test_fields_only_a_nodewright_has(value, paths):
    assert cr_schema.fields_only_in(value, cr_schema.NODEWRIGHT_SPEC, cr_schema.SKYHOOK_SPEC, 'spec') == paths
    assert cr_schema.fields_only_in(value, cr_schema.SKYHOOK_SPEC, cr_schema.NODEWRIGHT_SPEC, 'spec') == []


@pytest.mark.parametrize('api_version,schema', [
    ('nodewright.nvidia.com/v1alpha1', cr_schema.NODEWRIGHT_SPEC),
    ('nodewright.nvidia.com/v1beta1', cr_schema.NODEWRIGHT_SPEC),
    ('skyhook.nvidia.com/v1alpha1', cr_schema.SKYHOOK_SPEC),
    ('v1', cr_schema.SKYHOOK_SPEC),
    (None, cr_schema.SKYHOOK_SPEC),
])
def test_spec_schema_by_group(api_version, schema):
    assert cr_schema.spec_schema(api_version) is schema


@pytest.mark.parametrize('value,expected', [
    # drainConfig's defaults fill an object that is there; a null kept by nullable is not defaulted
    ({'drainConfig': {}}, {'deleteEmptyDirData': True, 'disableEviction': False, 'force': True, 'ignoreDaemonSets': True}),
    ({'drainConfig': {'force': None, 'timeout': '1m'}},
     {'deleteEmptyDirData': True, 'disableEviction': False, 'force': None, 'ignoreDaemonSets': True, 'timeout': '1m'}),
    ({'drainConfig': {'force': False}}, {'deleteEmptyDirData': True, 'disableEviction': False, 'force': False,
                                         'ignoreDaemonSets': True}),
    ({'drainConfig': None}, None),       # drainConfig itself is not nullable: pruned, and has no default
    ({}, None),
])
def test_nodewright_defaults(value, expected):
    spec = cr_schema.apply_defaults(value, cr_schema.NODEWRIGHT_SPEC)
    assert spec.get('drainConfig') == expected
    assert spec['runtimeRequiredCordonAfter'] is False
    assert 'runtimeRequiredCordonAfter' not in cr_schema.apply_defaults(value, cr_schema.SKYHOOK_SPEC)


def test_a_default_object_is_defaulted_in_turn():
    # apiextensions-apiserver's defaulting.Default sets a default, then walks into it
    schema = {'type': 'object', 'properties': {
        'outer': {'type': 'object', 'default': {'a': 1}, 'properties': {
            'a': {'type': 'integer'}, 'b': {'type': 'integer', 'default': 2}}}}}
    assert cr_schema.apply_defaults({}, schema) == {'outer': {'a': 1, 'b': 2}}
    assert schema['properties']['outer']['default'] == {'a': 1}      # the schema is not changed


@pytest.mark.parametrize('pattern,text,matches', [
    (r'^\S+$', 'repo', True),
    (r'^\S+$', 'a b', False),
    (r'^\S+$', u'a\u00a0b', True),        # RE2: \s is [\t\n\f\r ]
    (r'^\S+$', u'a\u2003b', True),
    (r'^\S+$', 'a\vb', True),             # RE2's \s has no \v
    (r'^\S+$', 'a\fb', False),
    (r'^\S+$', 'repo\n', False),          # Go's $ is the very end
    (r'^\d+$', u'\u0663', False),         # an Arabic-Indic digit is no RE2 \d
    (r'^[\d.]+$', '1.2', True),
    (r'^\w+$', u'\u00e9', False),
    (r'^\W$', u'\u00e9', True),
    (r'^a\.b$', 'a.b', True),
    (r'^a\.b$', 'axb', False),
    (cr_schema.CONTAINER_SHA_PATTERN, SHA, True),
    (cr_schema.CONTAINER_SHA_PATTERN, SHA + '\n', False),
])
def test_go_pattern_matches_as_re2(pattern, text, matches):
    assert bool(re.search(cr_schema.go_pattern(pattern), text)) is matches


@pytest.mark.parametrize('value,expected', [
    (2 ** 63 - 1, []),
    (-2 ** 63, []),
    (2 ** 63, ['spec.additionalTolerations[0].tolerationSeconds: 9223372036854775808 is out of the int64 range']),
])
def test_int64_format(value, expected):
    assert _validate({'additionalTolerations': [{'tolerationSeconds': value}]}, cr_schema.SKYHOOK_SPEC) == expected


@pytest.mark.parametrize('value,expected', [
    ({'default': {'strategy': {'fixed': {}}}}, []),
    ({}, ['spec.default: required field is missing']),
    ({'default': {'budget': {'count': 1}}}, ['spec.default.strategy: required field is missing']),
    ({'default': {'strategy': {'fixed': {}}}, 'compartments': [{'name': ''}]},
     ['spec.compartments[0].budget: required field is missing',
      'spec.compartments[0].selector: required field is missing',
      'spec.compartments[0].name: must be at least 1 character(s) long']),
])
def test_validate_policy_spec(value, expected):
    assert _validate(value, cr_schema.DEPLOYMENT_POLICY_SPEC) == expected
