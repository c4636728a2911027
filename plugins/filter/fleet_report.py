# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
name: fleet_report
short_description: The report of a fleet rollout, every cluster's rollouts in one
version_added: 0.2.0
author: nodewright.bridge contributors (@nodewright)
description:
  - Internal to the collection's playbooks (nodewright.bridge.fleet), not a stable interface; it may change in any
    release (the collection's C(docs/versioning.md)).
  - The C(nodewright.bridge.fleet) playbook's report, from each cluster's M(nodewright.bridge.fleet_stage) result,
    with each cluster's stage and outcome, and every cluster's rollouts in the C(nodewright.bridge.rollout) callback's
    format, the cluster first in each rollout's C(play) (the timeline shows a row group per cluster).
options:
  _input:
    description: Cluster id to its M(nodewright.bridge.fleet_stage) result.
    type: dict
    required: true
  fleet:
    description: The fleet, as the C(nodewright.bridge.fleet) filter returns it.
    type: dict
    required: true
  with_rollouts:
    description: Whether the report lists every cluster's rollouts (false gives the outcomes only, cheaper to print).
    type: bool
    default: true
'''

EXAMPLES = r'''
- name: Write the fleet's report
  ansible.builtin.copy:
    content: "{{ nw_fleet_results | nodewright.bridge.fleet_report(nw_fleet) | to_nice_json }}"
    dest: report.json
    mode: "0644"
'''

RETURN = r'''
_value:
  description: The report, with C(fleet), C(clusters) and C(rollouts).
  type: dict
'''

from ansible_collections.nodewright.bridge.plugins.module_utils.planning import fleet_progress


class FilterModule(object):

    def filters(self):
        return {'fleet_report': fleet_progress.fleet_report}
