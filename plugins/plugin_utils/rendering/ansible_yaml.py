# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""Ansible's YAML as nodewright.bridge.role_package reads and writes it on the controller: PyYAML's safe loader and
dumper with Ansible's two tags, ``!vault`` (an inline vault value: role_package.VaultedValue, its ciphertext) and
``!unsafe`` (role_package.UnsafeValue), read as marked strings and written back with their tags. A safe load of a
file with either tag fails with a message that names neither the variable nor the reason; this one reads it, so
that the vault values are refused by name (role_package.refuse_vaulted) and the rest read as Ansible reads them.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import yaml

from ansible_collections.nodewright.bridge.plugins.module_utils.contract.role_package import UnsafeValue, VaultedValue

_TAGS = {'!vault': VaultedValue, '!unsafe': UnsafeValue}


class _Loader(yaml.SafeLoader):  # pylint: disable=too-many-ancestors
    """The safe loader, with Ansible's tags on scalars."""


class _Dumper(yaml.SafeDumper):  # pylint: disable=too-many-ancestors
    """The safe dumper, with Ansible's tags written back."""


def _constructor(kind):
    def construct(loader, node):
        return kind(loader.construct_scalar(node))
    return construct


def _representer(tag):
    def represent(dumper, data):
        return dumper.represent_scalar(tag, str(data), style='|' if '\n' in data else None)
    return represent


def _text(dumper, data):
    """A string over several lines as a literal block, as people write them (PyYAML quotes it where it cannot)."""
    return dumper.represent_scalar('tag:yaml.org,2002:str', data, style='|' if '\n' in data else None)


_Dumper.add_representer(str, _text)
for _TAG, _KIND in _TAGS.items():
    _Loader.add_constructor(_TAG, _constructor(_KIND))
    _Dumper.add_representer(_KIND, _representer(_TAG))


def load(text):
    """YAML text -> data, as Ansible reads it (tags aside: ``!vault`` and ``!unsafe`` values are marked strings)."""
    return yaml.load(text, Loader=_Loader)  # nosec B506: a SafeLoader with two scalar tags


def dump(data, sort_keys=False):
    """Data -> YAML text, the marked strings with their tags."""
    return yaml.dump(data, Dumper=_Dumper, default_flow_style=False, sort_keys=sort_keys, allow_unicode=True)
