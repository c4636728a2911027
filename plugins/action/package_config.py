# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""Action plugin for nodewright.bridge.package_config: its code (module_utils/cluster_modules) in the controller's process
(see plugin_utils/cluster_action.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import package_config as module_code
from ansible_collections.nodewright.bridge.plugins.plugin_utils.cluster_action import ClusterAction


class ActionModule(ClusterAction):

    MODULE = 'nodewright.bridge.package_config'
    MODULE_CODE = module_code
