# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""NodeWright documents as the skyhook.nvidia.com/v1alpha1 documents the v0.15 operator serves."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest
import yaml

from ansible.errors import AnsibleFilterError

from ansible_collections.nodewright.bridge.plugins.filter.to_skyhook import to_skyhook as to_skyhook_filter
from ansible_collections.nodewright.bridge.plugins.module_utils import cr_model
from ansible_collections.nodewright.bridge.plugins.module_utils.operator_documents import DocumentError, to_skyhook

REPO_ROOT = os.path.realpath(os.path.join(os.path.dirname(__file__), '..', '..', '..', '..'))
EXAMPLE = os.path.join(REPO_ROOT, 'examples', 'gpu-node-tuning.yaml')
EXAMPLE_SKYHOOK = os.path.join(REPO_ROOT, 'examples', 'gpu-node-tuning-skyhook.yaml')


def _load(path):
    with open(path) as handle:
        return [d for d in yaml.safe_load_all(handle) if d is not None]


def _nodewright(**metadata):
    meta = {'name': 'tuning'}
    meta.update(metadata)
    return {'apiVersion': 'nodewright.nvidia.com/v1alpha1', 'kind': 'NodeWright', 'metadata': meta,
            'spec': {'nodeSelectors': {'matchLabels': {'pool': 'gpu'}},
                     'packages': {'a': {'version': '1.0.0', 'image': 'registry.local/a'}}}}


def test_a_nodewright_cr_becomes_a_skyhook_with_the_same_spec_and_metadata():
    doc = _nodewright(labels={'team': 'ml'}, annotations={'owner': 'x'})
    out = to_skyhook([doc])
    assert out == [{'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'Skyhook', 'metadata': doc['metadata'],
                    'spec': doc['spec']}]
    assert doc['apiVersion'] == 'nodewright.nvidia.com/v1alpha1'  # the input is untouched
    assert out[0]['spec'] is not doc['spec']


def test_policies_of_either_group_and_skyhooks_come_out_in_the_skyhook_group_in_order():
    policy = {'apiVersion': 'nodewright.nvidia.com/v1alpha1', 'kind': 'DeploymentPolicy', 'metadata': {'name': 'p'},
              'spec': {'default': {'budget': {'count': 1}, 'strategy': {'fixed': {'initialBatch': 1}}}}}
    skyhook = dict(_nodewright(name='other'), apiVersion='skyhook.nvidia.com/v1alpha1', kind='Skyhook')
    out = to_skyhook([policy, None, skyhook])
    assert [(d['apiVersion'], d['kind'], d['metadata']['name']) for d in out] == [
        ('skyhook.nvidia.com/v1alpha1', 'DeploymentPolicy', 'p'), ('skyhook.nvidia.com/v1alpha1', 'Skyhook', 'other')]
    assert out[1] == skyhook


def test_what_the_api_server_set_is_dropped():
    doc = _nodewright(resourceVersion='42', uid='u-1', creationTimestamp='2026-01-01T00:00:00Z', generation=3,
                      managedFields=[{'manager': 'kubectl'}])
    doc['status'] = {'status': 'complete'}
    out = to_skyhook(doc)[0]
    assert out['metadata'] == {'name': 'tuning'} and 'status' not in out


@pytest.mark.parametrize('docs,message', [
    ([{'apiVersion': 'v1', 'kind': 'ConfigMap'}], "document 0: apiVersion 'v1' kind 'ConfigMap' is not"),
    ([_nodewright(), 'text'], 'document 1: expected a mapping, got str'),
    ([{'apiVersion': 'nodewright.nvidia.com/v1alpha1', 'kind': 'Skyhook'}], "kind 'Skyhook' is not"),
    (7, 'expected a list of documents, got int'),
])
def test_anything_else_is_an_error_naming_the_document(docs, message):
    with pytest.raises(DocumentError) as info:
        to_skyhook(docs)
    assert message in str(info.value)


def test_the_filter_reports_errors_as_filter_errors():
    with pytest.raises(AnsibleFilterError, match='to_skyhook: document 0'):
        to_skyhook_filter([{'kind': 'Pod'}])
    assert to_skyhook_filter(_nodewright())[0]['kind'] == 'Skyhook'


def test_the_skyhook_example_is_the_nodewright_example_converted():
    # the two example files must not drift apart: one is what the filter makes of the other
    assert _load(EXAMPLE_SKYHOOK) == to_skyhook(_load(EXAMPLE))


def test_the_converted_example_is_a_valid_skyhook_and_policy():
    cr_doc, policy_doc = _load(EXAMPLE_SKYHOOK)
    cr = cr_model.build_cr(cr_doc)  # the model validates against the operator's CRD schema
    assert (cr.api_version, cr.kind, cr.name) == ('skyhook.nvidia.com/v1alpha1', 'Skyhook', 'gpu-node-tuning')
    policy = cr_model.build_policy(policy_doc)
    assert [c.name for c in policy.compartments] == ['rack-a', 'rack-b', 'rack-c']
