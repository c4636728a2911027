# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""pod_layout: the ConfigMaps and pods the NodeWright operator creates, byte for byte; pod_verdicts and
stale_pods: what a pod found on the cluster means.

The expected values were derived by reading the operator's code (NVIDIA/nodewright at
71ca22b8, operator/internal/controller/skyhook_controller.go and friends) and then checked by
running the upstream functions themselves (createPodFromPackage, createInterruptPodForPackage,
SetPackages, SetControllerReference, generateSafeName, UpsertNodeLabelsAnnotationsPackages,
UpsertConfigmaps with a fake client, containerExitedSuccessfully) on the same inputs in a
throw-away Go test outside this repository: every manifest below is what they produced.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import copy
import json

import pytest

from ansible_collections.nodewright.bridge.plugins.module_utils.model import constants as C
from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_validation
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import pod_layout as pl
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import pod_verdicts
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import stale_pods
from ansible_collections.nodewright.bridge.plugins.module_utils.model.api_generation import NODEWRIGHT

UID = '5f0c2a4e-8d1b-4c7e-9a3f-1b2c3d4e5f60'
NODE = 'Node.Upper.EXAMPLE.com'   # dots and capitals exercise safe_name (real node names are lowercase)
LONG = 'a' + 'b' * 41 + 'c'       # 43 characters: the longest package name the CRD allows
SHA = 'sha256:' + '0123456789abcdef' * 4
COPY_DIR = '/opt/skyhook/gpu-tuning/tuning-1.2.3-%s-7' % UID
RESOURCE_ID = 'gpu-tuning-%s-7_tuning_1.2.3' % UID

CR_DOC = {
    'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'Skyhook',
    'metadata': {'name': 'gpu-tuning'},
    'spec': {
        'additionalTolerations': [
            {'key': 'gpu', 'operator': 'Exists', 'effect': 'NoSchedule'},
            {'key': 'x', 'operator': 'Equal', 'value': 'y', 'effect': 'NoExecute', 'tolerationSeconds': 30}],
        'packages': {
            'tuning': {
                'version': '1.2.3', 'image': 'ghcr.io/x/tuning:1.2.3',
                'env': [{'name': 'FOO', 'value': 'bar'},
                        {'name': 'S', 'valueFrom': {'secretKeyRef': {'name': 's', 'key': 'k'}}}],
                'configMap': {'a.sh': 'echo "<&>"\n', 'b.conf': 'x=1'},
                'interrupt': {'type': 'service', 'services': ['containerd', 'kubelet']},
                'configInterrupts': {'a.sh': {'type': 'restartAllServices'}},
                'resources': {'cpuRequest': '200m', 'cpuLimit': '400m', 'memoryRequest': '128Mi',
                              'memoryLimit': '256Mi'},
                'gracefulShutdown': '1m30.9s',
                'agentImageOverride': 'my.registry/agent:2.0'},
            'plain': {'version': '0.1.0', 'image': 'alpine', 'containerSHA': SHA},
            LONG: {'version': '10.20.30-rc.1', 'image': 'example.com/long', 'interrupt': {'type': 'reboot'},
                   'dependsOn': {'plain': '0.1.0'}},
        },
    },
    'status': {'nodePriority': {'node-b': '2026-05-01T10:00:05Z', NODE: '2026-05-01T10:00:00Z',
                                'node-a': '2026-05-01T10:00:05Z'},
               'nodeOrderOffset': 3},
}

# The operator's configuration for the examples (every option differs from its default).
OPTIONS = {'namespace': 'nw-system', 'agent_image': 'nvcr.io/nvidia/skyhook/agent:v6.4.1@sha256:dedf73c1',
           'pause_image': 'registry.k8s.io/pause:3.9', 'copy_dir_root': '/opt/skyhook',
           'agent_log_root': '/var/log/nw', 'image_pull_secret': 'regcred', 'node_order': 3,
           'cr_uid': UID, 'cr_generation': 7}

OWNER = [{'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'Skyhook', 'name': 'gpu-tuning', 'uid': UID,
          'controller': True, 'blockOwnerDeletion': True}]
TOLERATIONS = [
    {'key': 'node.kubernetes.io/unschedulable', 'operator': 'Exists'},
    {'key': 'skyhook.nvidia.com', 'operator': 'Equal', 'value': 'runtime-required', 'effect': 'NoSchedule'},
    {'key': 'gpu', 'operator': 'Exists', 'effect': 'NoSchedule'},
    {'key': 'x', 'operator': 'Equal', 'value': 'y', 'effect': 'NoExecute', 'tolerationSeconds': 30}]
PAUSE = {'name': 'pause', 'image': 'registry.k8s.io/pause:3.9',
         'resources': {'limits': {'cpu': '100m', 'memory': '20Mi'}, 'requests': {'cpu': '100m', 'memory': '20Mi'}}}
AGENT_ENV = [
    {'name': 'SKYHOOK_LOG_DIR', 'value': '/var/log/nw/gpu-tuning'},
    {'name': 'SKYHOOK_ROOT_DIR', 'value': '/opt/skyhook/gpu-tuning'},
    {'name': 'COPY_RESOLV', 'value': 'false'},
    {'name': 'SKYHOOK_RESOURCE_ID', 'value': RESOURCE_ID},
    {'name': 'SKYHOOK_NODE_ORDER', 'value': '3'}]
MOUNTS = [
    {'name': 'root-mount', 'mountPath': '/root', 'mountPropagation': 'HostToContainer'},
    {'name': 'metadata-node-upper-example-com-6ef7701a', 'mountPath': '/skyhook-package/node-metadata'},
    {'name': 'tuning', 'mountPath': '/skyhook-package/configmaps'}]
RESOURCES = {'limits': {'cpu': '400m', 'memory': '256Mi'}, 'requests': {'cpu': '200m', 'memory': '128Mi'}}


def agent(name, args, env):
    return {'name': name, 'image': 'my.registry/agent:2.0', 'imagePullPolicy': 'Always', 'args': args,
            'env': env, 'securityContext': {'privileged': True}, 'volumeMounts': MOUNTS, 'resources': RESOURCES}


# createPodFromPackage(tuning, "apply") + SetPackages + SetControllerReference, as the operator built it.
EXPECTED_STAGE_POD = {
    'apiVersion': 'v1', 'kind': 'Pod',
    'metadata': {
        'name': 'gpu-tuning-tuning-1-2-3-apply-node-upper-example-com-458d2fbe',
        'namespace': 'nw-system',
        'labels': {'skyhook.nvidia.com/name': 'gpu-tuning', 'skyhook.nvidia.com/package': 'tuning-1.2.3'},
        'annotations': {'skyhook.nvidia.com/package': '{"name":"tuning","version":"1.2.3","skyhook":"gpu-tuning",'
                                                      '"stage":"apply","image":"ghcr.io/x/tuning"}'},
        'ownerReferences': OWNER},
    'spec': {
        'volumes': [
            {'name': 'root-mount', 'hostPath': {'path': '/'}},
            {'name': 'metadata-node-upper-example-com-6ef7701a',
             'configMap': {'name': 'gpu-tuning-node-upper-example-com-metadata-e6792316'}},
            {'name': 'tuning', 'configMap': {'name': 'gpu-tuning-tuning-1.2.3'}}],
        'initContainers': [
            {'name': 'tuning-init', 'image': 'ghcr.io/x/tuning:1.2.3', 'imagePullPolicy': 'Always',
             'command': ['/bin/sh'],
             'args': ['-c', 'mkdir -p /root/${SKYHOOK_DIR} && cp -r /skyhook-package/* /root/${SKYHOOK_DIR}'],
             'env': [{'name': 'SKYHOOK_DIR', 'value': COPY_DIR}],
             'securityContext': {'privileged': True}, 'volumeMounts': MOUNTS, 'resources': RESOURCES},
            agent('tuning-apply', ['apply', '/root', COPY_DIR], CR_DOC['spec']['packages']['tuning']['env'] + AGENT_ENV),
            agent('tuning-applycheck', ['apply-check', '/root', COPY_DIR],
                  CR_DOC['spec']['packages']['tuning']['env'] + AGENT_ENV)],
        'containers': [PAUSE],
        'restartPolicy': 'OnFailure',
        'terminationGracePeriodSeconds': 90,
        'nodeName': NODE,
        'hostNetwork': True,
        'hostPID': True,
        'imagePullSecrets': [{'name': 'regcred'}],
        'tolerations': TOLERATIONS,
    },
}

