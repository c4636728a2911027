# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The per-node sequence: which modules run, in which order, with which arguments, and how a failure ends it."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import node_update
from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution import in_process
from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution.node_sequence import NodeSequence


def _params(**overrides):
    args = dict(node='n1', cr_name='tuning')
    args.update(overrides)
    params, invalid = in_process.validate('nodewright.bridge.node_update', node_update, args)
    assert invalid is None, invalid
    return params


DEFAULT_PENDING = [
    {'package': 'driver', 'stage': 'apply', 'wave': 0},
    {'package': 'tuning', 'stage': 'apply', 'wave': 0},
    # the plan's covers: the interrupt of tuning is merged into driver's
    {'package': 'driver', 'stage': 'interrupt', 'wave': 0, 'interrupt': {'type': 'reboot'}, 'covers': ['tuning']},
    {'package': 'tuning', 'stage': 'interrupt', 'wave': 0, 'interrupt': {'type': 'service'}, 'skipped': True,
     'merged_into': 'driver'},
    {'package': 'driver', 'stage': 'post-interrupt', 'wave': 0},
]


def _plan(complete=False, needs_drain=True, pending=None, cordoned_by=(), protected=None, ignored=()):
    node = {'complete': complete, 'needs_drain': needs_drain, 'cordoned_by': list(cordoned_by),
            'pending': pending if pending is not None else [dict(p) for p in DEFAULT_PENDING]}
    cr = {'name': 'tuning', 'kind': 'Skyhook'}
    if protected:
        cr['podNonInterruptLabels'] = protected
    return {'cr': cr, 'nodes': {} if ignored else {'n1': node}, 'ignored': list(ignored), 'changed': False}


class Cluster(object):
    """run_step stand-in: records (module, args) and answers from a table (or a default success)."""

    def __init__(self, plan, fail_at=None, answers=None):
        self.calls = []
        self.plan = plan
        self.fail_at = fail_at
        self.answers = answers or {}

    def __call__(self, module, args):
        self.calls.append((module, dict(args)))
        if module == 'rollout_plan':
            return dict(self.plan)
        key = (module, args.get('package'), args.get('stage'), args.get('state'))
        if self.fail_at and all(a is None or a == b for a, b in zip(self.fail_at, key)):
            return {'failed': True, 'msg': 'stage failed: exit 1', 'logs': 'boom', 'changed': True}
        answer = {'changed': module not in ('node_health', 'operator_guard')}
        answer.update(self.answers.get(module, {}))
        return answer

    def modules(self):
        return [(m, a.get('package') or a.get('state') or a.get('action')) for m, a in self.calls]


def test_a_node_with_a_reboot_runs_the_operator_sequence_in_order():
    cluster = Cluster(_plan(protected=[{'matchLabels': {'job': 'training'}}]),
                      answers={'node_interrupt': {'rebooted': True, 'boot_id_before': 'boot-1'}})
    result = NodeSequence(_params(), {'kubeconfig': '/k'}, cluster).run()
    assert cluster.modules() == [
        ('rollout_plan', None), ('operator_guard', None), ('node_cordon', None), ('node_drain', None),
        ('package_stage', 'driver'), ('package_stage', 'tuning'), ('node_interrupt', 'driver'),
        ('package_stage', 'driver'), ('node_health', None), ('node_state', 'complete'), ('node_cordon', 'uncordoned')]
    calls = dict((m + (a.get('package') or '') + (a.get('stage') or ''), a) for m, a in cluster.calls)
    assert calls['node_interruptdriverinterrupt']['covered'] == ['tuning']  # merged interrupt of the wave
    assert calls['node_health']['boot_id_not'] == 'boot-1'  # health waits for the new boot
    assert calls['node_drain']['wait_for'] == [{'matchLabels': {'job': 'training'}}]
    assert all(a['kubeconfig'] == '/k' for m, a in cluster.calls)  # connection options reach every step
    assert result['status'] == 'updated' and result['changed'] is True and 'failed' not in result
    assert [s['step'] for s in result['steps']][4:7] == ['driver apply', 'tuning apply', 'driver interrupt (reboot)']
    # the CR's name is cr_name; cr, its old name in this result (elsewhere cr is the CR document), until 2.0.0
    assert result['cr_name'] == result['cr'] == _plan()['cr']['name']


