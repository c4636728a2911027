# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""Action plugin for nodewright.bridge.node_interrupt: read the CR file on the controller."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.nodewright.bridge.plugins.plugin_utils.controller_files import ControllerFilesAction


class ActionModule(ControllerFilesAction):

    MODULE = 'nodewright.bridge.node_interrupt'
    FILE_ARGUMENTS = ('cr',)
