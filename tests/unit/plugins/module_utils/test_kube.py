# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""kube.Kube against a scripted API server at the HTTP layer (fake_api): retries, races, watches.

The cluster tests (tests/kube) remain the real check; these pin the answers a real server
gives rarely (409 on a guarded patch, a create that loses a race, an expired or cut watch).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import inspect
import socket
import threading
import time

import pytest

from ansible_collections.nodewright.bridge.plugins.module_utils.model import api_generation
from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube as kube_api
from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube_transport
from ansible_collections.nodewright.bridge.plugins.module_utils.api import watches as kube_watches
from ansible_collections.nodewright.bridge.tests.unit.plugins.module_utils.fake_api import (
    FakeApiServer, Pause, Stored, event, gone_event, guard, node, node_list, status_body)

NODE_PATH = '/api/v1/nodes/n1'
NODES = '/api/v1/nodes'
CM_PATH = '/api/v1/namespaces/skyhook/configmaps/meta'
CMS = '/api/v1/namespaces/skyhook/configmaps'
CONFLICT = status_body(409, 'Conflict', 'Operation cannot be fulfilled on nodes "n1": the object has been modified')


@pytest.fixture
def server():
    return FakeApiServer()


@pytest.fixture
def kube(server):
    return server.kube()


def echo_node(request):
    """What a server answers to a node patch: the node with the patched labels, one version on."""
    meta = request.body['metadata']
    return node('n1', int(meta['resourceVersion']) + 1, labels=meta.get('labels'))


# --------------------------------------------------------------------------- update_node


def test_update_node_reapplies_the_mutation_on_the_fresh_node_after_a_conflict(server, kube):
    server.reply('GET', NODE_PATH, body=node('n1', 5, labels={'count': '1'}))
    server.reply('PATCH', NODE_PATH, status=409, body=CONFLICT)
    server.reply('GET', NODE_PATH, body=node('n1', 6, labels={'count': '2'}))  # another writer's change
    server.reply('PATCH', NODE_PATH, body=echo_node)
    seen = []

    def bump(current):
        seen.append(current['metadata']['resourceVersion'])
        return {'metadata': {'labels': {'count': str(int(current['metadata']['labels']['count']) + 1)}}}

    after, patch = kube.update_node('n1', bump)

    assert seen == ['5', '6']
    patches = server.of('PATCH')
    assert [p.body for p in patches] == [
        {'metadata': {'labels': {'count': '2'}, 'resourceVersion': '5'}},
        {'metadata': {'labels': {'count': '3'}, 'resourceVersion': '6'}}]
    # the caller gets the mutation's own patch (no resourceVersion) and the node as the server returned it
    assert patch == {'metadata': {'labels': {'count': '3'}}}
    assert after['metadata']['resourceVersion'] == '7' and after['metadata']['labels'] == {'count': '3'}
    assert [r.method for r in server.requests] == ['GET', 'PATCH', 'GET', 'PATCH']


def test_update_node_gives_up_after_its_attempts(server, kube):
    for version in (1, 2, 3):
        server.reply('GET', NODE_PATH, body=node('n1', version))
        server.reply('PATCH', NODE_PATH, status=409, body=CONFLICT)

    with pytest.raises(kube_api.Conflict) as exc:
        kube.update_node('n1', lambda current: {'metadata': {'labels': {'a': 'b'}}}, attempts=3)

    assert exc.value.status == 409
    assert 'still conflicting after 3 attempts' in exc.value.message
    assert [p.body['metadata']['resourceVersion'] for p in server.of('PATCH')] == ['1', '2', '3']
    assert server.pending() == []


def test_update_node_writes_nothing_when_the_mutation_has_nothing_to_do(server, kube):
    server.reply('GET', NODE_PATH, body=node('n1', 4))
    current, patch = kube.update_node('n1', lambda current: None)
    assert patch is None and current['metadata']['resourceVersion'] == '4'
    assert server.of('PATCH') == []


def test_update_node_starts_from_the_node_this_process_last_wrote(server, kube):
    # first update: read, write; the server's answer is remembered
    server.reply('GET', NODE_PATH, body=node('n1', 1))
    server.reply('PATCH', NODE_PATH, body=echo_node)
    kube.update_node('n1', lambda current: {'metadata': {'labels': {'step': 'one'}}})
    # second update: no read, the guarded patch carries the remembered version (2); stale -> 409, read, retry
    server.reply('PATCH', NODE_PATH, status=409, body=CONFLICT)
    server.reply('GET', NODE_PATH, body=node('n1', 9))
    server.reply('PATCH', NODE_PATH, body=echo_node)
    kube.update_node('n1', lambda current: {'metadata': {'labels': {'step': 'two'}}})

    assert [r.method for r in server.requests] == ['GET', 'PATCH', 'PATCH', 'GET', 'PATCH']
    assert [p.body['metadata']['resourceVersion'] for p in server.of('PATCH')] == ['1', '2', '9']


STATE = 'skyhook.nvidia.com/nodeState_a'


def test_update_node_by_keys_is_not_refused_for_what_else_changed_on_the_node(server, kube):
    stored = Stored(node('n1', 1, annotations={STATE: '{}'}))
    server.reply('GET', NODE_PATH, body=stored.get)
    server.reply('PATCH', NODE_PATH, body=stored.patch, repeat=True)
    kube.update_node('n1', lambda current: {'metadata': {'annotations': {STATE: '{"a":1}'}}}, by_keys=[STATE])
    # a taint and a heartbeat since: a version guard would be refused (409); the key guard is not
    stored.doc['metadata']['resourceVersion'] = '9'
    stored.doc['spec']['taints'] = [{'key': 'node.kubernetes.io/unschedulable', 'effect': 'NoSchedule'}]
    kube.update_node('n1', lambda current: {'metadata': {'annotations': {STATE: '{"a":2}'}}}, by_keys=[STATE])

    assert [r.method for r in server.requests] == ['GET', 'PATCH', 'PATCH']
    assert [guard(p.body) for p in server.of('PATCH')] == [('keys', {'annotations/' + STATE: '{}'}),
                                                           ('keys', {'annotations/' + STATE: '{"a":1}'})]
    assert stored.doc['metadata']['annotations'][STATE] == '{"a":2}' and stored.doc['spec']['taints']


def test_update_node_by_keys_reads_again_and_retries_when_a_key_changed(server, kube):
    stored = Stored(node('n1', 1, annotations={STATE: '{}'}))
    server.reply('GET', NODE_PATH, body=stored.get, repeat=True)
    server.reply('PATCH', NODE_PATH, body=stored.patch, repeat=True)
    kube.get_node('n1')
    stored.doc['metadata']['annotations'][STATE] = '{"theirs":1}'   # written by another writer since the read
    seen = []

    def mutate(current):
        seen.append(current['metadata']['annotations'][STATE])
        return {'metadata': {'annotations': {STATE: seen[-1][:-1] + ',"ours":1}'}}}

    kube.update_node('n1', mutate, by_keys=[STATE])

    assert seen == ['{}', '{"theirs":1}']
    assert [r.method for r in server.requests] == ['GET', 'PATCH', 'GET', 'PATCH']
    assert stored.doc['metadata']['annotations'][STATE] == '{"theirs":1,"ours":1}'  # nothing of theirs lost


def test_update_node_starts_from_this_processs_copy_when_it_is_newer_than_the_callers(server, kube):
    # the caller read the node at 1; another package thread of this process wrote it since (2)
    stored = Stored(node('n1', 1, annotations={STATE: '{}'}))
    server.reply('GET', NODE_PATH, body=stored.get)
    server.reply('PATCH', NODE_PATH, body=stored.patch, repeat=True)
    callers = kube.get_node('n1')
    kube.update_node('n1', lambda current: {'metadata': {'annotations': {STATE: '{"a":1}'}}}, by_keys=[STATE])
    kube.update_node('n1', lambda current: {'metadata': {'annotations': {STATE: current['metadata']['annotations'][STATE]
                                                                         [:-1] + ',"b":1}'}}},
                     node=callers, by_keys=[STATE])
    assert [r.method for r in server.requests] == ['GET', 'PATCH', 'PATCH']  # no refusal, no second read
    assert stored.doc['metadata']['annotations'][STATE] == '{"a":1,"b":1}'


