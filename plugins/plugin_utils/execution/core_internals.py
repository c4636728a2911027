# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""Every private (underscore) ansible-core name the collection reads or writes: where, on which versions, and what
happens without it.

ansible-core promises nothing about these names; each one is listed in ``INTERNALS`` with its owner, the files that
use it, the versions it was checked on (``CHECKED_ON``: the sources of 2.16.19, 2.17.14, 2.18.19, 2.19.14, 2.20.10
and 2.21.5; ``versions`` narrows an entry to the releases that have it) and what the collection does without it.
The strategy matrix runs tests/strategy/test_core_internals_present.py on every version it tests, so a release that
drops or moves a name fails there first, with the name.

Three kinds of entry:

* read through an object that may lack the name one day: the callers go through this file's accessor (``accessor``),
  which falls back to something safe (``fallback``) rather than raising AttributeError in the middle of a rollout;
* the plugin types' interface (StrategyBase, ActionBase, CallbackBase, the inventory plugins' bases): underscore
  names every plugin of the type uses, not wrapped; without them the plugin cannot work at all;
* the shapes task_threads.py mirrors (ansible-core 2.19 and 2.20, checked at its import, ``_SHAPE_OK``, together
  with ``TaskExecutor.__init__``'s argument names and ``WorkerProcess._run``, which it copies and does not call):
  without them every task runs in a forked worker, as under any other strategy.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import collections
import importlib
import inspect
import re

from ansible.errors import AnsibleError
from ansible.module_utils.common.text.converters import to_bytes, to_native

CHECKED_ON = ('2.16', '2.17', '2.18', '2.19', '2.20', '2.21')

# how a name is found on its owner: a class attribute or method; an attribute of the instances (set by the class's
# code as ``self.<name>``, or declared as a field or slot); a name of a module (``owner`` a module path)
ATTRIBUTE, INSTANCE, MODULE = 'attribute', 'instance', 'module'

# One name: ``owner`` is ``module:Class`` (or a module, for MODULE); ``used_in`` the files (from the repository's root)
# that read or write it; ``versions`` ``(first, last)`` (``last`` None: the newest), None for every version checked;
# ``accessor`` the functions of this file it is read through (None: not wrapped); ``fallback`` what happens without it.
Internal = collections.namedtuple('Internal', 'name owner kind used_in versions accessor fallback')

STRATEGY, PLAY_CORE = 'plugins/strategy/budgeted.py', 'plugins/plugin_utils/rollout/play_rollout.py'
PLAY_PHASES, IN_PROCESS = 'plugins/plugin_utils/rollout/play_phases.py', 'plugins/plugin_utils/execution/in_process.py'
ACTION, TASK_THREADS = 'plugins/plugin_utils/execution/cluster_action.py', 'plugins/plugin_utils/execution/task_threads.py'
INVENTORY, VENUE = 'plugins/inventory/nodes.py', 'plugins/plugin_utils/execution/venue.py'
PLUGIN_GONE = 'the plugin cannot load; docs/strategy.md says what the playbooks do then'
INVENTORY_GONE = 'the nodes inventory plugin cannot load (a static inventory, as docs/inventory.md describes, still works)'
WORKERS = 'every task runs in a forked worker, as under any other strategy (task_threads._SHAPE_OK is False)'
TQM = 'ansible.executor.task_queue_manager:TaskQueueManager'
ITERATOR = 'ansible.executor.play_iterator:PlayIterator'
VALIDATION = 'ansible.module_utils.common.arg_spec:ValidationResult'


def _read(name, owner, used_in, accessor, fallback, kind=INSTANCE, versions=None):
    return Internal(name, owner, kind, tuple(used_in), versions, accessor, fallback)


def _interface(owner, names, used_in, fallback=PLUGIN_GONE, kind=INSTANCE):
    return [Internal(name, owner, kind, tuple(used_in), None, None, fallback) for name in names]


INTERNALS = [
    # ------------------------------------------------------------------ read or written through an accessor here
    _read('_unreachable_hosts', TQM, [PLAY_CORE], 'unreachable_hosts',
          '{}: the strategy sees no host unreachable; ansible-core still fails it, so it is scored failed'),
    _read('_failed_hosts', TQM, [PLAY_CORE], 'failed_hosts, mark_failed',
          '{}, and a host marked failed is not recorded: later plays and the retry file miss the hosts a stopped '
          'rollout never ran (the play still fails)'),
    _read('_stats', TQM, [PLAY_CORE], 'stats',
          'a stand-in that counts nothing: the recap lacks the never-admitted hosts (as skipped) and the '
          'nodewright_rollout custom stat (the rollout callback\'s report has them)'),
    _read('_terminated', TQM, [PLAY_CORE, STRATEGY], 'terminated',
          'False: a terminated run is seen when the loop ends rather than at once'),
    _read('_play', ITERATOR, [PLAY_CORE, PLAY_PHASES], 'play_of',
          'AnsibleError naming the name, before any host runs (the --limit driver needs no strategy)'),
    _read('_blocks', ITERATOR, [PLAY_CORE], 'play_blocks',
          'AnsibleError naming the name, when a host would start a second phase'),
    _read('_lock', 'ansible.utils.display:Display', [STRATEGY], 'display_lock',
          'None: the sequence engine forks without holding the display lock'),
    _read('_result', 'ansible.executor.task_result:TaskResult', [PLAY_PHASES], 'result_parts',
          '{}: the result is read as empty (no deleted node or held CR seen, a timeline step without its result)',
          versions=('2.16', '2.18')),
    _read('_host', 'ansible.executor.task_result:TaskResult', [PLAY_PHASES], 'result_parts',
          'the public ``host`` (2.19 and later)', versions=('2.16', '2.18')),
    _read('_task', 'ansible.executor.task_result:TaskResult', [PLAY_PHASES], 'result_parts',
          'the public ``task`` (2.19 and later)', versions=('2.16', '2.18')),
    _read('_return_data', 'ansible.executor.task_result:_RawTaskResult', [PLAY_PHASES], 'result_parts',
          '``_result``, then {} as for it', versions=('2.19', '2.20')),
    _read('utr', 'ansible._internal._task:HostTaskResult', [PLAY_PHASES], 'result_parts',
          '``_return_data``, ``_result``, then {} (a public field of a class of ansible._internal)', versions=('2.21', None)),
    _read('_completed', 'ansible.playbook.role:Role', [PLAY_CORE], 'role_host_records',
          'nothing forgotten: a host\'s later phase skips the roles it ran in an earlier one'),
    _read('_had_task_run', 'ansible.playbook.role:Role', [PLAY_CORE], 'role_host_records', 'as for _completed'),
    _read('_no_log_values', VALIDATION, [IN_PROCESS], 'no_log_values',
          'the values of the no_log options (and suboptions), read from the argument spec as ansible-core does'),
    _read('_deprecations', VALIDATION, [IN_PROCESS], 'validation_deprecations', '[]: a deprecated alias in use is not reported'),
    _read('_warnings', VALIDATION, [IN_PROCESS], 'validation_warnings',
          '[]: an option given under both its names is not warned about'),
    _read('_get_file_contents', 'ansible.parsing.dataloader:DataLoader', [ACTION, PLAY_CORE, INVENTORY], 'file_bytes',
          'the public get_text_file_contents (2.19 and later), encoded', kind=ATTRIBUTE),
    _read('_ciphertext', 'ansible.parsing.yaml.objects:AnsibleVaultEncryptedUnicode', [IN_PROCESS], 'is_vaulted',
          'the value\'s type name', versions=('2.16', '2.18')),
    _read('_ciphertext', 'ansible.parsing.vault:EncryptedString', [IN_PROCESS], 'is_vaulted', 'the value\'s type name',
          versions=('2.19', None)),
    # read by module_utils, which runs on the managed host too and cannot import this file: listed, not wrapped
    _read('_diff', 'ansible.module_utils.basic:AnsibleModule',
          ['plugins/module_utils/cluster_modules/%s.py' % m for m in ('node_cordon', 'node_state', 'cr_status', 'package_stage')]
          + ['plugins/module_utils/api/pod_run.py'], None,
          'none: AnsibleModule sets it in __init__ (and in_process.ControllerModule its own); a module without it fails'),
    # ------------------------------------------------------------------ task_threads.py's shapes (2.19 and 2.20)
    _read('_error_utils', 'ansible._internal._errors', [TASK_THREADS], None, WORKERS, kind=MODULE, versions=('2.19', '2.20')),
    _read('TaskContext', 'ansible._internal._task', [TASK_THREADS], None, WORKERS, kind=MODULE, versions=('2.19', '2.20')),
    _read('_RawTaskResult', 'ansible.executor.task_result', [TASK_THREADS], None, WORKERS, kind=MODULE,
          versions=('2.19', '2.20')),
    _read('WorkerProcess', 'ansible.plugins.strategy', [TASK_THREADS], None,
          WORKERS + ' (StrategyBase._queue_task builds its workers by this module global, replaced for one call)',
          kind=MODULE, versions=('2.19', '2.20')),
]
# ------------------------------------------------------------------ the plugin types' interface, not wrapped
STRATEGY_BASE, ACTION_BASE = 'ansible.plugins.strategy:StrategyBase', 'ansible.plugins.action:ActionBase'
INTERNALS += _interface(STRATEGY_BASE, ('_tqm', '_inventory', '_variable_manager', '_loader', '_blocked_hosts', '_results',
                                        '_workers'), [STRATEGY])
INTERNALS += _interface(STRATEGY_BASE, ('_queue_task', '_process_pending_results', '_set_hosts_cache'), [STRATEGY],
                        kind=ATTRIBUTE)
INTERNALS += _interface(ACTION_BASE, ('_task',),
                        [ACTION, VENUE, 'plugins/action/role_package.py', 'plugins/action/rollout_report.py'])
INTERNALS += _interface(ACTION_BASE, ('_connection', '_play_context'), [VENUE])
INTERNALS += _interface(ACTION_BASE, ('_loader',), [ACTION])
INTERNALS += _interface(ACTION_BASE, ('_execute_module',), [VENUE], kind=ATTRIBUTE)
INTERNALS += _interface(ACTION_BASE, ('_find_needle', '_compute_environment_string', '_supports_check_mode'), [ACTION],
                        kind=ATTRIBUTE)
INTERNALS += _interface(ACTION_BASE, ('_requires_connection',),
                        ['plugins/action/role_package.py', 'plugins/action/rollout_report.py'], kind=ATTRIBUTE)
INTERNALS += _interface('ansible.plugins.callback:CallbackBase', ('_display',), ['plugins/callback/rollout.py'],
                        fallback='the rollout callback cannot load (no progress lines, summary or report)')
INTERNALS += _interface('ansible.plugins.inventory:BaseInventoryPlugin', ('_read_config_data',), [INVENTORY],
                        fallback=INVENTORY_GONE, kind=ATTRIBUTE)
INTERNALS += _interface('ansible.plugins.inventory:Cacheable', ('_cache',), [INVENTORY], fallback=INVENTORY_GONE)
INTERNALS += _interface('ansible.plugins.inventory:Constructable', ('_set_composite_vars', '_add_host_to_composed_groups',
                                                                    '_add_host_to_keyed_groups'),
                        [INVENTORY], fallback=INVENTORY_GONE, kind=ATTRIBUTE)


# ------------------------------------------------------------------ TaskQueueManager


def unreachable_hosts(tqm):
    """TQM's ``{name: True}`` of the hosts unreachable in this run."""
    return getattr(tqm, '_unreachable_hosts', {})


def failed_hosts(tqm):
    """TQM's ``{name: True}`` of the hosts failed in this run (later plays and the retry file read it)."""
    return getattr(tqm, '_failed_hosts', {})


def mark_failed(tqm, name):
    """Record host ``name`` as failed in TQM, as a failed task would."""
    failed = getattr(tqm, '_failed_hosts', None)
    if failed is not None:
        failed[name] = True


class _NoStats(object):
    """What the strategy calls of TQM's AggregateStats, counting nothing."""

    def increment(self, what, host):
        """Nothing is counted."""

    def set_custom_stats(self, which, what, host=None):
        """Nothing is kept."""


def stats(tqm):
    """TQM's AggregateStats (the recap's counts and the custom stats)."""
    found = getattr(tqm, '_stats', None)
    return found if found is not None else _NoStats()


def terminated(tqm):
    """Whether the run was terminated (Ctrl-C, a dead worker)."""
    return bool(getattr(tqm, '_terminated', False))


# ------------------------------------------------------------------ PlayIterator, Display


def _required(owner, name, why):
    value = getattr(owner, name, None)
    if value is None:
        raise AnsibleError('nodewright.bridge.budgeted: this ansible-core\'s %s has no %s (%s); run the playbook with '
                           'another strategy or the --limit driver (docs/strategy.md)' % (type(owner).__name__, name, why))
    return value


def play_of(iterator):
    """The Play the iterator runs (the strategy's ``run`` is handed only the iterator)."""
    return _required(iterator, '_play', 'the play being run')


def play_blocks(iterator):
    """The play's blocks as the iterator runs them (tags applied): a host starting the play again starts there."""
    return _required(iterator, '_blocks', 'the play\'s blocks, to run a host in a second phase')


def display_lock(display):
    """The lock Display holds while writing; forks take it so that no child inherits it held. None without it."""
    return getattr(display, '_lock', None)


# ------------------------------------------------------------------ task results, roles


def result_parts(result):
    """``(host, task, result dict)`` of a task result as the strategy's ``_process_pending_results`` returns it."""
    utr = getattr(result, 'utr', None)
    if utr is not None:  # ansible-core 2.21: a HostTaskResult around the unified task result
        data = utr.as_result_dict()
    else:  # ``_return_data`` from ansible-core 2.19, ``_result`` before
        data = getattr(result, '_return_data', None)
        if data is None:
            data = getattr(result, '_result', None)
    host = getattr(result, 'host', None) or getattr(result, '_host', None)
    task = getattr(result, 'task', None) or getattr(result, '_task', None)
    return host, task, data if isinstance(data, dict) else {}


def role_host_records(role):
    """The Role's per-host records of having run in this play (``{host name: bool}`` each)."""
    return [record for record in (getattr(role, '_completed', None), getattr(role, '_had_task_run', None))
            if isinstance(record, dict)]


# ------------------------------------------------------------------ argument validation, files, vault


def no_log_values(validation, argument_spec, params):
    """The values a module result must not show: the ValidationResult's, or read from the spec as ansible-core does."""
    found = getattr(validation, '_no_log_values', None)
    if found is not None:
        return set(found)
    return _spec_no_log_values(argument_spec, params)


def _spec_no_log_values(argument_spec, params):
    values = set()
    for name, option in (argument_spec or {}).items():
        value = params.get(name)
        if option.get('no_log') and value:
            values.update(_texts(value))
        if option.get('options') and isinstance(value, (dict, list)):
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, dict):
                    values.update(_spec_no_log_values(option['options'], item))
    return values


