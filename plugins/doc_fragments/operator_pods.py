# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""Options of the modules that run the operator's package and interrupt pods.

DOCUMENTATION: the operator's own settings for its pods (its environment: NAMESPACE, AGENT_IMAGE,
...), so that the pods the collection creates are the operator's, byte for byte (module_utils/contract/pod_layout).
RUN: one recorded pod run (module_utils/api/pod_run.RUN_OPTIONS): the node, the CR, the package and
how the pod is waited for and cleaned up. LOGS: its logs and its preflight.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):

    DOCUMENTATION = r'''
options:
  namespace:
    description:
      - Namespace of the package and interrupt pods and of their ConfigMaps (the operator's namespace).
      - Default, the operator's for the API generation (O(nodewright_api)), C(skyhook) or C(nodewright).
    type: str
  agent_image:
    description:
      - The NodeWright agent image that runs the stage scripts (a package's C(agentImageOverride) wins).
      - Default, the operator's for the API generation, C(ghcr.io/nvidia/skyhook/agent:latest) or C(ghcr.io/nvidia/nodewright/agent:latest).
    type: str
  pause_image:
    description: Image of the pods' pause container.
    type: str
    default: registry.k8s.io/pause:3.10
  image_pull_secret:
    description: Name of an image pull secret in O(namespace) for the package and agent images.
    type: str
    default: ''
  copy_dir_root:
    description: Host directory the operator copies packages to.
    type: str
    default: /var/lib/skyhook
  agent_log_root:
    description: Host directory the agent logs to.
    type: str
    default: /var/log/skyhook
  runtime_required_taint:
    description:
      - The runtime-required taint (C(key=value:Effect)), which the pods tolerate for C(runtimeRequired) CRs.
      - Default, the operator's for the API generation, C(skyhook.nvidia.com=runtime-required:NoSchedule) or
        C(nodewright.nvidia.com=runtime-required:NoSchedule) (whose pods also tolerate the legacy one).
    type: str
'''

    RUN = r'''
options:
  node:
    description: The node the pod runs on.
    type: str
    required: true
  cr:
    description:
      - The CR, as a dictionary or the path of a YAML / JSON file on the controller (searched like M(ansible.builtin.copy)'s
        C(src)). A file may hold several documents; O(cr_name) picks the CR.
      - When omitted, the CR named O(cr_name) is read from the cluster; its uid and generation then name the package's
        copy directory and C(SKYHOOK_RESOURCE_ID) exactly as the operator's do.
    type: raw
  cr_name:
    description: The CR's name (required without O(cr)).
    type: str
  package:
    description: The package, by its key in C(spec.packages).
    type: str
    required: true
  timeout:
    description:
      - Seconds to wait for the pod to finish (for a reboot, also for the node to come back Ready with a new boot ID).
        On timeout the run is recorded C(erroring).
      - Under the v0.18+ contract (O(nodewright_api) C(nodewright)) the stage runs in a batch/v1 Job, as that
        operator runs it; this bounds the wait for the Job, whose own deadline is the package's C(stageTimeout)
        (default 1h).
    type: int
    default: 1800
  stage_retries:
    description:
      - How many times the kubelet may restart a failing container before the run counts as failed.
        V(0) fails at the first failure.
      - The same as M(nodewright.bridge.node_update)'s O(nodewright.bridge.node_update#module:stage_retries) and the
        node role's C(nodewright_stage_retries). The alias O(retries) (also an Ansible task keyword) is deprecated.
      - Under the v0.18+ contract, a package stage's Job makes a new pod for each retry instead (its
        C(backoffLimit)); an interrupt's Job restarts its container in place, as a pod does.
    type: int
    default: 0
    aliases: [retries]
  delete_pod:
    description:
      - When to delete the pod after the verdict. V(on_success) (the default) keeps a failed pod, as the
        operator does, so C(kubectl skyhook package logs) and C(kubectl logs) find it (the kubelet keeps
        restarting its failing container); the next run deletes it and makes a new attempt. V(always) never
        leaves a privileged pod retrying on the node.
      - Under the v0.18+ contract it applies to the stage's Job, deleted with its pods; a Job that is kept is
        marked recorded and its C(ttlSecondsAfterFinished) set, as the operator does (1h after success, 24h after
        failure).
    type: str
    choices: [always, on_success, never]
    default: on_success
  rerun:
    description:
      - Run the pod even if the node state says this stage is already complete (as C(kubectl skyhook package rerun)
        makes the operator run it again).
      - It does not start a pod while the CR is paused or disabled or the node ignored (resume the CR first), as the
        operator starts none.
      - The alias O(force) is deprecated (removed in 2.0.0); C(force) is the name of the operator guard's override in
        M(nodewright.bridge.node_update), M(nodewright.bridge.operator_guard) and the node role (C(nodewright_force)).
    type: bool
    default: false
    aliases: [force]
  cr_identity:
    description:
      - The uid and generation of the CR the node's plan was made with (a CR read from the cluster by O(cr_name)).
        M(nodewright.bridge.node_update) passes its plan's, so that every step acts on the CR the plan read.
      - When the CR read now has another C(metadata.generation) (its spec was edited), the task fails with
        C(superseded) before any pod starts or anything is written, and node_update plans the node again from
        the CR as it is, as the operator's next reconcile does. Another C(metadata.uid) (the CR was deleted and
        created again) fails it with C(cr_replaced); node_update then stops the node.
      - Ignored with O(cr) (a CR given as a document has no uid or generation). Unset, nothing is compared.
    type: dict
    version_added: 0.2.0
    suboptions:
      uid:
        description: C(metadata.uid) of the CR planned with.
        type: str
      generation:
        description: C(metadata.generation) of the CR planned with.
        type: int
'''

    LOGS = r'''
options:
  log_lines:
    description: How many lines of each container's log to return.
    type: int
    default: 200
  collect_logs:
    description:
      - When to read the pod's logs for the result. V(on_failure) saves the log requests of a pod that succeeded
        (M(nodewright.bridge.node_update) uses it; a failure's logs are always read, for the message).
    type: str
    choices: [always, on_failure]
    default: always
  preflight:
    description:
      - Before anything is written, look for a pod to adopt and send the pod and the node write to the API
        server as server-side dry runs, so that a missing namespace, an RBAC denial or an admission rejection
        fails the task with nothing changed.
      - V(false) keeps the adopt check and skips the dry runs. M(nodewright.bridge.node_update) does so for
        the later stages of a package (and the later interrupts) on a node once an earlier one has run there,
        because the namespace, the identity's rights and the pod's image have passed the API server already.
        A pod refused then fails its stage with at most its ConfigMaps written, and no state recorded on the node.
      - Check mode always runs the dry runs (they are what it reports).
    type: bool
    default: true
'''
