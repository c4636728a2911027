# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""plugin_utils.execution.core_internals: the private ansible-core names the collection uses, listed and wrapped.

Each accessor's fallback on an object without the name; the list against the installed ansible-core (every name
where the file says); the files the list names use the names through the accessors, and no other file spells a
wrapped name.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re
import threading

import pytest

from ansible import __version__ as ANSIBLE_VERSION
from ansible.errors import AnsibleError
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution import core_internals

REPO_ROOT = os.path.realpath(os.path.join(os.path.dirname(__file__), '..', '..', '..', '..'))
WRAPPED = [i for i in core_internals.INTERNALS if i.accessor]


class Bare(object):
    """An object of a future ansible-core that lacks every private name."""


# ------------------------------------------------------------------ the fallbacks


def test_without_tqms_names_no_host_is_unreachable_or_failed_nothing_is_counted_and_the_run_is_not_terminated():
    tqm = Bare()
    assert core_internals.unreachable_hosts(tqm) == {} and core_internals.failed_hosts(tqm) == {}
    core_internals.mark_failed(tqm, 'n1')
    assert not hasattr(tqm, '_failed_hosts')
    stats = core_internals.stats(tqm)
    stats.increment('skipped', 'n1')
    stats.set_custom_stats('nodewright_rollout', {})
    assert core_internals.terminated(tqm) is False


def test_with_tqms_names_they_are_read_and_written():
    tqm = Bare()
    tqm._unreachable_hosts, tqm._failed_hosts, tqm._terminated = {'n1': True}, {}, True
    tqm._stats = object()
    core_internals.mark_failed(tqm, 'n2')
    assert core_internals.unreachable_hosts(tqm) == {'n1': True} and core_internals.failed_hosts(tqm) == {'n2': True}
    assert core_internals.stats(tqm) is tqm._stats and core_internals.terminated(tqm) is True


def test_without_the_iterators_play_or_blocks_the_error_names_what_is_missing():
    with pytest.raises(AnsibleError, match='has no _play'):
        core_internals.play_of(Bare())
    with pytest.raises(AnsibleError, match='has no _blocks'):
        core_internals.play_blocks(Bare())
    iterator = Bare()
    iterator._play, iterator._blocks = 'play', ['block']
    assert core_internals.play_of(iterator) == 'play' and core_internals.play_blocks(iterator) == ['block']


def test_without_the_display_lock_the_engine_forks_without_one():
    assert core_internals.display_lock(Bare()) is None
    display = Bare()
    display._lock = threading.RLock()
    assert core_internals.display_lock(display) is display._lock


def test_a_task_result_is_read_in_every_versions_shape_and_as_empty_without_one():
    assert core_internals.result_parts(Bare()) == (None, None, {})
    old = Bare()  # 2.16 - 2.18
    old._host, old._task, old._result = 'h', 't', {'changed': True}
    assert core_internals.result_parts(old) == ('h', 't', {'changed': True})
    raw = Bare()  # 2.19, 2.20
    raw.host, raw.task, raw._return_data = 'h', 't', {'failed': True}
    assert core_internals.result_parts(raw) == ('h', 't', {'failed': True})

    class Unified(object):
        def as_result_dict(self):
            return {'held': 'paused'}
    new = Bare()  # 2.21
    new.host, new.task, new.utr = 'h', 't', Unified()
    assert core_internals.result_parts(new) == ('h', 't', {'held': 'paused'})


def test_a_roles_host_records_are_the_dicts_it_has():
    assert core_internals.role_host_records(Bare()) == []
    role = Bare()
    role._completed, role._had_task_run = {'n1': True}, None
    assert core_internals.role_host_records(role) == [{'n1': True}]


NO_LOG_SPEC = {
    'token': {'type': 'str', 'no_log': True},
    'keys': {'type': 'list', 'elements': 'str', 'no_log': True},
    'auth': {'type': 'dict', 'options': {'password': {'type': 'str', 'no_log': True}, 'user': {'type': 'str'}}},
    'logins': {'type': 'list', 'elements': 'dict', 'options': {'secret': {'type': 'str', 'no_log': True}}},
    'name': {'type': 'str'},
}


def test_without_the_validation_results_no_log_values_they_are_read_from_the_spec_as_ansible_core_reads_them():
    params = {'token': 's3cret', 'keys': ['k1', 'k2'], 'auth': {'password': 'pw', 'user': 'me'},
              'logins': [{'secret': 'x1'}, {'secret': 'x2'}], 'name': 'visible'}
    validation = ArgumentSpecValidator(NO_LOG_SPEC).validate(params)
    expected = core_internals.no_log_values(validation, NO_LOG_SPEC, validation.validated_parameters)
    assert expected == {'s3cret', 'k1', 'k2', 'pw', 'x1', 'x2'}
    assert core_internals.no_log_values(Bare(), NO_LOG_SPEC, validation.validated_parameters) == expected


