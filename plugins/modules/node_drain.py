#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: node_drain
short_description: Drain a node through the Eviction API, as the NodeWright operator does
version_added: 0.1.0
author: nodewright.bridge contributors (@nodewright)
description:
  - Evicts the pods of a node through the policy/v1 Eviction API, all at once, so that
    PodDisruptionBudgets are respected. An eviction refused by a PDB (HTTP 429) is retried with
    backoff until O(timeout); then the task fails and names the PDB that blocks each pod.
  - Skips the pods the operator skips (DaemonSet pods, pods tolerating
    C(node.kubernetes.io/unschedulable), C(kube-system) pods, pods that are not Running or
    Pending) and mirror (static) pods; each rule can be switched off with O(skip).
  - Waits until the evicted pods are gone, tracked by UID, so a replacement that comes back under
    the same name (a StatefulSet pod) does not count as the evicted pod still being there.
  - With O(wait_for) (the CR's C(podNonInterruptLabels)), first waits until no matching pod is
    Running or Pending on the node, and never evicts such pods.
  - Cordon the node first (M(nodewright.bridge.node_cordon)), or evicted pods may be scheduled
    back onto it; the module warns when the node is schedulable.
extends_documentation_fragment:
  - nodewright.bridge.k8s_auth
options:
  node:
    description:
      - The node to drain.
      - O(name) is a deprecated alias (removed in 2.0.0).
    type: str
    required: true
    aliases: [name]
  timeout:
    description:
      - Seconds for the evictions and for the evicted pods to be gone, counted from the first eviction.
    type: int
    default: 300
  pod_selector:
    description:
      - Drain only the pods matching this label selector (a string such as C(app=web,tier!=db), or a
        LabelSelector dictionary with C(matchLabels) / C(matchExpressions)).
    type: raw
  wait_for:
    description:
      - A label selector (string or LabelSelector dictionary), normally the CR's C(podNonInterruptLabels).
        Before anything is evicted, wait until no pod on the node that matches it is Running or Pending.
        Matching pods are never evicted.
    type: raw
  wait_for_timeout:
    description: Seconds to wait for the O(wait_for) pods to finish.
    type: int
    default: 3600
  hold_for:
    description:
      - The name of a NodeWright CR this drain is for. After the wait for the O(wait_for) pods and before the first
        eviction, the CR is read in the cluster (one GET) and nothing is evicted when it is paused or disabled, or when
        the node carries C(skyhook.nvidia.com/ignore=true); the task then fails with RV(held) set to V(paused),
        V(disabled) or V(ignored). A CR that is not in the cluster holds nothing. M(nodewright.bridge.node_update) sets it.
    type: str
  preflight:
    description:
      - Before evicting anything, evict every pod as a server-side dry run; if a PDB would refuse any of
        them, fail without evicting a single pod.
      - In check mode the dry run always runs and its result is returned.
    type: bool
    default: false
  disable_eviction:
    description:
      - Delete the pods instead of evicting them, which B(ignores PodDisruptionBudgets). An explicit
        escalation for a node that must go down; off by default.
    type: bool
    default: false
  grace_period:
    description:
      - Termination grace period in seconds for the evicted or deleted pods. Default is each pod's own.
    type: int
  skip:
    description: Which pods are left alone. Every rule is on by default.
    type: dict
    default: {}
    suboptions:
      daemonsets:
        description: Pods owned by a DaemonSet.
        type: bool
        default: true
      mirror_pods:
        description: Mirror pods of static pods (annotation C(kubernetes.io/config.mirror)); the kubelet recreates them at once.
        type: bool
        default: true
      finished:
        description: Pods in phase Succeeded or Failed.
        type: bool
        default: true
      unknown_phase:
        description: Pods in phase Unknown (or with no phase).
        type: bool
        default: true
      unschedulable_tolerant:
        description: Pods with a toleration for C(node.kubernetes.io/unschedulable); they would land on the cordoned node again.
        type: bool
        default: true
      kube_system:
        description: Pods in the C(kube-system) namespace.
        type: bool
        default: true
attributes:
  check_mode:
    support: full
    description: Lists what would be evicted and skipped, and runs the dry-run preflight.
  diff_mode:
    support: none
    description: Pods are evicted, not edited; the result lists them instead.
notes:
  - The skip rules follow the operator's code (C(ShouldEvict)), plus mirror pods; unlike C(kubectl drain),
    pods without a controller and pods with C(emptyDir) volumes are evicted without extra flags.
    See docs/semantics.md.
seealso:
  - module: nodewright.bridge.node_cordon
  - module: kubernetes.core.k8s_drain
'''

EXAMPLES = r'''
- name: Drain a GPU node, waiting for training jobs to finish first
  nodewright.bridge.node_drain:
    node: gpu-node-07
    wait_for:
      matchLabels:
        workload: training
    wait_for_timeout: 7200
    timeout: 600

- name: Refuse to start if any PDB would block
  nodewright.bridge.node_drain:
    node: gpu-node-07
    preflight: true

- name: Drain only the inference pods, leaving kube-system alone (the default)
  nodewright.bridge.node_drain:
    node: gpu-node-07
    pod_selector: app in (triton, vllm)
'''

RETURN = r'''
node:
  description: The node's name.
  returned: always
  type: str
pods:
  description:
    - One entry per pod that was on the node, with C(namespace), C(name), C(uid), C(action)
      (C(evicted), C(deleted), C(gone) if it vanished by itself, C(skipped), C(blocked), or in check
      mode C(would-evict)), C(reason), C(pdbs) (the PDBs that refused the eviction, described), C(attempts),
      and C(started) / C(finished) (seconds from the start of the task).
  returned: always
  type: list
  elements: dict
  sample: [{"namespace": "ml", "name": "web-0", "uid": "1f...", "action": "evicted", "reason": "evictable",
            "pdbs": [], "attempts": 1, "started": 0.02, "finished": 3.4}]
evicted:
  description: How many pods were evicted (or deleted with O(disable_eviction)).
  returned: always
  type: int
skipped:
  description: How many pods were left alone by the skip rules, O(pod_selector) or O(wait_for).
  returned: always
  type: int
preflight:
  description: The dry-run result, C(ok) and C(blocked) (pods with the PDBs that would refuse them).
  returned: when O(preflight=true) or in check mode
  type: dict
protected_wait:
  description: Seconds spent waiting for the O(wait_for) pods.
  returned: always
  type: float
held:
  description:
    - V(paused), V(disabled) or V(ignored) when O(hold_for) found its CR paused or disabled, or the node ignored,
      and nothing was evicted (the task failed).
  returned: when held
  type: str
  sample: paused
duration:
  description: Seconds the task took.
  returned: always
  type: float
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules.node_drain import execute, module_args


def main():
    execute(AnsibleModule(**module_args()))


if __name__ == '__main__':
    main()
