#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: rollout_run
short_description: Run a budgeted rollout's nodes in their batches from one task, without the budgeted strategy
version_added: 0.2.0
description:
  - The apply playbook's rollout for the day the C(nodewright.bridge.budgeted) strategy cannot be loaded (ansible-core
    2.19+ deprecates strategy plugins outside C(ansible.builtin)), or when V(builtin) is chosen with
    C(nodewright_rollout_strategy). Run once, on the controller, in a play of a stock strategy whose hosts are the
    nodes; the role C(nodewright.bridge.node) runs it (its C(batches) tasks), and each host then reports its own
    node's result.
  - Reads the same play variables as the budgeted strategy (C(nodewright_phases), C(nodewright_policy),
    C(nodewright_interruption_budget), C(nodewright_batch_lockstep), C(nodewright_shared_budget), the maintenance
    windows and gates, C(nodewright_kubeconfig), C(nodewright_context); the collection's C(docs/strategy.md)), and
    admits the nodes as the strategy does, phase after phase (batches per compartment, windows and gates before a
    batch, the shared budget's Leases, the CR's batch states, the hosts that failed an earlier phase left out).
  - Each admitted node's M(nodewright.bridge.node_update) runs in a thread of this task's process (one API client for
    every node). A node waiting for its protected pods keeps its batch slot (it is not parked), and a sliding
    admission runs in batches.
  - Every node's options are validated before any node is touched.
author:
  - nodewright.bridge contributors (@nodewright)
options:
  update:
    description:
      - The options of M(nodewright.bridge.node_update) every node shares. The V(node) option is each host's name;
        each node's CR (V(cr), V(cr_name), V(cr_identity), V(take_over)) comes from its phase's C(nw_apply_cr) when
        the apply playbook planned it, and V(runtime_required_crs) from the host's C(nodewright_runtime_required_crs).
    type: dict
    required: true
  play_name:
    description:
      - The rollout's name in the report; the play's name by default.
    type: str
attributes:
  action:
    support: full
    description: The action plugin runs on the controller; the module itself cannot run on a host.
  check_mode:
    support: full
    description: Every node's update runs in check mode; no shared budget is taken, windows and gates are only read.
  diff_mode:
    support: none
    description: No diff.
requirements:
  - kubernetes >= 29.0.0 (Python client), on the controller
  - PyYAML >= 5.4
seealso:
  - plugin: nodewright.bridge.budgeted
    plugin_type: strategy
    description: The strategy this task stands in for.
'''

EXAMPLES = r'''
# playbooks/plays/rollout.yml runs it through the node role when the budgeted strategy is not used:
- name: Roll the CRs out without the budgeted strategy
  hosts: nw_apply
  gather_facts: false
  strategy: ansible.builtin.linear
  vars:
    nodewright_phases: "{{ hostvars['localhost']['nw_run']['phases'] }}"
  tasks:
    - name: Run the nodes in their batches, then report each node
      ansible.builtin.import_role:
        name: nodewright.bridge.node
        tasks_from: batches.yml
'''

RETURN = r'''
nodes:
  description: Each node's result, by host name (M(nodewright.bridge.node_update)'s; a node never admitted says why).
  returned: always
  type: dict
rollouts:
  description: The rollouts (one per phase), as the C(nodewright.bridge.rollout) callback's report lists them.
  returned: always
  type: list
  elements: dict
report:
  description: The report of the rollouts, without each node's steps (the strategy's C(nodewright_rollout) custom stat).
  returned: always
  type: dict
stopped:
  description: Whether a rollout stopped (its policy, a gate, the shared budget).
  returned: always
  type: bool
failed_nodes:
  description: The nodes that failed or were never admitted in a stopped rollout.
  returned: always
  type: list
  elements: str
budget_failure:
  description: Why the shared budget could not be used (the rollout stopped).
  returned: when the shared budget failed
  type: str
'''

from ansible.module_utils.basic import AnsibleModule


def argument_spec():
    return dict(
        update=dict(type='dict', required=True),
        play_name=dict(type='str'),
    )


def main():
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True)
    module.fail_json(msg='nodewright.bridge.rollout_run runs on the controller, through its action plugin; '
                         'it cannot run as a module on a host')


if __name__ == '__main__':
    main()
