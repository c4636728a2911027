# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""Fleet benchmark: the same CR rolled out by the real NodeWright operator and by nodewright.bridge.apply.

For every size, each side gets a fresh test cluster (tests/cluster/launcher.py, with an API
audit log) that is torn down afterwards. The CR (skyhook.nvidia.com/v1alpha1 Skyhook, two
packages, one with a reboot interrupt, selecting every fake GPU node) references a
DeploymentPolicy whose fixed strategy starts at the budget's ceiling (budget 25 %: 24 nodes are
4 batches of 6, 200 nodes 4 batches of 50), so both sides run the same batches.

* operator: the ``manager`` built by ../shared/upstream/build-operator.sh, run out of cluster
  (webhooks off, namespace ``skyhook``); the clock starts when the CR is created.
* bridge: ``ansible-playbook nodewright.bridge.apply -e nodewright_cr=<file>`` (forks: the batch, at least 50); the
  clock starts when the playbook starts. Then the same apply again over the complete nodes
  (the no-op re-run).

Per side: wall seconds until every node is complete (status annotation ``complete``, every
package of the CR ``complete`` in its nodeState) and schedulable (not cordoned, Ready, and its
reboot done: on the fake nodes the operator's interrupt pod finishes before the reboot it asks
for, so its annotations say complete while the node is still rebooting; the time to the
annotations alone is printed too); CPU seconds (operator:
utime+stime from /proc; ansible-playbook and all its children: wait4's rusage); API requests and
writes from the audit log by user agent (``manager/`` and ``nodewright.bridge/``); the most
nodes cordoned at once, and cordoned or rebooting (not Ready, or not yet Ready on the boot ID its fake
reboot gave it) at once (a node watch); peak RSS (operator: VmHWM; bridge: the peak of the sum of
RSS over the ansible-playbook process tree, sampled every 100 ms). Then bridge/operator ratios.

``--generation nodewright`` (bridge side only: there is no v0.20 operator here) runs the bridge side on a cluster that
serves only the v0.20 CRDs (nodewright.nvidia.com, ../shared/crds/v0.20): the CR is a NodeWright and its
DeploymentPolicy in that group, the namespace is ``nodewright``, the nodes' state is read under
``nodewright.nvidia.com/``, and the stages run as batch/v1 Jobs: Jobs created is its own row, and pods created
includes the pods of those Jobs (the job controller's creates, from the audit log). The default, ``skyhook``, is the
v0.15 contract (bare stage pods in ``skyhook``).

A per-task profile runs one cheap cluster task (``nodewright.bridge.node_state`` read, delegated
to localhost) on N hosts in process (the default) and on the classic module path
(NODEWRIGHT_BRIDGE_IN_PROCESS=0).

    python tests/bench/fleet_bench.py                          # sizes 24 and 200, both sides, profile
    python tests/bench/fleet_bench.py --sizes 24 --side operator --no-profile
    python tests/bench/fleet_bench.py --sizes 1000 --json build/fleet-1000.json
    python tests/bench/fleet_bench.py --sizes 200 --loaded 2 --no-profile     # quiet, then under a CPU load of 2 processes
    python tests/bench/fleet_bench.py --sizes 24 --side bridge --generation nodewright --no-profile

``--loaded N`` runs each size a second time with N CPU-bound processes started before each side (the same
load for both) and prints the quiet and the loaded ratios side by side. The bench exits 2 when a side had more
nodes cordoned, or cordoned or rebooting, at once than the budget's batch.

Prints a table per size and writes the figures as JSON (default build/bench-fleet.json).
Not part of ``make test``: ``make bench-fleet`` (BENCH_FLEET_ARGS=...). See docs/dev/benchmarks.md.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE.parent / 'cluster'))

# pylint: disable=wrong-import-position
import launcher  # noqa: E402
import yaml  # noqa: E402
from kubernetes import client as kclient  # noqa: E402
from kubernetes import watch as kwatch  # noqa: E402

CR_NAME = 'fleet-bench'
POLICY_NAME = 'fleet-bench-policy'
# The names of the two NodeWright API generations the bench speaks (plugins/module_utils/model/api_generation.py's SKYHOOK
# and NODEWRIGHT; the bench imports no collection code). crds: the directory under launcher.crds_dir() that the
# cluster is started with ('' for the v0.15 files there, 'v0.20' for the files that serve only nodewright.nvidia.com).
GENERATIONS = {
    'skyhook': {'group': 'skyhook.nvidia.com', 'version': 'v1alpha1', 'kind': 'Skyhook', 'plural': 'skyhooks',
                'prefix': 'skyhook.nvidia.com', 'namespace': 'skyhook', 'crds': ''},
    'nodewright': {'group': 'nodewright.nvidia.com', 'version': 'v1alpha1', 'kind': 'NodeWright', 'plural': 'nodewrights',
                   'prefix': 'nodewright.nvidia.com', 'namespace': 'nodewright', 'crds': 'v0.20'},
}
OPERATOR_GENERATION = GENERATIONS['skyhook']  # the operator built here is v0.15's
FAKE_REBOOT_KEY = 'nodewright.bridge/fake-reboot'
# The images only have to be pulled by kwok (which pulls nothing); none may contain "fail".
PACKAGES = {
    'kernel-tuning': {'version': '1.4.0', 'image': 'registry.local/kernel-tuning',
                      'configMap': {'sysctl.conf': 'vm.swappiness=1\n'}},
    'gpu-driver': {'version': '570.124.6', 'image': 'registry.local/gpu-driver', 'interrupt': {'type': 'reboot'}},
}
AGENT_IMAGE = 'ghcr.io/nvidia/skyhook/agent:latest'  # the operator's and the collection's default
OPERATOR_UA = 'manager/'
BRIDGE_UA = 'nodewright.bridge/'
CONTROLLER_UA = 'kube-controller-manager/'  # its job controller creates the pods of the bridge's stage Jobs
WRITE_VERBS = ('create', 'update', 'patch', 'delete', 'deletecollection')
CLK_TCK = os.sysconf('SC_CLK_TCK')
PAGE = os.sysconf('SC_PAGE_SIZE')
MIB = 1024 * 1024


class BenchError(RuntimeError):
    """A side did not finish; the message says why and shows the log tail."""


def log(msg):
    sys.stderr.write('fleet-bench: %s\n' % msg)
    sys.stderr.flush()


def tail(path, lines=40):
    try:
        text = Path(path).read_text(encoding='utf-8', errors='replace').splitlines()
    except OSError:
        return '(no log at %s)' % path
    return '\n'.join(text[-lines:])


