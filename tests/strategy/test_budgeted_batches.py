# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""nodewright.bridge.budgeted in batch mode: real ansible-playbook runs over local hosts.

Batch sequences and stop decisions are read from the JSON report the rollout callback writes
(NODEWRIGHT_REPORT); what actually ran where, and when, from the nw_recorder test callback.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

import pytest
import yaml

from strategy_helpers import DEFAULT, budgeted_play, core_version, hosts, inventory, policy


def host_names(count, prefix='n', start=1):
    return ['%s%02d' % (prefix, i) for i in range(start, start + count)]


def assert_barriers(run, batches, play='rollout'):
    """Every batch starts after the previous one has completely finished."""
    for previous, current in zip(batches, batches[1:]):
        finished = max(run.last(h, play=play) for h in previous)
        started = min(run.first(h, play=play) for h in current)
        assert started >= finished, (previous, current)


def recap(run, host):
    match = re.search(r'^%s\s+:\s+(.*)$' % re.escape(host), run.stdout, re.M)
    assert match, run
    return dict((k, int(v)) for k, v in re.findall(r'(\w+)=(\d+)', match.group(1)))


# --------------------------------------------------------------------------- plain budgets


@pytest.mark.parametrize('budget, count, expected', [
    ({'percent': 30}, 10, [3, 3, 3, 1]),
    ({'count': 3}, 7, [3, 3, 1]),
])
def test_legacy_budget(run_playbook, budget, count, expected):
    run = run_playbook([budgeted_play(nodewright_interruption_budget=budget)], inventory(hosts(count)))
    assert run.rc == 0, run
    assert run.sizes() == expected
    names = host_names(count)
    assert [h for batch in run.batches() for h in batch] == names  # the play's host order
    assert_barriers(run, run.batches())
    comp = run.compartment()
    assert comp['stopped'] is False and comp['stop_reason'] is None and run.report['not_attempted'] == []
    assert 'NODEWRIGHT BATCH 1 [__default__] %d host' % expected[0] in run.stdout
    assert 'nodewright: [__default__] batch %d: size %d' % (len(expected), expected[-1]) in run.stdout


# --------------------------------------------------------------------------- policy strategies


@pytest.mark.parametrize('budget, strategy, count, expected', [
    ({'percent': 50}, {'fixed': {'initialBatch': 2}}, 7, [2, 2, 2, 1]),
    ({'count': 4}, {'linear': {'initialBatch': 1, 'delta': 1}}, 10, [1, 2, 3, 4]),
    ({'count': 4}, {'exponential': {'initialBatch': 1, 'growthFactor': 2}}, 10, [1, 2, 4, 3]),
], ids=['fixed', 'linear', 'exponential'])
def test_growth(run_playbook, budget, strategy, count, expected):
    run = run_playbook([budgeted_play(nodewright_policy=policy(budget, strategy))], inventory(hosts(count)))
    assert run.rc == 0, run
    assert run.sizes() == expected
    assert_barriers(run, run.batches())
    assert [b['progress'] for b in run.compartment()['batches']][-1] == 100


@pytest.mark.parametrize('strategy, budget, expected, failed_batch', [
    # 1, 2, then 4 with n04 failing at 58% progress (< safetyLimit 100): 4 // 2 = 2, then 2 * 2 capped at the 3 left
    ({'exponential': {'initialBatch': 1, 'growthFactor': 2, 'safetyLimit': 100}}, {'count': 8}, [1, 2, 4, 2, 3], 3),
    # 2, then 3 with n04 failing: 3 - 1 = 2, then 3, then the 2 left
    ({'linear': {'initialBatch': 2, 'delta': 1, 'safetyLimit': 100}}, {'count': 5}, [2, 3, 2, 3, 2], 2),
], ids=['exponential', 'linear'])
def test_shrinks_after_a_failed_batch(run_playbook, strategy, budget, expected, failed_batch):
    run = run_playbook([budgeted_play(nodewright_policy=policy(budget, strategy), fail_hosts=['n04'])],
                       inventory(hosts(12)))
    assert run.rc == 2, run
    assert run.sizes() == expected
    flags = [b['failed_batch'] for b in run.compartment()['batches']]
    assert flags == [number == failed_batch for number in range(1, len(expected) + 1)]
    assert run.compartment()['stopped'] is False and run.report['not_attempted'] == []


