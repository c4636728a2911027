# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The folders of module_utils/ and plugin_utils/ are the architecture's layers, and imports flow one way between
them (issue 43, item 5; docs/dev/architecture.md draws the same table).

Read from the files' ASTs: a failure names the file, the line and the layer it may not import.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ast
import os

REPO_ROOT = os.path.realpath(os.path.join(os.path.dirname(__file__), '..', '..'))
PACKAGE = 'ansible_collections.nodewright.bridge.plugins.'

# (folder, layer) -> the layers its files may import. A layer may always import itself.
MODULE_UTILS = {
    'model': (),                                   # the CR, its fields and the two API generations' names: pure
    'contract': ('model',),                        # what the operator reads and writes, in its formats: pure
    'planning': ('model', 'contract'),             # what to do: plans, batches, budgets, gates, the CR's status: pure
    'api': ('model', 'contract'),                  # the only I/O: the Kubernetes API, a Pushgateway, the mailbox files
    'cluster_modules': ('model', 'contract', 'planning', 'api'),  # the modules' code, over all of the above
}
PLUGIN_UTILS = {
    'reporting': (),                               # the rollout's record and its timeline
    'rendering': (),                               # playbooks, YAML and images written from a plan
    'execution': (),                               # where a cluster task runs: worker, engine, thread
    'rollout': ('reporting', 'execution'),         # the budgeted strategy's runtime: admission, phases, the Lease
}
LAYERS = dict([(('module_utils', name), tuple(('module_utils', dep) for dep in deps))
               for name, deps in MODULE_UTILS.items()]
              + [(('plugin_utils', name), tuple(('plugin_utils', dep) for dep in deps)
                  # plugin_utils runs on the controller: all of module_utils is below it
                  + tuple(('module_utils', dep) for dep in MODULE_UTILS))
                 for name, deps in PLUGIN_UTILS.items()])


def _layer_of_module(dotted):
    """(folder, layer) of a collection module's dotted name, None outside module_utils and plugin_utils."""
    if not dotted.startswith(PACKAGE):
        return None
    parts = dotted[len(PACKAGE):].split('.')
    if parts[0] in ('module_utils', 'plugin_utils') and len(parts) > 1:
        return parts[0], parts[1]
    return None


def _imported_layers(path):
    """[(line, (folder, layer))] of every collection import in ``path``."""
    with open(path) as handle:
        tree = ast.parse(handle.read(), path)
    found = []
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + ['%s.%s' % (node.module, a.name) for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        layers = set(filter(None, (_layer_of_module(n) for n in names)))
        # ``from ...module_utils.api import kube`` names the layer twice (the package and the module): once is enough
        found.extend((node.lineno, layer) for layer in layers)
    return found


def _violations(folder, layer, path):
    allowed = set(LAYERS[(folder, layer)]) | {(folder, layer)}
    return ['%s:%d imports %s/%s (%s/%s may import only %s)' % (
        os.path.relpath(path, REPO_ROOT), line, used[0], used[1], folder, layer,
        ', '.join(sorted('/'.join(a) for a in allowed))) for line, used in _imported_layers(path) if used not in allowed]


def _python_files(folder):
    top = os.path.join(REPO_ROOT, 'plugins', folder)
    for name in sorted(os.listdir(top)):
        sub = os.path.join(top, name)
        if os.path.isdir(sub) and not name.startswith('__'):
            for current, dummy, files in os.walk(sub):
                for each in sorted(files):
                    if each.endswith('.py'):
                        yield name, os.path.join(current, each)


def test_every_file_of_module_utils_and_plugin_utils_is_in_a_layer():
    loose = []
    for folder in ('module_utils', 'plugin_utils'):
        top = os.path.join(REPO_ROOT, 'plugins', folder)
        for name in sorted(os.listdir(top)):
            path = os.path.join(top, name)
            if name.endswith('.py') or (os.path.isdir(path) and not name.startswith('__') and (folder, name) not in LAYERS):
                loose.append('plugins/%s/%s' % (folder, name))
    assert not loose, 'put these in a layer (and in LAYERS and docs/dev/architecture.md): %s' % loose


def test_imports_flow_one_way_between_the_layers():
    wrong = []
    for folder in ('module_utils', 'plugin_utils'):
        for layer, path in _python_files(folder):
            wrong.extend(_violations(folder, layer, path))
    assert not wrong, '\n'.join(wrong)


def test_the_layer_check_sees_an_import_the_wrong_way(tmp_path):
    # the check above must be able to fail: the contract importing the API, the model importing planning,
    # module_utils importing plugin_utils
    path = tmp_path / 'rules.py'
    path.write_text('from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube\n'
                    'from ansible_collections.nodewright.bridge.plugins.module_utils.model import stages\n'
                    'import ansible_collections.nodewright.bridge.plugins.module_utils.planning.planner\n'
                    'from ansible_collections.nodewright.bridge.plugins.plugin_utils.reporting.rollout_state import x\n')
    assert [v.split(' (')[0].split(':', 1)[1] for v in _violations('module_utils', 'contract', str(path))] == [
        '1 imports module_utils/api', '3 imports module_utils/planning', '4 imports plugin_utils/reporting']
    # the modules' code may import every layer of module_utils, never plugin_utils
    assert [v.split(' (')[0].split(':', 1)[1] for v in _violations('module_utils', 'cluster_modules', str(path))] == [
        '4 imports plugin_utils/reporting']


def test_the_layer_check_reads_the_collections_imports():
    # not vacuous: the files hold hundreds of imports between the layers, each one checked above
    seen = [used for folder in ('module_utils', 'plugin_utils') for dummy, path in _python_files(folder)
            for dummy, used in _imported_layers(path)]
    assert len(seen) > 250 and len(set(seen)) == len(LAYERS), (len(seen), sorted(set(seen)))
