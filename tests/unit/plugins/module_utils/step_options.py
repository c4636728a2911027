# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""What the divergence tests share (test_node_steps.py, test_render_playbook.py): every option a step of the
sequence definition (module_utils/cluster_modules/node_steps.py) may pass to its module, to compare the maintenance role and the
render with."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import node_steps


class _Everything(node_steps.ValueSource):
    """A source that has every value: the builders then give all the option names they can pass."""

    node = cr = 'x'

    def setting(self, name):
        return name

    setting_if_set = tuning = setting

    def protected_pods(self):
        return {}

    def drain_config(self):
        return {}

    def boot_before_reboot(self):
        return 'x'

    def runtime_required_crs(self):
        return []

    def cr_source(self):
        return {'cr_name': 'x', 'cr': [], 'cr_identity': {'uid': 'x', 'generation': 1}}

    def cordon_take_over(self):
        return True


def option_names(step):
    """Every option a step may pass to its module, sorted."""
    return sorted(step.build(_Everything()))