# createInterruptPodForPackage for the service interrupt of "tuning".
EXPECTED_INTERRUPT_POD = {
    'apiVersion': 'v1', 'kind': 'Pod',
    'metadata': {
        'name': 'gpu-tuning-interrupt-service-node-upper-example-com-580333de',
        'namespace': 'nw-system',
        'labels': {'skyhook.nvidia.com/interrupt': 'True', 'skyhook.nvidia.com/name': 'gpu-tuning',
                   'skyhook.nvidia.com/package': 'tuning-1.2.3'},
        'annotations': {'skyhook.nvidia.com/package': '{"name":"tuning","version":"1.2.3","skyhook":"gpu-tuning",'
                                                      '"stage":"interrupt","image":"ghcr.io/x/tuning"}'},
        'ownerReferences': OWNER},
    'spec': {
        'volumes': [
            {'name': 'root-mount', 'hostPath': {'path': '/'}},
            # upstream quirk: a differently named volume for a ConfigMap that does not exist, mounted nowhere
            {'name': 'gpu-tuning-node-upper-example-com-metadata-e6792316',
             'configMap': {'name': 'gpu-tuning-Node-Upper-EXAMPLE-com-metadata'}}],
        'initContainers': [{
            'name': 'interrupt', 'image': 'my.registry/agent:2.0',
            'args': ['interrupt', '/root', COPY_DIR,
                     'eyJ0eXBlIjoic2VydmljZV9yZXN0YXJ0Iiwic2VydmljZXMiOlsiY29udGFpbmVyZCIsImt1YmVsZXQiXX0='],
            'env': AGENT_ENV,
            'securityContext': {'privileged': True},
            'volumeMounts': [{'name': 'root-mount', 'mountPath': '/root', 'mountPropagation': 'HostToContainer'}],
            'resources': {'limits': {'cpu': '500m', 'memory': '64Mi'}, 'requests': {'cpu': '500m', 'memory': '64Mi'}}}],
        'containers': [PAUSE],
        'restartPolicy': 'OnFailure',
        'nodeName': NODE,
        'hostNetwork': True,
        'hostPID': True,
        'imagePullSecrets': [{'name': 'regcred'}],
        'tolerations': TOLERATIONS,
    },
}


@pytest.fixture
def cr():
    return cr_validation.build_cr(copy.deepcopy(CR_DOC))


def minimal_cr(**package):
    spec = {'version': '2.0.0', 'image': 'busybox'}
    spec.update(package)
    return cr_validation.build_cr({'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'Skyhook',
                                   'metadata': {'name': 'plain-cr'}, 'spec': {'packages': {'solo': spec}}})


# --------------------------------------------------------------------------- safe_name


# generateSafeName(maxLen, parts...): join with "-", replace every "." by "-", hash THAT string
# (sha256, first 8 hex digits: `printf %s <string> | sha256sum | cut -c1-8`), cut the string to
# maxLen - 9 bytes, append "-<hash>", lowercase the result. The hash is taken before the cut and
# before lowercasing, so "CR" and "cr" get different suffixes.
@pytest.mark.parametrize('limit,parts,expected', [
    # "gpu-tuning-tuning-1-2-3-apply-node-1" (36 <= 54 bytes, no cut); sha256 c552eca9...
    (63, ('gpu-tuning', 'tuning', '1.2.3', 'apply', 'node-1'), 'gpu-tuning-tuning-1-2-3-apply-node-1-c552eca9'),
    # the stage pod's volume name: "metadata-ip-10-0-0-1-ec2-internal", sha256 3145a6af...
    (63, ('metadata', 'ip-10-0-0-1.ec2.internal'), 'metadata-ip-10-0-0-1-ec2-internal-3145a6af'),
    # hash of "CR-Node-A-metadata" (capitals), lowercased afterwards: cf4ce1b5...
    (253, ('CR', 'Node.A', 'metadata'), 'cr-node-a-metadata-cf4ce1b5'),
    # 20 - 9 = 11 bytes kept of "abcdefghij-klmnopqrstuvwxyz" -> "abcdefghij-", hash 008ac0b7 of the whole
    (20, ('abcdefghij', 'klmnopqrstuvwxyz'), 'abcdefghij--008ac0b7'),
    # 62 bytes cut to 54; the hash (c3988323) still covers the "-y" that was cut off
    (63, ('x' * 60, 'y'), 'x' * 54 + '-c3988323'),
    # "A-B-C" (hash c7446791) cut to 10 - 9 = 1 byte
    (10, ('A.B.C',), 'a-c7446791'),
    # nothing at all: sha256 of the empty string is e3b0c442...
    (63, (), '-e3b0c442'),
    (63, ('',), '-e3b0c442'),
    # the metadata ConfigMap name: "gpu-tuning-Node-Upper-EXAMPLE-com-metadata" hashes to e6792316...
    (253, ('gpu-tuning', NODE, 'metadata'), 'gpu-tuning-node-upper-example-com-metadata-e6792316'),
    # a stage pod name that is cut: 64 bytes before the hash, 54 kept
    (63, ('gpu-tuning', 'tuning', '1.2.3', 'uninstall', NODE),
     'gpu-tuning-tuning-1-2-3-uninstall-node-upper-example-c-c4db92ca'),
])
def test_safe_name_vectors(limit, parts, expected):
    name = pl.safe_name(limit, *parts)
    assert name == expected
    assert len(name) <= limit


def test_safe_name_needs_room_for_the_hash():
    with pytest.raises(ValueError):
        pl.safe_name(9, 'a')


def test_resource_names(cr):
    pkg = cr.packages['tuning']
    assert pl.package_configmap_name('gpu-tuning', pkg) == 'gpu-tuning-tuning-1.2.3'   # not hashed, dots kept
    assert pl.package_configmap_name('Mixed', pkg) == 'mixed-tuning-1.2.3'
    assert pl.node_metadata_configmap_name('gpu-tuning', NODE) == 'gpu-tuning-node-upper-example-com-metadata-e6792316'
    assert pl.stage_pod_name('gpu-tuning', pkg, 'apply', NODE) == \
        'gpu-tuning-tuning-1-2-3-apply-node-upper-example-com-458d2fbe'
    assert pl.interrupt_pod_name('gpu-tuning', 'reboot', 'interrupt', NODE) == \
        'gpu-tuning-interrupt-reboot-node-upper-example-com-933c17f6'


# --------------------------------------------------------------------------- stage pods


def test_stage_pod_is_the_operators(cr):
    assert pl.stage_pod(cr, 'tuning', 'apply', NODE, **OPTIONS) == EXPECTED_STAGE_POD


def test_stage_pod_accepts_the_package_object(cr):
    assert pl.stage_pod(cr, cr.packages['tuning'], 'apply', NODE, **OPTIONS) == EXPECTED_STAGE_POD


@pytest.mark.parametrize('package,stage,name', [
    ('tuning', 'config', 'gpu-tuning-tuning-1-2-3-config-node-upper-example-com-8b1d087e'),
    ('tuning', 'upgrade', 'gpu-tuning-tuning-1-2-3-upgrade-node-upper-example-com-440ea1e3'),
    ('tuning', 'uninstall', 'gpu-tuning-tuning-1-2-3-uninstall-node-upper-example-c-c4db92ca'),
    ('tuning', 'post-interrupt', 'gpu-tuning-tuning-1-2-3-post-interrupt-node-upper-exam-fac808ca'),
    ('plain', 'apply', 'gpu-tuning-plain-0-1-0-apply-node-upper-example-com-654a41ca'),
    ('plain', 'uninstall', 'gpu-tuning-plain-0-1-0-uninstall-node-upper-example-co-2b2cc639'),
    (LONG, 'apply', 'gpu-tuning-abbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbc-57bd5b26'),
    (LONG, 'post-interrupt', 'gpu-tuning-abbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbc-245ddb05'),
])
def test_stage_pod_names_and_containers_per_stage(cr, package, stage, name):
    pod = pl.stage_pod(cr, package, stage, NODE, **OPTIONS)
    assert pod['metadata']['name'] == name
    containers = pod['spec']['initContainers']
    assert [c['name'] for c in containers] == ['%s-init' % package, '%s-%s' % (package, stage),
                                               '%s-%scheck' % (package, stage)]
    assert all(len(c['name']) <= 63 for c in containers)
    assert containers[1]['args'][0] == stage
    assert containers[2]['args'][0] == stage + '-check'
    assert json.loads(pod['metadata']['annotations'][C.PACKAGE_ANNOTATION])['stage'] == stage


