# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""nodewright.bridge.node_update through the real ansible-playbook: the three execution paths, check mode, a failure.

Each test runs a one-task playbook on localhost against a fresh fake node of its own: the
sequence in the play's sequence engine (a play under the budgeted strategy), in the task's
worker (the stock strategy), or each step as an AnsiballZ module (NODEWRIGHT_BRIDGE_IN_PROCESS=0);
the node's annotations are read back from the API.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid

import pytest
import yaml

import launcher

STATE = 'skyhook.nvidia.com/nodeState_{}'
STATUS = 'skyhook.nvidia.com/status_{}'
# set by kube-controller-manager's TTL controller at a moment of its own after the node registers
CONTROL_PLANE_ANNOTATIONS = ('node.alpha.kubernetes.io/ttl',)


def _own_annotations(node_obj):
    return {key: value for key, value in (node_obj.metadata.annotations or {}).items()
            if key not in CONTROL_PLANE_ANNOTATIONS}


def _cr(name, node, failing=False):
    packages = {
        'tuning': {'version': '1.0.0', 'image': 'registry.local/tuning', 'configMap': {'a.conf': 'x=1\n'}},
        'driver': {'version': '2.0.0', 'image': 'registry.local/driver-fail' if failing else 'registry.local/driver',
                   'interrupt': {'type': 'reboot'}},
    }
    return {'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'Skyhook', 'metadata': {'name': name},
            'spec': {'nodeSelectors': {'matchLabels': {'kubernetes.io/hostname': node}}, 'packages': packages}}


