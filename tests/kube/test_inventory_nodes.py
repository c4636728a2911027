# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The nodewright.bridge.nodes inventory plugin, run by the real ``ansible-inventory`` against the test cluster.

The collection is put on ANSIBLE_COLLECTIONS_PATH through a throw-away
``ansible_collections/nodewright/bridge`` symlink, as module_runner does for the modules.
Every test makes nodes of its own (a label value of its own selects them) and deletes them.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import launcher
import pytest
import yaml
from kubernetes import client as kclient
from module_runner import link_collection

REPO_ROOT = Path(__file__).resolve().parents[2]
GROUP, VERSION = 'skyhook.nvidia.com', 'v1alpha1'
POOL_LABEL = 'nodewright.bridge/pool'
IMAGE = 'ghcr.io/example/tuning'
PACKAGES = {'tuning': {'version': '1.2.0', 'image': IMAGE, 'interrupt': {'type': 'reboot'}}}
COMPLETE = {'tuning|1.2.0': {'name': 'tuning', 'version': '1.2.0', 'image': IMAGE, 'stage': 'post-interrupt',
                             'state': 'complete'}}


def ansible_inventory():
    """ansible-inventory of the Python running the tests (the project's .venv), else .venv/bin's."""
    beside = Path(sys.executable).with_name('ansible-inventory')
    return str(beside if beside.exists() else REPO_ROOT / '.venv' / 'bin' / 'ansible-inventory')


# The kubeconfig the inventory source reads with: the read-only identity of examples/rbac
# (nodewright-bridge-plan), so a permission the plan role lacks fails these tests.
_READER = {}


@pytest.fixture(scope='module', autouse=True)
def reader_kubeconfig(rbac):
    _READER['kubeconfig'] = rbac.plan
    yield rbac.plan
    _READER.clear()


@pytest.fixture(scope='module')
def collections_path(tmp_path_factory):
    return link_collection(tmp_path_factory.mktemp('inventory-collections'))


def plain(value):
    """The inventory's JSON without ansible-core's unsafe markers ({"__ansible_unsafe": "text"} -> "text")."""
    if isinstance(value, dict):
        if set(value) == {'__ansible_unsafe'}:
            return value['__ansible_unsafe']
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


class Inventory:
    """What ``ansible-inventory --list`` printed: ``rc``, ``hostvars``, ``groups`` (name -> hosts), ``stderr``."""

    def __init__(self, proc):
        self.rc, self.stderr = proc.returncode, proc.stderr
        self.data = plain(json.loads(proc.stdout)) if proc.returncode == 0 else {}
        self.hostvars = self.data.get('_meta', {}).get('hostvars', {})
        self.groups = {name: sorted(body.get('hosts', [])) for name, body in self.data.items()
                       if name != '_meta' and isinstance(body, dict)}
        for name in self.data.get('all', {}).get('children', []):
            self.groups.setdefault(name, [])

    def hosts(self, group):
        return self.groups.get(group, [])

    def said(self, text):
        """Whether stderr has ``text``, whatever line breaks ansible-core's display put in (2.16-2.18 wrap at 80)."""
        return re.sub(r'\s+', '', text) in re.sub(r'\s+', '', self.stderr)


def run_inventory(cluster, collections_path, workdir, config, name='test', env=None, args=(), kubeconfig=True):
    """Write ``<name>.nodewright.yml`` in ``workdir`` and list it; ``kubeconfig`` adds the cluster's."""
    config = dict({'plugin': 'nodewright.bridge.nodes'}, **config)
    if kubeconfig:
        config.setdefault('kubeconfig', _READER.get('kubeconfig') or str(cluster.kubeconfig))
    source = Path(workdir) / f'{name}.nodewright.yml'
    source.write_text(yaml.safe_dump(config))
    run_env = {k: v for k, v in os.environ.items() if not k.startswith(('K8S_AUTH_', 'ANSIBLE_'))}
    run_env.update({
        'ANSIBLE_COLLECTIONS_PATH': str(collections_path),
        'ANSIBLE_INVENTORY_ANY_UNPARSED_IS_FAILED': 'true',  # a source that fails fails the command
        'ANSIBLE_NOCOLOR': '1',
        'ANSIBLE_LOCAL_TEMP': str(Path(workdir) / 'tmp'),
    })
    run_env.update(env or {})
    # From another directory: relative paths in the source must resolve against the source's directory.
    proc = subprocess.run([ansible_inventory(), '-i', str(source), '--list', *args], cwd=str(collections_path),
                          env=run_env, capture_output=True, text=True, timeout=120, check=False)
    return Inventory(proc)


