# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""kube_transport.SharedWatch through Kube.watch_until: the waits of a long-lived process (the sequence engine) for
stage pods by name, served by one list and one watch of the namespace, against a scripted API server (fake_api).

What must hold: one list and one watch whatever the number of waits; a wait never judges from a view older than
what its caller knows (``since``); a watch that cannot serve a wait leaves it to its own list and watch.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import threading

import pytest

from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube as kube_api
from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube_transport
from ansible_collections.nodewright.bridge.tests.unit.plugins.module_utils.fake_api import (
    FakeApiServer, Pause, event, status_body)

NS = 'skyhook'
PODS = '/api/v1/namespaces/%s/pods' % NS


def pod(name, version, phase='Running', uid=None):
    return {'metadata': {'name': name, 'namespace': NS, 'uid': uid or 'uid-' + name, 'resourceVersion': str(version)},
            'status': {'phase': phase}}


def listing(version, *pods):
    return {'metadata': {'resourceVersion': str(version)}, 'items': list(pods)}


@pytest.fixture
def server():
    return FakeApiServer()


def engine_kube(server):
    """A Kube as the sequence engine's steps have one: with the engine's LiveCRs (and its session)."""
    session = kube_api.KubeSession()
    params = {'host': server.host, 'nodewright_api': 'skyhook'}
    live = kube_api.LiveCRs(params, session=session)
    kube = kube_api.Kube(params, live_crs=live, session=session)
    server.install(kube.api_client)
    return kube


def phase_of(name, wanted):
    def predicate(objects):
        phases = [o['status']['phase'] for o in objects.values() if o['metadata']['name'] == name]
        return phases[0] if phases and phases[0] == wanted else None
    return predicate


def wait_all(kube, waits):
    """Run ``waits`` ((name, wanted phase, since)) at once; their results, in order."""
    results = [None] * len(waits)

    def one(index, name, wanted, since):
        results[index] = kube.watch_until('pods', phase_of(name, wanted), 10, namespace=NS,
                                          field_selector='metadata.name=%s' % name, since=since)
    threads = [threading.Thread(target=one, args=(i,) + w) for i, w in enumerate(waits)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(15)
    return results


def test_the_waits_for_many_pods_share_one_list_and_one_watch(server):
    server.reply('GET', PODS, body=listing(10, pod('a', 8), pod('b', 9)))
    server.stream('GET', PODS, [Pause(0.2), event('MODIFIED', pod('a', 11, 'Succeeded')), event('ADDED', pod('c', 12)),
                                event('MODIFIED', pod('b', 13, 'Failed')), event('MODIFIED', pod('c', 14, 'Succeeded')),
                                Pause(30)])
    kube = engine_kube(server)

    assert wait_all(kube, [('a', 'Succeeded', '8'), ('b', 'Failed', '9'), ('c', 'Succeeded', '12')]) == [
        'Succeeded', 'Failed', 'Succeeded']

    assert [r.watch for r in server.of('GET', PODS)] == [False, True]
    assert server.of('GET', PODS)[0].query.get('fieldSelector') is None  # the namespace, not one pod
    assert server.of('GET', PODS, watch=True)[0].query['resourceVersion'] == '10'


def test_a_wait_starts_only_once_the_watch_has_seen_what_its_caller_knows(server):
    # the pod was created at 12; the list (10) predates it: absent there is not "gone", the wait holds on
    server.reply('GET', PODS, body=listing(10))
    server.stream('GET', PODS, [Pause(0.3), event('ADDED', pod('c', 12)), event('MODIFIED', pod('c', 13, 'Succeeded')),
                                Pause(30)])
    kube = engine_kube(server)
    seen = []

    def finished(objects):
        seen.append(sorted(o['metadata']['resourceVersion'] for o in objects.values()))
        return [o for o in objects.values() if o['status']['phase'] == 'Succeeded']

    kube.watch_until('pods', finished, 10, namespace=NS, field_selector='metadata.name=c', since='12')

    # never judged from the list that did not have it (a stage's wait would take that for "the pod vanished")
    assert [] not in seen and seen[-1] == ['13']


def test_a_watch_that_does_not_catch_up_leaves_the_wait_to_its_own_list_and_watch(server, monkeypatch):
    monkeypatch.setattr(kube_transport, 'SHARED_CATCH_UP_SECONDS', 0.3)
    server.reply('GET', PODS, body=listing(10))                            # the shared watch's list
    server.stream('GET', PODS, [Pause(30)])                                # ... and its silent stream
    server.reply('GET', PODS, body=listing(20, pod('c', 19, 'Succeeded')))  # the wait's own list
    kube = engine_kube(server)

    assert kube.watch_until('pods', phase_of('c', 'Succeeded'), 10, namespace=NS, field_selector='metadata.name=c',
                            since='19') == 'Succeeded'
    assert [r.query.get('fieldSelector') for r in server.of('GET', PODS, watch=False)] == [None, 'metadata.name=c']


@pytest.mark.parametrize('since', [None, 'a1b2'])
def test_a_wait_without_a_comparable_version_has_its_own_list_and_watch(server, since):
    server.reply('GET', PODS, body=listing(20, pod('c', 19, 'Succeeded')))
    kube = engine_kube(server)
    assert kube.watch_until('pods', phase_of('c', 'Succeeded'), 10, namespace=NS, field_selector='metadata.name=c',
                            since=since) == 'Succeeded'
    assert [r.query.get('fieldSelector') for r in server.of('GET', PODS)] == ['metadata.name=c']


def test_a_shared_watch_refused_its_list_serves_no_wait(server):
    server.reply('GET', PODS, status=403, body=status_body(403, 'Forbidden', 'pods is forbidden'))  # list: namespace
    server.reply('GET', PODS, body=listing(20, pod('c', 19, 'Succeeded')))
    kube = engine_kube(server)
    assert kube.watch_until('pods', phase_of('c', 'Succeeded'), 10, namespace=NS, field_selector='metadata.name=c',
                            since='19') == 'Succeeded'
    assert [r.query.get('fieldSelector') for r in server.of('GET', PODS)] == [None, 'metadata.name=c']


def test_a_shared_wait_times_out_with_what_it_saw_last(server):
    server.reply('GET', PODS, body=listing(10, pod('a', 8)))
    server.stream('GET', PODS, [Pause(30)])
    kube = engine_kube(server)
    with pytest.raises(kube_api.WaitTimeout) as exc:
        kube.watch_until('pods', phase_of('a', 'Succeeded'), 0.5, namespace=NS, field_selector='metadata.name=a',
                         since='8', what='pod skyhook/a to finish')
    assert str(exc.value).startswith('timed out after 0.5s waiting for pod skyhook/a to finish')
    assert list(exc.value.last) == ['uid-a']


def test_a_process_without_the_engine_waits_as_before(server):
    server.reply('GET', PODS, body=listing(20, pod('c', 19, 'Succeeded')))
    kube = server.kube()
    assert kube.watch_until('pods', phase_of('c', 'Succeeded'), 10, namespace=NS, field_selector='metadata.name=c',
                            since='19') == 'Succeeded'
    assert [r.query.get('fieldSelector') for r in server.of('GET', PODS)] == ['metadata.name=c']
