# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""Fleet-of-clusters benchmark: nodewright.bridge.fleet over three clusters against nodewright.bridge.apply on one.

Four fresh test clusters of N fake GPU nodes each (tests/cluster/launcher.py, as fleet_bench.py starts them, the same
CR and DeploymentPolicy: two packages, one with a reboot, fixed batches at the 25 % ceiling) run at the same time, so
both measurements carry the same background load. First ``apply`` rolls the CR out on the first cluster alone; then
``fleet`` rolls it out over the other three in one stage (``max_concurrency`` 3, no soak), optionally with a budget
over the fleet (``--fleet-budget N``: at most N nodes cordoned or rebooting at once over the three).

Per run: the playbook's wall seconds, CPU seconds (ansible-playbook and every process it waited for, the clusters'
apply runs of the fleet included, and for the fleet that split: its apply runs, and its own share) and CPU per node;
the whole machine's busy CPU seconds over the run and its share of the machine's cores (the control planes and fake
nodes the run drives are on the same cores: near 1.0, the wall is bound by the machine);
the fleet's wall over the single run's (target: at most 1.3x) and CPU per node against the single run's (target: no
worse); the most nodes cordoned or rebooting at once over the fleet (a node watch per cluster), never above the budget.

    python tests/bench/fleet_clusters_bench.py                    # 24 nodes per cluster
    python tests/bench/fleet_clusters_bench.py --nodes 24 --fleet-budget 6

Prints the figures and writes them as JSON (default build/bench-fleet-clusters.json). Not part of ``make test``:
``make bench-fleet-clusters``. See docs/dev/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import threading
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fleet_bench as fb  # noqa: E402 pylint: disable=wrong-import-position

REPO_ROOT = Path(__file__).resolve().parents[2]


def _arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--nodes', type=int, default=24, help='fake GPU nodes per cluster (default 24)')
    parser.add_argument('--fleet-budget', type=int, help='the budget over the fleet (nodes cordoned or rebooting at once)')
    parser.add_argument('--json', default=str(REPO_ROOT / 'build' / 'bench-fleet-clusters.json'))
    parser.add_argument('--workdir', default=str(REPO_ROOT / 'build' / 'bench-fleet-clusters'))
    parser.add_argument('--collection-ref', help='run this commit of the collection (git archive), not the working tree')
    args = parser.parse_args(argv)
    # what fleet_bench's Side and helpers read
    args.generation, args.budget_percent, args.keep_cluster_logs = 'skyhook', 25, False
    args.stall_timeout, args.timeout, args.forks = 300, 3600, None
    return args


class FleetPeak(threading.Thread):
    """Every 0.1 s, the nodes cordoned or rebooting over every cluster at once (the node watches' sets)."""

    def __init__(self, sides):
        super().__init__(daemon=True)
        self.sides = sides
        self.stop = threading.Event()
        self.peak = 0

    def run(self):
        while not self.stop.wait(0.1):
            self.peak = max(self.peak, sum(len(s.watch.disrupted) for s in self.sides))


def machine_busy_seconds():
    """CPU seconds every core of the machine spent busy so far (/proc/stat: all but idle and iowait)."""
    with open('/proc/stat', encoding='ascii') as handle:
        fields = [int(v) for v in handle.readline().split()[1:]]
    return (sum(fields[:8]) - fields[3] - fields[4]) / os.sysconf('SC_CLK_TCK')


def _run(args, side, cmd, name, forks):
    report = side.dir / ('%s-report.json' % name)
    log_path = side.dir / ('%s.log' % name)
    env = fb.ansible_env(args, side.info.kubeconfig, report=report)
    env['ANSIBLE_FORKS'] = forks  # the fleet's apply runs inherit it
    fb.log('%s: %s' % (name, ' '.join(cmd[:2])))
    busy_before = machine_busy_seconds()
    code, wall, cpu, sampler, dummy = fb.timed_playbook(cmd, env, side.dir, log_path)
    machine = machine_busy_seconds() - busy_before
    if code != 0:
        raise fb.BenchError('%s ended with rc %d\n--- %s (tail) ---\n%s' % (name, code, log_path, fb.tail(log_path)))
    # the whole machine's CPU over the run (the playbook, the control planes it drives, the fake nodes, anything else):
    # busy near 1.0, the wall is bound by the machine's cores, whatever the playbook does
    return {'wall_s': round(wall, 2), 'cpu_s': round(cpu, 2), 'peak_pss_mib': round(sampler.peak_pss_mib, 1),
            'machine_cpu_s': round(machine, 2), 'machine_busy': round(machine / (wall * os.cpu_count()), 2),
            'others_cpu_s': round(machine - cpu, 2)}


