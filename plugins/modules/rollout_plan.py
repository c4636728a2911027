#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: rollout_plan
short_description: Plan a NodeWright rollout, batch by batch and node by node
version_added: 0.1.0
description:
  - Reads a NodeWright (or Skyhook) custom resource, its DeploymentPolicy or legacy C(interruptionBudget),
    and a list of nodes with their labels and annotations, and returns the rollout the NodeWright operator
    would run.
  - Returns the compartments with their ceilings and batches (planned as if every batch succeeds), and for
    each node the package stages still pending, whether it must be cordoned and drained, and the merged interrupt.
  - Validates the CR and the policy like the CRD schema and the operator's admission webhook do; every problem
    is reported with its field path, and nothing else happens.
  - Changes nothing. Works offline, from files or data, or reads from the cluster what is not given, namely
    the CR by O(cr_name) when O(cr) is omitted, the nodes matching the CR's C(nodeSelectors) (with their
    state annotations) when O(nodes) is omitted, and the DeploymentPolicy the CR names when it is neither
    given nor in the O(cr) file.
author:
  - nodewright.bridge contributors (@nodewright)
extends_documentation_fragment:
  - nodewright.bridge.k8s_auth
attributes:
  action:
    support: full
    description: An action plugin reads file arguments on the controller.
  check_mode:
    support: full
    description: The module never changes anything; check mode returns the same plan.
  diff_mode:
    support: none
    description: Nothing changes, so there is no diff.
options:
  cr:
    description:
      - The CR, as a dict, or the path of a YAML or JSON file on the controller.
      - A relative path is searched like the C(src) of M(ansible.builtin.copy) (the role's and the playbook's
        C(files/) directories, then the playbook directory); vault-encrypted files are read.
      - A file may hold several documents; the DeploymentPolicy the CR names can be one of them.
      - Kinds C(Skyhook) (C(skyhook.nvidia.com/v1alpha1)) and C(NodeWright) (C(nodewright.nvidia.com/v1alpha1)).
      - When omitted, the CR named O(cr_name) is read from the cluster.
    type: raw
  cr_name:
    description:
      - Which CR to plan when O(cr) is a file with several CRs.
      - Without O(cr), the name of the CR to read from the cluster (a C(Skyhook), then a C(NodeWright)). Under
        the v0.18+ contract (O(nodewright_api=nodewright), or detected) only the C(NodeWright) is followed. When
        a legacy C(Skyhook) of the same name exists too, the NodeWright is not its mirror (no
        C(nodewright.nvidia.com/mirrored-from) naming it), and their specs differ, the task fails before
        anything is written. Its message names both objects and the first differing spec key, and the result
        carries them as C(conflict) (C(skyhook), C(nodewright), C(path)). Delete the one not meant, or delete the
        NodeWright for the operator's mirror controller to re-create it from the Skyhook.
      - One of O(cr) and O(cr_name) is required.
    type: str
  policy:
    description:
      - The DeploymentPolicy, as a full document, a bare policy C(spec) dict, or the path of a YAML/JSON file
        on the controller.
      - When omitted, the policy named by the CR's C(spec.deploymentPolicy) is looked up in the O(cr) file;
        a CR without C(deploymentPolicy) uses its C(interruptionBudget) (100% when absent), as the operator does.
    type: raw
  nodes:
    description:
      - The nodes, as a list of C({name, labels, annotations}), a Kubernetes C(NodeList)
        (for example C(kubectl get nodes -o json)), or the path of a YAML/JSON file on the controller holding either.
      - The C(skyhook.nvidia.com/nodeState_<cr>) annotation gives what each node has done already.
      - When omitted, the nodes matching the CR's C(nodeSelectors) are read from the cluster.
    type: raw
  node:
    description:
      - Plan just this node, read from the cluster (for a role that works on one node). Whether the CR selects
        it is part of the result (C(unmatched)).
    type: str
  node_order:
    description:
      - Order of nodes inside a compartment. V(name) sorts by node name; V(inventory) keeps the order given.
    type: str
    choices: [name, inventory]
    default: name
  cap_batches_at_ceiling:
    description:
      - Cap every batch at its compartment's budget ceiling, as the NodeWright documentation describes.
      - V(false) reproduces the operator's code, where a strategy's batch may exceed the ceiling.
    type: bool
    default: true
  require_crd:
    description:
      - Fail when the cluster serves no NodeWright CRD, also for a CR given as a document (which plans without it).
        The C(nodewright.bridge.fleet) playbook plans every cluster with it before any stage.
    type: bool
    default: false
    version_added: 0.2.0
  config_changes:
    description:
      - Package name to the configMap keys that changed since the nodes applied them. Complete packages
        go back to their C(config) stage, and their C(configInterrupts) matching those keys apply.
    type: dict
