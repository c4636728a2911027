# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The shipped RBAC (examples/rbac) is enough and no more, on a cluster of its own with an audit log.

Every module the other tests call runs once under the apply identity (nodewright-bridge); a module
that writes fails with "forbidden" under the plan identity and changes nothing; and a small
rollout (plan, apply, reset of one CR over 2 nodes, from the cluster) under the service-account
tokens is read back from the API server's audit log: no request was refused, and every verb the
roles grant was used, but for the rare-path permissions listed (RARE) with why.
"""

from __future__ import annotations

import base64
import json
import uuid
from pathlib import Path

import helpers
import launcher
import pytest
import rbac_identity
from kubernetes import client as kclient
from module_runner import ModuleRunner, PlaybookRunner
from nodewright_fixtures import CRs, package
from test_e2e_apply import Pool, _policy

# Granted but not used by the rollout below, each with why (group, resource, verb).
RARE = {
    # node_update reads a stage's logs only when it fails (collect_logs: on_failure); package_stage
    # and node_interrupt read them always by default, which test_modules_under_the_apply_identity does.
    ('', 'pods/log', 'get'): 'read only when a package pod fails in a rollout',
    # a stage's pod goes first as a dry run (pod_run.look_by_dry_run): it is read only when that answers 409
    ('', 'pods', 'get'): "read only when a stage's pod is already there: left by an interrupted run, to adopt or replace",
    # the status of a CR of the announced group; the rollout below rolls a Skyhook (skyhooks/status is used)
    ('nodewright.nvidia.com', 'nodewrights/status', 'patch'): 'written only for nodewright.nvidia.com CRs',
    # cr_finalize (a CR deleted while the operator's finalizer holds it, tests/kube/test_cr_deletion.py) and the
    # version stamp of cr_status; the rollout below rolls a Skyhook, whose stamp uses skyhooks patch
    ('nodewright.nvidia.com', 'nodewrights', 'patch'): (
        'the finalizer of a deleted CR and the version stamp, for nodewright.nvidia.com CRs only'),
    # the engine's CR watch looks in nodewright.nvidia.com only for a CR that skyhook.nvidia.com lacks
    ('nodewright.nvidia.com', 'nodewrights', 'list'): 'the CR watch of a nodewright.nvidia.com CR',
    ('nodewright.nvidia.com', 'nodewrights', 'watch'): 'the CR watch of a nodewright.nvidia.com CR',
}
# the stage Jobs of the v0.18+ contract (job_run.JobRun); the cluster below serves the v0.15 CRDs, whose stages are pods
RARE.update((('batch', 'jobs', verb), 'stage Jobs run under the v0.18+ contract only')
            for verb in ('get', 'list', 'watch', 'create', 'patch', 'delete'))


@pytest.fixture(scope='module')
def audited(tmp_path_factory):
    """A cluster of its own (2 nodes) with the API audit log, the shipped RBAC and a package namespace."""
    with helpers.own_cluster(tmp_path_factory.mktemp('rbac-cluster'), 'the audited test cluster', nodes=2, audit=True) as cluster:
        work = tmp_path_factory.mktemp('rbac-work')
        ids = rbac_identity.install(cluster.api, cluster.info.kubeconfig, work)
        namespace = f'rbac-{uuid.uuid4().hex[:5]}'
        cluster.create_namespace(namespace)
        rbac_identity.bind_namespace(cluster.api, namespace)
        yield Audited(cluster, cluster.info, ids, namespace, work)


class Audited:
    """The audited cluster, its identities' runners and the audit log."""

    def __init__(self, cluster, info, ids, namespace, work):
        self.cluster, self.info, self.ids, self.namespace, self.work = cluster, info, ids, namespace, work
        self.modules = {key: ModuleRunner(ids.kubeconfig(key), work / f'modules-{key}') for key in ('apply', 'plan')}
        self.playbooks = PlaybookRunner(ids.apply, work / 'playbooks', plan_kubeconfig=ids.plan,
                                        admin_kubeconfig=info.kubeconfig)
        self.crs = CRs(cluster)

    def fresh_node(self, labels=None):
        name = f'rbac-{uuid.uuid4().hex[:6]}'
        launcher.create_nodes(self.cluster.api, [name], labels=dict(labels or {}, **{'nodewright.bridge/test-node': 'true'}))
        launcher.wait_nodes_ready(self.cluster.api, [name], timeout=60)
        return name

    def audit_offset(self):
        return Path(self.info.audit_log).stat().st_size

    def requests(self, since):
        """(username, (apiGroup, resource[/subresource], verb), code) of every resource request since ``since``."""
        with open(self.info.audit_log, encoding='utf-8') as log:
            log.seek(since)
            lines = log.read().splitlines()
        seen = []
        for line in lines:
            event = json.loads(line)
            ref = event.get('objectRef')
            if not ref or event.get('stage') != 'ResponseComplete':
                continue
            resource = ref.get('resource', '') + ('/' + ref['subresource'] if ref.get('subresource') else '')
            seen.append((event['user']['username'], (ref.get('apiGroup', ''), resource, event['verb']),
                         (event.get('responseStatus') or {}).get('code')))
        return seen


