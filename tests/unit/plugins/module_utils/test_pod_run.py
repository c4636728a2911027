# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""pod_run.run_recorded through package_stage.run, against a scripted API server (fake_api).

Each test scripts exactly the requests ``run_recorded``'s docstring lists, so an extra, missing
or reordered request fails it (an unscripted request is an AssertionError, a scripted one left
over shows in ``server.pending()``). The cluster tests (tests/kube/test_package_stage.py) remain
the real check of what a pod does; these pin the order of the writes and what is recorded.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.nodewright.bridge.plugins.module_utils.model import constants as C
from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_validation
from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube as kube_api
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import node_annotations
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import pod_layout
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import pod_verdicts
from ansible_collections.nodewright.bridge.plugins.module_utils.api import pod_run
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import stale_pods
from ansible_collections.nodewright.bridge.plugins.module_utils.model.api_generation import NODEWRIGHT, SKYHOOK
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import package_stage
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules._runner import ModuleFailed
from ansible_collections.nodewright.bridge.tests.unit.plugins.module_utils.fake_api import (
    FakeApiServer, Stored, event, guard, node, status_body, written)

NS = pod_layout.DEFAULT_NAMESPACE
CR_DOC = {
    'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'Skyhook',
    'metadata': {'name': 'demo', 'uid': 'cr-uid-1', 'generation': 4},
    'spec': {'packages': {'tuning': {'version': '1.2.3', 'image': 'ghcr.io/x/tuning', 'configMap': {'a.sh': 'echo a'}}}},
    'status': {'nodePriority': {'n1': '2026-05-01T10:00:00Z'}},
}
CR = cr_validation.build_cr(CR_DOC)
PACKAGE = CR.packages['tuning']
KEY = PACKAGE.unique_name
STAGE = 'apply'
POD = pod_layout.stage_pod_name('demo', PACKAGE, STAGE, 'n1')
PODS = '/api/v1/namespaces/%s/pods' % NS
POD_PATH = '%s/%s' % (PODS, POD)
CMS = '/api/v1/namespaces/%s/configmaps' % NS
PACKAGE_CM = pod_layout.package_configmap_name('demo', PACKAGE)
META_CM = pod_layout.node_metadata_configmap_name('demo', 'n1')
NODE_PATH = '/api/v1/nodes/n1'
NODE_STATUS_PATH = NODE_PATH + '/status'
STATE_KEY = node_annotations.node_state_key('demo')
STATUS_KEY = node_annotations.status_key('demo')
CONTAINERS = pod_layout.init_container_names('tuning', STAGE)
NOT_FOUND = status_body(404, 'NotFound', 'not found')
ALREADY_EXISTS = status_body(409, 'AlreadyExists', 'pods "%s" already exists' % POD)
EVENTS = '/api/v1/namespaces/default/events'
CR_PATH = '/apis/skyhook.nvidia.com/v1alpha1/skyhooks/demo'


class FakeModule(object):
    """What run_recorded and package_stage.run read of an AnsibleModule: params (the spec's defaults), check and diff mode."""

    def __init__(self, check_mode=False, diff=False, **params):
        spec = package_stage.module_args()['argument_spec']
        self.params = dict((name, option.get('default')) for name, option in spec.items())
        self.params.update(node='n1', cr=CR_DOC, stage=STAGE, package='tuning', timeout=30)
        self.params.update(params)
        self.check_mode = check_mode
        self._diff = diff


@pytest.fixture
def server():
    made = FakeApiServer()
    # the stage's Event on the node (best effort; tests/unit/plugins/module_utils/test_node_events.py tests it)
    made.reply('POST', EVENTS, status=201, body={}, repeat=True)
    # the CR is given as a document: its copy in the cluster is looked up for a pause (none here)
    made.reply('GET', CR_PATH, status=404, body=NOT_FOUND, repeat=True)
    return made


@pytest.fixture
def stored_node(server):
    """Node n1 as the server keeps it: every GET reads it, every PATCH changes it (not a dry run)."""
    stored = Stored(node('n1', 10, labels={'pool': 'gpu'}))
    server.reply('GET', NODE_PATH, body=stored.get, repeat=True)
    return stored


def pod_doc(statuses=None, phase='Pending', resource_version=20, node_name='n1'):
    manifest = pod_layout.stage_pod(CR, PACKAGE, STAGE, 'n1', NS)
    manifest['metadata'].update(uid='pod-uid-1', resourceVersion=str(resource_version))
    manifest['spec']['nodeName'] = node_name
    manifest['status'] = {'phase': phase, 'initContainerStatuses': statuses or []}
    return manifest


def terminated(name, exit_code=0, restarts=0, reason='Completed'):
    return {'name': name, 'restartCount': restarts,
            'state': {'terminated': {'exitCode': exit_code, 'reason': reason}}}


