# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""Every role has a README.md (Galaxy refuses an import without one) whose variables table is its argument spec.

Each row of the README's variables table is ``| `name` | type | default | description |``; the names must be
exactly the options of ``meta/argument_specs.yml`` (none missing, none extra or misspelt), each with the spec's type
(``list of str``, ``str (`a`, `b`)`` with choices) and default (``(none...)`` when the spec has none). The example
play must parse and use the role by its FQCN.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re

import pytest
import yaml

REPO_ROOT = os.path.realpath(os.path.join(os.path.dirname(__file__), '..', '..'))
ROLES_DIR = os.path.join(REPO_ROOT, 'roles')
ROLES = sorted(name for name in os.listdir(ROLES_DIR) if os.path.isdir(os.path.join(ROLES_DIR, name)))
ROW = re.compile(r'^\|\s*`(?P<name>[^`]+)`\s*\|(?P<type>[^|]*)\|(?P<default>[^|]*)\|(?P<description>[^|]*)\|\s*$')
YAML_BLOCK = re.compile(r'^```yaml\n(.*?)^```', re.M | re.S)


def _spec(role):
    with open(os.path.join(ROLES_DIR, role, 'meta', 'argument_specs.yml')) as handle:
        return yaml.safe_load(handle)['argument_specs']['main']['options']


def _readme(role):
    path = os.path.join(ROLES_DIR, role, 'README.md')
    assert os.path.isfile(path), 'roles/%s has no README.md (galaxy-importer fails with "No role readme found")' % role
    with open(path) as handle:
        return handle.read()


def readme_rows(text):
    """The variables table's rows: {name: (type, default, description)}, in the README's order; a name twice fails."""
    rows = {}
    for line in text.splitlines():
        match = ROW.match(line)
        if match:
            name = match.group('name')
            assert name not in rows, 'README.md lists %s twice' % name
            rows[name] = tuple(match.group(key).strip() for key in ('type', 'default', 'description'))
    return rows


def expected_type(option):
    text = option.get('type', 'str')
    if option.get('elements'):
        text += ' of %s' % option['elements']
    if option.get('choices'):
        text += ' (%s)' % ', '.join('`%s`' % choice for choice in option['choices'])
    return text


def default_matches(option, cell):
    if 'default' not in option:
        return cell.startswith('(none')
    value = option['default']
    if isinstance(value, bool):
        text = 'true' if value else 'false'
    elif isinstance(value, str):
        text = value if value else '""'
    else:
        text = json.dumps(value)
    return cell == '`%s`' % text


def table_problems(options, rows):
    """What is wrong with the README's table for these argument spec options (empty when it agrees)."""
    problems = ['%s: in the argument spec, not in README.md' % name for name in options if name not in rows]
    problems += ['%s: in README.md, not an option of the argument spec' % name for name in rows if name not in options]
    for name, option in options.items():
        if name not in rows:
            continue
        type_cell, default_cell, description = rows[name]
        if type_cell != expected_type(option):
            problems.append('%s: type %r in README.md, the spec says %r' % (name, type_cell, expected_type(option)))
        if not default_matches(option, default_cell):
            problems.append('%s: default %s in README.md, the spec says %r' % (name, default_cell, option.get('default')))
        if not description:
            problems.append('%s: no description in README.md' % name)
    return problems


def test_there_are_roles():
    assert ROLES == ['maintenance', 'node']


@pytest.mark.parametrize('role', ROLES)
def test_readme_variables_are_the_argument_spec(role):
    options = _spec(role)
    rows = readme_rows(_readme(role))
    assert rows, 'roles/%s/README.md has no variables table' % role
    assert table_problems(options, rows) == []


@pytest.mark.parametrize('role', ROLES)
def test_readme_example_uses_the_fqcn(role):
    blocks = YAML_BLOCK.findall(_readme(role))
    assert blocks, 'roles/%s/README.md has no yaml example' % role
    plays = yaml.safe_load(blocks[0])
    used = [entry['role'] for play in plays for entry in play.get('roles', [])]
    assert used == ['nodewright.bridge.%s' % role]


def test_a_drifted_table_is_caught():
    """The check itself: a missing, a misspelt, a retyped and a re-defaulted variable are each named."""
    options = {
        'nodewright_a': {'type': 'int', 'default': 600},
        'nodewright_b': {'type': 'list', 'elements': 'str', 'default': []},
        'nodewright_c': {'type': 'str', 'choices': ['x', 'y']},
        'nodewright_d': {'type': 'str', 'default': ''},
    }
    good = readme_rows('\n'.join([
        '| `nodewright_a` | int | `600` | Seconds. |',
        '| `nodewright_b` | list of str | `[]` | Names. |',
        '| `nodewright_c` | str (`x`, `y`) | (none) | One. |',
        '| `nodewright_d` | str | `""` | Text. |',
    ]))
    assert table_problems(options, good) == []
    bad = readme_rows('\n'.join([
        '| `nodewright_a` | str | `60` | Seconds. |',
        '| `nodewright_bb` | list of str | `[]` | Names. |',
        '| `nodewright_c` | str (`x`, `y`) | `x` | One. |',
        '| `nodewright_d` | str | `""` |  |',
    ]))
    assert table_problems(options, bad) == [
        'nodewright_b: in the argument spec, not in README.md',
        'nodewright_bb: in README.md, not an option of the argument spec',
        "nodewright_a: type 'str' in README.md, the spec says 'int'",
        'nodewright_a: default `60` in README.md, the spec says 600',
        "nodewright_c: default `x` in README.md, the spec says None",
        'nodewright_d: no description in README.md',
    ]