def test_a_nodewrights_drain_config_reaches_the_drain_and_a_skyhooks_does_not():
    # the plan's cr carries a NodeWright's drainConfig (defaults filled in); a Skyhook has none
    drain = {'disableEviction': True, 'deleteEmptyDirData': True, 'force': False, 'ignoreDaemonSets': True,
             'timeout': '10m', 'gracePeriod': None, 'timeoutSeconds': 600, 'gracePeriodSeconds': None}
    plan = _plan()
    plan['cr'] = dict(plan['cr'], kind='NodeWright', drainConfig=drain)
    cluster = Cluster(plan)
    NodeSequence(_params(), {}, cluster).run()
    (args,) = [a for m, a in cluster.calls if m == 'node_drain']
    assert args['drain_config'] == drain and args['hold_for'] == 'tuning'  # hold_for names drainStart_/drainBlocked_
    cluster = Cluster(_plan())
    NodeSequence(_params(), {}, cluster).run()
    (args,) = [a for m, a in cluster.calls if m == 'node_drain']
    assert 'drain_config' not in args


AROUND_THE_DRAIN = [
    {'package': 'base', 'stage': 'apply', 'wave': 1, 'after': None},
    {'package': 'jason', 'stage': 'apply', 'wave': 2, 'after': 'cordon'},
    {'package': 'driver', 'stage': 'apply', 'wave': 2, 'after': 'drain'},
    {'package': 'driver', 'stage': 'interrupt', 'wave': 2, 'after': 'drain', 'interrupt': {'type': 'reboot'}},
]


def test_the_steps_that_need_no_drain_run_before_it_and_those_of_the_cordoned_waves_cordoned():
    cluster = Cluster(_plan(pending=[dict(p) for p in AROUND_THE_DRAIN]))
    result = NodeSequence(_params(), {}, cluster).run()
    assert cluster.modules()[2:] == [
        ('package_stage', 'base'), ('node_cordon', None), ('package_stage', 'jason'), ('node_drain', None),
        ('package_stage', 'driver'), ('node_interrupt', 'driver'), ('node_health', None), ('node_state', 'complete'),
        ('node_cordon', 'uncordoned')]
    assert result['status'] == 'updated'


def test_every_step_record_carries_its_kind_for_the_timeline():
    cluster = Cluster(_plan(), answers={'node_interrupt': {'rebooted': True, 'boot_id_before': 'boot-1'}})
    result = NodeSequence(_params(), {}, cluster).run()
    assert [(s['step'], s['module'], s['kind']) for s in result['steps']] == [
        ('plan', 'nodewright.bridge.rollout_plan', 'plan'),
        ('operator guard', 'nodewright.bridge.operator_guard', 'guard'),
        ('cordon', 'nodewright.bridge.node_cordon', 'cordon'), ('drain', 'nodewright.bridge.node_drain', 'drain'),
        ('driver apply', 'nodewright.bridge.package_stage', 'stage'),
        ('tuning apply', 'nodewright.bridge.package_stage', 'stage'),
        ('driver interrupt (reboot)', 'nodewright.bridge.node_interrupt', 'interrupt'),
        ('driver post-interrupt', 'nodewright.bridge.package_stage', 'stage'),
        ('health', 'nodewright.bridge.node_health', 'health'), ('complete', 'nodewright.bridge.node_state', 'state'),
        ('uncordon', 'nodewright.bridge.node_cordon', 'uncordon')]
    # the rescue's uncordon too (its name says nothing of the kind the timeline needs: the record does)
    cluster = Cluster(_plan(), fail_at=('package_stage', 'driver', 'apply', None))
    result = NodeSequence(_params(uncordon_on_failure=True), {}, cluster).run()
    assert [(s['step'], s['kind']) for s in result['steps']][-2:] == [
        ('driver apply', 'stage'), ('uncordon after failure', 'uncordon')]


