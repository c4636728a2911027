#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: node_state
short_description: Read, reset, ignore or unignore the NodeWright state of a node
version_added: 0.1.0
author: nodewright.bridge contributors (@nodewright)
description:
  - Reads the NodeWright annotations and labels of a node and returns them decoded, per CR
    and per package (C(skyhook.nvidia.com/nodeState_<cr>), C(status_<cr>), C(cordon_<cr>),
    C(version_<cr>), the C(skyhook.nvidia.com/ignore) label).
  - V(reset) does what C(kubectl skyhook node reset) does (drops the CR's whole node state, so
    every package re-runs) or, with O(package), what C(kubectl skyhook package rerun) does
    (drops that package's entries; with O(stage), re-runs it from that stage).
  - V(ignore) and V(unignore) set and remove the C(skyhook.nvidia.com/ignore=true) label, which
    keeps the node out of every rollout (C(kubectl skyhook node ignore / unignore)).
  - V(complete) records that the CR is complete on the node (C(status_<cr>=complete), annotation and label,
    and C(version_<cr>)), as the operator does when every package is done, and removes the runtime-required
    taint once every CR in O(runtime_required_crs) is complete on the node (the operator's HandleRuntimeRequired).
    It refuses when the node state says a package is still in progress or erroring.
  - V(record) sets C(status_<cr>) (annotation and label) to O(status), as the operator records a node it does not
    run, V(blocked) for a node its batch picks that carries C(skyhook.nvidia.com/ignore=true), V(unknown) for a node
    recorded complete whose node state no longer is, V(paused) or V(disabled) for every node of a CR that is, and
    V(waiting) for a node not complete of a CR resumed or enabled again, until its batch starts it. M(nodewright.bridge.rollout_plan)'s C(decision.record) lists
    which; the apply playbook writes them before the rollout.
  - V(auto_taint) puts the runtime-required taint (O(runtime_required_taint)) and the marker
    C(skyhook.nvidia.com/autoTaint_<taint key>) on a node that no CR has written yet (no C(skyhook.nvidia.com/)
    annotation) and lacks the taint, as the operator's HandleAutoTaint does for a CR with C(runtimeRequired) and
    C(autoTaintNewNodes); otherwise it changes nothing. M(nodewright.bridge.rollout_plan)'s C(auto_taint) lists such
    nodes; the apply playbook taints them before anything else.
  - V(complete), V(reset) and V(record) also keep the CR's node conditions C(skyhook.nvidia.com/<cr>/NotReady) and
    C(skyhook.nvidia.com/<cr>/Erroring) in the node's C(status.conditions) as the operator writes them (one patch of
    the C(nodes/status) subresource, only when they change; best effort, a refusal is a warning).
  - Writes carry the node's resourceVersion, so a concurrent writer's changes are never lost.
extends_documentation_fragment:
  - nodewright.bridge.k8s_auth
options:
  node:
    description:
      - The node. One of O(node) and O(nodes) is required.
      - O(name) is a deprecated alias (removed in 2.0.0).
    type: str
    aliases: [name]
  nodes:
    description:
      - For V(record) only, instead of O(node), several nodes that get the same O(status), written 16 at a time
        (the apply playbook records every node of a CR this way before its first batch, as the operator's first
        reconcile does).
      - Each node's write is its own guarded patch. When some nodes fail (a node deleted meanwhile), the others keep
        their record, and the task fails with a message that names each node at fault and why (RV(failed_nodes)).
    type: list
    elements: str
    version_added: 0.2.0
  cr_name:
    description:
      - The name of the Skyhook / NodeWright CR whose state to read, reset or complete. Required for V(reset) and V(complete).
      - For V(read) without it, the state of every CR on the node is returned.
      - O(cr) is a deprecated alias (removed in 2.0.0).
    type: str
    aliases: [cr]
  action:
    description: What to do.
    type: str
    choices: [read, reset, ignore, unignore, complete, record, auto_taint]
    default: read
  status:
    description:
      - For V(record) (required there), the status to record for the CR on the node.
    type: str
    choices: [blocked, unknown, paused, disabled, waiting]
  runtime_required_crs:
    description:
      - For V(complete), the CRs with C(runtimeRequired) that target the node. When the list is not empty and all of
        them are complete on the node, the runtime-required taint is removed.
      - Under the V(nodewright) generation, when one of them sets C(runtimeRequiredCordonAfter), the node is cordoned in
        the same write and marked C(nodewright.nvidia.com/runtimeRequiredCordon=true), which keeps it cordoned after every
        CR's cordon is released (remove the mark together with the cordon to release it); on a node uncordoned by hand
        the mark is removed. The CRs are read (from the sequence engine's watch when there is one) only when the taint
        comes off.
    type: list
    elements: str
    default: []
  runtime_required_taint:
    description:
      - The runtime-required taint, C(key=value:Effect) (V(complete) removes it, V(auto_taint) adds it).
      - Default, the operator's for the API generation (O(nodewright_api)), C(skyhook.nvidia.com=runtime-required:NoSchedule)
        or C(nodewright.nvidia.com=runtime-required:NoSchedule); under V(nodewright) V(complete) also removes the legacy one.
    type: str
  package:
    description:
      - For V(reset), the package to re-run (all its versions on the node unless O(version) is set).
        Without it the CR's whole state is reset.
    type: str
  version:
    description: For V(reset) with O(package), only this version of the package.
    type: str
  stage:
    description:
      - For V(reset) with O(package), keep the package's entry but re-run it from this stage
        (its state becomes C(in_progress)), as C(kubectl skyhook package rerun --stage) does.
    type: str
    choices: [apply, config, interrupt, post-interrupt]
  forget:
    description:
      - For V(reset) without O(package), drop every annotation and label the CR keeps on the node (nodeState, status
        annotation and label, version, autoTaint), as C(kubectl skyhook reset) does, not just its node state.
      - A cordon the CR holds is not dropped here (that would leave the node unschedulable with no owner); release it
        with M(nodewright.bridge.node_cordon).
    type: bool
    default: false
attributes:
  check_mode:
    support: full
    description: Changes are sent to the API server as a dry run.
  diff_mode:
    support: full
    description: Shows the node's state (or its cordon) before and after.
notes:
  - A reset without O(forget) leaves the C(status_<cr>) annotation and label alone, as C(kubectl skyhook node reset)
    does, except a C(complete) status, which becomes C(unknown) at once (what the operator's next reconcile writes,
    so the label does not say complete until the next run).
'''

EXAMPLES = r'''
- name: Read what every CR did on a node
  nodewright.bridge.node_state:
    node: gpu-node-07
  register: node_info

- name: Show the state of the tuning package
  ansible.builtin.debug:
    var: node_info.states['gpu-tuning']['tuning|1.2.0']

- name: Re-run one package from its config stage
  nodewright.bridge.node_state:
    node: gpu-node-07
    cr_name: gpu-tuning
    action: reset
    package: tuning
    stage: config

- name: Reset everything the CR did on the node
  nodewright.bridge.node_state:
    node: gpu-node-07
    cr_name: gpu-tuning
    action: reset

- name: Record the CR complete on the node and lift the runtime-required taint
  nodewright.bridge.node_state:
    node: gpu-node-07
    cr_name: gpu-tuning
    action: complete
    runtime_required_crs: [gpu-tuning]

- name: Record an ignored node blocked for the CR, as the operator does
  nodewright.bridge.node_state:
    node: gpu-node-07
    cr_name: gpu-tuning
    action: record
    status: blocked

- name: Record the nodes of a resumed CR waiting for their batch (several at once)
  nodewright.bridge.node_state:
    nodes: [gpu-node-01, gpu-node-02, gpu-node-03]
    cr_name: gpu-tuning
    action: record
    status: waiting

- name: Keep a node out of every rollout
  nodewright.bridge.node_state:
    node: gpu-node-07
    action: ignore
'''

RETURN = r'''
node:
  description:
    - The node's name. The fields from here to RV(reset) are returned for O(node); with O(nodes), each node's are
      under RV(nodes).
  returned: with O(node)
  type: str
nodes:
  description: With O(nodes), each node's result (RV(node), RV(states), RV(status), ...) by node name; a node whose write
    failed is not in it.
  returned: with O(nodes)
  type: dict
  sample: {"gpu-node-01": {"node": "gpu-node-01", "changed": true, "status": {"gpu-tuning": "waiting"}}}
failed_nodes:
  description: With O(nodes), the nodes that were not recorded (the message says why for each).
  returned: when some of O(nodes) failed
  type: list
  elements: str
states:
  description:
    - The node state per CR (after the task), keyed by package C(<name>|<version>), decoded from
      C(skyhook.nvidia.com/nodeState_<cr>). Each entry has C(name), C(version), C(image),
      C(containerSHA), C(stage), C(state) and C(restarts).
  returned: with O(node)
  type: dict
  sample: {"gpu-tuning": {"tuning|1.2.0": {"name": "tuning", "version": "1.2.0", "image": "ghcr.io/acme/tuning",
           "containerSHA": "", "stage": "config", "state": "complete", "restarts": 0}}}
status:
  description: The node status per CR (C(skyhook.nvidia.com/status_<cr>)).
  returned: with O(node)
  type: dict
  sample: {"gpu-tuning": "complete"}
versions:
  description: The operator version per CR whose formats the annotations use (C(skyhook.nvidia.com/version_<cr>)).
  returned: with O(node)
  type: dict
cordon_owners:
  description: CRs holding a NodeWright cordon on the node.
  returned: with O(node)
  type: list
  elements: str
unschedulable:
  description: Whether the node is cordoned.
  returned: with O(node)
  type: bool
ignored:
  description: Whether the node carries C(skyhook.nvidia.com/ignore=true).
  returned: with O(node)
  type: bool
taints:
  description: The node's taints after the task, as C(key=value:Effect).
  returned: with O(node)
  type: list
  elements: str
reset:
  description: The package entries (C(<name>|<version>)) that V(reset) removed or set to re-run.
  returned: when O(action=reset)
  type: list
  elements: str
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules.node_state import execute, module_args


def main():
    execute(AnsibleModule(**module_args()))


if __name__ == '__main__':
    main()
