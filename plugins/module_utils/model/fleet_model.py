# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""A fleet of clusters and the ordered stages a rollout crosses it in: read and checked, before any cluster is asked.

The fleet file (docs/fleet.md)::

    name: gpu-fleet                 # the fleet's name (its runs, its report); default fleet
    clusters:                       # id -> how to reach it (kubeconfig and/or context; neither: the defaults)
      canary: {context: canary}
      us-east: {kubeconfig: /secrets/us-east.yaml, operator: handover}
    stages:                         # in order; each cluster in exactly one
      - {name: canary, clusters: [canary], soak: 30m}
      - {name: rest, clusters: [us-east], max_concurrency: 2, soak: 0s}
      - {name: inference, group: inference}   # or an inventory group: its hosts are the stage's clusters
    max_failures: 0                 # failed clusters the rollout goes on after (more stop it)
    progress_deadline: 2h           # a cluster's rollout longer than this is stopped and counts as failed
    budget: {percent: 10}           # nodes cordoned or rebooting at once over the fleet ({count: N} or {percent: P})
    coordination: canary            # the cluster whose Lease keeps that budget (default: the first stage's first;
                                    # or {kubeconfig, context} of a cluster outside the fleet)
    budget_namespace: skyhook       # the Lease's namespace there (default: skyhook)
    operator: skip                  # a cluster whose NodeWright operator reconciles a CR: skip it (default), or
                                    # handover (the fleet waits for its operator); a cluster's own operator wins

A stage's ``group`` names a group of the inventory the fleet playbook runs with: each of its hosts is a cluster of
the stage, reached with that host's ``nodewright_cluster_kubeconfig``, ``nodewright_cluster_context`` and ``nodewright_cluster_operator`` (so an
AWX inventory and its credentials describe the fleet); ``clusters`` is then optional. Durations are Go's (``30m``,
``1h30m``, ``0s``), as the CRs' are. Every problem is reported at once, with the field that holds it
(``stages[1].clusters[0]``). Pure: no I/O, no Ansible import.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.nodewright.bridge.plugins.module_utils.model import duration

DEFAULT_NAME = 'fleet'
# a cluster id names the cluster in host names (<id>/<node>), reports and Lease keys: DNS-label-like
CLUSTER_ID = re.compile(r'^[a-z0-9]([-a-z0-9_.]{0,61}[a-z0-9])?$')
CLUSTER_KEYS = ('kubeconfig', 'context')
# what a cluster whose NodeWright operator reconciles a CR of the run gets: left out, or left to its operator
SKIP, HANDOVER = 'skip', 'handover'
OPERATOR_CHOICES = (SKIP, HANDOVER)
STAGE_KEYS = ('name', 'clusters', 'group', 'max_concurrency', 'soak')
FLEET_KEYS = ('name', 'clusters', 'stages', 'max_failures', 'progress_deadline', 'budget', 'coordination',
              'budget_namespace', 'operator')
BUDGET_KEYS = ('count', 'percent')
DEFAULT_BUDGET_NAMESPACE = 'skyhook'
# kubernetes.core's K8S_AUTH_* variables that win over a kubeconfig's server and credentials (as explicit options do):
# in the environment of a fleet's run they would reach every cluster with one API server's (an AWX Kubernetes
# bearer-token credential sets K8S_AUTH_HOST and K8S_AUTH_API_KEY). K8S_AUTH_KUBECONFIG and K8S_AUTH_CONTEXT are
# only defaults, which each cluster's own kubeconfig and context replace.
OVERRIDING_ENVIRONMENT = ('K8S_AUTH_HOST', 'K8S_AUTH_API_KEY', 'K8S_AUTH_USERNAME', 'K8S_AUTH_PASSWORD',
                          'K8S_AUTH_CERT_FILE', 'K8S_AUTH_KEY_FILE', 'K8S_AUTH_SSL_CA_CERT')


class FleetError(ValueError):
    """Every problem of a fleet definition, each naming its field."""

    def __init__(self, errors):
        super(FleetError, self).__init__('invalid fleet (%d problem%s):\n  - %s' % (
            len(errors), '' if len(errors) == 1 else 's', '\n  - '.join(errors)))
        self.errors = list(errors)


class Stage(object):
    """One stage: its clusters (ids, in order), how many run at once, how long to soak after it completes."""

    def __init__(self, name, clusters, max_concurrency, soak_seconds):
        self.name = name
        self.clusters = list(clusters)
        self.max_concurrency = max_concurrency
        self.soak_seconds = soak_seconds

    def as_dict(self):
        return {'name': self.name, 'clusters': list(self.clusters), 'max_concurrency': self.max_concurrency,
                'soak_seconds': self.soak_seconds}


