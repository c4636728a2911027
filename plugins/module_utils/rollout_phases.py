# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""Several CRs in one run: which nodes each CR rolls out to, in which order, and why others wait.

Pure: it reads the plans of ``rollout_plan`` (one per CR, already in run order: priority, then
name) and decides, as the operator's rules say (docs/semantics.md):

* a paused CR starts no batch, a disabled CR is left alone;
* ``sequencing: node`` (the default): a CR starts on a node once every earlier CR that selects
  the node is complete there. A node an earlier CR still has to finish in this run waits for
  it (the strategy leaves it out if it failed there); a node an earlier CR will not finish in
  this run (paused, disabled, itself waiting) is blocked;
* ``sequencing: all``: a CR starts once every earlier CR is complete on every node. If an
  earlier CR will not finish in this run, the CR waits for a later run; otherwise its phase
  runs after theirs, and only if they succeeded on every node (``after_all``).

The result drives the ``budgeted`` strategy's ``nodewright_phases`` (one phase per CR with
work) and tells the playbook which complete nodes to record and which leftover cordons to lift.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.nodewright.bridge.plugins.module_utils.constants import DISABLE_ANNOTATION, PAUSE_ANNOTATION


def cr_documents(plan):
    """The CR and its policy as documents a task can take (``rollout_plan``'s portable copies)."""
    docs = [plan['cr_document']]
    if plan.get('policy_document'):
        docs.append(plan['policy_document'])
    return docs


def rollout_phases(plans, with_documents=False):
    """``{'phases': [...], 'crs': {name: decision}, 'runtime_required': {node: [CR names]}}``.

    ``plans``: rollout_plan results in run order. A decision lists the nodes the CR ``runs``,
    those already complete whose ``complete`` record must be written (missing, or a
    runtime-required taint to check), the complete ones still holding the CR's cordon
    (``release``), the ``blocked`` ones (node -> the earlier CRs it waits for) and why the CR
    is ``skipped``. ``with_documents``: each decision carries the CR's ``documents`` (a CR from a
    file, which the cluster does not have).
    """
    phases, crs = [], {}
    unfinished = {}  # CR name -> nodes it selects that will not be complete after this run
    running = {}  # CR name -> nodes it rolls out to in this run
    runtime_required = {}
    for plan in plans:
        if plan['cr'].get('runtimeRequired'):
            for node in plan.get('nodes') or {}:
                runtime_required.setdefault(node, []).append(plan['cr']['name'])
    for plan in plans:
        cr, nodes = plan['cr'], plan.get('nodes') or {}
        name = cr['name']
        pending = sorted(n for n, p in nodes.items() if not p['complete'])
        decision = _decide(cr, nodes, pending, running, unfinished, runtime_required)
        decision['documents'] = cr_documents(plan) if with_documents else None
        crs[name] = decision
        if decision['runs']:
            phases.append(_phase(plan, decision['runs'], decision.pop('after_all')))
        else:
            decision.pop('after_all')
        running[name] = list(decision['runs'])
        unfinished[name] = [n for n in pending if n not in decision['runs']]
    return {'phases': phases, 'crs': crs, 'runtime_required': runtime_required}


def _decide(cr, nodes, pending, running, unfinished, runtime_required):
    name = cr['name']
    complete = sorted(n for n, p in nodes.items() if p['complete'])
    # complete nodes whose record must be written: missing, or a runtime-required taint to check
    record = [n for n in complete if not nodes[n].get('recorded') or runtime_required.get(n)]
    decision = {'runs': [], 'complete': record, 'blocked': {}, 'skipped': None, 'after_all': [],
                'release': [n for n in complete if name in nodes[n].get('cordoned_by', [])]}
    if cr.get('disabled') or cr.get('paused'):
        decision.update(complete=[], release=[], skipped=(
            'disabled (%s=true), left alone' % DISABLE_ANNOTATION if cr.get('disabled')
            else 'paused (%s=true), no batch starts' % PAUSE_ANNOTATION))
    elif cr.get('sequencing') == 'all':
        waiting = sorted(c for c in unfinished if unfinished[c])
        if waiting:
            decision['skipped'] = 'sequencing all: waits until %s is complete on every node' % ', '.join(waiting)
        else:
            decision['runs'] = list(pending)
            decision['after_all'] = [c for c in running if running[c]]
    else:
        for node in pending:
            blockers = sorted(c for c in unfinished if node in unfinished[c])
            if blockers:
                decision['blocked'][node] = blockers
            else:
                decision['runs'].append(node)
    return decision


def _phase(plan, runs, after_all):
    """The strategy's phase for a CR: its policy (hosts pinned to the planned compartments) or budget."""
    phase = {'name': plan['cr']['name']}
    if plan.get('policy_document'):
        phase['policy'] = plan['policy_document']
        phase['hosts'] = dict((n, plan['nodes'][n].get('compartment')) for n in runs)
    else:
        phase['interruption_budget'] = plan.get('interruption_budget') or {'percent': 100}
        phase['hosts'] = list(runs)
    if after_all:
        phase['after_all'] = list(after_all)
    return phase