def skyhook(name, pool, **spec):
    body = {'nodeSelectors': {'matchLabels': {POOL_LABEL: pool}}, 'packages': PACKAGES}
    body.update(spec)
    return {'apiVersion': f'{GROUP}/{VERSION}', 'kind': 'Skyhook', 'metadata': {'name': name}, 'spec': body}


def internal_ip(cluster, name):
    node = cluster.core.read_node(name)
    return next(a.address for a in node.status.addresses if a.type == 'InternalIP')


class Nodes:
    """Nodes of one test, selected by ``nodewright.bridge/pool=<pool>``; deleted by ``delete()``."""

    def __init__(self, cluster, count, start_index, per_node_labels=None, prefix='inv'):
        self.cluster = cluster
        self.pool = uuid.uuid4().hex[:8]
        self.names = [f'{prefix}-{self.pool}-{i}' for i in range(count)]
        per_node = {self.names[i]: labels for i, labels in (per_node_labels or {}).items()}
        launcher.create_nodes(cluster.api, self.names, labels={POOL_LABEL: self.pool}, per_node_labels=per_node,
                              start_index=start_index)

    def annotate(self, index, annotations):
        self.cluster.core.patch_node(self.names[index], {'metadata': {'annotations': annotations}})

    def label(self, index, labels):
        self.cluster.core.patch_node(self.names[index], {'metadata': {'labels': labels}})

    def delete(self):
        for name in self.names:
            try:
                self.cluster.core.delete_node(name)
            except kclient.ApiException:
                pass


@pytest.fixture
def make_nodes(cluster):
    made = []

    def make(count, start_index, per_node_labels=None, prefix='inv'):
        nodes = Nodes(cluster, count, start_index, per_node_labels, prefix)
        made.append(nodes)
        return nodes
    yield make
    for nodes in made:
        nodes.delete()


