# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""operator_metrics: the NodeWright operator's Prometheus series of a CR, from the status cr_status derives.

The expected series are the operator's: NVIDIA/nodewright operator/internal/controller/metrics.go @71ca22b8 (v0.15,
``skyhook_*``) and @f85e3ee8 (v0.18-v0.20: ``nodewright_*`` and their ``skyhook_*`` twins), set by
cluster_state_v2.go @71ca22b8 ReportState / setAllMetrics (every series of the CR zeroed, then set).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import re

import pytest

from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_validation
from ansible_collections.nodewright.bridge.plugins.module_utils.planning import status_rollup
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import node_annotations
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import operator_metrics as om
from ansible_collections.nodewright.bridge.plugins.module_utils.model.api_generation import NODEWRIGHT, SKYHOOK

NOW = '2026-12-02T10:00:00Z'
DOC = {
    'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'Skyhook',
    'metadata': {'name': 'gpu-tuning', 'generation': 2},
    'spec': {'nodeSelectors': {'matchLabels': {'pool': 'gpu'}}, 'interruptionBudget': {'count': 1},
             'packages': {'dexter': {'version': '1.2.3', 'image': 'ghcr.io/x/dexter'},
                          'tuning': {'version': '2.0.0', 'image': 'ghcr.io/x/tuning'}}},
}
NW_DOC = dict(copy.deepcopy(DOC), apiVersion=NODEWRIGHT.api_version, kind='NodeWright')
POLICY = {'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'DeploymentPolicy', 'metadata': {'name': 'racks'},
          'spec': {'default': {'budget': {'count': 1}, 'strategy': {'exponential': {}}},
                   'compartments': [{'name': 'rack-a', 'selector': {'matchLabels': {'rack': 'a'}}, 'budget': {'count': 2},
                                     'strategy': {'linear': {'delta': 1}}}]}}
# one sample line of the text format: name{labels} value
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*",?)*)\} (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\.)*)"')


def node(name, status, states=(), labels=None, gen=SKYHOOK, restarts=0):
    """A node of the CR (planner.normalise_nodes' shape): its status annotation and one state entry per package."""
    state = {}
    for package, version, stage, value in states:
        state = node_annotations.upsert(state, package, version, 'ghcr.io/x/' + package, value, stage, restarts)[0]
    annotations = {}
    if state:
        annotations[node_annotations.node_state_key('gpu-tuning', gen)] = node_annotations.encode(state)
    if status:
        annotations[node_annotations.status_key('gpu-tuning', gen)] = status
    return {'name': name, 'labels': dict(labels or {'pool': 'gpu'}), 'annotations': annotations}


def status_of(doc, nodes, gen=SKYHOOK, policy=None):
    model = cr_validation.build_cr(doc)
    wanted = status_rollup.wanted_status(model, doc, status_rollup.status_nodes(model, nodes, gen), policy=policy, now=NOW,
                                         gen=gen)
    return model, wanted


def parse(text):
    """``{(name, frozenset(labels)): value}``, ``{name: help}``, ``{name: type}``; fails on a line the text format
    (0.0.4) does not allow."""
    samples, helps, types = {}, {}, {}
    for line in text.splitlines():
        if line.startswith('# HELP '):
            name, dummy, text_ = line[7:].partition(' ')
            helps[name] = text_
        elif line.startswith('# TYPE '):
            name, dummy, kind = line[7:].partition(' ')
            types[name] = kind
        else:
            match = SAMPLE.match(line)
            assert match, 'not a sample line of the text format: %r' % line
            assert match.group(1) in types, 'a sample before its TYPE line: %r' % line
            labels = frozenset(LABEL.findall(match.group(2)))
            samples[(match.group(1), labels)] = float(match.group(3))
    return samples, helps, types


def value(samples, name, **labels):
    return samples[(name, frozenset(labels.items()))]


def of(samples, name):
    return dict((labels, v) for (n, labels), v in samples.items() if n == name)


TWO_NODES = [node('n1', 'complete', [('dexter', '1.2.3', 'config', 'complete'), ('tuning', '2.0.0', 'config', 'complete')]),
             node('n2', 'in_progress', [('dexter', '1.2.3', 'apply', 'in_progress')], restarts=2),
             node('n3', None)]


