# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""nodewright_phases: several rollouts one after the other in one play (the apply playbook's CRs).

Real ansible-playbook runs over local hosts. A host may be in several phases: it runs the play's
tasks once per phase, with nodewright_phase naming the phase.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from strategy_helpers import DEFAULT, budgeted_play, hosts, inventory, policy

PHASE_TASKS = [
    {'name': 'work', 'ansible.builtin.debug': {'msg': 'phase {{ nodewright_phase }} on {{ inventory_hostname }}'}},
    {'name': 'maybe fail', 'ansible.builtin.fail': {'msg': 'injected failure in {{ nodewright_phase }}'},
     'when': "(inventory_hostname ~ '@' ~ nodewright_phase) in (fail_hosts | default([]))"},
]


def rollouts(run):
    return dict((r['play'].split(': ', 1)[-1], r) for r in run.report['rollouts'])


def phase_batches(run, phase, comp=DEFAULT):
    return [b['hosts'] for b in rollouts(run)[phase]['compartments'][comp]['batches']]


def test_phases_run_one_after_the_other_each_with_its_own_budget(run_playbook):
    phases = [
        {'name': 'first', 'interruption_budget': {'count': 2}, 'hosts': ['n01', 'n02', 'n03', 'n04']},
        {'name': 'second', 'policy': policy({'count': 3}, {'fixed': {'initialBatch': 3}}), 'hosts': ['n03', 'n04', 'n05']},
    ]
    run = run_playbook([budgeted_play(PHASE_TASKS, nodewright_phases=phases)], inventory(hosts(5)))
    assert run.rc == 0, run
    assert phase_batches(run, 'first') == [['n01', 'n02'], ['n03', 'n04']]
    assert phase_batches(run, 'second') == [['n03', 'n04', 'n05']]
    # the second phase starts after the first is over; hosts in both ran the tasks twice, once per phase
    first_done = max(run.last(h) for h in ('n01', 'n02'))
    assert min(e['time'] for e in run.events if e['event'] == 'start' and e['host'] == 'n05') >= first_done
    assert 'phase first on n03' in run.stdout and 'phase second on n03' in run.stdout
    assert 'phase second on n01' not in run.stdout
    assert 'NODEWRIGHT BATCH 1 [second/__default__] 3 hosts' in run.stdout


def test_a_host_failed_in_a_phase_is_left_out_of_later_phases(run_playbook):
    phases = [
        {'name': 'first', 'interruption_budget': {'count': 3}, 'hosts': ['n01', 'n02', 'n03']},
        {'name': 'second', 'interruption_budget': {'count': 3}, 'hosts': ['n01', 'n02', 'n03']},
    ]
    run = run_playbook([budgeted_play(PHASE_TASKS, nodewright_phases=phases, fail_hosts=['n02@first'])],
                       inventory(hosts(3)))
    assert run.rc != 0, run
    assert phase_batches(run, 'second') == [['n01', 'n03']]
    assert rollouts(run)['second']['excluded'] == {'n02': 'failed in an earlier phase'}
    assert 'phase second on n02' not in run.stdout


def test_after_all_skips_a_phase_when_an_earlier_one_did_not_succeed_everywhere(run_playbook):
    phases = [
        {'name': 'first', 'interruption_budget': {'count': 2}, 'hosts': ['n01', 'n02']},
        {'name': 'second', 'interruption_budget': {'count': 2}, 'hosts': ['n03', 'n04'], 'after_all': ['first']},
        {'name': 'third', 'interruption_budget': {'count': 2}, 'hosts': ['n03', 'n04']},
    ]
    run = run_playbook([budgeted_play(PHASE_TASKS, nodewright_phases=phases, fail_hosts=['n01@first'])],
                       inventory(hosts(4)))
    assert run.rc != 0, run
    assert phase_batches(run, 'second') == []
    assert set(rollouts(run)['second']['excluded']) == {'n03', 'n04'}
    assert 'first succeeded on every host' in rollouts(run)['second']['excluded']['n03']
    # a phase without after_all still runs
    assert phase_batches(run, 'third') == [['n03', 'n04']]


def test_a_stopped_phase_leaves_its_remaining_hosts_out_of_later_phases(run_playbook):
    phases = [
        {'name': 'first', 'policy': policy({'count': 1}, {'fixed': {'initialBatch': 1, 'failureThreshold': 1}}),
         'hosts': ['n01', 'n02', 'n03']},
        {'name': 'second', 'interruption_budget': {'count': 3}, 'hosts': ['n01', 'n02', 'n03']},
    ]
    run = run_playbook([budgeted_play(PHASE_TASKS, nodewright_phases=phases, fail_hosts=['n01@first'])],
                       inventory(hosts(3)))
    assert run.rc != 0, run
    first = rollouts(run)['first']
    assert first['stopped'] is True and first['not_attempted'] == ['n02', 'n03']
    assert set(rollouts(run)['second']['excluded']) == {'n01', 'n02', 'n03'}


