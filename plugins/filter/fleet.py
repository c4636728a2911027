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
  _input:
    description:
      - The fleet, a mapping with C(clusters) (id to C(kubeconfig) and/or C(context)), C(stages) (a list of
        C(name), C(clusters), C(max_concurrency), C(soak)), C(max_failures), C(progress_deadline) and C(name).
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
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.nodewright.bridge.plugins.module_utils.model import fleet_model


def fleet(value):
    try:
        return fleet_model.parse_fleet(value).as_dict()
    except fleet_model.FleetError as exc:
        raise AnsibleFilterError('nodewright_fleet: %s' % exc)


class FilterModule(object):

    def filters(self):
        return {'fleet': fleet}
