# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""The nodewright.bridge.plan report as lines people read on one screen (the plan_report filter's ``lines``).

Per CR: its line (priority, sequencing, nodes to update and to drain, its budget), each compartment's batches, then
the nodes that do the same thing as one group: what runs on the node as it is, what runs once it is cordoned (while
its protected pods finish), what runs after the drain, and its interrupt. A fleet of identical nodes is one group,
not a line per node. Drain previews (the pods each node's drain would evict, the PodDisruptionBudgets that would
refuse them now) stay per node. Pure: the report in, lines out.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.nodewright.bridge.plugins.plugin_utils.reporting import rollout_state

# a step's ``after`` (rollout_plan's pending steps) -> when it runs, in the order a node goes through them
PHASES = ((None, 'on the node as it is'), ('cordon', 'once cordoned'), ('drain', 'after the drain'))
# a list of node names longer than this is cut in its middle
NAMES_SHOWN = 8


def names(values, limit=NAMES_SHOWN):
    """``a, b, c`` or, past ``limit``, ``a, b, c, ... y, z (26)``."""
    values = list(values)
    if len(values) <= limit:
        return ', '.join(values)
    head = limit // 2 + 1
    return '%s, ... %s (%d)' % (', '.join(values[:head]), ', '.join(values[-(limit - head):]), len(values))


def step_phases(pending):
    """``[(when, ['<package> <version> (<stage>, ...)'])]`` of a node's pending steps (rollout_plan's), in the order
    they run: each package once per phase, with its stages in order."""
    phases = []
    for after, when in PHASES:
        stages, order = {}, []
        for step in pending or []:
            if step.get('after') != after:
                continue
            package = '%s %s' % (step.get('package'), step.get('version'))
            if package not in stages:
                stages[package] = []
                order.append(package)
            stages[package].append(step.get('stage'))
        if order:
            phases.append((when, ['%s (%s)' % (p, ', '.join(stages[p])) for p in order]))
    return phases


def _interrupt(node):
    interrupt = node.get('interrupt')
    if not interrupt:
        return ''
    services = interrupt.get('services') or []
    return '; interrupt %s%s' % (interrupt.get('type'), ' (%s)' % ', '.join(services) if services else '')


def node_groups(nodes):
    """``[(node names, node)]``: the nodes not complete, grouped by compartment and what they run (the first node of
    each group stands for it), in the order of their first node's name."""
    groups, order = {}, []
    for name in sorted(nodes):
        node = nodes[name]
        if node.get('complete'):
            continue
        key = (node.get('compartment'), repr(node.get('phases')), _interrupt(node), bool(node.get('needs_drain')))
        if key not in groups:
            groups[key] = ([], node)
            order.append(key)
        groups[key][0].append(name)
    return [groups[key] for key in order]


def _preview_lines(name, node):
    lines = []
    if 'evict' in node:
        lines.append('     %s: its drain evicts %d pod(s)%s' % (name, len(node['evict']),
                                                                ': ' + names(node['evict']) if node['evict'] else ''))
    for blocked in node.get('pdb_blockers') or []:
        refusing = ', '.join(blocked.get('pdbs') or []) or blocked.get('message')
        lines.append('     %s: BLOCKED NOW %s/%s by %s' % (name, blocked.get('namespace'), blocked.get('name'), refusing))
    if node.get('waiting_for'):
        lines.append('     %s: waits for protected pods %s' % (name, names(node['waiting_for'])))
    return lines


def cr_lines(name, cr):
    """The lines of one CR of the report."""
    flags = ''.join(' ' + f.upper() for f in ('paused', 'disabled') if cr.get(f))
    summary = cr.get('summary') or {}
    lines = ['== %s (priority %s, sequencing %s)%s' % (name, cr.get('priority'), cr.get('sequencing'), flags),
             '   %s nodes: %s complete, %s to update (%s drained); %s' % (
                 summary.get('matched', 0), summary.get('complete', 0), summary.get('to_update', 0),
                 summary.get('needs_drain', 0), cr.get('budget'))]
    for dummy, comp in rollout_state.shown_compartments((c.get('name'), c) for c in cr.get('compartments') or []):
        lines.append('   compartment %s: %s nodes, ceiling %s, batches %s' % (
            comp.get('name'), comp.get('matched'), comp.get('ceiling'), comp.get('batch_sizes') or []))
        for number, batch in enumerate(comp.get('batches') or [], 1):
            lines.append('     batch %d: %s' % (number, names(batch)))
    for group, node in node_groups(cr.get('nodes') or {}):
        lines.append('   %s [%s]%s:' % (names(group), node.get('compartment'), _interrupt(node)))
        for when, steps in node.get('phases') or []:
            lines.append('     %s: %s' % (when, ', '.join(steps)))
        for member in group:
            lines.extend(_preview_lines(member, cr['nodes'][member]))
    if cr.get('ignored'):
        lines.append('   ignored: %s' % names(cr['ignored']))
    return lines


def plan_lines(report):
    """Every line of the report (``{'order', 'crs'}``), the CRs in run order."""
    lines = []
    for name in report.get('order') or []:
        lines.extend(cr_lines(name, report['crs'][name]))
    return lines
