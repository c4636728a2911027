# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""A CR's ``status`` as the NodeWright operator writes it, derived from the nodes' annotations.

The nodes' annotations are the source of truth (``nodeState_<cr>``, ``status_<cr>``); the CR's
status is a report of them, so that ``kubectl get skyhooks``, ``kubectl wait --for=condition=Ready``,
the operator's kubectl plugin, a GitOps health check and the operator's e2e asserts read the same
as after an operator run. Any run that computes it from the same nodes writes the same status,
so concurrent runs under the shared budget agree.

Checked against NVIDIA/nodewright at ``71ca22b8`` (operator/api/v1alpha1/skyhook_types.go:
SkyhookStatus; internal/controller/cluster_state_v2.go: ReportState, CollectNodeStatus,
IntrospectSkyhook, UpdateNodeStateMalformedCondition, buildCompartmentStatus,
resetSkyhookBatchState; internal/wrapper/skyhook_conditions.go: the Ready message;
internal/wrapper/skyhook.go: SetStatus, RemoveNodePriority; NodePicker.upsertPick; skyhook_controller.go:
TrackReboots, ApplyPackage; UpdateBlockedCondition). Where the collection's status differs (the batch counters of
``compartmentStatuses[*].batchState``, the moment of the Transition and ApplyPackage messages) is listed in
docs/semantics.md.

``wanted_status`` computes the fields; ``status_patch`` the JSON merge patch from the status as read
(None when nothing changes). No I/O.

Every function that names a key or a prefixed condition takes ``gen`` (api_generation.SKYHOOK unless the caller
says otherwise): the node keys it reads (node_state with the same ``gen``), the ignore label, the prefixed twins,
the legacy Transition and the CR's version annotation are the generation's. What the v0.18+ operator writes, read
in NVIDIA/nodewright at v0.20 (operator/internal/wrapper/skyhook_conditions.go @4fa7fe39, which imports
operator/api/nodewright/v1alpha1, so ``METADATA_PREFIX`` is ``nodewright.nvidia.com``):

* the twins stay: ``AddSkyhookConditionWithLegacy`` writes each condition again under
  ``LegacySkyhookConditionType`` (``<prefix>/<type>``); its callers are Ready (UpdateCondition,
  controller/cluster_state_v2.go @01cc2f2d), TaintNotTolerable and NodesIgnored (the node picker, same file),
  DeploymentPolicyNotFound (initializeCompartmentsFromPolicy, same file) and ApplyPackage
  (controller/skyhook_controller.go @4fa7fe39 ApplyPackage). So ``nodewright.nvidia.com/Ready`` and the others.
* the legacy Transition stays: ``LegacySkyhookConditionTransition = METADATA_PREFIX + "/Transition"``, written by
  UpdateCondition after Ready with the status as its reason and restamped on a new reason or message
  (AddSkyhookConditionRefreshingTransitionOnReasonOrMessage): ``nodewright.nvidia.com/Transition``.
* Blocked, UninstallInProgress, UninstallFailed, NodeStateMalformed (cluster_state_v2.go @01cc2f2d), DeletionBlocked
  (HandleFinalizer) and the new DrainBlocked go through ``AddSkyhookCondition`` only: no twin.
* DrainBlocked (v0.20, cluster_state_v2.go @01cc2f2d UpdateDrainBlockedCondition) is rebuilt on every pass from the
  nodes' ``drainBlocked_<cr>`` annotations (node_drain writes them as the operator does: drain_config.py), so it is
  derived here the same way: present while a node that is not complete records a blocker (an unreadable record is
  skipped; the operator clears the record of a node with no interrupt drain waiting, this collection skips complete
  nodes), with drain_config.condition's reason and message over the CR's nodes; removed otherwise.

