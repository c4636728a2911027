# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""The names the NodeWright operator and this collection put on Kubernetes objects, in one place.

The operator keys everything it writes under ``skyhook.nvidia.com/`` (its API group, also the
prefix of its annotations and labels); the announced ``nodewright.nvidia.com`` group serves the
same resources. Keys this collection adds itself (the operator never reads them) live under
``bridge.nodewright.io/``. Every other module takes these names from here, so a rename is one edit.

The operator's names are those of ``api_generation.SKYHOOK`` (the v0.15 contract, the one the
collection speaks); ``api_generation.NODEWRIGHT`` holds the v0.18-v0.20 contract beside it.

No I/O; the one import is api_generation (which imports nothing of the collection).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.nodewright.bridge.plugins.module_utils.model import api_generation

_SKYHOOK, _NODEWRIGHT = api_generation.SKYHOOK, api_generation.NODEWRIGHT

# The collection's version, galaxy.yml's (a unit test holds them together): the API User-Agent says it, so that audit
# logs name the release that touched a node. Here and not read from galaxy.yml or MANIFEST.json: a module's code
# runs on its target without either.
COLLECTION_VERSION = '0.2.0'

# --------------------------------------------------------------------------- API groups

SKYHOOK_GROUP = _SKYHOOK.group
NODEWRIGHT_GROUP = _NODEWRIGHT.group
# The version both groups serve.
VERSION = _SKYHOOK.version
SKYHOOK_API_VERSION = _SKYHOOK.api_version
NODEWRIGHT_API_VERSION = _NODEWRIGHT.api_version

# The operator's annotation and label prefix (its API group).
PREFIX = _SKYHOOK.prefix
# Ours, not the operator's.
BRIDGE_PREFIX = 'bridge.nodewright.io'
# Annotation prefixes an inventory shows: the operator's, the announced group's and ours.
ANNOTATION_PREFIXES = (PREFIX + '/', NODEWRIGHT_GROUP + '/', BRIDGE_PREFIX + '/')

# --------------------------------------------------------------------------- on a CR

# "true" (exactly) pauses a CR (no batch starts) or disables it (the operator leaves it alone).
PAUSE_ANNOTATION = _SKYHOOK.pause_annotation
DISABLE_ANNOTATION = _SKYHOOK.disable_annotation

# --------------------------------------------------------------------------- on a node
# The per-CR keys end in the CR's name: ``<prefix>/<stem><cr name>``.

# Annotation: the JSON nodeState of the CR's packages on the node.
NODE_STATE_PREFIX = _SKYHOOK.node_state_prefix
# Annotation and label: the node's status for the CR.
STATUS_PREFIX = _SKYHOOK.status_prefix
# Annotation: "true" while the CR holds a cordon on the node.
CORDON_PREFIX = _SKYHOOK.cordon_prefix
# Annotation: the operator version that last wrote the node for the CR.
VERSION_PREFIX = _SKYHOOK.version_prefix
# Annotation the operator keeps for a CR with autoTaintNewNodes (``kubectl skyhook reset`` drops it).
AUTO_TAINT_PREFIX = _SKYHOOK.auto_taint_prefix
# Label: "true" keeps the node out of every rollout.
IGNORE_LABEL = _SKYHOOK.ignore_label
# Marks a cordon that was already there (kubectl cordon, another tool) when a CR cordoned the
# node, so releasing the CR's cordon leaves the node cordoned.
INHERITED_CORDON_PREFIX = BRIDGE_PREFIX + '/cordon-inherited_'
# The node's boot ID before an interrupt, to see that it rebooted.
BOOT_ID_PREFIX = BRIDGE_PREFIX + '/boot-id-before-interrupt_'
# The operator's default RUNTIME_REQUIRED_TAINT (kubectl's key[=value]:effect).
DEFAULT_RUNTIME_REQUIRED_TAINT = _SKYHOOK.runtime_required_taint

# --------------------------------------------------------------------------- on pods and ConfigMaps

# Labels on every pod the operator creates: it finds a package's pods on a node with
# name=<cr> and package=<package>-<version> (PodExists), all of a CR's pods with name=<cr>.
NAME_LABEL = _SKYHOOK.name_label
PACKAGE_LABEL = _SKYHOOK.package_label
# "True" (capital T) on interrupt pods only.
INTERRUPT_LABEL = _SKYHOOK.interrupt_label
INTERRUPT_LABEL_VALUE = 'True'
# JSON {"name","version","skyhook","stage","image","containerSHA"?,"invalid"?} on every pod;
# the operator reads the stage and package of a pod from it (GetPackage).
PACKAGE_ANNOTATION = _SKYHOOK.package_annotation
# The package ConfigMap carries NAME_LABEL and these annotations.
PACKAGE_NAME_ANNOTATION = _SKYHOOK.package_name_annotation
PACKAGE_VERSION_ANNOTATION = _SKYHOOK.package_version_annotation
# The node metadata ConfigMap is labelled <prefix>/skyhook-node-meta=<cr> (not NAME_LABEL, so the
# operator's clean-up of package ConfigMaps leaves it alone), annotated name and Node.name.
NODE_META_LABEL = _SKYHOOK.node_meta_label
NODE_NAME_ANNOTATION = _SKYHOOK.node_name_annotation

# --------------------------------------------------------------------------- Kubernetes

TAINT_EFFECTS = ('NoSchedule', 'PreferNoSchedule', 'NoExecute')
# The taint (and toleration) of a cordoned node.
UNSCHEDULABLE_TAINT = 'node.kubernetes.io/unschedulable'
