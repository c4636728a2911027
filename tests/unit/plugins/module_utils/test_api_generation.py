# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""api_generation: the v0.15 and v0.20 contracts as values, the evidence from nodes, and the choice between them."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest

from ansible_collections.nodewright.bridge.plugins.module_utils.model import api_generation as ag
from ansible_collections.nodewright.bridge.plugins.module_utils.model import constants
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import cr_deletion
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import node_annotations
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import node_conditions
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import operator_presence
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import pod_layout
from ansible_collections.nodewright.bridge.plugins.module_utils.planning import status_rollup
from ansible_collections.nodewright.bridge.plugins.module_utils.model.api_generation import NODEWRIGHT, SKYHOOK

OLD, NEW = 'skyhook.nvidia.com', 'nodewright.nvidia.com'
BOTH = {OLD: True, NEW: True}

# --------------------------------------------------------------------------- SKYHOOK is what constants.py said

# constants.py before it derived its names from SKYHOOK, value for value
CONSTANTS_BEFORE = {
    'SKYHOOK_GROUP': 'skyhook.nvidia.com',
    'NODEWRIGHT_GROUP': 'nodewright.nvidia.com',
    'VERSION': 'v1alpha1',
    'SKYHOOK_API_VERSION': 'skyhook.nvidia.com/v1alpha1',
    'NODEWRIGHT_API_VERSION': 'nodewright.nvidia.com/v1alpha1',
    'PREFIX': 'skyhook.nvidia.com',
    'BRIDGE_PREFIX': 'bridge.nodewright.io',
    'ANNOTATION_PREFIXES': ('skyhook.nvidia.com/', 'nodewright.nvidia.com/', 'bridge.nodewright.io/'),
    'PAUSE_ANNOTATION': 'skyhook.nvidia.com/pause',
    'DISABLE_ANNOTATION': 'skyhook.nvidia.com/disable',
    'NODE_STATE_PREFIX': 'skyhook.nvidia.com/nodeState_',
    'STATUS_PREFIX': 'skyhook.nvidia.com/status_',
    'CORDON_PREFIX': 'skyhook.nvidia.com/cordon_',
    'VERSION_PREFIX': 'skyhook.nvidia.com/version_',
    'AUTO_TAINT_PREFIX': 'skyhook.nvidia.com/autoTaint_',
    'IGNORE_LABEL': 'skyhook.nvidia.com/ignore',
    'INHERITED_CORDON_PREFIX': 'bridge.nodewright.io/cordon-inherited_',
    'BOOT_ID_PREFIX': 'bridge.nodewright.io/boot-id-before-interrupt_',
    'DEFAULT_RUNTIME_REQUIRED_TAINT': 'skyhook.nvidia.com=runtime-required:NoSchedule',
    'NAME_LABEL': 'skyhook.nvidia.com/name',
    'PACKAGE_LABEL': 'skyhook.nvidia.com/package',
    'INTERRUPT_LABEL': 'skyhook.nvidia.com/interrupt',
    'INTERRUPT_LABEL_VALUE': 'True',
    'PACKAGE_ANNOTATION': 'skyhook.nvidia.com/package',
    'PACKAGE_NAME_ANNOTATION': 'skyhook.nvidia.com/Package.Name',
    'PACKAGE_VERSION_ANNOTATION': 'skyhook.nvidia.com/Package.Version',
    'NODE_META_LABEL': 'skyhook.nvidia.com/skyhook-node-meta',
    'NODE_NAME_ANNOTATION': 'skyhook.nvidia.com/Node.name',
    'TAINT_EFFECTS': ('NoSchedule', 'PreferNoSchedule', 'NoExecute'),
    'UNSCHEDULABLE_TAINT': 'node.kubernetes.io/unschedulable',
}