def test_a_failure_before_the_cordon_leaves_the_node_schedulable_and_says_nothing_of_a_cordon():
    cluster = Cluster(_plan(pending=[dict(p) for p in AROUND_THE_DRAIN]), fail_at=('package_stage', 'base', 'apply', None))
    result = NodeSequence(_params(uncordon_on_failure=True), {}, cluster).run()
    assert [m for m, unused in cluster.modules()] == ['rollout_plan', 'operator_guard', 'package_stage']
    assert result['failed'] is True and 'cordon' not in result['msg']
    # failing once cordoned: the node stays cordoned by the CR
    cluster = Cluster(_plan(pending=[dict(p) for p in AROUND_THE_DRAIN]), fail_at=('package_stage', 'jason', 'apply', None))
    result = NodeSequence(_params(), {}, cluster).run()
    assert result['msg'].endswith('(the node stays cordoned by tuning)')


def test_a_complete_node_costs_a_plan_and_a_complete_record_only():
    cluster = Cluster(_plan(complete=True, pending=[]), answers={'node_state': {'changed': False}})
    result = NodeSequence(_params(), {}, cluster).run()
    assert cluster.modules() == [('rollout_plan', None), ('node_state', 'complete')]
    assert result['status'] == 'complete' and result['changed'] is False


def test_a_complete_node_still_cordoned_by_the_cr_is_released():
    cluster = Cluster(_plan(complete=True, pending=[], cordoned_by=['tuning']))
    NodeSequence(_params(), {}, cluster).run()
    assert cluster.modules()[-1] == ('node_cordon', 'uncordoned')


def test_stages_without_interrupt_skip_cordon_drain_and_health():
    cluster = Cluster(_plan(needs_drain=False, pending=[{'package': 'tuning', 'stage': 'config', 'wave': 0}]))
    NodeSequence(_params(cr={'kind': 'Skyhook'}), {}, cluster).run()
    # a CR given as a document is ours: no operator guard
    assert cluster.modules() == [('rollout_plan', None), ('package_stage', 'tuning'), ('node_state', 'complete')]


@pytest.mark.parametrize('uncordon_on_failure', [False, True])
def test_a_failing_stage_stops_the_node_and_says_where(uncordon_on_failure):
    cluster = Cluster(_plan(), fail_at=('package_stage', 'tuning', 'apply', None))
    result = NodeSequence(_params(uncordon_on_failure=uncordon_on_failure), {}, cluster).run()
    assert result['failed'] is True and result['failed_step'] == 'tuning apply'
    ran = cluster.modules()
    assert ('node_interrupt', 'driver') not in ran and ('node_state', 'complete') not in ran
    assert result['steps'][-1 if not uncordon_on_failure else -2]['logs'] == 'boom'
    if uncordon_on_failure:
        assert ran[-1] == ('node_cordon', 'uncordoned')
        assert result['msg'] == 'tuning on node n1 failed at "tuning apply": stage failed: exit 1'
    else:
        assert ran[-1] == ('package_stage', 'tuning')
        assert result['msg'] == ('tuning on node n1 failed at "tuning apply": stage failed: exit 1 '
                                 '(the node stays cordoned by tuning)')


def test_a_node_the_cr_does_not_select_fails_and_touches_nothing():
    plan = _plan()
    plan['nodes'] = {}
    cluster = Cluster(plan)
    result = NodeSequence(_params(), {}, cluster).run()
    assert cluster.modules() == [('rollout_plan', None)]
    assert result['failed'] is True and 'not selected by Skyhook tuning' in result['msg']


def test_an_ignored_node_is_left_alone():
    cluster = Cluster(_plan(ignored=['n1']))
    result = NodeSequence(_params(), {}, cluster).run()
    assert cluster.modules() == [('rollout_plan', None)]
    assert result['status'] == 'ignored' and 'failed' not in result


def test_an_invalid_cr_fails_at_planning_with_every_problem():
    def run_step(module, args):
        return {'failed': True, 'msg': "Skyhook 'x' is invalid (1 problem)", 'errors': ['spec.packages: bad']}
    result = NodeSequence(_params(), {}, run_step).run()
    assert result['failed_step'] == 'planning' and result['errors'] == ['spec.packages: bad']
    assert 'stays cordoned' not in result['msg']


def test_the_operator_guard_refusal_touches_nothing():
    cluster = Cluster(_plan())
    cluster.answers['operator_guard'] = {'failed': True, 'msg': 'an operator reconciles tuning'}

    def run_step(module, args):
        result = cluster(module, args)
        return cluster.answers['operator_guard'] if module == 'operator_guard' else result
    result = NodeSequence(_params(), {}, run_step).run()
    assert [m for m, a in cluster.calls] == ['rollout_plan', 'operator_guard']
    assert result['failed'] is True and result['failed_step'] == 'operator guard'