class Fleet(object):
    """A checked fleet: ``clusters`` id -> {kubeconfig, context} (each may be None), ``stages`` in order."""

    def __init__(self, name, clusters, stages, max_failures, progress_deadline_seconds, budget=None, coordination=None,
                 budget_namespace=DEFAULT_BUDGET_NAMESPACE, operators=None):
        self.name = name
        self.clusters = clusters
        self.stages = stages
        self.max_failures = max_failures
        self.progress_deadline_seconds = progress_deadline_seconds
        self.budget = budget  # {count} or {percent}, or None: no budget over the fleet
        self.coordination = coordination  # the cluster id whose Lease keeps the budget
        self.budget_namespace = budget_namespace
        # cluster id -> SKIP or HANDOVER: what it gets when its NodeWright operator reconciles a CR of the run
        self.operators = dict((cid, (operators or {}).get(cid) or SKIP) for cid in clusters)

    def as_input(self):
        """The fleet as a fleet mapping again, every inventory group read and durations in seconds: what parse_fleet
        reads back to this fleet without the inventory (the stage runs get it)."""
        mapping = {'name': self.name, 'clusters': dict((k, dict(v, operator=self.operators[k])) for k, v in self.clusters.items()),
                   'stages': [{'name': s.name, 'clusters': list(s.clusters), 'max_concurrency': s.max_concurrency,
                               'soak': s.soak_seconds} for s in self.stages],
                   'max_failures': self.max_failures, 'progress_deadline': self.progress_deadline_seconds}
        if self.budget is not None:
            mapping.update(budget=self.budget, coordination=self.coordination, budget_namespace=self.budget_namespace)
        return mapping

    def as_dict(self):
        return {'name': self.name, 'clusters': dict((k, dict(v)) for k, v in self.clusters.items()),
                'stages': [s.as_dict() for s in self.stages], 'max_failures': self.max_failures,
                'progress_deadline_seconds': self.progress_deadline_seconds, 'budget': self.budget,
                'coordination': self.coordination, 'budget_namespace': self.budget_namespace, 'operators': dict(self.operators)}


