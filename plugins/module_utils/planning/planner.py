# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""A whole rollout plan for one CR over a set of nodes: which nodes, which compartment,
which batches, and what each node still has to do. Pure: inputs are dicts already read.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import gc
import hashlib
import json

from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_model
from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_validation
from ansible_collections.nodewright.bridge.plugins.module_utils.model import label_selector
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import node_annotations
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import pod_layout
from ansible_collections.nodewright.bridge.plugins.module_utils.model import api_generation
from ansible_collections.nodewright.bridge.plugins.module_utils.model.api_generation import SKYHOOK
from ansible_collections.nodewright.bridge.plugins.module_utils.planning.node_plan import plan_node
from ansible_collections.nodewright.bridge.plugins.module_utils.planning.rollout_scheduler import RolloutScheduler


def normalise_nodes(raw, where='nodes'):
    """``[{name, labels, annotations, taints}]`` from that list, a Kubernetes NodeList or a list of Node objects."""
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
        taints = (item.get('spec') or {}).get('taints') if isinstance(item.get('spec'), dict) else item.get('taints')
        entry['taints'] = [t for t in taints or [] if isinstance(t, dict)]
        nodes.append(entry)
    if errors:
        raise cr_model.CRValidationError(where, errors)
    return nodes


def _named(docs, name):
    """The first document whose metadata.name is ``name``, or None."""
    for doc in docs:
        if (doc.get('metadata') or {}).get('name') == name:
            return doc
    return None


def resolve_policy(cr, policy_docs):
    """The DeploymentPolicy the CR names, from the given documents (error if missing)."""
    if not cr.deployment_policy:
        return None
    doc = _named(policy_docs, cr.deployment_policy)
    if doc is not None:
        return cr_validation.build_policy(doc)
    raise cr_model.CRValidationError('%s %r' % (cr.kind, cr.name), [
        'spec.deploymentPolicy: DeploymentPolicy %r was not given (pass it as policy, or put it in the same file)'
        % cr.deployment_policy])


def given_policy(cr, docs, where=None):
    """``(policy, document)`` of an explicit policy (the module's ``policy``, the inventory's policy file).

    ``docs``: its documents; several (the CR and its policy) are narrowed to the DeploymentPolicy.
    ``where`` names the file in errors (None: the ``policy`` option).
    """
    label = where or 'policy'
    if len(docs) > 1:
        docs = [d for d in docs if cr_model.is_policy_document(d)]
    if len(docs) != 1:
        raise cr_model.CRValidationError(label, ['must hold exactly one DeploymentPolicy, got %d documents' % len(docs)])
    try:
        policy = cr_validation.build_policy(docs[0], name=cr.deployment_policy or None)
    except cr_model.CRValidationError as exc:
        if where is None:
            raise
        raise cr_model.CRValidationError('%s (from %s)' % (exc.what, where), exc.errors)
    if cr.deployment_policy and policy.name not in (cr.deployment_policy, '<inline>'):
        raise cr_model.CRValidationError(label, ['is %r but the CR names spec.deploymentPolicy %r'
                                                 % (policy.name, cr.deployment_policy)])
    return policy, docs[0]


def choose_policy(cr, bundled=(), given=None, fetch=None, where=None):
    """``(policy, document, source)``: the one rule for which DeploymentPolicy a CR rolls out with.

    An explicit policy (``given``: its documents) wins; else the one the CR names, from the
    documents next to it (``bundled``, its file), else read from the cluster by ``fetch(name)``
    (None when there is no cluster to ask). A CR that names none has ``(None, None, None)``: its
    interruptionBudget applies. ``source`` is ``given``, ``bundled`` or ``cluster``.
    """
    if given is not None:
        return given_policy(cr, given, where) + ('given',)
    if not cr.deployment_policy:
        return None, None, None
    doc, source = _named(bundled, cr.deployment_policy), 'bundled'
    if doc is None and fetch is not None:
        doc, source = fetch(cr.deployment_policy), 'cluster'
    return resolve_policy(cr, [doc] if doc is not None else []), doc, source


