# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""job_run.JobRun through package_stage.run and node_interrupt.run under the v0.18+ contract, against a scripted API
server (fake_api), as test_pod_run.py pins the pod path: every request is scripted, in order, so an extra, missing or
reordered one fails the test. tests/kube/test_nodewright_jobs.py runs a Job on a real control plane.

The Jobs follow job_layout (NVIDIA/nodewright job_builder.go @8311ca7b, job_controller.go @05e01958: JobReconcile reads
a Job's conditions, markJobProcessed patches ``<prefix>/state-recorded`` and the TTL once the node is written).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

import pytest

from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_validation
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import job_layout
from ansible_collections.nodewright.bridge.plugins.module_utils.api import job_run
from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube as kube_api
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import node_annotations
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import pod_layout
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import pod_verdicts
from ansible_collections.nodewright.bridge.plugins.module_utils.api import pod_run
from ansible_collections.nodewright.bridge.plugins.module_utils.model.api_generation import NODEWRIGHT, SKYHOOK
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import node_interrupt
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import package_stage
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules._runner import ModuleFailed
from ansible_collections.nodewright.bridge.tests.unit.plugins.module_utils import test_pod_run as pod_tests
from ansible_collections.nodewright.bridge.tests.unit.plugins.module_utils.fake_api import (
    FakeApiServer, Pause, Stored, event, node, status_body)

NS = NODEWRIGHT.default_namespace
CR_DOC = {
    'apiVersion': 'nodewright.nvidia.com/v1alpha1', 'kind': 'NodeWright',
    'metadata': {'name': 'demo', 'uid': 'cr-uid-1', 'generation': 4},
    'spec': {'packages': {'tuning': {'version': '1.2.3', 'image': 'ghcr.io/x/tuning', 'configMap': {'a.sh': 'echo a'},
                                     'stageTimeout': '20m',
                                     'interrupt': {'type': 'service', 'services': ['kubelet']}}}},
    'status': {'nodePriority': {'n1': '2026-05-01T10:00:00Z'}},
}
CR = cr_validation.build_cr(CR_DOC)
PACKAGE = CR.packages['tuning']
KEY = PACKAGE.unique_name
STAGE = 'apply'
JOB = pod_layout.stage_pod_name('demo', PACKAGE, STAGE, 'n1')
JOBS = '/apis/batch/v1/namespaces/%s/jobs' % NS
JOB_PATH = '%s/%s' % (JOBS, JOB)
PODS = '/api/v1/namespaces/%s/pods' % NS
CMS = '/api/v1/namespaces/%s/configmaps' % NS
NODE_PATH = '/api/v1/nodes/n1'
NODE_STATUS_PATH = NODE_PATH + '/status'
STATE_KEY = node_annotations.node_state_key('demo', NODEWRIGHT)
STATUS_KEY = node_annotations.status_key('demo', NODEWRIGHT)
CONTAINERS = pod_layout.init_container_names('tuning', STAGE)
NOT_FOUND = status_body(404, 'NotFound', 'not found')
ALREADY_EXISTS = status_body(409, 'AlreadyExists', 'jobs.batch "%s" already exists' % JOB)
EVENTS = '/api/v1/namespaces/default/events'
CR_PATH = '/apis/nodewright.nvidia.com/v1alpha1/nodewrights/demo'
DELETED = {'kind': 'Status', 'status': 'Success'}


class FakeModule(object):
    """What run_recorded and the modules read of an AnsibleModule: params (the spec's defaults), check and diff mode."""

    def __init__(self, module=package_stage, check_mode=False, diff=False, **params):
        spec = module.module_args()['argument_spec']
        self.params = dict((name, option.get('default')) for name, option in spec.items())
        self.params.update(node='n1', cr=CR_DOC, stage=STAGE, package='tuning', timeout=30, nodewright_api='nodewright')
        self.params.update(params)
        self.check_mode = check_mode
        self._diff = diff


@pytest.fixture
def server():
    made = FakeApiServer()
    made.reply('POST', EVENTS, status=201, body={}, repeat=True)
    made.reply('GET', CR_PATH, status=404, body=NOT_FOUND, repeat=True)
    return made


@pytest.fixture
def stored_node(server):
    stored = Stored(node('n1', 10, labels={'pool': 'gpu'}))
    server.reply('GET', NODE_PATH, body=stored.get, repeat=True)
    return stored


def kube_of(server):
    return server.kube(nodewright_api='nodewright')


def pod_manifest(stage=STAGE, interrupt=None):
    if interrupt:
        return pod_layout.interrupt_pod(CR, PACKAGE, interrupt, 'n1', NS, stage=stage, node_order=0, cr_uid='cr-uid-1',
                                        cr_generation=4, gen=NODEWRIGHT)
    return pod_layout.stage_pod(CR, PACKAGE, stage, 'n1', NS, cr_uid='cr-uid-1', cr_generation=4, gen=NODEWRIGHT)


def expected_job(retries=0, stage=STAGE, interrupt=None):
    """The Job job_layout lays out for the module's pod (the module's default retries: backoffLimit 0)."""
    return job_layout.job_manifest(pod_manifest(stage, interrupt), CR, PACKAGE, stage, 'n1', NODEWRIGHT,
                                   cr_uid='cr-uid-1', cr_generation=4, stage_timeout='20m', backoff_limit=retries)


def job_doc(conditions=(), resource_version=20, uid='job-uid-1', manifest=None, **status):
    doc = copy.deepcopy(manifest or expected_job())
    doc['metadata'].update(uid=uid, resourceVersion=str(resource_version))
    doc['status'] = dict(status, conditions=[{'type': kind, 'status': 'True', 'reason': reason}
                                             for kind, reason in conditions])
    return doc


def created(request):
    return dict(request.body, metadata=dict(request.body['metadata'], uid='job-uid-1', resourceVersion='20'))


def child_pod(statuses, phase, name='%s-abcde' % JOB, job_uid='job-uid-1', created_at='2026-05-01T10:00:00Z'):
    """A pod the Job controller made: the template's, owned by the Job."""
    pod = {'apiVersion': 'v1', 'kind': 'Pod',
           'metadata': {'name': name, 'namespace': NS, 'uid': 'uid-' + name, 'resourceVersion': '30',
                        'creationTimestamp': created_at, 'labels': {job_run.JOB_NAME_LABEL: JOB},
                        'ownerReferences': [{'kind': 'Job', 'name': JOB, 'uid': job_uid, 'controller': True}]},
           'spec': {'nodeName': 'n1'},
           'status': {'phase': phase, 'initContainerStatuses': statuses}}
    return pod


def terminated(name, exit_code=0, reason='Completed'):
    return {'name': name, 'restartCount': 0, 'state': {'terminated': {'exitCode': exit_code, 'reason': reason}}}


def script_preflight(server, existing=None):
    """The Job as a dry run: accepted, or (``existing``) refused as already there, which is then read."""
    if existing is None:
        server.reply('POST', JOBS, status=201, body=created)
    else:
        server.reply('POST', JOBS, status=409, body=ALREADY_EXISTS)
        server.reply('GET', JOB_PATH, body=existing)


def script_writes(server, stored_node, configmaps=True):
    server.reply('PATCH', NODE_PATH, body=stored_node.patch, repeat=True)
    server.reply('PATCH', NODE_STATUS_PATH, body=stored_node.patch_status, repeat=True)
    if configmaps:  # created: none was seen before, so none is asked for
        server.reply('POST', CMS, status=201, body=lambda request: request.body, repeat=True)


def script_job_watch(server, *then):
    """The Job's list (created, nothing run), then one MODIFIED event per Job document."""
    server.reply('GET', JOBS, body={'metadata': {'resourceVersion': '20'}, 'items': [job_doc()]})
    server.stream('GET', JOBS, [event('MODIFIED', doc) for doc in then])


def script_pods(server, *pods):
    server.reply('GET', PODS, body={'metadata': {'resourceVersion': '40'}, 'items': list(pods)})


def script_logs(server, pod_name='%s-abcde' % JOB, text='ran\n'):
    server.reply('GET', '%s/%s/log' % (PODS, pod_name), body=text, headers={'Content-Type': 'text/plain'}, repeat=True)


def script_marked(server):
    server.reply('PATCH', JOB_PATH, body=lambda request: job_doc([('Complete', 'CompletionsReached')], 30))


def calls(server):
    return ['%s %s%s' % (r.method, r.path, ' dry-run' if r.query.get('dryRun') else ' watch' if r.watch else '')
            for r in server.requests if r.path not in (EVENTS, CR_PATH)]


def node_state_of(stored):
    annotations = stored.doc['metadata']['annotations']
    return node_annotations.decode(annotations[STATE_KEY]), annotations.get(STATUS_KEY)


def run(server, module, which=package_stage):
    result = which.run(module, kube_of(server))
    assert server.pending() == []
    return result


def script_a_job_that_succeeds(server, stored_node):
    script_preflight(server)
    script_writes(server, stored_node)
    server.reply('POST', JOBS, status=201, body=created)
    script_job_watch(server, job_doc([('Complete', 'CompletionsReached')], 21, succeeded=1))
    script_pods(server, child_pod([terminated(name) for name in CONTAINERS], 'Succeeded'))
    script_logs(server)
    script_marked(server)
    server.reply('DELETE', JOB_PATH, body=DELETED)


def test_a_stage_runs_as_the_job_job_layout_lays_out_and_is_recorded_complete(server, stored_node):
    script_a_job_that_succeeds(server, stored_node)

    result = run(server, FakeModule())

    assert calls(server) == [
        'GET ' + NODE_PATH,
        'POST %s dry-run' % JOBS,                     # preflight: the Job as a dry run, accepted: nothing to adopt
        'PATCH %s dry-run' % NODE_PATH,
        'POST ' + CMS, 'POST ' + CMS,                 # the package's and the node's ConfigMaps, created
        'PATCH ' + NODE_PATH, 'PATCH ' + NODE_STATUS_PATH,   # in_progress, before the Job exists
        'POST ' + JOBS,
        'GET ' + JOBS, 'GET %s watch' % JOBS,         # the watch of the Job to its verdict
        'GET ' + PODS,                                # its pods, once: the logs come from its last pod
    ] + ['GET %s/%s-abcde/log' % (PODS, JOB)] * 3 + [
        'PATCH ' + NODE_PATH,                         # the success
        'PATCH ' + JOB_PATH,                          # marked recorded, as markJobProcessed
        'DELETE ' + JOB_PATH]
    # the Job is job_layout's, in the generation's namespace; no bare pod was created
    posts = server.of('POST', JOBS)
    assert posts[1].body == expected_job() and posts[0].body == expected_job()
    assert posts[1].body['spec']['backoffLimit'] == 0            # retries: 0 (the module's default)
    assert posts[1].body['spec']['template']['spec']['activeDeadlineSeconds'] == 1200   # stageTimeout 20m
    assert server.of('POST', PODS) == []
    assert server.of('GET', JOBS, watch=True)[0].query['fieldSelector'] == 'metadata.name=' + JOB
    assert server.of('GET', PODS)[0].query['labelSelector'] == 'job-name=' + JOB
    assert server.of('PATCH', JOB_PATH)[0].body == {
        'metadata': {'annotations': {'nodewright.nvidia.com/state-recorded': 'true'}},
        'spec': {'ttlSecondsAfterFinished': 3600}}
    assert server.of('DELETE', JOB_PATH)[0].body == {'propagationPolicy': 'Background',
                                                     'preconditions': {'uid': 'job-uid-1'}}
    state, status = node_state_of(stored_node)
    assert state[KEY] == result['entry'] and (state[KEY]['stage'], state[KEY]['state']) == (STAGE, 'complete')
    assert status == 'in_progress'
    assert result['outcome'] == pod_verdicts.SUCCEEDED and result['restarts'] == 0
    assert result['pod'] == {'name': JOB, 'namespace': NS, 'uid': 'job-uid-1', 'kind': 'Job', 'job_pod': JOB + '-abcde',
                             'adopted': False, 'deleted': True, 'replaced': None}
    assert result['logs'] == dict((name, 'ran\n') for name in CONTAINERS)


def pod_stage_requests(**params):
    """The requests of the same successful stage as a bare pod (v0.15), scripted as test_pod_run.py does."""
    pods = FakeApiServer()
    pods.reply('POST', EVENTS, status=201, body={}, repeat=True)
    pods.reply('GET', pod_tests.CR_PATH, status=404, body=NOT_FOUND, repeat=True)
    stored = Stored(node('n1', 10, labels={'pool': 'gpu'}))
    pods.reply('GET', NODE_PATH, body=stored.get, repeat=True)
    pod_tests.script_preflight(pods)
    pod_tests.script_a_run_that_succeeds(pods, stored)
    if params.get('collect_logs') == 'on_failure':
        pods._script.pop(('GET', pod_tests.POD_PATH + '/log', False))  # pylint: disable=protected-access
    assert package_stage.run(pod_tests.FakeModule(**params), pods.kube())['outcome'] == pod_verdicts.SUCCEEDED
    assert pods.pending() == []
    return pod_tests.calls(pods)


@pytest.mark.parametrize('collect_logs, more', [('always', ['GET ' + PODS, 'PATCH ' + JOB_PATH]),
                                                ('on_failure', ['PATCH ' + JOB_PATH])])
def test_a_job_stage_costs_the_pod_stages_requests_and_two_more(server, stored_node, collect_logs, more):
    """The same successful stage as a pod (v0.15) and as a Job (v0.18+): the same requests (on the Job instead of
    the pod) plus the list of the Job's pods (its logs) and the mark of the Job; without the logs, the mark only."""
    script_a_job_that_succeeds(server, stored_node)
    if collect_logs == 'on_failure':
        server._script.pop(('GET', PODS, False))  # pylint: disable=protected-access
        server._script.pop(('GET', '%s/%s-abcde/log' % (PODS, JOB), False))  # pylint: disable=protected-access
    run(server, FakeModule(collect_logs=collect_logs))
    job_requests = calls(server)
    pod_requests = pod_stage_requests(collect_logs=collect_logs)

    assert len(job_requests) == len(pod_requests) + len(more)
    kinds = [call.replace(JOBS, PODS).replace(JOB_PATH, pod_tests.POD_PATH).replace(NS, pod_tests.NS)
             for call in job_requests if call not in more]
    assert [call.replace('%s-abcde' % pod_tests.POD, pod_tests.POD) for call in kinds] == pod_requests


def test_a_job_that_fails_its_backoff_limit_is_recorded_erroring_with_its_pods_logs(server, stored_node):
    script_preflight(server)
    script_writes(server, stored_node)
    server.reply('POST', JOBS, status=201, body=created)
    failed = job_doc([('Failed', 'BackoffLimitExceeded')], 21, failed=1)
    script_job_watch(server, job_doc([], 21, active=1), failed)
    failing = [terminated(CONTAINERS[0]), terminated(CONTAINERS[1], exit_code=3, reason='Error'),
               {'name': CONTAINERS[2], 'restartCount': 0, 'state': {'waiting': {'reason': 'PodInitializing'}}}]
    # a pod of an earlier Job of the same name, still being collected, is not this Job's
    script_pods(server, child_pod(failing, 'Failed'), child_pod([], 'Failed', name=JOB + '-old00', job_uid='old'))
    script_logs(server, text='line 1\nboom\n')
    server.reply('PATCH', JOB_PATH, body=lambda request: failed)

    with pytest.raises(ModuleFailed) as exc:
        run(server, FakeModule(collect_logs='on_failure'))

    assert calls(server)[-7:] == [
        'GET %s watch' % JOBS, 'GET ' + PODS] + ['GET %s/%s-abcde/log' % (PODS, JOB)] * 2 + [
        'PATCH ' + NODE_PATH, 'PATCH ' + NODE_STATUS_PATH, 'PATCH ' + JOB_PATH]  # kept: delete_pod on_success
    assert server.of('PATCH', JOB_PATH)[0].body['spec'] == {'ttlSecondsAfterFinished': 86400}
    state, status = node_state_of(stored_node)
    assert (state[KEY]['stage'], state[KEY]['state'], state[KEY]['restarts']) == (STAGE, 'erroring', 1)
    assert status == 'erroring'
    failure = exc.value.result
    assert failure['outcome'] == pod_verdicts.FAILED and failure['entry'] == state[KEY]
    assert (failure['container'], failure['exit_code'], failure['reason']) == (CONTAINERS[1], 3, 'Error')
    assert failure['logs'] == {CONTAINERS[0]: 'line 1\nboom\n', CONTAINERS[1]: 'line 1\nboom\n'}
    assert failure['pod']['deleted'] is False and failure['pod']['job_pod'] == JOB + '-abcde'
    assert 'init container %s failed (exit code 3, reason Error, 1 restart(s))' % CONTAINERS[1] in exc.value.msg
    assert exc.value.msg.endswith('line 1\nboom')


def test_a_job_that_fails_without_a_failed_pod_says_why_the_job_failed(server, stored_node):
    script_preflight(server)
    script_writes(server, stored_node)
    server.reply('POST', JOBS, status=201, body=created)
    script_job_watch(server, job_doc([('Failed', 'DeadlineExceeded')], 21, failed=1))
    script_pods(server)
    server.reply('PATCH', JOB_PATH, body=lambda request: job_doc([('Failed', 'DeadlineExceeded')], 22))
    with pytest.raises(ModuleFailed) as exc:
        run(server, FakeModule(collect_logs='on_failure'))
    assert 'job %s failed (DeadlineExceeded); recorded as erroring' % JOB in exc.value.msg
    assert exc.value.result['logs_unavailable'] == dict((c, 'no pod of job %s/%s to read it from' % (NS, JOB))
                                                        for c in CONTAINERS)


def record_in_progress(stored, state='in_progress'):
    entry = node_annotations.upsert({}, PACKAGE.name, PACKAGE.version, PACKAGE.image, state, STAGE)[0]
    stored.doc['metadata'].setdefault('annotations', {})[STATE_KEY] = node_annotations.encode(entry)


def test_a_job_left_running_by_the_operator_is_adopted_not_created(server, stored_node):
    # a handoff from a v0.20 operator mid-stage: its Job runs, the node says in progress
    record_in_progress(stored_node)
    running = job_doc([], 20, uid='operator-job', active=1)
    script_preflight(server, existing=running)
    script_writes(server, stored_node)
    server.reply('GET', JOBS, body={'metadata': {'resourceVersion': '20'}, 'items': [running]})
    server.stream('GET', JOBS, [event('MODIFIED', job_doc([('Complete', 'CompletionsReached')], 21, uid='operator-job',
                                                          succeeded=1))])
    server.reply('PATCH', JOB_PATH, body=lambda request: running)
    server.reply('DELETE', JOB_PATH, body=DELETED)

    result = run(server, FakeModule(collect_logs='on_failure'))

    assert [r.query.get('dryRun') for r in server.of('POST', JOBS)] == ['All']  # the dry run (409), no second Job
    assert calls(server)[:4] == ['GET ' + NODE_PATH, 'POST %s dry-run' % JOBS, 'GET ' + JOB_PATH,
                                 'PATCH %s dry-run' % NODE_PATH]
    assert result['pod']['adopted'] is True and result['pod']['uid'] == 'operator-job'
    assert result['outcome'] == pod_verdicts.SUCCEEDED and node_state_of(stored_node)[0][KEY]['state'] == 'complete'
    assert server.of('DELETE', JOB_PATH)[0].body['preconditions'] == {'uid': 'operator-job'}


@pytest.mark.parametrize('change, state, why', [
    (lambda doc: doc['metadata']['annotations'].update({NODEWRIGHT.package_annotation: '{}'}), 'in_progress',
     'it no longer matches the CR: its package annotation is {}'),
    (lambda doc: doc['metadata']['labels'].update({NODEWRIGHT.package_label: 'tuning-1.2.2'}), 'in_progress',
     'its label nodewright.nvidia.com/package is tuning-1.2.2, the CR asks for tuning-1.2.3'),
    (lambda doc: doc['status']['conditions'].append({'type': 'Failed', 'status': 'True', 'reason': 'DeadlineExceeded'}),
     'erroring', 'it failed in an earlier attempt (recorded as erroring)'),
    (lambda doc: doc['metadata'].update(annotations=dict(doc['metadata']['annotations'], **{
        NODEWRIGHT.package_annotation: pod_layout.package_annotation('demo', PACKAGE, STAGE, invalid=True)})),
     'in_progress', 'runs a package the CR no longer has'),
])
def test_a_job_that_is_no_longer_the_crs_is_replaced_with_its_pods(server, stored_node, change, state, why):
    record_in_progress(stored_node, state)
    left = job_doc([], 15, uid='old-job')
    change(left)
    script_preflight(server, existing=left)   # the dry run refused: the Job is there, and read
    server.reply('DELETE', JOB_PATH, body=DELETED)
    server.reply('GET', JOBS, body={'metadata': {'resourceVersion': '16'}, 'items': []})   # gone at once
    kube = kube_of(server)
    runner = job_run.runner_for(NODEWRIGHT, kube, pod_manifest(), CONTAINERS, CR, PACKAGE, STAGE, cr_uid='cr-uid-1',
                                cr_generation=4, entry=node_state_of(stored_node)[0][KEY])
    assert runner.preflight() is None
    assert why in runner.replaced and runner.replaced.startswith('job %s/%s was replaced: ' % (NS, JOB))
    assert server.of('DELETE', JOB_PATH)[0].body == {'propagationPolicy': 'Background', 'preconditions': {'uid': 'old-job'}}
    assert server.of('GET', JOBS)[0].query['fieldSelector'] == 'metadata.name=' + JOB
    assert len(server.of('POST', JOBS)) == 1 and server.pending() == []


def test_a_job_for_another_node_is_not_adopted(server, stored_node):
    other = job_doc()
    other['spec']['template']['spec']['nodeName'] = 'n2'
    script_preflight(server, existing=other)
    with pytest.raises(kube_api.KubeError) as exc:
        run(server, FakeModule())
    assert 'job %s/%s exists for node n2, not for n1; refusing to adopt it' % (NS, JOB) in exc.value.message


def test_check_mode_sends_only_dry_runs_and_creates_no_job(server, stored_node):
    script_preflight(server)
    server.reply('PATCH', NODE_PATH, body=stored_node.patch)
    before = copy.deepcopy(stored_node.doc)

    result = run(server, FakeModule(check_mode=True, diff=True))

    assert calls(server) == ['GET ' + NODE_PATH, 'POST %s dry-run' % JOBS, 'PATCH %s dry-run' % NODE_PATH]
    assert stored_node.doc == before
    assert result['outcome'] == 'planned' and result['adopt'] is False
    assert result['manifest'] == expected_job() and result['pod'] == {'name': JOB, 'namespace': NS}


def test_check_mode_names_a_stale_job_and_deletes_nothing(server, stored_node):
    script_preflight(server, existing=job_doc())   # the node's state does not list it
    server.reply('PATCH', NODE_PATH, body=stored_node.patch)
    result = run(server, FakeModule(check_mode=True))
    assert server.of('DELETE', JOB_PATH) == []
    assert [r.query.get('dryRun') for r in server.of('POST', JOBS)] == ['All']
    assert result['adopt'] is False and "does not list its package" in result['replace']


def test_retries_are_the_jobs_backoff_limit(server, stored_node):
    script_preflight(server)
    server.reply('PATCH', NODE_PATH, body=stored_node.patch)
    result = run(server, FakeModule(check_mode=True, stage_retries=2))
    assert result['manifest']['spec']['backoffLimit'] == 2 and result['manifest'] == expected_job(retries=2)
    assert server.of('POST', JOBS)[0].body['spec']['backoffLimit'] == 2


def test_the_skyhook_contract_keeps_the_bare_pod():
    kube = FakeApiServer().kube()
    skyhook_pod = pod_layout.stage_pod(CR, PACKAGE, STAGE, 'n1', 'skyhook')
    assert isinstance(job_run.runner_for(SKYHOOK, kube, skyhook_pod, CONTAINERS, CR, PACKAGE, STAGE), pod_run.PodRun)
    runner = job_run.runner_for(NODEWRIGHT, kube, pod_manifest(), CONTAINERS, CR, PACKAGE, STAGE)
    assert isinstance(runner, job_run.JobRun) and runner.manifest['kind'] == 'Job'


# --------------------------------------------------------------------------- an interrupt Job

INTERRUPT = {'type': 'service', 'services': ['kubelet']}
INTERRUPT_JOB = pod_layout.interrupt_pod_name('demo', 'service', 'interrupt', 'n1')


def test_an_interrupt_runs_as_an_interrupt_job_judged_by_its_pod(server, stored_node):
    path = '%s/%s' % (JOBS, INTERRUPT_JOB)
    manifest = expected_job(stage='interrupt', interrupt=INTERRUPT)
    server.reply('POST', JOBS, status=201, body=created, repeat=True)
    script_writes(server, stored_node, configmaps=False)
    server.reply('POST', CMS, status=201, body=lambda request: request.body)
    pod_name = INTERRUPT_JOB[:57] + '-xyz12'

    def pod(statuses, phase):
        doc = child_pod(statuses, phase, name=pod_name)
        doc['metadata']['labels'][job_run.JOB_NAME_LABEL] = INTERRUPT_JOB
        return doc
    server.reply('GET', PODS, body={'metadata': {'resourceVersion': '20'}, 'items': []})
    server.stream('GET', PODS, [event('ADDED', pod([], 'Pending')),
                                event('MODIFIED', pod([terminated('interrupt')], 'Running'))])
    script_logs(server, pod_name)
    server.reply('PATCH', path, body=lambda request: job_doc(manifest=manifest))
    server.reply('DELETE', path, body=DELETED)

    result = run(server, FakeModule(node_interrupt, stage='interrupt'), which=node_interrupt)

    assert server.of('POST', JOBS)[1].body == manifest
    assert manifest['spec']['backoffLimit'] == job_layout.INTERRUPT_BACKOFF_LIMIT
    watch = server.of('GET', PODS, watch=True)[0]
    assert watch.query['labelSelector'] == 'job-name=' + INTERRUPT_JOB
    assert result['outcome'] == pod_verdicts.SUCCEEDED and result['pod']['job_pod'] == pod_name
    assert server.of('PATCH', path)[0].body['metadata']['annotations'] == {'nodewright.nvidia.com/state-recorded': 'true'}
    assert node_state_of(stored_node)[0][KEY]['state'] == 'complete'


def test_an_interrupt_pod_failing_past_its_retries_fails_the_interrupt_job(server, stored_node):
    path = '%s/%s' % (JOBS, INTERRUPT_JOB)
    server.reply('POST', JOBS, status=201, body=created, repeat=True)
    script_writes(server, stored_node, configmaps=False)
    server.reply('POST', CMS, status=201, body=lambda request: request.body)
    looping = child_pod([{'name': 'interrupt', 'restartCount': 1, 'lastState': {'terminated': {'exitCode': 2}},
                          'state': {'waiting': {'reason': 'CrashLoopBackOff'}}}], 'Pending', name='ij-pod')
    looping['metadata']['labels'][job_run.JOB_NAME_LABEL] = INTERRUPT_JOB
    server.reply('GET', PODS, body={'metadata': {'resourceVersion': '20'}, 'items': [looping]})
    script_logs(server, 'ij-pod', 'no such unit\n')
    server.reply('PATCH', path, body=lambda request: job_doc())

    with pytest.raises(ModuleFailed) as exc:
        run(server, FakeModule(node_interrupt, stage='interrupt', stage_retries=1), which=node_interrupt)

    assert 'container interrupt failed (exit code 2, reason CrashLoopBackOff)' in exc.value.msg
    assert server.of('GET', '%s/ij-pod/log' % PODS)[0].query['previous'] == 'true'
    marked = server.of('PATCH', path)[0].body
    assert marked['metadata']['annotations'] == {'nodewright.nvidia.com/state-recorded': 'true',
                                                 'nodewright.nvidia.com/restart-limit-exceeded': 'true'}
    assert marked['spec'] == {'ttlSecondsAfterFinished': 86400}
    assert server.of('DELETE', path) == []      # a failed Job stays (delete_pod on_success)
    assert node_state_of(stored_node)[0][KEY]['state'] == 'erroring'


def test_a_job_the_edited_cr_no_longer_asks_for_is_deleted_and_superseded(server, monkeypatch):
    """recheck (package_stage's, for a CR read from the cluster) compares the running Job with the pod the CR asks
    for now: another version is another package annotation, so the Job is deleted with its pods."""
    monkeypatch.setattr(pod_run, 'RECHECK_SECONDS', 0.2)
    kube = kube_of(server)
    server.reply('POST', JOBS, status=201, body=created)
    server.reply('GET', JOBS, body={'metadata': {'resourceVersion': '20'}, 'items': [job_doc(active=1)]})
    server.stream('GET', JOBS, [Pause(0.4)])                    # still running at the recheck
    server.reply('DELETE', JOB_PATH, body=DELETED)
    server.reply('GET', JOBS, body={'metadata': {'resourceVersion': '21'}, 'items': []})
    edited = cr_validation.build_cr(dict(CR_DOC, spec={'packages': {'tuning': dict(CR_DOC['spec']['packages']['tuning'],
                                                                                   version='1.2.4')}}))
    wanted = pod_layout.stage_pod(edited, edited.packages['tuning'], STAGE, 'n1', NS, gen=NODEWRIGHT)
    runner = job_run.runner_for(NODEWRIGHT, kube, pod_manifest(), CONTAINERS, CR, PACKAGE, STAGE,
                                recheck=lambda running: running.differs(wanted), timeout=30)
    runner.looked = True   # as after the preflight: nothing to adopt
    runner.start()

    verdict = runner.wait()

    assert verdict['outcome'] == pod_run.SUPERSEDED and 'its package annotation is' in verdict['reason']
    assert server.of('DELETE', JOB_PATH)[0].body == {'propagationPolicy': 'Background',
                                                     'preconditions': {'uid': 'job-uid-1'}}
    assert server.pending() == []
    # the same CR asks for the same Job: nothing differs
    assert runner.differs(pod_manifest()) is None


def test_retries_is_the_deprecated_alias_of_stage_retries():
    from ansible.module_utils.common.arg_spec import ArgumentSpecValidator  # pylint: disable=import-outside-toplevel
    for code in (package_stage, node_interrupt):
        args = code.module_args()
        checked = ArgumentSpecValidator(args['argument_spec'], args.get('mutually_exclusive'), args.get('required_together'),
                                        args.get('required_one_of'), args.get('required_if')).validate(
            {'node': 'n1', 'cr_name': 'x', 'package': 'tuning', 'stage': 'interrupt', 'retries': 2})
        assert checked.validated_parameters['stage_retries'] == 2
        assert [d['msg'] for d in checked._deprecations] == ["Alias 'retries' is deprecated. See the module docs for more information"]


def test_force_is_the_deprecated_alias_of_rerun():
    # force also names the operator guard's override (node_update, operator_guard, the node role): rerun is its
    # one meaning here, a stage run again although the node records it complete
    from ansible.module_utils.common.arg_spec import ArgumentSpecValidator  # pylint: disable=import-outside-toplevel
    for code in (package_stage, node_interrupt):
        args = code.module_args()
        assert 'force' not in args['argument_spec'] and args['argument_spec']['rerun']['default'] is False
        checked = ArgumentSpecValidator(args['argument_spec'], args.get('mutually_exclusive'), args.get('required_together'),
                                        args.get('required_one_of'), args.get('required_if')).validate(
            {'node': 'n1', 'cr_name': 'x', 'package': 'tuning', 'stage': 'interrupt', 'force': True})
        assert checked.validated_parameters['rerun'] is True
        assert [d['msg'] for d in checked._deprecations] == ["Alias 'force' is deprecated. See the module docs for more information"]
        assert [d['version'] for d in checked._deprecations] == ['2.0.0']
