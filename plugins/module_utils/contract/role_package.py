# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""An Ansible role as a NodeWright package: which of the role's task files each agent stage runs, the package's
``config.json``, its interrupts from the role's handlers, and the CR snippet that uses it. No I/O: the role is
handed in as data (:func:`role_from_files`), as the action plugin nodewright.bridge.role_package reads it.

Stages (the agent's modes), by default:

* ``apply`` runs ``tasks/main.yml``; ``config`` runs ``tasks/config.yml`` when the role has one, else
  ``tasks/main.yml`` again (a configMap edit re-runs it with the new variables); ``upgrade``,
  ``post-interrupt`` and ``uninstall`` run ``tasks/upgrade.yml``, ``tasks/post_interrupt.yml`` and
  ``tasks/uninstall.yml`` when the role has them (no stage otherwise).
* each ``<stage>-check`` runs ``tasks/verify.yml`` when the role has one (``uninstall-check`` excepted: it
  verifies the installed state), else the stage's own tasks in check mode, failing when any task would change.

``stages`` overrides a stage: a task file of the role (``tasks/x.yml`` or ``x``), ``check`` (its stage's tasks
in check mode; only for a ``-check`` stage), or None (no such stage).

Handlers that reboot or restart a service are the operator's interrupts, not the stage's: they become the
package's ``interrupt`` (merged as the operator merges: a reboot wins, services add up) and, per configMap key,
its ``configInterrupts`` (the interrupts of the handlers that the tasks using the key's variable notify). In the
package they are replaced by a message saying so (an extra handlers file next to the role's own, which stays as it
is). A handler whose service name is templated cannot be mapped and runs as written; ``unmapped`` says why.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re

from ansible_collections.nodewright.bridge.plugins.module_utils.model.stages import APPLY, CONFIG, POST_INTERRUPT, UNINSTALL, UPGRADE

# The stages a role maps task files to: the agent's modes (skyhook_agent.step.Mode) of a stage pod, stages.POD_STAGES,
# in the order a role takes them (apply before config, which defaults to apply's tasks); interrupt is the operator's.
STAGES = (APPLY, CONFIG, UPGRADE, POST_INTERRUPT, UNINSTALL)
CHECKED = dict((s, s + '-check') for s in STAGES)
DEFAULT_TASKS = {'apply': 'main.yml', 'config': 'config.yml', 'upgrade': 'upgrade.yml',
                 'post-interrupt': 'post_interrupt.yml', 'uninstall': 'uninstall.yml'}
VERIFY = 'verify.yml'
# The step scripts in skyhook_dir (the agent runs ``path`` with ``arguments``; an upgrade step takes none)
STAGE_SCRIPT = 'nodewright_role_stage.sh'
UPGRADE_SCRIPTS = {'upgrade': 'nodewright_role_upgrade.sh', 'upgrade-check': 'nodewright_role_upgrade_check.sh'}
HANDLERS_FILE = 'nodewright_package.yml'
PACKAGE_FILE = 'nodewright_role_package.json'

_REBOOT = ('reboot', 'ansible.builtin.reboot', 'ansible.legacy.reboot')
_SERVICE = ('service', 'systemd', 'systemd_service', 'ansible.builtin.service', 'ansible.builtin.systemd',
            'ansible.builtin.systemd_service', 'ansible.legacy.service', 'ansible.legacy.systemd',
            'ansible.legacy.systemd_service')
_RESTARTS = ('restarted', 'reloaded')
_VAULT = '$ANSIBLE_VAULT;'
_VARIABLE = re.compile(r'^[A-Za-z_][A-Za-z0-9_]*$')
_JINJA_NAME = re.compile(r'{{-?\s*([A-Za-z_][A-Za-z0-9_]*)')
_TASK_KEYWORDS = frozenset((
    'name', 'notify', 'when', 'register', 'loop', 'loop_control', 'with_items', 'tags', 'become', 'become_user',
    'changed_when', 'failed_when', 'ignore_errors', 'vars', 'block', 'rescue', 'always', 'listen', 'delegate_to',
    'environment', 'no_log', 'check_mode', 'diff', 'until', 'retries', 'delay', 'args', 'run_once', 'timeout'))


class RolePackageError(Exception):
    """A role that cannot become a package; the message names the file or stage at fault."""


def role_from_files(name, files):
    """The role as this module reads it. ``files``: path relative to the role -> text, every file of the role.

    Returns ``{'name', 'tasks': {file name: text}, 'handlers': text or None, 'defaults': text or None,
    'argument_specs': text or None, 'vaulted': [paths]}``."""
    if not files:
        raise RolePackageError('role %s: no files' % name)
    tasks = dict((p[len('tasks/'):], t) for p, t in files.items()
                 if p.startswith('tasks/') and p.endswith(('.yml', '.yaml')) and '/' not in p[len('tasks/'):])
    vaulted = sorted(p for p, t in files.items() if isinstance(t, str) and t.lstrip().startswith(_VAULT))

    def first(*paths):
        return next((files[p] for p in paths if p in files), None)
    return {'name': name, 'tasks': tasks, 'vaulted': vaulted,
            'handlers': first('handlers/main.yml', 'handlers/main.yaml'),
            'defaults': first('defaults/main.yml', 'defaults/main.yaml'),
            'argument_specs': first('meta/argument_specs.yml', 'meta/argument_specs.yaml')}


def _task_file(role, value, stage):
    name = value[len('tasks/'):] if value.startswith('tasks/') else value
    if not name.endswith(('.yml', '.yaml')):
        name += '.yml'
    if name not in role['tasks']:
        raise RolePackageError('stages.%s: role %s has no tasks/%s' % (stage, role['name'], name))
    return name


def stage_map(role, overrides=None, loader=None):
    """``{mode: {'tasks': file name, 'check_mode': bool}}`` for every mode the package has, from the defaults
    and ``overrides`` (mode -> task file, ``check`` or None). Raises RolePackageError naming the stage or file;
    with ``loader`` (YAML text -> data) also for a task file a stage maps to that has no task."""
    overrides = dict(overrides or {})
    known = set(STAGES) | set(CHECKED.values())
    unknown = sorted(set(overrides) - known)
    if unknown:
        raise RolePackageError('stages: %s not a stage (one of %s)' % (', '.join(unknown), ', '.join(sorted(known))))
    if 'main.yml' not in role['tasks'] and 'apply' not in overrides:
        raise RolePackageError('role %s has no tasks/main.yml for the apply stage (or set stages.apply)' % role['name'])
    plan = {}
    for stage in STAGES:
        value = overrides.get(stage, DEFAULT_TASKS[stage] if DEFAULT_TASKS[stage] in role['tasks'] else None)
        if stage == 'config' and 'config' not in overrides and value is None and 'apply' in plan:
            value = plan['apply']['tasks']  # a configMap edit runs the role's main tasks again
        if value == 'check':
            raise RolePackageError('stages.%s: check is for a -check stage' % stage)
        if value is not None:
            plan[stage] = {'tasks': _task_file(role, value, stage), 'check_mode': False}
    for stage, check in CHECKED.items():
        value = overrides.get(check, 'default')
        if stage not in plan:
            if value not in ('default', None):
                raise RolePackageError('stages.%s: the package has no %s stage' % (check, stage))
            continue
        if value is None:
            continue
        if value == 'check' or (value == 'default' and (stage == 'uninstall' or VERIFY not in role['tasks'])):
            plan[check] = {'tasks': plan[stage]['tasks'], 'check_mode': True}
        else:
            plan[check] = {'tasks': _task_file(role, VERIFY if value == 'default' else value, check),
                           'check_mode': False}
    for mode in sorted(plan) if loader else ():
        name = plan[mode]['tasks']
        if not _load_yaml(role['tasks'][name], 'role %s tasks/%s' % (role['name'], name), loader):
            raise RolePackageError('stages.%s: role %s tasks/%s has no task' % (mode, role['name'], name))
    return plan


def refuse_vaulted(role, allow=False):
    """RolePackageError naming the vault-encrypted files of the role, unless ``allow``: a package image is read by
    anyone who can pull it, and the stage has no vault password."""
    if role['vaulted'] and not allow:
        raise RolePackageError('role %s: vault-encrypted file(s) %s would be baked into the image (set '
                               'allow_vault to build anyway)' % (role['name'], ', '.join(role['vaulted'])))


def config_json(package_name, version, stages):
    """The agent's config.json (schema v1) for ``stages`` (stage_map's result): every step on the host (both agents
    run it chrooted into the host's root), idempotence left to Ansible (the step runs each time it is asked)."""
    modes = {}
    for mode in sorted(stages):
        upgrade = mode in UPGRADE_SCRIPTS
        modes[mode] = [{'name': mode, 'path': UPGRADE_SCRIPTS[mode] if upgrade else STAGE_SCRIPT,
                        'arguments': [] if upgrade else [mode], 'returncodes': [0], 'on_host': True, 'env': {},
                        'idempotence': True, 'upgrade_step': upgrade}]
    return {'schema_version': 'v1', 'package_name': package_name, 'package_version': version,
            'expected_config_files': [], 'modes': modes}


def _load_yaml(text, where, loader):
    if text is None:
        return None
    try:
        return loader(text)
    except Exception as exc:  # pylint: disable=broad-exception-caught
        raise RolePackageError('%s: not valid YAML: %s' % (where, exc))


def _action(task):
    """(module name, its arguments) of a task or handler; (None, {}) when it has none."""
    for key, value in task.items():
        if key in _TASK_KEYWORDS or key.startswith('with_'):
            continue
        args = value if isinstance(value, dict) else {'_raw_params': value}
        if isinstance(task.get('args'), dict):
            args = dict(args, **task['args'])
        return key, args
    return None, {}


def _handler_interrupt(handler):
    """(interrupt, why not) of one handler: a reboot, a service restart, or (None, reason) / (None, None)."""
    module, args = _action(handler)
    if module in _REBOOT:
        return {'type': 'reboot', 'services': []}, None
    if module in _SERVICE and args.get('state') in _RESTARTS:
        service = args.get('name')
        if not isinstance(service, str) or '{{' in service or '{%' in service:
            return None, 'handler %r: the service name %r is templated; it runs in the stage' % (
                handler.get('name'), service)
        return {'type': 'service', 'services': [service]}, None
    return None, None


def merge_interrupts(interrupts):
    """One interrupt for several, as the operator merges them: a reboot wins, then the service restarts add up."""
    if not interrupts:
        return None
    if any(i['type'] == 'reboot' for i in interrupts):
        return {'type': 'reboot'}
    services = sorted(set(s for i in interrupts for s in i['services']))
    return {'type': 'service', 'services': services}


def _walk(tasks):
    for task in tasks or []:
        if not isinstance(task, dict):
            continue
        yield task
        for key in ('block', 'rescue', 'always'):
            yield from _walk(task.get(key))


def _names(value):
    """The variables a value's templates start with (``{{ var ...``), recursively."""
    if isinstance(value, str):
        return set(_JINJA_NAME.findall(value))
    if isinstance(value, dict):
        return set().union(*[_names(v) for v in value.values()]) if value else set()
    if isinstance(value, list):
        return set().union(*[_names(v) for v in value]) if value else set()
    return set()


def _notified(task):
    notify = task.get('notify')
    return [notify] if isinstance(notify, str) else [n for n in notify or [] if isinstance(n, str)]


def interrupts(role, stages, loader):
    """The role's handlers as interrupts: ``{'interrupt', 'config_interrupts', 'mapped', 'unmapped',
    'handlers'}``. ``loader``: a YAML loader (text -> data). ``handlers`` is the extra handlers file's data: the
    mapped handlers replaced by a message, the others as they are."""
    handlers = _load_yaml(role['handlers'], 'role %s handlers/main.yml' % role['name'], loader) or []
    by_topic, mapped, unmapped, replaced = {}, {}, [], []
    for handler in handlers:
        interrupt, why = _handler_interrupt(handler)
        if why:
            unmapped.append(why)
        if interrupt is None:
            replaced.append(handler)
            continue
        mapped[handler.get('name')] = interrupt
        listen = handler.get('listen')
        for topic in [handler.get('name')] + ([listen] if isinstance(listen, str) else list(listen or [])):
            by_topic.setdefault(topic, []).append(interrupt)
        stub = dict((k, handler[k]) for k in ('name', 'listen') if k in handler)
        stub['ansible.builtin.debug'] = {'msg': 'left to NodeWright: the package interrupt (%s)' % _describe(interrupt)}
        replaced.append(stub)
    # per variable, the interrupts of the handlers that the tasks using it notify (apply and config stages)
    by_variable = {}
    for stage in ('apply', 'config'):
        if stage not in stages:
            continue
        name = stages[stage]['tasks']
        tasks = _load_yaml(role['tasks'][name], 'role %s tasks/%s' % (role['name'], name), loader)
        for task in _walk(tasks):
            fired = [i for n in _notified(task) for i in by_topic.get(n, [])]
            if fired:
                for variable in _names(task):
                    by_variable.setdefault(variable, []).extend(fired)
    every = [i for group in by_topic.values() for i in group]
    return {'interrupt': merge_interrupts(every), 'mapped': mapped, 'unmapped': unmapped, 'handlers': replaced,
            'config_interrupts': dict((v, merge_interrupts(i)) for v, i in by_variable.items())}


def _describe(interrupt):
    if interrupt['type'] == 'reboot':
        return 'reboot'
    return 'service restart of %s' % ', '.join(interrupt['services'])


def config_map_skeleton(role, loader, dump):
    """The package's configMap: each role variable with a default (``defaults/main.yml``, then the entry point
    ``main`` of ``meta/argument_specs.yml``) as a key holding its YAML (``dump``: data -> YAML text). The CR's
    configMap keys become the role's variables (extra vars, parsed as YAML)."""
    keys = {}
    specs = _load_yaml(role['argument_specs'], 'role %s meta/argument_specs.yml' % role['name'], loader) or {}
    options = (((specs.get('argument_specs') or {}).get('main') or {}).get('options') or {})
    for option, spec in sorted(options.items()):
        if isinstance(spec, dict) and 'default' in spec:
            keys[option] = dump(spec['default'])
    defaults = _load_yaml(role['defaults'], 'role %s defaults/main.yml' % role['name'], loader) or {}
    for variable, value in sorted(defaults.items()):
        keys[variable] = dump(value)
    bad = sorted(k for k in keys if not _VARIABLE.match(k))
    if bad:
        raise RolePackageError('role %s: variable(s) %s cannot be configMap keys' % (role['name'], ', '.join(bad)))
    return keys


def package_spec(image, version, found, config_map):
    """The CR's ``packages.<name>`` entry: image, version, the interrupt and the configInterrupts of the keys that
    have one (only keys of the configMap: the webhook refuses others)."""
    spec = {'image': image, 'version': version}
    if found['interrupt']:
        spec['interrupt'] = found['interrupt']
    config_interrupts = dict((k, v) for k, v in sorted(found['config_interrupts'].items()) if k in config_map and v)
    if config_interrupts:
        spec['configInterrupts'] = config_interrupts
    if config_map:
        spec['configMap'] = dict(config_map)
    return spec


def runtime_manifest(role_name, stages, gather_facts):
    """What the stage scripts read in the package (PACKAGE_FILE): the role and, per mode, its task file and whether
    it runs in check mode."""
    return json.dumps({'role': role_name, 'gather_facts': bool(gather_facts), 'handlers_from': HANDLERS_FILE,
                       'stages': stages}, sort_keys=True, indent=1)


# The runtime files (the collection's package_runtime/) and where each goes in the image's skyhook_dir
RUNTIME_FILES = {
    'nodewright_role_stage.sh': 'nodewright_role_stage.sh',
    'nodewright_role_upgrade.sh': 'nodewright_role_upgrade.sh',
    'nodewright_role_upgrade_check.sh': 'nodewright_role_upgrade_check.sh',
    'python.sh': 'runtime/bin/python',
    'stage.py': 'runtime/stage.py',
    'sitecustomize.py': 'runtime/site/sitecustomize.py',
    'callback_plugins/nodewright_stage.py': 'runtime/callback_plugins/nodewright_stage.py',
}
# what builds the runtime (not copied into the image as such)
RUNTIME_BUILD_FILES = ('collect_runtime.sh', 'requirements.txt')


def runtime_containerfile(base):
    """The runtime image: the base's Python and the pinned packages gathered into skyhook_dir/runtime (one layer,
    shared by every role package built on it), and the step scripts. The build context holds RUNTIME_BUILD_FILES
    and the runtime files under ``files/`` at their places in skyhook_dir."""
    return '\n'.join([
        'FROM %s AS build' % base,
        '# the base image Python, with pip (a slim Debian base has neither: apt installs them)',
        'RUN (command -v python3 && python3 -m pip --version) > /dev/null 2>&1 || (apt-get update'
        ' && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 python3-pip'
        ' ca-certificates && rm -rf /var/lib/apt/lists/*)',
        'COPY collect_runtime.sh requirements.txt /nw/',
        'RUN python3 -m pip install --no-cache-dir --disable-pip-version-check --break-system-packages'
        ' --only-binary=:all: --no-compile --target /nw/site -r /nw/requirements.txt',
        'RUN sh /nw/collect_runtime.sh /nw/runtime /nw/site',
        'FROM %s' % base,
        'COPY --from=build /nw/runtime /skyhook-package/skyhook_dir/runtime',
        'COPY files/ /skyhook-package/skyhook_dir/',
        '',
    ])


def package_containerfile(runtime_image, labels):
    """A role package: the runtime image and one layer with the role, its collections, config.json and the stage
    manifest (context: ``skyhook-package/``)."""
    lines = ['FROM %s' % runtime_image]
    lines += ['LABEL %s=%s' % (k, json.dumps(v)) for k, v in sorted(labels.items())]
    lines += ['COPY skyhook-package/ /skyhook-package/', '']
    return '\n'.join(lines)


_BUILTIN = ('ansible.builtin.', 'ansible.legacy.')


def needed_collections(role, meta_text, loader):
    """The collections the role's tasks and handlers name modules of (``ns.coll.module``), and those its
    ``meta/main.yml`` lists under ``collections``, sorted; ansible.builtin needs none. Raises RolePackageError for
    role dependencies (``meta/main.yml`` ``dependencies``), which a package does not bring yet."""
    meta = _load_yaml(meta_text, 'role %s meta/main.yml' % role['name'], loader) or {}
    if meta.get('dependencies'):
        raise RolePackageError('role %s: meta/main.yml dependencies %s: a role package brings one role; build the '
                               'dependencies into it or as packages of their own' % (role['name'], meta['dependencies']))
    found = set(c for c in meta.get('collections') or [] if isinstance(c, str))
    texts = list(role['tasks'].items()) + ([('handlers/main.yml', role['handlers'])] if role['handlers'] else [])
    for name, text in texts:
        for task in _walk(_load_yaml(text, 'role %s %s' % (role['name'], name), loader)):
            module, dummy = _action(task)
            if module and module.count('.') >= 2 and not module.startswith(_BUILTIN):
                found.add('.'.join(module.split('.')[:2]))
    return sorted(found)