def created(request):
    """The API server's answer to a pod create: the pod sent, with a uid and a version."""
    return dict(request.body, metadata=dict(request.body['metadata'], uid='pod-uid-1', resourceVersion='20'))


def script_preflight(server, existing=None):
    """The pod as a dry run: accepted, or (``existing``) refused as already there, which is then read."""
    if existing is None:
        server.reply('POST', PODS, status=201, body=created)
    else:
        server.reply('POST', PODS, status=409, body=ALREADY_EXISTS)
        server.reply('GET', POD_PATH, body=existing)


def script_configmaps(server):
    """Both ConfigMaps created: none was seen before, so none is asked for (kube.apply_configmap)."""
    server.reply('POST', CMS, status=201, body=lambda request: request.body, repeat=True)


def script_watch(server, *statuses_then):
    """The pod's list (Pending, nothing run), then one MODIFIED event per status list."""
    server.reply('GET', PODS, body={'metadata': {'resourceVersion': '20'}, 'items': [pod_doc()]})
    server.stream('GET', PODS, [event('MODIFIED', pod_doc(statuses, resource_version=21 + index))
                                for index, statuses in enumerate(statuses_then)])


def script_logs(server, text='ran\n'):
    server.reply('GET', POD_PATH + '/log', body=text, headers={'Content-Type': 'text/plain'}, repeat=True)


def calls(server):
    """The requests as ``METHOD path[ dry-run|watch]``, the order run_recorded's docstring lists.

    Without the stage's Event, which package_stage writes after run_recorded (see events_of).
    """
    return ['%s %s%s' % (r.method, r.path, ' dry-run' if r.query.get('dryRun') else ' watch' if r.watch else '')
            for r in server.requests if r.path not in (EVENTS, CR_PATH)]


def events_of(server):
    """(reason, type, message) of the Events written on the node."""
    return [(r.body['reason'], r.body['type'], r.body['message']) for r in server.of('POST', EVENTS)]


def node_state_of(stored):
    annotations = stored.doc['metadata']['annotations']
    return node_annotations.decode(annotations[STATE_KEY]), annotations.get(STATUS_KEY)


def script_a_run_that_succeeds(server, stored_node):
    """After the preflight: every node write applied, ConfigMaps created, the pod created, runs, logs, deleted."""
    server.reply('PATCH', NODE_PATH, body=stored_node.patch, repeat=True)
    server.reply('PATCH', NODE_STATUS_PATH, body=stored_node.patch_status, repeat=True)
    script_configmaps(server)
    server.reply('POST', PODS, status=201, body=created)
    script_watch(server, [terminated(name) for name in CONTAINERS])
    script_logs(server)
    server.reply('DELETE', POD_PATH, body={'kind': 'Status', 'status': 'Success'})


def run(server, module):
    result = package_stage.run(module, server.kube())
    assert server.pending() == []
    return result


def test_a_stage_that_succeeds_is_written_in_the_operators_order_and_recorded_complete(server, stored_node):
    script_preflight(server)
    script_a_run_that_succeeds(server, stored_node)

    result = run(server, FakeModule(diff=True))

    assert calls(server) == [
        'GET ' + NODE_PATH,                           # read_entry
        'POST %s dry-run' % PODS,                     # preflight: the pod as a dry run, accepted: nothing to adopt
        'PATCH %s dry-run' % NODE_PATH,               # the in_progress write as a dry run
        'POST ' + CMS, 'POST ' + CMS,                 # the package's and the node's ConfigMaps, created
        'PATCH ' + NODE_PATH,                         # in_progress, before the pod exists
        'PATCH ' + NODE_STATUS_PATH,                  # the CR's node conditions appear (NotReady, Erroring)
        'POST ' + PODS,
        'GET ' + PODS, 'GET %s watch' % PODS,         # the watch to the verdict
    ] + ['GET %s/log' % POD_PATH] * 3 + [
        'PATCH ' + NODE_PATH,                         # the success (the conditions stay as they are)
        'DELETE ' + POD_PATH]
    status_patch = server.of('PATCH', NODE_STATUS_PATH)[0].body
    assert status_patch['metadata'] == {'resourceVersion': '11'}  # guarded by the node the in_progress write returned
    assert [(c['type'], c['status'], c['reason']) for c in status_patch['status']['conditions']] == [
        ('skyhook.nvidia.com/demo/NotReady', 'True', 'Incomplete'),
        ('skyhook.nvidia.com/demo/Erroring', 'False', 'Not Erroring')]
    patches = server.of('PATCH', NODE_PATH)
    in_progress = node_annotations.decode(written(patches[1].body)['annotations'][STATE_KEY])
    assert in_progress[KEY]['state'] == 'in_progress' and in_progress[KEY]['stage'] == STAGE
    assert written(patches[1].body)['annotations'][STATUS_KEY] == 'in_progress'
    # guarded by the keys it writes, as read (absent: null), not by the node's resourceVersion
    assert guard(patches[1].body) == ('keys', {'annotations/' + STATE_KEY: None, 'annotations/' + STATUS_KEY: None,
                                               'annotations/' + node_annotations.version_key('demo'): None,
                                               'labels/' + STATUS_KEY: None})
    # the created pod is the operator's, and the watch follows that pod only
    assert server.of('POST', PODS)[1].body['metadata']['name'] == POD
    assert server.of('GET', PODS, watch=True)[0].query['fieldSelector'] == 'metadata.name=' + POD
    assert [r.query['container'] for r in server.of('GET', POD_PATH + '/log')] == CONTAINERS
    assert server.of('DELETE', POD_PATH)[0].body == {'preconditions': {'uid': 'pod-uid-1'}}

    state, status = node_state_of(stored_node)
    assert state[KEY] == result['entry'] and state[KEY]['state'] == 'complete' and state[KEY]['stage'] == STAGE
    assert status == 'in_progress'  # the success write leaves status_<cr> as the in_progress write set it
    assert result['outcome'] == pod_verdicts.SUCCEEDED and result['changed'] is True
    assert result['configmaps'] == {PACKAGE_CM: 'created', META_CM: 'created'}
    assert result['pod'] == {'name': POD, 'namespace': NS, 'uid': 'pod-uid-1', 'adopted': False, 'deleted': True,
                             'replaced': None}
    assert result['logs'] == dict((name, 'ran\n') for name in CONTAINERS) and result['logs_unavailable'] == {}
    assert result['restarts'] == 0
    assert result['diff']['before'] == {'entry': None} and result['diff']['after'] == {'entry': state[KEY]}
    # last, one Event on the node (after the pod's delete: calls() leaves it out)
    assert server.requests[-1].path == EVENTS
    assert events_of(server) == [('Apply', 'Normal', 'Package [tuning:1.2.3] stage [apply] complete on [skyhook:demo]')]


