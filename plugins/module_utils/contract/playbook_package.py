# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""A playbook as a NodeWright package (nodewright.bridge.role_package's ``playbook``): its stages, the host groups
its plays run on, its handlers as interrupts, and the files the package runs. No I/O: the playbook's directory is
handed in as data (:func:`playbook_from_files`); the role's rules (contract/role_package.py) do the rest.

The package brings the playbook's directory, byte for byte (its relative paths - ``roles/``, ``templates/``,
``files/``, ``vars_files``, ``group_vars/``, imported playbooks - resolve there as they do on the controller).

Stages (the agent's modes), by default:

* ``apply`` runs the playbook; ``config`` runs it again (a configMap edit re-runs it with the new variables);
  ``apply-check`` and ``config-check`` run it in check mode, failing when any task would change.
* ``upgrade``, ``post-interrupt`` and ``uninstall`` exist only when ``stages`` maps them: to a playbook or a task
  file of the directory (a YAML list of plays, or of tasks; its path relative to the directory). Their ``-check``
  is the same file in check mode.

``stages`` overrides a stage with such a file, ``check`` (a ``-check`` stage: its stage's file in check mode), or
None (no such stage).

Hosts: every play runs on the host the step runs on, with the local connection, as a role does: the inventory
of the step holds one host, ``localhost``, in every group the plays' ``hosts:`` name (``all``, ``localhost``,
group names, ``a:&b`` and ``a:!b`` patterns), with ``ansible_connection: local`` as an extra variable (so a play's
``connection:`` or ``vars`` cannot send it elsewhere). Refused, naming the play: templated ``hosts:``, patterns that
match names (``web*``, ``~re``, ``group[0]``), a play that excludes a group another play runs on, or the host.

Handlers: the plays' own handlers (those of imported playbooks too) map to the package's interrupts as a role's
do; the package runs a copy of each playbook file (``.nodewright.<file>`` next to it) whose mapped handlers print
that they are left to NodeWright. The handlers of the roles the plays use run in the stage (``unmapped`` says so).
A task-file stage runs in a play of its own (``.nodewright.stage-<mode>.yml``) with the plays' handlers and vars.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import posixpath
import re

from ansible_collections.nodewright.bridge.plugins.module_utils.contract import role_package as rp

PLAYBOOK_DIR = 'playbook'  # the playbook's directory in the image's skyhook_dir
DERIVED_PREFIX = '.nodewright.'
_IMPORT_PLAYBOOK = ('import_playbook', 'ansible.builtin.import_playbook')
_PLAY_TASKS = ('pre_tasks', 'tasks', 'post_tasks')
_ROLE_TASKS = ('include_role', 'import_role', 'ansible.builtin.include_role', 'ansible.builtin.import_role',
               'ansible.legacy.include_role', 'ansible.legacy.import_role')
_EVERY_HOST = ('all', '*', 'localhost', '127.0.0.1')
_NAME_PATTERN = re.compile(r'[*?\[\]]|^~')
_YAML = ('.yml', '.yaml')


def playbook_from_files(path, files):
    """The playbook as this module reads it. ``path``: the playbook file, relative to its directory; ``files``: path
    relative to the directory -> text, every file of the directory."""
    if not isinstance(files.get(path), str):
        raise rp.RolePackageError('playbook %s: not found' % path)
    name = posixpath.splitext(posixpath.basename(path))[0]
    return {'kind': 'playbook', 'name': name, 'playbook': path, 'files': dict(files)}


def derived_name(path):
    """The package's copy of the playbook file ``path``: next to it, so its relative paths resolve as the original's."""
    directory, base = posixpath.split(path)
    return posixpath.join(directory, DERIVED_PREFIX + base)


def _import_of(entry):
    """The target of an ``import_playbook`` entry, or None."""
    return next((entry[k] for k in _IMPORT_PLAYBOOK if isinstance(entry, dict) and k in entry), None)


def _load(source, path, loader, where):
    text = source['files'].get(path)
    if not isinstance(text, str):
        raise rp.RolePackageError('%s: playbook %s has no %s (a path relative to its directory)' % (where, source['name'], path))
    return rp.load_yaml(text, 'playbook %s %s' % (source['name'], path), loader)


def file_kind(data, where):
    """``playbook`` (a YAML list of plays and imports) or ``tasks`` (a YAML list of tasks), else RolePackageError."""
    if not isinstance(data, list) or not data or not all(isinstance(e, dict) for e in data):
        raise rp.RolePackageError('%s: no play or task in it (a playbook or a task file is a YAML list of them)' % where)
    if any('hosts' in e or _import_of(e) is not None for e in data):
        return 'playbook'
    return 'tasks'


def playbook_graph(source, path, loader, seen=None):
    """``[(file, plays)]``: the playbook file ``path`` and those it imports (``import_playbook`` of a path relative
    to the importing file), each once, in the order they run."""
    seen = set() if seen is None else seen
    seen.add(path)
    plays = _load(source, path, loader, 'playbook %s' % source['name'])
    graph = [(path, plays)]
    for entry in plays if isinstance(plays, list) else []:
        target = _import_of(entry)
        if target is None:
            continue
        where = 'playbook %s: %s imports %r' % (source['name'], path, target)
        if rp.templated(target) or not target.endswith(_YAML):
            raise rp.RolePackageError('%s: only a playbook file of the directory, by a plain path, can be imported '
                                      '(not a templated path or a collection\'s playbook)' % where)
        found = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
        if found.startswith('../') or not isinstance(source['files'].get(found), str):
            raise rp.RolePackageError('%s: not in the playbook\'s directory' % where)
        if found not in seen:
            graph.extend(playbook_graph(source, found, loader, seen))
    return graph


def _entry(source, value, stage, loader, check_mode=False):
    path = posixpath.normpath(str(value))
    where = 'stages.%s' % stage
    if not path.endswith(_YAML):
        raise rp.RolePackageError('%s: %s is not a YAML file (a playbook or a task file of the directory)' % (where, value))
    kind = file_kind(_load(source, path, loader, where), '%s: %s' % (where, path))
    return {kind: path, 'check_mode': check_mode}


def stage_map(source, overrides, loader):
    """``{mode: {'playbook' or 'tasks': file, 'check_mode': bool}}`` for every mode of the package, from the defaults
    (the module's docstring) and ``overrides`` (mode -> a file, ``check`` or None); RolePackageError naming the
    stage or the file at fault."""
    overrides = dict(overrides or {})
    known = set(rp.STAGES) | set(rp.CHECKED.values())
    unknown = sorted(set(overrides) - known)
    if unknown:
        raise rp.RolePackageError('stages: %s not a stage (one of %s)' % (', '.join(unknown), ', '.join(sorted(known))))
    plan = {}
    for stage in rp.STAGES:
        value = overrides.get(stage, source['playbook'] if stage in ('apply', 'config') else None)
        if stage == 'config' and 'config' not in overrides and 'apply' in plan:
            plan[stage] = dict(plan['apply'])  # a configMap edit runs the apply stage's file again
            continue
        if value == 'check':
            raise rp.RolePackageError('stages.%s: check is for a -check stage' % stage)
        if value is not None:
            plan[stage] = _entry(source, value, stage, loader)
    for stage, check in rp.CHECKED.items():
        value = overrides.get(check, 'check')
        if stage not in plan:
            if value not in ('check', None):
                raise rp.RolePackageError('stages.%s: the package has no %s stage' % (check, stage))
            continue
        if value == 'check':
            plan[check] = dict(plan[stage], check_mode=True)
        elif value is not None:
            plan[check] = _entry(source, value, check, loader)
    return plan


def _terms(value):
    """The terms of a host pattern (``a:&b,!c``), each with its prefix."""
    return [t.strip() for t in re.split(r'[,:]', str(value)) if t.strip()]


def _play_label(path, index, play):
    return 'playbook %s play %r' % (path, play.get('name') or index + 1)


def _play_hosts(label, hosts, groups, excluded):
    """Adds the groups a play's ``hosts`` names to ``groups`` (those it excludes to ``excluded``), by group name."""
    if hosts in (None, '', []):
        raise rp.RolePackageError('%s has no hosts' % label)
    for value in hosts if isinstance(hosts, list) else [hosts]:
        if rp.templated(str(value)):
            raise rp.RolePackageError('%s: hosts %r is templated: the package cannot tell which group to put the host in '
                                      '(name the group, or all)' % (label, value))
        for term in _terms(value):
            exclude, name = term.startswith('!'), term.lstrip('!&')
            if name != '*' and _NAME_PATTERN.search(name):
                raise rp.RolePackageError('%s: the host pattern %r matches names; the package\'s host is only in the '
                                          'groups the plays name (use group names, or all)' % (label, term))
            if name in _EVERY_HOST and exclude:
                raise rp.RolePackageError('%s: %r excludes the host the package runs on' % (label, term))
            if name not in _EVERY_HOST:
                (excluded if exclude else groups).setdefault(name, label)


def host_groups(graph):
    """The inventory groups the host is in, so that every play of ``graph`` (playbook_graph's) runs on it."""
    groups, excluded = {}, {}
    for path, plays in graph:
        for index, play in enumerate(plays):
            if _import_of(play) is None:
                _play_hosts(_play_label(path, index, play), play.get('hosts'), groups, excluded)
    for group in sorted(set(groups) & set(excluded)):
        raise rp.RolePackageError('%s excludes the group %s, which %s runs on: the package runs every play on one '
                                  'host' % (excluded[group], group, groups[group]))
    return sorted(groups)


def play_tasks(play):
    """Every task of a play (pre_tasks, tasks, post_tasks; blocks walked)."""
    return [t for key in _PLAY_TASKS for t in rp.walk_tasks(play.get(key) if isinstance(play.get(key), list) else [])]


def play_roles(play, tasks=None):
    """The roles a play uses: its ``roles:`` and its include_role / import_role tasks (by a plain name)."""
    names = []
    for role in play.get('roles') or []:
        name = role if isinstance(role, str) else (role.get('role', role.get('name')) if isinstance(role, dict) else None)
        names.append(name)
    for task in play_tasks(play) if tasks is None else tasks:
        module, args = rp.action_of(task)
        if module in _ROLE_TASKS:
            names.append(args.get('name'))
    return [n for n in dict.fromkeys(names) if not rp.templated(n)]


def _template_lookup(source, path):
    """A ``template`` task's ``src`` -> its text: ``templates/<src>`` then ``<src>``, next to the file ``path``, then in
    the playbook's directory."""
    bases = list(dict.fromkeys([posixpath.dirname(path), '']))

    def text(src):
        for base in bases:
            for candidate in (posixpath.join(base, 'templates', src), posixpath.join(base, src)):
                found = source['files'].get(posixpath.normpath(candidate))
                if isinstance(found, str):
                    return found
        return None
    return text


def _files_of(source, stages, loader):
    """``({playbook file: plays}, {task file: tasks}, the files apply and config run)`` of every stage."""
    playbooks, task_files, configured = {}, {}, set()
    for mode, entry in sorted(stages.items()):
        if 'playbook' in entry:
            graph = playbook_graph(source, entry['playbook'], loader)
            playbooks.update(graph)
            touched = [p for p, dummy in graph]
        else:
            task_files[entry['tasks']] = list(rp.walk_tasks(_load(source, entry['tasks'], loader, 'stages.%s' % mode)))
            touched = [entry['tasks']]
        if mode in ('apply', 'config'):
            configured.update(touched)
    return playbooks, task_files, configured


def _add_variables(by_variable, found):
    for variable, interrupt in found.items():
        by_variable.setdefault(variable, []).append(interrupt)


def _map_play(path, index, play, configured, source, out):
    """One play's handlers as interrupts, into ``out``; returns the play as the package runs it."""
    label = _play_label(path, index, play)
    found = rp.map_handlers(play.get('handlers') if isinstance(play.get('handlers'), list) else [])
    out['mapped'].update(found['mapped'])
    out['unmapped'].extend('%s %s' % (label, why) for why in found['unmapped'])
    roles = play_roles(play)
    if roles:
        out['unmapped'].append('%s: the handlers of its role(s) %s run in the stage (a playbook source maps the plays\' '
                               'own handlers)' % (label, ', '.join(roles)))
    for topic, interrupts in found['by_topic'].items():
        out['by_topic'].setdefault(topic, []).extend(interrupts)
    if path in configured:
        _add_variables(out['by_variable'], rp.config_interrupts(play_tasks(play), found['by_topic'],
                                                                _template_lookup(source, path)))
    out['handlers'].extend(found['handlers'])
    return dict(play, handlers=found['handlers']) if 'handlers' in play else play


def interrupts(source, stages, loader):
    """The plays' handlers as interrupts: ``{'interrupt', 'config_interrupts', 'mapped', 'unmapped', 'handlers',
    'derived'}`` as role_package.interrupts, with ``derived``: each playbook file's plays as the package runs them
    (mapped handlers replaced, imports of the package's copies) and ``handlers``: all the plays' handlers so."""
    playbooks, task_files, configured = _files_of(source, stages, loader)
    out = {'mapped': {}, 'unmapped': [], 'by_topic': {}, 'by_variable': {}, 'handlers': [], 'derived': {}}
    for path, plays in playbooks.items():
        derived = []
        for index, play in enumerate(plays):
            target = _import_of(play)
            if target is None:
                derived.append(_map_play(path, index, play, configured, source, out))
            else:
                key = next(k for k in _IMPORT_PLAYBOOK if k in play)
                derived.append(dict(play, **{key: derived_name(target)}))
        out['derived'][path] = derived
    for path, tasks in task_files.items():
        if path in configured:
            _add_variables(out['by_variable'], rp.config_interrupts(tasks, out['by_topic'], _template_lookup(source, path)))
    every = [i for group in out['by_topic'].values() for i in group]
    config = dict((v, rp.merge_interrupts(found)) for v, found in out['by_variable'].items())
    return {'interrupt': rp.merge_interrupts(every), 'config_interrupts': config, 'mapped': out['mapped'],
            'unmapped': out['unmapped'], 'handlers': out['handlers'], 'derived': out['derived']}


def run_files(stages, found, gather_facts):
    """``({mode: the file the step runs}, {file: data})``, paths relative to the playbook's directory: the copies of
    the playbook files (derived_name), and per task-file stage a play of its own that imports it, with the plays'
    handlers and vars."""
    files = dict((derived_name(p), plays) for p, plays in found['derived'].items())
    variables = {}  # the plays' vars, for the handlers and tasks that read them (the first play's win)
    for plays in found['derived'].values():
        for play in plays:
            variables.update((k, v) for k, v in (play.get('vars') or {}).items() if k not in variables)
    run = {}
    for mode, entry in sorted(stages.items()):
        if 'playbook' in entry:
            run[mode] = derived_name(entry['playbook'])
            continue
        run[mode] = '%sstage-%s.yml' % (DERIVED_PREFIX, mode)
        files[run[mode]] = [{'name': 'NodeWright stage %s (%s)' % (mode, entry['tasks']), 'hosts': 'all',
                             'gather_facts': bool(gather_facts), 'vars': variables, 'handlers': found['handlers'],
                             'tasks': [{'name': entry['tasks'], 'ansible.builtin.import_tasks': entry['tasks']}]}]
    return run, files


def runtime_manifest(name, stages, run, groups):
    """What the stage scripts read in the package (role_package.PACKAGE_FILE) for a playbook: per mode the file it
    runs and whether in check mode, and the groups of the step's inventory."""
    modes = dict((m, dict(e, run=run[m])) for m, e in stages.items())
    return json.dumps({'kind': 'playbook', 'name': name, 'playbook_dir': PLAYBOOK_DIR, 'groups': list(groups),
                       'stages': modes}, sort_keys=True, indent=1)


def _role_found(files, name):
    prefixes = ('roles/%s/' % name, '%s/' % posixpath.normpath(name))
    return any(p.startswith(prefixes) for p in files)


def needed_collections(source, stages, loader):
    """The collections the plays and the directory's roles name modules or roles of, and the plays' ``collections``,
    sorted. RolePackageError for a role the plays use that is neither in the directory (``roles/<name>``) nor a
    collection's (an FQCN)."""
    playbooks, task_files, dummy = _files_of(source, stages, loader)
    found, tasks = set(), [t for ts in task_files.values() for t in ts]
    for path, plays in playbooks.items():
        for index, play in enumerate(plays):
            if _import_of(play) is not None:
                continue
            found.update(c for c in play.get('collections') or [] if isinstance(c, str))
            tasks.extend(play_tasks(play) + list(rp.walk_tasks(play.get('handlers') or [])))
            for role in play_roles(play):
                if role.count('.') == 2:
                    found.add(role.rsplit('.', 1)[0])
                elif not _role_found(source['files'], role):
                    raise rp.RolePackageError('%s uses the role %s: not in roles/ of the playbook\'s directory (the package '
                                              'brings that directory)' % (_play_label(path, index, play), role))
    for path, text in sorted(source['files'].items()):
        parts = path.split('/')
        if len(parts) == 4 and parts[0] == 'roles' and parts[2] in ('tasks', 'handlers') and path.endswith(_YAML):
            tasks.extend(rp.walk_tasks(rp.load_yaml(text, 'playbook %s %s' % (source['name'], path), loader)))
    for task in tasks:
        module, dummy = rp.action_of(task)
        if module and module.count('.') >= 2 and not module.startswith(rp.BUILTIN):
            found.add('.'.join(module.split('.')[:2]))
    return sorted(found)


def config_map_skeleton(source, stages, loader, dump):
    """The package's configMap for a playbook: the variables the plays of the apply stage set in their ``vars:``,
    then those of ``group_vars/all.yml``, each a key holding its YAML (``dump``: data -> YAML text). The CR's
    configMap keys are extra variables, which win over both. A ``!vault`` or ``!unsafe`` value is no key."""
    apply = stages.get('apply') or {}
    graph = playbook_graph(source, apply['playbook'], loader) if 'playbook' in apply else []
    found = [p.get('vars') for dummy, plays in graph for p in plays if _import_of(p) is None]
    path = next((p for p in ('group_vars/all.yml', 'group_vars/all.yaml', 'group_vars/all') if p in source['files']), None)
    if path:
        found.append(rp.load_yaml(source['files'][path], 'playbook %s %s' % (source['name'], path), loader))
    keys = {}
    for variables in found:
        for name, value in sorted(variables.items()) if isinstance(variables, dict) else []:
            if rp.plain_default(value):
                keys.setdefault(str(name), dump(value))
    bad = sorted(k for k in keys if not rp.VARIABLE.match(k))
    if bad:
        raise rp.RolePackageError('playbook %s: variable(s) %s cannot be configMap keys' % (source['name'], ', '.join(bad)))
    return keys
