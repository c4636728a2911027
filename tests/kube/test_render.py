# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""nodewright.bridge.render against the test cluster: the rendered playbook does what apply does.

The scenario (module scope, run once): two pools of fresh nodes; the same CR (three packages
with dependsOn, two service interrupts merged into one, configMaps, a DeploymentPolicy) twice,
differing only in name and nodeSelectors. Pool A gets ``nodewright.bridge.apply``; pool B gets
the playbook ``nodewright.bridge.render`` wrote, run with plain ``ansible-playbook <file>``. The
nodes' NodeWright annotations and labels (the CR name taken out of the keys), their cordons and
the rollout's batches must be the same. Then: a re-run changes nothing, a node part-way through
resumes, a node the playbook was not rendered for is refused untouched, and a playbook rendered
from a CR in the cluster stops when the CR changed.
"""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import yaml

import launcher  # tests/cluster, put on the path by conftest
import rbac_identity  # tests/kube

GROUP, VERSION = 'skyhook.nvidia.com', 'v1alpha1'
POOL_LABEL = 'nodewright.bridge/render-pool'
PKG_IMAGE = 'registry.local/nodewright/tuning'
_NODE_INDEX = [1500]

PACKAGES = {
    'kernel-tuning': {
        'version': '1.4.0', 'image': PKG_IMAGE,
        'interrupt': {'type': 'service', 'services': ['containerd']},
        'configMap': {'apply.sh': '#!/bin/bash\nset -e\nsysctl -w vm.swappiness=1\n',
                      'apply_check.sh': '#!/bin/bash\nsysctl -n vm.swappiness | grep -qx 1'},
    },
    'nic-tuning': {
        'version': '0.3.0', 'image': PKG_IMAGE,
        'interrupt': {'type': 'service', 'services': ['kubelet']},
    },
    'gpu-agent': {
        'version': '2.1.0', 'image': PKG_IMAGE,
        'dependsOn': {'kernel-tuning': '1.4.0', 'nic-tuning': '0.3.0'},
        'env': [{'name': 'AGENT_MODE', 'value': 'strict'}],
        # Jinja-looking text must reach the ConfigMap as it is, not be templated by Ansible.
        'configMap': {'agent.conf': 'level: {{ not_a_template }}\nmode: "{% raw %}"\n'},
    },
}

# The order a fresh node runs them: wave 1 (kernel-tuning, nic-tuning; stage by stage, their
# interrupts merged into kernel-tuning's), then wave 2 (gpu-agent).
STEP_TASKS = [
    'kernel-tuning 1.4.0: apply',
    'nic-tuning 0.3.0: apply',
    'kernel-tuning 1.4.0: config',
    'nic-tuning 0.3.0: config',
    'kernel-tuning 1.4.0: interrupt, restart containerd, kubelet (also for nic-tuning)',
    'kernel-tuning 1.4.0: post-interrupt',
    'nic-tuning 0.3.0: post-interrupt',
    'gpu-agent 2.1.0: apply',
    'gpu-agent 2.1.0: config',
]


def cr_documents(name, pool):
    policy = f'{name}-policy'
    cr = {
        'apiVersion': f'{GROUP}/{VERSION}', 'kind': 'Skyhook', 'metadata': {'name': name},
        'spec': {
            'nodeSelectors': {'matchLabels': {POOL_LABEL: pool}},
            'podNonInterruptLabels': {'matchLabels': {'workload': 'training'}},
            'deploymentPolicy': policy,
            'packages': copy.deepcopy(PACKAGES),
        },
    }
    policy_doc = {
        'apiVersion': f'{GROUP}/{VERSION}', 'kind': 'DeploymentPolicy', 'metadata': {'name': policy},
        'spec': {'default': {'budget': {'count': 2}, 'strategy': {'fixed': {'initialBatch': 1}}}},
    }
    return [cr, policy_doc]


def write_cr(path, name, pool):
    path.write_text(yaml.safe_dump_all(cr_documents(name, pool), sort_keys=False))
    return path


class _Loader(yaml.SafeLoader):  # pylint: disable=too-many-ancestors
    """YAML with Ansible's !unsafe tag (the embedded CR is marked so: it is never templated)."""


