# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""label_selector: metav1.LabelSelectorAsSelector validation and Selector.Matches semantics."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.nodewright.bridge.plugins.module_utils.model import label_selector as ls

NODE = {'env': 'prod', 'zone': 'a', 'gpu': 'true'}


def expr(key, operator, values=None):
    item = {'key': key, 'operator': operator}
    if values is not None:
        item['values'] = values
    return item


@pytest.mark.parametrize('selector,labels,expected', [
    (None, NODE, True),
    ({}, NODE, True),
    ({}, {}, True),
    ({'matchLabels': {}, 'matchExpressions': []}, NODE, True),
    ({'matchLabels': {'env': 'prod'}}, NODE, True),
    ({'matchLabels': {'env': 'dev'}}, NODE, False),
    ({'matchLabels': {'missing': 'x'}}, NODE, False),
    ({'matchLabels': {'env': 'prod', 'zone': 'a'}}, NODE, True),
    ({'matchLabels': {'env': 'prod', 'zone': 'b'}}, NODE, False),
    ({'matchLabels': {'env': ''}}, {'env': ''}, True),
    ({'matchLabels': {'env': ''}}, {}, False),
    ({'matchExpressions': [expr('env', 'In', ['prod', 'stage'])]}, NODE, True),
    ({'matchExpressions': [expr('env', 'In', ['dev'])]}, NODE, False),
    ({'matchExpressions': [expr('missing', 'In', ['x'])]}, NODE, False),
    ({'matchExpressions': [expr('env', 'NotIn', ['dev'])]}, NODE, True),
    ({'matchExpressions': [expr('env', 'NotIn', ['prod'])]}, NODE, False),
    ({'matchExpressions': [expr('missing', 'NotIn', ['x'])]}, NODE, True),   # NotIn matches a missing key
    ({'matchExpressions': [expr('gpu', 'Exists')]}, NODE, True),
    ({'matchExpressions': [expr('missing', 'Exists')]}, NODE, False),
    ({'matchExpressions': [expr('missing', 'DoesNotExist')]}, NODE, True),
    ({'matchExpressions': [expr('gpu', 'DoesNotExist')]}, NODE, False),
    # everything is ANDed
    ({'matchLabels': {'env': 'prod'}, 'matchExpressions': [expr('gpu', 'Exists'), expr('zone', 'In', ['a'])]}, NODE, True),
    ({'matchLabels': {'env': 'prod'}, 'matchExpressions': [expr('gpu', 'Exists'), expr('zone', 'In', ['b'])]}, NODE, False),
    ({'matchLabels': {'env': 'dev'}, 'matchExpressions': [expr('gpu', 'Exists')]}, NODE, False),
    ({'matchExpressions': [expr('gpu', 'Exists'), expr('gpu', 'DoesNotExist')]}, NODE, False),
    ({'matchLabels': {'env': 'prod'}}, None, False),
    ({'matchExpressions': [expr('env', 'DoesNotExist')]}, None, True),
])
def test_matches(selector, labels, expected):
    assert ls.matches(selector, labels) is expected


def test_matches_rejects_unknown_operator():
    with pytest.raises(ValueError):
        ls.matches({'matchExpressions': [expr('env', 'Gt', ['1'])]}, NODE)


@pytest.mark.parametrize('selector', [
    None,
    {},
    {'matchLabels': {'foo': ''}},
    {'matchLabels': {'foo': 'bar', 'example.com/role': 'a.b-c_d', 'k8s.io/x': 'Y'}},
    {'matchExpressions': [expr('env', 'In', ['a']), expr('env', 'NotIn', ['b']), expr('gpu', 'Exists'),
                          expr('gpu', 'DoesNotExist', [])]},
    {'matchLabels': {'a' * 63: 'b' * 63}},
    {'matchLabels': {'%s/%s' % ('d' * 253, 'n'): 'v'}},
])
def test_valid_selectors(selector):
    assert ls.selector_errors(selector, 'spec.sel') == []


