# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
name: fleet_gate
short_description: Why a stage of a fleet rollout is not done
version_added: 0.2.0
author: nodewright.bridge contributors (@nodewright)
description:
  - From the M(nodewright.bridge.rollout_plan) results of a stage's clusters, planned again after the stage (each
    with C(item) C([cluster, cr name])), one line per cluster and CR whose nodes are not all complete, or erroring.
    Empty when the stage is done, and the C(nodewright.bridge.fleet) playbook then starts the next stage.
options:
  _input:
    description: The registered results of the loop over C([cluster, cr name]).
    type: list
    elements: dict
    required: true
'''

EXAMPLES = r'''
- name: Hold the next stage
  ansible.builtin.fail:
    msg: "{{ nw_fleet_gate.results | nodewright.bridge.fleet_gate | join('; ') }}"
  when: nw_fleet_gate.results | nodewright.bridge.fleet_gate | length > 0
'''

RETURN = r'''
_value:
  description: The problems (each C(<cluster> - <cr> - why)), empty when every node is complete and none erroring.
  type: list
  elements: str
'''

from ansible_collections.nodewright.bridge.plugins.module_utils.planning import fleet_progress


class FilterModule(object):

    def filters(self):
        return {'fleet_gate': fleet_progress.gate_problems}
