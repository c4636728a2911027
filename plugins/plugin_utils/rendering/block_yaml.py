# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""A YAML writer for playbooks people read: block style, scripts as literal blocks, Jinja kept inert.

A string that looks like Jinja is tagged ``!unsafe``, so that Ansible never templates it (per
string: ansible-core 2.16 loses the tag of a mapping). An ``Expression`` is the rendered
playbook's own Jinja: written as it is, untagged.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import math
import re

from collections.abc import Mapping

_PLAIN = re.compile(r'^[A-Za-z_/][A-Za-z0-9_./-]*$')
_YAML_WORDS = ('true', 'false', 'yes', 'no', 'on', 'off', 'null', 'y', 'n')
# what a literal block cannot hold: what YAML does not print (C0 and C1 controls but tab and newline, surrogates,
# U+FFFE/U+FFFF), and the line breaks YAML has beside \n (\r, NEL \x85, U+2028, U+2029), which a block would read
# as a new line; such text is written as a JSON string (its escapes are YAML's)
_CONTROL = re.compile(u'[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufffe\uffff]')
_JINJA = ('{{', '{%', '{#')


class Expression(str):
    """Jinja the rendered playbook evaluates itself: never tagged !unsafe."""


def _is_sequence(value):
    return isinstance(value, (list, tuple))


def _tag(value):
    if isinstance(value, str) and not isinstance(value, Expression) and any(j in value for j in _JINJA):
        return '!unsafe '
    return ''


def _number(value):
    if isinstance(value, float):
        if math.isnan(value):
            return '.nan'
        if math.isinf(value):
            return '.inf' if value > 0 else '-.inf'
        text = repr(value)
        # YAML 1.1 (PyYAML) reads 1e+20 as a string: a float needs its dot
        return text if '.' in text else text.replace('e', '.0e')
    return str(value)


def scalar(value):
    """One scalar: plain when that is unambiguous, otherwise a JSON string (tagged when it looks like Jinja)."""
    if value is None:
        return 'null'
    if value is True:
        return 'true'
    if value is False:
        return 'false'
    if isinstance(value, (int, float)):
        return _number(value)
    if isinstance(value, str) and _PLAIN.match(value) and value.lower() not in _YAML_WORDS:
        return value
    return _tag(value) + json.dumps(str(value) if not isinstance(value, str) else value)


def _literal_ok(text):
    return ('\n' in text and not text.startswith((' ', '\n')) and not text.endswith('\n\n')
            and not _CONTROL.search(text))


def value(data, indent):
    """What follows ``key:`` or ``-``: `` scalar``, or the nested block at column ``indent``."""
    pad = ' ' * indent
    if isinstance(data, Mapping):
        if not data:
            return ' {}'
        return ''.join('\n%s%s:%s' % (pad, scalar(k), value(v, indent + 2)) for k, v in data.items())
    if _is_sequence(data):
        if not data:
            return ' []'
        return ''.join('\n%s-%s' % (pad, item(x, indent + 2)) for x in data)
    if isinstance(data, str) and _literal_ok(data):
        head = ' %s|%s' % (_tag(data), '' if data.endswith('\n') else '-')
        lines = data.rstrip('\n').split('\n')
        return head + ''.join('\n' + (pad + line if line else '') for line in lines)
    return ' ' + scalar(data)


def item(data, indent):
    """A list item: a mapping starts on the ``-`` line; a nested list is written in flow style."""
    if isinstance(data, Mapping) and data:
        pairs = ['%s:%s' % (scalar(k), value(v, indent + 2)) for k, v in data.items()]
        return ' ' + ('\n' + ' ' * indent).join(pairs)
    if _is_sequence(data) and data:
        return ' ' + flow(data)
    return value(data, indent)


def flow(data):
    """Flow style, for short values on one line."""
    if isinstance(data, Mapping):
        return '{%s}' % ', '.join('%s: %s' % (scalar(k), flow(v)) for k, v in data.items())
    if _is_sequence(data):
        return '[%s]' % ', '.join(flow(x) for x in data)
    return scalar(data)


def to_block_yaml(data, indent=0, key=None):
    """``data`` as YAML lines at column ``indent``; under ``key:`` when a key is given."""
    if key is not None:
        return ' ' * indent + scalar(key) + ':' + value(data, indent + 2)
    if isinstance(data, Mapping) and data or _is_sequence(data) and data:
        return value(data, indent)[1:]
    return ' ' * indent + value(data, indent + 2)[1:]  # a literal block's lines go below, indented
