# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""node_drain's run against a scripted API server (fake_api): which pods are evicted, the Eviction requests, the
PodDisruptionBudget backoff, the wait for the evicted pods, the timeouts and their messages, check mode.

The drain's own sleeps (the PDB backoff) run on a FakeClock installed as node_drain's ``time``: no test waits 5 s for
a backoff, and the sleeps are asserted. The client's watches keep the real clock; a wait that must time out is given
a short timeout. tests/kube/test_node_drain.py drains a real node.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest

from ansible_collections.nodewright.bridge.plugins.module_utils.model import api_generation
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import drain_config
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import node_drain
from ansible_collections.nodewright.bridge.tests.unit.plugins.module_utils.cluster_support import (
    EVENTS, NODE_PATH, PODS, FakeClock, FakeModule, api_server, calls, dry_run_body, events_of, execute, fast_retries, pod,
    pod_list)
from ansible_collections.nodewright.bridge.tests.unit.plugins.module_utils.fake_api import (
    Pause, Stored, event, node, status_body)

CORDON = 'skyhook.nvidia.com/cordon_demo'
PDBS = '/apis/policy/v1/namespaces/ns/poddisruptionbudgets'
REFUSED = status_body(429, 'TooManyRequests', "Cannot evict pod as it would violate the pod's disruption budget.")
PDB = {'apiVersion': 'policy/v1', 'kind': 'PodDisruptionBudget',
       'metadata': {'name': 'web-pdb', 'namespace': 'ns', 'generation': 1},
       'spec': {'minAvailable': 1, 'selector': {'matchLabels': {'app': 'web'}}},
       'status': {'currentHealthy': 1, 'desiredHealthy': 1, 'expectedPods': 1, 'disruptionsAllowed': 0,
                  'observedGeneration': 1}}
PDB_TEXT = 'ns/web-pdb (minAvailable 1, currentHealthy 1, desiredHealthy 1, expectedPods 1, disruptionsAllowed 0)'
EVICTED = {'kind': 'Status', 'apiVersion': 'v1', 'status': 'Success'}
WEB = pod('web-0', labels={'app': 'web'}, owners=[('ReplicaSet', 'web')])


def eviction(name, namespace='ns'):
    return '/api/v1/namespaces/%s/pods/%s/eviction' % (namespace, name)


@pytest.fixture
def server():
    return api_server()


@pytest.fixture
def clock(monkeypatch):
    made = FakeClock()
    monkeypatch.setattr(node_drain, 'time', made)
    return made


@pytest.fixture
def quick_retries(monkeypatch):
    fast_retries(monkeypatch)


def cordoned_node(server, unschedulable=True):
    server.reply('GET', NODE_PATH, body=node('n1', 5, annotations={CORDON: 'true'}, unschedulable=unschedulable))


def drain(server, **params):
    """``Drain(module, kube).run()`` (what node_drain.execute runs) and the module, with nothing scripted left over."""
    module = FakeModule(node_drain, **params)
    result = node_drain.Drain(module, server.kube()).run()
    assert server.pending() == []
    return result, module


def entries(result):
    return dict((e['name'], (e['action'], e['reason'])) for e in result['pods'])


# --------------------------------------------------------------------------- what is evicted


