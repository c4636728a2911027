# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""A whole rollout plan for one CR over a set of nodes: which nodes, which compartment,
which batches, and what each node still has to do. Pure: inputs are dicts already read.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import gc

from ansible_collections.nodewright.bridge.plugins.module_utils import cr_model
from ansible_collections.nodewright.bridge.plugins.module_utils import label_selector
from ansible_collections.nodewright.bridge.plugins.module_utils import node_state
from ansible_collections.nodewright.bridge.plugins.module_utils.node_plan import plan_node
from ansible_collections.nodewright.bridge.plugins.module_utils.rollout_scheduler import RolloutScheduler


def normalise_nodes(raw, where='nodes'):
    """``[{name, labels, annotations}]`` from that list, a Kubernetes NodeList or a list of Node objects."""
    if isinstance(raw, dict) and isinstance(raw.get('items'), list):
        raw = raw['items']
    if not isinstance(raw, list):
        raise cr_model.CRValidationError(where, ['must be a list of nodes or a NodeList, got %s' % type(raw).__name__])
    nodes, errors, seen = [], [], set()
    for idx, item in enumerate(raw):
        path = '%s[%d]' % (where, idx)
        if not isinstance(item, dict):
            errors.append('%s: must be an object with name, labels and annotations' % path)
            continue
        meta = item.get('metadata') if isinstance(item.get('metadata'), dict) else item
        name = meta.get('name')
        if not isinstance(name, str) or not name:
            errors.append('%s.name: required, a non-empty string' % path)
            continue
        if name in seen:
            errors.append('%s.name: %r appears more than once' % (path, name))
            continue
        seen.add(name)
        entry = {'name': name}
        for field in ('labels', 'annotations'):
            value = meta.get(field) or {}
            if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
                errors.append('%s.%s: must be a map of strings' % (path, field))
                value = {}
            entry[field] = dict(value)
        nodes.append(entry)
    if errors:
        raise cr_model.CRValidationError(where, errors)
    return nodes


def resolve_policy(cr, policy_docs):
    """The DeploymentPolicy the CR names, from the given documents (error if missing)."""
    if not cr.deployment_policy:
        return None
    for doc in policy_docs:
        if (doc.get('metadata') or {}).get('name') == cr.deployment_policy:
            return cr_model.build_policy(doc)
    raise cr_model.CRValidationError('%s %r' % (cr.kind, cr.name), [
        'spec.deploymentPolicy: DeploymentPolicy %r was not given (pass it as policy, or put it in the same file)'
        % cr.deployment_policy])


def plan_rollout(cr, nodes, policy=None, order='name', cap_to_ceiling=True, config_changes=None):
    """Plan ``cr`` over ``nodes`` (from normalise_nodes). Returns a dict ready for a module result."""
    # Planning a large fleet allocates many small dicts and lists that all stay alive until
    # the result is returned; the cyclic collector would scan them again and again for
    # nothing (there are no cycles), which costs about a third of the time at 10,000 nodes.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _plan_rollout(cr, nodes, policy, order, cap_to_ceiling, config_changes)
    finally:
        if was_enabled:
            gc.enable()


def _plan_rollout(cr, nodes, policy, order, cap_to_ceiling, config_changes):
    selected, unmatched, ignored = [], [], []
    node_plans, plans_by_state, plans_by_relevant_state = {}, {}, {}
    state_key = node_state.node_state_key(cr.name)
    for node in nodes:
        if not label_selector.matches(cr.node_selector, node['labels']):
            unmatched.append(node['name'])
            continue
        if node_state.is_ignored(node['labels']):
            ignored.append(node['name'])
            continue
        raw_state = node['annotations'].get(state_key)
        # Most of a fleet shares a handful of states (nothing done yet, all done, ...):
        # plan each distinct annotation once. Plans are read-only from here on.
        plan = plans_by_state.get(raw_state)
        if plan is None:
            where = '%s annotation %s' % (node['name'], state_key)
            try:
                state = node_state.decode(raw_state, where)
            except node_state.NodeStateError as exc:
                raise cr_model.CRValidationError('node %s' % node['name'], [str(exc)])
            # A plan depends only on each entry's package, version, stage and state (not on
            # restarts, image or digest), so nodes that differ only there share one plan.
            relevant = frozenset((k, e['name'], e['version'], e['stage'], e['state']) for k, e in state.items())
            plan = plans_by_relevant_state.get(relevant)
            if plan is None:
                plan = plans_by_relevant_state[relevant] = plan_node(cr, state, config_changes=config_changes)
            plans_by_state[raw_state] = plan
        node_plans[node['name']] = plan
        selected.append(node)
    done = [n for n, p in node_plans.items() if p['complete']]
    pairs = [(n['name'], n['labels']) for n in selected]
    if policy is not None:
        scheduler = RolloutScheduler.build(pairs, policy=policy, order=order, done=done, cap_to_ceiling=cap_to_ceiling)
    else:
        scheduler = RolloutScheduler.build(pairs, legacy_cr=cr, order=order, done=done, cap_to_ceiling=cap_to_ceiling)
    compartments = scheduler.plan()
    result_nodes = {}
    complete_record = node_state.status_patch(cr.name, 'complete')['metadata']
    for node in selected:
        plan = node_plans[node['name']]
        status = node['annotations'].get(node_state.status_key(cr.name)) or 'unknown'
        # the operator's "complete" record (status annotation and label, version) is on the node already
        recorded = (all(node['annotations'].get(k) == v for k, v in complete_record.get('annotations', {}).items())
                    and all(node['labels'].get(k) == v for k, v in complete_record.get('labels', {}).items())
                    and node['annotations'].get(node_state.version_key(cr.name)) == node_state.OPERATOR_VERSION)
        result_nodes[node['name']] = {
            'compartment': scheduler.compartment_of(node['name']),
            'pending': plan['pending'],
            'needs_drain': plan['needs_drain'],
            'interrupt': plan['interrupt'],
            'interrupts': plan['interrupts'],
            'blocked': plan['blocked'],
            'complete': plan['complete'],
            'status': status,
            'recorded': bool(plan['complete'] and recorded),
            'cordoned_by': node_state.cordon_owners(node['annotations']),
        }
    return {
        'cr': {'name': cr.name, 'kind': cr.kind, 'apiVersion': cr.api_version, 'priority': cr.priority,
               'sequencing': cr.sequencing, 'serial': cr.serial, 'paused': cr.paused, 'disabled': cr.disabled,
               'packages': sorted(cr.packages), 'podNonInterruptLabels': cr.pod_non_interrupt_labels,
               'runtimeRequired': cr.runtime_required, 'deploymentPolicy': cr.deployment_policy or None},
        'policy': policy.name if policy is not None else None,
        'budget_source': 'deploymentPolicy' if policy is not None else 'interruptionBudget',
        'compartments': compartments,
        'nodes': result_nodes,
        'unmatched': sorted(unmatched),
        'ignored': sorted(ignored),
        'summary': {
            'matched': len(selected),
            'complete': len(done),
            'to_update': len(selected) - len(done),
            'needs_drain': sum(1 for p in node_plans.values() if p['needs_drain']),
            'batches': sum(len(c['batches']) for c in compartments),
        },
    }
