# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""A synthetic rollout report of many nodes, recorded through rollout_state's own functions.

The steps are what nodewright.bridge.node_update returns (tests/unit/test_rollout_timeline.py has
the shape), so the report is the one the strategy would record, only without a cluster: the 200-node
render test needs the size, not the cluster.
"""

from __future__ import annotations

import json

from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import node_steps
from ansible_collections.nodewright.bridge.plugins.plugin_utils.reporting import rollout_state

T0 = 1767225600.0
STEPS = (('plan', 'rollout_plan', 0.4), ('cordon', 'node_cordon', 0.2), ('drain', 'node_drain', 25),
         ('kernel-tuning apply', 'package_stage', 6), ('kernel-tuning config', 'package_stage', 4),
         ('gpu-driver apply', 'package_stage', 12), ('gpu-driver interrupt (reboot)', 'node_interrupt', 30),
         ('gpu-driver post-interrupt', 'package_stage', 5), ('health', 'node_health', 8),
         ('complete', 'node_state', 0.2), ('uncordon', 'node_cordon', 0.2))


def _node_update(index, start, fail):
    steps, now = [], start
    for name, module, seconds in STEPS:
        seconds = seconds * (1 + (index * 7 % 10) / 20.0)
        # each record carries its kind, as node_sequence writes it (the node_cordon that uncordons is an uncordon)
        kind = node_steps.step_kind(module, {'state': 'uncordoned'} if name == 'uncordon' else {})
        record = dict(step=name, module='nodewright.bridge.' + module, kind=kind, started=now, seconds=seconds, changed=True)
        if module == 'node_drain':
            record.update(protected_wait=seconds / 3 if index % 4 == 0 else 0, evicted=3, skipped=2, pdb_waits=[
                {'pod': 'ml/inference-%d' % index, 'pdbs': ['ml/inference (maxUnavailable 2, disruptionsAllowed 0)'],
                 'attempts': 4, 'action': 'evicted', 'started': now + seconds / 2, 'seconds': seconds / 3}] if index % 3 == 0 else [])
        if fail and module == 'package_stage':
            record.update(failed=True, msg='stage failed: exit 1 (%s on node-%03d)' % (name, index))
            steps.append(record)
            return {'failed': True, 'steps': steps}
        steps.append(record)
        now += seconds
    return {'changed': True, 'steps': steps}


def report(nodes=200, compartments=4):
    """One rollout of ``nodes`` nodes in ``compartments`` linear compartments; the last one fails its first batch."""
    bus = rollout_state.RolloutBus()
    per = nodes // compartments
    comps = [{'name': 'rack-%s' % chr(97 + c), 'matched': per, 'ceiling': max(1, per // 4), 'budget': {'percent': 25},
              'strategy': {'linear': {'initialBatch': 2, 'delta': 2, 'failureThreshold': 1}}} for c in range(compartments)]
    now = [T0]
    rollout = bus.start_rollout('NodeWright apply | roll the CRs out: gpu-node-tuning', 'batch', comps)
    rollout.clock = lambda: now[0]
    rollout.started = T0
    ends = []
    for c, comp in enumerate(comps):
        hosts = ['node-%03d' % (c * per + i) for i in range(per)]
        start, size, number = T0, 2, 0
        while hosts:
            number += 1
            batch, hosts = hosts[:size], hosts[size:]
            fail = c == compartments - 1
            rollout_state.batch_started(rollout, comp['name'], number, batch)
            finish = start
            for host in batch:
                index = int(host.split('-')[1])
                result = _node_update(index, start, fail and host == batch[0])
                rollout_state.task_finished(rollout, host, 'nodewright.bridge.node : Bring the node up to date with the CR',
                                            'nodewright.bridge.node_update', result, start)
                last = result['steps'][-1]
                finish = max(finish, last['started'] + last['seconds'])
            now[0] = finish
            failed = batch[:1] if fail else []
            rollout_state.batch_finished(rollout, comp['name'], {
                'number': number, 'size': len(batch), 'hosts': batch, 'ok': [h for h in batch if h not in failed],
                'failed': failed, 'failed_batch': bool(failed), 'progress': 0, 'stopped': bool(failed)}, started=start)
            start, size = finish, min(comp['ceiling'], size + 2)
            if fail:
                break
        ends.append((comp, hosts, finish))
    now[0] = max(e[2] for e in ends)
    rollout_state.finish_rollout(rollout, [
        {'name': comp['name'], 'stopped': bool(left), 'completed': per - len(left), 'failed': 1 if left else 0, 'progress': 100,
         'stop_reason': '1 consecutive failed batch (failureThreshold 1) at 4% progress, below safetyLimit 50%' if left else None}
        for comp, left, unused in ends], [h for unused, left, unused2 in ends for h in left])
    return json.loads(json.dumps(bus.report()))
