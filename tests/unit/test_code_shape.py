# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The shape the code keeps (issue 12): short functions, short Jinja, private module_utils.

These are read from the files as text and ASTs; they fail with the place to fix.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ast
import os
import re

import pytest

REPO_ROOT = os.path.realpath(os.path.join(os.path.dirname(__file__), '..', '..'))
MAX_FUNCTION_LINES = 60
# the budgeted strategy only hooks the stock loop (plugin_utils/rollout/play_phases.py and admission.py hold the rest):
# its code, without DOCUMENTATION, stays this short
MAX_STRATEGY_CODE_LINES = 300
MAX_JINJA_CHARS = 150
PRIVATE_MARK = 'PRIVATE to the collection nodewright.bridge'
JINJA = re.compile(r'\{\{.*?\}\}|\{%.*?%\}', re.S)


def _files(top, suffixes):
    for folder, _subfolders, names in os.walk(os.path.join(REPO_ROOT, top)):
        for name in sorted(names):
            if name.endswith(suffixes):
                yield os.path.join(folder, name)


def _functions(path):
    with open(path) as handle:
        tree = ast.parse(handle.read(), path)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node.name, node.lineno, node.end_lineno - node.lineno + 1


def test_every_function_of_the_plugins_is_shorter_than_the_limit():
    long_ones = ['%s:%d %s (%d lines)' % (os.path.relpath(path, REPO_ROOT), line, name, length)
                 for path in _files('plugins', ('.py',))
                 for name, line, length in _functions(path) if length > MAX_FUNCTION_LINES]
    assert not long_ones, 'split these functions (%d lines at most each): %s' % (MAX_FUNCTION_LINES, long_ones)


def test_the_strategy_is_a_thin_adapter():
    with open(os.path.join(REPO_ROOT, 'plugins', 'strategy', 'budgeted.py')) as handle:
        text = handle.read()
    tree = ast.parse(text)
    doc = [n for n in tree.body if isinstance(n, ast.Assign) and [t.id for t in n.targets] == ['DOCUMENTATION']]
    code_lines = text.count('\n') - (doc[0].end_lineno - doc[0].lineno + 1)
    assert code_lines <= MAX_STRATEGY_CODE_LINES, 'the strategy has %d lines of code besides DOCUMENTATION' % code_lines
    # the loop is the stock one, of the instance's own class: never swapped at run time
    assert '__class__' not in text


@pytest.mark.parametrize('top', ['playbooks', 'roles'])
def test_no_jinja_expression_is_longer_than_the_limit(top):
    long_ones = []
    for path in _files(top, ('.yml', '.yaml', '.j2')):
        with open(path) as handle:
            text = handle.read()
        for match in JINJA.finditer(text):
            flat = ' '.join(match.group(0).split())
            if len(flat) > MAX_JINJA_CHARS:
                line = text.count('\n', 0, match.start()) + 1
                long_ones.append('%s:%d (%d characters)' % (os.path.relpath(path, REPO_ROOT), line, len(flat)))
    assert not long_ones, 'move this logic into Python (a filter or a module result): %s' % long_ones


# ansible-test's pep8 and ansible-lint's yamllint both stop at 160; checked here so a long line fails in
# seconds, not minutes into CI's lint and sanity stages.
MAX_LINE_CHARS = 160


@pytest.mark.parametrize('top', ['plugins', 'playbooks', 'roles', 'tests'])
def test_no_line_is_longer_than_the_linters_allow(top):
    long_ones = []
    for path in _files(top, ('.py', '.yml', '.yaml')):
        if os.sep + 'build' + os.sep in path:
            continue
        with open(path) as handle:
            for number, line in enumerate(handle, 1):
                if len(line.rstrip('\n')) > MAX_LINE_CHARS:
                    long_ones.append('%s:%d' % (os.path.relpath(path, REPO_ROOT), number))
    assert not long_ones, 'wrap these lines (%d characters at most): %s' % (MAX_LINE_CHARS, long_ones)


@pytest.mark.parametrize('top', ['plugins', 'tests'])
def test_no_name_is_the_one_sanitys_pylint_disallows(top):
    # ansible-test sanity's pylint refuses the name "_" (disallowed-name); found here in seconds
    found = []
    for path in _files(top, ('.py',)):
        if os.sep + 'build' + os.sep in path:
            continue
        with open(path) as handle:
            tree = ast.parse(handle.read(), path)
        found.extend('%s:%d' % (os.path.relpath(path, REPO_ROOT), node.lineno) for node in ast.walk(tree)
                     if isinstance(node, ast.Name) and node.id == '_')
    assert not found, 'name these (unused, dummy...) instead of "_": %s' % found


