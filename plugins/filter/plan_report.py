# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
name: plan_report
short_description: Turn rollout plans and drain previews into the nodewright.bridge.plan report
version_added: 0.1.0
author: nodewright.bridge contributors (@nodewright)
description:
  - Internal to the collection's playbooks (nodewright.bridge.plan), not a stable interface; it may change in any
    release (the collection's C(docs/versioning.md)).
  - Combines the results of M(nodewright.bridge.rollout_plan) for several CRs (in run order) with the check-mode
    results of M(nodewright.bridge.node_drain) into one report per CR, with per node the pending stages, the
    merged interrupt, the pods that would be evicted and the PodDisruptionBudgets that would refuse them now.
positional: order, drains
options:
  _input:
    description: The plans, a dictionary of CR name to rollout_plan result.
    type: dict
    required: true
  order:
    description: The CR names in run order.
    type: list
    elements: str
    required: true
  drains:
    description: The registered loop result of node_drain in check mode, whose items are C([cr, node]) pairs.
    type: list
    elements: dict
    default: []
'''

EXAMPLES = r'''
- name: Build the report
  ansible.builtin.set_fact:
    report: "{{ plans | nodewright.bridge.plan_report(order, drain_preview.results | default([])) }}"
'''

RETURN = r'''
_value:
  description:
    - C({order, crs, lines}); per CR its priority, sequencing, policy or budget (and C(budget), both as text), summary,
      compartments and nodes (each with its C(pending) steps, and C(phases), those steps by when they run, on the node
      as it is, once cordoned, after the drain).
    - C(lines) is the report to read, the nodes that do the same thing grouped, one screen for a fleet of like nodes.
  type: dict
'''


from ansible_collections.nodewright.bridge.plugins.module_utils.planning.planner import budget_text
from ansible_collections.nodewright.bridge.plugins.plugin_utils.reporting import plan_text


def _step_names(pending):
    return ['%s %s' % (step.get('package'), step.get('stage')) for step in pending or []]


def plan_report(plans, order, drains=None):
    """The plan report: ``{'order': [...], 'crs': {name: {...}}}``."""
    previews = {}
    for result in drains or []:
        item = result.get('item')
        if isinstance(item, (list, tuple)) and len(item) == 2 and 'pods' in result:
            previews[(item[0], item[1])] = result
    report = {'order': list(order), 'crs': {}}
    for name in order:
        plan = plans[name]
        nodes = {}
        for node_name, node in (plan.get('nodes') or {}).items():
            entry = {'compartment': node.get('compartment'), 'complete': node.get('complete'), 'status': node.get('status'),
                     'pending': _step_names(node.get('pending')), 'interrupt': node.get('interrupt'),
                     'needs_drain': node.get('needs_drain'),
                     'phases': [list(p) for p in plan_text.step_phases(node.get('pending'))]}
            preview = previews.get((name, node_name))
            if preview is not None:
                pods = preview.get('pods') or []
                entry['evict'] = ['%s/%s' % (p['namespace'], p['name']) for p in pods if p.get('action') in ('would-evict', 'would-delete')]
                entry['skip'] = ['%s/%s (%s)' % (p['namespace'], p['name'], p.get('reason')) for p in pods if p.get('action') == 'skipped']
                entry['pdb_blockers'] = list((preview.get('preflight') or {}).get('blocked') or [])
                entry['waiting_for'] = list(preview.get('waiting_for') or [])
            nodes[node_name] = entry
        cr = plan.get('cr') or {}
        report['crs'][name] = {
            'priority': cr.get('priority'), 'sequencing': cr.get('sequencing'), 'paused': cr.get('paused'),
            'disabled': cr.get('disabled'), 'policy': plan.get('policy'), 'interruption_budget': plan.get('interruption_budget'),
            'budget': budget_text(plan),
            'summary': plan.get('summary'), 'ignored': plan.get('ignored') or [], 'compartments': plan.get('compartments') or [],
            'nodes': nodes,
        }
    report['lines'] = plan_text.plan_lines(report)
    return report


class FilterModule(object):

    def filters(self):
        return {'plan_report': plan_report}
