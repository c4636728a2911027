# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""In-process tests of plugins/plugin_utils: configuration parsing and the shared progress store."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
import yaml

from strategy_helpers import import_collection

import_collection()

from ansible_collections.nodewright.bridge.plugins.module_utils.planning.rollout_scheduler import (  # noqa: E402 pylint: disable=wrong-import-position
    RolloutScheduler, SlidingWindowScheduler)
from ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout import rollout_config  # noqa: E402 pylint: disable=wrong-import-position
from ansible_collections.nodewright.bridge.plugins.plugin_utils.reporting import rollout_state  # noqa: E402 pylint: disable=wrong-import-position
from ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout.limit_driver import drive  # noqa: E402 pylint: disable=wrong-import-position

POLICY_DOC = {'apiVersion': 'nodewright.nvidia.com/v1alpha1', 'kind': 'DeploymentPolicy', 'metadata': {'name': 'p'},
              'spec': {'default': {'budget': {'count': 2}, 'strategy': {'fixed': {}}},
                       'compartments': [{'name': 'gpu', 'selector': {'matchLabels': {'pool': 'gpu'}},
                                         'budget': {'percent': 50}}]}}


def errors_of(play_vars, read_file=None):
    with pytest.raises(rollout_config.RolloutConfigError) as info:
        rollout_config.parse_settings(play_vars, read_file)
    return info.value.errors


def test_exactly_one_of_policy_or_budget():
    assert 'mutually exclusive' in errors_of({'nodewright_policy': POLICY_DOC,
                                              'nodewright_interruption_budget': {'count': 1}})[0]
    assert 'set nodewright_policy' in errors_of({})[0]


def test_budget_errors_name_the_variable():
    assert errors_of({'nodewright_interruption_budget': {'percent': 101}}) == [
        'nodewright_interruption_budget.percent: 101 is greater than the maximum 100']
    assert errors_of({'nodewright_interruption_budget': {}}) == [
        'nodewright_interruption_budget: exactly one of percent or count must be set']
    assert errors_of({'nodewright_interruption_budget': '25%'}) == [
        'nodewright_interruption_budget: must be a dict with percent or count, got str']


def test_admission_and_order_are_checked_with_the_rest():
    errors = errors_of({'nodewright_admission': 'wide', 'nodewright_order': 'random',
                        'nodewright_interruption_budget': {'count': 1, 'percent': 2}})
    assert len(errors) == 3 and errors[0].startswith('nodewright_admission') and errors[1].startswith('nodewright_order')


def test_nodewright_window_is_the_deprecated_name_of_nodewright_admission():
    budget = {'nodewright_interruption_budget': {'count': 1}}
    old = rollout_config.parse_settings(dict(budget, nodewright_window='sliding'))
    assert old.admission == 'sliding'
    [message] = old.deprecations
    assert message.startswith('nodewright_window is deprecated: use nodewright_admission')
    new = rollout_config.parse_settings(dict(budget, nodewright_admission='sliding'))
    assert new.admission == 'sliding' and new.deprecations == []
    assert rollout_config.parse_settings(budget).admission == 'batch'
    assert errors_of(dict(budget, nodewright_window='wide'))[0].startswith('nodewright_window: must be one of batch')
    assert errors_of(dict(budget, nodewright_window='batch', nodewright_admission='sliding')) == [
        "nodewright_window is the deprecated name of nodewright_admission; they disagree ('batch', 'sliding'): "
        "set only nodewright_admission"]


def test_policy_from_a_file_with_a_cr_and_a_policy():
    cr = {'apiVersion': 'nodewright.nvidia.com/v1alpha1', 'kind': 'NodeWright', 'metadata': {'name': 'x'}, 'spec': {}}
    files = {'both.yml': yaml.safe_dump_all([cr, POLICY_DOC]), 'two.yml': yaml.safe_dump_all([POLICY_DOC, POLICY_DOC]),
             'cr.yml': yaml.safe_dump(cr), 'spec.yml': yaml.safe_dump(POLICY_DOC['spec'])}
    settings = rollout_config.parse_settings({'nodewright_policy': 'both.yml'}, files.get)
    assert settings.policy.name == 'p' and settings.has_compartments and settings.source == 'both.yml'
    assert rollout_config.parse_settings({'nodewright_policy': 'spec.yml'}, files.get).policy.name == '<inline>'
    assert 'holds 2 DeploymentPolicy documents' in errors_of({'nodewright_policy': 'two.yml'}, files.get)[0]
    assert 'holds no DeploymentPolicy' in errors_of({'nodewright_policy': 'cr.yml'}, files.get)[0]

    def missing(path):
        raise IOError('no such file: %s' % path)
    assert errors_of({'nodewright_policy': 'gone.yml'}, missing) == [
        'nodewright_policy: cannot read gone.yml: no such file: gone.yml']


