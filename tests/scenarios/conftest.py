# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""Fixtures of the upstream e2e scenarios (test_upstream_scenarios.py); see scenario_support.py."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

# pylint: disable=wrong-import-position
import scenario_support  # noqa: E402


def pytest_configure(config):
    config.addinivalue_line('markers', 'cluster: needs the local Kubernetes test cluster (tests/cluster)')


@pytest.fixture(scope='session')
def peers():
    """(kubectl-skyhook, chainsaw): built by tests/scenarios/build-peers.sh when the cache lacks them."""
    try:
        return scenario_support.build_peers()
    except Exception as exc:  # pylint: disable=broad-exception-caught
        pytest.fail(f'the scenario peers could not be built: {exc}', pytrace=False)


class _Clusters:
    """One cluster per category at a time: the scenarios are ordered by category, so each starts once."""

    def __init__(self, base):
        self.base = Path(base)
        self.current = None

    def get(self, category):
        if self.current and self.current.category != category:
            self.current.close()
            self.current = None
        if self.current is None:
            try:
                self.current = scenario_support.ScenarioCluster(category, self.base / category)
            except Exception as exc:  # pylint: disable=broad-exception-caught
                pytest.fail(f'the test cluster for {category} could not be started: {exc}', pytrace=False)
        return self.current

    def close(self):
        if self.current:
            self.current.close()
            self.current = None


@pytest.fixture(scope='session')
def scenario_clusters(tmp_path_factory):
    clusters = _Clusters(tmp_path_factory.mktemp('scenario-clusters'))
    yield clusters
    clusters.close()
