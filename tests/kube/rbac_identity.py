# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The shipped RBAC (examples/rbac/*.yaml) installed on a test cluster, and kubeconfigs for its identities.

``install(api, workdir)`` applies the three files as a user would (``kubectl apply -f``), with the
admin client, mints a token for each ServiceAccount (TokenRequest) and writes a kubeconfig per
identity: ``apply`` (nodewright-bridge: the plan and apply roles) and ``plan`` (nodewright-bridge-plan:
the read-only role and the plan's eviction preview). ``bind_namespace`` is what a user does for an
operator namespace other than ``skyhook``: a RoleBinding of the namespaced role there.
"""

from __future__ import annotations

import base64
import time
from dataclasses import dataclass
from pathlib import Path

import yaml
from kubernetes import client as kclient

RBAC_DIR = Path(__file__).resolve().parents[2] / 'examples' / 'rbac'
FILES = ('nodewright-bridge-plan.yaml', 'nodewright-bridge-apply.yaml', 'service-account.yaml')
SA_NAMESPACE = 'skyhook'
APPLY_SA, PLAN_SA = 'nodewright-bridge', 'nodewright-bridge-plan'
NAMESPACED_ROLE = 'nodewright-bridge-apply-namespaced'
EVENT_NAMESPACE = 'default'  # where the Events on nodes go (kube.EVENT_NAMESPACE)
TOKEN_SECONDS = 86400


@dataclass
class Identities:
    """Kubeconfig paths and user names of the shipped identities."""
    apply: str
    plan: str
    apply_user: str = f'system:serviceaccount:{SA_NAMESPACE}:{APPLY_SA}'
    plan_user: str = f'system:serviceaccount:{SA_NAMESPACE}:{PLAN_SA}'

    def kubeconfig(self, identity):
        return {'apply': self.apply, 'plan': self.plan}[identity]


def documents():
    """Every document of the shipped files, in apply order."""
    return [doc for name in FILES for doc in yaml.safe_load_all((RBAC_DIR / name).read_text()) if doc]


def cluster_roles():
    """name -> rules of the shipped ClusterRoles."""
    return {d['metadata']['name']: d['rules'] for d in documents() if d['kind'] == 'ClusterRole'}


def _create_or_replace(create, replace, *args):
    """Create; an object left by an earlier run on a reused cluster is replaced instead."""
    try:
        create(*args)
    except kclient.ApiException as exc:
        if exc.status != 409:
            raise
        body = args[-1]
        replace(body['metadata']['name'], *args)


def _apply(api, doc):
    rbac, core = kclient.RbacAuthorizationV1Api(api), kclient.CoreV1Api(api)
    kind, name = doc['kind'], doc['metadata']['name']
    if kind == 'ClusterRole':
        _create_or_replace(rbac.create_cluster_role, rbac.replace_cluster_role, doc)
    elif kind == 'ClusterRoleBinding':
        _create_or_replace(rbac.create_cluster_role_binding, rbac.replace_cluster_role_binding, doc)
    elif kind == 'RoleBinding':
        namespace = doc['metadata']['namespace']
        try:
            rbac.create_namespaced_role_binding(namespace, doc)
        except kclient.ApiException as exc:
            if exc.status != 409:
                raise
            rbac.replace_namespaced_role_binding(name, namespace, doc)
    elif kind in ('ServiceAccount', 'Secret'):
        create = core.create_namespaced_service_account if kind == 'ServiceAccount' else core.create_namespaced_secret
        try:
            create(doc['metadata']['namespace'], doc)
        except kclient.ApiException as exc:
            if exc.status != 409:  # kept as it is (a token Secret's data is the token controller's)
                raise
    else:
        raise ValueError(f'examples/rbac: unexpected kind {kind}')


def _ensure_namespace(api, name):
    try:
        kclient.CoreV1Api(api).create_namespace({'metadata': {'name': name}})
    except kclient.ApiException as exc:
        if exc.status != 409:
            raise


def write_kubeconfig(admin_kubeconfig, token, path, user):
    """A kubeconfig with the admin's server and CA and ``token`` as the user."""
    admin = yaml.safe_load(Path(admin_kubeconfig).read_text())
    cluster = dict(admin['clusters'][0]['cluster'])
    if 'certificate-authority' in cluster and 'certificate-authority-data' not in cluster:
        cluster['certificate-authority-data'] = base64.b64encode(
            Path(cluster.pop('certificate-authority')).read_bytes()).decode()
    config = {'apiVersion': 'v1', 'kind': 'Config', 'current-context': user,
              'clusters': [{'name': 'test', 'cluster': cluster}],
              'users': [{'name': user, 'user': {'token': token}}],
              'contexts': [{'name': user, 'context': {'cluster': 'test', 'user': user}}]}
    Path(path).write_text(yaml.safe_dump(config))
    Path(path).chmod(0o600)
    return str(path)


def install(api, admin_kubeconfig, workdir):
    """Apply the shipped RBAC with the admin client ``api``; ``Identities`` with a fresh token each."""
    _ensure_namespace(api, SA_NAMESPACE)
    for doc in documents():
        _apply(api, doc)
    core = kclient.CoreV1Api(api)
    paths = {}
    for key, account in (('apply', APPLY_SA), ('plan', PLAN_SA)):
        token = core.create_namespaced_service_account_token(
            account, SA_NAMESPACE, {'spec': {'expirationSeconds': TOKEN_SECONDS}}).status.token
        paths[key] = write_kubeconfig(admin_kubeconfig, token, Path(workdir) / f'{account}.kubeconfig', account)
    identities = Identities(apply=paths['apply'], plan=paths['plan'])
    wait_allowed(api, identities.apply_user, 'patch', 'nodes')
    wait_allowed(api, identities.apply_user, 'create', 'pods', namespace=SA_NAMESPACE)
    wait_allowed(api, identities.apply_user, 'create', 'events', namespace=EVENT_NAMESPACE)
    wait_allowed(api, identities.plan_user, 'list', 'nodes')
    return identities


def apply_file(api, name):
    """Apply one more shipped file of examples/rbac (nodewright-namespace.yaml on a v0.18+ cluster)."""
    for doc in yaml.safe_load_all((RBAC_DIR / name).read_text()):
        if doc:
            _apply(api, doc)


def bind_namespace(api, namespace):
    """The RoleBinding a user makes in an operator namespace: the namespaced role to the apply identity."""
    _apply(api, {
        'apiVersion': 'rbac.authorization.k8s.io/v1', 'kind': 'RoleBinding',
        'metadata': {'name': NAMESPACED_ROLE, 'namespace': namespace},
        'roleRef': {'apiGroup': 'rbac.authorization.k8s.io', 'kind': 'ClusterRole', 'name': NAMESPACED_ROLE},
        'subjects': [{'kind': 'ServiceAccount', 'name': APPLY_SA, 'namespace': SA_NAMESPACE}]})
    wait_allowed(api, f'system:serviceaccount:{SA_NAMESPACE}:{APPLY_SA}', 'create', 'pods', namespace=namespace)


def wait_allowed(api, user, verb, resource, namespace='', group='', timeout=15.0):
    """Until the authorizer allows ``user`` the request (RBAC's caches catch up in milliseconds, but not at once)."""
    auth = kclient.AuthorizationV1Api(api)
    deadline = time.time() + timeout
    body = {'spec': {'user': user, 'groups': ['system:serviceaccounts', 'system:authenticated'],
                     'resourceAttributes': {'verb': verb, 'resource': resource, 'namespace': namespace, 'group': group}}}
    while not auth.create_subject_access_review(body).status.allowed:
        if time.time() > deadline:
            raise AssertionError(f'{user} still may not {verb} {resource} in {namespace or "the cluster"} after {timeout}s')
        time.sleep(0.1)
