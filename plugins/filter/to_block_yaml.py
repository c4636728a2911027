# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
name: to_block_yaml
short_description: Data as block-style YAML for people to read, with Jinja-looking text tagged !unsafe
version_added: 0.1.0
author: nodewright.bridge contributors (@nodewright)
description:
  - Internal to the collection's playbooks (nodewright.bridge.render), not a stable interface; it may change in any
    release (the collection's C(docs/versioning.md)).
  - Writes the data in block style; a multi-line string becomes a literal block (C(|)).
  - A string that contains C({{), C({%) or C({#) is tagged C(!unsafe), so that Ansible never templates it when it
    reads the YAML back as a playbook.
  - C(yaml.safe_load) of the result (with C(!unsafe) read as a plain value) gives the data back.
options:
  _input:
    description: The data.
    type: raw
    required: true
  indent:
    description: The column the lines start at.
    type: int
    default: 0
  key:
    description: When set, the data is written under this key (C(key:) at O(indent), the data indented below).
    type: str
'''

EXAMPLES = r'''
- name: Write a CR document into a vars file
  ansible.builtin.copy:
    dest: vars.yml
    content: "{{ cr_document | nodewright.bridge.to_block_yaml(0, 'nw_cr_document') }}\n"
    mode: '0644'
'''

RETURN = r'''
_value:
  description: The YAML text, without a trailing newline.
  type: str
'''

from ansible_collections.nodewright.bridge.plugins.plugin_utils.rendering.block_yaml import to_block_yaml


class FilterModule(object):
    def filters(self):
        return {'to_block_yaml': to_block_yaml}
