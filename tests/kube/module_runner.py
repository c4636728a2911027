# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""Run the collection's modules for real, as Ansible runs them: one Python process per call.

Each call writes ``{"ANSIBLE_MODULE_ARGS": ...}`` to a file and runs the module with it, the
way ansible-core runs a module after unpacking it (AnsiballZ): the real argument parsing,
check mode, diff and exit/fail JSON, talking to the real API server. The collection is put
on the path through a throw-away ``ansible_collections/nodewright/bridge`` symlink.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


class ModuleRunner:
    """``run('node_cordon', name=..., owner=...)`` -> the module's result dict."""

    def __init__(self, kubeconfig, workdir=None):
        self.kubeconfig = str(kubeconfig)
        self.root = Path(workdir or tempfile.mkdtemp(prefix='nw-modules-'))
        link = self.root / 'ansible_collections' / 'nodewright' / 'bridge'
        link.parent.mkdir(parents=True, exist_ok=True)
        if not link.exists():
            link.symlink_to(REPO_ROOT)
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