def test_stops_after_failure_threshold_below_safety_limit(run_playbook):
    strategy = {'fixed': {'initialBatch': 2, 'failureThreshold': 2, 'safetyLimit': 50}}
    second = {'name': 'after', 'hosts': 'all', 'gather_facts': False,
              'tasks': [{'ansible.builtin.debug': {'msg': 'later play'}}]}
    run = run_playbook([budgeted_play(nodewright_policy=policy({'count': 2}, strategy), fail_hosts=['n01', 'n03']),
                        second], inventory(hosts(10)))
    assert run.rc == 2, run
    comp = run.compartment()
    assert run.batches() == [['n01', 'n02'], ['n03', 'n04']]
    assert comp['stopped'] is True and 'failureThreshold 2' in comp['stop_reason'] and '40% progress' in comp['stop_reason']
    never = host_names(6, start=5)
    assert run.report['not_attempted'] == never and run.report['stopped'] is True
    # never-admitted hosts were not touched by the rollout and are skipped by later plays
    assert run.hosts_with_events('rollout') == set(host_names(4))
    assert run.hosts_with_events('after') == {'n02', 'n04'}
    # ... and they are listed, not missing from the recap
    for host in never:
        assert recap(run, host)['skipped'] == 1
    assert 'were never admitted because the rollout stopped: %s' % ', '.join(never) in run.flat
    assert 'STOPPED' in run.stdout


def test_continues_past_safety_limit(run_playbook):
    strategy = {'fixed': {'initialBatch': 2, 'failureThreshold': 1, 'safetyLimit': 50}}
    run = run_playbook([budgeted_play(nodewright_policy=policy({'count': 2}, strategy), fail_hosts=['n05'])],
                       inventory(hosts(10)))
    assert run.rc == 2, run
    assert run.sizes() == [2, 2, 2, 2, 2]
    batches = run.compartment()['batches']
    assert batches[2]['failed'] == ['n05'] and batches[2]['failed_batch'] is True and batches[2]['progress'] == 60
    assert run.compartment()['stopped'] is False and run.report['not_attempted'] == []


def test_batch_threshold_below_100(run_playbook):
    strategy = {'fixed': {'initialBatch': 4, 'batchThreshold': 50, 'failureThreshold': 1, 'safetyLimit': 100}}
    run = run_playbook([budgeted_play(nodewright_policy=policy({'count': 4}, strategy),
                                      fail_hosts=['n01', 'n05', 'n06', 'n07'])], inventory(hosts(12)))
    assert run.rc == 2, run
    batches = run.compartment()['batches']
    assert [(b['size'], len(b['ok']), b['failed_batch']) for b in batches] == [(4, 3, False), (4, 1, True)]
    assert run.compartment()['stopped'] is True
    assert run.report['not_attempted'] == host_names(4, start=9)


# --------------------------------------------------------------------------- compartments


def test_two_compartments_progress_independently(run_playbook):
    compartments = [
        {'name': 'gpu', 'selector': {'matchLabels': {'pool': 'gpu'}}, 'budget': {'count': 1},
         'strategy': {'fixed': {'initialBatch': 1, 'failureThreshold': 1, 'safetyLimit': 100}}},
        {'name': 'cpu', 'selector': {'matchLabels': {'pool': 'cpu'}}, 'budget': {'count': 3},
         'strategy': {'linear': {'initialBatch': 1, 'delta': 1}}},
    ]
    host_map = hosts(4, 'g', nodewright_labels={'pool': 'gpu'})
    host_map.update(hosts(6, 'c', nodewright_labels={'pool': 'cpu'}))
    run = run_playbook([budgeted_play(nodewright_policy=policy({'percent': 100}, None, compartments),
                                      fail_hosts=['g02'])], inventory(host_map))
    assert run.rc == 2, run
    assert run.batches('gpu') == [['g01'], ['g02']]
    assert run.compartment('gpu')['stopped'] is True
    assert run.batches('cpu') == [['c01'], ['c02', 'c03'], ['c04', 'c05', 'c06']]
    assert run.compartment('cpu')['stopped'] is False
    assert run.compartment(DEFAULT)['matched'] == 0 and run.compartment(DEFAULT)['batches'] == []
    assert run.report['not_attempted'] == ['g03', 'g04']
    # the cpu compartment kept going after gpu stopped: its last batch ran after gpu's failure
    assert run.first('c04') > run.last('g02')