def test_the_evictable_pods_are_evicted_through_the_eviction_api_and_waited_for(server, clock):
    pods = [WEB,
            pod('old-0', owners=[('ReplicaSet', 'old')], deleting=True),                    # terminating: evicted again
            pod('ds-0', owners=[('DaemonSet', 'agent')]),
            pod('static-n1', annotations={'kubernetes.io/config.mirror': 'abc'}),
            pod('batch-0', phase='Succeeded', owners=[('Job', 'batch')]),
            pod('gone-0', phase='Unknown'),
            pod('dns-0', namespace='kube-system', owners=[('ReplicaSet', 'dns')]),
            pod('tolerant-0', tolerations=[{'key': 'node.kubernetes.io/unschedulable', 'operator': 'Exists'}])]
    cordoned_node(server)
    server.reply('GET', PODS, body=pod_list(40, *pods))
    server.reply('POST', eviction('web-0'), status=201, body=EVICTED)
    server.reply('POST', eviction('old-0'), status=201, body=EVICTED)
    # the wait: both evicted pods still listed, then their DELETED events (a DaemonSet pod stays, as it should)
    server.reply('GET', PODS, body=pod_list(41, WEB, pods[1], pods[2]))
    server.stream('GET', PODS, [event('DELETED', dict(WEB, metadata=dict(WEB['metadata'], resourceVersion='42'))),
                                event('DELETED', pods[1])])

    result, module = drain(server)

    assert entries(result) == {
        'web-0': ('evicted', 'evictable'), 'old-0': ('evicted', 'terminating'), 'ds-0': ('skipped', 'daemonset'),
        'static-n1': ('skipped', 'mirror'), 'batch-0': ('skipped', 'finished'), 'gone-0': ('skipped', 'unknown-phase'),
        'dns-0': ('skipped', 'kube-system'), 'tolerant-0': ('skipped', 'tolerates-unschedulable')}
    assert (result['changed'], result['evicted'], result['skipped']) == (True, 2, 6)
    requests = calls(server)
    assert requests[:2] == ['GET ' + NODE_PATH, 'GET ' + PODS]
    assert sorted(requests[2:4]) == ['POST ' + eviction('old-0'), 'POST ' + eviction('web-0')]  # concurrent
    assert requests[4:] == ['GET ' + PODS, 'GET %s watch' % PODS]
    # the node's pods, and the wait, are those of spec.nodeName=n1; the watch goes on from the list's version
    assert [r.query['fieldSelector'] for r in server.of('GET', PODS)] == ['spec.nodeName=n1'] * 3
    assert server.of('GET', PODS, watch=True)[0].query['resourceVersion'] == '41'
    assert server.of('POST', eviction('web-0'))[0].body == {
        'apiVersion': 'policy/v1', 'kind': 'Eviction', 'metadata': {'name': 'web-0', 'namespace': 'ns'}}
    assert [p['attempts'] for p in result['pods'] if p['action'] == 'evicted'] == [1, 1]
    assert events_of(server) == [('Drain', 'Normal', 'Drained node [n1] for [skyhook:demo]: 2 pod(s) evicted, 6 skipped')]
    assert module.warnings == [] and clock.slept == []


def test_a_grace_period_goes_into_the_evictions_delete_options(server, clock):
    cordoned_node(server)
    server.reply('GET', PODS, body=pod_list(40, WEB))
    server.reply('POST', eviction('web-0'), status=201, body=EVICTED)
    server.reply('GET', PODS, body=pod_list(41))

    drain(server, grace_period=7)

    assert server.of('POST', eviction('web-0'))[0].body['deleteOptions'] == {'gracePeriodSeconds': 7}


def test_a_pod_selector_scopes_the_drain(server, clock):
    cordoned_node(server)
    server.reply('GET', PODS, body=pod_list(40, WEB, pod('db-0', labels={'app': 'db'})))
    server.reply('POST', eviction('db-0'), status=201, body=EVICTED)
    server.reply('GET', PODS, body=pod_list(41, WEB))

    result, module = drain(server, pod_selector='app=db')

    assert entries(result) == {'web-0': ('skipped', 'not-selected'), 'db-0': ('evicted', 'evictable')}
    assert server.of('POST', eviction('web-0')) == []


def test_a_node_without_pods_to_evict_is_not_changed_and_gets_no_event(server, clock):
    cordoned_node(server)
    server.reply('GET', PODS, body=pod_list(40, pod('ds-0', owners=[('DaemonSet', 'agent')])))

    result, module = drain(server)

    assert (result['changed'], result['evicted'], result['skipped']) == (False, 0, 1)
    assert calls(server) == ['GET ' + NODE_PATH, 'GET ' + PODS]
    assert events_of(server) == []


def test_a_schedulable_node_is_drained_with_a_warning(server, clock):
    cordoned_node(server, unschedulable=False)
    server.reply('GET', PODS, body=pod_list(40))

    result, module = drain(server)

    assert result['changed'] is False
    assert module.warnings == ['node n1 is schedulable: evicted pods may be scheduled back onto it; cordon it first '
                               '(nodewright.bridge.node_cordon)']


def test_an_eviction_of_a_pod_already_gone_is_a_success_that_changes_nothing(server, clock):
    cordoned_node(server)
    server.reply('GET', PODS, body=pod_list(40, WEB))
    server.reply('POST', eviction('web-0'), status=404, body=status_body(404, 'NotFound', 'pods "web-0" not found'))

    result, module = drain(server)

    assert entries(result) == {'web-0': ('gone', 'evictable')}
    assert (result['changed'], result['evicted']) == (False, 0)
    # nothing was evicted: nothing to wait for, no Event
    assert calls(server) == ['GET ' + NODE_PATH, 'GET ' + PODS, 'POST ' + eviction('web-0')]
    assert events_of(server) == []


