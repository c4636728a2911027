# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""Kubernetes resource quantities and Go durations, parsed exactly (no floats). No I/O."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
from decimal import Decimal, InvalidOperation

_BINARY = {'Ki': 2 ** 10, 'Mi': 2 ** 20, 'Gi': 2 ** 30, 'Ti': 2 ** 40, 'Pi': 2 ** 50, 'Ei': 2 ** 60}
_DECIMAL = {'n': Decimal('1e-9'), 'u': Decimal('1e-6'), 'm': Decimal('1e-3'), '': Decimal(1),
            'k': Decimal('1e3'), 'M': Decimal('1e6'), 'G': Decimal('1e9'), 'T': Decimal('1e12'),
            'P': Decimal('1e15'), 'E': Decimal('1e18')}
_QUANTITY = re.compile(r'^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))((?:[KMGTPE]i)|[numkMGTPE]|(?:[eE][+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)))?\Z')


def parse_quantity(value):
    """The exact value of a quantity (``'500m'`` -> Decimal('0.5')); ValueError when invalid."""
    if isinstance(value, bool):
        raise ValueError('%r is not a quantity' % (value,))
    if isinstance(value, int):
        return Decimal(value)
    if not isinstance(value, str):
        raise ValueError('%r is not a quantity' % (value,))
    match = _QUANTITY.match(value)  # no strip: resource.ParseQuantity rejects surrounding spaces
    if not match:
        raise ValueError('%r is not a quantity' % (value,))
    number, suffix = match.group(1), match.group(2) or ''
    try:
        base = Decimal(number)
        if suffix in _BINARY:
            return base * _BINARY[suffix]
        if suffix in _DECIMAL:
            return base * _DECIMAL[suffix]
        return base * (Decimal(10) ** Decimal(suffix[1:]))
    except InvalidOperation:
        raise ValueError('%r is not a quantity' % (value,))


# time.ParseDuration: a possibly signed sequence of decimal numbers with unit suffixes, or "0".
_DURATION = re.compile(r'^[-+]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:ns|us|\u00b5s|\u03bcs|ms|s|m|h))+\Z')
_DURATION_PART = re.compile(r'([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(ns|us|\u00b5s|\u03bcs|ms|s|m|h)')
_UNIT_SECONDS = {'ns': Decimal('1e-9'), 'us': Decimal('1e-6'), u'\u00b5s': Decimal('1e-6'), u'\u03bcs': Decimal('1e-6'),
                 'ms': Decimal('1e-3'), 's': Decimal(1), 'm': Decimal(60), 'h': Decimal(3600)}


# time.Duration is an int64 of nanoseconds
_MAX_DURATION_SECONDS = Decimal(2 ** 63 - 1) / Decimal(10 ** 9)


def is_go_duration(value):
    """True when Go's time.ParseDuration (and so metav1.Duration) accepts ``value``."""
    if not isinstance(value, str):
        return False
    if value in ('0', '+0', '-0'):
        return True
    if not _DURATION.match(value):
        return False
    return abs(_seconds(value)) <= _MAX_DURATION_SECONDS


def duration_seconds(value):
    """Seconds in a Go duration string (``'1m30s'`` -> Decimal(90)); ValueError when invalid."""
    if not is_go_duration(value):
        raise ValueError('%r is not a Go duration such as 30s or 1m30s' % (value,))
    return _seconds(value)


def _seconds(value):
    sign = -1 if value.startswith('-') else 1
    total = Decimal(0)
    for number, unit in _DURATION_PART.findall(value):
        total += Decimal(number) * _UNIT_SECONDS[unit]
    return sign * total
