# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The nodewright.bridge.maintenance role (the migration wrapper), run by the real ansible-playbook.

A playbook of the kind a team migrates from (its own role, ``my_tuning``) is wrapped with the
role and run with ``strategy: nodewright.bridge.budgeted`` over fresh fake nodes of its own. The
user's step records, through the Kubernetes API, how the node looks while it runs (cordoned? by
whom? which pods are still on it?), so the tests check the order of the window, not just its end.
"""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path

import helpers
import launcher
import pytest
import yaml
from kubernetes import client as kclient

CLUSTER_DIR = Path(__file__).resolve().parents[1] / 'cluster'
POOL_LABEL = 'nodewright.bridge/pool'
CORDON = 'skyhook.nvidia.com/cordon_maintenance'
_NEXT_INDEX = [1700]  # InternalIPs of these nodes: distinct from the other tests' fresh nodes

# The user's step records the node as it sees it: one JSON line per call.
RECORD_SCRIPT = '''
import json, os, sys, time
from kubernetes import client, config
node, log, stage, pool = sys.argv[1:5]
config.load_kube_config(os.environ['NODEWRIGHT_ADMIN_KUBECONFIG'])
core = client.CoreV1Api()
me = core.read_node(node)
pods = core.list_pod_for_all_namespaces(field_selector='spec.nodeName=' + node).items
entry = {
    'node': node, 'stage': stage, 'time': time.time(),
    'unschedulable': bool(me.spec.unschedulable),
    'annotations': {k: v for k, v in (me.metadata.annotations or {}).items() if 'cordon' in k},
    'cordoned': sorted(n.metadata.name for n in core.list_node(label_selector='%s=%s' % ({label!r}, pool)).items
                       if n.spec.unschedulable),
    'pods': [{'name': p.metadata.name, 'uid': p.metadata.uid, 'phase': p.status.phase,
              'deleting': p.metadata.deletion_timestamp is not None} for p in pods],
}
with open(log, 'a') as out:
    out.write(json.dumps(entry) + '\\n')
'''.replace('{label!r}', repr(POOL_LABEL))

# What a "reboot over ssh" looks like from Kubernetes: once the step has returned (as `shutdown -r +0`
# in the background would), the node goes NotReady and comes back with a new boot ID. The step's
# shell passes its parent, the module process that runs the step: when it has exited, the step has
# returned its result.
REBOOT_SCRIPT = f'''
import os, sys, time
sys.path.insert(0, {str(CLUSTER_DIR)!r})
import helpers
node, step, log = sys.argv[1], int(sys.argv[2]), sys.argv[3]

def step_returned():
    try:
        with open('/proc/%d/stat' % step) as stat:
            return stat.read().rsplit(')', 1)[1].split()[0] in ('Z', 'X')  # exited, not reaped yet
    except FileNotFoundError:
        return True
helpers.wait_for(step_returned, 60, interval=0.1, what='the reboot step (pid %d) to return' % step)
api = helpers.launcher.api_client_from_kubeconfig(os.environ['NODEWRIGHT_ADMIN_KUBECONFIG'])
new = helpers.reboot_node(api, node, timeout=60)
with open(log, 'a') as out:
    out.write('%s %s %f\\n' % (node, new, time.time()))
'''

USER_ROLE_TASKS = '''\
---
- name: Say what is being tuned
  ansible.builtin.debug:
    msg: "tuning {{ inventory_hostname }} ({{ ansible_host }})"

- name: Record the node as the tuning step sees it
  ansible.builtin.command:
    argv: ["{{ ansible_playbook_python }}", "{{ record_script }}", "{{ nodewright_node }}", "{{ record_log }}", step, "{{ pool }}"]
  changed_when: true

- name: Write the tuning file
  ansible.builtin.copy:
    content: "tuned {{ inventory_hostname }}\\n"
    dest: "{{ out_dir }}/{{ inventory_hostname }}.conf"
    mode: "0644"
  notify: Record the handler

- name: Fail where the test asks
  ansible.builtin.fail:
    msg: "tuning failed on {{ inventory_hostname }}"
  when: inventory_hostname in fail_nodes | default([])
'''

USER_ROLE_HANDLERS = '''\
---
- name: Record the handler
  ansible.builtin.command:
    argv: ["{{ ansible_playbook_python }}", "{{ record_script }}", "{{ nodewright_node }}", "{{ record_log }}", handler, "{{ pool }}"]
  changed_when: true
'''

REBOOT_TASKS = '''\
---
- name: Reboot the machine (it goes down after this task has returned)
  ansible.builtin.shell: >-
    nohup {{ ansible_playbook_python }} {{ reboot_script }} {{ nodewright_node }} $PPID {{ reboot_log }}
    > {{ reboot_log }}.{{ inventory_hostname }}.err 2>&1 &
  changed_when: true
  when: inventory_hostname not in no_reboot | default([])
'''


class Nodes:
    """Fresh fake GPU nodes selected by ``nodewright.bridge/pool=<pool>``; ``delete()`` removes them."""

    def __init__(self, cluster, count):
        self.cluster = cluster
        self.pool = uuid.uuid4().hex[:8]
        self.names = [f'mnt-{self.pool}-{i}' for i in range(count)]
        launcher.create_nodes(cluster.api, self.names, labels={POOL_LABEL: self.pool}, start_index=_NEXT_INDEX[0])
        _NEXT_INDEX[0] += count
        launcher.wait_nodes_ready(cluster.api, self.names, timeout=60)

    def read(self, name):
        return self.cluster.core.read_node(name)

    def address(self, name):
        return next(a.address for a in self.read(name).status.addresses if a.type == 'InternalIP')

    def delete(self):
        for name in self.names:
            try:
                self.cluster.core.delete_node(name)
            except kclient.ApiException:
                pass


@pytest.fixture
def nodes(cluster):
    made = []

    def make(count):
        made.append(Nodes(cluster, count))
        return made[-1]
    yield make
    for group in made:
        group.delete()


class Project:
    """A user's playbook directory: roles/my_tuning, the inventory, the helper scripts, the logs."""

    def __init__(self, root, nodes):
        self.root = Path(root)
        self.nodes = nodes
        role = self.root / 'roles' / 'my_tuning'
        (role / 'tasks').mkdir(parents=True)
        (role / 'handlers').mkdir()
        (role / 'tasks' / 'main.yml').write_text(USER_ROLE_TASKS)
        (role / 'handlers' / 'main.yml').write_text(USER_ROLE_HANDLERS)
        (self.root / 'tasks').mkdir()
        (self.root / 'tasks' / 'reboot.yml').write_text(REBOOT_TASKS)
        (self.root / 'record.py').write_text(RECORD_SCRIPT)
        (self.root / 'reboot.py').write_text(REBOOT_SCRIPT)
        (self.root / 'out').mkdir()
        self.record_log = self.root / 'record.jsonl'
        self.reboot_log = self.root / 'reboot.log'
        self.inventory = self.root / 'inventory.ini'
        lines = ['[gpu]']
        # The host is the node: ansible_host is its address (a real run would ssh there; the test runs locally).
        lines += [f'{name} ansible_host={nodes.address(name)}' for name in nodes.names]
        lines += ['', '[gpu:vars]', 'ansible_connection=local', f'ansible_python_interpreter={sys.executable}']
        self.inventory.write_text('\n'.join(lines) + '\n')

    def playbook(self, play_vars, role_vars, name='site.yml', **keywords):
        play = {
            'name': 'Tune the GPU nodes',
            'hosts': 'gpu',
            'gather_facts': False,
            'strategy': 'nodewright.bridge.budgeted',
            **keywords,
            'vars': dict({'record_script': str(self.root / 'record.py'), 'record_log': str(self.record_log),
                          'reboot_script': str(self.root / 'reboot.py'), 'reboot_log': str(self.reboot_log),
                          'out_dir': str(self.root / 'out'), 'pool': self.nodes.pool}, **play_vars),
            'roles': [dict({'role': 'nodewright.bridge.maintenance'}, **role_vars)],
            'post_tasks': [{
                'name': 'Keep what the window did',
                'ansible.builtin.copy': {'content': '{{ nodewright_maintenance | to_json }}',
                                         'dest': str(self.root / 'out' / '{{ inventory_hostname }}.json'),
                                         'mode': '0644'},
                'delegate_to': 'localhost'}],
        }
        path = self.root / name
        path.write_text(yaml.safe_dump([play], sort_keys=False))
        return str(path)

    def records(self, stage=None):
        if not self.record_log.exists():
            return []
        entries = [json.loads(line) for line in self.record_log.read_text().splitlines() if line.strip()]
        return [e for e in entries if stage is None or e['stage'] == stage]

    def window(self, name):
        path = self.root / 'out' / f'{name}.json'
        return json.loads(path.read_text()) if path.exists() else None


