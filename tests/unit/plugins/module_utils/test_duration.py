# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""duration: Go's time.ParseDuration, with the cases of golang/go src/time/time_test.go (parseDurationTests and
parseDurationErrorTests) and the forms the NodeWright CR fields take."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.nodewright.bridge.plugins.module_utils.model import duration

NS, US, MS, S, M, H = 1, 10 ** 3, 10 ** 6, 10 ** 9, 60 * 10 ** 9, 3600 * 10 ** 9


@pytest.mark.parametrize('text,nanoseconds', [
    # the forms a CR uses
    ('10m', 10 * M),
    ('1h30m', 90 * M),
    ('1.5h', 90 * M),
    ('300ms', 300 * MS),
    ('30s', 30 * S),
    ('20m', 20 * M),
    ('0', 0),
    ('+0', 0),
    ('-0', 0),
    ('0s', 0),
    ('-0s', 0),
    ('-5s', -5 * S),
    # Go's parseDurationTests
    ('5s', 5 * S),
    ('37ns', 37),
    ('+5s', 5 * S),
    ('5.0s', 5 * S),
    ('5.6s', 5 * S + 600 * MS),
    ('5.s', 5 * S),
    ('.5s', 500 * MS),
    ('1.0s', S),
    ('1.00s', S),
    ('1.004s', S + 4 * MS),
    ('1.0040s', S + 4 * MS),
    ('100.00100s', 100 * S + 1 * MS),
    ('10ns', 10 * NS),
    ('11us', 11 * US),
    (u'12\u00b5s', 12 * US),   # micro sign
    (u'12\u03bcs', 12 * US),   # Greek mu
    ('13ms', 13 * MS),
    ('14s', 14 * S),
    ('15m', 15 * M),
    ('16h', 16 * H),
    ('3h30m', 3 * H + 30 * M),
    ('10.5s4m', 4 * M + 10 * S + 500 * MS),
    ('-2m3.4s', -(2 * M + 3 * S + 400 * MS)),
    ('1h2m3s4ms5us6ns', H + 2 * M + 3 * S + 4 * MS + 5 * US + 6 * NS),
    ('39h9m14.425s', 39 * H + 9 * M + 14 * S + 425 * MS),
    ('52763797000ns', 52763797000 * NS),
    ('0.3333333333333333333h', 20 * M),
    ('9007199254740993ns', (1 << 53) + 1),
    ('9223372036854775807ns', (1 << 63) - 1),
    ('9223372036854775.807us', (1 << 63) - 1),
    ('9223372036s854ms775us807ns', (1 << 63) - 1),
    ('-9223372036854775808ns', -(1 << 63)),
    ('-9223372036854775807ns', -(1 << 63) + 1),
    ('0.100000000000000000000h', 6 * M),
    ('0.830103483285477580700h', 49 * M + 48 * S + 372539827 * NS),
])
def test_accepted(text, nanoseconds):
    assert duration.parse_go_duration(text) == nanoseconds
    assert duration.is_go_duration(text) is True


@pytest.mark.parametrize('text,message', [
    ('10', 'time: missing unit in duration "10"'),
    ('3', 'time: missing unit in duration "3"'),
    ('00', 'time: missing unit in duration "00"'),
    ('abc', 'time: invalid duration "abc"'),
    ('1d', 'time: unknown unit "d" in duration "1d"'),
    ('1w', 'time: unknown unit "w" in duration "1w"'),
    ('1S', 'time: unknown unit "S" in duration "1S"'),
    ('1 s', 'time: unknown unit " s" in duration "1 s"'),
    ('1e3s', 'time: unknown unit "e" in duration "1e3s"'),
    ('', 'time: invalid duration ""'),
    ('-', 'time: invalid duration "-"'),
    ('s', 'time: invalid duration "s"'),
    ('.', 'time: invalid duration "."'),
    ('-.', 'time: invalid duration "-."'),
    ('.s', 'time: invalid duration ".s"'),
    ('+.s', 'time: invalid duration "+.s"'),
    (' 30s', 'time: invalid duration " 30s"'),
    ('30s ', 'time: unknown unit "s " in duration "30s "'),
    ('30s\n', 'time: unknown unit "s\\x0a" in duration "30s\\x0a"'),
    (u'1\u00e9', 'time: unknown unit "\\xc3\\xa9" in duration "1\\xc3\\xa9"'),
    ('1m-30s', 'time: unknown unit "m-" in duration "1m-30s"'),
    ('--5s', 'time: invalid duration "--5s"'),
    ('"5s"', 'time: invalid duration "\\"5s\\""'),
    ('9223372036854775810ns', 'time: invalid duration "9223372036854775810ns"'),
    ('9223372036854775808ns', 'time: invalid duration "9223372036854775808ns"'),
    ('-9223372036854775809ns', 'time: invalid duration "-9223372036854775809ns"'),
    ('9223372036854776us', 'time: invalid duration "9223372036854776us"'),
    ('3000000h', 'time: invalid duration "3000000h"'),
    ('9223372036854775.808us', 'time: invalid duration "9223372036854775.808us"'),
    ('9223372036854ms775us808ns', 'time: invalid duration "9223372036854ms775us808ns"'),
    ('2562048h', 'time: invalid duration "2562048h"'),
])
def test_refused_with_go_message(text, message):
    with pytest.raises(ValueError) as info:
        duration.parse_go_duration(text)
    assert str(info.value) == message
    assert duration.is_go_duration(text) is False


@pytest.mark.parametrize('value', [None, 600, 1.5, True, ['5s']])
def test_not_a_string(value):
    # metav1.Duration decodes only a JSON string; the CRD's type: string refuses the rest first
    assert duration.is_go_duration(value) is False
    with pytest.raises(ValueError):
        duration.parse_go_duration(value)


@pytest.mark.parametrize('nanoseconds,seconds', [
    (0, 0), (1, 1), (S, 1), (S + 1, 2), (1500 * MS, 2), (20 * M, 1200), (-5 * S, -5), (-1500 * MS, -1),
])
def test_ceil_seconds(nanoseconds, seconds):
    assert duration.ceil_seconds(nanoseconds) == seconds
