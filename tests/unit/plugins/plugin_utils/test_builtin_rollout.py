# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""plugin_utils.rollout.builtin_rollout: apply's rollout without the budgeted strategy, on a fake node runner.

The phases' order and exclusions, the batches per policy, a held CR, the node options mapped as the node role maps
them (roles/node/tasks/main.yml and batches.yml kept in step), and the strategy-choice filter.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest
import yaml

from ansible.errors import AnsibleFilterError

from ansible_collections.nodewright.bridge.plugins.filter import rollout_strategy
from ansible_collections.nodewright.bridge.plugins.plugin_utils.reporting import rollout_state
from ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout import builtin_rollout
from ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout import rollout_config

ROLE = os.path.join(os.path.dirname(__file__), '..', '..', '..', '..', 'roles', 'node', 'tasks')
HOSTS = ['n1', 'n2', 'n3', 'n4']


class FakeRunner(object):
    """node_update stand-in: each node's result from ``outcome(phase, name)``; every batch remembered."""

    def __init__(self, outcome=None):
        self.outcome = outcome or (lambda phase, name: {'changed': True})
        self.batches = []

    def __call__(self, phase, names):
        self.batches.append((phase.name, sorted(names)))
        return dict((name, dict(self.outcome(phase, name))) for name in names)


def _phases(*entries):
    values = {rollout_config.VAR_PHASES: list(entries)}
    return builtin_rollout.prepare_phases(values, HOSTS, lambda name: {})


def _run(prepared, runner):
    lines = []
    rollout = builtin_rollout.BuiltinRollout('apply', runner, {}, lines.append)
    return rollout.run(prepared), lines


def test_batches_follow_the_phases_budget_and_every_node_reports():
    runner = FakeRunner()
    result, dummy = _run(_phases({'name': 'a', 'interruption_budget': {'count': 2}, 'hosts': HOSTS}), runner)
    assert runner.batches == [('a', ['n1', 'n2']), ('a', ['n3', 'n4'])]
    assert sorted(result['nodes']) == HOSTS and result['changed'] and not result['stopped']
    assert [b['size'] for b in result['rollouts'][0]['compartments']['__default__']['batches']] == [2, 2]
    assert result['failed_nodes'] == []


def test_a_host_that_failed_a_phase_is_left_out_of_the_next_and_an_all_phase_blocks_its_followers():
    runner = FakeRunner(lambda phase, name: {'failed': True, 'msg': 'boom'} if (phase.name, name) == ('a', 'n2')
                        else {'changed': True})
    result, lines = _run(_phases(
        {'name': 'a', 'interruption_budget': {'percent': 100}, 'hosts': HOSTS},
        {'name': 'b', 'interruption_budget': {'percent': 100}, 'hosts': HOSTS},
        {'name': 'c', 'interruption_budget': {'percent': 100}, 'hosts': HOSTS, 'after_all': ['a']}), runner)
    assert runner.batches == [('a', HOSTS), ('b', ['n1', 'n3', 'n4'])]
    assert result['nodes']['n2'] == {'failed': True, 'msg': 'boom', 'changed': False}
    assert result['rollouts'][1]['excluded'] == {'n2': 'failed in an earlier phase'}
    assert result['rollouts'][2]['excluded'] == dict((n, 'waits until a succeeded on every host') for n in HOSTS)
    assert result['failed_nodes'] == ['n2']
    assert any('left out of the rollout' in line for line in lines)


def test_a_failed_batch_past_the_threshold_stops_the_rollout_and_fails_the_nodes_never_admitted():
    runner = FakeRunner(lambda phase, name: {'failed': True})
    strategy = {'fixed': {'initialBatch': 1, 'batchThreshold': 100, 'failureThreshold': 1}}
    policy = {'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'DeploymentPolicy', 'metadata': {'name': 'p'},
              'spec': {'default': {'budget': {'count': 1}, 'strategy': strategy}}}
    result, dummy = _run(_phases({'name': 'a', 'policy': policy, 'hosts': HOSTS}), runner)
    assert result['stopped']
    never = [n for n, r in result['nodes'].items() if r.get('msg', '').startswith(builtin_rollout.NEVER_ADMITTED)]
    assert never and all(result['nodes'][n]['failed'] for n in never)
    assert len(runner.batches) < len(HOSTS)


