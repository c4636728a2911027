# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The ``park`` option of the modules whose drain waits for protected pods (node_drain, node_update): what the
budgeted strategy hands them (module_utils/api/slot_mailbox.py; the argument spec is slot_mailbox.PARK_ARGUMENT)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):

    DOCUMENTATION = r'''
options:
  park:
    description:
      - Set by the P(nodewright.bridge.budgeted#strategy) strategy (its host variable C(nodewright_park)); not for plays to set.
        While protected pods run on the node, its batch slot goes back to its compartment through the strategy's
        mailbox (a directory on the controller), and before the drain goes on it takes a slot again; the node stays
        cordoned and nothing is evicted meanwhile. Without it (another strategy, a task delegated to another host),
        the node keeps its slot while it waits.
      - O(park.warn_after) seconds into the wait, a Warning Event on the node and the CR and a warning say how long it
        has waited (C(nodewright_protected_wait_warning)); nothing is interrupted.
    type: dict
    suboptions:
      dir: {description: The strategy's mailbox directory., type: path}
      host: {description: The inventory host the task runs for., type: str}
      pid: {description: The strategy's process; the wait for a slot ends when it is gone., type: int}
      warn_after: {description: Seconds of waiting after which the wait is reported (never interrupted)., type: float}
'''