notes:
  - Budgets and batch sizes follow U(https://github.com/NVIDIA/nodewright/blob/main/docs/deployment_policy.md);
    differences from the operator's code are listed in the collection's C(docs/semantics.md).
seealso:
  - name: NodeWright deployment policies
    description: Compartments, budgets and strategies.
    link: https://github.com/NVIDIA/nodewright/blob/main/docs/deployment_policy.md
'''

EXAMPLES = r'''
- name: Plan a CR over nodes exported with kubectl get nodes -o json
  nodewright.bridge.rollout_plan:
    cr: files/gpu-node-tuning.yaml
    nodes: files/nodes.json
  register: plan

- name: Show the batches of every compartment
  ansible.builtin.debug:
    msg: "{{ item.name }}: {{ item.batch_sizes }}"
  loop: "{{ plan.compartments }}"

- name: Plan inline data with a policy given separately
  nodewright.bridge.rollout_plan:
    cr:
      apiVersion: nodewright.nvidia.com/v1alpha1
      kind: NodeWright
      metadata:
        name: gpu-tuning
      spec:
        deploymentPolicy: gpu-rollout
        nodeSelectors:
          matchLabels:
            nodepool: gpu
        packages:
          tuning:
            version: 1.2.0
            image: ghcr.io/example/tuning
            interrupt:
              type: reboot
    policy:
      apiVersion: skyhook.nvidia.com/v1alpha1
      kind: DeploymentPolicy
      metadata:
        name: gpu-rollout
      spec:
        default:
          budget:
            percent: 25
          strategy:
            linear:
              initialBatch: 1
              delta: 1
    nodes:
      - name: gpu-node-00
        labels:
          nodepool: gpu
        annotations: {}

- name: Plan the CR that is in the cluster, over the nodes it selects now
  nodewright.bridge.rollout_plan:
    cr_name: gpu-tuning
    kubeconfig: ~/.kube/prod-gpu
  register: live_plan
'''

RETURN = r'''
cr_document:
  description: The CR planned, without what the API server adds (managedFields, status, ...).
  returned: success
  type: dict
cr_identity:
  description:
    - The CR planned with, as the cluster stored it; the values are null for a CR given as a document.
    - The apply playbook hands the uid and generation to each node's M(nodewright.bridge.node_update) (its
      O(nodewright.bridge.node_update#module:cr_identity)), which hands them on to its steps.
  returned: success
  type: dict
  version_added: 0.2.0
  contains:
    name:
      description: C(metadata.name).
      type: str
    uid:
      description: C(metadata.uid).
      type: str
    generation:
      description: C(metadata.generation), which the API server moves on every spec edit.
      type: int
    resource_version:
      description: C(metadata.resourceVersion).
      type: str
policy_document:
  description: The DeploymentPolicy used (a document, or the bare C(spec) that was given), or null.
  returned: success
  type: dict
interruption_budget:
  description: The CR's C(interruptionBudget) when no DeploymentPolicy applies (C({percent 100}) when the CR has none), else null.
  returned: success
  type: dict
batch_state:
  description:
    - The batch state each compartment continues (compartment name -> the operator's BatchProcessingState, from the
      CR's C(status.compartmentStatuses)), as the operator's next reconcile would; the compartments' batches are
      planned from it. Empty for a CR given as a file, and when C(resetBatchStateOnCompletion) and a package version
      change start the rollout from batch 1.
  returned: success
  type: dict
  sample: {"tier1": {"currentBatch": 4, "completedNodes": 8, "lastBatchSize": 4}}
deleting:
  description: The CR (from the cluster) is marked deleted and held by the operator's finalizer; its packages with
    C(uninstall.enabled) are planned for uninstall, and M(nodewright.bridge.cr_finalize) finishes the deletion.
  returned: success
  type: bool
sources:
  description: Where the CR, the policy and the nodes came from (C(given) or C(cluster)).
  returned: success
  type: dict
  sample: {"cr": "cluster", "policy": "cluster", "nodes": "cluster"}
api_generation:
  description:
    - The NodeWright contract the nodes were read with (O(nodewright_api); V(auto) detects it, see docs/api-generations.md)
      and why; the later steps of M(nodewright.bridge.node_update) and the strategy pass it on as O(nodewright_api).
  returned: success
  type: dict
  contains:
    name:
      description: V(skyhook) (v0.15, C(skyhook.nvidia.com/*) keys) or V(nodewright) (v0.18-v0.20, C(nodewright.nvidia.com/*)).
      type: str
    reason:
      description: The evidence, in one line.
      type: str
  sample: {"name": "skyhook", "reason": "auto: only skyhook.nvidia.com/v1alpha1 skyhooks is served: skyhook"}
cr:
  description: The CR planned.
  returned: success
  type: dict
  sample: {"name": "gpu-tuning", "kind": "NodeWright", "priority": 200, "paused": false, "packages": ["tuning"]}
policy:
  description: Name of the DeploymentPolicy used, or null when the legacy interruptionBudget applies.
  returned: success
  type: str
  sample: gpu-rollout
budget_source:
  description: C(deploymentPolicy) or C(interruptionBudget).
  returned: success
  type: str
compartments:
  description: Every compartment of the rollout, the default one (C(__default__)) last.
  returned: success
  type: list
  elements: dict
  contains:
    name:
      description: Compartment name.
      type: str
    matched:
      description: Nodes in the compartment (after overlap resolution).
      type: int
    ceiling:
      description: The budget's ceiling over the matched nodes.
      type: int
    strategy:
      description: The strategy with defaults applied, or null.
      type: dict
    batch_sizes:
      description: Size of each batch if every batch succeeds.
      type: list
      elements: int
    batches:
      description: Node names of each batch.
      type: list
      elements: list
    already_complete:
      description: Nodes with nothing left to do (counted in progress, never batched).
      type: list
      elements: str
  sample: [{"name": "__default__", "matched": 10, "ceiling": 3, "batch_sizes": [3, 3, 3, 1]}]
nodes:
  description:
    - Per node name, what it still has to do.
    - Each pending step says what it waits for in C(after), as the operator orders a node. V(null) runs on the node as it
      is. V(cordon) runs once the node is cordoned, while the protected pods finish (the packages without an interrupt
      of the first wave that needs the drain, and of later waves). V(drain) runs after the drain (the packages with an
      interrupt and those that depend on them).
    - "Each node's value has these keys. C(compartment): the policy's compartment the node is in. C(pending): its
      steps still to run, in order, each with C(package), C(version), C(stage), C(wave), C(id) (the step's name in the
      node's state), C(after), and for an interrupt step C(interrupt) and C(covers) (the packages of its wave whose
      interrupts it runs). C(needs_drain): whether a pending step needs the node drained. C(interrupt): the first
      interrupt to run (C(type), C(services), C(package), C(wave)), or null. C(interrupts): every interrupt to run.
      C(blocked): packages that cannot run (a dependency that never completes). C(complete): nothing left to run.
      C(status): the node's status for the CR as it records it (C(unknown) when none). C(recorded): complete, and the
      operator's complete record is on the node. C(stale_complete): recorded complete while its state is not (a
      reset, a new package). C(cordoned_by): the CRs whose cordon the node carries. C(cr_status): the node's status as
      the CR's status last recorded it, or null."
  returned: success
  type: dict
  sample:
    gpu-node-00:
      compartment: __default__
      pending:
        - {package: driver, version: 2.0.0, stage: apply, wave: 1, after: cordon}
        - {package: driver, version: 2.0.0, stage: config, wave: 1, after: cordon}
        - {package: tuning, version: 1.2.0, stage: apply, wave: 1, after: drain}
        - {package: tuning, version: 1.2.0, stage: config, wave: 1, after: drain}
        - {package: tuning, version: 1.2.0, stage: interrupt, wave: 1, interrupt: {type: reboot, services: []}, after: drain}
        - {package: tuning, version: 1.2.0, stage: post-interrupt, wave: 1, after: drain}
      needs_drain: true
      interrupt: {type: reboot, services: [], package: tuning, wave: 1}
      complete: false
unmatched:
  description: Nodes given that the CR's nodeSelectors do not select.
  returned: success
  type: list
  elements: str
ignored:
  description: Selected nodes labelled C(skyhook.nvidia.com/ignore=true); they are left out.
  returned: success
  type: list
  elements: str
to_block:
  description:
    - The nodes left out of the rollout (ignored, or with a taint the CR does not tolerate) that still have work and do
      not record C(blocked) for the CR yet; the apply playbook records them C(blocked), as the operator's node picker
      does.
  returned: success
  type: list
  elements: str
  sample: [gpu-node-07]
to_block_status:
  description:
    - Each node of RV(to_block) to its status for the CR as the node records it now (C(unknown) when it records
      none). A CR held by a C(sequencing=all) gate keeps these instead of C(blocked), as the operator's picker never
      reaches it.
  returned: success
  type: dict
  sample: {gpu-node-07: waiting}
untolerated:
  description:
    - Selected nodes with a taint that the CR's pods do not tolerate, each with those taints (C(key[=value]:effect)).
      The operator's node picker checks every taint of a node against the cordon's toleration, the CR's
      C(additionalTolerations) and, for a C(runtimeRequired) CR, the runtime-required one, and blocks the node
      otherwise; so does the plan. They are left out of the rollout and recorded C(blocked) while they have work left;
      the CR's status carries C(TaintNotTolerable).
  returned: success
  type: dict
  sample: {gpu-3: ["test-block=true:NoSchedule"]}
left_out:
  description:
    - Selected nodes that are out of the rollout (ignored, with an untolerated taint, or with an unreadable node state)
      and not complete. While there is one, the CR is not complete everywhere, as the operator's C(IsComplete) counts
      every node the CR selects. A C(sequencing) V(all) CR then holds every CR after it.
  returned: success
  type: list
  elements: str
  sample: [gpu-3]
auto_taint:
  description:
    - For a CR with C(runtimeRequired) and C(autoTaintNewNodes), the selected nodes that no CR has written yet (no
      C(skyhook.nvidia.com/) annotation) and that lack the runtime-required taint. The operator taints such nodes as
      soon as it sees them (HandleAutoTaint); the apply playbook does it before anything else of its run
      (M(nodewright.bridge.node_state) O(nodewright.bridge.node_state#module:action=auto_taint)). Empty otherwise.
  returned: success
  type: list
  elements: str
  sample: [gpu-node-31]
malformed:
  description:
    - Selected nodes whose node-state annotation cannot be read, each with the reason (the annotation
      and field at fault). They are not planned and never touched; while any is listed the CR starts
      nothing (C(decision.skipped)), as the operator's reconcile stops on it, and its status carries the
      C(NodeStateMalformed) condition. Repair the annotation or reset the node.
  returned: success
  type: dict
  sample: {gpu-7: "gpu-7 annotation skyhook.nvidia.com/nodeState_tuning is not valid JSON: ..."}
summary:
  description: Counts of matched, complete, to_update, needs_drain nodes and of batches.
  returned: success
  type: dict
decision:
  description:
    - What the operator's rules make of the plan for this CR alone (module_utils/planning/planner.py); the
      C(nodewright.bridge.rollout_phases) filter adds the sequencing of several CRs in one run.
  returned: success
  type: dict
  contains:
    runs:
      description: The nodes to update (none when the CR is paused or disabled).
      type: list
      elements: str
    complete:
      description: Complete nodes whose complete record must be written (missing, or the CR is runtimeRequired).
      type: list
      elements: str
    release:
      description: Complete nodes that still hold the CR's cordon.
      type: list
      elements: str
    skipped:
      description: Why nothing starts (paused or disabled), else null.
      type: str
    runtime_required_crs:
      description: The CR's name when it is runtimeRequired, else empty.
      type: list
      elements: str
    erroring:
      description: Nodes whose status for the CR is erroring.
      type: list
      elements: str
    not_done:
      description: Nodes neither complete nor erroring.
      type: list
      elements: str
    needs_drain:
      description: Nodes whose update drains them (what nodewright.bridge.plan previews).
      type: list
      elements: str
    with_state:
      description: Nodes with a status for the CR or holding its cordon (what nodewright.bridge.reset works on).
      type: list
      elements: str
    budget:
      description: What limits the batches, C(policy <name>) or C(interruptionBudget <json>).
      type: str
    line:
      description: The one-line summary nodewright.bridge.apply prints before it starts.
      type: str
  sample:
    runs: [gpu-node-01]
    complete: []
    release: []
    skipped: null
    runtime_required_crs: []
    erroring: []
    not_done: [gpu-node-01]
    needs_drain: []
    with_state: []
    budget: 'interruptionBudget {"percent": 100}'
    line: 'gpu-node-tuning (priority 200, sequencing node): 1 nodes, 1 to update, 0 to drain; interruptionBudget {"percent": 100} '
errors:
  description: Every validation problem, by field path.
  returned: failure
  type: list
  elements: str
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules.rollout_plan import execute, module_args


def main():
    execute(AnsibleModule(**module_args()))


if __name__ == '__main__':
    main()