def test_cr_from_a_file(cluster, collections_path, tmp_path, make_nodes):
    nodes = make_nodes(3, 1200, per_node_labels={2: {'skyhook.nvidia.com/ignore': 'true'}})
    cr_name = f'inv-file-{nodes.pool}'
    # node 0 has finished the package already
    nodes.annotate(0, {f'skyhook.nvidia.com/nodeState_{cr_name}': json.dumps(COMPLETE),
                       f'skyhook.nvidia.com/status_{cr_name}': 'complete'})
    (tmp_path / 'files').mkdir()
    (tmp_path / 'files' / 'cr.yaml').write_text(yaml.safe_dump(skyhook(cr_name, nodes.pool, interruptionBudget={'count': 1})))

    inv = run_inventory(cluster, collections_path, tmp_path, {'cr': 'files/cr.yaml'})
    assert inv.rc == 0, inv.stderr
    first, second, ignored = nodes.names
    group = 'nodewright_inv_file_' + nodes.pool
    assert sorted(inv.hostvars) == [first, second]  # the ignored node is not a host
    assert inv.hosts('nodewright') == [first, second]
    assert inv.hosts(group) == [first, second]
    assert inv.hosts('nodewright_compartment_default') == [first, second]
    assert inv.hosts('nodewright_state_complete') == [first]
    assert inv.hosts('nodewright_state_pending') == [second]
    assert inv.hosts('nodewright_needs_drain') == [second]
    assert 'nodewright_state_erroring' in inv.groups and inv.hosts('nodewright_state_erroring') == []
    assert 'nodewright_ignored' not in inv.groups

    done, todo = inv.hostvars[first]['nodewright_node_facts'], inv.hostvars[second]['nodewright_node_facts']
    assert done['cr_name'] == cr_name and inv.hostvars[first]['nodewright_node'] == first
    assert done['complete'] is True and done['pending'] == []
    assert done['progress'] == 'complete' and done['status'] == 'complete'
    assert done['state']['tuning|1.2.0']['stage'] == 'post-interrupt'
    assert done['needs_drain'] is False and done['interrupt'] is None
    assert [s['stage'] for s in todo['pending']] == ['apply', 'config', 'interrupt', 'post-interrupt']
    assert todo['needs_drain'] is True and todo['interrupt']['type'] == 'reboot'
    assert todo['status'] == 'unknown' and todo['state'] == {}
    # the flat names, deprecated until 2.0.0, hold the same
    for name, facts in ((first, done), (second, todo)):
        assert inv.hostvars[name]['nodewright_cr_name'] == facts['cr_name'] and 'nodewright_cr' not in inv.hostvars[name]
        assert all(inv.hostvars[name]['nodewright_' + key] == facts[key] for key in facts if key != 'cr_name')
    todo = inv.hostvars[second]
    assert todo['nodewright_compartment'] == '__default__'
    assert todo['nodewright_labels'][POOL_LABEL] == nodes.pool
    assert todo['nodewright_labels']['nvidia.com/gpu.count'] == '8'
    for name in (first, second):
        assert inv.hostvars[name]['ansible_host'] == internal_ip(cluster, name)
        assert inv.hostvars[name]['ansible_connection'] == 'local'
        assert inv.hostvars[name]['ansible_python_interpreter'] == '{{ ansible_playbook_python }}'

    # include_ignored: the ignored node is a host, in nodewright_ignored only
    inv = run_inventory(cluster, collections_path, tmp_path, {'cr': 'files/cr.yaml', 'include_ignored': True})
    assert inv.rc == 0, inv.stderr
    assert inv.hosts('nodewright_ignored') == [ignored]
    assert [g for g, hosts in inv.groups.items() if ignored in hosts] == ['nodewright_ignored']
    assert inv.hostvars[ignored]['nodewright_node_facts']['ignored'] is True and inv.hostvars[ignored]['nodewright_ignored']
    assert inv.hostvars[ignored]['ansible_host'] == internal_ip(cluster, ignored)
    assert 'nodewright_pending' not in inv.hostvars[ignored]

    # ssh to the nodes, without their addresses
    inv = run_inventory(cluster, collections_path, tmp_path, {'cr': 'files/cr.yaml', 'connection': 'ssh',
                                                              'use_internal_ip': False})
    assert inv.rc == 0, inv.stderr
    assert inv.hostvars[second]['ansible_connection'] == 'ssh'
    assert 'ansible_host' not in inv.hostvars[second] and 'ansible_python_interpreter' not in inv.hostvars[second]

    # a DeploymentPolicy file replaces the CR's interruptionBudget
    (tmp_path / 'files' / 'policy.yaml').write_text(yaml.safe_dump({
        'apiVersion': f'{GROUP}/{VERSION}', 'kind': 'DeploymentPolicy', 'metadata': {'name': 'by-host'},
        'spec': {'default': {'budget': {'count': 1}, 'strategy': {'fixed': {}}},
                 'compartments': [{'name': 'first', 'selector': {'matchLabels': {'kubernetes.io/hostname': second}},
                                   'budget': {'count': 1}, 'strategy': {'linear': {}}}]}}))
    inv = run_inventory(cluster, collections_path, tmp_path, {'cr': 'files/cr.yaml', 'policy': 'files/policy.yaml'})
    assert inv.rc == 0, inv.stderr
    assert inv.hosts('nodewright_compartment_first') == [second]
    assert inv.hosts('nodewright_compartment_default') == [first]
    assert inv.hostvars[second]['nodewright_compartment'] == 'first'


def test_cr_and_policy_from_the_cluster(cluster, collections_path, tmp_path, make_nodes, crs):
    custom = kclient.CustomObjectsApi(cluster.api)
    nodes = make_nodes(5, 1210, per_node_labels={0: {'rack': 'a'}, 1: {'rack': 'a'}, 2: {'rack': 'b'}, 3: {'rack': 'b'}})
    policy_name = f'inv-policy-{nodes.pool}'
    custom.create_cluster_custom_object(GROUP, VERSION, 'deploymentpolicies', {
        'apiVersion': f'{GROUP}/{VERSION}', 'kind': 'DeploymentPolicy', 'metadata': {'name': policy_name},
        'spec': {'default': {'budget': {'count': 1}, 'strategy': {'fixed': {}}},
                 'compartments': [
                     {'name': 'rack-a', 'selector': {'matchLabels': {'rack': 'a'}}, 'budget': {'count': 1},
                      'strategy': {'linear': {'initialBatch': 1, 'delta': 1}}},
                     {'name': 'rack.b', 'selector': {'matchLabels': {'rack': 'b'}}, 'budget': {'percent': 50},
                      'strategy': {'exponential': {'initialBatch': 1, 'growthFactor': 2}}}]}})
    try:
        created = crs.create(PACKAGES, prefix='inv', selector={POOL_LABEL: nodes.pool}, deploymentPolicy=policy_name)
        cr_name = created['metadata']['name']
        nodes.annotate(1, {f'skyhook.nvidia.com/nodeState_{cr_name}': json.dumps(COMPLETE)})
        # The connection through K8S_AUTH_* as for kubernetes.core, nothing in the file but the CR's name.
        inv = run_inventory(cluster, collections_path, tmp_path, {'cr_name': cr_name}, kubeconfig=False,
                            env={'K8S_AUTH_KUBECONFIG': _READER['kubeconfig']})
    finally:
        custom.delete_cluster_custom_object(GROUP, VERSION, 'deploymentpolicies', policy_name)
    assert inv.rc == 0, inv.stderr
    names = nodes.names
    assert sorted(inv.hostvars) == names
    assert inv.hosts('nodewright_' + cr_name.replace('-', '_')) == names
    assert inv.hosts('nodewright_compartment_rack_a') == names[0:2]
    assert inv.hosts('nodewright_compartment_rack_b') == names[2:4]
    assert inv.hosts('nodewright_compartment_default') == [names[4]]
    assert [inv.hostvars[n]['nodewright_compartment'] for n in names] == ['rack-a', 'rack-a', 'rack.b', 'rack.b',
                                                                          '__default__']
    assert inv.hosts('nodewright_state_complete') == [names[1]]
    assert inv.hosts('nodewright_state_pending') == [names[0]] + names[2:]
    assert inv.hostvars[names[0]]['nodewright_labels']['rack'] == 'a'