# each constant of constants.py that names an operator key, and the SKYHOOK attribute it is
SKYHOOK_OF_CONSTANT = {
    'SKYHOOK_GROUP': SKYHOOK.group, 'NODEWRIGHT_GROUP': NODEWRIGHT.group, 'VERSION': SKYHOOK.version,
    'SKYHOOK_API_VERSION': SKYHOOK.api_version, 'NODEWRIGHT_API_VERSION': NODEWRIGHT.api_version, 'PREFIX': SKYHOOK.prefix,
    'PAUSE_ANNOTATION': SKYHOOK.pause_annotation, 'DISABLE_ANNOTATION': SKYHOOK.disable_annotation,
    'NODE_STATE_PREFIX': SKYHOOK.node_state_prefix, 'STATUS_PREFIX': SKYHOOK.status_prefix,
    'CORDON_PREFIX': SKYHOOK.cordon_prefix, 'VERSION_PREFIX': SKYHOOK.version_prefix,
    'AUTO_TAINT_PREFIX': SKYHOOK.auto_taint_prefix, 'IGNORE_LABEL': SKYHOOK.ignore_label,
    'DEFAULT_RUNTIME_REQUIRED_TAINT': SKYHOOK.runtime_required_taint, 'NAME_LABEL': SKYHOOK.name_label,
    'PACKAGE_LABEL': SKYHOOK.package_label, 'INTERRUPT_LABEL': SKYHOOK.interrupt_label,
    'PACKAGE_ANNOTATION': SKYHOOK.package_annotation, 'PACKAGE_NAME_ANNOTATION': SKYHOOK.package_name_annotation,
    'PACKAGE_VERSION_ANNOTATION': SKYHOOK.package_version_annotation, 'NODE_META_LABEL': SKYHOOK.node_meta_label,
    'NODE_NAME_ANNOTATION': SKYHOOK.node_name_annotation,
}


def test_constants_kept_every_name_and_value():
    # the operator's names; COLLECTION_VERSION is the collection's own (tests/unit/test_versions.py)
    public = dict((k, v) for k, v in vars(constants).items() if k.isupper() and not k.startswith('_') and k != 'COLLECTION_VERSION')
    assert public == CONSTANTS_BEFORE


@pytest.mark.parametrize('name', sorted(SKYHOOK_OF_CONSTANT))
def test_every_operator_constant_is_the_skyhook_generations_value(name):
    assert getattr(constants, name) == SKYHOOK_OF_CONSTANT[name] == CONSTANTS_BEFORE[name]


def test_the_names_kept_elsewhere_are_the_skyhook_generations_too():
    # not moved yet (the wiring will pass a generation instead): pinned here so they cannot drift apart
    assert cr_deletion.FINALIZER == SKYHOOK.finalizer == 'skyhook.nvidia.com/skyhook'
    assert node_annotations.OPERATOR_VERSION == SKYHOOK.operator_version == 'v0.15.0'
    assert status_rollup.CR_VERSION_ANNOTATION == SKYHOOK.version_annotation == 'skyhook.nvidia.com/version'
    assert pod_layout.DEFAULT_NAMESPACE == SKYHOOK.default_namespace == 'skyhook'
    assert pod_layout.DEFAULT_AGENT_IMAGE == SKYHOOK.default_agent_image == 'ghcr.io/nvidia/skyhook/agent:latest'
    assert (operator_presence.OPERATOR_NAMESPACE, operator_presence.LEASE_NAME) == SKYHOOK.lease_refs()[0]
    assert SKYHOOK.lease_refs() == (('skyhook', '3c22c1ae.nvidia.com'),)
    assert node_conditions.condition_type('gpu', 'NotReady') == SKYHOOK.node_condition_type('gpu', 'NotReady')
    assert node_annotations.node_state_key('gpu') == SKYHOOK.node_state_key('gpu')
    assert node_annotations.status_key('gpu') == SKYHOOK.status_key('gpu')
    assert node_annotations.cordon_key('gpu') == SKYHOOK.cordon_key('gpu')
    assert node_annotations.version_key('gpu') == SKYHOOK.version_key('gpu')


def test_the_kube_layer_looks_in_both_generations_groups():
    kube = pytest.importorskip('ansible_collections.nodewright.bridge.plugins.module_utils.api.kube')
    assert kube.CR_PLACES == ((SKYHOOK.group, SKYHOOK.plural), (NODEWRIGHT.group, NODEWRIGHT.plural))
    assert kube.POLICY_PLACES == ((SKYHOOK.group, SKYHOOK.policy_plural), (NODEWRIGHT.group, NODEWRIGHT.policy_plural))
    assert kube.GROUP_VERSIONS == {SKYHOOK.group: SKYHOOK.version, NODEWRIGHT.group: NODEWRIGHT.version}


