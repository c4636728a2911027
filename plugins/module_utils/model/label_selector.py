# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""Kubernetes label selectors: validation and matching with the API server's semantics.

Mirrors k8s.io/apimachinery ``LabelSelectorAsSelector`` + ``Selector.Matches``:

* matchLabels and matchExpressions are ANDed; an empty selector matches everything.
* ``In`` / ``NotIn`` need at least one value; ``Exists`` / ``DoesNotExist`` take none.
* ``NotIn`` matches a node that does not have the key at all (as Kubernetes does).
* keys must be qualified names (optional DNS-1123 subdomain prefix + ``/`` + name of at
  most 63 characters) and values valid label values.

Selectors come as LabelSelector dicts, as kubectl ``-l`` strings (``parse_selector``) or as a
list of both, ANDed (``normalize_selector``, the form module options take); ``to_query`` turns
a dict back into the API's ``labelSelector`` string.

No I/O; the error strings name the field path the caller passes in.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

OPERATORS = ('In', 'NotIn', 'Exists', 'DoesNotExist')

# \Z, not $: Kubernetes (Go RE2) rejects a trailing newline that Python's $ would accept.
_NAME = re.compile(r'^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\Z')
_DNS_SUBDOMAIN = re.compile(r'^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z')


def qualified_name_errors(key):
    """Why ``key`` is not a valid label key (empty list when it is)."""
    if not isinstance(key, str) or key == '':
        return ['must be a non-empty string']
    errors = []
    parts = key.split('/')
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if prefix == '':
            errors.append('prefix part must be non-empty')
        elif len(prefix) > 253 or not _DNS_SUBDOMAIN.match(prefix):
            errors.append('prefix part %r must be a DNS-1123 subdomain' % prefix)
    else:
        return ['a qualified name must consist of an optional prefix and a name separated by one "/"']
    if name == '':
        errors.append('name part must be non-empty')
    elif len(name) > 63:
        errors.append('name part must be no more than 63 characters')
    elif not _NAME.match(name):
        errors.append("name part %r must consist of alphanumeric characters, '-', '_' or '.', "
                      "and must start and end with an alphanumeric character" % name)
    return errors


def label_value_errors(value):
    """Why ``value`` is not a valid label value (empty list when it is)."""
    if not isinstance(value, str):
        return ['must be a string']
    if value == '':
        return []
    if len(value) > 63:
        return ['must be no more than 63 characters']
    if not _NAME.match(value):
        return ["%r must consist of alphanumeric characters, '-', '_' or '.', "
                "and must start and end with an alphanumeric character" % value]
    return []


def selector_errors(selector, path):
    """Every problem of a LabelSelector dict, each prefixed by its field path."""
    errors = []
    if selector is None:
        return errors
    if not isinstance(selector, dict):
        return ['%s: must be an object' % path]
    match_labels = selector.get('matchLabels') or {}
    if isinstance(match_labels, dict):
        for key in sorted(match_labels):
            for err in qualified_name_errors(key):
                errors.append('%s.matchLabels: key %r: %s' % (path, key, err))
            for err in label_value_errors(match_labels[key]):
                errors.append('%s.matchLabels.%s: %s' % (path, key, err))
    expressions = selector.get('matchExpressions') or []
    if isinstance(expressions, list):
        for idx, expr in enumerate(expressions):
            epath = '%s.matchExpressions[%d]' % (path, idx)
            if not isinstance(expr, dict):
                continue  # the schema check reports the type
            key = expr.get('key')
            operator = expr.get('operator')
            values = expr.get('values') or []
            if isinstance(key, str):
                for err in qualified_name_errors(key):
                    errors.append('%s.key: %s' % (epath, err))
            if operator not in OPERATORS:
                if isinstance(operator, str):
                    errors.append('%s.operator: %r is not one of %s' % (epath, operator, ', '.join(OPERATORS)))
                continue
            if operator in ('In', 'NotIn') and not values:
                errors.append('%s.values: must be specified when operator is %s' % (epath, operator))
            if operator in ('Exists', 'DoesNotExist') and values:
                errors.append('%s.values: may not be specified when operator is %s' % (epath, operator))
            if isinstance(values, list):
                for vidx, value in enumerate(values):
                    for err in label_value_errors(value):
                        errors.append('%s.values[%d]: %s' % (epath, vidx, err))
    return errors