def test_a_stage_whose_pod_fails_is_recorded_erroring_with_its_logs(server, stored_node):
    script_preflight(server)
    server.reply('PATCH', NODE_PATH, body=stored_node.patch, repeat=True)
    server.reply('PATCH', NODE_STATUS_PATH, body=stored_node.patch_status, repeat=True)
    script_configmaps(server)
    server.reply('POST', PODS, status=201, body=created)
    failing = [terminated(CONTAINERS[0]), terminated(CONTAINERS[1], exit_code=3, reason='Error'),
               {'name': CONTAINERS[2], 'restartCount': 0, 'state': {'waiting': {'reason': 'PodInitializing'}}}]
    script_watch(server, failing)
    script_logs(server, 'line 1\nboom\n')

    with pytest.raises(ModuleFailed) as exc:
        run(server, FakeModule(collect_logs='on_failure'))

    # the container that never started has no log to read
    assert [r.query['container'] for r in server.of('GET', POD_PATH + '/log')] == CONTAINERS[:2]
    # the failed pod stays, as the operator leaves it (kubectl skyhook package logs reads it)
    assert calls(server)[-4:] == ['GET %s/log' % POD_PATH] * 2 + ['PATCH ' + NODE_PATH, 'PATCH ' + NODE_STATUS_PATH]
    # skyhook/failure-skyhook/node-assert.yaml
    conditions = dict((c['type'], (c['status'], c.get('reason'))) for c in stored_node.doc['status']['conditions'])
    assert conditions['skyhook.nvidia.com/demo/NotReady'] == ('True', 'Incomplete')
    assert conditions['skyhook.nvidia.com/demo/Erroring'] == ('True', 'Package(s) Erroring or Unknown')
    assert events_of(server) == [('Apply', 'Warning', 'Package [tuning:1.2.3] stage [apply] erroring on [skyhook:demo]: '
                                                      'init container %s failed (exit code 3, reason Error, 0 restart(s))'
                                  % CONTAINERS[1])]
    state, status = node_state_of(stored_node)
    assert state[KEY]['state'] == 'erroring' and state[KEY]['stage'] == STAGE
    assert status == 'erroring'
    failed = exc.value.result
    assert failed['outcome'] == pod_verdicts.FAILED and failed['entry'] == state[KEY]
    assert failed['container'] == CONTAINERS[1] and failed['exit_code'] == 3 and failed['reason'] == 'Error'
    assert failed['logs'] == {CONTAINERS[0]: 'line 1\nboom\n', CONTAINERS[1]: 'line 1\nboom\n'}
    assert failed['pod']['deleted'] is False
    assert 'init container %s failed (exit code 3' % CONTAINERS[1] in exc.value.msg
    assert 'recorded as erroring' in exc.value.msg and exc.value.msg.endswith('line 1\nboom')