def policy_documents_of(cr_doc, bundled=(), given=None):
    """The DeploymentPolicy documents a CR document rolls out with by choose_policy's rule, from what was given alone
    (no cluster is asked): ``given`` whole, else the bundled one its spec names. For a CR that does not validate (no CR
    object to ask), so that its policy's problems are reported with its own."""
    if given is not None:
        return list(given)
    spec = cr_doc.get('spec') if isinstance(cr_doc, dict) else None
    name = spec.get('deploymentPolicy') if isinstance(spec, dict) else None
    doc = _named([d for d in bundled if isinstance(d, dict)], name) if name else None
    return [doc] if doc is not None else []


def plan_rollout(cr, nodes, policy=None, order='name', cap_to_ceiling=True, config_changes=None, batch_states=None,
                 gen=SKYHOOK):
    """Plan ``cr`` over ``nodes`` (from normalise_nodes). Returns a dict ready for a module result.

    ``batch_states``: compartment -> the BatchProcessingState the rollout continues (status_rollup.resumed_batch_states).
    ``gen``: the api_generation.Generation whose keys the nodes carry (the plan's ``api_generation`` names it).
    """
    # Planning a large fleet allocates many small dicts and lists that all stay alive until
    # the result is returned; the cyclic collector would scan them again and again for
    # nothing (there are no cycles), which costs about a third of the time at 10,000 nodes.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _plan_rollout(cr, nodes, policy, order, cap_to_ceiling, config_changes, batch_states, gen)
    finally:
        if was_enabled:
            gc.enable()


def _cached_plan(cr, node, plans_by_state, plans_by_relevant_state, config_changes, gen):
    """The node's plan. Most of a fleet shares a handful of states (nothing done yet, all done, ...):
    each distinct annotation is planned once. Plans are read-only from here on. Raises
    CRValidationError (naming the node and its annotation) for a state that cannot be read."""
    state_key = node_annotations.node_state_key(cr.name, gen)
    raw_state = node['annotations'].get(state_key)
    plan = plans_by_state.get(raw_state)
    if plan is None:
        where = '%s annotation %s' % (node['name'], state_key)
        try:
            state = node_annotations.decode(raw_state, where)
        except node_annotations.NodeStateError as exc:
            raise cr_model.CRValidationError('node %s' % node['name'], [str(exc)])
        # A plan depends only on each entry's package, version, stage and state (not on
        # restarts, image or digest), so nodes that differ only there share one plan.
        relevant = frozenset((k, e['name'], e['version'], e['stage'], e['state']) for k, e in state.items())
        plan = plans_by_relevant_state.get(relevant)
        if plan is None:
            plan = plans_by_relevant_state[relevant] = plan_node(cr, state, config_changes=config_changes)
        plans_by_state[raw_state] = plan
    return plan


def _records(node, cr_name, status, gen):
    """The node's status for the CR is ``status`` in both its annotation and its label."""
    key = node_annotations.status_key(cr_name, gen)
    return node['annotations'].get(key) == status and node['labels'].get(key) == status