def _texts(value):
    if isinstance(value, (str, bytes)):
        return [to_native(value, errors='surrogate_or_strict')] if value else []
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple, set, frozenset)):
        return [text for item in value for text in _texts(item)]
    if value is None or isinstance(value, bool):
        return []
    return [to_native(value, nonstring='simplerepr')]


def validation_deprecations(validation):
    """The deprecated aliases or options in use (``[{msg, version or date, collection_name}]``)."""
    return list(getattr(validation, '_deprecations', None) or [])


def validation_warnings(validation):
    """The options given under both their names (``[{option, alias}]``)."""
    return list(getattr(validation, '_warnings', None) or [])


def file_bytes(loader, path):
    """The content of ``path`` as the DataLoader reads it (vault-decrypted), in bytes."""
    read = getattr(loader, '_get_file_contents', None)
    if read is not None:
        return read(path)[0]
    return to_bytes(loader.get_text_file_contents(path), errors='surrogate_or_strict')


def is_vaulted(value):
    """Whether ``value`` is a vault-encrypted string (it reaches a module decrypted)."""
    return (getattr(value, '_ciphertext', None) is not None
            or type(value).__name__ in ('AnsibleVaultEncryptedUnicode', 'EncryptedString'))


# ------------------------------------------------------------------ the check the tests run on each version


