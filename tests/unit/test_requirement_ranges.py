# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""Every Python requirement range the collection states is requirements.txt's.

requirements.txt is the source (ansible-builder installs it into an execution environment through
meta/execution-environment.yml); the plugins' ``requirements`` (doc fragments included), the README, the
roles' READMEs and docs/ must state the same ranges, and the test pins must fall in them.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ast
import glob
import os
import re

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO_ROOT = os.path.realpath(os.path.join(os.path.dirname(__file__), '..', '..'))
# "kubernetes >= 29.0.0", "PyYAML>=5.4", "kubernetes==37.0.2": a package name, an operator, a version
STATED = re.compile(r'(?<![\w.-])(?P<name>[A-Za-z][A-Za-z0-9_.-]*)\s*(?P<op>>=|<=|==|~=|!=|>|<)\s*(?P<version>[0-9][0-9A-Za-z.*]*)')
TEXT_FILES = ('README.md', 'docs/*.md', 'docs/**/*.md', 'roles/*/README.md', 'meta/*.yml', 'galaxy.yml')


def _read(path):
    with open(os.path.join(REPO_ROOT, path)) as handle:
        return handle.read()


def requirements():
    """requirements.txt as {canonical name: specifier string}."""
    found = {}
    for line in _read('requirements.txt').splitlines():
        line = line.split('#', 1)[0].strip()
        if line:
            requirement = Requirement(line)
            found[canonicalize_name(requirement.name)] = str(requirement.specifier)
    return found


def stated_ranges(text, names):
    """(name, specifier) for each range of one of these packages stated in the text."""
    return [(canonicalize_name(m.group('name')), m.group('op') + m.group('version'))
            for m in STATED.finditer(text) if canonicalize_name(m.group('name')) in names]


def disagreements(where, text, wanted):
    return ['%s: %s%s, requirements.txt says %s%s' % (where, name, spec, name, wanted[name])
            for name, spec in stated_ranges(text, wanted) if spec != wanted[name]]


def plugin_docs():
    """{path: DOCUMENTATION parsed} of every plugin and doc fragment that has one."""
    docs = {}
    for path in sorted(glob.glob(os.path.join(REPO_ROOT, 'plugins', '*', '*.py'))):
        with open(path) as handle:
            tree = ast.parse(handle.read(), path)
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and any(getattr(t, 'id', None) == 'DOCUMENTATION' for t in node.targets):
                docs[os.path.relpath(path, REPO_ROOT)] = yaml.safe_load(node.value.value)
    return docs


def test_requirements_txt_is_ranges():
    assert requirements() == {'kubernetes': '>=29.0.0', 'pyyaml': '>=5.4'}


def test_the_execution_environment_installs_requirements_txt():
    assert yaml.safe_load(_read('meta/execution-environment.yml'))['dependencies']['python'] == 'requirements.txt'


def test_plugin_requirements_state_the_ranges():
    wanted = requirements()
    docs = plugin_docs()
    problems = []
    stating = set()
    for path, doc in docs.items():
        for item in doc.get('requirements', []):
            if stated_ranges(item, wanted):
                stating.add(path)
            problems += disagreements(path, item, wanted)
            # a versioned Python package that requirements.txt does not have is a requirement it misses
            problems += ['%s: %r is not in requirements.txt' % (path, m.group(0)) for m in STATED.finditer(item)
                         if canonicalize_name(m.group('name')) not in wanted]
    assert problems == []
    # the modules state them through the k8s_auth fragment; the inventory and the strategy on their own
    assert {'plugins/doc_fragments/k8s_auth.py', 'plugins/inventory/nodes.py', 'plugins/strategy/budgeted.py'} <= stating


def test_every_cluster_module_uses_the_fragment():
    docs = plugin_docs()
    modules = [path for path in docs if path.startswith('plugins/modules/')]
    without = [path for path in modules
               if 'nodewright.bridge.k8s_auth' not in docs[path].get('extends_documentation_fragment', [])
               and 'kube' in _read(path) and not docs[path].get('requirements')]
    assert modules and without == []


def test_text_docs_state_the_ranges():
    wanted = requirements()
    paths = sorted({os.path.relpath(p, REPO_ROOT) for pattern in TEXT_FILES
                    for p in glob.glob(os.path.join(REPO_ROOT, pattern), recursive=True)})
    problems = []
    for path in paths:
        problems += disagreements(path, _read(path), wanted)
    assert problems == []
    assert stated_ranges(_read('README.md'), wanted) == [('kubernetes', '>=29.0.0'), ('pyyaml', '>=5.4')]


def test_the_test_pins_are_in_the_ranges():
    pins = {}
    for line in _read('requirements-test.txt').splitlines():
        line = line.split('#', 1)[0].strip()
        if line:
            requirement = Requirement(line)
            pins[canonicalize_name(requirement.name)] = next(iter(requirement.specifier)).version
    for name, spec in requirements().items():
        assert Requirement(name + spec).specifier.contains(pins[name]), (name, pins[name], spec)


@pytest.mark.parametrize('text, expected', [
    ('kubernetes >= 24.2.0 (Python client)', ['x: kubernetes>=24.2.0, requirements.txt says kubernetes>=29.0.0']),
    ('PyYAML >= 3.11', ['x: pyyaml>=3.11, requirements.txt says pyyaml>=5.4']),
    ('pip install kubernetes==37.0.2', ['x: kubernetes==37.0.2, requirements.txt says kubernetes>=29.0.0']),
    ('kubernetes >= 29.0.0 (Python client), PyYAML>=5.4', []),
    ('ansible-core >= 2.16, k8s.io/kubernetes v1.35.4', []),
])
def test_a_drifted_range_is_caught(text, expected):
    assert disagreements('x', text, requirements()) == expected
