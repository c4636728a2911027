# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
name: to_nodewright
short_description: Skyhook documents as the nodewright.nvidia.com/v1alpha1 documents the v0.18+ operators serve
version_added: 0.2.0
author: nodewright.bridge contributors (@nodewright)
description:
  - Returns copies of the documents as C(nodewright.nvidia.com/v1alpha1) documents, converted as the mirror controller
    of a v0.18-v0.20 operator converts a legacy object. A C(Skyhook) (C(skyhook.nvidia.com/v1alpha1)) becomes a
    C(NodeWright) with the same name and spec; a DeploymentPolicy of either group becomes a
    C(nodewright.nvidia.com/v1alpha1) DeploymentPolicy; NodeWright documents keep their spec. The reverse is
    P(nodewright.bridge.to_skyhook#filter).
  - Annotation and label keys under C(skyhook.nvidia.com/) move under C(nodewright.nvidia.com/), so that
    C(skyhook.nvidia.com/pause) becomes C(nodewright.nvidia.com/pause) and the new operator sees the CR paused. An
    explicit C(nodewright.nvidia.com/) key wins over the re-prefixed one, as upstream's converter does.
  - What the API server sets on a stored object (C(status), C(metadata.resourceVersion), C(uid),
    C(creationTimestamp), C(generation), C(managedFields)) and the finalizers are dropped (the legacy finalizer
    would hold a deletion for good), so the result applies to any cluster.
  - A package image given as C(repo:tag) with the tag equal to the package version becomes the bare C(repo), with a
    warning. The v0.15 operator stored it so (it cuts the tag off), and v0.18+ refuses any tag in the image (the
    version supplies it). A tag other than the version, or a digest (put it in C(containerSHA)), is an error.
    A colon before the last slash is a registry port and stays.
  - The result is not stamped C(nodewright.nvidia.com/mirrored-from), so it is a NodeWright of your own, and the
    mirror leaves it alone. On a cluster where the legacy object of the same name exists too, the NodeWright is the one
    the operator reconciles; delete the legacy object, or M(nodewright.bridge.rollout_plan) refuses the pair when their
    specs differ.
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
- name: Write the NodeWright version of a Skyhook file, for kubectl apply on a cluster with a v0.18 or later operator
  ansible.builtin.copy:
    dest: gpu-node-tuning.yaml
    # one YAML document per object, as kubectl apply -f reads them
    content: "{{ lookup('ansible.builtin.file', 'gpu-node-tuning-skyhook.yaml') | ansible.builtin.from_yaml_all
                 | nodewright.bridge.to_nodewright | map('ansible.builtin.to_nice_yaml') | join('---\n') }}"
    mode: '0644'
'''

RETURN = r'''
_value:
  description: The documents as C(nodewright.nvidia.com/v1alpha1) documents, in the same order.
  type: list
  elements: dict
'''

from ansible.errors import AnsibleFilterError
from ansible.utils.display import Display

from ansible_collections.nodewright.bridge.plugins.module_utils.contract import operator_documents


def to_nodewright(docs):
    warnings = []
    try:
        out = operator_documents.to_nodewright(docs, warnings=warnings)
    except operator_documents.DocumentError as exc:
        raise AnsibleFilterError('to_nodewright: %s' % exc)
    for warning in warnings:
        Display().warning('to_nodewright: %s' % warning)
    return out


class FilterModule(object):
    def filters(self):
        return {'to_nodewright': to_nodewright}
