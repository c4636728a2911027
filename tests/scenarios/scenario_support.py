# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""NodeWright's own e2e scenarios (chainsaw) against nodes the collection manages.

* ``upstream_tree()``: the scenarios as upstream wrote them, extracted from the snapshot
  (../shared/upstream/nodewright-agent-and-e2e-<commit>.tar.xz) into build/scenarios/upstream at test
  time; nothing of them is in the repository.
* ``prepare(scenario, removed)``: a copy of one scenario's category (build/scenarios/run/<category>)
  with the scenario's chainsaw-test.yaml rewritten without the removed operations; every other file
  (resources, assert files, scripts) is upstream's, byte for byte. ``skyhook-cli`` in the category
  directory is the kubectl plugin (upstream's ``make ensure-test-symlinks``).
* ``ScenarioCluster``: the project's test cluster (tests/cluster/launcher.py) with kind's worker
  names (kind-worker, kind-worker2, ...), labelled as upstream's kind setup labels them, the v0.15
  CRDs and the ``skyhook`` namespace.
* ``BridgeReconciler``: a background loop that stands in for the always-on operator: it runs
  ``nodewright.bridge.apply`` for every Skyhook in the cluster whenever a CR, a DeploymentPolicy or a
  node changed since its last run, or a CR has work left. Test support only, not part of the collection.
* ``run_chainsaw(...)``: the real chainsaw binary on the prepared scenario, its JSON report parsed.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import threading
import time
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
sys.path.insert(0, str(REPO_ROOT / 'tests' / 'cluster'))
sys.path.insert(0, str(REPO_ROOT / 'tests'))

# pylint: disable=wrong-import-position
import helpers  # noqa: E402
import launcher  # noqa: E402
from collection_path import link as link_collection  # noqa: E402

COMMIT = '71ca22b'
TARBALL = f'nodewright-agent-and-e2e-{COMMIT}.tar.xz'
CHAINSAW_PREFIX = 'nodewright/k8s-tests/chainsaw/'
BUILD = REPO_ROOT / 'build' / 'scenarios'
GROUP, VERSION = 'skyhook.nvidia.com', 'v1alpha1'
NAMESPACE = 'skyhook'
TEST_NODE_LABEL = 'skyhook.nvidia.com/test-node'
TEST_NODE_VALUE = 'skyhooke2e'
# What upstream's e2e runs the operator with (operator/Makefile: AGENT_IMAGE?=$(IMG_REPO)/agentless:6.2.0);
# kwok plays that image (tests/cluster/stages/pod-agentless-*.yaml).
AGENT_IMAGE = 'ghcr.io/nvidia/skyhook/agentless:6.2.0'
# upstream: CHAINSAW_ARGS:=--exec-timeout 30s --parallel 1
CHAINSAW_ARGS = ('--exec-timeout', '30s', '--parallel', '1')


def kind_workers(count):
    """kind's worker names: kind-worker, kind-worker2, ... kind-worker<count>."""
    return ['kind-worker'] + [f'kind-worker{i}' for i in range(2, count + 1)]


# Per category: how many workers upstream's kind cluster has, and which carry the test-node label
# (operator/Makefile setup-kind-cluster labels kind-worker; the deployment-policy scenarios label
# their nodes themselves with label-nodes.sh on the 15-worker deployment-policy/kind-config.yaml).
CATEGORY_CLUSTERS = {
    'cli': {'workers': 2, 'test_nodes': ['kind-worker']},
    'skyhook': {'workers': 2, 'test_nodes': ['kind-worker']},
    'deployment-policy': {'workers': 15, 'test_nodes': []},
}


# --------------------------------------------------------------------------
# the peers and the scenarios

def build_peers():
    """(kubectl-skyhook, chainsaw) paths: tests/scenarios/build-peers.sh builds what the cache lacks (never a skip)."""
    out = subprocess.run([str(HERE / 'build-peers.sh'), 'cli', 'chainsaw'], capture_output=True, text=True,
                         check=False, timeout=3600)
    if out.returncode != 0:
        raise RuntimeError(f'tests/scenarios/build-peers.sh failed (rc {out.returncode}):\n{out.stderr[-4000:]}')
    cli, chainsaw = out.stdout.split()
    return cli, chainsaw


def snapshot_path():
    return helpers.upstream_snapshot(TARBALL)


def upstream_tree():
    """build/scenarios/upstream/chainsaw: upstream's chainsaw scenarios, extracted once per snapshot."""
    tarball = snapshot_path()
    dest = BUILD / 'upstream'
    stamp = dest / '.extracted'
    key = f'{tarball} {tarball.stat().st_size} {tarball.stat().st_mtime_ns}'
    if not (stamp.is_file() and stamp.read_text() == key):
        shutil.rmtree(dest, ignore_errors=True)
        dest.mkdir(parents=True)
        with tarfile.open(tarball) as tar:
            members = [m for m in tar.getmembers() if m.name.startswith(CHAINSAW_PREFIX)]
            tar.extractall(dest / 'tmp', members=members, filter='data')
        (dest / 'tmp' / CHAINSAW_PREFIX).rename(dest / 'chainsaw')
        shutil.rmtree(dest / 'tmp')
        stamp.write_text(key)
    return dest / 'chainsaw'


class _Literal(str):
    pass


def _literal_representer(dumper, data):
    return dumper.represent_scalar('tag:yaml.org,2002:str', data, style='|')


class _Dumper(yaml.SafeDumper):
    pass


_Dumper.add_representer(_Literal, _literal_representer)


def _literals(node):
    if isinstance(node, dict):
        return {k: _literals(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_literals(v) for v in node]
    if isinstance(node, str) and '\n' in node:
        return _Literal(node)
    return node


def _op_kind(op):
    return next(k for k in op if k not in ('description', 'name'))


def rewrite(test_doc, removed):
    """The chainsaw Test without the removed operations.

    removed: {(step name, block, index): reason}; block 'try' / 'catch' / 'finally' / 'cleanup',
    index the operation's position in that block (0-based, as upstream wrote it), or None for the
    whole step. Unknown entries raise (a table that no longer matches upstream must not pass silently).
    """
    doc = copy.deepcopy(test_doc)
    steps = doc['spec']['steps']
    by_name = {s.get('name'): s for s in steps}
    for (step, block, index), dummy in removed.items():
        if step not in by_name:
            raise KeyError(f'removed step {step!r} is not in the scenario (steps: {list(by_name)})')
        if index is None:
            continue
        ops = by_name[step].get(block) or []
        if index >= len(ops):
            raise KeyError(f'removed operation {step}/{block}[{index}] does not exist')
    drop_steps = {s for (s, b, i) in removed if i is None}
    out = []
    for step in steps:
        if step.get('name') in drop_steps:
            continue
        for block in ('try', 'catch', 'finally', 'cleanup'):
            drop = {i for (s, b, i) in removed if s == step.get('name') and b == block and i is not None}
            if drop and block in step:
                step[block] = [op for i, op in enumerate(step[block]) if i not in drop]
        if 'try' in step and not step['try']:
            # every operation of the try removed: chainsaw wants one; leave a marker script
            step['try'] = [{'script': {'content': 'echo "step removed by the nodewright.bridge harness"'}}]
        out.append(step)
    doc['spec']['steps'] = out
    return doc


GENERATION_FIELD = 'observedGeneration'


def _drop_generation(doc):
    """Take ``status.observedGeneration`` (as a field or inside a JMESPath key) out of a Skyhook assert document, in
    place; returns the keys taken out. See ``prepare``."""
    if not isinstance(doc, dict) or doc.get('kind') != 'Skyhook' or not isinstance(doc.get('status'), dict):
        return []
    dropped = [k for k in doc['status'] if GENERATION_FIELD in str(k)]
    for key in dropped:
        del doc['status'][key]
    return dropped


def _drop_generation_asserts(test_doc, scenario_dir):
    """Every assert of the Test (inline, in place; files, rewritten in the run copy) without observedGeneration:
    ``[(step, file or 'inline', key)]``."""
    dropped = []
    for step in test_doc['spec']['steps']:
        for block in ('try', 'catch', 'finally', 'cleanup'):
            for op in step.get(block) or []:
                spec = op.get('assert')
                if not isinstance(spec, dict):
                    continue
                if spec.get('resource'):
                    dropped += [(step.get('name'), 'inline', k) for k in _drop_generation(spec['resource'])]
                elif spec.get('file'):
                    path = scenario_dir / spec['file']
                    docs = list(yaml.safe_load_all(path.read_text(encoding='utf-8')))
                    keys = [k for d in docs for k in _drop_generation(d)]
                    if keys:
                        path.write_text('# observedGeneration taken out by the nodewright.bridge harness\n' + yaml.dump_all(
                            [_literals(d) for d in docs if d is not None], Dumper=_Dumper, sort_keys=False,
                            allow_unicode=True, width=200), encoding='utf-8')
                        dropped += [(step.get('name'), spec['file'], k) for k in keys]
    return dropped


def prepare(scenario, removed, cli_path, keep_generation=False):
    """build/scenarios/run/<category>/<name>: the scenario to run (see the module doc); returns ``(its path, the
    observedGeneration asserts taken out)``.

    Unless ``keep_generation``, the Skyhook asserts lose their ``status.observedGeneration``: the operator's
    finalizer Update writes the packages' names into the spec, one generation the collection never makes
    (docs/dev/upstream-scenarios.md, 7), and a scenario stops at its first failed assert, so with them in place the
    steps after the first CR assert of most scenarios would never run. Each one taken out is listed.
    """
    category, name = scenario.split('/', 1)
    src_root = upstream_tree()
    run_root = BUILD / 'run'
    cat_dir = run_root / category
    if cat_dir.exists():
        shutil.rmtree(cat_dir)
    # the category's shared files (label-nodes.sh, nodes_add_taint.sh, ...) and the one scenario
    cat_dir.mkdir(parents=True)
    for entry in (src_root / category).iterdir():
        if entry.is_file():
            shutil.copy2(entry, cat_dir / entry.name)
    shutil.copytree(src_root / category / name, cat_dir / name, symlinks=True)
    for entry in src_root.iterdir():  # ../../metrics_test.py and the like sit at the chainsaw root
        if entry.is_file():
            shutil.copy2(entry, run_root / entry.name)
    (cat_dir / 'skyhook-cli').symlink_to(cli_path)
    test_file = cat_dir / name / 'chainsaw-test.yaml'
    original = yaml.safe_load(test_file.read_text(encoding='utf-8'))
    rewritten = rewrite(original, removed)
    dropped = [] if keep_generation else _drop_generation_asserts(rewritten, cat_dir / name)
    if removed or any(where == 'inline' for _step, where, _key in dropped):
        header = ''.join(f'# removed by the nodewright.bridge harness: {k[0]} {k[1]}[{k[2]}]: {v}\n'
                         for k, v in removed.items())
        test_file.write_text(header + yaml.dump(_literals(rewritten), Dumper=_Dumper, sort_keys=False,
                                                allow_unicode=True, width=200), encoding='utf-8')
    return cat_dir / name, dropped


def _docs(scenario_dir, spec):
    if spec.get('file'):
        path = scenario_dir / spec['file']
        return [d for d in yaml.safe_load_all(path.read_text(encoding='utf-8')) if d]
    if spec.get('resource'):
        return [spec['resource']]
    return []


def assert_files(scenario_dir, test_doc):
    """{(step name, "operation <n>"): (apiVersion, kind)} of the assert / error operations of the try blocks.

    chainsaw's report numbers a step's operations after splitting every file operation (apply, create,
    assert, error, ...) into one operation per YAML document, so an assert file of a Node and a Skyhook
    is two operations, each with a result of its own.
    """
    out = {}
    for step in test_doc['spec']['steps']:
        number = 0
        for op in step.get('try') or []:
            kind = _op_kind(op)
            spec = op[kind] if isinstance(op[kind], dict) else {}
            docs = _docs(scenario_dir, spec) if kind in ('apply', 'create', 'assert', 'error', 'delete', 'patch',
                                                         'update') and spec.get('file') else [spec.get('resource')]
            for doc in docs or [None]:
                number += 1
                if kind in ('assert', 'error'):
                    out[(step.get('name'), f'operation {number}')] = ((doc or {}).get('apiVersion'), (doc or {}).get('kind'))
    return out


def assertion_class(api_kind):
    """node, pod, ConfigMap, CR status, CR (metadata/spec only) or other, for a resource of an assert file."""
    dummy, kind = api_kind
    return {'Node': 'node', 'Pod': 'pod', 'ConfigMap': 'ConfigMap'}.get(kind, 'CR' if kind in (
        'Skyhook', 'DeploymentPolicy') else kind or 'other')


# --------------------------------------------------------------------------
# the cluster

class ScenarioCluster:
    """A test cluster for one category of scenarios (see CATEGORY_CLUSTERS), stopped by close()."""

    def __init__(self, category, state_dir):
        spec = CATEGORY_CLUSTERS[category]
        self.category = category
        self.state_dir = Path(state_dir)
        self.info = launcher.up(nodes=0, state_dir=str(self.state_dir))
        self.handle = helpers.Cluster(self.info.kubeconfig, node_names=[], info=self.info)
        self.kubeconfig = self.info.kubeconfig
        self.workers = kind_workers(spec['workers'])
        per_node = {n: {TEST_NODE_LABEL: TEST_NODE_VALUE} for n in spec['test_nodes']}
        self.handle.create_nodes(self.workers, per_node_labels=per_node)
        self.handle.create_namespace(NAMESPACE)
        self.base_labels = {n: dict(self.handle.core.read_node(n).metadata.labels or {}) for n in self.workers}

    def reset_nodes(self):
        """Between scenarios: the nodes as the category's cluster started (labels, no taints, schedulable).

        Upstream runs a category's scenarios one after the other on one kind cluster; each scenario's
        reset-state step clears what it needs. This restores only what a scenario that failed midway
        could leave behind, so that the next one starts as upstream's would.
        """
        core = self.handle.core
        for name in self.workers:
            node = core.read_node(name)
            labels = dict(node.metadata.labels or {})
            patch_labels = {k: None for k in labels if k not in self.base_labels[name]}
            patch_labels.update({k: v for k, v in self.base_labels[name].items() if labels.get(k) != v})
            annotations = {k: None for k in (node.metadata.annotations or {}) if k.startswith('skyhook.nvidia.com/')}
            core.patch_node(name, {'metadata': {'labels': patch_labels, 'annotations': annotations},
                                   'spec': {'unschedulable': None,
                                            'taints': [t.to_dict() for t in node.spec.taints or []
                                                       if not t.key.startswith('skyhook.nvidia.com')] or None}})

    def close(self):
        self.handle.close()
        launcher.down(str(self.state_dir), keep_state=bool(os.environ.get('NODEWRIGHT_KEEP_CLUSTER_LOGS')))


# --------------------------------------------------------------------------
# the bridge reconciler

class BridgeReconciler:
    """Runs nodewright.bridge.apply for the CRs in the cluster as an always-on operator would.

    A run starts when what the operator watches (Skyhooks, DeploymentPolicies, nodes: labels,
    annotations, taints, schedulability) differs from what it was when the last run started, or
    when a CR has work left (no status, status not complete/paused/disabled, or an observedGeneration
    behind its generation). A failed run is retried with back-off (5 s doubling to 30 s) while nothing
    changes, as the operator requeues a reconcile that returned an error. One run at a time, all CRs in it (the playbook
    orders them by priority); each run's output is kept in ``log_dir``.
    """

    def __init__(self, kubeconfig, log_dir, extra_vars=None, interval=1.0, gitops=False):
        from kubernetes import client as kclient  # pylint: disable=import-outside-toplevel
        self.kubeconfig = str(kubeconfig)
        self.api = launcher.api_client_from_kubeconfig(self.kubeconfig)
        self.core = kclient.CoreV1Api(self.api)
        self.custom = kclient.CustomObjectsApi(self.api)
        self.log_dir = Path(log_dir)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.root = link_collection(self.log_dir / 'collection')
        self.extra_vars = dict(extra_vars or {})
        self.interval = interval
        # gitops: a run starts only when a CR or a policy changed (generation, annotations, labels, deletion) since
        # the last run started, as a GitOps user runs apply once per change: nothing a run leaves undone (nodes it
        # changed, work left, a failure) starts another
        self.gitops = gitops
        self.runs = []  # (started, seconds, rc, crs, log path)
        self._stop = threading.Event()
        self._proc = None
        self._thread = threading.Thread(target=self._loop, daemon=True, name='bridge-reconciler')
        self._sampler = threading.Thread(target=self._sample_loop, daemon=True, name='cr-status-sampler')
        self.errors = []
        # what the CRs' status said over time, each change once: (time, cr, status, nodeStatus, completeNodes)
        self.timeline = []
        self._seen = {}

    def start(self):
        self._thread.start()
        self._sampler.start()
        return self

    def stop(self, timeout=60):
        self._stop.set()
        proc = self._proc
        if proc and proc.poll() is None:
            try:
                os.killpg(proc.pid, 15)
            except ProcessLookupError:
                pass
        self._thread.join(timeout)
        self._sampler.join(5)
        self.api.close()

    # what the operator watches
    def _list(self, plural):
        return self.custom.list_cluster_custom_object(GROUP, VERSION, plural).get('items', [])

    def _fingerprint(self):
        crs = self._list('skyhooks')
        policies = self._list('deploymentpolicies')
        nodes = [] if self.gitops else json.loads(self.core.list_node(_preload_content=False).data)['items']
        view = {
            'crs': sorted((c['metadata']['name'], c['metadata'].get('generation'), c['metadata'].get('uid'),
                           json.dumps(self._user_annotations(c), sort_keys=True),
                           json.dumps(c['metadata'].get('labels') or {}, sort_keys=True),
                           c['metadata'].get('deletionTimestamp') or '') for c in crs),
            'policies': sorted((p['metadata']['name'], p['metadata'].get('generation'),
                                json.dumps(p['metadata'].get('annotations') or {}, sort_keys=True)) for p in policies),
            'nodes': sorted((n['metadata']['name'], json.dumps(n['metadata'].get('labels') or {}, sort_keys=True),
                             json.dumps({k: v for k, v in (n['metadata'].get('annotations') or {}).items()
                                         if k.startswith('skyhook.nvidia.com/')}, sort_keys=True),
                             json.dumps(n['spec'].get('taints') or [], sort_keys=True),
                             bool(n['spec'].get('unschedulable')),
                             _ready(n)) for n in nodes),
        }
        digest = hashlib.sha256(json.dumps(view, sort_keys=True).encode()).hexdigest()
        return digest, crs

    def _user_annotations(self, cr):
        """The CR's annotations a change of which starts a run: all of them, or in gitops mode the ones a user sets
        (kubectl skyhook pause / disable), not those a run writes itself (the version stamp)."""
        annotations = cr['metadata'].get('annotations') or {}
        if not self.gitops:
            return annotations
        return {k: v for k, v in annotations.items() if k in (f'{GROUP}/pause', f'{GROUP}/disable')}

    @staticmethod
    def _work_left(cr):
        ann = cr['metadata'].get('annotations') or {}
        if ann.get('skyhook.nvidia.com/pause') == 'true' or ann.get('skyhook.nvidia.com/disable') == 'true':
            return False
        status = cr.get('status') or {}
        if status.get('observedGeneration') != cr['metadata'].get('generation'):
            return True
        return status.get('status') not in ('complete',)

    def _loop(self):
        last = None
        failures = 0
        next_retry = 0.0
        while not self._stop.is_set():
            try:
                digest, crs = self._fingerprint()
            except Exception as exc:  # pylint: disable=broad-exception-caught
                self.errors.append(f'{time.strftime("%H:%M:%S")} fingerprint: {exc}')
                self._stop.wait(self.interval)
                continue
            # a CR marked deleted that the finalizer holds is the run's too: apply uninstalls, then finalizes it
            names = sorted(c['metadata']['name'] for c in crs)
            changed = digest != last
            pending = not self.gitops and any(self._work_left(c) for c in crs)
            retry = failures and not self.gitops
            if names and (changed or ((pending or retry) and time.monotonic() >= next_retry)):
                last = digest
                rc = self._run(names)
                if rc == 0:
                    failures = 0
                    next_retry = 0.0
                else:
                    failures += 1
                    next_retry = time.monotonic() + min(30.0, 5.0 * 2 ** (failures - 1))
            else:
                if not names:
                    last = digest
                self._stop.wait(self.interval)

    def _sample_loop(self):
        while not self._stop.is_set():
            try:
                self._sample(self._list('skyhooks'))
            except Exception:  # pylint: disable=broad-exception-caught
                pass
            self._stop.wait(0.5)

    def _sample(self, crs):
        for cr in crs:
            status = cr.get('status') or {}
            view = (status.get('status'), status.get('nodeStatus'), status.get('completeNodes'))
            name = cr['metadata']['name']
            if self._seen.get(name) != view:
                self._seen[name] = view
                self.timeline.append((time.strftime('%H:%M:%S'), name) + view)

    def _run(self, names):
        variables = {'nodewright_kubeconfig': self.kubeconfig, 'nodewright_cr_name': names,
                     'nodewright_namespace': NAMESPACE, 'nodewright_agent_image': AGENT_IMAGE,
                     'nodewright_stage_timeout': 300, 'nodewright_interrupt_timeout': 300,
                     'nodewright_drain_timeout': 120,
                     # an always-on stand-in, as the operator is: its CRs carry the finalizer (kubectl delete waits)
                     'nodewright_add_finalizer': True}
        variables.update(self.extra_vars)
        index = len(self.runs) + 1
        log = self.log_dir / f'run-{index:03d}.log'
        cmd = [str(Path(sys.executable).with_name('ansible-playbook')), 'nodewright.bridge.apply',
               '-e', json.dumps(variables)]
        env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(self.root), ANSIBLE_FORCE_COLOR='0', ANSIBLE_NOCOLOR='1',
                   ANSIBLE_HOST_KEY_CHECKING='False', ANSIBLE_RETRY_FILES_ENABLED='False', ANSIBLE_FORKS='20',
                   ANSIBLE_LOCALHOST_WARNING='False', ANSIBLE_INVENTORY_UNPARSED_WARNING='False',
                   K8S_AUTH_KUBECONFIG=self.kubeconfig, NODEWRIGHT_ADMIN_KUBECONFIG=self.kubeconfig)
        started = time.monotonic()
        stamp = time.strftime('%H:%M:%S')
        with open(log, 'w', encoding='utf-8') as out:
            out.write(f'# {stamp} nodewright.bridge.apply for {names}\n')
            out.flush()
            self._proc = subprocess.Popen(cmd, env=env, cwd=str(self.root), stdout=out,  # pylint: disable=consider-using-with
                                          stderr=subprocess.STDOUT, text=True, start_new_session=True)
            try:
                rc = self._proc.wait(timeout=1800)
            except subprocess.TimeoutExpired:
                os.killpg(self._proc.pid, 9)
                rc = self._proc.wait()
        self.runs.append((stamp, round(time.monotonic() - started, 1), rc, names, str(log)))
        return rc

    def summary(self):
        return '\n'.join(f'  {s} {d:6.1f}s rc={rc} {names} {log}' for s, d, rc, names, log in self.runs)


def _ready(node):
    for cond in (node.get('status') or {}).get('conditions') or []:
        if cond.get('type') == 'Ready':
            return cond.get('status')
    return None


# --------------------------------------------------------------------------
# chainsaw

class ChainsawResult:
    def __init__(self, rc, output, report):
        self.rc = rc
        self.output = output
        self.report = report

    def failures(self):
        """[(step, operation type, operation name, failure message)] from the JSON report."""
        out = []
        for test in (self.report or {}).get('tests') or []:
            for step in test.get('steps') or []:
                for op in step.get('operations') or []:
                    if op.get('failure'):
                        out.append((step.get('name'), op.get('type'), op.get('name'), op['failure'].get('error')))
        return out


# pylint: disable-next=too-many-arguments,too-many-positional-arguments
def run_chainsaw(chainsaw, scenario_dir, kubeconfig, cli_path, report_dir, timeout=1800):
    """chainsaw test on one prepared scenario: a ChainsawResult (rc 0: every step passed)."""
    bindir = Path(report_dir) / 'bin'
    bindir.mkdir(parents=True, exist_ok=True)
    plugin = bindir / 'kubectl-skyhook'
    if not plugin.exists():
        plugin.symlink_to(cli_path)
    report_dir = Path(report_dir)
    cmd = [chainsaw, 'test', '--test-dir', str(scenario_dir), *CHAINSAW_ARGS, '--no-color',
           '--report-format', 'JSON', '--report-path', str(report_dir), '--report-name', 'chainsaw-report']
    env = dict(os.environ, KUBECONFIG=str(kubeconfig), PATH=f'{bindir}:{os.environ.get("PATH", "")}')
    proc = subprocess.run(cmd, env=env, cwd=str(scenario_dir), capture_output=True, text=True, timeout=timeout,
                          check=False)
    report_path = report_dir / 'chainsaw-report.json'
    report = json.loads(report_path.read_text()) if report_path.is_file() else None
    (report_dir / 'chainsaw.log').write_text(proc.stdout + '\n--- stderr ---\n' + proc.stderr)
    return ChainsawResult(proc.returncode, proc.stdout + proc.stderr, report)