def _sort_nodes(cr, nodes, config_changes, gen):
    """``(selected, node_plans, unmatched, ignored, (to_block, their recorded status), malformed, untolerated,
    left_out)``: the nodes as the CR sees them."""
    selected, unmatched, ignored, to_block, malformed, untolerated = [], [], [], [], {}, {}
    recorded = {}  # to_block node -> its status for the CR as the node records it (what a held CR keeps)
    left_out = []  # selected, not complete, and out of the rollout: the CR is not complete everywhere
    node_plans, plans_by_state, plans_by_relevant_state = {}, {}, {}
    tolerations = pod_layout.picker_tolerations(cr, gen=gen)
    for node in nodes:
        if not label_selector.matches(cr.node_selector, node['labels']):
            unmatched.append(node['name'])
            continue
        ignored_node = node_annotations.is_ignored(node['labels'], gen)
        try:
            plan = _cached_plan(cr, node, plans_by_state, plans_by_relevant_state, config_changes, gen)
        except cr_model.CRValidationError as exc:
            if not ignored_node:
                # the operator's NodeStateMalformed: reported, never touched, and the CR holds (cr_decision)
                malformed[node['name']] = exc.errors[0]
            plan = None  # an unreadable state on an ignored node is not this run's to judge
        taints = node_annotations.untolerated(node.get('taints'), tolerations)
        if taints and not ignored_node:
            untolerated[node['name']] = taints
        if plan is None or not plan['complete']:
            if ignored_node or taints or plan is None:
                left_out.append(node['name'])
        if ignored_node or taints:
            # out of every rollout; recorded blocked while it has work left, as the operator's node picker does
            # (an ignored node, or one with a taint the CR does not tolerate: CheckTaintToleration)
            if not taints:
                ignored.append(node['name'])
            if plan is not None and not plan['complete'] and not _records(node, cr.name, 'blocked', gen):
                to_block.append(node['name'])
                recorded[node['name']] = node['annotations'].get(node_annotations.status_key(cr.name, gen)) or 'unknown'
        elif plan is not None:
            node_plans[node['name']] = plan
            selected.append(node)
    return selected, node_plans, unmatched, ignored, (to_block, recorded), malformed, untolerated, left_out


def _auto_taint(cr, nodes, gen):
    """The operator's getAutoTaintNodes for one CR: every node it selects that no CR has written yet and that lacks
    the runtime-required taint (the operator's default one), paused, disabled or ignored alike."""
    if not (cr.runtime_required and cr.auto_taint_new_nodes):
        return []
    taint = node_annotations.parse_taint(gen.runtime_required_taint)
    selected = [n for n in nodes if label_selector.matches(cr.node_selector, n['labels'])]
    return sorted(n['name'] for n in selected
                  if node_annotations.is_new_node(n['annotations'], gen) and not node_annotations.has_taint(n.get('taints'), taint))


def _plan_rollout(cr, nodes, policy, order, cap_to_ceiling, config_changes, batch_states, gen):
    selected, node_plans, unmatched, ignored, (to_block, to_block_status), malformed, untolerated, left_out = _sort_nodes(
        cr, nodes, config_changes, gen)
    done = [n for n, p in node_plans.items() if p['complete']]
    pairs = [(n['name'], n['labels']) for n in selected]
    source = {'policy': policy} if policy is not None else {'legacy_cr': cr}
    scheduler = RolloutScheduler.build(pairs, order=order, done=done, cap_to_ceiling=cap_to_ceiling,
                                       batch_states=batch_states, cr_name=cr.name, **source)
    compartments = scheduler.plan()
    return {
        'cr': _cr_summary(cr),
        'policy': policy.name if policy is not None else None,
        'budget_source': 'deploymentPolicy' if policy is not None else 'interruptionBudget',
        'compartments': compartments,
        'nodes': _node_results(cr, selected, node_plans, scheduler, gen),
        'unmatched': sorted(unmatched),
        'ignored': sorted(ignored),
        'to_block': sorted(to_block),
        # to_block node -> its status as recorded now: a CR held by a sequencing-all gate picks no node, so it
        # records none blocked (the operator's picker never reaches it); IntrospectNode makes unknown ones waiting
        'to_block_status': to_block_status,
        # node -> why its state annotation cannot be read (the CR's NodeStateMalformed condition)
        'malformed': malformed,
        # node -> the taints the CR's pods do not tolerate (the operator's TaintNotTolerable): out of the rollout
        'untolerated': untolerated,
        # the selected nodes left out of the rollout (ignored, untolerated, unreadable) that are not complete: while
        # there is one the CR is not complete everywhere (a sequencing-all CR holds the later ones)
        'left_out': sorted(left_out),
        # the new nodes the runtime-required taint goes on first (runtimeRequired and autoTaintNewNodes)
        'auto_taint': _auto_taint(cr, nodes, gen),
        'summary': {
            'matched': len(selected),
            'complete': len(done),
            'to_update': len(selected) - len(done),
            'needs_drain': sum(1 for p in node_plans.values() if p['needs_drain']),
            'batches': sum(len(c['batches']) for c in compartments),
        },
    }