def test_policy_errors_carry_field_paths():
    bad = {'default': {'budget': {'count': 1}, 'strategy': {'linear': {'delta': 0}}}}
    errors = errors_of({'nodewright_policy': bad})
    assert errors and all(e.startswith('nodewright_policy: spec.default.strategy.linear.delta') for e in errors)


def test_labels_are_coerced_like_kubernetes_label_values_and_pins_checked():
    settings = rollout_config.parse_settings({'nodewright_policy': POLICY_DOC})
    nodes, pinned = rollout_config.node_inputs(settings, [
        ('a', None, {'pool': 'gpu', 'gpus': 8, 'spot': True}), ('b', 'gpu', None), ('c', '__default__', {})])
    assert nodes == [('a', {'pool': 'gpu', 'gpus': '8', 'spot': 'true'}), ('b', {}), ('c', {})]
    assert pinned == {'b': 'gpu', 'c': '__default__'}
    with pytest.raises(rollout_config.RolloutConfigError) as info:
        rollout_config.node_inputs(settings, [('a', 'cpu', None), ('b', None, {'pool': ['x']}), ('c', None, 'x')])
    assert len(info.value.errors) == 3


def test_build_scheduler_for_each_mode():
    nodes = [('n%d' % i, {'pool': 'gpu'} if i < 2 else {}) for i in range(5)]
    batch = rollout_config.build_scheduler(rollout_config.parse_settings({'nodewright_policy': POLICY_DOC}), nodes)
    assert isinstance(batch, RolloutScheduler)
    # fixed without initialBatch moves one node at a time (the operator's default), whatever the ceiling
    assert batch.next_batches() == {'gpu': ['n0'], '__default__': ['n2']}
    sliding = rollout_config.build_scheduler(rollout_config.parse_settings(
        {'nodewright_interruption_budget': {'percent': 40}, 'nodewright_admission': 'sliding', 'nodewright_order': 'name'}),
        list(reversed(nodes)))
    assert isinstance(sliding, SlidingWindowScheduler)
    assert sliding.admit() == {'__default__': ['n0', 'n1']}
    summaries = rollout_config.compartment_summaries(sliding)
    assert summaries == [{'name': '__default__', 'matched': 5, 'ceiling': 2, 'budget': {'percent': 40},
                          'strategy': {'fixed': {'initialBatch': 2, 'batchThreshold': 100, 'safetyLimit': 50,
                                                 'failureThreshold': None}}}]


def test_plain_values_lose_their_subclasses():
    class Tagged(str):
        pass
    value = rollout_config.plain({Tagged('k'): [Tagged('v'), True, 3, 1.5, None, (1, 2)]})
    assert value == {'k': ['v', True, 3, 1.5, None, [1, 2]]}
    assert [k.__class__ for k in value] == [str] and value['k'][0].__class__ is str


def test_store_publishes_batches_and_builds_the_report():
    bus = rollout_state.RolloutBus()
    events = []
    bus.subscribe(lambda event, payload: events.append((event, payload)))
    scheduler = RolloutScheduler.build([('a', {}), ('b', {}), ('c', {})], legacy_cr=None)
    first = bus.start_rollout('play one', 'batch', rollout_config.compartment_summaries(scheduler))
    summary = drive(scheduler, lambda hosts: {'b'}, record=first)
    assert summary['stopped'] is False
    empty = {'name': 'x', 'matched': 0, 'ceiling': 0, 'strategy': None, 'budget': {}}
    second = bus.start_rollout('play two', 'batch', [empty])
    rollout_state.finish_rollout(second, [], [], ended='end_play')
    assert [e for e, dummy in events] == ['rollout_start', 'batch_start', 'batch_end', 'rollout_end',
                                          'rollout_start', 'rollout_end']
    batch_end = events[2][1]
    assert (batch_end['compartment'], batch_end['ok'], batch_end['failed'], batch_end['eta']) == (
        '__default__', ['a', 'c'], ['b'], 0.0)
    report = bus.report()
    assert report['play'] == 'play two' and report['ended'] == 'end_play'
    assert [r['play'] for r in report['rollouts']] == ['play one', 'play two']
    comp = report['rollouts'][0]['compartments']['__default__']
    assert [(b['number'], b['hosts'], b['ok'], b['failed']) for b in comp['batches']] == [(1, ['a', 'b', 'c'], ['a', 'c'], ['b'])]
    assert comp['stopped'] is False and comp['stop_reason'] is None and comp['progress'] == 100
    bus.reset()
    assert bus.report() == {'compartments': {}, 'not_attempted': [], 'stopped': False, 'rollouts': []}


def test_durations_are_readable():
    durations = [rollout_state.format_duration(s) for s in (None, 0.04, 59.9, 61, 3725)]
    assert durations == ['-', '0.0s', '59.9s', '1m01s', '1h02m']


