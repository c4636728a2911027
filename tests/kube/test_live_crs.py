# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""kube.LiveCRs against the test cluster's API server: the CRs the sequence engine's steps read.

Every pod step of a running rollout checks whether its CR was paused, disabled or edited; in the
engine it asks the watch of the CR instead of GETting it (docs/semantics.md, "live pause"). Here:
the watch sees a pause, a delete and a re-create; a CR the cluster does not have costs one list per
API group, never a request per lookup; a step's own write is read back at once.
"""

from __future__ import annotations

import time

import pytest
from kubernetes import client as kclient
from module_runner import checkout_code
from nodewright_fixtures import GROUP, PLURAL, VERSION, package

PAUSE = 'skyhook.nvidia.com/pause'


@pytest.fixture(scope='module')
def kube_module(tmp_path_factory):
    """module_utils.api.kube of this checkout."""
    with checkout_code(tmp_path_factory.mktemp('collection'), 'plugins.module_utils.api.kube') as code:
        yield code[0]


@pytest.fixture
def lists(kube_module, monkeypatch):
    """The lists the watches send (kind, field selector), recorded."""
    sent = []
    original = kube_module.KubeTransport._list_for_watch

    def recording(self, kind, namespace, selectors):
        sent.append((kind, selectors.get('field_selector')))
        return original(self, kind, namespace, selectors)
    monkeypatch.setattr(kube_module.KubeTransport, '_list_for_watch', recording)
    return sent


def _eventually(check, timeout=10.0):
    """``check()``'s first truthy answer within ``timeout`` s (it reads the watch's copy, not the API)."""
    deadline = time.time() + timeout
    while True:
        answer = check()
        if answer or time.time() > deadline:
            return answer
        time.sleep(0.05)


def _annotations(doc):
    return (doc.get('metadata') or {}).get('annotations') or {}


def test_a_pause_a_delete_and_a_re_create_reach_the_steps_through_the_watch(cluster, crs, kube_module, lists):
    created = crs.create({'tuning': package()}, prefix='live')
    name = created['metadata']['name']
    params = {'kubeconfig': cluster.kubeconfig}
    live = kube_module.LiveCRs(params)
    client = kube_module.Kube(params, live_crs=live)

    first = client.get_cr(name)
    assert first['metadata']['uid'] == created['metadata']['uid']
    assert lists == [('skyhooks.skyhook.nvidia.com', 'metadata.name=%s' % name)]
    # a step's copy is its own: changing it changes nothing the next step reads
    first['metadata'].setdefault('annotations', {})[PAUSE] = 'true'
    assert PAUSE not in _annotations(client.get_cr(name))

    custom = kclient.CustomObjectsApi(cluster.api)
    # kubectl skyhook pause <cr>
    custom.patch_cluster_custom_object(GROUP, VERSION, PLURAL, name, {'metadata': {'annotations': {PAUSE: 'true'}}})
    assert _eventually(lambda: _annotations(client.get_cr(name)).get(PAUSE) == 'true'), 'the watch missed the pause'

    custom.delete_cluster_custom_object(GROUP, VERSION, PLURAL, name)

    def gone():
        try:
            client.get_cr(name)
        except kube_module.NotFound as exc:
            return str(exc)
        return None
    message = _eventually(gone)
    assert message and name in message and 'skyhooks.skyhook.nvidia.com' in message

    recreated = crs.custom.create_cluster_custom_object(GROUP, VERSION, PLURAL, dict(created, metadata={'name': name}))
    assert _eventually(lambda: not gone() and client.get_cr(name)['metadata']['uid'] == recreated['metadata']['uid'])
    # all of it from one list per group and its watch (the nodewright.nvidia.com one from the first lookup
    # that did not find the CR in skyhook.nvidia.com): no list again, no GET
    assert lists == [('skyhooks.skyhook.nvidia.com', 'metadata.name=%s' % name),
                     ('nodewrights.nodewright.nvidia.com', 'metadata.name=%s' % name)]


def test_a_cr_the_cluster_lacks_costs_one_list_per_group_not_a_request_per_step(cluster, kube_module, lists, monkeypatch):
    live = kube_module.LiveCRs({'kubeconfig': cluster.kubeconfig})
    client = kube_module.Kube({'kubeconfig': cluster.kubeconfig}, live_crs=live)
    gets = []
    original = kube_module.CRsAPI._get_first
    monkeypatch.setattr(kube_module.CRsAPI, '_get_first', lambda self, *a: gets.append(a) or original(self, *a))
    for unused in range(20):
        with pytest.raises(kube_module.NotFound) as caught:
            client.get_cr('live-not-in-the-cluster')
    assert 'live-not-in-the-cluster' in str(caught.value)
    assert gets == []
    assert sorted(kind for kind, unused in lists) == ['nodewrights.nodewright.nvidia.com', 'skyhooks.skyhook.nvidia.com']


def test_a_steps_own_write_is_read_back_before_the_watch_delivers_it(cluster, crs, kube_module, lists):
    created = crs.create({'tuning': package()}, prefix='live')
    name = created['metadata']['name']
    live = kube_module.LiveCRs({'kubeconfig': cluster.kubeconfig})
    client = kube_module.Kube({'kubeconfig': cluster.kubeconfig}, live_crs=live)
    doc = client.get_cr(name)
    after = client.patch_cr(doc, {'metadata': {'annotations': {'nodewright.bridge/live-test': 'written'}}})
    # read at once, in the same thread: the patch's answer, even if the watch's event is still on its way
    assert _annotations(client.get_cr(name)).get('nodewright.bridge/live-test') == 'written'
    assert int(client.get_cr(name)['metadata']['resourceVersion']) >= int(after['metadata']['resourceVersion'])
    assert len(lists) == 1
