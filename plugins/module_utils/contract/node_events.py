# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""The Kubernetes Events a rollout leaves on a node: reason, type and message of each step. No I/O.

Worded as the NodeWright operator words its own (reasons ``Apply``, ``Interrupt``, ``Drain``,
``Reboot``, ``State``; a package as ``[name:version]``, the CR as ``[skyhook:name]``), with
``Cordon`` and ``Uncordon`` for the steps the operator does not report. A failed step is the
same reason with type ``Warning``. kube.Kube.node_event writes them; the cluster modules decide
when (a step that changed something, never a dry run).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from collections import namedtuple

from ansible_collections.nodewright.bridge.plugins.module_utils.model import duration

NORMAL = 'Normal'
WARNING = 'Warning'

CORDON = 'Cordon'
DRAIN = 'Drain'
APPLY = 'Apply'
INTERRUPT = 'Interrupt'
REBOOT = 'Reboot'
HEALTH = 'Health'
STATE = 'State'
UNCORDON = 'Uncordon'

# A failure's message keeps its first line (a failed stage's message goes on with its log), this long at most.
MAX_WHY = 400

NodeEvent = namedtuple('NodeEvent', 'reason type message')


def cr_ref(cr_name):
    return '[skyhook:%s]' % cr_name


def package_ref(name, version):
    return '[%s:%s]' % (name, version)


def owners_ref(owners):
    """The CRs named by the node's cordon records (what a drain or health check is for), or ''."""
    return ' for %s' % ', '.join(cr_ref(o) for o in owners) if owners else ''


def why(message):
    """A failure's message, short: its first line."""
    first = (message or 'failed').strip().splitlines()[0] if (message or '').strip() else 'failed'
    return first if len(first) <= MAX_WHY else first[:MAX_WHY - 3] + '...'


def cordoned(node, cr_name, inherited=False):
    return NodeEvent(CORDON, NORMAL, 'Cordoned node [%s] for %s%s' % (
        node, cr_ref(cr_name), ' (it was already cordoned by someone else)' if inherited else ''))


def uncordoned(node, cr_name, still_by=None, unschedulable=False):
    """The CR's cordon released: the node schedulable, or still cordoned by others (``still_by``)."""
    if not unschedulable:
        return NodeEvent(UNCORDON, NORMAL, 'Uncordoned node [%s] for %s' % (node, cr_ref(cr_name)))
    rest = ('cordoned by %s' % ', '.join(cr_ref(o) for o in still_by)) if still_by else 'cordoned by someone else'
    return NodeEvent(UNCORDON, NORMAL, 'Released the cordon of %s on node [%s]; it stays %s' % (cr_ref(cr_name), node, rest))


def drained(node, owners, evicted, skipped, pdb_waits=0, protected_wait=0.0):
    """A drain that evicted pods: how many, how many were left, how many waited for a PodDisruptionBudget."""
    extra = ''
    if pdb_waits:
        extra += ', %d waited for a PodDisruptionBudget' % pdb_waits
    if int(round(protected_wait)):  # rounds to whole seconds; nothing under half a second is worth the words
        extra += ', %ss waiting for protected pods' % int(round(protected_wait))
    return NodeEvent(DRAIN, NORMAL, 'Drained node [%s]%s: %d pod(s) evicted, %d skipped%s' % (
        node, owners_ref(owners), evicted, skipped, extra))


def drain_failed(node, owners, message):
    return NodeEvent(DRAIN, WARNING, 'Drain of node [%s]%s failed: %s' % (node, owners_ref(owners), why(message)))


def _pods_text(pods, limit=10):
    shown = ', '.join(pods[:limit])
    return shown + (' and %d more' % (len(pods) - limit) if len(pods) > limit else '')


def _for(cr_name):
    """`` for [skyhook:CR]``, or nothing for a drain without a CR (the maintenance role's)."""
    return ' for %s' % cr_ref(cr_name) if cr_name else ''


def protected_wait_started(node, cr_name, pods, parked):
    """The drain waits for protected pods (the operator's Warning ``Drain`` when its barrier holds a node)."""
    return NodeEvent(DRAIN, WARNING, 'Drain of node [%s]%s blocked by non-interrupt pods %s: waiting, nothing is '
                     'evicted%s' % (node, _for(cr_name), _pods_text(pods),
                                    '; its batch slot goes to the next node until they finish' if parked else ''))


def protected_wait_long(node, cr_name, pods, waited):
    """The wait passed the warning threshold (it goes on: a protected pod is never interrupted)."""
    text = 'Drain of node [%s]%s has waited %s for non-interrupt pods %s; still waiting (nothing is interrupted)'
    return NodeEvent(DRAIN, WARNING, text % (node, _for(cr_name), duration.format_duration(waited), _pods_text(pods)))


def protected_wait_ended(node, cr_name, waited):
    return NodeEvent(DRAIN, NORMAL, 'Non-interrupt pods on node [%s] finished after %s; the drain%s goes on'
                     % (node, duration.format_duration(waited), _for(cr_name)))


def stage_applied(package, version, stage, cr_name, restarts=0):
    return NodeEvent(APPLY, NORMAL, 'Package %s stage [%s] complete on %s%s' % (
        package_ref(package, version), stage, cr_ref(cr_name), ' after %d restart(s)' % restarts if restarts else ''))


def stage_failed(package, version, stage, cr_name, message):
    return NodeEvent(APPLY, WARNING, 'Package %s stage [%s] erroring on %s: %s' % (
        package_ref(package, version), stage, cr_ref(cr_name), why(message)))


def _interrupt_text(interrupt):
    services = interrupt.get('services') or []
    if interrupt.get('type') == 'service':
        return 'service restart (%s)' % ', '.join(services)
    return {'restartAllServices': 'restart of all services', 'noop': 'no-op interrupt'}.get(
        interrupt.get('type'), '%s interrupt' % interrupt.get('type'))


def _covering(covered):
    return ' (also for %s)' % ', '.join('[%s]' % c for c in covered) if covered else ''


def interrupted(node, package, version, cr_name, interrupt, covered=()):
    """An interrupt other than a reboot ran on the node."""
    return NodeEvent(INTERRUPT, NORMAL, 'Interrupted node [%s] package %s from %s: %s%s' % (
        node, package_ref(package, version), cr_ref(cr_name), _interrupt_text(interrupt), _covering(covered)))


def rebooted(node, package, version, cr_name, boot_before, boot_after, covered=()):
    """A reboot interrupt, the node back Ready with a new boot ID."""
    return NodeEvent(REBOOT, NORMAL, 'Rebooted node [%s] for package %s from %s: back Ready with a new boot ID (%s -> %s)%s'
                     % (node, package_ref(package, version), cr_ref(cr_name), boot_before or 'unknown',
                        boot_after or 'unknown', _covering(covered)))


def interrupt_failed(node, package, version, cr_name, interrupt, message):
    reason = REBOOT if interrupt.get('type') == 'reboot' else INTERRUPT
    what = 'Reboot' if reason == REBOOT else 'Interrupt (%s)' % _interrupt_text(interrupt)
    return NodeEvent(reason, WARNING, '%s of node [%s] for package %s from %s failed: %s' % (
        what, node, package_ref(package, version), cr_ref(cr_name), why(message)))


def health_failed(node, owners, message):
    return NodeEvent(HEALTH, WARNING, 'Node [%s]%s is not healthy: %s' % (node, owners_ref(owners), why(message)))


def complete(cr_name):
    """The CR recorded complete on the node (the operator's own words)."""
    return NodeEvent(STATE, NORMAL, 'Skyhook [%s] complete.' % cr_name)
