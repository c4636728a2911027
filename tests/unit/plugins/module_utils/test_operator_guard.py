# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""operator_guard: is a running NodeWright operator reconciling a CR (lease, managedFields, pause / disable)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime

import pytest

from ansible_collections.nodewright.bridge.plugins.module_utils.contract import operator_presence as guard
from ansible_collections.nodewright.bridge.plugins.module_utils.model.api_generation import NODEWRIGHT

NOW = '2026-05-01T12:00:00Z'
NOW_EPOCH = 1777636800.0
HOLDER = 'skyhook-operator-controller-manager-5d8c7-x2x9q_0c1d2e3f-4a5b-6c7d-8e9f-001122334455'


def at(seconds_ago, micro=False):
    """The API's time format for ``seconds_ago`` before NOW (MicroTime with ``micro``)."""
    moment = datetime.datetime(2026, 5, 1, 12, 0, 0) - datetime.timedelta(seconds=seconds_ago)
    if micro:
        return moment.strftime('%Y-%m-%dT%H:%M:%S.%fZ')
    return moment.strftime('%Y-%m-%dT%H:%M:%SZ')


def lease(holder=HOLDER, renewed=3, duration=15, **extra):
    """A Lease as CoordinationV1Api returns it (renewTime is a MicroTime)."""
    spec = {'holderIdentity': holder, 'leaseDurationSeconds': duration, 'acquireTime': at(3600, micro=True),
            'leaseTransitions': 2}
    if renewed is not None:
        spec['renewTime'] = at(renewed, micro=True)
    spec.update(extra)
    return {'apiVersion': 'coordination.k8s.io/v1', 'kind': 'Lease',
            'metadata': {'name': guard.LEASE_NAME, 'namespace': guard.OPERATOR_NAMESPACE,
                         'managedFields': [{'manager': 'manager', 'operation': 'Update', 'time': at(renewed or 0)}]},
            'spec': spec}


def field(manager, seconds_ago, subresource=None, fields=None, operation='Update'):
    """One metadata.managedFields entry in the API's shape."""
    entry = {'manager': manager, 'operation': operation, 'apiVersion': 'skyhook.nvidia.com/v1alpha1',
             'time': at(seconds_ago), 'fieldsType': 'FieldsV1',
             'fieldsV1': fields if fields is not None else ({'f:status': {'.': {}, 'f:status': {}}} if subresource
                                                            else {'f:spec': {'.': {}, 'f:packages': {}}})}
    if subresource:
        entry['subresource'] = subresource
    return entry


def skyhook(managed=None, generation=2, observed=None, status='in_progress', annotations=None, conditions=None,
            deleting=False):
    meta = {'name': 'gpu-tuning', 'generation': generation, 'uid': 'u-1', 'resourceVersion': '42'}
    if managed is not None:
        meta['managedFields'] = managed
    if annotations:
        meta['annotations'] = annotations
    if deleting:
        meta['deletionTimestamp'] = at(30)
        meta['finalizers'] = ['skyhook.nvidia.com/skyhook']
    body = {}
    if status:
        body['status'] = status
    if observed is not None:
        body['observedGeneration'] = observed
    if conditions is not None:
        body['conditions'] = conditions
    doc = {'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'Skyhook', 'metadata': meta,
           'spec': {'packages': {'tuning': {'version': '1.2.0', 'image': 'ghcr.io/acme/tuning'}}}}
    if body:
        doc['status'] = body
    return doc


def created_by_kubectl(*more):
    return [field('kubectl-client-side-apply', 7200)] + list(more)


def operator_status(seconds_ago):
    return field('manager', seconds_ago, subresource='status')


def assess(cr, lease_doc=None, **kwargs):
    kwargs.setdefault('lease_ref', (guard.OPERATOR_NAMESPACE, guard.LEASE_NAME))
    if lease_doc is None:
        kwargs.setdefault('lease_error', 'not found')
    return guard.assess(cr, lease_doc, NOW, **kwargs)


def joined(result):
    return '\n'.join(result['evidence'])


# --------------------------------------------------------------------------- time


