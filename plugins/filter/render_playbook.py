# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
name: render_playbook
short_description: The generated parts of the playbook nodewright.bridge.render writes
version_added: 0.1.0
author: nodewright.bridge contributors (@nodewright)
description:
  - Internal to the collection's playbooks (nodewright.bridge.render), not a stable interface; it may change in any
    release (the collection's C(docs/versioning.md)).
  - Used by the template of the playbook nodewright.bridge.render. Writes the header comment, the embedded CR and
    policy, the settings, the pod modules' C(module_defaults) and the per-node tasks (from the one definition of the
    per-node sequence that M(nodewright.bridge.node_update) runs), as YAML text for the template to place.
options:
  _input:
    description: >-
      The render's data: C(cr), C(cr_document), C(policy_document), C(interruption_budget), C(from_cluster),
      C(source), C(rendered_at), C(dest), C(fresh), C(settings) and what P(nodewright.bridge.render_data#filter) returns.
    type: dict
    required: true
'''

EXAMPLES = r'''
- name: In the template (other delimiters), place the parts
  ansible.builtin.debug:
    msg: "{{ nw_r | nodewright.bridge.render_playbook }}"
'''

RETURN = r'''
_value:
  description: The parts, by name (C(header), C(cr_document), C(block), C(rescue), ...), each a YAML text.
  type: dict
'''

from ansible_collections.nodewright.bridge.plugins.plugin_utils.rendering.render_playbook import playbook_parts


class FilterModule(object):
    def filters(self):
        return {'render_playbook': playbook_parts}