def test_an_evicted_pod_back_under_its_name_with_a_new_uid_does_not_hold_the_drain(server, clock):
    cordoned_node(server)
    server.reply('GET', PODS, body=pod_list(40, WEB))
    server.reply('POST', eviction('web-0'), status=201, body=EVICTED)
    server.reply('GET', PODS, body=pod_list(41, pod('web-0', uid='uid-web-0-new', phase='Pending')))  # a StatefulSet's

    result, module = drain(server)

    assert result['evicted'] == 1 and server.of('GET', PODS, watch=True) == []


def test_disable_eviction_deletes_only_that_incarnation_and_warns(server, clock):
    cordoned_node(server)
    server.reply('GET', PODS, body=pod_list(40, WEB))
    server.reply('DELETE', '/api/v1/namespaces/ns/pods/web-0', body=WEB)
    server.reply('GET', PODS, body=pod_list(41))

    result, module = drain(server, disable_eviction=True, grace_period=0)

    assert entries(result) == {'web-0': ('deleted', 'evictable')}
    assert server.of('DELETE')[0].body == {'preconditions': {'uid': 'uid-web-0'}, 'gracePeriodSeconds': 0}
    assert module.warnings == ['disable_eviction: pods on node n1 are deleted, PodDisruptionBudgets are not respected']


# --------------------------------------------------------------------------- PodDisruptionBudgets


def test_an_eviction_a_pdb_refuses_is_retried_with_backoff_until_it_is_allowed(server, clock):
    cordoned_node(server)
    server.reply('GET', PODS, body=pod_list(40, WEB))
    for dummy in range(3):
        server.reply('POST', eviction('web-0'), status=429, body=REFUSED)
        server.reply('GET', PDBS, body={'items': [PDB]})
    server.reply('POST', eviction('web-0'), status=201, body=EVICTED)
    server.reply('GET', PODS, body=pod_list(41))

    result, module = drain(server)

    assert clock.slept == [5, 10, 20]        # drain_rules.eviction_backoff: 5, 10, 20, 40, 60, ...
    entry = result['pods'][0]
    assert (entry['action'], entry['attempts'], entry['pdbs']) == ('evicted', 4, [PDB_TEXT])
    assert entry['finished'] - entry['started'] == 35.0
    # each refusal reads the PDBs again (the disruption controller refreshes their status)
    assert calls(server) == ['GET ' + NODE_PATH, 'GET ' + PODS] + ['POST ' + eviction('web-0'), 'GET ' + PDBS] * 3 + [
        'POST ' + eviction('web-0'), 'GET ' + PODS]
    assert (result['changed'], result['evicted']) == (True, 1)
    assert events_of(server) == [('Drain', 'Normal', 'Drained node [n1] for [skyhook:demo]: 1 pod(s) evicted, 0 skipped, '
                                                     '1 waited for a PodDisruptionBudget')]


def test_a_pdb_that_refuses_until_the_timeout_fails_the_drain_naming_the_pod_and_the_pdb(server, clock, monkeypatch):
    cordoned_node(server)
    server.reply('GET', PODS, body=pod_list(40, WEB))
    server.reply('POST', eviction('web-0'), status=429, body=REFUSED, repeat=True)
    server.reply('GET', PDBS, body={'items': [PDB]}, repeat=True)

    module = execute(monkeypatch, node_drain, FakeModule(node_drain, timeout=40), server.kube())

    # 5 + 10 + 20 = 35 s waited; the next backoff (40 s) would end after the timeout: the pod is given up
    assert clock.slept == [5, 10, 20]
    failed = module.failed
    assert failed['msg'] == 'node n1: 1 pod(s) could not be evicted within 40s: ns/web-0 blocked by ' + PDB_TEXT
    assert (failed['node'], failed['changed'], failed['evicted']) == ('n1', False, 0)
    assert [(p['action'], p['attempts']) for p in failed['pods']] == [('blocked', 4)]
    assert len(server.of('POST', eviction('web-0'))) == 4
    assert events_of(server) == [('Drain', 'Warning', 'Drain of node [n1] for [skyhook:demo] failed: ' + failed['msg'])]


