# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""Start and stop a real, local Kubernetes control plane with KWOK fake GPU nodes.

CLI (run with python, no shebang on purpose):
    python tests/cluster/launcher.py build
    python tests/cluster/launcher.py up --nodes 8 --dir .cluster/state --kubeconfig .cluster/kubeconfig
    python tests/cluster/launcher.py down --dir .cluster/state
    python tests/cluster/launcher.py stop kube-apiserver --dir .cluster/state   (one component; ports, data kept)
    python tests/cluster/launcher.py start kube-apiserver --dir .cluster/state  (again, as first started)

Importable: ``up()`` returns a ``ClusterInfo``; ``down()`` stops it again.

Components (all one process each, on 127.0.0.1 and free ports):
etcd, kube-apiserver, kube-controller-manager, kube-scheduler (one multi-call
binary built from k8s.io/kubernetes by build.sh), kwok (fake kubelets),
kubelet-logs (kubelet_logs.py: the kubelets' log endpoint, so that pods/log
works; bound to 0.0.0.0 so that it is reached on every node's 127.1.x.y
address, but it answers loopback connections only) and fake-reboots
(fake_reboots.py: a node_restart interrupt pod reboots its node, as the agent
would; off with --no-fake-reboots / up(fake_reboots=False)).
"""

from __future__ import annotations

import argparse
import base64
import concurrent.futures
import dataclasses
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import yaml

CLUSTER_DIR = Path(__file__).resolve().parent
REPO_ROOT = CLUSTER_DIR.parent.parent
STAGES_DIR = CLUSTER_DIR / 'stages'
KUBELET_LOGS = CLUSTER_DIR / 'kubelet_logs.py'
FAKE_REBOOTS = CLUSTER_DIR / 'fake_reboots.py'

# Nodes kwok manages carry this annotation; nodes without it are left alone
# (used by take_node_away: a node nobody heartbeats any more).
KWOK_NODE_ANNOTATION = 'kwok.x-k8s.io/node'
KWOK_NODE_ANNOTATION_VALUE = 'fake'

GPU_NODE_LABELS = {
    'nodepool': 'gpu',
    'type': 'kwok',
    'kubernetes.io/os': 'linux',
    'kubernetes.io/arch': 'amd64',
    'node.kubernetes.io/instance-type': 'p5.48xlarge',
    'nvidia.com/gpu.present': 'true',
    'nvidia.com/gpu.product': 'NVIDIA-H100-80GB-HBM3',
    'nvidia.com/gpu.count': '8',
    'nvidia.com/gpu.memory': '81559',
}
# What an H100 node (8 GPUs) reports; allocatable is what the scheduler uses.
GPU_NODE_CAPACITY = {
    'cpu': '192',
    'memory': '2063731780Ki',
    'ephemeral-storage': '3750000000Ki',
    'hugepages-1Gi': '0',
    'hugepages-2Mi': '0',
    'pods': '110',
    'nvidia.com/gpu': '8',
}
GPU_NODE_ALLOCATABLE = dict(GPU_NODE_CAPACITY, cpu='190', memory='2040000000Ki')

# Stock kwok stages used as they are (copied by build.sh from the kwok module
# into the binary cache, next to the kwok binary). Pod start and init failure
# are our own stages in tests/cluster/stages.
STOCK_STAGES = (
    'node/fast/node-initialize.yaml',
    'node/heartbeat-with-lease/node-heartbeat-with-lease.yaml',
    'node/chaos/node-not-ready.yaml',
    'pod/fast/pod-complete.yaml',
    'pod/fast/pod-delete.yaml',
    'pod/chaos/pod-init-container-running-failed.yaml',
    'pod/chaos/pod-container-running-failed.yaml',
)

# Reverse start order is the stop order.
COMPONENTS = ('etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kwok', 'kubelet-logs', 'fake-reboots')

STATE_FILE = 'cluster.json'

# Processes started by this Python process, by pid: kept so that they are
# reaped (no zombies) when `down` runs in the same process (pytest), and so
# that Popen does not warn about children still running when it is dropped.
_CHILDREN = {}
# How each process was started, by pid (argv, environment overrides): ClusterInfo.components.
_LAUNCHED = {}


class ClusterError(RuntimeError):
    """The cluster could not be built, started or reached."""


def log(msg):
    """Progress on stderr, so stdout stays machine readable."""
    sys.stderr.write(f'launcher: {msg}\n')
    sys.stderr.flush()


# --------------------------------------------------------------------------
# binaries

def versions():
    """K8S_VERSION / KWOK_VERSION from versions.env (shared with build.sh)."""
    out = {}
    for line in (CLUSTER_DIR / 'versions.env').read_text(encoding='utf-8').splitlines():
        line = line.strip()
        if line and not line.startswith('#') and '=' in line:
            key, value = line.split('=', 1)
            out[key.strip()] = value.strip()
    return out


def cache_dir():
    """Where build.sh puts binaries; keyed by version below this."""
    env = os.environ.get('NODEWRIGHT_CACHE_DIR')
    return Path(env) if env else Path.home() / '.cache' / 'nodewright-bridge'


@dataclasses.dataclass
class Binaries:
    """Paths of the built binaries and the stock kwok stages."""

    k8s: Path
    kwok: Path
    stock_stages: Path
    k8s_version: str
    kwok_version: str


def binaries(build=True):
    """Return the binaries, building them first (once per version) if needed."""
    ver = versions()
    base = cache_dir()
    bins = Binaries(
        k8s=base / f"k8s-{ver['K8S_VERSION']}" / 'k8s',
        kwok=base / f"kwok-{ver['KWOK_VERSION']}" / 'kwok',
        stock_stages=base / f"kwok-{ver['KWOK_VERSION']}" / 'stages',
        k8s_version=ver['K8S_VERSION'],
        kwok_version=ver['KWOK_VERSION'],
    )
    missing = [p for p in (bins.k8s, bins.kwok) if not os.access(p, os.X_OK)]
    if not (bins.stock_stages / STOCK_STAGES[0]).is_file():
        missing.append(bins.stock_stages)
    if missing:
        if not build:
            raise ClusterError(f'binaries missing: {missing}; run tests/cluster/build.sh')
        log(f'building control plane binaries (missing: {", ".join(str(m) for m in missing)})')
        # build.sh output goes to our stderr: a cold build takes many minutes
        # and its progress should be visible.
        res = subprocess.run(['bash', str(CLUSTER_DIR / 'build.sh')], stdout=subprocess.DEVNULL, check=False)
        if res.returncode != 0:
            raise ClusterError(f'tests/cluster/build.sh failed with exit code {res.returncode}')
        return binaries(build=False)
    return bins


# --------------------------------------------------------------------------
# small utilities

def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


def free_ports(count):
    """Distinct free ports; sockets are held until all are chosen so none repeats."""
    socks = []
    try:
        for dummy in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind(('127.0.0.1', 0))
            socks.append(sock)
        return [s.getsockname()[1] for s in socks]
    finally:
        for sock in socks:
            sock.close()


def wait_until(what, check, timeout, interval=0.2, proc_check=None):
    """Poll check() until it returns a truthy value; raise ClusterError on timeout.

    proc_check, if given, is called each round and should raise when a
    component has died, so a crash is reported at once instead of as a timeout.
    """
    deadline = time.monotonic() + timeout
    last = None
    while True:
        if proc_check:
            proc_check()
        try:
            result = check()
            if result:
                return result
        except Exception as exc:  # pylint: disable=broad-exception-caught
            # Any error (connection refused, 5xx, not found) means "not yet".
            last = exc
        if time.monotonic() > deadline:
            raise ClusterError(f'timed out after {timeout}s waiting for {what} (last error: {last})')
        time.sleep(interval)


def ip_for_index(index):
    """A distinct loopback address per node (127.1.x.y): unique InternalIPs that stay on loopback."""
    num = index + 1
    return f'127.1.{num // 250}.{num % 250 + 1}'


def node_names(count, prefix='gpu-node-'):
    """gpu-node-00, gpu-node-01, ... (at least two digits, wider for big clusters)."""
    width = max(2, len(str(count - 1)))
    return [f'{prefix}{i:0{width}d}' for i in range(count)]


def spread_labels(names, key, values):
    """Split names into len(values) contiguous blocks; block i gets label key=values[i].

    E.g. 24 nodes, compartment=a,b,c -> nodes 0-7 a, 8-15 b, 16-23 c.
    """
    out = {}
    per = -(-len(names) // len(values))  # ceiling division
    for i, name in enumerate(names):
        out[name] = {key: values[min(i // per, len(values) - 1)]}
    return out


# --------------------------------------------------------------------------
# cluster state

@dataclasses.dataclass
class ClusterInfo:  # pylint: disable=too-many-instance-attributes
    """What a running cluster is: written to <state dir>/cluster.json."""

    state_dir: str
    kubeconfig: str
    server: str
    token: str
    ca_file: str
    ports: dict
    pids: dict
    starts: dict
    etcd_data_dir: str
    nodes: list
    k8s_version: str
    kwok_version: str
    audit_log: str = ''
    # fake-reboots runs: node_restart interrupt pods reboot their nodes by themselves
    fake_reboots: bool = False
    fake_reboot_delay: float = 0.0
    # How each component was started: {name: {"argv": [...], "env": {overrides of os.environ}}},
    # so that stop_component/start_component bring one back with the same ports, flags and data.
    components: dict = dataclasses.field(default_factory=dict)
    # Real nodes (real_node.py: a kubelet and a containerd each), by name: their dir, IP, ports, pid
    real_nodes: dict = dataclasses.field(default_factory=dict)

    def save(self):
        """Persist to the state dir so that `down` (another process) can find everything."""
        path = Path(self.state_dir) / STATE_FILE
        tmp = path.with_suffix('.tmp')
        tmp.write_text(json.dumps(dataclasses.asdict(self), indent=2), encoding='utf-8')
        tmp.replace(path)

    @classmethod
    def load(cls, state_dir):
        """Read cluster.json of a state dir."""
        data = json.loads((Path(state_dir) / STATE_FILE).read_text(encoding='utf-8'))
        fields = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in fields})

    def api_client(self):
        """A kubernetes.client.ApiClient for this cluster."""
        return api_client_from_kubeconfig(self.kubeconfig)


AUDIT_POLICY = """\
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
"""


def _audit_flags(info, state):
    """kube-apiserver flags for the audit log (benchmarks count requests with it), or none."""
    if not info.audit_log:
        return []
    policy = state / 'audit-policy.yaml'
    policy.write_text(AUDIT_POLICY, encoding='utf-8')
    return [f'--audit-policy-file={policy}', f'--audit-log-path={info.audit_log}', '--audit-log-format=json',
            # no rotation: the log is read whole (kube-apiserver rotates at 100 MB unless told otherwise, and a
            # 1,000-node rollout's log is bigger: the benchmark counted a fifth of the pods)
            '--audit-log-mode=blocking', '--audit-log-maxbackup=0', '--audit-log-maxsize=1000000']


def api_client_from_kubeconfig(path):
    """An ApiClient built from a kubeconfig file (imported lazily: `down` needs no client)."""
    # pylint: disable-next=import-outside-toplevel
    from kubernetes import config as kconfig
    return kconfig.new_client_from_config(config_file=str(path))


# --------------------------------------------------------------------------
# processes

def _proc_start_time(pid):
    """Start time (clock ticks since boot) of a live, non-zombie process, else None."""
    try:
        stat = Path(f'/proc/{pid}/stat').read_text(encoding='utf-8', errors='replace')
    except OSError:
        return None
    # The command name (field 2) may contain spaces; fields after it are fixed.
    fields = stat[stat.rindex(')') + 2:].split()
    if fields[0] in ('Z', 'X'):
        return None
    return int(fields[19])


def _proc_matches(pid, start_time):
    """True if pid is alive and is still the process we started (same start time).

    Guards against signalling an unrelated process that reused a recorded pid.
    """
    now = _proc_start_time(pid)
    return now is not None and (start_time is None or now == start_time)


def _start(name, argv, state_dir, env=None):
    """Start one component in its own session/process group, logging to <state>/logs/<name>.log."""
    logs = Path(state_dir) / 'logs'
    logs.mkdir(parents=True, exist_ok=True)
    with open(logs / f'{name}.log', 'ab') as logf:
        # start_new_session: own process group, so `down` can signal the whole
        # group, and a Ctrl-C in the terminal of `up` does not reach it.
        proc = subprocess.Popen(  # pylint: disable=consider-using-with
            argv, stdin=subprocess.DEVNULL, stdout=logf, stderr=subprocess.STDOUT,
            start_new_session=True, env=env, cwd=state_dir, close_fds=True)
    _CHILDREN[proc.pid] = proc
    # Only what differs from our own environment is kept (cluster.json need not copy the rest).
    _LAUNCHED[proc.pid] = {'argv': [str(a) for a in argv],
                           'env': {k: v for k, v in (env or {}).items() if os.environ.get(k) != v}}
    return proc


def _tail(path, lines=30):
    try:
        return '\n'.join(Path(path).read_text(encoding='utf-8', errors='replace').splitlines()[-lines:])
    except OSError:
        return ''


def _stop_pids(pids, starts, timeout=15.0):
    """SIGTERM each recorded process group (reverse start order), then SIGKILL leftovers."""
    order = [c for c in reversed(COMPONENTS) if c in pids] + [c for c in pids if c not in COMPONENTS]
    alive = {}
    for name in order:
        pid = int(pids[name])
        marker = starts.get(name)
        if not _proc_matches(pid, marker):
            continue
        try:
            os.killpg(pid, signal.SIGTERM)
            alive[name] = pid
        except ProcessLookupError:
            pass
        # Stop one by one so that e.g. the apiserver does not log storms of
        # etcd errors while it shuts down.
        deadline = time.monotonic() + timeout
        while _proc_matches(pid, marker) and time.monotonic() < deadline:
            _reap(pid)
            time.sleep(0.05)
    for name, pid in alive.items():
        if _proc_matches(pid, starts.get(name)):
            log(f'{name} (pid {pid}) ignored SIGTERM; killing')
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            deadline = time.monotonic() + 5
            while _proc_matches(pid, starts.get(name)) and time.monotonic() < deadline:
                _reap(pid)
                time.sleep(0.05)
    for pid in pids.values():
        _reap(int(pid))


def _reap(pid):
    """Collect an exited child (when `up` and `down` run in one Python process)."""
    proc = _CHILDREN.get(pid)
    if proc is not None:
        if proc.poll() is not None:
            del _CHILDREN[pid]
        return
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


# --------------------------------------------------------------------------
# HTTP helpers (stdlib only, so that readiness checks need no client library)

def _https_get(url, token, ca_file=None, timeout=3.0):
    if ca_file:
        ctx = ssl.create_default_context(cafile=ca_file)
    else:
        # Health endpoints of controller-manager/scheduler serve a throwaway
        # self-signed certificate; only liveness is checked there.
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    req = urllib.request.Request(url)
    if token:
        req.add_header('Authorization', f'Bearer {token}')
    return _fetch(req, timeout, ctx)


def _http_get(url, timeout=3.0):
    return _fetch(urllib.request.Request(url), timeout, None)


def _fetch(req, timeout, ctx):
    """(status, body); an HTTP error status is returned, not raised (e.g. 500 from /readyz while starting)."""
    try:
        with urllib.request.urlopen(req, timeout=timeout, context=ctx) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        # The error carries the open connection; close it rather than leave
        # it to the garbage collector (ResourceWarning).
        with exc:
            return exc.code, exc.read().decode(errors='replace')


# --------------------------------------------------------------------------
# configuration files

def _write_kubeconfig(path, server, ca_pem, token, name='nodewright-test'):
    cfg = {
        'apiVersion': 'v1',
        'kind': 'Config',
        'clusters': [{'name': name, 'cluster': {
            'server': server,
            'certificate-authority-data': base64.b64encode(ca_pem).decode()}}],
        'users': [{'name': 'admin', 'user': {'token': token}}],
        'contexts': [{'name': name, 'context': {'cluster': name, 'user': 'admin'}}],
        'current-context': name,
    }
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + '.tmp')
    tmp.write_text(yaml.safe_dump(cfg, sort_keys=False), encoding='utf-8')
    os.chmod(tmp, 0o600)
    tmp.replace(path)


def _gen_sa_key(path):
    """RSA key that signs and verifies service account tokens."""
    subprocess.run(['openssl', 'genrsa', '-out', str(path), '2048'], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.chmod(path, 0o600)


def _gen_serving_cert(cert, key):
    """Self-signed serving certificate of the kubelet log endpoint (the apiserver is given no kubelet CA, so it does not verify it)."""
    subprocess.run(['openssl', 'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
                    '-keyout', str(key), '-out', str(cert), '-days', '3650', '-subj', '/CN=nodewright-bridge-kubelet',
                    '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost'],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.chmod(key, 0o600)


def stage_files(bins):
    """All kwok stage files: the stock ones from the cache plus ours."""
    files = [bins.stock_stages / s for s in STOCK_STAGES]
    files += sorted(STAGES_DIR.glob('*.yaml'))
    for path in files:
        if not path.is_file():
            raise ClusterError(f'kwok stage file missing: {path}')
    return files


# --------------------------------------------------------------------------
# up / down

WORKPLACE_CRDS = Path('/work/shared/crds')


def crds_dir():
    """CRDs to install: NODEWRIGHT_CRDS_DIR, else ../shared/crds next to the repository, else /work/shared/crds."""
    env = os.environ.get('NODEWRIGHT_CRDS_DIR')
    if env:
        return Path(env)
    beside = REPO_ROOT.parent / 'shared' / 'crds'
    # a clone made elsewhere (CI) still finds the workplace's read-only copy
    if beside.is_dir() or not WORKPLACE_CRDS.is_dir():
        return beside
    return WORKPLACE_CRDS


# pylint: disable-next=too-many-arguments,too-many-positional-arguments,too-many-locals
def up(nodes=8, state_dir=None, kubeconfig=None, crds=None, labels=None, label_spread=None,
       node_monitor_grace_period='40s', timeout=120.0, build=True, audit=False, fake_reboots=True,
       fake_reboot_delay=1.0):
    """Start a cluster and return its ClusterInfo.

    nodes:        number of fake GPU nodes (gpu-node-00 ...)
    state_dir:    where pids, logs, certificates and cluster.json go (created; default: a temp dir)
    kubeconfig:   also write the admin kubeconfig here (it is always in <state_dir>/kubeconfig)
    crds:         directory of CRD YAMLs to install (default: crds_dir()); False for none
    labels:       extra labels for every node
    label_spread: (key, [values]) - split nodes into contiguous blocks, one value each
    audit:        write an API audit log (every request, level Metadata, JSON lines) to
                  <state_dir>/logs/audit.log; ClusterInfo.audit_log names it
    fake_reboots: run fake-reboots (fake_reboots.py): an interrupt pod with a node_restart
                  payload reboots its node (NotReady, new bootID, Ready) once, as the agent
                  would, fake_reboot_delay seconds after it appeared. ClusterInfo.fake_reboots
                  tells whether it runs.
    """
    bins = binaries(build=build)
    if state_dir is None:
        state_dir = tempfile.mkdtemp(prefix='nodewright-cluster-')
    state = Path(state_dir).resolve()
    if (state / STATE_FILE).exists():
        info = ClusterInfo.load(state)
        if any(_proc_matches(p, info.starts.get(n)) for n, p in info.pids.items()):
            raise ClusterError(f'a cluster is already running in {state}; run down first')
    state.mkdir(parents=True, exist_ok=True)
    started = {}
    # etcd data in memory when possible: fast, and nothing left on disk.
    shm = Path('/dev/shm')
    etcd_data = Path(tempfile.mkdtemp(prefix='nodewright-etcd-', dir=shm if shm.is_dir() else state))
    info = ClusterInfo(
        state_dir=str(state), kubeconfig=str(state / 'kubeconfig'), server='', token='',
        ca_file=str(state / 'pki' / 'apiserver.crt'), ports={}, pids={}, starts={}, etcd_data_dir=str(etcd_data),
        nodes=[], k8s_version=bins.k8s_version, kwok_version=bins.kwok_version,
        audit_log=str(state / 'logs' / 'audit.log') if audit else '',
        fake_reboots=bool(fake_reboots), fake_reboot_delay=float(fake_reboot_delay) if fake_reboots else 0.0)
    try:
        _up(info, bins, started, nodes, crds, labels, label_spread, node_monitor_grace_period, timeout)
    except BaseException:
        log(f'start failed; logs are in {state}/logs; stopping what was started')
        for name in started:
            log(f'--- {name} log tail ---\n{_tail(state / "logs" / f"{name}.log", 15)}')
        _stop_pids({n: p.pid for n, p in started.items()}, {n: _proc_start_time(p.pid) for n, p in started.items()})
        shutil.rmtree(etcd_data, ignore_errors=True)
        raise
    if kubeconfig:
        kc = Path(kubeconfig)
        kc.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(info.kubeconfig, kc)
        os.chmod(kc, 0o600)
    return info


# pylint: disable-next=too-many-arguments,too-many-positional-arguments,too-many-locals,too-many-statements
def _up(info, bins, started, nodes, crds, labels, label_spread, grace, timeout):
    state = Path(info.state_dir)
    k8s = str(bins.k8s)
    t0 = time.monotonic()

    def check_alive():
        for name, proc in started.items():
            if proc.poll() is not None:
                raise ClusterError(f'{name} exited with code {proc.returncode}:\n{_tail(state / "logs" / f"{name}.log")}')

    def remember(name, proc):
        started[name] = proc
        info.pids[name] = proc.pid
        info.starts[name] = _proc_start_time(proc.pid)
        info.components[name] = _LAUNCHED.get(proc.pid, {'argv': list(proc.args), 'env': {}})
        info.save()

    etcd_client, etcd_peer, api_port, cm_port, sched_port, kubelet_port, kwok_port = free_ports(7)
    # kubelet: the port every fake node reports as its kubelet endpoint
    # (kubelet-logs listens there); kwok: kwok's own server, unused.
    info.ports = {'etcd': etcd_client, 'etcd-peer': etcd_peer, 'kube-apiserver': api_port,
                  'kube-controller-manager': cm_port, 'kube-scheduler': sched_port,
                  'kubelet': kubelet_port, 'kwok': kwok_port}
    info.server = f'https://127.0.0.1:{api_port}'
    info.token = uuid.uuid4().hex
    info.save()

    pki = state / 'pki'
    pki.mkdir(exist_ok=True)
    sa_key = state / 'sa.key'
    _gen_sa_key(sa_key)
    _gen_serving_cert(pki / 'kubelet.crt', pki / 'kubelet.key')
    tokens = state / 'tokens.csv'
    tokens.write_text(f'{info.token},admin,admin,"system:masters"\n', encoding='utf-8')
    os.chmod(tokens, 0o600)

    # etcd. --unsafe-no-fsync: a throwaway test store needs no durability and
    # fsync dominates write latency. Peer URL bound to loopback, single member.
    etcd_url = f'http://127.0.0.1:{etcd_client}'
    peer_url = f'http://127.0.0.1:{etcd_peer}'
    remember('etcd', _start('etcd', [
        k8s, 'etcd', '--name=default', f'--data-dir={info.etcd_data_dir}', '--unsafe-no-fsync',
        f'--listen-client-urls={etcd_url}', f'--advertise-client-urls={etcd_url}',
        f'--listen-peer-urls={peer_url}', f'--initial-advertise-peer-urls={peer_url}',
        f'--initial-cluster=default={peer_url}', '--initial-cluster-state=new',
        '--auto-compaction-retention=1', '--quota-backend-bytes=8589934592',
        '--log-level=warn', '--log-outputs=stderr',
    ], state))
    wait_until('etcd health', lambda: '"health":"true"' in _http_get(f'{etcd_url}/health')[1].replace(' ', ''),
               timeout, proc_check=check_alive)
    log(f'etcd up ({time.monotonic() - t0:.1f}s)')

    remember('kube-apiserver', _start('kube-apiserver', [
        k8s, 'kube-apiserver',
        f'--etcd-servers={etcd_url}',
        '--bind-address=127.0.0.1', '--advertise-address=127.0.0.1', f'--secure-port={api_port}',
        # With a loopback advertise address the kubernetes Endpoints cannot be
        # reconciled (loopback is refused), so no reconciler.
        '--endpoint-reconciler-type=none',
        f'--cert-dir={pki}',
        f'--token-auth-file={tokens}',
        '--authorization-mode=Node,RBAC',
        # pods/log goes to https://<node address>:<kubelet port>. The nodes'
        # Hostname addresses (their names) do not resolve, so InternalIP
        # first. No --kubelet-certificate-authority: the kubelet's serving
        # certificate is not verified, and no client certificate is sent.
        '--kubelet-preferred-address-types=InternalIP,Hostname',
        '--allow-privileged=true',
        '--service-cluster-ip-range=10.96.0.0/16',
        '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
        f'--service-account-key-file={sa_key}', f'--service-account-signing-key-file={sa_key}',
        '--profiling=false',
        '--v=0',
        *_audit_flags(info, state),
    ], state))

    def api_ready():
        if not Path(info.ca_file).is_file():
            return False
        status, body = _https_get(f'{info.server}/readyz', info.token, info.ca_file)
        return status == 200 and body.strip() == 'ok'

    wait_until('kube-apiserver /readyz', api_ready, timeout, proc_check=check_alive)
    log(f'kube-apiserver ready ({time.monotonic() - t0:.1f}s)')

    ca_pem = Path(info.ca_file).read_bytes()
    _write_kubeconfig(info.kubeconfig, info.server, ca_pem, info.token)
    info.save()

    common = [f'--kubeconfig={info.kubeconfig}', '--leader-elect=false', '--bind-address=127.0.0.1',
              # No authn/authz kubeconfigs: the health endpoints below are in
              # the always-allowed paths, nothing else is used.
              '--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics']
    remember('kube-controller-manager', _start('kube-controller-manager', [
        k8s, 'kube-controller-manager', *common, f'--secure-port={cm_port}',
        '--controllers=*',
        '--use-service-account-credentials=false',
        f'--service-account-private-key-file={sa_key}', f'--root-ca-file={info.ca_file}',
        '--cluster-cidr=10.244.0.0/16', '--service-cluster-ip-range=10.96.0.0/16',
        # Node lifecycle reacts within 2 s to reported conditions. The grace
        # period (no lease renewal -> Unknown) stays well above kwok's 10 s
        # renewal interval so that a busy 2-core machine does not make nodes
        # flap; take_node_away() sets Unknown itself and need not wait for it.
        '--node-monitor-period=2s', f'--node-monitor-grace-period={grace}',
        '--kube-api-qps=200', '--kube-api-burst=400',
        '--concurrent-deployment-syncs=10', '--concurrent-replicaset-syncs=10',
        '--profiling=false',
    ], state))
    remember('kube-scheduler', _start('kube-scheduler', [
        k8s, 'kube-scheduler', *common, f'--secure-port={sched_port}', '--profiling=false',
    ], state))
    # The kubelets' log endpoint: reads the pod from the API server and makes
    # up the log from its status (see kubelet_logs.py).
    remember('kubelet-logs', _start('kubelet-logs', [
        sys.executable, '-u', str(KUBELET_LOGS), f'--port={kubelet_port}',
        f'--cert={pki / "kubelet.crt"}', f'--key={pki / "kubelet.key"}', f'--kubeconfig={info.kubeconfig}',
    ], state))

    kwok_home = state / 'kwok-home'
    kwok_home.mkdir(exist_ok=True)
    # HOME points into the state dir so that a ~/.kwok/kwok.yaml of the user
    # is not merged into our configuration.
    kwok_env = dict(os.environ, HOME=str(kwok_home))
    kwok_args = [str(bins.kwok), f'--kubeconfig={info.kubeconfig}',
                 '--manage-all-nodes=false',
                 f'--manage-nodes-with-annotation-selector={KWOK_NODE_ANNOTATION}={KWOK_NODE_ANNOTATION_VALUE}',
                 '--node-ip=127.0.0.1', '--cidr=10.244.0.0/16', '--node-lease-duration-seconds=40',
                 # Every node reports this port as its kubelet endpoint
                 # (node-initialize). kwok's own server must then listen
                 # somewhere: on loopback, another port, never used.
                 f'--node-port={kubelet_port}', f'--server-address=127.0.0.1:{kwok_port}']
    for stage in stage_files(bins):
        kwok_args.append(f'--config={stage}')
    remember('kwok', _start('kwok', kwok_args, state, env=kwok_env))
    if info.fake_reboots:
        # The agent's reboot: node_restart interrupt pods reboot their node (see fake_reboots.py).
        remember('fake-reboots', _start('fake-reboots', [
            sys.executable, '-u', str(FAKE_REBOOTS), f'--kubeconfig={info.kubeconfig}',
            f'--delay={info.fake_reboot_delay:g}',
        ], state))

    def healthz(port):
        return lambda: _https_get(f'https://127.0.0.1:{port}/healthz', None)[0] == 200

    wait_until('kube-controller-manager /healthz', healthz(cm_port), timeout, proc_check=check_alive)
    wait_until('kube-scheduler /healthz', healthz(sched_port), timeout, proc_check=check_alive)
    # Asked on a node address, not 127.0.0.1: that is what the apiserver dials.
    wait_until('kubelet-logs /healthz', lambda: _https_get(f'https://{ip_for_index(0)}:{kubelet_port}/healthz', None)[0] == 200,
               timeout, proc_check=check_alive)
    log(f'controller-manager, scheduler, kubelet-logs healthy ({time.monotonic() - t0:.1f}s)')

    api = info.api_client()
    try:
        # pylint: disable-next=import-outside-toplevel
        from kubernetes import client as kclient
        core = kclient.CoreV1Api(api)
        # The serviceaccount controller creates "default" in each namespace;
        # pods cannot be created before that (ServiceAccount admission).
        wait_until('default service account', lambda: core.read_namespaced_service_account('default', 'default'),
                   timeout, proc_check=check_alive)
        crd_dir = crds_dir() if crds is None else crds
        if crd_dir:
            install_crds(api, crd_dir, timeout=timeout)
            log(f'CRDs from {crd_dir} established ({time.monotonic() - t0:.1f}s)')
        names = node_names(nodes)
        per_node = spread_labels(names, label_spread[0], label_spread[1]) if label_spread else {}
        create_nodes(api, names, labels=labels, per_node_labels=per_node)
        info.nodes = names
        info.save()
        wait_nodes_ready(api, names, timeout=timeout, proc_check=check_alive)
        if info.fake_reboots:
            # It holds its Lease once it lists and watches the interrupt pods.
            wanted = f'fake-reboots/{info.pids["fake-reboots"]}'
            wait_until('fake-reboots watching', lambda: fake_reboots_holder(api) == wanted, timeout, proc_check=check_alive)
        log(f'{len(names)} nodes Ready; cluster up in {time.monotonic() - t0:.1f}s')
    finally:
        api.close()


# --------------------------------------------------------------------------
# one component at a time (fault tests: an API server or etcd that goes away and comes back)

def stop_component(info, name, timeout=15.0):
    """Stop one component of a running cluster (SIGTERM to its process group, SIGKILL after timeout).

    Its ports, flags and data dir stay recorded in info.components; start_component brings it back.
    """
    if name not in info.pids:
        raise ClusterError(f'no component {name!r} in {info.state_dir} (have: {", ".join(info.pids)})')
    _stop_pids({name: info.pids[name]}, {name: info.starts.get(name)}, timeout=timeout)
    log(f'{name} stopped')


def component_running(info, name):
    """True while the recorded process of a component is alive (and is still the one we started)."""
    return name in info.pids and _proc_matches(int(info.pids[name]), info.starts.get(name))


def start_component(info, name, timeout=60.0):
    """Start a stopped component again with the argv and environment it was first started with.

    Waits until it is healthy (kube-apiserver /readyz, etcd /health, controller-manager and scheduler
    /healthz; the others: alive for a moment). The new pid and start time go to cluster.json, so
    that `down` stops the new process.
    """
    spec = info.components.get(name)
    if not spec:
        raise ClusterError(f'no recorded command line for {name!r} in {info.state_dir} (started by an older launcher?)')
    if component_running(info, name):
        raise ClusterError(f'{name} is already running (pid {info.pids[name]})')
    env = dict(os.environ, **spec['env']) if spec.get('env') else None
    proc = _start(name, spec['argv'], info.state_dir, env=env)
    info.pids[name] = proc.pid
    info.starts[name] = _proc_start_time(proc.pid)
    info.save()

    def alive():
        if proc.poll() is not None:
            raise ClusterError(f'{name} exited with code {proc.returncode}:\n'
                               f'{_tail(Path(info.state_dir) / "logs" / f"{name}.log")}')
    t0 = time.monotonic()
    wait_until(f'{name} healthy', _health_check(info, name), timeout, proc_check=alive)
    log(f'{name} started again, healthy after {time.monotonic() - t0:.1f}s')
    return proc.pid


def _health_check(info, name):
    """A check() for wait_until that is true once the component serves again."""
    port = info.ports.get(name)
    if name == 'kube-apiserver':
        def ready():
            status, body = _https_get(f'{info.server}/readyz', info.token, info.ca_file)
            return status == 200 and body.strip() == 'ok'
        return ready
    if name == 'etcd':
        return lambda: '"health":"true"' in _http_get(f'http://127.0.0.1:{port}/health')[1].replace(' ', '')
    if name in ('kube-controller-manager', 'kube-scheduler'):
        return lambda: _https_get(f'https://127.0.0.1:{port}/healthz', None)[0] == 200
    if name == 'kubelet-logs':
        return lambda: _https_get(f'https://{ip_for_index(0)}:{info.ports["kubelet"]}/healthz', None)[0] == 200
    started = time.monotonic()
    # kwok, fake-reboots: no health endpoint; alive for a second is what is checked
    return lambda: time.monotonic() - started > 1.0


def restart_component(info, name, down_seconds=0.0, timeout=60.0, stop_timeout=15.0):
    """Stop a component, leave it down for down_seconds, start it again; returns the seconds it was away.

    stop_timeout: how long it may take to exit after SIGTERM before it is killed (kube-apiserver
    drains its long requests for up to a minute; a short one makes the stop a crash).
    """
    t0 = time.monotonic()
    stop_component(info, name, timeout=stop_timeout)
    time.sleep(max(0.0, down_seconds - (time.monotonic() - t0)))
    start_component(info, name, timeout=timeout)
    return time.monotonic() - t0


def fake_reboots_holder(api):
    """holderIdentity of the fake-reboots Lease while it is renewed, else None (no fake reboots)."""
    # pylint: disable-next=import-outside-toplevel
    from kubernetes import client as kclient
    if str(CLUSTER_DIR) not in sys.path:
        sys.path.append(str(CLUSTER_DIR))  # launcher imported by path: its neighbours are importable all the same
    # pylint: disable-next=import-outside-toplevel
    import fake_reboots as fr
    try:
        lease = kclient.CoordinationV1Api(api).read_namespaced_lease(fr.LEASE_NAME, fr.LEASE_NAMESPACE)
    except kclient.ApiException as exc:
        if exc.status == 404:
            return None
        raise
    spec = lease.spec
    if not spec.renew_time:
        return None
    age = time.time() - spec.renew_time.timestamp()
    return spec.holder_identity if age <= (spec.lease_duration_seconds or fr.LEASE_SECONDS) else None


def down(state_dir, keep_state=False):
    """Stop every process of the cluster in state_dir and remove its state (and etcd data)."""
    state = Path(state_dir).resolve()
    if not (state / STATE_FILE).exists():
        log(f'no cluster state in {state}; nothing to stop')
        if state.is_dir() and not keep_state:
            shutil.rmtree(state, ignore_errors=True)
        return
    info = ClusterInfo.load(state)
    if info.real_nodes:
        _remove_real_nodes(info)
    _stop_pids(info.pids, info.starts)
    if info.etcd_data_dir:
        shutil.rmtree(info.etcd_data_dir, ignore_errors=True)
    if not keep_state:
        shutil.rmtree(state, ignore_errors=True)
    log(f'cluster in {state} stopped')


def _real_node_module():
    if str(CLUSTER_DIR) not in sys.path:
        sys.path.append(str(CLUSTER_DIR))  # launcher imported by path: its neighbours are importable all the same
    import real_node  # pylint: disable=import-outside-toplevel
    return real_node


def add_real_nodes(info, count, labels=None):
    """Start ``count`` real nodes (real_node.py) in the running cluster, named real-node-0, ...; their names.

    Their images (the pause image containerd needs, the agent, the test packages) are built or found by
    images.py, which also starts the local registry they are pulled from.
    """
    real_node = _real_node_module()
    import images  # pylint: disable=import-outside-toplevel,import-error
    built = images.ensure_images()
    names = []
    for index in range(count):
        name = f'real-node-{len(info.real_nodes or {}) + index}'
        real_node.add(info, name, built, labels=labels)
        names.append(name)
    return names


def _remove_real_nodes(info):
    real_node = _real_node_module()
    errors = []
    for name in list(info.real_nodes):
        try:
            real_node.remove(info, name)
        except real_node.RealNodeError as exc:
            errors.append(str(exc))
    for error in errors:
        log(f'error: {error}')


# --------------------------------------------------------------------------
# API objects

def install_crds(api, directory, timeout=60.0):
    """Create (or replace) every CRD in directory/*.yaml and wait until all are Established."""
    # pylint: disable-next=import-outside-toplevel
    from kubernetes import client as kclient
    ext = kclient.ApiextensionsV1Api(api)
    names = []
    for path in sorted(Path(directory).glob('*.yaml')):
        for doc in yaml.safe_load_all(path.read_text(encoding='utf-8')):
            if not doc or doc.get('kind') != 'CustomResourceDefinition':
                continue
            name = doc['metadata']['name']
            names.append(name)
            try:
                ext.create_custom_resource_definition(doc)
            except kclient.ApiException as exc:
                if exc.status != 409:
                    raise
                cur = ext.read_custom_resource_definition(name)
                doc['metadata']['resourceVersion'] = cur.metadata.resource_version
                ext.replace_custom_resource_definition(name, doc)
    if not names:
        raise ClusterError(f'no CustomResourceDefinition found in {directory}')

    def established():
        for name in names:
            crd = ext.read_custom_resource_definition(name)
            conds = {c.type: c.status for c in (crd.status.conditions or [])}
            if conds.get('Established') != 'True':
                return False
        return True

    wait_until(f'CRDs established: {names}', established, timeout)
    return names


def node_manifest(name, index, labels=None):
    """A fake H100 GPU node managed by kwok (status included: kwok keeps given capacity and bootID)."""
    node_labels = dict(GPU_NODE_LABELS)
    node_labels['kubernetes.io/hostname'] = name
    node_labels.update(labels or {})
    return {
        'apiVersion': 'v1',
        'kind': 'Node',
        'metadata': {
            'name': name,
            'labels': node_labels,
            'annotations': {KWOK_NODE_ANNOTATION: KWOK_NODE_ANNOTATION_VALUE},
        },
        'spec': {},
        'status': {
            'capacity': dict(GPU_NODE_CAPACITY),
            'allocatable': dict(GPU_NODE_ALLOCATABLE),
            'addresses': [
                {'type': 'InternalIP', 'address': ip_for_index(index)},
                {'type': 'Hostname', 'address': name},
            ],
            'nodeInfo': {
                'architecture': 'amd64',
                'bootID': str(uuid.uuid4()),
                'machineID': uuid.uuid4().hex,
                'systemUUID': str(uuid.uuid4()),
                'containerRuntimeVersion': 'containerd://1.7.27',
                'kernelVersion': '6.8.0-1024-nvidia',
                'kubeletVersion': versions()['K8S_VERSION'],
                'kubeProxyVersion': '',
                'operatingSystem': 'linux',
                'osImage': 'Ubuntu 24.04.2 LTS',
            },
        },
    }


# pylint: disable-next=too-many-arguments,too-many-positional-arguments
def create_nodes(api, names, labels=None, per_node_labels=None, start_index=None, workers=8):
    """Create fake GPU nodes; labels go on all, per_node_labels[name] on one.

    start_index numbers the InternalIPs; by default it continues after the
    nodes that exist already, so addresses stay unique when adding nodes later.
    """
    # pylint: disable-next=import-outside-toplevel
    from kubernetes import client as kclient
    core = kclient.CoreV1Api(api)
    if start_index is None:
        start_index = len(core.list_node().items)
    per_node_labels = per_node_labels or {}

    def one(item):
        idx, name = item
        merged = dict(labels or {})
        merged.update(per_node_labels.get(name, {}))
        core.create_node(node_manifest(name, start_index + idx, merged))

    # A few parallel creates: 200 nodes one by one are noticeably slower.
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        list(pool.map(one, enumerate(names)))
    return list(names)


def node_ready_status(node):
    """The status of the Ready condition of a V1Node ('True', 'False', 'Unknown' or None)."""
    for cond in (node.status.conditions or []) if node.status else []:
        if cond.type == 'Ready':
            return cond.status
    return None


def wait_nodes_ready(api, names, timeout=120.0, proc_check=None):
    """Wait until all the named nodes report Ready=True."""
    # pylint: disable-next=import-outside-toplevel
    from kubernetes import client as kclient
    core = kclient.CoreV1Api(api)
    wanted = set(names)

    def ready():
        items = core.list_node().items
        return wanted <= {n.metadata.name for n in items if node_ready_status(n) == 'True'}

    wait_until(f'{len(wanted)} nodes Ready', ready, timeout, interval=0.5, proc_check=proc_check)


# --------------------------------------------------------------------------
# CLI

def _parse_labels(items):
    out = {}
    for item in items or []:
        key, sep, value = item.partition('=')
        if not sep:
            raise SystemExit(f'--label wants key=value, got {item!r}')
        out[key] = value
    return out


def main(argv=None):
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest='cmd', required=True)
    sub.add_parser('build', help='build (or reuse) the binaries; print their paths')
    p_up = sub.add_parser('up', help='start a cluster')
    p_up.add_argument('--nodes', type=int, default=8)
    p_up.add_argument('--dir', required=True, help='state dir (pids, logs, certs); created')
    p_up.add_argument('--kubeconfig', help='also write the admin kubeconfig here')
    p_up.add_argument('--crds', help='directory of CRD YAMLs (default: $NODEWRIGHT_CRDS_DIR or ../shared/crds)')
    p_up.add_argument('--no-crds', action='store_true', help='install no CRDs')
    p_up.add_argument('--label', action='append', metavar='KEY=VALUE', help='extra label on every node (repeatable)')
    p_up.add_argument('--label-spread', metavar='KEY=V1,V2,...',
                      help='split the nodes into contiguous blocks, one value each (e.g. compartment=a,b,c)')
    p_up.add_argument('--node-monitor-grace-period', default='40s',
                      help='how long without a lease renewal before a node turns Unknown (kwok renews every 10 s)')
    p_up.add_argument('--timeout', type=float, default=120.0)
    p_up.add_argument('--audit', action='store_true', help='write an API audit log to <dir>/logs/audit.log')
    p_up.add_argument('--no-fake-reboots', action='store_true',
                      help='do not reboot nodes for node_restart interrupt pods (tests then reboot them by hand)')
    p_up.add_argument('--fake-reboot-delay', type=float, default=1.0,
                      help='seconds between an interrupt pod appearing and its node rebooting (default 1)')
    p_up.add_argument('--real-nodes', type=int, default=0,
                      help='also start this many real nodes (kubelet + containerd, real_node.py; root only)')
    for verb, what in (('stop', 'stop one component (its ports, flags and data are kept)'),
                       ('start', 'start a stopped component again, as it was started first; wait until healthy')):
        p_one = sub.add_parser(verb, help=what)
        p_one.add_argument('name', choices=COMPONENTS)
        p_one.add_argument('--dir', required=True, help='state dir of the running cluster')
    p_down = sub.add_parser('down', help='stop the cluster and remove its state dir')
    p_down.add_argument('--dir', required=True)
    p_down.add_argument('--keep-state', action='store_true', help='keep the state dir (logs) after stopping')
    args = parser.parse_args(argv)

    try:
        if args.cmd == 'build':
            bins = binaries(build=True)
            print(bins.k8s)
            print(bins.kwok)
        elif args.cmd == 'up':
            spread = None
            if args.label_spread:
                key, dummy, vals = args.label_spread.partition('=')
                spread = (key, [v for v in vals.split(',') if v])
                if not key or not spread[1]:
                    raise SystemExit('--label-spread wants KEY=V1,V2,...')
            crds = False if args.no_crds else (Path(args.crds) if args.crds else None)
            info = up(nodes=args.nodes, state_dir=args.dir, kubeconfig=args.kubeconfig, crds=crds,
                      labels=_parse_labels(args.label), label_spread=spread,
                      node_monitor_grace_period=args.node_monitor_grace_period, timeout=args.timeout,
                      audit=args.audit, fake_reboots=not args.no_fake_reboots, fake_reboot_delay=args.fake_reboot_delay)
            if args.real_nodes:
                try:
                    add_real_nodes(info, args.real_nodes)
                except BaseException:
                    down(info.state_dir, keep_state=True)
                    raise
            print(args.kubeconfig or info.kubeconfig)
        elif args.cmd == 'stop':
            stop_component(ClusterInfo.load(Path(args.dir).resolve()), args.name)
        elif args.cmd == 'start':
            start_component(ClusterInfo.load(Path(args.dir).resolve()), args.name)
        else:
            down(args.dir, keep_state=args.keep_state)
    except ClusterError as exc:
        log(f'error: {exc}')
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
