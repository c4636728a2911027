#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: node_interrupt
short_description: Interrupt a node (reboot, restart services) through the NodeWright operator's interrupt pod
version_added: 0.1.0
author: nodewright.bridge contributors (@nodewright)
description:
  - Runs a package's interrupt on a node with the pod the NodeWright operator would create. Interrupts are
    C(reboot), C(service) (restart a list of services), C(restartAllServices) and C(noop). The agent's
    C(interrupt) container gets the interrupt as base64 JSON.
  - For a C(reboot), also waits until the node reports a new C(status.nodeInfo.bootID) and is Ready again.
    The boot ID seen before the interrupt is recorded on the node, so a run interrupted during the reboot
    and started again knows that the reboot has already happened.
  - Writes the node state as the operator does. The carrier package becomes C(in_progress) at stage
    C(interrupt), then C(complete). Packages whose interrupts were merged into this one (O(covered)) are
    recorded C(skipped) and then C(complete), as the operator's ProgressSkipped does. A failure, or a node
    that does not come back in time, is recorded as C(erroring), and C(status_<cr>) becomes C(erroring).
  - Under the v0.18+ contract (O(nodewright_api) C(nodewright), or detected) the interrupt runs in a batch/v1 Job
    around the same pod, as that operator runs it; its pod is watched and judged as the bare pod is.
  - Does not cordon, drain or uncordon. Use M(nodewright.bridge.node_cordon) and M(nodewright.bridge.node_drain)
    first; a node that does not come back stays cordoned.
extends_documentation_fragment:
  - nodewright.bridge.k8s_auth
  - nodewright.bridge.operator_pods
  - nodewright.bridge.operator_pods.run
  - nodewright.bridge.operator_pods.logs
options:
  stage:
    description: C(interrupt), or C(uninstall-interrupt) to finish an uninstall.
    type: str
    choices: [interrupt, uninstall-interrupt]
    default: interrupt
  interrupt:
    description:
      - The interrupt to run instead of the package's own, for example the merged interrupt that
        M(nodewright.bridge.rollout_plan) returns for a node.
    type: dict
    suboptions:
      type:
        description: The interrupt type.
        type: str
        required: true
        choices: [reboot, service, restartAllServices, noop]
      services:
        description: The services to restart for O(interrupt.type=service).
        type: list
        elements: str
  covered:
    description: Packages whose own interrupts this one covers (merged into it).
    type: list
    elements: str
    default: []
attributes:
  action:
    support: full
    description: An action plugin reads a O(cr) file on the controller.
  check_mode:
    support: full
    description: Returns the interrupt pod that would be created; the pod is sent as a server-side dry run.
  diff_mode:
    support: full
    description: Shows the node's state (or its cordon) before and after.
seealso:
  - module: nodewright.bridge.package_stage
  - module: nodewright.bridge.node_drain
'''

EXAMPLES = r'''
- name: Reboot the node for the tuning package and wait for it to come back
  nodewright.bridge.node_interrupt:
    node: gpu-node-07
    cr_name: gpu-tuning
    package: tuning
    timeout: 1200
  register: reboot

- name: Restart services for the merged interrupt of two packages
  nodewright.bridge.node_interrupt:
    node: gpu-node-07
    cr: files/gpu-node-tuning.yaml
    package: containerd-config
    covered: [kubelet-config]
    interrupt:
      type: service
      services: [containerd, kubelet]
'''

RETURN = r'''
node:
  description: The node.
  returned: always
  type: str
package:
  description: The carrier package, C(<name>|<version>).
  returned: always
  type: str
interrupt:
  description: The interrupt that ran, C(type) and C(services).
  returned: always
  type: dict
outcome:
  description: C(succeeded), C(failed), C(timeout), C(not-back) (a reboot whose node did not return in time), C(skipped) or C(planned).
  returned: always
  type: str
superseded:
  description: The CR's generation is no longer that of O(cr_identity) (its spec was edited since the node's plan);
    no pod started, nothing was written and the task failed (M(nodewright.bridge.node_update) plans the node again).
  returned: when the CR changed since O(cr_identity)
  type: str
  version_added: 0.2.0
cr_replaced:
  description: The CR's uid is not that of O(cr_identity) (deleted and created again since the node's plan); nothing
    was changed and the task failed.
  returned: when the CR was replaced
  type: bool
  version_added: 0.2.0
rebooted:
  description: For a reboot, whether the node came back with a new boot ID.
  returned: when the interrupt is a reboot
  type: bool
boot_id_before:
  description: The node's boot ID before the interrupt.
  returned: when the pod ran
  type: str
boot_id_after:
  description: The node's boot ID after the interrupt.
  returned: when the pod ran
  type: str
entry:
  description: The carrier's node state entry after the task.
  returned: always
  type: dict
pod:
  description:
    - The interrupt pod, with C(name), C(namespace), C(uid), C(adopted), C(deleted) and C(replaced) (why a pod
      found under its name was deleted instead of adopted, or null).
    - Under the v0.18+ contract, the Job, with C(kind) C(Job) and C(job_pod), its pod.
  returned: when the pod ran (with O(collect_logs=on_failure), when it failed)
  type: dict
manifest:
  description: The pod manifest (under the v0.18+ contract, the Job's).
  returned: in check mode
  type: dict
logs:
  description: The interrupt container's log.
  returned: when the pod ran
  type: dict
duration:
  description: Seconds the task took.
  returned: always
  type: float
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules.node_interrupt import execute, module_args


def main():
    execute(AnsibleModule(**module_args()))


if __name__ == '__main__':
    main()