def test_update_node_by_keys_raises_a_refusal_that_is_not_about_its_keys(server, kube):
    stored = Stored(node('n1', 1, annotations={STATE: '{}'}))
    server.reply('GET', NODE_PATH, body=stored.get, repeat=True)
    server.reply('PATCH', NODE_PATH, status=422, body=status_body(422, 'Invalid', 'metadata.annotations: Too long'))
    with pytest.raises(kube_api.KubeError) as exc:
        kube.update_node('n1', lambda current: {'metadata': {'annotations': {STATE: 'x' * 10}}}, by_keys=[STATE])
    assert exc.value.status == 422 and 'Too long' in exc.value.message
    assert [r.method for r in server.requests] == ['GET', 'PATCH', 'GET']  # read once to tell, not retried


def test_update_node_dry_run_asks_the_server_for_a_dry_run(server, kube):
    server.reply('GET', NODE_PATH, body=node('n1', 3))
    server.reply('PATCH', NODE_PATH, body=echo_node)
    kube.update_node('n1', lambda current: {'metadata': {'labels': {'a': 'b'}}}, dry_run=True)
    assert server.of('PATCH')[0].query.get('dryRun') == 'All'


def test_a_missing_node_is_not_found_naming_it(server, kube):
    server.reply('GET', NODE_PATH, status=404, body=status_body(404, 'NotFound', 'nodes "n1" not found'))
    with pytest.raises(kube_api.NodeGone) as exc:
        kube.update_node('n1', lambda current: None)
    assert exc.value.status == 404 and exc.value.message == (
        'node n1 does not exist in the cluster at %s (node deleted, or never joined)' % server.host)


# --------------------------------------------------------------------------- apply_configmap