def test_every_internal_python_file_says_it_is_private():
    unmarked = []
    for top in ('plugins/module_utils', 'plugins/plugin_utils'):
        for path in _files(top, ('.py',)):
            with open(path) as handle:
                text = handle.read()
            if text.strip() and PRIVATE_MARK not in text:
                unmarked.append(os.path.relpath(path, REPO_ROOT))
    assert not unmarked, 'add the PRIVATE note under the licence lines of: %s' % unmarked


def test_the_limits_catch_what_they_are_for(tmp_path):
    # the measures above must be able to fail: a long function and a long expression are seen
    source = tmp_path / 'long.py'
    source.write_text('def f():\n' + '    x = 1\n' * MAX_FUNCTION_LINES)
    assert [length for _name, _line, length in _functions(str(source))] == [MAX_FUNCTION_LINES + 1]
    assert len(' '.join(JINJA.search('a: "{{ %s }}"' % ('x' * MAX_JINJA_CHARS)).group(0).split())) > MAX_JINJA_CHARS


# The pure modules whose functions take the API generation (``gen``, default SKYHOOK: the v0.15 keys), and the
# callers that know the cluster's generation and so must say which one (issue 25): a call that leaves ``gen`` out
# would write skyhook.nvidia.com keys on a v0.18+ cluster.
GEN_PACKAGES = {'node_annotations': 'contract', 'node_conditions': 'contract', 'pod_layout': 'contract', 'pod_run': 'api',
                'status_rollup': 'planning', 'cr_deletion': 'contract', 'planner': 'planning', 'operator_presence': 'contract',
                'job_layout': 'contract', 'inventory_groups': 'planning', 'job_run': 'api', 'drain_config': 'contract',
                'stale_pods': 'contract'}
GEN_MODULES = tuple(GEN_PACKAGES)
GEN_CALLERS = ('plugins/module_utils/cluster_modules', 'plugins/plugin_utils', 'plugins/strategy', 'plugins/inventory')


def _gen_positions():
    """{(module, function): the index of its ``gen`` parameter} for the functions of GEN_MODULES that take one."""
    import importlib  # pylint: disable=import-outside-toplevel
    import inspect  # pylint: disable=import-outside-toplevel
    found = {}
    for name in GEN_MODULES:
        module = importlib.import_module('ansible_collections.nodewright.bridge.plugins.module_utils.%s.%s' % (GEN_PACKAGES[name], name))
        for attr, value in vars(module).items():
            if inspect.isfunction(value) and value.__module__ == module.__name__:
                params = list(inspect.signature(value).parameters)
                if 'gen' in params:
                    found[(name, attr)] = params.index('gen')
    return found


def _calls_without_gen(path, positions, aliases=None):
    with open(path) as handle:
        tree = ast.parse(handle.read(), path)
    aliases = dict((name, name) for name in GEN_MODULES) if aliases is None else aliases
    functions = {}  # a function imported by name: ``from ...module_utils.planning.planner import plan_rollout``
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom) or not node.module:
            continue
        if node.module.rsplit('.', 1)[-1] in GEN_MODULES:
            functions.update((a.asname or a.name, (node.module.rsplit('.', 1)[-1], a.name)) for a in node.names)
        elif '.module_utils' in node.module:
            aliases.update((a.asname or a.name, a.name) for a in node.names if a.name in GEN_MODULES)
    missing = []
    for node in ast.walk(tree):
        func = getattr(node, 'func', None)
        if isinstance(node, ast.Call) and isinstance(func, ast.Name) and func.id in functions:
            key = functions[func.id]
        elif isinstance(node, ast.Call) and isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            key = (aliases.get(func.value.id), func.attr)
        else:
            continue
        if key not in positions:
            continue
        if len(node.args) <= positions[key] and not any(k.arg in ('gen', None) for k in node.keywords):
            missing.append('%s:%d %s.%s' % (os.path.relpath(path, REPO_ROOT), node.lineno, key[0], key[1]))
    return missing


def test_every_caller_that_knows_the_clusters_generation_passes_it():
    positions = _gen_positions()
    assert ('node_annotations', 'status_key') in positions and ('pod_layout', 'stage_pod') in positions
    missing = [m for top in GEN_CALLERS for path in _files(top, ('.py',)) for m in _calls_without_gen(path, positions)]
    assert not missing, 'pass gen= (kube.generation, the plan\'s api_generation) in: %s' % missing


def test_the_generation_check_finds_a_call_that_leaves_it_out(tmp_path):
    path = tmp_path / 'caller.py'
    path.write_text('from x.module_utils.contract import node_annotations\n'
                    'from x.module_utils.planning.planner import plan_rollout\n'
                    'a = node_annotations.status_key("cr")\n'
                    'b = node_annotations.status_key("cr", gen)\n'
                    'c = node_annotations.cordon_owners(annotations, gen=gen)\n'
                    'd = plan_rollout(cr, nodes, policy=policy)\n')
    assert [m.split(' ', 1)[1] for m in _calls_without_gen(str(path), _gen_positions(), aliases={})] == [
        'node_annotations.status_key', 'planner.plan_rollout']