def granted(*roles):
    """(apiGroup, resource, verb) of every rule of the shipped ClusterRoles ``roles``."""
    rules = rbac_identity.cluster_roles()
    return {(group, resource, verb) for role in roles for rule in rules[role]
            for group in rule['apiGroups'] for resource in rule['resources'] for verb in rule['verbs']}


def _ok(result):
    assert result['rc'] == 0 and not result.get('failed'), result
    return result


def test_modules_under_the_apply_identity(audited):
    """One happy path per module the other tests call, as nodewright-bridge."""
    run, ns = audited.modules['apply'].run, audited.namespace
    node = audited.fresh_node()
    cr = audited.crs.create({'tuning': package(configMap={'a.conf': 'x\n'}),
                             'svc': package(interrupt={'type': 'service', 'services': ['containerd']})})
    name = cr['metadata']['name']
    _ok(run('rollout_plan', cr_name=name))
    _ok(run('operator_guard', cr_name=name))
    _ok(run('node_state', node=node))
    assert _ok(run('node_cordon', node=node, cr_name=name))['changed'] is True
    assert _ok(run('node_drain', node=node, timeout=30))['node'] == node
    _ok(run('node_health', node=node, timeout=30))
    staged = _ok(run('package_stage', node=node, cr_name=name, package='tuning', stage='apply', namespace=ns, timeout=60))
    assert staged['outcome'] == 'succeeded' and staged['logs'], staged  # collect_logs: always read pods/log
    interrupted = _ok(run('node_interrupt', node=node, cr_name=name, package='svc', namespace=ns, timeout=60))
    assert interrupted['outcome'] == 'succeeded'
    _ok(run('node_state', node=node, cr_name=name, action='reset', forget=True))
    assert _ok(run('node_cordon', node=node, cr_name=name, state='uncordoned'))['unschedulable'] is False


def _own_labels(node):
    return dict((k, v) for k, v in (node.metadata.labels or {}).items() if 'nodewright' in k or 'skyhook' in k)


def test_the_plan_identity_cannot_write(audited):
    """node_cordon as nodewright-bridge-plan: refused by the API server, the node untouched."""
    node = audited.fresh_node()
    before = audited.cluster.core.read_node(node)
    result = audited.modules['plan'].run('node_cordon', node=node, cr_name='rbac-test')
    assert result['failed'] is True and 'forbidden' in result['msg'] and 'patch node' in result['msg'], result
    after = audited.cluster.core.read_node(node)
    # (kwok's heartbeats change the node's status and resourceVersion, and a fresh node still gets
    # labels from the node controller: compare what a cordon writes)
    assert (after.metadata.annotations or {}) == (before.metadata.annotations or {})
    assert _own_labels(after) == _own_labels(before)
    assert not after.spec.unschedulable
    # Reads work: the plan identity may see the node.
    assert _ok(audited.modules['plan'].run('node_state', node=node))['changed'] is False