def test_without_a_cr_nothing_runs_and_the_message_says_what_to_set():
    params, invalid = in_process.validate('nodewright.bridge.node_update', node_update, {'node': 'n1'})
    assert invalid is None
    cluster = Cluster(_plan())
    result = NodeSequence(params, {}, cluster).run()
    assert cluster.calls == []
    assert result['failed'] is True and 'nodewright_cr' in result['msg'] and 'nodewright_cr_name' in result['msg']


CONFIG_SKYHOOK = [  # upstream e2e skyhook/config-skyhook: baxter has no interrupt, spencer and dexter have one
    {'package': 'baxter', 'stage': 'apply', 'wave': 1, 'after': 'cordon'},
    {'package': 'spencer', 'stage': 'apply', 'wave': 1, 'after': 'drain'},
    {'package': 'dexter', 'stage': 'apply', 'wave': 1, 'after': 'drain'},
    {'package': 'baxter', 'stage': 'config', 'wave': 1, 'after': 'cordon'},
    {'package': 'spencer', 'stage': 'config', 'wave': 1, 'after': 'drain'},
    {'package': 'dexter', 'stage': 'config', 'wave': 1, 'after': 'drain'},
]


def _timed(cluster, seconds):
    """run_step that records when each step started and makes the named modules take ``seconds``."""
    import threading
    import time as clock
    seen, lock = {}, threading.Lock()

    def run_step(module, args):
        with lock:
            seen.setdefault((module, args.get('package'), args.get('stage')), clock.time())  # the first call
        clock.sleep(seconds.get(module, 0))
        return cluster(module, args)
    return run_step, seen


def test_with_nothing_to_evict_every_package_of_the_wave_starts_together():
    cluster = Cluster(_plan(pending=[dict(p) for p in CONFIG_SKYHOOK]))
    run_step, seen = _timed(cluster, {'package_stage': 0.2})
    result = NodeSequence(_params(cr={'kind': 'Skyhook'}), {}, run_step, parallel=True).run()
    assert result['status'] == 'updated', result
    applies = [seen[('package_stage', p, 'apply')] for p in ('baxter', 'spencer', 'dexter')]
    # the drain ran beside baxter's apply, so the three applies overlap (the operator's one reconcile)
    assert max(applies) - min(applies) < 0.15
    assert seen[('node_drain', None, None)] < seen[('package_stage', 'spencer', 'apply')]
    assert seen[('node_cordon', None, None)] < min(applies)


def test_while_the_drain_waits_the_packages_without_interrupt_run_and_the_others_wait_for_it():
    cluster = Cluster(_plan(pending=[dict(p) for p in CONFIG_SKYHOOK]))
    run_step, seen = _timed(cluster, {'package_stage': 0.05, 'node_drain': 0.5})
    NodeSequence(_params(cr={'kind': 'Skyhook'}), {}, run_step, parallel=True).run()
    drained = seen[('node_drain', None, None)] + 0.5
    assert seen[('package_stage', 'baxter', 'config')] < drained  # baxter went on while the drain waited
    assert min(seen[('package_stage', p, 'apply')] for p in ('spencer', 'dexter')) >= drained - 0.01


def test_a_held_drain_starts_no_package_that_needs_it_and_names_the_drain():
    cluster = Cluster(_plan(pending=[dict(p) for p in CONFIG_SKYHOOK]),
                      answers={'node_drain': {'failed': True, 'held': 'paused', 'msg': 'tuning is paused'}})
    result = NodeSequence(_params(cr={'kind': 'Skyhook'}), {}, cluster, parallel=True).run()
    ran = [a.get('package') for m, a in cluster.calls if m == 'package_stage']
    assert set(ran) <= {'baxter'}
    assert result['failed'] is True and result['failed_step'] == 'drain' and result['held'] == 'paused'


