#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: node_update
short_description: Bring one node up to date with a NodeWright CR, the whole way the operator does it
version_added: 0.1.0
author: nodewright.bridge contributors (@nodewright)
description:
  - One task for the whole per-node sequence of a CR. It plans the node (M(nodewright.bridge.rollout_plan)) and runs the
    operator guard (M(nodewright.bridge.operator_guard), for a CR read from the cluster). Unless the node is already
    complete, it then runs what the plan says, in order.
  - When an interrupt is due, an owned cordon (M(nodewright.bridge.node_cordon)), a wait for the C(podNonInterruptLabels)
    pods and a drain (M(nodewright.bridge.node_drain)), as the operator places them. The packages without an interrupt
    (and that depend on none with one) run first, on the schedulable node up to the first dependency wave that needs the
    drain and cordoned from there; the others run after the drain. The plan's C(after) says where each step goes.
  - A pause, disable or ignore written during the run stops it before its next pod, cordon or eviction (the task
    fails with C(held)); the node is left as it is.
  - The pending package stages (M(nodewright.bridge.package_stage)) and the merged interrupt of each dependency wave
    (M(nodewright.bridge.node_interrupt)). The packages of a wave run at once unless the CR sets C(serial), as the
    operator runs them; each package's own stages stay in order.
  - When the node was drained, a health gate (M(nodewright.bridge.node_health)), waiting for a new boot after a reboot.
  - Then it records the CR complete on the node (M(nodewright.bridge.node_state)) and releases the CR's own cordon.
  - A node that is already complete costs one plan; its complete record is written only if it differs, and a cordon
    the CR left behind (a run stopped before its uncordon) is released.
  - Each step is the module named above, with exactly its documented behaviour. The steps run inside the Ansible
    worker when the task runs on the controller (no new Python per step); delegated to another host, each step runs
    there as a module, one after another.
  - >-
    On a failure the sequence stops. The node keeps the CR's cordon and its state records C(erroring), unless
    O(uncordon_on_failure). The message names the step, for example
    C(gpu-tuning on node gpu-node-07 failed at "gpu-driver apply": stage failed: exit 1 (the node stays cordoned by gpu-tuning)).
extends_documentation_fragment:
  - nodewright.bridge.k8s_auth
  - nodewright.bridge.park
  - nodewright.bridge.operator_pods