def applies(internal, version):
    """Whether ``internal`` is expected on ansible-core ``version`` (``'2.19'``)."""
    if internal.versions is None:
        return True
    key = _version_key(version)
    first, last = internal.versions
    return (first is None or key >= _version_key(first)) and (last is None or key <= _version_key(last))


def _version_key(version):
    return tuple(int(part) for part in re.findall(r'\d+', version)[:2])


def missing(version, internals=None):
    """The entries expected on ansible-core ``version`` that the running ansible-core lacks: ``['owner name']``."""
    return ['%s %s' % (i.owner, i.name) for i in (INTERNALS if internals is None else internals)
            if applies(i, version) and not _present(i)]


def _present(internal):
    module_name, dummy, class_name = internal.owner.partition(':')
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        return False
    if internal.kind == MODULE:
        if hasattr(module, internal.name):
            return True
        try:
            importlib.import_module('%s.%s' % (module_name, internal.name))
        except ImportError:
            return False
        return True
    owner = getattr(module, class_name, None)
    if owner is None:
        return False
    if hasattr(owner, internal.name):
        return True
    return internal.kind == INSTANCE and any(_declares(cls, internal.name) for cls in inspect.getmro(owner)
                                             if cls is not object)


def _declares(cls, name):
    """Whether ``cls`` sets ``self.<name>`` in its code or declares ``name`` as a field."""
    if name in getattr(cls, '__annotations__', {}) or name in getattr(cls, '__slots__', ()):
        return True
    try:
        source = inspect.getsource(cls)
    except (OSError, TypeError):
        return False
    return re.search(r'\bself\.%s\b' % re.escape(name), source) is not None
