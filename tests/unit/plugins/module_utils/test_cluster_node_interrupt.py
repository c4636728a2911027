# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""node_interrupt's run against a scripted API server (fake_api), under the v0.15 contract (a bare interrupt pod):
the wait for a rebooted node (NotReady, then Ready with a new boot ID), its timeout and message, a pod killed by the
shutdown, the boot ID kept on the node while the interrupt runs, check mode. test_job_run.py runs an interrupt as the
v0.18+ operator's Job; test_pod_run.py pins the pod steps' requests in detail.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_validation
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import node_annotations
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import pod_layout
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import node_interrupt
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules._runner import ModuleFailed
from ansible_collections.nodewright.bridge.plugins.module_utils.model.constants import BOOT_ID_PREFIX
from ansible_collections.nodewright.bridge.tests.unit.plugins.module_utils.cluster_support import (
    EVENTS, NODE_PATH, NODE_STATUS_PATH, NODES, FakeModule, api_server, calls, events_of, execute)
from ansible_collections.nodewright.bridge.tests.unit.plugins.module_utils.fake_api import (
    Pause, Stored, event, node, node_list, status_body, written)

CR_DOC = {
    'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'Skyhook',
    'metadata': {'name': 'demo', 'uid': 'cr-uid-1', 'generation': 4},
    'spec': {'packages': {'driver': {'version': '1.0.0', 'image': 'ghcr.io/x/driver', 'interrupt': {'type': 'reboot'}}}},
    'status': {'nodePriority': {'n1': '2026-05-01T10:00:00Z'}},
}
CR = cr_validation.build_cr(CR_DOC)
PACKAGE = CR.packages['driver']
KEY = PACKAGE.unique_name
NS = pod_layout.DEFAULT_NAMESPACE
POD = pod_layout.interrupt_pod_name('demo', 'reboot', 'interrupt', 'n1')
PODS = '/api/v1/namespaces/%s/pods' % NS
POD_PATH = '%s/%s' % (PODS, POD)
CMS = '/api/v1/namespaces/%s/configmaps' % NS
CR_PATH = '/apis/skyhook.nvidia.com/v1alpha1/skyhooks/demo'
BOOT_KEY = BOOT_ID_PREFIX + 'demo'
STATE_KEY = node_annotations.node_state_key('demo')
NOT_FOUND = status_body(404, 'NotFound', 'not found')


def booted(resource_version, boot_id, ready=True, annotations=None):
    doc = node('n1', resource_version, ready=ready, annotations=dict(annotations or {}, **{'skyhook.nvidia.com/cordon_demo': 'true'}),
               unschedulable=True)
    doc['status']['nodeInfo'] = {'bootID': boot_id}
    return doc


@pytest.fixture
def server():
    made = api_server()
    made.reply('GET', CR_PATH, status=404, body=NOT_FOUND, repeat=True)   # the file's CR is not in the cluster: no pause
    return made


@pytest.fixture
def stored_node(server):
    kept = Stored(booted(10, 'boot-1'))
    server.reply('GET', NODE_PATH, body=kept.get, repeat=True)
    server.reply('PATCH', NODE_PATH, body=kept.patch, repeat=True)
    server.reply('PATCH', NODE_STATUS_PATH, body=kept.patch_status, repeat=True)
    return kept


def interrupt_pod(phase='Pending', statuses=()):
    doc = pod_layout.interrupt_pod(CR, PACKAGE, {'type': 'reboot', 'services': []}, 'n1', NS, stage='interrupt')
    doc['metadata'].update(uid='pod-uid-1', resourceVersion='20')
    doc['spec']['nodeName'] = 'n1'
    doc['status'] = {'phase': phase, 'initContainerStatuses': list(statuses)}
    return doc


def finished(exit_code=0, reason='Completed'):
    return interrupt_pod('Running', [{'name': 'interrupt', 'restartCount': 0,
                                      'state': {'terminated': {'exitCode': exit_code, 'reason': reason}}}])


def created(request):
    return dict(request.body, metadata=dict(request.body['metadata'], uid='pod-uid-1', resourceVersion='20'))


def script_pod(server, verdict):
    """The pod as a dry run (accepted: nothing to adopt) and for real, the node-metadata ConfigMap, the pod's watch to
    ``verdict``, its log."""
    server.reply('POST', PODS, status=201, body=created, repeat=True)
    server.reply('POST', CMS, status=201, body=lambda request: request.body)
    server.reply('GET', PODS, body={'metadata': {'resourceVersion': '20'}, 'items': [interrupt_pod()]})
    server.stream('GET', PODS, [event('MODIFIED', verdict)])
    server.reply('GET', POD_PATH + '/log', body='rebooting\n', headers={'Content-Type': 'text/plain'}, repeat=True)