def test_a_failed_in_progress_write_creates_no_pod_and_raises(server, stored_node):
    script_preflight(server)
    server.reply('PATCH', NODE_PATH, body=stored_node.patch)  # the dry run
    script_configmaps(server)
    server.reply('PATCH', NODE_PATH, status=403, body=status_body(403, 'Forbidden', 'nodes "n1" is forbidden'))

    with pytest.raises(kube_api.KubeError) as exc:
        run(server, FakeModule())

    assert exc.value.status == 403
    # the record goes first: a pod nobody records is never made
    assert calls(server)[-1] == 'PATCH ' + NODE_PATH
    assert [r.query.get('dryRun') for r in server.of('POST', PODS)] == ['All']
    assert STATE_KEY not in stored_node.doc['metadata']['annotations']


def test_a_failed_create_leaves_the_stage_in_progress_and_the_next_run_creates_its_pod_once(server, stored_node):
    script_preflight(server)
    server.reply('PATCH', NODE_PATH, body=stored_node.patch, repeat=True)
    server.reply('PATCH', NODE_STATUS_PATH, body=stored_node.patch_status, repeat=True)
    script_configmaps(server)
    server.reply('POST', PODS, status=403, body=status_body(403, 'Forbidden', 'exceeded quota: pods'))

    with pytest.raises(kube_api.KubeError) as exc:
        run(server, FakeModule())

    assert exc.value.status == 403 and calls(server)[-1] == 'POST ' + PODS
    # as a run killed at that moment leaves it: the stage in progress, no pod (the operator's ApplyPackage, too,
    # creates the pod of an in_progress package that has none)
    state, status = node_state_of(stored_node)
    assert (state[KEY]['stage'], state[KEY]['state'], status) == (STAGE, 'in_progress', 'in_progress')
    assert server.of('DELETE', POD_PATH) == []

    server.requests[:] = []
    script_preflight(server)
    script_a_run_that_succeeds(server, stored_node)
    result = run(server, FakeModule())
    assert [r.query.get('dryRun') for r in server.of('POST', PODS)] == ['All', None]  # one pod, created once
    assert result['pod']['adopted'] is False and result['outcome'] == pod_verdicts.SUCCEEDED
    assert node_state_of(stored_node)[0][KEY]['state'] == 'complete'


def record_in_progress(stored, stage=STAGE, state='in_progress', package=PACKAGE):
    """The node as an interrupted run left it: the package's entry at ``stage`` in ``state``."""
    entry = node_annotations.upsert({}, package.name, package.version, package.image, state, stage)[0]
    stored.doc['metadata'].setdefault('annotations', {})[STATE_KEY] = node_annotations.encode(entry)


def test_a_pod_left_by_an_interrupted_run_is_adopted_not_created(server, stored_node):
    record_in_progress(stored_node)
    left = pod_doc([terminated(CONTAINERS[0])], phase='Pending')
    script_preflight(server, existing=left)
    server.reply('PATCH', NODE_PATH, body=stored_node.patch, repeat=True)
    server.reply('PATCH', NODE_STATUS_PATH, body=stored_node.patch_status, repeat=True)
    script_configmaps(server)
    script_watch(server, [terminated(name) for name in CONTAINERS])
    script_logs(server)
    server.reply('DELETE', POD_PATH, body={'kind': 'Status', 'status': 'Success'})

    result = run(server, FakeModule())

    assert [r.query.get('dryRun') for r in server.of('POST', PODS)] == ['All']  # the dry run (409), no create
    assert calls(server)[:4] == ['GET ' + NODE_PATH, 'POST %s dry-run' % PODS, 'GET ' + POD_PATH,
                                 'PATCH %s dry-run' % NODE_PATH]
    assert result['pod']['adopted'] is True and result['pod']['uid'] == 'pod-uid-1'
    assert result['outcome'] == pod_verdicts.SUCCEEDED
    assert node_state_of(stored_node)[0][KEY]['state'] == 'complete'


def test_a_pod_of_that_name_on_another_node_is_not_adopted(server, stored_node):
    script_preflight(server, existing=pod_doc(node_name='n2'))
    with pytest.raises(kube_api.KubeError) as exc:
        run(server, FakeModule())
    assert 'exists on node n2, not on n1; refusing to adopt it' in exc.value.message
    assert calls(server) == ['GET ' + NODE_PATH, 'POST %s dry-run' % PODS, 'GET ' + POD_PATH]


def test_check_mode_sends_only_dry_runs_and_writes_nothing(server, stored_node):
    script_preflight(server)
    server.reply('PATCH', NODE_PATH, body=stored_node.patch)
    before = dict(stored_node.doc)

    result = run(server, FakeModule(check_mode=True, diff=True))

    assert calls(server) == ['GET ' + NODE_PATH, 'POST %s dry-run' % PODS, 'PATCH %s dry-run' % NODE_PATH]
    assert stored_node.doc == before
    assert result['outcome'] == 'planned' and result['changed'] is True and result['adopt'] is False
    assert result['entry']['state'] == 'in_progress' and result['entry']['stage'] == STAGE
    assert result['configmaps'] == {PACKAGE_CM: 'planned', META_CM: 'planned'}
    assert result['manifest']['metadata']['name'] == POD
    assert result['diff']['after'] == {'entry': result['entry']}