def test_packages_of_a_wave_run_at_once_unless_serial():
    import threading
    import time as clock
    seen = {}
    lock = threading.Lock()
    cluster = Cluster(_plan(needs_drain=False, pending=[
        {'package': 'a', 'stage': 'apply', 'wave': 0}, {'package': 'b', 'stage': 'apply', 'wave': 0},
        {'package': 'a', 'stage': 'config', 'wave': 0}, {'package': 'b', 'stage': 'config', 'wave': 0},
        {'package': 'c', 'stage': 'apply', 'wave': 1}]))

    def run_step(module, args):
        with lock:
            seen[(args.get('package'), args.get('stage'))] = (clock.time(), threading.current_thread().name)
        if module == 'package_stage':
            clock.sleep(0.2)
        return cluster(module, args)
    result = NodeSequence(_params(cr={'kind': 'Skyhook'}), {}, run_step, parallel=True).run()
    assert result['status'] == 'updated', result
    # a and b ran in two threads at the same time; each package kept its own order; wave 1 came after both
    assert abs(seen[('a', 'apply')][0] - seen[('b', 'apply')][0]) < 0.15
    assert seen[('a', 'config')][0] > seen[('a', 'apply')][0] and seen[('b', 'config')][0] > seen[('b', 'apply')][0]
    assert seen[('c', 'apply')][0] >= max(seen[('a', 'config')][0], seen[('b', 'config')][0]) + 0.15
    serial = Cluster(_plan(needs_drain=False, pending=[
        {'package': 'a', 'stage': 'apply', 'wave': 0}, {'package': 'b', 'stage': 'apply', 'wave': 0}]))
    serial.plan['cr']['serial'] = True
    NodeSequence(_params(cr={'kind': 'Skyhook'}), {}, serial, parallel=True).run()
    assert [a.get('package') for m, a in serial.calls if m == 'package_stage'] == ['a', 'b']


def test_a_failure_in_one_package_thread_fails_the_node_after_the_others_finish():
    cluster = Cluster(_plan(needs_drain=False, pending=[
        {'package': 'a', 'stage': 'apply', 'wave': 0}, {'package': 'b', 'stage': 'apply', 'wave': 0},
        {'package': 'b', 'stage': 'config', 'wave': 0}, {'package': 'c', 'stage': 'apply', 'wave': 1}]),
        fail_at=('package_stage', 'a', 'apply', None))
    result = NodeSequence(_params(cr={'kind': 'Skyhook'}), {}, cluster, parallel=True).run()
    ran = [(a.get('package'), a.get('stage')) for m, a in cluster.calls if m == 'package_stage']
    assert ('b', 'config') in ran and ('c', 'apply') not in ran
    assert result['failed'] is True and result['failed_step'] == 'a apply'


def test_the_dry_runs_run_once_per_package_pod_kind_on_a_node():
    pending = [{'package': 'driver', 'stage': 'apply', 'wave': 0}, {'package': 'tuning', 'stage': 'apply', 'wave': 0},
               {'package': 'driver', 'stage': 'config', 'wave': 0}, {'package': 'tuning', 'stage': 'config', 'wave': 0},
               # the plan's covers: the interrupt of tuning is merged into driver's
               {'package': 'driver', 'stage': 'interrupt', 'wave': 0, 'interrupt': {'type': 'reboot'},
                'covers': ['tuning']},
               {'package': 'driver', 'stage': 'post-interrupt', 'wave': 0}]
    cluster = Cluster(_plan(pending=pending))
    NodeSequence(_params(), {}, cluster).run()
    preflight = [(m, a['package'], a['stage'], a['preflight']) for m, a in cluster.calls
                 if m in ('package_stage', 'node_interrupt')]
    assert preflight == [
        ('package_stage', 'driver', 'apply', True), ('package_stage', 'tuning', 'apply', True),
        ('package_stage', 'driver', 'config', False), ('package_stage', 'tuning', 'config', False),
        ('node_interrupt', 'driver', 'interrupt', True),  # another pod (the agent image): its own dry runs
        ('package_stage', 'driver', 'post-interrupt', False)]


def test_a_failed_first_stage_does_not_count_as_a_passed_preflight():
    pending = [{'package': 'driver', 'stage': 'apply', 'wave': 0}, {'package': 'driver', 'stage': 'config', 'wave': 0}]
    sequence = NodeSequence(_params(), {}, Cluster(_plan(pending=pending), fail_at=('package_stage', 'driver', 'apply')))
    result = sequence.run()
    assert result['failed'] and sequence.preflighted == set()


