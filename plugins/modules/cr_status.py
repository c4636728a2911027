#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: cr_status
short_description: Write a NodeWright CR's status from its nodes, as the operator keeps it
version_added: 0.2.0
author: nodewright.bridge contributors (@nodewright)
description:
  - Reads a Skyhook / NodeWright CR from the cluster, its DeploymentPolicy and the nodes it selects, and
    writes the CR's C(status) subresource the way the NodeWright operator does, so that C(kubectl get skyhooks)
    (Status, Nodes In-Progress, Complete Nodes, Packages), C(kubectl wait --for=condition=Ready), the operator's
    kubectl plugin and GitOps health checks read the rollout whichever of the two ran it.
  - The nodes' annotations are the source of truth (C(nodeState_<cr>), C(status_<cr>)); the status is derived
    from them. Written fields C(status), C(nodeState), C(nodeStatus), C(completeNodes), C(nodesInProgress),
    C(packageList), C(observedGeneration) (on each transition into C(complete)), C(compartmentStatuses) (counts;
    the batch state is kept, and reset to C(currentBatch=1) on completion when C(resetBatchStateOnCompletion)
    says so) and the conditions C(Ready) (with its C(skyhook.nvidia.com/Ready) twin), C(NodesIgnored),
    C(NodeStateMalformed) and C(DeploymentPolicyNotFound). Conditions it does not own are kept.
  - One JSON merge patch, sent only when something changed, guarded by the CR's resourceVersion; a conflict
    is computed again on fresh reads. M(nodewright.bridge.node_update) keeps the status current on every node
    transition; the apply, reset and uninstall playbooks run this module at their end.
  - A CR given only as a file has no status to write; run the module with the name of a CR in the cluster.
extends_documentation_fragment:
  - nodewright.bridge.k8s_auth
options:
  cr_name:
    description: The name of the Skyhook / NodeWright CR in the cluster.
    type: str
    required: true
  fail_on_refusal:
    description:
      - Fail when the API server refuses the write (403). By default a refusal is a warning naming the missing
        permission (C(patch) on C(skyhooks/status)), and the play goes on.
    type: bool
    default: false
  waiting_for:
    description:
      - The earlier CRs with C(sequencing) V(all) that are not complete on every node. While there is one, the CR's
        C(status.status) is V(waiting) unless it is complete, paused, disabled or its policy is missing, as the operator's
        C(isBlockedByGlobalPredecessor) says, whatever its nodes last recorded. The apply playbook passes its run's
        decision.
    type: list
    elements: str
    default: []
attributes:
  check_mode:
    support: full
    description: Computes the status and reports whether it would change; writes nothing.
  diff_mode:
    support: full
    description: Shows the fields the collection keeps, before and after.
notes:
  - Needs C(get) on the CR, its DeploymentPolicy and C(list) on nodes, and C(patch) on C(skyhooks/status)
    (examples/rbac/nodewright-bridge-apply.yaml grants it).
seealso:
  - module: nodewright.bridge.node_update
  - module: nodewright.bridge.rollout_plan
'''

EXAMPLES = r'''
- name: Write the CR's status from its nodes (after a rollout, or after kubectl skyhook reset)
  nodewright.bridge.cr_status:
    cr_name: gpu-node-tuning
  register: cr

- name: Show the rollout as kubectl get skyhooks does
  ansible.builtin.debug:
    msg: "{{ cr.status.status }}: {{ cr.status.completeNodes }} nodes complete, {{ cr.status.nodesInProgress }} in progress"
'''

RETURN = r'''
cr_name:
  description: The CR.
  returned: always
  type: str
written:
  description: Whether a status write was sent (false in check mode, when nothing changed, or when it was refused).
  returned: always
  type: bool
status:
  description: The fields of the status the collection keeps, as they are after the run (null fields left out).
  returned: unless the write was refused
  type: dict
  sample:
    status: complete
    completeNodes: 3/3
    nodesInProgress: 0
    packageList: "gpu-driver:550.1.0,nccl-tuning:1.4.0"
    observedGeneration: 2
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules.cr_status import execute, module_args


def main():
    execute(AnsibleModule(**module_args()))


if __name__ == '__main__':
    main()