@pytest.mark.parametrize('text,expected', [
    ('2026-05-01T12:00:00Z', NOW_EPOCH),
    ('2026-05-01T11:59:56.123456Z', NOW_EPOCH - 3.876544),
    ('2026-05-01T14:00:00+02:00', NOW_EPOCH),
    ('2026-05-01T07:30:00-0430', NOW_EPOCH),
    ('2026-05-01t12:00:00z', NOW_EPOCH),
])
def test_parse_time(text, expected):
    assert guard.parse_time(text) == pytest.approx(expected)


@pytest.mark.parametrize('text', [None, '', 'yesterday', '2026-13-01T00:00:00Z', '2026-05-01'])
def test_parse_time_rejects(text):
    assert guard.parse_time(text) is None


def test_now_forms():
    aware = datetime.datetime(2026, 5, 1, 14, 0, 0, tzinfo=datetime.timezone(datetime.timedelta(hours=2)))
    naive = datetime.datetime(2026, 5, 1, 12, 0, 0, 250000)
    assert guard.to_epoch(aware) == NOW_EPOCH
    assert guard.to_epoch(naive) == NOW_EPOCH + 0.25
    assert guard.to_epoch(int(NOW_EPOCH)) == NOW_EPOCH
    assert guard.to_epoch(NOW) == NOW_EPOCH
    with pytest.raises(guard.GuardError):
        guard.to_epoch(True)
    with pytest.raises(guard.GuardError):
        guard.to_epoch('soon')
    same = guard.assess(skyhook(created_by_kubectl()), lease(), aware)
    assert same['lease']['age_seconds'] == pytest.approx(3.0, abs=0.01)


@pytest.mark.parametrize('seconds,text', [(-3, '0s'), (4.4, '4s'), (59, '59s'), (192, '3m12s'), (7500, '2h05m'),
                                          (273600, '3d4h')])
def test_format_age(seconds, text):
    assert guard.format_age(seconds) == text


# --------------------------------------------------------------------------- rule 1: the lease


def test_fresh_lease_blocks_even_without_status_writes():
    result = assess(skyhook(created_by_kubectl()), lease(renewed=4))
    assert result['active'] is True and result['operator_running'] is True
    assert result['lease']['fresh'] is True
    assert result['lease']['holder_pod'] == 'skyhook-operator-controller-manager-5d8c7-x2x9q'
    assert result['lease']['age_seconds'] == pytest.approx(4.0, abs=0.01)
    assert 'expires' not in result['lease']
    assert 'held by %s, renewed 4s ago (lease duration 15s)' % HOLDER in joined(result)
    message = guard.refusal_message(result)
    assert message.startswith('Skyhook gpu-tuning is being reconciled by a running NodeWright operator (lease '
                              'skyhook/3c22c1ae.nvidia.com held by skyhook-operator-controller-manager-5d8c7-x2x9q, '
                              'renewed 4s ago); refusing to act on its nodes.')
    assert 'Stop the operator' in message and 'force: true' in message


@pytest.mark.parametrize('renewed,fresh', [(0, True), (15, True), (20, True), (20.5, False), (21, False), (600, False)])
def test_lease_is_fresh_within_duration_plus_grace(renewed, fresh):
    result = assess(skyhook(created_by_kubectl()), lease(renewed=renewed))
    assert result['lease']['fresh'] is fresh
    assert result['active'] is fresh


def test_lease_duration_and_grace_come_from_the_lease_and_the_caller():
    long_lease = lease(renewed=50, duration=60)
    assert assess(skyhook(created_by_kubectl()), long_lease)['active'] is True
    assert assess(skyhook(created_by_kubectl()), lease(renewed=17), lease_grace=0)['active'] is False
    # leaseDurationSeconds missing: controller-runtime's 15 s
    assert assess(skyhook(created_by_kubectl()), lease(renewed=19, duration=None))['active'] is True
    assert assess(skyhook(created_by_kubectl()), lease(renewed=19, duration=None))['lease']['lease_duration_seconds'] == 15


