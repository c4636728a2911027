# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""`molecule test` of molecule/default (the node role against a test cluster), in one of make test's kube shards.

The molecule venv (build/molecule-venv, requirements-molecule.txt) comes from tests/molecule_venv.sh: make test
builds it in the background while the shards run (tests/build-peers.sh), so this test mostly reuses it; the
script's lock makes it wait for a build under way. The scenario starts a 2-node cluster of its own (create.yml)
and stops it (destroy.yml); this test uses no `cluster` fixture. ANSIBLE_HOME is a fresh temporary directory, so
the collection molecule installs from the tree and the scenario's state never come from an earlier run.
Molecule's output is kept in build/artifacts/molecule/molecule.log and shown when it fails.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LOG = REPO / 'build' / 'artifacts' / 'molecule' / 'molecule.log'
# what a full `molecule test` run prints: each playbook of the scenario ran (idempotence: converge again, nothing changed)
EXPECTED = (
    'Create | start the test cluster',
    'Converge | the nodewright.bridge.node role, one node at a time',
    'Verify | the CR is complete on every node and the node is handed back',
    'Destroy | stop the test cluster',
) + tuple('default > %s: Executed: Successful' % action for action in ('create', 'converge', 'idempotence', 'verify', 'destroy'))


def _tail(text, lines=80):
    return '\n'.join(text.splitlines()[-lines:])


def test_molecule_default_scenario(tmp_path):
    built = subprocess.run([str(REPO / 'tests' / 'molecule_venv.sh')], capture_output=True, text=True, check=False)
    assert built.returncode == 0, 'tests/molecule_venv.sh failed:\n' + _tail(built.stdout + built.stderr)
    venv = Path(built.stdout.strip().splitlines()[-1])
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(('ANSIBLE_', 'MOLECULE_', 'K8S_AUTH_', 'NODEWRIGHT_')) and key != 'KUBECONFIG'}
    env.update(PATH='%s:%s' % (venv / 'bin', os.environ.get('PATH', '')), ANSIBLE_HOME=str(tmp_path / 'ansible-home'),
               ANSIBLE_NOCOLOR='1', NO_COLOR='1', PY_COLORS='0', ANSIBLE_FORCE_COLOR='0')
    started = time.monotonic()
    run = subprocess.run([str(venv / 'bin' / 'molecule'), 'test'], cwd=REPO, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, check=False, timeout=1200)
    LOG.parent.mkdir(parents=True, exist_ok=True)
    LOG.write_text(run.stdout)
    took = time.monotonic() - started
    assert run.returncode == 0, 'molecule test failed (exit %d after %.0f s, %s):\n%s' % (
        run.returncode, took, LOG, _tail(run.stdout))
    missing = [play for play in EXPECTED if play not in run.stdout]
    assert missing == [], 'molecule test passed without running %s:\n%s' % (missing, _tail(run.stdout))
    assert re.search(r'^default +: actions=7 +successful=7 .*failed=0', run.stdout, re.M), _tail(run.stdout)
