# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""Go's ``time.ParseDuration``, step for step, for the CR fields that are ``metav1.Duration``.

``metav1.Duration`` decodes a JSON string with ``time.ParseDuration``; a string it refuses fails the
decoding, so the operator's webhook refuses the CR (``gracefulShutdown``, and in the
``nodewright.nvidia.com`` group ``drainConfig.timeout``, ``drainConfig.gracePeriod`` and
``packages.<p>.stageTimeout``). The port follows ``ParseDuration``, ``leadingInt`` and
``leadingFraction`` of golang/go ``src/time/format.go`` at commit 08d2403576737c5735d0c1d356490e03a774dff6:
the same grammar (``[-+]?([0-9]*(\\.[0-9]*)?[a-z]+)+`` or a bare ``0``), the same units, the same
overflow limits (an int64 of nanoseconds) and the same float64 rounding of fractions, and its
error texts. No I/O.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

NANOSECOND = 1
MICROSECOND = 1000 * NANOSECOND
MILLISECOND = 1000 * MICROSECOND
SECOND = 1000 * MILLISECOND
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE

# time.unitMap: "us" has two more spellings, U+00B5 (micro sign) and U+03BC (Greek mu).
UNITS = {'ns': NANOSECOND, 'us': MICROSECOND, u'\u00b5s': MICROSECOND, u'\u03bcs': MICROSECOND,
         'ms': MILLISECOND, 's': SECOND, 'm': MINUTE, 'h': HOUR}
_LIMIT = 1 << 63  # time.Duration is an int64: at most 1<<63 - 1, at least -1<<63


def _is_digit(char):
    return '0' <= char <= '9'


def _quote(text):
    """Go's ``time.quote`` of an error text: between double quotes, '"' and '\\' escaped, each byte of a
    control or non-ASCII character as ``\\xhh`` (of its UTF-8)."""
    out = []
    for char in text:
        if ord(char) >= 0x80 or ord(char) < 0x20:
            out.extend('\\x%02x' % byte for byte in bytearray(char.encode('utf-8')))
        elif char in '"\\':
            out.append('\\' + char)
        else:
            out.append(char)
    return '"%s"' % ''.join(out)


def _leading_int(text):
    """``(value, rest)`` of the leading ``[0-9]*``; None for the value on uint64 overflow (time.leadingInt)."""
    value, idx = 0, 0
    while idx < len(text) and _is_digit(text[idx]):
        if value > _LIMIT // 10:
            return None, text
        value = value * 10 + ord(text[idx]) - ord('0')
        if value > _LIMIT:
            return None, text
        idx += 1
    return value, text[idx:]


def _leading_fraction(text):
    """``(digits, scale, rest)`` of the leading ``[0-9]*`` after a '.'; past the uint64 range, the further
    digits are consumed without adding precision (time.leadingFraction)."""
    value, scale, idx, overflow = 0, 1.0, 0, False
    while idx < len(text) and _is_digit(text[idx]):
        digit = ord(text[idx]) - ord('0')
        idx += 1
        if overflow:
            continue
        if value > (_LIMIT - 1) // 10 or value * 10 + digit > _LIMIT:
            overflow = True
            continue
        value = value * 10 + digit
        scale *= 10
    return value, scale, text[idx:]


def _component(text, orig):
    """One ``number unit`` of a duration: ``(nanoseconds, rest)``; ValueError with Go's text."""
    invalid = ValueError('time: invalid duration %s' % _quote(orig))
    if not (text[0] == '.' or _is_digit(text[0])):
        raise invalid
    before = len(text)
    whole, text = _leading_int(text)
    if whole is None:
        raise invalid
    pre = before != len(text)
    fraction, scale, post = 0, 1.0, False
    if text and text[0] == '.':
        text = text[1:]
        before = len(text)
        fraction, scale, text = _leading_fraction(text)
        post = before != len(text)
    if not pre and not post:
        raise invalid
    idx = 0
    while idx < len(text) and not (text[idx] == '.' or _is_digit(text[idx])):
        idx += 1
    if idx == 0:
        raise ValueError('time: missing unit in duration %s' % _quote(orig))
    unit_name, text = text[:idx], text[idx:]
    unit = UNITS.get(unit_name)
    if unit is None:
        raise ValueError('time: unknown unit %s in duration %s' % (_quote(unit_name), _quote(orig)))
    if whole > _LIMIT // unit:
        raise invalid
    value = whole * unit
    if fraction > 0:
        # float64, as Go: nanosecond-exact for fractions of an hour
        value += int(float(fraction) * (float(unit) / scale))
        if value > _LIMIT:
            raise invalid
    return value, text


def parse_go_duration(text):
    """Nanoseconds in a Go duration string (``'1m30s'`` -> 90000000000); ValueError (Go's message) when
    ``time.ParseDuration`` refuses it. ``'-5s'`` is -5000000000: a sign is part of the syntax, a caller
    that needs a non-negative value checks the sign itself."""
    if not isinstance(text, str):
        raise ValueError('time: invalid duration %r (not a string)' % (text,))
    orig, rest, negative = text, text, False
    if rest and rest[0] in '+-':
        negative = rest[0] == '-'
        rest = rest[1:]
    if rest == '0':
        return 0
    if rest == '':
        raise ValueError('time: invalid duration %s' % _quote(orig))
    total = 0
    while rest:
        value, rest = _component(rest, orig)
        total += value
        if total > _LIMIT:
            raise ValueError('time: invalid duration %s' % _quote(orig))
    if negative:
        return -total
    if total > _LIMIT - 1:
        raise ValueError('time: invalid duration %s' % _quote(orig))
    return total


def is_go_duration(text):
    """True when Go's ``time.ParseDuration`` (and so ``metav1.Duration``) accepts ``text``."""
    try:
        parse_go_duration(text)
    except ValueError:
        return False
    return True


def ceil_seconds(nanoseconds):
    """Whole seconds, rounded up as the operator rounds a duration into a pod field (job_builder.go's
    activeDeadlineSeconds, drain.go's GracePeriodSeconds)."""
    return -(-nanoseconds // SECOND)


def format_duration(seconds):
    """``12.3s``, ``4m05s`` or ``1h02m``; ``-`` when unknown (the report's, the progress lines' and the Events' words)."""
    if seconds is None:
        return '-'
    seconds = max(0.0, float(seconds))
    if seconds < 60:
        return '%.1fs' % seconds
    minutes, secs = divmod(int(round(seconds)), 60)
    if minutes < 60:
        return '%dm%02ds' % (minutes, secs)
    hours, minutes = divmod(minutes, 60)
    return '%dh%02dm' % (hours, minutes)