def test_check_mode_sends_its_dry_runs_even_without_preflight(server, stored_node):
    script_preflight(server)
    server.reply('PATCH', NODE_PATH, body=stored_node.patch)
    run(server, FakeModule(check_mode=True, preflight=False))
    assert [r.query.get('dryRun') for r in server.requests if r.method != 'GET'] == ['All', 'All']


def test_without_preflight_no_dry_run_is_sent(server, stored_node):
    script_a_run_that_succeeds(server, stored_node)

    result = run(server, FakeModule(preflight=False))

    assert [r for r in server.requests if r.query.get('dryRun')] == []
    # nothing looks for a pod to adopt before the create: on a fresh node that GET would only be refused (404)
    assert calls(server)[:3] == ['GET ' + NODE_PATH, 'POST ' + CMS, 'POST ' + CMS]
    assert server.of('GET', POD_PATH) == []
    assert result['outcome'] == pod_verdicts.SUCCEEDED


def test_without_preflight_a_pod_left_by_an_interrupted_run_is_adopted_once_the_create_finds_it(server, stored_node):
    record_in_progress(stored_node)
    server.reply('PATCH', NODE_PATH, body=stored_node.patch, repeat=True)
    server.reply('PATCH', NODE_STATUS_PATH, body=stored_node.patch_status, repeat=True)
    script_configmaps(server)
    server.reply('POST', PODS, status=409, body=ALREADY_EXISTS)
    server.reply('GET', POD_PATH, body=pod_doc([terminated(CONTAINERS[0])]))
    script_watch(server, [terminated(name) for name in CONTAINERS])
    script_logs(server)
    server.reply('DELETE', POD_PATH, body={'kind': 'Status', 'status': 'Success'})

    result = run(server, FakeModule(preflight=False))

    assert calls(server)[3:7] == ['PATCH ' + NODE_PATH, 'PATCH ' + NODE_STATUS_PATH, 'POST ' + PODS, 'GET ' + POD_PATH]
    assert result['pod']['adopted'] is True and result['outcome'] == pod_verdicts.SUCCEEDED


def test_without_preflight_a_stale_pod_the_create_finds_is_replaced(server, stored_node):
    record_in_progress(stored_node, state='erroring')
    left = pod_doc([terminated(CONTAINERS[0]), terminated(CONTAINERS[1], exit_code=1, reason='Error')])
    server.reply('POST', PODS, status=409, body=ALREADY_EXISTS)
    server.reply('GET', POD_PATH, body=left)
    server.reply('DELETE', POD_PATH, body={'kind': 'Status', 'status': 'Success'})
    server.reply('GET', PODS, body={'metadata': {'resourceVersion': '30'}, 'items': []})  # already gone
    script_a_run_that_succeeds(server, stored_node)

    result = run(server, FakeModule(preflight=False))

    assert calls(server)[3:9] == ['PATCH ' + NODE_PATH, 'PATCH ' + NODE_STATUS_PATH, 'POST ' + PODS, 'GET ' + POD_PATH,
                                  'DELETE ' + POD_PATH, 'GET ' + PODS]
    assert calls(server)[9] == 'POST ' + PODS
    assert result['pod']['adopted'] is False and 'failed in an earlier attempt' in result['pod']['replaced']
    assert node_state_of(stored_node)[0][KEY]['state'] == 'complete'


def script_replacement(server, stored_node, left):
    """The dry run refused (409), the stale pod read, deleted (uid precondition, at once) and watched until gone;
    then a fresh run (the dry run's 409 came after admission: no second dry run)."""
    script_preflight(server, existing=left)
    server.reply('DELETE', POD_PATH, body={'kind': 'Status', 'status': 'Success'})
    server.reply('GET', PODS, body={'metadata': {'resourceVersion': '30'}, 'items': []})  # already gone
    script_a_run_that_succeeds(server, stored_node)


def replaced_run(server, stored_node, left):
    script_replacement(server, stored_node, left)
    result = run(server, FakeModule())
    deletes = server.of('DELETE', POD_PATH)
    assert deletes[0].body == {'preconditions': {'uid': 'pod-uid-1'}, 'gracePeriodSeconds': 0}
    assert [r.query.get('dryRun') for r in server.of('POST', PODS)] == ['All', None]  # the dry run and the new pod
    assert result['pod']['adopted'] is False and result['outcome'] == pod_verdicts.SUCCEEDED
    return result