def _wait_complete(sides, timeout=60.0):
    deadline = time.monotonic() + timeout
    while any(s.watch.all_complete is None for s in sides):
        if time.monotonic() > deadline:
            raise fb.BenchError('not every node complete: %s' % '; '.join(s.watch.summary() for s in sides))
        time.sleep(0.2)


def main(argv=None):
    args = _arguments(argv)
    sides = []
    try:
        for index in range(4):
            sides.append(fb.Side(args, args.nodes, 'bridge' if index == 0 else 'bridge-%d' % index))
        single, fleet_sides = sides[0], sides[1:]
        forks = str(fb.forks_for(args, args.nodes))
        apply_cmd = [fb.ansible_playbook(), 'nodewright.bridge.apply', '-e', json.dumps(
            {'nodewright_cr': str(single.cr_file), 'nodewright_kubeconfig': str(single.info.kubeconfig)}), '-f', forks]
        figures = {'nodes_per_cluster': args.nodes, 'apply': _run(args, single, apply_cmd, 'apply', forks)}
        figures['apply']['peak_disrupted'] = single.watch.max_disrupted
        _wait_complete([single])
        fleet = {'name': 'bench', 'clusters': dict(('c%d' % i, {'kubeconfig': str(s.info.kubeconfig)})
                                                   for i, s in enumerate(fleet_sides, 1)),
                 'stages': [{'name': 'all', 'clusters': ['c1', 'c2', 'c3'], 'max_concurrency': 3}]}
        if args.fleet_budget:
            fleet['budget'] = {'count': args.fleet_budget}
        fleet_file = single.dir / 'fleet.yml'
        fleet_file.write_text(yaml.safe_dump(fleet), encoding='utf-8')
        fleet_cmd = [fb.ansible_playbook(), 'nodewright.bridge.fleet', '-e', json.dumps({
            'nodewright_fleet': str(fleet_file), 'nodewright_cr': str(fleet_sides[0].cr_file),
            'nodewright_fleet_dir': str(single.dir / 'fleet-work')})]
        peak = FleetPeak(fleet_sides)
        peak.start()
        try:
            figures['fleet'] = _run(args, single, fleet_cmd, 'fleet', forks)
            _wait_complete(fleet_sides)
        finally:
            peak.stop.set()
            peak.join()
        figures['fleet']['peak_disrupted'] = peak.peak
        # the stage's apply runs, as the fleet_stage task counts them: the fleet playbook's own share is the rest
        runs = [float(m) for m in re.findall(r'the apply runs used ([0-9.]+) CPU-s', (single.dir / 'fleet.log').read_text())]
        figures['fleet']['apply_runs_cpu_s'] = round(sum(runs), 2)
        figures['fleet']['fleet_own_cpu_s'] = round(figures['fleet']['cpu_s'] - sum(runs), 2)
        figures['fleet']['per_cluster_peak_disrupted'] = [s.watch.max_disrupted for s in fleet_sides]
        figures['apply']['cpu_per_node_s'] = round(figures['apply']['cpu_s'] / args.nodes, 3)
        figures['fleet']['cpu_per_node_s'] = round(figures['fleet']['cpu_s'] / (3 * args.nodes), 3)
        figures['wall_ratio'] = round(figures['fleet']['wall_s'] / figures['apply']['wall_s'], 2)
        figures['cpu_per_node_ratio'] = round(figures['fleet']['cpu_per_node_s'] / figures['apply']['cpu_per_node_s'], 2)
        figures['fleet_budget'] = args.fleet_budget
        figures['collection'] = fb.collection_info(args)
    finally:
        for side in sides:
            side.close()
    print(json.dumps(figures, indent=2, sort_keys=True))
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(figures, indent=2, sort_keys=True), encoding='utf-8')
    return 0


if __name__ == '__main__':
    sys.exit(main())