def module(**params):
    params.setdefault('timeout', 30)
    return FakeModule(node_interrupt, cr=CR_DOC, package='driver', stage='interrupt', **params)


def interrupt(server, **params):
    result = node_interrupt.run(module(**params), server.kube())
    assert server.pending() == []
    return result


def state_of(kept):
    return node_annotations.decode(kept.doc['metadata']['annotations'][STATE_KEY])[KEY]['state']


def test_a_reboot_waits_for_the_node_to_come_back_ready_with_a_new_boot_id(server, stored_node):
    script_pod(server, finished())
    server.reply('GET', NODES, body=node_list(30, booted(29, 'boot-1', ready=False)))    # rebooting
    server.stream('GET', NODES, [event('MODIFIED', booted(31, 'boot-1', ready=False)),
                                 event('MODIFIED', booted(32, 'boot-2', ready=False)),  # booted, kubelet not Ready yet
                                 event('MODIFIED', booted(33, 'boot-2'))])
    server.reply('DELETE', POD_PATH, body={'kind': 'Status', 'status': 'Success'})

    result = interrupt(server)

    assert calls(server, without=(EVENTS, CR_PATH)) == [
        'GET ' + NODE_PATH, 'POST %s dry-run' % PODS, 'PATCH %s dry-run' % NODE_PATH,
        'POST ' + CMS, 'PATCH ' + NODE_PATH, 'PATCH ' + NODE_STATUS_PATH, 'POST ' + PODS,
        'GET ' + PODS, 'GET %s watch' % PODS,
        'GET ' + NODES, 'GET %s watch' % NODES,         # the wait for the node, after the pod's verdict
        'GET %s/log' % POD_PATH, 'PATCH ' + NODE_PATH, 'DELETE ' + POD_PATH]
    assert server.of('GET', NODES)[0].query['fieldSelector'] == 'metadata.name=n1'
    # the boot ID from before is on the node while the interrupt runs (a resumed run compares with it), then goes
    in_progress, success = server.of('PATCH', NODE_PATH)[1:]
    assert written(in_progress.body)['annotations'][BOOT_KEY] == 'boot-1'
    assert written(success.body)['annotations'][BOOT_KEY] is None
    assert BOOT_KEY not in stored_node.doc['metadata']['annotations'] and state_of(stored_node) == 'complete'
    assert (result['changed'], result['outcome'], result['rebooted']) == (True, 'succeeded', True)
    assert (result['boot_id_before'], result['boot_id_after']) == ('boot-1', 'boot-2')
    assert events_of(server) == [('Reboot', 'Normal', 'Rebooted node [n1] for package [driver:1.0.0] from [skyhook:demo]: '
                                                      'back Ready with a new boot ID (boot-1 -> boot-2)')]


def test_an_interrupt_pod_killed_by_the_shutdown_still_succeeds_once_the_node_is_back(server, stored_node):
    script_pod(server, finished(exit_code=143, reason='Error'))   # SIGTERM of the shutdown
    server.reply('GET', NODES, body=node_list(30, booted(31, 'boot-2')))
    server.reply('DELETE', POD_PATH, body={'kind': 'Status', 'status': 'Success'})

    result = interrupt(server)

    assert (result['outcome'], result['rebooted'], result['boot_id_after']) == ('succeeded', True, 'boot-2')
    assert server.of('GET', NODES, watch=True) == []      # back already when the wait began
    assert state_of(stored_node) == 'complete'


def test_a_node_not_back_within_the_timeout_fails_the_interrupt_and_records_it_erroring(server, stored_node, monkeypatch):
    script_pod(server, finished())
    server.reply('GET', NODES, body=node_list(30, booted(29, 'boot-1', ready=False)), repeat=True)
    server.stream('GET', NODES, [Pause(0.6)], repeat=True)    # the node says nothing more

    # the wait gets what is left of the timeout, at least 1 s
    done = execute(monkeypatch, node_interrupt, module(timeout=1), server.kube())

    failed = done.failed
    why = ('the node did not come back within 1s (Ready: False, boot ID boot-1, was boot-1); it stays as it is, '
           'cordoned if it was')
    assert failed['msg'] == 'driver|1.0.0 interrupt (reboot) on node n1: %s; recorded as erroring' % why
    assert (failed['outcome'], failed['rebooted'], failed['boot_id_after']) == ('not-back', False, 'boot-1')
    assert failed['logs'] == {'interrupt': 'rebooting\n'}
    assert state_of(stored_node) == 'erroring'
    assert stored_node.doc['metadata']['annotations'][BOOT_KEY] == 'boot-1'   # kept for the run that resumes it
    assert server.of('DELETE') == []                      # a failed pod stays, for its logs
    assert events_of(server) == [('Reboot', 'Warning', 'Reboot of node [n1] for package [driver:1.0.0] from '
                                                       '[skyhook:demo] failed: ' + why)]