def test_stage_pod_without_config_map_sha_or_override(cr):
    pod = pl.stage_pod(cr, 'plain', 'apply', NODE, **OPTIONS)
    spec = pod['spec']
    # no package ConfigMap: no third volume, no /skyhook-package/configmaps mount
    assert [v['name'] for v in spec['volumes']] == ['root-mount', 'metadata-node-upper-example-com-6ef7701a']
    for container in spec['initContainers']:
        assert [m['mountPath'] for m in container['volumeMounts']] == ['/root', '/skyhook-package/node-metadata']
        assert 'resources' not in container   # no override: the namespace LimitRange decides
    init, stage, check = spec['initContainers']
    assert init['image'] == 'alpine@' + SHA   # containerSHA instead of the version tag
    assert stage['image'] == check['image'] == OPTIONS['agent_image']
    assert 'terminationGracePeriodSeconds' not in spec
    # no package env: only the operator's variables
    assert [e['name'] for e in stage['env']] == ['SKYHOOK_LOG_DIR', 'SKYHOOK_ROOT_DIR', 'COPY_RESOLV',
                                                 'SKYHOOK_RESOURCE_ID', 'SKYHOOK_NODE_ORDER']
    assert stage['env'][3]['value'] == 'gpu-tuning-%s-7_plain_0.1.0' % UID
    annotation = pod['metadata']['annotations'][C.PACKAGE_ANNOTATION]
    assert annotation == ('{"name":"plain","version":"0.1.0","skyhook":"gpu-tuning","stage":"apply","image":"alpine",'
                          '"containerSHA":"%s"}' % SHA)


def test_stage_pod_with_the_operators_defaults():
    cr = minimal_cr(interrupt={'type': 'noop'}, resources={}, env=[])
    pod = pl.stage_pod(cr, 'solo', 'apply', 'worker-1')
    meta, spec = pod['metadata'], pod['spec']
    assert meta['namespace'] == 'skyhook'
    assert 'ownerReferences' not in meta   # no uid: an owner reference would get the pod garbage-collected
    assert 'imagePullSecrets' not in spec
    assert spec['containers'][0]['image'] == 'registry.k8s.io/pause:3.10'
    init, stage, check = spec['initContainers']
    assert init['image'] == 'busybox:2.0.0'
    assert stage['image'] == check['image'] == 'ghcr.io/nvidia/skyhook/agent:latest'
    assert init['env'] == [{'name': 'SKYHOOK_DIR', 'value': '/var/lib/skyhook/plain-cr/solo-2.0.0--0'}]
    assert stage['args'] == ['apply', '/root', '/var/lib/skyhook/plain-cr/solo-2.0.0--0']
    assert stage['env'] == [
        {'name': 'SKYHOOK_LOG_DIR', 'value': '/var/log/skyhook/plain-cr'},
        {'name': 'SKYHOOK_ROOT_DIR', 'value': '/var/lib/skyhook/plain-cr'},
        {'name': 'COPY_RESOLV', 'value': 'false'},
        {'name': 'SKYHOOK_RESOURCE_ID', 'value': 'plain-cr--0_solo_2.0.0'},
        {'name': 'SKYHOOK_NODE_ORDER', 'value': '0'}]
    assert spec['tolerations'] == [
        {'key': 'node.kubernetes.io/unschedulable', 'operator': 'Exists'},
        {'key': 'skyhook.nvidia.com', 'operator': 'Equal', 'value': 'runtime-required', 'effect': 'NoSchedule'}]
    assert spec['volumes'][1] == {'name': 'metadata-worker-1-88f62dd4',
                                  'configMap': {'name': 'plain-cr-worker-1-metadata-a1017775'}}
    assert meta['name'] == 'plain-cr-solo-2-0-0-apply-worker-1-fbec3245'


def test_cr_identity_of_a_stored_document_and_of_a_file():
    stored = {'metadata': {'name': 'c', 'uid': 'u-7', 'generation': 3}, 'status': {'nodeOrderOffset': 2}}
    assert pl.cr_identity(stored) == ('u-7', 3, {'nodeOrderOffset': 2})
    assert pl.cr_identity({'metadata': {'name': 'c'}}) == (None, None, {})
    # what a file gives leaves the builders at their defaults (the CR object's, else '' and 0)
    uid, generation, _status = pl.cr_identity({'metadata': {'name': 'c'}})
    pod = pl.stage_pod(minimal_cr(), 'solo', 'config', 'n1', cr_uid=uid, cr_generation=generation)
    assert pod['spec']['initContainers'][1]['env'][3]['value'] == 'plain-cr--0_solo_2.0.0'


def test_uid_and_generation_can_come_from_the_cr_object():
    cr = minimal_cr()
    cr.uid, cr.generation = 'u-1', 4
    pod = pl.stage_pod(cr, 'solo', 'config', 'n1')
    assert pod['metadata']['ownerReferences'][0]['uid'] == 'u-1'
    assert pod['spec']['initContainers'][0]['env'][0]['value'] == '/var/lib/skyhook/plain-cr/solo-2.0.0-u-1-4'
    # explicit arguments win
    pod = pl.stage_pod(cr, 'solo', 'config', 'n1', cr_uid='u-2', cr_generation=9)
    assert pod['spec']['initContainers'][1]['env'][3]['value'] == 'plain-cr-u-2-9_solo_2.0.0'


def test_runtime_required_taint_without_value():
    pod = pl.stage_pod(minimal_cr(), 'solo', 'apply', 'n1', runtime_required_taint='dedicated:NoExecute')
    assert pod['spec']['tolerations'][1] == {'key': 'dedicated', 'operator': 'Equal', 'effect': 'NoExecute'}


@pytest.mark.parametrize('spec', ['key=value:Sometimes', 'key:NoSchedule-'])
def test_bad_runtime_required_taint_fails_the_pod(spec):
    with pytest.raises(ValueError, match='taint'):
        pl.stage_pod(minimal_cr(), 'solo', 'apply', 'n1', runtime_required_taint=spec)


def test_resources_go_to_every_init_container_but_not_pause(cr):
    pod = pl.stage_pod(cr, 'tuning', 'uninstall', NODE, **OPTIONS)
    assert [c.get('resources') for c in pod['spec']['initContainers']] == [RESOURCES] * 3
    assert pod['spec']['containers'][0]['resources']['limits'] == {'cpu': '100m', 'memory': '20Mi'}


def test_resources_all_zero_are_no_override():
    pod = pl.stage_pod(minimal_cr(resources={'cpuRequest': '0', 'cpuLimit': 0, 'memoryRequest': '0',
                                             'memoryLimit': '0Mi'}), 'solo', 'apply', 'n1')
    assert all('resources' not in c for c in pod['spec']['initContainers'])


def test_numeric_resources_become_strings():
    cr = minimal_cr(resources={'cpuRequest': 1, 'cpuLimit': 2, 'memoryRequest': '1Gi', 'memoryLimit': '2Gi'})
    assert pl.package_resources(cr.packages['solo']) == {'limits': {'cpu': '2', 'memory': '2Gi'},
                                                         'requests': {'cpu': '1', 'memory': '1Gi'}}


@pytest.mark.parametrize('duration,seconds', [('1m30.9s', 90), ('500ms', 0), ('2h', 7200), ('0', 0), ('1.5s', 1)])
def test_graceful_shutdown_truncates_to_whole_seconds(duration, seconds):
    pod = pl.stage_pod(minimal_cr(gracefulShutdown=duration), 'solo', 'apply', 'n1')
    assert pod['spec']['terminationGracePeriodSeconds'] == seconds


def test_containers_do_not_share_mutable_parts(cr):
    pod = pl.stage_pod(cr, 'tuning', 'apply', NODE, **OPTIONS)
    init, stage, check = pod['spec']['initContainers']
    stage['env'][0]['value'] = 'changed'
    stage['volumeMounts'].append({'name': 'extra'})
    assert check['env'][0]['value'] == 'bar'
    assert len(init['volumeMounts']) == len(check['volumeMounts']) == 3
    assert cr.packages['tuning'].env[0]['value'] == 'bar'
    pod['spec']['tolerations'][2]['key'] = 'changed'
    assert cr.additional_tolerations[0]['key'] == 'gpu'