def _unsafe(loader, node):
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node, deep=True)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return loader.construct_scalar(node)


_Loader.add_constructor('!unsafe', _unsafe)


def _no_duplicate_keys(loader, node, deep=False):
    keys = [loader.construct_object(pair[0], deep=deep) for pair in node.value]
    dupes = sorted(set(k for k in keys if keys.count(k) > 1))
    assert not dupes, f'duplicate keys {dupes} at line {node.start_mark.line + 1}'
    return loader.construct_mapping(node, deep=deep)


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _no_duplicate_keys)


def node_state(cluster, name, cr):
    """The NodeWright state of a node for a CR, with the CR's name taken out of the keys."""
    node = cluster.core.read_node(name)
    annotations = node.metadata.annotations or {}
    labels = node.metadata.labels or {}

    def mine(items):
        out = {}
        for key, value in items.items():
            if key.endswith('_' + cr):
                key = key[:-len(cr)] + '<cr>'
                if '/nodeState_' in key:
                    value = json.loads(value)
                out[key] = value
        return out
    return {
        'annotations': mine(annotations),
        'labels': mine(labels),
        'unschedulable': bool(node.spec.unschedulable),
        'taints': sorted((t.key, t.value, t.effect) for t in node.spec.taints or []
                         if t.key.startswith('skyhook.nvidia.com')),
    }


def recap(stdout):
    """host -> {ok, changed, ..., failed} from the PLAY RECAP."""
    hosts = {}
    for line in stdout.split('PLAY RECAP')[-1].splitlines():
        match = re.match(r'^(\S+)\s*:\s*(ok=.*)$', line.strip())
        if match:
            hosts[match.group(1)] = {k: int(v) for k, v in re.findall(r'(\w+)=(\d+)', match.group(2))}
    return hosts


def task_results(stdout, task):
    """host -> status (ok, changed, skipping, failed) of a task, by its name, in a run's output."""
    out = {}
    for block in stdout.split('TASK [')[1:]:
        if not block.startswith(task + ']'):
            continue
        for status, host in re.findall(r'^(ok|changed|skipping|failed|fatal): \[([^\]]+)\]', block, re.M):
            out[host] = status
    return out


def batch_sizes(report):
    """The batch sizes of the budgeted plays that ran any batch, per compartment."""
    sizes = []
    for rollout in (report or {}).get('rollouts', []):
        for name, comp in rollout['compartments'].items():
            if comp['batches']:
                sizes.append((name, [b['size'] for b in comp['batches']]))
    return sizes


def all_tasks(tasks):
    for task in tasks:
        yield task
        for section in ('block', 'rescue', 'always'):
            yield from all_tasks(task.get(section) or [])


def module_of(task):
    keys = set(task) - {'name', 'when', 'register', 'vars', 'loop', 'loop_control', 'environment', 'changed_when',
                        'block', 'rescue', 'always', 'delegate_to', 'failed_when', 'tags'}
    assert len(keys) == 1, f'{task.get("name")}: cannot tell the module from {sorted(keys)}'
    return keys.pop()