def matches(selector, labels):
    """True when ``labels`` (a dict) satisfies ``selector`` (a valid LabelSelector dict).

    ``None`` or ``{}`` selects everything, as metav1.LabelSelectorAsSelector does.
    """
    if not selector:
        return True
    labels = labels or {}
    for key, value in (selector.get('matchLabels') or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get('matchExpressions') or []:
        key = expr['key']
        operator = expr['operator']
        values = expr.get('values') or []
        present = key in labels
        if operator == 'In':
            if not present or labels[key] not in values:
                return False
        elif operator == 'NotIn':
            if present and labels[key] in values:
                return False
        elif operator == 'Exists':
            if not present:
                return False
        elif operator == 'DoesNotExist':
            if present:
                return False
        else:
            raise ValueError('unknown label selector operator %r' % operator)
    return True


def to_query(selector):
    """The ``labelSelector`` query string for a LabelSelector dict (``''`` selects everything).

    matchLabels ``k=v``; matchExpressions ``k in (a,b)``, ``k notin (a,b)``, ``k``, ``!k``.
    Values are sorted so the string is stable. The selector must be valid (selector_errors).
    """
    selector = selector or {}
    parts = ['%s=%s' % (key, value) for key, value in sorted((selector.get('matchLabels') or {}).items())]
    for expr in selector.get('matchExpressions') or []:
        key, operator = expr['key'], expr['operator']
        if operator == 'Exists':
            parts.append(key)
        elif operator == 'DoesNotExist':
            parts.append('!%s' % key)
        else:
            word = 'in' if operator == 'In' else 'notin'
            parts.append('%s %s (%s)' % (key, word, ','.join(sorted(expr.get('values') or []))))
    return ','.join(parts)


# --------------------------------------------------------------------------- strings and other forms

_IDENT = r'[^\s!=,()<>]+'
_VALUE = r'[^\s!=,()<>]*'
_RE_NOT_EXISTS = re.compile(r'^!\s*(%s)$' % _IDENT)
_RE_EXISTS = re.compile(r'^(%s)$' % _IDENT)
_RE_SET = re.compile(r'^(%s)\s+(in|notin)\s*\(([^()]*)\)$' % _IDENT)
_RE_EQUALITY = re.compile(r'^(%s)\s*(==|!=|=)\s*(%s)$' % (_IDENT, _VALUE))
_RE_NUMERIC = re.compile(r'^(%s)\s*(<|>)' % _IDENT)


def _split_requirements(text):
    """Split on the commas that are not inside parentheses."""
    parts, depth, start = [], 0, 0
    for idx, char in enumerate(text):
        if char == '(':
            depth += 1
        elif char == ')':
            depth -= 1
            if depth < 0:
                raise ValueError('unbalanced ")" in label selector %r' % text)
        elif char == ',' and depth == 0:
            parts.append(text[start:idx])
            start = idx + 1
    if depth:
        raise ValueError('unbalanced "(" in label selector %r' % text)
    parts.append(text[start:])
    return parts


def parse_selector(text):
    """A label selector string (kubectl ``-l`` syntax) as a LabelSelector dict.

    ``k=v`` / ``k==v`` -> In [v]; ``k!=v`` -> NotIn [v] (matches pods without ``k``, as in
    Kubernetes); ``k in (a,b)``; ``k notin (a,b)``; ``k`` -> Exists; ``!k`` -> DoesNotExist.
    Requirements are ANDed and kept as matchExpressions (``a=x,a=y`` matches nothing, as in
    Kubernetes, instead of collapsing in a dict). ``<`` / ``>`` have no LabelSelector form and
    are rejected. An empty string selects everything (``{}``). Raises ValueError.
    """
    if not isinstance(text, str):
        raise ValueError('label selector must be a string, got %s' % type(text).__name__)
    if text.strip() == '':
        return {}
    expressions = []
    for raw in _split_requirements(text):
        part = raw.strip()
        if part == '':
            raise ValueError('empty requirement in label selector %r' % text)
        match = _RE_NOT_EXISTS.match(part)
        if match:
            expressions.append({'key': match.group(1), 'operator': 'DoesNotExist'})
            continue
        match = _RE_SET.match(part)
        if match:
            values = [v.strip() for v in match.group(3).split(',')]
            if values == ['']:
                raise ValueError('requirement %r of label selector %r: the value set must not be empty' % (part, text))
            expressions.append({'key': match.group(1), 'operator': 'In' if match.group(2) == 'in' else 'NotIn', 'values': values})
            continue
        match = _RE_EQUALITY.match(part)
        if match:
            operator = 'NotIn' if match.group(2) == '!=' else 'In'
            expressions.append({'key': match.group(1), 'operator': operator, 'values': [match.group(3)]})
            continue
        if _RE_NUMERIC.match(part):
            raise ValueError('requirement %r of label selector %r: "<" and ">" have no LabelSelector form' % (part, text))
        match = _RE_EXISTS.match(part)
        if match:
            expressions.append({'key': match.group(1), 'operator': 'Exists'})
            continue
        raise ValueError('cannot parse requirement %r of label selector %r' % (part, text))
    selector = {'matchExpressions': expressions}
    errors = selector_errors(selector, 'selector')
    if errors:
        raise ValueError('invalid label selector %r: %s' % (text, '; '.join(errors)))
    return selector


def _shape_errors(selector, path):
    """Type problems label_selector.selector_errors leaves to a schema check."""
    errors = []
    unknown = sorted(str(k) for k in selector if k not in ('matchLabels', 'matchExpressions'))
    if unknown:
        errors.append('%s: unknown field(s) %s (a LabelSelector has matchLabels and matchExpressions)' % (path, ', '.join(unknown)))
    match_labels = selector.get('matchLabels')
    if match_labels is not None and not isinstance(match_labels, dict):
        errors.append('%s.matchLabels: must be an object' % path)
    expressions = selector.get('matchExpressions')
    if expressions is not None and not isinstance(expressions, list):
        errors.append('%s.matchExpressions: must be a list' % path)
    elif expressions:
        for idx, expr in enumerate(expressions):
            epath = '%s.matchExpressions[%d]' % (path, idx)
            if not isinstance(expr, dict):
                errors.append('%s: must be an object' % epath)
                continue
            if not isinstance(expr.get('key'), str):
                errors.append('%s.key: must be a string' % epath)
            if not isinstance(expr.get('operator'), str):
                errors.append('%s.operator: must be a string' % epath)
            if expr.get('values') is not None and not isinstance(expr.get('values'), list):
                errors.append('%s.values: must be a list' % epath)
    return errors


def _as_expressions(selector):
    expressions = [{'key': k, 'operator': 'In', 'values': [v]} for k, v in sorted((selector.get('matchLabels') or {}).items())]
    return expressions + [dict(e) for e in selector.get('matchExpressions') or []]


def normalize_selector(selector, path='selector'):
    """A selector given as a string, a LabelSelector dict, or a list of both (ANDed), as one dict.

    ``None`` stays ``None`` (the caller decides what "no selector" means); ``''`` and ``{}``
    become ``{}``. Raises ValueError naming ``path`` and every problem.
    """
    if selector is None:
        return None
    if isinstance(selector, str):
        try:
            return parse_selector(selector)
        except ValueError as exc:
            raise ValueError('%s: %s' % (path, exc))
    if isinstance(selector, dict):
        errors = _shape_errors(selector, path)
        if not errors:
            errors = selector_errors(selector, path)
        if errors:
            raise ValueError('%s is invalid: %s' % (path, '; '.join(errors)))
        result = {}
        if selector.get('matchLabels'):
            result['matchLabels'] = dict(selector['matchLabels'])
        if selector.get('matchExpressions'):
            result['matchExpressions'] = [dict(e) for e in selector['matchExpressions']]
        return result
    if isinstance(selector, (list, tuple)):
        expressions = []
        for idx, item in enumerate(selector):
            if item is None:
                continue
            part = normalize_selector(item, '%s[%d]' % (path, idx))
            expressions.extend(_as_expressions(part))
        return {'matchExpressions': expressions} if expressions else {}
    raise ValueError('%s: must be a string, a LabelSelector dict or a list of them, got %s' % (path, type(selector).__name__))


def selector_is_empty(selector):
    """True for a selector without requirements (``{}``, ``''``), which Kubernetes reads as "everything"."""
    normalized = normalize_selector(selector)
    return normalized is not None and not normalized.get('matchLabels') and not normalized.get('matchExpressions')


def selector_matches(selector, labels):
    """``labels`` satisfy ``selector`` (any form ``normalize_selector`` takes); ``None`` and empty match all."""
    normalized = normalize_selector(selector)
    return matches(normalized, labels or {})