@pytest.mark.parametrize('selector,expected', [
    ({'matchExpressions': [expr('env', 'In')]},
     ['spec.sel.matchExpressions[0].values: must be specified when operator is In']),
    ({'matchExpressions': [expr('env', 'NotIn', [])]},
     ['spec.sel.matchExpressions[0].values: must be specified when operator is NotIn']),
    ({'matchExpressions': [expr('env', 'Exists', ['x'])]},
     ['spec.sel.matchExpressions[0].values: may not be specified when operator is Exists']),
    ({'matchExpressions': [expr('gpu', 'In', ['a']), expr('env', 'DoesNotExist', ['x'])]},
     ['spec.sel.matchExpressions[1].values: may not be specified when operator is DoesNotExist']),
    ({'matchExpressions': [expr('env', 'Equals', ['x'])]},
     ["spec.sel.matchExpressions[0].operator: 'Equals' is not one of In, NotIn, Exists, DoesNotExist"]),
])
def test_selector_errors_exact(selector, expected):
    assert ls.selector_errors(selector, 'spec.sel') == expected


@pytest.mark.parametrize('selector,needle', [
    # the key/value cases of skyhook_webhook_test.go "Should validate node selectors"
    ({'matchLabels': {'-foo': 'bar'}}, "spec.sel.matchLabels: key '-foo'"),
    ({'matchLabels': {'_foo': 'bar'}}, "spec.sel.matchLabels: key '_foo'"),
    ({'matchLabels': {'foo': '-bar'}}, 'spec.sel.matchLabels.foo:'),
    ({'matchLabels': {'foo': '1231231231123123123112312312311231231231123123123112312312311231231'}},
     'spec.sel.matchLabels.foo: must be no more than 63 characters'),
    ({'matchLabels': {'a' * 64: 'v'}}, 'name part must be no more than 63 characters'),
    ({'matchLabels': {'Example.com/x': 'v'}}, "prefix part 'Example.com' must be a DNS-1123 subdomain"),
    ({'matchLabels': {'/x': 'v'}}, 'prefix part must be non-empty'),
    ({'matchLabels': {'example.com/': 'v'}}, 'name part must be non-empty'),
    ({'matchLabels': {'a/b/c': 'v'}}, 'separated by one "/"'),
    ({'matchLabels': {'foo': 'bar baz'}}, 'spec.sel.matchLabels.foo:'),
    ({'matchExpressions': [expr('bad key', 'Exists')]}, 'spec.sel.matchExpressions[0].key:'),
    ({'matchExpressions': [expr('env', 'In', ['ok', 'not ok'])]}, 'spec.sel.matchExpressions[0].values[1]:'),
    ('not-a-dict', 'spec.sel: must be an object'),
])
def test_selector_errors_bad_keys_and_values(selector, needle):
    errors = ls.selector_errors(selector, 'spec.sel')
    assert len(errors) == 1, errors
    assert needle in errors[0]


def test_selector_errors_reports_every_problem():
    selector = {'matchLabels': {'-a': 'ok', 'b': '-bad'},
                'matchExpressions': [expr('c', 'In'), expr('d', 'Exists', ['x']), expr('e', 'Nope')]}
    assert len(ls.selector_errors(selector, 'sel')) == 5


@pytest.mark.parametrize('key,ok', [
    ('foo', True), ('f', True), ('foo.bar_baz-1', True), ('example.com/foo', True), ('a.b.c/d', True),
    ('', False), ('-foo', False), ('foo-', False), ('_foo', False), ('foo bar', False), ('a' * 64, False),
    ('%s/x' % ('a' * 254), False), ('UPPER.com/x', False), ('ex_ample.com/x', False),
])
def test_qualified_name(key, ok):
    assert (ls.qualified_name_errors(key) == []) is ok


@pytest.mark.parametrize('value,ok', [
    ('', True), ('a', True), ('A-b_c.9', True), ('x' * 63, True),
    ('x' * 64, False), ('-a', False), ('a-', False), ('.a', False), ('a b', False), ('a/b', False), (1, False),
])
def test_label_value(value, ok):
    assert (ls.label_value_errors(value) == []) is ok


@pytest.mark.parametrize('check', [ls.label_value_errors, ls.qualified_name_errors])
def test_trailing_newline_rejected(check):
    assert check('abc\n') != []


def test_to_query_renders_every_operator_stably():
    selector = {'matchLabels': {'b': '2', 'a': '1'},
                'matchExpressions': [{'key': 'gpu', 'operator': 'In', 'values': ['h100', 'a100']},
                                     {'key': 'zone', 'operator': 'NotIn', 'values': ['z2']},
                                     {'key': 'ready', 'operator': 'Exists'},
                                     {'key': 'skyhook.nvidia.com/ignore', 'operator': 'DoesNotExist'}]}
    assert ls.to_query(selector) == ('a=1,b=2,gpu in (a100,h100),zone notin (z2),ready,'
                                     '!skyhook.nvidia.com/ignore')
    assert ls.to_query({}) == '' and ls.to_query(None) == ''


