# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""kube.KubeSession: what the clients of one owner keep between requests, and nothing kept in module globals.

The node cache is bounded (least recently used out), sessions do not share, a Kube made without one has its own
(no process default), the sequence engine's session gives its clients the engine's pool, a module run and a node's
sequence hand theirs down, and importing the action plugins' base does not import the ``kubernetes`` client
(preloading it is the forking process's explicit call). The API layer and the rollout record keep no state in
module globals (the rollout callback and the strategy meet at one bus, rollout_state.BUS), and the transport
imports nothing of the operator's rules.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ast
import json
import os
import subprocess
import sys

import pytest

from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube as kube_api
from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube_transport
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import _runner
from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution import in_process
from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution import sequence_engine
from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution import status_keeper
from ansible_collections.nodewright.bridge.plugins.plugin_utils.reporting import rollout_state
from ansible_collections.nodewright.bridge.tests.unit.plugins.module_utils.fake_api import FakeApiServer, node

REPO_ROOT = os.path.realpath(os.path.join(os.path.dirname(__file__), '..', '..', '..', '..'))
MODULE_UTILS = os.path.join(REPO_ROOT, 'plugins', 'module_utils', 'api')
# Every file of the API layer: kube.py, the resources' parts it is composed of, the transport, the stage runs...
STATEFUL_FILES = tuple(sorted(name for name in os.listdir(MODULE_UTILS) if name.endswith('.py')))
# Module options' argument specs: dicts, as Ansible takes them, that no code writes after import (file, name).
ARGUMENT_SPECS = (('pod_run.py', 'OPERATOR_OPTIONS'), ('pod_run.py', 'RUN_OPTIONS'), ('slot_mailbox.py', 'PARK_ARGUMENT'))
ROLLOUT_STATE = os.path.join(REPO_ROOT, 'plugins', 'plugin_utils', 'reporting', 'rollout_state.py')
# What a module-level name may not be bound to: a container that a function could fill.
MUTABLE_CALLS = ('dict', 'list', 'set', 'OrderedDict', 'defaultdict', 'deque', 'bytearray', 'WeakValueDictionary',
                 'WeakKeyDictionary', 'WeakSet')
MUTABLE_LITERALS = (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)
# ... nor an object that keeps state between calls: a session (or its parts) made at import is a process default, a
# lock made at import guards module state, and the rollout bus is made once, in rollout_state only (BUS)
STATE_CALLS = ('KubeSession', 'Clients', 'RecentCache', 'ValidatedCRs', 'LiveCRs', 'Kube', 'KubeTransport', 'RolloutBus',
               'Lock', 'RLock', 'Condition', 'Event', 'Semaphore', 'BoundedSemaphore', 'local')
# The process defaults issue 43 removed: what the API layer and the rollout record may not define again.
REMOVED = ((kube_transport, ('_PROCESS_SESSION', 'default_session', 'KubeSession')),
           (kube_api, ('_PROCESS_SESSION', 'default_session')),
           (rollout_state, ('_LOCK', '_ROLLOUTS', '_LISTENERS', 'subscribe', 'reset', 'start_rollout', 'rollouts', 'report')))
# What the transport may not import: the operator's rules and what to do with them (kube.py may)
DOMAIN_LAYERS = ('module_utils.contract', 'module_utils.planning', 'module_utils.cluster_modules', 'plugin_utils')


def session_kube(server, session, **params):
    """A Kube of ``session`` whose client talks to ``server``."""
    params.setdefault('host', server.host)
    params.setdefault('nodewright_api', 'skyhook')
    kube = kube_api.Kube(params, session=session)
    server.install(kube.api_client)
    return kube


# --------------------------------------------------------------------------- the node cache


def test_the_node_cache_drops_the_least_recently_used_node_beyond_its_size():
    cache = kube_api.RecentCache(size=2)
    cache.put('a', {'n': 'a'})
    cache.put('b', {'n': 'b'})
    assert cache.get('a') == {'n': 'a'}  # a used: b is now the oldest
    cache.put('c', {'n': 'c'})
    assert 'b' not in cache and cache.get('a') == {'n': 'a'} and cache.get('c') == {'n': 'c'} and len(cache) == 2
    cache.put('a', {'n': 'a2'})  # a write refreshes too
    cache.put('d', {'n': 'd'})
    assert 'c' not in cache and cache.get('a') == {'n': 'a2'} and cache.pop('a') == {'n': 'a2'} and cache.pop('a') is None


def test_the_default_bound_is_above_the_nodes_the_engine_has_in_flight():
    assert kube_api.KubeSession().nodes.size == kube_api.NODE_CACHE_SIZE >= sequence_engine.ENGINE_POOL_SIZE


def test_a_session_beyond_its_node_bound_reads_an_evicted_node_again_never_a_stale_copy():
    server = FakeApiServer()
    kube = session_kube(server, kube_api.KubeSession(node_cache_size=2))
    for number, name in enumerate(('n1', 'n2', 'n3')):
        server.reply('GET', '/api/v1/nodes/%s' % name, body=node(name, 10 + number))
        kube.get_node(name)
    assert len(kube.session.nodes) == 2 and kube.session.nodes.get(kube.nodes_api.node_key('n1')) is None
    # n1 was read at version 10 and dropped; the server has 15 now: the write starts from a fresh read
    server.reply('GET', '/api/v1/nodes/n1', body=node('n1', 15))
    server.reply('PATCH', '/api/v1/nodes/n1', body=node('n1', 16, labels={'x': 'y'}))
    after, patch = kube.update_node('n1', lambda current: {'metadata': {'labels': {'x': 'y'}}})
    assert patch and after['metadata']['resourceVersion'] == '16'
    assert [r.method for r in server.requests][-2:] == ['GET', 'PATCH']
    assert server.requests[-1].body['metadata']['resourceVersion'] == '15' and server.pending() == []


# --------------------------------------------------------------------------- sessions are apart


def test_two_sessions_share_no_client_node_lock_or_refusal():
    server = FakeApiServer()
    first, second = kube_api.KubeSession(), kube_api.KubeSession()
    one, other = session_kube(server, first), session_kube(server, second)
    assert one.api_client is not other.api_client
    assert session_kube(server, first).api_client is one.api_client  # within a session: one client per connection
    assert first.node_lock(server.host, 'n1') is first.node_lock(server.host, 'n1')
    assert first.node_lock(server.host, 'n1') is not second.node_lock(server.host, 'n1')
    server.reply('GET', '/api/v1/nodes/n1', body=node('n1', 3))
    one.get_node('n1')
    assert len(first.nodes) == 1 and len(second.nodes) == 0
    first.status_failures[(os.getpid(), server.host)] = kube_api.KubeError('refused', 403)
    assert second.status_failures == {} and first.event_failures == second.event_failures == {}


def test_a_kube_without_a_session_uses_that_of_its_live_crs_else_one_of_its_own():
    engine = kube_api.KubeSession()
    live = kube_api.LiveCRs({'host': 'https://live.invalid'}, session=engine)
    assert kube_api.Kube({'host': 'https://live.invalid'}, live_crs=live).session is engine
    # no process default: two clients made without a session share no client, node copy, lock or refusal
    one, other = kube_api.Kube({'host': 'https://live.invalid'}), kube_api.Kube({'host': 'https://live.invalid'})
    assert isinstance(one.session, kube_api.KubeSession) and one.session is not other.session
    assert one.api_client is not other.api_client
    lone = kube_api.LiveCRs({'host': 'https://live.invalid'})
    assert isinstance(lone.session, kube_api.KubeSession) and lone.session not in (one.session, other.session)


class _Module(object):
    """What _runner.module_session reads of a module: its caller's session, its live CRs."""

    def __init__(self, kube_session=None, live_crs=None):
        self.kube_session, self.live_crs = kube_session, live_crs


def test_a_module_run_takes_the_session_its_caller_hands_down_else_makes_one():
    given, engine = kube_api.KubeSession(), kube_api.KubeSession()
    live = kube_api.LiveCRs({'host': 'https://live.invalid'}, session=engine)
    assert _runner.module_session(_Module(kube_session=given, live_crs=live)) is given
    assert _runner.module_session(_Module(live_crs=live)) is engine
    first, second = _runner.module_session(_Module()), _runner.module_session(_Module())
    assert isinstance(first, kube_api.KubeSession) and first is not second  # one per module run (AnsiballZ: per process)
    assert _runner.module_session(object()) is not _runner.module_session(object())  # an AnsibleModule has neither


def test_the_steps_in_process_get_the_session_their_caller_hands_down():
    seen = []

    class Code(object):
        @staticmethod
        def module_args():
            return dict(argument_spec={}, supports_check_mode=True)

        @staticmethod
        def execute(module):
            seen.append(_runner.module_session(module))
            module.exit_json()
    session = kube_api.KubeSession()
    in_process.run('nodewright.bridge.x', Code, {}, session=session)
    in_process.run('nodewright.bridge.x', Code, {}, session=session)
    in_process.run('nodewright.bridge.x', Code, {})
    assert seen[0] is seen[1] is session and seen[2] is not session


def test_the_keepers_and_the_strategys_writer_use_the_session_they_are_handed():
    connection = {'host': 'https://keepers.invalid:6443'}
    session = kube_api.KubeSession()
    keeper = status_keeper.Keepers(make=status_keeper.DeferredKeeper, session=session).get(connection, 'gpu')
    assert keeper.kube().session is session
    assert status_keeper.BatchStateKeeper(connection, 'gpu', session=session).kube().session is session
    assert status_keeper.Keepers(make=status_keeper.DeferredKeeper).get(connection, 'gpu').kube().session is not session


# --------------------------------------------------------------------------- the sequence engine's pool


def test_the_engines_pool_size_reaches_the_clients_of_its_steps_and_keepers():
    connection = {'host': 'https://engine-pool.invalid:6443'}
    assert sequence_engine.EngineState().session.pool_size == sequence_engine.ENGINE_POOL_SIZE != kube_transport.POOL_SIZE
    # as the engine builds them, in a session of the test's own (the module's serves the engine process)
    session = kube_api.KubeSession(pool_size=sequence_engine.ENGINE_POOL_SIZE)
    live_crs = sequence_engine.LiveCRsByConnection(session).get(connection)
    step = kube_api.Kube(kube_api.connection_params(connection), live_crs=live_crs)
    keeper = status_keeper.Keepers(live_crs_for=lambda conn: live_crs).get(connection, 'gpu').kube()
    for kube in (step, keeper):
        assert kube.session is session and kube.api_client is step.api_client
        assert kube.configuration.connection_pool_maxsize == sequence_engine.ENGINE_POOL_SIZE
        assert kube.api_client.rest_client.pool_manager.connection_pool_kw['maxsize'] == sequence_engine.ENGINE_POOL_SIZE
    other = kube_api.Kube(kube_api.connection_params(connection))  # a worker's: the default pool
    assert other.configuration.connection_pool_maxsize == kube_transport.POOL_SIZE


# --------------------------------------------------------------------------- imports and globals


def _run_python(code):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    out = subprocess.run([sys.executable, '-c', code], env=env, check=True, stdout=subprocess.PIPE, timeout=120)
    return json.loads(out.stdout.decode('utf-8').strip().splitlines()[-1])


def test_importing_the_action_plugins_base_does_not_import_kubernetes_and_preloading_does():
    found = _run_python(
        'import json, sys\n'
        'from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution import cluster_action\n'
        'before = sorted(m for m in sys.modules if m.split(".")[0] == "kubernetes")\n'
        'from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution import fork_preload\n'
        'fork_preload.before_fork()\n'
        'print(json.dumps([before, "kubernetes.client" in sys.modules]))\n')
    assert found == [[], True]


def _module_level_mutables(path):
    with open(path) as handle:
        tree = ast.parse(handle.read(), path)
    found = []
    for statement in tree.body:
        if isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            value = statement.value
            names = [t.id for t in getattr(statement, 'targets', [getattr(statement, 'target', None)])
                     if isinstance(t, ast.Name)]
            func = value.func if isinstance(value, ast.Call) else None
            called = getattr(func, 'id', None) or getattr(func, 'attr', None)
            if names and (isinstance(value, MUTABLE_LITERALS) or called in MUTABLE_CALLS + STATE_CALLS):
                found.append('%s:%d %s' % (os.path.basename(path), statement.lineno, ', '.join(names)))
    for each in ast.walk(tree):
        if isinstance(each, ast.Global):
            found.append('%s:%d global %s' % (os.path.basename(path), each.lineno, ', '.join(each.names)))
    return found


def test_the_globals_check_covers_every_file_of_the_api_layer():
    assert {'kube.py', 'kube_transport.py', 'session.py', 'nodes.py', 'watches.py'} <= set(STATEFUL_FILES)


@pytest.mark.parametrize('name', STATEFUL_FILES)
def test_the_api_layer_keeps_no_state_in_module_globals(name):
    found = [each for each in _module_level_mutables(os.path.join(MODULE_UTILS, name))
             if (name, each.split()[-1]) not in ARGUMENT_SPECS]
    assert not found, 'keep these on a KubeSession (or make them tuples, frozensets, MappingProxyType): %s' % found


def test_the_rollout_record_keeps_one_bus_and_nothing_else_in_module_globals():
    found = _module_level_mutables(ROLLOUT_STATE)
    assert [each.split()[-1] for each in found] == ['BUS'], 'keep these on the RolloutBus: %s' % found
    assert isinstance(rollout_state.BUS, rollout_state.RolloutBus)


@pytest.mark.parametrize('module, names', REMOVED, ids=[m.__name__.rsplit('.', 1)[-1] for m, dummy in REMOVED])
def test_the_process_defaults_that_were_removed_stay_removed(module, names):
    back = [name for name in names if hasattr(module, name)]
    assert not back, '%s defines %s again: the caller passes its session / the rollout\'s bus' % (module.__name__, back)


def _domain_imports(path):
    """The imports in ``path`` of the collection's layers that hold the operator's rules (DOMAIN_LAYERS)."""
    with open(path) as handle:
        tree = ast.parse(handle.read(), path)
    found = []
    for each in ast.walk(tree):
        names = [each.module or ''] if isinstance(each, ast.ImportFrom) else [a.name for a in getattr(each, 'names', [])]
        if isinstance(each, (ast.Import, ast.ImportFrom)):
            found.extend('%s:%d %s' % (os.path.basename(path), each.lineno, n) for n in names
                         if any('.plugins.%s' % layer in n for layer in DOMAIN_LAYERS))
    return found


def test_the_transport_imports_no_rule_of_the_operator():
    found = _domain_imports(os.path.join(MODULE_UTILS, 'kube_transport.py'))
    assert not found, 'move what needs these up to the resources\' modules (nodes.py, workloads.py...): %s' % found
    assert _domain_imports(os.path.join(MODULE_UTILS, 'nodes.py'))  # the resources' modules may (and do): the check sees imports


def test_the_globals_check_finds_a_cache_and_a_rebinding(tmp_path):
    path = tmp_path / 'sample.py'
    path.write_text('import collections\nA = ()\nB = frozenset()\n_CACHE = {}\nC = dict(x=1)\n'
                    'D = collections.OrderedDict()\nE = [n for n in A]\n\ndef f():\n    global A\n    A = 1\n')
    assert _module_level_mutables(str(path)) == ['sample.py:4 _CACHE', 'sample.py:5 C', 'sample.py:6 D', 'sample.py:7 E',
                                                 'sample.py:10 global A']


def test_the_globals_check_finds_a_process_session_a_lock_and_a_bus(tmp_path):
    path = tmp_path / 'sample.py'
    path.write_text('import threading\nfrom x import kube_transport, KubeSession, RolloutBus\nPOOL = 16\nA = ("k",)\n'
                    '_PROCESS_SESSION = KubeSession()\n_S = kube_transport.KubeSession(pool_size=POOL)\n'
                    '_LOCK = threading.RLock()\nBUS = RolloutBus()\n')
    assert _module_level_mutables(str(path)) == ['sample.py:5 _PROCESS_SESSION', 'sample.py:6 _S', 'sample.py:7 _LOCK',
                                                 'sample.py:8 BUS']
    path.write_text('from ansible_collections.nodewright.bridge.plugins.module_utils.contract import cr_handoff\n'
                    'from ansible_collections.nodewright.bridge.plugins.module_utils.model import api_generation\n')
    assert _domain_imports(str(path)) == [
        'sample.py:1 ansible_collections.nodewright.bridge.plugins.module_utils.contract']


def test_no_plugin_sets_a_constant_of_the_kube_modules():
    """A setting of the API layer (a pool size) is a KubeSession's argument, not a module constant set from outside."""
    setters = []
    for folder, dummy, names in os.walk(os.path.join(REPO_ROOT, 'plugins')):
        for name in names:
            if not name.endswith('.py'):
                continue
            path = os.path.join(folder, name)
            with open(path) as handle:
                tree = ast.parse(handle.read(), path)
            aliases = set()
            for each in ast.walk(tree):
                if isinstance(each, ast.ImportFrom) and (each.module or '').endswith('module_utils.api'):
                    aliases.update(a.asname or a.name for a in each.names if a.name in ('kube', 'kube_transport'))
            for each in ast.walk(tree):
                for target in getattr(each, 'targets', []) if isinstance(each, ast.Assign) else []:
                    if (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                            and target.value.id in aliases and target.attr.isupper()):
                        setters.append('%s:%d' % (os.path.relpath(path, REPO_ROOT), each.lineno))
    assert not setters, setters
