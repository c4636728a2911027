# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""Benchmark: plan 10,000 nodes over 3 compartments plus the default; print the median.

Target: < 0.5 s per plan (validation of CR and policy, node selection, per-node work plans
from state annotations, compartment assignment and the all-success batch simulation).
Run: python tests/bench/plan_bench.py [--nodes N] [--runs R]
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import argparse
import os
import statistics
import sys
import tempfile
import time


def _import_collection():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    base = tempfile.mkdtemp(prefix='nwb-bench-')
    os.makedirs(os.path.join(base, 'ansible_collections', 'nodewright'))
    os.symlink(root, os.path.join(base, 'ansible_collections', 'nodewright', 'bridge'))
    sys.path.insert(0, base)


def _inputs(count, unique_states=False):
    from ansible_collections.nodewright.bridge.plugins.module_utils.contract import node_annotations
    cr = {
        'apiVersion': 'nodewright.nvidia.com/v1alpha1', 'kind': 'NodeWright', 'metadata': {'name': 'gpu-tuning'},
        'spec': {
            'deploymentPolicy': 'gpu-rollout',
            'nodeSelectors': {'matchLabels': {'nodepool': 'gpu'}},
            'packages': {
                'driver': {'version': '550.1.0', 'image': 'ghcr.io/example/driver', 'interrupt': {'type': 'reboot'}},
                'tuning': {'version': '1.2.0', 'image': 'ghcr.io/example/tuning', 'dependsOn': {'driver': '550.1.0'},
                           'configMap': {'sysctl.conf': 'x'}, 'configInterrupts': {'sysctl.conf': {'type': 'service', 'services': ['a']}}},
                'monitor': {'version': '0.3.0', 'image': 'ghcr.io/example/monitor', 'dependsOn': {'tuning': '1.2.0'}},
            },
        },
    }
    policy = {
        'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'DeploymentPolicy', 'metadata': {'name': 'gpu-rollout'},
        'spec': {
            'default': {'budget': {'percent': 10}, 'strategy': {'fixed': {'initialBatch': 5}}},
            'compartments': [
                {'name': 'canary', 'selector': {'matchLabels': {'tier': 'canary'}}, 'budget': {'count': 3},
                 'strategy': {'fixed': {'initialBatch': 1, 'failureThreshold': 1}}},
                {'name': 'training', 'selector': {'matchExpressions': [{'key': 'workload', 'operator': 'In', 'values': ['training']}]},
                 'budget': {'percent': 25}, 'strategy': {'linear': {'initialBatch': 2, 'delta': 2}}},
                {'name': 'inference', 'selector': {'matchLabels': {'workload': 'inference'}}, 'budget': {'percent': 20},
                 'strategy': {'exponential': {'initialBatch': 1, 'growthFactor': 2, 'failureThreshold': 2}}},
            ],
        },
    }
    done_state = node_annotations.encode({
        'driver|550.1.0': {'name': 'driver', 'version': '550.1.0', 'image': 'ghcr.io/example/driver', 'stage': 'post-interrupt', 'state': 'complete'},
    })
    nodes = []
    for i in range(count):
        labels = {'nodepool': 'gpu', 'nvidia.com/gpu.product': 'NVIDIA-H100-80GB-HBM3',
                  'workload': ('training', 'inference', 'batch')[i % 3]}
        if i % 500 == 0:
            labels['tier'] = 'canary'
        if unique_states:
            # worst case: every node has a different older driver version on it (an upgrade
            # from a mixed fleet), so no two nodes can share a plan
            annotations = {node_annotations.node_state_key('gpu-tuning'): node_annotations.encode({
                'driver|1.%d.0' % i: {'name': 'driver', 'version': '1.%d.0' % i, 'image': 'ghcr.io/example/driver',
                                      'stage': 'config', 'state': 'complete', 'restarts': i % 3}})}
        else:
            annotations = {node_annotations.node_state_key('gpu-tuning'): done_state} if i % 4 == 0 else {}
        nodes.append({'metadata': {'name': 'gpu-node-%05d' % i, 'labels': labels, 'annotations': annotations}})
    return cr, policy, {'kind': 'NodeList', 'items': nodes}


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--nodes', type=int, default=10000)
    parser.add_argument('--runs', type=int, default=7)
    parser.add_argument('--unique-states', action='store_true',
                        help='give every node a different nodeState (worst case: no plan can be shared)')
    args = parser.parse_args()
    _import_collection()
    from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_validation
    from ansible_collections.nodewright.bridge.plugins.module_utils.planning.planner import normalise_nodes, plan_rollout
    cr_doc, policy_doc, node_list = _inputs(args.nodes, args.unique_states)
    timings, cpu_timings, result = [], [], None
    for dummy in range(args.runs):
        start, cpu_start = time.perf_counter(), time.process_time()
        cr = cr_validation.build_cr(cr_doc)
        policy = cr_validation.build_policy(policy_doc)
        result = plan_rollout(cr, normalise_nodes(node_list), policy=policy)
        timings.append(time.perf_counter() - start)
        cpu_timings.append(time.process_time() - cpu_start)
    print('plan_bench: %d nodes, %d runs, %s node states' % (
        args.nodes, args.runs, 'all distinct' if args.unique_states else 'fleet-like (few distinct)'))
    for comp in result['compartments']:
        print('  %-10s matched %5d ceiling %4d batches %4d first sizes %s' % (
            comp['name'], comp['matched'], comp['ceiling'], len(comp['batch_sizes']), comp['batch_sizes'][:8]))
    print('  nodes needing drain: %d' % result['summary']['needs_drain'])
    # CPU time is printed too: on a shared 2-core machine wall time includes waiting for a core.
    print('median %.3f s  min %.3f s  max %.3f s  (CPU median %.3f s)  (target < 0.5 s)' % (
        statistics.median(timings), min(timings), max(timings), statistics.median(cpu_timings)))


if __name__ == '__main__':
    main()