@pytest.fixture(scope='module')
def scenario(cluster, playbooks, tmp_path_factory):  # pylint: disable=redefined-outer-name
    """Pools A and B, CR files, the package namespace; apply on A, render for B and run it on B."""
    work = tmp_path_factory.mktemp('render')
    tag = uuid.uuid4().hex[:5]
    namespace = f't-render-{tag}'
    cluster.create_namespace(namespace)
    # The package pods' namespace: the apply identity's RoleBinding there, as a user makes (docs/rbac.md).
    rbac_identity.bind_namespace(cluster.api, namespace)
    pools = {}
    for pool in ('a', 'b'):
        names = [f'r-{tag}-{pool}{i}' for i in range(2)]
        launcher.create_nodes(cluster.api, names, labels={POOL_LABEL: f'{tag}-{pool}'}, start_index=_NODE_INDEX[0])
        _NODE_INDEX[0] += len(names)
        pools[pool] = names
    launcher.wait_nodes_ready(cluster.api, pools['a'] + pools['b'], timeout=60)
    crs = {'a': f'render-{tag}-a', 'b': f'render-{tag}-b'}
    files = {pool: write_cr(work / f'{pool}.yaml', crs[pool], f'{tag}-{pool}') for pool in ('a', 'b')}
    dest = work / 'out' / f'{crs["b"]}.playbook.yml'
    state = {'work': work, 'namespace': namespace, 'pools': pools, 'crs': crs, 'files': files, 'dest': dest,
             'labels': {pool: f'{tag}-{pool}' for pool in ('a', 'b')}, 'runs': {}}
    try:
        state['runs']['apply'] = playbooks.run('nodewright.bridge.apply', extra_vars={
            'nodewright_cr': str(files['a']), 'nodewright_namespace': namespace})
        state['runs']['render'] = playbooks.run('nodewright.bridge.render', extra_vars={
            'nodewright_cr': str(files['b']), 'nodewright_render_dest': str(dest), 'nodewright_namespace': namespace})
        # What the render left on pool B: nothing (it only plans).
        state['b_after_render'] = {n: node_state(cluster, n, crs['b']) for n in pools['b']}
        if state['runs']['render'].rc == 0:
            # Plain ansible-playbook on the file; the namespace was baked in when rendering.
            state['runs']['rendered'] = playbooks.run(str(dest))
        yield state
    finally:
        for name in pools['a'] + pools['b']:
            try:
                cluster.core.delete_node(name)
            except Exception:  # pylint: disable=broad-exception-caught
                pass
        cluster.delete_namespace(namespace)


def test_apply_and_render_succeed(scenario):  # pylint: disable=redefined-outer-name
    apply, render = scenario['runs']['apply'], scenario['runs']['render']
    assert apply.rc == 0, apply
    assert render.rc == 0, render
    assert scenario['dest'].is_file()
    assert f'{scenario["dest"]}: Skyhook {scenario["crs"]["b"]}, 10 steps per node' in render.stdout
    # Rendering plans and writes a file; the nodes are not touched.
    for name, state in scenario['b_after_render'].items():
        assert state == {'annotations': {}, 'labels': {}, 'unschedulable': False, 'taints': []}, name


