# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""nodewright.bridge.plan without a cluster: the example CR over a nodes file, read on one screen (on every
ansible-core of the matrix: a new user's first command)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re
import subprocess

from strategy_helpers import BIN_DIR, REPO_ROOT, ansible_env

EXAMPLE = os.path.join(REPO_ROOT, 'examples', 'gpu-node-tuning.yaml')


def _nodes(count=24):
    """``kubectl get nodes -o json`` of ``count`` GPU nodes, half in rack a, half in rack b (the example's compartments)."""
    return {'apiVersion': 'v1', 'kind': 'List', 'items': [
        {'apiVersion': 'v1', 'kind': 'Node', 'spec': {},
         'metadata': {'name': 'gpu-node-%02d' % i, 'labels': {'nodepool': 'gpu', 'rack': 'a' if i < count // 2 else 'b'}}}
        for i in range(count)]}


def _plan(tmp_path, collections_dir, nodes, *extra):
    (tmp_path / 'nodes.json').write_text(json.dumps(nodes))
    env = ansible_env(collections_dir, str(tmp_path), KUBECONFIG=str(tmp_path / 'no-such-kubeconfig'))
    for key in [k for k in env if k.startswith('K8S_AUTH_')]:
        del env[key]
    cmd = [os.path.join(BIN_DIR, 'ansible-playbook'), 'nodewright.bridge.plan', '-e', 'nodewright_cr=%s' % EXAMPLE,
           '-e', 'nodewright_nodes=nodes.json'] + list(extra)
    env['PWD'] = str(tmp_path)
    return subprocess.run(cmd, cwd=str(tmp_path), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, timeout=300, check=False)


def _lines(stdout):
    block = stdout[stdout.index('TASK [Show the plan]'):]
    return json.loads(block[block.index('{'):block.index('\n}\n') + 2])['msg']


def test_a_plan_from_a_cr_file_and_a_nodes_file_needs_no_cluster_and_fits_a_screen(tmp_path, collections_dir):
    """The README's first command: the example CR over the example's 24 nodes (examples/nodes-24.json)."""
    with open(os.path.join(REPO_ROOT, 'examples', 'nodes-24.json'), encoding='utf-8') as handle:
        run = _plan(tmp_path, collections_dir, json.load(handle))
    assert run.returncode == 0, run.stdout[-3000:]
    lines = _lines(run.stdout)
    assert len(lines) <= 30, lines
    assert lines[:2] == ['== gpu-node-tuning (priority 200, sequencing node)',
                         '   24 nodes: 0 complete, 24 to update (24 drained); policy gpu-fleet-rollout']
    assert '   compartment rack-b: 8 nodes, ceiling 4, batches [1, 2, 3, 2]' in lines
    assert '     batch 1: gpu-node-00, gpu-node-01' in lines
    # the eight nodes of a rack that do the same thing: one group, what runs as the node is, and after its drain
    group = lines.index('   gpu-node-00, gpu-node-01, gpu-node-02, gpu-node-03, gpu-node-04, gpu-node-05, gpu-node-06, '
                        'gpu-node-07 [rack-a]; interrupt reboot:')
    assert lines[group + 1] == '     on the node as it is: kernel-tuning 1.4.0 (apply, config)'
    assert re.match(r'     after the drain: gpu-driver \S+ \(apply, config, interrupt, post-interrupt\), nccl-tuning',
                    lines[group + 2]), lines
    assert sum(1 for line in lines if line.startswith('   gpu-node-')) == 3, 'one group per rack'


def test_the_plan_as_json_on_request(tmp_path, collections_dir):
    run = _plan(tmp_path, collections_dir, _nodes(20), '-e', 'nodewright_plan_output=json')
    assert run.returncode == 0, run.stdout[-3000:]
    report = _lines(run.stdout)
    assert report['order'] == ['gpu-node-tuning'] and len(report['crs']['gpu-node-tuning']['nodes']) == 20
    # a long list of like nodes cut in its middle, in the lines the JSON carries too
    assert '   gpu-node-00, gpu-node-01, gpu-node-02, gpu-node-03, gpu-node-04, ... gpu-node-07, gpu-node-08, gpu-node-09 ' \
           '(10) [rack-a]; interrupt reboot:' in report['lines'], report['lines']


def test_a_nodes_file_that_is_not_a_node_list_is_refused_naming_it(tmp_path, collections_dir):
    run = _plan(tmp_path, collections_dir, {'kind': 'Node', 'metadata': {'name': 'one'}})
    assert run.returncode != 0
    assert 'nodewright_nodes: nodes.json is not a node list' in run.stdout, run.stdout[-3000:]
