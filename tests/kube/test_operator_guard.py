# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""nodewright.bridge.operator_guard against the real API server.

A running operator is simulated the way it shows in the API: its leader-election Lease
(coordination.k8s.io/v1, ``3c22c1ae.nvidia.com``) in a namespace of its own, renewed
"now", and status writes of the CR through the status subresource by the field manager
the API server records for the operator (``manager``, the binary's name).
"""

from __future__ import annotations

import datetime
import json
import time
import uuid

import pytest
from kubernetes import client as kclient

import launcher
from nodewright_fixtures import GROUP, PLURAL, VERSION, package

LEASE = '3c22c1ae.nvidia.com'
HOLDER_POD = 'skyhook-operator-controller-manager-5d8c7-x2x9q'
PAUSE = 'skyhook.nvidia.com/pause'


def _micro(moment):
    return moment.strftime('%Y-%m-%dT%H:%M:%S.%fZ')


def _utcnow():
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)


@pytest.fixture
def operator_ns(cluster):
    """A namespace for the operator's lease, deleted afterwards."""
    name = f'nw-operator-{uuid.uuid4().hex[:6]}'
    cluster.create_namespace(name)
    yield name
    cluster.delete_namespace(name)


def put_lease(cluster, namespace, seconds_ago=0.0, duration=15, holder=None):
    """Create or replace the operator's lease, renewed ``seconds_ago`` (the test host is the API server's host)."""
    coordination = kclient.CoordinationV1Api(cluster.api)
    renewed = _utcnow() - datetime.timedelta(seconds=seconds_ago)
    spec = {'holderIdentity': f'{HOLDER_POD}_{uuid.uuid4()}' if holder is None else holder,
            'leaseDurationSeconds': duration, 'acquireTime': _micro(renewed - datetime.timedelta(minutes=5)),
            'renewTime': _micro(renewed), 'leaseTransitions': 0}
    body = {'apiVersion': 'coordination.k8s.io/v1', 'kind': 'Lease', 'metadata': {'name': LEASE}, 'spec': spec}
    try:
        coordination.delete_namespaced_lease(LEASE, namespace)
    except kclient.ApiException as exc:
        if exc.status != 404:
            raise
    coordination.create_namespaced_lease(namespace, body)
    return spec['holderIdentity']


def write_status(cluster, name, status='in_progress', field_manager='manager', api=None):
    """Patch the CR's status subresource as the operator does (a merge patch, no other field touched)."""
    custom = kclient.CustomObjectsApi(api or cluster.api)
    body = {'status': {'status': status, 'nodesInProgress': 1, 'completeNodes': '0/1', 'packageList': 'tuning:1.2.0'}}
    kwargs = {'field_manager': field_manager} if field_manager else {}
    return custom.patch_cluster_custom_object_status(GROUP, VERSION, PLURAL, name, body, **kwargs)


def new_cr(crs, annotations=None):
    created = crs.create({'tuning': package()}, prefix='guard')
    name = created['metadata']['name']
    if annotations:
        custom = kclient.CustomObjectsApi(crs.custom.api_client)
        custom.patch_cluster_custom_object(GROUP, VERSION, PLURAL, name, {'metadata': {'annotations': annotations}})
    return name


def warnings_of(result):
    """The module's warnings as text (ansible-core 2.19 returns them as structured dicts)."""
    return [w if isinstance(w, str) else json.dumps(w) for w in result.get('warnings') or []]


def managers(cluster, name):
    cr = kclient.CustomObjectsApi(cluster.api).get_cluster_custom_object(GROUP, VERSION, PLURAL, name)
    return {(m['manager'], m.get('subresource', '')) for m in cr['metadata']['managedFields']}


def test_running_operator_blocks_and_force_passes(cluster, modules, crs, operator_ns):
    name = new_cr(crs)
    holder = put_lease(cluster, operator_ns, seconds_ago=1)
    write_status(cluster, name)
    assert ('manager', 'status') in managers(cluster, name)

    refused = modules.run('operator_guard', cr_name=name, lease_namespace=operator_ns)
    assert refused['rc'] != 0 and refused['failed'] is True
    assert refused['active'] is True and refused['operator_running'] is True
    msg = refused['msg']
    assert msg.startswith(f'Skyhook {name} is being reconciled by a running NodeWright operator (lease '
                          f'{operator_ns}/{LEASE} held by {HOLDER_POD}, renewed ')
    assert "; status written by field manager 'manager' " in msg
    assert 'refusing to act on its nodes' in msg and 'set force: true' in msg
    assert refused['lease']['holder'] == holder and refused['lease']['fresh'] is True
    assert refused['last_operator_write']['subresource'] == 'status'
    assert refused['last_operator_write']['age_seconds'] < 60
    assert refused['clock']['source'] == 'api-server'
    assert abs(refused['clock']['local_skew_seconds']) < 5
    assert refused['cr']['name'] == name and refused['cr']['status'] == 'in_progress'

    forced = modules.run('operator_guard', cr_name=name, lease_namespace=operator_ns, force=True)
    assert forced['rc'] == 0 and forced['changed'] is False and forced['active'] is True
    assert any(f'force: true: acting on Skyhook {name} although' in w for w in warnings_of(forced))

    checked = modules.run('operator_guard', cr_name=name, lease_namespace=operator_ns, check=True)
    assert checked['rc'] != 0 and checked['active'] is True


def test_status_writes_alone_block_and_the_manager_is_the_user_agent(cluster, modules, crs, operator_ns):
    # No lease (leader election off): the operator shows only through its writes. It sets no field
    # manager, so the API server takes its User-Agent up to the first '/': 'manager' for /manager.
    name = new_cr(crs)
    as_operator = launcher.api_client_from_kubeconfig(cluster.kubeconfig)
    as_operator.user_agent = 'manager/v0.0.0 (linux/amd64) kubernetes/$Format'
    try:
        write_status(cluster, name, field_manager=None, api=as_operator)
    finally:
        as_operator.close()
    assert ('manager', 'status') in managers(cluster, name)

    refused = modules.run('operator_guard', cr_name=name, lease_namespace=operator_ns)
    assert refused['rc'] != 0 and refused['lease'] is None
    assert refused['msg'].startswith(f"Skyhook {name} is being reconciled by a running NodeWright operator (status "
                                     f"written by field manager 'manager' ")
    assert any(f'lease {operator_ns}/{LEASE} is not readable (not found)' in e for e in refused['evidence'])

    # outside a (short) window the same write no longer shows a running operator. A wall-clock timer, not a
    # condition: the write must be more than the 1 s window old by the API server's clock, and both the write's
    # managedFields time and the server's Date are whole seconds (1 s + 1 s of rounding + a margin)
    time.sleep(2.2)
    quiet = modules.run('operator_guard', cr_name=name, lease_namespace=operator_ns, window=1)
    assert quiet['rc'] == 0 and quiet['active'] is False
    assert any('outside the 1s window' in e for e in quiet['evidence'])


def test_cr_without_operator_activity_passes(cluster, modules, crs, operator_ns):
    name = new_cr(crs)
    # another tool writing the status is reported, never counted
    write_status(cluster, name, field_manager='kubectl-skyhook')
    result = modules.run('operator_guard', cr_name=name, lease_namespace=operator_ns)
    assert result['rc'] == 0 and result['changed'] is False
    assert result['active'] is False and result['operator_running'] is False
    assert result['lease'] is None and result['last_operator_write'] is None
    assert any("status also written by field manager 'kubectl-skyhook'" in e for e in result['evidence'])
    assert not warnings_of(result)


def test_stale_lease_passes(cluster, modules, crs, operator_ns):
    name = new_cr(crs)
    put_lease(cluster, operator_ns, seconds_ago=600)
    result = modules.run('operator_guard', cr_name=name, lease_namespace=operator_ns)
    assert result['rc'] == 0 and result['active'] is False
    assert result['lease']['fresh'] is False and result['lease']['age_seconds'] >= 590
    assert any('its holder is gone' in e for e in result['evidence'])

    # a status write after that lease expired: an operator that does not hold it is running
    write_status(cluster, name)
    other = modules.run('operator_guard', cr_name=name, lease_namespace=operator_ns)
    assert other['rc'] != 0 and other['active'] is True
    assert any('an operator that does not hold this lease is running' in e for e in other['evidence'])


def test_stopped_operator_passes_once_its_lease_expires(cluster, modules, crs, operator_ns):
    name = new_cr(crs)
    put_lease(cluster, operator_ns, seconds_ago=0, duration=1)
    write_status(cluster, name)
    assert modules.run('operator_guard', cr_name=name, lease_namespace=operator_ns)['active'] is True
    # The "operator" stops: nothing renews the lease. After its duration and the 5 s grace, the
    # recent status write is the stopped leader's and the guard lets the play through. A wall-clock timer (the
    # lease's expiry), counted from the lease itself: renewTime + leaseDurationSeconds + the 5 s grace, + 1 s margin
    lease = kclient.CoordinationV1Api(cluster.api).read_namespaced_lease(LEASE, operator_ns).spec
    expires = lease.renew_time + datetime.timedelta(seconds=lease.lease_duration_seconds + 5 + 1)
    time.sleep(max(0.0, (expires - datetime.datetime.now(datetime.timezone.utc)).total_seconds()))
    result = modules.run('operator_guard', cr_name=name, lease_namespace=operator_ns)
    assert result['rc'] == 0 and result['active'] is False
    assert any('written by the operator that has stopped since' in e for e in result['evidence'])


def test_paused_cr_passes_with_a_warning(cluster, modules, crs, operator_ns):
    name = new_cr(crs, annotations={PAUSE: 'true'})
    put_lease(cluster, operator_ns, seconds_ago=1)
    write_status(cluster, name, status='paused')
    result = modules.run('operator_guard', cr_name=name, lease_namespace=operator_ns)
    assert result['rc'] == 0 and result['active'] is False and result['operator_running'] is True
    assert result['cr']['paused'] is True
    assert any(f'Skyhook {name} is paused' in w and f'status_{name}' in w for w in warnings_of(result))


def test_forbidden_lease_is_not_an_error(cluster, modules, crs, operator_ns, identity):
    name = new_cr(crs)
    put_lease(cluster, operator_ns, seconds_ago=1)
    reader = identity([{'apiGroups': [GROUP], 'resources': [PLURAL], 'verbs': ['get']}])
    quiet = modules.run('operator_guard', cr_name=name, lease_namespace=operator_ns, **reader)
    assert quiet['rc'] == 0 and quiet['active'] is False and quiet['lease'] is None
    assert any('forbidden' in e for e in quiet['evidence'])
    assert any('could not be read' in w for w in warnings_of(quiet))

    write_status(cluster, name)
    refused = modules.run('operator_guard', cr_name=name, lease_namespace=operator_ns, **reader)
    assert refused['rc'] != 0 and refused['active'] is True


def test_missing_cr_fails_clearly(modules, operator_ns):
    result = modules.run('operator_guard', cr_name='no-such-cr', lease_namespace=operator_ns)
    assert result['rc'] != 0
    assert 'no-such-cr not found' in result['msg']