def test_stale_lease_does_not_block():
    result = assess(skyhook(created_by_kubectl(operator_status(3600))), lease(renewed=900))
    assert result['active'] is False and result['operator_running'] is False
    assert 'last renewed 15m00s ago, more than its 15s duration (+5s grace): its holder is gone' in joined(result)
    assert result['summary'] == []


def test_released_lease_does_not_block():
    # client-go's release: empty holder, duration 1 s, renewTime = the release
    released = lease(holder='', renewed=120, duration=1)
    result = assess(skyhook(created_by_kubectl()), released)
    assert result['active'] is False
    assert result['lease']['holder'] is None
    assert 'has no holder (released 2m00s ago): no operator is leader' in joined(result)


def test_held_lease_without_renew_time_counts_as_held():
    odd = lease(renewed=None, acquireTime=None)
    result = assess(skyhook(created_by_kubectl()), odd)
    assert result['active'] is True
    assert 'no renewTime to judge its age' in joined(result)


def test_lease_spec_alone_is_accepted():
    spec = lease(renewed=2)['spec']
    result = assess(skyhook(created_by_kubectl()), spec)
    assert result['active'] is True
    assert result['lease']['namespace'] == 'skyhook' and result['lease']['name'] == '3c22c1ae.nvidia.com'


def test_renew_time_ahead_of_now_is_fresh():
    # the operator's clock a little ahead of the API server's
    ahead = lease(renewTime='2026-05-01T12:00:02.000000Z')
    result = assess(skyhook(created_by_kubectl()), ahead)
    assert result['active'] is True
    assert 'renewed 0s ago' in joined(result)


def test_missing_lease_is_reported():
    result = assess(skyhook(created_by_kubectl()), lease_error='not found')
    assert result['active'] is False and result['lease'] is None
    assert 'lease skyhook/3c22c1ae.nvidia.com is not readable (not found)' in joined(result)
    forbidden = assess(skyhook(created_by_kubectl()), lease_error='forbidden', lease_ref=('ops', 'my-lease'))
    assert 'lease ops/my-lease is not readable (forbidden)' in joined(forbidden)


# --------------------------------------------------------------------------- rule 2: the operator's writes


@pytest.mark.parametrize('seconds_ago,active', [(0, True), (20, True), (300, True), (301, False), (86400, False)])
def test_status_write_window_without_lease(seconds_ago, active):
    result = assess(skyhook(created_by_kubectl(operator_status(seconds_ago))))
    assert result['active'] is active
    assert result['last_operator_write']['manager'] == 'manager'
    assert result['last_operator_write']['subresource'] == 'status'
    assert result['last_operator_write']['source'] == 'managedFields'
    assert result['last_operator_write']['age_seconds'] == pytest.approx(seconds_ago)
    text = joined(result)
    assert ('within the 300s window' in text) is active
    assert ('outside the 300s window' in text) is (not active)


def test_window_is_configurable():
    cr = skyhook(created_by_kubectl(operator_status(90)))
    assert assess(cr, window=60)['active'] is False
    assert assess(cr, window=120)['active'] is True
    assert assess(cr, window=0)['active'] is False
    with pytest.raises(guard.GuardError):
        assess(cr, window=-1)


def test_status_write_message_names_the_manager():
    result = assess(skyhook(created_by_kubectl(operator_status(20))))
    message = guard.refusal_message(result)
    assert "(status written by field manager 'manager' 20s ago)" in message


def test_fresh_lease_and_recent_status_both_in_the_message():
    result = assess(skyhook(created_by_kubectl(operator_status(20))), lease(renewed=4))
    assert result['summary'] == [
        'lease skyhook/3c22c1ae.nvidia.com held by skyhook-operator-controller-manager-5d8c7-x2x9q, renewed 4s ago',
        "status written by field manager 'manager' 20s ago"]


def test_write_before_the_stale_lease_expired_is_the_stopped_leaders():
    # lease renewed 200 s ago (expired 185 s ago); the status was written 190 s ago, while it was held
    result = assess(skyhook(created_by_kubectl(operator_status(190))), lease(renewed=200))
    assert result['active'] is False
    assert 'while lease skyhook/3c22c1ae.nvidia.com was still held (it expired 3m05s ago)' in joined(result)