# --------------------------------------------------------------------------- NODEWRIGHT differs where the notes say

def _attributes(generation):
    """Every name a generation has, keys of the CR 'gpu' and of the default taint key included."""
    values = dict((field, getattr(generation, field)) for field in generation._fields)
    values.update((name, getattr(generation, name)) for name in _PROPERTIES)
    values.update({
        'node_state_key(gpu)': generation.node_state_key('gpu'), 'status_key(gpu)': generation.status_key('gpu'),
        'cordon_key(gpu)': generation.cordon_key('gpu'), 'version_key(gpu)': generation.version_key('gpu'),
        'drain_start_key(gpu)': generation.drain_start_key('gpu'), 'drain_blocked_key(gpu)': generation.drain_blocked_key('gpu'),
        'node_condition_type(gpu, NotReady)': generation.node_condition_type('gpu', 'NotReady'),
        'auto_taint_key(nodewright.nvidia.com)': generation.auto_taint_key('nodewright.nvidia.com'),
        'lease_refs()': generation.lease_refs(), 'cr_node_keys(gpu)': generation.cr_node_keys('gpu'),
        'describe()': generation.describe(),
    })
    return values


_PROPERTIES = sorted(name for name, value in vars(ag.Generation).items() if isinstance(value, property))

# NODEWRIGHT's value of every name that differs from SKYHOOK's (nodewright-v0.20.md and the sources in the module)
NODEWRIGHT_DIFFERS = {
    'name': 'nodewright', 'group': 'nodewright.nvidia.com', 'kind': 'NodeWright', 'plural': 'nodewrights',
    'prefix': 'nodewright.nvidia.com', 'operator_version': 'v0.20.0', 'default_namespace': 'nodewright',
    'default_agent_image': 'ghcr.io/nvidia/nodewright/agent:latest',
    'runtime_required_taint': 'nodewright.nvidia.com=runtime-required:NoSchedule',
    'recognised_runtime_required_taints': ('nodewright.nvidia.com=runtime-required:NoSchedule',
                                           'skyhook.nvidia.com=runtime-required:NoSchedule'),
    'leases': ('3c22c1ae.nvidia.com', 'nodewright-webhook-bootstrap.nvidia.com'),
    'finalizer': 'nodewright.nvidia.com/nodewright', 'auto_taint_dots': True,
    'drain_start_stem': 'drainStart_', 'drain_blocked_stem': 'drainBlocked_',
    'runtime_required_cordon_stem': 'runtimeRequiredCordon', 'drain_blocked_condition': 'DrainBlocked',
    'mirrored_from_stem': 'mirrored-from', 'mirrored_generation_stem': 'mirrored-generation',
    'api_version': 'nodewright.nvidia.com/v1alpha1', 'crd_name': 'nodewrights.nodewright.nvidia.com',
    'pause_annotation': 'nodewright.nvidia.com/pause', 'disable_annotation': 'nodewright.nvidia.com/disable',
    'version_annotation': 'nodewright.nvidia.com/version',
    'mirrored_from_annotation': 'nodewright.nvidia.com/mirrored-from',
    'mirrored_generation_annotation': 'nodewright.nvidia.com/mirrored-generation',
    'node_state_prefix': 'nodewright.nvidia.com/nodeState_', 'status_prefix': 'nodewright.nvidia.com/status_',
    'cordon_prefix': 'nodewright.nvidia.com/cordon_', 'version_prefix': 'nodewright.nvidia.com/version_',
    'auto_taint_prefix': 'nodewright.nvidia.com/autoTaint_', 'drain_start_prefix': 'nodewright.nvidia.com/drainStart_',
    'drain_blocked_prefix': 'nodewright.nvidia.com/drainBlocked_', 'ignore_label': 'nodewright.nvidia.com/ignore',
    'runtime_required_cordon_annotation': 'nodewright.nvidia.com/runtimeRequiredCordon',
    'condition_prefix': 'nodewright.nvidia.com',
    'name_label': 'nodewright.nvidia.com/name', 'package_label': 'nodewright.nvidia.com/package',
    'interrupt_label': 'nodewright.nvidia.com/interrupt', 'package_annotation': 'nodewright.nvidia.com/package',
    'package_name_annotation': 'nodewright.nvidia.com/Package.Name',
    'package_version_annotation': 'nodewright.nvidia.com/Package.Version',
    'node_meta_label': 'nodewright.nvidia.com/skyhook-node-meta', 'node_name_annotation': 'nodewright.nvidia.com/Node.name',
    'node_state_key(gpu)': 'nodewright.nvidia.com/nodeState_gpu', 'status_key(gpu)': 'nodewright.nvidia.com/status_gpu',
    'cordon_key(gpu)': 'nodewright.nvidia.com/cordon_gpu', 'version_key(gpu)': 'nodewright.nvidia.com/version_gpu',
    'drain_start_key(gpu)': 'nodewright.nvidia.com/drainStart_gpu', 'drain_blocked_key(gpu)': 'nodewright.nvidia.com/drainBlocked_gpu',
    'node_condition_type(gpu, NotReady)': 'nodewright.nvidia.com/gpu/NotReady',
    'auto_taint_key(nodewright.nvidia.com)': 'nodewright.nvidia.com/autoTaint_nodewright.nvidia.com',
    'lease_refs()': (('nodewright', '3c22c1ae.nvidia.com'), ('nodewright', 'nodewright-webhook-bootstrap.nvidia.com')),
    'cr_node_keys(gpu)': ('nodewright.nvidia.com/nodeState_gpu', 'nodewright.nvidia.com/status_gpu',
                          'nodewright.nvidia.com/version_gpu', 'nodewright.nvidia.com/cordon_gpu',
                          'nodewright.nvidia.com/drainStart_gpu', 'nodewright.nvidia.com/drainBlocked_gpu'),
    'describe()': 'nodewright.nvidia.com/v1alpha1 nodewrights',
}