def _apps(cluster):
    return kclient.AppsV1Api(cluster.api)


def _running(cluster, namespace, selector, count, node=None):
    def check():
        pods = [p for p in cluster.core.list_namespaced_pod(namespace, label_selector=selector).items
                if p.status.phase == 'Running' and not p.metadata.deletion_timestamp
                and (node is None or p.spec.node_name == node)]
        return pods if len(pods) >= count else None
    return helpers.wait_for(check, 60, what=f'{count} running pods for {selector}' + (f' on {node}' if node else ''))


def _workloads(cluster, namespace, nodes):
    """A DaemonSet (the health gate's pods; never drained) and one Deployment pod on each node (drained)."""
    agent = {'app': 'agent'}
    _apps(cluster).create_namespaced_daemon_set(namespace, {
        'metadata': {'name': 'agent'},
        'spec': {'selector': {'matchLabels': agent},
                 'template': {'metadata': {'labels': agent},
                              'spec': {'nodeSelector': {POOL_LABEL: nodes.pool},
                                       'containers': [{'name': 'a', 'image': 'registry.local/agent:1'}]}}}})
    web = {}
    for i, node in enumerate(nodes.names):
        labels = {'app': f'web-{i}'}
        _apps(cluster).create_namespaced_deployment(namespace, {
            'metadata': {'name': f'web-{i}'},
            'spec': {'replicas': 1, 'selector': {'matchLabels': labels},
                     'template': {'metadata': {'labels': labels},
                                  'spec': {'nodeSelector': {'kubernetes.io/hostname': node},
                                           'containers': [{'name': 'main', 'image': 'registry.local/app:1'}]}}}})
    for i, node in enumerate(nodes.names):
        web[node] = _running(cluster, namespace, f'app=web-{i}', 1, node)[0].metadata.uid
    agents = {p.spec.node_name: p.metadata.uid for p in _running(cluster, namespace, 'app=agent', len(nodes.names))}
    return web, agents


