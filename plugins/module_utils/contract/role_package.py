# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""An Ansible role as a NodeWright package: which of the role's task files each agent stage runs, the package's
``config.json``, its interrupts from the role's handlers, and the CR snippet that uses it. No I/O: the role is
handed in as data (:func:`role_from_files`), as the action plugin nodewright.bridge.role_package reads it. A
playbook as the package's source is contract/playbook_package.py's, on the rules here.

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
its ``configInterrupts`` (the interrupts of the handlers that the tasks using the key's variable notify: in the
task's arguments and conditions, or in the template a ``template`` task renders). In the package they are
replaced by a message saying so (an extra handlers file next to the role's own, which stays as it is). A reboot
is ``ansible.builtin.reboot`` or a command that is only ``reboot``, ``shutdown -r [now|+N]`` or ``systemctl
reboot``; a restart is a service or systemd module with state ``restarted`` or ``reloaded`` and a plain name
(nothing else set), or a command that is only ``systemctl restart|reload <unit>`` or ``service <name> restart``.
Every other handler (a conditional one too: the interrupt would not be) runs in the stage as written, and
``unmapped`` names it with the reason.

Secrets: a vault-encrypted file, or an inline ``!vault`` value in any YAML file, is refused by name unless
allowed (:func:`refuse_vaulted`): the image is read by anyone who can pull it, and a stage has no vault password.
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
_COMMAND = ('command', 'shell', 'ansible.builtin.command', 'ansible.builtin.shell', 'ansible.legacy.command',
            'ansible.legacy.shell')
_TEMPLATE = ('template', 'ansible.builtin.template', 'ansible.legacy.template')
INCLUDE_TASKS = ('include_tasks', 'import_tasks', 'ansible.builtin.include_tasks', 'ansible.builtin.import_tasks',
                 'ansible.legacy.include_tasks', 'ansible.legacy.import_tasks')
_RESTARTS = ('restarted', 'reloaded')
# what a service handler may set besides its name and state and still be the operator's restart (which does no more)
_SERVICE_ARGS = ('name', 'service', 'unit', 'state')
_BIN = r'(?:(?:/usr)?/s?bin/)?'
_REBOOT_COMMAND = re.compile(r'^%s(?:reboot|shutdown\s+(?:-r|--reboot)(?:\s+(?:now|\+?\d+))?|systemctl\s+reboot)$' % _BIN)
_RESTART_COMMAND = re.compile(r'^%s(?:systemctl\s+(?:restart|reload|try-restart|reload-or-restart)\s+(?P<unit>[\w@.:-]+)'
                              r'|service\s+(?P<service>[\w@.:-]+)\s+(?:restart|reload))$' % _BIN)
_VAULT = '$ANSIBLE_VAULT;'
_VAULT_TAG = re.compile(r'(?:^|[\s:\[{,-])!vault(?:\s|$)', re.M)
_VAULT_KEY = re.compile(r'^[\s-]*([^\s#:\'"][^#:]*?)\s*:\s+!vault(?:\s|$)', re.M)
_VARS_DIRS = ('vars', 'defaults', 'group_vars', 'host_vars')
VARIABLE = re.compile(r'^[A-Za-z_][A-Za-z0-9_]*$')
_JINJA_NAME = re.compile(r'{{-?\s*([A-Za-z_][A-Za-z0-9_]*)')
_CONDITIONS = ('when', 'changed_when', 'failed_when', 'until')
_TASK_KEYWORDS = frozenset((
    'name', 'notify', 'when', 'register', 'loop', 'loop_control', 'with_items', 'tags', 'become', 'become_user',
    'changed_when', 'failed_when', 'ignore_errors', 'vars', 'block', 'rescue', 'always', 'listen', 'delegate_to',
    'environment', 'no_log', 'check_mode', 'diff', 'until', 'retries', 'delay', 'args', 'run_once', 'timeout',
    'async', 'poll', 'throttle', 'any_errors_fatal', 'become_method', 'become_flags', 'become_exe', 'connection',
    'collections', 'module_defaults', 'debugger', 'remote_user', 'port', 'ignore_unreachable', 'delegate_facts'))


class RolePackageError(Exception):
    """A role that cannot become a package; the message names the file or stage at fault."""


class VaultedValue(str):
    """An inline ``!vault`` value (its ciphertext) as the action's YAML loader reads it; never a configMap default."""


class UnsafeValue(str):
    """A ``!unsafe`` value as the action's YAML loader reads it (written back with its tag)."""


def role_from_files(name, files):
    """The role as this module reads it. ``files``: path relative to the role -> text, every file of the role.

    Returns ``{'kind': 'role', 'name', 'tasks': {file name: text}, 'handlers': text or None, 'defaults': text or
    None, 'argument_specs': text or None, 'files': files}``."""
    if not files:
        raise RolePackageError('role %s: no files' % name)
    tasks = dict((p[len('tasks/'):], t) for p, t in files.items()
                 if p.startswith('tasks/') and p.endswith(('.yml', '.yaml')) and '/' not in p[len('tasks/'):])

    def first(*paths):
        return next((files[p] for p in paths if p in files), None)
    return {'kind': 'role', 'name': name, 'tasks': tasks, 'files': dict(files),
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
        if not load_yaml(role['tasks'][name], 'role %s tasks/%s' % (role['name'], name), loader):
            raise RolePackageError('stages.%s: role %s tasks/%s has no task' % (mode, role['name'], name))
    return plan


def _is_yaml(path):
    """A YAML file of a role or a playbook's directory: ``.yml``/``.yaml``, or a vars file without extension."""
    parts = path.split('/')
    if parts[-1].endswith(('.yml', '.yaml')):
        return True
    return '.' not in parts[-1] and any(p in _VARS_DIRS for p in parts[:-1])


def vaulted_paths(data, where='', kinds=(VaultedValue,)):
    """Where the inline vault values (``kinds``: the marked values) are in loaded YAML data: ``db_password``,
    ``db.password``, ``users[1].token``."""
    if isinstance(data, kinds):
        return [where or '(the document)']
    if isinstance(data, dict):
        return [p for k, v in data.items() for p in vaulted_paths(v, '%s.%s' % (where, k) if where else str(k), kinds)]
    if isinstance(data, list):
        return [p for i, v in enumerate(data) for p in vaulted_paths(v, '%s[%d]' % (where, i), kinds)]
    return []


def plain_default(value):
    """Whether a default can be a configMap key: no ``!vault`` value (a configMap is plain text in the cluster) and
    no ``!unsafe`` one (a key's value reaches the stage as an extra variable, which Ansible templates)."""
    return not vaulted_paths(value, kinds=(VaultedValue, UnsafeValue))


def find_vaulted(files, loader):
    """``(files, {file: [variables]})``: the vault-encrypted files (any file) and the inline ``!vault`` values of the
    YAML files, by variable. ``loader`` (YAML text -> data) reads ``!vault`` as VaultedValue; a file it cannot read
    names the keys its ``key: !vault`` lines set."""
    whole, inline = [], {}
    for path, text in sorted(files.items()):
        if not isinstance(text, str):
            continue
        if text.lstrip().startswith(_VAULT):
            whole.append(path)
        elif _is_yaml(path) and _VAULT_TAG.search(text):
            try:
                names = vaulted_paths(loader(text))
            except Exception:  # pylint: disable=broad-exception-caught
                names = _VAULT_KEY.findall(text) or ['(a !vault value)']
            if names:
                inline[path] = names
    return whole, inline


def refuse_vaulted(source, loader, allow=False):
    """RolePackageError naming the vault-encrypted files and the inline ``!vault`` values (file and variable) of a
    role or playbook (``source['files']``), unless ``allow``: a package image is read by anyone who can pull it,
    and the stage has no vault password. Called before anything else reads the YAML."""
    if allow:
        return
    whole, inline = find_vaulted(source['files'], loader)
    parts = []
    if whole:
        parts.append('vault-encrypted file(s) %s' % ', '.join(whole))
    if inline:
        parts.append('inline !vault value(s) %s' % '; '.join('%s: %s' % (p, ', '.join(n)) for p, n in sorted(inline.items())))
    if parts:
        raise RolePackageError('%s %s: %s would be baked into the image (set allow_vault to build anyway)'
                               % (source.get('kind', 'role'), source['name'], ' and '.join(parts)))


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


def load_yaml(text, where, loader):
    if text is None:
        return None
    try:
        return loader(text)
    except Exception as exc:  # pylint: disable=broad-exception-caught
        raise RolePackageError('%s: not valid YAML: %s' % (where, exc))


def action_of(task):
    """(module name, its arguments) of a task or handler; (None, {}) when it has none."""
    for key, value in task.items():
        if key in _TASK_KEYWORDS or key.startswith('with_'):
            continue
        if key in ('action', 'local_action') and isinstance(value, str) and value.split():
            key, value = value.split(None, 1)[0], ' '.join(value.split()[1:])
        elif key in ('action', 'local_action') and isinstance(value, dict) and 'module' in value:
            key, value = value['module'], dict((k, v) for k, v in value.items() if k != 'module')
        args = value if isinstance(value, dict) else {'_raw_params': value}
        if isinstance(task.get('args'), dict):
            args = dict(args, **task['args'])
        return key, args
    return None, {}


def templated(value):
    return not isinstance(value, str) or '{{' in value or '{%' in value


def _command_line(args):
    """A command or shell task's command line, its words single-spaced; None when it has none."""
    argv = args.get('argv')
    if isinstance(argv, list) and argv and all(isinstance(a, str) for a in argv):
        return ' '.join(argv)
    line = args.get('_raw_params', args.get('cmd'))
    return ' '.join(line.split()) if isinstance(line, str) else None


def _module_interrupt(module, args):
    """(interrupt, None) for a module call that reboots or restarts a service, else (None, why not)."""
    if module is None:
        return None, 'it calls no module'
    if module in _REBOOT:
        return {'type': 'reboot', 'services': []}, None
    if module in _SERVICE:
        service = args.get('name', args.get('service', args.get('unit')))
        if args.get('state') not in _RESTARTS:
            return None, '%s with state %r is not a restart or reload' % (module, args.get('state'))
        if templated(service):
            return None, 'the service name %r is templated' % (service,)
        others = sorted(k for k in args if k not in _SERVICE_ARGS)
        if others:
            return None, '%s also sets %s, which the interrupt does not' % (module, ', '.join(others))
        return {'type': 'service', 'services': [service]}, None
    if module in _COMMAND:
        line = _command_line(args)
        if line and not templated(line) and _REBOOT_COMMAND.match(line):
            return {'type': 'reboot', 'services': []}, None
        found = None if not line or templated(line) else _RESTART_COMMAND.match(line)
        if found:
            return {'type': 'service', 'services': [found.group('unit') or found.group('service')]}, None
        return None, '%s %r is neither a reboot nor a service restart' % (module, line)
    return None, '%s is neither a reboot nor a service restart' % module


def _handler_interrupt(handler):
    """(interrupt, None) of a handler that reboots or restarts a service, else (None, why it stays in the stage)."""
    interrupt, why = _module_interrupt(*action_of(handler))
    if interrupt is not None and 'when' in handler:
        interrupt, why = None, 'it is conditional (when: %s), the package interrupt would not be' % (handler['when'],)
    if interrupt is not None:
        return interrupt, None
    return None, 'handler %r: %s; it runs in the stage' % (handler.get('name'), why)


def merge_interrupts(interrupts):
    """One interrupt for several, as the operator merges them: a reboot wins, then the service restarts add up."""
    if not interrupts:
        return None
    if any(i['type'] == 'reboot' for i in interrupts):
        return {'type': 'reboot'}
    services = sorted(set(s for i in interrupts for s in i['services']))
    return {'type': 'service', 'services': services}


def walk_tasks(tasks):
    for task in tasks or []:
        if not isinstance(task, dict):
            continue
        yield task
        for key in ('block', 'rescue', 'always'):
            yield from walk_tasks(task.get(key))


class _AnyName(dict):
    """jinja2's filters or tests, where any name is one: Ansible's and the collections' are not jinja2's, and
    finding a template's variables compiles it, which fails on a name it does not know."""

    def get(self, key, default=None):
        return dict.get(self, key) or _anything


def _anything(*args, **kwargs):
    return None


def _parse(text):
    """(the variables a Jinja template reads, the templates it includes, imports or extends)."""
    from jinja2 import Environment, meta  # pylint: disable=import-outside-toplevel
    environment = Environment(extensions=['jinja2.ext.do', 'jinja2.ext.loopcontrols'])
    environment.filters, environment.tests = _AnyName(environment.filters), _AnyName(environment.tests)
    parsed = environment.parse(text)
    return set(meta.find_undeclared_variables(parsed)), [t for t in meta.find_referenced_templates(parsed) if t]


def jinja_names(text, expression=False):
    """The variables a Jinja template (``expression``: a bare expression, as ``when`` is) reads: jinja2's undeclared
    variables; for text jinja2 cannot parse, the names its ``{{ name`` start with. Jinja2 is the controller's (the
    action plugin's), imported only here."""
    try:
        return _parse('{{ (%s) }}' % text if expression else text)[0]
    except Exception:  # pylint: disable=broad-exception-caught
        return set(_JINJA_NAME.findall(text))


def _names(value):
    """The variables a value's templates read, recursively."""
    if isinstance(value, str):
        return jinja_names(value) if '{{' in value or '{%' in value else set()
    if isinstance(value, dict):
        return set().union(*[_names(v) for v in value.values()]) if value else set()
    if isinstance(value, list):
        return set().union(*[_names(v) for v in value]) if value else set()
    return set()


def template_names(src, template_text, seen=None):
    """The variables the template ``src`` reads, and those of the templates it includes, imports or extends
    (``template_text``: a name -> its text or None). A template not found gives none."""
    seen = set() if seen is None else seen
    text = template_text(src) if isinstance(src, str) and src not in seen else None
    if text is None:
        return set()
    seen.add(src)
    try:
        names, referenced = _parse(text)
    except Exception:  # pylint: disable=broad-exception-caught
        names, referenced = set(_JINJA_NAME.findall(text)), []
    for other in referenced:
        names |= template_names(other, template_text, seen)
    return names


def task_variables(task, template_text):
    """The variables a task reads: in its arguments and keywords, in its conditions (bare expressions), and in the
    template a ``template`` task renders (``template_text``: its ``src`` -> the template's text or None)."""
    names = set()
    for key, value in task.items():
        if key in ('block', 'rescue', 'always'):
            continue
        if key in _CONDITIONS:
            conditions = value if isinstance(value, list) else [value]
            names |= set().union(set(), *[jinja_names(c, expression=True) for c in conditions if isinstance(c, str)])
        else:
            names |= _names(value)
    module, args = action_of(task)
    if module in _TEMPLATE and not templated(args.get('src')):
        names |= template_names(args['src'], template_text)
    return names


def _notified(task):
    notify = task.get('notify')
    return [notify] if isinstance(notify, str) else [n for n in notify or [] if isinstance(n, str)]


def map_handlers(handlers):
    """The handlers as interrupts: ``{'interrupt', 'mapped', 'unmapped', 'handlers', 'by_topic'}``: ``handlers``
    the mapped ones replaced by a message, the others as they are; ``by_topic`` what notifying a name or a
    ``listen`` topic fires."""
    by_topic, mapped, unmapped, replaced = {}, {}, [], []
    for handler in handlers or []:
        if not isinstance(handler, dict):
            continue
        interrupt, why = _handler_interrupt(handler)
        if interrupt is None:
            unmapped.append(why)
            replaced.append(handler)
            continue
        mapped[handler.get('name')] = interrupt
        listen = handler.get('listen')
        for topic in [handler.get('name')] + ([listen] if isinstance(listen, str) else list(listen or [])):
            by_topic.setdefault(topic, []).append(interrupt)
        stub = dict((k, handler[k]) for k in ('name', 'listen') if k in handler)
        stub['ansible.builtin.debug'] = {'msg': 'left to NodeWright: the package interrupt (%s)' % _describe(interrupt)}
        replaced.append(stub)
    every = [i for group in by_topic.values() for i in group]
    return {'interrupt': merge_interrupts(every), 'mapped': mapped, 'unmapped': unmapped, 'handlers': replaced,
            'by_topic': by_topic}


def config_interrupts(tasks, by_topic, template_text):
    """Per variable, the interrupts of the handlers that the ``tasks`` reading it notify, merged."""
    by_variable = {}
    for task in tasks:
        fired = [i for n in _notified(task) for i in by_topic.get(n, [])]
        if fired:
            for variable in task_variables(task, template_text):
                by_variable.setdefault(variable, []).extend(fired)
    return dict((v, merge_interrupts(i)) for v, i in by_variable.items())


def _role_tasks(role, name, loader, seen=None):
    """The tasks of the role's task file ``name`` (blocks walked) and of the role's task files it includes or
    imports by a plain name."""
    seen = set() if seen is None else seen
    seen.add(name)
    tasks = list(walk_tasks(load_yaml(role['tasks'][name], 'role %s tasks/%s' % (role['name'], name), loader)))
    for task in list(tasks):
        module, args = action_of(task)
        target = args.get('file', args.get('_raw_params')) if module in INCLUDE_TASKS else None
        if not templated(target):
            target = target[len('tasks/'):] if target.startswith('tasks/') else target
            if target in role['tasks'] and target not in seen:
                tasks.extend(_role_tasks(role, target, loader, seen))
    return tasks


def role_template(role):
    """A ``template`` task's ``src`` -> the role's template text (``templates/<src>``, else ``<src>``), or None."""
    def text(src):
        return next((role['files'][p] for p in ('templates/' + src, src) if isinstance(role['files'].get(p), str)), None)
    return text


def interrupts(role, stages, loader):
    """The role's handlers as interrupts: ``{'interrupt', 'config_interrupts', 'mapped', 'unmapped',
    'handlers'}``. ``loader``: a YAML loader (text -> data). ``handlers`` is the extra handlers file's data: the
    mapped handlers replaced by a message, the others as they are. ``unmapped``: each other handler, and why."""
    found = map_handlers(load_yaml(role['handlers'], 'role %s handlers/main.yml' % role['name'], loader) or [])
    tasks = []
    for stage in ('apply', 'config'):  # the stages a configMap edit re-runs (config) or first runs (apply)
        if stage in stages:
            tasks.extend(_role_tasks(role, stages[stage]['tasks'], loader))
    found['config_interrupts'] = config_interrupts(tasks, found.pop('by_topic'), role_template(role))
    return found


def _describe(interrupt):
    if interrupt['type'] == 'reboot':
        return 'reboot'
    return 'service restart of %s' % ', '.join(interrupt['services'])


def config_map_skeleton(role, loader, dump):
    """The package's configMap: each role variable with a default (``defaults/main.yml``, then the entry point
    ``main`` of ``meta/argument_specs.yml``) as a key holding its YAML (``dump``: data -> YAML text). The CR's
    configMap keys become the role's variables (extra vars, parsed as YAML). A default holding a ``!vault`` value
    (built with allow_vault) or an ``!unsafe`` one is no key (plain_default)."""
    keys = {}
    specs = load_yaml(role['argument_specs'], 'role %s meta/argument_specs.yml' % role['name'], loader) or {}
    options = (((specs.get('argument_specs') or {}).get('main') or {}).get('options') or {})
    for option, spec in sorted(options.items()):
        if isinstance(spec, dict) and 'default' in spec and plain_default(spec['default']):
            keys[option] = dump(spec['default'])
    defaults = load_yaml(role['defaults'], 'role %s defaults/main.yml' % role['name'], loader) or {}
    for variable, value in sorted(defaults.items()):
        if not plain_default(value):
            keys.pop(variable, None)
        else:
            keys[variable] = dump(value)
    bad = sorted(k for k in keys if not VARIABLE.match(k))
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


BUILTIN = ('ansible.builtin.', 'ansible.legacy.')


def needed_collections(role, meta_text, loader):
    """The collections the role's tasks and handlers name modules of (``ns.coll.module``), and those its
    ``meta/main.yml`` lists under ``collections``, sorted; ansible.builtin needs none. Raises RolePackageError for
    role dependencies (``meta/main.yml`` ``dependencies``), which a package does not bring yet."""
    meta = load_yaml(meta_text, 'role %s meta/main.yml' % role['name'], loader) or {}
    if meta.get('dependencies'):
        raise RolePackageError('role %s: meta/main.yml dependencies %s: a role package brings one role; build the '
                               'dependencies into it or as packages of their own' % (role['name'], meta['dependencies']))
    found = set(c for c in meta.get('collections') or [] if isinstance(c, str))
    texts = list(role['tasks'].items()) + ([('handlers/main.yml', role['handlers'])] if role['handlers'] else [])
    for name, text in texts:
        for task in walk_tasks(load_yaml(text, 'role %s %s' % (role['name'], name), loader)):
            module, dummy = action_of(task)
            if module and module.count('.') >= 2 and not module.startswith(BUILTIN):
                found.add('.'.join(module.split('.')[:2]))
    return sorted(found)
