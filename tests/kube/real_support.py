# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""A real node in a test cluster, for the tests that run NodeWright packages for real (tests/kube/test_real_nodes.py,
tests/interop/test_real_node_handoffs.py): the node (tests/cluster/real_node.py), its images (tests/cluster/images.py)
and what its packages' scripts wrote on the host (their proof lines).
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import yaml
from kubernetes import client as kclient

import launcher

sys.path.insert(0, str(Path(launcher.__file__).resolve().parent))
import images  # noqa: E402  pylint: disable=wrong-import-position,import-error
import real_node  # noqa: E402  pylint: disable=wrong-import-position,import-error

GROUP, VERSION, PLURAL = 'skyhook.nvidia.com', 'v1alpha1', 'skyhooks'
PREFIX = 'skyhook.nvidia.com'


class Real:
    """The module's real node: its name, images, the proof its packages wrote."""

    def __init__(self, cluster, name, built):
        self.cluster = cluster
        self.name = name
        self.images = built
        self.custom = kclient.CustomObjectsApi(cluster.api)

    def proof(self, cr, package):
        """The proof lines of the CR's package ``package`` under CR ``cr``, each a dict (stage, version, boot, cm.<key>, ...)."""
        path = real_node.proof_dir(self.cluster.info, self.name) / cr / f'{package}.log'
        if not path.exists():
            return []
        return [dict(field.split('=', 1) for field in line.split() if '=' in field)
                for line in path.read_text(encoding='utf-8').splitlines()]

    def stages(self, cr, package):
        return [line['stage'] for line in self.proof(cr, package)]

    def node(self):
        return self.cluster.core.read_node(self.name)

    def state(self, cr):
        return json.loads((self.node().metadata.annotations or {}).get(f'{PREFIX}/nodeState_{cr}') or '{}')

    def package(self, name, version='1.0.0', **extra):
        """A CR package of the test package image ``name`` (tests/cluster/packages): its repository, the version its tag."""
        body = {'version': version, 'image': self.images['packages'][name]['image']}
        body.update(extra)
        return body

    def create_cr(self, packages, **spec):
        name = f'real-{uuid.uuid4().hex[:6]}'
        body = {'nodeSelectors': {'matchLabels': {'kubernetes.io/hostname': self.name}},
                'additionalTolerations': [real_node.REAL_NODE_TOLERATION],
                'interruptionBudget': {'count': 1}, 'packages': packages}
        body.update(spec)
        self.custom.create_cluster_custom_object(GROUP, VERSION, PLURAL, {
            'apiVersion': f'{GROUP}/{VERSION}', 'kind': 'Skyhook', 'metadata': {'name': name}, 'spec': body})
        return name

    def patch_cr(self, name, spec):
        self.custom.patch_cluster_custom_object(GROUP, VERSION, PLURAL, name, {'spec': spec})

    def delete_cr(self, name):
        """Delete the CR and what it left on the node (a test that failed midway leaves the next one a clean node)."""
        try:
            self.custom.delete_cluster_custom_object(GROUP, VERSION, PLURAL, name)
        except kclient.ApiException:
            pass
        meta = self.node().metadata
        stale = dict((key, None) for key in (meta.annotations or {}) if key.endswith('_' + name))
        labels = dict((key, None) for key in (meta.labels or {}) if key.endswith('_' + name))
        patch = {'metadata': {'annotations': stale, 'labels': labels}}
        if stale.get(f'{PREFIX}/cordon_{name}') is not None or f'{PREFIX}/cordon_{name}' in stale:
            patch['spec'] = {'unschedulable': False}
        self.cluster.core.patch_node(self.name, patch)


def start_real_node(cluster):
    """A real node in ``cluster`` (a cluster the tests started): ``(Real, stop)``; ``stop()`` removes it and asserts
    that it left nothing on the machine (real_node.machine_snapshot). A node or its images that cannot be made fail
    the test."""
    if cluster.info is None:
        pytest.fail('real nodes join a cluster the tests start; NODEWRIGHT_KUBECONFIG names one they did not')
    before, others = real_node.machine_snapshot(), set(real_node.live_nodes())
    try:
        built = images.ensure_images()
    except Exception as exc:  # pylint: disable=broad-exception-caught
        pytest.fail(f'the real node images could not be built: {exc}', pytrace=False)
    name = f'real-node-{uuid.uuid4().hex[:4]}'
    try:
        real_node.add(cluster.info, name, built)
    except launcher.ClusterError as exc:
        pytest.fail(f'the real node could not be started: {exc}', pytrace=False)

    def stop():
        node = dict(cluster.info.real_nodes[name])
        real_node.remove(cluster.info, name)
        after = real_node.machine_snapshot()
        seen = others | set(real_node.live_nodes())
        # another run's real node (a second checkout's tests) shares the machine-wide part: then only this node's
        # own traces can be checked, and they must be gone
        left = real_node.node_traces(after, node) if seen else after ^ before
        assert not left, f'the real node left traces on the machine: {sorted(left)}'
    return Real(cluster, name, built), stop


def configs(lines):
    """cm.<key> fields of proof lines, decoded: [{key: text}, ...] per line."""
    return [dict((k[3:], base64.b64decode(v).decode()) for k, v in line.items() if k.startswith('cm.')) for line in lines]


def build_role_package(role, version, repository, workdir):
    """A role built and pushed as a package image by ``ansible-playbook nodewright.bridge.package`` (the collection's
    command line), on the node images' base and registry: the playbook's ``packages`` snippet, read back."""
    sys.path.insert(0, str(Path(launcher.__file__).resolve().parents[1] / 'ee'))
    from podman_env import podman_env  # pylint: disable=import-outside-toplevel,import-error
    from collection_path import link  # pylint: disable=import-outside-toplevel,import-error
    workdir = Path(workdir)
    snippet = workdir / 'snippet.yml'
    env = podman_env()
    env.update(ANSIBLE_COLLECTIONS_PATH=str(link(workdir / 'collections')), ANSIBLE_NOCOLOR='1',
               ANSIBLE_LOCALHOST_WARNING='False', ANSIBLE_INVENTORY_UNPARSED_WARNING='False')
    variables = {'nodewright_package_role': str(role), 'nodewright_package_version': version,
                 'nodewright_package_image': repository, 'nodewright_package_base_image': images.base_image_name(),
                 'nodewright_package_tls_verify': False, 'nodewright_package_snippet': str(snippet)}
    proc = subprocess.run([str(Path(sys.executable).with_name('ansible-playbook')), 'nodewright.bridge.package',
                           '-e', json.dumps(variables)], env=env, cwd=str(workdir), capture_output=True, text=True,
                          check=False, timeout=1800)
    assert proc.returncode == 0, f'nodewright.bridge.package failed:\n{proc.stdout[-4000:]}{proc.stderr[-2000:]}'
    return yaml.safe_load(snippet.read_text())['packages']
