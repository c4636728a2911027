# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The rollout summary's result per compartment (rollout_state.compartment_result), shared budget included."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.nodewright.bridge.plugins.plugin_utils.reporting import rollout_state


def _rollout(completed, failed, matched=12, stopped=False, elsewhere=None, ended=None):
    comp = {'completed': completed, 'failed': failed, 'matched': matched, 'stopped': stopped, 'stop_reason': 'failed batch'}
    shared = None if elsewhere is None else {'elsewhere_by_compartment': {'__default__': elsewhere}}
    return {'compartments': {'__default__': comp}, 'shared_budget': shared, 'ended': ended}


def test_a_slice_whose_other_hosts_other_runs_finished_is_complete_and_says_how_many():
    others = ['n%02d' % i for i in range(8)]
    assert rollout_state.compartment_result(_rollout(4, 0, elsewhere=others), '__default__') == 'complete (8 by other runs)'
    assert rollout_state.compartment_result(_rollout(0, 0, elsewhere=['n%02d' % i for i in range(12)]),
                                            '__default__') == 'complete (12 by other runs)'


def test_without_a_shared_budget_the_result_is_the_runs_own():
    assert rollout_state.compartment_result(_rollout(11, 1), '__default__') == 'complete'
    assert rollout_state.compartment_result(_rollout(4, 0), '__default__') == 'ended early (incomplete)'
    assert rollout_state.compartment_result(_rollout(4, 0, ended='interrupted'), '__default__') == 'ended early (interrupted)'
    # hosts left to others that are still missing: not complete
    assert rollout_state.compartment_result(_rollout(4, 0, elsewhere=['a', 'b']), '__default__') == 'ended early (incomplete)'
    assert rollout_state.compartment_result(_rollout(4, 1, stopped=True, elsewhere=['a']), '__default__') == 'STOPPED: failed batch'


def test_an_empty_default_compartment_is_not_shown_beside_named_ones():
    def comp(matched, batches=()):
        return {'matched': matched, 'batches': list(batches)}
    named = {'compartments': {'__default__': comp(0), 'rack-a': comp(4, [['a1']]), 'rack-b': comp(2)}}
    assert [name for name, dummy in rollout_state.shown_compartments(named['compartments'].items())] == ['rack-a', 'rack-b']
    # every node in the default one, or no node anywhere, or a default that ran a batch: shown
    alone = {'compartments': {'__default__': comp(3)}}
    assert [name for name, dummy in rollout_state.shown_compartments(alone['compartments'].items())] == ['__default__']
    empty = {'compartments': {'__default__': comp(0), 'rack-a': comp(0)}}
    assert [name for name, dummy in rollout_state.shown_compartments(empty['compartments'].items())] == ['__default__', 'rack-a']
    ran = {'compartments': {'__default__': comp(0, [['gone']]), 'rack-a': comp(1)}}
    assert [name for name, dummy in rollout_state.shown_compartments(ran['compartments'].items())] == ['__default__', 'rack-a']
