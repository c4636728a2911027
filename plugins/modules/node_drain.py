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
    Running or Pending on the node, and never evicts such pods. A pod annotated
    C(bridge.nodewright.io/non-interruptible=true) is protected the same way, with or without O(wait_for) (any value
    other than C(true) or C(false) protects it too, with a warning). The NodeWright operator does not read that
    annotation.
  - While it waits, the node carries C(bridge.nodewright.io/protected-wait_<cr>) (JSON - C(since), C(pods), C(parked);
    C(since) is kept across runs), from which M(nodewright.bridge.cr_status) sets the CR's C(Blocked) condition with
    reason C(NonInterruptPodsRunning), as the operator does; a Warning Event C(Drain) goes on the node and on the CR when
    the wait starts, and a Normal one when it ends. The annotation goes when the wait ends.
  - Cordon the node first (M(nodewright.bridge.node_cordon)), or evicted pods may be scheduled
    back onto it; the module warns when the node is schedulable.
  - With O(drain_config) (a NodeWright's C(spec.drainConfig); M(nodewright.bridge.node_update) passes it), drains as
    the v0.19/v0.20 operator does. A pod without a controller (C(force=false)) or with an C(emptyDir) volume
    (C(deleteEmptyDirData=false)) is never evicted and blocks the drain until it leaves the node; C(disableEviction)
    deletes instead of evicting, C(gracePeriod) is the grace period, C(ignoreDaemonSets) the O(skip.daemonsets) rule,
    and a pod counts as tolerating the cordon by Kubernetes' own toleration matching. Under the
    C(nodewright.nvidia.com) generation the node then carries C(nodewright.nvidia.com/drainStart_<cr>) (when the drain
    started, RFC 3339) and, while something holds the drain, C(nodewright.nvidia.com/drainBlocked_<cr>) (the blocking
    pods, as the operator records them for the CR's C(DrainBlocked) condition); both go once the node has drained.
    C(timeout) counts from that drain start, across runs.
extends_documentation_fragment:
  - nodewright.bridge.k8s_auth
  - nodewright.bridge.park
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
      - With O(drain_config), its C(timeout) (counted from the node's drain start) ends the drain too, whichever comes
        first; once it has passed, nothing more is evicted and the task fails with RV(drain_timed_out).
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
    description:
      - Seconds to wait for the O(wait_for) pods (and pods annotated C(bridge.nodewright.io/non-interruptible=true)) to
        finish; past it the task fails, nothing evicted, and the node keeps its cordon and its wait record.
    type: int
    default: 3600
  hold_for:
    description:
      - The name of a NodeWright CR this drain is for. After the wait for the O(wait_for) pods and before the first
        eviction, the CR is read in the cluster (one GET) and nothing is evicted when it is paused or disabled, or when
        the node carries C(skyhook.nvidia.com/ignore=true); the task then fails with RV(held) set to V(paused),
        V(disabled) or V(ignored). A CR that is not in the cluster holds nothing. M(nodewright.bridge.node_update) sets it.
    type: str
  cr_name:
    description:
      - The CR whose C(drainStart_) and C(drainBlocked_) annotations the node carries (with O(drain_config), under the
        C(nodewright.nvidia.com) generation). Default O(hold_for).
    type: str
  drain_config:
    description:
      - A NodeWright's C(spec.drainConfig) (C(disableEviction), C(deleteEmptyDirData), C(force), C(ignoreDaemonSets),
        C(timeout), C(gracePeriod); unset fields take the operator's defaults false, true, true, true, none, each pod's
        own). See the description. An option given explicitly (O(disable_eviction), O(grace_period),
        O(skip.daemonsets)) wins over the field it overlaps.
    type: dict
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
        escalation for a node that must go down.
      - Unset, O(drain_config)'s C(disableEviction) decides (false without it).
    type: bool
  grace_period:
    description:
      - Termination grace period in seconds for the evicted or deleted pods. Default is O(drain_config)'s
        C(gracePeriod) (rounded up to seconds), else each pod's own.
    type: int
  skip:
    description: Which pods are left alone. Every rule is on by default.
    type: dict
    default: {}
    suboptions:
      daemonsets:
        description:
          - Pods owned by a DaemonSet.
          - Unset, O(drain_config)'s C(ignoreDaemonSets) decides (true without it).
        type: bool
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
    pods without a controller and pods with C(emptyDir) volumes are evicted without extra flags (with O(drain_config),
    as its C(force) and C(deleteEmptyDirData) say). See docs/semantics.md.
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

- name: Drain as a NodeWright's spec.drainConfig says (unmanaged pods block; pods are deleted, not evicted)
  nodewright.bridge.node_drain:
    node: gpu-node-07
    cr_name: gpu-driver
    drain_config:
      force: false
      disableEviction: true
      gracePeriod: 30s
      timeout: 10m

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
    - A pod O(drain_config) keeps (never evicted) has C(action=blocked) (C(gone) once it left), C(reason)
      C(unmanaged) or C(emptydir) and C(block) C(UnmanagedPod) or C(EmptyDirData).
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
parked:
  description: Whether the node gave its batch slot back while it waited for its protected pods (O(park)).
  returned: always
  type: bool
drain_blocked:
  description:
    - What holds the drain, as the operator records it in C(drainBlocked_<cr>) - C(namespace), C(name), C(reason)
      (C(UnmanagedPod), C(EmptyDirData), C(PodDisruptionBudget)) and, for a PDB, C(detail) (the API server's words).
      Empty once the node has drained.
  returned: with O(drain_config)
  type: list
  elements: dict
  sample: [{"namespace": "ml", "name": "web-0", "reason": "PodDisruptionBudget",
            "detail": "The disruption budget web needs 2 healthy pods and has 2 currently"}]
drain_timed_out:
  description: O(drain_config)'s C(timeout) ended the drain (the operator's C(DrainTimeout)); the task failed.
  returned: when it did
  type: bool
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