@pytest.mark.parametrize('lockstep', [True, False])
def test_without_lockstep_each_compartment_starts_its_next_batch_when_its_own_is_scored(run_playbook, lockstep):
    # slow: one batch of one host that takes 8 s; fast: three batches of one host each, 0.2 s each
    compartments = [
        {'name': 'slow', 'selector': {'matchLabels': {'pool': 'slow'}}, 'budget': {'count': 1},
         'strategy': {'fixed': {'initialBatch': 1}}},
        {'name': 'fast', 'selector': {'matchLabels': {'pool': 'fast'}}, 'budget': {'count': 1},
         'strategy': {'fixed': {'initialBatch': 1}}},
    ]
    host_map = hosts(1, 's', nodewright_labels={'pool': 'slow'}, nw_delay=8)
    host_map.update(hosts(3, 'f', nodewright_labels={'pool': 'fast'}, nw_delay=0.2))
    tasks = [{'name': 'work', 'ansible.builtin.command': 'sleep {{ nw_delay }}', 'changed_when': False},
             {'name': 'after', 'ansible.builtin.debug': {'msg': 'done'}}]
    play = budgeted_play(tasks, nodewright_policy=policy({'percent': 100}, None, compartments),
                         nodewright_batch_lockstep=lockstep)
    run = run_playbook([play], inventory(host_map))
    assert run.rc == 0, run
    assert run.batches('fast') == [['f01'], ['f02'], ['f03']] and run.batches('slow') == [['s01']]
    if lockstep:
        # waves: fast's second batch waits for slow's first
        assert run.first('f02') >= run.last('s01'), run
    else:
        # fast started its later batches while slow's one ran, each batch after the one before (batch barrier kept)
        assert run.first('f02') < run.last('s01') and run.first('f03') < run.last('s01'), (
            [(h, run.first(h), run.last(h)) for h in ('s01', 'f01', 'f02', 'f03')], run)
        assert_barriers(run, run.batches('fast'))


def test_lockstep_must_be_a_boolean(run_playbook):
    run = run_playbook([budgeted_play(nodewright_interruption_budget={'count': 1}, nodewright_batch_lockstep='sometimes')],
                       inventory(hosts(2)))
    assert run.rc != 0 and "nodewright_batch_lockstep: must be a boolean, got 'sometimes'" in run.flat, run
    assert run.hosts_with_events() == set()


def test_overlapping_selectors_and_pinned_hosts(run_playbook):
    compartments = [
        {'name': 'zone', 'selector': {'matchLabels': {'zone': 'z1'}}, 'budget': {'count': 2},
         'strategy': {'linear': {'initialBatch': 1}}},
        {'name': 'tier', 'selector': {'matchLabels': {'tier': 't1'}}, 'budget': {'count': 3},
         'strategy': {'fixed': {'initialBatch': 3}}},
        {'name': 'rack', 'selector': {'matchLabels': {'rack': 'r1'}}, 'budget': {'count': 5},
         'strategy': {'fixed': {'initialBatch': 5}}},
    ]
    host_map = {
        'o01': {'nodewright_labels': {'zone': 'z1', 'tier': 't1'}},   # fixed beats linear -> tier
        'o02': {'nodewright_labels': {'zone': 'z1'}},                 # zone
        'o03': {'nodewright_labels': {'tier': 't1', 'rack': 'r1'}},   # both fixed: smaller ceiling -> tier
        'o04': {'nodewright_labels': {'rack': 'r1'}},                 # rack
        'o05': {'nodewright_labels': {'tier': 't1'}, 'nodewright_compartment': 'zone'},  # pinned
        'o06': {},                                                    # no labels -> default
        'o07': {'nodewright_labels': {'zone': 'z2'}},                 # matches nothing -> default
    }
    run = run_playbook([budgeted_play(nodewright_policy=policy({'count': 5}, None, compartments))],
                       inventory(host_map))
    assert run.rc == 0, run
    members = dict((name, sorted(h for b in comp['batches'] for h in b['hosts']))
                   for name, comp in run.report['compartments'].items())
    assert members == {'zone': ['o02', 'o05'], 'tier': ['o01', 'o03'], 'rack': ['o04'], DEFAULT: ['o06', 'o07']}