@pytest.mark.parametrize('stage', ['interrupt', 'uninstall-interrupt', 'bogus', ''])
def test_stage_pod_refuses_other_stages(cr, stage):
    with pytest.raises(ValueError):
        pl.stage_pod(cr, 'tuning', stage, NODE)


def test_unknown_package(cr):
    with pytest.raises(ValueError, match='no package'):
        pl.stage_pod(cr, 'missing', 'apply', NODE)


# --------------------------------------------------------------------------- interrupt pods


def test_interrupt_pod_is_the_operators(cr):
    pod = pl.interrupt_pod(cr, 'tuning', {'type': 'service', 'services': ['containerd', 'kubelet']}, NODE, **OPTIONS)
    assert pod == EXPECTED_INTERRUPT_POD


@pytest.mark.parametrize('package,interrupt,stage,name,arg', [
    ('tuning', {'type': 'restartAllServices'}, 'uninstall-interrupt',
     'gpu-tuning-uninstall-interrupt-restartallservices-node-11789af1', 'eyJ0eXBlIjoicmVzdGFydF9hbGxfc2VydmljZXMifQ=='),
    (LONG, {'type': 'reboot'}, 'interrupt',
     'gpu-tuning-interrupt-reboot-node-upper-example-com-933c17f6', 'eyJ0eXBlIjoibm9kZV9yZXN0YXJ0In0='),
    ('plain', {'type': 'noop', 'services': []}, 'interrupt',
     'gpu-tuning-interrupt-noop-node-upper-example-com-3cd19f3c', 'eyJ0eXBlIjoibm9fb3AifQ=='),
])
def test_interrupt_pod_variants(cr, package, interrupt, stage, name, arg):
    pod = pl.interrupt_pod(cr, package, interrupt, NODE, stage=stage, **OPTIONS)
    pkg = cr.packages[package]
    assert pod['metadata']['name'] == name
    assert pod['metadata']['labels'] == {'skyhook.nvidia.com/name': 'gpu-tuning',
                                         'skyhook.nvidia.com/package': '%s-%s' % (pkg.name, pkg.version),
                                         'skyhook.nvidia.com/interrupt': 'True'}
    annotation = json.loads(pod['metadata']['annotations'][C.PACKAGE_ANNOTATION])
    assert annotation['stage'] == stage
    (container,) = pod['spec']['initContainers']
    # the agent's verb is "interrupt" in both interrupt stages
    assert container['args'] == ['interrupt', '/root', pl.copy_dir('gpu-tuning', pkg, UID, 7, '/opt/skyhook'), arg]
    assert container['image'] == pl.agent_image_for(pkg, OPTIONS['agent_image'])
    assert 'imagePullPolicy' not in container
    assert [e['name'] for e in container['env']] == ['SKYHOOK_LOG_DIR', 'SKYHOOK_ROOT_DIR', 'COPY_RESOLV',
                                                     'SKYHOOK_RESOURCE_ID', 'SKYHOOK_NODE_ORDER']
    assert 'terminationGracePeriodSeconds' not in pod['spec']


def test_interrupt_pod_ignores_package_env_resources_and_grace(cr):
    pod = pl.interrupt_pod(cr, 'tuning', {'type': 'reboot'}, NODE, **OPTIONS)
    (container,) = pod['spec']['initContainers']
    assert container['env'] == AGENT_ENV
    assert container['resources'] == {'limits': {'cpu': '500m', 'memory': '64Mi'},
                                      'requests': {'cpu': '500m', 'memory': '64Mi'}}
    assert 'terminationGracePeriodSeconds' not in pod['spec']
    assert pod['spec']['tolerations'] == TOLERATIONS


@pytest.mark.parametrize('interrupt,payload', [
    ({'type': 'reboot'}, '{"type":"node_restart"}'),
    ({'type': 'service', 'services': ['a.service', 'b']}, '{"type":"service_restart","services":["a.service","b"]}'),
    ({'type': 'noop', 'services': []}, '{"type":"no_op"}'),
    ({'type': 'restartAllServices'}, '{"type":"restart_all_services"}'),
    # Go's HTML-safe escaping reaches the payload too
    ({'type': 'service', 'services': ['<x>&']}, '{"type":"service_restart","services":["\\u003cx\\u003e\\u0026"]}'),
])
def test_interrupt_payload_decodes_to_the_agents_json(cr, interrupt, payload):
    assert pl.interrupt_json(interrupt) == payload
    arg = pl.interrupt_arg(interrupt)
    assert base64.b64decode(arg).decode('utf-8') == payload
    pod = pl.interrupt_pod(cr, 'tuning', interrupt, NODE)
    assert base64.b64decode(pod['spec']['initContainers'][0]['args'][3]).decode('utf-8') == payload
    # the pod name uses the CR's type, not the agent's
    assert '-%s-' % interrupt['type'].lower() in pod['metadata']['name']


@pytest.mark.parametrize('stage', ['apply', 'config', 'post-interrupt'])
def test_interrupt_pod_refuses_other_stages(cr, stage):
    with pytest.raises(ValueError):
        pl.interrupt_pod(cr, 'tuning', {'type': 'reboot'}, NODE, stage=stage)


def test_interrupt_pod_needs_an_interrupt(cr):
    with pytest.raises(ValueError):
        pl.interrupt_pod(cr, 'plain', None, NODE)


# --------------------------------------------------------------------------- ConfigMaps


def test_package_configmap(cr):
    assert pl.package_configmap(cr, 'tuning', 'nw-system', cr_uid=UID) == {
        'apiVersion': 'v1', 'kind': 'ConfigMap',
        'metadata': {
            'name': 'gpu-tuning-tuning-1.2.3', 'namespace': 'nw-system',
            'labels': {'skyhook.nvidia.com/name': 'gpu-tuning'},
            'annotations': {'skyhook.nvidia.com/name': 'gpu-tuning', 'skyhook.nvidia.com/Package.Name': 'tuning',
                            'skyhook.nvidia.com/Package.Version': '1.2.3'},
            'ownerReferences': OWNER},
        'data': {'a.sh': 'echo "<&>"\n', 'b.conf': 'x=1'},
    }
    assert pl.package_configmap(cr, 'plain') is None   # no configMap: the operator creates none
    assert 'ownerReferences' not in pl.package_configmap(cr, 'tuning')['metadata']
    assert pl.package_configmap(cr, 'tuning')['metadata']['namespace'] == 'skyhook'


NODE_DOC = {'metadata': {'name': NODE,
                         'labels': {'kubernetes.io/hostname': 'node-upper', 'b': 'x&y', 'a': '<z>'},
                         'annotations': {'skyhook.nvidia.com/nodeState_gpu-tuning': '{"a|1":{"name":"a"}}',
                                         'e': u'caf\u00e9 \u2028'}},
            'spec': {}, 'status': {}}


def test_node_metadata_configmap(cr):
    cm = pl.node_metadata_configmap(cr, NODE_DOC, 'nw-system', OPTIONS['agent_image'], cr_uid=UID)
    assert cm['metadata'] == {
        'name': 'gpu-tuning-node-upper-example-com-metadata-e6792316', 'namespace': 'nw-system',
        'labels': {'skyhook.nvidia.com/skyhook-node-meta': 'gpu-tuning'},
        'annotations': {'skyhook.nvidia.com/name': 'gpu-tuning', 'skyhook.nvidia.com/Node.name': NODE},
        'ownerReferences': OWNER}
    assert sorted(cm['data']) == ['annotations.json', 'labels.json', 'packages.json']
    # maps with sorted keys, <, > and & escaped, U+2028 escaped, other non-ASCII kept
    assert cm['data']['labels.json'] == '{"a":"\\u003cz\\u003e","b":"x\\u0026y","kubernetes.io/hostname":"node-upper"}'
    assert cm['data']['annotations.json'] == (u'{"e":"caf\u00e9 \\u2028",'
                                              u'"skyhook.nvidia.com/nodeState_gpu-tuning":"{\\"a|1\\":{\\"name\\":\\"a\\"}}"}')
    # agentVersion is what follows the last ':' of the operator's agent image (here a digest's hex);
    # packages keyed by name, images without tag, interrupt types as in the CR, omitempty fields left out
    assert cm['data']['packages.json'] == (
        '{"agentVersion":"dedf73c1","packages":{'
        '"abbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbc":{"name":"abbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbc",'
        '"version":"10.20.30-rc.1","image":"example.com/long","interrupt":{"type":"reboot"}},'
        '"plain":{"name":"plain","version":"0.1.0","image":"alpine"},'
        '"tuning":{"name":"tuning","version":"1.2.3","image":"ghcr.io/x/tuning",'
        '"agentImageOverride":"my.registry/agent:2.0",'
        '"interrupt":{"type":"service","services":["containerd","kubelet"]},'
        '"configInterrupts":{"a.sh":{"type":"restartAllServices"}}}}}')
    assert json.loads(cm['data']['packages.json'])['packages']['tuning']['image'] == 'ghcr.io/x/tuning'