def test_to_query_agrees_with_matches():
    selector = {'matchLabels': {'pool': 'gpu'}, 'matchExpressions': [{'key': 'x', 'operator': 'NotIn', 'values': ['1']}]}
    # the API server's parser is the reference; here we check the rendering carries each requirement
    query = ls.to_query(selector)
    assert query.split(',') == ['pool=gpu', 'x notin (1)']
    assert ls.matches(selector, {'pool': 'gpu'}) and not ls.matches(selector, {'pool': 'gpu', 'x': '1'})


# --- strings and other forms (parse_selector, normalize_selector) ---------------------------------

@pytest.mark.parametrize('text,expected', [
    ('', {}),
    ('   ', {}),
    ('a=b', {'matchExpressions': [expr('a', 'In', ['b'])]}),
    ('a==b', {'matchExpressions': [expr('a', 'In', ['b'])]}),
    ('a=', {'matchExpressions': [expr('a', 'In', [''])]}),
    ('a!=b', {'matchExpressions': [expr('a', 'NotIn', ['b'])]}),
    ('a in (x, y)', {'matchExpressions': [expr('a', 'In', ['x', 'y'])]}),
    ('a notin (x)', {'matchExpressions': [expr('a', 'NotIn', ['x'])]}),
    ('a in(x)', {'matchExpressions': [expr('a', 'In', ['x'])]}),
    ('a', {'matchExpressions': [expr('a', 'Exists')]}),
    ('!a', {'matchExpressions': [expr('a', 'DoesNotExist')]}),
    ('! a', {'matchExpressions': [expr('a', 'DoesNotExist')]}),
    ('a=b,c!=d,e in (f,g),h,!i', {'matchExpressions': [
        expr('a', 'In', ['b']), expr('c', 'NotIn', ['d']), expr('e', 'In', ['f', 'g']), expr('h', 'Exists'),
        expr('i', 'DoesNotExist')]}),
])
def test_parse_selector(text, expected):
    assert ls.parse_selector(text) == expected


@pytest.mark.parametrize('text,message', [
    ('a=b,,c=d', 'empty requirement'),
    ('a=b,', 'empty requirement'),
    ('a in ()', 'value set must not be empty'),
    ('a in (x', 'unbalanced "("'),
    ('a in x)', 'unbalanced ")"'),
    ('a>1', '"<" and ">" have no LabelSelector form'),
    ('a < 1', '"<" and ">" have no LabelSelector form'),
    ('a b', 'cannot parse requirement'),
    ('a=b=c', 'cannot parse requirement'),
    ('ain (x)', 'cannot parse requirement'),
    ('-bad=x', "name part '-bad' must consist"),
    ('a=-bad', "'-bad' must consist"),
    ('a/b/c', 'a qualified name must consist'),
])
def test_parse_selector_errors(text, message):
    with pytest.raises(ValueError) as exc:
        ls.parse_selector(text)
    assert message in str(exc.value)


def test_parse_selector_rejects_non_strings():
    with pytest.raises(ValueError):
        ls.parse_selector({'matchLabels': {}})


def test_normalize_selector_forms():
    assert ls.normalize_selector(None) is None
    assert ls.normalize_selector('') == {}
    assert ls.normalize_selector({}) == {}
    assert ls.normalize_selector({'matchLabels': {}, 'matchExpressions': []}) == {}
    original = {'matchLabels': {'a': 'b'}, 'matchExpressions': [expr('c', 'Exists')]}
    normalized = ls.normalize_selector(original)
    assert normalized == original and normalized is not original
    assert ls.normalize_selector(['x=1', {'matchLabels': {'b': '2', 'a': '1'}}]) == {'matchExpressions': [
        expr('x', 'In', ['1']), expr('a', 'In', ['1']), expr('b', 'In', ['2'])]}
    assert ls.normalize_selector([]) == {}
    assert ls.selector_is_empty('') is True
    assert ls.selector_is_empty(None) is False
    assert ls.selector_is_empty('a') is False