def test_rendered_playbook_reads_as_a_playbook(scenario):  # pylint: disable=redefined-outer-name
    text = scenario['dest'].read_text()
    plays = yaml.load(text, Loader=_Loader)  # noqa: S506 - a SafeLoader with the !unsafe tag
    cr_b = scenario['crs']['b']
    header = text.split('\n- name:')[0]
    assert header.startswith('---\n# ')
    for needle in (f'from:        {scenario["files"]["b"]}', 'Rendered by nodewright.bridge.render on ',
                   f'CR:          Skyhook {cr_b} (skyhook.nvidia.com/v1alpha1), priority 200',
                   f'DeploymentPolicy {cr_b}-policy: default budget {{"count": 2}} fixed',
                   '1. kernel-tuning 1.4.0 (registry.local/nodewright/tuning); interrupt: restart containerd',
                   '3. gpu-agent 2.1.0 (registry.local/nodewright/tuning); depends on kernel-tuning 1.4.0, nic-tuning 0.3.0',
                   'restart containerd, kubelet, run by kernel-tuning (merged with the interrupts of nic-tuning)',
                   'at render time: 2 nodes selected, 0 complete, 2 to update'):
        assert needle in header, f'{needle!r} not in the header:\n{header}'

    assert [p['name'] for p in plays] == [f'{cr_b} | plan: which nodes need the CR',
                                          f'{cr_b} | update the nodes, batch by batch', f'{cr_b} | report']
    plan_play, node_play, report_play = plays
    # The CR and its policy are in the file, as written: it does not need the original any more.
    cr_doc, policy_doc = cr_documents(cr_b, scenario['labels']['b'])
    assert plan_play['vars']['nw_cr_document'] == cr_doc
    assert plan_play['vars']['nw_policy_document'] == policy_doc
    # Text that looks like Jinja is tagged !unsafe (per string: ansible-core 2.16 loses a tagged mapping).
    assert '              agent.conf: !unsafe |\n                level: {{ not_a_template }}\n' in text
    assert text.count('!unsafe') == 1 + text.count('# (Text that looks like Jinja is tagged !unsafe')
    assert [module_of(t) for t in plan_play['tasks']][1] == 'nodewright.bridge.rollout_plan'
    assert 'ansible.builtin.add_host' in [module_of(t) for t in plan_play['tasks']]

    assert node_play['strategy'] == 'nodewright.bridge.budgeted'
    assert node_play['vars']['nodewright_policy'] == "{{ hostvars['localhost'].nw_policy }}"
    assert node_play['vars']['nodewright_namespace'] == scenario['namespace']

    tasks = list(all_tasks(node_play['tasks']))
    for play in plays:
        for task in all_tasks(play['tasks']):
            if 'block' not in task:
                assert re.match(r'^(ansible\.builtin|nodewright\.bridge)\.[a-z_]+$', module_of(task)), task['name']
    names = [t['name'] for t in tasks]
    block = [t for t in node_play['tasks'] if 'block' in t]
    assert len(block) == 1 and block[0]['rescue'], 'the node work is one block with a rescue'
    inner = [t['name'] for t in block[0]['block']]
    steps = [n for n in inner if re.match(r'^[a-z-]+ \d', n)]
    assert steps == STEP_TASKS
    assert inner[0] == f'Cordon the node for {cr_b}'
    assert inner[1] == 'Wait until no pod matching workload=training runs, then drain'
    assert inner[-3:] == ['Check the node is healthy (Ready; pods matching nodewright_health_pod_selector Ready, if set)',
                          f'Record {cr_b} complete on the node', f'Uncordon (only {cr_b}\'s own cordon is released)']
    by_name = {t['name']: t for t in tasks}
    assert by_name[inner[1]]['nodewright.bridge.node_drain']['wait_for'] == {'matchLabels': {'workload': 'training'}}
    interrupt = by_name[STEP_TASKS[4]]
    assert interrupt['nodewright.bridge.node_interrupt']['interrupt'] == {'type': 'service',
                                                                          'services': ['containerd', 'kubelet']}
    assert interrupt['nodewright.bridge.node_interrupt']['covered'] == ['nic-tuning']
    assert interrupt['when'] == "'kernel-tuning:interrupt service containerd,kubelet' in nw_pending"
    for name in STEP_TASKS[:4] + STEP_TASKS[5:]:
        task = by_name[name]
        package, stage = name.split(' ', maxsplit=1)[0], name.split(': ')[1]
        assert task['nodewright.bridge.package_stage'] == {'node': '{{ inventory_hostname }}', 'package': package,
                                                           'stage': stage}
        assert task['when'] == f"'{package}:{stage}' in nw_pending"
    assert 'Fail the node' in names
    assert [module_of(t) for t in report_play['tasks']] == ['nodewright.bridge.rollout_plan', 'ansible.builtin.debug']


def test_rendered_playbook_passes_syntax_check(scenario, playbooks):  # pylint: disable=redefined-outer-name
    result = playbooks.run(str(scenario['dest']), extra_args=['--syntax-check'])
    assert result.rc == 0, result