def test_node_metadata_configmap_of_a_node_without_annotations():
    cm = pl.node_metadata_configmap(minimal_cr(interrupt={'type': 'noop'}),
                                    {'metadata': {'name': 'worker-1', 'labels': {'nodepool': 'gpu'}}})
    assert cm['metadata']['name'] == 'plain-cr-worker-1-metadata-a1017775'
    assert cm['metadata']['namespace'] == 'skyhook'
    assert cm['data'] == {
        'annotations.json': 'null',   # the API omits empty maps; Go marshals the nil map as null
        'labels.json': '{"nodepool":"gpu"}',
        'packages.json': '{"agentVersion":"latest","packages":{"solo":{"name":"solo","version":"2.0.0",'
                         '"image":"busybox","interrupt":{"type":"noop"}}}}'}


def test_node_metadata_configmap_accepts_the_planner_node_form(cr):
    plain = {'name': NODE, 'labels': NODE_DOC['metadata']['labels'], 'annotations': NODE_DOC['metadata']['annotations']}
    assert pl.node_metadata_configmap(cr, plain) == pl.node_metadata_configmap(cr, NODE_DOC)


def test_no_node_metadata_configmap_for_a_bare_node(cr):
    assert pl.node_metadata_configmap(cr, {'metadata': {'name': 'bare-node'}}) is None
    assert pl.node_metadata_configmap(cr, {'metadata': {'name': 'bare-node', 'labels': {}, 'annotations': None}}) is None


# --------------------------------------------------------------------------- helpers


@pytest.mark.parametrize('image,version', [
    ('ghcr.io/nvidia/skyhook/agent:latest', 'latest'),
    ('nvcr.io/nvidia/skyhook/agent:v6.4.1', 'v6.4.1'),
    ('nvcr.io/nvidia/skyhook/agent:v6.4.1@sha256:dedf73c1', 'dedf73c1'),
    ('host:5000/agent:1.0', '1.0'),
])
def test_agent_version(image, version):
    assert pl.agent_version(image) == version


def test_defaults_are_the_operators():
    assert pl.DEFAULT_NAMESPACE == 'skyhook'
    assert pl.DEFAULT_AGENT_IMAGE == 'ghcr.io/nvidia/skyhook/agent:latest'
    assert pl.DEFAULT_PAUSE_IMAGE == 'registry.k8s.io/pause:3.10'
    assert pl.DEFAULT_COPY_DIR_ROOT == '/var/lib/skyhook'
    assert pl.DEFAULT_AGENT_LOG_ROOT == '/var/log/skyhook'
    assert C.DEFAULT_RUNTIME_REQUIRED_TAINT == 'skyhook.nvidia.com=runtime-required:NoSchedule'
    assert pl.DEFAULT_IMAGE_PULL_SECRET == ''


@pytest.mark.parametrize('node,order', [
    (NODE, 3),        # earliest pick: offset 3 + index 0
    ('node-a', 4),    # same time as node-b: the name breaks the tie
    ('node-b', 5),
    ('node-c', 0),    # not picked
])
def test_node_order_from_status(node, order):
    assert pl.node_order_from_status(CR_DOC['status'], node) == order


def test_node_order_without_status():
    assert pl.node_order_from_status(None, 'n') == 0
    assert pl.node_order_from_status({'nodePriority': {'n': '2026-01-01T00:00:00Z'}}, 'n') == 0


def test_node_order_compares_times_not_strings():
    status = {'nodePriority': {'a': '2026-05-01T10:00:00+02:00', 'b': '2026-05-01T09:00:00Z'}}
    assert pl.node_order_from_status(status, 'a') == 0   # 08:00Z
    assert pl.node_order_from_status(status, 'b') == 1


def test_labels_and_selectors(cr):
    pkg = cr.packages['tuning']
    assert pl.pod_labels('gpu-tuning') == {'skyhook.nvidia.com/name': 'gpu-tuning'}
    assert pl.pod_labels('gpu-tuning', pkg) == {'skyhook.nvidia.com/name': 'gpu-tuning',
                                                'skyhook.nvidia.com/package': 'tuning-1.2.3'}
    assert pl.pod_labels('gpu-tuning', pkg, interrupt=True) == {
        'skyhook.nvidia.com/interrupt': 'True', 'skyhook.nvidia.com/name': 'gpu-tuning',
        'skyhook.nvidia.com/package': 'tuning-1.2.3'}
    pod = pl.stage_pod(cr, pkg, 'apply', NODE)
    selector = pl.pod_labels('gpu-tuning', pkg)
    assert all(pod['metadata']['labels'].get(k) == v for k, v in selector.items())
    assert C.INTERRUPT_LABEL not in pod['metadata']['labels']


def test_package_annotation_round_trip(cr):
    pkg = cr.packages['plain']
    pod = pl.stage_pod(cr, pkg, 'config', NODE)
    assert json.loads(pod['metadata']['annotations'][C.PACKAGE_ANNOTATION]) == {
        'name': 'plain', 'version': '0.1.0', 'skyhook': 'gpu-tuning', 'stage': 'config', 'image': 'alpine',
        'containerSHA': SHA}
    assert pl.package_annotation('gpu-tuning', cr.packages['tuning'], 'apply', invalid=True) == \
        '{"name":"tuning","version":"1.2.3","skyhook":"gpu-tuning","stage":"apply","image":"ghcr.io/x/tuning",' \
        '"invalid":true}'


@pytest.mark.parametrize('stage,expected', [
    ('apply', ['tuning-init', 'tuning-apply', 'tuning-applycheck']),
    ('post-interrupt', ['tuning-init', 'tuning-post-interrupt', 'tuning-post-interruptcheck']),
    ('interrupt', ['interrupt']),
    ('uninstall-interrupt', ['interrupt']),
])
def test_container_lists(stage, expected):
    assert pl.init_container_names('tuning', stage) == expected
    assert pl.log_containers('tuning', stage) == expected


def test_container_lists_refuse_unknown_stages():
    with pytest.raises(ValueError):
        pl.init_container_names('tuning', 'bogus')


def test_go_json():
    assert pl.go_json({'b': 1, 'a': [True, None, 'x']}) == '{"a":[true,null,"x"],"b":1}'
    assert pl.go_json('q"\\\n\t\b\f\x01') == '"q\\"\\\\\\n\\t\\b\\f\\u0001"'
    with pytest.raises(TypeError):
        pl.go_json(1.5)


# --------------------------------------------------------------------------- pod outcome


def running(name, restarts=0):
    return {'name': name, 'restartCount': restarts, 'state': {'running': {'startedAt': '2026-05-01T10:00:00Z'}}}


def waiting(name, reason='PodInitializing', restarts=0, last=None):
    status = {'name': name, 'restartCount': restarts, 'state': {'waiting': {'reason': reason}}}
    if last is not None:
        status['lastState'] = {'terminated': {'exitCode': last, 'reason': 'Error'}}
    return status


def done(name, code=0, restarts=0):
    return {'name': name, 'restartCount': restarts,
            'state': {'terminated': {'exitCode': code, 'reason': 'Completed' if code == 0 else 'Error'}}}


def pod(*statuses, **kwargs):
    item = {'metadata': {'name': 'p'},
            'status': {'phase': kwargs.get('phase', 'Pending'), 'initContainerStatuses': list(statuses)}}
    if kwargs.get('deleting'):
        item['metadata']['deletionTimestamp'] = '2026-05-01T10:00:00Z'
    if kwargs.get('reason'):
        item['status']['reason'] = kwargs['reason']
    return item


def verdict(outcome, container=None, exit_code=None, reason=None, restarts=0, state=None):
    return {'outcome': outcome, 'container': container, 'exit_code': exit_code, 'reason': reason,
            'restarts': restarts, 'state': state}


