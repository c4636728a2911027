# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""Fixtures for tests that need a real Kubernetes control plane (tests/cluster).

`cluster` (session): starts etcd, kube-apiserver, kube-controller-manager,
kube-scheduler and kwok with fake GPU nodes in a temporary state dir, and
stops them at the end. With NODEWRIGHT_KUBECONFIG set, an already running
cluster (e.g. from `make cluster-up`) is used instead and left running.
If the cluster cannot be built or started the fixture fails: tests that
need it must not pass or skip silently without it.

`namespace` (function): a fresh namespace per test, deleted afterwards; the apply identity may run
package pods there (a RoleBinding of the namespaced role, as a user makes for the operator namespace).

`rbac` (session): the shipped examples/rbac/*.yaml applied, with a kubeconfig per identity
(tests/kube/rbac_identity.py). `playbooks` runs every playbook under those tokens, never as the
admin: a permission the roles lack fails the end-to-end tests with "forbidden". Tests set objects
up, and `modules` runs single modules, with the admin's kubeconfig.
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
    config.addinivalue_line('markers', 'slow: a cluster test of a minute or more (still in make test; -m "not slow" leaves it out)')


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

    with helpers.own_cluster(tmp_path_factory.mktemp('cluster'), nodes=NODES) as handle:
        yield handle


@pytest.fixture(scope='session')
def rbac(cluster, tmp_path_factory):  # pylint: disable=redefined-outer-name
    """The shipped RBAC on the test cluster: ``rbac.apply`` / ``rbac.plan`` are the identities' kubeconfigs."""
    # pylint: disable-next=import-outside-toplevel
    import rbac_identity
    return rbac_identity.install(cluster.api, cluster.kubeconfig, tmp_path_factory.mktemp('rbac'))


@pytest.fixture
def namespace(cluster, rbac, request):  # pylint: disable=redefined-outer-name,unused-argument
    """A namespace of its own for one test (name derived from the test name), where the apply identity may run pods."""
    # pylint: disable-next=import-outside-toplevel
    import rbac_identity
    base = re.sub(r'[^a-z0-9-]+', '-', request.node.name.lower()).strip('-')[:40].strip('-')
    name = f't-{base}-{uuid.uuid4().hex[:5]}'
    cluster.create_namespace(name)
    # What a user does for an operator namespace other than skyhook (docs/rbac.md).
    rbac_identity.bind_namespace(cluster.api, name)
    yield name
    cluster.delete_namespace(name)


@pytest.fixture(scope='session')
def modules(cluster, tmp_path_factory):  # pylint: disable=redefined-outer-name
    """Runs the collection's modules against the test cluster: ``modules.run('node_cordon', name=...)``."""
    # pylint: disable-next=import-outside-toplevel
    from module_runner import ModuleRunner
    return ModuleRunner(cluster.kubeconfig, tmp_path_factory.mktemp('modules'))


_FRESH_NODE_INDEX = [500]


@pytest.fixture
def node(cluster, request):  # pylint: disable=redefined-outer-name
    """A fresh fake GPU node of its own for one test (Ready), deleted afterwards.

    Tests that cordon, drain, reboot or annotate use one, so that they never see each
    other's changes on the session's shared nodes.
    """
    base = re.sub(r'[^a-z0-9-]+', '-', request.node.name.lower()).strip('-')[:30].strip('-')
    name = f'n-{base}-{uuid.uuid4().hex[:5]}'
    _FRESH_NODE_INDEX[0] += 1
    launcher.create_nodes(cluster.api, [name], labels={'nodewright.bridge/test-node': 'true'},
                          start_index=_FRESH_NODE_INDEX[0])
    launcher.wait_nodes_ready(cluster.api, [name], timeout=60)
    yield name
    try:
        cluster.core.delete_node(name)
    except Exception:  # pylint: disable=broad-exception-caught
        pass  # a test may have deleted it on purpose


@pytest.fixture
def identity(cluster, namespace):  # pylint: disable=redefined-outer-name
    """A factory for a limited identity: ``identity(rules)`` -> connection options for the modules.

    Creates a ServiceAccount bound to a ClusterRole with exactly ``rules`` (RBAC
    PolicyRule dicts) and returns ``{'kubeconfig': None, 'host', 'api_key', 'ca_cert'}``
    with a fresh token, so a module runs as that account instead of as the admin.
    """
    # pylint: disable-next=import-outside-toplevel
    import yaml
    # pylint: disable-next=import-outside-toplevel
    from kubernetes import client as kclient
    rbac = kclient.RbacAuthorizationV1Api(cluster.api)
    created = []
    config = yaml.safe_load(Path(cluster.kubeconfig).read_text())
    server = config['clusters'][0]['cluster']['server']
    ca_path = Path(cluster.kubeconfig).with_name(f'ca-{namespace}.crt')
    # pylint: disable-next=import-outside-toplevel
    import base64
    ca_path.write_bytes(base64.b64decode(config['clusters'][0]['cluster']['certificate-authority-data']))

    def make(rules):
        name = f'{namespace}-{len(created)}'
        cluster.core.create_namespaced_service_account(namespace, {'metadata': {'name': name}})
        rbac.create_cluster_role({'metadata': {'name': name}, 'rules': rules})
        rbac.create_cluster_role_binding({
            'metadata': {'name': name},
            'roleRef': {'apiGroup': 'rbac.authorization.k8s.io', 'kind': 'ClusterRole', 'name': name},
            'subjects': [{'kind': 'ServiceAccount', 'name': name, 'namespace': namespace}]})
        created.append(name)
        token = cluster.core.create_namespaced_service_account_token(
            name, namespace, {'spec': {'expirationSeconds': 3600}}).status.token
        return {'kubeconfig': None, 'host': server, 'api_key': token, 'ca_cert': str(ca_path)}

    yield make
    for name in created:
        for delete in (rbac.delete_cluster_role_binding, rbac.delete_cluster_role):
            try:
                delete(name)
            except kclient.ApiException:
                pass
    ca_path.unlink(missing_ok=True)


@pytest.fixture
def crs(cluster):  # pylint: disable=redefined-outer-name
    """Skyhook CRs created in the cluster for one test (``crs.create(packages, **spec)``), deleted afterwards."""
    # pylint: disable-next=import-outside-toplevel
    from nodewright_fixtures import CRs
    made = CRs(cluster)
    yield made
    made.close()


@pytest.fixture(scope='session')
def playbooks(cluster, rbac, tmp_path_factory):  # pylint: disable=redefined-outer-name
    """Runs ansible-playbook against the test cluster: ``playbooks.run('nodewright.bridge.apply', extra_vars=...)``.

    As the shipped identities: plan and render as the read-only one, everything else as the apply one
    (``identity=`` chooses; module_runner.PlaybookRunner).
    """
    # pylint: disable-next=import-outside-toplevel
    from module_runner import PlaybookRunner
    return PlaybookRunner(rbac.apply, tmp_path_factory.mktemp('playbooks'), plan_kubeconfig=rbac.plan,
                          admin_kubeconfig=cluster.kubeconfig)


@pytest.fixture(scope='session')
def v020(tmp_path_factory):
    """A cluster of its own that serves the v0.20 CRDs (nodewright.nvidia.com) and the legacy ones beside them, as a
    v0.20 chart installs them: the shipped RBAC applied, the operator namespace ``nodewright`` bound for the apply identity.

    ``v020.cluster`` (helpers.Cluster, admin; ``v020.cluster.info.audit_log`` its API audit log), ``v020.rbac`` (the
    identities' kubeconfigs), ``v020.playbooks`` (PlaybookRunner as those identities), ``v020.modules`` (ModuleRunner,
    admin). Started once, by the first test that asks for it (test_nodewright_v020.py, test_nodewright_jobs.py).
    """
    # pylint: disable-next=import-outside-toplevel
    import rbac_identity
    # pylint: disable-next=import-outside-toplevel
    from module_runner import ModuleRunner, PlaybookRunner
    crds = Path(launcher.crds_dir()) / 'v0.20'
    # audited: the test of a cluster with only the new group (as v0.21 leaves it) reads what runs asked of the old one
    with helpers.own_cluster(tmp_path_factory.mktemp('v020'), what='the v0.20 CRD cluster', nodes=2, crds=crds,
                             audit=True) as handle:
        # a v0.20 chart installs both groups' CRDs (the legacy one served, read-only for migrated objects, until v0.21)
        launcher.install_crds(handle.api, launcher.crds_dir())
        handle.create_namespace('nodewright')
        identities = rbac_identity.install(handle.api, handle.kubeconfig, tmp_path_factory.mktemp('v020-rbac'))
        # what a user applies on a v0.18+ cluster: the namespaced role in the operator namespace nodewright
        rbac_identity.apply_file(handle.api, 'nodewright-namespace.yaml')
        rbac_identity.wait_allowed(handle.api, identities.apply_user, 'create', 'jobs', namespace='nodewright', group='batch')
        work = tmp_path_factory.mktemp('v020-playbooks')
        yield V020(handle, identities,
                   PlaybookRunner(identities.apply, work, plan_kubeconfig=identities.plan, admin_kubeconfig=handle.kubeconfig),
                   ModuleRunner(handle.kubeconfig, tmp_path_factory.mktemp('v020-modules')))


class V020:
    """The v0.20 CRD cluster of the ``v020`` fixture."""

    def __init__(self, cluster, rbac, playbooks, modules):
        self.cluster, self.rbac, self.playbooks, self.modules = cluster, rbac, playbooks, modules
