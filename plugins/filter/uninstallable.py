# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
name: uninstallable
short_description: The packages of NodeWright CRs that may be uninstalled
version_added: 0.1.0
author: nodewright.bridge contributors (@nodewright)
description:
  - Internal to the collection's playbooks (nodewright.bridge.uninstall), not a stable interface; it may change in any
    release (the collection's C(docs/versioning.md)).
  - The names of the packages that have C(uninstall.enabled) true in at least one C(Skyhook) or C(NodeWright)
    document, sorted. The operator's webhook refuses C(uninstall.apply) on any other package.
options:
  _input:
    description: The documents (CRs and policies).
    type: list
    elements: dict
    required: true
'''

EXAMPLES = r'''
- name: Refuse a package that may not be uninstalled
  ansible.builtin.assert:
    that: "'nccl-tuning' in docs | nodewright.bridge.uninstallable"
'''

RETURN = r'''
_value:
  description: The package names.
  type: list
  elements: str
'''

from ansible_collections.nodewright.bridge.plugins.module_utils.model.cr_model import has_cr_kind


def uninstallable(docs):
    names = set()
    for doc in docs or []:
        if has_cr_kind(doc):
            for key, pkg in ((doc.get('spec') or {}).get('packages') or {}).items():
                if isinstance(pkg, dict) and (pkg.get('uninstall') or {}).get('enabled'):
                    names.add(key)
    return sorted(names)


class FilterModule(object):

    def filters(self):
        return {'uninstallable': uninstallable}
