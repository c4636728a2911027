# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""NodeWright documents as the skyhook.nvidia.com/v1alpha1 documents the v0.15 operator serves, and back.

Upstream's rules, NVIDIA/nodewright (the late history stored as NVIDIA/skyhook):
operator/api/v1alpha1/nodewright_conversion.go @342baa23 (and its test: fullSkyhook, "lets explicit
nodewright.nvidia.com metadata win on a prefix collision", "clears the legacy finalizer", "converts the whole
Spec with full fidelity"), operator/internal/controller/mirror_controller.go @273d50a0 (mirrored-from, back-off),
the image rules of skyhook_types.go @71ca22b8 (Packages.Images), skyhook_webhook.go @2ff297d4,
nodewright_webhook.go @5a158dbc and operator/RELEASE_NOTES.md @1ae01466 (v0.18.0: inline tags rejected).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json
import os

import pytest
import yaml

from ansible.errors import AnsibleFilterError

from ansible_collections.nodewright.bridge.plugins.filter import to_nodewright as to_nodewright_plugin
from ansible_collections.nodewright.bridge.plugins.filter import to_skyhook as to_skyhook_plugin
from ansible_collections.nodewright.bridge.plugins.filter.to_nodewright import to_nodewright as to_nodewright_filter
from ansible_collections.nodewright.bridge.plugins.filter.to_skyhook import to_skyhook as to_skyhook_filter
from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_validation
from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_schema
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import operator_documents
from ansible_collections.nodewright.bridge.plugins.module_utils.contract.operator_documents import (
    DocumentError, conflict, first_difference, to_nodewright, to_skyhook)

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
    cr = cr_validation.build_cr(cr_doc)  # the model validates against the operator's CRD schema
    assert (cr.api_version, cr.kind, cr.name) == ('skyhook.nvidia.com/v1alpha1', 'Skyhook', 'gpu-node-tuning')
    policy = cr_validation.build_policy(policy_doc)
    assert [c.name for c in policy.compartments] == ['rack-a', 'rack-b', 'rack-c']


def _skyhook(**metadata):
    return dict(_nodewright(**metadata), apiVersion='skyhook.nvidia.com/v1alpha1', kind='Skyhook')


# --------------------------------------------------------------------------- to_skyhook: metadata


def test_to_skyhook_reprefixes_the_operators_keys_and_the_nodewright_key_wins_a_clash():
    doc = _nodewright(annotations={'nodewright.nvidia.com/pause': 'true', 'skyhook.nvidia.com/pause': 'false',
                                   'nodewright.nvidia.com/mirrored-from': 'tuning',
                                   'nodewright.nvidia.com/mirrored-generation': '3', 'owner': 'x'},
                      labels={'nodewright.nvidia.com/team': 'ml'}, finalizers=['nodewright.nvidia.com/nodewright'])
    meta = to_skyhook(doc)[0]['metadata']
    # the v0.15 operator reads skyhook.nvidia.com/pause: the CR stays paused; the mirror's stamps and the v0.18+
    # finalizer (which no v0.15 operator removes) go
    assert meta == {'name': 'tuning', 'annotations': {'skyhook.nvidia.com/pause': 'true', 'owner': 'x'},
                    'labels': {'skyhook.nvidia.com/team': 'ml'}}


def test_to_skyhook_leaves_the_keys_of_a_skyhook_alone():
    doc = _skyhook(annotations={'nodewright.nvidia.com/pause': 'true'})
    assert to_skyhook(doc) == [doc]


# --------------------------------------------------------------------------- to_skyhook: the v0.20 fields


@pytest.mark.parametrize('fields', [
    {'runtimeRequiredCordonAfter': False},
    {'runtimeRequiredCordonAfter': True},  # without runtimeRequired the operator ignores it
    {'drainConfig': {}},
    {'drainConfig': None},
    # as a v0.20 API server stores drainConfig: {} (the defaults preserve the v0.15 drain)
    {'drainConfig': {'deleteEmptyDirData': True, 'disableEviction': False, 'force': True, 'ignoreDaemonSets': True,
                     'timeout': '0s', 'gracePeriod': None}},
])
def test_to_skyhook_drops_a_v020_field_that_changes_nothing(fields):
    doc = _nodewright()
    doc['spec'].update(fields)
    warnings = []
    assert to_skyhook(doc, warnings=warnings)[0]['spec'] == _nodewright()['spec'] and warnings == []


def test_to_skyhook_drops_a_stage_timeout_of_zero_v015_has_no_bound_either():
    doc = _nodewright()
    doc['spec']['packages']['a']['stageTimeout'] = '0s'
    assert to_skyhook(doc)[0]['spec'] == _nodewright()['spec']


def _tuned():
    doc = _nodewright()
    doc['spec'].update(runtimeRequired=True, runtimeRequiredCordonAfter=True,
                       drainConfig={'timeout': '10m', 'force': False})
    doc['spec']['packages']['a']['stageTimeout'] = '20m'
    return doc


def test_to_skyhook_refuses_a_v020_field_that_would_change_the_rollout_naming_each():
    with pytest.raises(DocumentError) as info:
        to_skyhook([None, _tuned()])
    message = str(info.value)
    assert message.startswith('document 1 (NodeWright tuning) cannot be a skyhook.nvidia.com/v1alpha1 Skyhook')
    assert 'spec.drainConfig: the v0.15 operator drains with its fixed rules' in message
    assert 'not with force false, timeout 10m' in message
    assert 'spec.runtimeRequiredCordonAfter: the v0.15 operator does not cordon a node' in message
    assert 'spec.packages.a.stageTimeout: the v0.15 operator does not bound a stage' in message
    assert 'drop_v020_fields=true' in message


def test_to_skyhook_drops_them_on_request_with_a_warning_each():
    warnings = []
    out = to_skyhook(_tuned(), drop_v020_fields=True, warnings=warnings)[0]
    assert out['spec'] == dict(_nodewright()['spec'], runtimeRequired=True)
    assert [w.split(':', 1)[0] for w in warnings] == [
        'spec.drainConfig dropped', 'spec.runtimeRequiredCordonAfter dropped', 'spec.packages.a.stageTimeout dropped']


def test_the_v020_fields_are_every_field_the_legacy_schema_lacks():
    doc = _tuned()
    found = [path for path, holder, key in operator_documents.v020_fields(doc['spec'])]
    assert sorted(found) == sorted(cr_schema.fields_only_in(doc['spec'], cr_schema.NODEWRIGHT_SPEC, cr_schema.SKYHOOK_SPEC,
                                                            'spec'))


@pytest.mark.parametrize('image', ['localhost:5000/org/a', 'registry.local/a@sha256:' + '0' * 64])
def test_to_skyhook_refuses_an_image_v015_would_cut(image):
    # Packages.Images (skyhook_types.go @71ca22b8) cuts at the first ':'
    doc = _nodewright()
    doc['spec']['packages']['a']['image'] = image
    with pytest.raises(DocumentError, match="spec.packages.a.image: the v0.15 operator cuts"):
        to_skyhook(doc)


def test_the_filter_warns_for_each_dropped_field(monkeypatch):
    shown = []
    monkeypatch.setattr(to_skyhook_plugin.Display, 'warning', lambda self, text: shown.append(text))
    to_skyhook_filter([_tuned()], drop_v020_fields=True)
    assert len(shown) == 3 and shown[0].startswith('to_skyhook: spec.drainConfig dropped')
    with pytest.raises(AnsibleFilterError, match='(?s)to_skyhook: document 0 .*drop_v020_fields'):
        to_skyhook_filter([_tuned()])


# --------------------------------------------------------------------------- to_nodewright


def _full_skyhook():
    """Every spec field of a legacy Skyhook (upstream's fullSkyhook fixture, nodewright_conversion_test.go @342baa23)."""
    return {'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'Skyhook',
            'metadata': {'name': 'demo', 'resourceVersion': '12345', 'uid': 'abc-123', 'generation': 7,
                         'finalizers': ['skyhook.nvidia.com/skyhook'], 'labels': {'team': 'infra'},
                         'annotations': {'skyhook.nvidia.com/pause': 'true'}},
            'spec': {'serial': True, 'runtimeRequired': True, 'autoTaintNewNodes': True, 'priority': 50,
                     'deploymentPolicy': 'policy-a', 'sequencing': 'all',
                     'podNonInterruptLabels': {'matchLabels': {'pod': 'keep'}},
                     'nodeSelectors': {'matchLabels': {'node': 'target'}},
                     'deploymentPolicyOptions': {'resetBatchStateOnCompletion': True},
                     'interruptionBudget': {'percent': 25},
                     # the legacy types of v0.18+ carry drainConfig; the converter keeps it
                     'drainConfig': {'disableEviction': True, 'timeout': '5m0s', 'gracePeriod': '30s'},
                     'packages': {'tuning': {
                         'name': 'tuning', 'version': '1.2.3', 'image': 'alpine', 'agentImageOverride': 'alpine:3.21.0',
                         'containerSHA': 'sha256:' + 'd' * 64, 'interrupt': {'type': 'service', 'services': ['kubelet']},
                         'dependsOn': {'base': '0.1.0'}, 'configInterrupts': {'foo.conf': {'type': 'reboot'}},
                         'configMap': {'foo.conf': 'bar'}, 'env': [{'name': 'FOO', 'value': 'BAR'}],
                         'resources': {'cpuRequest': '500m', 'cpuLimit': '1', 'memoryRequest': '64Mi', 'memoryLimit': '128Mi'},
                         'gracefulShutdown': '30s', 'uninstall': {'enabled': True, 'apply': True}}},
                     'additionalTolerations': [{'key': 'runtime', 'operator': 'Equal', 'value': 'required',
                                                'effect': 'NoSchedule'}]},
            'status': {'status': 'in_progress', 'observedGeneration': 7}}


def test_to_nodewright_converts_as_the_mirror_does():
    legacy = _full_skyhook()
    out = to_nodewright(legacy)[0]
    assert (out['apiVersion'], out['kind']) == ('nodewright.nvidia.com/v1alpha1', 'NodeWright')
    # "converts the whole Spec with full fidelity"; "copies ObjectMeta and translates the prefix"; "clears the legacy
    # finalizer"; "clears ResourceVersion and UID"; the status is the API server's (a document to apply has none)
    assert json.dumps(out['spec'], sort_keys=True) == json.dumps(legacy['spec'], sort_keys=True)
    assert out['metadata'] == {'name': 'demo', 'labels': {'team': 'infra'},
                               'annotations': {'nodewright.nvidia.com/pause': 'true'}}
    assert 'status' not in out and legacy == _full_skyhook()


def test_to_nodewright_lets_an_explicit_nodewright_key_win_a_clash():
    # "lets explicit nodewright.nvidia.com metadata win on a prefix collision (deterministic)"
    doc = _skyhook(annotations={'skyhook.nvidia.com/pause': 'true', 'nodewright.nvidia.com/pause': 'false'},
                   labels={'skyhook.nvidia.com/team': 'legacy', 'nodewright.nvidia.com/team': 'infra'})
    meta = to_nodewright(doc)[0]['metadata']
    assert meta['annotations'] == {'nodewright.nvidia.com/pause': 'false'}
    assert meta['labels'] == {'nodewright.nvidia.com/team': 'infra'}


def test_to_nodewright_keeps_a_nodewright_as_it_is_its_legacy_keys_stay_inert():
    doc = _nodewright(annotations={'skyhook.nvidia.com/pause': 'true'}, resourceVersion='9')
    assert to_nodewright(doc) == [_nodewright(annotations={'skyhook.nvidia.com/pause': 'true'})]


def test_to_nodewright_moves_policies_of_either_group():
    policy = {'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'DeploymentPolicy', 'metadata': {'name': 'p'},
              'spec': {'default': {'budget': {'count': 1}, 'strategy': {'fixed': {'initialBatch': 1}}}}}
    out = to_nodewright([policy, dict(policy, apiVersion='nodewright.nvidia.com/v1alpha1')])
    assert out == [dict(policy, apiVersion='nodewright.nvidia.com/v1alpha1')] * 2


@pytest.mark.parametrize('image,bare', [
    ('registry.local/a:1.0.0', 'registry.local/a'),
    ('localhost:5000/org/a:1.0.0', 'localhost:5000/org/a'),  # a ':' before the last '/' is a port (splitImageReference)
])
def test_to_nodewright_leaves_off_a_tag_that_is_the_version(image, bare):
    # v0.15 stored it so (Packages.Images); v0.18+ refuses any inline tag (RELEASE_NOTES v0.18.0)
    doc = _skyhook()
    doc['spec']['packages']['a']['image'] = image
    warnings = []
    out = to_nodewright(doc, warnings=warnings)[0]
    assert out['spec']['packages']['a']['image'] == bare
    assert warnings == ["document 0 (Skyhook tuning): spec.packages.a.image: %r becomes %r: a NodeWright takes a bare "
                        "repository (its version '1.0.0' supplies the tag)" % (image, bare)]


def test_to_nodewright_keeps_a_port_without_a_tag():
    doc = _skyhook()
    doc['spec']['packages']['a']['image'] = 'localhost:5000/org/a'
    assert to_nodewright(doc)[0]['spec']['packages']['a']['image'] == 'localhost:5000/org/a'


@pytest.mark.parametrize('image,message', [
    ('registry.local/a:2.0.0', "tag '2.0.0' of 'registry.local/a' is not the version '1.0.0'"),
    ('registry.local/a@sha256:' + 'a' * 64, 'carries a digest; a NodeWright takes a bare repository'),
])
def test_to_nodewright_refuses_another_tag_or_a_digest(image, message):
    doc = _skyhook()
    doc['spec']['packages']['a']['image'] = image
    with pytest.raises(DocumentError) as info:
        to_nodewright(doc)
    assert str(info.value).startswith('document 0 (Skyhook tuning): spec.packages.a.image: ') and message in str(info.value)


def test_the_nodewright_filter_reports_errors_and_warnings(monkeypatch):
    shown = []
    monkeypatch.setattr(to_nodewright_plugin.Display, 'warning', lambda self, text: shown.append(text))
    doc = _skyhook()
    doc['spec']['packages']['a']['image'] = 'registry.local/a:1.0.0'
    assert to_nodewright_filter(doc)[0]['kind'] == 'NodeWright'
    assert shown and shown[0].startswith('to_nodewright: document 0 (Skyhook tuning): spec.packages.a.image')
    with pytest.raises(AnsibleFilterError, match='to_nodewright: document 0'):
        to_nodewright_filter([{'kind': 'Pod'}])


# --------------------------------------------------------------------------- round trips


def test_the_nodewright_example_is_the_skyhook_example_converted():
    assert _load(EXAMPLE) == to_nodewright(_load(EXAMPLE_SKYHOOK))
    assert to_skyhook(to_nodewright(_load(EXAMPLE_SKYHOOK))) == _load(EXAMPLE_SKYHOOK)


def test_the_v020_example_round_trips_only_without_its_v020_fields(v020_example_documents):
    docs = copy.deepcopy(v020_example_documents)
    assert to_nodewright(docs) == docs  # NodeWright documents stay as they are
    with pytest.raises(DocumentError) as info:
        to_skyhook(docs)
    assert [line.split(':', 1)[0] for line in str(info.value).splitlines()[1:4]] == [
        '  - spec.drainConfig', '  - spec.runtimeRequiredCordonAfter', '  - spec.packages.tuning.stageTimeout']
    warnings = []
    back = to_nodewright(to_skyhook(docs, drop_v020_fields=True, warnings=warnings))
    expected = copy.deepcopy(docs)
    for field in ('drainConfig', 'runtimeRequiredCordonAfter'):
        del expected[1]['spec'][field]
    del expected[1]['spec']['packages']['tuning']['stageTimeout']
    assert back == expected and len(warnings) == 3
    cr_validation.build_cr(to_skyhook(docs, drop_v020_fields=True)[1])  # a valid v0.15 Skyhook


# --------------------------------------------------------------------------- the same name in both groups


def _pair():
    """A legacy Skyhook as a v0.15 API server stores it and a user-made NodeWright of the same name saying the same."""
    legacy = _skyhook(resourceVersion='3')
    legacy['spec'].update(priority=200, serial=False, interruptionBudget={}, podNonInterruptLabels={})
    legacy['spec']['packages']['a'].update(name='a', image='registry.local/a:1.0.0', resources={'cpuRequest': '0.5'},
                                           gracefulShutdown='0.5m')
    nodewright = _nodewright(resourceVersion='8')
    nodewright['spec'].update(runtimeRequiredCordonAfter=False, drainConfig={'force': True})
    nodewright['spec']['packages']['a'].update(resources={'cpuRequest': '500m'}, gracefulShutdown='30s')
    return legacy, nodewright


def test_two_objects_that_say_the_same_are_no_conflict():
    # defaults, empty values, the package name, a stripped tag, durations and quantities are read as the operator does
    legacy, nodewright = _pair()
    assert conflict(legacy, nodewright) is None


def test_a_mirror_or_a_legacy_object_being_deleted_is_no_conflict():
    legacy, nodewright = _pair()
    legacy['spec']['packages']['a']['version'] = '0.9.0'
    mirror = copy.deepcopy(nodewright)
    mirror['metadata']['annotations'] = {'nodewright.nvidia.com/mirrored-from': 'tuning'}
    assert conflict(legacy, mirror) is None
    legacy['metadata']['deletionTimestamp'] = '2026-10-10T00:00:00Z'
    assert conflict(legacy, nodewright) is None


def test_a_conflict_names_both_objects_and_the_first_differing_key():
    legacy, nodewright = _pair()
    legacy['spec']['packages']['a']['version'] = '0.9.0'
    nodewright['metadata']['annotations'] = {'nodewright.nvidia.com/mirrored-from': 'other'}  # another's: not a mirror
    found = conflict(legacy, nodewright)
    assert dict((k, v) for k, v in found.items() if k != 'message') == {
        'skyhook': 'skyhooks.skyhook.nvidia.com/tuning', 'nodewright': 'nodewrights.nodewright.nvidia.com/tuning',
        'path': 'spec.packages.a.version'}
    assert found['message'].startswith(
        'skyhooks.skyhook.nvidia.com/tuning and nodewrights.nodewright.nvidia.com/tuning are two objects of the same name: '
        'the NodeWright is not the Skyhook\'s mirror (no nodewright.nvidia.com/mirrored-from: tuning) and their specs '
        "differ at spec.packages.a.version ('0.9.0' in the Skyhook, '1.0.0' in the NodeWright)")
    assert 'nothing was written' in found['message'] and 'kubectl delete skyhooks.skyhook.nvidia.com/tuning' in found['message']


def test_a_drain_config_that_drains_otherwise_is_a_conflict():
    legacy, nodewright = _pair()
    nodewright['spec']['drainConfig'] = {'timeout': '10m'}
    found = conflict(legacy, nodewright)
    assert found['path'] == 'spec.drainConfig' and "(absent) in the Skyhook, {'timeout': '10m'" in found['message']


def test_first_difference_walks_keys_in_order_and_lists_by_index():
    assert first_difference({'a': 1, 'b': [1, 2]}, {'a': 1, 'b': [1, 2]}) is None
    assert first_difference({'a': 1, 'b': [1, 2]}, {'a': 1, 'b': [1, 3]}) == 'spec.b[1]'
    assert first_difference({'a': [{'k': 'x'}]}, {'a': [{'k': 'x'}, {}]}) == 'spec.a[1]'
    assert first_difference({'b': 1}, {'a': 1, 'b': 2}) == 'spec.a'
