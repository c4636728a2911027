# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The execution environment tests (make ee): the EE built with ansible-builder on podman (tests/ee/ee_build.py),
and the real test nodes' images on the same base (tests/cluster/images.py, test_node_images.py).

podman, runc, debootstrap (and for the node images docker-registry and Go) are required, not optional:
without them the tests FAIL with the tool's error and a hint (CI installs them, .ci/run), they never skip.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def pytest_configure(config):
    config.addinivalue_line('markers', 'ee: builds or reuses the execution environment image with ansible-builder and podman (tests/ee)')


def pytest_collection_modifyitems(config, items):  # pylint: disable=unused-argument
    for item in items:
        if HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.ee)
