# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""Kubernetes label selectors: validation and matching with the API server's semantics.

Mirrors k8s.io/apimachinery ``LabelSelectorAsSelector`` + ``Selector.Matches``:

* matchLabels and matchExpressions are ANDed; an empty selector matches everything.
* ``In`` / ``NotIn`` need at least one value; ``Exists`` / ``DoesNotExist`` take none.
* ``NotIn`` matches a node that does not have the key at all (as Kubernetes does).
* keys must be qualified names (optional DNS-1123 subdomain prefix + ``/`` + name of at
  most 63 characters) and values valid label values.

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
