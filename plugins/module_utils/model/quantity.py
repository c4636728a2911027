# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""Kubernetes resource quantities, parsed exactly (no floats), and Go durations (duration.py, as Go's
time.ParseDuration). No I/O."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
from decimal import Decimal, InvalidOperation

from ansible_collections.nodewright.bridge.plugins.module_utils.model import duration

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


def is_go_duration(value):
    """True when Go's time.ParseDuration (and so metav1.Duration) accepts ``value`` (duration.py)."""
    return duration.is_go_duration(value)


def duration_seconds(value):
    """Seconds in a Go duration string (``'1m30s'`` -> Decimal(90)); ValueError when invalid.

    Exactly the nanoseconds ``time.ParseDuration`` returns (duration.parse_go_duration), in seconds.
    """
    try:
        nanoseconds = duration.parse_go_duration(value)
    except ValueError:
        raise ValueError('%r is not a Go duration such as 30s or 1m30s' % (value,))
    return Decimal(nanoseconds) / Decimal(duration.SECOND)
