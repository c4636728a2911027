# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
name: nodes_left
short_description: The nodes a run leaves not complete, per CR
version_added: 0.2.0
author: nodewright.bridge contributors (@nodewright)
description:
  - From the M(nodewright.bridge.rollout_plan) results of a run's CRs (a loop over CR names), the CRs whose nodes are
    not all complete, each with its C(erroring) and C(not_done) nodes (or C(failed), the message, for a CR that could
    not be planned). Empty when every node of every CR is complete.
  - The C(nodewright.bridge.apply) playbook keeps it of its final plan as the custom stat C(nodewright_apply_left);
    the C(nodewright.bridge.fleet) playbook starts the next stage only when every cluster's run left nothing.
options:
  _input:
    description: The registered results of the loop over CR names.
    type: list
    elements: dict
    required: true
'''

EXAMPLES = r'''
- name: Plan every CR again
  nodewright.bridge.rollout_plan:
    cr_name: "{{ item }}"
  loop: [gpu-node-tuning]
  register: nw_final

- name: Fail unless every node is complete
  ansible.builtin.assert:
    that: nw_final.results | nodewright.bridge.nodes_left | length == 0
    fail_msg: "not done: {{ nw_final.results | nodewright.bridge.nodes_left }}"
'''

RETURN = r'''
_value:
  description: CR name to C(erroring) and C(not_done) (node names, sorted), or to C(failed); only CRs with any.
  type: dict
'''

from ansible_collections.nodewright.bridge.plugins.module_utils.planning import fleet_progress


class FilterModule(object):

    def filters(self):
        return {'nodes_left': fleet_progress.nodes_left}