# SKYHOOK's value of the names that are v0.18+ only (None) or differ in shape
SKYHOOK_VALUES = {
    'operator_version': 'v0.15.0', 'leases': ('3c22c1ae.nvidia.com',), 'auto_taint_dots': False,
    'drain_start_stem': None, 'drain_blocked_stem': None, 'runtime_required_cordon_stem': None,
    'drain_blocked_condition': None, 'mirrored_from_stem': None, 'mirrored_generation_stem': None,
    'drain_start_prefix': None, 'drain_blocked_prefix': None, 'runtime_required_cordon_annotation': None,
    'mirrored_from_annotation': None, 'mirrored_generation_annotation': None,
    'drain_start_key(gpu)': None, 'drain_blocked_key(gpu)': None,
    'recognised_runtime_required_taints': ('skyhook.nvidia.com=runtime-required:NoSchedule',),
    'node_condition_type(gpu, NotReady)': 'skyhook.nvidia.com/gpu/NotReady',
    'cr_node_keys(gpu)': ('skyhook.nvidia.com/nodeState_gpu', 'skyhook.nvidia.com/status_gpu',
                          'skyhook.nvidia.com/version_gpu', 'skyhook.nvidia.com/cordon_gpu'),
}


def test_nodewright_differs_from_skyhook_exactly_where_the_notes_say():
    old, new = _attributes(SKYHOOK), _attributes(NODEWRIGHT)
    assert sorted(old) == sorted(new)
    same = sorted(name for name in old if name not in NODEWRIGHT_DIFFERS)
    assert same == ['policy_kind', 'policy_plural', 'version']
    assert [new[name] for name in same] == ['DeploymentPolicy', 'deploymentpolicies', 'v1alpha1']
    assert [old[name] for name in same] == [new[name] for name in same]
    for name, value in NODEWRIGHT_DIFFERS.items():
        assert new[name] == value, name
        assert old[name] != value, name
    for name, value in SKYHOOK_VALUES.items():
        assert old[name] == value, name


def test_every_key_of_the_legacy_generation_is_the_new_ones_with_the_old_prefix():
    # the finalizer aside (skyhook.nvidia.com/skyhook became nodewright.nvidia.com/nodewright), and describe()'s plural
    old, new = _attributes(SKYHOOK), _attributes(NODEWRIGHT)
    for name, value in old.items():
        if name not in ('finalizer', 'describe()') and isinstance(value, str) and value.startswith(OLD + '/') and new[name]:
            assert new[name] == NEW + value[len(OLD):], name