def _rollout_objects(audited, pool):
    """A CR and its DeploymentPolicy in the cluster over ``pool``, a workload pod per node and a PDB that blocks them."""
    cluster, custom = audited.cluster, kclient.CustomObjectsApi(audited.cluster.api)
    policy = _policy(f'policy-{pool.id}')
    custom.create_cluster_custom_object('skyhook.nvidia.com', 'v1alpha1', 'deploymentpolicies', policy)
    # a stage that takes 1s: the first look at its pod finds it running, so the wait watches pods
    # (a pod that kwok finished before that look would leave pods/watch unused, by chance)
    cr = audited.crs.create({'tuning': package(image='registry.local/slow-1s/tuning', configMap={'a.conf': 'x\n'},
                                               interrupt={'type': 'reboot'})},
                            prefix='rbac', selector={'nodewright.bridge/pool': pool.id},
                            podNonInterruptLabels={'matchLabels': {'workload': 'training'}},
                            deploymentPolicy=policy['metadata']['name'])
    for index, node in enumerate(pool.names):
        cluster.core.create_namespaced_pod('default', {
            'metadata': {'name': f'work-{pool.id}-{index}', 'labels': {'app': f'work-{pool.id}'}},
            'spec': {'nodeName': node, 'containers': [{'name': 'w', 'image': 'registry.local/work:1'}]}})
        cluster.wait_pod('default', f'work-{pool.id}-{index}', lambda p: p.status.phase == 'Running')
    kclient.PolicyV1Api(cluster.api).create_namespaced_pod_disruption_budget('default', {
        'metadata': {'name': f'work-{pool.id}'},
        'spec': {'minAvailable': len(pool.names), 'selector': {'matchLabels': {'app': f'work-{pool.id}'}}}})
    pool.cr = cr['metadata']['name']  # Pool.state reads this CR's nodeState
    return pool.cr, policy['metadata']['name']


def _plan_identity_reads(audited, cr_name):
    """The plan identity's read-only paths: the plan with its drain preview, the guard, lookups that miss."""
    plan = audited.playbooks.run('nodewright.bridge.plan', extra_vars={'nodewright_cr_name': cr_name})
    assert plan.rc == 0, plan
    assert 'BLOCKED NOW' in plan.stdout, plan  # the preview's dry-run evictions, refused by the PDB
    run = audited.modules['plan'].run
    assert _ok(run('operator_guard', cr_name=cr_name))['active'] is False
    # A CR and a policy that are in neither group: looked up in skyhook.nvidia.com, then nodewright.nvidia.com.
    assert 'not found' in run('rollout_plan', cr_name='no-such-cr')['msg']
    lost = dict(audited.crs.custom.get_cluster_custom_object('skyhook.nvidia.com', 'v1alpha1', 'skyhooks', cr_name))
    lost['spec'] = dict(lost['spec'], deploymentPolicy='no-such-policy')
    assert 'no-such-policy' in run('rollout_plan', cr={'apiVersion': lost['apiVersion'], 'kind': lost['kind'],
                                                       'metadata': {'name': cr_name}, 'spec': lost['spec']})['msg']


def test_a_rollout_uses_exactly_the_granted_permissions(audited):
    """plan, apply and reset of one CR over 2 nodes as the service accounts, read back from the audit log."""
    pool = Pool(audited.cluster, audited.work, {'a': 1, 'b': 1})
    try:
        start = audited.audit_offset()
        cr_name, unused = _rollout_objects(audited, pool)
        _plan_identity_reads(audited, cr_name)
        kclient.PolicyV1Api(audited.cluster.api).delete_namespaced_pod_disruption_budget(f'work-{pool.id}', 'default')
        variables = {'nodewright_cr_name': cr_name, 'nodewright_namespace': audited.namespace,
                     'nodewright_stage_timeout': 120, 'nodewright_interrupt_timeout': 120, 'nodewright_drain_timeout': 120}
        applied = audited.playbooks.run('nodewright.bridge.apply', extra_vars=variables)
        assert applied.rc == 0, applied
        assert all(pool.state(n).get('tuning|1.2.0', {}).get('state') == 'complete' for n in pool.names)
        reset = audited.playbooks.run('nodewright.bridge.reset', extra_vars={'nodewright_cr_name': cr_name})
        assert reset.rc == 0, reset
        assert not any(pool.state(n) for n in pool.names)
        seen = audited.requests(start)
    finally:
        pool.close()
    _check_minimal(audited.ids, seen)


