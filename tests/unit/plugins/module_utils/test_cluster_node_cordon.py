# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""node_cordon's and node_state's run against a scripted API server (fake_api), the node kept by ``Stored``: the
cordon's ownership rules (a cordon someone else owns is never lifted), idempotence, check and diff mode, the
guarded write and its retry on a conflict, the client's retry of a 429, the hold of a paused CR.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import node_cordon
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import node_state as node_state_module
from ansible_collections.nodewright.bridge.plugins.module_utils.model.constants import IGNORE_LABEL, INHERITED_CORDON_PREFIX
from ansible_collections.nodewright.bridge.tests.unit.plugins.module_utils.cluster_support import (
    NODE_PATH, FakeModule, api_server, calls, events_of, execute, fast_retries)
from ansible_collections.nodewright.bridge.tests.unit.plugins.module_utils.fake_api import (
    Stored, node, status_body)

OURS = 'skyhook.nvidia.com/cordon_demo'
THEIRS = 'skyhook.nvidia.com/cordon_other'
INHERITED = INHERITED_CORDON_PREFIX + 'demo'
IGNORE = IGNORE_LABEL
CR_PATH = '/apis/skyhook.nvidia.com/v1alpha1/skyhooks/demo'
CONFLICT = status_body(409, 'Conflict', 'Operation cannot be fulfilled on nodes "n1": the object has been modified')


@pytest.fixture
def server():
    return api_server()


@pytest.fixture
def quick_retries(monkeypatch):
    fast_retries(monkeypatch)


def stored(server, annotations=None, unschedulable=False, labels=None):
    """Node n1 on the server: GETs read it, PATCHes change it (a dry run leaves it as it was)."""
    kept = Stored(node('n1', 5, annotations=annotations, labels=labels, unschedulable=unschedulable))
    server.reply('GET', NODE_PATH, body=kept.get, repeat=True)
    server.reply('PATCH', NODE_PATH, body=kept.patch, repeat=True)
    return kept


def cordon(server, state='cordoned', **params):
    return node_cordon.run(FakeModule(node_cordon, cr_name='demo', state=state, **params), server.kube())


def ours_of(kept):
    annotations = kept.doc['metadata']['annotations']
    return bool(kept.doc['spec'].get('unschedulable')), dict((k, v) for k, v in annotations.items() if 'cordon' in k)


# --------------------------------------------------------------------------- cordon


def test_a_cordon_sets_unschedulable_and_the_owners_annotation_in_one_guarded_patch(server):
    kept = stored(server)

    result = cordon(server)

    assert calls(server) == ['GET ' + NODE_PATH, 'PATCH ' + NODE_PATH]
    assert server.of('PATCH')[0].body == {'spec': {'unschedulable': True},
                                          'metadata': {'annotations': {OURS: 'true'}, 'resourceVersion': '5'}}
    assert server.of('PATCH')[0].headers['Content-Type'] == 'application/strategic-merge-patch+json'
    assert ours_of(kept) == (True, {OURS: 'true'})
    assert dict((k, result[k]) for k in ('changed', 'unschedulable', 'owners', 'held', 'inherited', 'message')) == {
        'changed': True, 'unschedulable': True, 'owners': ['demo'], 'held': True, 'inherited': False,
        'message': 'node n1 is cordoned by demo'}
    assert events_of(server) == [('Cordon', 'Normal', 'Cordoned node [n1] for [skyhook:demo]')]


def test_a_cordon_the_owner_holds_already_writes_nothing(server):
    stored(server, annotations={OURS: 'true'}, unschedulable=True)

    result = cordon(server)

    assert result['changed'] is False and result['owners'] == ['demo']
    assert calls(server) == ['GET ' + NODE_PATH] and events_of(server) == []


