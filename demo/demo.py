# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""`make demo`: a fake GPU fleet, a NodeWright CR, and `ansible-playbook nodewright.bridge.apply`.

    up     start the test cluster (24 fake GPU nodes, racks a / b / c), the `skyhook`
           namespace, some inference pods and three protected training jobs that finish
           while the rollout waits for them
    run    apply examples/gpu-node-tuning.yaml with batch progress and the final report
    down   stop the cluster and remove .demo/

Everything lives in .demo/ (kubeconfig, logs, report.json, report.html: the rollout timeline);
`make demo` = up + run.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / '.demo'
STATE = DEMO / 'state'
KUBECONFIG = DEMO / 'kubeconfig'
sys.path.insert(0, str(ROOT / 'tests' / 'cluster'))

# pylint: disable=wrong-import-position
import launcher  # noqa: E402

NODES = 24
RACKS = ['a', 'b', 'c']
# (pod, node index, seconds the job still runs once its node is cordoned)
TRAINING = [('llm-pretrain-0', 1, 20), ('llm-pretrain-1', 9, 30), ('vision-finetune', 17, 20)]


def say(text):
    print(f'\033[1mdemo:\033[0m {text}', flush=True)


def _core():
    # pylint: disable-next=import-outside-toplevel
    from kubernetes import client as kclient
    return kclient.CoreV1Api(launcher.api_client_from_kubeconfig(str(KUBECONFIG))), kclient


def up():
    if (STATE / launcher.STATE_FILE).exists():
        say('a demo cluster is already up (make demo-down to remove it)')
        return
    DEMO.mkdir(exist_ok=True)
    say(f'starting a Kubernetes control plane with {NODES} fake GPU nodes in racks {", ".join(RACKS)}')
    info = launcher.up(nodes=NODES, state_dir=STATE, kubeconfig=KUBECONFIG, label_spread=('rack', RACKS))
    core, kclient = _core()
    for name in ('skyhook', 'ml'):
        core.create_namespace(kclient.V1Namespace(metadata=kclient.V1ObjectMeta(name=name)))
    deadline = time.time() + 30
    while not core.list_namespaced_service_account('ml').items and time.time() < deadline:
        time.sleep(0.3)
    apps = kclient.AppsV1Api(core.api_client)
    apps.create_namespaced_deployment('ml', {
        'metadata': {'name': 'inference'},
        'spec': {'replicas': 12, 'selector': {'matchLabels': {'app': 'inference'}},
                 'template': {'metadata': {'labels': {'app': 'inference'}},
                              'spec': {'nodeSelector': {'nodepool': 'gpu'},
                                       'containers': [{'name': 'triton', 'image': 'nvcr.io/nvidia/tritonserver:24.08'}]}}}})
    kclient.PolicyV1Api(core.api_client).create_namespaced_pod_disruption_budget('ml', {
        'metadata': {'name': 'inference'}, 'spec': {'maxUnavailable': 2, 'selector': {'matchLabels': {'app': 'inference'}}}})
    for pod, index, dummy in TRAINING:
        core.create_namespaced_pod('ml', {
            'metadata': {'name': pod, 'labels': {'workload': 'training'}},
            'spec': {'nodeName': info.nodes[index], 'restartPolicy': 'Never',
                     'containers': [{'name': 'train', 'image': 'nvcr.io/nvidia/pytorch:24.08-py3'}]}})
    say(f'cluster up: kubectl --kubeconfig {KUBECONFIG.relative_to(ROOT)} get nodes -L rack')
    say('12 inference pods behind a PodDisruptionBudget (maxUnavailable 2), 3 training jobs (workload=training)')


def _finish_training(pod, node, after):
    """The job finishes some time after its node is cordoned: the rollout visibly waits for it."""
    core, dummy = _core()
    while not core.read_node(node).spec.unschedulable:
        time.sleep(1)
    say(f'{node} cordoned; its drain waits for training job {pod} (podNonInterruptLabels), which needs {after}s more')
    time.sleep(after)
    core.patch_namespaced_pod_status(pod, 'ml', {'status': {'phase': 'Succeeded'}})
    say(f'training job {pod} on {node} finished')


