# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""Measure the test cluster: start time, memory and CPU per process at N fake nodes.

    python tests/bench/cluster_bench.py                  # 200 nodes, 30 s settle
    python tests/bench/cluster_bench.py --nodes 8 --settle 10
    python tests/bench/cluster_bench.py --pods 1000      # also a Deployment of 1000 pods
    python tests/bench/cluster_bench.py --cold-build     # first time the build from empty caches

Uses cached binaries (builds them first if missing; that time is reported
separately). Prints a table and, with --json, the figures as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'cluster'))

# pylint: disable=wrong-import-position
import launcher  # noqa: E402

CLK_TCK = os.sysconf('SC_CLK_TCK')


def proc_figures(pid):
    """RSS, peak RSS (MiB) and CPU seconds of a process, from /proc."""
    status = {}
    for line in Path(f'/proc/{pid}/status').read_text(encoding='utf-8').splitlines():
        key, dummy, value = line.partition(':')
        status[key] = value.strip()
    stat = Path(f'/proc/{pid}/stat').read_text(encoding='utf-8')
    fields = stat[stat.rindex(')') + 2:].split()
    cpu = (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime + stime
    return {
        'rss_mib': int(status['VmRSS'].split()[0]) / 1024,
        'peak_rss_mib': int(status['VmHWM'].split()[0]) / 1024,
        'cpu_s': cpu,
    }


def cold_build():
    """Time build.sh with empty Go module/build caches and an empty output dir (downloads included)."""
    with tempfile.TemporaryDirectory(prefix='nodewright-coldbuild-') as tmp:
        env = dict(os.environ, GOMODCACHE=f'{tmp}/mod', GOCACHE=f'{tmp}/build', NODEWRIGHT_CACHE_DIR=f'{tmp}/out',
                   GOFLAGS='-modcacherw')
        start = time.monotonic()
        subprocess.run(['bash', str(launcher.CLUSTER_DIR / 'build.sh')], env=env, check=True, stdout=subprocess.DEVNULL)
        return time.monotonic() - start


def scale_pods(info, count, timeout=600.0):
    """Run a Deployment of `count` pods; return seconds until all are Ready."""
    # pylint: disable-next=import-outside-toplevel
    from kubernetes import client as kclient
    api = info.api_client()
    try:
        kclient.CoreV1Api(api).create_namespace({'metadata': {'name': 'bench'}})
        launcher.wait_until('default SA in bench', lambda: kclient.CoreV1Api(api).read_namespaced_service_account('default', 'bench'), 30)
        apps = kclient.AppsV1Api(api)
        start = time.monotonic()
        apps.create_namespaced_deployment('bench', {
            'apiVersion': 'apps/v1', 'kind': 'Deployment', 'metadata': {'name': 'bench'},
            'spec': {'replicas': count, 'selector': {'matchLabels': {'app': 'bench'}},
                     'template': {'metadata': {'labels': {'app': 'bench'}},
                                  'spec': {'containers': [{'name': 'c', 'image': 'pause'}]}}}})
        launcher.wait_until(f'{count} pods ready',
                            lambda: (apps.read_namespaced_deployment('bench', 'bench').status.ready_replicas or 0) >= count,
                            timeout, interval=1.0)
        return time.monotonic() - start
    finally:
        api.close()


def main(argv=None):
    """Run the measurements and print them."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--nodes', type=int, default=200)
    parser.add_argument('--pods', type=int, default=0, help='also run a Deployment with this many pods')
    parser.add_argument('--settle', type=float, default=30.0, help='seconds to let the cluster idle before measuring')
    parser.add_argument('--cold-build', action='store_true', help='also time a build from empty caches')
    parser.add_argument('--json', action='store_true')
    args = parser.parse_args(argv)

    out = {'nodes': args.nodes, 'pods': args.pods}
    if args.cold_build:
        out['cold_build_s'] = round(cold_build(), 1)
    start = time.monotonic()
    launcher.binaries(build=True)
    out['binaries_s'] = round(time.monotonic() - start, 2)

    with tempfile.TemporaryDirectory(prefix='nodewright-bench-') as state:
        start = time.monotonic()
        info = launcher.up(nodes=args.nodes, state_dir=state)
        try:
            out['up_s'] = round(time.monotonic() - start, 2)
            if args.pods:
                out['pods_ready_s'] = round(scale_pods(info, args.pods), 1)
            before = {name: proc_figures(pid)['cpu_s'] for name, pid in info.pids.items()}
            time.sleep(args.settle)
            procs = {}
            for name, pid in info.pids.items():
                fig = proc_figures(pid)
                fig['idle_cpu_pct'] = round(100 * (fig['cpu_s'] - before[name]) / args.settle, 1)
                procs[name] = {k: round(v, 1) for k, v in fig.items()}
            out['processes'] = procs
            out['total_rss_mib'] = round(sum(p['rss_mib'] for p in procs.values()), 1)
        finally:
            launcher.down(state, keep_state=True)

    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"nodes: {out['nodes']}  pods: {out['pods']}")
    if 'cold_build_s' in out:
        print(f"cold build (empty caches, downloads included): {out['cold_build_s']} s")
    print(f"binaries ready (cached): {out['binaries_s']} s")
    print(f"up (start to all nodes Ready, CRDs established): {out['up_s']} s")
    if 'pods_ready_s' in out:
        print(f"{out['pods']} pods Ready: {out['pods_ready_s']} s")
    print(f"after {args.settle:.0f} s idle:")
    print(f"  {'process':<24} {'RSS MiB':>8} {'peak MiB':>9} {'CPU s':>7} {'idle CPU %':>10}")
    for name, fig in out['processes'].items():
        print(f"  {name:<24} {fig['rss_mib']:>8} {fig['peak_rss_mib']:>9} {fig['cpu_s']:>7} {fig['idle_cpu_pct']:>10}")
    print(f"  {'total':<24} {out['total_rss_mib']:>8}")
    return 0


if __name__ == '__main__':
    sys.exit(main())