def _cr_summary(cr):
    """The plan's ``cr``: what the modules and playbooks read of the CR planned with."""
    return {'name': cr.name, 'kind': cr.kind, 'apiVersion': cr.api_version, 'priority': cr.priority,
            'sequencing': cr.sequencing, 'serial': cr.serial, 'paused': cr.paused, 'disabled': cr.disabled,
            'deleting': cr.deleting, 'packages': sorted(cr.packages), 'podNonInterruptLabels': cr.pod_non_interrupt_labels,
            'runtimeRequired': cr.runtime_required, 'deploymentPolicy': cr.deployment_policy or None,
            # a NodeWright's drain is the v0.18+ operator's (DecidePod): its drainConfig, defaults when unset
            'drainConfig': cr.drain_config if cr_model.is_nodewright_group({'apiVersion': cr.api_version}) else None}


def _node_results(cr, selected, node_plans, scheduler, gen):
    """The plan's ``nodes``: each selected node's plan, compartment and what its annotations record."""
    result_nodes = {}
    complete_record = node_annotations.status_patch(cr.name, 'complete', gen)['metadata']
    status_key, version_key = node_annotations.status_key(cr.name, gen), node_annotations.version_key(cr.name, gen)
    for node in selected:
        plan = node_plans[node['name']]
        status = node['annotations'].get(status_key) or 'unknown'
        # the operator's "complete" record (status annotation and label, version) is on the node already
        recorded = all((all(node['annotations'].get(k) == v for k, v in complete_record.get('annotations', {}).items()),
                        all(node['labels'].get(k) == v for k, v in complete_record.get('labels', {}).items()),
                        node['annotations'].get(version_key) == gen.operator_version))
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
            # recorded complete (annotation or label) while its state is not (kubectl skyhook node reset,
            # package rerun, a new package): the operator's reconciles record it unknown, then waiting (IntrospectNode)
            'stale_complete': not plan['complete'] and 'complete' in (
                node['annotations'].get(status_key), node['labels'].get(status_key)),
            'cordoned_by': node_annotations.cordon_owners(node['annotations'], gen),
            # the node's status as the CR's status last recorded it (None: not recorded)
            'cr_status': cr.node_statuses.get(node['name']),
        }
    return result_nodes


# --------------------------------------------------------------------------- decisions
#
# What a plan means for a run, as the operator's rules say (docs/semantics.md):
#
# * a paused CR starts no batch, a disabled CR is left alone;
# * a CR's ``sequencing`` says how it gates the CRs after it (docs/ordering_of_skyhooks.md: "A
#   skyhook's sequencing field determines how it gates the next priority"; IsNodeReadyForSkyhook,
#   isBlockedByGlobalPredecessor). A disabled CR gates nothing (the operator skips it);
# * after a ``sequencing: node`` CR (the default), a later CR starts on a node once the earlier
#   one is complete there. A node the earlier CR still has to finish in this run waits for it
#   (the strategy leaves it out if it failed there); a node it will not finish in this run
#   (paused, itself waiting) is blocked;
# * after a ``sequencing: all`` CR, a later CR starts only once that CR is complete on every
#   node. If it will not finish everywhere in this run, the later CR waits for a later run
#   (``waiting_for``: its status says waiting); otherwise the later CR's phase runs after the
#   gate's, and only if the gate succeeded on every node (``after_all``);
# * runtimeRequired: a node's runtime-required taint is lifted once every runtimeRequired CR
#   that selects it is complete there.
#
# The playbooks only read these decisions: rollout_plan's ``decision`` (one CR) and the
# rollout_phases filter (several CRs in one run, the ``budgeted`` strategy's phases).

