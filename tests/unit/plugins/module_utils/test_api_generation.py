# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""api_generation: the v0.15 and v0.20 contracts as values, the evidence from nodes, and the choice between them."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.nodewright.bridge.plugins.module_utils import api_generation as ag
from ansible_collections.nodewright.bridge.plugins.module_utils import (
    constants, cr_deletion, cr_status, node_conditions, node_state, operator_guard, pod_layout)
from ansible_collections.nodewright.bridge.plugins.module_utils.api_generation import NODEWRIGHT, SKYHOOK

OLD, NEW = 'skyhook.nvidia.com', 'nodewright.nvidia.com'

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
    public = dict((k, v) for k, v in vars(constants).items() if k.isupper() and not k.startswith('_'))
    assert public == CONSTANTS_BEFORE


@pytest.mark.parametrize('name', sorted(SKYHOOK_OF_CONSTANT))
def test_every_operator_constant_is_the_skyhook_generations_value(name):
    assert getattr(constants, name) == SKYHOOK_OF_CONSTANT[name] == CONSTANTS_BEFORE[name]


def test_the_names_kept_elsewhere_are_the_skyhook_generations_too():
    # not moved yet (the wiring will pass a generation instead): pinned here so they cannot drift apart
    assert cr_deletion.FINALIZER == SKYHOOK.finalizer == 'skyhook.nvidia.com/skyhook'
    assert node_state.OPERATOR_VERSION == SKYHOOK.operator_version == 'v0.15.0'
    assert cr_status.CR_VERSION_ANNOTATION == SKYHOOK.version_annotation == 'skyhook.nvidia.com/version'
    assert pod_layout.DEFAULT_NAMESPACE == SKYHOOK.default_namespace == 'skyhook'
    assert pod_layout.DEFAULT_AGENT_IMAGE == SKYHOOK.default_agent_image == 'ghcr.io/nvidia/skyhook/agent:latest'
    assert (operator_guard.OPERATOR_NAMESPACE, operator_guard.LEASE_NAME) == SKYHOOK.lease_refs()[0]
    assert SKYHOOK.lease_refs() == (('skyhook', '3c22c1ae.nvidia.com'),)
    assert node_conditions.condition_type('gpu', 'NotReady') == SKYHOOK.node_condition_type('gpu', 'NotReady')
    assert node_state.node_state_key('gpu') == SKYHOOK.node_state_key('gpu')
    assert node_state.status_key('gpu') == SKYHOOK.status_key('gpu')
    assert node_state.cordon_key('gpu') == SKYHOOK.cordon_key('gpu')
    assert node_state.version_key('gpu') == SKYHOOK.version_key('gpu')


def test_the_kube_layer_looks_in_both_generations_groups():
    kube = pytest.importorskip('ansible_collections.nodewright.bridge.plugins.module_utils.kube')
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
    'policy_crd_name': 'deploymentpolicies.nodewright.nvidia.com',
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


def test_lookups_by_name_api_version_and_group():
    assert ag.by_name('nodewright') is NODEWRIGHT
    assert ag.by_api_version('skyhook.nvidia.com/v1alpha1') is SKYHOOK
    assert ag.by_api_version('nodewright.nvidia.com/v1alpha1') is NODEWRIGHT
    assert ag.by_group('nodewright.nvidia.com') is NODEWRIGHT
    assert ag.GENERATIONS == (SKYHOOK, NODEWRIGHT)


@pytest.mark.parametrize('call, text', [
    (lambda: ag.by_name('Skyhook'), "unknown NodeWright API generation 'Skyhook' (one of: skyhook, nodewright)"),
    (lambda: ag.by_api_version('skyhook.nvidia.com/v1beta1'), "unknown NodeWright apiVersion 'skyhook.nvidia.com/v1beta1'"),
    (lambda: ag.by_group('example.com'), "unknown NodeWright API group 'example.com'"),
])
def test_unknown_lookups_name_what_is_known(call, text):
    with pytest.raises(ag.GenerationError) as failure:
        call()
    assert text in str(failure.value)