def test_the_generations_are_immutable_values():
    with pytest.raises(AttributeError):
        SKYHOOK.prefix = 'x'
    assert SKYHOOK == ag.by_name('skyhook') and hash(SKYHOOK) == hash(ag.by_name('skyhook'))
    assert SKYHOOK != NODEWRIGHT
    assert repr(NODEWRIGHT) == 'Generation(nodewright: nodewright.nvidia.com/v1alpha1)'


@pytest.mark.parametrize('taint_key, old, new', [
    ('nodewright.nvidia.com', 'skyhook.nvidia.com/autoTaint_nodewright.nvidia.com',
     'nodewright.nvidia.com/autoTaint_nodewright.nvidia.com'),
    ('example.com/gpu', 'skyhook.nvidia.com/autoTaint_example.com/gpu', 'nodewright.nvidia.com/autoTaint_example.com.gpu'),
    # cut to 63 characters after the prefix, then "-_." trimmed off the end (autoTaintAnnotationKey)
    ('k' * 51 + '-x', 'skyhook.nvidia.com/autoTaint_' + 'k' * 51 + '-x', 'nodewright.nvidia.com/autoTaint_' + 'k' * 51 + '-x'),
    ('k' * 52 + '-xyz', 'skyhook.nvidia.com/autoTaint_' + 'k' * 52 + '-xyz', 'nodewright.nvidia.com/autoTaint_' + 'k' * 52),
    ('k' * 60, 'skyhook.nvidia.com/autoTaint_' + 'k' * 60, 'nodewright.nvidia.com/autoTaint_' + 'k' * 53),
])
def test_the_auto_taint_marker_of_each_generation(taint_key, old, new):
    assert SKYHOOK.auto_taint_key(taint_key) == old
    assert NODEWRIGHT.auto_taint_key(taint_key) == new
    assert len(new.split('/', 1)[1]) <= 63


def test_lookups_by_name_and_api_version():
    assert ag.by_name('nodewright') is NODEWRIGHT
    assert ag.by_api_version('skyhook.nvidia.com/v1alpha1') is SKYHOOK
    assert ag.by_api_version('nodewright.nvidia.com/v1alpha1') is NODEWRIGHT
    assert ag.GENERATIONS == (SKYHOOK, NODEWRIGHT)


@pytest.mark.parametrize('call, text', [
    (lambda: ag.by_name('Skyhook'), "unknown NodeWright API generation 'Skyhook' (one of: skyhook, nodewright)"),
    (lambda: ag.by_api_version('skyhook.nvidia.com/v1beta1'), "unknown NodeWright apiVersion 'skyhook.nvidia.com/v1beta1'"),
])
def test_unknown_lookups_name_what_is_known(call, text):
    with pytest.raises(ag.GenerationError) as failure:
        call()
    assert text in str(failure.value)


# --------------------------------------------------------------------------- evidence from the nodes

def node(name, annotations=None, labels=None):
    return {'metadata': {'name': name, 'annotations': annotations or {}, 'labels': labels or {}}}


STATE = json.dumps({'tuning|1.0.0': {'name': 'tuning', 'version': '1.0.0', 'image': 'img', 'stage': 'apply', 'state': 'complete'}})
LATER = json.dumps({'tuning|1.0.0': {'name': 'tuning', 'version': '1.0.0', 'image': 'img', 'stage': 'config', 'state': 'complete'}})


def test_node_keys_name_the_prefixes_of_the_crs_operator_keys_only():
    nodes = [
        node('a', {OLD + '/nodeState_gpu': STATE}),
        node('b', {NEW + '/nodeState_gpu': STATE, NEW + '/version_gpu': 'v0.20.0'}),
        node('c', labels={NEW + '/status_gpu': 'complete'}),
        node('d', {NEW + '/drainStart_gpu': '2026-10-07T10:00:00Z'}),
        node('e', labels={NEW + '/quickstart': 'true', NEW + '/pool': 'a'}),   # a user's own keys under the prefix
        node('f', {NEW + '/nodeState_other': STATE}),                           # another CR's
        node('g', {NEW + '/autoTaint_nodewright.nvidia.com': 'true', NEW + '/runtimeRequiredCordon': 'true'}),
    ]
    prefixes, conflicts = ag.node_key_evidence(nodes, 'gpu')
    assert prefixes == {'a': [OLD], 'b': [NEW], 'c': [NEW], 'd': [NEW], 'e': [], 'f': [], 'g': []}
    assert conflicts == []
    assert ag.node_key_evidence(nodes)[0]['f'] == [NEW]   # any CR's keys when no CR is named


