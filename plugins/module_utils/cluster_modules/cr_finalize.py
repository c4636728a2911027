# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""The code of the module nodewright.bridge.cr_finalize (its options and everything after AnsibleModule).

The rules are module_utils/contract/cr_deletion.py's; this reads the CR and its nodes, writes the DeletionBlocked
condition and its Warning Event, cleans the nodes up and removes the finalizer.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.nodewright.bridge.plugins.module_utils.contract import cr_deletion
from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_validation
from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube as kube_api
from ansible_collections.nodewright.bridge.plugins.module_utils.model import label_selector
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import node_conditions
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import _runner
from ansible_collections.nodewright.bridge.plugins.module_utils.planning.planner import normalise_nodes

ATTEMPTS = 4


def _nodes(kube, cr):
    listing = kube.list_nodes(label_selector=label_selector.to_query(cr.node_selector) or None)
    return listing.get('items') or []


def _write_condition(kube, name, decision, check_mode):
    """DeletionBlocked set or cleared on fresh reads (guarded by the resourceVersion); True if it changed."""
    for attempt in range(ATTEMPTS):
        doc = kube.get_cr(name)
        status = doc.get('status') or {}
        conditions = cr_deletion.blocked_conditions(status.get('conditions'), decision,
                                                    (doc.get('metadata') or {}).get('generation') or 0,
                                                    node_conditions.now_text())
        if conditions is None:
            return False
        if check_mode:
            return True
        try:
            kube.patch_cr_status(doc, {'status': {'conditions': conditions}})
            return True
        except kube_api.Conflict:
            if attempt == ATTEMPTS - 1:
                raise
    return False


def _clean_node(kube, cr_name, node, check_mode):
    """The node without what the CR wrote on it; True if anything was written."""
    meta = node['metadata']
    name = meta['name']

    gen = kube.generation

    def mutate(current):
        cmeta = current.get('metadata') or {}
        return cr_deletion.cleanup_patch(cr_name, cmeta.get('annotations'), cmeta.get('labels'),
                                         bool((current.get('spec') or {}).get('unschedulable')), gen)

    changed = mutate(node) is not None or cr_deletion.conditions_removal(cr_name, node, gen) is not None
    if check_mode or not changed:
        return changed
    after, dummy = kube.update_node(name, mutate, node=node)
    kube.sync_node_status(name, lambda current: cr_deletion.conditions_removal(cr_name, current, gen), after)
    return True


def _add_finalizer(module, kube, name, doc):
    """add_finalizer: the operator's finalizer on a CR that lacks it, as its first reconcile adds it (HandleFinalizer)."""
    finalizer = kube.generation.finalizer
    patch = cr_deletion.add_finalizer_patch(doc, kube.generation)
    if patch is None:
        return dict(changed=False, cr_name=name, action='none', msg='%s carries the %s finalizer' % (name, finalizer))
    if not module.check_mode:
        kube.patch_cr(doc, patch)  # a conflict (written since the read) fails the task; the next run adds it
    return dict(changed=True, cr_name=name, action='added',
                msg='%s: the %s finalizer added; kubectl delete now waits for a run to finish the deletion'
                % (name, finalizer))


def run(module, kube):
    name = module.params['cr_name']
    gen = kube.generation
    doc = kube.get_cr(name)
    if not cr_deletion.being_deleted(doc, gen):
        if module.params['add_finalizer']:
            return _add_finalizer(module, kube, name, doc)
        return dict(changed=False, cr_name=name, action='none', msg='%s is not being deleted (or carries no %s finalizer)'
                    % (name, gen.finalizer))
    cr = cr_validation.build_cr(doc, stored=True)
    raw_nodes = _nodes(kube, cr)
    pending, malformed = cr_deletion.pending_uninstall(cr, normalise_nodes(raw_nodes), gen)
    decision = cr_deletion.decide(cr, pending, malformed, gen)
    changed = _write_condition(kube, name, decision, module.check_mode)
    result = dict(cr_name=name, action=decision['action'], pending=[{'node': n, 'package': p} for n, p in pending],
                  malformed=malformed, cleaned=[], finalizer_removed=False)
    if decision['action'] == 'blocked':
        if not module.check_mode:
            warning = kube.cr_event(doc, cr_deletion.CONDITION, decision['event'])
            if warning:
                module.warn(warning)
        module.warn('%s: deletion blocked (%s): %s' % (name, decision['reason'], decision['message']))
        return dict(result, changed=changed, msg=decision['message'])
    if decision['action'] == 'wait':
        return dict(result, changed=changed, msg='%s: %d package(s) with uninstall.enabled still on nodes: run apply '
                    '(or uninstall) to uninstall them, then this again' % (name, len(pending)))
    for node in raw_nodes:
        if _clean_node(kube, name, node, module.check_mode):
            result['cleaned'].append(node['metadata']['name'])
    if not module.check_mode:
        kube.patch_cr(doc, cr_deletion.finalizers_patch(kube.get_cr(name), gen))
    return dict(result, changed=True, finalizer_removed=not module.check_mode,
                msg='%s: finalized (%d node(s) cleaned up), the API server deletes it now' % (name, len(result['cleaned'])))


def module_args():
    """The AnsibleModule keywords: the argument spec and its rules (also used in the controller process)."""
    argument_spec = kube_api.auth_argument_spec()
    argument_spec.update(cr_name=dict(type='str', required=True), add_finalizer=dict(type='bool', default=False))
    return dict(argument_spec=argument_spec, supports_check_mode=True)


def execute(module):
    """Everything after AnsibleModule: the run, exit_json / fail_json (cluster_modules/_runner.py)."""
    _runner.execute(module, run, context=dict(cr_name=module.params['cr_name']))