So NODEWRIGHT has the same set as SKYHOOK under its own prefix, plus DrainBlocked; SKYHOOK is exactly the v0.15 set.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.nodewright.bridge.plugins.module_utils.contract import drain_config
from ansible_collections.nodewright.bridge.plugins.module_utils.model import label_selector
from ansible_collections.nodewright.bridge.plugins.module_utils.planning import node_plan
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import node_annotations
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import pod_layout
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import protected_wait
from ansible_collections.nodewright.bridge.plugins.module_utils.model.api_generation import SKYHOOK
from ansible_collections.nodewright.bridge.plugins.module_utils.planning.rollout_scheduler import RolloutScheduler, batch_state_errors
from ansible_collections.nodewright.bridge.plugins.module_utils.model.stages import UNINSTALL_STAGES

# The status fields this collection keeps (the merge patch touches nothing else).
OWNED_FIELDS = ('status', 'nodeState', 'nodeStatus', 'completeNodes', 'nodesInProgress', 'packageList',
                'observedGeneration', 'conditions', 'compartmentStatuses', 'nodePriority', 'nodeOrderOffset',
                'nodeBootIds')

READY = 'Ready'
APPLY_PACKAGE = 'ApplyPackage'


def twin(ctype, gen=SKYHOOK):
    """The prefixed twin the operator writes beside ``ctype`` (LegacySkyhookConditionType): ``<prefix>/<type>``."""
    return '%s/%s' % (gen.prefix, ctype)


def transition_type(gen=SKYHOOK):
    """The legacy condition that carries the CR's status as its reason (UpdateCondition): ``<prefix>/Transition``."""
    return twin('Transition', gen)


def owned_conditions(gen=SKYHOOK):
    """The conditions this collection sets or removes under ``gen`` (v0.20's DrainBlocked where the generation has
    it); the operator's others (DeletionBlocked: cr_finalize's) stay as they are."""
    owned = (READY, twin(READY, gen), 'NodesIgnored', twin('NodesIgnored', gen),
             'TaintNotTolerable', twin('TaintNotTolerable', gen), 'NodeStateMalformed',
             'DeploymentPolicyNotFound', twin('DeploymentPolicyNotFound', gen), 'UninstallInProgress',
             'UninstallFailed', 'Blocked', transition_type(gen), APPLY_PACKAGE, twin(APPLY_PACKAGE, gen))
    return owned + ((gen.drain_blocked_condition,) if gen.drain_blocked_condition else ())


# The v0.15 names, for callers that name them; the functions derive them from ``gen``.
TRANSITION = transition_type(SKYHOOK)
OWNED_CONDITIONS = owned_conditions(SKYHOOK)

# Ready's reason per CR status (skyhookNodes.UpdateCondition).
READY_REASONS = {'complete': 'NodesConverged', 'in_progress': 'Progressing', 'blocked': 'Blocked',
                 'erroring': 'Erroring', 'paused': 'Paused', 'waiting': 'Waiting', 'disabled': 'Disabled'}
# The Ready message's groups after "complete", in the operator's order, and their labels.
MESSAGE_GROUPS = (('in_progress', 'in progress'), ('blocked', 'blocked'), ('erroring', 'erroring'),
                  ('waiting', 'waiting'), ('paused', 'paused'), ('disabled', 'disabled'), ('unknown', 'unknown'))
MESSAGE_NAMES_MAX = 10


class StatusNode(object):
    """One node the CR selects, as the status sees it: its name, labels, status annotation, decoded state."""

    def __init__(self, name, labels, annotations, cr, plans=None, gen=SKYHOOK):
        self.name = name
        self.labels = labels
        self.taints = []  # the taints the CR's pods do not tolerate (status_nodes sets them)
        key = node_annotations.node_state_key(cr.name, gen)
        # the status annotation; missing or unknown values count as unknown (Status())
        self.status = annotations.get(node_annotations.status_key(cr.name, gen))
        if self.status not in node_annotations.STATUSES:
            self.status = 'unknown'
        self.malformed = False
        self.state = None
        try:
            self.state = node_annotations.decode(annotations.get(key), where='node %s annotation %s' % (name, key))
        except node_annotations.NodeStateError:
            self.malformed = True
        raw = annotations.get(key)
        # the blockers the node records for the CR's drain (drainBlocked_, v0.18+ keys); None: unreadable
        self.drain_blocked = []
        blocked_key = gen.drain_blocked_key(cr.name)
        if blocked_key is not None and annotations.get(blocked_key) is not None:
            try:
                self.drain_blocked = drain_config.decode_blocked(annotations[blocked_key])
            except ValueError:
                self.drain_blocked = None
        # the node's wait for its protected pods (protected_wait's record), or None
        self.protected_wait = protected_wait.read(annotations, cr.name)
        if self.malformed:
            self.complete = False
        elif plans is not None and raw in plans:
            self.complete = plans[raw]  # most of a fleet shares a handful of states: planned once each
        else:
            self.complete = node_plan.plan_node(cr, self.state or {})['complete']
            if plans is not None:
                plans[raw] = self.complete