# the CR's own annotation is named (skyhook.nvidia.com/pause on a Skyhook, nodewright.nvidia.com/pause on a NodeWright)
PAUSED_AS = 'paused (%s=true), no batch starts'
PAUSED = PAUSED_AS % SKYHOOK.pause_annotation
MALFORMED = ('holds: the node state of %s cannot be read (NodeStateMalformed); nothing starts until it is repaired '
             'or the node reset (kubectl skyhook node reset)')
DISABLED_AS = 'disabled (%s=true), left alone'
DISABLED = DISABLED_AS % SKYHOOK.disable_annotation
BLOCKED = 'nodes waiting for an earlier CR (sequencing node): %s'
WAITS_FOR_ALL = 'waits until %s (sequencing all) is complete on every node'


# The node statuses a paused or disabled CR gives its nodes (the operator's IntrospectNode).
HELD_STATUSES = ('paused', 'disabled')
# The statuses of a node not complete that the operator turns into waiting (IntrospectNode, with compartments:
# a running CR always has at least its default one).
WAITS_FROM = ('unknown',) + HELD_STATUSES


def skip_reason(cr):
    """Why a CR (a plan's ``cr``) starts nothing at all: disabled or paused; None if it may run."""
    if not (cr.get('disabled') or cr.get('paused')):
        return None
    gen = api_generation.by_api_version(cr['apiVersion']) if cr.get('apiVersion') else SKYHOOK
    if cr.get('disabled'):
        return DISABLED_AS % gen.disable_annotation
    return PAUSED_AS % gen.pause_annotation


def malformed_reason(plan):
    """Why a CR starts nothing while a node's state cannot be read (the operator's reconcile stops on it: a
    package may be mid-uninstall there); None when every node's state reads."""
    malformed = plan.get('malformed') or {}
    if not malformed:
        return None
    return MALFORMED % ', '.join(sorted(malformed))


def plan_warnings(plan):
    """The warnings a plan gives about its nodes: one per node whose state cannot be read, naming the field."""
    return ['%s %s: %s; the node is left alone and the CR holds (NodeStateMalformed)' % (
        plan['cr'].get('kind', 'CR'), plan['cr']['name'], why) for why in [v for k, v in sorted((plan.get('malformed') or {}).items())]]


def cr_warnings(cr):
    """The warnings a plan of ``cr`` (a CR object) gives: paused, disabled, a budget of 0 (one node per batch)."""
    warnings = []
    for key, value in sorted((cr.interruption_budget or {}).items()):
        if value == 0:
            # the CRD allows 0; the operator's batch has at least one node (createLegacyDefaultCompartment)
            warnings.append('%s %s: interruptionBudget {%s: 0} rolls one node per batch, as the operator does (a batch '
                            'has at least one node), not none; write {count: 1} to say so, or pause the CR to roll '
                            'nothing' % (cr.kind, cr.name, key))
    if cr.paused:
        warnings.append('%s %s is paused (%s=true): the operator would not start any batch'
                        % (cr.kind, cr.name, cr.api_gen.pause_annotation))
    if cr.disabled:
        warnings.append('%s %s is disabled (%s=true): the operator would not act on it'
                        % (cr.kind, cr.name, cr.api_gen.disable_annotation))
    return warnings


def run_order(plans):
    """The CR names of ``plans`` in the order a run takes them: priority, then name."""
    return [p['cr']['name'] for p in sorted(plans, key=lambda p: (p['cr'].get('priority') or 0, p['cr']['name']))]


def runtime_required(plans):
    """``{node: [CR names]}``: the runtimeRequired CRs that select each node, in plan order."""
    crs = {}
    for plan in plans:
        if plan['cr'].get('runtimeRequired'):
            for node in plan.get('nodes') or {}:
                crs.setdefault(node, []).append(plan['cr']['name'])
    return crs


def budget_text(plan):
    """``policy <name>`` or ``interruptionBudget {...}``: what limits a CR's batches, for messages."""
    if plan.get('policy'):
        return 'policy %s' % plan['policy']
    return 'interruptionBudget %s' % json.dumps(plan.get('interruption_budget'))