def test_a_blocked_pod_fails_the_drain_after_the_others_are_evicted_and_gone(server, clock, monkeypatch):
    cordoned_node(server)
    server.reply('GET', PODS, body=pod_list(40, WEB, pod('db-0', labels={'app': 'db'})))
    server.reply('POST', eviction('db-0'), status=201, body=EVICTED)
    server.reply('POST', eviction('web-0'), status=429, body=REFUSED, repeat=True)
    server.reply('GET', PDBS, body={'items': [PDB]}, repeat=True)
    server.reply('GET', PODS, body=pod_list(41, WEB))

    module = execute(monkeypatch, node_drain, FakeModule(node_drain, timeout=4), server.kube())

    failed = module.failed
    assert failed['msg'] == 'node n1: 1 pod(s) could not be evicted within 4s: ns/web-0 blocked by ' + PDB_TEXT
    # truthful: a pod was evicted, so the node changed
    assert (failed['changed'], failed['evicted']) == (True, 1)
    assert entries(failed) == {'web-0': ('blocked', 'evictable'), 'db-0': ('evicted', 'evictable')}
    assert clock.slept == []                 # the first backoff (5 s) is longer than the timeout already


def test_a_refusal_without_a_matching_pdb_names_the_servers_words(server, clock, monkeypatch):
    cordoned_node(server)
    server.reply('GET', PODS, body=pod_list(40, WEB))
    server.reply('POST', eviction('web-0'), status=429, body=REFUSED)
    server.reply('GET', PDBS, body={'items': []})

    module = execute(monkeypatch, node_drain, FakeModule(node_drain, timeout=1), server.kube())

    assert module.failed['msg'] == ("node n1: 1 pod(s) could not be evicted within 1s: ns/web-0 blocked by Cannot evict "
                                    "pod as it would violate the pod's disruption budget.")


def test_a_refused_eviction_other_than_429_fails_the_drain_with_the_servers_answer(server, clock, monkeypatch):
    cordoned_node(server)
    server.reply('GET', PODS, body=pod_list(40, WEB))
    server.reply('POST', eviction('web-0'), status=403, body=status_body(403, 'Forbidden', 'cannot create pods/eviction'))

    module = execute(monkeypatch, node_drain, FakeModule(node_drain), server.kube())

    assert module.failed['msg'] == ('node n1: evict pod ns/web-0: forbidden by the API server at %s (cannot create '
                                    'pods/eviction)' % server.host)
    assert entries(module.failed) == {'web-0': ('failed', 'evictable')}
    assert len(server.of('POST', eviction('web-0'))) == 1 and clock.slept == []


# --------------------------------------------------------------------------- the API server's "not now" (kube.call)


def test_an_api_server_that_cannot_answer_now_is_retried_by_the_client_not_the_pdb_backoff(server, clock, quick_retries):
    cordoned_node(server)
    server.reply('GET', PODS, status=429, body=status_body(429, 'TooManyRequests', 'too many requests'))  # APF
    server.reply('GET', PODS, body=pod_list(40, WEB))
    server.reply('POST', eviction('web-0'), status=503, body=status_body(503, 'ServiceUnavailable', 'unavailable'))
    server.reply('POST', eviction('web-0'), status=201, body=EVICTED)
    server.reply('GET', PODS, body=pod_list(41))

    result, module = drain(server)

    assert result['pods'][0]['attempts'] == 1 and result['pods'][0]['action'] == 'evicted'
    assert clock.slept == []                 # the client's retries, not the drain's backoff
    assert calls(server) == ['GET ' + NODE_PATH, 'GET ' + PODS, 'GET ' + PODS, 'POST ' + eviction('web-0'),
                             'POST ' + eviction('web-0'), 'GET ' + PODS]


# --------------------------------------------------------------------------- the waits


def test_evicted_pods_that_do_not_leave_fail_the_drain_naming_them(server, clock, monkeypatch):
    cordoned_node(server)
    server.reply('GET', PODS, body=pod_list(40, WEB))
    server.reply('POST', eviction('web-0'), status=201, body=EVICTED)
    server.reply('GET', PODS, body=pod_list(41, dict(WEB, metadata=dict(WEB['metadata'], deletionTimestamp='x'))))
    server.stream('GET', PODS, [Pause(0.6)], repeat=True)   # the server holds each watch, without an event

    module = execute(monkeypatch, node_drain, FakeModule(node_drain, timeout=1), server.kube())

    failed = module.failed
    assert failed['msg'] == 'node n1: evicted pods still terminating, not gone within 1s: ns/web-0'
    assert (failed['changed'], failed['evicted']) == (True, 1)
    assert server.of('GET', PODS, watch=True)[0].query['timeoutSeconds'] == '1'


