# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""AWX's job path on an execution node, with the real tools: ansible-runner transmit | worker | process in podman.

What AWX does for a job (awx/main/tasks/jobs.py, receptor.py), and what is done here instead of the
database and receptor:

* **Private data dir**: ``project/`` (the project's checkout), ``inventory/hosts`` (an executable Python
  script printing the inventory's JSON, with the slice's hosts only), ``env/extravars``, ``env/settings``
  (``job_timeout``, ``suppress_ansible_output``), credential files under ``env/``.
* **Credential**: the "OpenShift or Kubernetes API Bearer Token" type injects ``K8S_AUTH_HOST``,
  ``K8S_AUTH_API_KEY``, ``K8S_AUTH_VERIFY_SSL`` and ``K8S_AUTH_SSL_CA_CERT`` (a file it writes, named by its
  path inside the container, ``/runner/env/...``).
* **Execution environment**: ``process_isolation`` with podman, ``container_options`` ``--user=root`` (AWX
  always) and ``--network=host`` (AWX's default is slirp4netns; the test API server listens on loopback).
* **The three steps**: ``ansible-runner transmit`` on the control node streams the private data dir and
  the job's settings; ``ansible-runner worker`` on the execution node runs it (here a subprocess in its
  own session, as receptor starts it) and streams events and the artifacts back; ``ansible-runner
  process`` on the control node turns the stream into events, artifacts, status and rc.
* **Cancel**: what ansible-runner does for AWX's cancel, ``podman kill`` of the job's container (SIGKILL
  to every process in it) and SIGKILL to the worker's process group.
* **Slicing**: ``JobTemplate.get_effective_slice_ct`` is ``min(job_slice_count, hosts)``, and slice k of
  n gets the inventory's hosts ordered by name, ``[k-1::n]`` (``Inventory.get_script_data``).
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import ansible_runner
import yaml

CONTAINER_ROOT = '/runner'


@dataclass
class BearerToken:
    """An AWX Kubernetes bearer-token credential: host, token and the CA it trusts."""
    host: str
    token: str
    ca_pem: bytes

    @classmethod
    def from_kubeconfig(cls, path):
        config = yaml.safe_load(Path(path).read_text())
        cluster = config['clusters'][0]['cluster']
        return cls(cluster['server'], config['users'][0]['user']['token'],
                   base64.b64decode(cluster['certificate-authority-data']))

    def inject(self, private_data_dir):
        """The job's environment as AWX's injector makes it; the CA file written under env/ (mode 0600)."""
        env_dir = Path(private_data_dir) / 'env'
        env_dir.mkdir(mode=0o700, exist_ok=True)
        ca_file = env_dir / 'tmp-k8s-ca'
        ca_file.write_bytes(self.ca_pem)
        ca_file.chmod(0o600)
        return {'K8S_AUTH_HOST': self.host, 'K8S_AUTH_API_KEY': self.token, 'K8S_AUTH_VERIFY_SSL': 'True',
                'K8S_AUTH_SSL_CA_CERT': f'{CONTAINER_ROOT}/env/{ca_file.name}'}


def effective_slice_count(job_slice_count, hosts):
    """AWX's rule: never more slices than the inventory has hosts."""
    return min(job_slice_count, len(hosts)) if hosts else job_slice_count


def slice_of(inventory, number, count):
    """The inventory slice ``number`` (1-based) of ``count`` gets: the hosts by name, every count-th from number-1,
    with their host variables and the groups cut to those hosts (an AWX job inventory)."""
    hostvars = inventory.get('_meta', {}).get('hostvars', {})
    names = sorted(hostvars)[number - 1::count]
    keep = set(names)
    data = {'_meta': {'hostvars': {name: hostvars[name] for name in names}}}
    for group, body in inventory.items():
        if group != '_meta' and isinstance(body, dict):
            data[group] = dict(body, hosts=[h for h in body['hosts'] if h in keep]) if 'hosts' in body else body
    return data


def inventory_script(data):
    """inventory/hosts as AWX writes it: a script printing the JSON."""
    return '#! /usr/bin/env python3\n# -*- coding: utf-8 -*-\nprint(%r)\n' % json.dumps(data)


