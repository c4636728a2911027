# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
name: rollout_phases
short_description: Decide what each of several CRs rolls out to in one run, in order
version_added: 0.1.0
author: nodewright.bridge contributors (@nodewright)
description:
  - Takes the results of M(nodewright.bridge.rollout_plan), one per CR, puts them in run order (priority, then
    name), and applies the operator's rules across CRs - paused and disabled CRs, C(sequencing) C(node) and C(all),
    runtimeRequired - the way the playbook C(nodewright.bridge.apply) does (module_utils/planner.py holds the rules).
  - Returns the phases for the C(nodewright.bridge.budgeted) strategy's C(nodewright_phases) (one per CR with nodes
    to roll out), and per CR the nodes it runs, the complete ones, the ones blocked by an earlier CR and why a CR is
    skipped.
options:
  _input:
    description: rollout_plan results, in any order.
    type: list
    elements: dict
    required: true
  with_documents:
    description: Give each CR's documents (the CR and its policy) in C(crs[name].documents), for CRs read from a file.
    type: bool
    default: false
'''

EXAMPLES = r'''
- name: Phases of the CRs planned in nw_planned (a looped rollout_plan), lowest priority first
  ansible.builtin.set_fact:
    nw_run: "{{ nw_planned.results | nodewright.bridge.rollout_phases(with_documents=true) }}"
'''

RETURN = r'''
_value:
  description: C(order) (the CR names in run order), C(phases) (for C(nodewright_phases)), C(crs) (name -> runs,
    complete (complete nodes whose record must be written), release, blocked, skipped, waiting (why the CR or some of
    its nodes wait, or null), documents) and C(runtime_required) (node -> the runtimeRequired CRs that select it).
  type: dict
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.nodewright.bridge.plugins.module_utils.planner import rollout_phases


def _rollout_phases(plans, with_documents=False):
    if not isinstance(plans, list) or not all(isinstance(p, dict) and 'cr' in p for p in plans):
        raise AnsibleFilterError('rollout_phases: expects a list of nodewright.bridge.rollout_plan results')
    return rollout_phases(plans, with_documents=bool(with_documents))


class FilterModule(object):
    def filters(self):
        return {'rollout_phases': _rollout_phases}