def test_a_cordon_someone_else_took_is_inherited_and_outlives_the_owners_uncordon(server):
    kept = stored(server, unschedulable=True)         # kubectl cordon: no owner annotation

    result = cordon(server)

    assert ours_of(kept) == (True, {OURS: 'true', INHERITED: 'true'})
    assert result['inherited'] is True
    assert result['message'] == 'node n1 is cordoned by demo (inherited: it was already cordoned by someone else)'

    result = cordon(server, state='uncordoned')

    assert ours_of(kept) == (True, {})               # the owner's marks go, the foreign cordon stays
    assert server.of('PATCH')[-1].body == {'metadata': {'annotations': {OURS: None, INHERITED: None},
                                                        'resourceVersion': '6'}}
    assert result['changed'] is True and result['unschedulable'] is True
    assert result['message'] == 'node n1 stays cordoned; it was cordoned by someone else before demo cordoned it'


def test_take_over_holds_an_unowned_cordon_of_a_node_the_cr_was_rolling(server):
    kept = stored(server, unschedulable=True)

    result = cordon(server, take_over=True)

    assert ours_of(kept) == (True, {OURS: 'true'}) and result['inherited'] is False


# --------------------------------------------------------------------------- uncordon


def test_the_owners_uncordon_makes_the_node_schedulable(server):
    kept = stored(server, annotations={OURS: 'true'}, unschedulable=True)

    result = cordon(server, state='uncordoned')

    assert server.of('PATCH')[0].body == {'spec': {'unschedulable': False},
                                          'metadata': {'annotations': {OURS: None}, 'resourceVersion': '5'}}
    assert ours_of(kept) == (False, {})
    assert (result['changed'], result['unschedulable'], result['owners'], result['message']) == (
        True, False, [], 'node n1 is schedulable')
    assert events_of(server) == [('Uncordon', 'Normal', 'Uncordoned node [n1] for [skyhook:demo]')]


def test_an_uncordon_leaves_the_cordon_another_cr_still_holds(server):
    kept = stored(server, annotations={OURS: 'true', THEIRS: 'true'}, unschedulable=True)

    result = cordon(server, state='uncordoned')

    assert ours_of(kept) == (True, {THEIRS: 'true'})
    assert 'spec' not in server.of('PATCH')[0].body
    assert result['message'] == 'node n1 stays cordoned; it is still cordoned by other'
    assert events_of(server) == [('Uncordon', 'Normal', 'Released the cordon of [skyhook:demo] on node [n1]; it stays '
                                                        'cordoned by [skyhook:other]')]


def test_an_uncordon_never_lifts_a_cordon_the_owner_does_not_hold(server):
    kept = stored(server, annotations={THEIRS: 'true'}, unschedulable=True)

    result = cordon(server, state='uncordoned')

    assert calls(server) == ['GET ' + NODE_PATH]       # nothing written
    assert ours_of(kept) == (True, {THEIRS: 'true'})
    assert (result['changed'], result['unschedulable'], result['held']) == (False, True, False)
    assert result['message'] == 'node n1 stays cordoned; it is not cordoned by demo'
    assert events_of(server) == []


def test_an_uncordon_of_a_schedulable_node_without_our_cordon_is_not_changed(server):
    stored(server)
    result = cordon(server, state='uncordoned')
    assert (result['changed'], result['message']) == (False, 'node n1 is schedulable')
    assert calls(server) == ['GET ' + NODE_PATH]


# --------------------------------------------------------------------------- check and diff mode, races, retries


def test_check_mode_asks_the_server_for_a_dry_run_and_changes_nothing(server):
    kept = stored(server)

    result = cordon(server, check_mode=True, diff=True)

    assert calls(server) == ['GET ' + NODE_PATH, 'PATCH %s dry-run' % NODE_PATH]
    assert server.of('PATCH')[0].query['dryRun'] == 'All'
    assert ours_of(kept) == (False, {})                 # the server kept the node as it was
    assert result['changed'] is True and result['unschedulable'] is True   # the dry run's answer: what it would be
    assert result['diff']['before'] != result['diff']['after']
    assert events_of(server) == []                      # no Event in check mode


def test_check_mode_of_a_cordon_already_held_sends_no_patch(server):
    stored(server, annotations={OURS: 'true'}, unschedulable=True)
    result = cordon(server, check_mode=True)
    assert result['changed'] is False and calls(server) == ['GET ' + NODE_PATH]


