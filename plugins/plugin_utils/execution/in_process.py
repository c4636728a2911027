# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""Run a cluster module's logic inside the Ansible worker, without AnsiballZ or a new Python.

A cluster task is delegated to the controller; run as a module it costs a payload build, a
Python start-up, ``ansible.module_utils.basic`` and the ``kubernetes`` client import (about
2 CPU-seconds on a small machine) for a few API requests. Run here it costs what the worker
already pays (see docs/in-process.md).

``ControllerModule`` is the part of ``AnsibleModule`` the collection's modules use: params
validated against the module's own argument spec (types, defaults, aliases and their deprecations, choices, the
``K8S_AUTH_*`` fallbacks, mutually_exclusive / required_* rules, the same messages), check
mode, diff, ``warn``/``deprecate``, ``fail_json``/``exit_json``, and no_log values masked in
the result. ``fail_json``/``exit_json`` end the run by raising ``ModuleExit``, which derives
from BaseException as SystemExit does, so a module's ``except Exception`` cannot swallow it.

Parity with the module path is kept by construction: the arguments go through JSON on the
way in (the module sees the same types it would see in AnsiballZ) and the result on the way
out (callers get plain Python types, as from a module).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import traceback

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.module_utils.errors import UnsupportedError
from ansible.module_utils.parsing.convert_bool import boolean

from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution import core_internals

# What AnsibleModule's remove_values() put in place of a no_log value: the whole text, or a part of one. Our own
# masking, not remove_values(): ansible-core 2.22 deprecates it (modules' secrets are masked on their way out), and
# its deprecation would reach every in-process result, where the module path has none.
NO_LOG_WHOLE = 'VALUE_SPECIFIED_IN_NO_LOG_PARAMETER'
NO_LOG_PART = '*' * 8


def masked(value, secrets):
    """``value`` with every text in ``secrets`` masked, through mappings, lists, tuples and sets (keys kept)."""
    ordered = sorted((str(secret) for secret in secrets if secret not in (None, '')), key=len, reverse=True)
    if not ordered:
        return value

    def walk(item):
        if isinstance(item, bool) or item is None:
            return item
        if isinstance(item, dict):
            return dict((key, walk(entry)) for key, entry in item.items())
        if isinstance(item, (list, tuple, set, frozenset)):
            return type(item)(walk(entry) for entry in item)
        if isinstance(item, (int, float)):
            return NO_LOG_WHOLE if str(item) in ordered else item
        if isinstance(item, bytes):
            item = item.decode('utf-8', 'replace')
        if not isinstance(item, str):
            return item
        if item in ordered:
            return NO_LOG_WHOLE
        for secret in ordered:
            item = item.replace(secret, NO_LOG_PART)
        return item
    return walk(value)


# AnsibleModule keywords that ControllerModule honours (the rest is refused, so that a module
# cannot silently lose a rule when it runs in process).
SUPPORTED_KEYWORDS = ('argument_spec', 'supports_check_mode', 'mutually_exclusive', 'required_together',
                      'required_one_of', 'required_if', 'required_by')


class ModuleExit(BaseException):
    """Raised by exit_json / fail_json: carries the module's result."""

    def __init__(self, result):
        super(ModuleExit, self).__init__()
        self.result = result


