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

No I/O and no imports.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

# --------------------------------------------------------------------------- API groups

SKYHOOK_GROUP = 'skyhook.nvidia.com'
NODEWRIGHT_GROUP = 'nodewright.nvidia.com'
# The version both groups serve.
VERSION = 'v1alpha1'
SKYHOOK_API_VERSION = '%s/%s' % (SKYHOOK_GROUP, VERSION)
NODEWRIGHT_API_VERSION = '%s/%s' % (NODEWRIGHT_GROUP, VERSION)

# The operator's annotation and label prefix (its API group).
PREFIX = SKYHOOK_GROUP
# Ours, not the operator's.
BRIDGE_PREFIX = 'bridge.nodewright.io'
# Annotation prefixes an inventory shows: the operator's, the announced group's and ours.
ANNOTATION_PREFIXES = (PREFIX + '/', NODEWRIGHT_GROUP + '/', BRIDGE_PREFIX + '/')

# --------------------------------------------------------------------------- on a CR

# "true" (exactly) pauses a CR (no batch starts) or disables it (the operator leaves it alone).
PAUSE_ANNOTATION = PREFIX + '/pause'
DISABLE_ANNOTATION = PREFIX + '/disable'

# --------------------------------------------------------------------------- on a node
# The per-CR keys end in the CR's name: ``<prefix>/<stem><cr name>``.

# Annotation: the JSON nodeState of the CR's packages on the node.
NODE_STATE_PREFIX = PREFIX + '/nodeState_'
# Annotation and label: the node's status for the CR.
STATUS_PREFIX = PREFIX + '/status_'
# Annotation: "true" while the CR holds a cordon on the node.
CORDON_PREFIX = PREFIX + '/cordon_'
# Annotation: the operator version that last wrote the node for the CR.
VERSION_PREFIX = PREFIX + '/version_'
# Annotation the operator keeps for a CR with autoTaintNewNodes (``kubectl skyhook reset`` drops it).
AUTO_TAINT_PREFIX = PREFIX + '/autoTaint_'
# Label: "true" keeps the node out of every rollout.
IGNORE_LABEL = PREFIX + '/ignore'
# Marks a cordon that was already there (kubectl cordon, another tool) when a CR cordoned the
# node, so releasing the CR's cordon leaves the node cordoned.
INHERITED_CORDON_PREFIX = BRIDGE_PREFIX + '/cordon-inherited_'
# The node's boot ID before an interrupt, to see that it rebooted.
BOOT_ID_PREFIX = BRIDGE_PREFIX + '/boot-id-before-interrupt_'
# The operator's default RUNTIME_REQUIRED_TAINT (kubectl's key[=value]:effect).
DEFAULT_RUNTIME_REQUIRED_TAINT = PREFIX + '=runtime-required:NoSchedule'

# --------------------------------------------------------------------------- on pods and ConfigMaps

# Labels on every pod the operator creates: it finds a package's pods on a node with
# name=<cr> and package=<package>-<version> (PodExists), all of a CR's pods with name=<cr>.
NAME_LABEL = PREFIX + '/name'
PACKAGE_LABEL = PREFIX + '/package'
# "True" (capital T) on interrupt pods only.
INTERRUPT_LABEL = PREFIX + '/interrupt'
INTERRUPT_LABEL_VALUE = 'True'
# JSON {"name","version","skyhook","stage","image","containerSHA"?,"invalid"?} on every pod;
# the operator reads the stage and package of a pod from it (GetPackage).
PACKAGE_ANNOTATION = PREFIX + '/package'
# The package ConfigMap carries NAME_LABEL and these annotations.
PACKAGE_NAME_ANNOTATION = PREFIX + '/Package.Name'
PACKAGE_VERSION_ANNOTATION = PREFIX + '/Package.Version'
# The node metadata ConfigMap is labelled <prefix>/skyhook-node-meta=<cr> (not NAME_LABEL, so the
# operator's clean-up of package ConfigMaps leaves it alone), annotated name and Node.name.
NODE_META_LABEL = PREFIX + '/skyhook-node-meta'
NODE_NAME_ANNOTATION = PREFIX + '/Node.name'

# --------------------------------------------------------------------------- Kubernetes

TAINT_EFFECTS = ('NoSchedule', 'PreferNoSchedule', 'NoExecute')
# The taint (and toleration) of a cordoned node.
UNSCHEDULABLE_TAINT = 'node.kubernetes.io/unschedulable'
