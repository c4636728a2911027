# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""Fixtures for the browser tests: headless Chromium (tests/browser/cdp.py) and the collection importable.

Chromium is required, not optional: without it the tests FAIL with how to install it (CI
installs Debian's ``chromium``), they never skip. ``CHROMIUM=<path>`` picks another binary.
Screenshots and pages go to build/browser/.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
OUTPUT = REPO_ROOT / 'build' / 'browser'
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

# pylint: disable=wrong-import-position
import cdp  # noqa: E402
import collection_path  # noqa: E402

collection_path.importable()


def pytest_configure(config):
    config.addinivalue_line('markers', 'browser: drives a headless Chromium (tests/browser; Debian package chromium)')


def pytest_collection_modifyitems(config, items):  # pylint: disable=unused-argument
    for item in items:
        if HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope='session')
def chromium():
    path = cdp.find_chromium()
    if not path or not os.access(path, os.X_OK):
        pytest.fail('no Chromium: the browser tests need it (Debian: apt-get install chromium; or set CHROMIUM=<path>)',
                    pytrace=False)
    return path


@pytest.fixture
def browser(chromium):
    with cdp.Browser(chromium) as handle:
        yield handle


@pytest.fixture(scope='session')
def output_dir():
    OUTPUT.mkdir(parents=True, exist_ok=True)
    return OUTPUT
