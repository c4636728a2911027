# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""Run the collection's modules for real, as Ansible runs them: one Python process per call.

Each call writes ``{"ANSIBLE_MODULE_ARGS": ...}`` to a file and runs the module with it, the
way ansible-core runs a module after unpacking it (AnsiballZ): the real argument parsing,
check mode, diff and exit/fail JSON, talking to the real API server. The collection is put
on the path through a throw-away ``ansible_collections/nodewright/bridge`` symlink.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT / 'tests'))

# pylint: disable=wrong-import-position
from collection_path import link as link_collection  # noqa: E402  (test_inventory_nodes imports it from here)


class ModuleRunner:
    """``run('node_cordon', name=..., owner=...)`` -> the module's result dict."""

    def __init__(self, kubeconfig, workdir=None):
        self.kubeconfig = str(kubeconfig)
        self.root = link_collection(Path(workdir or tempfile.mkdtemp(prefix='nw-modules-')))
        self.calls = 0

    def _command(self, module, args, check, diff):
        self.calls += 1
        params = {'kubeconfig': self.kubeconfig}
        params.update(args)
        params['_ansible_check_mode'] = bool(check)
        params['_ansible_diff'] = bool(diff)
        params['_ansible_tmpdir'] = str(self.root)
        params['_ansible_remote_tmp'] = str(self.root)
        path = self.root / f'args-{os.getpid()}-{self.calls}.json'
        path.write_text(json.dumps({'ANSIBLE_MODULE_ARGS': params}))
        cmd = [sys.executable, '-m', f'ansible_collections.nodewright.bridge.plugins.modules.{module}', str(path)]
        env = dict(os.environ, PYTHONPATH=str(self.root))
        return cmd, env

    @staticmethod
    def _parse(module, proc_out, proc_err, code):
        # Modules print exactly one JSON document on stdout (exit_json / fail_json).
        text = proc_out.strip()
        try:
            result = json.loads(text[text.index('{'):]) if '{' in text else None
        except ValueError:
            result = None
        if result is None:
            raise AssertionError(f'{module} printed no result (rc={code})\nstdout: {proc_out}\nstderr: {proc_err}')
        result['rc'] = code
        return result

    def run(self, module, check=False, diff=False, run_timeout=600, **args):
        cmd, env = self._command(module, args, check, diff)
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=run_timeout, check=False)
        return self._parse(module, proc.stdout, proc.stderr, proc.returncode)

    def start(self, module, check=False, diff=False, **args):
        """Start a module in the background; ``finish(handle)`` waits for its result."""
        cmd, env = self._command(module, args, check, diff)
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        return module, proc

    def finish(self, handle, run_timeout=600):
        module, proc = handle
        out, err = proc.communicate(timeout=run_timeout)
        return self._parse(module, out, err, proc.returncode)


class PlaybookRunner:
    """Runs ``ansible-playbook`` for real (the collection on ANSIBLE_COLLECTIONS_PATH) against the test cluster.

    ``run('nodewright.bridge.apply', extra_vars={...})`` -> ``PlaybookResult`` with rc, stdout and
    the ``set_stats`` data; ``start(...)`` returns the process for tests that kill a run midway.

    ``kubeconfig`` is the identity playbooks run as; ``plan_kubeconfig`` the one of the read-only
    playbooks (PLAN_PLAYBOOKS), unless a call says ``identity='apply'`` / ``'plan'``. The user's own
    steps (a maintenance role's scripts) find the admin's in NODEWRIGHT_ADMIN_KUBECONFIG.
    """

    # The playbooks that only read (nodewright-bridge-plan is enough for them).
    PLAN_PLAYBOOKS = ('nodewright.bridge.plan', 'nodewright.bridge.render')

    def __init__(self, kubeconfig, workdir, plan_kubeconfig=None, admin_kubeconfig=None):
        self.kubeconfig = str(kubeconfig)
        self.plan_kubeconfig = str(plan_kubeconfig or kubeconfig)
        self.admin_kubeconfig = str(admin_kubeconfig or kubeconfig)
        self.root = link_collection(Path(workdir))
        self.calls = 0

    def kubeconfig_for(self, playbook, identity=None):
        if identity is None:
            identity = 'plan' if playbook in self.PLAN_PLAYBOOKS else 'apply'
        return {'apply': self.kubeconfig, 'plan': self.plan_kubeconfig, 'admin': self.admin_kubeconfig}[identity]

    # pylint: disable-next=too-many-arguments,too-many-positional-arguments
    def command(self, playbook, extra_vars=None, inventory=None, check=False, extra_args=(), cwd=None, identity=None):
        self.calls += 1
        kubeconfig = self.kubeconfig_for(playbook, identity)
        variables = {'nodewright_kubeconfig': kubeconfig}
        variables.update(extra_vars or {})
        stats = self.root / f'stats-{os.getpid()}-{self.calls}.json'
        cmd = [str(Path(sys.executable).with_name('ansible-playbook')), playbook, '-e', json.dumps(variables)]
        if inventory:
            cmd += ['-i', str(inventory)]
        if check:
            cmd.append('--check')
        cmd += list(extra_args)
        env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(self.root), ANSIBLE_FORCE_COLOR='0', ANSIBLE_NOCOLOR='1',
                   ANSIBLE_CALLBACKS_ENABLED='nodewright.bridge.rollout', NODEWRIGHT_REPORT=str(stats),
                   ANSIBLE_HOST_KEY_CHECKING='False', ANSIBLE_RETRY_FILES_ENABLED='False', ANSIBLE_FORKS='20',
                   ANSIBLE_LOCALHOST_WARNING='False', ANSIBLE_INVENTORY_UNPARSED_WARNING='False',
                   K8S_AUTH_KUBECONFIG=kubeconfig, NODEWRIGHT_ADMIN_KUBECONFIG=self.admin_kubeconfig)
        cwd = cwd or str(self.root)
        # Relative nodewright_cr paths are resolved from $PWD, as a shell would have set it.
        env['PWD'] = cwd
        return cmd, env, stats, cwd

    # pylint: disable-next=too-many-arguments,too-many-positional-arguments
    def run(self, playbook, extra_vars=None, inventory=None, check=False, extra_args=(), cwd=None, run_timeout=1200,
            identity=None):
        cmd, env, stats, cwd = self.command(playbook, extra_vars, inventory, check, extra_args, cwd, identity)
        proc = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=run_timeout, check=False)
        return PlaybookResult(proc.returncode, proc.stdout, proc.stderr, stats)

    def start(self, playbook, extra_vars=None, inventory=None, cwd=None, identity=None):
        cmd, env, stats, cwd = self.command(playbook, extra_vars, inventory, False, (), cwd, identity)
        # A process group of its own, so a test can kill ansible-playbook and its workers at once.
        return subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                start_new_session=True)


