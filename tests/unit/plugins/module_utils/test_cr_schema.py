# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""cr_schema: equal to the upstream CRDs' openAPIV3Schema, and the validator's behaviour."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.nodewright.bridge.plugins.module_utils import cr_model
from ansible_collections.nodewright.bridge.plugins.module_utils import cr_schema

SKYHOOKS = 'skyhook.nvidia.com_skyhooks.yaml'
POLICIES = 'skyhook.nvidia.com_deploymentpolicies.yaml'
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


@pytest.mark.parametrize('crd_file,ours', [
    (SKYHOOKS, cr_schema.SKYHOOK_SPEC),
    (POLICIES, cr_schema.DEPLOYMENT_POLICY_SPEC),
], ids=['Skyhook', 'DeploymentPolicy'])
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


def test_crd_top_level_fields_are_accepted(crd_documents):
    # Every top-level property of the CRD (apiVersion, kind, metadata, spec, status) is known to cr_errors.
    top = sorted(_root_schema(crd_documents[SKYHOOKS])['properties'])
    assert top == ['apiVersion', 'kind', 'metadata', 'spec', 'status']
    doc = {'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'Skyhook', 'metadata': {'name': 'x'},
           'spec': {}, 'status': {}}
    assert cr_model.cr_errors(doc) == []


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