def test_a_failed_pod_of_an_earlier_attempt_is_replaced_not_adopted(server, stored_node):
    record_in_progress(stored_node, state='erroring')
    left = pod_doc([terminated(CONTAINERS[0]), terminated(CONTAINERS[1], exit_code=1, reason='Error')])
    result = replaced_run(server, stored_node, left)
    assert result['pod']['replaced'] == 'pod %s/%s was replaced: it failed in an earlier attempt (recorded as erroring)' % (
        NS, POD)
    assert node_state_of(stored_node)[0][KEY]['state'] == 'complete'


def test_a_pod_with_another_image_is_replaced(server, stored_node):
    # kubectl skyhook package rerun after the image was fixed: the old pod runs the old image
    record_in_progress(stored_node)
    left = pod_doc([terminated(CONTAINERS[0])])
    left['spec']['initContainers'][0]['image'] = 'ghcr.io/x/tuning:1.2.2'
    result = replaced_run(server, stored_node, left)
    assert result['pod']['replaced'].endswith('it no longer matches the CR: container %s runs image ghcr.io/x/tuning:1.2.2, '
                                              'the CR asks for ghcr.io/x/tuning:1.2.3' % CONTAINERS[0])


def test_a_pod_the_nodes_state_does_not_list_is_replaced(server, stored_node):
    # kubectl skyhook node reset dropped the state; the pod of the earlier run is still there
    left = pod_doc([terminated(CONTAINERS[0])])
    result = replaced_run(server, stored_node, left)
    assert "the node's state does not list its package" in result['pod']['replaced']


def test_check_mode_names_a_stale_pod_and_deletes_nothing(server, stored_node):
    left = pod_doc([terminated(CONTAINERS[0])])
    script_preflight(server, existing=left)
    server.reply('PATCH', NODE_PATH, body=stored_node.patch)  # the in_progress dry run
    result = run(server, FakeModule(check_mode=True))
    assert server.of('DELETE', POD_PATH) == []
    assert [r.query.get('dryRun') for r in server.of('POST', PODS)] == ['All']
    assert result['adopt'] is False and "does not list its package" in result['replace']


@pytest.mark.parametrize('change, expected', [
    (lambda pod: pod['metadata']['annotations'].update({C.PACKAGE_ANNOTATION: '{}'}), 'its package annotation is {}'),
    (lambda pod: pod['spec']['initContainers'][1]['args'].__setitem__(0, 'config'), 'the args of container %s differ' % CONTAINERS[1]),
    (lambda pod: pod['spec']['initContainers'][1]['env'].append({'name': 'A', 'value': 'b'}),
     'the env of container %s differ' % CONTAINERS[1]),
    (lambda pod: pod['spec']['initContainers'].pop(), 'its containers are'),
])
def test_stale_pod_reason_names_the_first_difference(change, expected):
    manifest = pod_layout.stage_pod(CR, PACKAGE, STAGE, 'n1', NS)
    pod = pod_doc()
    change(pod)
    entry = {'stage': STAGE, 'state': 'in_progress'}
    assert expected in stale_pods.stale_pod_reason(pod, manifest, entry, STAGE)
    # the CR alone decides for a pod another run just created
    assert expected in stale_pods.stale_pod_reason(pod, manifest, None, STAGE, by_state=False)


def test_stale_pod_reason_keeps_the_crs_pod_for_the_nodes_state():
    # another generation and node order: where the CR and the node stand, not what the pod runs
    manifest = pod_layout.stage_pod(CR, PACKAGE, STAGE, 'n1', NS, node_order=3, cr_generation=5)
    pod = pod_doc([terminated(CONTAINERS[0])])
    assert stale_pods.stale_pod_reason(pod, manifest, {'stage': STAGE, 'state': 'in_progress'}, STAGE) is None
    assert 'at stage config, not apply' in stale_pods.stale_pod_reason(pod, manifest, {'stage': 'config', 'state': 'in_progress'}, STAGE)
    assert 'records stage apply complete' in stale_pods.stale_pod_reason(pod, manifest, {'stage': STAGE, 'state': 'complete'}, STAGE)
    failed = pod_doc([terminated(CONTAINERS[0], exit_code=137, reason='Error')])
    assert 'failed in an earlier attempt' in stale_pods.stale_pod_reason(failed, manifest, {'stage': STAGE, 'state': 'erroring'}, STAGE)
    # a reboot's interrupt pod killed by the reboot: the boot ID decides, not the pod
    assert stale_pods.stale_pod_reason(failed, manifest, {'stage': STAGE, 'state': 'in_progress'}, STAGE,
                                       failed_is_stale=False) is None