@pytest.mark.parametrize('phases, problem', [
    ([{'name': 'a', 'hosts': ['n01']}], 'set nodewright_policy (a DeploymentPolicy) or nodewright_interruption_budget'),
    ([{'name': 'a', 'interruption_budget': {'count': 1}, 'hosts': ['n09']}], 'host n09 is not a host of the play'),
    ([{'name': 'a', 'interruption_budget': {'count': 1}, 'hosts': ['n01'], 'after_all': ['b']}],
     'after_all: must list earlier phases'),
    ([{'name': 'a', 'interruption_budget': {'count': 1}, 'hosts': {'n01': 'rack-z'}}],
     "nodewright_compartment of n01: 'rack-z' is not a compartment of the policy"),
    ('not a list', 'must be a non-empty list of phases'),
    ([{'name': 'a', 'interruption_budget': {'count': 1}, 'hosts': ['n01'], 'host_vars': {'not a name': 1}}],
     'nodewright_phases[0] (a).host_vars: must be a mapping of variable names to values'),
])
def test_a_bad_phase_fails_the_play_before_any_host_runs(run_playbook, phases, problem):
    run = run_playbook([budgeted_play(PHASE_TASKS, nodewright_phases=phases)], inventory(hosts(2)))
    assert run.rc != 0, run
    assert problem in run.flat
    assert not run.events  # no task ran anywhere


def test_phases_in_sliding_mode(run_playbook):
    phases = [
        {'name': 'first', 'interruption_budget': {'count': 2}, 'hosts': ['n01', 'n02', 'n03']},
        {'name': 'second', 'interruption_budget': {'count': 2}, 'hosts': ['n02', 'n03', 'n04']},
    ]
    run = run_playbook([budgeted_play(PHASE_TASKS, nodewright_phases=phases, nodewright_admission='sliding',
                                      fail_hosts=['n03@first'])], inventory(hosts(4)))
    assert run.rc != 0, run
    done = rollouts(run)
    assert sorted(h for b in done['first']['compartments'][DEFAULT]['batches'] for h in b['hosts']) == ['n01', 'n02', 'n03']
    assert sorted(h for b in done['second']['compartments'][DEFAULT]['batches'] for h in b['hosts']) == ['n02', 'n04']
    assert 'phase second on n02' in run.stdout and 'phase second on n03' not in run.stdout


def test_a_role_runs_again_for_a_host_in_a_later_phase(run_playbook):
    phases = [
        {'name': 'first', 'interruption_budget': {'count': 2}, 'hosts': ['n01', 'n02']},
        {'name': 'second', 'interruption_budget': {'count': 2}, 'hosts': ['n01', 'n02']},
    ]
    play = budgeted_play([], nodewright_phases=phases)
    del play['tasks']
    play['roles'] = ['phase_role']
    role_tasks = '- name: role work\n  ansible.builtin.debug:\n    msg: "role in {{ nodewright_phase }} on {{ inventory_hostname }}"\n'
    run = run_playbook([play], inventory(hosts(2)), files={'roles/phase_role/tasks/main.yml': role_tasks})
    assert run.rc == 0, run
    for host in ('n01', 'n02'):
        assert 'role in first on %s' % host in run.stdout and 'role in second on %s' % host in run.stdout


def test_a_phase_sets_its_host_vars_on_its_hosts_when_it_starts(run_playbook):
    """The apply playbook's nw_apply_cr: set once per host and phase, read by every task as plain data."""
    phases = [
        {'name': 'first', 'interruption_budget': {'count': 2}, 'hosts': ['n01', 'n02'],
         'host_vars': {'nw_phase_cr': {'name': 'first', 'rolling': ['n02']}}},
        {'name': 'second', 'interruption_budget': {'count': 2}, 'hosts': ['n02'],
         'host_vars': {'nw_phase_cr': {'name': 'second', 'rolling': []}}},
    ]
    tasks = [{'name': 'show', 'ansible.builtin.debug': {
        'msg': "{{ inventory_hostname }} in {{ nw_phase_cr.name }}: rolling {{ inventory_hostname in nw_phase_cr.rolling }}"}}]
    run = run_playbook([budgeted_play(tasks, nodewright_phases=phases)], inventory(hosts(3)))
    assert run.rc == 0, run
    for line in ('n01 in first: rolling False', 'n02 in first: rolling True', 'n02 in second: rolling False'):
        assert line in run.stdout, run
    assert 'n03 in' not in run.stdout  # a host of no phase runs nothing and gets nothing


def test_the_play_level_parking_settings_reach_every_phase(run_playbook):
    """nodewright_park_protected and nodewright_protected_wait_warning are the play's, for each of its phases."""
    task = {'name': 'park var', 'ansible.builtin.debug': {'msg': 'park={{ nodewright_park | default("unset") }}'}}
    phases = [{'name': 'first', 'interruption_budget': {'count': 1}, 'hosts': ['n01']}]
    off = budgeted_play([task], nodewright_phases=phases, nodewright_batch_lockstep=False, nodewright_park_protected=False)
    run = run_playbook([off], inventory(hosts(1)))
    assert run.rc == 0 and 'park=unset' in run.output, run
    on = budgeted_play([task], nodewright_phases=phases, nodewright_batch_lockstep=False,
                       nodewright_protected_wait_warning='90s')
    run = run_playbook([on], inventory(hosts(1)))
    assert run.rc == 0 and "'warn_after': 90.0" in run.output, run
