# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""A fleet rollout's progress, pure: when a stage is done, each node's outcome, the fleet's report.

Inputs are what the fleet playbook keeps: each cluster's stage result (nodewright.bridge.fleet_stage: outcome, rc,
the run's report) and each cluster's CRs planned again after its stage (nodewright.bridge.rollout_plan results).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


def gate_problems(plans):
    """Why a stage is not done, ``['<cluster>: <cr>: ...']`` (empty: every node of its clusters complete, none erroring).

    ``plans``: rollout_plan results of the stage's clusters, each with ``item`` ``[cluster, cr name]``.
    """
    problems = []
    for plan in plans:
        if plan.get('skipped'):
            continue
        cluster, name = plan['item']
        decision = plan.get('decision') or {}
        erroring, not_done = list(decision.get('erroring') or []), list(decision.get('not_done') or [])
        if plan.get('failed'):
            problems.append('%s: %s: not planned (%s)' % (cluster, name, plan.get('msg')))
        elif erroring or not_done:
            parts = []
            if erroring:
                parts.append('%d erroring (%s)' % (len(erroring), ', '.join(sorted(erroring))))
            if not_done:
                parts.append('%d not complete (%s)' % (len(not_done), ', '.join(sorted(not_done))))
            problems.append('%s: %s: %s' % (cluster, name, ', '.join(parts)))
    return problems


def node_outcomes(results):
    """``[{name: '<cluster>/<node>', cluster, node, status, compartment, batch}]`` of every cluster's rollouts."""
    nodes = []
    for cluster in sorted(results):
        for node, entry in sorted((results[cluster].get('nodes') or {}).items()):
            nodes.append(dict(entry, name='%s/%s' % (cluster, node), cluster=cluster, node=node))
    return nodes


def fleet_report(results, fleet):
    """The fleet's JSON report: each cluster's outcome, and every cluster's rollouts (the rollout callback's format,
    the cluster first in each rollout's ``play``, its ``cluster`` set), in stage order."""
    clusters, rollouts = {}, []
    for stage in fleet['stages']:
        for cluster in stage['clusters']:
            result = results.get(cluster)
            if result is None:
                clusters[cluster] = {'stage': stage['name'], 'outcome': 'not reached'}
                continue
            clusters[cluster] = {'stage': stage['name'], 'outcome': result.get('outcome'), 'rc': result.get('rc'),
                                 'msg': result.get('msg'), 'log': result.get('log'), 'elapsed': result.get('elapsed')}
            for rollout in (result.get('report') or {}).get('rollouts') or []:
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
