# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""Handoffs between nodewright.bridge.apply and the real NodeWright operator, on the test cluster.

Every test rolls out the same CR: three packages (kernel-tuning with configInterrupts, gpu-driver
with a reboot and dependsOn kernel-tuning, nccl-tuning dependsOn gpu-driver) under a
DeploymentPolicy with two compartments (rack a, rack b; one node at a time each), on four fresh
nodes. The CR is written as NodeWright documents and turned into the operator's
skyhook.nvidia.com documents by the collection's to_skyhook. Pods are counted by watching them
(which node, package and stage each one was created for) and writes by the API server's audit log
(by user agent), never by timing.
"""

from __future__ import annotations

import os
import signal
import time

import helpers
import interop_support as support

VERSIONS = support.VERSIONS
UPGRADED = dict(VERSIONS, **{'nccl-tuning': '2.22.0'})
_apply = support.apply


def _boots(group):
    return {name: node.status.node_info.boot_id for name, node in group.nodes().items()}


def _reruns(pods, before):
    """Pods created for a (node, package, stage) that ``before`` (node -> nodeState) already had complete."""
    out = []
    for dummy, node, package, stage, version in pods:
        entry = before.get(node, {}).get(f'{package}|{version}')
        if stage in support.completed_stages(entry):
            out.append((node, package, stage))
    return out


def _finished_without_reruns(cluster, group, recorder, handoff, before, side, figures):
    """After a handoff mid-rollout: ``side`` (operator or bridge) created pods, none for a stage complete at the
    handoff, and every node rebooted exactly once over both sides."""
    after = recorder.since(handoff)
    agent = support.OPERATOR_UA if side == 'operator' else support.BRIDGE_UA
    figures(**{'pods_before_handoff': len(recorder.since(0)) - len(after), f'{side}_pods_after': len(after),
               f'{side}_writes': support.audit_writes(cluster, agent, handoff, group.names)['nodes'],
               'reruns': _reruns(after, before)})
    assert after, f'the {side} had nodes to finish and created no pod'
    assert _reruns(after, before) == []
    interrupts = [p for p in recorder.since(0) if p[3] == 'interrupt']
    assert sorted(p[1] for p in interrupts) == sorted(group.names)  # each node rebooted once


def _wait_operator_done(group, versions, timeout=240):
    support.wait_until(lambda: group.all_complete(versions), timeout, f'every node of {group.cr} complete by the operator')
    group.settle()  # the operator records a node complete before its (fake) reboot is over


def test_bridge_first_then_the_operator_creates_no_pod(cluster, playbooks, operators, fleet, figures):
    group = fleet()
    group.create()
    result = _apply(playbooks, group)
    assert result.rc == 0, result
    assert group.all_complete(VERSIONS)
    boots = _boots(group)
    recorder = support.PodRecorder(cluster, group.names)
    started = time.time()
    operators.start()
    # the operator looks at every node and agrees that they are complete (its CR status); the
    # watch goes on for 60 s in all: a negative assertion over a period (no pod in the operator's first minute,
    # its requeues included), checked all along so that a pod fails the test at once
    support.wait_until(lambda: group.cr_status().get('status') == 'complete', 60, 'the operator to report the CR complete')
    helpers.holds_for(lambda: recorder.since(started) == [], max(0.0, started + 60 - time.time()), interval=0.5,
                      what='no pod created by the operator on the completed nodes')
    recorder.close()
    assert recorder.since(started) == [], 'the operator created pods on nodes the bridge had completed'
    assert group.all_complete(VERSIONS), group.states()
    assert _boots(group) == boots  # nothing rebooted
    assert group.cr_status().get('completeNodes') == f'{len(group.names)}/{len(group.names)}'
    writes = support.audit_writes(cluster, support.OPERATOR_UA, started, group.names)
    figures(operator_pods_created=len(recorder.since(started)), operator_writes=writes)
    assert writes['pods created'] == 0, writes
    assert group.leftover_cordons() == {}


def test_operator_first_then_the_bridge_creates_no_pod_and_writes_at_most_once_per_node(cluster, playbooks, operators, fleet,
                                                                                        figures):
    group = fleet()
    group.create()
    operator = operators.start()
    _wait_operator_done(group, VERSIONS)
    # the operator's CR status last: stopped before it is written, the bridge rightly writes it (seen in a cold CI
    # run under full load: one status patch), and this test is about what the bridge writes to a finished rollout
    reported = ('complete', f'{len(group.names)}/{len(group.names)}')

    def complete_reported():
        status = group.cr_status()
        return (status.get('status'), status.get('completeNodes')) == reported
    support.wait_until(complete_reported, 120, 'the operator to report the CR complete')
    operator.stop()
    boots = _boots(group)
    recorder = support.PodRecorder(cluster, group.names)
    operator_stamped = bool(group.cr_annotations().get('skyhook.nvidia.com/version'))
    started = time.time()
    # the operator's last status writes are seconds old and it held no lease: the guard would
    # (rightly) refuse; the operator is stopped, so force is the documented way on
    result = _apply(playbooks, group, nodewright_force=True)
    recorder.close()
    assert result.rc == 0, result
    assert recorder.since(started) == []
    writes = support.audit_writes(cluster, support.BRIDGE_UA, started, group.names)
    figures(bridge_pods_created=len(recorder.since(started)), bridge_writes=writes)
    assert writes['pods created'] == 0, writes
    assert max(writes['nodes'].values()) <= 1, writes
    # the operator built from source has no version (version.VERSION empty: SetVersion writes nothing), so the
    # bridge stamps the CR with its own, once (status_rollup.version_annotation_patch); a released operator's stamp stays
    assert writes['other'] == ({} if operator_stamped else {'patch skyhooks': 1}), writes
    assert group.all_complete(VERSIONS) and _boots(group) == boots
    assert group.leftover_cordons() == {}


def test_the_bridge_killed_mid_batch_then_the_operator_finishes(cluster, playbooks, operators, fleet, figures):
    group = fleet()
    group.create()
    recorder = support.PodRecorder(cluster, group.names)
    proc = playbooks.start('nodewright.bridge.apply', extra_vars=dict(support.TIMEOUTS, nodewright_cr_name=group.cr))
    try:
        support.wait_until(lambda: group.midway(VERSIONS), 240, 'the bridge to finish one node and be on the way with another')
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # no clean-up by the run: the worst case
        proc.wait()
    handoff = time.time()
    before = group.states()
    assert not group.all_complete(VERSIONS)
    operators.start()
    _wait_operator_done(group, VERSIONS)
    # a negative period: nothing more the operator starts once it is done, no stage complete at the handoff run
    # again (checked all along)
    helpers.holds_for(lambda: _reruns(recorder.since(handoff), before) == [], 5, interval=0.5,
                      what='no stage complete at the handoff started again')
    recorder.close()
    _finished_without_reruns(cluster, group, recorder, handoff, before, 'operator', figures)
    support.wait_until(lambda: group.leftover_cordons() == {}, 30, 'no cordon left behind')


def test_the_operator_stopped_mid_batch_then_the_bridge_finishes(cluster, playbooks, operators, fleet, figures):
    group = fleet()
    group.create()
    recorder = support.PodRecorder(cluster, group.names)
    operator = operators.start()
    support.wait_until(lambda: group.midway(VERSIONS), 240, 'the operator to finish one node and be on the way with another')
    operator.stop()
    handoff = time.time()
    before = group.states()
    result = _apply(playbooks, group, nodewright_force=True)
    assert result.rc == 0, result
    recorder.close()
    _finished_without_reruns(cluster, group, recorder, handoff, before, 'bridge', figures)
    assert group.all_complete(VERSIONS), group.states()
    assert group.leftover_cordons() == {}


def test_an_upgrade_started_by_the_operator_is_finished_by_the_bridge(cluster, playbooks, operators, fleet, figures):
    group = fleet({'a': 3, 'b': 3})
    group.create()
    assert _apply(playbooks, group).rc == 0
    # nccl-tuning has no interrupt: the operator upgrades every node at once, without a cordon;
    # it is stopped as soon as it has started the upgrade (its first pod)
    group.bump(nccl='2.22.0')
    recorder = support.PodRecorder(cluster, group.names)
    operator = operators.start()
    support.wait_until(lambda: recorder.since(0), 120, 'the operator to start the upgrade', interval=0.1)
    operator.stop()
    handoff = time.time()
    before = group.states()
    upgraded = group.completed(UPGRADED)
    result = _apply(playbooks, group, nodewright_force=True)
    assert result.rc == 0, result
    recorder.close()
    assert group.all_complete(UPGRADED), group.states()
    after = recorder.since(handoff)
    figures(upgraded_by_the_operator=len(upgraded), operator_pods=len(recorder.since(0)) - len(after), bridge_pods=len(after),
            reruns=_reruns(after, before))
    assert len(upgraded) < len(group.names), 'the operator finished the upgrade before it was stopped: no handoff'
    assert not [p for p in after if p[1] in upgraded], 'the bridge re-ran stages on nodes the operator had upgraded'
    assert _reruns(after, before) == []
    assert after, 'the bridge had nodes to upgrade and created no pod'
    # only nccl-tuning changed: no reboot, no other package re-run, on either side
    assert {p[2] for p in recorder.since(0)} == {'nccl-tuning'}, recorder.since(0)
    assert group.leftover_cordons() == {}