def cr_decision(plan, required=None):
    """What one CR does on its nodes before any other CR is considered.

    ``runs``: the nodes to update; ``complete``: the complete nodes whose record must be written
    (missing, or a runtime-required taint to check: ``required`` is ``runtime_required``'s map);
    ``release``: the complete nodes still holding the CR's cordon (a run stopped between the last
    stage and its uncordon); ``record``: ``[{node, status}]`` to write before the run, as the
    operator's reconcile would (``blocked``: an ignored node with work left; ``paused`` / ``disabled``:
    every node of a CR that is; ``waiting``: a node not complete whose status says nothing yet, or
    complete (its node state was reset), or paused or disabled once the CR runs again);
    ``skipped``: why nothing starts (paused, disabled).
    ``pending``: the nodes not complete, whether they run or not. ``rolling``: the nodes to run that
    the CR was in the middle of when the run was planned (their status on the node, or in the CR's
    status, which `kubectl skyhook reset` keeps: in_progress or erroring): an unowned cordon on them is
    the CR's, taken back and released (node_cordon take_over). Decided here, before the run writes any
    status, since the run's own status writes recompute the CR's view of a reset node.
    """
    cr, nodes = plan['cr'], plan.get('nodes') or {}
    required = runtime_required([plan]) if required is None else required
    complete = sorted(n for n, p in nodes.items() if p['complete'])
    pending = sorted(n for n, p in nodes.items() if not p['complete'])
    skipped = skip_reason(cr)
    malformed = malformed_reason(plan)
    if malformed and not skipped:
        # held whole, as the operator's reconcile errors out: no node starts, none is recorded
        return {'runs': [], 'complete': [], 'release': [], 'record': [], 'rolling': [], 'skipped': malformed,
                'pending': pending}
    if skipped:
        # IntrospectNode: every node of a paused or disabled CR says so (the CR's status wins, as in cr_status)
        held = 'paused' if cr.get('paused') else 'disabled'
        record = [{'node': n, 'status': held} for n in sorted(nodes) if nodes[n].get('status') != held]
        return {'runs': [], 'complete': [], 'release': [], 'record': record, 'rolling': [], 'skipped': skipped,
                'pending': pending}
    if cr.get('deleting'):
        # a CR being deleted only uninstalls (node_plan): its finalizer (cr_finalize) then cleans its nodes up and
        # uncordons them, so nothing is recorded complete, waiting or blocked, and no cordon is released here
        return {'runs': pending, 'complete': [], 'release': [], 'record': [], 'rolling': [], 'skipped': None,
                'pending': pending}
    to_block = plan.get('to_block') or []
    # IntrospectNode: a node not complete that says nothing (unknown), complete (its state was reset) or
    # paused / disabled (the CR runs again) waits for its batch; complete ones get their record
    waiting = [n for n in pending if n not in to_block and (nodes[n].get('stale_complete') or nodes[n].get('status') in WAITS_FROM)]
    record = [{'node': n, 'status': 'blocked'} for n in to_block] + [{'node': n, 'status': 'waiting'} for n in waiting]
    return {
        'runs': pending,
        'complete': [n for n in complete if not nodes[n].get('recorded') or required.get(n)],
        'release': [n for n in complete if cr['name'] in nodes[n].get('cordoned_by', [])],
        'record': sorted(record, key=lambda r: r['node']),
        'rolling': [n for n in pending if set(node_annotations.ROLLING_STATUSES).intersection(
            (nodes[n].get('status'), nodes[n].get('cr_status')))],
        'skipped': None,
        'pending': pending,
    }