def status_nodes(cr, nodes, gen=SKYHOOK):
    """The nodes ``cr`` selects (``nodes``: planner.normalise_nodes' shape), sorted by name, as StatusNodes."""
    chosen = [n for n in nodes if label_selector.matches(cr.node_selector, n['labels'])]
    plans = {}
    tolerations = pod_layout.picker_tolerations(cr, gen=gen)
    result = []
    for n in sorted(chosen, key=lambda n: n['name']):
        status_node = StatusNode(n['name'], n['labels'], n['annotations'], cr, plans, gen)
        status_node.taints = node_annotations.untolerated(n.get('taints'), tolerations)
        result.append(status_node)
    return result


def aggregate(cr, nodes, policy_missing=False, waiting_for=()):
    """``.status.status`` (CollectNodeStatus, then IntrospectSkyhook's overrides).

    ``waiting_for``: the earlier CRs with ``sequencing: all`` not complete everywhere; they hold this
    one as a whole (isBlockedByGlobalPredecessor), whatever its nodes last recorded.
    """
    if cr.paused:
        return 'paused'  # even when complete (UpdateSkyhookPauseStatus)
    remaining = [n for n in nodes if not n.complete]
    if not remaining:
        return 'blocked' if policy_missing else 'complete'
    if cr.disabled:
        return 'disabled'
    if policy_missing:
        return 'blocked'
    if waiting_for:
        return 'waiting'
    statuses = [n.status for n in remaining]
    if 'in_progress' in statuses:
        return 'in_progress'
    for value in ('erroring', 'blocked', 'unknown', 'waiting'):
        if all(s == value for s in statuses):
            return value
    return 'unknown'


def _names(names):
    if not names:
        return ''
    if len(names) > MESSAGE_NAMES_MAX:
        return ' (list truncated; see controller logs)'
    return ' (%s)' % ', '.join(names)


def ready_message(node_statuses, total):
    """The Ready condition's message: ``"1/3 nodes complete (n1), 1 in progress (n2), 1 waiting (n3)"``."""
    groups = {}
    for name in sorted(node_statuses):
        groups.setdefault(node_statuses[name], []).append(name)
    complete = groups.get('complete', [])
    parts = ['%d/%d nodes complete%s' % (len(complete), total, _names(complete))]
    for status, label in MESSAGE_GROUPS:
        if groups.get(status):
            parts.append('%d %s%s' % (len(groups[status]), label, _names(groups[status])))
    return ', '.join(parts)


def _condition(ctype, status, reason, message, generation):
    return {'type': ctype, 'status': status, 'reason': reason, 'message': message, 'observedGeneration': generation}


def _malformed_message(names):
    shown = [n if len(n) <= 10 else n[:10] + '...' for n in sorted(names)[:5]]
    text = 'nodeState annotation cannot be parsed on %d node(s): %s' % (len(names), ', '.join(shown))
    if len(names) > 5:
        text += ' and %d more' % (len(names) - 5)
    return text


def _skipped_message(names, none, what):
    """The node picker's message of a node-list condition (NodesIgnored, TaintNotTolerable): ``none`` when no node
    is listed, the names up to MESSAGE_NAMES_MAX, else the count."""
    if not names:
        return none
    if len(names) > MESSAGE_NAMES_MAX:
        return '%d nodes %s. Skipping.' % (len(names), what % 'have')
    return 'Node [%s] %s. Skipping.' % (', '.join(sorted(names)), what % 'has')