def test_a_v015_rollout_in_progress_has_the_operators_fourteen_gauges_zeros_included():
    model, wanted = status_of(DOC, TWO_NODES)
    text = om.exposition('gpu-tuning', om.operator_gauges(model, wanted), SKYHOOK)
    samples, helps, types = parse(text)

    assert sorted(types) == sorted(om.series_names(SKYHOOK)) and len(types) == 14
    assert set(types.values()) == set(['gauge'])
    assert helps['skyhook_status'] == ('Binary metric indicating the status of the Skyhook Custom Resource (1 if in '
                                       'that status, 0 otherwise)')
    # one status is 1, the seven others 0 (ResetSkyhookMetricsToZero, then SetSkyhookStatusMetrics)
    statuses = of(samples, 'skyhook_status')
    assert len(statuses) == 8 and sum(statuses.values()) == 1
    assert value(samples, 'skyhook_status', skyhook_name='gpu-tuning', status='in_progress') == 1
    # nodes by their status_<cr> (none: unknown), all eight statuses
    counts = dict((dict(labels)['status'], v) for labels, v in of(samples, 'skyhook_node_status_count').items())
    assert counts == {'complete': 1, 'in_progress': 1, 'unknown': 1, 'blocked': 0, 'waiting': 0, 'disabled': 0,
                      'paused': 0, 'erroring': 0}
    assert value(samples, 'skyhook_node_target_count', skyhook_name='gpu-tuning') == 3
    # each spec package: five states and seven stages, counted over the nodes' entries
    dexter = dict(skyhook_name='gpu-tuning', package_name='dexter', package_version='1.2.3')
    assert len(of(samples, 'skyhook_package_state_count')) == 2 * 5
    assert len(of(samples, 'skyhook_package_stage_count')) == 2 * 7
    assert value(samples, 'skyhook_package_state_count', state='complete', **dexter) == 1
    assert value(samples, 'skyhook_package_state_count', state='in_progress', **dexter) == 1
    assert value(samples, 'skyhook_package_stage_count', stage='apply', **dexter) == 1
    assert value(samples, 'skyhook_package_stage_count', stage='uninstall-interrupt', **dexter) == 0
    # restarts summed over the nodes, for the packages some node has an entry of
    assert value(samples, 'skyhook_package_restarts_count', **dexter) == 2
    assert value(samples, 'skyhook_package_restarts_count', skyhook_name='gpu-tuning', package_name='tuning',
                 package_version='2.0.0') == 0
    # no policy: the interruptionBudget's fixed __default__ compartment, policy "legacy"
    comp = dict(skyhook_name='gpu-tuning', policy_name='legacy', compartment_name='__default__', strategy='fixed')
    assert value(samples, 'skyhook_rollout_matched_nodes', **comp) == 3
    assert value(samples, 'skyhook_rollout_ceiling', **comp) == 1
    assert value(samples, 'skyhook_rollout_in_progress', **comp) == 1
    assert value(samples, 'skyhook_rollout_completed', **comp) == 1
    assert value(samples, 'skyhook_rollout_progress_percent', **comp) == 33
    assert value(samples, 'skyhook_rollout_current_batch', **comp) == 1
    assert value(samples, 'skyhook_rollout_should_stop', **comp) == 0


def test_the_text_orders_the_families_as_the_operator_registers_them_and_ends_with_a_newline():
    model, wanted = status_of(DOC, TWO_NODES)
    text = om.exposition('gpu-tuning', om.operator_gauges(model, wanted), SKYHOOK)
    families = [line.split()[2] for line in text.splitlines() if line.startswith('# TYPE ')]
    assert families == om.series_names(SKYHOOK)
    assert text.endswith('\n') and not text.endswith('\n\n')
    assert text.splitlines()[2] == 'skyhook_status{skyhook_name="gpu-tuning",status="blocked"} 0'


def test_nodewright_publishes_each_gauge_and_its_legacy_twin_with_the_same_values():
    nodes = [dict(n, annotations=dict((k.replace('skyhook.nvidia.com', 'nodewright.nvidia.com'), v)
                                      for k, v in n['annotations'].items())) for n in TWO_NODES]
    model, wanted = status_of(NW_DOC, nodes, gen=NODEWRIGHT)
    gauges = om.operator_gauges(model, wanted, restarts=om.naming(NODEWRIGHT)['restarts'])
    samples, helps, types = parse(om.exposition('gpu-tuning', gauges, NODEWRIGHT))

    assert sorted(types) == sorted(om.series_names(NODEWRIGHT)) and len(types) == 26
    assert 'nodewright_package_restarts_count' not in types and 'skyhook_package_restarts_count' not in types
    current = dict((k, v) for k, v in samples.items() if k[0].startswith('nodewright_'))
    legacy = dict((k, v) for k, v in samples.items() if k[0].startswith('skyhook_'))
    assert len(current) == len(legacy)
    for (name, labels), number in current.items():
        assert ('nodewright_name', 'gpu-tuning') in labels
        twin = frozenset(('skyhook_name', v) if k == 'nodewright_name' else (k, v) for k, v in labels)
        assert legacy[('skyhook_' + name[len('nodewright_'):], twin)] == number
    assert all('nodewright_name' not in dict(labels) for dummy, labels in legacy)
    assert helps['nodewright_node_status_count'] == 'Number of nodes in the cluster by status for the NodeWright Custom Resource'
    assert helps['skyhook_node_status_count'] == (
        'Number of nodes in the cluster by status for the NodeWright Custom Resource (DEPRECATED: use '
        'nodewright_node_status_count with the nodewright_name label; removed in v0.21.0)')
    assert value(samples, 'nodewright_node_status_count', nodewright_name='gpu-tuning', status='complete') == 1

    # PUBLISH_LEGACY_METRICS=false: the twins are not exported at all
    dummy, dummy_helps, types = parse(om.exposition('gpu-tuning', gauges, NODEWRIGHT, legacy=False))
    assert sorted(types) == sorted(om.series_names(NODEWRIGHT, legacy=False)) and len(types) == 13


