# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""nodewright.bridge.budgeted with nodewright_admission=sliding (the free loop behind the gate).

Concurrency is measured from timestamps the hosts' own task writes before and after its work,
not from the plugin's bookkeeping.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from strategy_helpers import budgeted_play, hosts, inventory

# per-host work in seconds: n01 is slow, so a batch barrier would hold n04 back until it ends;
# the short ones are long enough to overlap even when module start-up is slow on a busy machine
DURATIONS = {'n01': 3.0, 'n02': 0.8, 'n03': 0.8, 'n04': 0.8, 'n05': 1.5, 'n06': 0.8, 'n07': 0.8, 'n08': 0.8}


def timed_task():
    stamp = '{{ stamp_dir }}/{{ inventory_hostname }}'
    return [{'name': 'work', 'ansible.builtin.shell': 'date +%%s.%%N > %s.start; sleep {{ durations[inventory_hostname] }}; '
             'date +%%s.%%N > %s.end' % (stamp, stamp)}]


def intervals(directory, names):
    spans = {}
    for name in names:
        with open(os.path.join(directory, name + '.start')) as start, open(os.path.join(directory, name + '.end')) as end:
            spans[name] = (float(start.read()), float(end.read()))
    return spans


def max_overlap(spans):
    points = sorted([(s, 1) for s, e in spans.values()] + [(e, -1) for s, e in spans.values()],
                    key=lambda p: (p[0], p[1]))
    current = peak = 0
    for dummy, delta in points:
        current += delta
        peak = max(peak, current)
    return peak


def test_sliding_window_never_exceeds_the_ceiling(run_playbook, tmp_path):
    stamps = str(tmp_path / 'stamps')
    os.makedirs(stamps)
    play = budgeted_play(tasks=timed_task(), nodewright_interruption_budget={'count': 3},
                         nodewright_admission='sliding', durations=DURATIONS, stamp_dir=stamps)
    run = run_playbook([play], inventory(hosts(8)), forks=8)
    assert run.rc == 0, run
    spans = intervals(stamps, sorted(DURATIONS))
    assert max_overlap(spans) == 3  # the window is used ...
    # ... and never exceeded (the report's own count agrees with the tasks' timestamps)
    assert run.compartment()['max_in_flight'] == 3
    # no batch barrier: n04 started while n01 (admitted with it in the first three) was still running
    assert spans['n04'][0] < spans['n01'][1]
    # groups of 3 completions are scored like batches; the last group is what is left
    assert run.sizes() == [3, 3, 2]
    groups = run.compartment()['batches']
    assert sorted(h for g in groups for h in g['hosts']) == sorted(DURATIONS)
    # Groups form in completion order: each group's hosts ended before the next groups' hosts (the
    # strategy sees an end a little after the task's own stamp: 0.25 s of slack). Which hosts those
    # are is timing: on a busy machine n04's start can be late enough that slow n01 ends before it.
    for earlier, later in zip(groups, groups[1:]):
        assert max(spans[h][1] for h in earlier['hosts']) <= min(spans[h][1] for h in later['hosts']) + 0.25, groups
    assert run.report['mode'] == 'sliding' and 'NODEWRIGHT ADMIT [__default__]' in run.stdout


def test_sliding_window_stops_on_the_failure_threshold(run_playbook):
    strategy = {'fixed': {'initialBatch': 2, 'failureThreshold': 1, 'safetyLimit': 100}}
    policy = {'default': {'budget': {'count': 2}, 'strategy': strategy}}
    play = budgeted_play(nodewright_policy=policy, nodewright_admission='sliding', fail_hosts=['n01', 'n02'])
    run = run_playbook([play], inventory(hosts(8)))
    assert run.rc == 2, run
    comp = run.compartment()
    assert comp['stopped'] is True and 'failureThreshold 1' in comp['stop_reason']
    first = comp['batches'][0]
    # How the window groups n01 and n02 depends on which of them finishes first (a loaded
    # machine scores n01 alone): the first group fails, and only those two hosts ever fail.
    assert first['failed'] and set(first['failed']) <= {'n01', 'n02'} and first['failed_batch'] is True
    assert set(h for g in comp['batches'] for h in g['failed']) <= {'n01', 'n02'}
    attempted = set(h for g in comp['batches'] for h in g['hosts'])
    assert attempted == run.hosts_with_events()
    assert run.report['not_attempted'] == sorted(set(hosts(8)) - attempted)
    assert len(run.report['not_attempted']) >= 4


def test_sliding_compartments_are_independent(run_playbook):
    compartments = [{'name': 'gpu', 'selector': {'matchLabels': {'pool': 'gpu'}}, 'budget': {'count': 1},
                     'strategy': {'fixed': {'initialBatch': 1, 'failureThreshold': 1, 'safetyLimit': 100}}}]
    policy = {'default': {'budget': {'count': 2}, 'strategy': {'fixed': {'initialBatch': 2}}},
              'compartments': compartments}
    host_map = hosts(3, 'g', nodewright_labels={'pool': 'gpu'})
    host_map.update(hosts(4, 'c'))
    play = budgeted_play(nodewright_policy=policy, nodewright_admission='sliding', fail_hosts=['g01'])
    run = run_playbook([play], inventory(host_map))
    assert run.rc == 2, run
    assert run.compartment('gpu')['stopped'] is True and run.batches('gpu') == [['g01']]
    assert run.compartment()['stopped'] is False and run.sizes() == [2, 2]
    assert sorted(h for b in run.batches() for h in b) == ['c01', 'c02', 'c03', 'c04']
    assert run.report['not_attempted'] == ['g02', 'g03']


def test_sliding_any_errors_fatal_stops_admission(run_playbook):
    play = budgeted_play(nodewright_interruption_budget={'count': 2}, nodewright_admission='sliding', fail_hosts=['n01'])
    play['any_errors_fatal'] = True
    run = run_playbook([play], inventory(hosts(8)))
    assert run.rc == 2, run
    comp = run.compartment()
    assert comp['stopped'] is True and 'any_errors_fatal' in comp['stop_reason']
    assert 'n01' in comp['batches'][0]['failed']
    assert len(run.report['not_attempted']) >= 5
    assert set(run.report['not_attempted']).isdisjoint(run.hosts_with_events())


def test_the_deprecated_nodewright_window_still_selects_the_sliding_window_and_says_so(run_playbook):
    run = run_playbook([budgeted_play(nodewright_interruption_budget={'count': 2}, nodewright_window='sliding')],
                       inventory(hosts(3)))
    assert run.rc == 0, run
    assert run.report['mode'] == 'sliding' and 'NODEWRIGHT ADMIT [__default__]' in run.stdout
    assert 'nodewright_window is deprecated: use nodewright_admission' in run.flat, run
