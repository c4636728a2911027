# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
name: fleet
short_description: A fleet of clusters and its stages, checked
version_added: 0.2.0
author: nodewright.bridge contributors (@nodewright)
description:
  - Reads a fleet definition (the C(nodewright.bridge.fleet) playbook's C(nodewright_fleet), the collection's
    C(docs/fleet.md)) and checks it before any cluster is asked anything. Every problem is reported at once, each
    naming its field (C(stages[1].clusters[0]), C(progress_deadline)).
  - Returns the fleet with durations in seconds and every default filled in.
options:
  plans:
    description:
      - The M(nodewright.bridge.rollout_plan) results of every C([cluster, cr name]). With them, C(budget_option) is
        node_update's C(fleet_budget) for every cluster's run (a C(budget) in percent counted over the fleet's
        selected nodes), or null without a C(budget); and C(selected_nodes) lists each cluster's selected nodes.
    type: list
    elements: dict
  _input:
    description:
      - The fleet, a mapping with C(clusters) (id to C(kubeconfig) and/or C(context)), C(stages) (a list of
        C(name), C(clusters), C(max_concurrency), C(soak)), C(max_failures), C(progress_deadline), C(budget)
        (C(count) or C(percent) of nodes cordoned or rebooting at once over the fleet), C(coordination),
        C(budget_namespace) and C(name).
    type: dict
    required: true
'''

EXAMPLES = r'''
- name: Check the fleet
  ansible.builtin.set_fact:
    nw_fleet: "{{ lookup('ansible.builtin.file', 'fleet.yml') | from_yaml | nodewright.bridge.fleet }}"
'''

RETURN = r'''
_value:
  description: The checked fleet.
  type: dict
  contains:
    name:
      description: The fleet's name.
      type: str
    clusters:
      description: Cluster id to its C(kubeconfig) and C(context) (each null when not given).
      type: dict
    stages:
      description: The stages in order, each with C(name), C(clusters), C(max_concurrency) and C(soak_seconds).
      type: list
      elements: dict
    max_failures:
      description: Failed clusters the rollout goes on after.
      type: int
    progress_deadline_seconds:
      description: A cluster's longest rollout, or null.
      type: float
    budget:
      description: The node-disruption budget over the fleet (C(count) or C(percent)), or null.
      type: dict
    coordination:
      description: The cluster whose Lease keeps that budget (a cluster id, or a C(kubeconfig) and C(context)), or null.
      type: raw
    budget_namespace:
      description: The Lease's namespace.
      type: str
    budget_option:
      description: With O(plans), node_update's C(fleet_budget) (without C(cluster)), or null.
      type: dict
    selected_nodes:
      description: With O(plans), each cluster's nodes that its CRs select (what the NotReady gate counts there).
      type: dict
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.nodewright.bridge.plugins.module_utils.model import fleet_model
from ansible_collections.nodewright.bridge.plugins.module_utils.planning import fleet_budget
from ansible_collections.nodewright.bridge.plugins.module_utils.planning import fleet_progress


def fleet(value, plans=None):
    try:
        checked = fleet_model.parse_fleet(value).as_dict()
    except fleet_model.FleetError as exc:
        raise AnsibleFilterError('nodewright_fleet: %s' % exc)
    if plans is not None:
        checked['budget_option'] = fleet_budget.node_option(checked, plans)
        checked['selected_nodes'] = fleet_progress.selected_nodes(plans)
    return checked


class FilterModule(object):

    def filters(self):
        return {'fleet': fleet}