# --------------------------------------------------------------------------- ansible features


def test_limit_counts_percent_over_the_limited_hosts(run_playbook):
    run = run_playbook([budgeted_play(nodewright_interruption_budget={'percent': 50})], inventory(hosts(10)),
                       args=['--limit', 'n01,n02,n03,n04,n05,n06'])
    assert run.rc == 0, run
    assert run.batches() == [['n01', 'n02', 'n03'], ['n04', 'n05', 'n06']]
    assert run.compartment()['matched'] == 6 and run.compartment()['ceiling'] == 3
    assert run.hosts_with_events() == set(host_names(6))


def test_handlers_are_flushed_inside_each_batch(run_playbook):
    tasks = [{'name': 'change', 'ansible.builtin.debug': {'msg': 'changed'}, 'changed_when': True,
              'notify': 'restart'},
             {'name': 'after change', 'ansible.builtin.debug': {'msg': 'still in the batch'}}]
    play = budgeted_play(tasks=tasks, nodewright_interruption_budget={'count': 2})
    play['handlers'] = [{'name': 'restart', 'ansible.builtin.debug': {'msg': 'restarting'}}]
    run = run_playbook([play], inventory(hosts(5)))
    assert run.rc == 0, run
    batches = run.batches()
    assert batches == [['n01', 'n02'], ['n03', 'n04'], ['n05']]
    handler_runs = [e for e in run.events if e['handler'] and e['event'] == 'ok']
    assert sorted(e['host'] for e in handler_runs) == host_names(5)
    for previous, current in zip(batches, batches[1:]):
        handled = max(e['time'] for e in handler_runs if e['host'] in previous)
        assert handled <= min(run.first(h) for h in current)


def test_run_once_runs_once_per_batch_in_check_mode(run_playbook):
    tasks = [{'name': 'once', 'ansible.builtin.debug': {'msg': 'batch {{ ansible_play_batch | join(",") }}'},
              'run_once': True},
             {'name': 'everyone', 'ansible.builtin.command': 'false'}]  # skipped in check mode, would fail otherwise
    run = run_playbook([budgeted_play(tasks=tasks, nodewright_interruption_budget={'count': 2})],
                       inventory(hosts(5)), args=['--check'])
    assert run.rc == 0, run
    once = [e['host'] for e in run.events if e['task'] == 'once' and e['event'] == 'ok']
    assert once == ['n01', 'n03', 'n05']
    assert 'batch n01,n02' in run.stdout and 'batch n03,n04' in run.stdout and 'batch n05' in run.stdout
    assert sorted(e['host'] for e in run.events if e['task'] == 'everyone' and e['event'] == 'skipped') == host_names(5)


def test_meta_end_host_and_end_batch(run_playbook):
    tasks = [{'name': 'one', 'ansible.builtin.debug': {'msg': 'one'}},
             {'name': 'end host', 'ansible.builtin.meta': 'end_host', 'when': "inventory_hostname == 'n02'"},
             {'name': 'end batch', 'ansible.builtin.meta': 'end_batch', 'when': "inventory_hostname == 'n03'"},
             {'name': 'two', 'ansible.builtin.debug': {'msg': 'two'}}]
    run = run_playbook([budgeted_play(tasks=tasks, nodewright_interruption_budget={'count': 2})], inventory(hosts(6)))
    assert run.rc == 0, run
    assert run.batches() == [['n01', 'n02'], ['n03', 'n04'], ['n05', 'n06']]
    assert all(not b['failed'] for b in run.compartment()['batches'])
    assert sorted(e['host'] for e in run.events if e['task'] == 'two' and e['event'] == 'ok') == ['n01', 'n05', 'n06']