def _untolerated_message(names):
    return _skipped_message(names, 'All nodes have tolerable taints.', '%s taints that are not tolerable')


def _ignored_message(names):
    return _skipped_message(names, 'No nodes have ignore label set.', '%s ignore label set')


def wanted_conditions(cr, nodes, status, node_statuses, generation, policy_missing, current=(), gen=SKYHOOK):
    """The conditions this collection owns, in the operator's order (each with legacy twin where it writes one).

    ``generation``: the CR's metadata.generation (observedGeneration); ``gen``: the API generation (the twins'
    prefix, the ignore label). ``current``: the CR's conditions as read (ApplyPackage keeps its message while that
    package still runs).
    """
    every = all(n.complete for n in nodes)
    ready = _condition(READY, 'True' if every else 'False', READY_REASONS.get(status, 'Unknown'),
                       ready_message(node_statuses, len(nodes)), generation)
    # the legacy Transition: Ready with the status as its reason. The operator's message says "Transitioned [a] -> [b]"
    # for the one reconcile that changes the status and the Ready message from the next one (at once, as its own
    # status write triggers it); this collection writes that settled message
    wanted = [ready, dict(ready, type=twin(READY, gen)),
              dict(ready, type=transition_type(gen), reason=status or 'unknown')]
    untolerated = [n.name for n in nodes if n.taints]
    taints = _condition('TaintNotTolerable', 'True' if untolerated else 'False', 'TaintNotTolerable',
                        _untolerated_message(untolerated), generation)
    wanted += [taints, dict(taints, type=twin('TaintNotTolerable', gen))]
    ignored = [n.name for n in nodes if node_annotations.is_ignored(n.labels, gen)]
    flag = _condition('NodesIgnored', 'True' if ignored else 'False', 'NodesIgnored', _ignored_message(ignored), generation)
    wanted += [flag, dict(flag, type=twin('NodesIgnored', gen))]
    malformed = [n.name for n in nodes if n.malformed]
    if malformed:
        wanted.append(_condition('NodeStateMalformed', 'True', 'ParseError', _malformed_message(malformed), generation))
    if policy_missing:
        missing = _condition('DeploymentPolicyNotFound', 'True', 'DeploymentPolicyNotFound',
                             'DeploymentPolicy "%s" not found' % cr.deployment_policy, generation)
        wanted += [missing, dict(missing, type=twin('DeploymentPolicyNotFound', gen))]
    wanted += uninstall_conditions(cr, nodes, generation) + blocked_conditions(cr, nodes, generation)
    return wanted + drain_blocked_conditions(nodes, generation, gen) + apply_package_conditions(nodes, current, generation, gen)


def drain_blocked_conditions(nodes, generation, gen=SKYHOOK):
    """DrainBlocked while a node that is not complete records drain blockers (UpdateDrainBlockedCondition), under a
    generation that has it."""
    if not gen.drain_blocked_condition:
        return []
    blocks = dict((n.name, n.drain_blocked) for n in nodes if n.drain_blocked and not n.complete)
    cond = drain_config.condition(blocks, len(nodes), generation, gen.drain_blocked_condition)
    return [cond] if cond else []


def apply_package_conditions(nodes, current, generation, gen=SKYHOOK):
    """ApplyPackage and its legacy twin: "Applying package [name:version] to node [node]", True, never removed.

    The operator sets it when it creates a package pod, so it names the last pod started. Derived from the
    nodes: the condition as read while the package it names is still running there, else the first running
    package (by node, then package); with none running, the condition as read (or none, before any pod).
    """
    running = ['Applying package [%s:%s] to node [%s]' % (entry.get('name'), entry.get('version'), n.name)
               for n in nodes if n.state for unused, entry in sorted(n.state.items())
               if entry.get('state') == 'in_progress']
    by_type = dict((c.get('type'), c) for c in current or () if isinstance(c, dict))
    old = by_type.get(APPLY_PACKAGE)
    if old and (not running or old.get('message') in running):
        # as written when that pod started (its generation then)
        return [old, by_type.get(twin(APPLY_PACKAGE, gen)) or dict(old, type=twin(APPLY_PACKAGE, gen))]
    if not running:
        return []
    cond = _condition(APPLY_PACKAGE, 'True', APPLY_PACKAGE, running[0], generation)
    return [cond, dict(cond, type=twin(APPLY_PACKAGE, gen))]


