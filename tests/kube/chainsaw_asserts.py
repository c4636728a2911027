# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""Upstream's chainsaw asserts, read as upstream wrote them and checked against the test cluster, for the cluster
tests that replay a scenario without the chainsaw binary (tests/scenarios runs the real one, outside make test).

Chainsaw's rules, as far as upstream's skyhook scenarios use them: an expected map is a subset of the actual one;
an expected list matches a list of the same length, item by item; a scalar is equal. A key in parentheses is a
JMESPath expression evaluated on the actual object at that level. Only the expressions those scenarios use are
known here; any other fails the test with its text (never passes silently). Candidates: by name when the assert
has one, else every object of the kind whose labels carry the assert's plain labels (chainsaw's label selector).
An assert passes when one candidate matches; it is polled until then, as chainsaw polls it until its timeout.
"""

from __future__ import annotations

import json
import re
import time

import yaml
from kubernetes import client as kclient

_PARSE_JSON = re.compile(r'^"([^"]+)" && parse_json\("\1"\)$')
_FILTER = re.compile(r"^(\w+)\[\?(\w+) == '([^']*)'\]$")
_INDEX = re.compile(r'^\[(\d+)\]$')
_CONTAINS = re.compile(r"^contains\(@, '([^']*)'\)$")
MISSING = object()


def _project(expression, actual):
    """The value of one of upstream's JMESPath keys on ``actual``; an unknown expression raises."""
    found = _PARSE_JSON.match(expression)
    if found:
        raw = actual.get(found.group(1)) if isinstance(actual, dict) else None
        return json.loads(raw) if raw else None
    found = _FILTER.match(expression)
    if found:
        items = actual.get(found.group(1)) if isinstance(actual, dict) else None
        return [i for i in items or [] if isinstance(i, dict) and i.get(found.group(2)) == found.group(3)]
    found = _INDEX.match(expression)
    if found:
        index = int(found.group(1))
        return actual[index] if isinstance(actual, list) and index < len(actual) else MISSING
    found = _CONTAINS.match(expression)
    if found:
        return isinstance(actual, str) and found.group(1) in actual
    if expression == 'values(@)':
        return list(actual.values()) if isinstance(actual, dict) else MISSING
    if expression == 'length(@)':
        return len(actual) if isinstance(actual, (dict, list, str)) else MISSING
    raise NotImplementedError(f'chainsaw expression not known to this test support: ({expression})')


def mismatch(expected, actual, path=''):
    """The first place where ``actual`` does not match ``expected`` (a path and both values), or None."""
    if isinstance(expected, dict):
        projections_only = all(k.startswith('(') and k.endswith(')') for k in expected)
        if not isinstance(actual, dict) and not projections_only:  # (contains(@, ...)) applies to a string too
            return f'{path or "."}: expected a map, found {actual!r}'
        for key, value in expected.items():
            if key.startswith('(') and key.endswith(')'):
                got = _project(key[1:-1], actual)
            else:
                got = actual.get(key, MISSING)
            if got is MISSING:
                return f'{path}.{key}: missing'
            where = mismatch(value, got, f'{path}.{key}')
            if where:
                return where
        return None
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return f'{path}: expected {len(expected)} items, found {actual!r}'
        for i, (want, got) in enumerate(zip(expected, actual)):
            where = mismatch(want, got, f'{path}[{i}]')
            if where:
                return where
        return None
    return None if expected == actual else f'{path}: expected {expected!r}, found {actual!r}'


def _candidates(api, doc, namespace):
    meta = doc.get('metadata') or {}
    kind, name = doc['kind'], meta.get('name')
    plain = {k: v for k, v in (meta.get('labels') or {}).items() if not k.startswith('(') and isinstance(v, str)}
    selector = ','.join(f'{k}={v}' for k, v in sorted(plain.items())) or None
    core, custom = kclient.CoreV1Api(api), kclient.CustomObjectsApi(api)
    serialize = api.sanitize_for_serialization
    if kind == 'Node':
        items = [core.read_node(name)] if name else core.list_node(label_selector=selector).items
    elif kind == 'Pod':
        items = [core.read_namespaced_pod(name, namespace)] if name else core.list_namespaced_pod(
            namespace, label_selector=selector).items
    elif kind == 'ConfigMap':
        items = [core.read_namespaced_config_map(name, namespace)] if name else core.list_namespaced_config_map(
            namespace, label_selector=selector).items
    elif kind == 'Skyhook':
        group, version = doc['apiVersion'].split('/')
        return [custom.get_cluster_custom_object(group, version, 'skyhooks', name)]
    else:
        raise NotImplementedError(f'assert of kind {kind} not known to this test support')
    # a listed item carries no apiVersion and kind (its list does); chainsaw's candidates have them
    return [dict(serialize(i), apiVersion=doc['apiVersion'], kind=kind) for i in items]


def check_once(api, doc, namespace):
    """None when one candidate matches ``doc`` now, else why not (each candidate's first mismatch)."""
    expected = dict(doc)
    expected['metadata'] = {k: v for k, v in (doc.get('metadata') or {}).items() if k != 'namespace'}
    try:
        found = _candidates(api, expected, namespace)
    except kclient.ApiException as exc:
        return f'{doc["kind"]}: {exc.status} {exc.reason}'
    if not found:
        return f'{doc["kind"]} {expected["metadata"]}: no candidate'
    reasons = []
    for actual in found:
        where = mismatch(expected, actual)
        if where is None:
            return None
        reasons.append(f'{actual["metadata"]["name"]}{where}')
    return '; '.join(reasons)


def wait_for_assert(api, doc, namespace, timeout, interval=0.1):
    """Poll ``doc`` until it matches (chainsaw's assert); AssertionError with the last reason at the timeout."""
    deadline = time.monotonic() + timeout
    while True:
        reason = check_once(api, doc, namespace)
        if reason is None:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f'upstream assert on {doc["kind"]} not met after {timeout}s: {reason}')
        time.sleep(interval)


def documents(text):
    """The YAML documents of an upstream file, empty ones left out."""
    return [d for d in yaml.safe_load_all(text) if d]


def drop_observed_generation(doc):
    """``doc`` without its ``status.observedGeneration`` (docs/dev/upstream-scenarios.md, difference 7: the operator's
    finalizer Update writes the spec once more, a generation the collection never makes)."""
    status = doc.get('status')
    if isinstance(status, dict) and 'observedGeneration' in status:
        doc = dict(doc, status={k: v for k, v in status.items() if k != 'observedGeneration'})
    return doc