# ---------------------------------------------------------------- the CR planned with, handed down (cr_handoff)

from ansible_collections.nodewright.bridge.plugins.module_utils.model import api_generation  # noqa: E402
from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_model  # noqa: E402
from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube as kube_api  # noqa: E402
from ansible_collections.nodewright.bridge.plugins.module_utils.api import pod_run  # noqa: E402
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import rollout_plan  # noqa: E402


class StoredCR(object):
    """A cluster with one CR (its uid, generation and resourceVersion can be moved) and node n1: the real
    rollout_plan and the pod steps' CR read (pod_run.load_cr, pod_run.planned_change) run against it, and it
    counts the CR's reads (``get_cr``) and validations (the session's models built)."""

    def __init__(self, monkeypatch):
        self.session = kube_api.KubeSession()
        self.uid, self.cr_generation, self.rv = 'u-1', 1, 1
        self.reads = 0
        self.reads_by_module = {}
        self.calls = []
        self.edit_at = None  # (module, package, stage, what): the CR is edited just before that step reads it
        # the client's API generation and its reason (Kube.generation, generation_reason), and its API server
        self.generation, self.generation_reason, self.host = api_generation.SKYHOOK, 'test', 'https://test'
        monkeypatch.setattr(rollout_plan.kube_api, 'Kube', lambda params, live_crs=None, session=None: self)

    def doc(self):
        return {'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'Skyhook',
                'metadata': {'name': 'tuning', 'uid': self.uid, 'generation': self.cr_generation,
                             'resourceVersion': str(self.rv)},
                'spec': {'packages': {
                    'tuning': {'version': '1.0.0', 'image': 'registry.local/tuning'},
                    'driver': {'version': '2.0.0', 'image': 'registry.local/driver', 'interrupt': {'type': 'reboot'}}}}}

    # the Kube the modules use
    def get_cr(self, name, api_version=None, fresh=False):
        self.reads += 1
        return self.doc()

    def get_node(self, name):
        return {'metadata': {'name': name, 'labels': {'kubernetes.io/hostname': name}, 'annotations': {}}}

    def get_policy(self, name):
        raise kube_api.NotFound('no policy')

    def status_write(self):
        self.rv += 1  # what a status keeper's write does: a new resourceVersion, the same generation

    def __call__(self, module, args):
        self.calls.append((module, dict(args)))
        before = self.reads
        try:
            return self.answer(module, args)
        finally:
            self.reads_by_module[module] = self.reads_by_module.get(module, 0) + self.reads - before

    def answer(self, module, args):
        if module == 'rollout_plan':
            params, invalid = in_process.validate('nodewright.bridge.rollout_plan', rollout_plan, args)
            assert invalid is None, invalid
            return rollout_plan.run(params, lambda warning: None)
        if module in ('package_stage', 'node_interrupt'):
            if self.edit_at == (module, args.get('package'), args.get('stage')):
                self.edit_at = None
                self.cr_generation += 1
                self.rv += 1
            elif self.edit_at == 'replace':
                self.edit_at = None
                self.uid, self.cr_generation = 'u-2', 1
            dummy, doc = pod_run.load_cr(self, args.get('cr'), args['cr_name'])
            failure = pod_run.planned_change(dict(args, cr=args.get('cr'), stage=args.get('stage')), doc)
            if failure is not None:
                return dict(failure[1], msg=failure[0], failed=True)
            self.status_write()
        return {'changed': module not in ('node_health', 'operator_guard')}

    def builds(self):
        return self.session.validated_crs.builds


def _stored(monkeypatch):
    return StoredCR(monkeypatch)


