# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""Fixtures for the strategy tests (helpers live in strategy_helpers.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import subprocess

import pytest
import yaml

from strategy_helpers import BIN_DIR, REPO_ROOT, Run, ansible_env


@pytest.fixture(scope='session')
def collections_dir(tmp_path_factory):
    base = tmp_path_factory.mktemp('collections')
    os.makedirs(str(base / 'ansible_collections' / 'nodewright'))
    os.symlink(REPO_ROOT, str(base / 'ansible_collections' / 'nodewright' / 'bridge'))
    return str(base)


@pytest.fixture
def run_playbook(tmp_path, collections_dir):
    """run_playbook(plays, inventory, args=(), env=None, forks=10) -> Run."""
    counter = [0]

    def runner(plays, inv, args=(), env=None, forks=10, files=None):
        counter[0] += 1
        workdir = str(tmp_path / ('run%d' % counter[0]))
        os.makedirs(workdir)
        for rel, content in (files or {}).items():
            os.makedirs(os.path.dirname(os.path.join(workdir, rel)), exist_ok=True)
            with open(os.path.join(workdir, rel), 'w') as handle:
                handle.write(content if isinstance(content, str) else yaml.safe_dump(content))
        playbook = os.path.join(workdir, 'playbook.yml')
        with open(playbook, 'w') as handle:
            yaml.safe_dump(plays, handle, sort_keys=False)
        inv_path = os.path.join(workdir, 'inventory.yml')
        with open(inv_path, 'w') as handle:
            yaml.safe_dump(inv, handle, sort_keys=False)
        report = os.path.join(workdir, 'report.json')
        recorder = os.path.join(workdir, 'events.jsonl')
        run_env = ansible_env(collections_dir, workdir, NODEWRIGHT_REPORT=report, NW_RECORDER=recorder)
        run_env.update(env or {})
        cmd = [os.path.join(BIN_DIR, 'ansible-playbook'), '-i', inv_path, '-f', str(forks), playbook] + list(args)
        proc = subprocess.run(cmd, cwd=workdir, env=run_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=300, check=False)
        return Run(proc, report, recorder, workdir)

    return runner