def test_a_write_that_conflicts_is_decided_again_on_the_fresh_node(server):
    server.reply('GET', NODE_PATH, body=node('n1', 5))
    server.reply('PATCH', NODE_PATH, status=409, body=CONFLICT)
    # meanwhile another CR cordoned the node: ours is no inherited cordon, it is shared
    server.reply('GET', NODE_PATH, body=node('n1', 6, annotations={THEIRS: 'true'}, unschedulable=True))
    both = node('n1', 7, annotations={THEIRS: 'true', OURS: 'true'}, unschedulable=True)
    server.reply('PATCH', NODE_PATH, body=both)

    result = cordon(server)

    assert [p.body for p in server.of('PATCH')] == [
        {'spec': {'unschedulable': True}, 'metadata': {'annotations': {OURS: 'true'}, 'resourceVersion': '5'}},
        {'spec': {'unschedulable': True}, 'metadata': {'annotations': {OURS: 'true'}, 'resourceVersion': '6'}}]
    assert result['owners'] == ['demo', 'other'] and result['inherited'] is False
    assert server.pending() == []


def test_an_api_server_that_answers_429_is_asked_again(server, quick_retries):
    server.reply('GET', NODE_PATH, status=429, body=status_body(429, 'TooManyRequests', 'too many requests'))
    kept = stored(server)

    result = cordon(server)

    assert calls(server) == ['GET ' + NODE_PATH, 'GET ' + NODE_PATH, 'PATCH ' + NODE_PATH]
    assert result['changed'] is True and ours_of(kept) == (True, {OURS: 'true'})


def test_a_429_past_api_outage_timeout_fails_the_module_with_the_status(server, monkeypatch):
    server.reply('GET', NODE_PATH, status=429, body=status_body(429, 'TooManyRequests', 'too many requests'))

    module = execute(monkeypatch, node_cordon, FakeModule(node_cordon, cr_name='demo'), server.kube(api_outage_timeout=0))

    assert module.failed == {'msg': 'get node n1: HTTP 429 Too Many Requests (too many requests)', 'status': 429,
                             'node': 'n1'}
    assert len(server.requests) == 1       # no time left to retry: sent once


def test_hold_takes_no_cordon_for_a_paused_cr(server, monkeypatch):
    kept = stored(server)
    server.reply('GET', CR_PATH, body={'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'Skyhook',
                                       'metadata': {'name': 'demo', 'annotations': {'skyhook.nvidia.com/pause': 'true'}}})

    module = execute(monkeypatch, node_cordon, FakeModule(node_cordon, cr_name='demo', hold=True), server.kube())

    assert module.failed['held'] == 'paused' and module.failed['changed'] is False
    assert 'no cordon is taken on node n1' in module.failed['msg']
    assert server.of('PATCH') == [] and ours_of(kept) == (False, {})


def test_an_invalid_cr_name_fails_before_any_request(server, monkeypatch):
    module = execute(monkeypatch, node_cordon, FakeModule(node_cordon, cr_name='Not_A_Name'), server.kube())
    assert 'cr_name' in module.failed['msg'] and server.requests == []


# --------------------------------------------------------------------------- node_state


def state(server, action, **params):
    return node_state_module.run(FakeModule(node_state_module, action=action, **params), server.kube())


def test_node_state_read_writes_nothing(server):
    stored(server, annotations={OURS: 'true'}, unschedulable=True)
    result = state(server, 'read', cr_name='demo')
    assert (result['changed'], result['cordon_owners'], result['unschedulable']) == (False, ['demo'], True)
    assert calls(server) == ['GET ' + NODE_PATH]


def test_node_state_ignore_labels_the_node_once(server):
    kept = stored(server)

    first = state(server, 'ignore')
    second = state(server, 'ignore')

    assert (first['changed'], first['ignored'], second['changed']) == (True, True, False)
    assert kept.doc['metadata']['labels'] == {IGNORE: 'true'}
    assert [p.body['metadata']['labels'] for p in server.of('PATCH')] == [{IGNORE: 'true'}]