@pytest.mark.parametrize('annotations, conflicting', [
    ({OLD + '/nodeState_gpu': STATE, NEW + '/nodeState_gpu': STATE}, False),                   # the migration's copy
    ({OLD + '/nodeState_gpu': STATE, NEW + '/nodeState_gpu': json.dumps(json.loads(STATE), indent=1)}, False),
    ({OLD + '/nodeState_gpu': STATE, NEW + '/nodeState_gpu': LATER, NEW + '/version_gpu': 'v0.20.0'}, False),
    ({OLD + '/nodeState_gpu': STATE, NEW + '/nodeState_gpu': LATER}, True),
    ({OLD + '/nodeState_gpu': STATE, NEW + '/nodeState_gpu': 'not json'}, True),
    ({OLD + '/nodeState_gpu': STATE, NEW + '/status_gpu': 'complete'}, False),                 # one nodeState only
])
def test_a_conflict_is_two_nodestates_that_disagree_on_a_node_no_v018_operator_adopted(annotations, conflicting):
    _prefixes, conflicts = ag.node_key_evidence([node('n1', annotations)], 'gpu')
    if not conflicting:
        assert conflicts == []
        return
    assert conflicts == [
        'node n1: skyhook.nvidia.com/nodeState_gpu and nodewright.nvidia.com/nodeState_gpu disagree, and no '
        'nodewright.nvidia.com/version_gpu says a v0.18+ operator adopted the node (so neither copy is known to be '
        'current): remove the stale one, or set nodewright_api']


def test_conflicts_are_found_for_every_cr_when_none_is_named():
    nodes = [node('n1', {OLD + '/nodeState_a': STATE, NEW + '/nodeState_a': LATER,
                         OLD + '/nodeState_b': STATE, NEW + '/nodeState_b': LATER})]
    assert [c.split(':')[0] for c in ag.node_key_evidence(nodes)[1]] == ['node n1', 'node n1']
    assert 'nodeState_b' in ag.node_key_evidence(nodes, 'b')[1][0] and len(ag.node_key_evidence(nodes, 'b')[1]) == 1


def test_object_evidence_reads_the_mirror_stamp():
    docs = [{'metadata': {'name': 'gpu', 'annotations': {NEW + '/mirrored-from': 'gpu', NEW + '/mirrored-generation': '3'}}},
            {'metadata': {'name': 'native'}}]
    assert ag.object_evidence(docs) == {'gpu': 'gpu', 'native': None}


# --------------------------------------------------------------------------- the choice

def ev(served=None, nodes=None, objects=None, leases=None, cr_name='gpu', unread=None):
    return ag.evidence(BOTH if served is None else served, cr_name=cr_name, nodes=nodes, nodewright_objects=objects,
                       leases=leases, unread=unread)


OLD_NODE = node('n1', {OLD + '/nodeState_gpu': STATE})
NEW_NODE = node('n2', {NEW + '/nodeState_gpu': STATE, NEW + '/version_gpu': 'v0.20.0'})
NONE = {OLD: False, NEW: False}
ONLY_OLD = {OLD: True, NEW: False}
ONLY_NEW = {OLD: False, NEW: True}