def _cordon_state(nodes):
    return {name: (bool(nodes.read(name).spec.unschedulable),
                   (nodes.read(name).metadata.annotations or {}).get(CORDON)) for name in nodes.names}


ONE_AT_A_TIME = {'nodewright_policy': {'default': {'budget': {'count': 1},
                                                   'strategy': {'fixed': {'initialBatch': 1, 'failureThreshold': 1}}}}}


def test_users_role_runs_inside_the_window_one_node_at_a_time(cluster, playbooks, nodes, namespace, tmp_path):
    group = nodes(3)
    project = Project(tmp_path, group)
    web, agents = _workloads(cluster, namespace, group)
    playbook = project.playbook(ONE_AT_A_TIME, {'nodewright_maintenance_role': 'my_tuning',
                                                'nodewright_health_pod_selector': 'app=agent'})

    result = playbooks.run(playbook, inventory=project.inventory, cwd=str(tmp_path))
    assert result.rc == 0, result

    steps = project.records('step')
    # Once per node, in batches of one (the inventory's order), each time cordoned by the role.
    assert [e['node'] for e in steps] == group.names
    for entry in steps:
        assert entry['unschedulable'] is True, entry
        assert entry['annotations'] == {CORDON: 'true'}, entry
        assert entry['cordoned'] == [entry['node']], entry  # the budget: no other node of the pool is down
        # Drained before the step: the Deployment's pod is gone (its replacement cannot land on the
        # cordoned node); the DaemonSet's pod stays.
        uids = {p['uid'] for p in entry['pods']}
        assert web[entry['node']] not in uids, entry
        assert agents[entry['node']] in uids, entry
    # The handler the step notified ran inside the window too, after the step.
    handlers = project.records('handler')
    assert [e['node'] for e in handlers] == group.names
    for step, handler in zip(steps, handlers):
        assert handler['unschedulable'] is True and handler['annotations'] == {CORDON: 'true'}
        assert handler['time'] > step['time']
    # Everything handed back: schedulable, no cordon annotation; the workload back on its node.
    assert _cordon_state(group) == {name: (False, None) for name in group.names}
    for i, node in enumerate(group.names):
        pods = _running(cluster, namespace, f'app=web-{i}', 1, node)
        assert web[node] not in {p.metadata.uid for p in pods}
        assert (project.root / 'out' / f'{node}.conf').read_text() == f'tuned {node}\n'
        window = project.window(node)
        assert window['node'] == node and window['owner'] == 'maintenance'
        assert window['evicted'] == 1 and window['unschedulable'] is False
    assert {p.spec.node_name: p.metadata.uid for p in _running(cluster, namespace, 'app=agent', 3)} == agents
    comp = result.report['compartments']['__default__']
    assert [b['hosts'] for b in comp['batches']] == [[n] for n in group.names]
    assert comp['stopped'] is False and result.report['not_attempted'] == []