def _seconds(value, where, errors, allow_none=True):
    """A Go duration (or a number of seconds) as seconds; None when unset (and allowed)."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool):
        errors.append('%s: must be a duration such as 30m or 1h30m, got %r' % (where, value))
        return None
    if isinstance(value, (int, float)):
        if value < 0:
            errors.append('%s: must not be negative, got %r' % (where, value))
            return None
        return float(value)
    if not isinstance(value, str) or not duration.is_go_duration(value):
        errors.append('%s: must be a duration such as 30m or 1h30m, got %r' % (where, value))
        return None
    nanoseconds = duration.parse_go_duration(value)
    if nanoseconds < 0:
        errors.append('%s: must not be negative, got %r' % (where, value))
        return None
    return nanoseconds / 1e9


def _count(value, where, errors, minimum, default):
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        errors.append('%s: must be an integer of at least %d, got %r' % (where, minimum, value))
        return default
    return value


def _unknown(mapping, allowed, where, errors):
    for key in sorted(set(mapping) - set(allowed), key=str):
        errors.append('%s%s: unknown field (expected one of %s)' % (where, key, ', '.join(allowed)))


def _clusters(value, errors, operators, optional=False):
    if value is None and optional:
        return {}
    if not isinstance(value, dict) or (not value and not optional):
        errors.append('clusters: must be a non-empty mapping of cluster id to {kubeconfig, context}, got %r' % (value,))
        return {}
    clusters = {}
    for cid, conn in value.items():
        where = 'clusters.%s' % cid
        if not isinstance(cid, str) or not CLUSTER_ID.match(cid):
            errors.append('%s: a cluster id is lowercase letters, digits, "-", "_" and ".", at most 63' % where)
            continue
        conn = {} if conn is None else conn
        if not isinstance(conn, dict):
            errors.append('%s: must be a mapping with kubeconfig and/or context, got %r' % (where, conn))
            continue
        _unknown(conn, CLUSTER_KEYS + ('operator',), where + '.', errors)
        for key in CLUSTER_KEYS:
            if conn.get(key) is not None and (not isinstance(conn[key], str) or not conn[key]):
                errors.append('%s.%s: must be a non-empty string, got %r' % (where, key, conn[key]))
        clusters[cid] = dict((key, conn.get(key) or None) for key in CLUSTER_KEYS)
        if conn.get('operator') is not None:
            operators[cid] = _operator(conn['operator'], where + '.operator', errors)
    return clusters


def _operator(value, where, errors):
    if value not in OPERATOR_CHOICES:
        errors.append('%s: %s (a cluster whose NodeWright operator reconciles a CR of the run is left out) or %s (the '
                      'fleet waits for its operator to complete it), got %r' % (where, SKIP, HANDOVER, value))
        return None
    return value


def _group_members(where, group, inventory, clusters, errors, operators):
    """The hosts of inventory group ``group`` (each a cluster, added to ``clusters`` with its host's connection)."""
    if inventory is None:
        errors.append('%s.group: an inventory group, read only by the nodewright.bridge.fleet playbook (or the fleet '
                      'filter given the inventory)' % where)
        return []
    hosts = inventory.get('groups', {}).get(group) if isinstance(group, str) else None
    if hosts is None:
        errors.append('%s.group: %r is not a group of the inventory' % (where, group))
        return []
    if not hosts:
        errors.append('%s.group: the inventory group %s has no hosts' % (where, group))
    for host in hosts:
        if not CLUSTER_ID.match(host):
            errors.append('%s.group: host %r of %s is not a cluster id (lowercase letters, digits, "-", "_" and ".", '
                          'at most 63)' % (where, host, group))
        elif host not in clusters:
            conn = inventory.get('hosts', {}).get(host) or {}
            clusters[host] = dict((key, conn.get(key) or None) for key in CLUSTER_KEYS)
            if conn.get('operator') is not None:
                operators[host] = _operator(conn['operator'], '%s.group: host %s: nodewright_cluster_operator' % (where, host),
                                            errors)
    return [h for h in hosts if CLUSTER_ID.match(h)]


def _stage(index, entry, clusters, placed, errors, operators, inventory=None):
    where = 'stages[%d]' % index
    if not isinstance(entry, dict):
        errors.append('%s: must be a mapping with name and clusters, got %r' % (where, entry))
        return None
    _unknown(entry, STAGE_KEYS, where + '.', errors)
    name = entry.get('name') or 'stage-%d' % (index + 1)
    members = entry.get('clusters')
    if entry.get('group') is not None:
        grouped = _group_members(where, entry['group'], inventory, clusters, errors, operators)
        members = (list(members) if isinstance(members, list) else []) + [h for h in grouped if h not in (members or [])]
        if not members:
            return Stage(name, [], 1, 0.0)
    if not isinstance(members, list) or not members:
        errors.append('%s.clusters: a stage needs at least one cluster, got %r' % (where, members))
        members = []
    ids = []
    for position, cid in enumerate(members):
        at = '%s.clusters[%d]' % (where, position)
        if cid not in clusters:
            errors.append('%s: %r is not a cluster of the fleet (clusters: %s)' % (at, cid, ', '.join(sorted(clusters)) or 'none'))
        elif cid in placed:
            errors.append('%s: cluster %s is already in %s; a cluster belongs to one stage' % (at, cid, placed[cid]))
        else:
            placed[cid] = where
            ids.append(cid)
    return Stage(name, ids, _count(entry.get('max_concurrency'), where + '.max_concurrency', errors, 1, len(ids) or 1),
                 _seconds(entry.get('soak'), where + '.soak', errors) or 0.0)


def _budget(value, clusters, stages, errors):
    """``(budget, coordination, namespace)`` of the fleet mapping ``value``."""
    budget = value.get('budget')
    coordination = value.get('coordination')
    namespace = value.get('budget_namespace') or DEFAULT_BUDGET_NAMESPACE
    if budget is None:
        for key in ('coordination', 'budget_namespace'):
            if value.get(key) is not None:
                errors.append('%s: set only with budget (the node-disruption budget over the fleet)' % key)
        return None, None, namespace
    if not isinstance(budget, dict) or sorted(k for k in BUDGET_KEYS if budget.get(k) is not None) not in (['count'], ['percent']):
        errors.append('budget: exactly one of count or percent, got %r' % (budget,))
        return None, None, namespace
    _unknown(budget, BUDGET_KEYS, 'budget.', errors)
    count, percent = budget.get('count'), budget.get('percent')
    if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 1):
        errors.append('budget.count: must be an integer of at least 1, got %r' % (count,))
    if percent is not None and (isinstance(percent, bool) or not isinstance(percent, (int, float)) or not 0 < percent <= 100):
        errors.append('budget.percent: must be more than 0 and at most 100, got %r' % (percent,))
    if coordination is None:
        coordination = stages[0].clusters[0] if stages and stages[0].clusters else None
    elif isinstance(coordination, dict):
        # a cluster outside the fleet (a designated coordination cluster, shared by the fleets that share the budget)
        _unknown(coordination, CLUSTER_KEYS, 'coordination.', errors)
        if not any(coordination.get(k) for k in CLUSTER_KEYS):
            errors.append('coordination: a cluster id of the fleet, or a mapping with kubeconfig and/or context')
        coordination = dict((k, coordination.get(k) or None) for k in CLUSTER_KEYS)
    elif coordination not in clusters:
        errors.append('coordination: %r is not a cluster of the fleet (clusters: %s)' % (coordination, ', '.join(sorted(clusters))))
    if not isinstance(namespace, str):
        errors.append('budget_namespace: must be a string, got %r' % (namespace,))
    return dict((k, budget[k]) for k in BUDGET_KEYS if budget.get(k) is not None), coordination, namespace