@pytest.mark.parametrize('annotations, labels, kind', [
    ({'skyhook.nvidia.com/pause': 'true'}, {}, 'paused'),
    ({'skyhook.nvidia.com/disable': 'true'}, {}, 'disabled'),
    ({}, {'skyhook.nvidia.com/ignore': 'true'}, 'ignored'),
])
@pytest.mark.parametrize('rerun', [False, True])  # rerun runs a complete stage again, never a held one
def test_no_pod_starts_for_a_paused_or_disabled_cr_or_on_an_ignored_node(server, annotations, labels, kind, rerun):
    stored = Stored(node('n1', 10, labels=labels))
    server.reply('GET', NODE_PATH, body=stored.get, repeat=True)
    doc = dict(CR_DOC, metadata=dict(CR_DOC['metadata'], annotations=annotations))
    with pytest.raises(ModuleFailed) as exc:
        package_stage.run(FakeModule(cr=doc, rerun=rerun), server.kube())
    assert exc.value.result['held'] == kind and exc.value.result['changed'] is False
    assert 'no new pod starts on' in exc.value.msg
    assert [r.method for r in server.requests if r.path not in (NODE_PATH, CR_PATH)] == []  # nothing written


def test_the_cluster_copy_of_a_file_given_cr_decides_a_pause(server, stored_node):
    server._script.pop(('GET', CR_PATH, False))  # pylint: disable=protected-access
    server.reply('GET', CR_PATH, body=dict(CR_DOC, metadata=dict(CR_DOC['metadata'],
                                                                 annotations={'skyhook.nvidia.com/pause': 'true'})))
    with pytest.raises(ModuleFailed) as exc:
        package_stage.run(FakeModule(), server.kube())
    assert exc.value.result['held'] == 'paused'


# --------------------------------------------------------------------------- the v0.18+ generation (NODEWRIGHT)
#
# The keys follow NVIDIA/nodewright operator/internal/controller/skyhook_controller.go @01cc2f2d and
# operator/internal/controller/annotations.go @262b5749 (the nodewright.nvidia.com/* pod labels, package annotation
# and node annotations), and operator/api/nodewright/v1alpha1/nodewright_types.go @90d9979d (IsPaused / IsDisabled
# read the CR's own prefix: a NodeWright CR is paused by nodewright.nvidia.com/pause).

NW_DOC = dict(CR_DOC, apiVersion='nodewright.nvidia.com/v1alpha1', kind='NodeWright')
NW_CR = cr_validation.build_cr(NW_DOC)
NW_CR_PATH = '/apis/nodewright.nvidia.com/v1alpha1/nodewrights/demo'


def with_annotations(doc, annotations):
    return dict(doc, metadata=dict(doc['metadata'], annotations=annotations))


@pytest.mark.parametrize('api_version, generation', [
    ('skyhook.nvidia.com/v1alpha1', SKYHOOK), ('nodewright.nvidia.com/v1alpha1', NODEWRIGHT),
    (None, NODEWRIGHT), ('example.com/v1', NODEWRIGHT),   # none of the CRs': the caller's generation
])
def test_a_crs_generation_is_that_of_its_own_api_version(api_version, generation):
    """The pause / disable keys follow the CR's own group (nodewright_types.go @90d9979d, METADATA_PREFIX)."""
    assert pod_run.cr_generation(api_version, NODEWRIGHT) is generation


@pytest.mark.parametrize('annotations, kind', [
    ({'nodewright.nvidia.com/pause': 'true'}, 'paused'),
    ({'nodewright.nvidia.com/disable': 'true'}, 'disabled'),
    ({'skyhook.nvidia.com/pause': 'true', 'skyhook.nvidia.com/disable': 'true'}, None),  # not a NodeWright CR's keys
])
def test_a_nodewright_cr_is_held_by_its_own_groups_annotations(annotations, kind):
    """IsPaused / IsDisabled read nodewright.nvidia.com/pause and /disable on a NodeWright CR (NVIDIA/nodewright
    operator/api/nodewright/v1alpha1/nodewright_types.go @90d9979d; the prefix of skyhook_controller.go @01cc2f2d)."""
    cr = cr_validation.build_cr(with_annotations(NW_DOC, annotations))
    node_doc = node('n1', 10)
    # whichever generation the nodes speak: the CR's own group decides
    for generation in (SKYHOOK, NODEWRIGHT):
        hold = pod_run.held(None, cr, node_doc, gen=generation)
        assert (hold and hold[0]) == kind
    if kind:
        assert '(nodewright.nvidia.com/%s=true)' % ('pause' if kind == 'paused' else 'disable') in hold[1]


def test_a_nodewright_node_is_ignored_by_the_new_label():
    """The node-scoped ignore label is nodewright.nvidia.com/ignore under v0.18+ (zz.migration.0.18.0.go @8127a97c)."""
    ignored = node('n1', 10, labels={'nodewright.nvidia.com/ignore': 'true'})
    hold = pod_run.held(None, NW_CR, ignored, gen=NODEWRIGHT)
    assert hold[0] == 'ignored' and 'carries nodewright.nvidia.com/ignore=true' in hold[1]
    assert pod_run.held(None, NW_CR, ignored) is None   # SKYHOOK's ignore label is skyhook.nvidia.com/ignore
    assert pod_run.held(None, NW_CR, node('n1', 10, labels={'skyhook.nvidia.com/ignore': 'true'}), gen=NODEWRIGHT) is None


