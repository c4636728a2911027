# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""This checkout as ``ansible_collections.nodewright.bridge``, for the test suites that run outside one.

``link(root)`` makes ``root`` a collections path (a symlink ``ansible_collections/nodewright/bridge``
to the checkout) for the Ansible runs a test starts; ``importable()`` makes the collection
importable in the test process itself, from this checkout, through such a link in a throw-away
directory. tests/unit has its own copy of the latter because ``ansible-test units`` may run it
from inside a collection tree, where this file is not beside it.
"""

from __future__ import annotations

import atexit
import importlib
import shutil
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
_PROBE = 'ansible_collections.nodewright.bridge.plugins.module_utils.model.semver'


def link(root):
    """``root`` with this checkout linked as ansible_collections/nodewright/bridge under it (a collections path)."""
    root = Path(root)
    target = root / 'ansible_collections' / 'nodewright' / 'bridge'
    target.parent.mkdir(parents=True, exist_ok=True)
    if not target.exists():
        target.symlink_to(REPO_ROOT)
    return root


def _from_this_checkout():
    try:
        module = importlib.import_module(_PROBE)
    except ImportError:
        return False
    return Path(module.__file__).resolve().is_relative_to(REPO_ROOT)


def importable():
    """Import ``ansible_collections.nodewright.bridge`` from this checkout from now on (a no-op when it already does)."""
    if _from_this_checkout():
        return
    for name in [n for n in sys.modules if n == 'ansible_collections' or n.startswith('ansible_collections.')]:
        del sys.modules[name]
    root = link(tempfile.mkdtemp(prefix='nodewright-tests-'))
    atexit.register(shutil.rmtree, root, True)  # removes the link, never its target
    sys.path.insert(0, str(root))
    importlib.invalidate_caches()
    if not _from_this_checkout():
        raise ImportError('cannot import ansible_collections.nodewright.bridge from %s (linked to %s)' % (root, REPO_ROOT))