def _check_minimal(ids, seen):
    refused = sorted({(user, key, code) for user, key, code in seen if user in (ids.apply_user, ids.plan_user)
                      and code in (401, 403)})
    assert not refused, f'requests the shipped roles refused: {refused}'
    used = {user: {key for who, key, unused in seen if who == user} for user in (ids.apply_user, ids.plan_user)}
    plan_granted = granted('nodewright-bridge-plan', 'nodewright-bridge-plan-evictions')
    apply_granted = granted('nodewright-bridge-apply', 'nodewright-bridge-apply-namespaced', 'nodewright-bridge-events')
    assert used[ids.plan_user] <= plan_granted  # (a request beyond it would have been refused)
    assert used[ids.apply_user] <= plan_granted | apply_granted
    # Every permission is used by the identity bound to it (the plan's by the plan identity alone,
    # which is bound to nothing else), but for RARE.
    unused_plan = plan_granted - used[ids.plan_user] - set(RARE)
    unused_apply = apply_granted - used[ids.apply_user] - set(RARE)
    assert not unused_plan and not unused_apply, (
        f'granted but never used: plan {sorted(unused_plan)}, apply {sorted(unused_apply)}; '
        f'used: plan {sorted(used[ids.plan_user])}, apply {sorted(used[ids.apply_user])}')
    print('used by the plan identity:', sorted(used[ids.plan_user]))
    print('used by the apply identity:', sorted(used[ids.apply_user]))
    # A RARE entry that the rollout did use is not rare: keep the list honest.
    assert not set(RARE) & used[ids.apply_user], sorted(set(RARE) & used[ids.apply_user])


def test_an_impersonated_identity_is_the_one_the_api_server_authorizes(cluster, modules, node):
    """impersonate_user and impersonate_groups as kubernetes.core has them, against the test cluster's API server (the
    admin identity may impersonate anyone): a user without rights is refused, naming that user, the node untouched;
    the same user in two groups, one of them system:masters, cordons (each group is a header of its own: joined into
    one, the groups would be one group with no rights); groups without a user are refused before any request."""
    refused = modules.run('node_cordon', node=node, cr_name='impersonated', impersonate_user='nobody-at-all')
    assert refused.get('failed') and 'User "nobody-at-all"' in refused['msg'] and 'forbidden' in refused['msg'], refused
    assert not cluster.core.read_node(node).spec.unschedulable
    groups = ['system:authenticated', 'system:masters']
    cordoned = modules.run('node_cordon', node=node, cr_name='impersonated', impersonate_user='alice',
                           impersonate_groups=groups)
    assert cordoned.get('changed') and cluster.core.read_node(node).spec.unschedulable, cordoned
    released = modules.run('node_cordon', node=node, cr_name='impersonated', state='uncordoned', impersonate_user='alice',
                           impersonate_groups=groups)
    assert released.get('changed') and not cluster.core.read_node(node).spec.unschedulable, released
    alone = modules.run('node_state', node=node, impersonate_groups=['system:masters'])
    assert alone.get('failed') and 'impersonate_groups system:masters needs impersonate_user' in alone['msg'], alone


def test_a_long_lived_token_works_until_its_secret_is_deleted_then_fails_saying_so(cluster, rbac, modules, node, tmp_path):
    """examples/rbac/service-account-tokens.yaml, as docs/rbac.md has an AWX credential made: the token controller
    fills the Secret, its token reads as the plan identity; once the Secret is deleted (revoked), the first API call
    fails with a message that says the credentials were refused, naming the API server."""
    del rbac  # the shipped roles and service accounts, installed
    rbac_identity.apply_file(cluster.api, 'service-account-tokens.yaml')
    core = kclient.CoreV1Api(cluster.api)
    token = launcher.wait_until('the token controller fills nodewright-bridge-plan-token', lambda: (
        core.read_namespaced_secret('nodewright-bridge-plan-token', rbac_identity.SA_NAMESPACE).data or {}).get('token'), 60)
    kubeconfig = rbac_identity.write_kubeconfig(cluster.kubeconfig, base64.b64decode(token).decode(),
                                                tmp_path / 'long-lived.kubeconfig', 'nodewright-bridge-plan')
    (tmp_path / 'modules').mkdir()
    as_plan = ModuleRunner(kubeconfig, tmp_path / 'modules')
    assert _ok(as_plan.run('node_state', node=node))['changed'] is False
    for name in ('nodewright-bridge-token', 'nodewright-bridge-plan-token'):
        core.delete_namespaced_secret(name, rbac_identity.SA_NAMESPACE)

    def refused_now():
        result = as_plan.run('node_state', node=node)
        return result if result.get('failed') else None
    refused = launcher.wait_until("the deleted Secret's token refused", refused_now, 60, interval=1)
    assert 'authentication failed' in refused['msg'] and '401' in refused['msg'], refused
    assert 'the token may have expired or been revoked' in refused['msg'], refused
