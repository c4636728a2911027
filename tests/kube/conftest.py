# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""Fixtures for tests that need a real Kubernetes control plane (tests/cluster).

`cluster` (session): starts etcd, kube-apiserver, kube-controller-manager,
kube-scheduler and kwok with fake GPU nodes in a temporary state dir, and
stops them at the end. With NODEWRIGHT_KUBECONFIG set, an already running
cluster (e.g. from `make cluster-up`) is used instead and left running.
If the cluster cannot be built or started the fixture fails: tests that
need it must not pass or skip silently without it.

`namespace` (function): a fresh namespace per test, deleted afterwards.
"""

from __future__ import annotations

import os
import re
import sys
import uuid
from pathlib import Path

import pytest

# The launcher and helpers live next to the cluster build, not in a package.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'cluster'))

# pylint: disable=wrong-import-position
import helpers  # noqa: E402
import launcher  # noqa: E402

NODES = int(os.environ.get('NODEWRIGHT_TEST_NODES', '8'))


def pytest_configure(config):
    """Register the marker so that `-m cluster` / `-m 'not cluster'` select these tests."""
    config.addinivalue_line('markers', 'cluster: needs the local Kubernetes test cluster (tests/cluster)')


def pytest_collection_modifyitems(config, items):  # pylint: disable=unused-argument
    """Every test under tests/kube needs the cluster: mark it, so that no test here escapes `-m cluster`."""
    here = Path(__file__).resolve().parent
    for item in items:
        if here in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.cluster)


@pytest.fixture(scope='session')
def cluster(tmp_path_factory):
    """A running cluster as a helpers.Cluster (kubeconfig, api, core, node_names, helper methods)."""
    reuse = os.environ.get('NODEWRIGHT_KUBECONFIG')
    if reuse:
        handle = helpers.Cluster(reuse)
        if not handle.node_names:
            pytest.fail(f'NODEWRIGHT_KUBECONFIG={reuse}: the cluster has no kwok-managed nodes')
        yield handle
        handle.close()
        return

    state = tmp_path_factory.mktemp('cluster')
    try:
        info = launcher.up(nodes=NODES, state_dir=state)
    except Exception as exc:  # pylint: disable=broad-exception-caught
        # pytest.fail, not skip: a missing cluster must fail these tests.
        pytest.fail(f'the test cluster could not be started: {exc}', pytrace=False)
    handle = helpers.Cluster(info.kubeconfig, node_names=info.nodes, info=info)
    try:
        yield handle
    finally:
        handle.close()
        # Keep the component logs when NODEWRIGHT_KEEP_CLUSTER_LOGS is set
        # (for CI artifacts); the processes are stopped either way.
        launcher.down(state, keep_state=bool(os.environ.get('NODEWRIGHT_KEEP_CLUSTER_LOGS')))


@pytest.fixture
def namespace(cluster, request):  # pylint: disable=redefined-outer-name
    """A namespace of its own for one test (name derived from the test name)."""
    base = re.sub(r'[^a-z0-9-]+', '-', request.node.name.lower()).strip('-')[:40].strip('-')
    name = f't-{base}-{uuid.uuid4().hex[:5]}'
    cluster.create_namespace(name)
    yield name
    cluster.delete_namespace(name)
