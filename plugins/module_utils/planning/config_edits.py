# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""An edit of a package's ``configMap``, rolled out as the operator rolls it out (UpsertConfigmaps,
HandleConfigUpdates).

The package ConfigMap ``<cr>-<package>-<version>`` holds the data the nodes last took. When the CR's
``configMap`` differs from it, the operator waits until either every node has the package complete
(and no package pod left) or a node is erroring in the package's config, interrupt or post-interrupt
stage (whose pod it deletes, so that it is created again with the new data). Then it records the keys
that are new or changed in ``status.configUpdates`` (replacing the package's earlier keys when every
node is complete, adding to them otherwise), puts the package back into ``config`` / ``in_progress``
on every node of the CR (status ``in_progress``) and only then updates the ConfigMap. The config stage
then runs again, followed by the ``configInterrupts`` that match the changed keys (node_plan).

Until then the ConfigMap keeps its old data (a stage pod never updates it), so a rollout under way
finishes with the data it started with. A package being uninstalled on any node is left alone.

A version change ends an edit's keys (``dropped_by_version_change``, HandleVersionChange's RemoveConfigUpdates):
the new version's config stage runs with no config interrupt of the old edit. No I/O.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.nodewright.bridge.plugins.module_utils.contract import node_annotations
from ansible_collections.nodewright.bridge.plugins.module_utils.model import semver
from ansible_collections.nodewright.bridge.plugins.module_utils.planning.node_plan import changed_config_keys, package_complete
from ansible_collections.nodewright.bridge.plugins.module_utils.contract.pod_layout import package_configmap_name
from ansible_collections.nodewright.bridge.plugins.module_utils.model.stages import CONFIG_RESTARTED_STAGES, UNINSTALL_STAGES


def edits(cr, configmaps):
    """``[(package, keys)]``: the CR's packages whose ``configMap`` differs from their ConfigMap's data.

    ``configmaps``: ConfigMap name -> data, the package ConfigMaps of the CR in the cluster. A package
    without ``configMap``, or whose ConfigMap does not exist yet (its first stage creates it), has no edit.
    ``keys`` may be empty (only keys were removed): the ConfigMap still takes the new data.
    """
    found = []
    for name in sorted(cr.packages):
        package = cr.packages[name]
        data = configmaps.get(package_configmap_name(cr.name, package))
        if not package.config_map or data is None or dict(data) == package.config_map:
            continue
        found.append((package, changed_config_keys(data, package.config_map)))
    return found


def decide(cr, package, states, pods_left=()):
    """What an edit of ``package`` does now: ``{'action', 'why', 'restart'}``.

    ``states``: node name -> decoded state, every node the CR selects; ``pods_left``: the nodes that still
    hold a pod of the package. ``action`` is ``apply`` (every node complete with no pod left, or some
    node erroring in a stage the edit restarts: ``restart`` lists those nodes, whose pods go), ``wait``
    (the package is still rolling out with its old data) or ``hold`` (it is being uninstalled somewhere).
    """
    uninstalling = sorted(n for n, s in states.items()
                          if (s.get(package.unique_name) or {}).get('stage') in UNINSTALL_STAGES)
    if uninstalling:
        return {'action': 'hold', 'restart': [], 'all_complete': False,
                'why': 'being uninstalled on %s: config changes wait for it' % ', '.join(uninstalling)}
    complete = [n for n, s in states.items() if n not in pods_left and package_complete(cr, package, s)]

    def restarted(state):
        entry = state.get(package.unique_name) or {}
        return entry.get('stage') in CONFIG_RESTARTED_STAGES and entry['state'] == 'erroring'
    restart = sorted(n for n, s in states.items() if restarted(s))
    every = len(complete) == len(states)
    if every or restart:
        why = ('complete on every node' if every else
               'erroring on %s: its pod is replaced with the new data' % ', '.join(restart))
        return {'action': 'apply', 'restart': restart, 'all_complete': every, 'why': why}
    return {'action': 'wait', 'restart': [], 'all_complete': False,
            'why': 'still rolling out (%d/%d nodes complete): the edit follows once every node is' % (
                len(complete), len(states))}


def waiting(decisions):
    """The packages whose edit waits for the rollout under way (``decisions``: package -> :func:`decide`'s result),
    sorted: the apply playbook decides them again after its rollout. The operator reconciles again whenever a
    node's package changes, so an edit follows the rollout it waited for at once; a run that decided only before
    its rollout ended with the package complete and the ConfigMap still old."""
    return sorted(name for name, decision in decisions.items() if decision['action'] == 'wait')


def dropped_by_version_change(cr, states):
    """The packages whose ``status.configUpdates`` the operator drops as it looks at the nodes' versions
    (HandleVersionChange, skyhook_controller.go @71ca22b8: RemoveConfigUpdates), sorted.

    ``states``: node name -> decoded nodeState. An entry of a package the CR no longer has drops it; an entry at
    an older version than the CR's drops it as the upgrade starts (the new version's config stage must not run
    the old edit's config interrupts), unless that node already has the new version in its ``upgrade`` stage
    (the keys went when it started). A downgrade, an entry at the CR's version and a package in its uninstall
    cycle on that node drop nothing. Only packages that have keys are named."""
    dropped = set()
    for state in states.values():
        for entry in (state or {}).values():
            name = entry['name']
            if name not in cr.config_updates or name in dropped:
                continue
            package = cr.packages.get(name)
            if package is None:
                dropped.add(name)
                continue
            current = (state or {}).get(package.unique_name) or {}
            if current.get('stage') in UNINSTALL_STAGES or entry['version'] == package.version:
                continue
            if semver.compare(package.version, entry['version']) == 1 and current.get('stage') != 'upgrade':
                dropped.add(name)
    return sorted(dropped)


def config_updates_after(current, package_name, keys, all_complete):
    """``status.configUpdates`` after an edit is applied: the package's keys replaced (every node complete:
    the earlier edit is finished) or added to, in the operator's order (AddConfigUpdates appends)."""
    updates = dict((k, list(v or [])) for k, v in (current or {}).items())
    if all_complete:
        updates.pop(package_name, None)
    merged = list(updates.get(package_name) or [])
    merged += [k for k in keys if k not in merged]
    if merged:
        updates[package_name] = merged
    return updates


def restarted_state(state, package):
    """The node's state with ``package`` back in ``config`` / ``in_progress`` (Upsert with no restarts);
    ``(state, changed)``."""
    return node_annotations.upsert(state or {}, package.name, package.version, package.image, 'in_progress', 'config',
                                   restarts=0, container_sha=package.container_sha)
