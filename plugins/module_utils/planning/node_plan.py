# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""What one node still has to do for one CR: the operator's per-node logic, replayed offline.

Given the CR's packages and the node's ``nodeState_<cr>`` annotation, ``plan_node``
replays the operator's reconcile loop on the assumption that every step succeeds and
returns the steps in the order the operator would run them:

* Waves follow the dependsOn DAG the way the operator walks it (graph.Next): first the
  packages without dependencies, then packages whose dependencies are all complete.
  Inside a wave packages are taken by name; ``serial: true`` runs them one by one,
  otherwise stage by stage (all apply, then all config, ...).
* Per package: ``uninstall`` (uninstall.enabled + apply) and ``uninstall-interrupt``; then
  ``upgrade`` (an older version is on the node) or ``apply``; ``config``; and, when the
  package has an interrupt, ``interrupt`` and ``post-interrupt``. A package already part
  way through resumes at its stage (a stage in progress or erroring runs again).
* Config changes: keys listed for a package (``config_changes``) put a complete package
  back to ``config``; only its ``configInterrupts`` matching those keys then count as its
  interrupt (the operator's HasInterrupt), not ``interrupt``.
* The interrupts of one wave are merged as the operator does (fudgeInterruptWithPriority):
  reboot wins, then restartAllServices, service (service lists merged), noop; the package
  that owns the merged interrupt runs it, the others' interrupt stage is skipped.
* Cordon and drain are only needed when an interrupt is due, and only the packages that need
  the interrupt wait for the drain (the operator's ProcessInterrupt drains before the first
  stage of a package with an interrupt; the others run meanwhile). Each step says what it waits
  for (``after``): None (runs first, the node as it is), ``'cordon'`` (the cordon is taken from
  the first wave with a package that needs the drain, as the operator takes it there: the
  packages without an interrupt of that wave and later run cordoned while the protected pods
  finish) or ``'drain'`` (a package with an interrupt, or one that depends on such a package).

No I/O.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.nodewright.bridge.plugins.module_utils.model import semver
from ansible_collections.nodewright.bridge.plugins.module_utils.model.cr_model import glob_match
from ansible_collections.nodewright.bridge.plugins.module_utils.model.stages import (
    FIRST_STAGES, INTERRUPT_STAGES, STAGE_ORDER, UNINSTALL_STAGES, complete_stage, package_stages, uninstall_cycle)

INTERRUPT_PRIORITY = {'reboot': 0, 'restartAllServices': 1, 'service': 2, 'noop': 3}


def changed_config_keys(old_data, new_data):
    """Keys whose value is new or different, as the operator compares package ConfigMaps."""
    old_data, new_data = old_data or {}, new_data or {}
    return sorted(k for k, v in new_data.items() if old_data.get(k) != v)


def config_interrupts(cr, config_updates):
    """package name -> interrupts triggered by its changed configMap keys (deduplicated)."""
    result = {}
    for pkg in cr.packages.values():
        seen = set()
        for key in config_updates.get(pkg.name) or []:
            for pattern in sorted(pkg.config_interrupts):
                if not glob_match(pattern, key):
                    continue
                interrupt = pkg.config_interrupts[pattern]
                marker = (interrupt['type'], ','.join(interrupt['services']))
                if marker in seen:
                    continue
                seen.add(marker)
                result.setdefault(pkg.name, []).append(interrupt)
    return result


def merge_interrupts(package_names, interrupts_by_package):
    """The operator's merged interrupt for one wave: ``(interrupt, owner)`` or ``(None, None)``."""
    merged, owner = None, None
    for name in sorted(package_names):
        for interrupt in interrupts_by_package.get(name) or []:
            if interrupt['type'] == 'reboot':
                return {'type': 'reboot', 'services': list(interrupt['services'])}, name
            if merged is None:
                merged, owner = {'type': interrupt['type'], 'services': list(interrupt['services'])}, name
                if merged['type'] == 'service':
                    merged['services'] = sorted(set(merged['services']))
                continue
            if INTERRUPT_PRIORITY[interrupt['type']] < INTERRUPT_PRIORITY[merged['type']]:
                merged, owner = {'type': interrupt['type'], 'services': list(interrupt['services'])}, name
            elif interrupt['type'] == merged['type'] == 'service':
                merged['services'] = sorted(set(merged['services']) | set(interrupt['services']))
    return merged, owner


def _graph_of(cr):
    # The DAG depends only on the CR; build it once per CR, not once per node.
    graph = getattr(cr, '_dependency_graph', None)
    if graph is None:
        graph = _Graph(cr.packages)
        cr._dependency_graph = graph
    return graph


class _Graph(object):
    """The dependsOn DAG walked the way the operator's graph.Next walks it."""

    def __init__(self, packages):
        self.packages = packages
        self.ordered = [packages[n] for n in sorted(packages)]
        self.leaves = sorted(p.name for p in packages.values() if not p.depends_on)

    def next_wave(self, complete, skip=frozenset()):
        """Packages to run next; ``skip`` are handled elsewhere (uninstall) and never pending here."""
        remaining_leaves = [n for n in self.leaves if n not in complete and n not in skip]
        if remaining_leaves:
            return remaining_leaves
        waiting = [p for p in self.packages.values() if p.name not in complete and p.name not in skip and p.depends_on]
        return sorted(p.name for p in waiting if all(d in complete for d in p.depends_on))


def _install_sequence(pkg, entry, has_interrupt, first_stage):
    full = package_stages(has_interrupt, first_stage)
    if entry is None:
        return full
    stage, state = entry['stage'], entry['state']
    if stage in FIRST_STAGES:
        index = 0
        full[0] = stage
    elif stage in full:
        index = full.index(stage)
    else:
        # e.g. a post-interrupt entry for a package that no longer has an interrupt
        return [] if state == 'complete' else [stage]
    if stage == 'interrupt' and state == 'skipped':
        return full[index + 1:]  # ProgressSkipped turns it complete
    if state == 'complete':
        return full[index + 1:]
    return full[index:]


def step_id(step):
    """The step's signature: ``pkg:stage``, an interrupt's type and services, or what it is merged into.

    The rendered playbooks list their steps by it (``nw_playbook_steps``) and compare a node's
    plan with it at run time: the format is part of their interface.
    """
    text = '%s:%s' % (step['package'], step['stage'])
    if step.get('skipped'):
        return '%s (merged into %s)' % (text, step['merged_into'])
    interrupt = step.get('interrupt')
    if interrupt is not None:
        text += ' ' + interrupt['type']
        if interrupt.get('services'):
            text += ' ' + ','.join(interrupt['services'])
    return text


def plan_node(cr, state, config_updates=None, config_changes=None):
    """The remaining work of ``cr`` on a node whose decoded nodeState is ``state``.

    ``config_updates``: changed keys per package the operator already recorded
    (``status.configUpdates``; defaults to the CR's). ``config_changes``: new changes
    not yet applied to this node (they move complete packages back to ``config``).
    Returns a dict with ``pending`` steps, ``needs_drain``, ``interrupts``, ``blocked``
    and ``complete``. Every step has an ``id`` (``step_id``); a step that runs an interrupt
    has ``covers``, the packages of its wave whose interrupts are merged into it.
    """
    updates = dict(cr.config_updates if config_updates is None else config_updates)
    state = _with_config_changes(cr, dict(state or {}), updates, config_changes or {})
    _resume_cancelled_uninstalls(cr, state)
    graph = _graph_of(cr)
    pkg_interrupts = _interrupts_by_package(cr, graph, updates)
    uninstalling = _uninstall_items(graph, state, pkg_interrupts)
    if cr.deleting:
        # A CR being deleted only uninstalls its uninstall-enabled packages, then its finalizer goes: the
        # operator's HandleFinalizer finishes the deletion before any package runs (nothing installs,
        # nothing upgrades; docs/semantics.md 31).
        waves, blocked = ([uninstalling] if uninstalling else []), []
    else:
        waves, blocked = _waves(cr, graph, state, uninstalling, pkg_interrupts)
    pending, interrupts = _pending_steps(cr, waves, pkg_interrupts)
    _order_around_the_drain(cr, pending)
    return {
        'pending': pending,
        'interrupts': interrupts,
        'interrupt': interrupts[0] if interrupts else None,
        'needs_drain': bool(interrupts),
        'blocked': blocked,
        'complete': not pending and not blocked,
    }


def _with_config_changes(cr, state, updates, config_changes):
    """Record new config changes in ``updates``; a package they touch goes back to ``config``."""
    for name, keys in config_changes.items():
        pkg = cr.packages.get(name)
        if not keys or pkg is None:
            continue
        updates[name] = sorted(set(updates.get(name) or []) | set(keys))
        entry = state.get(pkg.unique_name)
        if entry is not None and entry['stage'] not in UNINSTALL_STAGES:
            entry = dict(entry)
            entry.update(stage='config', state='in_progress', restarts=0)
            state[pkg.unique_name] = entry
    return state


def _resume_cancelled_uninstalls(cr, state):
    for pkg in cr.packages.values():
        # A cancelled uninstall (apply flipped back to false while the uninstall pod was
        # running or failing) goes back to the install pipeline (HandleCancelledUninstalls).
        entry = state.get(pkg.unique_name)
        if entry is not None and entry['stage'] == 'uninstall' and not pkg.is_uninstalling and \
                entry['state'] in ('in_progress', 'erroring'):
            state[pkg.unique_name] = dict(entry, stage='apply', state='in_progress', restarts=0)


def _interrupts_by_package(cr, graph, updates):
    """The operator's HasInterrupt: with config updates only the matching configInterrupts
    count; otherwise the package's own interrupt."""
    by_config = config_interrupts(cr, updates) if updates else {}
    pkg_interrupts = {}
    for pkg in graph.ordered:
        if updates.get(pkg.name):
            pkg_interrupts[pkg.name] = list(by_config.get(pkg.name) or [])
        else:
            pkg_interrupts[pkg.name] = [pkg.interrupt] if pkg.interrupt else []
    return pkg_interrupts


def package_complete(cr, pkg, state):
    """Whether ``pkg`` is complete on a node whose decoded state is ``state`` (the operator's IsPackageComplete),
    its interrupt counted as HasInterrupt counts it with the CR's recorded config updates."""
    updates = cr.config_updates
    if updates.get(pkg.name):
        interrupts = config_interrupts(cr, updates).get(pkg.name) or []
    else:
        interrupts = [pkg.interrupt] if pkg.interrupt else []
    return _is_complete(pkg, state or {}, {pkg.name: interrupts})


def _uninstall_items(graph, state, pkg_interrupts):
    """Uninstall first: packages asked to uninstall that are still on the node, and any
    package already inside the uninstall cycle (it must finish, even if cancelled late)."""
    uninstalling = []
    for pkg in graph.ordered:
        entry = state.get(pkg.unique_name)
        if entry is None:
            continue
        stage = entry['stage']
        if stage not in UNINSTALL_STAGES and not pkg.is_uninstalling:
            continue  # the common case: an installed package, nothing to uninstall
        stages = _uninstall_stages(pkg, entry, bool(pkg_interrupts[pkg.name]))
        if stages:
            uninstalling.append((pkg, stages))
    return uninstalling


def _uninstall_stages(pkg, entry, has_interrupt):
    cycle = uninstall_cycle(pkg.interrupt)
    # Cancelled once the uninstall interrupt fired: the uninstall completes, then the
    # package installs again (docs/uninstall.md, "Cancel Uninstall").
    reinstall = [] if pkg.is_uninstalling else _install_sequence(pkg, None, has_interrupt, 'apply')
    if entry['stage'] == 'uninstall-interrupt':
        return ([] if entry['state'] == 'complete' else ['uninstall-interrupt']) + reinstall
    if entry['stage'] == 'uninstall' and (pkg.is_uninstalling or entry['state'] == 'complete'):
        return cycle + reinstall
    if pkg.is_uninstalling:
        # The operator never interrupts a stage in flight: once that stage completes, the
        # uninstall starts (HandleUninstallRequests waits for a terminal complete state).
        return ([] if entry['state'] == 'complete' else [entry['stage']]) + cycle
    return []


def _is_complete(pkg, state, pkg_interrupts):
    entry = state.get(pkg.unique_name)
    if entry is None or entry['version'] != pkg.version or entry['state'] != 'complete':
        return False
    return entry['stage'] == complete_stage(pkg_interrupts[pkg.name])


def _waves(cr, graph, state, uninstalling, pkg_interrupts):
    """The waves of ``(package, stages)`` (the uninstalls join the first) and the blocked packages."""
    handled = set(p.name for p, dummy in uninstalling)
    reinstalled = set(p.name for p, dummy in uninstalling if not p.is_uninstalling)
    removed = handled - reinstalled
    # uninstall requested and already done (absent): nothing to apply either
    removed |= set(p.name for p in cr.packages.values() if p.is_uninstalling and p.unique_name not in state)

    versions_on_node = {}
    for entry in state.values():
        versions_on_node.setdefault(entry['name'], []).append(entry['version'])
    complete = set(p.name for p in cr.packages.values()
                   if _is_complete(p, state, pkg_interrupts) and p.name not in removed)
    waves = []
    wave_items = list(uninstalling)
    while True:
        wave = graph.next_wave(complete, removed | handled)
        for name in wave:
            pkg = cr.packages[name]
            older = any(v != pkg.version and semver.compare(pkg.version, v) > 0
                        for v in versions_on_node.get(pkg.name, ()))
            stages = _install_sequence(pkg, state.get(pkg.unique_name), bool(pkg_interrupts[pkg.name]),
                                       'upgrade' if older else 'apply')
            wave_items.append((pkg, stages))
        if not wave_items:
            break
        waves.append(wave_items)
        wave_items = []
        complete |= set(wave) | reinstalled
    return waves, _blocked(cr, complete, removed)


def _blocked(cr, complete, removed):
    blocked = []
    for pkg in cr.packages.values():
        if pkg.name not in complete and pkg.name not in removed:
            missing = sorted(d for d in pkg.depends_on if d in removed)
            blocked.append({'package': pkg.name, 'version': pkg.version,
                            'reason': 'depends on %s, which is being uninstalled' % ', '.join(missing)
                            if missing else 'dependencies cannot complete'})
    return blocked


def _pending_steps(cr, waves, pkg_interrupts):
    """The steps of every wave in the operator's order, each wave's interrupts merged; and the merged interrupts."""
    pending, interrupts = [], []
    for number, items in enumerate(waves, 1):
        with_interrupt = [p.name for p, stages in items if any(stage in INTERRUPT_STAGES for stage in stages)]
        merged, owner = merge_interrupts(with_interrupt, dict((p.name, pkg_interrupts[p.name]) for p, dummy in items))
        if merged is not None:
            interrupts.append(dict(merged, package=owner, wave=number))
        steps = []
        for order, (pkg, stages) in enumerate(items):
            rank = 0
            for phase, stage in enumerate(stages):
                # a package's own steps keep their order even when a later stage has a lower
                # phase (apply in flight, then uninstall)
                rank = max(rank, STAGE_ORDER[stage])
                step = {'package': pkg.name, 'version': pkg.version, 'stage': stage, 'wave': number}
                if stage in INTERRUPT_STAGES:
                    if pkg.name == owner:
                        step['interrupt'] = merged
                    else:
                        step['skipped'] = True  # merged into the owner's interrupt
                        step['merged_into'] = owner
                steps.append(((order, phase) if cr.serial else (rank, order, phase), step))
        steps.sort(key=_first)
        wave_steps = [item[1] for item in steps]
        _label(wave_steps)
        pending.extend(wave_steps)
    return pending, interrupts


def _order_around_the_drain(cr, pending):
    """Set ``after`` on each step and put the steps in that order (each part keeps the plan's order).

    A package needs the drain when one of its steps is an interrupt (its own or merged into
    another's), or when it depends, directly or not, on a pending package that needs it.
    """
    needs = set(s['package'] for s in pending if s['stage'] in INTERRUPT_STAGES)
    if not needs:
        for step in pending:
            step['after'] = None
        return
    names = set(s['package'] for s in pending)
    grew = True
    while grew:
        grew = False
        for name in names - needs:
            pkg = cr.packages.get(name)
            if pkg is not None and any(d in needs for d in pkg.depends_on):
                needs.add(name)
                grew = True
    first_cordoned_wave = min(s['wave'] for s in pending if s['package'] in needs)
    for step in pending:
        if step['package'] in needs:
            step['after'] = 'drain'
        else:
            step['after'] = 'cordon' if step['wave'] >= first_cordoned_wave else None
    pending.sort(key=lambda s: _AFTER_ORDER[s['after']])  # stable: each part keeps its order


_AFTER_ORDER = {None: 0, 'cordon': 1, 'drain': 2}


def _label(wave_steps):
    """``id`` on every step of a wave; ``covers`` on the step that runs the wave's merged interrupt."""
    for step in wave_steps:
        step['id'] = step_id(step)
        if 'interrupt' in step:
            step['covers'] = [s['package'] for s in wave_steps if s.get('merged_into') == step['package']]


def _first(item):
    return item[0]