def blocked_conditions(cr, nodes, generation):
    """Blocked (DependencyUninstalled) while a package that is not complete everywhere depends on one that is being
    uninstalled on a node, or that the spec uninstalls and no node has any more (UpdateBlockedCondition)."""
    states = [n.state or {} for n in nodes if not n.malformed]
    readable = len(states) == len(nodes) and states
    in_cycle, done = set(), set()
    for pkg in cr.packages.values():
        if any((s.get(pkg.unique_name) or {}).get('stage') in UNINSTALL_STAGES for s in states):
            in_cycle.add(pkg.name)
        elif pkg.is_uninstalling and readable and not any(pkg.unique_name in s for s in states):
            done.add(pkg.name)
    messages = []
    for name, pkg in cr.packages.items():
        if pkg.is_uninstalling or (nodes and all(node_plan.package_complete(cr, pkg, n.state) for n in nodes)):
            continue
        for dep in pkg.depends_on:
            if dep in in_cycle:
                messages.append('package %s is blocked: dependency %s is being uninstalled' % (name, dep))
            elif dep in done:
                messages.append('package %s is blocked: dependency %s has been uninstalled' % (name, dep))
    if messages:
        return [_condition('Blocked', 'True', 'DependencyUninstalled', '; '.join(sorted(messages)), generation)]
    # the operator's barrier report (its later releases): a node not complete that waits for its protected pods;
    # another Blocked reason (above) comes first, as the operator defers this one while another is active
    waiting = [n.name for n in nodes if n.protected_wait is not None and not n.complete]
    if waiting:
        return [_condition('Blocked', 'True', protected_wait.REASON, protected_wait.condition_message(waiting),
                           generation)]
    return []


def uninstall_conditions(cr, nodes, generation):
    """UninstallInProgress and UninstallFailed, present only while true (UpdateUninstallConditions).

    The node states decide, not the spec: a package of the CR whose entry is at an uninstall stage is in an
    uninstall cycle until it leaves it (a cancel cannot stop an uninstall interrupt that has fired); erroring
    there is a failing uninstall pod. Unreadable states are left to NodeStateMalformed.
    """
    names = set(p.unique_name for p in cr.packages.values())
    cycles = [entry for n in nodes if n.state for key, entry in n.state.items()
              if key in names and entry.get('stage') in UNINSTALL_STAGES]
    wanted = []
    if cycles:
        wanted.append(_condition('UninstallInProgress', 'True', 'UninstallInProgress',
                                 'One or more packages are being uninstalled', generation))
    if any(entry.get('state') == 'erroring' for entry in cycles):
        wanted.append(_condition('UninstallFailed', 'True', 'UninstallPodFailing', 'One or more uninstall pods are failing',
                                 generation))
    return wanted


def merge_conditions(current, wanted, now, gen=SKYHOOK):
    """``current`` with the owned conditions (``owned_conditions(gen)``) replaced by ``wanted``
    (wcond.go:AddSkyhookCondition's rule: ``lastTransitionTime`` kept while the type and status stay the same);
    the others kept in place."""
    by_type = dict((c.get('type'), c) for c in current or [] if isinstance(c, dict))
    owned = owned_conditions(gen)
    out = []
    wanted_by_type = dict((c['type'], c) for c in wanted)
    for cond in current or []:
        if not isinstance(cond, dict):
            continue
        ctype = cond.get('type')
        if ctype in wanted_by_type:
            out.append(_stamped(wanted_by_type.pop(ctype), cond, now, gen))
        elif ctype not in owned:
            out.append(cond)
    for cond in wanted:
        if cond['type'] in wanted_by_type:
            out.append(_stamped(cond, by_type.get(cond['type']), now, gen))
    return out


