# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""One name, one meaning: the ``nodewright_*`` variables are inputs, or outputs listed in docs/variables.md.

docs/dev/architecture.md (Naming): variables users set start with ``nodewright_``, internal ones with ``nw_``. The
outputs (the inventory's host variables, documented results, custom stats) are listed in docs/variables.md. These
tests keep the code and that table in step.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import os
import re

import yaml

from ansible_collections.nodewright.bridge.plugins.module_utils.planning import inventory_groups
from ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout import play_phases
from ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout import rollout_config

ROOT = os.path.realpath(os.path.join(os.path.dirname(__file__), '..', '..'))
TABLE_ROW = re.compile(r'^\| `(nodewright_[a-z0-9_]+)` \| ([a-z, ]+) \|')
NAME = re.compile(r'\bnodewright_[a-z0-9_]+')
# what starts with nodewright_ in roles/ and playbooks/ and is not a variable: groups the playbooks make or name
GROUPS = re.compile(r'^nodewright_(apply|compartment_|state_|cr_)?$')


def _path(*parts):
    return os.path.join(ROOT, *parts)


def classes():
    """``{name: class}`` of the table in docs/variables.md."""
    found = {}
    with open(_path('docs', 'variables.md')) as handle:
        for line in handle:
            match = TABLE_ROW.match(line)
            if match:
                assert match.group(1) not in found, 'docs/variables.md lists %s twice' % match.group(1)
                found[match.group(1)] = match.group(2).strip()
    assert found, 'docs/variables.md has no table of nodewright_ variables'
    return found


def _task_files():
    patterns = ('roles/*/tasks/*.yml', 'roles/*/handlers/*.yml', 'playbooks/*.yml', 'playbooks/tasks/*.yml',
                'playbooks/plays/*.yml')
    return sorted(p for pattern in patterns for p in glob.glob(_path(pattern)))


def _tasks(node, found=None):
    """Every task (or play) dict under ``node``, blocks and rescue / always included."""
    found = [] if found is None else found
    if isinstance(node, list):
        for item in node:
            _tasks(item, found)
    elif isinstance(node, dict):
        found.append(node)
        for key in ('tasks', 'pre_tasks', 'post_tasks', 'handlers', 'block', 'rescue', 'always'):
            _tasks(node.get(key), found)
    return found


def _module_args(task, *modules):
    for module in modules:
        for name in (module, 'ansible.builtin.' + module):
            if isinstance(task.get(name), dict):
                return task[name]
    return None


def targets():
    """``[(file, name)]``: what the roles' and playbooks' tasks register, set_fact or set_stats."""
    found = []
    for path in _task_files():
        with open(path) as handle:
            data = yaml.safe_load(handle)
        rel = os.path.relpath(path, ROOT)
        for task in _tasks(data):
            if task.get('register'):
                found.append((rel, task['register']))
            facts = _module_args(task, 'set_fact')
            found.extend((rel, name) for name in (facts or {}) if name != 'cacheable')
            stats = _module_args(task, 'set_stats')
            found.extend((rel, name) for name in ((stats or {}).get('data') or {}))
    # the rendered playbook's template is not YAML: its registers and set_fact keys by text
    for path in glob.glob(_path('playbooks', 'templates', '*.j2')):
        with open(path) as handle:
            text = handle.read()
        rel = os.path.relpath(path, ROOT)
        found.extend((rel, name) for name in re.findall(r'^\s*register:\s*(\w+)', text, re.M))
        for block in re.findall(r'set_fact:\n((?:\s{8,}.*\n)+)', text):
            found.extend((rel, name) for name in re.findall(r'^\s{8}(\w+):', block, re.M))
    return found


def test_what_the_roles_and_playbooks_set_is_internal_or_a_documented_output():
    listed = classes()
    names = targets()
    assert ('roles/node/tasks/main.yml', 'nodewright_node_update') in names  # the scan finds them
    assert any(name == 'nw_plan' for rel, name in names)
    assert ('roles/maintenance/tasks/main.yml', 'nodewright_maintenance') in names
    assert ('playbooks/tasks/report.yml', 'nodewright_apply') in names
    assert ('playbooks/templates/cr_playbook.yml.j2', 'nw_to_update') in names
    wrong = ['%s: %s' % (rel, name) for rel, name in names
             if name.startswith('nodewright_') and not listed.get(name, '').startswith('output')]
    assert wrong == [], ('set_fact / register / set_stats targets named nodewright_ (inputs) that are not outputs in '
                         'docs/variables.md; name an internal nw_: %s' % wrong)
    odd = ['%s: %s' % (rel, name) for rel, name in names if not name.startswith(('nodewright_', 'nw_'))]
    assert odd == [], 'internal names start with nw_: %s' % odd


def test_every_role_option_is_an_input():
    listed = classes()
    for path in glob.glob(_path('roles', '*', 'meta', 'argument_specs.yml')):
        with open(path) as handle:
            specs = yaml.safe_load(handle)['argument_specs']
        for entry in specs.values():
            for name in entry.get('options') or {}:
                assert listed.get(name) == 'input', '%s: %s is not an input in docs/variables.md' % (path, name)


def test_the_strategys_variables_are_inputs():
    listed = classes()
    for name in rollout_config.PLAY_VARS + (rollout_config.HOSTVAR_COMPARTMENT, rollout_config.HOSTVAR_LABELS):
        assert listed.get(name) == 'input', name
    # what the strategy sets for the tasks to read
    assert listed[rollout_config.HOSTVAR_PHASE] == 'output' and listed['nodewright_rollout'] == 'output'
    assert play_phases.CUSTOM_STAT == 'nodewright_rollout'


def test_the_inventorys_host_variables_are_listed_facts_apart_from_inputs():
    listed = classes()
    assert listed[inventory_groups.FACTS_VAR] == 'output'
    for key, name in inventory_groups.FLAT_FACTS.items():
        assert listed.get(name) == 'output, deprecated', name
    # no host variable of the inventory is named as an input of another meaning (nodewright_cr, the CR documents)
    assert 'nodewright_cr' not in inventory_groups.FLAT_FACTS.values()
    for name in ('nodewright_node', 'nodewright_cr_name', 'nodewright_labels', 'nodewright_compartment'):
        assert listed[name] == 'input', name


def test_every_name_in_the_table_is_used_and_every_variable_is_in_it():
    listed = classes()
    used = set()
    for top in ('plugins', 'roles', 'playbooks'):
        for directory, dummy, files in os.walk(_path(top)):
            for name in files:
                if name.endswith(('.py', '.yml', '.yaml', '.j2', '.md')):
                    with open(os.path.join(directory, name)) as handle:
                        used.update(NAME.findall(handle.read()))
    used.update(inventory_groups.FLAT_FACTS.values())  # made from the facts' keys
    stale = sorted(set(listed) - used)
    assert stale == [], 'docs/variables.md lists names no code uses: %s' % stale
    # roles/ and playbooks/ hold only variables (and group names): each is in the table
    in_ansible = set()
    for path in _task_files() + glob.glob(_path('roles', '*', 'defaults', '*.yml')) + glob.glob(
            _path('playbooks', 'templates', '*.j2')):
        with open(path) as handle:
            in_ansible.update(NAME.findall(handle.read()))
    missing = sorted(n for n in in_ansible - set(listed) if not GROUPS.match(n))
    assert missing == [], 'nodewright_ names in roles/ and playbooks/ missing from docs/variables.md: %s' % missing