def test_write_after_the_lease_expired_is_another_operator():
    # an operator without leader election (or in another namespace) keeps writing after the old lease expired
    result = assess(skyhook(created_by_kubectl(operator_status(10))), lease(renewed=3600))
    assert result['active'] is True
    assert 'after lease skyhook/3c22c1ae.nvidia.com expired 59m45s ago: an operator that does not hold this lease' \
        in joined(result)


def test_write_after_the_lease_was_released():
    released = lease(holder='', renewed=100, duration=1)
    assert assess(skyhook(created_by_kubectl(operator_status(98))), released)['active'] is False
    assert assess(skyhook(created_by_kubectl(operator_status(30))), released)['active'] is True


def test_managed_fields_shapes():
    # what the API returns after the operator's life: finalizer added on the main resource by
    # 'manager' (no subresource key), status patches, kubectl-skyhook's reset of the status,
    # an Apply entry from the user, entries with no time
    managed = [
        field('kubectl', 7200, fields={'f:spec': {}}, operation='Apply'),
        field('manager', 7100, fields={'f:metadata': {'f:finalizers': {'.': {}, 'v:"skyhook.nvidia.com/skyhook"': {}}}}),
        field('manager', 4000, subresource='status'),
        field('kubectl-skyhook', 30, subresource='status', fields={'f:status': {'f:nodeOrderOffset': {}}}),
        {'manager': 'manager', 'operation': 'Update', 'fieldsType': 'FieldsV1', 'fieldsV1': {'f:status': {}},
         'subresource': 'status'},
        'not-an-entry',
    ]
    result = assess(skyhook(managed))
    assert result['active'] is False
    assert result['last_operator_write']['age_seconds'] == 4000
    assert "status also written by field manager 'kubectl-skyhook' 30s ago (not counted: not one of manager)" \
        in joined(result)


def test_main_resource_write_by_the_operator_counts():
    # the operator adding its finalizer to a CR created a minute ago
    managed = created_by_kubectl(field('manager', 60, fields={'f:metadata': {'f:finalizers': {}}}))
    result = assess(skyhook(managed, status=None))
    assert result['active'] is True
    assert result['last_operator_write']['subresource'] == ''
    assert "the CR written by field manager 'manager' 1m00s ago" in joined(result)


def test_pre_1_22_status_entry_without_subresource():
    managed = created_by_kubectl(field('manager', 30, fields={'f:status': {'f:status': {}}}))
    result = assess(skyhook(managed))
    assert result['active'] is True
    assert result['last_operator_write']['subresource'] == 'status'


def test_operator_managers_are_configurable():
    cr = skyhook(created_by_kubectl(field('skyhook-operator', 30, subresource='status')))
    assert assess(cr)['active'] is False
    assert "status also written by field manager 'skyhook-operator'" in joined(assess(cr))
    assert assess(cr, managers=['manager', 'skyhook-operator'])['active'] is True
    assert assess(skyhook(created_by_kubectl(operator_status(30))), managers=[])['active'] is False


def test_no_managed_fields_falls_back_to_conditions():
    conditions = [
        {'type': 'Ready', 'status': 'False', 'reason': 'Progressing', 'message': '', 'lastTransitionTime': at(3000)},
        {'type': 'skyhook.nvidia.com/Transition', 'status': 'True', 'reason': 'x', 'message': '',
         'lastTransitionTime': at(40)},
    ]
    result = assess(skyhook(None, conditions=conditions))
    assert result['active'] is True
    assert result['last_operator_write']['source'] == 'conditions'
    assert 'status condition skyhook.nvidia.com/Transition changed 40s ago' in joined(result)
    old = assess(skyhook(None, conditions=conditions[:1]))
    assert old['active'] is False
    nothing = assess(skyhook(None))
    assert nothing['active'] is False and nothing['last_operator_write'] is None
    assert 'no managedFields and no dated condition' in joined(nothing)


