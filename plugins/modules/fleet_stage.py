#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: fleet_stage
short_description: Roll one stage of a fleet out, the apply playbook on each of its clusters
version_added: 0.2.0
description:
  - Runs C(nodewright.bridge.apply) on every cluster of one stage of a fleet (the C(nodewright.bridge.fleet) playbook,
    the collection's C(docs/fleet.md)), at most the stage's C(max_concurrency) at once, each with its cluster's
    C(kubeconfig) and C(context) and the same variables (O(apply_vars)). Each cluster gets the whole of apply (its plan,
    its API generation, the operator guard, the batches of its policy, its CR status and Events).
  - A cluster's run longer than the fleet's C(progress_deadline) is stopped (its nodes keep the state they recorded,
    a later run resumes them) and counts as failed. Once the fleet's failed clusters (O(failed_before_names) and this
    stage's) exceed C(max_failures), no more clusters start; the runs in flight end.
  - Each run's log and JSON report (the C(nodewright.bridge.rollout) callback's) are written to O(work_dir).
author:
  - nodewright.bridge contributors (@nodewright)
options:
  fleet:
    description: The fleet, as the C(nodewright.bridge.fleet) filter reads it (checked again here).
    type: dict
    required: true
  stage:
    description: The name of the stage to run.
    type: str
    required: true
  apply_vars:
    description: The variables of every cluster's apply run (C(nodewright_cr) or C(nodewright_cr_name), and any other).
    type: dict
    required: true
  work_dir:
    description: Where each cluster's log, report and variables file are written.
    type: path
    required: true
  selected_nodes:
    description:
      - Cluster id to the nodes its CRs select, what the NotReady gate counts in that cluster before it starts (as
        each cluster's run counts its CR's selection). A cluster not listed counts all its nodes.
    type: dict
    default: {}
  cr_names:
    description:
      - The names of the run's CRs. Before a cluster starts, a running NodeWright operator that reconciles one of them
        there is looked for (as the operator guard does); such a cluster is skipped, or handed over to that operator
        (the stage waits until it has completed every node of those CRs there, within the progress deadline), as the
        fleet's C(operator) says for it. Not looked for when empty, nor with C(nodewright_force) or
        C(nodewright_operator_guard=false) in O(apply_vars).
    type: list
    elements: str
    default: []
  failed_before_names:
    description: The clusters of the fleet that failed in the stages before this one.
    type: list
    elements: str
    default: []
attributes:
  action:
    support: full
    description: The action plugin runs on the controller; the module itself cannot run on a host.
  check_mode:
    support: full
    description: Every cluster's apply runs with C(--check) (its plan; nothing written).
  diff_mode:
    support: none
    description: No diff.
requirements:
  - kubernetes >= 29.0.0 (Python client), on the controller (the apply runs)
  - PyYAML >= 5.4
seealso:
  - module: nodewright.bridge.rollout_plan
    description: The fleet playbook plans each cluster with it before any stage, and gates each stage with it.
'''

EXAMPLES = r'''
- name: Roll the canary stage out
  nodewright.bridge.fleet_stage:
    fleet: "{{ lookup('ansible.builtin.file', 'fleet.yml') | from_yaml }}"
    stage: canary
    apply_vars:
      nodewright_cr: "{{ playbook_dir }}/gpu-node-tuning.yaml"
    work_dir: /tmp/fleet-run
'''

RETURN = r'''
clusters:
  description: Each cluster of the stage, by id.
  returned: always
  type: dict
  contains:
    outcome:
      description:
        - V(ok), V(failed), V(deadline) (stopped after the progress deadline, or handed over and not complete by
          then), V(not started), V(skipped) (its NodeWright operator reconciles a CR of the run, and the fleet skips
          such a cluster) or V(handed over) (that operator completed every node).
      type: str
    rc:
      description: The apply run's exit code (null when it never started, as when not started, skipped or handed over).
      type: int
    msg:
      description: What happened, in a line.
      type: str
    log:
      description: The run's log.
      type: str
    nodes:
      description: Node to its C(status), C(compartment) and C(batch), from the run's report.
      type: dict
    report:
      description: The run's JSON report (the rollout callback's).
      type: dict
    elapsed:
      description: Seconds the run took.
      type: float
failed_clusters:
  description: The clusters of the stage that failed or passed their deadline.
  returned: always
  type: list
  elements: str
stopped:
  description: Whether the fleet's failures now exceed C(max_failures) (the rollout stops).
  returned: always
  type: bool
stop_reason:
  description: Why the rollout stops, in a line (empty when it goes on).
  returned: always
  type: str
deferred:
  description: Why the rest of the fleet waits for a later run (no maintenance window in time), or null.
  returned: always
  type: str
gate:
  description:
    - Why the next stage may not start, one line per cluster and CR whose nodes are not all complete or erroring, as
      each cluster's run found them in its final plan (its custom stat C(nodewright_apply_left)); empty when every
      node of the stage's clusters is complete, in check mode, and when the rollout stopped. Only the clusters whose
      run ended with rc 0, or that their operator completed, are looked at; a failed cluster counts against
      C(max_failures) instead, and a skipped one is left out.
  returned: always
  type: list
  elements: str
runs_cpu_seconds:
  description: CPU seconds the stage's apply runs used (user and system, every process they waited for).
  returned: always
  type: float
'''

from ansible.module_utils.basic import AnsibleModule


def argument_spec():
    return dict(
        fleet=dict(type='dict', required=True),
        stage=dict(type='str', required=True),
        apply_vars=dict(type='dict', required=True),
        work_dir=dict(type='path', required=True),
        failed_before_names=dict(type='list', elements='str', default=[]),
        selected_nodes=dict(type='dict', default={}),
        cr_names=dict(type='list', elements='str', default=[]),
    )


def main():
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True)
    module.fail_json(msg='nodewright.bridge.fleet_stage runs on the controller, through its action plugin; '
                         'it cannot run as a module on a host')


if __name__ == '__main__':
    main()
