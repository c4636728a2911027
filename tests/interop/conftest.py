# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""Fixtures for the interop tests: the real NodeWright operator and the collection on one test cluster.

`cluster` (session): a test cluster (tests/cluster) with the API audit log on, and the operator's
namespace `skyhook`. `operator_binary` (session): the `manager` that ../shared/upstream/build-operator.sh
builds (cached; through tests/interop/build-operator.sh, which takes a lock; NODEWRIGHT_OPERATOR names another binary). `operators`: starts and stops operator
processes (every one is stopped at teardown). `fleet`: fresh fake GPU nodes with a label of their own
(rack a and b), the CR and DeploymentPolicy for them (written as NodeWright documents, turned into the
operator's skyhook.nvidia.com documents by the collection's to_skyhook), and clean-up of the CR.

Nothing here is mocked and nothing may skip: without the operator or the cluster the tests fail.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / 'cluster'))
sys.path.insert(0, str(HERE.parent / 'kube'))
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

# pylint: disable=wrong-import-position
import collection_path  # noqa: E402

collection_path.importable()  # this checkout, for its to_skyhook

import helpers  # noqa: E402
import interop_support as support  # noqa: E402


def pytest_configure(config):
    config.addinivalue_line('markers', 'interop: needs the test cluster and the real NodeWright operator (tests/interop)')


def pytest_collection_modifyitems(config, items):  # pylint: disable=unused-argument
    for item in items:
        if HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.interop)


@pytest.fixture(scope='session')
def operator_binary():
    path = os.environ.get('NODEWRIGHT_OPERATOR')
    if not path:
        # ../shared/upstream/build-operator.sh under a lock (make test may be building it in the background)
        script = HERE / 'build-operator.sh'
        proc = subprocess.run([str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, check=False)
        if proc.returncode != 0:
            pytest.fail(f'{script} failed ({proc.returncode}):\n{proc.stderr[-3000:]}', pytrace=False)
        path = proc.stdout.strip().splitlines()[-1]
    if not os.access(path, os.X_OK):
        pytest.fail(f'the operator binary {path} is not executable', pytrace=False)
    return path


@pytest.fixture(scope='session')
def cluster(tmp_path_factory):
    with helpers.own_cluster(tmp_path_factory.mktemp('interop-cluster'), nodes=1, audit=True) as handle:
        handle.create_namespace(support.NAMESPACE)
        yield handle


@pytest.fixture
def operators(cluster, operator_binary, tmp_path):
    made = support.Operators(cluster, operator_binary, tmp_path)
    yield made
    made.stop_all()


@pytest.fixture(scope='session')
def playbooks(cluster, tmp_path_factory):
    # pylint: disable-next=import-outside-toplevel
    from module_runner import PlaybookRunner
    return PlaybookRunner(cluster.kubeconfig, tmp_path_factory.mktemp('playbooks'))


@pytest.fixture
def fleet(cluster, tmp_path):
    made = []

    def make(racks=None):
        group = support.Fleet(cluster, tmp_path, racks or {'a': 2, 'b': 2})
        made.append(group)
        return group
    yield make
    for group in made:
        group.close()


FIGURES = {}


@pytest.fixture
def figures(request):
    """``figures(key=value, ...)``: what a test counted (pods created, writes), printed after the run."""
    def record(**values):
        FIGURES.setdefault(request.node.name, {}).update(values)
    return record


def pytest_terminal_summary(terminalreporter):
    if not FIGURES:
        return
    terminalreporter.section('interop figures (pods created and writes, counted by watch and audit log)')
    for test, values in sorted(FIGURES.items()):
        terminalreporter.write_line(test)
        for key, value in values.items():
            terminalreporter.write_line(f'    {key}: {value}')