@pytest.mark.parametrize('item,retries,expected', [
    # all init containers exited 0: done; restarts are the last container's (what the operator records)
    (pod(done('t-init'), done('t-apply'), done('t-applycheck'), phase='Running'), 0,
     verdict('succeeded', 't-applycheck', 0, 'Completed', 0, 'complete')),
    (pod(done('t-init'), done('t-apply', restarts=2), done('t-applycheck', restarts=1), phase='Running'), 0,
     verdict('succeeded', 't-applycheck', 0, 'Completed', 1, 'complete')),
    (pod(done('interrupt'), phase='Running'), 0, verdict('succeeded', 'interrupt', 0, 'Completed', 0, 'complete')),
    # a non-zero exit fails at once with retries=0 ...
    (pod(done('t-init'), done('t-apply', 3), waiting('t-applycheck')), 0,
     verdict('failed', 't-apply', 3, 'Error', 0, 'erroring')),
    # ... and is retried with retries=2 (the operator has already marked it erroring)
    (pod(done('t-init'), done('t-apply', 3), waiting('t-applycheck')), 2,
     verdict('running', 't-apply', 3, 'Error', 0, 'erroring')),
    # CrashLoopBackOff is a failure; the exit code comes from the last termination
    (pod(done('t-init'), waiting('t-apply', 'CrashLoopBackOff', restarts=1, last=1), waiting('t-applycheck')), 2,
     verdict('running', 't-apply', 1, 'CrashLoopBackOff', 1, 'erroring')),
    (pod(done('t-init'), waiting('t-apply', 'CrashLoopBackOff', restarts=2, last=1), waiting('t-applycheck')), 2,
     verdict('failed', 't-apply', 1, 'CrashLoopBackOff', 2, 'erroring')),
    # restarted more often than allowed, even if the failure itself was not seen
    (pod(done('t-init'), dict(running('t-apply', restarts=3), lastState={'terminated': {'exitCode': 7}}),
         waiting('t-applycheck')), 2,
     verdict('failed', 't-apply', 7, None, 3, None)),
    # a non-zero exit of a later container, earlier ones fine: that container fails
    (pod(done('t-init'), done('t-apply'), done('t-applycheck', 1), phase='Running'), 0,
     verdict('failed', 't-applycheck', 1, 'Error', 0, 'erroring')),
    # still working
    (pod(done('t-init'), running('t-apply'), waiting('t-applycheck')), 0,
     verdict('running', 't-apply', None, None, 0, None)),
    (pod(waiting('t-init', 'ImagePullBackOff'), waiting('t-apply'), waiting('t-applycheck')), 0,
     verdict('running', 't-init', None, 'ImagePullBackOff', 0, None)),
    (pod(done('t-init'), done('t-apply'), {'name': 't-applycheck', 'restartCount': 0, 'state': {}}), 0,
     verdict('running', 't-applycheck', None, None, 0, None)),
    (pod(), 0, verdict('running', reason='Pending')),
    # the pod as a whole
    (pod(done('t-init'), running('t-apply'), waiting('t-applycheck'), phase='Failed', reason='Evicted'), 5,
     verdict('failed', None, None, 'Evicted', 0, None)),
    (pod(done('t-init'), done('t-apply', 2), waiting('t-applycheck'), phase='Failed'), 5,
     verdict('failed', 't-apply', 2, 'Error', 0, 'erroring')),
    (pod(phase='Succeeded'), 0, verdict('succeeded', state='complete')),
    (None, 0, verdict('missing', reason='PodNotFound')),
    (pod(done('t-init'), running('t-apply'), waiting('t-applycheck'), deleting=True), 0,
     verdict('missing', reason='PodDeleting')),
    # the operator deletes a pod once it has succeeded: still a success
    (pod(done('t-init'), done('t-apply'), done('t-applycheck'), deleting=True), 0,
     verdict('succeeded', 't-applycheck', 0, 'Completed', 0, 'complete')),
])
def test_pod_outcome(item, retries, expected):
    assert pod_verdicts.pod_outcome(item, retries=retries) == expected


# containerExitedSuccessfully's (container, state, restarts) on the same pods, from running it:
# the "state" of pod_outcome must say what the operator would record, whatever the retries.
@pytest.mark.parametrize('item,operator', [
    (pod(done('t-init'), done('t-apply'), done('t-applycheck')), ('t-applycheck', 'complete', 0)),
    (pod(done('t-init'), done('t-apply', restarts=2), done('t-applycheck', restarts=1)), ('t-applycheck', 'complete', 1)),
    (pod(done('t-init'), done('t-apply', 3), waiting('t-applycheck')), ('t-apply', 'erroring', 0)),
    (pod(done('t-init'), waiting('t-apply', 'CrashLoopBackOff', restarts=2, last=1), waiting('t-applycheck')),
     ('t-apply', 'erroring', 2)),
    (pod(done('t-init'), done('t-apply', 1), done('t-applycheck')), ('t-apply', 'erroring', 0)),
    (pod(done('t-init'), running('t-apply', restarts=4), waiting('t-applycheck')), (None, None, None)),
    (pod(waiting('t-init', 'ImagePullBackOff'), waiting('t-apply'), waiting('t-applycheck')), (None, None, None)),
    (pod(), (None, None, None)),
])
def test_pod_outcome_state_is_the_operators(item, operator):
    result = pod_verdicts.pod_outcome(item, retries=10 ** 6)
    container, state, restarts = operator
    assert result['state'] == state
    if state:
        assert (result['container'], result['restarts']) == (container, restarts)


# A reboot interrupt's pod on a real node: the shutdown kills it, or the kubelet reports it gone after the boot
@pytest.mark.parametrize('item,killed', [
    (pod(done('t-interrupt', 137), phase='Running'), True),   # SIGKILL
    (pod(done('t-interrupt', 143), phase='Running'), True),   # SIGTERM
    (pod(done('t-interrupt', 1), phase='Running'), False),    # the interrupt's own failure
    (pod(running('t-interrupt'), phase='Failed', reason='Terminated'), True),  # graceful node shutdown
    (pod(running('t-interrupt'), phase='Failed', reason='Evicted'), False),
    (pod(done('t-interrupt')), False),                        # succeeded: not a failure at all
    (pod(running('t-interrupt')), False),
    (None, False),                                            # missing: its own case
])
def test_killed_by_shutdown(item, killed):
    assert pod_verdicts.killed_by_shutdown(pod_verdicts.pod_outcome(item)) is killed


def test_killed_by_shutdown_reads_the_kubelets_reason_for_a_vanished_container():
    gone = {'name': 't-interrupt', 'restartCount': 0,
            'state': {'terminated': {'exitCode': 137, 'reason': 'ContainerStatusUnknown'}}}
    assert pod_verdicts.killed_by_shutdown(pod_verdicts.pod_outcome(pod(gone, phase='Failed')))
    unknown = {'name': 't-interrupt', 'restartCount': 0, 'state': {'terminated': {'exitCode': 255, 'reason': 'ContainerStatusUnknown'}}}
    assert pod_verdicts.killed_by_shutdown(pod_verdicts.pod_outcome(pod(unknown, phase='Failed')))
    # containerd's report after the boot of a container whose task died with the node (a real node, rebooted)
    lost = {'name': 't-interrupt', 'restartCount': 0, 'state': {'terminated': {'exitCode': 255, 'reason': 'Unknown'}}}
    assert pod_verdicts.killed_by_shutdown(pod_verdicts.pod_outcome(pod(lost, phase='Running')))


# --------------------------------------------------------------------------- the v0.18+ generation (NODEWRIGHT)
#
# The names follow NVIDIA/nodewright operator/internal/controller/skyhook_controller.go @01cc2f2d (the pod labels
# <prefix>/name, /package, /interrupt; the package ConfigMap's /name label and /name, /Package.Name, /Package.Version
# annotations; the node-metadata ConfigMap's /skyhook-node-meta label and /Node.name annotation; the env defaults
# NAMESPACE nodewright, AGENT_IMAGE ghcr.io/nvidia/nodewright/agent:latest, RUNTIME_REQUIRED_TAINT
# nodewright.nvidia.com=runtime-required:NoSchedule, the legacy skyhook.nvidia.com one still tolerated) and
# operator/internal/controller/annotations.go @262b5749 (the <prefix>/package annotation). Everything else of a pod is
# what the v0.15 operator built: the mounts (/skyhook-package/...), the copy and log roots and the SKYHOOK_* variables
# did not change in v0.20, so the expected pods are the SKYHOOK ones with only the keys and the tolerations swapped.

