# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""Action plugin for nodewright.bridge.node_interrupt: the cluster modules' one action plugin (node_cordon.py), which finds
the task's module in the registry (module_utils/cluster_modules).

A file of one import rather than a symlink: antsibull-docs reads a symlinked action plugin as an alias of the
module it points to, and lints and renders this module's documentation as node_cordon's (docs/dev/architecture.md).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.nodewright.bridge.plugins.action.node_cordon import ActionModule  # noqa: F401 pylint: disable=unused-import