def test_the_drain_waits_for_the_protected_pods_before_it_evicts(server, clock):
    guard = pod('guard-0', labels={'nodewright/protected': 'yes'})
    cordoned_node(server)
    server.reply('GET', PODS, body=pod_list(40, guard, WEB))  # the first look: guard-0 runs
    server.reply('GET', PODS, body=pod_list(40, guard, WEB))  # the watch's list
    server.stream('GET', PODS, [event('MODIFIED', dict(guard, status={'phase': 'Succeeded'}))])
    server.reply('GET', PODS, body=pod_list(42, dict(guard, status={'phase': 'Succeeded'}), WEB))
    server.reply('POST', eviction('web-0'), status=201, body=EVICTED)
    server.reply('GET', PODS, body=pod_list(43))

    result, module = drain(server, wait_for={'matchLabels': {'nodewright/protected': 'yes'}})

    assert calls(server) == ['GET ' + NODE_PATH, 'GET ' + PODS, 'GET ' + PODS, 'GET %s watch' % PODS, 'GET ' + PODS,
                             'POST ' + eviction('web-0'), 'GET ' + PODS]
    assert entries(result) == {'guard-0': ('skipped', 'finished'), 'web-0': ('evicted', 'evictable')}
    # the wait's start (a Warning, as the operator's barrier reports it) and its end; no CR named: no record written
    reasons = [e[:2] for e in events_of(server)]
    assert reasons[:2] == [('Drain', 'Warning'), ('Drain', 'Normal')]
    assert 'blocked by non-interrupt pods ns/guard-0' in events_of(server)[0][2]


def test_protected_pods_found_clear_at_the_first_look_are_no_wait_however_long_the_look_took(server, monkeypatch):
    """The list behind the look takes its time on a busy API server; the Event says nothing of protected pods."""
    class Slow(FakeClock):
        def time(self):  # every reading 0.7 s after the one before
            self.now += 0.7
            return self.now
    monkeypatch.setattr(node_drain, 'time', Slow())
    cordoned_node(server)
    server.reply('GET', PODS, body=pod_list(40, WEB))   # the look for protected pods: the drain plans from it too
    server.reply('POST', eviction('web-0'), status=201, body=EVICTED)
    server.reply('GET', PODS, body=pod_list(43))

    result, module = drain(server, wait_for={'matchLabels': {'nodewright/protected': 'yes'}})

    assert result['protected_wait'] == 0.0 and result['evicted'] == 1
    assert events_of(server) == [('Drain', 'Normal', 'Drained node [n1] for [skyhook:demo]: 1 pod(s) evicted, 0 skipped')]


def test_protected_pods_still_running_at_wait_for_timeout_fail_the_drain_before_any_eviction(server, clock, monkeypatch):
    cordoned_node(server)
    server.reply('GET', PODS, body=pod_list(40, pod('guard-0', labels={'role': 'guard'}), WEB), repeat=True)
    server.stream('GET', PODS, [Pause(0.2)], repeat=True)

    # wait_for_timeout goes to the watch as it is: a fraction of a second keeps this test short
    module = execute(monkeypatch, node_drain, FakeModule(node_drain, wait_for='role=guard', wait_for_timeout=0.3),
                     server.kube())

    assert module.failed == {'msg': 'node n1: 1 protected pod(s) are still Running or Pending after '
                                    '0.3s, nothing was evicted: ns/guard-0', 'node': 'n1', 'status': 0}
    assert server.of('POST') == server.of('POST', EVENTS)   # no eviction
    # the wait's start, then the failed drain
    assert [e[:2] for e in events_of(server)] == [('Drain', 'Warning'), ('Drain', 'Warning')]
    assert 'failed' in events_of(server)[1][2]


# --------------------------------------------------------------------------- check mode


def test_check_mode_sends_dry_run_evictions_only_and_says_what_would_be_evicted(server, clock):
    cordoned_node(server)
    guard = pod('guard-0', labels={'role': 'guard'}, phase='Pending')
    server.reply('GET', PODS, body=pod_list(40, WEB, guard, pod('db-0')))
    server.reply('POST', eviction('web-0'), status=429, body=REFUSED)
    server.reply('GET', PDBS, body={'items': [PDB]})
    server.reply('POST', eviction('db-0'), status=201, body=EVICTED)

    result, module = drain(server, check_mode=True, wait_for='role=guard')

    posts = server.of('POST')
    assert sorted(r.path for r in posts) == [eviction('db-0'), eviction('web-0')] and all(dry_run_body(r) for r in posts)
    assert entries(result) == {'web-0': ('would-evict', 'evictable'), 'db-0': ('would-evict', 'evictable'),
                               'guard-0': ('skipped', 'protected')}
    assert result['changed'] is True and result['evicted'] == 0
    assert result['preflight'] == {'ok': False, 'blocked': [
        {'namespace': 'ns', 'name': 'web-0', 'uid': 'uid-web-0', 'pdbs': [PDB_TEXT],
         'message': "Cannot evict pod as it would violate the pod's disruption budget."}]}
    assert result['waiting_for'] == ['ns/guard-0']     # no wait in check mode: the pods it would wait for
    assert server.of('GET', PODS, watch=True) == [] and events_of(server) == [] and clock.slept == []


