# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""rollout_plan against a scripted API server (fake_api) that serves both groups with objects of the same name.

Under the v0.18+ contract the plan follows the NodeWright; a legacy Skyhook of the same name that the NodeWright
does not mirror (mirror_controller.go @273d50a0: no nodewright.nvidia.com/mirrored-from naming it) and whose spec
says otherwise fails the plan, naming both objects and the first differing key, before anything is written.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

import pytest

from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube as kube_api
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import _runner
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import rollout_plan
from ansible_collections.nodewright.bridge.tests.unit.plugins.module_utils.fake_api import (
    FakeApiServer, node, node_list, status_body)

NEW = '/apis/nodewright.nvidia.com/v1alpha1/nodewrights/gpu'
OLD = '/apis/skyhook.nvidia.com/v1alpha1/skyhooks/gpu'
MISSING = status_body(404, 'NotFound', 'skyhooks.skyhook.nvidia.com "gpu" not found')
FORBIDDEN = status_body(403, 'Forbidden', 'skyhooks.skyhook.nvidia.com "gpu" is forbidden')
SPEC = {'nodeSelectors': {'matchLabels': {'pool': 'gpu'}},
        'packages': {'tuning': {'version': '1.0.0', 'image': 'registry.local/tuning'}}}


def _cr(group, kind, version='1.0.0', annotations=None):
    spec = copy.deepcopy(SPEC)
    spec['packages']['tuning']['version'] = version
    return {'apiVersion': group + '/v1alpha1', 'kind': kind, 'spec': spec,
            'metadata': {'name': 'gpu', 'resourceVersion': '4', 'uid': 'u-' + kind, 'annotations': annotations or {}}}


def _nodewright(**kw):
    return _cr('nodewright.nvidia.com', 'NodeWright', **kw)


def _skyhook(**kw):
    return _cr('skyhook.nvidia.com', 'Skyhook', **kw)


@pytest.fixture
def server():
    return FakeApiServer()


def _read(server, generation='nodewright'):
    kube = server.kube(nodewright_api=generation)
    sources = {}
    doc, policies = rollout_plan._read_cr({'cr': None, 'cr_name': 'gpu'}, kube, sources)
    assert sources == {'cr': 'cluster'} and policies == []
    return doc


def test_a_legacy_skyhook_that_says_otherwise_fails_the_plan_naming_both_and_the_key(server):
    server.reply('GET', NEW, body=_nodewright())
    server.reply('GET', OLD, body=_skyhook(version='0.9.0'))
    with pytest.raises(_runner.ModuleFailed) as caught:
        _read(server)
    msg, fields = _runner.failure(caught.value)
    assert msg.startswith('skyhooks.skyhook.nvidia.com/gpu and nodewrights.nodewright.nvidia.com/gpu are two objects of '
                          'the same name') and 'differ at spec.packages.tuning.version' in msg
    assert fields == {'conflict': {'skyhook': 'skyhooks.skyhook.nvidia.com/gpu',
                                   'nodewright': 'nodewrights.nodewright.nvidia.com/gpu',
                                   'path': 'spec.packages.tuning.version'}}
    assert [(r.method, r.path) for r in server.requests] == [('GET', NEW), ('GET', OLD)]  # two reads, no write


@pytest.mark.parametrize('legacy', [
    {'status': 404, 'body': MISSING},       # none, or the legacy group not served (v0.21)
    {'status': 403, 'body': FORBIDDEN},     # not readable: the v0.18+ operator does not follow it either
    {'body': _skyhook()},                   # the same spec (a tag stripped, defaults filled would be too)
])
def test_no_legacy_object_an_unreadable_one_or_one_that_says_the_same_is_fine(server, legacy):
    server.reply('GET', NEW, body=_nodewright())
    server.reply('GET', OLD, **legacy)
    assert _read(server)['kind'] == 'NodeWright'


def test_the_mirror_of_the_legacy_object_is_fine_whatever_the_legacy_spec(server):
    # the legacy object is read-only under v0.18+ and the mirror follows it (a re-sync may lag)
    server.reply('GET', NEW, body=_nodewright(annotations={'nodewright.nvidia.com/mirrored-from': 'gpu'}))
    server.reply('GET', OLD, body=_skyhook(version='0.9.0'))
    assert _read(server)['kind'] == 'NodeWright'


def test_another_error_reading_the_legacy_object_fails(server):
    server.reply('GET', NEW, body=_nodewright())
    server.reply('GET', OLD, status=401, body=status_body(401, 'Unauthorized', 'token expired'))
    with pytest.raises(kube_api.KubeError) as caught:
        _read(server)
    assert caught.value.status == 401


def test_under_the_v015_contract_no_second_group_is_read(server):
    server.reply('GET', OLD, body=_skyhook(version='0.9.0'))
    assert _read(server, generation='skyhook')['kind'] == 'Skyhook'
    assert [r.path for r in server.requests] == [OLD]


def test_the_module_run_fails_before_it_reads_a_node(server, monkeypatch):
    real = kube_api.Kube

    def fake_kube(params, live_crs=None, session=None):
        kube = real(dict(params, host=server.host))
        server.install(kube.api_client)
        return kube

    monkeypatch.setattr(rollout_plan.kube_api, 'Kube', fake_kube)
    server.reply('GET', NEW, body=_nodewright())
    server.reply('GET', OLD, body=_skyhook(version='0.9.0'))
    server.reply('GET', '/api/v1/nodes', body=node_list(1, node('n1', 1, labels={'pool': 'gpu'})), repeat=True)
    params = dict((k, None) for k in rollout_plan.module_args()['argument_spec'])
    params.update(cr_name='gpu', nodewright_api='nodewright', node_order='name', cap_batches_at_ceiling=True)
    with pytest.raises(_runner.ModuleFailed, match='differ at spec.packages.tuning.version'):
        rollout_plan.run(params, warn=lambda text: None)
    assert [r.path for r in server.requests] == [NEW, OLD]