def test_failing_step_keeps_its_node_cordoned_and_stops_the_rollout(cluster, playbooks, nodes, namespace, tmp_path):
    group = nodes(3)
    project = Project(tmp_path, group)
    web, dummy = _workloads(cluster, namespace, group)
    playbook = project.playbook(dict(ONE_AT_A_TIME, fail_nodes=[group.names[0]]),
                                {'nodewright_maintenance_role': 'my_tuning'})

    result = playbooks.run(playbook, inventory=project.inventory, cwd=str(tmp_path))
    assert result.rc == 2, result
    assert f'maintenance of node {group.names[0]} failed at "Fail where the test asks"' in result.stdout
    assert '(the node stays cordoned by maintenance)' in result.stdout
    # failureThreshold 1 below safetyLimit: the first failed batch stops the rollout.
    assert result.report['stopped'] is True
    assert result.report['not_attempted'] == group.names[1:]
    assert [e['node'] for e in project.records('step')] == [group.names[0]]
    assert _cordon_state(group) == {group.names[0]: (True, 'true'), group.names[1]: (False, None),
                                    group.names[2]: (False, None)}
    # The nodes never admitted were not touched: their pods were not evicted.
    for i, node in enumerate(group.names[1:], start=1):
        assert web[node] in {p.metadata.uid for p in _running(cluster, namespace, f'app=web-{i}', 1, node)}

    # Fixed, run again: the role takes its own cordon over on the failed node and hands every node back.
    playbook = project.playbook(ONE_AT_A_TIME, {'nodewright_maintenance_role': 'my_tuning'}, name='retry.yml')
    result = playbooks.run(playbook, inventory=project.inventory, cwd=str(tmp_path))
    assert result.rc == 0, result
    assert [e['node'] for e in project.records('step')] == [group.names[0]] + group.names
    assert _cordon_state(group) == {name: (False, None) for name in group.names}


def test_uncordon_on_failure_and_foreign_cordons(cluster, playbooks, nodes, tmp_path):
    group = nodes(2)
    project = Project(tmp_path, group)
    # Someone else (kubectl cordon) cordoned the second node before the run.
    cluster.core.patch_node(group.names[1], {'spec': {'unschedulable': True}})
    playbook = project.playbook(
        {'nodewright_interruption_budget': {'count': 2}, 'fail_nodes': [group.names[0]]},
        {'nodewright_maintenance_role': 'my_tuning', 'nodewright_uncordon_on_failure': True})

    result = playbooks.run(playbook, inventory=project.inventory, cwd=str(tmp_path))
    assert result.rc == 2, result
    # The failed node is handed back, as asked; the foreign cordon is left in place.
    assert not group.read(group.names[0]).spec.unschedulable
    assert group.read(group.names[1]).spec.unschedulable is True
    assert _cordon_state(group)[group.names[0]] == (False, None)
    assert (group.read(group.names[1]).metadata.annotations or {}).get(CORDON) is None
    assert project.window(group.names[1])['unschedulable'] is True
    assert 'stays cordoned' in result.stdout


