# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
name: cr_names
short_description: The names of the NodeWright CRs among some documents
version_added: 0.1.0
author: nodewright.bridge contributors (@nodewright)
description:
  - Internal to the collection's playbooks (nodewright.bridge.apply and nodewright.bridge.plan), not a stable interface; it may change in any
    release (the collection's C(docs/versioning.md)).
  - The C(metadata.name) of every C(Skyhook) or C(NodeWright) document, in file order; DeploymentPolicies and
    other documents are left out.
options:
  _input:
    description: The documents of a CR file.
    type: list
    elements: dict
    required: true
'''

EXAMPLES = r'''
- name: Name the CRs of a file
  ansible.builtin.set_fact:
    names: "{{ lookup('ansible.builtin.file', 'crs.yaml') | ansible.builtin.from_yaml_all | nodewright.bridge.cr_names }}"
'''

RETURN = r'''
_value:
  description: The CR names.
  type: list
  elements: str
'''

from ansible_collections.nodewright.bridge.plugins.module_utils.model.cr_model import has_cr_kind


def cr_names(docs):
    return [(doc.get('metadata') or {}).get('name') for doc in docs or [] if has_cr_kind(doc)]


class FilterModule(object):

    def filters(self):
        return {'cr_names': cr_names}