def test_meta_end_play_stops_admitting_without_failing(run_playbook):
    tasks = [{'name': 'one', 'ansible.builtin.debug': {'msg': 'one'}},
             {'name': 'end play', 'ansible.builtin.meta': 'end_play', 'when': "inventory_hostname == 'n03'"}]
    second = {'name': 'after', 'hosts': 'all', 'gather_facts': False,
              'tasks': [{'ansible.builtin.debug': {'msg': 'later play'}}]}
    run = run_playbook([budgeted_play(tasks=tasks, nodewright_interruption_budget={'count': 2}), second],
                       inventory(hosts(6)))
    assert run.rc == 0, run
    assert run.batches() == [['n01', 'n02'], ['n03', 'n04']]
    assert run.report['ended'] == 'end_play' and run.report['stopped'] is False
    assert run.report['not_attempted'] == ['n05', 'n06']
    assert run.hosts_with_events('after') == set(host_names(6))


def test_any_errors_fatal_ends_the_rollout_after_the_batch(run_playbook):
    play = budgeted_play(nodewright_interruption_budget={'count': 2}, fail_hosts=['n03'])
    play['any_errors_fatal'] = True
    run = run_playbook([play], inventory(hosts(6)))
    assert run.rc == 2, run
    batches = run.compartment()['batches']
    assert [b['hosts'] for b in batches] == [['n01', 'n02'], ['n03', 'n04']]
    assert batches[1]['failed'] == ['n03', 'n04']  # any_errors_fatal fails the whole batch
    assert run.compartment()['stopped'] is True and 'any_errors_fatal' in run.compartment()['stop_reason']
    assert run.report['not_attempted'] == ['n05', 'n06']


def test_forks_smaller_than_a_batch_warns(run_playbook):
    run = run_playbook([budgeted_play(nodewright_interruption_budget={'count': 4})], inventory(hosts(4)), forks=2)
    assert run.rc == 0, run
    assert run.sizes() == [4]
    assert '4 hosts are in flight but only 2 run at once (forks)' in run.flat


def test_unreachable_hosts_count_as_failed(run_playbook):
    host_map = hosts(2)
    host_map.update(hosts(2, 'u', ansible_connection='ssh', ansible_host='127.0.0.1', ansible_port=1,
                          ansible_timeout=3))
    host_map.update(hosts(2, start=3))
    tasks = [{'name': 'connect', 'ansible.builtin.ping': {}}]
    run = run_playbook([budgeted_play(tasks=tasks, nodewright_interruption_budget={'count': 2})], inventory(host_map))
    assert run.rc == 4, run
    batches = run.compartment()['batches']
    assert [b['hosts'] for b in batches] == [['n01', 'n02'], ['u01', 'u02'], ['n03', 'n04']]
    assert batches[1]['failed'] == ['u01', 'u02'] and batches[1]['failed_batch'] is True
    assert batches[0]['failed'] == [] and batches[2]['failed'] == []
    assert set(e['host'] for e in run.events if e['event'] == 'unreachable') == {'u01', 'u02'}


# --------------------------------------------------------------------------- configuration errors


def test_serial_is_rejected(run_playbook):
    play = budgeted_play(nodewright_interruption_budget={'count': 2})
    play['serial'] = 2
    run = run_playbook([play], inventory(hosts(4)))
    assert run.rc != 0
    assert 'sets serial' in run.flat
    assert run.events == []


def test_invalid_policy_lists_every_problem_before_anything_runs(run_playbook):
    bad = {'default': {'budget': {'percent': 0, 'count': 2}, 'strategy': {'fixed': {}, 'linear': {}}},
           'compartments': [{'name': '__default__', 'selector': {'matchLabels': {'a': 'b'}}, 'budget': {'count': 1}}]}
    host_map = hosts(3, nodewright_labels={'a': 'b'})
    host_map['n02']['nodewright_compartment'] = 'nope'
    run = run_playbook([budgeted_play(nodewright_policy=bad, nodewright_admission='wide')], inventory(host_map))
    assert run.rc != 0
    out = run.flat
    for problem in ('nodewright_admission: must be one of batch, sliding',
                    'spec.default.budget.percent: 0 is less than the minimum 1',
                    'spec.default.budget: percent and count are mutually exclusive',
                    'spec.default.strategy: exactly one of fixed, linear, or exponential must be set',
                    "spec.compartments[0].name: '__default__' is reserved"):
        assert problem in out, run
    assert run.events == []