NW_DOC = dict(copy.deepcopy(CR_DOC), apiVersion='nodewright.nvidia.com/v1alpha1', kind='NodeWright')
# the v0.18+ webhook takes a bare repository only (the version supplies the tag): the same image reference results
NW_DOC['spec']['packages']['tuning']['image'] = 'ghcr.io/x/tuning'
NW_OWNER = [dict(OWNER[0], apiVersion='nodewright.nvidia.com/v1alpha1', kind='NodeWright')]
NW_RUNTIME_REQUIRED = [
    {'key': 'nodewright.nvidia.com', 'operator': 'Equal', 'value': 'runtime-required', 'effect': 'NoSchedule'},
    # the legacy taint a v0.15 operator left on a node: the v0.18+ operator still tolerates (and removes) it
    {'key': 'skyhook.nvidia.com', 'operator': 'Equal', 'value': 'runtime-required', 'effect': 'NoSchedule'}]
NW_TOLERATIONS = [TOLERATIONS[0]] + NW_RUNTIME_REQUIRED + TOLERATIONS[2:]
NW_NODE_DOC = {'metadata': {'name': NODE, 'labels': {'kubernetes.io/hostname': 'node-upper'},
                            'annotations': {'nodewright.nvidia.com/nodeState_gpu-tuning': '{}'}}}


@pytest.fixture
def nw_cr():
    return cr_validation.build_cr(copy.deepcopy(NW_DOC))


def legacy_free(manifest):
    """The manifest as JSON without the legacy taint's toleration: no skyhook.nvidia.com key may be left in it."""
    manifest = copy.deepcopy(manifest)
    spec = manifest.get('spec') or {}
    if 'tolerations' in spec:
        spec['tolerations'] = [t for t in spec['tolerations'] if t != NW_RUNTIME_REQUIRED[1]]
    return json.dumps(manifest)


def test_the_generations_defaults():
    """NAMESPACE nodewright and AGENT_IMAGE ghcr.io/nvidia/nodewright/agent:latest are the v0.18+ operator's env defaults
    (NVIDIA/nodewright operator/internal/controller/skyhook_controller.go @01cc2f2d, SkyhookOperatorOptions)."""
    assert pl.defaults() == {'namespace': pl.DEFAULT_NAMESPACE, 'agent_image': pl.DEFAULT_AGENT_IMAGE,
                             'runtime_required_taint': C.DEFAULT_RUNTIME_REQUIRED_TAINT}
    assert pl.defaults(NODEWRIGHT) == {'namespace': 'nodewright', 'agent_image': 'ghcr.io/nvidia/nodewright/agent:latest',
                                       'runtime_required_taint': 'nodewright.nvidia.com=runtime-required:NoSchedule'}


def test_nodewright_stage_pod_has_the_new_keys_and_nothing_else_changes(nw_cr):
    """The v0.18+ stage pod: nodewright.nvidia.com/name and /package labels (NVIDIA/nodewright
    operator/internal/controller/skyhook_controller.go @01cc2f2d), the nodewright.nvidia.com/package annotation
    (operator/internal/controller/annotations.go @262b5749), both runtime-required tolerations; the rest as v0.15."""
    pod = pl.stage_pod(nw_cr, 'tuning', 'apply', NODE, gen=NODEWRIGHT, **OPTIONS)
    expected = copy.deepcopy(EXPECTED_STAGE_POD)
    expected['metadata'] = {
        'name': 'gpu-tuning-tuning-1-2-3-apply-node-upper-example-com-458d2fbe',
        'namespace': 'nw-system',
        'labels': {'nodewright.nvidia.com/name': 'gpu-tuning', 'nodewright.nvidia.com/package': 'tuning-1.2.3'},
        'annotations': {'nodewright.nvidia.com/package': '{"name":"tuning","version":"1.2.3","skyhook":"gpu-tuning",'
                                                         '"stage":"apply","image":"ghcr.io/x/tuning"}'},
        'ownerReferences': NW_OWNER}
    expected['spec']['tolerations'] = NW_TOLERATIONS
    assert pod == expected
    assert 'skyhook.nvidia.com' not in legacy_free(pod)


def test_nodewright_interrupt_pod_has_the_new_keys_and_nothing_else_changes(nw_cr):
    """The v0.18+ interrupt pod adds nodewright.nvidia.com/interrupt=True (skyhook_controller.go @01cc2f2d,
    createInterruptPodForPackage; annotations.go @262b5749 for the package annotation)."""
    pod = pl.interrupt_pod(nw_cr, 'tuning', {'type': 'service', 'services': ['containerd', 'kubelet']}, NODE,
                           gen=NODEWRIGHT, **OPTIONS)
    expected = copy.deepcopy(EXPECTED_INTERRUPT_POD)
    expected['metadata'] = {
        'name': 'gpu-tuning-interrupt-service-node-upper-example-com-580333de',
        'namespace': 'nw-system',
        'labels': {'nodewright.nvidia.com/interrupt': 'True', 'nodewright.nvidia.com/name': 'gpu-tuning',
                   'nodewright.nvidia.com/package': 'tuning-1.2.3'},
        'annotations': {'nodewright.nvidia.com/package': '{"name":"tuning","version":"1.2.3","skyhook":"gpu-tuning",'
                                                         '"stage":"interrupt","image":"ghcr.io/x/tuning"}'},
        'ownerReferences': NW_OWNER}
    expected['spec']['tolerations'] = NW_TOLERATIONS
    assert pod == expected
    assert 'skyhook.nvidia.com' not in legacy_free(pod)


NW_PLAIN_DOC = {'apiVersion': 'nodewright.nvidia.com/v1alpha1', 'kind': 'NodeWright', 'metadata': {'name': 'plain-cr'},
                'spec': {'packages': {'solo': {'version': '2.0.0', 'image': 'busybox'}}}}


@pytest.mark.parametrize('stage', ['apply', 'interrupt'])
def test_nodewright_pods_with_the_operators_defaults(stage):
    """Without options a v0.18+ pod goes to namespace nodewright with agent ghcr.io/nvidia/nodewright/agent:latest
    (skyhook_controller.go @01cc2f2d); the copy / log roots and mount paths did not change in v0.20."""
    cr = cr_validation.build_cr(copy.deepcopy(NW_PLAIN_DOC))
    if stage == 'interrupt':
        pod = pl.interrupt_pod(cr, 'solo', {'type': 'noop'}, 'worker-1', gen=NODEWRIGHT)
    else:
        pod = pl.stage_pod(cr, 'solo', stage, 'worker-1', gen=NODEWRIGHT)
    assert pod['metadata']['namespace'] == 'nodewright'
    assert pod['spec']['tolerations'] == [{'key': 'node.kubernetes.io/unschedulable', 'operator': 'Exists'}] + NW_RUNTIME_REQUIRED
    # the containers that run the stage's scripts: every init container but the copy step (init)
    agents = [c for c in pod['spec']['initContainers'] if c['name'] in pl.init_container_names('solo', stage)
              and not c['name'].endswith('-init')]
    assert agents and all(c['image'] == 'ghcr.io/nvidia/nodewright/agent:latest' for c in agents)
    # unchanged in v0.20: the copy and log roots, the agent's variables and the mount paths
    env = dict((e['name'], e['value']) for e in agents[0]['env'])
    assert env['SKYHOOK_ROOT_DIR'] == '/var/lib/skyhook/plain-cr' and env['SKYHOOK_LOG_DIR'] == '/var/log/skyhook/plain-cr'
    assert agents[0]['args'][2] == '/var/lib/skyhook/plain-cr/solo-2.0.0--0'
    if stage != 'interrupt':
        assert agents[0]['volumeMounts'][1]['mountPath'] == '/skyhook-package/node-metadata'
    assert 'skyhook.nvidia.com' not in legacy_free(pod)


