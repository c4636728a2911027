# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""What a node or pod object reports about itself: its boot ID and its conditions (Ready, ...).

One set of these predicates for every module that waits on a node or a pod (node_interrupt's
reboot wait, node_health). No I/O: callers pass the objects they read or watched.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


def condition(obj, kind):
    """True when the object (a node or a pod) has the condition ``kind`` with status True."""
    for cond in (obj.get('status') or {}).get('conditions') or []:
        if cond.get('type') == kind:
            return cond.get('status') == 'True'
    return False


def is_ready(obj):
    """The Ready condition of a node or a pod."""
    return condition(obj, 'Ready')


def boot_id(node):
    """The node's ``status.nodeInfo.bootID`` ('' when it has not reported one); it changes with every boot."""
    return ((node.get('status') or {}).get('nodeInfo') or {}).get('bootID') or ''


def rebooted(node, before):
    """The node reports a boot ID other than ``before`` and is Ready: it has come back from a reboot."""
    current = boot_id(node)
    return bool(current) and current != before and is_ready(node)


def pod_ready(pod):
    """A pod that runs, is Ready and is not being deleted."""
    return (pod.get('status') or {}).get('phase') == 'Running' and is_ready(pod) \
        and not (pod.get('metadata') or {}).get('deletionTimestamp')