def test_check_mode_of_a_node_with_nothing_to_evict_is_not_changed(server, clock):
    cordoned_node(server)
    server.reply('GET', PODS, body=pod_list(40, pod('ds-0', owners=[('DaemonSet', 'agent')])))

    result, module = drain(server, check_mode=True)

    assert result['changed'] is False and result['preflight'] == {'ok': True, 'blocked': []}
    assert calls(server) == ['GET ' + NODE_PATH, 'GET ' + PODS]


def test_a_preflight_refusal_fails_the_drain_before_a_single_eviction(server, clock, monkeypatch):
    cordoned_node(server)
    server.reply('GET', PODS, body=pod_list(40, WEB, pod('db-0')))
    server.reply('POST', eviction('db-0'), status=201, body=EVICTED)
    server.reply('POST', eviction('web-0'), status=429, body=REFUSED)
    server.reply('GET', PDBS, body={'items': [PDB]})

    module = execute(monkeypatch, node_drain, FakeModule(node_drain, preflight=True), server.kube())

    assert module.failed['msg'] == ('node n1: preflight failed, nothing was evicted; a PodDisruptionBudget would refuse: '
                                    'ns/web-0 by ' + PDB_TEXT)
    assert module.failed['changed'] is False
    assert all(dry_run_body(r) for r in server.of('POST') if r.path != EVENTS)


# --------------------------------------------------------------------------- drain_config (a v0.20 NodeWright's)


def test_a_drain_config_drain_records_its_start_and_blockers_and_waits_for_the_pod_it_may_not_evict(server, clock):
    gen = api_generation.NODEWRIGHT
    start_key, blocked_key = gen.drain_start_key('demo'), gen.drain_blocked_key('demo')
    kept = Stored(node('n1', 5, annotations={gen.cordon_key('demo'): 'true'}, unschedulable=True))
    server.reply('GET', NODE_PATH, body=kept.get, repeat=True)
    server.reply('PATCH', NODE_PATH, body=kept.patch, repeat=True)
    loner = pod('loner')                                  # no controller: with force false it blocks the drain
    server.reply('GET', PODS, body=pod_list(40, WEB, loner))
    server.reply('POST', eviction('web-0'), status=201, body=EVICTED)
    server.reply('GET', PODS, body=pod_list(41, loner))    # the evicted pod is gone
    server.reply('GET', PODS, body=pod_list(41, loner))    # the wait for the blocker
    server.stream('GET', PODS, [event('DELETED', loner)])  # its owner deletes it

    module = FakeModule(node_drain, nodewright_api='nodewright', cr_name='demo', drain_config={'force': False})
    result = node_drain.Drain(module, server.kube(nodewright_api='nodewright')).run()

    assert server.pending() == []
    assert entries(result) == {'web-0': ('evicted', 'evictable'),
                               'loner': ('gone', drain_config.DECISION_REASONS[drain_config.UNMANAGED])}
    assert server.of('POST', eviction('loner')) == []     # never evicted
    first, last = [r.body['metadata']['annotations'] for r in server.of('PATCH', NODE_PATH)]
    assert first[start_key] == drain_config.format_start(clock.now)
    assert json.loads(first[blocked_key]) == [drain_config.blocked_pod('ns', 'loner', drain_config.UNMANAGED)]
    assert last == {start_key: None, blocked_key: None}    # drained: both go
    assert start_key not in kept.doc['metadata']['annotations'] and result['drain_blocked'] == []
    assert calls(server) == ['GET ' + NODE_PATH, 'GET ' + PODS, 'PATCH ' + NODE_PATH, 'POST ' + eviction('web-0'),
                             'GET ' + PODS, 'GET ' + PODS, 'GET %s watch' % PODS, 'PATCH ' + NODE_PATH]