def test_node_states_erroring_and_in_progress(cluster, collections_path, tmp_path, make_nodes):
    nodes = make_nodes(3, 1220)
    cr_name = f'inv-state-{nodes.pool}'
    key = f'skyhook.nvidia.com/nodeState_{cr_name}'
    failing = {'tuning|1.2.0': dict(COMPLETE['tuning|1.2.0'], stage='apply', state='erroring', restarts=2)}
    running = {'tuning|1.2.0': dict(COMPLETE['tuning|1.2.0'], stage='interrupt', state='in_progress')}
    nodes.annotate(0, {key: json.dumps(failing), f'skyhook.nvidia.com/status_{cr_name}': 'erroring'})
    nodes.annotate(1, {key: json.dumps(running), f'skyhook.nvidia.com/cordon_{cr_name}': 'true'})
    (tmp_path / 'cr.json').write_text(json.dumps(skyhook(cr_name, nodes.pool)))
    inv = run_inventory(cluster, collections_path, tmp_path, {'cr': 'cr.json'})
    assert inv.rc == 0, inv.stderr
    assert inv.hosts('nodewright_state_erroring') == [nodes.names[0]]
    assert inv.hosts('nodewright_state_in_progress') == [nodes.names[1]]
    assert inv.hosts('nodewright_state_pending') == [nodes.names[2]]
    assert inv.hostvars[nodes.names[0]]['nodewright_state']['tuning|1.2.0']['restarts'] == 2
    assert inv.hostvars[nodes.names[0]]['nodewright_status'] == 'erroring'
    assert inv.hostvars[nodes.names[1]]['nodewright_cordoned_by'] == [cr_name]
    assert [s['stage'] for s in inv.hostvars[nodes.names[1]]['nodewright_pending']] == ['interrupt', 'post-interrupt']


def test_keyed_groups_compose_and_groups(cluster, collections_path, tmp_path, make_nodes):
    nodes = make_nodes(2, 1230, per_node_labels={0: {'rack': 'a'}})
    cr_name = f'inv-keyed-{nodes.pool}'
    nodes.annotate(1, {f'skyhook.nvidia.com/nodeState_{cr_name}': json.dumps(COMPLETE)})
    (tmp_path / 'cr.yaml').write_text(yaml.safe_dump(skyhook(cr_name, nodes.pool)))
    inv = run_inventory(cluster, collections_path, tmp_path, {
        'cr': 'cr.yaml',
        'compose': {'rack': "nodewright_labels['rack'] | default('none')",
                    'gpus': "nodewright_labels['nvidia.com/gpu.count'] | int",
                    'ansible_connection': "'ssh'"},
        'keyed_groups': [{'key': "nodewright_labels['rack'] | default('none')", 'prefix': 'rack'},
                         {'key': 'nodewright_node_facts.progress', 'prefix': 'progress'}],
        'groups': {'reboot_due': "nodewright_node_facts.interrupt is not none and nodewright_node_facts.interrupt.type == 'reboot'"},
    })
    assert inv.rc == 0, inv.stderr
    first, second = nodes.names
    assert inv.hostvars[first]['rack'] == 'a' and inv.hostvars[second]['rack'] == 'none'
    assert int(inv.hostvars[first]['gpus']) == 8  # a string before ansible-core 2.19's native types
    assert inv.hostvars[first]['ansible_connection'] == 'ssh'  # compose overrides the plugin's variables
    assert inv.hosts('rack_a') == [first] and inv.hosts('rack_none') == [second]
    assert inv.hosts('progress_pending') == [first] and inv.hosts('progress_complete') == [second]
    assert inv.hosts('reboot_due') == [first]
    assert inv.hosts('nodewright') == [first, second]