@pytest.mark.parametrize('taint, tolerations', [
    (None, NW_RUNTIME_REQUIRED),                                                   # the generation's default
    ('nodewright.nvidia.com=runtime-required:NoSchedule', NW_RUNTIME_REQUIRED),   # the same, spelled out
    # the operator configured with another RUNTIME_REQUIRED_TAINT: that one alone (the legacy one included)
    ('dedicated:NoExecute', [{'key': 'dedicated', 'operator': 'Equal', 'effect': 'NoExecute'}]),
    ('skyhook.nvidia.com=runtime-required:NoSchedule', NW_RUNTIME_REQUIRED[1:]),
])
def test_nodewright_runtime_required_tolerations(taint, tolerations):
    """The v0.18+ operator applies nodewright.nvidia.com=runtime-required:NoSchedule and still tolerates the legacy
    skyhook.nvidia.com one (skyhook_controller.go @01cc2f2d): its default tolerates both, an override only itself."""
    assert pl.runtime_required_tolerations(taint, NODEWRIGHT) == tolerations
    pod = pl.stage_pod(minimal_cr(), 'solo', 'apply', 'n1', runtime_required_taint=taint, gen=NODEWRIGHT)
    assert pod['spec']['tolerations'][1:] == tolerations
    # SKYHOOK recognises one taint: one toleration, as before
    assert pl.runtime_required_tolerations() == [TOLERATIONS[1]] == pl.runtime_required_tolerations(C.DEFAULT_RUNTIME_REQUIRED_TAINT)


def test_nodewright_node_picker_tolerates_both_runtime_required_taints():
    """SelectNodes of a runtimeRequired CR checks nodes against the same runtime-required tolerations (skyhook_controller.go @01cc2f2d)."""
    doc = dict(NW_DOC, spec=dict(NW_DOC['spec'], runtimeRequired=True))
    cr = cr_validation.build_cr(copy.deepcopy(doc))
    cordon = {'key': 'node.kubernetes.io/unschedulable', 'operator': 'Exists', 'effect': 'NoSchedule'}
    assert pl.picker_tolerations(cr, gen=NODEWRIGHT) == [cordon] + TOLERATIONS[2:] + NW_RUNTIME_REQUIRED
    assert pl.picker_tolerations(cr) == [cordon] + TOLERATIONS[2:] + [TOLERATIONS[1]]
    assert pl.picker_tolerations(cr_validation.build_cr(copy.deepcopy(NW_DOC)), gen=NODEWRIGHT) == [cordon] + TOLERATIONS[2:]


def test_nodewright_configmaps(nw_cr):
    """The package ConfigMap's nodewright.nvidia.com/name label and /name, /Package.Name, /Package.Version annotations, the
    node-metadata ConfigMap's /skyhook-node-meta label and /Node.name annotation (NVIDIA/nodewright
    operator/internal/controller/skyhook_controller.go @01cc2f2d, UpsertConfigmaps, UpsertNodeLabelsAnnotationsPackages)."""
    assert pl.package_configmap(nw_cr, 'tuning', 'nw-system', cr_uid=UID, gen=NODEWRIGHT) == {
        'apiVersion': 'v1', 'kind': 'ConfigMap',
        'metadata': {
            'name': 'gpu-tuning-tuning-1.2.3', 'namespace': 'nw-system',
            'labels': {'nodewright.nvidia.com/name': 'gpu-tuning'},
            'annotations': {'nodewright.nvidia.com/name': 'gpu-tuning', 'nodewright.nvidia.com/Package.Name': 'tuning',
                            'nodewright.nvidia.com/Package.Version': '1.2.3'},
            'ownerReferences': NW_OWNER},
        'data': {'a.sh': 'echo "<&>"\n', 'b.conf': 'x=1'},
    }
    assert pl.package_configmap(nw_cr, 'tuning', gen=NODEWRIGHT)['metadata']['namespace'] == 'nodewright'
    cm = pl.node_metadata_configmap(nw_cr, NW_NODE_DOC, 'nw-system', cr_uid=UID, gen=NODEWRIGHT)
    assert cm['metadata'] == {
        'name': 'gpu-tuning-node-upper-example-com-metadata-e6792316', 'namespace': 'nw-system',
        'labels': {'nodewright.nvidia.com/skyhook-node-meta': 'gpu-tuning'},
        'annotations': {'nodewright.nvidia.com/name': 'gpu-tuning', 'nodewright.nvidia.com/Node.name': NODE},
        'ownerReferences': NW_OWNER}
    # the generation's agent image gives agentVersion; the data is the node's own maps, as before
    assert json.loads(cm['data']['packages.json'])['agentVersion'] == 'latest'
    assert cm['data']['annotations.json'] == '{"nodewright.nvidia.com/nodeState_gpu-tuning":"{}"}'
    assert 'skyhook.nvidia.com' not in json.dumps(cm)
    assert pl.node_metadata_configmap(nw_cr, NW_NODE_DOC, gen=NODEWRIGHT)['metadata']['namespace'] == 'nodewright'


def test_nodewright_labels_selectors_and_package_annotation(nw_cr):
    """Selectors find the pods a v0.18+ operator labels (skyhook_controller.go @01cc2f2d); the package annotation is
    read under its nodewright.nvidia.com/package key (annotations.go @262b5749)."""
    pkg = nw_cr.packages['tuning']
    assert pl.pod_labels('gpu-tuning', gen=NODEWRIGHT) == {'nodewright.nvidia.com/name': 'gpu-tuning'}
    assert pl.pod_labels('gpu-tuning', pkg, interrupt=True, gen=NODEWRIGHT) == {
        'nodewright.nvidia.com/interrupt': 'True', 'nodewright.nvidia.com/name': 'gpu-tuning',
        'nodewright.nvidia.com/package': 'tuning-1.2.3'}
    pod = pl.stage_pod(nw_cr, 'plain', 'config', NODE, gen=NODEWRIGHT)
    annotations = pod['metadata']['annotations']
    assert json.loads(annotations['nodewright.nvidia.com/package']) == {
        'name': 'plain', 'version': '0.1.0', 'skyhook': 'gpu-tuning', 'stage': 'config', 'image': 'alpine', 'containerSHA': SHA}
    assert C.PACKAGE_ANNOTATION not in annotations   # no skyhook.nvidia.com/package on it


def test_nodewright_stale_pod_reason_reads_the_new_package_annotation(nw_cr):
    """A found pod is compared by its nodewright.nvidia.com/package annotation (annotations.go @262b5749)."""
    manifest = pl.stage_pod(nw_cr, 'plain', 'apply', NODE, gen=NODEWRIGHT)
    entry = {'stage': 'apply', 'state': 'in_progress'}
    assert stale_pods.stale_pod_reason(copy.deepcopy(manifest), manifest, entry, 'apply', gen=NODEWRIGHT) is None
    other = copy.deepcopy(manifest)
    other['metadata']['annotations']['nodewright.nvidia.com/package'] = '{}'
    assert 'its package annotation is {}' in stale_pods.stale_pod_reason(other, manifest, entry, 'apply', gen=NODEWRIGHT)
    # a pod the v0.15 operator made (its skyhook.nvidia.com/package) is not the one the v0.18+ CR asks for
    legacy = pl.stage_pod(nw_cr, 'plain', 'apply', NODE)
    assert 'its package annotation is None' in stale_pods.stale_pod_reason(legacy, manifest, entry, 'apply', gen=NODEWRIGHT)


def _init(name, **state):
    return {'name': name, 'restartCount': 0, 'state': state}


def test_pod_progress_names_the_container_that_holds_the_stage_and_the_kubelets_words():
    pulling = {'status': {'phase': 'Pending', 'initContainerStatuses': [
        _init('tuning-init', waiting={'reason': 'ImagePullBackOff',
                                      'message': 'Back-off pulling image "localhost/nodewright-packages/gone:1.0.0"'}),
        _init('tuning-apply', waiting={'reason': 'PodInitializing'})]}}
    assert pod_verdicts.pod_progress(pulling) == ('pod Pending, init container tuning-init waiting: ImagePullBackOff '
                                                  '(Back-off pulling image "localhost/nodewright-packages/gone:1.0.0")')
    running = {'status': {'phase': 'Pending', 'initContainerStatuses': [
        _init('tuning-init', terminated={'exitCode': 0}),
        dict(_init('tuning-apply', running={'startedAt': '2026-12-04T10:00:00Z'}), restartCount=2)]}}
    assert pod_verdicts.pod_progress(running) == ('pod Pending, init container tuning-apply running since 2026-12-04T10:00:00Z '
                                                  '(2 restarts)')
    unscheduled = {'status': {'phase': 'Pending', 'conditions': [
        {'type': 'PodScheduled', 'status': 'False', 'reason': 'Unschedulable', 'message': 'x' * 400}]}}
    assert pod_verdicts.pod_progress(unscheduled) == 'pod Pending, PodScheduled: Unschedulable (%s)' % ('x' * 300)
    assert pod_verdicts.pod_progress({'status': {}}) == 'pod Pending'
    assert pod_verdicts.pod_progress(None) is None