def configmap(data, labels=None, resource_version=None):
    meta = {'name': 'meta', 'namespace': 'skyhook', 'labels': dict(labels or {})}
    if resource_version:
        meta['resourceVersion'] = str(resource_version)
    return {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': meta, 'data': dict(data)}


WANTED = configmap({'labels.json': '{"a":"b"}'}, labels={'skyhook.nvidia.com/skyhook-node-meta': 'cr'})
NOT_FOUND = status_body(404, 'NotFound', 'configmaps "meta" not found')
ALREADY_EXISTS = status_body(409, 'AlreadyExists', 'configmaps "meta" already exists')


def test_apply_configmap_creates_one_it_has_not_seen_without_asking_for_it_first(server, kube):
    server.reply('POST', CMS, status=201, body=lambda request: request.body)
    assert kube.apply_configmap(WANTED) == 'created'
    assert [r.method for r in server.requests] == ['POST'] and server.of('POST')[0].body == WANTED


def test_apply_configmap_reads_one_it_has_seen_first(server, kube):
    server.reply('POST', CMS, status=201, body=lambda request: request.body)
    server.reply('GET', CM_PATH, body=configmap(WANTED['data'], labels=WANTED['metadata']['labels'], resource_version=3))
    assert kube.apply_configmap(WANTED) == 'created'
    assert kube.apply_configmap(WANTED) == 'unchanged'  # the next stage on the node: read, not created again
    assert [r.method for r in server.requests] == ['POST', 'GET']


def test_apply_configmap_creates_again_one_deleted_since_it_was_seen(server, kube):
    server.reply('POST', CMS, status=201, body=lambda request: request.body, repeat=True)
    server.reply('GET', CM_PATH, status=404, body=NOT_FOUND)
    assert kube.apply_configmap(WANTED) == 'created'
    assert kube.apply_configmap(WANTED) == 'created'
    assert [r.method for r in server.requests] == ['POST', 'GET', 'POST']


def test_the_writers_of_one_configmap_in_a_process_take_turns_and_create_it_once(server, kube):
    """The first batch's nodes apply the package's ConfigMap together: one creates it, the others read it, none is
    refused (without turns: one create, then a 409 for each other node)."""
    server.reply('POST', CMS, status=201, body=lambda request: request.body, delay=0.2)
    server.reply('GET', CM_PATH, body=configmap(WANTED['data'], labels=WANTED['metadata']['labels'], resource_version=3),
                 repeat=True)
    outcomes = []
    threads = [threading.Thread(target=lambda: outcomes.append(kube.apply_configmap(WANTED))) for unused in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(5)
    assert sorted(outcomes) == ['created', 'unchanged', 'unchanged', 'unchanged']
    assert [r.method for r in server.requests] == ['POST', 'GET', 'GET', 'GET']


def test_apply_configmap_that_loses_the_create_race_updates_the_winners_copy(server, kube):
    server.reply('POST', CMS, status=409, body=ALREADY_EXISTS)
    # the other writer's copy: other data, an extra key to drop, labels of its own kept
    theirs = configmap({'labels.json': '{}', 'stale.json': '1'}, labels={'theirs': 'x'}, resource_version=12)
    server.reply('GET', CM_PATH, body=theirs)
    server.reply('PATCH', CM_PATH, body=lambda request: request.body)

    assert kube.apply_configmap(WANTED) == 'updated'

    assert [r.method for r in server.requests] == ['POST', 'GET', 'PATCH']
    assert server.of('PATCH')[0].body == {
        'metadata': {'labels': {'skyhook.nvidia.com/skyhook-node-meta': 'cr'}, 'annotations': {},
                     'resourceVersion': '12'},
        'data': {'labels.json': '{"a":"b"}', 'stale.json': None}}


def test_apply_configmap_that_loses_the_create_race_to_the_same_content_is_unchanged(server, kube):
    server.reply('POST', CMS, status=409, body=ALREADY_EXISTS)
    server.reply('GET', CM_PATH, body=configmap(WANTED['data'], labels=dict(WANTED['metadata']['labels'], more='y'),
                                                resource_version=3))
    assert kube.apply_configmap(WANTED) == 'unchanged'
    assert server.of('PATCH') == []


def test_apply_configmap_retries_an_update_that_conflicts(server, kube):
    server.reply('POST', CMS, status=409, body=ALREADY_EXISTS)
    server.reply('GET', CM_PATH, body=configmap({'labels.json': '{}'}, resource_version=1))
    server.reply('PATCH', CM_PATH, status=409, body=status_body(409, 'Conflict', 'the object has been modified'))
    server.reply('GET', CM_PATH, body=configmap({'labels.json': '{"x":1}'}, resource_version=2))
    server.reply('PATCH', CM_PATH, body=lambda request: request.body)
    assert kube.apply_configmap(WANTED) == 'updated'
    assert [p.body['metadata']['resourceVersion'] for p in server.of('PATCH')] == ['1', '2']
    assert [r.method for r in server.requests] == ['POST', 'GET', 'PATCH', 'GET', 'PATCH']


def test_apply_configmap_gives_up_after_its_attempts(server, kube):
    # there at each create, gone at each read (deleted and made again by another writer, over and over)
    for _attempt in range(2):
        server.reply('POST', CMS, status=409, body=ALREADY_EXISTS)
        server.reply('GET', CM_PATH, status=404, body=NOT_FOUND)
    with pytest.raises(kube_api.Conflict) as exc:
        kube.apply_configmap(WANTED, attempts=2)
    assert 'configmap skyhook/meta: still conflicting after 2 attempts' in exc.value.message
    assert server.pending() == []


def test_apply_configmap_dry_run(server, kube):
    server.reply('POST', CMS, status=201, body=lambda request: request.body, repeat=True)
    assert kube.apply_configmap(WANTED, dry_run=True) == 'created'
    assert server.of('POST')[0].query.get('dryRun') == 'All'
    assert kube.apply_configmap(WANTED, dry_run=True) == 'created'  # a dry run's answer is not taken for one seen
    assert [r.method for r in server.requests] == ['POST', 'POST']


def test_a_forbidden_create_names_the_request_and_the_server(server, kube):
    server.reply('POST', CMS, status=403, body=status_body(403, 'Forbidden', 'configmaps is forbidden: User "x"'))
    with pytest.raises(kube_api.KubeError) as exc:
        kube.apply_configmap(WANTED)
    assert exc.value.status == 403
    assert exc.value.message == ('create configmap skyhook/meta: forbidden by the API server at %s '
                                 '(configmaps is forbidden: User "x")' % server.host)


# --------------------------------------------------------------------------- watch_until


def ready_names(objects):
    return sorted(o['metadata']['name'] for o in objects.values()
                  if o['status']['conditions'][0]['status'] == 'True')


def watches(server):
    return server.of('GET', NODES, watch=True)


def test_watch_until_returns_at_once_when_the_list_satisfies_it(server, kube):
    server.reply('GET', NODES, body=node_list(10, node('n1', 9)))
    assert kube.watch_until('nodes', ready_names, 5) == ['n1']
    assert watches(server) == []


def test_watch_until_follows_events_from_the_lists_version(server, kube):
    server.reply('GET', NODES, body=node_list(10, node('n1', 9, ready=False), node('n2', 8, ready=False)))
    server.stream('GET', NODES, [event('DELETED', node('n2', 11, ready=False)), event('MODIFIED', node('n1', 12))])
    seen = []
    result = kube.watch_until('nodes', ready_names, 5, label_selector='pool=gpu',
                              on_event=lambda etype, obj: seen.append((etype, obj['metadata']['name'])))
    assert result == ['n1']
    assert seen == [('DELETED', 'n2'), ('MODIFIED', 'n1')]
    watch = watches(server)[0]
    assert watch.query['resourceVersion'] == '10'
    assert watch.query['labelSelector'] == 'pool=gpu' and server.of('GET', NODES)[0].query['labelSelector'] == 'pool=gpu'
    assert watch.query['allowWatchBookmarks'] == 'true'


def test_watch_until_lists_again_when_the_watch_expires(server, kube):
    server.reply('GET', NODES, body=node_list(10, node('n1', 9, ready=False)))
    server.stream('GET', NODES, [gone_event()])
    server.reply('GET', NODES, body=node_list(20, node('n1', 19, ready=False)))
    server.stream('GET', NODES, [event('MODIFIED', node('n1', 21))])

    assert kube.watch_until('nodes', ready_names, 5) == ['n1']

    assert [(r.watch, r.query.get('resourceVersion')) for r in server.requests] == [
        (False, None), (True, '10'), (False, None), (True, '20')]


def test_watch_until_lists_again_when_the_watch_request_itself_is_gone(server, kube):
    server.reply('GET', NODES, body=node_list(10, node('n1', 9, ready=False)))
    server.stream('GET', NODES, [status_body(410, 'Expired', 'too old resource version: 10 (42)')], status=410)
    server.reply('GET', NODES, body=node_list(42, node('n1', 41, ready=False)))
    server.stream('GET', NODES, [event('MODIFIED', node('n1', 43))])
    assert kube.watch_until('nodes', ready_names, 5) == ['n1']
    assert [r.query['resourceVersion'] for r in watches(server)] == ['10', '42']


def test_watch_until_fails_on_a_refused_watch(server, kube):
    server.reply('GET', NODES, body=node_list(10, node('n1', 9, ready=False)))
    server.stream('GET', NODES, [status_body(403, 'Forbidden', 'nodes is forbidden: cannot watch')], status=403)
    with pytest.raises(kube_api.KubeError) as exc:
        kube.watch_until('nodes', ready_names, 5)
    assert exc.value.status == 403 and exc.value.message.startswith('watch nodes: forbidden by the API server')


def test_watch_until_sees_the_new_list_when_the_watch_expires(server, kube):
    # what changed while the watch was expired shows in the new list, without any event
    server.reply('GET', NODES, body=node_list(10, node('n1', 9, ready=False)))
    server.stream('GET', NODES, [gone_event()])
    server.reply('GET', NODES, body=node_list(20, node('n1', 19)))
    assert kube.watch_until('nodes', ready_names, 5) == ['n1']
    assert len(watches(server)) == 1


def test_watch_until_reconnects_from_the_last_version_when_the_stream_is_cut(server, kube):
    server.reply('GET', NODES, body=node_list(10, node('n1', 9, ready=False), node('n2', 9, ready=False)))
    server.stream('GET', NODES, [ConnectionResetError(104, 'Connection reset by peer')])  # cut before any event
    server.stream('GET', NODES, [event('MODIFIED', node('n2', 14, ready=False))], cut=True)  # cut after one
    server.stream('GET', NODES, [event('MODIFIED', node('n1', 15))])

    assert kube.watch_until('nodes', ready_names, 5) == ['n1']

    assert [r.query['resourceVersion'] for r in watches(server)] == ['10', '10', '14']
    assert len(server.of('GET', NODES, watch=False)) == 1  # a cut stream is no reason to list again


def test_watch_until_resumes_from_its_last_version_when_the_stream_goes_silent(server, kube):
    # a silently cut watch (no byte for WATCH_IDLE_SECONDS): watched again from the last version seen, which
    # gives every later event again (client-go's reflector); no new list
    server.reply('GET', NODES, body=node_list(10, node('n1', 9, ready=False)))
    server.stream('GET', NODES, [event('MODIFIED', node('n1', 11, ready=False)), socket.timeout('timed out')])
    server.stream('GET', NODES, [event('MODIFIED', node('n1', 21))])

    assert kube.watch_until('nodes', ready_names, 5) == ['n1']

    assert len(server.of('GET', NODES, watch=False)) == 1
    assert [r.query['resourceVersion'] for r in watches(server)] == ['10', '11']
    assert watches(server)[0].timeout.read_timeout == kube_api.WATCH_IDLE_SECONDS


def test_watch_until_lists_again_when_the_version_it_resumes_from_is_gone(server, kube):
    # silent, then the server no longer has version 11 (410): only then a new list
    server.reply('GET', NODES, body=node_list(10, node('n1', 9, ready=False)))
    server.stream('GET', NODES, [event('MODIFIED', node('n1', 11, ready=False)), socket.timeout('timed out')])
    server.stream('GET', NODES, [event('ERROR', status_body(410, 'Expired', 'too old resource version: 11'))])
    server.reply('GET', NODES, body=node_list(20, node('n1', 19, ready=False)))
    server.stream('GET', NODES, [event('MODIFIED', node('n1', 21))])

    assert kube.watch_until('nodes', ready_names, 5) == ['n1']

    assert len(server.of('GET', NODES, watch=False)) == 2
    assert [r.query['resourceVersion'] for r in watches(server)] == ['10', '11', '20']


def test_watch_until_reconnects_when_the_server_ends_the_watch_and_resumes_at_a_bookmark(server, kube):
    server.reply('GET', NODES, body=node_list(10, node('n1', 9, ready=False)))
    server.stream('GET', NODES, [])  # closed at timeoutSeconds, no event
    server.stream('GET', NODES, [event('BOOKMARK', {'kind': 'Node', 'metadata': {'resourceVersion': '30'}})])
    server.stream('GET', NODES, [event('MODIFIED', node('n1', 31))])
    assert kube.watch_until('nodes', ready_names, 5, on_event=lambda etype, obj: None) == ['n1']
    assert [r.query['resourceVersion'] for r in watches(server)] == ['10', '10', '30']


def test_watch_until_error_event_other_than_gone_fails(server, kube):
    server.reply('GET', NODES, body=node_list(10, node('n1', 9, ready=False)))
    server.stream('GET', NODES, [event('ERROR', status_body(500, 'InternalError', 'etcd is sad'))])
    with pytest.raises(kube_api.KubeError) as exc:
        kube.watch_until('nodes', ready_names, 5)
    assert exc.value.message == 'watch nodes: etcd is sad' and exc.value.status == 500


def test_watch_until_times_out_with_the_objects_it_saw_last(server, kube):
    server.reply('GET', NODES, body=node_list(10, node('n1', 9, ready=False)))
    # each watch: the server holds the connection a while and ends it without an event
    server.stream('GET', NODES, [Pause(0.05)], repeat=True)
    started = time.time()
    with pytest.raises(kube_api.WaitTimeout) as exc:
        kube.watch_until('nodes', ready_names, 0.3, what='n1 to be Ready')
    elapsed = time.time() - started
    assert 0.3 <= elapsed < 2
    assert exc.value.message == 'timed out after 0.3s waiting for n1 to be Ready'
    assert list(exc.value.last.values())[0]['metadata']['name'] == 'n1'
    first = watches(server)[0]
    # the server is asked to end the watch by the deadline (whole seconds, at least 1); a read waits for
    # WATCH_IDLE_SECONDS at most
    assert first.query['timeoutSeconds'] == '1'
    assert first.timeout.read_timeout == kube_api.WATCH_IDLE_SECONDS


def test_watch_until_stops_at_the_deadline_while_events_keep_coming(server, kube):
    server.reply('GET', NODES, body=node_list(10, node('n1', 9, ready=False)))
    pieces = []
    for version in range(11, 31):
        pieces += [Pause(0.05), event('MODIFIED', node('n1', version, ready=False))]
    server.stream('GET', NODES, pieces)
    seen = []
    with pytest.raises(kube_api.WaitTimeout):
        kube.watch_until('nodes', ready_names, 0.3, on_event=lambda etype, obj: seen.append(etype))
    assert 0 < len(seen) < 20
    assert len(watches(server)) == 1


def test_watch_until_of_pods_in_a_namespace_watches_that_namespace(server, kube):
    path = '/api/v1/namespaces/skyhook/pods'
    pod = {'metadata': {'name': 'p', 'uid': 'u-p', 'resourceVersion': '5'}, 'status': {'phase': 'Pending'}}
    server.reply('GET', path, body={'metadata': {'resourceVersion': '5'}, 'items': [pod]})
    server.stream('GET', path, [event('MODIFIED', dict(pod, status={'phase': 'Succeeded'}))])
    result = kube.watch_until('pods', lambda objects: [o['status']['phase'] for o in objects.values()
                                                       if o['status']['phase'] == 'Succeeded'],
                              5, namespace='skyhook', field_selector='spec.nodeName=n1')
    assert result == ['Succeeded']
    assert server.of('GET', path, watch=True)[0].query['fieldSelector'] == 'spec.nodeName=n1'


# --------------------------------------------------------------------------- jobs (batch/v1)

JOBS = '/apis/batch/v1/namespaces/nodewright/jobs'
JOB_PATH = JOBS + '/stage'


def job(resource_version=5, **status):
    return {'apiVersion': 'batch/v1', 'kind': 'Job', 'status': dict(status),
            'metadata': {'name': 'stage', 'namespace': 'nodewright', 'uid': 'job-uid', 'resourceVersion': str(resource_version)}}


def test_a_job_is_created_and_read_in_its_namespace(server, kube):
    manifest = job()
    server.reply('POST', JOBS, status=201, body=lambda request: request.body, repeat=True)
    server.reply('GET', JOB_PATH, body=job())
    assert kube.create_job('nodewright', manifest, dry_run=True)['metadata']['name'] == 'stage'
    kube.create_job('nodewright', manifest)
    assert kube.get_job('nodewright', 'stage')['metadata']['uid'] == 'job-uid'
    posts = server.of('POST', JOBS)
    assert [r.query.get('dryRun') for r in posts] == ['All', None] and posts[1].body == manifest


def test_a_job_is_merge_patched(server, kube):
    server.reply('PATCH', JOB_PATH, body=lambda request: dict(job(6), spec=request.body['spec']))
    patch = {'metadata': {'annotations': {'nodewright.nvidia.com/state-recorded': 'true'}},
             'spec': {'ttlSecondsAfterFinished': 3600}}
    assert kube.patch_job('nodewright', 'stage', patch)['spec'] == {'ttlSecondsAfterFinished': 3600}
    sent = server.of('PATCH', JOB_PATH)[0]
    assert sent.body == patch and sent.headers['Content-Type'] == 'application/merge-patch+json'


def test_a_job_is_deleted_with_its_pods_in_the_background_and_only_that_incarnation(server, kube):
    server.reply('DELETE', JOB_PATH, body={'kind': 'Status', 'status': 'Success'})
    server.reply('DELETE', JOB_PATH, status=404, body=status_body(404, 'NotFound', 'jobs.batch "stage" not found'))
    server.reply('DELETE', JOB_PATH, status=409, body=status_body(409, 'Conflict', 'the UID in the precondition differs'))
    assert kube.delete_job('nodewright', 'stage', uid='job-uid') is True
    assert kube.delete_job('nodewright', 'stage') is False        # already gone
    assert kube.delete_job('nodewright', 'stage', uid='job-uid') is False   # a newer Job by that name: not ours
    bodies = [r.body for r in server.of('DELETE', JOB_PATH)]
    assert bodies[0] == {'propagationPolicy': 'Background', 'preconditions': {'uid': 'job-uid'}}
    assert bodies[1] == {'propagationPolicy': 'Background'}


def test_a_missing_job_is_not_found_naming_it(server, kube):
    server.reply('GET', JOB_PATH, status=404, body=status_body(404, 'NotFound', 'jobs.batch "stage" not found'))
    with pytest.raises(kube_api.NotFound) as exc:
        kube.get_job('nodewright', 'stage')
    assert exc.value.message == 'get job nodewright/stage: not found (jobs.batch "stage" not found)'


def test_watch_until_of_jobs_in_a_namespace_watches_that_namespace(server, kube):
    server.reply('GET', JOBS, body={'metadata': {'resourceVersion': '5'}, 'items': [job(active=1)]})
    server.stream('GET', JOBS, [event('MODIFIED', job(6, succeeded=1))])
    result = kube.watch_until('jobs', lambda objects: [o['status'] for o in objects.values() if o['status'].get('succeeded')],
                              5, namespace='nodewright', field_selector='metadata.name=stage')
    assert result == [{'succeeded': 1}]
    watch = server.of('GET', JOBS, watch=True)[0]
    assert watch.query['fieldSelector'] == 'metadata.name=stage' and watch.query['resourceVersion'] == '5'


def test_a_job_request_rides_out_an_api_server_restart(server, kube, quick_retries):
    server.reply('GET', JOB_PATH, body=job())
    refused = refusing(server, 2)
    assert kube.get_job('nodewright', 'stage')['metadata']['uid'] == 'job-uid'
    assert len(refused) == 2


def test_an_unreachable_server_is_named(server):
    kube = server.kube(api_outage_timeout=0)

    def refuse(*args, **kwargs):
        raise ConnectionRefusedError(111, 'Connection refused')

    server.request = refuse
    with pytest.raises(kube_api.KubeError) as exc:
        kube.list_nodes()
    assert exc.value.status == 0
    assert exc.value.message.startswith('list nodes: cannot reach the Kubernetes API server at %s' % server.host)


# --------------------------------------------------------------------------- outages, credentials


@pytest.fixture
def quick_retries(monkeypatch):
    monkeypatch.setattr(kube_transport, 'RETRY_FIRST_DELAY', 0.01)
    monkeypatch.setattr(kube_transport, 'RETRY_MAX_DELAY', 0.02)


def refusing(server, times):
    """The server refuses the first ``times`` connections (an API server that is restarting), then answers."""
    answer = server.request
    refused = []

    def request(*args, **kwargs):
        if len(refused) < times:
            refused.append(1)
            raise ConnectionRefusedError(111, 'Connection refused')
        return answer(*args, **kwargs)
    server.request = request
    return refused


def test_a_request_rides_out_an_api_server_restart(server, kube, quick_retries):
    server.reply('GET', NODE_PATH, body=node('n1', 3))
    refused = refusing(server, 3)
    assert kube.get_node('n1')['metadata']['resourceVersion'] == '3'
    assert len(refused) == 3


def test_an_outage_longer_than_api_outage_timeout_fails_naming_the_outage(server, quick_retries):
    kube = server.kube(api_outage_timeout=1)
    refusing(server, 10 ** 6)
    started = time.time()
    with pytest.raises(kube_api.Unavailable) as exc:
        kube.list_nodes()
    assert 0.9 <= time.time() - started < 3
    assert exc.value.message.startswith('list nodes: the Kubernetes API server at %s has not answered for 1s '
                                        '(an outage of the API server or etcd?); last error: list nodes: cannot reach'
                                        % server.host)


@pytest.mark.parametrize('status,message', [
    (503, 'the server is currently unable to handle the request'),
    (504, 'the server was unable to return a response in the time allotted'),
    (500, 'etcdserver: request timed out'),
    (429, 'too many requests, please try again later'),
])
def test_answers_that_mean_not_now_are_retried(server, kube, quick_retries, status, message):
    server.reply('GET', NODE_PATH, status=status, body=status_body(status, 'Unavailable', message))
    server.reply('GET', NODE_PATH, body=node('n1', 4))
    assert kube.get_node('n1')['metadata']['resourceVersion'] == '4'
    assert len(server.of('GET', NODE_PATH)) == 2


def test_an_internal_error_that_no_retry_mends_fails_at_once(server, kube, quick_retries):
    path = '/api/v1/namespaces/ns/pods/p/eviction'
    server.reply('POST', path, status=500, body=status_body(
        500, 'InternalError', 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.'))
    with pytest.raises(kube_api.KubeError) as exc:
        kube.evict_pod('ns', 'p')
    assert exc.value.status == 500 and 'more than one PodDisruptionBudget' in exc.value.message
    assert len(server.requests) == 1


def test_an_eviction_a_pdb_refuses_is_an_answer_not_a_retry(server, kube, quick_retries):
    path = '/api/v1/namespaces/ns/pods/p/eviction'
    server.reply('POST', path, status=429, body=status_body(429, 'TooManyRequests', 'Cannot evict pod as it would violate the pod\'s disruption budget.'))
    assert kube.evict_pod('ns', 'p') == ('blocked', "Cannot evict pod as it would violate the pod's disruption budget.")
    assert len(server.requests) == 1


def test_an_eviction_refusal_names_the_pdbs_own_words(server, kube, quick_retries):
    # the DisruptionBudget cause's message, which the v0.20 operator quotes in DrainBlocked (classifyEvictionRejection,
    # NVIDIA/nodewright operator/internal/controller/skyhook_controller.go @01cc2f2d)
    body = status_body(429, 'TooManyRequests', 'Cannot evict pod as it would violate the pod\'s disruption budget.')
    body['details'] = {'causes': [{'reason': 'DisruptionBudget',
                                   'message': 'The disruption budget web needs 2 healthy pods and has 2 currently'}]}
    server.reply('POST', '/api/v1/namespaces/ns/pods/p/eviction', status=429, body=body)
    assert kube.evict_pod('ns', 'p') == ('blocked', 'The disruption budget web needs 2 healthy pods and has 2 currently')


def test_a_watch_rides_out_an_api_server_restart(server, kube, quick_retries):
    server.reply('GET', NODES, body=node_list(10, node('n1', 9, ready=False)))
    server.stream('GET', NODES, [ConnectionResetError(104, 'Connection reset by peer')])  # the server stops
    server.stream('GET', NODES, [event('MODIFIED', node('n1', 12))])
    refused = []
    answer = server.request

    def request(method, url, *args, **kwargs):
        if 'watch=true' in url and len(server.of('GET', NODES, watch=True)) == 1 and len(refused) < 4:
            refused.append(1)
            raise ConnectionRefusedError(111, 'Connection refused')
        return answer(method, url, *args, **kwargs)
    server.request = request
    assert kube.watch_until('nodes', ready_names, 5) == ['n1']
    assert len(refused) == 4
    assert [r.query['resourceVersion'] for r in watches(server)] == ['10', '10']


def test_refused_credentials_name_authentication_and_are_not_retried(server, kube, quick_retries):
    server.reply('GET', NODE_PATH, status=401, body=status_body(401, 'Unauthorized', 'Unauthorized'))
    with pytest.raises(kube_api.Unauthorized) as exc:
        kube.get_node('n1')
    assert exc.value.status == 401
    assert exc.value.message == ('get node n1: authentication failed: the API server at %s refused the credentials '
                                 '(401 Unauthorized); the token may have expired or been revoked: give a valid one '
                                 'and run again' % server.host)
    assert len(server.requests) == 1


def test_a_node_read_before_and_gone_now_was_deleted(server, kube):
    server.reply('GET', NODE_PATH, body=node('n1', 3))
    server.reply('PATCH', NODE_PATH, status=404, body=status_body(404, 'NotFound', 'nodes "n1" not found'))
    kube.get_node('n1')
    with pytest.raises(kube_api.NodeGone) as exc:
        kube.patch_node('n1', {'spec': {'unschedulable': True}})
    assert exc.value.message == 'node deleted: node n1 was removed from the cluster at %s' % server.host
    assert exc.value.node == 'n1'


def test_explicit_connection_options_beat_the_kubeconfig_on_every_request(server, tmp_path):
    # the kubeconfig loader re-installs its refresh hook (which sets its own server and token) on
    # every request; host and api_key must still win on the second request and after
    kubeconfig = tmp_path / 'kubeconfig'
    kubeconfig.write_text(
        'apiVersion: v1\nkind: Config\ncurrent-context: c\n'
        'clusters: [{name: c, cluster: {server: "https://kubeconfig-server.invalid:6443"}}]\n'
        'users: [{name: u, user: {token: kubeconfig-token}}]\n'
        'contexts: [{name: c, context: {cluster: c, user: u}}]\n')
    kube = server.kube(kubeconfig=str(kubeconfig), api_key='explicit-token')
    server.reply('GET', NODE_PATH, body=node('n1', 3), repeat=True)
    for dummy in range(3):
        kube.get_node('n1')
    assert [r.url.split('/api/')[0] for r in server.requests] == [server.host] * 3
    assert [r.headers.get('authorization') for r in server.requests] == ['Bearer explicit-token'] * 3


# --------------------------------------------------------------------------- the node's status (conditions)

STATUS_PATH = NODE_PATH + '/status'
FORBIDDEN = status_body(403, 'Forbidden', 'nodes "n1" is forbidden: cannot patch resource "nodes/status"')


@pytest.fixture
def no_status_failures(kube):
    # a session of the test's own for kube (a Kube made after has its own): no status write refused and no node known before
    fresh = kube_api.KubeSession()
    kube.session = fresh


def wanted_once(current):
    """A condition that is written until the node carries it."""
    have = [c['type'] for c in (current.get('status') or {}).get('conditions') or []]
    return None if 'x/cr/NotReady' in have else {'status': {'conditions': [{'type': 'x/cr/NotReady', 'status': 'True'}]}}


def with_condition(version):
    doc = node('n1', version)
    doc['status']['conditions'].append({'type': 'x/cr/NotReady', 'status': 'True'})
    return doc


def test_the_conditions_follow_the_write_in_one_guarded_status_patch(server, kube, no_status_failures):
    server.reply('GET', NODE_PATH, body=node('n1', 5))
    server.reply('PATCH', NODE_PATH, body=echo_node)
    server.reply('PATCH', STATUS_PATH, body=with_condition(7))
    after, patch = kube.update_node('n1', lambda current: {'metadata': {'labels': {'a': 'b'}}}, conditions=wanted_once)
    sent = [r.method + ' ' + r.path for r in server.requests]
    assert sent == ['GET ' + NODE_PATH, 'PATCH ' + NODE_PATH, 'PATCH ' + STATUS_PATH]
    assert server.of('PATCH', STATUS_PATH)[0].body == {'status': {'conditions': [{'type': 'x/cr/NotReady', 'status': 'True'}]},
                                                       'metadata': {'resourceVersion': '6'}}
    assert after['metadata']['resourceVersion'] == '7' and patch == {'metadata': {'labels': {'a': 'b'}}}
    # the next write starts from the node the status patch returned: no 409, no read
    server.reply('PATCH', NODE_PATH, body=with_condition(8))
    kube.update_node('n1', lambda current: {'metadata': {'labels': {'a': 'c'}}}, conditions=wanted_once)
    assert server.of('PATCH', NODE_PATH)[1].body['metadata']['resourceVersion'] == '7'
    assert len(server.of('PATCH', STATUS_PATH)) == 1 and server.pending() == []


def test_no_status_write_when_the_conditions_are_as_they_should_be_nor_in_a_dry_run(server, kube, no_status_failures):
    server.reply('GET', NODE_PATH, body=with_condition(4))
    kube.update_node('n1', lambda current: None, conditions=wanted_once)
    server.reply('PATCH', NODE_PATH, body=echo_node)  # a dry run's answer, without the condition
    kube.update_node('n1', lambda current: {'metadata': {'labels': {'a': 'b'}}}, dry_run=True, conditions=wanted_once)
    assert server.of('PATCH', STATUS_PATH) == [] and server.pending() == []


def test_a_status_conflict_is_computed_again_on_the_fresh_node(server, kube, no_status_failures):
    server.reply('GET', NODE_PATH, body=node('n1', 5))
    server.reply('PATCH', STATUS_PATH, status=409, body=CONFLICT)
    server.reply('GET', NODE_PATH, body=with_condition(8))  # someone wrote it meanwhile: nothing left to do
    after, patch = kube.update_node('n1', lambda current: None, conditions=wanted_once)
    assert patch is None and after['metadata']['resourceVersion'] == '8'
    assert [r.method for r in server.requests] == ['GET', 'PATCH', 'GET'] and server.pending() == []


def test_a_refused_status_write_warns_once_and_is_not_tried_again(server, kube, no_status_failures):
    server.reply('GET', NODE_PATH, body=node('n1', 5))
    server.reply('PATCH', STATUS_PATH, status=403, body=FORBIDDEN)
    kube.update_node('n1', lambda current: None, conditions=wanted_once)
    assert len(kube.warnings) == 1 and 'grant patch on nodes/status' in kube.warnings[0]
    assert 'the rollout goes on without them' in kube.warnings[0]
    other = server.kube(session=kube.session)
    other.update_node('n1', lambda current: None, conditions=wanted_once)  # same session (the process's): no second try
    assert len(server.of('PATCH', STATUS_PATH)) == 1 and other.warnings == [] and server.pending() == []


# ---------------------------------------------------------------------- LiveCRs (the watches are in tests/kube)

class _FakeWatch(object):
    """A _CrWatch that is in sync (or not) with a given CR, and sends nothing."""

    states = {}

    def __init__(self, transport, kind, name):
        self.kind, self.name = kind, name
        self.transport = transport
        self.synced = self.settled = _Set()

    def current(self):
        return self.states.get(self.kind, (True, None))


class _Set(object):
    def wait(self, timeout):
        return True

    def is_set(self):
        return True


def _live(monkeypatch, states):
    monkeypatch.setattr(kube_watches, '_CrWatch', _FakeWatch)
    monkeypatch.setattr(kube_watches, 'KubeTransport', lambda params, clients, lister=None: type('K', (), {'request_timeout': 1})())
    monkeypatch.setattr(_FakeWatch, 'states', states)
    return kube_api.LiveCRs({})


def test_live_crs_look_in_the_second_group_only_when_the_first_lacks_the_cr(monkeypatch):
    doc = {'metadata': {'name': 'gpu'}}
    live = _live(monkeypatch, {'skyhooks.skyhook.nvidia.com': (True, doc)})
    assert live.lookup('gpu', kube_api.CR_PLACES, 'h') is doc
    assert [w.kind for w in live.watches.values()] == ['skyhooks.skyhook.nvidia.com']
    live = _live(monkeypatch, {'nodewrights.nodewright.nvidia.com': (True, doc)})
    assert live.lookup('gpu', kube_api.CR_PLACES, 'h') is doc
    assert sorted(w.kind for w in live.watches.values()) == ['nodewrights.nodewright.nvidia.com', 'skyhooks.skyhook.nvidia.com']


def test_live_crs_answer_none_while_a_watch_is_not_in_sync_so_that_the_step_reads_the_cr(monkeypatch):
    live = _live(monkeypatch, {'skyhooks.skyhook.nvidia.com': (False, None)})
    assert live.lookup('gpu', kube_api.CR_PLACES, 'h') is None


def test_live_crs_say_not_found_naming_the_cr_and_where_they_looked(monkeypatch):
    live = _live(monkeypatch, {})
    with pytest.raises(kube_api.NotFound) as caught:
        live.lookup('gpu', kube_api.CR_PLACES[1:], 'https://api:6443')
    assert str(caught.value) == ('Skyhook / NodeWright gpu not found in the cluster at https://api:6443 '
                                 '(looked for nodewrights.nodewright.nvidia.com)')


@pytest.mark.parametrize('mine, theirs, newer', [('12', '9', True), ('9', '12', False), ('12', '12', False),
                                                 ('a1', '9', True), ('', '9', True)])
def test_a_written_cr_replaces_the_watchs_copy_only_when_it_is_newer(mine, theirs, newer):
    assert kube_transport.newer({'metadata': {'resourceVersion': mine}}, {'metadata': {'resourceVersion': theirs}}) is newer


def test_a_cr_watch_without_rbac_for_list_ends_and_leaves_the_steps_to_get_the_cr(monkeypatch):
    class Refusing(object):
        request_timeout = 1
        lists = 0

        def _list_for_watch(self, kind, namespace, selectors):
            Refusing.lists += 1
            raise kube_api.KubeError('list skyhooks.skyhook.nvidia.com: forbidden', 403)
    monkeypatch.setattr(kube_watches.time, 'sleep', lambda seconds: pytest.fail('a refusal is not retried'))
    watch = kube_watches._CrWatch.__new__(kube_watches._CrWatch)
    watch.transport, watch.kind, watch.name = Refusing(), 'skyhooks.skyhook.nvidia.com', 'gpu'
    watch.lock, watch.synced, watch.doc = kube_watches.threading.Lock(), kube_watches.threading.Event(), None
    watch.settled = kube_watches.threading.Event()
    watch.run()
    assert Refusing.lists == 1 and watch.current() == (False, None)
    assert watch.settled.is_set()  # the lookups wait no more: they GET


def test_every_lookup_waits_for_the_watchs_first_list_even_when_it_is_answered_late(monkeypatch):
    """A batch's steps look the CR up together; a first list answered late (a 429 retried) must not send each of
    them to GET the CR (seen: 32 GETs, all 404, for a CR given as a file, at the start of a 24-node run)."""
    doc = {'metadata': {'name': 'gpu', 'uid': 'u1', 'resourceVersion': '5'}}

    class Slow(object):
        request_timeout = 5

        def _list_for_watch(self, kind, namespace, selectors):
            time.sleep(0.3)
            return {'u1': doc}, '5'

        def _open_watch(self, *args):
            kube_watches.threading.Event().wait()  # a quiet stream (the thread is a daemon)

    monkeypatch.setattr(kube_watches, 'KubeTransport', lambda params, clients, lister=None: Slow())
    live = kube_api.LiveCRs({})
    found = []
    threads = [kube_watches.threading.Thread(target=lambda: found.append(live.lookup('gpu', kube_api.CR_PLACES[:1], 'h')))
               for unused in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(5)
    assert found == [doc] * 6


# --------------------------------------------------------------------------- generation_evidence (api_generation)

OLD_API, NEW_API = '/apis/skyhook.nvidia.com/v1alpha1', '/apis/nodewright.nvidia.com/v1alpha1'
LEASES = '/apis/coordination.k8s.io/v1/namespaces/nodewright/leases/'
MISSING = status_body(404, 'NotFound', 'the server could not find the requested resource')
FORBIDDEN = status_body(403, 'Forbidden', 'forbidden: User "ci" cannot get resource')


def resources(group, *names):
    return {'kind': 'APIResourceList', 'groupVersion': group + '/v1alpha1',
            'resources': [{'name': name, 'namespaced': False, 'kind': 'x', 'verbs': ['get']} for name in names]}


def serve(server, old=True, new=True):
    absent = {'status': 404, 'body': MISSING}
    server.reply('GET', OLD_API, **(
        {'body': resources('skyhook.nvidia.com', 'skyhooks', 'skyhooks/status', 'deploymentpolicies')} if old else absent))
    server.reply('GET', NEW_API, **(
        {'body': resources('nodewright.nvidia.com', 'nodewrights', 'deploymentpolicies')} if new else absent))


LEGACY_NODE = node('n1', 1, annotations={'skyhook.nvidia.com/nodeState_gpu': '{}'})
NEW_NODE = node('n2', 1, annotations={'nodewright.nvidia.com/nodeState_gpu': '{}'})


def test_generation_evidence_stops_at_discovery_when_one_group_is_served(server, kube):
    serve(server, new=False)
    found = kube.generation_evidence('auto', 'gpu', [NEW_NODE])
    assert found['served'] == {'skyhook.nvidia.com': True, 'nodewright.nvidia.com': False}
    assert [r.path for r in server.requests] == [OLD_API, NEW_API]
    assert api_generation.choose('auto', found)[0] is api_generation.SKYHOOK


def test_generation_evidence_asks_nothing_more_for_an_explicit_option_or_telling_node_keys(server, kube):
    serve(server)
    assert api_generation.choose('skyhook', kube.generation_evidence('skyhook', 'gpu'))[0] is api_generation.SKYHOOK
    serve(server)
    found = kube.generation_evidence('auto', 'gpu', [LEGACY_NODE, NEW_NODE])
    assert found['node_prefixes'] == {'n1': ['skyhook.nvidia.com'], 'n2': ['nodewright.nvidia.com']}
    assert api_generation.choose('auto', found)[0] is api_generation.NODEWRIGHT
    assert [r.path for r in server.requests] == [OLD_API, NEW_API] * 2


def test_generation_evidence_reads_the_nodewright_then_the_leases_up_to_the_first_found(server, kube):
    serve(server)
    server.reply('GET', NEW_API + '/nodewrights/gpu', status=404, body=MISSING)
    server.reply('GET', LEASES + '3c22c1ae.nvidia.com', status=404, body=MISSING)
    server.reply('GET', LEASES + 'nodewright-webhook-bootstrap.nvidia.com',
                 body={'metadata': {'name': 'nodewright-webhook-bootstrap.nvidia.com', 'namespace': 'nodewright'},
                       'spec': {'holderIdentity': 'nodewright-operator-0'}})
    found = kube.generation_evidence('auto', 'gpu', [LEGACY_NODE])
    assert found['nodewright_objects'] == {} and found['leases'] == [('nodewright', 'nodewright-webhook-bootstrap.nvidia.com')]
    generation, reason = api_generation.choose('auto', found)
    assert generation is api_generation.NODEWRIGHT
    assert 'lease nodewright/nodewright-webhook-bootstrap.nvidia.com' in reason


def test_generation_evidence_of_a_mirrored_nodewright_needs_no_lease(server, kube):
    serve(server)
    server.reply('GET', NEW_API + '/nodewrights/gpu',
                 body={'metadata': {'name': 'gpu', 'annotations': {'nodewright.nvidia.com/mirrored-from': 'gpu'}}})
    found = kube.generation_evidence('auto', 'gpu', [LEGACY_NODE])
    assert found['nodewright_objects'] == {'gpu': 'gpu'} and found['leases'] is None
    assert len(server.requests) == 3


def test_generation_evidence_notes_what_it_may_not_read_and_falls_back_to_skyhook(server, kube):
    serve(server)
    server.reply('GET', NEW_API + '/nodewrights', status=403, body=FORBIDDEN)
    server.reply('GET', LEASES + '3c22c1ae.nvidia.com', status=403, body=FORBIDDEN)
    server.reply('GET', LEASES + 'nodewright-webhook-bootstrap.nvidia.com', status=403, body=FORBIDDEN)
    found = kube.generation_evidence('auto')
    assert found['unread'] == ['NodeWright objects (forbidden)', 'lease nodewright/3c22c1ae.nvidia.com (forbidden)',
                               'lease nodewright/nodewright-webhook-bootstrap.nvidia.com (forbidden)']
    assert server.of('GET', NEW_API + '/nodewrights')[0].query == {'limit': '20'}
    generation, reason = api_generation.choose('auto', found)
    assert generation is api_generation.SKYHOOK and 'could not read NodeWright objects (forbidden)' in reason


def test_a_group_served_without_the_crs_plural_is_not_served(server, kube):
    server.reply('GET', OLD_API, body=resources('skyhook.nvidia.com', 'deploymentpolicies'))
    server.reply('GET', NEW_API, status=404, body=MISSING)
    assert kube.served_groups() == {'skyhook.nvidia.com': False, 'nodewright.nvidia.com': False}


def test_a_discovery_error_other_than_not_found_fails(server, kube):
    server.reply('GET', OLD_API, status=403, body=FORBIDDEN)
    with pytest.raises(kube_api.KubeError) as caught:
        kube.served_groups()
    assert 'get API resources skyhook.nvidia.com/v1alpha1: forbidden' in str(caught.value)


# --------------------------------------------------------------------------- Kube.generation and the migration copy

def test_an_explicit_generation_costs_no_request_and_auto_detects_once_per_live_crs(server):
    explicit = server.kube(nodewright_api='nodewright')
    assert explicit.generation is api_generation.NODEWRIGHT and server.requests == []
    live = kube_api.LiveCRs({})
    serve(server, old=False)
    first = server.kube(nodewright_api='auto', cr_name='gpu')
    first.live_crs = live
    assert first.generation is api_generation.NODEWRIGHT
    assert first.generation_reason == 'auto: only nodewright.nvidia.com/v1alpha1 nodewrights is served: nodewright'
    again = server.kube(nodewright_api='auto', cr_name='gpu', host=first.host)
    again.live_crs = live
    assert again.generation is api_generation.NODEWRIGHT
    assert [r.path for r in server.requests] == [OLD_API, NEW_API], 'the engine detects once per CR and host'


def test_auto_with_both_groups_served_and_no_v018_trace_is_the_v015_contract(server):
    serve(server)
    server.reply('GET', '/apis/nodewright.nvidia.com/v1alpha1/nodewrights/gpu', status=404, body=MISSING)
    for lease in api_generation.NODEWRIGHT.leases:
        server.reply('GET', '/apis/coordination.k8s.io/v1/namespaces/nodewright/leases/' + lease, status=404, body=MISSING)
    kube = server.kube(nodewright_api='auto', cr_name='gpu')
    assert kube.generation is api_generation.SKYHOOK
    assert kube.generation_reason.startswith('auto: both groups are served and no v0.18+ operator is evident')


# --------------------------------------------------------------------------- DeploymentPolicy lookup per generation

OLD_POLICY, NEW_POLICY = OLD_API + '/deploymentpolicies/p', NEW_API + '/deploymentpolicies/p'
POLICY = {'apiVersion': 'nodewright.nvidia.com/v1alpha1', 'kind': 'DeploymentPolicy', 'metadata': {'name': 'p'}}


def test_under_nodewright_the_policy_is_read_in_the_new_group_first_and_only_there_when_it_is(server):
    kube = server.kube(nodewright_api='nodewright')
    server.reply('GET', NEW_POLICY, body=POLICY)
    assert kube.get_policy('p') == POLICY
    # one request: a cluster as v0.21 leaves it (no skyhook.nvidia.com) is not asked for the legacy policy first, and
    # with both groups served the NodeWright's own group's policy wins over a legacy one of the same name
    assert [r.path for r in server.requests] == [NEW_POLICY]


def test_under_nodewright_a_policy_only_in_the_legacy_group_is_still_found(server):
    kube = server.kube(nodewright_api='nodewright')
    server.reply('GET', NEW_POLICY, status=404, body=MISSING)
    server.reply('GET', OLD_POLICY, body=dict(POLICY, apiVersion='skyhook.nvidia.com/v1alpha1'))
    assert kube.get_policy('p')['apiVersion'] == 'skyhook.nvidia.com/v1alpha1'
    assert [r.path for r in server.requests] == [NEW_POLICY, OLD_POLICY]


def test_the_policy_is_read_in_the_legacy_group_first_under_skyhook_and_under_auto_not_chosen_yet(server):
    for params in ({'nodewright_api': 'skyhook'}, {'nodewright_api': 'auto', 'cr_name': 'gpu'}):
        server.requests[:] = []
        server.reply('GET', OLD_POLICY, status=404, body=MISSING)
        server.reply('GET', NEW_POLICY, body=POLICY)
        assert server.kube(**params).get_policy('p') == POLICY
        # no discovery spent on choosing the order
        assert [r.path for r in server.requests] == [OLD_POLICY, NEW_POLICY], params


def test_under_auto_once_nodewright_is_detected_the_policy_is_read_in_the_new_group_first(server):
    serve(server, old=False)
    kube = server.kube(nodewright_api='auto', cr_name='gpu')
    assert kube.generation is api_generation.NODEWRIGHT
    server.reply('GET', NEW_POLICY, body=POLICY)
    assert kube.get_policy('p') == POLICY
    assert [r.path for r in server.requests] == [OLD_API, NEW_API, NEW_POLICY]


LEGACY_DONE = {'skyhook.nvidia.com/nodeState_gpu': '{}', 'skyhook.nvidia.com/status_gpu': 'complete',
               'skyhook.nvidia.com/version_gpu': 'v0.15.0'}


def test_under_nodewright_a_node_is_read_as_migrated_and_the_copies_go_with_the_first_write(server):
    kube = server.kube(nodewright_api='nodewright')
    server.reply('GET', NODE_PATH, body=node('n1', 5, annotations=LEGACY_DONE,
                                             labels={'skyhook.nvidia.com/status_gpu': 'complete', 'skyhook.nvidia.com/pool': 'a'}))
    server.reply('PATCH', NODE_PATH, body=lambda request: node('n1', 6, annotations=dict(
        LEGACY_DONE, **request.body['metadata']['annotations'])))
    seen = kube.get_node('n1')['metadata']
    assert seen['annotations']['nodewright.nvidia.com/status_gpu'] == 'complete'
    assert seen['labels'] == {'skyhook.nvidia.com/status_gpu': 'complete', 'skyhook.nvidia.com/pool': 'a',
                              'nodewright.nvidia.com/status_gpu': 'complete'}

    after, patch = kube.update_node('n1', lambda current: {'metadata': {'annotations': {
        'nodewright.nvidia.com/version_gpu': 'v0.20.0'}}})  # from the node as read (no second GET)
    sent = server.of('PATCH')[0].body['metadata']
    # the copies (the legacy keys under the new prefix; the user's pool label is not the operator's) with the change,
    # which wins over the copied version
    assert sent['annotations'] == {'nodewright.nvidia.com/nodeState_gpu': '{}', 'nodewright.nvidia.com/status_gpu': 'complete',
                                   'nodewright.nvidia.com/version_gpu': 'v0.20.0'}
    assert sent['labels'] == {'nodewright.nvidia.com/status_gpu': 'complete'} and sent['resourceVersion'] == '5'
    assert patch == {'metadata': {'annotations': {'nodewright.nvidia.com/version_gpu': 'v0.20.0'}}}
    assert after['metadata']['annotations']['nodewright.nvidia.com/version_gpu'] == 'v0.20.0'


def test_under_skyhook_a_node_is_read_and_written_as_it_is(server, kube):
    server.reply('GET', NODE_PATH, body=node('n1', 5, annotations={'nodewright.nvidia.com/status_gpu': 'complete'}))
    assert kube.get_node('n1')['metadata']['annotations'] == {'nodewright.nvidia.com/status_gpu': 'complete'}
    server.reply('GET', NODE_PATH, body=node('n1', 5, annotations=LEGACY_DONE))
    server.reply('PATCH', NODE_PATH, body=echo_node)
    kube.update_node('n1', lambda current: {'metadata': {'labels': {'x': '1'}}})
    assert server.of('PATCH')[0].body == {'metadata': {'labels': {'x': '1'}, 'resourceVersion': '5'}}


def test_a_bare_connection_gets_the_credential_of_the_environment_as_a_module_would(monkeypatch):
    """AWX's bearer-token credential is only in the environment: the engine's CR watches and status writes, built
    from the task's bare connection dict (the options it set), must reach the server a module reaches."""
    monkeypatch.setenv('K8S_AUTH_HOST', 'https://10.0.0.1:6443')
    monkeypatch.setenv('K8S_AUTH_API_KEY', 'token-from-awx')
    monkeypatch.setenv('K8S_AUTH_VERIFY_SSL', 'false')
    params = kube_api.connection_params({'context': None, 'nodewright_api': 'skyhook', 'not_a_connection_option': 1})
    assert (params['host'], params['api_key'], params['validate_certs']) == ('https://10.0.0.1:6443', 'token-from-awx', False)
    assert params['nodewright_api'] == 'skyhook' and 'not_a_connection_option' not in params
    # an option the task set wins over the environment, as in a module
    assert kube_api.connection_params({'host': 'https://explicit:6443'})['host'] == 'https://explicit:6443'
    assert kube_api.LiveCRs({}).params['host'] == 'https://10.0.0.1:6443'
    with pytest.raises(kube_api.KubeError, match='the connection options: .*request_timeout'):
        kube_api.connection_params({'request_timeout': 'soon'})


# --------------------------------------------------------------------------- Kube, composed of one part per resource

PARTS = ('nodes_api', 'events_api', 'workloads_api', 'configmaps_api', 'leases_api', 'crs_api', 'generation_api',
         'watches_api')


def test_each_method_of_kube_is_a_parts_with_the_same_arguments(kube):
    """Kube (kube.py) hands each call to the part that owns it, with that method's signature: no default drifts."""
    handed = []
    for attr in PARTS:
        for name, method in inspect.getmembers(type(getattr(kube, attr)), inspect.isfunction):
            if not name.startswith('_') and hasattr(kube_api.Kube, name):
                assert inspect.signature(getattr(kube_api.Kube, name)) == inspect.signature(method), name
                handed.append(name)
    own = [name for name, dummy in inspect.getmembers(kube_api.Kube, inspect.isfunction) if not name.startswith('_')]
    assert sorted(set(own) - set(handed)) == ['call']  # the transport's
