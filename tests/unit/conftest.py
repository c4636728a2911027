# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""Shared set-up for the unit tests.

The collection imports itself as ``ansible_collections.nodewright.bridge.…``. Under
``ansible-test units`` the collection already sits in such a tree; with plain
``pytest tests/unit`` it does not, so this file builds a throw-away
``<tmp>/ansible_collections/nodewright/bridge`` symlink to the repository root and puts
``<tmp>`` first on ``sys.path``. No ``__init__.py`` files are needed: ``ansible_collections``
and its children are implicit namespace packages.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import atexit
import importlib
import os
import sys
import tempfile

import pytest

REPO_ROOT = os.path.realpath(os.path.join(os.path.dirname(__file__), '..', '..'))
FIXTURES_DIR = os.path.join(REPO_ROOT, 'tests', 'unit', 'fixtures')
# The v0.15 skyhook.nvidia.com CRDs, then the v0.20 nodewright.nvidia.com ones in the v0.20/ subdirectory (its
# README says where each comes from); keyed by these paths, relative to crds_dir().
V020 = 'v0.20'
CRD_FILES = ('skyhook.nvidia.com_skyhooks.yaml', 'skyhook.nvidia.com_deploymentpolicies.yaml',
             V020 + '/nodewright.nvidia.com_nodewrights.yaml', V020 + '/nodewright.nvidia.com_deploymentpolicies.yaml')
V020_EXAMPLE = V020 + '/example-nodewright.yaml'


def _importable():
    """True when the collection imports, and from this checkout (not from some installed copy)."""
    try:
        module = importlib.import_module('ansible_collections.nodewright.bridge.plugins.module_utils.model.semver')
    except ImportError:
        return False
    return os.path.realpath(module.__file__) == os.path.join(REPO_ROOT, 'plugins', 'module_utils', 'model', 'semver.py')


def _forget_ansible_collections():
    for name in list(sys.modules):
        if name == 'ansible_collections' or name.startswith('ansible_collections.'):
            del sys.modules[name]
    importlib.invalidate_caches()


def _cleanup(tmp, link):
    # Remove only what was created here: the symlink (never its target), then the empty dirs.
    if os.path.islink(link):
        os.unlink(link)
    for path in (os.path.dirname(link), os.path.dirname(os.path.dirname(link)), tmp):
        try:
            os.rmdir(path)
        except OSError:
            pass


def _install_collection_path():
    if _importable():
        return None
    _forget_ansible_collections()
    tmp = tempfile.mkdtemp(prefix='nodewright-unit-')
    namespace_dir = os.path.join(tmp, 'ansible_collections', 'nodewright')
    os.makedirs(namespace_dir)
    link = os.path.join(namespace_dir, 'bridge')
    os.symlink(REPO_ROOT, link)
    atexit.register(_cleanup, tmp, link)
    sys.path.insert(0, tmp)
    importlib.invalidate_caches()
    if not _importable():
        raise ImportError('cannot import ansible_collections.nodewright.bridge from %s (linked to %s)' % (tmp, REPO_ROOT))
    return tmp


COLLECTION_PATH = _install_collection_path()


WORKPLACE_CRDS = '/work/shared/crds'


def crds_dir():
    """Directory of the upstream CRD files: $NODEWRIGHT_CRDS_DIR, <repo>/../shared/crds, or /work/shared/crds.

    The workplace keeps the CRDs (read-only data) beside the checkout; a clone made
    elsewhere (CI) still finds them at the workplace's fixed path. The v0.20 files are in
    its ``v0.20/`` subdirectory.
    """
    env = os.environ.get('NODEWRIGHT_CRDS_DIR')
    if env:
        return env
    beside = os.path.join(os.path.dirname(REPO_ROOT), 'shared', 'crds')
    if os.path.isdir(beside) or not os.path.isdir(WORKPLACE_CRDS):
        return beside
    return WORKPLACE_CRDS


@pytest.fixture(scope='session')
def crd_documents():
    """The upstream CRDs (CRD_FILES) as dicts, keyed by their path under crds_dir(); FAILS (not skips) when missing."""
    import yaml
    directory = crds_dir()
    docs = {}
    missing = [name for name in CRD_FILES if not os.path.isfile(os.path.join(directory, name))]
    if missing:
        pytest.fail('upstream CRD file(s) %s not found in %s; set NODEWRIGHT_CRDS_DIR to the directory holding '
                    'the NodeWright CRDs (operator/config/crd/bases)' % (', '.join(missing), directory))
    for name in CRD_FILES:
        with open(os.path.join(directory, name)) as handle:
            found = [d for d in yaml.safe_load_all(handle) if d]
        if len(found) != 1 or found[0].get('kind') != 'CustomResourceDefinition':
            pytest.fail('%s: expected exactly one CustomResourceDefinition document' % name)
        docs[name] = found[0]
    return docs


@pytest.fixture(scope='session')
def v020_example_documents():
    """The documents of the v0.20 example (a DeploymentPolicy and a NodeWright that a real API server accepted with
    the v0.20 CRDs), from crds_dir() as the CRDs; FAILS (not skips) when missing."""
    import yaml
    path = os.path.join(crds_dir(), V020_EXAMPLE)
    if not os.path.isfile(path):
        pytest.fail('%s not found; set NODEWRIGHT_CRDS_DIR to the directory holding the NodeWright CRDs' % path)
    with open(path) as handle:
        return [d for d in yaml.safe_load_all(handle) if d]


@pytest.fixture(scope='session')
def fixture_text():
    """Read a file of tests/unit/fixtures."""
    def read(name):
        with open(os.path.join(FIXTURES_DIR, name)) as handle:
            return handle.read()
    return read