class ControllerModule(object):
    """The AnsibleModule interface the collection's modules use, for a run inside the worker."""

    # the kube.LiveCRs the module's client reads CRs from (set by run(); AnsibleModule has none)
    live_crs = None
    # the kube.KubeSession the module's client shares with its caller's other clients (set by run(); None: the
    # run makes its own, cluster_modules/_runner.module_session)
    kube_session = None

    def __init__(self, name, params, check_mode=False, diff=False, **module_keywords):
        unknown = sorted(set(module_keywords) - set(SUPPORTED_KEYWORDS))
        if unknown:
            raise TypeError('ControllerModule does not support %s' % ', '.join(unknown))
        self._name = name
        self.check_mode = bool(check_mode)
        self._diff = bool(diff)
        self.supports_check_mode = bool(module_keywords.get('supports_check_mode'))
        self._warnings = []
        self._deprecations = []
        self.no_log_values = set()
        self.params = dict(params)
        validator = ArgumentSpecValidator(
            module_keywords['argument_spec'],
            mutually_exclusive=module_keywords.get('mutually_exclusive'),
            required_together=module_keywords.get('required_together'),
            required_one_of=module_keywords.get('required_one_of'),
            required_if=module_keywords.get('required_if'),
            required_by=module_keywords.get('required_by'),
        )
        validation = validator.validate(self.params)
        self.params.update(validation.validated_parameters)
        self.no_log_values.update(core_internals.no_log_values(validation, module_keywords['argument_spec'], self.params))
        # as AnsibleModule: a deprecated alias (or option) in use is reported, and both names given is a warning
        for deprecation in core_internals.validation_deprecations(validation):
            self.deprecate(deprecation['msg'], version=deprecation.get('version'), date=deprecation.get('date'),
                           collection_name=deprecation.get('collection_name'))
        for alias in core_internals.validation_warnings(validation):
            self.warn('Both option %s and its alias %s are set.' % (alias['option'], alias['alias']))
        if validation.errors.errors:
            # the message AnsibleModule gives, so that a failure reads the same on either path
            msg = validation.errors.msg
            if isinstance(validation.errors.errors[0], UnsupportedError):
                msg = 'Unsupported parameters for (%s) module: %s' % (name, msg)
            self.fail_json(msg=msg)
        if self.check_mode and not self.supports_check_mode:
            self.exit_json(skipped=True, msg='module (%s) does not support check mode' % name)

    def warn(self, warning):
        self._warnings.append(str(warning))

    def deprecate(self, msg, version=None, date=None, collection_name=None, **kwargs):
        del kwargs  # deprecator and help_text of newer ansible-core: not needed for a message
        entry = {'msg': str(msg), 'collection_name': collection_name}
        if date is not None:
            entry['date'] = date
        else:
            entry['version'] = version
        self._deprecations.append(entry)

    def _finish(self, result):
        result = dict(result)
        result.setdefault('invocation', {'module_args': self.params})
        if self._warnings:
            result['warnings'] = list(self._warnings)
        if self._deprecations:
            result['deprecations'] = list(self._deprecations)
        # as AnsibleModule: no_log values never leave the module (booleans and None are never masked)
        result = masked(result, self.no_log_values)
        raise ModuleExit(result)

    def exit_json(self, **kwargs):
        kwargs.setdefault('changed', False)
        self._finish(kwargs)

    def fail_json(self, msg, **kwargs):
        kwargs['failed'] = True
        kwargs['msg'] = msg
        self._finish(kwargs)


# Set to 0 / false to run every cluster task as a normal module (AnsiballZ).
IN_PROCESS_ENV = 'NODEWRIGHT_BRIDGE_IN_PROCESS'


def env_switch(name, default=True):
    """An on/off environment switch of the collection (``0``/``false``/``no``... turn it off); unset or unreadable: ``default``."""
    try:
        return boolean(os.environ.get(name, 'true' if default else 'false'), strict=True)
    except TypeError:
        return default


def plain(value):
    """``value`` as a module would hand it over: through JSON (tags, tuples and subclasses gone)."""
    return json.loads(json.dumps(value, default=_json_default))


def _json_default(value):
    # What the module path's encoder does for the few non-JSON types a task can carry
    # (a vaulted string reaches a module decrypted; sets become lists).
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    if core_internals.is_vaulted(value):
        return str(value)
    raise TypeError('%r (%s) cannot be passed to a module' % (value, type(value).__name__))


class TaskEnvironment(object):
    """The task's ``environment:`` in os.environ for the run (the worker ends after the task)."""

    def __init__(self, environment):
        self.environment = dict((str(k), str(v)) for k, v in (environment or {}).items())
        self.saved = {}

    def __enter__(self):
        for key, value in self.environment.items():
            self.saved[key] = os.environ.get(key)
            os.environ[key] = value
        return self

    def __exit__(self, *exc):
        for key, value in self.saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        return False


def validate(name, module_code, args, check_mode=False):
    """``(params, None)`` when ``args`` are valid for the module (defaults filled in), else ``(None, failed result)``."""
    try:
        module = ControllerModule(name, plain(args), check_mode=check_mode, **module_code.module_args())
    except ModuleExit as invalid:
        return None, plain(invalid.result)
    return plain(module.params), None


def run(name, module_code, args, check_mode=False, diff=False, live_crs=None, session=None):
    """Run ``module_code`` (a collection module exposing ``module_args()`` and ``execute(module)``).

    ``live_crs``: the kube.LiveCRs of a long-lived process, for the module's client (``module.live_crs``).
    ``session``: the kube.KubeSession the module's client shares with the caller's other clients (the steps of
    one node's sequence: their client, node copies and node locks); None: the run has its own.

    Returns the module's result. Never raises for what happens inside the module: an
    exception becomes a failed result that names it, as a module's traceback would, so that
    it fails this task and nothing else.
    """
    try:
        try:
            module = ControllerModule(name, plain(args), check_mode=check_mode, diff=diff, **module_code.module_args())
            module.live_crs = live_crs
            module.kube_session = session
            module_code.execute(module)
        except ModuleExit as done:
            return plain(done.result)
        return {'failed': True, 'msg': 'module %s returned without exit_json or fail_json' % name}
    except Exception as exc:  # pylint: disable=broad-except
        return {'failed': True, 'exception': traceback.format_exc(),
                'msg': 'module %s failed in the controller process: %s: %s' % (name, type(exc).__name__, exc)}