def plan_decision(plan):
    """rollout_plan's ``decision``: ``cr_decision`` for the CR alone, and what the playbooks report.

    ``runtime_required_crs`` (the CR, if runtimeRequired), ``erroring``, ``not_done`` and ``needs_drain`` nodes,
    ``with_state`` (nodes with a status for the CR or holding its cordon: what reset works on),
    ``budget`` (``budget_text``) and ``line``, the one-line summary a run prints before it starts.
    """
    cr, nodes = plan['cr'], plan.get('nodes') or {}
    decision = cr_decision(plan)
    decision.pop('pending')
    stated = [n for n, p in nodes.items() if p.get('status', 'unknown') != 'unknown']
    decision.update(
        runtime_required_crs=[cr['name']] if cr.get('runtimeRequired') else [],
        erroring=[n for n, p in nodes.items() if p.get('status') == 'erroring'],
        not_done=[n for n, p in nodes.items() if not p['complete'] and p.get('status') != 'erroring'],
        needs_drain=[n for n, p in nodes.items() if p.get('needs_drain')],
        with_state=stated + [n for n, p in nodes.items() if cr['name'] in p.get('cordoned_by', []) and n not in stated],
        budget=budget_text(plan),
        line=summary_line(plan),
    )
    return decision


def summary_line(plan):
    """``<cr> (priority P, sequencing S): M nodes, U to update, D to drain; <budget> <paused/disabled>``."""
    cr, summary = plan['cr'], plan['summary']
    flags = ('(paused: skipped)' if cr.get('paused') else '') + ('(disabled: skipped)' if cr.get('disabled') else '')
    return '%s (priority %s, sequencing %s): %s nodes, %s to update, %s to drain; %s %s' % (
        cr['name'], cr.get('priority'), cr.get('sequencing'), summary['matched'], summary['to_update'],
        summary['needs_drain'], budget_text(plan), flags)


def cr_documents(plan):
    """The CR and its policy as documents a task can take (``rollout_plan``'s portable copies)."""
    docs = [plan['cr_document']]
    if plan.get('policy_document'):
        docs.append(plan['policy_document'])
    return docs


def planned_identity(plan):
    """``{'uid', 'generation'}`` of the CR a plan read from the cluster (node_update's ``cr_identity``), or None for
    a CR from a file (never stored: nothing to compare, cr_handoff.change)."""
    found = plan.get('cr_identity') or {}
    if not found.get('uid'):
        return None
    return {'uid': found['uid'], 'generation': found.get('generation')}


def rollout_phases(plans, with_documents=False):
    """``{'order', 'phases', 'crs': {name: decision}, 'runtime_required': {node: [CR names]}}``.

    ``plans``: rollout_plan results, in any order: the run takes them in ``run_order``. A
    decision is ``cr_decision``'s (``runs``, ``complete``, ``release``, ``skipped``) after the
    sequencing of the earlier CRs, with the ``blocked`` nodes (node -> the earlier CRs it waits
    for), ``waiting`` (the message that says why a CR or some of its nodes wait, or None) and,
    with ``with_documents``, the CR's ``documents`` (a CR from a file, which the cluster lacks); ``cr_identity``:
    the uid and generation planned with (``planned_identity``), which each node's update compares with the CR it reads.
    ``phases``: the ``budgeted`` strategy's ``nodewright_phases``, one per CR with nodes to run.
    """
    order = run_order(plans)
    by_name = dict((p['cr']['name'], p) for p in plans)
    required = runtime_required([by_name[n] for n in order])
    phases, crs = [], {}
    unfinished = {}  # CR name -> nodes it selects that will not be complete after this run
    running = {}  # CR name -> nodes it rolls out to in this run
    gates_all = set()  # the earlier CRs with sequencing all
    for name in order:
        plan = by_name[name]
        decision = cr_decision(plan, required)
        after_all = _sequence(decision, running, unfinished, gates_all, plan.get('to_block_status') or {})
        pending = decision.pop('pending')
        decision['waiting'] = _waiting(decision)
        decision['documents'] = cr_documents(plan) if with_documents else None
        decision['cr_identity'] = planned_identity(plan)
        crs[name] = decision
        if decision['runs']:
            phases.append(_phase(plan, decision['runs'], after_all))
        if plan['cr'].get('disabled'):
            continue  # gates nothing: the operator skips a disabled CR (IsNodeReadyForSkyhook)
        running[name] = list(decision['runs'])
        # the operator's IsComplete counts every node the CR selects, the ones its picker leaves out too
        unfinished[name] = [n for n in pending if n not in decision['runs']] + list(plan.get('left_out') or [])
        if plan['cr'].get('sequencing') == 'all':
            gates_all.add(name)
    return {'order': order, 'phases': phases, 'crs': crs, 'runtime_required': required}