def inventory_sync(image, podman_env, source_name, source_text, credential, workdir):
    """An inventory update in the EE, as AWX runs one (ansible-inventory --list on the source): the inventory's JSON."""
    work = Path(workdir)
    (work / 'inventory').mkdir(parents=True, exist_ok=True)
    (work / 'inventory' / source_name).write_text(source_text)
    env = credential.inject(work)
    cmd = ['podman', 'run', '--rm', '--user=root', '--network=host', '-v', f'{work}:{CONTAINER_ROOT}:Z', '--workdir', CONTAINER_ROOT]
    for key, value in env.items():
        cmd += ['-e', f'{key}={value}']
    cmd += [image, 'ansible-inventory', '-i', f'{CONTAINER_ROOT}/inventory/{source_name}', '--list']
    done = subprocess.run(cmd, env=podman_env, capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0:
        raise AssertionError(f'inventory sync failed (rc {done.returncode}): {done.stderr[-3000:]}')
    return json.loads(done.stdout)


@dataclass(repr=False)
class JobResult:
    """What AWX records of a job: status, rc, the job events, the artifacts dir (custom stats in artifact_data)."""
    ident: str
    status: str
    rc: int
    events: list
    artifacts: Path
    stdout: str
    worker_stderr: str
    duration: float

    def stats(self):
        """The playbook_on_stats event's data (AWX's job artifacts are its artifact_data)."""
        found = [e for e in self.events if e.get('event') == 'playbook_on_stats']
        return found[-1]['event_data'] if found else {}

    def __repr__(self):
        return (f'job {self.ident}: status {self.status}, rc {self.rc}, {len(self.events)} events\n'
                f'--- stdout (end) ---\n{self.stdout[-6000:]}\n--- worker stderr ---\n{self.worker_stderr[-3000:]}')


@dataclass
class AwxJob:
    """One AWX job (a slice of a sliced job) on one execution node; ``start()``, then ``finish()`` or ``cancel()``."""
    root: Path
    ident: str
    image: str
    podman_env: dict
    project: dict  # relative path -> text
    playbook: str
    inventory: dict
    extra_vars: dict
    credential: BearerToken
    job_timeout: int = 0
    worker: subprocess.Popen = None
    started: float = 0.0
    _stderr: list = field(default_factory=list)

    @property
    def container(self):
        """The name ansible-runner gives the job's container (what AWX's cancel kills)."""
        return f'ansible_runner_{self.ident}'

    def _private_data_dir(self):
        pdd = self.root / f'awx_{self.ident}'
        if pdd.exists():
            shutil.rmtree(pdd)
        for sub in ('project', 'inventory', 'env'):
            (pdd / sub).mkdir(parents=True, mode=0o700)
        for rel, text in self.project.items():
            path = pdd / 'project' / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        hosts = pdd / 'inventory' / 'hosts'
        hosts.write_text(inventory_script(self.inventory))
        hosts.chmod(0o700)
        (pdd / 'env' / 'extravars').write_text(yaml.safe_dump(self.extra_vars))
        (pdd / 'env' / 'settings').write_text(json.dumps(
            {'job_timeout': self.job_timeout, 'suppress_ansible_output': True, 'suppress_output_file': False}))
        return pdd

    def start(self):
        pdd = self._private_data_dir()
        env = {'JOB_ID': self.ident, 'AWX_PRIVATE_DATA_DIR': CONTAINER_ROOT}
        env.update(self.credential.inject(pdd))
        stream = self.root / f'awx_{self.ident}.transmit'
        with open(stream, 'wb') as out:
            # the control node's half: the job's files and settings into one stream (AWXReceptorJob.transmit)
            ansible_runner.interface.run(
                streamer='transmit', _output=out, private_data_dir=str(pdd), ident=self.ident, playbook=self.playbook,
                inventory=str(pdd / 'inventory' / 'hosts'), envvars=env, suppress_env_files=True,
                process_isolation=True, process_isolation_executable='podman', container_image=self.image,
                container_options=['--user=root', '--network=host'])
        worker_dir = self.root / f'awx_{self.ident}.worker'
        worker_dir.mkdir(exist_ok=True)
        runner = Path(sys.executable).with_name('ansible-runner')
        self.started = time.time()
        # receptor's work unit: `ansible-runner worker` reading the stream on stdin, in a session of its own
        self.worker = subprocess.Popen(  # pylint: disable=consider-using-with
            [str(runner), 'worker', '--private-data-dir', str(worker_dir)],
            stdin=open(stream, 'rb'), stdout=open(self.root / f'awx_{self.ident}.result', 'wb'),  # pylint: disable=consider-using-with
            stderr=subprocess.PIPE, env=dict(os.environ, **self.podman_env), start_new_session=True)
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        return self

    def _drain_stderr(self):
        for line in self.worker.stderr:
            self._stderr.append(line.decode(errors='replace'))

    def running(self):
        """Whether the job's container exists and runs (podman ps)."""
        done = subprocess.run(['podman', 'ps', '--filter', f'name=^{self.container}$', '--format', '{{.Names}}'],
                              env=dict(os.environ, **self.podman_env), capture_output=True, text=True, check=False)
        return self.container in done.stdout.split()

    def cancel(self):
        """AWX's cancel as ansible-runner carries it out: kill the container, then SIGKILL the worker's process group."""
        subprocess.run(['podman', 'kill', self.container], env=dict(os.environ, **self.podman_env),
                       capture_output=True, check=False, timeout=60)
        try:
            os.killpg(self.worker.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def finish(self, timeout):
        """Wait for the worker, then process its stream as the control node does: the job's JobResult."""
        try:
            self.worker.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.cancel()
            self.worker.wait(timeout=60)
        duration = time.time() - self.started
        process_dir = self.root / f'awx_{self.ident}.process'
        process_dir.mkdir(exist_ok=True)
        events = []
        with open(self.root / f'awx_{self.ident}.result', 'rb') as stream:
            runner = ansible_runner.interface.run(
                streamer='process', quiet=True, _input=stream, private_data_dir=str(process_dir), ident=self.ident,
                event_handler=lambda event: events.append(event) or True)
        artifacts = process_dir / 'artifacts' / self.ident
        # the processor's rc stays None on a stream that ends well; the worker's rc file (in the artifacts) has it
        rc = runner.rc if runner.rc is not None else _read_rc(artifacts)
        stdout = ''.join(e.get('stdout', '') + '\n' for e in events if e.get('stdout'))
        return JobResult(self.ident, runner.status, rc, events, artifacts, stdout, ''.join(self._stderr), duration)


def _read_rc(artifacts):
    try:
        return int((artifacts / 'rc').read_text().strip())
    except (OSError, ValueError):
        return None