def test_bad_host_data_is_reported_per_host(run_playbook):
    compartments = [{'name': 'gpu', 'selector': {'matchLabels': {'pool': 'gpu'}}, 'budget': {'count': 1}}]
    host_map = hosts(3)
    host_map['n01']['nodewright_compartment'] = 'nope'
    host_map['n02']['nodewright_labels'] = ['pool=gpu']
    run = run_playbook([budgeted_play(nodewright_policy=policy({'count': 1}, None, compartments))],
                       inventory(host_map))
    assert run.rc != 0
    out = run.flat
    assert "nodewright_compartment of n01: 'nope' is not a compartment of the policy (known: gpu, __default__)" in out
    assert 'nodewright_labels of n02: must be a mapping' in out
    assert run.events == []


def test_max_fail_percentage_is_ignored_with_a_warning(run_playbook):
    play = budgeted_play(nodewright_interruption_budget={'count': 2}, fail_hosts=['n01'])
    play['max_fail_percentage'] = 0
    run = run_playbook([play], inventory(hosts(4)))
    assert run.rc == 2, run
    assert 'max_fail_percentage is ignored' in run.flat
    assert run.sizes() == [2, 2] and run.report['not_attempted'] == []


def test_policy_file_with_a_cr_and_name_order(run_playbook):
    docs = [
        {'apiVersion': 'nodewright.nvidia.com/v1alpha1', 'kind': 'NodeWright', 'metadata': {'name': 'x'},
         'spec': {'deploymentPolicy': 'p'}},
        {'apiVersion': 'nodewright.nvidia.com/v1alpha1', 'kind': 'DeploymentPolicy', 'metadata': {'name': 'p'},
         'spec': policy({'count': 3}, {'linear': {'initialBatch': 1, 'delta': 1}})},
    ]
    host_map = dict((name, {}) for name in reversed(host_names(6)))
    run = run_playbook([budgeted_play(nodewright_policy='policy.yml', nodewright_order='name')], inventory(host_map),
                       files={'policy.yml': yaml.safe_dump_all(docs)})
    assert run.rc == 0, run
    assert run.batches() == [['n01'], ['n02', 'n03'], ['n04', 'n05', 'n06']]


def test_hosts_failed_in_an_earlier_play_are_left_out(run_playbook):
    first = {'name': 'first', 'hosts': 'all', 'gather_facts': False,
             'tasks': [{'ansible.builtin.fail': {'msg': 'boom'}, 'when': "inventory_hostname == 'n02'"}]}
    run = run_playbook([first, budgeted_play(nodewright_interruption_budget={'count': 2})], inventory(hosts(5)))
    assert run.rc == 2, run
    assert run.batches() == [['n01', 'n03'], ['n04', 'n05']]
    assert run.report['excluded'] == {'n02': 'failed in an earlier play'}


def test_core_version_matches_the_interpreter():
    """Guard for run_matrix.sh: the ansible-playbook under test is the interpreter's own."""
    import ansible
    assert core_version() == tuple(int(p) for p in ansible.__version__.split('.')[:2])


NODE_DELETED_MODULE = '''#!/usr/bin/python
from ansible.module_utils.basic import AnsibleModule
module = AnsibleModule(argument_spec={})
module.fail_json(msg='node deleted: node x was removed from the cluster', node_deleted=True)
'''


