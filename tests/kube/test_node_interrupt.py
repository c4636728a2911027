# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""nodewright.bridge.node_interrupt against the real API server: reboots seen through the node's bootID.

The test cluster reboots a node by itself when an interrupt pod with a node_restart payload
appears on it (fake-reboots, as the agent would; cluster.fake_reboots). Tests that play the
agent by hand opt their node out of that, or check that a reboot by hand on top of it is harmless.
"""

from __future__ import annotations

import base64
import json

import pytest

import helpers
from nodewright_fixtures import PKG_IMAGE, package

STATE = 'skyhook.nvidia.com/nodeState_'
BOOT = 'bridge.nodewright.io/boot-id-before-interrupt_'


def _annotations(cluster, node):
    return dict(cluster.core.read_node(node).metadata.annotations or {})


def _state(cluster, node, cr_name):
    text = _annotations(cluster, node).get(STATE + cr_name)
    return json.loads(text) if text else {}


def _wait_in_progress(cluster, node, cr_name, key):
    def started():
        entry = _state(cluster, node, cr_name).get(key) or {}
        return entry.get('stage') == 'interrupt' and entry.get('state') == 'in_progress'
    helpers.wait_for(started, 30, what=f'{key} interrupt in progress on {node}')


def _needs_fake_reboots(cluster):
    if not cluster.fake_reboots:
        pytest.skip('the cluster does not reboot nodes by itself (started with --no-fake-reboots)')


def test_reboot_is_detected_by_boot_id(cluster, modules, node, namespace, crs):
    """The test plays the agent: the node is rebooted by hand while the module waits, nobody else reboots it."""
    cluster.opt_out_of_fake_reboots(node)
    cr = crs.create({'tuning': package(interrupt={'type': 'reboot'}),
                     'driver': package(version='550.0.0', interrupt={'type': 'reboot'})})
    name = cr['metadata']['name']
    before = helpers.boot_id(cluster.core, node)
    handle = modules.start('node_interrupt', node=node, cr_name=name, package='tuning', covered=['driver'],
                           namespace=namespace, timeout=90)
    _wait_in_progress(cluster, node, name, 'tuning|1.2.0')
    assert _annotations(cluster, node)[BOOT + name] == before
    assert _state(cluster, node, name)['driver|550.0.0']['state'] == 'skipped'
    new = cluster.reboot_node(node)
    result = modules.finish(handle)
    assert result['rc'] == 0, result
    assert result['outcome'] == 'succeeded' and result['rebooted'] is True
    assert result['boot_id_before'] == before and result['boot_id_after'] == new != before
    state = _state(cluster, node, name)
    assert state['tuning|1.2.0'] == {'name': 'tuning', 'version': '1.2.0', 'image': PKG_IMAGE, 'stage': 'interrupt',
                                     'state': 'complete'}
    assert state['driver|550.0.0']['state'] == 'complete'  # the merged interrupt covered it
    assert BOOT + name not in _annotations(cluster, node)
    assert 'interrupt' in result['logs']
    assert cluster.fake_reboot_record(node) is None


def test_the_interrupt_pod_reboots_the_node(cluster, modules, node, namespace, crs):
    """No test thread reboots: the interrupt pod does, as the agent would, and the module sees it."""
    _needs_fake_reboots(cluster)
    cr = crs.create({'tuning': package(interrupt={'type': 'reboot'})})
    name = cr['metadata']['name']
    before = helpers.boot_id(cluster.core, node)
    result = modules.run('node_interrupt', node=node, cr_name=name, package='tuning', namespace=namespace, timeout=60)
    assert result['rc'] == 0, result
    assert result['outcome'] == 'succeeded' and result['rebooted'] is True
    record = cluster.wait_fake_reboot(node, result['pod']['uid'])
    assert record['state'] == 'done' and record['pod'] == f"{namespace}/{result['pod']['name']}"
    assert record['previousBootID'] == before == result['boot_id_before']
    assert result['boot_id_after'] == record['bootID'] == helpers.boot_id(cluster.core, node) != before
    assert helpers.node_ready(cluster.core, node) == 'True'
    assert _state(cluster, node, name)['tuning|1.2.0']['state'] == 'complete'
    assert BOOT + name not in _annotations(cluster, node)


def test_a_reboot_by_hand_on_top_of_the_automatic_one(cluster, modules, node, namespace, crs):
    """A test that still reboots by hand while the interrupt pod reboots too: both happen, one after the other."""
    _needs_fake_reboots(cluster)
    cr = crs.create({'tuning': package(interrupt={'type': 'reboot'})})
    name = cr['metadata']['name']
    before = helpers.boot_id(cluster.core, node)
    handle = modules.start('node_interrupt', node=node, cr_name=name, package='tuning', namespace=namespace, timeout=90)
    _wait_in_progress(cluster, node, name, 'tuning|1.2.0')
    by_hand = cluster.reboot_node(node)  # waits while the automatic one runs; that one waits for it
    result = modules.finish(handle)
    assert result['rc'] == 0, result
    assert result['outcome'] == 'succeeded' and result['rebooted'] is True
    record = cluster.wait_fake_reboot(node, result['pod']['uid'])
    assert record['state'] == 'done'
    # Whichever came first ended the module's wait; the later one is the node's bootID now.
    assert result['boot_id_after'] in (by_hand, record['bootID']) and before not in (by_hand, record['bootID'])
    assert helpers.boot_id(cluster.core, node) in (by_hand, record['bootID'])
    if record['previousBootID'] == by_hand:  # the automatic reboot came second
        assert helpers.boot_id(cluster.core, node) == record['bootID']
    else:
        assert record['previousBootID'] == before and helpers.boot_id(cluster.core, node) == by_hand
    assert helpers.node_ready(cluster.core, node) == 'True'
    assert _state(cluster, node, name)['tuning|1.2.0']['state'] == 'complete'


def test_a_node_that_never_returns_times_out_and_stays_cordoned(cluster, modules, node, namespace, crs):
    cr = crs.create({'tuning': package(interrupt={'type': 'reboot'})})
    name = cr['metadata']['name']
    assert modules.run('node_cordon', name=node, owner=name)['rc'] == 0
    handle = modules.start('node_interrupt', node=node, cr_name=name, package='tuning', namespace=namespace, timeout=15)
    _wait_in_progress(cluster, node, name, 'tuning|1.2.0')
    cluster.take_node_away(node)
    result = modules.finish(handle)
    assert result['failed'] is True and result['outcome'] == 'not-back'
    assert f'node {node}: the node did not come back within 15s' in result['msg']
    entry = _state(cluster, node, name)['tuning|1.2.0']
    assert (entry['stage'], entry['state']) == ('interrupt', 'erroring')
    node_obj = cluster.core.read_node(node)
    assert node_obj.spec.unschedulable is True
    assert node_obj.metadata.labels['skyhook.nvidia.com/status_' + name] == 'erroring'
    # The automatic reboot did not bring it back: skipped, or stopped halfway (then kwok's pending
    # not-ready stage may still turn Unknown into False; never True).
    assert helpers.node_ready(cluster.core, node) in ('Unknown', 'False')
    record = cluster.fake_reboot_record(node)
    assert record is None or record['state'] == 'aborted', record


def test_rerun_after_the_reboot_already_happened(cluster, modules, node, namespace, crs):
    """A run killed while the node rebooted: the recorded boot ID tells the re-run the reboot is done."""
    cr = crs.create({'tuning': package(interrupt={'type': 'reboot'})})
    name = cr['metadata']['name']
    first = modules.start('node_interrupt', node=node, cr_name=name, package='tuning', namespace=namespace, timeout=90)
    _wait_in_progress(cluster, node, name, 'tuning|1.2.0')
    first[1].kill()  # ansible-playbook killed mid-interrupt
    first[1].wait()
    cluster.reboot_node(node)
    result = modules.run('node_interrupt', node=node, cr_name=name, package='tuning', namespace=namespace, timeout=30)
    assert result['rc'] == 0, result
    assert result['rebooted'] is True and result['boot_id_after'] != result['boot_id_before']
    assert _state(cluster, node, name)['tuning|1.2.0']['state'] == 'complete'


def test_service_interrupt_pod_carries_the_operator_payload(cluster, modules, node, namespace, crs):
    cr = crs.create({'containerd': package(interrupt={'type': 'service', 'services': ['containerd', 'kubelet']})})
    name = cr['metadata']['name']
    planned = modules.run('node_interrupt', node=node, cr_name=name, package='containerd', namespace=namespace, check=True)
    assert planned['rc'] == 0 and planned['outcome'] == 'planned'
    container = planned['manifest']['spec']['initContainers'][0]
    assert container['name'] == 'interrupt'
    assert json.loads(base64.b64decode(container['args'][3])) == {'type': 'service_restart',
                                                                  'services': ['containerd', 'kubelet']}
    assert planned['manifest']['metadata']['labels']['skyhook.nvidia.com/interrupt'] == 'True'
    assert STATE + name not in _annotations(cluster, node)
    result = modules.run('node_interrupt', node=node, cr_name=name, package='containerd', namespace=namespace, timeout=60)
    assert result['rc'] == 0 and result['outcome'] == 'succeeded' and 'rebooted' not in result
    assert _state(cluster, node, name)['containerd|1.2.0']['state'] == 'complete'
    again = modules.run('node_interrupt', node=node, cr_name=name, package='containerd', namespace=namespace)
    assert again['changed'] is False and again['outcome'] == 'skipped'


def test_a_package_without_interrupt_is_refused(cluster, modules, node, namespace, crs):
    cr = crs.create({'tuning': package()})
    result = modules.run('node_interrupt', node=node, cr_name=cr['metadata']['name'], package='tuning', namespace=namespace)
    assert result['failed'] is True and 'has no interrupt' in result['msg']
    assert not cluster.core.list_namespaced_pod(namespace).items
