# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
name: to_skyhook
short_description: NodeWright documents as the skyhook.nvidia.com/v1alpha1 documents the v0.15 operator serves
version_added: 0.1.0
author: nodewright.bridge contributors (@nodewright)
description:
  - Returns copies of the documents as C(skyhook.nvidia.com/v1alpha1) documents. A C(NodeWright) CR
    (C(nodewright.nvidia.com/v1alpha1)) becomes a C(Skyhook) with the same name and spec; a DeploymentPolicy of
    either group becomes a C(skyhook.nvidia.com/v1alpha1) DeploymentPolicy; Skyhook documents stay as they are.
    The reverse is P(nodewright.bridge.to_nodewright#filter).
  - Annotation and label keys under C(nodewright.nvidia.com/) move under C(skyhook.nvidia.com/), so that
    C(nodewright.nvidia.com/pause) becomes C(skyhook.nvidia.com/pause) and the v0.15 operator sees the CR paused.
    When both keys are there the C(nodewright.nvidia.com/) one wins (it is the one the NodeWright's operator acts on).
    The mirror stamps C(nodewright.nvidia.com/mirrored-from) and C(mirrored-generation) are dropped.
  - What the API server sets on a stored object (C(status), C(metadata.resourceVersion), C(uid),
    C(creationTimestamp), C(generation), C(managedFields)) and the finalizers are dropped, so the result applies to
    any cluster and its deletion is not held by a finalizer no operator of that group removes.
  - The v0.15 line serves only C(skyhook.nvidia.com/v1alpha1); a C(NodeWright) document sent to it fails with
    "no matches for kind". Upstream converts only the other way (its v0.18+ mirror is one-way), so this filter
    refuses what a Skyhook cannot say rather than let the v0.15 API server drop it without a word.
  - The v0.20 fields C(spec.drainConfig), C(spec.runtimeRequiredCordonAfter) and C(spec.packages.<p>.stageTimeout)
    are dropped when that changes nothing the operator does, that is a C(drainConfig) whose every setting is the
    default (the v0.15 drain), C(runtimeRequiredCordonAfter) false or without C(runtimeRequired), a C(stageTimeout)
    of V(0). Any other value is an error that lists each field by path and what the v0.15 operator would do instead.
  - With O(drop_v020_fields=true) those fields are dropped anyway, with one warning each. That changes the rollout.
    A dropped C(drainConfig) changes how every interrupt drains its node, as v0.15 always drains (evictions
    through the eviction API, emptyDir data deleted, pods without a controller evicted, DaemonSet pods skipped,
    no drain timeout, each pod's own grace period). A dropped C(runtimeRequiredCordonAfter) leaves a node
    schedulable the moment its runtime-required taint comes off. A dropped C(stageTimeout) leaves a stage that
    hangs C(in_progress) for good.
  - An image with a registry port or a digest (C(localhost:5000/org/pkg)) is an error, since v0.15 cuts an image
    at its first colon.
  - Anything else (another kind or group, a document that is not a mapping) is an error that names the document
    by its position.
options:
  _input:
    description: The documents (a list, as C(from_yaml_all) gives, or one document).
    type: list
    elements: dict
    required: true
  drop_v020_fields:
    description:
      - Drop the v0.20 fields a Skyhook cannot carry, with a warning naming each and what changes, instead of failing.
    type: bool
    default: false
    version_added: 0.2.0
'''

EXAMPLES = r'''
- name: Write the Skyhook version of a NodeWright file, for kubectl apply on a cluster with the v0.15 operator
  ansible.builtin.copy:
    dest: gpu-node-tuning-skyhook.yaml
    # one YAML document per object, as kubectl apply -f reads them
    content: "{{ lookup('ansible.builtin.file', 'gpu-node-tuning.yaml') | ansible.builtin.from_yaml_all
                 | nodewright.bridge.to_skyhook | map('ansible.builtin.to_nice_yaml') | join('---\n') }}"
    mode: '0644'

- name: The same for a file that tunes its drain, accepting the v0.15 drain (one warning per dropped field)
  ansible.builtin.set_fact:
    skyhook_docs: "{{ lookup('ansible.builtin.file', 'tuned-drain.yaml') | ansible.builtin.from_yaml_all
                      | nodewright.bridge.to_skyhook(drop_v020_fields=true) }}"
'''

RETURN = r'''
_value:
  description: The documents as C(skyhook.nvidia.com/v1alpha1) documents, in the same order.
  type: list
  elements: dict
'''

from ansible.errors import AnsibleFilterError
from ansible.utils.display import Display

from ansible_collections.nodewright.bridge.plugins.module_utils.contract import operator_documents


def to_skyhook(docs, drop_v020_fields=False):
    warnings = []
    try:
        out = operator_documents.to_skyhook(docs, drop_v020_fields=bool(drop_v020_fields), warnings=warnings)
    except operator_documents.DocumentError as exc:
        raise AnsibleFilterError('to_skyhook: %s' % exc)
    for warning in warnings:
        Display().warning('to_skyhook: %s' % warning)
    return out


class FilterModule(object):
    def filters(self):
        return {'to_skyhook': to_skyhook}