def test_a_node_deleted_while_it_reboots_fails_as_deleted(server, stored_node, monkeypatch):
    script_pod(server, finished())
    server.reply('GET', NODES, body=node_list(30))        # the watch of one node finds none

    done = execute(monkeypatch, node_interrupt, module(), server.kube())

    assert done.failed['node_deleted'] is True and done.failed['node'] == 'n1'
    assert 'node deleted' in done.failed['msg']


def test_check_mode_plans_the_interrupt_with_dry_runs_only(server, stored_node):
    server.reply('POST', PODS, status=201, body=created)

    result = interrupt(server, check_mode=True)

    assert calls(server, without=(EVENTS, CR_PATH)) == [
        'GET ' + NODE_PATH, 'POST %s dry-run' % PODS, 'PATCH %s dry-run' % NODE_PATH]
    assert (result['changed'], result['outcome']) == (True, 'planned')
    assert result['entry']['state'] == 'in_progress'
    assert STATE_KEY not in stored_node.doc['metadata']['annotations'] and events_of(server) == []


def test_an_interrupt_already_complete_is_skipped_without_a_write(server):
    done_state = node_annotations.encode({KEY: {'name': 'driver', 'version': '1.0.0', 'image': 'ghcr.io/x/driver',
                                          'stage': 'interrupt', 'state': 'complete'}})
    server.reply('GET', NODE_PATH, body=booted(10, 'boot-1', annotations={STATE_KEY: done_state}))

    result = interrupt(server)

    assert result['changed'] is False
    assert calls(server, without=(EVENTS,)) == ['GET ' + NODE_PATH]


def test_a_package_without_an_interrupt_fails_before_any_write(server):
    doc = dict(CR_DOC, spec={'packages': {'driver': {'version': '1.0.0', 'image': 'ghcr.io/x/driver'}}})
    with pytest.raises(ModuleFailed) as exc:
        node_interrupt.run(FakeModule(node_interrupt, cr=doc, package='driver', stage='interrupt'), server.kube())
    assert exc.value.msg == 'package driver of Skyhook demo has no interrupt; give one with the interrupt option'
    assert server.requests == []


def test_a_resumed_reboot_that_happened_meanwhile_completes_without_a_second_reboot(server):
    # the last run wrote in_progress and the boot ID, the node rebooted, the run was gone before it saw the node back
    running = node_annotations.encode({KEY: {'name': 'driver', 'version': '1.0.0', 'image': 'ghcr.io/x/driver',
                                       'stage': 'interrupt', 'state': 'in_progress'}})
    kept = Stored(booted(40, 'boot-2', annotations={STATE_KEY: running, BOOT_KEY: 'boot-1'}))
    server.reply('GET', NODE_PATH, body=kept.get, repeat=True)
    server.reply('PATCH', NODE_PATH, body=kept.patch, repeat=True)
    server.reply('PATCH', NODE_STATUS_PATH, body=kept.patch_status, repeat=True)
    killed = finished(exit_code=137, reason='Error')
    # the create finds the pod the shutdown killed: adopted, not replaced
    server.reply('POST', PODS, status=409, body=status_body(409, 'AlreadyExists', 'pods "%s" already exists' % POD))
    server.reply('GET', POD_PATH, body=killed)
    server.reply('POST', CMS, status=201, body=lambda request: request.body)
    server.reply('GET', PODS, body={'metadata': {'resourceVersion': '50'}, 'items': [killed]})
    server.reply('GET', POD_PATH + '/log', body='rebooting\n', headers={'Content-Type': 'text/plain'}, repeat=True)
    server.reply('GET', NODES, body=node_list(51, booted(41, 'boot-2')))
    server.reply('DELETE', POD_PATH, body={'kind': 'Status', 'status': 'Success'})

    result = interrupt(server, preflight=False)

    assert calls(server, without=(EVENTS, CR_PATH)) == [
        'GET ' + NODE_PATH, 'POST ' + CMS, 'PATCH ' + NODE_PATH, 'PATCH ' + NODE_STATUS_PATH,
        'POST ' + PODS, 'GET ' + POD_PATH,
        'GET ' + PODS,                                        # the adopted pod's verdict: killed by the shutdown
        'GET ' + NODES,                                       # the node is back with another boot ID than recorded
        'GET %s/log' % POD_PATH, 'PATCH ' + NODE_PATH, 'DELETE ' + POD_PATH]   # no new interrupt pod: no second reboot
    assert (result['outcome'], result['rebooted']) == ('succeeded', True)
    assert (result['boot_id_before'], result['boot_id_after']) == ('boot-1', 'boot-2')
    assert state_of(kept) == 'complete' and BOOT_KEY not in kept.doc['metadata']['annotations']