def test_conditions_are_ignored_when_managed_fields_exist():
    conditions = [{'type': 'Ready', 'status': 'True', 'reason': 'NodesConverged', 'message': '',
                   'lastTransitionTime': at(10)}]
    result = assess(skyhook(created_by_kubectl(), conditions=conditions))
    assert result['active'] is False
    assert 'no write by an operator manager (manager)' in joined(result)


# --------------------------------------------------------------------------- rule 3: reported, never deciding


def test_observed_generation_alone_does_not_block():
    result = assess(skyhook(created_by_kubectl(operator_status(86400)), generation=3, observed=3, status='complete'))
    assert result['active'] is False
    text = joined(result)
    assert 'status.observedGeneration == metadata.generation (3)' in text
    assert "its last write came after the last spec change (by 'kubectl-client-side-apply'" not in text
    # the spec was last changed before the operator's status write
    managed = [field('kubectl-client-side-apply', 90000), operator_status(86400)]
    later = assess(skyhook(managed, generation=3, observed=3, status='complete'))
    assert later['active'] is False
    assert "its last write came after the last spec change (by 'kubectl-client-side-apply' 1d1h ago)" in joined(later)


def test_observed_generation_behind():
    result = assess(skyhook(created_by_kubectl(operator_status(20)), generation=4, observed=2))
    assert 'status.observedGeneration 2 != metadata.generation 4' in joined(result)
    assert 'status.status is in_progress' in joined(result)


# --------------------------------------------------------------------------- rule 4: paused, disabled, deleting


@pytest.mark.parametrize('annotation,word', [(guard.PAUSE_ANNOTATION, 'paused'), (guard.DISABLE_ANNOTATION, 'disabled')])
def test_paused_or_disabled_is_let_through_with_a_warning(annotation, word):
    cr = skyhook(created_by_kubectl(operator_status(5)), annotations={annotation: 'true'})
    result = assess(cr, lease(renewed=2))
    assert result['active'] is False and result['operator_running'] is True
    assert result[word] is True
    assert 'the CR is %s: the operator starts no package pod, cordon, drain or interrupt for it' % word in joined(result)
    assert len(result['warnings']) == 1
    assert 'skyhook.nvidia.com/status_gpu-tuning on the CR\'s nodes to %s' % word in result['warnings'][0]


def test_paused_and_disabled_the_operator_writes_paused():
    cr = skyhook(created_by_kubectl(), annotations={guard.PAUSE_ANNOTATION: 'true', guard.DISABLE_ANNOTATION: 'true'})
    result = assess(cr, lease())
    assert result['active'] is False
    assert 'is paused and disabled' in result['warnings'][0] and 'to paused,' in result['warnings'][0]


@pytest.mark.parametrize('value', ['True', 'yes', '1', ''])
def test_only_the_exact_true_pauses(value):
    cr = skyhook(created_by_kubectl(), annotations={guard.PAUSE_ANNOTATION: value})
    result = assess(cr, lease())
    assert result['active'] is True and result['paused'] is False
    assert 'skyhook.nvidia.com/pause=%r is not "true"' % value in joined(result)


def test_paused_without_operator_has_no_warning():
    cr = skyhook(created_by_kubectl(), annotations={guard.PAUSE_ANNOTATION: 'true'})
    result = assess(cr, lease(renewed=3600))
    assert result['active'] is False and result['warnings'] == []
    assert 'the CR is paused' in joined(result)


@pytest.mark.parametrize('annotations', [None, {guard.PAUSE_ANNOTATION: 'true'}, {guard.DISABLE_ANNOTATION: 'true'}])
def test_deleting_blocks_even_when_paused(annotations):
    cr = skyhook(created_by_kubectl(), annotations=annotations, deleting=True)
    result = assess(cr, lease())
    assert result['active'] is True and result['deleting'] is True
    assert 'finalizer uncordons its nodes' in joined(result)
    message = guard.refusal_message(result)
    assert 'the CR is being deleted' in message
    assert 'pause the CR' not in message


