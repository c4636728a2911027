#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: node_cordon
short_description: Cordon or uncordon a node on behalf of a NodeWright CR, as the operator does
version_added: 0.1.0
author: nodewright.bridge contributors (@nodewright)
description:
  - Cordons a node (C(spec.unschedulable=true)) and records the cordon as the NodeWright
    operator does, with the annotation C(skyhook.nvidia.com/cordon_<cr_name>=true).
  - Uncordoning removes only the owner's annotation. The node becomes schedulable again only
    if this owner held the cordon and no other owner still holds one. A node that was already
    cordoned by someone else (for example C(kubectl cordon)) when the owner cordoned it stays
    cordoned, and the result says so.
  - Every write carries the node's resourceVersion, so concurrent writers never lose changes.
extends_documentation_fragment:
  - nodewright.bridge.k8s_auth
options:
  node:
    description:
      - The node.
      - O(name) is a deprecated alias (removed in 2.0.0).
    type: str
    required: true
    aliases: [name]
  cr_name:
    description:
      - The name of the Skyhook / NodeWright CR on whose behalf the node is cordoned (the cordon's owner).
      - O(owner) is a deprecated alias (removed in 2.0.0).
    type: str
    required: true
    aliases: [owner]
  state:
    description:
      - V(cordoned) holds a cordon for O(cr_name); V(uncordoned) releases it.
    type: str
    choices: [cordoned, uncordoned]
    default: cordoned
  take_over:
    description:
      - Set when the CR's records say it was in the middle of rolling the node (its status for the node,
        on the node or in the CR's C(status.nodeStatus), is C(in_progress) or C(erroring)); M(nodewright.bridge.node_update)
        sets it from its plan. An unowned cordon found then is taken to be the CR's own cordon whose
        annotation was dropped (C(kubectl skyhook reset) removes C(cordon_<cr>)); the CR holds it again, and
        releasing it makes the node schedulable, as the operator's uncordon would.
      - Never when the node carries the CR's inherited marker (the cordon was someone else's before the CR
        cordoned the node), nor when another CR holds a cordon.
    type: bool
    default: false
  hold:
    description:
      - With O(state=cordoned), read the CR O(cr_name) in the cluster first (one GET), and take no cordon when it is paused
        or disabled (C(skyhook.nvidia.com/pause), C(/disable)) or the node carries C(skyhook.nvidia.com/ignore=true), as
        the operator starts nothing then. The task then fails with RV(held) set to V(paused), V(disabled) or V(ignored)
        and a message naming the annotation and the CLI command that lifts it. A CR that is not in the cluster holds
        nothing. M(nodewright.bridge.node_update) sets it.
    type: bool
    default: false
attributes:
  check_mode:
    support: full
    description: The change is sent to the API server as a dry run, so RBAC and admission are checked too.
  diff_mode:
    support: full
    description: Shows the node's state (or its cordon) before and after.
notes:
  - When the node was already unschedulable and no NodeWright owner held it, the cordon is
    recorded as inherited (annotation C(bridge.nodewright.io/cordon-inherited_<cr_name>)), so that
    releasing it leaves the node as it was found.
  - The inherited marker is dropped when the CR cordons a node that is schedulable (someone lifted their
    cordon in between), so a stale marker never keeps the node cordoned at the CR's uncordon.
seealso:
  - module: nodewright.bridge.node_drain
'''

EXAMPLES = r'''
- name: Cordon the node for the gpu-tuning CR
  nodewright.bridge.node_cordon:
    node: gpu-node-07
    cr_name: gpu-tuning
    state: cordoned

- name: Release the cordon (the node stays cordoned if someone else cordoned it)
  nodewright.bridge.node_cordon:
    node: gpu-node-07
    cr_name: gpu-tuning
    state: uncordoned
    kubeconfig: ~/.kube/prod-gpu
  register: released

- name: Report a node that stays cordoned
  ansible.builtin.debug:
    msg: "{{ released.message }}"
  when: released.unschedulable
'''

RETURN = r'''
node:
  description: The node's name.
  returned: always
  type: str
  sample: gpu-node-07
unschedulable:
  description: Whether the node is unschedulable after the task (in check mode, would be).
  returned: always
  type: bool
owners:
  description: NodeWright owners holding a cordon on the node after the task.
  returned: always
  type: list
  elements: str
  sample: [gpu-tuning]
held:
  description:
    - Whether O(cr_name) holds a cordon on the node after the task.
    - When O(hold) refused the cordon, why, as the pod modules say it (the task failed, nothing was changed).
  returned: always
  type: raw
  sample: true
inherited:
  description: Whether the owner's cordon was inherited from a cordon that was already there.
  returned: always
  type: bool
message:
  description: What happened, in words; says why a node stays cordoned.
  returned: always
  type: str
  sample: node gpu-node-07 stays cordoned; it was cordoned by someone else before gpu-tuning cordoned it
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules.node_cordon import execute, module_args


def main():
    execute(AnsibleModule(**module_args()))


if __name__ == '__main__':
    main()