options:
  node:
    description: The node.
    type: str
    required: true
  cr:
    description:
      - The CR, as a dictionary, a list of documents (the CR and its DeploymentPolicy) or the path of a YAML / JSON file on
        the controller (searched like M(ansible.builtin.copy)'s C(src)). O(cr_name) picks the CR among several.
      - When omitted, the CR named O(cr_name) and its policy are read from the cluster.
    type: raw
  cr_name:
    description: The CR's name (required without O(cr)).
    type: str
  runtime_required_crs:
    description: CRs with C(runtimeRequired) that select this node (the taint is lifted once all are complete).
    type: list
    elements: str
    default: []
  wait_for_protected_timeout:
    description: Seconds to wait for the pods matching the CR's C(podNonInterruptLabels) to finish before the drain.
    type: int
    default: 3600
  drain_timeout:
    description: Seconds for the drain (evictions and the evicted pods gone).
    type: int
    default: 600
  drain_preflight:
    description: Dry-run every eviction first (M(nodewright.bridge.node_drain)'s O(nodewright.bridge.node_drain#module:preflight)).
    type: bool
    default: false
  drain_skip:
    description: M(nodewright.bridge.node_drain)'s O(nodewright.bridge.node_drain#module:skip) rules.
    type: dict
    default: {}
  stage_timeout:
    description: Seconds a package stage pod may take.
    type: int
    default: 1800
  interrupt_timeout:
    description: Seconds an interrupt may take (for a reboot, until the node is back with a new boot ID and Ready).
    type: int
    default: 1800
  stage_retries:
    description: Restarts a failing stage container gets before the stage counts as failed.
    type: int
    default: 0
  delete_pod:
    description:
      - When to delete package pods. V(on_success) (the default) keeps a failed pod, as the operator does, so
        C(kubectl skyhook package logs) finds it; the next run replaces it with a new attempt.
    type: str
    choices: [always, on_success, never]
    default: on_success
  health_pod_selector:
    description: Pods on the node matching this label selector must be Running and Ready before the node is handed back.
    type: raw
  health_min_pods:
    description: How many pods matching O(health_pod_selector) must be on the node.
    type: int
    default: 1
  health_timeout:
    description: Seconds for the health gate.
    type: int
    default: 600
  uncordon_on_failure:
    description: Release the CR's cordon when a step fails (by default the node stays cordoned, as the operator leaves it).
    type: bool
    default: false
  take_over:
    description:
      - Whether an unowned cordon on the node is the CR's, taken back and released at the end, as with
        O(nodewright.bridge.node_cordon#module:take_over) of M(nodewright.bridge.node_cordon). That is a node the CR
        was rolling, whose cordon record C(kubectl skyhook reset) removed.
      - Unset, the module decides from its own plan (the node's status for the CR, on the node or in the CR's status,
        in_progress or erroring). The apply playbook sets it from the plan it made before the run wrote any status.
    type: bool
    version_added: 0.2.0
  cr_identity:
    description:
      - The uid and generation of the CR the caller planned with (the apply playbook passes its plan's, made before
        the run; a CR read from the cluster by O(cr_name)). The node is planned from the CR as it is when its
        update starts, and every later step is handed the CR this plan read
        (O(nodewright.bridge.package_stage#module:cr_identity)).
      - When the CR has another C(metadata.uid) (deleted and created again since the caller's plan) the node fails
        at C(plan) with C(cr_replaced) and nothing is changed. Another C(metadata.generation) needs nothing, since
        the node's plan is made from the CR as it is now.
      - Unset, or with O(cr), nothing is compared.
    type: dict
    version_added: 0.2.0
    suboptions:
      uid:
        description: C(metadata.uid) of the CR planned with.
        type: str
      generation:
        description: C(metadata.generation) of the CR planned with.
        type: int
  operator_guard:
    description: Refuse a CR that a running NodeWright operator reconciles (see M(nodewright.bridge.operator_guard)).
      Only CRs read from the cluster are checked.
    type: bool
    default: true
  force:
    description: Act even though an operator reconciles the CR (the guard then only warns).
    type: bool
    default: false
  fleet_budget:
    description:
      - The node-disruption budget over a fleet of clusters (the C(nodewright.bridge.fleet) playbook sets it through
        C(nodewright_fleet_budget)). A node whose update cordons it holds one of the budget's O(fleet_budget.count)
        slots from before its cordon until its update ends, waiting for one while they are all taken, so that
        at no moment more nodes are cordoned or rebooting across the fleet. The slots are in one Lease of the
        coordination cluster, renewed while held; a run that dies leaves slots that expire. Not taken in check mode.
    type: dict
    version_added: 0.2.0
    suboptions:
      fleet:
        description: The fleet's name (the Lease is C(nodewright-fleet-<fleet>)).
        type: str
        required: true
      cluster:
        description: This node's cluster id in the fleet.
        type: str
        required: true
      count:
        description: The most nodes cordoned or rebooting at once over the fleet.
        type: int
        required: true
      namespace:
        description: The Lease's namespace in the coordination cluster.
        type: str
        default: skyhook
      kubeconfig:
        description: The coordination cluster's kubeconfig (default, as for the other connection options).
        type: str
      context:
        description: The coordination cluster's context.
        type: str
      slot_expiry:
        description: Seconds a slot lasts without renewal (its holder renews it every third of that).
        type: int
        default: 60
attributes:
  check_mode:
    support: full
    description: Every step runs in check mode (server-side dry runs); nothing changes, so later steps see the node as it is.
  diff_mode:
    support: full
    description: The steps' diffs, in order.
  action:
    support: full
    description: Runs the steps on the controller, or as modules on the delegated host.
notes:
  - The per-node sequence of the role P(nodewright.bridge.node#role) and of the playbook C(nodewright.bridge.apply).
seealso:
  - module: nodewright.bridge.rollout_plan
  - module: nodewright.bridge.package_stage
  - module: nodewright.bridge.node_interrupt
'''

EXAMPLES = r'''
- name: Bring each node up to date with gpu-node-tuning, in the CR's budgeted batches
  hosts: gpu_nodes
  gather_facts: false
  strategy: nodewright.bridge.budgeted
  vars:
    nodewright_policy: files/gpu-rollout-policy.yaml
  tasks:
    - name: Update the node
      nodewright.bridge.node_update:
        node: "{{ inventory_hostname }}"
        cr_name: gpu-node-tuning
      delegate_to: localhost

- name: From a file, releasing the cordon even on failure
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Update gpu-node-07
      nodewright.bridge.node_update:
        node: gpu-node-07
        cr: files/gpu-node-tuning.yaml
        uncordon_on_failure: true
        health_pod_selector: app=nvidia-device-plugin-daemonset
      register: update
'''

RETURN = r'''
node:
  description: The node.
  returned: always
  type: str
cr_name:
  description: The CR's name (once planned).
  returned: always
  type: str
  sample: gpu-node-tuning
  version_added: 0.2.0
cr:
  description:
    - The CR's name, the same as RV(cr_name). Deprecated (removed in 2.0.0); in the options O(cr) is the CR document.
  returned: always
  type: str
  sample: gpu-node-tuning
status:
  description:
    - V(updated) (steps ran), V(complete) (nothing was pending), V(ignored) (the node carries C(skyhook.nvidia.com/ignore)),
      V(not-selected) (a failure), V(failed), or what held the run (RV(held)).
  returned: always
  type: str
message:
  description: What happened, in words.
  returned: always
  type: str
  sample: 'node gpu-node-07 updated for gpu-node-tuning: cordon, drain, gpu-driver apply, gpu-driver interrupt (reboot), health, complete, uncordon'
steps:
  description:
    - The steps that ran, in order, each with C(step), C(module), C(kind) (what the step is, as the rollout timeline
      draws it, one of V(plan), V(guard), V(cordon), V(drain), V(stage), V(interrupt), V(health), V(state) or V(uncordon)),
      C(changed), C(started) (epoch seconds), C(seconds) and its module's result (without manifests, ConfigMaps,
      logs and the drain's C(pods); a failed step keeps its logs; a drain keeps C(pdb_waits), the pods that waited
      on a PodDisruptionBudget).
  returned: always
  type: list
  elements: dict
plan:
  description: The node's plan (M(nodewright.bridge.rollout_plan)'s C(nodes) entry), or null when the CR does not select it.
  returned: always
  type: dict
seconds:
  description: Seconds the steps took.
  returned: always
  type: float
ran_in:
  description:
    - Where the steps ran. V(sequence engine) (the play's one process for every node in flight, started by the
      P(nodewright.bridge.budgeted#strategy) strategy), V(worker) (the task's own Ansible worker, in the controller),
      V(modules) (each step as a module on the delegated host), or V(rollout task) (a thread of the
      M(nodewright.bridge.rollout_run) task that runs apply's rollout without the budgeted strategy).
  returned: when the options were valid
  type: str
  sample: sequence engine
failed_step:
  description: The step that failed.
  returned: failed
  type: str
  sample: gpu-driver apply
cr_replaced:
  description:
    - The CR was deleted and created again under the run (its uid is not that of O(cr_identity), or a step found
      another uid than the plan's); the node was stopped there (its cordon stays unless O(uncordon_on_failure)).
  returned: when the CR was replaced
  type: bool
  version_added: 0.2.0
held:
  description:
    - V(paused), V(disabled) or V(ignored) when a step found the CR paused or disabled, or the node ignored, since the
      plan; no new pod, cordon or eviction was made. RV(status) is the same word; the task failed.
  returned: when held
  type: str
  sample: paused
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules.node_update import module_args


def main():
    # The sequence composes the other modules; it is run by the action plugin of the same name.
    module = AnsibleModule(**module_args())
    module.fail_json(msg='nodewright.bridge.node_update runs through its action plugin; '
                         'run it as a task (ansible-playbook, ansible -m), not as a module file')


if __name__ == '__main__':
    main()