def test_node_state_in_check_mode_sends_a_dry_run_only(server):
    kept = stored(server, labels={IGNORE: 'true'})
    result = state(server, 'unignore', check_mode=True)
    assert result['changed'] is True and result['ignored'] is False
    assert calls(server) == ['GET ' + NODE_PATH, 'PATCH %s dry-run' % NODE_PATH]
    assert kept.doc['metadata']['labels'] == {IGNORE: 'true'}


# --------------------------------------------------------------------------- node_state record on several nodes

STATUS_KEY = 'skyhook.nvidia.com/status_demo'


def stored_nodes(server, names, labels=None):
    kept = {}
    for name in names:
        kept[name] = Stored(node(name, 5, labels=labels))
        path = '/api/v1/nodes/%s' % name
        server.reply('GET', path, body=kept[name].get, repeat=True)
        server.reply('PATCH', path, body=kept[name].patch, repeat=True)
        server.reply('PATCH', path + '/status', body=kept[name].patch_status, repeat=True)
    return kept


def test_node_state_records_a_status_on_several_nodes_each_in_its_own_write(server):
    names = ['n%d' % i for i in range(1, 41)]
    kept = stored_nodes(server, names)

    first = state(server, 'record', node=None, nodes=names + ['n1'], cr_name='demo', status='waiting')
    again = state(server, 'record', node=None, nodes=names, cr_name='demo', status='waiting')

    assert first['changed'] is True and sorted(first['nodes']) == sorted(names)
    assert first['nodes']['n7']['status'] == {'demo': 'waiting'} and first['nodes']['n7']['changed'] is True
    for name in names:
        assert kept[name].doc['metadata']['labels'][STATUS_KEY] == 'waiting'
        assert kept[name].doc['metadata']['annotations'][STATUS_KEY] == 'waiting'
    # one guarded patch of each node's metadata, n1 given twice written once; the second task writes nothing
    patches = [r.path for r in server.of('PATCH') if not r.path.endswith('/status')]
    assert sorted(patches) == sorted('/api/v1/nodes/%s' % n for n in names)
    assert again['changed'] is False and not any(r['changed'] for r in again['nodes'].values())


def test_node_state_records_the_other_nodes_and_names_each_one_at_fault(server):
    kept = stored_nodes(server, ['n1', 'n3'])
    server.reply('GET', '/api/v1/nodes/n2', status=404, body=status_body(404, 'NotFound', 'nodes "n2" not found'),
                 repeat=True)
    module = FakeModule(node_state_module, action='record', node=None, nodes=['n1', 'n2', 'n3'], cr_name='demo',
                        status='paused')

    with pytest.raises(Exception) as failed:
        node_state_module.run(module, server.kube())

    assert failed.value.msg.startswith('1 of 3 nodes not recorded paused: node n2 does not exist in the cluster at ')
    assert failed.value.result['failed_nodes'] == ['n2'] and sorted(failed.value.result['nodes']) == ['n1', 'n3']
    assert [kept[n].doc['metadata']['labels'][STATUS_KEY] for n in ('n1', 'n3')] == ['paused', 'paused']


def test_node_state_several_nodes_in_check_mode_send_dry_runs_with_a_diff_each(server):
    kept = stored_nodes(server, ['n1', 'n2'])
    result = state(server, 'record', node=None, nodes=['n1', 'n2'], cr_name='demo', status='waiting', check_mode=True,
                   diff=True)
    assert result['changed'] is True and len(result['diff']) == 2 and 'diff' not in result['nodes']['n1']
    assert all(r.query.get('dryRun') for r in server.of('PATCH'))
    assert STATUS_KEY not in kept['n1'].doc['metadata']['labels']


@pytest.mark.parametrize('params,message', [
    ({'action': 'complete', 'nodes': ['n1', 'n2']}, 'nodes is only used with action=record (got action=complete); give one node'),
    ({'action': 'record', 'status': 'waiting', 'nodes': ['']}, 'nodes: give at least one node name'),
])
def test_node_state_nodes_is_for_record_only_and_touches_no_node(server, monkeypatch, params, message):
    module = FakeModule(node_state_module, node=None, cr_name='demo', **params)
    execute(monkeypatch, node_state_module, module, server.kube())
    assert module.failed['msg'] == message
    assert calls(server) == []
