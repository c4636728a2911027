# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The operator guard against the real NodeWright operator (leader election on), on the test cluster."""

from __future__ import annotations

import datetime
import time

from kubernetes import client as kclient

import interop_support as support

VERSIONS = support.VERSIONS
DRIVER_UPGRADE = dict(VERSIONS, **{'gpu-driver': '575.51.2'})
NCCL_UPGRADE = dict(DRIVER_UPGRADE, **{'nccl-tuning': '2.22.0'})
_apply = support.apply


def _lease(cluster):
    return kclient.CoordinationV1Api(cluster.api).read_namespaced_lease(support.LEASE, support.NAMESPACE)


def test_apply_refuses_while_the_operator_reconciles_and_goes_on_when_forced_or_once_its_lease_expired(
        cluster, playbooks, operators, fleet):
    group = fleet({'a': 3, 'b': 3})
    group.create()
    operator = operators.start(leader_election=True)
    support.wait_until(lambda: group.all_complete(VERSIONS), 300, 'the operator to roll the CR out')
    group.settle()
    lease = _lease(cluster)
    assert lease.spec.holder_identity, lease  # the operator holds its lease in its namespace

    # A driver upgrade while the operator reconciles the CR. On the fake nodes the operator gets
    # through it within a second or two (the interrupt pods finish at once; the reboots follow),
    # so the run may find every node up to date: it must refuse before writing anything all the
    # same, the complete records of the planning play included.
    group.bump(gpu_driver='575.51.2')
    started = time.time()
    refused = _apply(playbooks, group)
    assert refused.rc != 0, refused
    assert f'{group.cr} is being reconciled by a running NodeWright operator' in refused.stdout, refused
    assert f'lease {support.NAMESPACE}/{support.LEASE} held by' in refused.stdout, refused
    assert lease.spec.holder_identity.split('_')[0] in refused.stdout, refused  # the holder (its host or pod) named
    writes = support.audit_writes(cluster, support.BRIDGE_UA, started, group.names)
    assert writes['pods created'] == 0 and set(writes['nodes'].values()) == {0} and writes['other'] == {}, writes

    # Stopped (its lease not released, so still valid for 15 s): force goes on and finishes
    # the nodes the operator had not upgraded yet.
    operator.stop()
    forced = _apply(playbooks, group, nodewright_force=True)
    assert forced.rc == 0, forced
    assert group.all_complete(DRIVER_UPGRADE), group.states()

    # Once the lease has expired (renewTime + leaseDurationSeconds, and the guard's 5 s grace),
    # the stopped operator's writes are its last work: a run without force goes on. A wall-clock
    # timer, counted from the lease itself (+ 1 s margin).
    lease = _lease(cluster)
    expires = lease.spec.renew_time + datetime.timedelta(seconds=(lease.spec.lease_duration_seconds or 15) + 6)
    time.sleep(max(0.0, (expires - datetime.datetime.now(datetime.timezone.utc)).total_seconds()))
    group.bump(gpu_driver='575.51.2', nccl='2.22.0')
    result = _apply(playbooks, group)
    assert result.rc == 0, result
    assert group.all_complete(NCCL_UPGRADE), group.states()
    assert group.leftover_cordons() == {}
