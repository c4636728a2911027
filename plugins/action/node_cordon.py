# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""Action plugin of the collection's cluster modules: its code (module_utils/cluster_modules) in the controller's process.

The action plugin of every cluster module (plugins/action/<m>.py) imports this one's class
(a file of one import: a symlink, as kubernetes.core has, is an alias to antsibull-docs): the module is the task's (its resolved action), found in the registry
(module_utils/cluster_modules/__init__.py) with its code and the arguments that name files on the controller
(see plugin_utils/execution/cluster_action.py). This file carries node_cordon's name because ansible-test's
action-plugin-docs wants a documented module for every action plugin.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution.cluster_action import ClusterAction


class ActionModule(ClusterAction):
    """The task's cluster module (ClusterAction.find_module)."""