class PlaybookResult:
    """rc, stdout, stderr and the nodewright.bridge.rollout report (``report``, a dict or None)."""

    def __init__(self, rc, stdout, stderr, report_path):
        self.rc = rc
        self.stdout = stdout
        self.stderr = stderr
        self.report = json.loads(Path(report_path).read_text()) if Path(report_path).exists() else None

    def __repr__(self):
        # why it failed first: pytest shortens a long assertion message from the middle, and the tail is often
        # only warnings (seen: an interop handoff's rc 2 with nothing but a deprecation warning left to read)
        why = [line[:2000] for line in self.stdout.splitlines() + self.stderr.splitlines()
               if line.startswith(('fatal:', 'failed:', 'ERROR!', 'FAILED')) or 'UNREACHABLE' in line][:10]
        return (f'PlaybookResult(rc={self.rc})\n--- why ---\n' + '\n'.join(why) +
                f'\n--- stdout (tail) ---\n{self.stdout[-6000:]}\n--- stderr ---\n{self.stderr[-3000:]}')


class RunningPlaybook:
    """An ``ansible-playbook`` run in the background whose output is read as it comes (a full pipe
    would stall the run), for tests that act on the cluster or on the process while it runs.

    ``pid`` is ansible-playbook's (and its process group's: it leads a session of its own);
    ``finish()`` waits and returns the ``PlaybookResult``.
    """

    def __init__(self, runner, playbook, extra_vars=None, inventory=None, cwd=None):
        # pylint: disable-next=import-outside-toplevel
        import threading
        cmd, env, self.stats, cwd = runner.command(playbook, extra_vars, inventory, False, (), cwd)
        self.started = time.monotonic()
        self.proc = subprocess.Popen(  # pylint: disable=consider-using-with
            cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
        self.pid = self.proc.pid
        self.lines = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(line)

    @property
    def output(self):
        return ''.join(self.lines)

    def running(self):
        return self.proc.poll() is None

    def finish(self, timeout=600):
        """Wait for the run (killing its process group after timeout) and return its PlaybookResult."""
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.pid, 9)
            self.proc.wait()
        self.reader.join(timeout=10)
        self.duration = time.monotonic() - self.started
        return PlaybookResult(self.proc.returncode, self.output, '', self.stats)


def launch(runner, playbook, extra_vars=None, inventory=None, cwd=None):
    """``PlaybookRunner`` ``runner``'s ``playbook`` started in the background: a ``RunningPlaybook``."""
    return RunningPlaybook(runner, playbook, extra_vars, inventory, cwd)


@contextlib.contextmanager
def checkout_code(tmp_dir, *modules):
    """The collection's ``modules`` (e.g. ``'plugins.module_utils.api.kube'``) imported from this checkout, linked
    under ``tmp_dir`` as ansible_collections/nodewright/bridge; off sys.path again afterwards."""
    root = link_collection(tmp_dir)
    sys.path.insert(0, str(root))
    try:
        yield tuple(importlib.import_module('ansible_collections.nodewright.bridge.' + name) for name in modules)
    finally:
        sys.path.remove(str(root))