def test_deleting_without_operator_does_not_block():
    result = assess(skyhook(created_by_kubectl(), deleting=True), lease(renewed=3600))
    assert result['active'] is False


# --------------------------------------------------------------------------- messages and inputs


def test_force_warning():
    result = assess(skyhook(created_by_kubectl(operator_status(20))), lease())
    text = guard.force_warning(result)
    assert text.startswith('force: true: acting on Skyhook gpu-tuning although a running NodeWright operator')
    assert 'may cordon, drain and run pods on the same nodes' in text


def test_nodewright_kind_in_the_message():
    cr = skyhook(created_by_kubectl())
    cr['kind'] = 'NodeWright'
    cr['apiVersion'] = 'nodewright.nvidia.com/v1alpha1'
    assert guard.refusal_message(assess(cr, lease())).startswith('NodeWright gpu-tuning is being reconciled')


def test_bad_inputs():
    with pytest.raises(guard.GuardError):
        guard.assess('gpu-tuning', None, NOW)
    with pytest.raises(guard.GuardError):
        guard.assess(skyhook(), ['lease'], NOW)


def test_defaults_are_upstreams():
    assert guard.OPERATOR_NAMESPACE == 'skyhook'
    assert guard.LEASE_NAME == '3c22c1ae.nvidia.com'
    assert guard.OPERATOR_MANAGERS == ('manager',)
    assert guard.DEFAULT_WINDOW == 300


# --------------------------------------------------------------------------- the v0.18+ generation (gen=NODEWRIGHT)

NW = 'nodewright.nvidia.com'
RECONCILE_REF, BOOTSTRAP_REF = ('nodewright', '3c22c1ae.nvidia.com'), ('nodewright', 'nodewright-webhook-bootstrap.nvidia.com')


def nodewright(**kwargs):
    doc = skyhook(**kwargs)
    doc.update(apiVersion=NODEWRIGHT.api_version, kind='NodeWright')
    return doc


def nw_lease(ref, **kwargs):
    doc = lease(**kwargs)
    doc['metadata'].update(namespace=ref[0], name=ref[1])
    return doc


def test_nodewright_leases_are_the_v018_operators():
    """operator/cmd/manager/main.go @1826d339: reconcileLeaseID "3c22c1ae.nvidia.com" and webhookBootstrapLeaseID
    "nodewright-webhook-bootstrap.nvidia.com", in the operator's namespace (NAMESPACE default nodewright,
    controller/skyhook_controller.go @01cc2f2d)."""
    assert NODEWRIGHT.lease_refs() == (RECONCILE_REF, BOOTSTRAP_REF)
    result = guard.assess(nodewright(managed=created_by_kubectl()), None, NOW, gen=NODEWRIGHT, lease_error='not found')
    assert 'lease nodewright/3c22c1ae.nvidia.com is not readable (not found)' in joined(result)
    assert result['active'] is False and result['lease'] is None and result['leases'] == []


def test_nodewright_either_lease_held_is_an_operator_running():
    """main.go @1826d339: the bootstrap lease is held by a separate manager of the same binary (ENABLE_WEBHOOKS), which
    may stand aside and contend again: a fresh holder of either lease is a live operator pod."""
    cr = nodewright(managed=created_by_kubectl())
    stale, fresh = nw_lease(RECONCILE_REF, renewed=3600), nw_lease(BOOTSTRAP_REF, renewed=2)
    result = guard.assess(cr, stale, NOW, lease_ref=RECONCILE_REF, gen=NODEWRIGHT, more_leases=[(BOOTSTRAP_REF, fresh, None)])
    assert result['active'] is True and result['operator_running'] is True
    assert result['lease']['name'] == BOOTSTRAP_REF[1] and [f['name'] for f in result['leases']] == [
        RECONCILE_REF[1], BOOTSTRAP_REF[1]]
    assert 'lease nodewright/3c22c1ae.nvidia.com is held by %s but was last renewed 1h00m ago' % HOLDER in joined(result)
    assert 'lease nodewright/nodewright-webhook-bootstrap.nvidia.com is held by %s, renewed 2s ago' % HOLDER in joined(result)
    # the other way round, and with the bootstrap lease unreadable
    swapped = guard.assess(cr, fresh, NOW, lease_ref=BOOTSTRAP_REF, gen=NODEWRIGHT, more_leases=[(RECONCILE_REF, stale, None)])
    assert swapped['active'] is True
    alone = guard.assess(cr, stale, NOW, gen=NODEWRIGHT, more_leases=[(BOOTSTRAP_REF, None, 'forbidden')])
    assert alone['active'] is False and 'nodewright-webhook-bootstrap.nvidia.com is not readable (forbidden)' in joined(alone)
    with pytest.raises(guard.GuardError):
        guard.assess(cr, stale, NOW, gen=NODEWRIGHT, more_leases=[fresh])


