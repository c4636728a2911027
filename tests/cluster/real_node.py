# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""Real Kubernetes nodes beside the KWOK ones: a kubelet and a containerd of their own, pods that really run.

The host side (imported by launcher.py and the tests):
    add(info, name, images)   start a real node in a running cluster, wait until it is Ready
    remove(info, name)        stop it and remove every trace it left on the machine
    reboot(info, name)        what a reboot does to the node: kubelet, containerd and every container
                              stop, the node gets a new boot ID, both start again
    stop_kubelet / start_kubelet(info, name)   the kubelet alone dies, or comes back

The node side runs as ``python tests/cluster/real_node.py supervise <node dir>`` under
``unshare --mount``: each node lives in a mount namespace of its own (``/`` made rshared inside, as the
kubelet's HostToContainer mounts need), where it gets its own ``/run/containerd`` and ``/run/netns``
(tmpfs), its own agent state (``/var/lib/skyhook``, ``/var/log/skyhook``), its own proof directory
(``/var/lib/nodewright-proof``, where the test packages write), its own ``/var/log/containers`` and
``/etc/resolv.conf`` (a copy of the machine's), a boot ID
file bound over ``/proc/sys/kernel/random/boot_id``, the sysctls the kubelet sets bound to files, and
a shim bound over ``/usr/bin/systemctl`` (``reboot`` is a link to it): the agent's ``reboot`` and
``systemctl restart`` reach the supervisor, never the machine; the same shim over ``/usr/sbin/sysctl`` (a call is
only logged: the machine's kernel settings are not a test's to change), and ``/etc/sysctl.d`` and ``/etc/containerd``
of its own (what a package writes there stays the node's). Files written elsewhere land on the
host's filesystems, as on a real node.

What is shared with the machine (the network namespace): the node IP (a /32 on ``lo``), the CNI bridge
and its veths, cgroups (under ``/nw-<node>`` in every v1 hierarchy). ``remove`` takes each of them away
again, and the mount points it had to create on the host.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import yaml

import launcher  # its neighbour in tests/cluster (on sys.path)

HERE = Path(__file__).resolve().parent
SUPERVISOR = Path(__file__).resolve()
CGROUP_FS = Path('/sys/fs/cgroup')
# Host paths a node mounts over in its namespace: created on the host when missing (and removed again).
# /run/netns too, but it stays: podman's containers (the EE tests, run at the same time) use it as well.
HOST_MOUNT_POINTS = ('/run/containerd', '/var/log/containers', '/var/lib/skyhook', '/var/log/skyhook',
                     '/var/lib/nodewright-proof', '/var/lib/kubelet', '/etc/sysctl.d', '/etc/containerd')
# The kubelet's root and containerd's socket are at these short paths in the node's namespace: a Unix socket's path
# has at most 107 bytes, and the kubelet's pod-resources and plugin sockets under a root in a pytest directory
# (/tmp/pytest-of-root/pytest-N/<cluster>/real-nodes/<node>/...) pass that ("bind: invalid argument").
KUBELET_ROOT = '/var/lib/kubelet'
CONTAINERD_SOCKET = '/run/containerd/containerd.sock'
NETNS_DIR = '/run/netns'
# The sysctls the kubelet sets on start (kernel defaults it wants); bound to files in the node's namespace
KUBELET_SYSCTLS = {'kernel/panic': '10', 'kernel/panic_on_oops': '1', 'vm/overcommit_memory': '1'}
REAL_NODE_LABEL = 'nodewright.bridge/real-node'
# Only a CR that tolerates it works on a real node: a test's fleet of KWOK nodes never gets one by chance
REAL_NODE_TAINT = {'key': REAL_NODE_LABEL, 'value': 'true', 'effect': 'NoSchedule'}
REAL_NODE_TOLERATION = {'key': REAL_NODE_LABEL, 'operator': 'Equal', 'value': 'true', 'effect': 'NoSchedule'}
PR_SET_CHILD_SUBREAPER = 36
POLL = 0.2
# Real nodes of every cluster on this machine (two test sessions may each run some): one file per node,
# named by its machine-wide index (its IP, bridge, subnet and cgroup root), and what they share
MACHINE_DIR = Path('/run/nodewright-real-nodes')
SHARED_FILE = 'shared.json'  # the host mount points created and the iptables chains before the first node


class RealNodeError(launcher.ClusterError):
    """A real node could not be started, changed or removed."""


def log(msg):
    sys.stderr.write(f'real-node: {msg}\n')
    sys.stderr.flush()


# --------------------------------------------------------------------------
# the node's configuration (host side, before the supervisor starts)

def node_ip(index):
    return f'10.77.0.{index + 1}'


def containerd_config(node_dir, sandbox_image):
    """containerd 1.6's config: state in the node's dir and its /run/containerd, the CRI on runc with cgroupfs."""
    cri = 'plugins."io.containerd.grpc.v1.cri"'
    return f'''version = 2
root = "{node_dir}/containerd/root"
state = "/run/containerd"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
                    "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs"]

[grpc]
  address = "{CONTAINERD_SOCKET}"

[plugins."io.containerd.internal.v1.opt"]
  path = "{node_dir}/containerd/opt"

[{cri}]
  sandbox_image = "{sandbox_image}"
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  # without CAP_SYS_RESOURCE runc cannot set the kubelet's negative oom_score_adj
  restrict_oom_score_adj = true
  disable_apparmor = true
  [{cri}.containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [{cri}.containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [{cri}.containerd.runtimes.runc.options]
        SystemdCgroup = false
  [{cri}.cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "{node_dir}/cni"
  # images are named localhost/...: the local registry (plain HTTP, port 80)
  [{cri}.registry.mirrors."localhost"]
    endpoint = ["http://127.0.0.1:80"]
'''


def cni_config(node_dir, bridge, subnet):
    """A bridge network with host-local addresses (the node is NotReady without a CNI config)."""
    return {'cniVersion': '1.0.0', 'name': 'nodewright-real', 'plugins': [
        {'type': 'bridge', 'bridge': bridge, 'isGateway': True, 'ipMasq': False,
         'ipam': {'type': 'host-local', 'ranges': [[{'subnet': subnet}]], 'dataDir': f'{node_dir}/cni-data'}},
        {'type': 'loopback'}]}


def kubelet_config(node):
    """The KubeletConfiguration of a real node on this machine (real-nodes.md says why each setting)."""
    return {
        'apiVersion': 'kubelet.config.k8s.io/v1beta1', 'kind': 'KubeletConfiguration',
        'address': node['ip'], 'port': node['kubelet_port'], 'readOnlyPort': 0,
        'healthzBindAddress': '127.0.0.1', 'healthzPort': node['healthz_port'],
        'containerRuntimeEndpoint': f'unix://{CONTAINERD_SOCKET}',
        # the test API server sends no client certificate: logs and exec arrive anonymously
        'authentication': {'anonymous': {'enabled': True}, 'webhook': {'enabled': False}},
        'authorization': {'mode': 'AlwaysAllow'},
        'cgroupDriver': 'cgroupfs', 'cgroupRoot': node['cgroup_root'], 'failCgroupV1': False, 'failSwapOn': False,
        # 1.35's default makes a present image "not present" under a second name
        'imagePullCredentialsVerificationPolicy': 'NeverVerify',
        'podLogsDir': f"{node['dir']}/pod-logs",
        'protectKernelDefaults': False, 'serializeImagePulls': False,
        'evictionHard': {'memory.available': '100Mi', 'nodefs.available': '2%', 'imagefs.available': '2%'},
        'nodeStatusUpdateFrequency': '5s', 'syncFrequency': '10s',
        'resolvConf': '/etc/resolv.conf', 'maxPods': 50,
    }


def kubelet_argv(node, kubelet):
    labels = ','.join(f'{k}={v}' for k, v in sorted(node['labels'].items()))
    taints = ','.join(f"{t['key']}={t.get('value', '')}:{t['effect']}" for t in node['taints'])
    argv = [kubelet, f"--config={node['dir']}/kubelet/config.yaml", f"--kubeconfig={node['dir']}/kubelet/kubeconfig",
            f'--root-dir={KUBELET_ROOT}', f"--hostname-override={node['name']}",
            f"--node-ip={node['ip']}", f'--node-labels={labels}', '--v=1']
    if taints:
        argv.append(f'--register-with-taints={taints}')
    return argv


def shim_script(node_dir):
    """The node's systemctl (and so its reboot): asks the supervisor, through a request file, then waits to die.

    A real reboot never returns to the caller: the script sleeps until the supervisor's "shutdown" kills it.
    """
    return f'''#!/bin/sh
# nodewright.bridge test shim: the real node's {node_dir} supervisor carries this out; the machine is not touched
requests="{node_dir}/control/requests"
name="$(basename "$0")"
echo "$(date +%s.%N) $name $*" >> "{node_dir}/control/calls.log"
case "$name $1" in
    "reboot "*|"systemctl reboot")
        echo "reboot" > "$requests/reboot.$$"
        while :; do sleep 1; done ;;
    "systemctl daemon-reload") exit 0 ;;
    "systemctl restart"|"systemctl try-restart"|"systemctl reload-or-restart")
        shift
        for unit in "$@"; do echo "restart $unit" > "$requests/restart.$$.$unit"; done
        exit 0 ;;
    *) exit 0 ;;
esac
'''


# --------------------------------------------------------------------------
# host side

def _run(argv, check=True):
    res = subprocess.run(argv, capture_output=True, text=True, check=False)
    if check and res.returncode != 0:
        raise RealNodeError(f"{' '.join(argv)} failed ({res.returncode}): {res.stderr.strip() or res.stdout.strip()}")
    return res


def cgroup_hierarchies():
    """The cgroup v1 hierarchies mounted under /sys/fs/cgroup (the kubelet and runc use each of them)."""
    found = []
    for line in Path('/proc/self/mounts').read_text(encoding='utf-8').splitlines():
        fields = line.split()
        if len(fields) > 2 and fields[2] == 'cgroup' and fields[1].startswith(str(CGROUP_FS) + '/'):
            found.append(Path(fields[1]))
    return found


def _make_cgroup_root(root):
    for hierarchy in cgroup_hierarchies():
        path = hierarchy / root.strip('/')
        path.mkdir(exist_ok=True)
        # a new cpuset has no CPUs and no memory nodes: nothing could join it
        for name in ('cpuset.cpus', 'cpuset.mems'):
            if (path / name).exists() and not (path / name).read_text(encoding='utf-8').strip():
                (path / name).write_text((hierarchy / name).read_text(encoding='utf-8'), encoding='utf-8')


def cgroup_pids(root):
    pids = set()
    for hierarchy in cgroup_hierarchies():
        base = hierarchy / root.strip('/')
        if base.is_dir():
            for procs in base.rglob('cgroup.procs'):
                try:
                    pids.update(int(p) for p in procs.read_text(encoding='utf-8').split())
                except OSError:
                    pass
    return pids


def _remove_cgroup_root(root):
    """rmdir every cgroup below the root, deepest first; the processes in them are gone by then."""
    left = []
    for hierarchy in cgroup_hierarchies():
        base = hierarchy / root.strip('/')
        if not base.is_dir():
            continue
        for path in sorted((p for p in base.rglob('*') if p.is_dir()), key=lambda p: -len(p.parts)) + [base]:
            for dummy in range(50):
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.1)
            else:
                left.append(str(path))
    return left


# The kubelet's iptables chains (KUBE-FIREWALL, KUBE-KUBELET-CANARY, ...); the CNI-* ones here are podman's
KUBELET_CHAIN_PREFIX = 'KUBE-'


def _iptables_chains():
    """The kubelet's chains as (table, chain), and the rules that jump to them as (table, rule)."""
    chains = set()
    for table in ('filter', 'nat', 'mangle'):
        res = _run(['iptables-save', '-t', table], check=False)
        for line in res.stdout.splitlines():
            if line.startswith(':' + KUBELET_CHAIN_PREFIX):
                chains.add((table, line[1:].split()[0]))
            elif line.startswith('-A ') and KUBELET_CHAIN_PREFIX in line:
                chains.add((table, line))
    return chains


def _remove_iptables(entries):
    """Delete the rules first (a chain that is jumped to cannot go), then flush and delete the chains."""
    import shlex  # pylint: disable=import-outside-toplevel
    for table, entry in sorted(entries):
        if entry.startswith('-A '):
            _run(['iptables', '-t', table, '-D', *shlex.split(entry)[1:]], check=False)
    for table, entry in sorted(entries):
        if not entry.startswith('-A '):
            _run(['iptables', '-t', table, '-F', entry], check=False)
    for table, entry in sorted(entries):
        if not entry.startswith('-A '):
            _run(['iptables', '-t', table, '-X', entry], check=False)


class _MachineLock:
    """The machine-wide lock of the real nodes' shared things (indexes, host mount points, iptables)."""

    def __enter__(self):
        import fcntl  # pylint: disable=import-outside-toplevel
        MACHINE_DIR.mkdir(parents=True, exist_ok=True)
        self.file = open(MACHINE_DIR / '.lock', 'w', encoding='utf-8')  # pylint: disable=consider-using-with
        fcntl.flock(self.file, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        self.file.close()

    @staticmethod
    def shared():
        path = MACHINE_DIR / SHARED_FILE
        return json.loads(path.read_text(encoding='utf-8')) if path.exists() else None

    @staticmethod
    def save_shared(shared):
        path = MACHINE_DIR / SHARED_FILE
        if shared is None:
            path.unlink(missing_ok=True)
        else:
            path.write_text(json.dumps(shared), encoding='utf-8')

    @staticmethod
    def live_indexes():
        """Indexes of the nodes whose supervisor still runs (a dead session's files are stale)."""
        live = {}
        for path in MACHINE_DIR.glob('node-*.json'):
            node = json.loads(path.read_text(encoding='utf-8'))
            if node.get('pid') is None or launcher._proc_matches(node['pid'], node.get('start')):  # pylint: disable=protected-access
                live[node['index']] = node
            else:
                path.unlink(missing_ok=True)
        return live


def ensure_kubelet():
    """The kubelet binary, built first when missing (build.sh kubelet: waits for a build under way, else reuses)."""
    res = subprocess.run(['bash', str(HERE / 'build.sh'), 'kubelet'], stdout=subprocess.PIPE, text=True, check=False)
    if res.returncode != 0:
        raise RealNodeError(f'tests/cluster/build.sh kubelet failed with exit code {res.returncode}')
    return res.stdout.strip().splitlines()[-1]


def _node_record(info, name, images, labels, taints, index):
    """The node's plan: its dir, IP, ports, cgroup root, bridge, labels; written to <dir>/node.json."""
    node_dir = Path(info.state_dir) / 'real-nodes' / name
    kubelet_port, healthz_port = launcher.free_ports(2)
    node_labels = {'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64', REAL_NODE_LABEL: 'true'}
    node_labels.update(labels or {})
    return {'name': name, 'index': index, 'dir': str(node_dir), 'ip': node_ip(index), 'kubelet_port': kubelet_port,
            'healthz_port': healthz_port, 'cgroup_root': f'/nodewright-real-{index}', 'bridge': f'nwbr{index}',
            'subnet': f'10.78.{index}.0/24', 'labels': node_labels,
            'taints': [REAL_NODE_TAINT] if taints is None else list(taints), 'images': dict(images),
            'kubelet': ensure_kubelet()}


def _write_node_files(info, node):
    node_dir = Path(node['dir'])
    for sub in ('containerd', 'kubelet', 'kubelet/root', 'cni', 'cni-data', 'control/requests', 'logs', 'pod-logs', 'container-logs',
                'skyhook-lib', 'skyhook-log', 'proof', 'sysctl', 'etc-sysctl.d', 'etc-containerd'):
        (node_dir / sub).mkdir(parents=True, exist_ok=True)
    (node_dir / 'containerd' / 'config.toml').write_text(
        containerd_config(node_dir, node['images']['pause']), encoding='utf-8')
    (node_dir / 'cni' / '10-nodewright.conflist').write_text(
        json.dumps(cni_config(node_dir, node['bridge'], node['subnet']), indent=2), encoding='utf-8')
    (node_dir / 'kubelet' / 'config.yaml').write_text(yaml.safe_dump(kubelet_config(node)), encoding='utf-8')
    kubeconfig = yaml.safe_load(Path(info.kubeconfig).read_text(encoding='utf-8'))
    (node_dir / 'kubelet' / 'kubeconfig').write_text(yaml.safe_dump(kubeconfig), encoding='utf-8')
    for name, value in KUBELET_SYSCTLS.items():
        (node_dir / 'sysctl' / name.replace('/', '.')).write_text(value + '\n', encoding='utf-8')
    (node_dir / 'boot_id').write_text(str(uuid.uuid4()) + '\n', encoding='utf-8')
    # the node's own resolv.conf: an agent that copied its container's over it (COPY_RESOLV) changes the node's,
    # never the machine's, and a test can tell
    (node_dir / 'resolv.conf').write_bytes(Path('/etc/resolv.conf').read_bytes())
    shim = node_dir / 'systemctl'
    shim.write_text(shim_script(node_dir), encoding='utf-8')
    shim.chmod(0o755)
    (node_dir / 'node.json').write_text(json.dumps(node, indent=2), encoding='utf-8')


def _check_machine(node):
    missing = [p for p in ('/usr/bin/containerd', '/usr/sbin/runc', '/usr/lib/cni/bridge', '/usr/lib/cni/host-local',
                           '/usr/bin/unshare', node['kubelet']) if not os.access(p, os.X_OK)]
    if os.geteuid() != 0:
        raise RealNodeError('a real node needs root (mount namespaces, cgroups, the node IP on lo)')
    if missing:
        raise RealNodeError(f"missing on this machine: {', '.join(missing)} (the Debian packages containerd, runc, "
                            'containernetworking-plugins; the kubelet: tests/cluster/build.sh kubelet)')
    if not cgroup_hierarchies():
        raise RealNodeError('no cgroup v1 hierarchy under /sys/fs/cgroup: these nodes are set up for cgroup v1')
    if 'overlay' not in Path('/proc/filesystems').read_text(encoding='utf-8'):
        raise RealNodeError('the kernel has no overlay filesystem (containerd\'s overlayfs snapshotter needs it)')


def add(info, name, images, labels=None, taints=None, timeout=180.0):
    """Start the real node ``name`` in the running cluster ``info`` (a launcher.ClusterInfo); returns its record.

    ``images``: at least ``pause`` (containerd's sandbox image, from the local registry). The node carries
    the label and taint REAL_NODE_LABEL unless ``taints`` says otherwise. Recorded in ``info.real_nodes``
    (and cluster.json), so that ``launcher.down`` removes it too.
    """
    info.real_nodes = dict(info.real_nodes or {})
    if name in info.real_nodes:
        raise RealNodeError(f'real node {name} runs already')
    with _MachineLock() as machine:
        live = machine.live_indexes()
        index = min(i for i in range(250) if i not in live)
        node = _node_record(info, name, images, labels, taints, index)
        _check_machine(node)
        shared = machine.shared() if live else None
        if shared is None:
            shared = {'created_mount_points': [], 'iptables_before': sorted(_iptables_chains())}
        os.makedirs(NETNS_DIR, exist_ok=True)
        for point in HOST_MOUNT_POINTS:
            if not os.path.exists(point):
                os.makedirs(point)
                shared['created_mount_points'].append(point)
        machine.save_shared(shared)
        (MACHINE_DIR / f'node-{index}.json').write_text(json.dumps(node), encoding='utf-8')
    info.real_nodes[name] = node
    info.save()
    try:
        _write_node_files(info, node)
        _run(['ip', 'addr', 'replace', f"{node['ip']}/32", 'dev', 'lo'])
        _make_cgroup_root(node['cgroup_root'])
        argv = ['unshare', '--mount', '--propagation', 'private', '--fork',
                sys.executable, '-u', str(SUPERVISOR), 'supervise', node['dir']]
        proc = launcher._start(f'real-node-{name}', argv, info.state_dir)  # pylint: disable=protected-access
        node['pid'] = proc.pid
        node['start'] = launcher._proc_start_time(proc.pid)  # pylint: disable=protected-access
        (MACHINE_DIR / f'node-{index}.json').write_text(json.dumps(node), encoding='utf-8')
        info.save()
        wait_ready(info, name, timeout)
    except BaseException:
        log(f'{name} did not start; its logs: {node["dir"]}/logs')
        for component in ('supervisor', 'containerd', 'kubelet'):
            log(f'--- {component} ---\n{launcher._tail(Path(node["dir"]) / "logs" / f"{component}.log", 20)}')  # pylint: disable=protected-access
        remove(info, name, keep_dir=True)
        raise
    return node


def wait_ready(info, name, timeout=180.0):
    """Wait until the node is registered and Ready (the supervisor still running)."""
    from kubernetes import client as kclient  # pylint: disable=import-outside-toplevel
    node = info.real_nodes[name]
    api = info.api_client()
    try:
        core = kclient.CoreV1Api(api)

        def alive():
            if not launcher._proc_matches(node['pid'], node.get('start')):  # pylint: disable=protected-access
                raise RealNodeError(f"real node {name}'s supervisor exited:\n"
                                    f"{launcher._tail(Path(node['dir']) / 'logs' / 'supervisor.log')}")  # pylint: disable=protected-access

        def ready():
            return launcher.node_ready_status(core.read_node(name)) == 'True'
        launcher.wait_until(f'real node {name} Ready', ready, timeout, interval=0.5, proc_check=alive)
    finally:
        api.close()


def _request(info, name, verb, timeout):
    """Ask the node's supervisor for ``verb`` (a file in control/requests) and wait until it says done."""
    node = info.real_nodes[name]
    control = Path(node['dir']) / 'control'
    done = control / 'done.log'
    before = done.read_text(encoding='utf-8').count('\n') if done.exists() else 0
    token = uuid.uuid4().hex[:8]
    (control / 'requests' / f'{verb}.host-{token}').write_text(verb + '\n', encoding='utf-8')
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        lines = done.read_text(encoding='utf-8').splitlines() if done.exists() else []
        for line in lines[before:]:
            if token in line:
                return json.loads(line.split(' ', 1)[1])
        time.sleep(POLL)
    raise RealNodeError(f'real node {name}: {verb} not done within {timeout}s (see {control})')


def reboot(info, name, timeout=120.0):
    """Reboot the node as a shutdown would (every container killed), new boot ID; returns the supervisor's record."""
    return _request(info, name, 'reboot', timeout)


def stop_kubelet(info, name, timeout=60.0):
    return _request(info, name, 'stop-kubelet', timeout)


def start_kubelet(info, name, timeout=60.0):
    return _request(info, name, 'start-kubelet', timeout)


def calls(info, name):
    """The node's systemctl/reboot shim calls so far: lines ``<time> <command> <args>``."""
    path = Path(info.real_nodes[name]['dir']) / 'control' / 'calls.log'
    return path.read_text(encoding='utf-8').splitlines() if path.exists() else []


def reboots(info, name):
    """The reboots the supervisor carried out (requested by the agent's reboot or by ``reboot``)."""
    path = Path(info.real_nodes[name]['dir']) / 'control' / 'done.log'
    lines = path.read_text(encoding='utf-8').splitlines() if path.exists() else []
    return [json.loads(line.split(' ', 1)[1]) for line in lines if line.startswith('reboot ')]


def proof_dir(info, name):
    """Where the node's /var/lib/nodewright-proof is on the machine (the test packages write there)."""
    return Path(info.real_nodes[name]['dir']) / 'proof'


def etc_dir(info, name, which):
    """Where the node's own /etc/<which> is on the machine (``sysctl.d`` or ``containerd``)."""
    return Path(info.real_nodes[name]['dir']) / f'etc-{which}'


def remove(info, name, keep_dir=False):
    """Stop the node (supervisor, kubelet, containerd, containers) and remove its traces; raise if one stays."""
    node = (info.real_nodes or {}).get(name)
    if node is None:
        return
    if node.get('pid'):
        launcher._stop_pids({f'real-node-{name}': node['pid']}, {f'real-node-{name}': node.get('start')}, timeout=90)  # pylint: disable=protected-access
    for pid in cgroup_pids(node['cgroup_root']):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    left = _remove_cgroup_root(node['cgroup_root'])
    _run(['ip', 'link', 'del', node['bridge']], check=False)
    _run(['ip', 'addr', 'del', f"{node['ip']}/32", 'dev', 'lo'], check=False)
    with _MachineLock() as machine:
        (MACHINE_DIR / f"node-{node['index']}.json").unlink(missing_ok=True)
        shared = machine.shared()
        if not machine.live_indexes() and shared is not None:
            # the last real node on the machine: what the nodes shared goes too
            _remove_iptables(_iptables_chains() - {tuple(c) for c in shared.get('iptables_before') or []})
            for point in reversed(shared.get('created_mount_points') or []):
                try:
                    os.rmdir(point)
                except OSError as exc:
                    left.append(f'{point} ({exc})')
            machine.save_shared(None)
    if not keep_dir:
        _run(['rm', '-rf', '--one-file-system', node['dir']], check=False)
    del info.real_nodes[name]
    info.save()
    if left:
        raise RealNodeError(f'real node {name} left traces: {left}')


def machine_snapshot():
    """What real nodes change on the machine while they run, as a set of strings: compare one taken before
    the first node with one after the last is removed (nothing may differ)."""
    found = set()
    lo = _run(['ip', '-o', 'addr', 'show', 'dev', 'lo'], check=False).stdout
    found |= {f'address {word} on lo' for word in lo.split() if word.startswith('10.77.0.')}
    links = _run(['ip', '-o', 'link', 'show'], check=False).stdout
    found |= {f"link {line.split(':')[1].strip()}" for line in links.splitlines() if ': nwbr' in line or 'master nwbr' in line}
    for hierarchy in cgroup_hierarchies():
        found |= {f'cgroup {p}' for p in hierarchy.glob('nodewright-real-*')}
    found |= {f'path {p}' for p in HOST_MOUNT_POINTS if os.path.exists(p)}
    found |= {f'iptables {table} {chain}' for table, chain in _iptables_chains()}
    found |= {f'file {p}' for p in MACHINE_DIR.glob('node-*.json')} if MACHINE_DIR.is_dir() else set()
    # a pod's network namespace: CRI names them cni-<uuid> (podman's are netns-<uuid>)
    found |= {f'netns {p.name}' for p in Path(NETNS_DIR).glob('cni-*')} if Path(NETNS_DIR).is_dir() else set()
    for entry in Path('/proc').iterdir():
        if entry.name.isdigit():
            try:
                comm = (entry / 'comm').read_text(encoding='utf-8').strip()
            except OSError:
                continue
            if comm in ('containerd', 'kubelet') or comm.startswith('containerd-shim'):
                found.add(f'process {comm} {entry.name}')
    return found


def live_nodes():
    """Index -> node of the real nodes whose supervisor runs on this machine now (any test run's)."""
    with _MachineLock():
        return _MachineLock.live_indexes()


def node_traces(snapshot, node):
    """The items of a machine_snapshot that are ``node``'s own (its address, bridge, cgroups and index file): what
    must be gone after it is removed even while other runs' real nodes share the machine-wide rest."""
    index = node['index']
    own = (f"address {node['ip']}/", f"link {node['bridge']}", f"link {node['bridge']}@", f'node-{index}.json')
    cgroup = '/' + node['cgroup_root'].strip('/')
    return {item for item in snapshot
            if any(item.startswith(prefix) or item.endswith(prefix) for prefix in own)
            or (item.startswith('cgroup ') and item.endswith(cgroup))}


# --------------------------------------------------------------------------
# node side: the supervisor, in the node's mount namespace

class Supervisor:
    """containerd and the kubelet of one node, in its mount namespace; carries out the control requests."""

    def __init__(self, node_dir):
        self.dir = Path(node_dir)
        self.node = json.loads((self.dir / 'node.json').read_text(encoding='utf-8'))
        self.procs = {}
        self.stopping = False
        self.reboots = 0

    def mount(self, *args):
        _run(['mount', *args])

    def set_up_namespace(self):
        """Mounts only this namespace sees (the host's table stays as it is)."""
        self.mount('--make-rshared', '/')
        for point in ('/run/containerd', NETNS_DIR):
            self.mount('-t', 'tmpfs', '-o', 'mode=0711', 'tmpfs', point)
        for source, target in (('skyhook-lib', '/var/lib/skyhook'), ('skyhook-log', '/var/log/skyhook'),
                               ('proof', '/var/lib/nodewright-proof'), ('container-logs', '/var/log/containers'),
                               ('boot_id', '/proc/sys/kernel/random/boot_id'), ('systemctl', '/usr/bin/systemctl'),
                               ('resolv.conf', '/etc/resolv.conf'), ('kubelet/root', KUBELET_ROOT),
                               # a package's host configuration lands in the node's own /etc/sysctl.d and
                               # /etc/containerd (a role package's files), and its sysctl reaches the shim
                               ('etc-sysctl.d', '/etc/sysctl.d'), ('etc-containerd', '/etc/containerd'),
                               ('systemctl', '/usr/sbin/sysctl')):
            self.mount('--bind', str(self.dir / source), target)
        for name in KUBELET_SYSCTLS:
            self.mount('--bind', str(self.dir / 'sysctl' / name.replace('/', '.')), f'/proc/sys/{name}')

    def start(self, name, argv):
        logf = open(self.dir / 'logs' / f'{name}.log', 'ab')  # pylint: disable=consider-using-with
        # a session of its own: a signal to the supervisor's group (launcher.down) reaches the supervisor only,
        # which stops the node in order
        self.procs[name] = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=logf, stderr=subprocess.STDOUT,  # pylint: disable=consider-using-with
                                            close_fds=True, start_new_session=True)
        logf.close()

    def boot(self):
        self.start('containerd', ['containerd', '--config', str(self.dir / 'containerd' / 'config.toml')])
        sock = Path(CONTAINERD_SOCKET)
        deadline = time.monotonic() + 60
        while not sock.exists():
            if self.procs['containerd'].poll() is not None or time.monotonic() > deadline:
                raise RealNodeError(f'containerd did not start (see {self.dir}/logs/containerd.log)')
            time.sleep(POLL)
        self.start('kubelet', kubelet_argv(self.node, self.node['kubelet']))
        log(f"{self.node['name']} booted, boot ID {(self.dir / 'boot_id').read_text(encoding='utf-8').strip()}")

    def stop(self, name, grace=10.0):
        proc = self.procs.pop(name, None)
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def descendants(self):
        """Pids below this process (the shims reparent to it: it is their subreaper)."""
        children = {}
        for entry in Path('/proc').iterdir():
            if entry.name.isdigit():
                try:
                    stat = (entry / 'stat').read_text(encoding='utf-8')
                except OSError:
                    continue
                children.setdefault(int(stat[stat.rindex(')') + 2:].split()[1]), []).append(int(entry.name))
        found, todo = [], [os.getpid()]
        while todo:
            for child in children.get(todo.pop(), []):
                found.append(child)
                todo.append(child)
        return found

    def reap(self):
        while True:
            try:
                pid, dummy = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return

    def shutdown(self):
        """What a power-off does to the node's processes: the kubelet, every container, containerd."""
        self.stop('kubelet', grace=5)
        for pid in cgroup_pids(self.node['cgroup_root']):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.stop('containerd', grace=10)
        for pid in self.descendants():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 10
        while self.descendants() and time.monotonic() < deadline:
            self.reap()
            time.sleep(0.05)

    def do_reboot(self):
        self.shutdown()
        # a fresh /run, as after a boot
        for point in ('/run/containerd', NETNS_DIR):
            _run(['umount', '-l', point], check=False)
            self.mount('-t', 'tmpfs', '-o', 'mode=0711', 'tmpfs', point)
        (self.dir / 'boot_id').write_text(str(uuid.uuid4()) + '\n', encoding='utf-8')
        self.reboots += 1
        self.boot()

    def handle(self, path):
        verb = path.read_text(encoding='utf-8').split()[0] if path.stat().st_size else path.name.split('.')[0]
        started = time.time()
        if verb == 'reboot':
            self.do_reboot()
        elif verb == 'stop-kubelet':
            self.stop('kubelet', grace=0.1)
        elif verb == 'start-kubelet' and 'kubelet' not in self.procs:
            self.start('kubelet', kubelet_argv(self.node, self.node['kubelet']))
        record = {'verb': verb, 'request': path.name, 'started': started, 'finished': time.time(),
                  'boot_id': (self.dir / 'boot_id').read_text(encoding='utf-8').strip(), 'reboots': self.reboots}
        path.unlink()
        with open(self.dir / 'control' / 'done.log', 'a', encoding='utf-8') as done:
            done.write(f'{verb} {json.dumps(record)}\n')

    def run(self):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        signal.signal(signal.SIGTERM, self.on_term)
        signal.signal(signal.SIGINT, self.on_term)
        self.set_up_namespace()
        self.boot()
        requests = self.dir / 'control' / 'requests'
        while not self.stopping:
            for path in sorted(requests.iterdir(), key=lambda p: p.stat().st_mtime):
                try:
                    self.handle(path)
                except Exception as exc:  # pylint: disable=broad-exception-caught
                    log(f'{path.name}: {exc}')
                    path.unlink(missing_ok=True)
            self.reap()
            time.sleep(POLL)
        self.shutdown()
        log(f"{self.node['name']} stopped")

    def on_term(self, signum, frame):
        del signum, frame
        self.stopping = True


def main(argv=None):
    args = sys.argv[1:] if argv is None else argv
    if len(args) == 2 and args[0] == 'supervise':
        sys.stderr = open(Path(args[1]) / 'logs' / 'supervisor.log', 'a', encoding='utf-8')  # pylint: disable=consider-using-with
        Supervisor(args[1]).run()
        return 0
    sys.stderr.write('usage: real_node.py supervise <node dir>\n')
    return 2


if __name__ == '__main__':
    sys.exit(main())
