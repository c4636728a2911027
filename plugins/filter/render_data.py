# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
name: render_data
short_description: The steps a rendered playbook has, and the nodes it cannot update
version_added: 0.1.0
author: nodewright.bridge contributors (@nodewright)
description:
  - Internal to the collection's playbooks (nodewright.bridge.render), not a stable interface; it may change in any
    release (the collection's C(docs/versioning.md)).
  - Used by the playbook nodewright.bridge.render. From the plan of a CR over its nodes and the plan of a node without
    the CR, works out the steps of the rendered playbook (by their step ids; an upgrade beside the apply of a package
    some node has in an older version), the nodes that need steps the playbook does not have, the policy in words
    and the node counts.
positional: fresh
options:
  _input:
    description: The result of M(nodewright.bridge.rollout_plan) for the CR over its nodes.
    type: dict
    required: true
  fresh:
    description: The node plan, from M(nodewright.bridge.rollout_plan), of a node that has none of the CR.
    type: dict
    required: true
'''

EXAMPLES = r'''
- name: Work out the steps of the playbook
  ansible.builtin.set_fact:
    nw_render: "{{ nw_plan | nodewright.bridge.render_data(nw_fresh.nodes['node-without-the-cr']) }}"
'''

RETURN = r'''
_value:
  description: >-
    C(playbook_steps) (step ids, in task order), C(upgrades) (packages), C(unsupported) (node to the step ids it
    lacks), C(policy_text), C(runtime_required_crs) and C(nodes) (C(selected), C(complete), C(to_update),
    C(unsupported)).
  type: dict
'''

from ansible_collections.nodewright.bridge.plugins.plugin_utils.rendering.render_playbook import render_data


class FilterModule(object):
    def filters(self):
        return {'render_data': render_data}