CHOICES = [
    # option, evidence, generation, reason
    ('skyhook', ev(BOTH, nodes=[NEW_NODE]), SKYHOOK, 'nodewright_api=skyhook: the cluster serves skyhook.nvidia.com/v1alpha1 skyhooks'),
    ('nodewright', ev(BOTH), NODEWRIGHT, 'nodewright_api=nodewright: the cluster serves nodewright.nvidia.com/v1alpha1 nodewrights'),
    ('skyhook', ev(ONLY_OLD), SKYHOOK, 'nodewright_api=skyhook: the cluster serves skyhook.nvidia.com/v1alpha1 skyhooks'),
    ('nodewright', ev(ONLY_NEW), NODEWRIGHT, 'nodewright_api=nodewright: the cluster serves nodewright.nvidia.com/v1alpha1 nodewrights'),
    ('auto', ev(NONE), SKYHOOK,
     'auto: no NodeWright CRD served (neither skyhooks.skyhook.nvidia.com nor nodewrights.nodewright.nvidia.com): skyhook'),
    ('auto', ev(ONLY_OLD, nodes=[NEW_NODE]), SKYHOOK, 'auto: only skyhook.nvidia.com/v1alpha1 skyhooks is served: skyhook'),
    ('auto', ev(ONLY_NEW, nodes=[OLD_NODE]), NODEWRIGHT, 'auto: only nodewright.nvidia.com/v1alpha1 nodewrights is served: nodewright'),
    ('auto', ev(nodes=[OLD_NODE, NEW_NODE]), NODEWRIGHT,
     "auto: both groups are served and a v0.18+ operator is evident (node n2 carries the operator's "
     "nodewright.nvidia.com/*_gpu keys): nodewright"),
    ('auto', ev(nodes=[OLD_NODE], objects={'gpu': 'gpu'}), NODEWRIGHT,
     'auto: both groups are served and a v0.18+ operator is evident (NodeWright gpu mirrored from the legacy group '
     '(nodewright.nvidia.com/mirrored-from)): nodewright'),
    ('auto', ev(nodes=[OLD_NODE], objects={'gpu': None}), NODEWRIGHT,
     'auto: both groups are served and a v0.18+ operator is evident (NodeWright gpu made in the new group): nodewright'),
    ('auto', ev(nodes=[OLD_NODE], objects={}, leases=[('nodewright', '3c22c1ae.nvidia.com')]), NODEWRIGHT,
     'auto: both groups are served and a v0.18+ operator is evident (lease nodewright/3c22c1ae.nvidia.com (the v0.18+ '
     'default namespace)): nodewright'),
    ('auto', ev(nodes=[OLD_NODE], objects={}, leases=[('nodewright', 'nodewright-webhook-bootstrap.nvidia.com')]), NODEWRIGHT,
     'auto: both groups are served and a v0.18+ operator is evident (lease nodewright/nodewright-webhook-bootstrap.nvidia.com '
     '(the v0.18+ default namespace)): nodewright'),
    ('auto', ev(nodes=[OLD_NODE], objects={}, leases=[]), SKYHOOK,
     'auto: both groups are served and no v0.18+ operator is evident (no nodewright.nvidia.com keys for gpu on 1 node, '
     'no NodeWright gpu, no operator lease in namespace nodewright): skyhook'),
    ('auto', ev(nodes=[OLD_NODE, node('n3')], objects={}, leases=[('skyhook', 'nodewright-webhook-bootstrap.nvidia.com')]),
     SKYHOOK,
     'auto: both groups are served and no v0.18+ operator is evident (no nodewright.nvidia.com keys for gpu on 2 nodes, '
     'no NodeWright gpu, no operator lease in namespace nodewright, lease skyhook/nodewright-webhook-bootstrap.nvidia.com '
     'says v0.16.1 or later, not v0.18): skyhook'),
    ('auto', ev(nodes=[], objects={}, leases=[('nodewright', 'gpu-tuning-budget')]), SKYHOOK,     # not an operator lease
     'auto: both groups are served and no v0.18+ operator is evident (no nodewright.nvidia.com keys for gpu on 0 nodes, '
     'no NodeWright gpu, no operator lease in namespace nodewright): skyhook'),
    ('auto', ev(cr_name=None), SKYHOOK,
     'auto: both groups are served and no v0.18+ operator is evident (no nodes looked at, NodeWright objects not looked '
     'up, leases not looked up): skyhook'),
    ('auto', ev(nodes=[], objects={}, leases=[], cr_name=None, unread=['lease nodewright/3c22c1ae.nvidia.com (403)']), SKYHOOK,
     'auto: both groups are served and no v0.18+ operator is evident (no nodewright.nvidia.com keys on 0 nodes, no '
     'NodeWright object, no operator lease in namespace nodewright, could not read lease nodewright/3c22c1ae.nvidia.com '
     '(403)): skyhook'),
]


@pytest.mark.parametrize('option, evidence, generation, reason', CHOICES)
def test_choose(option, evidence, generation, reason):
    assert ag.choose(option, evidence) == (generation, reason)


