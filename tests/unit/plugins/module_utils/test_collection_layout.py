# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The collection's module_utils import as ansible_collections.nodewright.bridge.* from this checkout."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib
import os

import pytest

REPO_ROOT = os.path.realpath(os.path.join(os.path.dirname(__file__), '..', '..', '..', '..'))
MODULES = ('model.semver', 'model.label_selector', 'model.quantity', 'model.cr_schema', 'model.cr_model',
           'contract.node_annotations', 'planning.node_plan', 'planning.rollout_scheduler', 'planning.planner')


@pytest.mark.parametrize('name', MODULES)
def test_module_imports_from_this_checkout(name):
    module = importlib.import_module('ansible_collections.nodewright.bridge.plugins.module_utils.' + name)
    expected = os.path.join(REPO_ROOT, 'plugins', 'module_utils', *name.split('.')) + '.py'
    assert os.path.realpath(module.__file__) == expected


def test_packages_are_namespace_packages():
    # The repository has no __init__.py files: the import above works through implicit
    # namespace packages, which is what ansible-core's collection loader expects too.
    for rel in ('', 'plugins', os.path.join('plugins', 'module_utils')):
        assert not os.path.exists(os.path.join(REPO_ROOT, rel, '__init__.py')), rel
    package = importlib.import_module('ansible_collections.nodewright.bridge.plugins.module_utils')
    assert any(os.path.realpath(p) == os.path.join(REPO_ROOT, 'plugins', 'module_utils') for p in package.__path__)
