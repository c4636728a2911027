# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""rollout_metrics' run without a cluster: the reads cr_status.compute makes answered by a stand-in client, the
Pushgateway a local HTTP server (test_metrics_sink's). The module against the test cluster, a real Pushgateway and a
real Prometheus: tests/kube/test_rollout_metrics.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import socket

import pytest

from ansible_collections.nodewright.bridge.plugins.module_utils.model import api_generation
from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube as kube_api
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import node_annotations
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import operator_metrics
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import protected_wait
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import rollout_metrics
from ansible_collections.nodewright.bridge.tests.unit.plugins.module_utils.cluster_support import FakeModule, execute
from ansible_collections.nodewright.bridge.tests.unit.plugins.module_utils.test_metrics_sink import FakePushgateway

CR = {'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'Skyhook',
      'metadata': {'name': 'gpu', 'generation': 1, 'resourceVersion': '10',
                   'annotations': {'skyhook.nvidia.com/version': 'v0.15.0'}},
      'spec': {'nodeSelectors': {'matchLabels': {'pool': 'gpu'}}, 'deploymentPolicy': 'racks',
               'packages': {'tuning': {'version': '1.0.0', 'image': 'ghcr.io/x/tuning'}}}}
POLICY = {'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'DeploymentPolicy', 'metadata': {'name': 'racks'},
          'spec': {'default': {'budget': {'count': 1}, 'strategy': {'linear': {}}}}}


class FakeKube(object):
    """The reads cr_status.compute and rollout_metrics make, for a CR of ``gen`` with two nodes."""

    def __init__(self, gen=api_generation.SKYHOOK, policy=True):
        self.generation = gen
        self.cr = copy.deepcopy(CR)
        if gen is api_generation.NODEWRIGHT:
            self.cr.update(apiVersion=gen.api_version, kind='NodeWright')
            self.cr['metadata']['annotations'] = {}
        self.policy = policy
        self.reads = []
        self.waiting = {}  # node -> its protected-wait record (protected_wait.encode)

    def get_cr(self, name, api_version=None, fresh=False):
        self.reads.append('cr ' + name)
        return copy.deepcopy(self.cr)

    def get_policy(self, name):
        self.reads.append('policy ' + name)
        if not self.policy:
            raise kube_api.NotFound('get deploymentpolicies %s: not found' % name, 404)
        return copy.deepcopy(POLICY)

    def list_nodes(self, label_selector=None):
        self.reads.append('nodes')
        state = node_annotations.upsert({}, 'tuning', '1.0.0', 'ghcr.io/x/tuning', 'complete', 'config')[0]
        gen = self.generation

        waiting_state = node_annotations.upsert({}, 'tuning', '1.0.0', 'ghcr.io/x/tuning', 'in_progress', 'apply')[0]

        def item(name, status):
            annotations = {node_annotations.node_state_key('gpu', gen): node_annotations.encode(state),
                           node_annotations.status_key('gpu', gen): status}
            if name in self.waiting:  # a node waiting for its protected pods has work left
                annotations[protected_wait.key('gpu')] = self.waiting[name]
                annotations[node_annotations.node_state_key('gpu', gen)] = node_annotations.encode(waiting_state)
                annotations[node_annotations.status_key('gpu', gen)] = 'in_progress'
            return {'metadata': {'name': name, 'labels': {'pool': 'gpu'}, 'annotations': annotations}}
        return {'items': [item('n1', 'complete'), item('n2', 'complete')]}


@pytest.fixture
def gateway():
    made = FakePushgateway()
    yield made
    made.stop()


def closed_url():
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return 'http://127.0.0.1:%d' % sock.getsockname()[1]


def module(check_mode=False, **params):
    return FakeModule(rollout_metrics, check_mode=check_mode, **dict(dict(cr_name='gpu'), **params))


def test_the_crs_series_go_to_its_own_group_replaced_whole(gateway):
    kube = FakeKube()
    result = rollout_metrics.run(module(pushgateway_url=gateway.url), kube)

    assert result['changed'] is True and result['pushed'] is True and result['written'] is False
    assert result['group_url'] == gateway.url + '/metrics/job/nodewright-bridge/skyhook_name/gpu'
    assert 'error' not in result
    [(method, path, dummy_headers, body)] = gateway.requests
    assert (method, path) == ('PUT', '/metrics/job/nodewright-bridge/skyhook_name/gpu')
    assert body == result['metrics']
    assert 'skyhook_node_status_count{skyhook_name="gpu",status="complete"} 2\n' in body
    assert 'skyhook_status{skyhook_name="gpu",status="complete"} 1\n' in body
    # the policy's compartment with its strategy type
    assert ('skyhook_rollout_matched_nodes{skyhook_name="gpu",policy_name="racks",compartment_name="__default__",'
            'strategy="linear"} 2\n') in body
    assert result['series'] == sum(1 for line in body.splitlines() if not line.startswith('#'))
    # one read each: the status's reads serve the policy's labels and the waits too
    assert kube.reads == ['cr gpu', 'policy racks', 'nodes']
    assert 'bridge_protected_wait_seconds' not in body


def test_check_mode_computes_and_pushes_nothing(gateway):
    result = rollout_metrics.run(module(check_mode=True, pushgateway_url=gateway.url), FakeKube())
    assert result['changed'] is True and result['pushed'] is False
    assert 'skyhook_node_target_count{skyhook_name="gpu"} 2' in result['metrics']
    assert gateway.requests == []
    # no sink: the series are computed and returned, nothing changes
    result = rollout_metrics.run(module(), FakeKube())
    assert result['changed'] is False and result['metrics']


def test_a_pushgateway_that_does_not_answer_is_one_warning_and_the_task_is_ok():
    url = closed_url()
    mod = module(pushgateway_url=url, pushgateway_timeout=2)
    result = rollout_metrics.run(mod, FakeKube())

    assert result['changed'] is False and result['pushed'] is False and result['metrics']
    assert result['error'].startswith('the metrics of gpu were not written (the sink keeps what it had: nothing '
                                      'half-written): cannot push the metrics to the Pushgateway: PUT %s/metrics/job/'
                                      'nodewright-bridge/skyhook_name/gpu: ' % url)
    assert mod.warnings == [result['error'] + '; the rollout goes on (on_error=fail stops the play on it)']

    quiet = module(pushgateway_url=url, on_error='ignore')
    assert rollout_metrics.run(quiet, FakeKube())['error'] and quiet.warnings == []


def test_on_error_fail_fails_the_task_with_the_message(monkeypatch):
    url = closed_url()
    mod = execute(monkeypatch, rollout_metrics, module(pushgateway_url=url, on_error='fail'), FakeKube())
    assert mod.failed['msg'].startswith('the metrics of gpu were not written')
    assert url in mod.failed['msg'] and mod.failed['pushed'] is False and mod.failed['metrics']


def test_nodewright_groups_by_nodewright_name_and_may_drop_the_legacy_twins(gateway):
    kube = FakeKube(api_generation.NODEWRIGHT)
    result = rollout_metrics.run(module(pushgateway_url=gateway.url, grouping={'cluster': 'prod'}), kube)
    assert gateway.requests[0][1] == '/metrics/job/nodewright-bridge/cluster/prod/nodewright_name/gpu'
    assert 'nodewright_node_status_count{nodewright_name="gpu",status="complete"} 2\n' in result['metrics']
    assert 'skyhook_node_status_count{skyhook_name="gpu",status="complete"} 2\n' in result['metrics']
    assert 'package_restarts_count' not in result['metrics']

    result = rollout_metrics.run(module(pushgateway_url=gateway.url, legacy_metrics=False), FakeKube(api_generation.NODEWRIGHT))
    assert 'skyhook_' not in result['metrics']


def test_a_missing_policy_means_no_compartment_series(gateway):
    result = rollout_metrics.run(module(pushgateway_url=gateway.url), FakeKube(policy=False))
    assert 'rollout_' not in result['metrics']
    assert 'skyhook_status{skyhook_name="gpu",status="blocked"} 1' in result['metrics']


def test_state_absent_deletes_the_group_and_the_textfile(gateway, tmp_path):
    present = rollout_metrics.run(module(pushgateway_url=gateway.url, textfile_dir=str(tmp_path)), FakeKube())
    assert present['written'] is True and present['textfile'] == str(tmp_path / 'nodewright-bridge_gpu.prom')
    assert (tmp_path / 'nodewright-bridge_gpu.prom').read_text() == present['metrics']

    result = rollout_metrics.run(module(pushgateway_url=gateway.url, textfile_dir=str(tmp_path), state='absent'),
                                 FakeKube())
    assert result['changed'] is True and result['pushed'] is True and result['written'] is True
    assert gateway.requests[-1][:2] == ('DELETE', '/metrics/job/nodewright-bridge/skyhook_name/gpu')
    assert not (tmp_path / 'nodewright-bridge_gpu.prom').exists()
    assert 'metrics' not in result


def test_bad_options_fail_before_any_read(monkeypatch):
    kube = FakeKube()
    mod = execute(monkeypatch, rollout_metrics, module(pushgateway_url='pushgateway:9091'), kube)
    assert mod.failed['msg'] == "pushgateway_url: 'pushgateway:9091' is not an http:// or https:// URL of a Pushgateway"
    mod = execute(monkeypatch, rollout_metrics, module(pushgateway_url='http://pg:9091',
                                                       grouping={'job': 'x', 'bad-name': 'y', 'ok': 'z'}), kube)
    assert mod.failed['msg'].startswith('grouping: bad-name, job: not a label name')
    assert kube.reads == []


def test_extra_gauges_go_into_the_same_push_after_the_operators():
    params = module().params
    extra = [operator_metrics.node_gauge('protected_pods_wait_seconds', 'Seconds waited', {'n1': 4})]
    text, series = rollout_metrics.metrics_of(FakeKube(), params, extra_gauges=extra)
    assert text.endswith('# TYPE skyhook_protected_pods_wait_seconds gauge\n'
                         'skyhook_protected_pods_wait_seconds{skyhook_name="gpu",node="n1"} 4\n')
    assert series == rollout_metrics.metrics_of(FakeKube(), params)[1] + 1


def test_a_node_waiting_for_its_protected_pods_has_its_wait_in_seconds_without_a_legacy_twin():
    kube = FakeKube(gen=api_generation.NODEWRIGHT)
    kube.waiting['n2'] = protected_wait.encode('2026-12-06T23:00:00Z', ['ml/train-0'], True)
    result = rollout_metrics.run(module(), kube)
    [line] = [x for x in result['metrics'].splitlines() if x.startswith('nodewright_bridge_protected_wait_seconds{')]
    assert line.startswith('nodewright_bridge_protected_wait_seconds{nodewright_name="gpu",node="n2"} ')
    assert float(line.split()[-1]) > 0
    assert 'skyhook_bridge_protected_wait_seconds' not in result['metrics']
    assert 'skyhook_node_status_count' in result['metrics']  # the operator's own twins stay