def test_a_held_cr_defers_the_rest_without_failing_it():
    runner = FakeRunner(lambda phase, name: {'held': 'paused', 'msg': 'the CR was paused'})
    result, lines = _run(_phases({'name': 'a', 'interruption_budget': {'count': 1}, 'hosts': HOSTS}), runner)
    assert runner.batches == [('a', ['n1'])]
    skipped = [n for n, r in result['nodes'].items() if r.get('skipped')]
    assert sorted(skipped) == ['n2', 'n3', 'n4'] and not result['stopped']
    assert all(not result['nodes'][n]['failed'] for n in skipped)


def test_bad_phases_are_refused_before_any_node_runs():
    with pytest.raises(rollout_config.RolloutConfigError) as raised:
        builtin_rollout.prepare_phases({rollout_config.VAR_PHASES: [
            {'name': 'a', 'interruption_budget': {'count': 1}, 'hosts': ['n1', 'ghost']}]}, HOSTS, lambda name: {})
    assert 'host ghost is not a host of the play' in str(raised.value)


def test_invalid_node_options_name_the_host_and_the_phase():
    prepared = _phases({'name': 'a', 'interruption_budget': {'count': 1}, 'hosts': ['n1', 'n2']})

    def validate(phase, name):
        return (None, {'msg': 'unsupported parameter: bogus'}) if name == 'n2' else ({}, {})
    assert builtin_rollout.invalid_options(prepared, validate) == ['n2 (a): unsupported parameter: bogus']


def test_node_options_take_the_planned_cr_of_the_phase_and_the_hosts_runtime_required_crs():
    phase = rollout_config.Phase('a', None, host_vars={'nw_apply_cr': {
        'name': 'gpu', 'docs': [{'kind': 'Skyhook'}], 'identity': {'uid': 'u1'}, 'rolling': ['n2']}})
    common = {'cr_name': 'from-vars', 'drain_timeout': 30}
    options = builtin_rollout.node_options(common, phase, 'n2', {'nodewright_runtime_required_crs': ['gpu']})
    assert options == {'node': 'n2', 'cr_name': 'gpu', 'cr': [{'kind': 'Skyhook'}], 'cr_identity': {'uid': 'u1'},
                       'take_over': True, 'runtime_required_crs': ['gpu'], 'drain_timeout': 30}
    assert builtin_rollout.node_options(common, rollout_config.Phase(None, None), 'n1', {}) == dict(common, node='n1')


def _task_args(path, module):
    with open(os.path.join(ROLE, path)) as handle:
        tasks = yaml.safe_load(handle)
    return [t[module] for t in tasks if module in t][0]


def test_the_roles_two_task_files_pass_node_update_the_same_options():
    """batches.yml's shared options are main.yml's, less those builtin_rollout.node_options sets per node."""
    per_node = {'node', 'take_over', 'cr_identity', 'runtime_required_crs', 'park'}
    main = _task_args('main.yml', 'nodewright.bridge.node_update')
    batches = _task_args('batches.yml', 'nodewright.bridge.rollout_run')['update']
    assert set(batches) == set(main) - per_node
    for key in set(batches) - {'cr', 'cr_name'}:
        assert batches[key] == main[key], key
    # the CR: main.yml's fallback when no phase planned it (nw_apply_cr undefined)
    assert 'nodewright_cr |' in batches['cr'] and 'nodewright_cr_name |' in batches['cr_name']


def test_the_strategy_choice():
    assert rollout_strategy.rollout_strategy('auto', loads=lambda: True) == rollout_strategy.BUDGETED
    assert rollout_strategy.rollout_strategy(None, loads=lambda: False) == rollout_strategy.BUILTIN
    assert rollout_strategy.rollout_strategy('Builtin', loads=lambda: True) == rollout_strategy.BUILTIN
    assert rollout_strategy.rollout_strategy('budgeted', loads=lambda: True) == rollout_strategy.BUDGETED
    with pytest.raises(AnsibleFilterError, match='cannot load'):
        rollout_strategy.rollout_strategy('budgeted', loads=lambda: False)
    with pytest.raises(AnsibleFilterError, match='expected one of auto, budgeted, builtin'):
        rollout_strategy.rollout_strategy('serial')


def test_a_bus_adopts_the_rollouts_another_process_ran():
    bus = rollout_state.RolloutBus()
    first = bus.start_rollout('apply: a', 'batch', [])
    rollout_state.finish_rollout(first, [], [])
    bus.adopt([{'play': 'apply: b', 'compartments': {}, 'nodes': {}, 'not_attempted': []}, 'not a rollout'])
    assert [r['play'] for r in bus.rollouts()] == ['apply: a', 'apply: b']
    assert bus.report()['play'] == 'apply: b'