def test_the_cluster_copy_of_a_nodewright_cr_decides_a_pause(server):
    """A pause written on the NodeWright object in the cluster (nodewright.nvidia.com/pause) stops the next pod."""
    server.reply('GET', NW_CR_PATH, body=with_annotations(NW_DOC, {'nodewright.nvidia.com/pause': 'true'}), repeat=True)
    kube = server.kube()
    # given as a document: its copy in its own group is read
    assert pod_run.held(kube, NW_CR, node('n1', 10), cr_from_file=True, gen=NODEWRIGHT)[0] == 'paused'
    # by name only (a cordon, a drain): the legacy group has none (404), the new one has it paused
    assert pod_run.held_by_name(kube, 'demo', node('n1', 10), gen=NODEWRIGHT)[0] == 'paused'
    assert [r.path for r in server.requests] == [NW_CR_PATH, CR_PATH, NW_CR_PATH]


def test_a_nodewright_run_is_recorded_under_the_new_keys(server, stored_node):
    """A whole recorded run under NODEWRIGHT: the pod's nodewright.nvidia.com/* labels (NVIDIA/nodewright
    operator/internal/controller/skyhook_controller.go @01cc2f2d), the node's nodeState_ / status_ / version_ keys
    (skyhook_controller_test.go @01cc2f2d) and v0.20.0 in version_<cr>; no skyhook.nvidia.com key on the node's metadata.

    (The node conditions are node_conditions', not yet generation-aware: not asserted here.)
    """
    script_preflight(server)
    server.reply('PATCH', NODE_PATH, body=stored_node.patch, repeat=True)
    server.reply('PATCH', NODE_STATUS_PATH, body=stored_node.patch_status, repeat=True)
    server.reply('POST', PODS, status=201, body=created)
    script_watch(server, [terminated(name) for name in CONTAINERS])
    script_logs(server)
    server.reply('DELETE', POD_PATH, body={'kind': 'Status', 'status': 'Success'})
    kube = server.kube()
    package = NW_CR.packages['tuning']
    manifest = pod_layout.stage_pod(NW_CR, package, STAGE, 'n1', NS, gen=NODEWRIGHT)
    runner = pod_run.PodRun(kube, manifest, CONTAINERS, stage=STAGE, gen=NODEWRIGHT)
    record = pod_run.NodeRecord(
        'n1', 'demo', KEY, None, lambda state: pod_run.set_entry(state, package, STAGE, 'in_progress'),
        lambda state, restarts: pod_run.set_entry(state, package, STAGE, 'complete', restarts),
        lambda state, restarts: pod_run.set_entry(state, package, STAGE, 'erroring', restarts), gen=NODEWRIGHT)

    done = pod_run.run_recorded(FakeModule(), kube, runner, record, {}, 0)

    assert done.succeeded and done.final_state[KEY]['state'] == 'complete'
    assert server.of('POST', PODS)[1].body['metadata']['labels'] == {
        'nodewright.nvidia.com/name': 'demo', 'nodewright.nvidia.com/package': 'tuning-1.2.3'}
    meta = stored_node.doc['metadata']
    assert meta['labels'] == {'pool': 'gpu', 'nodewright.nvidia.com/status_demo': 'in_progress'}
    assert sorted(meta['annotations']) == ['nodewright.nvidia.com/nodeState_demo', 'nodewright.nvidia.com/status_demo',
                                           'nodewright.nvidia.com/version_demo']
    assert meta['annotations']['nodewright.nvidia.com/version_demo'] == 'v0.20.0'
    assert node_annotations.decode(meta['annotations']['nodewright.nvidia.com/nodeState_demo']) == done.final_state
    assert pod_run.read_entry(kube, 'n1', 'demo', KEY, gen=NODEWRIGHT)[2] == done.final_state[KEY]
    assert pod_run.read_entry(kube, 'n1', 'demo', KEY)[2] is None   # no skyhook.nvidia.com/nodeState_demo


@pytest.mark.parametrize('rerun, skipped', [(False, True), (True, False)])
def test_a_complete_stage_is_skipped_unless_rerun(rerun, skipped):
    current = {'name': 'tuning', 'version': '1.2.3', 'stage': STAGE, 'state': 'complete'}
    result = pod_run.skipped_if_complete(dict(node='n1'), current, STAGE, rerun, 0, 'tuning|1.2.3 stage apply')
    assert (result is not None) == skipped
    if skipped:
        assert result['outcome'] == 'skipped' and result['msg'] == 'tuning|1.2.3 stage apply is already complete on node n1'