def environment_problems(fleet, environment):
    """Why ``environment`` (the run's variables, os.environ) cannot roll ``fleet`` out: the K8S_AUTH_* variables set in
    it that would replace every cluster's server or credentials, when the fleet reaches more than one cluster."""
    reached = len(fleet.clusters) + (1 if isinstance(fleet.coordination, dict) else 0)
    found = [name for name in OVERRIDING_ENVIRONMENT if environment.get(name)]
    if reached < 2 or not found:
        return []
    return ['%s set in the environment: it wins over every cluster\'s kubeconfig (as in kubernetes.core), so each of '
            'the fleet\'s %d clusters would be reached at one API server with one identity; unset it and give each '
            'cluster its own kubeconfig or context (in AWX: a kubeconfig credential per cluster, not a Kubernetes '
            'bearer-token credential on the job; docs/fleet.md)' % (', '.join(found), reached)]


def parse_fleet(value, inventory=None):
    """The Fleet that ``value`` (the fleet file's mapping) describes; FleetError lists every problem.

    ``inventory``: ``{'groups': {group: [host]}, 'hosts': {host: {kubeconfig, context}}}``, what a stage's ``group``
    is read from (the hosts of its groups only are needed).
    """
    if not isinstance(value, dict):
        raise FleetError(['the fleet must be a mapping with clusters and stages, got %s' % type(value).__name__])
    errors = []
    _unknown(value, FLEET_KEYS, '', errors)
    name = value.get('name') or DEFAULT_NAME
    if not isinstance(name, str) or not CLUSTER_ID.match(name):
        errors.append('name: lowercase letters, digits, "-", "_" and ".", at most 63, got %r' % (name,))
    entries = value.get('stages')
    grouped = isinstance(entries, list) and any(isinstance(e, dict) and e.get('group') is not None for e in entries)
    operators = {}
    clusters = _clusters(value.get('clusters'), errors, operators, optional=grouped)
    stages, placed = [], {}
    if not isinstance(entries, list) or not entries:
        errors.append('stages: must be a non-empty list of stages, got %r' % (entries,))
    else:
        for index, entry in enumerate(entries):
            stage = _stage(index, entry, clusters, placed, errors, operators, inventory)
            if stage is not None:
                stages.append(stage)
        names = [s.name for s in stages]
        for dup in sorted(set(n for n in names if names.count(n) > 1)):
            errors.append('stages: the name %s is used by %d stages' % (dup, names.count(dup)))
        for cid in sorted(set(clusters) - set(placed)):
            errors.append('clusters.%s: in no stage (every cluster of the fleet is in exactly one)' % cid)
    max_failures = _count(value.get('max_failures'), 'max_failures', errors, 0, 0)
    deadline = _seconds(value.get('progress_deadline'), 'progress_deadline', errors)
    if deadline is not None and deadline <= 0:
        errors.append('progress_deadline: must be more than 0s, got %r' % value.get('progress_deadline'))
    budget, coordination, namespace = _budget(value, clusters, stages, errors)
    default_operator = _operator(value['operator'], 'operator', errors) if value.get('operator') is not None else SKIP
    if errors:
        raise FleetError(errors)
    return Fleet(name, clusters, stages, max_failures, deadline, budget, coordination, namespace,
                 operators=dict((cid, operators.get(cid) or default_operator) for cid in clusters))
