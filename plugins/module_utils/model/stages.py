# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""The stages of a package on a node, named once: the names, their groupings and their order.

A stage is where a package is on a node (the ``stage`` of a ``nodeState_<cr>`` entry). Every rule that
groups or orders stages takes the group from here and does not write its own list.

The names are the operator's ``Stage`` constants (NVIDIA/nodewright v0.15 @71ca22b8,
``operator/api/v1alpha1/skyhook_types.go``; the v0.18-v0.20 operator has the same); each grouping says
where the operator makes it. No I/O.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

UNINSTALL = 'uninstall'                      # StageUninstall
UNINSTALL_INTERRUPT = 'uninstall-interrupt'  # StageUninstallInterrupt
UPGRADE = 'upgrade'                          # StageUpgrade
APPLY = 'apply'                              # StageApply
INTERRUPT = 'interrupt'                      # StageInterrupt
POST_INTERRUPT = 'post-interrupt'            # StagePostInterrupt
CONFIG = 'config'                            # StageConfig

# Every stage, in the operator's order: what a nodeState entry may hold (skyhook_types.go ``Stages``).
STAGES = (UNINSTALL, UNINSTALL_INTERRUPT, UPGRADE, APPLY, INTERRUPT, POST_INTERRUPT, CONFIG)

# The stages a stage pod runs (skyhook_controller.go createPodFromPackage; a Job's from v0.18).
POD_STAGES = (APPLY, CONFIG, UPGRADE, UNINSTALL, POST_INTERRUPT)
# The stages an interrupt pod runs (createInterruptPodForPackage; ProcessInterrupt): a package's steps that need the drain.
INTERRUPT_STAGES = (INTERRUPT, UNINSTALL_INTERRUPT)
# The uninstall cycle: the uninstall pod, then with an interrupt its interrupt (NodeState.IsUninstallCycleInProgress).
UNINSTALL_STAGES = (UNINSTALL, UNINSTALL_INTERRUPT)
# The stages whose erroring pod a package configMap edit deletes, to run again with the new data (HandleConfigUpdates).
CONFIG_RESTARTED_STAGES = (CONFIG, INTERRUPT, POST_INTERRUPT)
# The stages ``kubectl skyhook package rerun --stage`` runs again from (operator/cmd/cli/app/package/package_rerun.go).
RERUN_STAGES = (APPLY, CONFIG, INTERRUPT, POST_INTERRUPT)
# The first stage of an install: apply, or upgrade over an older version on the node (HandleVersionChange).
FIRST_STAGES = (APPLY, UPGRADE)
# A package's install stages, without an interrupt and with one (NodeState.NextStage; apply may be upgrade).
PACKAGE_STAGES = (APPLY, CONFIG)
PACKAGE_STAGES_WITH_INTERRUPT = PACKAGE_STAGES + (INTERRUPT, POST_INTERRUPT)
# The order of a wave's steps when its packages run together (not serial): every uninstall, their interrupts, every
# apply or upgrade, config, interrupt, post-interrupt (the plan's replay of NextStage: each package a stage a pass).
STAGE_ORDER = {UNINSTALL: 0, UNINSTALL_INTERRUPT: 1, UPGRADE: 2, APPLY: 2, CONFIG: 3, INTERRUPT: 4, POST_INTERRUPT: 5}


def package_stages(has_interrupt, first=APPLY):
    """A package's install stages from ``first`` (apply or upgrade) to its last, as a new list."""
    found = list(PACKAGE_STAGES_WITH_INTERRUPT if has_interrupt else PACKAGE_STAGES)
    found[0] = first
    return found


def uninstall_cycle(has_interrupt):
    """A package's uninstall cycle, as a new list: uninstall, and with an interrupt uninstall-interrupt."""
    return list(UNINSTALL_STAGES if has_interrupt else UNINSTALL_STAGES[:1])


def complete_stage(has_interrupt):
    """The stage a complete package's entry holds: post-interrupt with an interrupt, else config (IsPackageComplete)."""
    return (PACKAGE_STAGES_WITH_INTERRUPT if has_interrupt else PACKAGE_STAGES)[-1]
