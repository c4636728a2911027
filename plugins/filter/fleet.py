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
  - Internal to the collection's playbooks (nodewright.bridge.fleet), not a stable interface; it may change in any
    release (the collection's C(docs/versioning.md)).
  - Reads a fleet definition (the C(nodewright.bridge.fleet) playbook's C(nodewright_fleet), the collection's
    C(docs/fleet.md)) and checks it before any cluster is asked anything. Every problem is reported at once, each
    naming its field (C(stages[1].clusters[0]), C(progress_deadline)).
  - Returns the fleet with durations in seconds and every default filled in.
options:
  groups:
    description:
      - The inventory's groups (the C(groups) variable). A stage's C(group) names one of them; its hosts are the
        stage's clusters.
    type: dict
  hostvars:
    description:
      - The inventory's host variables (the C(hostvars) variable). A cluster read from a group is reached with its
        host's C(nodewright_cluster_kubeconfig) and C(nodewright_cluster_context) (not C(nodewright_kubeconfig),
        which an extra variable would override for every host); its C(nodewright_cluster_operator) says what it gets
        when its NodeWright operator reconciles a CR of the run (C(skip) or C(handover)).
    type: dict
  check_environment:
    description:
      - Also refuse a run whose environment (the controller's) sets a C(K8S_AUTH_*) variable that wins over a
        kubeconfig's server or credentials (C(K8S_AUTH_HOST), C(K8S_AUTH_API_KEY), C(K8S_AUTH_USERNAME),
        C(K8S_AUTH_PASSWORD), C(K8S_AUTH_CERT_FILE), C(K8S_AUTH_KEY_FILE), C(K8S_AUTH_SSL_CA_CERT)) when the fleet
        reaches more than one cluster, since every cluster would be reached at that one API server. An AWX Kubernetes
        bearer-token credential on the job sets two of them.
    type: bool
    default: false
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
        C(name), C(clusters) and/or C(group), C(max_concurrency), C(soak)), C(max_failures), C(progress_deadline), C(budget)
        (C(count) or C(percent) of nodes cordoned or rebooting at once over the fleet), C(coordination),
        C(budget_namespace), C(operator) (C(skip) or C(handover), also per cluster) and C(name).
    type: dict
    required: true
'''

EXAMPLES = r'''
- name: Check the fleet
  ansible.builtin.set_fact:
    nw_fleet: "{{ lookup('ansible.builtin.file', 'fleet.yml') | from_yaml | nodewright.bridge.fleet }}"

- name: Check a fleet whose stages name inventory groups (each host a cluster)
  ansible.builtin.set_fact:
    nw_fleet: "{{ {'stages': [{'name': 'canary', 'group': 'canary'}]} | nodewright.bridge.fleet(groups=groups, hostvars=hostvars) }}"
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
    operators:
      description:
        - Cluster id to what it gets when its NodeWright operator reconciles a CR of the run, C(skip) (left out) or
          C(handover) (the fleet waits for that operator to complete the CRs there).
      type: dict
    budget_option:
      description: With O(plans), node_update's C(fleet_budget) (without C(cluster)), or null.
      type: dict
    selected_nodes:
      description: With O(plans), each cluster's nodes that its CRs select (what the NotReady gate counts there).
      type: dict
    plan:
      description:
        - With O(plans), the fleet's plan in lines, a line per stage (its clusters, how many at once, its soak) and
          under it a line per cluster and CR (nodes to update and to drain, the budget, each compartment's batches).
      type: list
      elements: str
    input:
      description:
        - The fleet as a fleet mapping again, every inventory group read (its hosts listed as clusters, with their
          connections) and durations in seconds. The filter and M(nodewright.bridge.fleet_stage) read it without
          the inventory.
      type: dict
'''

import os

from ansible.errors import AnsibleFilterError

from ansible_collections.nodewright.bridge.plugins.module_utils.model import fleet_model
from ansible_collections.nodewright.bridge.plugins.module_utils.planning import fleet_budget
from ansible_collections.nodewright.bridge.plugins.module_utils.planning import fleet_progress


def _inventory(value, groups, hostvars):
    """The groups a stage names and their hosts' connections (only those hosts' variables are read)."""
    stages = value.get('stages') if isinstance(value, dict) else None
    names = [s.get('group') for s in stages or [] if isinstance(s, dict) and isinstance(s.get('group'), str)]
    hosts = {}
    for name in names:
        for host in (groups or {}).get(name) or []:
            variables = (hostvars or {}).get(host) or {}
            hosts[host] = {'kubeconfig': variables.get('nodewright_cluster_kubeconfig'),
                           'context': variables.get('nodewright_cluster_context'),
                           'operator': variables.get('nodewright_cluster_operator')}
    return {'groups': dict(groups or {}), 'hosts': hosts}


def fleet(value, plans=None, groups=None, hostvars=None, check_environment=False):
    inventory = _inventory(value, groups, hostvars) if groups is not None else None
    try:
        parsed = fleet_model.parse_fleet(value, inventory=inventory)
        problems = fleet_model.environment_problems(parsed, os.environ) if check_environment else []
        if problems:
            raise fleet_model.FleetError(problems)
    except fleet_model.FleetError as exc:
        raise AnsibleFilterError('nodewright_fleet: %s' % exc)
    checked = parsed.as_dict()
    checked['input'] = parsed.as_input()
    if plans is not None:
        checked['budget_option'] = fleet_budget.node_option(checked, plans)
        checked['selected_nodes'] = fleet_progress.selected_nodes(plans)
        checked['plan'] = fleet_progress.plan_lines(checked, plans)
    return checked


class FilterModule(object):

    def filters(self):
        return {'fleet': fleet}
