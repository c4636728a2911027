# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
name: fleet_nodes
short_description: Every node of a fleet rollout as <cluster>/<node>, with its outcome
version_added: 0.2.0
author: nodewright.bridge contributors (@nodewright)
description:
  - Internal to the collection's playbooks (nodewright.bridge.fleet), not a stable interface; it may change in any
    release (the collection's C(docs/versioning.md)).
  - From each cluster's M(nodewright.bridge.fleet_stage) result, every node its rollouts ran, named
    C(<cluster>/<node>), with its C(status) (V(ok), V(failed), V(removed)), C(compartment) and C(batch); the
    C(nodewright.bridge.fleet) playbook adds them as hosts, so that the recap lists each node with its cluster.
options:
  _input:
    description: Cluster id to its M(nodewright.bridge.fleet_stage) result.
    type: dict
    required: true
'''

EXAMPLES = r'''
- name: Every node of the fleet's rollout
  ansible.builtin.debug:
    msg: "{{ nw_fleet_results | nodewright.bridge.fleet_nodes | map(attribute='name') | list }}"
'''

RETURN = r'''
_value:
  description: One entry per node, with C(name), C(cluster), C(node), C(status), C(compartment) and C(batch).
  type: list
  elements: dict
'''

from ansible_collections.nodewright.bridge.plugins.module_utils.planning import fleet_progress


class FilterModule(object):

    def filters(self):
        return {'fleet_nodes': fleet_progress.node_outcomes}
