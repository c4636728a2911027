# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""drain_rules: the operator's ShouldEvict / HasNonInterruptWork rules, selectors, PDB matching, backoff."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.nodewright.bridge.plugins.module_utils.contract import drain_rules as dr

CORDON_KEY = 'node.kubernetes.io/unschedulable'


def make_pod(name='web-1', namespace='apps', phase='Running', labels=None, annotations=None, owners=None,
             tolerations=None, volumes=None, uid=None, deleting=False):
    metadata = {'name': name, 'namespace': namespace, 'uid': uid or 'uid-%s' % name}
    if labels is not None:
        metadata['labels'] = labels
    if annotations is not None:
        metadata['annotations'] = annotations
    if owners is not None:
        metadata['ownerReferences'] = owners
    if deleting:
        metadata['deletionTimestamp'] = '2026-05-01T10:00:00Z'
    spec = {'nodeName': 'gpu-1', 'containers': [{'name': 'c', 'image': 'busybox'}]}
    if tolerations is not None:
        spec['tolerations'] = tolerations
    if volumes is not None:
        spec['volumes'] = volumes
    pod = {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': metadata, 'spec': spec}
    if phase is not None:
        pod['status'] = {'phase': phase}
    return pod


def owner(kind, name='owner', controller=True):
    return {'apiVersion': 'apps/v1', 'kind': kind, 'name': name, 'uid': 'u-' + name, 'controller': controller}


RS = owner('ReplicaSet', 'web-abc')
DS = owner('DaemonSet', 'node-exporter')
# what the DaemonSet controller adds to every DaemonSet pod
DS_TOLERATION = {'key': CORDON_KEY, 'operator': 'Exists', 'effect': 'NoSchedule'}


def classify(pod, **kwargs):
    return dr.classify_pod(pod, **kwargs)


def expr(key, operator, values=None):
    item = {'key': key, 'operator': operator}
    if values is not None:
        item['values'] = values
    return item


def make_pdb(name='web-pdb', namespace='apps', selector='absent', min_available=None, max_unavailable=None,
             status=None, generation=None):
    metadata = {'name': name, 'namespace': namespace}
    if generation is not None:
        metadata['generation'] = generation
    spec = {}
    if selector != 'absent':
        spec['selector'] = selector
    if min_available is not None:
        spec['minAvailable'] = min_available
    if max_unavailable is not None:
        spec['maxUnavailable'] = max_unavailable
    pdb = {'apiVersion': 'policy/v1', 'kind': 'PodDisruptionBudget', 'metadata': metadata, 'spec': spec}
    if status is not None:
        pdb['status'] = status
    return pdb


# --- DrainRules --------------------------------------------------------------------------------

def test_default_rules_are_the_operators():
    rules = dr.DrainRules()
    assert rules.as_dict() == {
        'skip_daemonsets': True, 'skip_mirror_pods': True, 'skip_finished': True, 'skip_unknown_phase': True,
        'skip_unschedulable_tolerant': True, 'skip_kube_system': True, 'unschedulable_toleration': 'key',
    }
    assert dr.DrainRules.from_dict(None) == rules
    assert dr.DrainRules.from_dict({}) == rules
    assert dr.DrainRules.from_dict(rules) is rules


def test_rules_from_dict_overrides_and_equality():
    rules = dr.DrainRules.from_dict({'skip_kube_system': False, 'unschedulable_toleration': 'taint'})
    assert rules.skip_kube_system is False
    assert rules.unschedulable_toleration == 'taint'
    assert rules.skip_daemonsets is True
    assert rules != dr.DrainRules()
    assert rules == dr.DrainRules(skip_kube_system=False, unschedulable_toleration='taint')
    assert hash(rules) == hash(dr.DrainRules(skip_kube_system=False, unschedulable_toleration='taint'))
    assert 'skip_kube_system=False' in repr(rules)


@pytest.mark.parametrize('data,message', [
    ({'skip_deamonsets': False}, 'unknown drain rule(s) skip_deamonsets'),
    ({'skip_finished': 'yes'}, "skip_finished must be a boolean, got 'yes'"),
    ({'skip_mirror_pods': 1}, 'skip_mirror_pods must be a boolean'),
    ({'unschedulable_toleration': 'exists'}, "unschedulable_toleration must be one of key, taint, got 'exists'"),
    (['skip_finished'], 'drain rules must be a dict, got list'),
])
def test_rules_reject_bad_input(data, message):
    with pytest.raises(ValueError) as exc:
        dr.DrainRules.from_dict(data)
    assert message in str(exc.value)


# --- classify_pod: every rule and its switch ---------------------------------------------------------

def test_plain_running_pod_is_evicted():
    assert classify(make_pod(owners=[RS])) == ('evict', 'evictable')


def test_pending_pod_is_evicted():
    assert classify(make_pod(phase='Pending', owners=[RS])) == ('evict', 'evictable')


def test_bare_pod_and_emptydir_pod_are_evicted_like_the_operator():
    # kubectl would refuse both without --force / --delete-emptydir-data; the operator evicts them
    pod = make_pod(volumes=[{'name': 'scratch', 'emptyDir': {}}])
    assert classify(pod) == ('evict', 'evictable')
    assert dr.kubectl_objections(pod) == ['unreplicated', 'local-storage']


def test_terminating_pod_is_evicted_with_its_own_reason():
    assert classify(make_pod(owners=[RS], deleting=True)) == ('evict', 'terminating')


@pytest.mark.parametrize('phase', ['Succeeded', 'Failed'])
def test_finished_pods(phase):
    pod = make_pod(phase=phase, owners=[RS])
    assert classify(pod) == ('skip', 'finished')
    assert classify(pod, rules={'skip_finished': False}) == ('evict', 'evictable')
    # skip_unknown_phase does not touch finished pods
    assert classify(pod, rules={'skip_unknown_phase': False}) == ('skip', 'finished')


@pytest.mark.parametrize('phase', ['Unknown', '', None])
def test_pods_neither_running_nor_pending_nor_finished(phase):
    pod = make_pod(phase=phase, owners=[RS])
    assert classify(pod) == ('skip', 'unknown-phase')
    assert classify(pod, rules={'skip_unknown_phase': False}) == ('evict', 'evictable')
    assert classify(pod, rules={'skip_finished': False}) == ('skip', 'unknown-phase')


def test_pod_without_status_is_unknown_phase():
    pod = make_pod(owners=[RS])
    del pod['status']
    assert classify(pod) == ('skip', 'unknown-phase')


def test_mirror_pod():
    pod = make_pod(namespace='monitoring', annotations={dr.MIRROR_ANNOTATION: 'abc123', 'other': 'x'},
                   owners=[owner('Node', 'gpu-1', controller=True)])
    assert classify(pod) == ('skip', 'mirror')
    # the operator's code has no mirror rule: it would evict this one
    assert classify(pod, rules={'skip_mirror_pods': False}) == ('evict', 'evictable')


def test_annotations_without_the_mirror_key_are_not_mirror():
    pod = make_pod(annotations={'kubernetes.io/config.source': 'api'}, owners=[RS])
    assert classify(pod) == ('evict', 'evictable')
    assert dr.is_mirror_pod(pod) is False


def test_daemonset_pod_with_one_owner_is_skipped():
    # the operator's own check only fires with >1 owners; we look at any owner
    pod = make_pod(owners=[DS])
    assert classify(pod) == ('skip', 'daemonset')
    assert classify(pod, rules={'skip_daemonsets': False}) == ('evict', 'evictable')


def test_daemonset_pod_with_several_owners():
    pod = make_pod(owners=[owner('Something', 'x', controller=False), DS])
    assert classify(pod) == ('skip', 'daemonset')


def test_real_daemonset_pod_is_skipped_by_its_toleration_when_the_daemonset_switch_is_off():
    # as in the operator: the DaemonSet controller's toleration is what keeps DaemonSet pods
    pod = make_pod(owners=[DS], tolerations=[DS_TOLERATION])
    assert classify(pod) == ('skip', 'daemonset')
    assert classify(pod, rules={'skip_daemonsets': False}) == ('skip', 'tolerates-unschedulable')
    assert classify(pod, rules={'skip_daemonsets': False, 'skip_unschedulable_tolerant': False}) == ('evict', 'evictable')


def test_kube_system_pods():
    pod = make_pod(namespace='kube-system', owners=[RS])
    assert classify(pod) == ('skip', 'kube-system')
    assert classify(pod, rules={'skip_kube_system': False}) == ('evict', 'evictable')
    assert classify(make_pod(namespace='kube-systemx', owners=[RS])) == ('evict', 'evictable')


@pytest.mark.parametrize('toleration', [
    {'key': CORDON_KEY, 'operator': 'Exists', 'effect': 'NoSchedule'},
    {'key': CORDON_KEY, 'operator': 'Exists'},
    {'key': CORDON_KEY},
    # the operator only compares the key: these count too, although they do not tolerate the taint
    {'key': CORDON_KEY, 'operator': 'Equal', 'value': 'yes', 'effect': 'NoSchedule'},
    {'key': CORDON_KEY, 'operator': 'Exists', 'effect': 'NoExecute'},
])
def test_tolerations_with_the_cordon_key_skip_in_key_mode(toleration):
    pod = make_pod(owners=[RS], tolerations=[{'key': 'nvidia.com/gpu', 'operator': 'Exists'}, toleration])
    assert classify(pod) == ('skip', 'tolerates-unschedulable')
    assert classify(pod, rules={'skip_unschedulable_tolerant': False}) == ('evict', 'evictable')


@pytest.mark.parametrize('toleration', [
    {'operator': 'Exists'},                       # tolerates every taint, but has no key
    {'operator': 'Exists', 'effect': 'NoSchedule'},
    {'key': 'node.kubernetes.io/not-ready', 'operator': 'Exists'},
    {'key': 'node.kubernetes.io/unschedulable-x', 'operator': 'Exists'},
])
def test_tolerations_without_the_cordon_key_do_not_skip_in_key_mode(toleration):
    assert classify(make_pod(owners=[RS], tolerations=[toleration])) == ('evict', 'evictable')


@pytest.mark.parametrize('toleration,tolerates', [
    ({'key': CORDON_KEY, 'operator': 'Exists', 'effect': 'NoSchedule'}, True),
    ({'key': CORDON_KEY, 'operator': 'Exists'}, True),
    ({'key': CORDON_KEY}, True),                                  # Equal with empty value = the taint's value
    ({'key': CORDON_KEY, 'operator': 'Equal', 'value': ''}, True),
    ({'operator': 'Exists'}, True),                               # key-less Exists tolerates everything
    ({'operator': 'Exists', 'effect': 'NoSchedule'}, True),
    ({'key': CORDON_KEY, 'operator': 'Equal', 'value': 'yes'}, False),
    ({'key': CORDON_KEY, 'operator': 'Exists', 'effect': 'NoExecute'}, False),
    ({'operator': 'Exists', 'effect': 'PreferNoSchedule'}, False),
    ({'key': CORDON_KEY, 'operator': 'Gt', 'value': '1'}, False),
    ({'key': 'other', 'operator': 'Exists'}, False),
    ({'operator': 'Equal'}, False),                               # invalid in the API; never tolerates
])
def test_taint_mode_uses_kubernetes_toleration_semantics(toleration, tolerates):
    pod = make_pod(owners=[RS], tolerations=[toleration])
    assert dr.tolerates_unschedulable(pod, 'taint') is tolerates
    expected = ('skip', 'tolerates-unschedulable') if tolerates else ('evict', 'evictable')
    assert classify(pod, rules={'unschedulable_toleration': 'taint'}) == expected


def test_tolerates_unschedulable_rejects_unknown_mode():
    with pytest.raises(ValueError):
        dr.tolerates_unschedulable(make_pod(), 'exists')


def test_every_switch_off_evicts_everything_running():
    rules = dict((name, False) for name in dr.DrainRules.SWITCHES)
    pod = make_pod(namespace='kube-system', owners=[DS], tolerations=[DS_TOLERATION],
                   annotations={dr.MIRROR_ANNOTATION: 'x'})
    assert classify(pod, rules=rules) == ('evict', 'evictable')
    assert classify(make_pod(phase='Succeeded'), rules=rules) == ('evict', 'evictable')
    assert classify(make_pod(phase='Unknown'), rules=rules) == ('evict', 'evictable')


def test_reason_precedence():
    everything = make_pod(phase='Failed', namespace='kube-system', owners=[DS], tolerations=[DS_TOLERATION],
                          annotations={dr.MIRROR_ANNOTATION: 'x'}, labels={'app': 'web'})
    assert classify(everything, pod_selector='app=db') == ('skip', 'not-selected')
    order = ['finished', 'mirror', 'daemonset', 'kube-system', 'tolerates-unschedulable']
    switches = ['skip_finished', 'skip_mirror_pods', 'skip_daemonsets', 'skip_kube_system', 'skip_unschedulable_tolerant']
    rules = {}
    for reason, switch in zip(order, switches):
        assert classify(everything, rules=rules, protected_selector='app=web') == ('skip', reason)
        rules[switch] = False
    assert classify(everything, rules=rules, protected_selector='app=web') == ('skip', 'protected')
    assert classify(everything, rules=rules) == ('evict', 'evictable')


def test_classify_accepts_rules_object():
    rules = dr.DrainRules(skip_kube_system=False)
    assert classify(make_pod(namespace='kube-system', owners=[RS]), rules=rules) == ('evict', 'evictable')


def test_pod_without_namespace_counts_as_default():
    pod = make_pod(owners=[RS])
    del pod['metadata']['namespace']
    assert dr.pod_namespace(pod) == 'default'
    assert dr.pod_key(pod) == 'default/web-1'
    assert classify(pod) == ('evict', 'evictable')


# --- pod_selector and protected_selector ------------------------------------------------------------

@pytest.mark.parametrize('selector,selected', [
    (None, True),
    ('', True),
    ({}, True),
    ('app=web', True),
    ('app==web', True),
    ('app=db', False),
    ('app!=db', True),
    ('app!=web', False),
    ('missing!=x', True),                      # != matches pods without the key
    ('tier in (frontend, backend)', True),
    ('tier in (backend)', False),
    ('tier notin (backend)', True),
    ('tier notin (frontend,backend)', False),
    ('app', True),
    ('!app', False),
    ('!missing', True),
    ('app=web,tier=frontend', True),
    (' app = web , tier in (frontend) ', True),
    ('app=web,tier=backend', False),
    ('app=web,app=db', False),                 # ANDed, not collapsed
    ('example.com/team=gpu', True),
    ({'matchLabels': {'app': 'web'}}, True),
    ({'matchLabels': {'app': 'db'}}, False),
    ({'matchExpressions': [expr('tier', 'In', ['frontend'])]}, True),
    ({'matchExpressions': [expr('tier', 'NotIn', ['frontend'])]}, False),
    ({'matchLabels': {'app': 'web'}, 'matchExpressions': [expr('missing', 'DoesNotExist')]}, True),
    ({'matchLabels': {'app': 'web'}, 'matchExpressions': [expr('missing', 'Exists')]}, False),
    (['app=web', {'matchLabels': {'tier': 'frontend'}}], True),
    (['app=web', {'matchLabels': {'tier': 'backend'}}], False),
    ([None, ''], True),
])
def test_pod_selector(selector, selected):
    pod = make_pod(owners=[RS], labels={'app': 'web', 'tier': 'frontend', 'example.com/team': 'gpu'})
    expected = ('evict', 'evictable') if selected else ('skip', 'not-selected')
    assert classify(pod, pod_selector=selector) == expected


def test_pod_selector_on_pod_without_labels():
    pod = make_pod(owners=[RS])
    assert classify(pod, pod_selector='app=web') == ('skip', 'not-selected')
    assert classify(pod, pod_selector='app!=web') == ('evict', 'evictable')
    assert classify(pod, pod_selector='!app') == ('evict', 'evictable')


def test_protected_selector():
    pod = make_pod(owners=[RS], labels={'app': 'training'})
    assert classify(pod, protected_selector={'matchLabels': {'app': 'training'}}) == ('skip', 'protected')
    assert classify(pod, protected_selector='app in (training,inference)') == ('skip', 'protected')
    assert classify(pod, protected_selector={'matchLabels': {'app': 'other'}}) == ('evict', 'evictable')
    # an empty podNonInterruptLabels protects nothing (the operator's selector.Empty() check)
    assert classify(pod, protected_selector={}) == ('evict', 'evictable')
    assert classify(pod, protected_selector='') == ('evict', 'evictable')
    assert classify(pod, protected_selector={'matchLabels': {}, 'matchExpressions': []}) == ('evict', 'evictable')


@pytest.mark.parametrize('selector,message', [
    ({'matchLabel': {'a': 'b'}}, 'pod_selector: unknown field(s) matchLabel'),
    ({'matchLabels': ['a']}, 'pod_selector.matchLabels: must be an object'),
    ({'matchExpressions': {'key': 'a'}}, 'pod_selector.matchExpressions: must be a list'),
    ({'matchExpressions': ['a']}, 'pod_selector.matchExpressions[0]: must be an object'),
    ({'matchExpressions': [{'operator': 'Exists'}]}, 'pod_selector.matchExpressions[0].key: must be a string'),
    ({'matchExpressions': [{'key': 'a', 'operator': 'Exists', 'values': 'x'}]}, 'pod_selector.matchExpressions[0].values: must be a list'),
    ({'matchExpressions': [expr('a', 'Equals', ['x'])]}, "operator: 'Equals' is not one of"),
    ({'matchExpressions': [expr('a', 'In', [])]}, 'values: must be specified when operator is In'),
    ({'matchExpressions': [expr('a', 'Exists', ['x'])]}, 'may not be specified when operator is Exists'),
    ({'matchLabels': {'a': 'not valid'}}, 'pod_selector.matchLabels.a'),
    ('a b', 'pod_selector: cannot parse requirement'),
    (['a=b', 'c d'], 'pod_selector[1]: cannot parse requirement'),
    (42, 'pod_selector: must be a string, a LabelSelector dict or a list of them, got int'),
])
def test_invalid_selectors_fail_plan_drain(selector, message):
    with pytest.raises(ValueError) as exc:
        dr.plan_drain([make_pod()], pod_selector=selector)
    assert message in str(exc.value)


# --- plan_drain ---------------------------------------------------------------------------------------

def test_plan_drain_entries_sorted_and_shaped():
    pods = [
        make_pod('web-2', 'apps', owners=[RS], uid='u2'),
        make_pod('exporter', 'monitoring', owners=[DS], tolerations=[DS_TOLERATION], uid='u3'),
        make_pod('web-1', 'apps', owners=[RS], uid='u1b'),
        make_pod('web-1', 'apps', owners=[RS], uid='u1a', phase='Succeeded'),
        make_pod('coredns', 'kube-system', owners=[RS], uid='u4'),
        make_pod('job-x', 'batch', phase='Failed', uid='u5'),
    ]
    plan = dr.plan_drain(pods)
    assert plan == [
        {'namespace': 'apps', 'name': 'web-1', 'uid': 'u1a', 'action': 'skip', 'reason': 'finished'},
        {'namespace': 'apps', 'name': 'web-1', 'uid': 'u1b', 'action': 'evict', 'reason': 'evictable'},
        {'namespace': 'apps', 'name': 'web-2', 'uid': 'u2', 'action': 'evict', 'reason': 'evictable'},
        {'namespace': 'batch', 'name': 'job-x', 'uid': 'u5', 'action': 'skip', 'reason': 'finished'},
        {'namespace': 'kube-system', 'name': 'coredns', 'uid': 'u4', 'action': 'skip', 'reason': 'kube-system'},
        {'namespace': 'monitoring', 'name': 'exporter', 'uid': 'u3', 'action': 'skip', 'reason': 'daemonset'},
    ]
    assert dr.plan_drain(list(reversed(pods))) == plan


def test_plan_drain_with_selectors_and_rules():
    pods = [
        make_pod('train', 'ml', owners=[RS], labels={'app': 'train', 'drain': 'yes'}),
        make_pod('serve', 'ml', owners=[RS], labels={'app': 'serve', 'drain': 'yes'}),
        make_pod('other', 'ml', owners=[RS], labels={'app': 'other'}),
        make_pod('dns', 'kube-system', owners=[RS], labels={'drain': 'yes'}),
    ]
    plan = dr.plan_drain(pods, rules={'skip_kube_system': False}, pod_selector='drain=yes',
                         protected_selector={'matchLabels': {'app': 'train'}})
    assert [(p['name'], p['action'], p['reason']) for p in plan] == [
        ('dns', 'evict', 'evictable'),
        ('other', 'skip', 'not-selected'),
        ('serve', 'evict', 'evictable'),
        ('train', 'skip', 'protected'),
    ]


def test_plan_drain_empty_and_missing_fields():
    assert dr.plan_drain([]) == []
    assert dr.plan_drain(None) == []
    assert dr.plan_drain([{'status': {'phase': 'Running'}}]) == [
        {'namespace': 'default', 'name': '', 'uid': '', 'action': 'evict', 'reason': 'evictable'}]


def test_plan_drain_validates_rules_first():
    with pytest.raises(ValueError):
        dr.plan_drain([], rules={'nope': True})


# --- kubectl_objections --------------------------------------------------------------------------------

def test_kubectl_objections():
    assert dr.kubectl_objections(make_pod(owners=[RS])) == []
    assert dr.kubectl_objections(make_pod()) == ['unreplicated']
    assert dr.kubectl_objections(make_pod(owners=[owner('ReplicaSet', controller=False)])) == ['unreplicated']
    assert dr.kubectl_objections(make_pod(owners=[RS], volumes=[{'name': 'v', 'emptyDir': {'medium': 'Memory'}},
                                                                {'name': 'c', 'configMap': {'name': 'x'}}])) == ['local-storage']
    assert dr.kubectl_objections(make_pod(owners=[RS], volumes=[{'name': 'c', 'configMap': {'name': 'x'}}])) == []
    assert dr.kubectl_objections(make_pod(phase='Succeeded', volumes=[{'name': 'v', 'emptyDir': {}}])) == []


# --- PDBs ------------------------------------------------------------------------------------------------

WEB = make_pod('web-1', 'apps', owners=[RS], labels={'app': 'web', 'tier': 'frontend'})


def test_null_selector_matches_nothing():
    assert dr.matching_pdbs(WEB, [make_pdb(selector='absent'), make_pdb('null', selector=None)]) == []


def test_empty_selector_matches_every_pod_of_the_namespace():
    pdb = make_pdb(selector={})
    assert dr.matching_pdbs(WEB, [pdb]) == [pdb]
    assert dr.matching_pdbs(make_pod('bare', 'apps'), [pdb]) == [pdb]
    assert dr.matching_pdbs(make_pod('web-1', 'other', labels={'app': 'web'}), [pdb]) == []
    assert dr.pdb_selects(make_pdb(selector={'matchLabels': {}, 'matchExpressions': []}), WEB) is True


def test_namespace_mismatch():
    pdb = make_pdb(namespace='other', selector={'matchLabels': {'app': 'web'}})
    assert dr.matching_pdbs(WEB, [pdb]) == []


def test_match_labels_and_expressions():
    by_labels = make_pdb('a-labels', selector={'matchLabels': {'app': 'web'}})
    by_expr = make_pdb('b-expr', selector={'matchExpressions': [expr('tier', 'In', ['frontend', 'backend'])]})
    not_in = make_pdb('c-notin', selector={'matchExpressions': [expr('tier', 'NotIn', ['frontend'])]})
    absent_key = make_pdb('d-doesnotexist', selector={'matchExpressions': [expr('canary', 'DoesNotExist')]})
    both_fail = make_pdb('e-and', selector={'matchLabels': {'app': 'web'}, 'matchExpressions': [expr('canary', 'Exists')]})
    other = make_pdb('f-other', selector={'matchLabels': {'app': 'db'}})
    found = dr.matching_pdbs(WEB, [other, both_fail, absent_key, not_in, by_expr, by_labels])
    assert [p['metadata']['name'] for p in found] == ['a-labels', 'b-expr', 'd-doesnotexist']


def test_invalid_pdb_selector_matches_nothing():
    bad = make_pdb(selector={'matchExpressions': [expr('app', 'Equals', ['web'])]})
    empty_in = make_pdb('empty-in', selector={'matchExpressions': [expr('app', 'In', [])]})
    assert dr.matching_pdbs(WEB, [bad, empty_in]) == []


def test_matching_pdbs_handles_none():
    assert dr.matching_pdbs(WEB, None) == []


def test_pdb_block_description_min_available():
    pdb = make_pdb(selector={}, min_available=2, status={
        'currentHealthy': 2, 'desiredHealthy': 2, 'expectedPods': 3, 'disruptionsAllowed': 0, 'observedGeneration': 1},
        generation=1)
    assert dr.pdb_block_description(pdb) == (
        'apps/web-pdb (minAvailable 2, currentHealthy 2, desiredHealthy 2, expectedPods 3, disruptionsAllowed 0)')


def test_pdb_block_description_max_unavailable_percent_and_stale():
    pdb = make_pdb('db', 'data', selector={}, max_unavailable='10%', generation=3, status={
        'currentHealthy': 4, 'desiredHealthy': 4, 'expectedPods': 4, 'disruptionsAllowed': 0, 'observedGeneration': 2})
    assert dr.pdb_block_description(pdb) == (
        'data/db (maxUnavailable 10%, currentHealthy 4, desiredHealthy 4, expectedPods 4, disruptionsAllowed 0, status stale)')


def test_pdb_block_description_without_status_or_budget():
    assert dr.pdb_block_description(make_pdb(min_available='100%')) == 'apps/web-pdb (minAvailable 100%, status not reported yet)'
    # a partial status (hand-written or from an older server) reads missing numbers as 0
    assert dr.pdb_block_description(make_pdb(status={'disruptionsAllowed': 1})) == (
        'apps/web-pdb (currentHealthy 0, desiredHealthy 0, expectedPods 0, disruptionsAllowed 1)')


def test_pdb_cause_is_the_disruption_budget_cause_only():
    status = {'kind': 'Status', 'code': 429, 'message': "Cannot evict pod as it would violate the pod's disruption budget.",
              'details': {'causes': [{'reason': 'DisruptionBudget',
                                      'message': 'The disruption budget web needs 2 healthy pods and has 2 currently'}]}}
    assert dr.pdb_cause(status) == 'The disruption budget web needs 2 healthy pods and has 2 currently'
    # classifyEvictionRejection: a 429 with other causes, none, or no details is not a PDB refusal
    assert dr.pdb_cause({'details': {'causes': [{'reason': 'UnexpectedServerResponse', 'message': 'x'}]}}) is None
    assert dr.pdb_cause({'details': {}}) is None
    assert dr.pdb_cause({}) is None


# --- protected_pods_running (podNonInterruptLabels) ------------------------------------------------------

def test_protected_pods_running():
    pods = [
        make_pod('train-b', 'ml', labels={'app': 'train'}),
        make_pod('train-a', 'ml', phase='Pending', labels={'app': 'train'}),
        make_pod('train-done', 'ml', phase='Succeeded', labels={'app': 'train'}),
        make_pod('train-lost', 'ml', phase='Unknown', labels={'app': 'train'}),
        make_pod('serve', 'ml', labels={'app': 'serve'}),
        # namespace, DaemonSet ownership, tolerations and deletion do not matter to the operator
        make_pod('train-sys', 'kube-system', owners=[DS], tolerations=[DS_TOLERATION], labels={'app': 'train'}, deleting=True),
    ]
    found = dr.protected_pods_running(pods, {'matchLabels': {'app': 'train'}})
    assert [dr.pod_key(p) for p in found] == ['kube-system/train-sys', 'ml/train-a', 'ml/train-b']


def test_protected_pods_running_with_match_expressions_and_strings():
    pods = [make_pod('a', labels={'app': 'train', 'stage': 'final'}), make_pod('b', labels={'app': 'train'})]
    selector = {'matchExpressions': [expr('app', 'In', ['train']), expr('stage', 'Exists')]}
    assert [p['metadata']['name'] for p in dr.protected_pods_running(pods, selector)] == ['a']
    assert [p['metadata']['name'] for p in dr.protected_pods_running(pods, 'app=train,!stage')] == ['b']


@pytest.mark.parametrize('selector', [None, {}, '', {'matchLabels': {}, 'matchExpressions': []}])
def test_empty_pod_non_interrupt_labels_protect_nothing(selector):
    assert dr.protected_pods_running([make_pod(labels={'app': 'train'})], selector) == []


def test_protected_pods_running_rejects_invalid_selector():
    with pytest.raises(ValueError) as exc:
        dr.protected_pods_running([], {'matchExpressions': [expr('app', 'In', [])]})
    assert 'podNonInterruptLabels' in str(exc.value)


# --- eviction_backoff ------------------------------------------------------------------------------------

def test_eviction_backoff_defaults():
    assert [dr.eviction_backoff(n) for n in range(1, 9)] == [5, 10, 20, 40, 60, 60, 60, 60]
    assert dr.eviction_backoff(10 ** 6) == 60


def test_eviction_backoff_custom_base_and_cap():
    assert [dr.eviction_backoff(n, base=1, cap=10) for n in range(1, 7)] == [1, 2, 4, 8, 10, 10]
    assert dr.eviction_backoff(3, base=0.5, cap=30) == 2.0


def test_eviction_backoff_retry_after():
    assert dr.eviction_backoff(1, retry_after=10) == 10
    assert dr.eviction_backoff(4, retry_after=10) == 40
    assert dr.eviction_backoff(1, retry_after=600) == 60
    assert dr.eviction_backoff(1, retry_after=0) == 5


@pytest.mark.parametrize('kwargs', [
    {'attempt': 0}, {'attempt': -1}, {'attempt': 1.5}, {'attempt': True}, {'attempt': '1'},
    {'attempt': 1, 'base': 0}, {'attempt': 1, 'cap': -1},
])
def test_eviction_backoff_rejects_bad_input(kwargs):
    with pytest.raises(ValueError):
        dr.eviction_backoff(**kwargs)
