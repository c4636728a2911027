# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""quantity: resource.Quantity values and Go time.ParseDuration strings."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from decimal import Decimal

import pytest

from ansible_collections.nodewright.bridge.plugins.module_utils.model import quantity


@pytest.mark.parametrize('text,expected', [
    ('500m', Decimal('0.5')),
    ('100m', Decimal('0.1')),
    ('1', Decimal(1)),
    (3, Decimal(3)),
    ('0', Decimal(0)),
    ('1Gi', Decimal(2 ** 30)),
    ('128Mi', Decimal(128 * 2 ** 20)),
    ('1Ki', Decimal(1024)),
    ('1Ei', Decimal(2 ** 60)),
    ('1e3', Decimal(1000)),
    ('1E3', Decimal(1000)),
    ('1e-3', Decimal('0.001')),
    ('1.5e1', Decimal(15)),
    ('2k', Decimal(2000)),
    ('1M', Decimal(10 ** 6)),
    ('1E', Decimal(10 ** 18)),      # a bare E is the exa suffix, not an exponent
    ('1.5', Decimal('1.5')),
    ('.5', Decimal('0.5')),
    ('1.', Decimal(1)),
    ('+1', Decimal(1)),
    ('-1Mi', Decimal(-(2 ** 20))),
    ('250u', Decimal('0.00025')),
    ('5n', Decimal('0.000000005')),
])
def test_parse_quantity(text, expected):
    assert quantity.parse_quantity(text) == expected


@pytest.mark.parametrize('text', ['', 'x', '1GB', '1 Gi', '1g', '1KI', '1e', 'e3', 'Gi', '1.2.3', '--1', '1mi',
                                  None, 1.5, True, [1]])
def test_parse_quantity_invalid(text):
    with pytest.raises(ValueError):
        quantity.parse_quantity(text)


@pytest.mark.parametrize('text', [' 1Gi', '1Gi ', '1Gi\n'])
def test_parse_quantity_rejects_surrounding_whitespace(text):
    with pytest.raises(ValueError):
        quantity.parse_quantity(text)


@pytest.mark.parametrize('text,seconds', [
    ('0', Decimal(0)),
    ('+0', Decimal(0)),
    ('-0', Decimal(0)),
    ('30s', Decimal(30)),
    ('1m30s', Decimal(90)),
    ('1h2m3.5s', Decimal('3723.5')),
    ('1.5h', Decimal(5400)),
    ('.5s', Decimal('0.5')),
    ('1.s', Decimal(1)),
    ('300ms', Decimal('0.3')),
    ('2us', Decimal('0.000002')),
    (u'2\u00b5s', Decimal('0.000002')),
    (u'2\u03bcs', Decimal('0.000002')),
    ('10ns', Decimal('0.00000001')),
    ('-1m', Decimal(-60)),
    ('+2h', Decimal(7200)),
    ('1h1h', Decimal(7200)),
])
def test_go_durations(text, seconds):
    assert quantity.is_go_duration(text) is True
    assert quantity.duration_seconds(text) == seconds


@pytest.mark.parametrize('text', ['', '1', '30', 's', '.s', '1d', '1S', '1 s', ' 30s', '30s ', '1m-30s', '1w',
                                  '00', '-', None, 30])
def test_not_go_durations(text):
    assert quantity.is_go_duration(text) is False
    with pytest.raises(ValueError):
        quantity.duration_seconds(text)


def test_duration_trailing_newline():
    assert quantity.is_go_duration('30s\n') is False


def test_duration_overflow():
    assert quantity.is_go_duration('2562047h') is True
    assert quantity.is_go_duration('2562048h') is False