def test_compartments_of_a_policy_carry_its_name_and_each_strategy_type():
    doc = copy.deepcopy(DOC)
    del doc['spec']['interruptionBudget']
    doc['spec']['deploymentPolicy'] = 'racks'
    policy = cr_validation.build_policy(POLICY)
    nodes = [node('a1', 'complete', [('dexter', '1.2.3', 'config', 'complete'), ('tuning', '2.0.0', 'config', 'complete')],
                  labels={'pool': 'gpu', 'rack': 'a'}),
             node('a2', 'erroring', [('dexter', '1.2.3', 'apply', 'erroring')], labels={'pool': 'gpu', 'rack': 'a'}),
             node('b1', 'waiting', labels={'pool': 'gpu', 'rack': 'b'})]
    model, wanted = status_of(doc, nodes, policy=policy)
    batch = {'currentBatch': 3, 'consecutiveFailures': 2, 'shouldStop': True}
    wanted['compartmentStatuses']['rack-a']['batchState'] = batch
    samples = parse(om.exposition('gpu-tuning', om.operator_gauges(model, wanted, policy), SKYHOOK))[0]

    rack_a = dict(skyhook_name='gpu-tuning', policy_name='racks', compartment_name='rack-a', strategy='linear')
    default = dict(skyhook_name='gpu-tuning', policy_name='racks', compartment_name='__default__', strategy='exponential')
    assert value(samples, 'skyhook_rollout_matched_nodes', **rack_a) == 2
    assert value(samples, 'skyhook_rollout_ceiling', **rack_a) == 2
    assert value(samples, 'skyhook_rollout_completed', **rack_a) == 1
    assert value(samples, 'skyhook_rollout_progress_percent', **rack_a) == 50
    assert value(samples, 'skyhook_rollout_current_batch', **rack_a) == 3
    assert value(samples, 'skyhook_rollout_consecutive_failures', **rack_a) == 2
    assert value(samples, 'skyhook_rollout_should_stop', **rack_a) == 1
    assert value(samples, 'skyhook_rollout_matched_nodes', **default) == 1
    assert value(samples, 'skyhook_node_status_count', skyhook_name='gpu-tuning', status='erroring') == 1
    assert value(samples, 'skyhook_package_state_count', skyhook_name='gpu-tuning', package_name='dexter',
                 package_version='1.2.3', state='erroring') == 1


def test_strategy_labels_follow_get_strategy_type():
    policy = cr_validation.build_policy(POLICY)
    assert om.compartment_strategy(None, '__default__') == 'fixed'  # the interruptionBudget's compartment
    assert om.compartment_strategy(policy, 'rack-a') == 'linear'
    assert om.compartment_strategy(policy, '__default__') == 'exponential'
    no_strategy = copy.deepcopy(POLICY)
    del no_strategy['spec']['compartments'][0]['strategy']
    assert om.compartment_strategy(cr_validation.build_policy(no_strategy), 'rack-a') == 'unknown'
    assert om.compartment_strategy(policy, 'gone') == 'unknown'


def test_a_missing_policy_has_no_rollout_series_and_a_paused_cr_says_paused():
    doc = copy.deepcopy(DOC)
    del doc['spec']['interruptionBudget']
    doc['spec']['deploymentPolicy'] = 'gone'
    model = cr_validation.build_cr(doc)
    wanted = status_rollup.wanted_status(model, doc, status_rollup.status_nodes(model, TWO_NODES), policy_missing=True, now=NOW)
    samples, dummy, types = parse(om.exposition('gpu-tuning', om.operator_gauges(model, wanted), SKYHOOK))
    assert not [name for name in types if name.startswith('skyhook_rollout_')]
    assert value(samples, 'skyhook_status', skyhook_name='gpu-tuning', status='blocked') == 1

    paused = copy.deepcopy(DOC)
    paused['metadata']['annotations'] = {'skyhook.nvidia.com/pause': 'true'}
    model, wanted = status_of(paused, TWO_NODES)
    samples = parse(om.exposition('gpu-tuning', om.operator_gauges(model, wanted), SKYHOOK))[0]
    assert value(samples, 'skyhook_status', skyhook_name='gpu-tuning', status='paused') == 1