def _sequence(decision, running, unfinished, gates_all, to_block_status):
    """Apply the earlier CRs' sequencing to ``decision`` (in place); the phases to run after (the gates, sequencing all).

    ``to_block_status``: the plan's nodes that the CR would record blocked, with their status as recorded now.
    """
    decision['blocked'] = {}
    decision['waiting_for'] = []
    if decision['skipped']:
        return []
    waiting = sorted(c for c in gates_all if unfinished[c])
    if waiting:
        decision.update(runs=[], skipped=WAITS_FOR_ALL % ', '.join(waiting), waiting_for=waiting,
                        record=_held_records(decision['record'], to_block_status))
        return []
    runs = []
    for node in decision['runs']:
        blockers = sorted(c for c in unfinished if c not in gates_all and node in unfinished[c])
        if blockers:
            decision['blocked'][node] = blockers
        else:
            runs.append(node)
    decision['runs'] = runs
    return [c for c in running if c in gates_all and running[c]]  # in run order


def _held_records(record, to_block_status):
    """The records of a CR that a sequencing-all gate holds: the operator processes no node of it (no node is
    ready: hasReadyNodesForSkyhook), so its picker marks none blocked; IntrospectNode turns the ones that say
    nothing yet (unknown, paused, disabled) into waiting and keeps the rest."""
    kept = [r for r in record if not (r['status'] == 'blocked' and r['node'] in to_block_status)]
    kept += [{'node': n, 'status': 'waiting'} for n, status in to_block_status.items() if status in WAITS_FROM]
    return sorted(kept, key=lambda r: r['node'])


def _waiting(decision):
    if decision['skipped']:
        return decision['skipped']
    if decision['blocked']:
        return BLOCKED % ', '.join(sorted(decision['blocked']))
    return None


def _spec_digest(plan):
    docs = [(plan.get('cr_document') or {}).get('spec'), (plan.get('policy_document') or {}).get('spec')]
    return hashlib.sha256(json.dumps(docs, sort_keys=True, default=str).encode('utf-8')).hexdigest()[:16]


def _phase(plan, runs, after_all):
    """The strategy's phase for a CR: its policy (hosts pinned to the planned compartments) or budget."""
    # what the CR rolls out: runs of one CR share a budget only while they roll out the same spec
    phase = {'name': plan['cr']['name'], 'budget_key': _spec_digest(plan), 'selector': plan['cr'].get('nodeSelectors')}
    if (plan.get('sources') or {}).get('cr') == 'cluster':
        phase['cr_status'] = True  # the strategy keeps its batch states in the CR's status
    if plan.get('batch_state'):
        phase['batch_state'] = plan['batch_state']
    if plan.get('policy_document'):
        phase['policy'] = plan['policy_document']
        phase['hosts'] = dict((n, plan['nodes'][n].get('compartment')) for n in runs)
    else:
        phase['interruption_budget'] = plan.get('interruption_budget') or {'percent': 100}
        phase['hosts'] = list(runs)
    if after_all:
        phase['after_all'] = list(after_all)
    if plan['cr'].get('podNonInterruptLabels'):
        # the nodes whose drain would wait for a pod of this selector: picked after the others (docs/semantics.md 34)
        phase['protected'] = {'selector': plan['cr']['podNonInterruptLabels'],
                              'nodes': sorted(n for n in runs if (plan['nodes'].get(n) or {}).get('needs_drain'))}
    return phase
