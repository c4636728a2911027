# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
name: uninstall_apply
short_description: Set uninstall.apply on some packages of NodeWright CR documents
version_added: 0.1.0
author: nodewright.bridge contributors (@nodewright)
description:
  - Internal to the collection's playbooks (nodewright.bridge.uninstall), not a stable interface; it may change in any
    release (the collection's C(docs/versioning.md)).
  - Returns copies of the documents in which every package named in O(packages) has C(uninstall.enabled) and
    C(uninstall.apply) set to true. Other documents (DeploymentPolicies) and packages are returned as they are.
  - Used by the C(nodewright.bridge.uninstall) playbook; the CR in the cluster or the file is not changed.
positional: packages
options:
  _input:
    description: The documents (CRs and policies).
    type: list
    elements: dict
    required: true
  packages:
    description: The package names to uninstall.
    type: list
    elements: str
    required: true
'''

EXAMPLES = r'''
- name: Uninstall nccl-tuning with the next apply
  ansible.builtin.set_fact:
    docs: "{{ docs | nodewright.bridge.uninstall_apply(['nccl-tuning']) }}"
'''

RETURN = r'''
_value:
  description: The documents, changed.
  type: list
  elements: dict
'''

import copy

from ansible_collections.nodewright.bridge.plugins.module_utils.model.cr_model import has_cr_kind


def uninstall_apply(docs, packages):
    wanted = set(packages or [])
    result = []
    for doc in docs or []:
        doc = copy.deepcopy(doc)
        if has_cr_kind(doc):
            for key, pkg in ((doc.get('spec') or {}).get('packages') or {}).items():
                if key in wanted and isinstance(pkg, dict):
                    uninstall = dict(pkg.get('uninstall') or {})
                    uninstall.update(enabled=True, apply=True)
                    pkg['uninstall'] = uninstall
        result.append(doc)
    return result


class FilterModule(object):

    def filters(self):
        return {'uninstall_apply': uninstall_apply}
