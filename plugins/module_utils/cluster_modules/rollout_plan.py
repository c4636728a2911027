# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""The code of the module nodewright.bridge.rollout_plan (its options and everything after AnsibleModule).

Shared by the module (plugins/modules/rollout_plan.py, which adds the documentation) and its action plugin,
which runs it in the controller's process (plugin_utils/execution/in_process.py).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.module_utils.basic import missing_required_lib

from ansible_collections.nodewright.bridge.plugins.module_utils.model import api_generation
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import cr_deletion
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import cr_handoff
from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_model
from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_validation
from ansible_collections.nodewright.bridge.plugins.module_utils.planning import status_rollup
from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube as kube_api
from ansible_collections.nodewright.bridge.plugins.module_utils.model import label_selector
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import operator_documents
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import _runner
from ansible_collections.nodewright.bridge.plugins.module_utils.planning.planner import (
    choose_policy, cr_warnings, normalise_nodes, plan_decision, plan_rollout, plan_warnings, policy_documents_of)


def _documents(value, what):
    """The documents of an argument; the action plugin has already read any file on the controller."""
    if isinstance(value, dict):
        return [value]
    if isinstance(value, list):
        return value
    raise cr_model.CRValidationError(what, ['must be a dict, a list of documents, or a file path, got %s'
                                            % type(value).__name__])


def run(params, warn, live_crs=None, session=None):
    """The plan of ``params``; ``warn(text)`` takes its warnings. It reads the cluster only for what ``params`` does
    not give, through a client of ``session`` (kube.KubeSession; None: that of ``live_crs``, else its own)."""
    sources = {}
    kube = None
    if params['cr'] is None or params['nodes'] is None:
        kube = kube_api.Kube(params, live_crs=live_crs, session=session)
    cr_doc, bundled_policies = _read_cr(params, kube, sources)
    stored = sources['cr'] == 'cluster'
    given = _documents(params['policy'], 'policy') if params['policy'] is not None else None
    try:
        # a CR from the cluster: validated once per version in this process (the engine's plans of every node share it)
        cr = cr_handoff.stored_cr(kube, cr_doc, cr_validation.build_cr) if stored else cr_validation.build_cr(cr_doc)
    except cr_model.CRValidationError as exc:
        # the policy it would roll out with (given, or named in its file) is checked too: every problem in one run
        raise cr_validation.with_policy_problems(exc, policy_documents_of(cr_doc, bundled_policies, given))
    gen, gen_reason = _generation(params, kube, cr)
    if params['require_crd'] and kube is not None and not any(kube.served_groups().values()):
        # a CR from a file plans without the CRD; a cluster that must run it (a fleet's) is refused here
        raise kube_api.KubeError('the cluster serves no NodeWright CRD (neither %s nor %s): install the operator\'s CRDs'
                                 % (api_generation.SKYHOOK.crd_name, api_generation.NODEWRIGHT.crd_name))
    for problem in cr_validation.image_tag_problems(cr_doc) if stored else ():
        warn('%s: the operator replaces that tag with the version (its webhook refuses it on create or update)'
             % problem)
    policy, policy_doc, policy_source = choose_policy(cr, bundled_policies, given=given,
                                                      fetch=kube.get_policy if kube is not None else None)
    if policy_source == 'cluster':
        sources['policy'] = 'cluster'
    if policy_source == 'given' and cr.interruption_budget:
        warn('policy given: it replaces the CR spec.interruptionBudget %s' % cr.interruption_budget)
    nodes = _read_nodes(params, kube, cr, sources)
    for warning in cr_warnings(cr):
        warn(warning)
    # a CR in the cluster continues the batch state of its status, as the operator does (a file has none)
    batch_states = {}
    if sources['cr'] == 'cluster':
        batch_states = status_rollup.resumed_batch_states(cr, cr_doc, nodes, policy_doc, gen=gen)
    result = plan_rollout(cr, nodes, policy=policy, order=params['node_order'],
                          cap_to_ceiling=params['cap_batches_at_ceiling'], config_changes=params['config_changes'],
                          batch_states=batch_states, gen=gen)
    # the steps after the plan speak this generation (node_update and the strategy pass it on as nodewright_api)
    result['api_generation'] = {'name': gen.name, 'reason': gen_reason}
    for warning in plan_warnings(result):
        warn(warning)
    result['batch_state'] = batch_states
    # a CR kubectl delete marked deleted that the operator's finalizer holds: apply's report finishes it (cr_finalize)
    result['deleting'] = sources['cr'] == 'cluster' and cr_deletion.being_deleted(cr_doc, gen)
    result['sources'] = sources
    result['cr_document'] = _portable(cr_doc)
    # the CR planned with (uid, generation, resourceVersion): handed down to the steps that carry the plan out, which
    # plan the node again when the generation moved and stop when the uid did (cr_handoff.change)
    result['cr_identity'] = cr_handoff.identity(cr_doc)
    result['policy_document'] = _portable(policy_doc) if policy_doc is not None else None
    result['interruption_budget'] = None if policy is not None else (cr.interruption_budget or {'percent': 100})
    result['decision'] = plan_decision(result)
    return result