def test_only_entries_of_the_specs_package_versions_count_and_a_malformed_state_counts_as_a_node_only():
    nodes = [node('n1', 'in_progress', [('dexter', '1.0.0', 'config', 'complete'), ('other', '9.9.9', 'apply', 'complete')]),
             dict(node('n2', 'erroring'), annotations={node_annotations.node_state_key('gpu-tuning'): '{not json',
                                                       node_annotations.status_key('gpu-tuning'): 'erroring'})]
    model, wanted = status_of(DOC, nodes)
    samples = parse(om.exposition('gpu-tuning', om.operator_gauges(model, wanted), SKYHOOK))[0]
    states = of(samples, 'skyhook_package_state_count')
    assert sum(states.values()) == 0 and len(states) == 10  # the old version and the unknown package are not counted
    assert of(samples, 'skyhook_package_restarts_count') == {}  # no node has an entry of a spec package
    assert value(samples, 'skyhook_node_target_count', skyhook_name='gpu-tuning') == 2
    assert value(samples, 'skyhook_node_status_count', skyhook_name='gpu-tuning', status='erroring') == 1


def test_the_status_as_written_in_a_cr_gives_the_same_series_as_the_wanted_status():
    # the status of a CR as read back (nodeState entries without their omitempty fields) reads the same
    model, wanted = status_of(DOC, TWO_NODES)
    stored = {'status': wanted['status'], 'nodeStatus': wanted['nodeStatus'], 'nodeState': wanted['nodeState'],
              'compartmentStatuses': wanted['compartmentStatuses']}
    assert om.exposition('x', om.operator_gauges(model, stored), SKYHOOK) == \
        om.exposition('x', om.operator_gauges(model, wanted), SKYHOOK)
    # a CR without any status yet: unknown, no node
    samples = parse(om.exposition('x', om.operator_gauges(model, {}), SKYHOOK))[0]
    assert value(samples, 'skyhook_status', skyhook_name='x', status='unknown') == 1
    assert value(samples, 'skyhook_node_target_count', skyhook_name='x') == 0


def test_the_node_gauge_hook_renders_per_node_series_with_the_crs_label_and_its_twin():
    gauges = [om.node_gauge('protected_pods_wait_seconds', 'Seconds the node waited on its protected pods',
                            {'n2': 12.5, 'n1': 0})]
    samples, helps, types = parse(om.exposition('gpu-tuning', gauges, NODEWRIGHT))
    assert types == {'nodewright_protected_pods_wait_seconds': 'gauge', 'skyhook_protected_pods_wait_seconds': 'gauge'}
    assert value(samples, 'nodewright_protected_pods_wait_seconds', nodewright_name='gpu-tuning', node='n2') == 12.5
    assert value(samples, 'skyhook_protected_pods_wait_seconds', skyhook_name='gpu-tuning', node='n1') == 0
    assert helps['skyhook_protected_pods_wait_seconds'].endswith('(DEPRECATED: use nodewright_protected_pods_wait_seconds '
                                                                 'with the nodewright_name label; removed in v0.21.0)')
    more = om.node_gauge('wait_seconds', 'help', None, label_names=('pod',), samples={('n1', 'ns/p'): 3})
    assert more.label_names == ('node', 'pod') and more.samples == [(('n1', 'ns/p'), 3)]
    # gauges without samples are left out; nothing at all is the empty text
    assert om.exposition('x', [om.node_gauge('empty', 'h', {})], SKYHOOK) == ''


def test_label_values_and_help_texts_are_escaped_and_values_formatted_as_the_text_format_wants():
    assert om.escape_label_value('a"b\\c\nd') == 'a\\"b\\\\c\\nd'
    assert om.escape_help('line\\one\ntwo "q"') == 'line\\\\one\\ntwo "q"'
    gauge = om.Gauge('odd', 'first\nsecond', ('what',), [(('quote"back\\slash\nnewline',), 1.5)])
    text = om.exposition('cr"x', [gauge], SKYHOOK)
    assert text == ('# HELP skyhook_odd first\\nsecond\n# TYPE skyhook_odd gauge\n'
                    'skyhook_odd{skyhook_name="cr\\"x",what="quote\\"back\\\\slash\\nnewline"} 1.5\n')
    assert parse(text)[0]
    assert [om.format_value(v) for v in (3, 2.0, 0.25, True, float('nan'), float('inf'), -float('inf'), 1e20)] == \
        ['3', '2', '0.25', '1', 'NaN', '+Inf', '-Inf', '1e+20']


def test_an_unknown_generation_is_refused():
    with pytest.raises(ValueError, match="no operator metrics for the API generation 'v9'"):
        om.naming('v9')
    assert om.naming(SKYHOOK)['label'] == 'skyhook_name' and om.naming('nodewright')['label'] == 'nodewright_name'
