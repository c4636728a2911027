# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""Package versions as the NodeWright operator reads them.

The operator accepts a version when golang.org/x/mod/semver accepts it after a
``v`` prefix is added (so ``1.2.3``, ``v1.2``, ``1.0.0-rc.1+build`` are valid and
``01.2.3`` or ``1.2.3.4`` are not), and orders versions with the same package.
This module reproduces those two functions; it has no I/O.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

# x/mod/semver grammar: vMAJOR[.MINOR[.PATCH[-PRERELEASE][+BUILD]]], numbers without
# leading zeros; a prerelease or build suffix needs all three numbers.
_NUM = r'(?:0|[1-9][0-9]*)'
_IDENT = r'[0-9A-Za-z-]+'
_SEMVER = re.compile(
    r'^v(?P<major>' + _NUM + r')'
    r'(?:\.(?P<minor>' + _NUM + r')'
    r'(?:\.(?P<patch>' + _NUM + r')'
    r'(?:-(?P<pre>' + _IDENT + r'(?:\.' + _IDENT + r')*))?'
    r'(?:\+(?P<build>' + _IDENT + r'(?:\.' + _IDENT + r')*))?'
    r')?)?\Z'
)


def _with_v(version):
    if version and version[0] != 'v':
        return 'v' + version
    return version


def _parse(version):
    if not isinstance(version, str) or not version:
        return None
    match = _SEMVER.match(_with_v(version))
    if not match:
        return None
    pre = match.group('pre')
    if pre:
        # numeric prerelease identifiers must not have leading zeros
        for ident in pre.split('.'):
            if ident.isdigit() and len(ident) > 1 and ident[0] == '0':
                return None
    return (
        int(match.group('major')),
        int(match.group('minor') or 0),
        int(match.group('patch') or 0),
        pre.split('.') if pre else None,
    )


def is_valid(version):
    """True when the operator would accept ``version`` for a package."""
    return _parse(version) is not None


def _compare_pre(left, right):
    # A version without prerelease is greater than one with it (semver 2.0.0 §11).
    if left is None and right is None:
        return 0
    if left is None:
        return 1
    if right is None:
        return -1
    for lid, rid in zip(left, right):
        if lid == rid:
            continue
        lnum, rnum = lid.isdigit(), rid.isdigit()
        if lnum and rnum:
            return -1 if int(lid) < int(rid) else 1
        if lnum != rnum:
            return -1 if lnum else 1
        return -1 if lid < rid else 1
    if len(left) == len(right):
        return 0
    return -1 if len(left) < len(right) else 1


def compare(left, right):
    """-1, 0 or 1 as ``left`` is lower than, equal to or higher than ``right``.

    Invalid versions sort below valid ones and equal to each other, which is how
    x/mod/semver orders them; callers validate first.
    """
    lpar, rpar = _parse(left), _parse(right)
    if lpar is None or rpar is None:
        if lpar is None and rpar is None:
            return 0
        return -1 if lpar is None else 1
    if lpar[:3] != rpar[:3]:
        return -1 if lpar[:3] < rpar[:3] else 1
    return _compare_pre(lpar[3], rpar[3])