def test_rendered_playbook_passes_yamllint(scenario):  # pylint: disable=redefined-outer-name
    # yamllint of the test virtualenv (ansible-lint's, requirements-test.txt: never missing, never skipped; ansible-test's
    # own virtualenv was used before, and broke when the Python it was made with was rebuilt), with ansible-test's
    # rules plus line-length 160.
    yamllint = os.path.join(os.path.dirname(sys.executable), 'yamllint')
    config = '{extends: default, rules: {line-length: {max: 160}}}'
    proc = subprocess.run([yamllint, '-f', 'parsable', '-d', config, str(scenario['dest'])],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_rendered_playbook_does_what_apply_does(scenario, cluster):  # pylint: disable=redefined-outer-name
    run = scenario['runs']['rendered']
    assert run.rc == 0, run
    crs, pools = scenario['crs'], scenario['pools']
    applied = {n: node_state(cluster, n, crs['a']) for n in pools['a']}
    rendered = {n: node_state(cluster, n, crs['b']) for n in pools['b']}
    expected = applied[pools['a'][0]]
    # what apply leaves: every package complete at its last stage, status complete, uncordoned
    packages = expected['annotations']['skyhook.nvidia.com/nodeState_<cr>']
    assert {k: (v['stage'], v['state']) for k, v in packages.items()} == {
        'kernel-tuning|1.4.0': ('post-interrupt', 'complete'), 'nic-tuning|0.3.0': ('post-interrupt', 'complete'),
        'gpu-agent|2.1.0': ('config', 'complete')}
    assert expected['annotations']['skyhook.nvidia.com/status_<cr>'] == 'complete'
    assert expected['labels'] == {'skyhook.nvidia.com/status_<cr>': 'complete'}
    assert not expected['unschedulable']
    assert not [k for k in expected['annotations'] if 'cordon' in k]
    for name, state in list(applied.items()) + list(rendered.items()):
        assert state == expected, f'{name}: {json.dumps(state, indent=1)}\n!= {json.dumps(expected, indent=1)}'
    # The same batches: the policy's fixed initialBatch 1 over 2 nodes.
    assert batch_sizes(scenario['runs']['apply'].report) == [('__default__', [1, 1])]
    assert batch_sizes(run.report) == [('__default__', [1, 1])]
    # The package ConfigMaps are the same too, Jinja-looking text included.
    data = {}
    for pool in ('a', 'b'):
        cm = cluster.core.read_namespaced_config_map(f'{crs[pool]}-gpu-agent-2.1.0', scenario['namespace'])
        data[pool] = cm.data
    assert data['a'] == data['b'] == PACKAGES['gpu-agent']['configMap']
    for host in pools['b']:
        statuses = {t: task_results(run.stdout, t).get(host) for t in STEP_TASKS}
        assert set(statuses.values()) == {'changed'}, statuses
    assert f'{crs["b"]}: 2/2 nodes complete' in run.stdout


def test_rerun_changes_nothing(scenario, cluster, playbooks):  # pylint: disable=redefined-outer-name
    crs, pools = scenario['crs'], scenario['pools']
    before = {n: node_state(cluster, n, crs['b']) for n in pools['b']}
    run = playbooks.run(str(scenario['dest']))
    assert run.rc == 0, run
    hosts = recap(run.stdout)
    assert all(counts['changed'] == 0 and counts['failed'] == 0 for counts in hosts.values()), hosts
    assert '0 to update' in run.stdout
    assert {n: node_state(cluster, n, crs['b']) for n in pools['b']} == before


def test_a_complete_node_left_cordoned_is_released(scenario, cluster, modules, playbooks):  # pylint: disable=redefined-outer-name
    crs, pools = scenario['crs'], scenario['pools']
    name = pools['b'][0]
    expected = node_state(cluster, name, crs['b'])
    # As if a run had stopped between recording the CR complete and its uncordon.
    cordon = modules.run('node_cordon', name=name, owner=crs['b'])
    assert cordon['rc'] == 0 and cordon['changed'], cordon
    assert node_state(cluster, name, crs['b'])['unschedulable']
    run = playbooks.run(str(scenario['dest']))
    assert run.rc == 0, run
    assert task_results(run.stdout, f'Release {crs["b"]}\'s cordon on complete nodes (a run stopped before its uncordon)') \
        == {'localhost': 'changed'}
    assert set(recap(run.stdout)) == {'localhost'}
    assert node_state(cluster, name, crs['b']) == expected


def test_a_node_part_way_resumes(scenario, cluster, modules, playbooks):  # pylint: disable=redefined-outer-name
    crs, pools = scenario['crs'], scenario['pools']
    name = pools['b'][0]
    expected = node_state(cluster, name, crs['b'])
    # As if the node had failed after the interrupt, before gpu-agent: still cordoned for the CR,
    # gpu-agent to run again (kubectl skyhook package rerun gpu-agent).
    reset = modules.run('node_state', name=name, cr=crs['b'], action='reset', package='gpu-agent')
    assert reset['rc'] == 0 and reset['changed'], reset
    cordon = modules.run('node_cordon', name=name, owner=crs['b'])
    assert cordon['rc'] == 0 and cordon['changed'], cordon
    run = playbooks.run(str(scenario['dest']))
    assert run.rc == 0, run
    assert set(recap(run.stdout)) == {'localhost', name}
    ran = {t: task_results(run.stdout, t).get(name) for t in STEP_TASKS}
    assert ran == {t: ('changed' if t.startswith('gpu-agent') else 'skipping') for t in STEP_TASKS}
    # No interrupt is due, so no new cordon or drain; the cordon left behind is released.
    for task in (f'Cordon the node for {crs["b"]}', 'Wait until no pod matching workload=training runs, then drain'):
        assert task_results(run.stdout, task) == {name: 'skipping'}, task
    assert task_results(run.stdout, f'Uncordon (only {crs["b"]}\'s own cordon is released)') == {name: 'changed'}
    assert node_state(cluster, name, crs['b']) == expected


def test_a_node_it_was_not_rendered_for_is_refused(scenario, cluster, modules, playbooks):  # pylint: disable=redefined-outer-name
    crs, pools = scenario['crs'], scenario['pools']
    name = pools['b'][1]
    # nic-tuning alone from its config stage: its own interrupt (kubelet) is due, not the merged one
    # the playbook was written with. apply would do it; the rendered playbook refuses, untouched.
    reset = modules.run('node_state', name=name, cr=crs['b'], action='reset', package='nic-tuning', stage='config')
    assert reset['rc'] == 0 and reset['changed'], reset
    before = node_state(cluster, name, crs['b'])
    run = playbooks.run(str(scenario['dest']))
    assert run.rc != 0, run
    assert (f'node {name} needs nic-tuning:interrupt service kubelet, which this playbook (rendered for nodes '
            f'without {crs["b"]}) does not do; nothing was changed') in run.stdout
    assert recap(run.stdout)[name]['changed'] == 0
    assert node_state(cluster, name, crs['b']) == before
    # Rendering again says so up front.
    render = playbooks.run('nodewright.bridge.render', extra_vars={
        'nodewright_cr': str(scenario['files']['b']), 'nodewright_render_dest': str(scenario['work'] / 'again.yml')})
    assert render.rc == 0, render
    warning = render.stdout.split('these nodes need steps the rendered playbook does not have')[1].split('\n')[0]
    assert name in warning and 'nic-tuning:interrupt service kubelet' in warning, warning
    assert f'#     {name}: nic-tuning:interrupt service kubelet' in (scenario['work'] / 'again.yml').read_text()


def test_render_from_the_cluster(cluster, crs, namespace, playbooks, tmp_path):  # pylint: disable=redefined-outer-name
    """A CR read from the cluster: the modules read it by name; a changed CR stops the playbook."""
    tag = uuid.uuid4().hex[:5]
    name = f'r-{tag}-c0'
    launcher.create_nodes(cluster.api, [name], labels={POOL_LABEL: f'{tag}-c'}, start_index=_NODE_INDEX[0])
    _NODE_INDEX[0] += 1
    try:
        launcher.wait_nodes_ready(cluster.api, [name], timeout=60)
        packages = {'tuning': {'version': '1.0.0', 'image': PKG_IMAGE, 'interrupt': {'type': 'noop'}}}
        cr = crs.create(packages, prefix='render', selector={POOL_LABEL: f'{tag}-c'}, interruptionBudget={'count': 1})
        cr_name = cr['metadata']['name']
        dest = tmp_path / 'sub' / 'dir' / 'from-cluster.yml'
        render = playbooks.run('nodewright.bridge.render', extra_vars={
            'nodewright_cr_name': cr_name, 'nodewright_render_dest': str(dest), 'nodewright_namespace': namespace})
        assert render.rc == 0, render
        text = dest.read_text()
        assert f'#   from:        the cluster (Skyhook {cr_name})' in text
        plays = yaml.load(text, Loader=_Loader)  # noqa: S506
        assert plays[1]['vars']['nodewright_interruption_budget'] == {'count': 1}
        assert plays[1]['module_defaults']['nodewright.bridge.package_stage']['cr_name'] == cr_name
        assert [t['name'] for t in plays[0]['tasks']][2:4] == [
            'Check that the CR and its policy in the cluster are still the ones rendered',
            'Refuse to act for a CR a running NodeWright operator reconciles']
        run = playbooks.run(str(dest))
        assert run.rc == 0, run
        state = node_state(cluster, name, cr_name)
        assert state['annotations']['skyhook.nvidia.com/status_<cr>'] == 'complete'
        assert {k: (v['stage'], v['state']) for k, v in state['annotations']['skyhook.nvidia.com/nodeState_<cr>'].items()} \
            == {'tuning|1.0.0': ('post-interrupt', 'complete')}
        assert not state['unschedulable']
        # The CR changes in the cluster: the rendered playbook no longer matches it and stops.
        crs.custom.patch_cluster_custom_object(GROUP, VERSION, 'skyhooks', cr_name,
                                               {'spec': {'packages': {'tuning': {'version': '1.1.0'}}}})
        again = playbooks.run(str(dest))
        assert again.rc != 0, again
        assert f'Skyhook {cr_name} (or its DeploymentPolicy) in the cluster changed since this playbook was rendered' \
            in again.stdout
        assert node_state(cluster, name, cr_name) == state
    finally:
        cluster.core.delete_node(name)


def test_render_refuses_a_file_with_several_crs(playbooks, tmp_path):  # pylint: disable=redefined-outer-name
    path = tmp_path / 'two.yaml'
    path.write_text(yaml.safe_dump_all(cr_documents('render-one', 'x') + cr_documents('render-two', 'y')))
    result = playbooks.run('nodewright.bridge.render', extra_vars={'nodewright_cr': str(path),
                                                                   'nodewright_render_dest': str(tmp_path / 'x.yml')})
    assert result.rc != 0, result
    assert 'holds several CRs (render-one, render-two): choose one with -e nodewright_cr_name=NAME' in result.stdout
    assert not (tmp_path / 'x.yml').exists()
    # With the name, the one CR is rendered.
    result = playbooks.run('nodewright.bridge.render', extra_vars={
        'nodewright_cr': str(path), 'nodewright_cr_name': 'render-two', 'nodewright_render_dest': str(tmp_path / 'x.yml')})
    assert result.rc == 0, result
    assert 'NodeWright CR render-two as a playbook' in (tmp_path / 'x.yml').read_text()


def test_template_ships_with_the_playbook():
    """The template is found next to the collection playbook (templates/ beside render.yml)."""
    here = Path(__file__).resolve().parents[2] / 'playbooks'
    assert (here / 'templates' / 'cr_playbook.yml.j2').is_file()
    assert 'src: cr_playbook.yml.j2' in (here / 'render.yml').read_text()