def test_a_host_whose_node_was_deleted_leaves_its_compartment_uncounted(run_playbook):
    # as the operator drops a deleted node from its batch counts: the batch is judged on the others
    strategy = {'fixed': {'initialBatch': 2, 'failureThreshold': 1, 'batchThreshold': 100}}
    tasks = [{'name': 'work', 'ansible.builtin.debug': {'msg': 'working'}},
             {'name': 'node gone', 'node_deleted_test': {}, 'when': "inventory_hostname == 'n01'"}]
    run = run_playbook([budgeted_play(tasks=tasks, nodewright_policy=policy({'count': 2}, strategy))],
                       inventory(hosts(4)), files={'library/node_deleted_test.py': NODE_DELETED_MODULE})
    assert run.rc == 2, run  # the host still failed
    comp = run.compartment()
    assert run.batches() == [['n01', 'n02'], ['n03', 'n04']]
    assert comp['stopped'] is False and comp['removed'] == ['n01'] and comp['failed'] == 0
    assert comp['completed'] == 3 and comp['matched'] == 3
    assert comp['batches'][0]['removed'] == ['n01'] and comp['batches'][0]['failed_batch'] is False
    assert '1 removed (node deleted)' in run.stdout


# A node_update that waits for its protected pods, reduced to its talk with the strategy (module_utils/api/slot_mailbox.py):
# n01 says it parks, "trains" for nw_train seconds, says it rejoins and waits for the strategy's answer.
PARKING_TASK = {'name': 'work', 'changed_when': False, 'ansible.builtin.shell': r'''
set -e
if [ "{{ inventory_hostname }}" = n01 ]; then
  d='{{ nodewright_park.dir }}'
  printf '{"pods": ["ml/train-0"], "since": "2026-12-06T23:00:00Z"}' > "$d/.p" && mv "$d/.p" "$d/n01.park"
  sleep {{ nw_train }}
  printf '{}' > "$d/.r" && mv "$d/.r" "$d/n01.rejoin"
  while [ ! -f "$d/n01.answer" ]; do sleep 0.1; done
  grep -q '"go": true' "$d/n01.answer"
fi
sleep 1
'''}


def test_a_host_waiting_for_its_protected_pods_gives_its_slot_to_the_next_host_and_runs_after_them(run_playbook):
    play = budgeted_play([PARKING_TASK], nodewright_interruption_budget={'count': 3}, nodewright_batch_lockstep=False,
                         nw_train=6)
    run = run_playbook([play], inventory(hosts(7)))
    assert run.rc == 0, run
    batches = run.compartment()['batches']
    # n01 left batch 1 for n04; n05-n07 ran meanwhile; n01 took a slot again once its "pods" were gone
    assert [b['hosts'] for b in batches] == [['n02', 'n03', 'n04'], ['n05', 'n06', 'n07'], ['n01']], run
    assert batches[0]['parked'] == ['n01'] and [b['size'] for b in batches] == [3, 3, 1]
    assert run.first('n04') < run.first('n05') and run.last('n07') < run.last('n01')
    assert 'NODEWRIGHT PARKED [__default__] n01 waits for protected pods (ml/train-0); its batch slot goes to n04' in run.flat
    assert 'NODEWRIGHT BATCH 1 [__default__] done: 3 ok, 0 failed, 1 parked (n01), ok' in run.flat
    assert 'NODEWRIGHT REJOIN [__default__] n01: its protected pods finished after' in run.flat
    assert 'nodewright: [__default__] n01 parked: waits for protected pods ml/train-0' in run.flat
    assert run.compartment()['completed'] == 7 and run.compartment()['parked'] == []


def test_parking_is_off_when_asked_and_the_warning_threshold_must_be_a_duration(run_playbook):
    play = budgeted_play([{'name': 'park var', 'ansible.builtin.debug': {'msg': '{{ nodewright_park | default("unset") }}'}}],
                         nodewright_interruption_budget={'count': 2}, nodewright_batch_lockstep=False,
                         nodewright_park_protected=False)
    run = run_playbook([play], inventory(hosts(2)))
    assert run.rc == 0 and '"msg": "unset"' in run.output, run
    bad = budgeted_play(nodewright_interruption_budget={'count': 1}, nodewright_protected_wait_warning='2x')
    run = run_playbook([bad], inventory(hosts(2)))
    assert run.rc != 0 and "nodewright_protected_wait_warning: '2x' is not a duration" in run.flat, run
    assert run.hosts_with_events() == set()