def test_expected_reboot_is_waited_for(cluster, playbooks, nodes, tmp_path):
    group = nodes(2)
    project = Project(tmp_path, group)
    rebooting, silent = group.names
    before = {name: group.read(name).status.node_info.boot_id for name in group.names}
    playbook = project.playbook(
        {'nodewright_interruption_budget': {'count': 2}, 'no_reboot': [silent]},
        {'nodewright_maintenance_tasks': 'tasks/reboot.yml', 'nodewright_maintenance_expect_reboot': True,
         'nodewright_health_timeout': 20})

    result = playbooks.run(playbook, inventory=project.inventory, cwd=str(tmp_path))
    assert result.rc == 2, result
    # The node that rebooted (after the step had returned): the gate waited for its new boot.
    window = project.window(rebooting)
    after = group.read(rebooting).status.node_info.boot_id
    assert after != before[rebooting]
    assert window['boot_id_before'] == before[rebooting] and window['boot_id_after'] == after
    assert project.reboot_log.read_text().split()[:2] == [rebooting, after]
    assert _cordon_state(group)[rebooting] == (False, None)
    # The node that never rebooted fails the gate and stays cordoned.
    assert group.read(silent).status.node_info.boot_id == before[silent]
    assert _cordon_state(group)[silent] == (True, 'true')
    assert f'maintenance of node {silent} failed at "Health gate"' in result.stdout
    assert 'still the one from before the reboot' in result.stdout


FAKE_SUDO = """#!/bin/sh
# sudo stand-in: log what is run as root, then run it (as the same user).
echo "$*" >> "$(dirname "$0")/become.log"
while [ $# -gt 0 ] && [ "$1" != /bin/sh ]; do shift; done
exec "$@"
"""


def test_cluster_calls_never_become(cluster, playbooks, nodes, tmp_path):
    """A play with become: true (for the user's step on the node) must not run the API calls as root."""
    group = nodes(1)
    project = Project(tmp_path, group)
    sudo = tmp_path / 'sudo'
    sudo.write_text(FAKE_SUDO)
    sudo.chmod(0o755)
    # become_user: root to root would skip become altogether.
    playbook = project.playbook({'nodewright_interruption_budget': {'count': 1}, 'ansible_become_exe': str(sudo)},
                                {'nodewright_maintenance_role': 'my_tuning'}, become=True, become_user='daemon')
    result = playbooks.run(playbook, inventory=project.inventory, cwd=str(tmp_path))
    assert result.rc == 0, result
    log = (tmp_path / 'become.log').read_text()
    assert 'AnsiballZ_command.py' in log and 'AnsiballZ_copy.py' in log  # the user's step ran with become
    assert 'AnsiballZ_node_' not in log  # node_cordon, node_drain, node_health did not
    assert _cordon_state(group) == {group.names[0]: (False, None)}


def test_role_input_is_checked(cluster, playbooks, nodes, tmp_path):
    group = nodes(1)
    project = Project(tmp_path, group)
    playbook = project.playbook({'nodewright_interruption_budget': {'count': 1}},
                                {'nodewright_maintenance_role': 'my_tuning',
                                 'nodewright_maintenance_tasks': 'tasks/reboot.yml'})
    result = playbooks.run(playbook, inventory=project.inventory, cwd=str(tmp_path))
    assert result.rc == 2, result
    assert 'set exactly one of nodewright_maintenance_role' in result.stdout
    assert _cordon_state(group) == {group.names[0]: (False, None)}
    assert not project.records()


def test_the_role_file_is_tidy():
    """Every task of the role has a name and an FQCN action (ansible-lint is not available here)."""
    root = Path(__file__).resolve().parents[2] / 'roles' / 'maintenance'
    keywords = {'name', 'when', 'register', 'delegate_to', 'environment', 'block', 'rescue', 'always',
                'become', 'loop', 'loop_control', 'changed_when', 'failed_when', 'vars', 'tags', 'notify'}

    def walk(tasks):
        for task in tasks:
            assert task.get('name'), task
            if 'block' in task:
                walk(task['block'])
                walk(task.get('rescue', []))
                walk(task.get('always', []))
                continue
            actions = [k for k in task if k not in keywords]
            assert len(actions) == 1 and actions[0].count('.') >= 2, task
    walk(yaml.safe_load((root / 'tasks' / 'main.yml').read_text()))
    spec = yaml.safe_load((root / 'meta' / 'argument_specs.yml').read_text())['argument_specs']['main']['options']
    defaults = yaml.safe_load((root / 'defaults' / 'main.yml').read_text())
    assert set(spec) == set(defaults)
    for name, option in spec.items():
        assert option.get('default') == defaults[name], name
