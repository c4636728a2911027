# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
name: to_skyhook
short_description: NodeWright documents as the skyhook.nvidia.com/v1alpha1 documents today's operator serves
version_added: 0.1.0
author: nodewright.bridge contributors (@nodewright)
description:
  - Returns copies of the documents as C(skyhook.nvidia.com/v1alpha1) documents. A C(NodeWright) CR
    (C(nodewright.nvidia.com/v1alpha1)) becomes a C(Skyhook) with the same metadata and spec; a DeploymentPolicy of
    either group becomes a C(skyhook.nvidia.com/v1alpha1) DeploymentPolicy; Skyhook documents stay as they are.
  - What the API server sets on a stored object (C(status), C(metadata.resourceVersion), C(uid),
    C(creationTimestamp), C(generation), C(managedFields)) is dropped, so the result applies to any cluster.
  - The NodeWright operator of the v0.15 line serves only C(skyhook.nvidia.com/v1alpha1) (C(Skyhook),
    C(DeploymentPolicy)); a C(NodeWright) document sent to it fails with "no matches for kind". This collection
    reads both groups, so the same CR can drive it and, converted, the operator.
  - A C(NodeWright) that uses the v0.20 fields C(spec.drainConfig), C(spec.runtimeRequiredCordonAfter) or
    C(spec.packages.<p>.stageTimeout) keeps them in the copy; a Skyhook has no such fields, so the collection refuses
    the result (naming each field) and a v0.15 API server drops them.
  - Anything else (another kind or group, a document that is not a mapping) is an error that names the document
    by its position.
options:
  _input:
    description: The documents (a list, as C(from_yaml_all) gives, or one document).
    type: list
    elements: dict
    required: true
'''

EXAMPLES = r'''
- name: Write the Skyhook version of a NodeWright file, for kubectl apply on a cluster with the v0.15 operator
  ansible.builtin.copy:
    dest: gpu-node-tuning-skyhook.yaml
    # one YAML document per object, as kubectl apply -f reads them
    content: "{{ lookup('ansible.builtin.file', 'gpu-node-tuning.yaml') | ansible.builtin.from_yaml_all
                 | nodewright.bridge.to_skyhook | map('ansible.builtin.to_nice_yaml') | join('---\n') }}"
    mode: '0644'
'''

RETURN = r'''
_value:
  description: The documents as C(skyhook.nvidia.com/v1alpha1) documents, in the same order.
  type: list
  elements: dict
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.nodewright.bridge.plugins.module_utils import operator_documents


def to_skyhook(docs):
    try:
        return operator_documents.to_skyhook(docs)
    except operator_documents.DocumentError as exc:
        raise AnsibleFilterError('to_skyhook: %s' % exc)


class FilterModule(object):
    def filters(self):
        return {'to_skyhook': to_skyhook}