# --------------------------------------------------------------------------
# the CR

def ceiling(percent, nodes):
    """The budget's ceiling as the operator computes it: max(1, nodes * percent // 100)."""
    return max(1, nodes * percent // 100)


def api_version(gen):
    return '%s/%s' % (gen['group'], gen['version'])


def state_keys(gen):
    """The node annotations the bench reads: (nodeState, status) of the CR, under the generation's prefix."""
    return '%s/nodeState_%s' % (gen['prefix'], CR_NAME), '%s/status_%s' % (gen['prefix'], CR_NAME)


def generation_crds(gen):
    """The CRD directory of a generation's cluster (launcher.up's crds; None: the launcher's default, the v0.15 files)."""
    return Path(launcher.crds_dir()) / gen['crds'] if gen['crds'] else None


def fleet_docs(size, percent, gen):
    """The CR (a Skyhook or a NodeWright; the images are bare repositories, the version apart, as v0.20's CRD wants
    them) and its DeploymentPolicy in the same group: fixed batches of the budget's ceiling."""
    batch = ceiling(percent, size)
    policy = {'apiVersion': api_version(gen), 'kind': 'DeploymentPolicy', 'metadata': {'name': POLICY_NAME},
              'spec': {'default': {'budget': {'percent': percent}, 'strategy': {'fixed': {'initialBatch': batch}}}}}
    cr = {'apiVersion': api_version(gen), 'kind': gen['kind'], 'metadata': {'name': CR_NAME},
          'spec': {'nodeSelectors': {'matchLabels': {'nodepool': 'gpu'}}, 'deploymentPolicy': POLICY_NAME,
                   'packages': PACKAGES}}
    return cr, policy


# --------------------------------------------------------------------------
# watching the nodes

class NodeWatch(threading.Thread):
    """List and watch the nodes: the most cordoned at once, when each node completed, the last change."""

    def __init__(self, kubeconfig, names, gen):
        super().__init__(daemon=True)
        self.api = launcher.api_client_from_kubeconfig(kubeconfig)
        self.state_key, self.status_key = state_keys(gen)
        self.core = kclient.CoreV1Api(self.api)
        self.names = set(names)
        self.cordoned = set()
        self.max_cordoned = 0
        self.disrupted = set()       # cordoned, not Ready or rebooting
        self.max_disrupted = 0
        self.completed = {}          # node -> monotonic time it was first seen complete
        self.all_complete = None     # monotonic time every node was complete at once
        self.all_recorded = None     # ... every node's annotations said complete (maybe before its reboot ended)
        self.signature = {}
        self.last_change = time.monotonic()
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.error = None

    def _see(self, node):
        name = node.metadata.name
        if name not in self.names:
            return
        annotations = node.metadata.annotations or {}
        sig = (annotations.get(self.state_key), annotations.get(self.status_key), bool(node.spec.unschedulable),
               node_ready(node), reboot_state(annotations))
        rebooting = sig[4] == 'rebooting' and not rebooted(node, annotations)
        now = time.monotonic()
        with self.lock:
            if self.signature.get(name) != sig:
                self.signature[name] = sig
                self.last_change = now
            for members, now_in in ((self.cordoned, sig[2]), (self.disrupted, sig[2] or not sig[3] or rebooting)):
                if now_in:
                    members.add(name)
                else:
                    members.discard(name)
            self.max_cordoned = max(self.max_cordoned, len(self.cordoned))
            self.max_disrupted = max(self.max_disrupted, len(self.disrupted))
            everyone = len(self.signature) == len(self.names)
            if (self.all_recorded is None and everyone
                    and all(complete_signature(s, need_ready=False) for s in self.signature.values())):
                self.all_recorded = now
            if complete_signature(sig):
                self.completed.setdefault(name, now)
                if self.all_complete is None and everyone and all(complete_signature(s) for s in self.signature.values()):
                    self.all_complete = now

    def run(self):
        rv = None
        while not self.stop.is_set():
            try:
                if rv is None:
                    listing = self.core.list_node()
                    for node in listing.items:
                        self._see(node)
                    rv = listing.metadata.resource_version
                stream = kwatch.Watch().stream(self.core.list_node, resource_version=rv, timeout_seconds=10,
                                               allow_watch_bookmarks=True)
                for event in stream:
                    if event['type'] == 'ERROR':
                        rv = None
                        break
                    obj = event['object']
                    if isinstance(obj, dict):  # a bookmark the client did not turn into a V1Node
                        rv = (obj.get('metadata') or {}).get('resourceVersion') or rv
                        continue
                    rv = obj.metadata.resource_version
                    if event['type'] in ('ADDED', 'MODIFIED'):
                        self._see(obj)
                    if self.stop.is_set():
                        break
            except kclient.ApiException as exc:
                rv = None if exc.status == 410 else rv
                time.sleep(0.2)
            except Exception as exc:  # pylint: disable=broad-exception-caught
                self.error = repr(exc)
                time.sleep(0.5)

    def summary(self):
        with self.lock:
            states = collections.Counter()
            for sig in self.signature.values():
                states[sig[1] or 'untouched'] += 1
            text = 'complete %d/%d, cordoned now %d, status: %s' % (
                len(self.completed), len(self.names), len(self.cordoned), dict(sorted(states.items())))
        return text + ('; node watch error: %s' % self.error if self.error else '')

    def close(self):
        self.stop.set()
        self.join(timeout=20)
        self.api.close()


def node_ready(node):
    return any(c.type == 'Ready' and c.status == 'True' for c in (node.status.conditions or []))


def rebooted(node, annotations):
    """Whether the node's fake reboot is over as the node shows it: Ready, with the boot ID the reboot gave it.

    fake_reboots.py writes its record ``done`` only after its next poll sees Ready; with 250 reboots at once
    (1,000 nodes) that poll lags by seconds behind the node itself, and counting the lag as "rebooting" put
    40 nodes that were Ready on their new boot, and uncordoned, over the budget. The operator's rule (and the
    collection's wait) is the node back Ready after its reboot; a node not Ready still counts.
    """
    try:
        record = json.loads(annotations.get(FAKE_REBOOT_KEY) or '{}')
    except ValueError:
        return False
    boot = getattr(node.status.node_info, 'boot_id', None) if node.status and node.status.node_info else None
    return bool(record.get('bootID')) and boot == record['bootID'] and node_ready(node)


def reboot_state(annotations):
    """The state of the node's last fake reboot (tests/cluster/fake_reboots.py's record: rebooting, done, ...), or None."""
    try:
        return json.loads(annotations.get(FAKE_REBOOT_KEY) or '{}').get('state')
    except ValueError:
        return None


def since(moment, started):
    return None if moment is None else round(moment - started, 2)


def complete_signature(sig, need_ready=True):
    """True for a node whose (nodeState, status, unschedulable, Ready, fake reboot) say: every package of the
    CR complete, status complete, schedulable: not cordoned, and Ready after the reboot that the CR's
    gpu-driver asks for (the node's fake reboot ``done``: a node that is still rebooting takes no pods and
    does not run the new driver yet). With need_ready=False only the annotations and the cordon count."""
    state_text, status, unschedulable, ready, reboot = sig
    if status != 'complete' or unschedulable or (need_ready and not (ready and reboot == 'done')):
        return False
    try:
        state = json.loads(state_text or '{}')
    except ValueError:
        return False
    return all((state.get('%s|%s' % (name, pkg['version'])) or {}).get('state') == 'complete'
               for name, pkg in PACKAGES.items())


# --------------------------------------------------------------------------
# processes

def proc_cpu(pid):
    """utime + stime of a process (seconds), from /proc/<pid>/stat."""
    stat = Path('/proc/%d/stat' % pid).read_text(encoding='utf-8')
    fields = stat[stat.rindex(')') + 2:].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def proc_status(pid, key):
    """A kB field of /proc/<pid>/status (VmHWM, VmRSS) in MiB."""
    for line in Path('/proc/%d/status' % pid).read_text(encoding='utf-8').splitlines():
        if line.startswith(key + ':'):
            return int(line.split()[1]) / 1024
    return 0.0


def _children(pid):
    kids = []
    try:
        tasks = os.listdir('/proc/%d/task' % pid)
    except OSError:
        return kids
    for tid in tasks:
        try:
            kids.extend(int(p) for p in Path('/proc/%d/task/%s/children' % (pid, tid)).read_text(encoding='ascii').split())
        except (OSError, ValueError):
            continue
    return kids


ANSIBALLZ = re.compile(rb'ansible-tmp-[^/\x00]+/AnsiballZ_\w+\.py')


def _pss_kib(pid):
    try:
        for line in Path('/proc/%d/smaps_rollup' % pid).read_text(encoding='ascii').splitlines():
            if line.startswith('Pss:'):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


class TreeSampler(threading.Thread):
    """Every `interval` s: the sum of RSS over a process and all its descendants; keeps the peak.

    Forked workers share most of their pages with ansible-playbook, so the RSS sum counts them once per
    process; every `pss_every`-th sample also sums PSS (shared pages split between the processes sharing them).
    """

    def __init__(self, pid, interval=0.1, pss_every=10):
        super().__init__(daemon=True)
        self.pid = pid
        self.interval = interval
        self.pss_every = pss_every
        self.samples = 0
        self.peak_mib = 0.0
        self.peak_pss_mib = 0.0
        self.peak_procs = 0
        self.module_runs = set()  # AnsiballZ files seen running: the classic module path
        self.stop = threading.Event()

    def sample(self):
        pids, todo = [], [self.pid]
        while todo:
            pid = todo.pop()
            pids.append(pid)
            todo.extend(_children(pid))
        total = count = 0
        for pid in pids:
            try:
                resident = int(Path('/proc/%d/statm' % pid).read_text(encoding='ascii').split()[1])
            except (OSError, ValueError, IndexError):
                continue
            total += resident * PAGE
            count += 1
            if pid != self.pid:
                try:
                    self.module_runs.update(ANSIBALLZ.findall(Path('/proc/%d/cmdline' % pid).read_bytes()))
                except OSError:
                    pass
        self.peak_mib = max(self.peak_mib, total / MIB)
        self.peak_procs = max(self.peak_procs, count)
        if self.samples % self.pss_every == 0:
            self.peak_pss_mib = max(self.peak_pss_mib, sum(_pss_kib(pid) for pid in pids) / 1024)
        self.samples += 1

    def run(self):
        while not self.stop.is_set():
            self.sample()
            self.stop.wait(self.interval)

    def close(self):
        self.stop.set()
        self.join(timeout=5)


def wait_child(proc, should_stop=None, poll=0.2):
    """Wait for a Popen child with wait4 (its rusage includes every descendant it waited for).

    should_stop() is called while it runs; a message from it kills the child's process group and raises BenchError.
    Returns (exit code, rusage).
    """
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid == proc.pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return proc.returncode, usage
        reason = should_stop() if should_stop else None
        if reason:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass
            pid, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
            raise BenchError(reason)
        time.sleep(poll)


def usage_cpu(usage):
    return usage.ru_utime + usage.ru_stime


# --------------------------------------------------------------------------
# audit log

def _ts(text):
    return datetime.datetime.fromisoformat(text.replace('Z', '+00:00')).timestamp()


def _resource(event):
    ref = event.get('objectRef') or {}
    name = ref.get('resource') or (event.get('requestURI') or '?').split('?')[0]
    if ref.get('subresource'):
        name += '/' + ref['subresource']
    return name


def audit_requests(path, agent_prefix):
    """The requests of one user agent in the audit log, one per auditID: (received epoch, verb, resource, dry run, HTTP code)."""
    seen = {}
    with open(path, encoding='utf-8') as handle:
        for line in handle:
            if agent_prefix not in line:
                continue
            event = json.loads(line)
            if not (event.get('userAgent') or '').startswith(agent_prefix):
                continue
            seen[event['auditID']] = (_ts(event['requestReceivedTimestamp']), event['verb'], _resource(event),
                                      'dryRun=' in (event.get('requestURI') or ''), (event.get('responseStatus') or {}).get('code', 0))
    return sorted(seen.values())


def audit_job_pods(path, namespace):
    """The received epochs of the pods the controller manager (its job controller) created in namespace: the pods of
    the stage Jobs there, which the requests of the Jobs' creator do not count."""
    seen = {}
    with open(path, encoding='utf-8') as handle:
        for line in handle:
            if CONTROLLER_UA not in line:
                continue
            event = json.loads(line)
            ref = event.get('objectRef') or {}
            if (not (event.get('userAgent') or '').startswith(CONTROLLER_UA) or event.get('verb') != 'create'
                    or ref.get('resource') != 'pods' or ref.get('subresource') or ref.get('namespace') != namespace
                    or 'dryRun=' in (event.get('requestURI') or '')):
                continue
            seen[event['auditID']] = (_ts(event['requestReceivedTimestamp']), (event.get('responseStatus') or {}).get('code', 0))
    return sorted(ts for ts, code in seen.values() if 0 < code < 400)


def request_figures(requests):
    """Totals: requests, writes (dry runs apart), watches, pods created, refused (HTTP >= 400, by code), counts by verb and resource."""
    by_kind = collections.Counter()
    refused = collections.Counter()
    writes = dry = watches = pods_created = jobs_created = 0
    for dummy, verb, res, dry_run, code in requests:
        by_kind['%s %s%s' % (verb, res, ' (dry run)' if dry_run else '')] += 1
        if code >= 400:
            refused['%s %s %d' % (verb, res, code)] += 1
        if verb in WRITE_VERBS:
            if dry_run:
                dry += 1
            else:
                writes += 1
                pods_created += verb == 'create' and res == 'pods'
                jobs_created += verb == 'create' and res == 'jobs'
        elif verb == 'watch':
            watches += 1
    return {'requests': len(requests), 'writes': writes, 'dry_run_writes': dry, 'watches': watches,
            'pods_created': pods_created, 'jobs_created': jobs_created, 'refused': sum(refused.values()), 'refused_by_code': dict(sorted(refused.items())),
            'by_verb_resource': dict(sorted(by_kind.items()))}


# --------------------------------------------------------------------------
# one side

class Side:
    """A fresh cluster for one side of one size: up, namespace, node watch; down on close."""

    def __init__(self, args, size, side):
        self.args = args
        self.size = size
        self.gen = GENERATIONS[args.generation] if side == 'bridge' else OPERATOR_GENERATION
        self.dir = Path(args.workdir) / ('%d-%s' % (size, side))
        if self.dir.exists():
            subprocess.run(['rm', '-rf', str(self.dir)], check=True)
        self.dir.mkdir(parents=True)
        log('%s, %d nodes: starting a fresh cluster (audit log on, %s CRDs)' % (side, size, self.gen['group']))
        self.info = launcher.up(nodes=size, state_dir=self.dir / 'cluster', audit=True, timeout=300.0,
                                crds=generation_crds(self.gen))
        self.api = self.watch = None
        try:
            self.api = self.info.api_client()
            kclient.CoreV1Api(self.api).create_namespace({'metadata': {'name': self.gen['namespace']}})
            self.cr, self.policy = fleet_docs(size, args.budget_percent, self.gen)
            self.cr_file = self.dir / 'cr.yaml'
            self.cr_file.write_text(yaml.safe_dump_all([self.cr, self.policy], sort_keys=False), encoding='utf-8')
            self.watch = NodeWatch(self.info.kubeconfig, self.info.nodes, self.gen)
            self.watch.start()
        except BaseException:
            self.close()
            raise
        self.loadavg = os.getloadavg()
        self.last_progress = time.monotonic()

    def stalled(self, started, what, log_path):
        """A reason to give up (no node changed for --stall-timeout s, or --timeout), else None; progress every 30 s."""
        now = time.monotonic()
        if self.watch.all_complete is not None:
            return None
        if now - self.last_progress >= 30:
            self.last_progress = now
            log('%s, %d nodes: %.0f s: %s' % (what, self.size, now - started, self.watch.summary()))
        if now - self.watch.last_change > self.args.stall_timeout:
            return '%s made no progress for %d s (%s)\n--- %s (tail) ---\n%s' % (
                what, self.args.stall_timeout, self.watch.summary(), log_path, tail(log_path))
        if now - started > self.args.timeout:
            return '%s did not finish within %d s (%s)\n--- %s (tail) ---\n%s' % (
                what, self.args.timeout, self.watch.summary(), log_path, tail(log_path))
        return None

    def close(self):
        if self.watch is not None:
            self.watch.close()
        if self.api is not None:
            self.api.close()
        launcher.down(self.info.state_dir, keep_state=self.args.keep_cluster_logs)


def operator_binary(args):
    if args.operator:
        return args.operator
    script = REPO_ROOT.parent / 'shared' / 'upstream' / 'build-operator.sh'
    if not script.exists():
        script = Path('/work/shared/upstream/build-operator.sh')
    if not script.exists():
        raise BenchError('no operator: pass --operator PATH or put ../shared/upstream/build-operator.sh next to the repository')
    log('operator: %s (builds once, about 5 min cold)' % script)
    out = subprocess.run([str(script)], check=True, stdout=subprocess.PIPE, text=True).stdout.strip().splitlines()
    return out[-1]


# How the operator runs here: out of cluster against the test cluster (upstream's local development set-up).
OPERATOR_SETTINGS = {
    'ENABLE_WEBHOOKS': 'false',           # no webhook server (it would need certificates and a Service)
    'NAMESPACE': OPERATOR_GENERATION['namespace'],  # where its package pods and ConfigMaps go (must exist)
    'LOG_ENCODER': 'console',
    'LOG_LEVEL': 'info',                  # as in its deployment (config/manager/manager.yaml); the binary's default is debug
    'METRICS_PORT': '127.0.0.1:0',        # defaults :8080 / :8081 would listen on every address and may be taken
    'PROBE_PORT': '127.0.0.1:0',
    'LEADER_ELECTION': 'false',
    'AGENT_IMAGE': AGENT_IMAGE,           # the default; kwok runs any image
}


def operator_env(kubeconfig):
    env = dict(os.environ, KUBECONFIG=str(kubeconfig))
    env.update(OPERATOR_SETTINGS)
    return env


def run_operator(args, size, binary):
    """The operator side: start it, create the CR, wait until every node is complete."""
    side = Side(args, size, 'operator')
    proc = None
    log_path = side.dir / 'operator.log'
    try:
        custom = kclient.CustomObjectsApi(side.api)
        gen = side.gen
        custom.create_cluster_custom_object(gen['group'], gen['version'], 'deploymentpolicies', side.policy)
        with open(log_path, 'wb') as out:
            proc = subprocess.Popen([binary], env=operator_env(side.info.kubeconfig), stdout=out, stderr=subprocess.STDOUT,
                                    start_new_session=True, cwd=str(side.dir))
        deadline = time.monotonic() + 120
        while 'Starting workers' not in tail(log_path, 400):
            if proc.poll() is not None:
                raise BenchError('the operator exited with %s before it started\n--- %s (tail) ---\n%s' % (
                    proc.returncode, log_path, tail(log_path)))
            if time.monotonic() > deadline:
                raise BenchError('the operator did not start its workers within 120 s\n--- %s (tail) ---\n%s' % (
                    log_path, tail(log_path)))
            time.sleep(0.2)
        cpu_before = proc_cpu(proc.pid)
        log('operator, %d nodes: started (pid %d); creating the CR' % (size, proc.pid))
        started = time.monotonic()
        side.watch.last_change = started
        custom.create_cluster_custom_object(gen['group'], gen['version'], gen['plural'], side.cr)
        while side.watch.all_complete is None:
            if proc.poll() is not None:
                raise BenchError('the operator exited with %s during the rollout (%s)\n--- %s (tail) ---\n%s' % (
                    proc.returncode, side.watch.summary(), log_path, tail(log_path)))
            reason = side.stalled(started, 'the operator', log_path)
            if reason:
                raise BenchError(reason)
            time.sleep(0.2)
        cpu = proc_cpu(proc.pid)
        hwm = proc_status(proc.pid, 'VmHWM')
        wall = round(side.watch.all_complete - started, 2)
        log('operator, %d nodes: every node complete after %.1f s' % (size, wall))
        stop_process(proc)
        proc = None
        time.sleep(1.0)  # the audit log's last events
        figures = request_figures(audit_requests(side.info.audit_log, OPERATOR_UA))
        return dict(figures, wall_s=round(wall, 2), cpu_s=round(cpu, 2), cpu_before_cr_s=round(cpu_before, 2),
                    cpu_per_node_s=round(cpu / size, 3), max_cordoned=side.watch.max_cordoned, peak_rss_mib=round(hwm, 1),
                    recorded_wall_s=since(side.watch.all_recorded, started), max_disrupted=side.watch.max_disrupted,
                    first_node_complete_s=round(min(side.watch.completed.values()) - started, 2),
                    loadavg_before=[round(x, 2) for x in side.loadavg], env=dict(OPERATOR_SETTINGS))
    finally:
        if proc is not None:
            stop_process(proc)
        side.close()


def stop_process(proc):
    """SIGTERM its process group, SIGKILL after 15 s."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except OSError:
        pass
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def collection_source(args):
    """The collection the bridge side runs: this working tree, or --collection-ref's commit (git archive)."""
    if not args.collection_ref:
        return REPO_ROOT
    commit = subprocess.run(['git', '-C', str(REPO_ROOT), 'rev-parse', '--verify', args.collection_ref + '^{commit}'],
                            check=True, stdout=subprocess.PIPE, text=True).stdout.strip()
    dest = Path(args.workdir) / ('collection-%s' % commit[:12])
    if not dest.is_dir():
        tmp = dest.with_name(dest.name + '.tmp')
        subprocess.run(['rm', '-rf', str(tmp)], check=True)
        tmp.mkdir(parents=True)
        archive = subprocess.run(['git', '-C', str(REPO_ROOT), 'archive', commit], check=True, stdout=subprocess.PIPE).stdout
        subprocess.run(['tar', '-x', '-C', str(tmp)], input=archive, check=True)
        tmp.rename(dest)
    return dest


def collection_info(args):
    """Which collection the bridge side ran: a commit, or the working tree (its HEAD and whether it had changes)."""
    head = subprocess.run(['git', '-C', str(REPO_ROOT), 'rev-parse', args.collection_ref or 'HEAD'],
                          check=False, stdout=subprocess.PIPE, text=True).stdout.strip()
    if args.collection_ref:
        return {'ref': args.collection_ref, 'commit': head}
    dirty = subprocess.run(['git', '-C', str(REPO_ROOT), 'status', '--porcelain', '--', 'plugins', 'roles', 'playbooks'],
                           check=False, stdout=subprocess.PIPE, text=True).stdout.strip()
    return {'ref': 'working tree', 'commit': head, 'uncommitted_changes': bool(dirty)}


def collections_path(args):
    """A collections dir whose ansible_collections/nodewright/bridge is the collection under test."""
    source = collection_source(args)
    root = Path(args.workdir) / 'collections'
    link = root / 'ansible_collections' / 'nodewright' / 'bridge'
    link.parent.mkdir(parents=True, exist_ok=True)
    if link.is_symlink() and Path(os.readlink(link)) != source:
        link.unlink()
    if not link.is_symlink():
        link.symlink_to(source)
    return root


def ansible_env(args, kubeconfig, report=None, in_process=None):
    env = dict(os.environ)
    env.update({
        'ANSIBLE_COLLECTIONS_PATH': str(collections_path(args)), 'ANSIBLE_NOCOLOR': '1', 'ANSIBLE_FORCE_COLOR': '0',
        'ANSIBLE_HOST_KEY_CHECKING': 'False', 'ANSIBLE_RETRY_FILES_ENABLED': 'False',
        'ANSIBLE_LOCALHOST_WARNING': 'False', 'ANSIBLE_INVENTORY_UNPARSED_WARNING': 'False',
        'K8S_AUTH_KUBECONFIG': str(kubeconfig),
    })
    if report:
        env['ANSIBLE_CALLBACKS_ENABLED'] = 'nodewright.bridge.rollout'
        env['NODEWRIGHT_REPORT'] = str(report)
    if in_process is not None:
        env.pop('NODEWRIGHT_BRIDGE_IN_PROCESS', None)
        if not in_process:
            env['NODEWRIGHT_BRIDGE_IN_PROCESS'] = '0'
    return env


def ansible_playbook():
    path = Path(sys.executable).with_name('ansible-playbook')
    if not path.exists():
        raise BenchError('no ansible-playbook next to %s: run with the venv python (make venv)' % sys.executable)
    return str(path)


def timed_playbook(cmd, env, cwd, log_path, should_stop=None):
    """Run ansible-playbook: (rc, wall s, CPU s of it and every child it waited for, tree RSS sampler, start time).

    should_stop(start time) -> a reason to kill it, or None (see wait_child).
    """
    started = time.monotonic()
    with open(log_path, 'wb') as out:
        proc = subprocess.Popen(cmd, env=env, cwd=str(cwd), stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    sampler = TreeSampler(proc.pid)
    sampler.start()
    try:
        code, usage = wait_child(proc, (lambda: should_stop(started)) if should_stop else None)
    finally:
        sampler.close()
    return code, time.monotonic() - started, usage_cpu(usage), sampler, started


def forks_for(args, size):
    """``--forks``, else the batch (at least 50): fewer forks than a batch would hold its nodes back."""
    return args.forks or max(50, ceiling(args.budget_percent, size))


class CpuLoad(object):
    """``count`` processes that only burn CPU (at the machine's default priority) while a side runs: the same load
    for both sides, started before each, so that the loaded ratio compares two sides under the same contention."""

    def __init__(self, count):
        self.count = count
        self.procs = []

    def __enter__(self):
        for dummy in range(self.count):
            self.procs.append(subprocess.Popen([sys.executable, '-c', 'while True: pass']))
        if self.count:
            log('load: %d CPU-bound processes started' % self.count)
        return self

    def __exit__(self, *exc):
        for proc in self.procs:
            proc.kill()
            proc.wait()
        self.procs = []
        return False


def run_bridge(args, size):
    """The bridge side: apply, then the same apply again (no-op re-run)."""
    side = Side(args, size, 'bridge')
    try:
        variables = {'nodewright_cr': str(side.cr_file), 'nodewright_kubeconfig': side.info.kubeconfig}
        variables.update(json.loads(args.extra_vars) if args.extra_vars else {})
        forks = forks_for(args, size)
        cmd = [ansible_playbook(), 'nodewright.bridge.apply', '-e', json.dumps(variables), '-f', str(forks)]
        report = side.dir / 'rollout-report.json'
        env = ansible_env(args, side.info.kubeconfig, report=report)
        log_path = side.dir / 'apply.log'
        log('bridge, %d nodes: %s (forks %d)' % (size, 'ansible-playbook nodewright.bridge.apply', forks))
        code, wall_exit, cpu, sampler, started = timed_playbook(
            cmd, env, side.dir, log_path, should_stop=lambda since: side.stalled(since, 'ansible-playbook', log_path))
        if code != 0:
            raise BenchError('ansible-playbook nodewright.bridge.apply failed (rc %d; %s)\n--- %s (tail) ---\n%s' % (
                code, side.watch.summary(), log_path, tail(log_path, 60)))
        deadline = time.monotonic() + 30
        while side.watch.all_complete is None and time.monotonic() < deadline:
            time.sleep(0.2)
        if side.watch.all_complete is None:
            raise BenchError('ansible-playbook ended (rc 0) but not every node is complete (%s)\n--- %s (tail) ---\n%s' % (
                side.watch.summary(), log_path, tail(log_path, 60)))
        wall, wall_exit = round(side.watch.all_complete - started, 2), round(wall_exit, 2)
        log('bridge, %d nodes: every node complete after %.1f s (playbook ended after %.1f s)' % (size, wall, wall_exit))
        max_cordoned = side.watch.max_cordoned
        first = min(side.watch.completed.values()) - started
        time.sleep(2.0)  # let the last watches of the run end before the re-run starts
        noop = None
        if not args.no_noop:
            log('bridge, %d nodes: the same apply again (no-op re-run)' % size)
            rerun_epoch = time.time()
            noop_log = side.dir / 'apply-noop.log'
            ncode, nwall, ncpu, nsampler, dummy = timed_playbook(
                cmd, ansible_env(args, side.info.kubeconfig), side.dir, noop_log,
                should_stop=lambda since: 'the no-op re-run took over %d s' % args.stall_timeout
                if time.monotonic() - since > args.stall_timeout else None)
            if ncode != 0:
                raise BenchError('the no-op re-run failed (rc %d)\n--- %s (tail) ---\n%s' % (ncode, noop_log, tail(noop_log, 60)))
            noop = {'wall_s': round(nwall, 2), 'cpu_s': round(ncpu, 2), 'peak_rss_mib': round(nsampler.peak_mib, 1),
                    'peak_pss_mib': round(nsampler.peak_pss_mib, 1)}
        time.sleep(1.0)
        figures = bridge_figures(side, noop, rerun_epoch if noop is not None else None)
        batches = None
        if report.exists():
            data = json.loads(report.read_text(encoding='utf-8'))
            batches = {name: [b.get('size') for b in comp.get('batches', [])]
                       for name, comp in (data.get('compartments') or {}).items()}
        return dict(figures, generation=side.gen['group'], wall_s=round(wall, 2), playbook_wall_s=round(wall_exit, 2), cpu_s=round(cpu, 2),
                    recorded_wall_s=since(side.watch.all_recorded, started), max_disrupted=side.watch.max_disrupted,
                    cpu_per_node_s=round(cpu / size, 3), max_cordoned=max_cordoned, peak_rss_mib=round(sampler.peak_mib, 1),
                    peak_pss_mib=round(sampler.peak_pss_mib, 1), peak_processes=sampler.peak_procs, first_node_complete_s=round(first, 2), forks=forks,
                    batches=batches, noop_rerun=noop, loadavg_before=[round(x, 2) for x in side.loadavg])
    finally:
        side.close()


def bridge_figures(side, noop, rerun_epoch):
    """The bridge's requests in the audit log: the rollout's (returned) and the no-op re-run's (into noop, after
    rerun_epoch). Its pods created count the pods of its stage Jobs too (job_pods_created: created by the job controller)."""
    requests = audit_requests(side.info.audit_log, BRIDGE_UA)
    job_pods = audit_job_pods(side.info.audit_log, side.gen['namespace'])

    def part(keep):
        figures = request_figures([r for r in requests if keep(r[0])])
        figures['job_pods_created'] = sum(1 for ts in job_pods if keep(ts))
        figures['pods_created'] += figures['job_pods_created']
        return figures

    figures = part(lambda ts: rerun_epoch is None or ts < rerun_epoch)
    if noop is not None:
        noop.update(part(lambda ts: ts >= rerun_epoch))
    return figures


# --------------------------------------------------------------------------
# per host-task profile

def run_profile(args):
    """CPU and wall per host-task of node_state read (delegated to localhost): in process, then the module path."""
    hosts, tasks = args.profile_hosts, args.profile_tasks
    work = Path(args.workdir) / 'profile'
    if work.exists():
        subprocess.run(['rm', '-rf', str(work)], check=True)
    work.mkdir(parents=True)
    log('profile: a fresh cluster of %d nodes' % hosts)
    info = launcher.up(nodes=hosts, state_dir=work / 'cluster', fake_reboots=False, timeout=300.0,
                       crds=generation_crds(GENERATIONS[args.generation]))
    try:
        inventory = {'all': {'hosts': {'localhost': {'ansible_connection': 'local', 'ansible_python_interpreter': sys.executable}},
                             'children': {'fleet': {'hosts': {name: {} for name in info.nodes},
                                                    'vars': {'ansible_connection': 'local'}}}}}
        (work / 'inventory.yml').write_text(yaml.safe_dump(inventory), encoding='utf-8')
        task = {'name': 'node_state read', 'nodewright.bridge.node_state': {'node': '{{ inventory_hostname }}', 'cr_name': CR_NAME},
                'delegate_to': 'localhost'}
        for name, count in (('base', 0), ('tasks', tasks)):
            play = {'name': 'profile', 'hosts': 'fleet', 'gather_facts': False, 'tasks': [task] * count}
            (work / ('%s.yml' % name)).write_text(yaml.safe_dump([play], sort_keys=False), encoding='utf-8')
        results = {}
        for label, playbook, in_process in (('base', 'base.yml', None), ('in_process', 'tasks.yml', True),
                                            ('module', 'tasks.yml', False)):
            cmd = [ansible_playbook(), '-i', 'inventory.yml', playbook, '-f', str(args.forks or 50)]
            log_path = work / ('%s.log' % label)
            log('profile: %s (%d hosts x %d tasks)' % (label, hosts, 0 if label == 'base' else tasks))
            code, wall, cpu, sampler, dummy = timed_playbook(cmd, ansible_env(args, info.kubeconfig, in_process=in_process), work, log_path)
            if code != 0:
                raise BenchError('profile run %s failed (rc %d)\n--- %s (tail) ---\n%s' % (label, code, log_path, tail(log_path)))
            results[label] = {'wall_s': round(wall, 2), 'cpu_s': round(cpu, 2), 'peak_rss_mib': round(sampler.peak_mib, 1),
                              'module_runs_seen': len(sampler.module_runs)}
        base = results['base']
        host_tasks = hosts * tasks
        for label in ('in_process', 'module'):
            res = results[label]
            res['cpu_per_host_task_s'] = round((res['cpu_s'] - base['cpu_s']) / host_tasks, 3)
            res['wall_per_task_s'] = round((res['wall_s'] - base['wall_s']) / tasks, 2)
            res['wall_per_host_task_s'] = round((res['wall_s'] - base['wall_s']) / host_tasks, 3)
        return dict(results, hosts=hosts, tasks=tasks, forks=args.forks or 50)
    finally:
        launcher.down(info.state_dir, keep_state=args.keep_cluster_logs)


# --------------------------------------------------------------------------
# output

ROWS = (
    ('wall to every node complete (s)', 'wall_s'),
    ('  ... its annotations only (s)', 'recorded_wall_s'),
    ('CPU (s)', 'cpu_s'),
    ('CPU per node (s)', 'cpu_per_node_s'),
    ('API requests', 'requests'),
    ('API writes', 'writes'),
    ('API writes, dry run', 'dry_run_writes'),
    ('API watches', 'watches'),
    ('API requests refused (4xx, 5xx)', 'refused'),
    ('pods created', 'pods_created'),
    ('Jobs created', 'jobs_created'),
    ('most nodes cordoned at once', 'max_cordoned'),
    ('most cordoned or rebooting at once', 'max_disrupted'),
    ('peak RSS (MiB)', 'peak_rss_mib'),
    ('first node complete (s)', 'first_node_complete_s'),
)


def ratios(result):
    op, br = result.get('operator'), result.get('bridge')
    if not op or not br:
        return {}
    out = {}
    for dummy, key in ROWS:
        if op.get(key):
            out[key] = round(br.get(key, 0) / op[key], 2)
    return out


def _fmt(value):
    if value is None:
        return '-'
    if isinstance(value, float):
        return '%.3f' % value if abs(value) < 1 else '%.1f' % value
    return str(value)


def print_size(size, result, args):
    batch = ceiling(args.budget_percent, size)
    print()
    print('== %d nodes: %s %s (2 packages, 1 with a reboot), DeploymentPolicy fixed %d (budget %d %%, %d batches), forks %d' % (
        size, GENERATIONS[args.generation]['kind'], CR_NAME, batch, args.budget_percent, -(-size // batch), forks_for(args, size)))
    op, br, rat = result.get('operator') or {}, result.get('bridge') or {}, result.get('ratios') or {}
    print('%-34s %12s %12s %16s' % ('', 'operator', 'bridge', 'bridge/operator'))
    for label, key in ROWS:
        print('%-34s %12s %12s %16s' % (label, _fmt(op.get(key)), _fmt(br.get(key)), _fmt(rat.get(key))))
    if op:
        print('operator: CPU before the CR was created (start-up, cache sync): %s s' % _fmt(op.get('cpu_before_cr_s')))
    if br:
        print('bridge: playbook ended after %s s; batches %s; peak processes %s, peak PSS sum %s MiB (sampled every 1 s)' % (
            _fmt(br.get('playbook_wall_s')), br.get('batches'), br.get('peak_processes'), _fmt(br.get('peak_pss_mib'))))
        if br.get('job_pods_created'):
            print('bridge: %s of the pods created are its Jobs\' (created by the job controller, whose requests are not counted)' % (
                br['job_pods_created']))
        noop = br.get('noop_rerun')
        if noop:
            figures = (_fmt(noop['wall_s']), _fmt(noop['cpu_s']), noop['requests'], noop['writes'], noop['dry_run_writes'],
                       noop['pods_created'], noop.get('jobs_created', 0))
            print('bridge no-op re-run: wall %s s, CPU %s s, requests %s, writes %s (dry run %s), pods created %s, Jobs created %s '
                  '(target at 200 nodes: <= 10 s, no pod)' % figures)


def over_budget(args, size, result):
    """What went over the budget (the batch): the most nodes cordoned, or cordoned or rebooting, at once, per side."""
    batch = ceiling(args.budget_percent, size)
    over = []
    # the operator counts a node in its batch from its cordon to its uncordon; its interrupt pod ends before the
    # fake reboot it asks for, so its nodes may still reboot after their uncordon. The bridge uncordons a node after
    # its reboot and health check: for it, cordoned or rebooting is the batch.
    for side, keys in (('operator', ('max_cordoned',)), ('bridge', ('max_cordoned', 'max_disrupted'))):
        figures = result.get(side) or {}
        for key in keys:
            if (figures.get(key) or 0) > batch:
                over.append('%s %s %d > budget %d' % (side, key, figures[key], batch))
    return over


def print_loaded(size, sizes):
    """The quiet and the loaded bridge/operator ratios side by side."""
    quiet, loaded = sizes.get(str(size)) or {}, sizes.get('%d-loaded' % size) or {}
    print()
    print('== %d nodes, quiet vs loaded (%d CPU-bound processes beside each side)' % (size, loaded.get('load', 0)))
    print('%-34s %12s %12s' % ('bridge/operator', 'quiet', 'loaded'))
    for label, key in ROWS:
        if key in (quiet.get('ratios') or {}) or key in (loaded.get('ratios') or {}):
            print('%-34s %12s %12s' % (label, _fmt((quiet.get('ratios') or {}).get(key)), _fmt((loaded.get('ratios') or {}).get(key))))


def print_profile(prof):
    print()
    print('== per host-task: nodewright.bridge.node_state read, delegated to localhost, %d hosts x %d tasks, forks %d' % (
        prof['hosts'], prof['tasks'], prof['forks']))
    print('%-40s %14s %15s %15s %10s' % ('path', 'CPU/host-task', 'wall/host-task', 'wall/task', 'AnsiballZ'))
    for label, title in (('in_process', 'in process (default)'), ('module', 'module (NODEWRIGHT_BRIDGE_IN_PROCESS=0)')):
        res = prof[label]
        figures = (title, res['cpu_per_host_task_s'], res['wall_per_host_task_s'], res['wall_per_task_s'], res['module_runs_seen'])
        print('%-40s %13.3fs %14.3fs %14.2fs %10d' % figures)
    print('(per task = (run - empty play) / tasks; AnsiballZ = module runs (AnsiballZ files) the 100 ms sampler saw; '
          'empty play: %s s wall, %s s CPU)' % (_fmt(prof['base']['wall_s']), _fmt(prof['base']['cpu_s'])))


def write_json(path, data):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix('.tmp')
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + '\n', encoding='utf-8')
    tmp.replace(path)


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split('\n', 1)[0])
    parser.add_argument('--sizes', default='24,200', help='node counts, comma separated (default 24,200; 1000 works too)')
    parser.add_argument('--side', choices=('both', 'bridge', 'operator'), default='both')
    parser.add_argument('--generation', choices=tuple(GENERATIONS), default='skyhook',
                        help='the API generation of the bridge side: skyhook (v0.15 CRDs, stage pods in skyhook; the default) '
                        'or nodewright (v0.20 CRDs only, a NodeWright CR, stage Jobs in nodewright; needs --side bridge)')
    parser.add_argument('--forks', type=int, help='ansible-playbook forks (default: the batch, at least 50)')
    parser.add_argument('--loaded', type=int, default=0, metavar='N',
                        help='run each size again with N CPU-bound processes beside each side, and print both ratios')
    parser.add_argument('--budget-percent', type=int, default=25, help='the DeploymentPolicy budget; batches are its ceiling')
    parser.add_argument('--json', default=str(REPO_ROOT / 'build' / 'bench-fleet.json'), help='write the figures here')
    parser.add_argument('--workdir', default=str(REPO_ROOT / 'build' / 'bench-fleet'),
                        help='logs of each side (operator.log, apply.log), CR files, cluster state')
    parser.add_argument('--operator', help='the operator binary (default: what ../shared/upstream/build-operator.sh prints)')
    parser.add_argument('--stall-timeout', type=float, default=300, help='fail when no node changes for this long (s)')
    parser.add_argument('--timeout', type=float, default=4 * 3600, help='fail when a rollout takes longer (s)')
    parser.add_argument('--extra-vars', help='JSON: more variables for the bridge\'s apply runs (for example '
                        '{"nodewright_rollout_strategy": "builtin"}: the rollout without the budgeted strategy)')
    parser.add_argument('--no-noop', action='store_true', help='skip the bridge no-op re-run')
    parser.add_argument('--no-profile', action='store_true', help='skip the per host-task profile')
    parser.add_argument('--profile-only', action='store_true', help='only the per host-task profile')
    parser.add_argument('--profile-hosts', type=int, default=24)
    parser.add_argument('--profile-tasks', type=int, default=3)
    parser.add_argument('--collection-ref', help='run the bridge side with this commit of the collection (git archive), '
                        'not the working tree')
    parser.add_argument('--keep-cluster-logs', action='store_true', help='keep each cluster state dir (component logs, audit log)')
    args = parser.parse_args(argv)
    if args.generation != 'skyhook' and args.side != 'bridge' and not args.profile_only:
        parser.error('--generation %s is for the bridge side only (the operator here is v0.15: it serves skyhook.nvidia.com, '
                     'there is no v0.20 operator to compare with): add --side bridge' % args.generation)
    args.size_list = [int(x) for x in args.sizes.split(',') if x.strip()]
    args.workdir = str(Path(args.workdir).resolve())  # ansible-playbook runs in a side's directory
    return args


def main(argv=None):
    args = parse_args(argv)
    data = {'args': {k: v for k, v in vars(args).items() if k != 'size_list'}, 'cpus': os.cpu_count(),
            'collection': collection_info(args),
            'started': datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds'), 'sizes': {}}
    print('fleet benchmark: NodeWright operator vs nodewright.bridge.apply on the test cluster (%d CPUs, load %s)' % (
        os.cpu_count(), ' '.join('%.2f' % x for x in os.getloadavg())))
    print('wall times depend on what else runs on the machine; compare CPU seconds and API requests first')
    if args.side != 'operator' or args.profile_only:
        print('collection: %s' % ', '.join('%s %s' % (k, v) for k, v in data['collection'].items()))
    failures = []
    try:
        binary = operator_binary(args) if args.side in ('both', 'operator') and not args.profile_only else None
        for size in ([] if args.profile_only else args.size_list):
            for load in ([0, args.loaded] if args.loaded else [0]):
                key = str(size) if not load else '%d-loaded' % size
                result = data['sizes'].setdefault(key, {'load': load})
                if args.side in ('both', 'operator'):
                    with CpuLoad(load):
                        result['operator'] = run_operator(args, size, binary)
                    write_json(args.json, data)
                if args.side in ('both', 'bridge'):
                    with CpuLoad(load):
                        result['bridge'] = run_bridge(args, size)
                result['ratios'] = ratios(result)
                over = over_budget(args, size, result)
                if over:
                    result['over_budget'] = over
                    failures.append('%s nodes%s: %s' % (size, ', loaded' if load else '', '; '.join(over)))
                write_json(args.json, data)
                print_size(size, result, args)
                sys.stdout.flush()
            if args.loaded:
                print_loaded(size, data['sizes'])
        if args.profile_only or (args.side in ('both', 'bridge') and not args.no_profile):
            data['profile'] = run_profile(args)
            write_json(args.json, data)
            print_profile(data['profile'])
    except BenchError as exc:
        data['error'] = str(exc)
        write_json(args.json, data)
        sys.stderr.write('fleet-bench: FAILED: %s\n' % exc)
        return 1
    print()
    print('figures: %s' % args.json)
    if failures:
        # the operator's rule: never more nodes disrupted (cordoned, rebooting, not Ready) than the batch
        sys.stderr.write('fleet-bench: OVER THE BUDGET: %s\n' % ' | '.join(failures))
        return 2
    return 0


if __name__ == '__main__':
    sys.exit(main())
