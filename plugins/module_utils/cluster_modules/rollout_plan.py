# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The code of the module nodewright.bridge.rollout_plan (its options and everything after AnsibleModule).

Shared by the module (plugins/modules/rollout_plan.py, which adds the documentation) and its action plugin,
which runs it in the controller's process (plugin_utils/in_process.py).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.module_utils.basic import missing_required_lib

from ansible_collections.nodewright.bridge.plugins.module_utils import cr_model
from ansible_collections.nodewright.bridge.plugins.module_utils import kube as kube_api
from ansible_collections.nodewright.bridge.plugins.module_utils import label_selector
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import _runner
from ansible_collections.nodewright.bridge.plugins.module_utils.planner import normalise_nodes, plan_rollout, resolve_policy


def _documents(value, what):
    """The documents of an argument; the action plugin has already read any file on the controller."""
    if isinstance(value, dict):
        return [value]
    if isinstance(value, list):
        return value
    raise cr_model.CRValidationError(what, ['must be a dict, a list of documents, or a file path, got %s'
                                            % type(value).__name__])


def run(params, warn):
    sources = {}
    kube = None
    if params['cr'] is None or params['nodes'] is None:
        kube = kube_api.Kube(params)
    if params['cr'] is None:
        cr_doc, bundled_policies = kube.get_cr(params['cr_name']), []
        sources['cr'] = 'cluster'
    else:
        cr_doc, bundled_policies = cr_model.select_cr(_documents(params['cr'], 'cr'), params['cr_name'], 'cr')
        sources['cr'] = 'given'
    cr = cr_model.build_cr(cr_doc)
    if (params['policy'] is None and kube is not None and cr.deployment_policy
            and not [d for d in bundled_policies if (d.get('metadata') or {}).get('name') == cr.deployment_policy]):
        bundled_policies = bundled_policies + [kube.get_policy(cr.deployment_policy)]
        sources['policy'] = 'cluster'
    if params['policy'] is not None:
        policy_docs = _documents(params['policy'], 'policy')
        if len(policy_docs) != 1:
            raise cr_model.CRValidationError('policy', ['must hold exactly one DeploymentPolicy, got %d documents'
                                                        % len(policy_docs)])
        policy = cr_model.build_policy(policy_docs[0], name=cr.deployment_policy or None)
        if cr.deployment_policy and policy.name not in (cr.deployment_policy, '<inline>'):
            raise cr_model.CRValidationError('policy', ['is %r but the CR names spec.deploymentPolicy %r'
                                                        % (policy.name, cr.deployment_policy)])
        if cr.interruption_budget:
            warn('policy given: it replaces the CR spec.interruptionBudget %s' % cr.interruption_budget)
        policy_doc = policy_docs[0]
    else:
        policy = resolve_policy(cr, bundled_policies)
        policy_doc = None
        if policy is not None:
            policy_doc = [d for d in bundled_policies if (d.get('metadata') or {}).get('name') == cr.deployment_policy][0]
    if params['nodes'] is None and params['node']:
        nodes = normalise_nodes([kube.get_node(params['node'])])
        sources['nodes'] = 'cluster'
    elif params['nodes'] is None:
        listing = kube.list_nodes(label_selector=label_selector.to_query(cr.node_selector) or None)
        nodes = normalise_nodes(listing.get('items') or [])
        sources['nodes'] = 'cluster'
    else:
        nodes = normalise_nodes(params['nodes'])
        sources['nodes'] = 'given'
    if cr.paused:
        warn('%s %s is paused (skyhook.nvidia.com/pause=true): the operator would not start any batch' % (cr.kind, cr.name))
    if cr.disabled:
        warn('%s %s is disabled (skyhook.nvidia.com/disable=true): the operator would not act on it' % (cr.kind, cr.name))
    result = plan_rollout(cr, nodes, policy=policy, order=params['node_order'],
                          cap_to_ceiling=params['cap_batches_at_ceiling'], config_changes=params['config_changes'])
    result['sources'] = sources
    result['cr_document'] = _portable(cr_doc)
    result['policy_document'] = _portable(policy_doc) if policy_doc is not None else None
    result['interruption_budget'] = None if policy is not None else (cr.interruption_budget or {'percent': 100})
    return result


def _portable(doc):
    """A document without what the API server adds (managedFields, resourceVersion, ...), for reuse in a play."""
    if 'spec' not in doc or 'metadata' not in doc and 'kind' not in doc:
        return doc  # a bare policy spec
    meta = doc.get('metadata') or {}
    keep = dict((k, meta[k]) for k in ('name', 'labels', 'annotations') if meta.get(k))
    result = {'apiVersion': doc.get('apiVersion'), 'kind': doc.get('kind'), 'metadata': keep, 'spec': doc.get('spec') or {}}
    return result


def module_args():
    """The AnsibleModule keywords: the argument spec and its rules (also used in the controller process)."""
    argument_spec = kube_api.auth_argument_spec()
    argument_spec.update(
        cr=dict(type='raw'),
        cr_name=dict(type='str'),
        policy=dict(type='raw'),
        nodes=dict(type='raw'),
        node=dict(type='str'),
        node_order=dict(type='str', default='name', choices=['name', 'inventory']),
        cap_batches_at_ceiling=dict(type='bool', default=True),
        config_changes=dict(type='dict'),
    )
    return dict(argument_spec=argument_spec, supports_check_mode=True,
                required_one_of=[('cr', 'cr_name')], mutually_exclusive=[('nodes', 'node')])


def check(params):
    del params  # nothing to check in them: the one requirement is PyYAML
    if not cr_model.HAS_YAML:
        raise _runner.ModuleFailed(missing_required_lib('PyYAML'))


def plan_module(module, kube):
    """The run with the module's warnings; builds its own client, only when it reads the cluster."""
    del kube
    return dict(changed=False, **run(module.params, module.warn))


def execute(module):
    """Everything after AnsibleModule: validation, the run, exit_json / fail_json (cluster_modules/_runner.py)."""
    _runner.execute(module, plan_module, check=check, build_kube=False)
