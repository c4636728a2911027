#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: cr_finalize
short_description: Finish the deletion of a NodeWright CR that the operator's finalizer holds, as the operator does
version_added: 0.2.0
author: nodewright.bridge contributors (@nodewright)
description:
  - A C(kubectl delete) of a Skyhook / NodeWright CR that carries the operator's finalizer
    (C(skyhook.nvidia.com/skyhook)) only marks it deleted; the operator's C(HandleFinalizer) then finishes the job.
    Without an operator, this module does, one step per run, as the operator does per reconcile.
  - While a package with C(uninstall.enabled) is still in a node's state, the deletion waits (V(wait)); the apply
    playbook uninstalls those packages first (a CR being deleted uninstalls them, as the operator's finalizer case
    does) and runs this module at its end.
  - The deletion is blocked (V(blocked)) while the CR is paused or disabled with such packages pending, or when a
    node's state cannot be read; the CR's status then carries the condition C(DeletionBlocked) (reasons
    C(PausedWithPendingUninstall), C(DisabledWithPendingUninstall), C(MalformedNodeState)) and a Warning Event
    C(DeletionBlocked) is written on the CR, with the operator's messages.
  - Once nothing is pending (V(finalize)), every node the CR selects loses what the CR wrote on it (its cordon when the
    CR holds it, never one someone else owns; its annotations and labels; its node conditions; the node state stays
    while it still lists packages) and the finalizer is removed, so the API server deletes the CR.
  - A CR that is not being deleted, or that carries no such finalizer, is left alone (V(none)), unless
    O(add_finalizer) asks for the finalizer (V(added)), as the operator's first reconcile adds it. The apply playbook
    adds it only when C(nodewright_add_finalizer) is true; with the finalizer every C(kubectl delete) waits for the
    next run (docs/semantics.md).
extends_documentation_fragment:
  - nodewright.bridge.k8s_auth
options:
  cr_name:
    description: The name of the Skyhook / NodeWright CR in the cluster.
    type: str
    required: true
  add_finalizer:
    description:
      - Add the operator's finalizer (C(skyhook.nvidia.com/skyhook)) to the CR when it is not being deleted and lacks it.
        A C(kubectl delete) then only marks the CR deleted, and a later run of this module uninstalls nothing itself
        but finishes the deletion once the apply playbook has uninstalled the packages with C(uninstall.enabled).
      - Use it where runs come often (a schedule, a loop, an operator-like runner); without one, every delete waits.
    type: bool
    default: false
attributes:
  check_mode:
    support: full
    description: Decides and reports what it would write; writes nothing.
  diff_mode:
    support: none
    description: The result lists what it wrote (cleaned nodes, the finalizer); there is no diff.
notes:
  - Needs C(get) and C(patch) on the CR, C(patch) on its C(status), C(list) and C(patch) on nodes and C(nodes/status),
    and C(create) on events in C(default) (examples/rbac/nodewright-bridge-apply.yaml grants them).
seealso:
  - module: nodewright.bridge.cr_status
  - module: nodewright.bridge.node_state
'''

EXAMPLES = r'''
- name: Finish the deletion of a CR after kubectl delete (the apply playbook does this at its end)
  nodewright.bridge.cr_finalize:
    cr_name: gpu-node-tuning
  register: finalized

- name: Hold kubectl delete of the CR until a run uninstalled its uninstall-enabled packages
  nodewright.bridge.cr_finalize:
    cr_name: gpu-node-tuning
    add_finalizer: true

- name: Say why the CR is still there
  ansible.builtin.debug:
    msg: "{{ finalized.msg }}"
  when: finalized.action in ['wait', 'blocked']
'''

RETURN = r'''
cr_name:
  description: The CR.
  returned: always
  type: str
action:
  description: V(none) (not being deleted), V(added) (the finalizer added, O(add_finalizer)), V(wait) (uninstall
    pending), V(blocked) (DeletionBlocked) or V(finalize) (the nodes cleaned up and the finalizer removed).
  returned: always
  type: str
pending:
  description: The packages with C(uninstall.enabled) still in a node's state, as C({node, package}) (C(name|version)).
  returned: unless action is none
  type: list
  elements: dict
malformed:
  description: The nodes whose state for the CR cannot be read.
  returned: unless action is none
  type: list
  elements: str
cleaned:
  description: The nodes the finalization wrote to.
  returned: unless action is none
  type: list
  elements: str
finalizer_removed:
  description: Whether the finalizer was removed (the API server then deletes the CR).
  returned: unless action is none
  type: bool
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules.cr_finalize import execute, module_args


def main():
    execute(AnsibleModule(**module_args()))


if __name__ == '__main__':
    main()