def test_shared_budget_settings_are_checked_with_the_rest():
    budget = {'nodewright_interruption_budget': {'count': 1}}
    errors = errors_of(dict(budget, nodewright_shared_budget={'name': 'x', 'slot_expiry': 5, 'colour': 'red'}))
    assert any('nodewright_shared_budget: unknown keys colour' in e for e in errors), errors
    assert any('nodewright_shared_budget.slot_expiry: must be an integer of at least 10' in e for e in errors), errors
    # templated values: a string number, an unset connection option, enabled as a string
    settings = rollout_config.parse_settings(dict(budget, nodewright_shared_budget={
        'name': 'x', 'slot_expiry': '30', 'kubeconfig': '', 'context': None, 'enabled': 'True'}))
    # no namespace yet: the operator's of the cluster's API generation, chosen once the strategy has a client
    assert settings.shared == {'name': 'x', 'slot_expiry': 30}
    assert rollout_config.parse_settings(dict(budget, nodewright_shared_budget={'enabled': 'False'})).shared is None
    assert rollout_config.parse_settings(budget).shared is None
    # a play without phases must name what its runs share; a phase is named after its CR
    with pytest.raises(rollout_config.RolloutConfigError, match='nodewright_shared_budget.name: required in a play without'):
        rollout_config.parse_phases(dict(budget, nodewright_shared_budget=True))
    phases = rollout_config.parse_phases({'nodewright_shared_budget': True, 'nodewright_phases': [
        {'name': 'cr-a', 'interruption_budget': {'count': 1}, 'hosts': ['n1'], 'budget_key': 'abc', 'selector': {'matchLabels': {'a': 'b'}}}]})
    assert phases[0].settings.shared == {'slot_expiry': 120}
    assert (phases[0].budget_key, phases[0].selector) == ('abc', {'matchLabels': {'a': 'b'}})


def test_windows_and_gates_are_the_plays_in_every_phase():
    phases = rollout_config.parse_phases({
        'nodewright_maintenance_windows': [{'start': '22:00', 'end': '04:00'}], 'nodewright_gates': {'max_not_ready': 1},
        'nodewright_phases': [{'name': 'a', 'interruption_budget': {'count': 1}, 'hosts': ['n1']},
                              {'name': 'b', 'interruption_budget': {'count': 1}, 'hosts': ['n2']}]})
    assert [p.settings.windows.enabled for p in phases] == [True, True]
    assert [p.settings.gates.max_not_ready for p in phases] == [1, 1]
    errors = errors_of({'nodewright_interruption_budget': {'count': 1}, 'nodewright_maintenance_windows': [{'start': 1320, 'end': '04:00'}]})
    assert any('nodewright_maintenance_windows[0].start' in e and 'quote the time' in e for e in errors), errors


def test_a_phase_carries_the_batch_state_its_cr_continues():
    phases = rollout_config.parse_phases({'nodewright_phases': [
        {'name': 'cr-a', 'interruption_budget': {'count': 1}, 'hosts': ['n1', 'n2'], 'cr_status': True,
         'batch_state': {'__default__': {'currentBatch': 3, 'lastBatchSize': 1}}}]})
    assert phases[0].cr_status and phases[0].batch_state == {'__default__': {'currentBatch': 3, 'lastBatchSize': 1}}
    scheduler = rollout_config.build_scheduler(phases[0].settings, [('n1', {}), ('n2', {})],
                                               batch_states=phases[0].batch_state, cr_name='cr-a')
    assert scheduler.compartment('__default__').next_number == 3
    with pytest.raises(rollout_config.RolloutConfigError, match=r'batch_state.__default__.currentBatch: must be a non-negative'):
        rollout_config.parse_phases({'nodewright_phases': [
            {'name': 'cr-a', 'interruption_budget': {'count': 1}, 'hosts': ['n1'],
             'batch_state': {'__default__': {'currentBatch': 'x'}}}]})


def test_the_limit_drivers_budget_namespace_is_the_clusters_generations_unless_given(monkeypatch):
    from ansible_collections.nodewright.bridge.plugins.module_utils.model import api_generation  # pylint: disable=import-outside-toplevel
    from ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout import limit_driver  # pylint: disable=import-outside-toplevel

    class FakeKube(object):
        generation = api_generation.NODEWRIGHT

        def __init__(self, params, session=None):
            self.params = params

    monkeypatch.setattr(limit_driver.kube_api, 'Kube', FakeKube)
    for given, wanted in ((None, 'nodewright'), ('ops', 'ops')):
        args = limit_driver._arguments(['-i', 'inv', '--budget', 'count=1', '--shared-budget', 'gpu']
                                       + (['--budget-namespace', given] if given else []) + ['site.yml'])
        settings = rollout_config.parse_settings(limit_driver._play_vars(args))
        scheduler = rollout_config.build_scheduler(settings, [('n1', {})])
        budget, dummy = limit_driver._budget_and_gates(args, settings, scheduler, [('n1', {})])
        assert budget.namespace == wanted and budget.where('__default__').startswith('lease %s/' % wanted)
