# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""Every module's and plugin's DOCUMENTATION, EXAMPLES and RETURN are valid YAML of the right shape.

ansible-test sanity (validate-modules, yamllint) finds the same faults, but only in CI's lint stage,
minutes in; a plain scalar with ": " in it (C(sequencing: all)) breaks a whole module's docs. This
reads the strings from the source (no import), so it runs in the unit suite in well under a second.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ast
import glob
import os

import pytest
import yaml

REPO_ROOT = os.path.realpath(os.path.join(os.path.dirname(__file__), '..', '..', '..', '..'))
DOCUMENTED = ('modules', 'strategy', 'inventory', 'callback', 'filter', 'doc_fragments')
DOC_NAMES = ('DOCUMENTATION', 'EXAMPLES', 'RETURN')


def _sources():
    found = []
    for kind in DOCUMENTED:
        found.extend(sorted(glob.glob(os.path.join(REPO_ROOT, 'plugins', kind, '*.py'))))
    return found


def _doc_strings(path):
    """Module-level and class-level (doc fragments) string assignments named like docs."""
    with open(path) as handle:
        tree = ast.parse(handle.read(), path)
    strings = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assign) or not isinstance(node.value, ast.Constant):
            continue
        for target in node.targets:
            name = getattr(target, 'id', None)
            if not isinstance(node.value.value, str) or not name:
                continue
            # A doc fragment may name its blocks freely (DOCUMENTATION, POD_OPTIONS...), all upper case.
            if name in DOC_NAMES or (name.isupper() and '/doc_fragments/' in path):
                strings[name] = node.value.value
    return strings


def _rel(path):
    return os.path.relpath(path, REPO_ROOT)


SOURCES = _sources()


def test_there_are_documented_plugins():
    assert len([p for p in SOURCES if '/modules/' in p]) >= 10


@pytest.mark.parametrize('path', SOURCES, ids=_rel)
def test_docs_parse_as_yaml(path):
    strings = _doc_strings(path)
    if '/filter/' in path and 'DOCUMENTATION' not in strings:
        # Filter docs may live beside the plugin as <name>.yml; then check that file.
        sidecar = path[:-3] + '.yml'
        assert os.path.exists(sidecar), '%s has neither DOCUMENTATION nor %s' % (_rel(path), _rel(sidecar))
        with open(sidecar) as handle:
            assert isinstance(yaml.safe_load(handle), dict), _rel(sidecar)
        return
    assert strings, '%s has no DOCUMENTATION' % _rel(path)
    for name, text in strings.items():
        try:
            # An inventory plugin's EXAMPLES are several inventory files, one YAML document each.
            loaded = list(yaml.safe_load_all(text)) if name == 'EXAMPLES' else yaml.safe_load(text)
        except yaml.YAMLError as exc:
            pytest.fail('%s %s is not valid YAML: %s' % (_rel(path), name, exc))
        if name == 'EXAMPLES':
            assert all(doc is None or isinstance(doc, (list, dict)) for doc in loaded), _rel(path)
        else:
            assert isinstance(loaded, dict), '%s %s is not a mapping' % (_rel(path), name)


@pytest.mark.parametrize('path', [p for p in SOURCES if '/modules/' in p], ids=_rel)
def test_modules_carry_all_three(path):
    strings = _doc_strings(path)
    missing = [name for name in DOC_NAMES if name not in strings]
    assert not missing, '%s lacks %s' % (_rel(path), ', '.join(missing))
    documentation = yaml.safe_load(strings['DOCUMENTATION'])
    assert documentation.get('short_description'), _rel(path)
    for option, spec in (documentation.get('options') or {}).items():
        assert spec.get('description'), '%s option %s has no description' % (_rel(path), option)


def test_the_strategys_documented_variables_are_the_ones_it_reads():
    from ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout import rollout_config  # pylint: disable=import-outside-toplevel
    from ansible_collections.nodewright.bridge.plugins.module_utils.planning import rollout_gates  # pylint: disable=import-outside-toplevel
    doc = yaml.safe_load(_doc_strings(os.path.join(REPO_ROOT, 'plugins', 'strategy', 'budgeted.py'))['DOCUMENTATION'])
    options = doc['options']
    documented = set(v['name'] for option in options.values() for v in option['vars'])
    assert documented == set(rollout_config.PLAY_VARS) | set(('nodewright_kubeconfig', 'nodewright_context'))
    assert all([v['name'] for v in option['vars']][0] == name for name, option in options.items())
    # the choices and defaults are the parser's
    assert options['nodewright_admission']['choices'] == list(rollout_config.ADMISSIONS)
    assert options['nodewright_order']['choices'] == sorted(rollout_config.ORDERS)
    assert options['nodewright_maintenance_action']['choices'] == list(rollout_gates.WINDOW_ACTIONS)
    assert options['nodewright_maintenance_timeout']['default'] == rollout_gates.DEFAULT_WINDOW_TIMEOUT
    deprecated = [v for v in options['nodewright_admission']['vars'] if v.get('deprecated')]
    assert [v['name'] for v in deprecated] == [rollout_config.VAR_WINDOW]


def test_rollout_plans_return_documents_every_key_it_returns():
    """Every key of a plan (module_utils' rollout_plan.run) is in the module's RETURN, and each node's keys are named
    in the description of RV(nodes): a key added to the plan fails here until it is documented."""
    # pylint: disable-next=import-outside-toplevel
    from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import rollout_plan
    cr = {'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'Skyhook', 'metadata': {'name': 'demo'},
          'spec': {'nodeSelectors': {'matchLabels': {}}, 'interruptionBudget': {'count': 1},
                   'packages': {'tuning': {'version': '1.0.0', 'image': 'ghcr.io/x/tuning', 'interrupt': {'type': 'reboot'}}}}}
    params = dict((k, None) for k in rollout_plan.module_args()['argument_spec'])
    params.update(cr=cr, nodes=[{'name': 'n1', 'labels': {}}], node_order='name', cap_batches_at_ceiling=True,
                  require_crd=False, nodewright_api='auto')
    plan = rollout_plan.run(params, lambda text: None)
    returned = yaml.safe_load(_doc_strings(os.path.join(REPO_ROOT, 'plugins', 'modules', 'rollout_plan.py'))['RETURN'])
    assert sorted(set(plan) - set(returned)) == []
    node_doc = ' '.join(returned['nodes']['description'])
    assert sorted(k for k in plan['nodes']['n1'] if 'C(%s)' % k not in node_doc) == []


@pytest.mark.parametrize('path', [p for p in SOURCES if '/doc_fragments/' not in p and '/filter/' not in p], ids=_rel)
def test_every_module_and_plugin_has_examples(path):
    assert 'EXAMPLES' in _doc_strings(path), '%s has no EXAMPLES' % _rel(path)


# the filters a user's own playbooks may use; every other one says it is the collection's playbooks' own
PUBLIC_FILTERS = ('nodes_left', 'to_nodewright', 'to_skyhook')


@pytest.mark.parametrize('path', [p for p in SOURCES if '/filter/' in p], ids=_rel)
def test_a_filter_is_public_or_says_it_is_internal(path):
    doc = yaml.safe_load(_doc_strings(path)['DOCUMENTATION'])
    internal = any('not a stable interface' in line for line in doc['description'])
    assert internal == (doc['name'] not in PUBLIC_FILTERS), (_rel(path), doc['description'][0])
