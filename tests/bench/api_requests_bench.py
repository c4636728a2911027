# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""API requests one node costs, counted at the API server (its audit log).

Starts the test cluster with an audit log, then runs the collection's modules for one node
the way a rollout does: cordon, drain of 10 pods, 3 package stages, a reboot interrupt and
uncordon. Every request the modules send carries the user agent nodewright.bridge/<version>,
so the audit log tells them apart from the benchmark's own set-up and from the cluster's
components. Prints, per step, the requests by verb and resource, and the writes (create,
update, patch, delete; server-side dry runs counted apart).

Target (issue 4): no polling loops (waits are watches), at most 12 writes per node-stage.

    python tests/bench/api_requests_bench.py [--keep-log FILE]
"""

from __future__ import annotations

import argparse
import collections
import json
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / 'cluster'))
sys.path.insert(0, str(HERE.parent / 'kube'))

# pylint: disable=wrong-import-position
import helpers  # noqa: E402
import launcher  # noqa: E402
from kubernetes import client as kclient  # noqa: E402
from module_runner import ModuleRunner  # noqa: E402

USER_AGENT = 'nodewright.bridge/'
WRITE_VERBS = ('create', 'update', 'patch', 'delete', 'deletecollection')
NAMESPACE = 'skyhook'
CR = 'bench'


def _resource(event):
    ref = event.get('objectRef') or {}
    name = ref.get('resource') or event.get('requestURI', '?').split('?')[0]
    if ref.get('subresource'):
        name += '/' + ref['subresource']
    return name


def _read_audit(path):
    """One event per request of ours (long requests, watches and logs, log two stages: keep the last)."""
    events = {}
    with open(path, encoding='utf-8') as handle:
        for line in handle:
            event = json.loads(line)
            if (event.get('userAgent') or '').startswith(USER_AGENT):
                events[event['auditID']] = event
    return list(events.values())


def _setup(cluster_info, node):
    api = cluster_info.api_client()
    core = kclient.CoreV1Api(api)
    apps = kclient.AppsV1Api(api)
    custom = kclient.CustomObjectsApi(api)
    core.create_namespace({'metadata': {'name': NAMESPACE}})
    core.create_namespace({'metadata': {'name': 'work'}})
    helpers.wait_for(lambda: core.list_namespaced_service_account('work').items, 30, what='service account')
    apps.create_namespaced_deployment('work', {
        'metadata': {'name': 'web'},
        'spec': {'replicas': 10, 'selector': {'matchLabels': {'app': 'web'}},
                 'template': {'metadata': {'labels': {'app': 'web'}},
                              'spec': {'nodeSelector': {'kubernetes.io/hostname': node},
                                       'containers': [{'name': 'web', 'image': 'registry.local/web:1'}]}}}})
    helpers.wait_for(lambda: len([p for p in core.list_namespaced_pod('work').items if p.status.phase == 'Running']) == 10,
                     60, what='10 running pods')
    packages = {
        'kernel-params': {'version': '1.0.0', 'image': 'registry.local/kernel-params', 'configMap': {'sysctl.conf': 'x=1\n'}},
        'gpu-driver': {'version': '550.90.7', 'image': 'registry.local/gpu-driver', 'interrupt': {'type': 'reboot'}},
        'nccl-tuning': {'version': '2.1.0', 'image': 'registry.local/nccl-tuning'},
    }
    custom.create_cluster_custom_object('skyhook.nvidia.com', 'v1alpha1', 'skyhooks', {
        'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'Skyhook', 'metadata': {'name': CR},
        'spec': {'nodeSelectors': {'matchLabels': {'kubernetes.io/hostname': node}}, 'packages': packages}})
    return api, sorted(packages)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n', 1)[0])
    parser.add_argument('--keep-log', help='copy the audit log here')
    args = parser.parse_args(argv)
    state = Path(tempfile.mkdtemp(prefix='nw-api-bench-'))
    info = launcher.up(nodes=2, state_dir=state, audit=True)
    try:
        node = info.nodes[0]
        api, packages = _setup(info, node)
        modules = ModuleRunner(info.kubeconfig, state / 'modules')
        common = {'namespace': NAMESPACE, 'cr_name': CR}
        steps = [('cordon', 'node_cordon', {'node': node, 'cr_name': CR})]
        steps.append(('drain (10 pods)', 'node_drain', {'node': node, 'timeout': 120}))
        for pkg in packages:
            steps.append(('stage %s apply' % pkg, 'package_stage', dict(common, node=node, package=pkg, stage='apply')))
        steps.append(('interrupt gpu-driver reboot', 'node_interrupt', dict(common, node=node, package='gpu-driver')))
        steps.append(('uncordon', 'node_cordon', {'node': node, 'cr_name': CR, 'state': 'uncordoned'}))

        windows = []
        for label, module, params in steps:
            rebooter = None
            if module == 'node_interrupt':
                # The "kubelet" reboots the node once the interrupt pod is there.
                def reboot():
                    core = kclient.CoreV1Api(api)
                    helpers.wait_for(lambda: core.list_namespaced_pod(
                        NAMESPACE, label_selector='skyhook.nvidia.com/interrupt=True').items, 60, what='interrupt pod')
                    helpers.reboot_node(api, node)
                rebooter = threading.Thread(target=reboot)
                rebooter.start()
            started = time.time()
            result = modules.run(module, **params)
            elapsed = time.time() - started
            if rebooter:
                rebooter.join()
            if result.get('rc') != 0:
                raise SystemExit('%s failed: %s' % (label, result.get('msg')))
            windows.append((label, result, elapsed))
            time.sleep(1.1)  # audit timestamps have microseconds; a gap keeps the steps apart

        time.sleep(1.0)
        events = _read_audit(info.audit_log)
        if args.keep_log:
            shutil.copy(info.audit_log, args.keep_log)
        # Each module call is one process, run one after another, with more than a second of
        # silence between them: split the sorted events at those gaps, one group per step.
        per_step = collections.OrderedDict()
        bounds = [label for label, dummy, dummy2 in windows]
        events.sort(key=lambda e: e['requestReceivedTimestamp'])
        groups, current, last = [], [], None
        for event in events:
            when = _ts(event['requestReceivedTimestamp'])
            if last is not None and when - last > 1.0 and current:
                groups.append(current)
                current = []
            current.append(event)
            last = _ts(event.get('stageTimestamp') or event['requestReceivedTimestamp'])
        if current:
            groups.append(current)
        if len(groups) != len(bounds):
            raise SystemExit('could not split the audit log into %d steps (got %d groups)' % (len(bounds), len(groups)))
        for label, group in zip(bounds, groups):
            per_step[label] = group

        print('API requests of nodewright.bridge modules for one node (counted in the API server audit log)')
        print('cluster: kube-apiserver %s, %d pods on the node, 3 packages, 1 reboot' % (info.k8s_version, 10))
        print()
        worst = 0
        total = collections.Counter()
        for label, result, elapsed in windows:
            group = per_step[label]
            counts = collections.Counter()
            writes = dry = reads = watches = 0
            for event in group:
                verb = event['verb']
                dry_run = 'dryRun=' in (event.get('requestURI') or '')
                key = '%s %s%s' % (verb, _resource(event), ' (dry run)' if dry_run else '')
                counts[key] += 1
                total[key] += 1
                if verb in WRITE_VERBS:
                    if dry_run:
                        dry += 1
                    else:
                        writes += 1
                elif verb == 'watch':
                    watches += 1
                else:
                    reads += 1
            worst = max(worst, writes)
            print('%-30s %5.1fs  writes %2d  dry-run %d  reads %2d  watches %d' % (label, elapsed, writes, dry, reads, watches))
            for key in sorted(counts):
                print('    %-52s %3d' % (key, counts[key]))
        print()
        print('totals by verb and resource:')
        for key in sorted(total):
            print('    %-52s %3d' % (key, total[key]))
        print()
        print('most writes in one node-stage: %d (target: at most 12)' % worst)
        return 0 if worst <= 12 else 1
    finally:
        launcher.down(state)
        shutil.rmtree(state, ignore_errors=True)


def _ts(text):
    # RFC 3339 with microseconds, e.g. 2026-11-29T21:50:01.123456Z
    from datetime import datetime  # pylint: disable=import-outside-toplevel
    return datetime.strptime(text.replace('Z', '+0000'), '%Y-%m-%dT%H:%M:%S.%f%z').timestamp()


if __name__ == '__main__':
    sys.exit(main())