def test_the_plan_reads_the_cr_once_and_hands_its_identity_to_every_pod_step(monkeypatch):
    store = _stored(monkeypatch)
    result = NodeSequence(_params(operator_guard=False), {}, store).run()
    assert result['status'] == 'updated', result['msg'] if result.get('failed') else result
    pod_steps = [a for m, a in store.calls if m in ('package_stage', 'node_interrupt')]
    assert pod_steps and all(a['cr_identity'] == {'uid': 'u-1', 'generation': 1} for a in pod_steps)
    plans = [m for m, a in store.calls if m == 'rollout_plan']
    # one plan; the CR read by the plan and by each pod step (a pause must stop the next pod), but validated
    # once: the later reads (new resourceVersions after each status write aside) take the plan's model
    assert len(plans) == 1
    # the CR is read by the plan and once by each pod step (a pause written since must stop its pod: docs/semantics.md),
    # never planned again while its generation holds
    reads = dict((m, n) for m, n in store.reads_by_module.items() if n)
    assert reads == {'rollout_plan': 1, 'package_stage': 5, 'node_interrupt': 1}
    # each pod step here follows a status write (a new resourceVersion): that version is validated once
    assert store.builds() == 1 + len(pod_steps)


def test_one_version_of_the_cr_is_validated_once_for_all_the_steps(monkeypatch):
    store = _stored(monkeypatch)
    store.status_write = lambda: None  # no status writes: one resourceVersion for the whole node
    NodeSequence(_params(operator_guard=False), {}, store).run()
    pod_steps = [a for m, a in store.calls if m in ('package_stage', 'node_interrupt')]
    assert len(pod_steps) == 6
    reads = dict((m, n) for m, n in store.reads_by_module.items() if n)
    # before the handoff: 7 reads and 7 validations (the plan, then each step again); now 7 reads, 1 validation
    assert (reads, store.builds()) == ({'rollout_plan': 1, 'package_stage': 5, 'node_interrupt': 1}, 1)
    # a second node of the same process (the sequence engine) validates nothing more
    NodeSequence(_params(node='n2', operator_guard=False), {}, store).run()
    assert store.builds() == 1


def test_a_cr_edited_mid_run_plans_the_node_again_from_the_new_generation(monkeypatch):
    store = _stored(monkeypatch)
    store.edit_at = ('package_stage', 'driver', 'apply')
    result = NodeSequence(_params(operator_guard=False), {}, store).run()
    assert result['status'] == 'updated', result
    assert [m for m, a in store.calls].count('rollout_plan') == 2
    after = [a for m, a in store.calls if m in ('package_stage', 'node_interrupt')][-1]
    assert after['cr_identity'] == {'uid': 'u-1', 'generation': 2}  # the steps after the replan: the new CR
    superseded = [s for s in result['steps'] if s.get('superseded')]
    assert superseded and 'generation 1, now 2' in superseded[0]['superseded']


def test_a_cr_deleted_and_created_again_mid_run_stops_the_node(monkeypatch):
    store = _stored(monkeypatch)
    store.edit_at = 'replace'
    result = NodeSequence(_params(operator_guard=False), {}, store).run()
    assert result['failed'] and result['cr_replaced'] is True
    assert 'deleted and created again' in result['msg']
    assert [m for m, a in store.calls].count('rollout_plan') == 1  # not planned again: another CR
    assert ('node_state', 'complete') not in [(m, a.get('action')) for m, a in store.calls]


def test_a_cr_replaced_since_the_batch_plan_stops_the_node_before_any_step(monkeypatch):
    store = _stored(monkeypatch)
    result = NodeSequence(_params(operator_guard=False, cr_identity={'uid': 'u-0', 'generation': 1}), {}, store).run()
    assert result['failed'] and result['cr_replaced'] is True and result['failed_step'] == 'plan'
    assert [m for m, a in store.calls] == ['rollout_plan']
    # a new generation since the batch plan: this node's plan is made from it, nothing to stop
    store.calls[:] = []
    result = NodeSequence(_params(operator_guard=False, cr_identity={'uid': 'u-1', 'generation': 0}), {}, store).run()
    assert result['status'] == 'updated'


def test_a_cr_from_a_file_hands_down_no_identity():
    cluster = Cluster(_plan())
    NodeSequence(_params(cr=[{'kind': 'Skyhook'}]), {}, cluster).run()
    assert not any('cr_identity' in a for m, a in cluster.calls)


def test_cr_model_is_the_plan_model(monkeypatch):
    store = _stored(monkeypatch)
    first, doc = pod_run.load_cr(store, None, 'tuning')
    again = pod_run.load_cr(store, None, 'tuning')[0]
    assert again is first and isinstance(first, cr_model.NodeWrightCR) and doc['metadata']['uid'] == 'u-1'