def test_a_reason_names_at_most_three_nodes():
    nodes = [node('n%d' % i, {NEW + '/status_gpu': 'complete'}) for i in range(5)]
    _generation, reason = ag.choose('auto', ev(nodes=nodes))
    assert "node n0, n1, n2 and 2 more carry the operator's" in reason


@pytest.mark.parametrize('option, evidence, text', [
    ('nodewright', ev(ONLY_OLD),
     'nodewright_api=nodewright, but the cluster does not serve nodewright.nvidia.com/v1alpha1 nodewrights: the CRD '
     'nodewrights.nodewright.nvidia.com is missing (it serves skyhook.nvidia.com/v1alpha1 skyhooks: nodewright_api=skyhook '
     'or auto)'),
    ('skyhook', ev(ONLY_NEW),
     'nodewright_api=skyhook, but the cluster does not serve skyhook.nvidia.com/v1alpha1 skyhooks: the CRD '
     'skyhooks.skyhook.nvidia.com is missing (it serves nodewright.nvidia.com/v1alpha1 nodewrights: nodewright_api=nodewright '
     'or auto)'),
    ('skyhook', ev(NONE),
     'nodewright_api=skyhook, but the cluster does not serve skyhook.nvidia.com/v1alpha1 skyhooks: the CRD '
     'skyhooks.skyhook.nvidia.com is missing'),
    ('auto', ev(nodes=[node('n9', {OLD + '/nodeState_gpu': STATE, NEW + '/nodeState_gpu': LATER})]),
     'nodewright_api=auto cannot tell the generation: node n9: skyhook.nvidia.com/nodeState_gpu and '
     'nodewright.nvidia.com/nodeState_gpu disagree'),
    ('Auto', ev(), "nodewright_api must be one of auto, skyhook, nodewright, not 'Auto'"),
    ('auto', ag.evidence({OLD: True}), "the evidence must say whether nodewright.nvidia.com/v1alpha1 nodewrights is served "
                                       "(True or False), not None"),
    ('skyhook', ag.evidence({OLD: 'yes', NEW: True}), 'whether skyhook.nvidia.com/v1alpha1 skyhooks is served'),
])
def test_choose_refuses(option, evidence, text):
    with pytest.raises(ag.GenerationError) as failure:
        ag.choose(option, evidence)
    assert text in str(failure.value)


def test_an_explicit_option_does_not_read_the_node_keys():
    conflicting = ev(nodes=[node('n9', {OLD + '/nodeState_gpu': STATE, NEW + '/nodeState_gpu': LATER})])
    assert ag.choose('skyhook', conflicting)[0] is SKYHOOK
    assert ag.choose('nodewright', conflicting)[0] is NODEWRIGHT


@pytest.mark.parametrize('option, evidence, done', [
    ('skyhook', ev(), True),
    ('auto', ev(NONE), True),
    ('auto', ev(ONLY_NEW), True),
    ('auto', ev(nodes=[NEW_NODE]), True),                     # the node keys already tell
    ('auto', ev(nodes=[OLD_NODE]), False),                    # ask for the NodeWright object, then the leases
    ('auto', ev(nodes=[OLD_NODE], objects={}), False),
    ('auto', ev(nodes=[OLD_NODE], objects={'gpu': 'gpu'}), True),
    ('auto', ev(nodes=[OLD_NODE], objects={}, leases=[]), False),
    ('auto', ev(nodes=[node('n9', {OLD + '/nodeState_gpu': STATE, NEW + '/nodeState_gpu': LATER})]), True),
])
def test_decided_says_when_more_evidence_cannot_change_the_answer(option, evidence, done):
    assert ag.decided(option, evidence) is done


def test_evidence_is_a_plain_dict_of_what_was_looked_at():
    built = ag.evidence(BOTH, cr_name='gpu', nodes=[OLD_NODE], nodewright_objects={'gpu': None},
                        leases=[['nodewright', '3c22c1ae.nvidia.com']], unread=('x',))
    assert built == {'served': BOTH, 'cr_name': 'gpu', 'nodes': 1, 'node_prefixes': {'n1': [OLD]}, 'conflicts': [],
                     'nodewright_objects': {'gpu': None}, 'leases': [('nodewright', '3c22c1ae.nvidia.com')], 'unread': ['x']}
    assert ag.evidence(BOTH)['node_prefixes'] is None and ag.evidence(BOTH)['leases'] is None
