#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: package_stage
short_description: Run one stage of one NodeWright package on one node, exactly as the operator would
version_added: 0.1.0
author: nodewright.bridge contributors (@nodewright)
description:
  - Runs one stage (C(uninstall), C(upgrade), C(apply), C(config) or C(post-interrupt)) of one package of a
    Skyhook / NodeWright CR on one node, with the pod the operator would create. It writes, in the
    operator's order, the package ConfigMap and the node-metadata ConfigMap, then the pod, then the node
    state C(in_progress).
  - The pod is pinned to the node and privileged, with hostPID and hostNetwork. Its init containers copy
    the package, run the agent's stage and then the agent's check; a pause container follows. The host's
    C(/) is mounted at C(/root), and the pod carries the operator's tolerations, C(SKYHOOK_*) environment,
    resources, image pull secret and gracefulShutdown.
  - Waits for the pod by watch. Every init container exiting 0 is success. A non-zero exit, or
    CrashLoopBackOff once the failing container has restarted O(stage_retries) times, is failure.
  - Records the result in C(skyhook.nvidia.com/nodeState_<cr>) in the operator's format. Success gives
    C(complete) (an upgrade also drops older versions; an uninstall drops the entry, or moves on to
    C(uninstall-interrupt)). Failure gives C(erroring) with the restart count, and C(status_<cr>) becomes
    C(erroring). Every write carries the node's resourceVersion.
  - The stage containers' logs are returned. The pod is then deleted (O(delete_pod)), by default only
    after a success, so a failed pod stays for C(kubectl skyhook package logs), as the operator leaves it.
  - Idempotent. A stage already C(complete) on the node is not run again (unless O(rerun)). A pod left
    running by an interrupted earlier run is adopted and waited for, not created twice. A pod found under
    the stage's name that is no longer the CR's (another image, version, stage, environment), that the
    node's state does not list (after C(kubectl skyhook package rerun) or C(node reset)), or that failed
    in an earlier attempt is deleted and replaced, never adopted (the C(replaced) field of RV(pod) says why).
  - Before anything is written, the pod and the node write are sent as server-side dry runs, so a missing
    namespace, an RBAC denial or an admission rejection fails the task with nothing changed.
  - Under the v0.18+ contract (O(nodewright_api) C(nodewright), or detected) the stage runs as that operator runs
    it, in a batch/v1 Job around the same pod (a C(done) container instead of pause; its labels, deadline and
    backoff limit are the operator's), watched to its verdict, marked recorded, and deleted with its pods per
    O(delete_pod). A Job left by the operator or an earlier run is adopted as a pod is.
extends_documentation_fragment:
  - nodewright.bridge.k8s_auth
  - nodewright.bridge.operator_pods
  - nodewright.bridge.operator_pods.run
  - nodewright.bridge.operator_pods.logs
options:
  stage:
    description: The stage to run.
    type: str
    required: true
    choices: [uninstall, upgrade, apply, config, post-interrupt]
attributes:
  action:
    support: full
    description: An action plugin reads a O(cr) file on the controller.
  check_mode:
    support: full
    description: Returns the pod and ConfigMaps that would be created and the node state that would be written; the pod is sent as a server-side dry run.
  diff_mode:
    support: full
    description: Shows the node's state (or its cordon) before and after.
seealso:
  - module: nodewright.bridge.node_interrupt
  - module: nodewright.bridge.rollout_plan
'''

EXAMPLES = r'''
- name: Apply the tuning package on a node
  nodewright.bridge.package_stage:
    node: gpu-node-07
    cr: files/gpu-node-tuning.yaml
    package: tuning
    stage: apply
  register: applied

- name: Show what the stage printed
  ansible.builtin.debug:
    var: applied.logs

- name: Run the config stage of the CR that is in the cluster, allowing two retries
  nodewright.bridge.package_stage:
    node: gpu-node-07
    cr_name: gpu-tuning
    package: tuning
    stage: config
    stage_retries: 2
    timeout: 900

- name: Run the apply stage again although the node records it complete
  nodewright.bridge.package_stage:
    node: gpu-node-07
    cr_name: gpu-tuning
    package: tuning
    stage: apply
    rerun: true
'''

RETURN = r'''
node:
  description: The node.
  returned: always
  type: str
package:
  description: The package name and version, C(<name>|<version>).
  returned: always
  type: str
  sample: tuning|1.2.0
stage:
  description: The stage.
  returned: always
  type: str
outcome:
  description:
    - C(succeeded), C(failed), C(timeout), C(missing) (the pod vanished), C(skipped) (already complete), C(planned)
      (check mode) or C(superseded) (the CR was edited while the stage ran and no longer asks for its pod, which was
      deleted; the task failed and the stage stays in progress for the next plan).
  returned: always
  type: str
superseded:
  description:
    - Why the CR as it is now no longer asks for the running pod (its image, command, arguments or environment, or
      the package gone). For a CR read from the cluster the pod is compared with it every 10 seconds while the stage
      runs, as the operator's reconciles compare running pods with the CR; M(nodewright.bridge.node_update) then plans
      the node again (up to three times).
    - Also, before any pod or write, when the CR's generation is no longer that of O(cr_identity) (its spec was
      edited since the node's plan).
  returned: when the outcome is superseded, or the CR changed since O(cr_identity)
  type: str
cr_replaced:
  description: The CR's uid is not that of O(cr_identity) (deleted and created again since the node's plan); nothing
    was changed and the task failed.
  returned: when the CR was replaced
  type: bool
  version_added: 0.2.0
  sample: container tuning-apply runs image ghcr.io/acme/tuning:1.2.0-bad, the CR asks for ghcr.io/acme/tuning:1.2.0
entry:
  description: The package's node state entry after the task (absent after a completed uninstall).
  returned: always
  type: dict
  sample: {"name": "tuning", "version": "1.2.0", "image": "ghcr.io/acme/tuning", "containerSHA": "", "stage": "apply",
           "state": "complete", "restarts": 0}
pod:
  description:
    - The pod, with C(name), C(namespace), C(uid), C(adopted) (left by an earlier run), C(deleted) and C(replaced)
      (why a pod found under its name was deleted and a new one created, or null).
    - Under the v0.18+ contract, the Job, with C(kind) C(Job) and C(job_pod), its pod the verdict or logs came from.
  returned: unless the outcome is C(skipped)
  type: dict
manifest:
  description: The pod manifest (under the v0.18+ contract, the Job's).
  returned: in check mode
  type: dict
configmaps:
  description: The ConfigMaps, by name, with what happened to them (C(created), C(updated), C(unchanged), or in check mode C(planned)).
  returned: unless the outcome is C(skipped)
  type: dict
logs:
  description: The last O(log_lines) lines of each init container that ran, by container name.
  returned: when the pod ran (with O(collect_logs=on_failure), when it failed)
  type: dict
logs_unavailable:
  description: Containers whose logs could not be read, with the reason.
  returned: when the pod ran
  type: dict
container:
  description: The init container that failed.
  returned: on failure
  type: str
exit_code:
  description: Its exit code.
  returned: on failure
  type: int
restarts:
  description: Its restart count.
  returned: when the pod ran
  type: int
duration:
  description: Seconds the task took.
  returned: always
  type: float
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules.package_stage import execute, module_args


def main():
    execute(AnsibleModule(**module_args()))


if __name__ == '__main__':
    main()
