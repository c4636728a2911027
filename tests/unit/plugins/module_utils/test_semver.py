# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""semver: golang.org/x/mod/semver after the operator adds a 'v' prefix (operator/internal/version)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import itertools

import pytest

from ansible_collections.nodewright.bridge.plugins.module_utils.model import semver


@pytest.mark.parametrize('version', [
    '1.2.3', 'v1.2.3', 'v1.2', '1.2', '1', 'v1', '0.0.0',
    '1.0.0-rc.1+b', '1.0.0-rc.1', '1.0.0+build.5', '1.0.0-0', '1.0.0-alpha-1', '1.0.0+001',
    '1.0.0-rc.1+b.c-d', '2024.7.6', '10.20.30',
])
def test_valid_versions(version):
    assert semver.is_valid(version) is True


@pytest.mark.parametrize('version', [
    '01.2.3', '1.02.3', '1.2.03',       # leading zeros in numbers
    '1.2.3.4',                          # too many parts
    '1.2-rc', '1-rc', '1.2+b',          # suffix needs all three numbers
    '1.0.0-01',                         # numeric prerelease with leading zero
    '1.0.0-', '1.0.0+', '1.0.0-a..b', '1.0.0-a_b',
    '', 'v', 'vv1.0.0', 'V1.0.0', '1.', '1..2', '.1.2',
    '2024/07/06', 'latest', ' 1.2.3', '1.2.3 ',
    None, 1, 1.2,
])
def test_invalid_versions(version):
    assert semver.is_valid(version) is False


def test_trailing_newline_is_invalid():
    assert semver.is_valid('1.2.3\n') is False


# semver 2.0.0 section 11 precedence example, lowest first
PRECEDENCE = ['1.0.0-alpha', '1.0.0-alpha.1', '1.0.0-alpha.beta', '1.0.0-beta', '1.0.0-beta.2',
              '1.0.0-beta.11', '1.0.0-rc.1', '1.0.0', '1.0.1', '1.1.0', '1.10.0', '2.0.0']


@pytest.mark.parametrize('low,high', list(itertools.combinations(PRECEDENCE, 2)))
def test_compare_precedence_chain(low, high):
    assert semver.compare(low, high) == -1
    assert semver.compare(high, low) == 1


@pytest.mark.parametrize('left,right', [
    ('1.2.3', 'v1.2.3'),
    ('1.2', '1.2.0'),          # x/mod/semver fills missing minor/patch with 0
    ('v1', '1.0.0'),
    ('1.0.0+a', '1.0.0+b'),    # build metadata is ignored
    ('1.0.0-rc.1+x', '1.0.0-rc.1'),
    ('bad', 'worse'),          # invalid versions compare equal to each other
])
def test_compare_equal(left, right):
    assert semver.compare(left, right) == 0


@pytest.mark.parametrize('left,right,expected', [
    ('1.0.0-2', '1.0.0-10', -1),       # numeric identifiers compare numerically
    ('1.0.0-10', '1.0.0-a', -1),       # numeric identifiers sort before alphanumeric ones
    ('1.0.0-B', '1.0.0-a', -1),        # ASCII order
    ('not-a-version', '0.0.1', -1),    # invalid sorts below valid
    ('0.0.1', '01.0.0', 1),
    ('2.0.0', '10.0.0', -1),
])
def test_compare_ordering(left, right, expected):
    assert semver.compare(left, right) == expected