def _stamped(cond, old, now, gen=SKYHOOK):
    cond = dict(cond)
    same = old is not None and old.get('status') == cond['status'] and old.get('lastTransitionTime')
    if cond['type'] == transition_type(gen):
        # AddSkyhookConditionRefreshingTransitionOnReasonOrMessage: a new reason or message is a transition too
        same = same and (old.get('reason'), old.get('message')) == (cond['reason'], cond['message'])
    cond['lastTransitionTime'] = old['lastTransitionTime'] if same else now
    return cond


def reset_on_completion(doc, policy_doc):
    """ShouldResetBatchStateOnCompletion: the CR's option, else the policy's field, else false."""
    options = (doc.get('spec') or {}).get('deploymentPolicyOptions')
    if isinstance(options, dict):
        return options.get('resetBatchStateOnCompletion', True) is not False
    if isinstance(policy_doc, dict):
        return (policy_doc.get('spec') or {}).get('resetBatchStateOnCompletion', True) is not False
    return False


def compartment_statuses(cr, nodes, policy, previous, complete, reset, batch_states=None):
    """``compartmentStatuses``: per compartment its counts (always written, zeros included) and batchState.

    batchState: the one a running rollout gives (``batch_states``: compartment -> BatchProcessingState,
    the budgeted strategy's after each scored batch), else the one the status already has (the
    operator's, an earlier run's, a CLI reset's). While the CR is complete and ``reset`` says so it is
    ``{currentBatch: 1}``: the operator resets it on the transition into complete, after the last batch
    was counted, and no batch runs until the next rollout. Without a policy: the legacy
    ``__default__`` compartment of the interruptionBudget (a fixed strategy: it has a batchState too).
    """
    pairs = [(n.name, n.labels) for n in nodes]
    done = [n.name for n in nodes if n.complete]
    if policy is not None:
        scheduler = RolloutScheduler.build(pairs, policy=policy, done=done)
    else:
        scheduler = RolloutScheduler.build(pairs, legacy_cr=cr, done=done)
    by_name = dict((n.name, n) for n in nodes)
    out = {}
    for comp in scheduler.compartments:
        members = [by_name[name] for name in comp.nodes if name in by_name]
        matched, completed = len(members), sum(1 for n in members if n.complete)
        # the operator's CalculateCeiling: a count budget's count even over no node (docs/semantics 3)
        count = (comp.budget or {}).get('count')
        entry = {'matched': matched, 'ceiling': count if count is not None else comp.ceiling,
                 'inProgress': sum(1 for n in members if n.status == 'in_progress'),
                 'completed': completed, 'progressPercent': completed * 100 // matched if matched else 0}
        if comp.strategy is not None:
            batch = (batch_states or {}).get(comp.name)
            if batch is None:
                batch = ((previous or {}).get(comp.name) or {}).get('batchState')
            entry['batchState'] = {'currentBatch': 1} if (reset and complete) or not isinstance(batch, dict) else batch
        out[comp.name] = entry
    return out


def resumed_batch_states(cr, doc, nodes, policy_doc=None, gen=SKYHOOK):
    """The batch states a new run of the CR continues: compartment -> BatchProcessingState of its status.

    As the operator loads them on each reconcile, except where it would reset them first: with
    ``resetBatchStateOnCompletion`` (reset_on_completion), a package version change on any node
    (the node's state names a package of the CR at another version) starts from batch 1.
    ``nodes``: the CR's nodes (planner.normalise_nodes' shape). Entries that are not a valid
    BatchProcessingState are left out (the run starts that compartment fresh). The node states are read under
    ``gen``'s key.
    """
    current = (doc.get('status') or {}).get('compartmentStatuses')
    if not isinstance(current, dict):
        return {}
    if reset_on_completion(doc, policy_doc) and version_changed(cr, nodes, gen):
        return {}
    out = {}
    for comp, entry in current.items():
        state = entry.get('batchState') if isinstance(entry, dict) else None
        if state and not batch_state_errors(state, comp):
            out[comp] = dict(state)
    return out


def version_changed(cr, nodes, gen=SKYHOOK):
    """A node's state has a package of the CR at a version other than the CR's (the operator's upgrade trigger).

    ``nodes``: planner.normalise_nodes' shape; each distinct state annotation is decoded once, an
    unreadable one is left to the plan (NodeStateMalformed).
    """
    wanted = dict((p.name, p.version) for p in cr.packages.values())
    key, seen = node_annotations.node_state_key(cr.name, gen), set()
    for node in nodes:
        raw = node['annotations'].get(key)
        if raw is None or raw in seen:
            continue
        seen.add(raw)
        try:
            state = node_annotations.decode(raw, node['name'])
        except node_annotations.NodeStateError:
            continue
        for entry in state.values():
            if entry.get('name') in wanted and entry.get('version') != wanted[entry['name']]:
                return True
    return False


def node_priority(current, node_statuses, now, picked=()):
    """``(nodePriority, nodeOrderOffset)`` as the operator keeps them, from the status as read.

    A node is listed with the time it was first picked (upsertPick: ``picked``, the nodes a batch
    starts, and any node rolling that is not listed yet) and leaves the list once complete, each
    removal adding one to the offset (RemoveNodePriority). SKYHOOK_NODE_ORDER is the node's rank in
    the list (by time, then name) plus the offset (pod_layout.node_order_from_status).
    """
    priority = dict(current.get('nodePriority') or {})
    offset = int(current.get('nodeOrderOffset') or 0)
    for name in sorted(priority):
        if node_statuses.get(name) == 'complete':
            del priority[name]
            offset += 1
    rolling = set(n for n, s in node_statuses.items() if s in node_annotations.ROLLING_STATUSES)
    for name in sorted(set(picked) | rolling):
        if name not in priority and node_statuses.get(name) != 'complete':
            priority[name] = now
    return priority, offset


def wanted_status(cr, doc, nodes, policy=None, policy_doc=None, policy_missing=False, now='', batch_states=None,
                  waiting_for=(), picked=(), boot_ids=None, gen=SKYHOOK):
    """The status the CR should have over ``nodes`` (StatusNodes of status_nodes), keeping what it owns only.

    ``doc``: the CR as read (its generation and current status); ``policy``: its DeploymentPolicy (a
    cr_model policy), ``policy_doc`` that policy's document, ``policy_missing``: the CR names one
    that does not exist; ``now``: the RFC 3339 time new conditions carry; ``batch_states``: the
    running rollout's batch states (compartment_statuses); ``waiting_for``: see aggregate; ``picked``: the
    nodes a batch starts now (node_priority); ``boot_ids``: node name -> ``status.nodeInfo.bootID`` (TrackReboots'
    ``nodeBootIds``, over the CR's nodes; None: left as it is); ``gen``: the API generation whose conditions
    (twins, Transition) the status carries.
    """
    current = doc.get('status') or {}
    generation = (doc.get('metadata') or {}).get('generation') or 0
    status = aggregate(cr, nodes, policy_missing, waiting_for)
    node_statuses = dict((n.name, n.status) for n in nodes)
    completing = status == 'complete' and current.get('status') != 'complete'
    wanted = {
        'status': status,
        'nodeState': dict((n.name, _omit_empty(n.state)) for n in nodes if n.state),
        'nodeStatus': node_statuses,
        'completeNodes': '%d/%d' % (sum(1 for n in nodes if n.status == 'complete'), len(nodes)),
        'nodesInProgress': sum(1 for n in nodes if n.status in node_annotations.ROLLING_STATUSES),
        'packageList': ','.join(sorted('%s:%s' % (p.name, p.version) for p in cr.packages.values())),
        'observedGeneration': generation if completing else current.get('observedGeneration'),
        'conditions': merge_conditions(current.get('conditions'),
                                       wanted_conditions(cr, nodes, status, node_statuses, generation, policy_missing,
                                                         current.get('conditions'), gen),
                                       now, gen),
        'nodeBootIds': None if boot_ids is None else dict((n.name, boot_ids.get(n.name) or '') for n in nodes),
    }
    wanted['nodePriority'], wanted['nodeOrderOffset'] = node_priority(current, node_statuses, now, picked)
    if policy_missing:
        wanted['compartmentStatuses'] = None  # no policy, no compartments (the operator drops them)
    else:
        wanted['compartmentStatuses'] = compartment_statuses(cr, nodes, policy, current.get('compartmentStatuses'),
                                                             status == 'complete', reset_on_completion(doc, policy_doc),
                                                             batch_states)
    return wanted


def _omit_empty(state):
    """A node state as the operator's status carries it: each entry without its empty omitempty fields."""
    return dict((key, dict((f, v) for f, v in entry.items() if v or f not in node_annotations.OMIT_EMPTY))
                for key, entry in state.items())


def map_patch(current, wanted):
    """A JSON merge patch turning the map ``current`` into ``wanted``: removed keys null, changed values.

    A merge patch merges nested maps (RFC 7386), so a map that changes is patched key by key, down to
    its leaves: a key it lost (a package's old version in nodeState, a batchState counter back to zero)
    must be sent as null, or the server keeps it.
    """
    current = current if isinstance(current, dict) else {}
    wanted = wanted or {}
    patch = {}
    for key, value in wanted.items():
        old = current.get(key)
        if old == value:
            continue
        patch[key] = map_patch(old, value) if isinstance(old, dict) and isinstance(value, dict) else value
    patch.update((k, None) for k in current if k not in wanted)
    return patch


# The CR annotation the operator stamps with its version when it first reconciles a CR (Skyhook.SetVersion); the
# kubectl plugin reads it to know which operator it talks to (pause, disable: "unable to determine operator version").
# The v0.15 name; version_annotation_patch reads ``gen.version_annotation``.
CR_VERSION_ANNOTATION = SKYHOOK.version_annotation


def version_annotation_patch(doc, gen=SKYHOOK):
    """The merge patch that stamps the CR with the version the collection speaks, or None when it carries one.

    ``gen.version_annotation`` (``<prefix>/version``) with ``gen.operator_version``: the generation's plugin reads
    its own prefix. Only a missing stamp is written: a CR an operator has reconciled keeps that operator's version
    (the plugin's version checks stay the operator's), and the spec is never touched (the generation stays).
    """
    annotations = (doc.get('metadata') or {}).get('annotations') or {}
    if annotations.get(gen.version_annotation):
        return None
    return {'metadata': {'annotations': {gen.version_annotation: gen.operator_version}}}


def status_patch(current, wanted):
    """The JSON merge patch ``{'status': {...}}`` from the status as read to ``wanted``, or None.

    Zero values go out as null, as the operator's omitempty fields do (the CRD's defaults fill them
    in for readers), except the compartments' counts, which the operator always writes.
    """
    current = current or {}
    patch = {}
    for field in ('nodeState', 'nodeStatus', 'nodePriority', 'nodeBootIds'):
        if wanted.get(field) is None and field == 'nodeBootIds':
            continue
        changed = map_patch(current.get(field), wanted[field])
        if changed:
            patch[field] = changed
    for field in ('status', 'completeNodes', 'packageList', 'nodesInProgress', 'observedGeneration', 'nodeOrderOffset'):
        value = wanted[field] or None
        # a zero value the operator wrote reads as the null this collection sends (omitempty)
        if current.get(field) != value and not (value is None and not current.get(field)):
            patch[field] = value
    if (current.get('conditions') or []) != wanted['conditions']:
        patch['conditions'] = wanted['conditions']
    compartments = wanted['compartmentStatuses']
    if compartments is None:
        if current.get('compartmentStatuses'):
            patch['compartmentStatuses'] = None
    else:
        changed = map_patch(current.get('compartmentStatuses'), compartments)
        if changed:
            patch['compartmentStatuses'] = changed
    return {'status': patch} if patch else None