def run():
    if not (STATE / launcher.STATE_FILE).exists():
        up()
    collections = DEMO / 'collections' / 'ansible_collections' / 'nodewright'
    collections.mkdir(parents=True, exist_ok=True)
    if not (collections / 'bridge').exists():
        (collections / 'bridge').symlink_to(ROOT)
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(DEMO / 'collections'), K8S_AUTH_KUBECONFIG=str(KUBECONFIG),
               ANSIBLE_CALLBACKS_ENABLED='nodewright.bridge.rollout', NODEWRIGHT_REPORT=str(DEMO / 'report.json'),
               NODEWRIGHT_REPORT_HTML=str(DEMO / 'report.html'),
               ANSIBLE_FORKS='24', ANSIBLE_LOCALHOST_WARNING='False', ANSIBLE_INVENTORY_UNPARSED_WARNING='False',
               ANSIBLE_DISPLAY_SKIPPED_HOSTS='False', ANSIBLE_DISPLAY_OK_HOSTS=os.environ.get('DEMO_VERBOSE', 'False'))
    cmd = [str(Path(sys.executable).with_name('ansible-playbook')), 'nodewright.bridge.apply',
           '-e', 'nodewright_cr=examples/gpu-node-tuning.yaml'] + shlex.split(os.environ.get('DEMO_APPLY_ARGS', ''))
    say('ansible-playbook nodewright.bridge.apply -e nodewright_cr=examples/gpu-node-tuning.yaml')
    say('the training nodes wait for their jobs (podNonInterruptLabels); the PDB paces the evictions')
    start = time.time()
    for pod, index, after in TRAINING:
        threading.Thread(target=_finish_training, args=(pod, 'gpu-node-%02d' % index, after), daemon=True).start()
    code = subprocess.call(cmd, cwd=str(ROOT), env=env)
    say(f'apply finished with exit code {code} in {time.time() - start:.0f}s; report: {(DEMO / "report.json").relative_to(ROOT)}')
    say(f'rollout timeline (open it in a browser): {DEMO / "report.html"}')
    final_report()
    say('again, to see that nothing is left to do: make demo-run; clean up: make demo-down')
    return code


def final_report(cr='gpu-node-tuning'):
    """What the nodes say now, per rack: read back from the cluster, not from Ansible's output."""
    core, dummy = _core()
    nodes = core.list_node(label_selector='nodepool=gpu').items
    print()
    print(f'{"rack":<6}{"nodes":>6}{"complete":>10}{"erroring":>10}{"cordoned":>10}{"packages":>10}')
    for rack in RACKS:
        mine = [n for n in nodes if (n.metadata.labels or {}).get('rack') == rack]
        labels = [(n.metadata.labels or {}).get(f'skyhook.nvidia.com/status_{cr}') for n in mine]
        packages = set()
        for node in mine:
            state = json.loads((node.metadata.annotations or {}).get(f'skyhook.nvidia.com/nodeState_{cr}') or '{}')
            packages |= {k for k, v in state.items() if v.get('state') == 'complete'}
        print(f'{rack:<6}{len(mine):>6}{labels.count("complete"):>10}{labels.count("erroring"):>10}'
              f'{sum(1 for n in mine if n.spec.unschedulable):>10}{len(packages):>10}')
    pods = core.list_namespaced_pod('ml').items
    running = [p for p in pods if p.metadata.labels.get('app') == 'inference' and p.status.phase == 'Running']
    done = [p.metadata.name for p in pods if p.metadata.labels.get('workload') == 'training' and p.status.phase == 'Succeeded']
    print(f'inference pods running: {len(running)}/12; training jobs finished undisturbed: {", ".join(done) or "none"}')
    print()


def down():
    if (STATE / launcher.STATE_FILE).exists():
        launcher.down(STATE)
    subprocess.call(['rm', '-rf', str(DEMO)])
    say('demo cluster stopped, .demo removed')


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n', 1)[0])
    parser.add_argument('action', choices=['up', 'run', 'down'])
    args = parser.parse_args()
    if args.action == 'up':
        up()
        return 0
    if args.action == 'run':
        return run()
    down()
    return 0


if __name__ == '__main__':
    sys.exit(main())