def _run(playbooks, tmp_path, cr_doc, node, namespace, check=False, env=None, engine=False):
    cr_path = tmp_path / 'cr.yaml'
    cr_path.write_text(yaml.safe_dump(cr_doc))
    out = tmp_path / 'result.json'
    play = [{'hosts': 'localhost', 'gather_facts': False, 'tasks': [
        {'name': 'update', 'nodewright.bridge.node_update': {
            'node': node, 'cr': str(cr_path), 'namespace': namespace, 'kubeconfig': playbooks.kubeconfig},
         'register': 'updated', 'ignore_errors': True},
        {'name': 'keep', 'ansible.builtin.copy': {'content': '{{ updated | to_json }}', 'dest': str(out)}, 'check_mode': False},
    ]}]
    if engine:
        play[0].update({'strategy': 'nodewright.bridge.budgeted', 'vars': {'nodewright_interruption_budget': {'count': 1}}})
    path = tmp_path / 'play.yml'
    path.write_text(yaml.safe_dump(play))
    cmd, run_env, dummy, cwd = playbooks.command(str(path), check=check)
    run_env.update(env or {})
    proc = subprocess.run(cmd, env=run_env, cwd=cwd, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    return json.loads(out.read_text())


def _annotations(cluster, node):
    return cluster.core.read_node(node).metadata.annotations or {}


PATHS = [({}, True, 'sequence engine'), ({}, False, 'worker'), ({'NODEWRIGHT_BRIDGE_IN_PROCESS': '0'}, False, 'modules')]


@pytest.mark.parametrize('env,engine,ran_in', PATHS, ids=['engine', 'worker', 'module-path'])
def test_a_node_is_brought_up_to_date_then_left_alone(cluster, playbooks, namespace, tmp_path, node, env, engine, ran_in):
    result = _run(playbooks, tmp_path, _cr('upd', node), node, namespace, env=env, engine=engine)
    assert result['status'] == 'updated', result
    assert result['ran_in'] == ran_in
    steps = [s['step'] for s in result['steps']]
    # tuning has no interrupt: it runs cordoned while the drain runs, as the operator runs it (ProcessInterrupt);
    # driver, which has one, starts once the drain is done (the steps are recorded as they end)
    assert steps[:2] == ['plan', 'cordon']
    assert steps.index('drain') < steps.index('driver apply') and steps.index('tuning apply') < steps.index('tuning config')
    if ran_in == 'modules':
        assert steps[2:5] == ['tuning apply', 'tuning config', 'drain']  # one step after the other
    assert steps[-3:] == ['health', 'complete', 'uncordon']
    assert 'driver interrupt (reboot)' in steps
    state = json.loads(_annotations(cluster, node)[STATE.format('upd')])
    assert {k: (e['stage'], e['state']) for k, e in state.items()} == {
        'tuning|1.0.0': ('config', 'complete'), 'driver|2.0.0': ('post-interrupt', 'complete')}
    assert cluster.core.read_node(node).metadata.labels[STATUS.format('upd')] == 'complete'
    assert not cluster.core.read_node(node).spec.unschedulable
    # a second run finds nothing to do: one plan, the complete record already in place
    again = _run(playbooks, tmp_path, _cr('upd', node), node, namespace, env=env, engine=engine)
    assert again['status'] == 'complete' and again['changed'] is False
    assert [s['step'] for s in again['steps']] == ['plan', 'complete']


@pytest.mark.parametrize('engine', [True, False], ids=['engine', 'worker'])
def test_check_mode_changes_nothing(cluster, playbooks, namespace, tmp_path, node, engine):
    before = cluster.core.read_node(node)
    result = _run(playbooks, tmp_path, _cr('chk', node), node, namespace, check=True, engine=engine)
    assert 'failed' not in result or not result['failed'], result
    after = cluster.core.read_node(node)
    assert STATE.format('chk') not in (after.metadata.annotations or {})
    assert not after.spec.unschedulable and _own_annotations(after) == _own_annotations(before)
    assert not cluster.core.list_namespaced_pod(namespace).items


@pytest.mark.parametrize('engine', [True, False], ids=['engine', 'worker'])
def test_a_failing_stage_names_the_step_and_keeps_the_cordon(cluster, playbooks, namespace, tmp_path, node, engine):
    result = _run(playbooks, tmp_path, _cr('bad', node, failing=True), node, namespace, engine=engine)
    assert result['failed'] is True and result['failed_step'] == 'driver apply'
    assert result['ran_in'] == ('sequence engine' if engine else 'worker')
    assert result['msg'].startswith('bad on node %s failed at "driver apply": ' % node)
    assert result['msg'].endswith('(the node stays cordoned by bad)')
    assert result['steps'][-1]['logs']  # the failed step keeps its logs
    after = cluster.core.read_node(node)
    assert after.spec.unschedulable
    assert after.metadata.labels[STATUS.format('bad')] == 'erroring'


def _children(pid):
    """The processes ``pid`` has forked and not reaped (every thread's children, from /proc)."""
    found = set()
    try:
        for tid in os.listdir(f'/proc/{pid}/task'):
            with open(f'/proc/{pid}/task/{tid}/children', encoding='ascii') as handle:
                found.update(handle.read().split())
    except OSError:  # the process or a thread has just ended
        pass
    return found


@pytest.mark.parametrize('threads', [True, False], ids=['task-threads', 'workers'])
def test_tasks_the_engine_serves_wait_in_threads_not_forked_workers(cluster, playbooks, namespace, tmp_path, threads):
    """Three hosts' node_update tasks in flight at once: with task threads, ansible-playbook forks only the engine
    (plugin_utils/execution/task_threads.py); with NODEWRIGHT_BRIDGE_TASK_THREADS=0 it forks a worker per task as well."""
    nodes = [f'n-threads-{uuid.uuid4().hex[:5]}-{i}' for i in range(3)]
    launcher.create_nodes(cluster.api, nodes, labels={'nodewright.bridge/test-node': 'true', 'threads': 'yes'},
                          start_index=900 if threads else 910)
    try:
        launcher.wait_nodes_ready(cluster.api, nodes, timeout=60)
        cr_doc = _cr('thr' if threads else 'wrk', nodes[0])
        cr_doc['spec']['nodeSelectors'] = {'matchLabels': {'threads': 'yes'}}
        (tmp_path / 'cr.yaml').write_text(yaml.safe_dump(cr_doc))
        inventory = {'all': {'hosts': {n: {'ansible_connection': 'local', 'ansible_python_interpreter': sys.executable}
                                       for n in nodes}}}
        (tmp_path / 'hosts.yml').write_text(yaml.safe_dump(inventory))
        play = [{'hosts': 'all', 'gather_facts': False, 'strategy': 'nodewright.bridge.budgeted',
                 'vars': {'nodewright_interruption_budget': {'count': 3}},
                 'tasks': [{'name': 'update', 'nodewright.bridge.node_update': {
                     'node': '{{ inventory_hostname }}', 'cr': str(tmp_path / 'cr.yaml'), 'namespace': namespace,
                     'kubeconfig': playbooks.kubeconfig}}]}]
        (tmp_path / 'play.yml').write_text(yaml.safe_dump(play))
        cmd, env, dummy, cwd = playbooks.command(str(tmp_path / 'play.yml'), inventory=tmp_path / 'hosts.yml')
        env['NODEWRIGHT_BRIDGE_TASK_THREADS'] = '1' if threads else '0'
        most = 0
        with subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as proc:
            while proc.poll() is None:
                most = max(most, len(_children(proc.pid)))
                time.sleep(0.02)
            output = proc.stdout.read()
        assert proc.returncode == 0, output[-4000:]
        for name in nodes:
            assert cluster.core.read_node(name).metadata.labels[STATUS.format(cr_doc['metadata']['name'])] == 'complete'
        # the engine, and a worker per node in flight only without the threads (the measure can tell them apart)
        assert most == 1 if threads else most >= 4, (most, output[-2000:])
    finally:
        for name in nodes:
            cluster.core.delete_node(name)
