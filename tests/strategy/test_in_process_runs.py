# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""Cluster tasks in the controller's process, through real ansible-playbook runs (no cluster needed).

rollout_plan with the CR and the nodes given plans without the API, so it can run both ways and
be compared: in the worker (the default) and as an AnsiballZ module (NODEWRIGHT_BRIDGE_IN_PROCESS=0,
or a connection that is not the controller's own). Run on every ansible-core of the matrix.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

from strategy_helpers import core_version, hosts, inventory

CR = {
    'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'Skyhook', 'metadata': {'name': 'tuning'},
    'spec': {'nodeSelectors': {'matchLabels': {'pool': 'gpu'}}, 'interruptionBudget': {'count': 2},
             'packages': {'tuning': {'version': '1.0.0', 'image': 'registry.local/tuning',
                                     'interrupt': {'type': 'reboot'}}}},
}
NODES = [{'name': 'gpu-%d' % i, 'labels': {'pool': 'gpu'}} for i in range(3)]

# A test action plugin on the collection's base: its "module" raises on one host.
EXPLODING_ACTION = '''
from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution.cluster_action import ClusterAction


class Code(object):
    @staticmethod
    def module_args():
        return dict(argument_spec={'explode': {'type': 'bool', 'default': False}}, supports_check_mode=True)

    @staticmethod
    def execute(module):
        if module.params['explode']:
            raise RuntimeError('injected failure')
        module.exit_json(changed=False, pid=__import__('os').getpid())


class ActionModule(ClusterAction):
    MODULE = 'nw_explode'
    MODULE_CODE = Code
'''

# A connection that is not the controller's own (transport 'nw_remote') but runs commands here.
REMOTE_CONNECTION = '''
from ansible.plugins.connection.local import Connection as LocalConnection

DOCUMENTATION = """
name: nw_remote
short_description: a stand-in for a remote host (tests)
description: [Runs commands locally under another transport name.]
author: nodewright.bridge contributors
"""


class Connection(LocalConnection):
    transport = 'nw_remote'
'''


def plan_play(extra_task_args=None, **play):
    args = {'cr': 'cr.json', 'nodes': 'nodes.json'}
    args.update(extra_task_args or {})
    base = {'name': 'plan', 'hosts': 'all', 'gather_facts': False, 'tasks': [
        {'name': 'plan', 'nodewright.bridge.rollout_plan': args, 'register': 'planned'},
        {'name': 'keep', 'ansible.builtin.copy': {'content': '{{ planned | to_nice_json }}',
                                                  'dest': '{{ playbook_dir }}/result-{{ inventory_hostname }}.json'}},
    ]}
    base.update(play)
    return base


FILES = {'cr.json': json.dumps(CR), 'nodes.json': json.dumps(NODES)}


def read_result(run, host):
    with open(os.path.join(run.workdir, 'result-%s.json' % host)) as handle:
        result = json.load(handle)
    result.pop('invocation', None)
    # ansible-core 2.22's executor marks a result it parsed from a module's output (ansible_parsed, formerly the hidden
    # _ansible_parsed): what carried the result, not what the module returned
    result.pop('ansible_parsed', None)
    return result


def test_in_process_and_module_path_give_the_same_result(run_playbook):
    inside = run_playbook([plan_play()], inventory(hosts(1)), args=['-vvv'], files=FILES)
    module = run_playbook([plan_play()], inventory(hosts(1)), args=['-vvv'], files=FILES,
                          env={'NODEWRIGHT_BRIDGE_IN_PROCESS': '0'})
    assert inside.rc == 0 and module.rc == 0, (inside, module)
    assert read_result(inside, 'n01') == read_result(module, 'n01')
    assert read_result(inside, 'n01')['summary']['batches'] == 2
    # only the module path builds and runs an AnsiballZ payload for rollout_plan
    assert 'rollout_plan.py' not in inside.stdout and 'AnsiballZ_rollout_plan' not in inside.stdout
    assert 'AnsiballZ_rollout_plan' in module.stdout


def test_bad_input_fails_with_the_same_message_on_both_paths(run_playbook):
    play = plan_play({'colour': 'blue'})
    inside = run_playbook([play], inventory(hosts(1)), files=FILES)
    module = run_playbook([play], inventory(hosts(1)), files=FILES, env={'NODEWRIGHT_BRIDGE_IN_PROCESS': '0'})
    assert inside.rc == 2 and module.rc == 2
    for run in (inside, module):
        assert 'Unsupported parameters for (' in run.flat and 'module: colour' in run.flat, run
    bad_cr = dict(CR, spec=dict(CR['spec'], interruptionBudget={'count': 1, 'percent': 5}))
    files = dict(FILES, **{'cr.json': json.dumps(bad_cr)})
    inside = run_playbook([plan_play()], inventory(hosts(1)), files=files)
    module = run_playbook([plan_play()], inventory(hosts(1)), files=files, env={'NODEWRIGHT_BRIDGE_IN_PROCESS': '0'})
    for run in (inside, module):
        assert run.rc == 2 and 'spec.interruptionBudget: percent and count are mutually exclusive' in run.flat, run


def test_a_task_on_another_connection_runs_as_a_module(run_playbook):
    inv = inventory(hosts(1))
    inv['all']['vars']['ansible_connection'] = 'nw_remote'
    files = dict(FILES, **{'connection_plugins/nw_remote.py': REMOTE_CONNECTION})
    run = run_playbook([plan_play()], inv, args=['-vvv'], files=files)
    assert run.rc == 0, run
    assert 'AnsiballZ_rollout_plan' in run.stdout
    assert read_result(run, 'n01')['summary']['batches'] == 2


def test_an_exception_in_the_controller_process_fails_only_that_task(run_playbook):
    play = {'name': 'explode', 'hosts': 'all', 'gather_facts': False, 'tasks': [
        {'name': 'maybe explode', 'nw_explode': {'explode': "{{ inventory_hostname == 'n02' }}"}},
        {'name': 'after', 'ansible.builtin.debug': {'msg': 'still running on {{ inventory_hostname }}'}},
    ]}
    run = run_playbook([play], inventory(hosts(3)), files={'action_plugins/nw_explode.py': EXPLODING_ACTION})
    assert run.rc == 2, run  # failed hosts, not an ansible-playbook crash (250) or an interrupted run
    assert 'module nw_explode failed in the controller process: RuntimeError: injected failure' in run.flat
    assert 'still running on n01' in run.stdout and 'still running on n03' in run.stdout
    assert 'still running on n02' not in run.stdout
    assert 'Traceback' not in run.stderr  # no crash of the controller


def test_the_task_environment_reaches_the_module_in_process(run_playbook):
    # K8S_AUTH_KUBECONFIG from the task's environment: rollout_plan needs the API without nodes,
    # and says which kubeconfig it could not find
    play = plan_play({'nodes': None})
    play['tasks'][0]['nodewright.bridge.rollout_plan'] = {'cr': 'cr.json'}
    play['tasks'][0]['environment'] = {'K8S_AUTH_KUBECONFIG': '/nonexistent/kubeconfig-from-task-env'}
    run = run_playbook([play], inventory(hosts(1)), files=FILES)
    assert run.rc == 2
    assert 'kubeconfig /nonexistent/kubeconfig-from-task-env does not exist' in run.flat, run


def _forks(run):
    """How many processes ansible-playbook forked (the nw_recorder callback counts them)."""
    return run.forks[-1]


def test_node_update_tasks_the_engine_serves_report_as_from_a_worker(run_playbook):
    """node_update under the budgeted strategy: where the sequence engine serves it (and the core is one
    plugin_utils/execution/task_threads.py mirrors: 2.19, 2.20), the task waits in a thread of ansible-playbook instead of a
    forked worker; its result reaches register, ignore_errors and the next task as a worker's does, on every core."""
    play = {'name': 'update', 'hosts': 'all', 'gather_facts': False, 'strategy': 'nodewright.bridge.budgeted',
            'vars': {'nodewright_interruption_budget': {'count': 3}}, 'tasks': [
                {'name': 'update', 'nodewright.bridge.node_update': {
                    'node': '{{ inventory_hostname }}', 'cr': 'cr.json', 'kubeconfig': 'no-such-kubeconfig'},
                 'register': 'updated', 'ignore_errors': True},
                {'name': 'keep', 'ansible.builtin.copy': {'content': '{{ updated | to_nice_json }}',
                                                          'dest': '{{ playbook_dir }}/result-{{ inventory_hostname }}.json'}},
            ]}
    runs = dict((threads, run_playbook([play], inventory(hosts(3)), files=FILES,
                                       env={'NODEWRIGHT_BRIDGE_TASK_THREADS': threads}))
                for threads in ('1', '0'))
    msgs = {}
    for threads, run in runs.items():
        assert run.rc == 0, run
        assert 'ok=2' in run.stdout and 'ignored=1' in run.stdout, run
        msgs[threads] = []
        for host in ('n01', 'n02', 'n03'):
            result = read_result(run, host)
            assert result['failed'] is True and result['ran_in'] == 'sequence engine', (threads, result)
            assert result['msg'] == 'the CR on node %s failed at "planning": kubeconfig no-such-kubeconfig does not exist' \
                % host, (threads, result)
            msgs[threads].append(result['msg'])
    assert msgs['1'] == msgs['0']  # the same results whichever way the tasks waited
    # with workers: the engine, a worker per update task and per keep task; in threads, no worker for an update task
    assert _forks(runs['0']) == 7, runs['0'].forks
    assert _forks(runs['1']) == (4 if core_version() in ((2, 19), (2, 20)) else 7), runs['1'].forks
