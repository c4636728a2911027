# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""An edit of a package's configMap, rolled out by nodewright.bridge.apply as the operator rolls it out.

skyhook/config-skyhook: the package ConfigMap keeps the data a rollout under way started with; once the package is
complete on every node the changed keys go to status.configUpdates, the package goes back to its config stage, the
ConfigMap takes the new data, and the config stage and the configInterrupt of the changed key run.
"""

from __future__ import annotations

import json
import threading
import time
import uuid

import helpers
import pytest
import yaml
from kubernetes import client as kclient

import chainsaw_asserts
from nodewright_fixtures import GROUP, PLURAL, VERSION, package, skyhook

pytestmark = pytest.mark.cluster

PREFIX = 'skyhook.nvidia.com'


def _apply(playbooks, name, namespace):
    return playbooks.run('nodewright.bridge.apply', extra_vars={
        'nodewright_cr_name': name, 'nodewright_namespace': namespace, 'nodewright_stage_timeout': 90})


def _state(cluster, node, name):
    return json.loads(cluster.core.read_node(node).metadata.annotations['%s/nodeState_%s' % (PREFIX, name)])


def test_an_edit_waits_for_the_rollout_under_way_then_reruns_config_and_its_config_interrupt(
        cluster, playbooks, modules, node, namespace):
    custom = kclient.CustomObjectsApi(cluster.api)
    name = 'cfg-%s' % uuid.uuid4().hex[:6]
    value = uuid.uuid4().hex[:8]
    cluster.core.patch_node(node, {'metadata': {'labels': {'nodewright.bridge/config-edit': value}}})
    tuning = package(configMap={'a.conf': 'v1', 'b.conf': 'keep'},
                     configInterrupts={'a.conf': {'type': 'service', 'services': ['rsyslog']}})
    custom.create_cluster_custom_object(GROUP, VERSION, PLURAL, skyhook(
        name, {'tuning': tuning}, selector={'nodewright.bridge/config-edit': value}))
    cm_name = '%s-tuning-1.2.0' % name
    try:
        first = _apply(playbooks, name, namespace)
        assert first.rc == 0, first
        assert cluster.core.read_namespaced_config_map(cm_name, namespace).data == {'a.conf': 'v1', 'b.conf': 'keep'}
        assert _state(cluster, node, name)['tuning|1.2.0']['stage'] == 'config'  # no interrupt of its own

        # the package still rolling out on the node (as a run stopped after its apply stage leaves it): the edit waits
        done = _state(cluster, node, name)
        rolling = dict(done, **{'tuning|1.2.0': dict(done['tuning|1.2.0'], stage='apply', state='in_progress')})
        key = '%s/nodeState_%s' % (PREFIX, name)
        cluster.core.patch_node(node, {'metadata': {'annotations': {key: json.dumps(rolling)}}})
        custom.patch_cluster_custom_object(GROUP, VERSION, PLURAL, name, {'spec': {'packages': {'tuning': {
            'configMap': {'a.conf': 'v2', 'b.conf': 'keep', 'c.conf': 'new'}}}}})
        waiting = modules.run('package_config', cr_name=name, namespace=namespace)
        assert not waiting.get('failed') and waiting['changed'] is False, waiting
        assert waiting['packages']['tuning']['action'] == 'wait' and waiting['packages']['tuning']['keys'] == ['a.conf', 'c.conf']
        assert cluster.core.read_namespaced_config_map(cm_name, namespace).data['a.conf'] == 'v1'
        assert not (custom.get_cluster_custom_object(GROUP, VERSION, PLURAL, name).get('status') or {}).get('configUpdates')
        cluster.core.patch_node(node, {'metadata': {'annotations': {key: json.dumps(done)}}})

        # complete everywhere: check mode says so and writes nothing
        checked = modules.run('package_config', check=True, cr_name=name, namespace=namespace)
        assert checked['changed'] is True and checked['applied'] == ['tuning'], checked
        assert cluster.core.read_namespaced_config_map(cm_name, namespace).data['a.conf'] == 'v1'
        assert _state(cluster, node, name) == done

        # the next apply rolls it out: configUpdates, then config and the configInterrupt of a.conf (rsyslog)
        second = _apply(playbooks, name, namespace)
        assert second.rc == 0, second
        cr = custom.get_cluster_custom_object(GROUP, VERSION, PLURAL, name)
        assert cr['status']['configUpdates'] == {'tuning': ['a.conf', 'c.conf']}
        assert cluster.core.read_namespaced_config_map(cm_name, namespace).data == {
            'a.conf': 'v2', 'b.conf': 'keep', 'c.conf': 'new'}
        entry = _state(cluster, node, name)['tuning|1.2.0']
        assert (entry['stage'], entry['state']) == ('post-interrupt', 'complete'), entry
        assert cr['status']['status'] == 'complete'
        labels = cluster.core.read_node(node).metadata.labels
        assert labels['%s/status_%s' % (PREFIX, name)] == 'complete'
        # the node's Events say what ran: config twice (first rollout, the edit), the configInterrupt once
        events = cluster.core.list_namespaced_event('default', field_selector='involvedObject.name=%s' % node).items
        messages = [e.message for e in events if name in e.message]
        assert sum('stage [config] complete' in m for m in messages) == 2, messages
        interrupts = [m for m in messages if m.startswith('Interrupted node')]
        assert len(interrupts) == 1 and interrupts[0].endswith(': service restart (rsyslog)'), messages

        # nothing differs any more: no edit, nothing written
        again = modules.run('package_config', cr_name=name, namespace=namespace)
        assert again['changed'] is False and again['packages'] == {}, again

        # bad input: an edit (no webhook here lets it in) that drops the key a configInterrupt names fails both
        # the module and the apply with the field path, and writes nothing (ConfigMap, node state, configUpdates)
        before = (_state(cluster, node, name), cluster.core.read_namespaced_config_map(cm_name, namespace).data,
                  custom.get_cluster_custom_object(GROUP, VERSION, PLURAL, name)['status'].get('configUpdates'),
                  cluster.core.read_node(node).metadata.labels.get('%s/status_%s' % (PREFIX, name)))
        custom.patch_cluster_custom_object(GROUP, VERSION, PLURAL, name, {'spec': {'packages': {'tuning': {
            'configMap': {'a.conf': None, 'b.conf': 'keep', 'c.conf': 'new'}}}}})
        refused = modules.run('package_config', cr_name=name, namespace=namespace)
        path = "packages.tuning.configInterrupts.a.conf: no configMap key 'a.conf'"
        assert refused.get('failed') and path in refused['msg'], refused
        broken = _apply(playbooks, name, namespace)
        assert broken.rc != 0 and path in broken.stdout, broken
        assert (_state(cluster, node, name), cluster.core.read_namespaced_config_map(cm_name, namespace).data,
                custom.get_cluster_custom_object(GROUP, VERSION, PLURAL, name)['status'].get('configUpdates'),
                cluster.core.read_node(node).metadata.labels.get('%s/status_%s' % (PREFIX, name))) == before
    finally:
        try:
            custom.delete_cluster_custom_object(GROUP, VERSION, PLURAL, name)
        except kclient.ApiException:
            pass


class GitOpsApply:
    """Drives nodewright.bridge.apply as a GitOps user does: one run after each change of the CR (its generation),
    one run at a time (a change made while a run goes on queues one more run). Unlike the scenario harness's always-on
    reconciler, nothing else starts a run: whatever one run leaves undone stays undone."""

    def __init__(self, playbooks, custom, name, extra_vars):
        self.playbooks, self.custom, self.name, self.extra_vars = playbooks, custom, name, extra_vars
        self.runs = []  # (generation the run started for, rc, stdout tail)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True, name='gitops-apply')

    def _generation(self):
        try:
            return self.custom.get_cluster_custom_object(GROUP, VERSION, PLURAL, self.name)['metadata']['generation']
        except kclient.ApiException:
            return None

    def _loop(self):
        started_for = None
        while not self._stop.is_set():
            generation = self._generation()
            if generation is None or generation == started_for:
                self._stop.wait(0.5)
                continue
            started_for = generation
            result = self.playbooks.run('nodewright.bridge.apply', extra_vars=self.extra_vars)
            self.runs.append((generation, result.rc, result.stdout[-3000:]))

    def idle_after(self, generation, timeout):
        """Wait until a run that started after ``generation`` has ended and no run goes on."""
        deadline = time.monotonic() + timeout
        while not any(run[0] >= generation for run in self.runs) or self._generation() != max(run[0] for run in self.runs):
            assert time.monotonic() < deadline, f'no run ended after generation {generation}: {self.runs}'
            time.sleep(0.5)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(300)


def _chainsaw_apply(custom, doc):
    """chainsaw's create / apply of a Skyhook: created when absent, else a JSON merge patch of the whole document
    (chainsaw's apply operation), so map keys the document leaves out stay as they were."""
    name = doc['metadata']['name']
    try:
        custom.get_cluster_custom_object(GROUP, VERSION, PLURAL, name)
    except kclient.ApiException as exc:
        if exc.status != 404:
            raise
        return custom.create_cluster_custom_object(GROUP, VERSION, PLURAL, doc)['metadata']['generation']
    return custom.patch_cluster_custom_object(GROUP, VERSION, PLURAL, name, doc)['metadata']['generation']


def test_config_skyhook_driven_one_apply_per_change_meets_every_upstream_assert(
        cluster, playbooks, node, namespace):
    # upstream's skyhook/config-skyhook as a GitOps user drives the collection: each step's CR change, then one apply
    # (queued behind the one under way), and every assert of the step as upstream wrote it (observedGeneration
    # left out: docs/dev/upstream-scenarios.md, difference 7). The last step edits dexter's configMap under a glob
    # configInterrupt whose pattern also matches the key an earlier edit left in status.configUpdates: the package
    # owes that interrupt first, so the edit waits for the run's own rollout, and the same run must roll it out.
    files = helpers.upstream_scenario_files('skyhook/config-skyhook')
    test = yaml.safe_load(files['chainsaw-test.yaml'])
    timeout = float(test['spec']['timeouts']['assert'].rstrip('s'))
    custom = kclient.CustomObjectsApi(cluster.api)
    cluster.core.patch_node(node, {'metadata': {'labels': {'skyhook.nvidia.com/test-node': 'skyhooke2e'}}})
    extra_vars = {'nodewright_cr_name': 'config-skyhook', 'nodewright_namespace': namespace,
                  'nodewright_stage_timeout': 90, 'nodewright_agent_image': 'ghcr.io/nvidia/skyhook/agentless:6.2.0'}
    checked = []
    try:
        with GitOpsApply(playbooks, custom, 'config-skyhook', extra_vars) as gitops:
            generation = None
            for step in test['spec']['steps']:
                for operation in step['try']:
                    kind = next(iter(operation))
                    body = operation[kind]
                    if kind == 'script':  # kubectl skyhook reset of an earlier run: this CR is new on a new node
                        continue
                    if kind in ('create', 'apply'):
                        generation = _chainsaw_apply(custom, chainsaw_asserts.documents(files[body['file']])[0])
                        continue
                    assert kind == 'assert', operation
                    docs = ([body['resource']] if 'resource' in body else
                            chainsaw_asserts.documents(files[body['file']]))
                    wait = float(str(body.get('timeout', timeout)).rstrip('s'))
                    for doc in docs:
                        try:
                            chainsaw_asserts.wait_for_assert(cluster.api, chainsaw_asserts.drop_observed_generation(doc),
                                                             namespace, wait)
                        except AssertionError as exc:
                            raise AssertionError(f'step {step["name"]!r}: {exc}\nruns (generation, rc, output tail): '
                                                 f'{gitops.runs}') from None
                        checked.append((step['name'], doc['kind']))
            gitops.idle_after(generation, 300)
        assert len(checked) == 24, checked  # upstream's 5 steps: CR 5, node 5, ConfigMap 13, pod 1
        assert [run[1] for run in gitops.runs] == [0] * len(gitops.runs), gitops.runs
        # after the glob edit one run, and only one, did it all (the CR did not change again)
        assert [run[0] for run in gitops.runs].count(generation) == 1, gitops.runs
        state = _state(cluster, node, 'config-skyhook')['dexter|1.2.3']
        assert (state['stage'], state['state']) == ('post-interrupt', 'complete'), state
    finally:
        try:
            custom.delete_cluster_custom_object(GROUP, VERSION, PLURAL, 'config-skyhook')
        except kclient.ApiException:
            pass
