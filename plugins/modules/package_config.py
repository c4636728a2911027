#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: package_config
short_description: Roll an edit of a package's configMap out as the NodeWright operator does
version_added: 0.2.0
author: nodewright.bridge contributors (@nodewright)
description:
  - A package's C(configMap) lives twice, in the CR and in the package ConfigMap C(<cr>-<package>-<version>) in
    the operator namespace, which the package pods mount. When the two differ, the CR was edited; this module
    rolls the edit out as the operator's C(UpsertConfigmaps) / C(HandleConfigUpdates) do.
  - The edit is applied (V(apply)) once every node the CR selects has the package complete with no package pod
    left, or at once when a node is erroring in the package's C(config), C(interrupt) or C(post-interrupt) stage
    (that node's package pod is deleted, so that it is created again with the new data). Applying it records the
    keys that are new or changed in the CR's C(status.configUpdates) (replacing the package's earlier keys when
    every node was complete), puts the package back into C(config) / C(in_progress) on every node (status
    C(in_progress)), then updates the ConfigMap. The next rollout runs the config stage again and the
    C(configInterrupts) that match the changed keys, then C(post-interrupt).
  - Until then (V(wait)) the ConfigMap keeps its old data, so a rollout under way finishes with the data it
    started with (the stage modules never change an existing package ConfigMap of a CR in the cluster). A
    package being uninstalled on any node is left alone (V(hold)); a paused or disabled CR is not looked at.
  - A version change ends an edit, as the operator's C(HandleVersionChange) ends it. The keys of a package that a node
    records at an older version (an upgrade starting) or that the CR no longer has are dropped from
    C(status.configUpdates) (RV(dropped)), so the new version's config stage runs without the earlier edit's config
    interrupts.
  - For a CR in the cluster only (C(status.configUpdates) is where the keys are kept). The apply playbook runs
    it before its rollout and plans again when it applied an edit or dropped keys; after the rollout it runs it
    again for the CRs whose edit waited (RV(waiting)) and rolls out the edits the rollout let through, so one run
    leaves the new data on the nodes, as the operator's next reconcile does.
extends_documentation_fragment:
  - nodewright.bridge.k8s_auth
options:
  cr_name:
    description: The name of the Skyhook / NodeWright CR in the cluster.
    type: str
    required: true
  namespace:
    description:
      - The operator namespace, where the package ConfigMaps and pods are.
      - Default, the operator's for the API generation (O(nodewright_api)), C(skyhook) or C(nodewright).
    type: str
attributes:
  check_mode:
    support: full
    description: Decides and reports what it would write; writes nothing.
  diff_mode:
    support: none
    description: The result lists each package's changed keys and decision; there is no diff.
notes:
  - Needs C(get) on the CR and C(patch) on its C(status), C(list) and C(patch) on nodes, C(list) on pods, and in the
    namespace C(list), C(get) and C(patch) on ConfigMaps and C(delete) on pods
    (examples/rbac/nodewright-bridge-apply.yaml grants them).
  - A node state that cannot be read fails the module, naming the node and the annotation; nothing is written.
seealso:
  - module: nodewright.bridge.rollout_plan
  - module: nodewright.bridge.package_stage
'''

EXAMPLES = r'''
- name: Roll out configMap edits of a CR before its rollout (the apply playbook does this)
  nodewright.bridge.package_config:
    cr_name: gpu-node-tuning
  register: edits

- name: Say which packages take an edit now
  ansible.builtin.debug:
    msg: "{{ edits.msg }}"
  when: edits.packages | length > 0
'''

RETURN = r'''
cr_name:
  description: The CR.
  returned: always
  type: str
packages:
  description:
    - Package name -> C(keys) (new or changed keys, sorted), C(action) (V(apply), V(wait) or V(hold)), C(why)
      and C(restart) (the nodes whose erroring package pod was replaced), for each package whose configMap
      differs from its ConfigMap.
  returned: always
  type: dict
  sample: {tuning: {keys: [sysctl.conf], action: apply, why: complete on every node, restart: []}}
dropped:
  description:
    - The packages whose C(status.configUpdates) were dropped (in check mode, would be) because a node records
      them at another version than the CR's (an upgrade starting) or the CR no longer has them, as the operator's
      C(HandleVersionChange) drops them, so that the new version's config stage runs no config interrupt of an
      earlier edit.
  returned: when a package's configUpdates were dropped
  type: list
  elements: str
  sample: [tuning]
applied:
  description: The packages whose edit was applied (in check mode, would be).
  returned: always
  type: list
  elements: str
waiting:
  description:
    - The packages whose edit waits (V(wait)) for the rollout under way to complete the package on every node.
    - The apply playbook decides these again once its rollout is done, as the operator reconciles again when a
      node's package completes, so a run that completes the package also rolls the edit out.
  returned: always
  type: list
  elements: str
  sample: [tuning]
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules.package_config import execute, module_args


def main():
    execute(AnsibleModule(**module_args()))


if __name__ == '__main__':
    main()