def test_nodewright_a_write_while_any_lease_was_held_is_the_stopped_operators():
    """Rule 2 with the two leases of main.go @1826d339: a status write before the lease that expired last (+ grace) was
    made while an operator still held a lease, so it does not show one running now."""
    cr = nodewright(managed=created_by_kubectl(operator_status(90)))
    reconcile, bootstrap = nw_lease(RECONCILE_REF, renewed=3600), nw_lease(BOOTSTRAP_REF, renewed=100)
    both = guard.assess(cr, reconcile, NOW, gen=NODEWRIGHT, more_leases=[(BOOTSTRAP_REF, bootstrap, None)])
    assert both['active'] is False and both['lease']['name'] == BOOTSTRAP_REF[1]
    assert 'while lease nodewright/nodewright-webhook-bootstrap.nvidia.com was still held' in joined(both)
    # with the reconcile lease alone the same write came after it expired: an operator without this lease
    assert guard.assess(cr, reconcile, NOW, gen=NODEWRIGHT)['active'] is True


def test_nodewright_pause_and_disable_are_read_in_the_crs_group():
    """operator/api/nodewright/v1alpha1/nodewright_types.go @90d9979d IsPaused / IsDisabled: "<METADATA_PREFIX>/pause"
    and "/disable" with METADATA_PREFIX nodewright.nvidia.com; the nodes' status key is nodewright.nvidia.com/status_<cr>
    (internal/wrapper/node.go @042b7591 statusMetadataKey)."""
    running = nw_lease(RECONCILE_REF, renewed=2)
    paused = guard.assess(nodewright(managed=created_by_kubectl(), annotations={NW + '/pause': 'true'}), running, NOW,
                          gen=NODEWRIGHT)
    assert paused['active'] is False and paused['paused'] is True and paused['pause_annotation'] == NW + '/pause'
    assert 'NodeWright gpu-tuning is paused' in paused['warnings'][0]
    assert 'setting %s/status_gpu-tuning on the CR\'s nodes to paused' % NW in paused['warnings'][0]
    disabled = guard.assess(nodewright(managed=created_by_kubectl(), annotations={NW + '/disable': 'true'}), running, NOW,
                            gen=NODEWRIGHT)
    assert disabled['disabled'] is True and disabled['active'] is False
    # the legacy key on a NodeWright does not pause it, and the refusal advises the group's own key
    legacy = guard.assess(nodewright(managed=created_by_kubectl(), annotations={guard.PAUSE_ANNOTATION: 'true'}), running,
                          NOW, gen=NODEWRIGHT)
    assert legacy['active'] is True and legacy['paused'] is False
    message = guard.refusal_message(legacy, gen=NODEWRIGHT)
    assert 'pause the CR (%s/pause: "true"' % NW in message
    assert 'skyhook.nvidia.com/' not in message + ''.join(paused['warnings'])
    # a document without apiVersion is read with the generation's keys
    bare = nodewright(managed=created_by_kubectl(), annotations={NW + '/pause': 'true'})
    del bare['apiVersion'], bare['kind']
    assert guard.assess(bare, running, NOW, gen=NODEWRIGHT)['paused'] is True
    assert guard.assess(bare, running, NOW, gen=NODEWRIGHT)['kind'] == 'NodeWright'
