# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""A fleet rollout's progress, pure: when a stage is done, each node's outcome, the fleet's report.

Inputs are what the fleet playbook keeps: each cluster's stage result (nodewright.bridge.fleet_stage: outcome, rc,
the run's report, whose custom stat ``nodewright_apply_left`` says what the run's final plan of each CR left).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


def nodes_left(plans):
    """``{cr: {'erroring': [...], 'not_done': [...]}}`` of the CRs whose nodes are not all complete (``{'failed': msg}``
    for a CR that could not be planned), from the rollout_plan results of one run's CRs (each with ``item`` its name):
    what apply's final plan leaves, the custom stat ``nodewright_apply_left``; empty when every node is complete."""
    left = {}
    for plan in plans:
        if plan.get('skipped'):
            continue
        name = plan.get('item') or (plan.get('cr') or {}).get('name')
        decision = plan.get('decision') or {}
        erroring, not_done = sorted(decision.get('erroring') or []), sorted(decision.get('not_done') or [])
        if plan.get('failed'):
            left[name] = {'failed': plan.get('msg') or 'failed'}
        elif erroring or not_done:
            left[name] = {'erroring': erroring, 'not_done': not_done}
    return left


def gate_problems(left_by_cluster, ended=None):
    """Why a stage is not done, ``['<cluster>: <cr>: ...']`` (empty: every node of its clusters complete, none erroring).

    ``left_by_cluster``: cluster -> what its run's final plan left (nodes_left, read from its report's custom stats),
    or None when its run reported none (the stage is held: nothing says its nodes are complete); ``ended``: cluster ->
    how its run ended, said then.
    """
    problems = []
    for cluster in sorted(left_by_cluster):
        left = left_by_cluster[cluster]
        if left is None:
            problems.append('%s: its run reported no end state (%s)' % (cluster, (ended or {}).get(cluster) or 'see its log'))
            continue
        for name in sorted(left):
            entry = left[name]
            if entry.get('failed'):
                problems.append('%s: %s: not planned (%s)' % (cluster, name, entry['failed']))
                continue
            parts = []
            if entry.get('erroring'):
                parts.append('%d erroring (%s)' % (len(entry['erroring']), ', '.join(entry['erroring'])))
            if entry.get('not_done'):
                parts.append('%d not complete (%s)' % (len(entry['not_done']), ', '.join(entry['not_done'])))
            problems.append('%s: %s: %s' % (cluster, name, ', '.join(parts)))
    return problems


def node_outcomes(results):
    """``[{name: '<cluster>/<node>', cluster, node, status, compartment, batch}]`` of every cluster's rollouts."""
    nodes = []
    for cluster in sorted(results):
        for node, entry in sorted((results[cluster].get('nodes') or {}).items()):
            nodes.append(dict(entry, name='%s/%s' % (cluster, node), cluster=cluster, node=node))
    return nodes


def fleet_report(results, fleet, with_rollouts=True):
    """The fleet's JSON report: each cluster's outcome, and every cluster's rollouts (the rollout callback's format,
    the cluster first in each rollout's ``play``, its ``cluster`` set), in stage order; ``with_rollouts`` False: the
    outcomes only (what the run prints; the rollouts hold every node's steps)."""
    clusters, rollouts = {}, []
    for stage in fleet['stages']:
        for cluster in stage['clusters']:
            result = results.get(cluster)
            if result is None:
                clusters[cluster] = {'stage': stage['name'], 'outcome': 'not reached'}
                continue
            clusters[cluster] = {'stage': stage['name'], 'outcome': result.get('outcome'), 'rc': result.get('rc'),
                                 'msg': result.get('msg'), 'log': result.get('log'), 'elapsed': result.get('elapsed')}
            for rollout in (result.get('report') or {}).get('rollouts') or [] if with_rollouts else []:
                rollouts.append(dict(rollout, play='%s: %s' % (cluster, rollout.get('play')), cluster=cluster))
    return {'fleet': fleet['name'], 'clusters': clusters, 'rollouts': rollouts}


def selected_nodes(plans):
    """cluster -> the names of the nodes its CRs select (the rollout_plan results of every ``[cluster, cr name]``):
    what the NotReady gate counts in that cluster, as a cluster's own run counts its CR's selection."""
    selected = {}
    for plan in plans:
        if plan.get('failed') or plan.get('skipped'):
            continue
        selected.setdefault(plan['item'][0], set()).update(plan.get('nodes') or {})
    return dict((cluster, sorted(names)) for cluster, names in selected.items())


def plan_lines(fleet, plans):
    """The fleet's plan, a line per stage and per cluster and CR under it: what each cluster's rollout will do (its
    nodes to update and to drain, its budget, the batches of each compartment), from the rollout_plan results of
    every ``[cluster, cr name]`` made before any stage starts. ``fleet``: fleet_model.Fleet.as_dict()."""
    by_cluster = {}
    for plan in plans:
        if plan.get('skipped') or plan.get('failed'):
            continue
        by_cluster.setdefault(plan['item'][0], []).append(plan)
    lines = []
    for number, stage in enumerate(fleet['stages'], 1):
        soak = ', soak %ds' % stage['soak_seconds'] if stage.get('soak_seconds') else ''
        lines.append('stage %d/%d %s: %s (%d at once%s)' % (
            number, len(fleet['stages']), stage['name'], ', '.join(stage['clusters']), stage['max_concurrency'], soak))
        for cluster in stage['clusters']:
            for plan in by_cluster.get(cluster, []):
                line = (plan.get('decision') or {}).get('line') or plan['item'][1]
                batches = '; '.join('%s %s' % (c.get('name'), c.get('batch_sizes') or [])
                                    for c in plan.get('compartments') or [] if c.get('batch_sizes'))
                lines.append('  %s: %s%s' % (cluster, line.strip(), '; batches %s' % batches if batches else ''))
    return lines