def test_without_the_validation_results_messages_there_are_none():
    assert core_internals.validation_deprecations(Bare()) == [] and core_internals.validation_warnings(Bare()) == []
    validation = Bare()
    validation._deprecations, validation._warnings = [{'msg': 'old'}], [{'option': 'a', 'alias': 'b'}]
    assert core_internals.validation_deprecations(validation) == [{'msg': 'old'}]
    assert core_internals.validation_warnings(validation) == [{'option': 'a', 'alias': 'b'}]


def test_a_file_is_read_through_the_public_text_reader_without_the_private_one():
    class Loader(object):
        def get_text_file_contents(self, path):
            return u'caf\u00e9 from %s' % path
    assert core_internals.file_bytes(Loader(), '/x') == u'caf\u00e9 from /x'.encode('utf-8')

    class OldLoader(object):
        def _get_file_contents(self, path):
            return b'raw', False
    assert core_internals.file_bytes(OldLoader(), '/x') == b'raw'


def test_a_vaulted_value_is_known_by_its_ciphertext_or_its_type_name():
    assert not core_internals.is_vaulted(Bare()) and not core_internals.is_vaulted('text')
    vaulted = Bare()
    vaulted._ciphertext = b'$ANSIBLE_VAULT;1.1;AES256'
    assert core_internals.is_vaulted(vaulted)
    assert core_internals.is_vaulted(type('EncryptedString', (object,), {})())


# ------------------------------------------------------------------ the list


def test_every_listed_name_is_where_the_file_says_on_the_installed_ansible_core():
    assert core_internals.missing(ANSIBLE_VERSION) == []


def test_the_check_finds_a_name_that_is_not_there():
    gone = core_internals.Internal('_no_such_name', core_internals.TQM, core_internals.INSTANCE, (), None, None, '')
    moved = core_internals.Internal('_unreachable_hosts', 'ansible.executor.no_such_module:TaskQueueManager',
                                    core_internals.INSTANCE, (), None, None, '')
    later = gone._replace(versions=('2.99', None))
    assert core_internals.missing(ANSIBLE_VERSION, [gone, moved, later]) == [
        '%s _no_such_name' % core_internals.TQM, 'ansible.executor.no_such_module:TaskQueueManager _unreachable_hosts']


def test_version_bounds_are_inclusive_and_open_ended():
    entry = core_internals.Internal('x', 'm:C', core_internals.ATTRIBUTE, (), ('2.19', '2.20'), None, '')
    assert [core_internals.applies(entry, v) for v in ('2.18.19', '2.19.0', '2.20.10', '2.21.5')] == [False, True, True, False]
    assert core_internals.applies(entry._replace(versions=('2.21', None)), '2.30.1')
    assert core_internals.applies(entry._replace(versions=None), '2.16.0')


@pytest.mark.parametrize('internal', core_internals.INTERNALS, ids=lambda i: '%s.%s' % (i.owner, i.name))
def test_the_files_listed_use_the_name_through_its_accessor_or_spell_it(internal):
    assert internal.used_in and internal.fallback
    for path in internal.used_in:
        with open(os.path.join(REPO_ROOT, path)) as handle:
            text = handle.read()
        if internal.accessor:
            calls = ['core_internals.%s(' % a for a in internal.accessor.split(', ')]
            assert any(c in text for c in calls), '%s calls none of %s' % (path, calls)
            assert all(hasattr(core_internals, a) for a in internal.accessor.split(', '))
        else:
            assert re.search(r'\b%s\b' % re.escape(internal.name), text), '%s does not use %s' % (path, internal.name)


def test_a_wrapped_name_is_spelled_nowhere_else_in_the_plugins():
    # a name that is also a plugin type's interface (ActionBase's _task) is spelled by every action plugin
    interface = set(i.name for i in core_internals.INTERNALS if not i.accessor)
    names = sorted(set(i.name for i in WRAPPED) - interface)
    spelled = []
    for folder, dummy, files in os.walk(os.path.join(REPO_ROOT, 'plugins')):
        for name in files:
            if not name.endswith('.py') or name == 'core_internals.py':
                continue
            path = os.path.join(folder, name)
            with open(path) as handle:
                text = handle.read()
            for wrapped in names:
                # ``self.<name>``: a class's own attribute of the same name (TaskThread's _host), not ansible-core's
                if re.search(r"(?<!\bself)\.%s\b|['\"]%s['\"]" % (wrapped, wrapped), text):
                    spelled.append('%s: %s' % (os.path.relpath(path, REPO_ROOT), wrapped))
    assert spelled == [], 'read these through plugin_utils/execution/core_internals.py: %s' % spelled