def _generation(params, kube, cr):
    """``(Generation, reason)`` the plan reads the nodes with: the client's (nodewright_api, detected for ``auto``);
    without a cluster (CR and nodes given), an explicit nodewright_api or else the CR document's own group."""
    if kube is not None:
        return kube.generation, kube.generation_reason
    option = params.get('nodewright_api') or api_generation.AUTO
    if option != api_generation.AUTO:
        return api_generation.by_name(option), 'nodewright_api=%s' % option
    return cr.api_gen, 'auto without a cluster: the CR is %s' % cr.api_version


def _read_cr(params, kube, sources):
    """``(CR document, DeploymentPolicy documents next to it)``: from the ``cr`` option or the cluster."""
    if params['cr'] is None:
        sources['cr'] = 'cluster'
        doc = kube.get_cr(params['cr_name'])
        if kube.generation is api_generation.NODEWRIGHT:
            _refuse_a_conflicting_skyhook(kube, doc)
        return doc, []
    sources['cr'] = 'given'
    return cr_model.select_cr(_documents(params['cr'], 'cr'), params['cr_name'], 'cr')


def _refuse_a_conflicting_skyhook(kube, doc):
    """Fail the plan, before anything is written, when a legacy Skyhook of the NodeWright's name says otherwise and the
    NodeWright is not its mirror (operator_documents.conflict). One GET, not a watch; NotFound (none, or the legacy
    group not served) and 403 (not readable: the v0.18+ operator does not follow it either) are no conflict."""
    name = doc['metadata']['name']
    try:
        legacy = kube.get_cr(name, api_generation.SKYHOOK.api_version, fresh=True)
    except kube_api.NotFound:
        return
    except kube_api.KubeError as exc:
        if exc.status == 403:
            return
        raise
    found = operator_documents.conflict(legacy, doc)
    if found:
        raise _runner.ModuleFailed(found.pop('message'), conflict=found)


def _read_nodes(params, kube, cr, sources):
    """The nodes to plan (``normalise_nodes``): the ``nodes`` option, the one ``node``, or those the CR selects."""
    if params['nodes'] is not None:
        sources['nodes'] = 'given'
        return normalise_nodes(params['nodes'])
    sources['nodes'] = 'cluster'
    if params['node']:
        return normalise_nodes([kube.get_node(params['node'])])
    listing = kube.list_nodes(label_selector=label_selector.to_query(cr.node_selector) or None)
    return normalise_nodes(listing.get('items') or [])


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
        require_crd=dict(type='bool', default=False),
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
    return dict(changed=False, **run(module.params, module.warn, live_crs=getattr(module, 'live_crs', None),
                                     session=_runner.module_session(module)))


def execute(module):
    """Everything after AnsibleModule: validation, the run, exit_json / fail_json (cluster_modules/_runner.py)."""
    _runner.execute(module, plan_module, check=check, build_kube=False)