def test_cache_keeps_what_was_read_until_flushed(cluster, collections_path, tmp_path, make_nodes):
    nodes = make_nodes(2, 1240)
    cr_name = f'inv-cache-{nodes.pool}'
    (tmp_path / 'cr.yaml').write_text(yaml.safe_dump(skyhook(cr_name, nodes.pool)))
    config = {'cr': 'cr.yaml', 'cache': True, 'cache_plugin': 'ansible.builtin.jsonfile',
              'cache_connection': str(tmp_path / 'cache')}
    assert sorted(run_inventory(cluster, collections_path, tmp_path, config).hostvars) == nodes.names
    nodes.label(1, {POOL_LABEL: 'elsewhere'})
    cached = run_inventory(cluster, collections_path, tmp_path, config)
    assert sorted(cached.hostvars) == nodes.names
    if '--flush-cache' in subprocess.run([ansible_inventory(), '--help'], capture_output=True, text=True, check=True).stdout:
        flushed = run_inventory(cluster, collections_path, tmp_path, config, args=('--flush-cache',))
    else:  # ansible-inventory has --flush-cache from ansible-core 2.19 (ansible-playbook has it on all)
        shutil.rmtree(tmp_path / 'cache')
        flushed = run_inventory(cluster, collections_path, tmp_path, config)
    assert flushed.rc == 0, flushed.stderr
    assert sorted(flushed.hostvars) == nodes.names[:1]


def test_an_invalid_cr_fails_with_its_field_paths(cluster, collections_path, tmp_path):
    bad = skyhook('inv-broken', 'nothing', interruptionBudget={'percent': 10, 'count': 2})
    bad['spec']['packages'] = {'tuning': {'version': '1.2.0', 'image': IMAGE, 'interrupt': {'type': 'shutdown'}}}
    (tmp_path / 'broken.yaml').write_text(yaml.safe_dump(bad))
    inv = run_inventory(cluster, collections_path, tmp_path, {'cr': 'broken.yaml'})
    assert inv.rc != 0
    assert inv.said("Skyhook 'inv-broken' (from cr file %s) is invalid (2 problems)" % (tmp_path / 'broken.yaml')), inv.stderr
    assert inv.said('spec.interruptionBudget: percent and count are mutually exclusive'), inv.stderr
    assert inv.said("spec.packages.tuning.interrupt.type: 'shutdown' is not one of"), inv.stderr


def test_a_missing_cr_or_an_unreachable_api_server_fails(cluster, collections_path, tmp_path):
    missing = run_inventory(cluster, collections_path, tmp_path, {'cr_name': 'inv-no-such-cr'})
    assert missing.rc != 0
    assert missing.said('Skyhook / NodeWright inv-no-such-cr not found in the cluster'), missing.stderr

    (tmp_path / 'cr.yaml').write_text(yaml.safe_dump(skyhook('inv-unreachable', 'x')))
    unreachable = run_inventory(cluster, collections_path, tmp_path, {
        'cr': 'cr.yaml', 'host': 'https://127.0.0.1:9', 'validate_certs': False}, kubeconfig=False)
    assert unreachable.rc != 0
    assert unreachable.said('cannot reach the Kubernetes API server at https://127.0.0.1:9'), unreachable.stderr

    nothing = run_inventory(cluster, collections_path, tmp_path, {})
    assert nothing.rc != 0
    assert nothing.said('set cr (a file with the CR) or cr_name (a CR in the cluster)'), nothing.stderr


def test_a_selector_that_matches_nothing_gives_no_hosts(cluster, collections_path, tmp_path):
    name = f'inv-empty-{uuid.uuid4().hex[:6]}'
    (tmp_path / 'cr.yaml').write_text(yaml.safe_dump(skyhook(name, 'matches-nothing-' + uuid.uuid4().hex[:6])))
    inv = run_inventory(cluster, collections_path, tmp_path, {'cr': 'cr.yaml'})
    assert inv.rc == 0, inv.stderr
    assert inv.hostvars == {}
    assert 'nodewright' in inv.groups and inv.hosts('nodewright') == []
    assert not inv.said('Failed to parse'), inv.stderr
