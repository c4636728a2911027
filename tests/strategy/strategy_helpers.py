# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""Helpers for the strategy tests: inventories, plays, and running ``ansible-playbook``.

The collection is made importable through a throw-away ``<tmp>/ansible_collections/nodewright/bridge``
symlink to the repository root (ANSIBLE_COLLECTIONS_PATH, singular, is the only spelling 2.19+
accepts). ``ansible-playbook`` is the one next to the Python running pytest, so running pytest
from another virtualenv tests another ansible-core (see run_matrix.sh).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(os.path.dirname(HERE))
BIN_DIR = os.path.dirname(sys.executable)
DEFAULT = '__default__'


def import_collection():
    """Make ``ansible_collections.nodewright.bridge`` importable in this process (in-process tests)."""
    try:
        from ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout import rollout_config  # pylint: disable=unused-import
        return
    except ImportError:
        pass
    base = tempfile.mkdtemp(prefix='nw-strategy-tests-')
    os.makedirs(os.path.join(base, 'ansible_collections', 'nodewright'))
    os.symlink(REPO_ROOT, os.path.join(base, 'ansible_collections', 'nodewright', 'bridge'))
    sys.path.insert(0, base)
    for name in list(sys.modules):
        if name == 'ansible_collections' or name.startswith('ansible_collections.'):
            del sys.modules[name]


FAIL_TASKS = [
    {'name': 'work', 'ansible.builtin.debug': {'msg': 'working on {{ inventory_hostname }}'}},
    {'name': 'maybe fail', 'ansible.builtin.fail': {'msg': 'injected failure'},
     'when': 'inventory_hostname in (fail_hosts | default([]))'},
]


def core_version():
    out = subprocess.run([os.path.join(BIN_DIR, 'python'), '-c', 'import ansible; print(ansible.__version__)'],
                         stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout
    return tuple(int(p) for p in out.strip().split('.')[:2])


def hosts(count, prefix='n', start=1, **hostvars):
    return dict(('%s%02d' % (prefix, i), dict(hostvars)) for i in range(start, start + count))


def inventory(host_map, **group_vars):
    variables = {'ansible_connection': 'local', 'ansible_python_interpreter': '{{ ansible_playbook_python }}'}
    variables.update(group_vars)
    return {'all': {'hosts': host_map, 'vars': variables}}


def budgeted_play(tasks=None, name='rollout', hosts_pattern='all', **play_vars):
    """A budgeted play; keyword arguments become play vars (nodewright_policy, fail_hosts, ...)."""
    play = {'name': name, 'hosts': hosts_pattern, 'gather_facts': False,
            'strategy': 'nodewright.bridge.budgeted', 'vars': play_vars,
            'tasks': FAIL_TASKS if tasks is None else tasks}
    return play


def policy(budget, strategy=None, compartments=None):
    spec = {'default': {'budget': budget, 'strategy': strategy or {'fixed': {}}}}
    if compartments:
        spec['compartments'] = compartments
    return spec


class Run(object):
    def __init__(self, proc, report_path, recorder_path, workdir):
        self.rc = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        self.workdir = workdir
        self.report = None
        if os.path.exists(report_path):
            with open(report_path) as handle:
                self.report = json.load(handle)
        self.events = []
        if os.path.exists(recorder_path):
            with open(recorder_path) as handle:
                self.events = [json.loads(line) for line in handle if line.strip()]
        # how many processes ansible-playbook forked (the recorder's last line), apart from the runner events
        self.forks = [e['count'] for e in self.events if e['event'] == 'forks']
        self.events = [e for e in self.events if e['event'] != 'forks']

    @property
    def output(self):
        return self.stdout + self.stderr

    @property
    def flat(self):
        """stdout + stderr with whitespace runs collapsed (warnings wrap lines before 2.19)."""
        return ' '.join(self.output.split())

    def compartment(self, name=DEFAULT):
        return self.report['compartments'][name]

    def batches(self, name=DEFAULT):
        return [b['hosts'] for b in self.compartment(name)['batches']]

    def sizes(self, name=DEFAULT):
        return [b['size'] for b in self.compartment(name)['batches']]

    def hosts_with_events(self, play=None):
        return set(e['host'] for e in self.events if play is None or e['play'] == play)

    def first(self, host, event='start', play=None):
        times = [e['time'] for e in self.events if e['host'] == host and e['event'] == event
                 and (play is None or e['play'] == play)]
        return min(times) if times else None

    def last(self, host, play=None):
        times = [e['time'] for e in self.events if e['host'] == host and e['event'] != 'start'
                 and (play is None or e['play'] == play)]
        return max(times) if times else None

    def __repr__(self):
        return 'rc=%s\n--- stdout\n%s\n--- stderr\n%s' % (self.rc, self.stdout[-6000:], self.stderr[-3000:])


def ansible_env(collections_dir, workdir, **extra):
    env = dict(os.environ)
    for key in list(env):
        if key.startswith('ANSIBLE_') or key in ('NODEWRIGHT_REPORT', 'NW_RECORDER'):
            del env[key]
    env.update({
        'ANSIBLE_COLLECTIONS_PATH': collections_dir,
        'ANSIBLE_COLLECTIONS_SCAN_SYS_PATH': 'false',
        'ANSIBLE_HOME': os.path.join(workdir, 'ansible-home'),
        'ANSIBLE_LOCAL_TEMP': os.path.join(workdir, 'ansible-tmp'),
        'ANSIBLE_RETRY_FILES_ENABLED': 'false',
        'ANSIBLE_NOCOLOR': '1',
        'ANSIBLE_HOST_KEY_CHECKING': 'false',
        'ANSIBLE_CALLBACK_PLUGINS': os.path.join(HERE, 'callback_plugins'),
        'ANSIBLE_CALLBACKS_ENABLED': 'nodewright.bridge.rollout,nw_recorder',
        'ANSIBLE_STDOUT_CALLBACK': 'default',
        'PATH': BIN_DIR + os.pathsep + env.get('PATH', ''),
    })
    env.update(extra)
    return env
