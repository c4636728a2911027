# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""The pure part of the ``nodewright.bridge.nodes`` inventory plugin: from a rollout plan to hosts.

* group names: ``nodewright``, ``nodewright_<cr>``, ``nodewright_compartment_<name>``,
  ``nodewright_state_<progress>``, ``nodewright_needs_drain``, ``nodewright_ignored``;
* the progress of a node for a CR (``complete``, ``erroring``, ``in_progress``, ``blocked``,
  ``pending``), from its plan and its decoded nodeState;
* the host variables of every node of a plan: the inputs of the node role and the strategy it fills in
  (``nodewright_node``, ``nodewright_labels``, ``nodewright_compartment``) and the read-only facts, in
  ``nodewright_node_facts`` (and flat, deprecated, until 2.0.0);
* keeping of a Kubernetes Node only what the plugin needs (so that a cache stays small).

The CR and its policy are picked by ``cr_model.select_cr`` and ``planner.choose_policy``, as for
the modules.

No I/O: the plugin reads the files and the cluster and populates the inventory.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import re

from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_model
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import node_annotations
# Node annotations the planner reads (nodeState_, status_, cordon_ ...); the others are dropped.
from ansible_collections.nodewright.bridge.plugins.module_utils.model.api_generation import SKYHOOK
from ansible_collections.nodewright.bridge.plugins.module_utils.model.constants import ANNOTATION_PREFIXES

GROUP_PREFIX = 'nodewright'
ALL_GROUP = GROUP_PREFIX
IGNORED_GROUP = GROUP_PREFIX + '_ignored'
NEEDS_DRAIN_GROUP = GROUP_PREFIX + '_needs_drain'
COMPARTMENT_PREFIX = GROUP_PREFIX + '_compartment_'
STATE_PREFIX = GROUP_PREFIX + '_state_'
CR_FALLBACK_PREFIX = GROUP_PREFIX + '_cr_'

# In the order they are decided: the first that applies wins.
PROGRESS = ('complete', 'erroring', 'in_progress', 'blocked', 'pending')

# The read-only facts about a node, in one host variable, named apart from the variables users set
# (an inventory plugin's facts prefix, as amazon.aws.aws_ec2's). Its keys:
FACTS_VAR = 'nodewright_node_facts'
FACT_KEYS = ('cr_name', 'pending', 'needs_drain', 'interrupt', 'blocked', 'complete', 'status', 'state', 'progress',
             'cordoned_by', 'ignored')
# Until 2.0.0 each fact is also a host variable of its own (deprecated), nodewright_<key>; but the CR's name,
# which is nodewright_cr_name, an input of the node role of the same meaning (_common_vars). Before, it was
# nodewright_cr, the name of the node role's and the playbooks' input that holds the CR documents: a host
# variable wins over a role default, so the role read the CR's name as a file path.
FLAT_FACTS = dict((key, 'nodewright_' + key) for key in FACT_KEYS if key != 'cr_name')
FLAT_UNTIL = '2.0.0'


_INVALID = re.compile(r'[^A-Za-z0-9_]')


def safe_name(text):
    """``text`` with every character that is not a letter, digit or underscore turned into ``_``.

    The same characters Ansible's ``to_safe_group_name`` replaces, so the names need no further
    sanitising (and Ansible prints no warning about them).
    """
    return _INVALID.sub('_', text)


def cr_group(cr_name):
    """``nodewright_<cr>``; ``nodewright_cr_<cr>`` when that would be one of the plugin's other groups.

    A CR named ``needs-drain``, ``ignored``, ``state-...`` or ``compartment-...`` would otherwise
    share its group with the nodes that need a drain, the ignored nodes, a state or a compartment.
    """
    name = safe_name(cr_name)
    group = '%s_%s' % (GROUP_PREFIX, name)
    if group in (IGNORED_GROUP, NEEDS_DRAIN_GROUP) or group.startswith((COMPARTMENT_PREFIX, STATE_PREFIX)):
        return CR_FALLBACK_PREFIX + name
    return group


def _short_hash(text):
    return hashlib.sha1(text.encode('utf-8')).hexdigest()[:6]


def compartment_groups(names):
    """``{compartment name: group name}``: ``nodewright_compartment_<name>``, ``__default__`` as ``default``.

    Names that differ only in characters a group name cannot hold (``a-b`` and ``a.b``) would
    share a group: each of them gets ``_<6 hex digits of its name's SHA-1>`` appended instead,
    so every compartment keeps a group of its own, the same on every run. ``__default__`` always
    keeps ``nodewright_compartment_default`` (a compartment named ``default`` is the one suffixed).
    """
    by_base = {}
    for name in sorted(set(names)):
        base = 'default' if name == cr_model.DEFAULT_COMPARTMENT else safe_name(name)
        by_base.setdefault(base, []).append(name)
    groups = {}
    for base, owners in by_base.items():
        for name in owners:
            if len(owners) == 1 or name == cr_model.DEFAULT_COMPARTMENT:
                groups[name] = COMPARTMENT_PREFIX + base
            else:
                groups[name] = '%s%s_%s' % (COMPARTMENT_PREFIX, base, _short_hash(name))
    return groups


def state_group(progress_value):
    return STATE_PREFIX + progress_value


def progress(plan, state, package_keys=None):
    """Where a node stands with a CR, one of PROGRESS.

    * ``complete``: the plan has nothing left to do (every package at its last stage, complete);
    * ``erroring``: a package entry of the node's state is ``erroring`` (a stage failed);
    * ``in_progress``: a package entry is ``in_progress`` (a stage started and has no verdict yet),
      or ``skipped`` (its interrupt was merged into another package's, which has not finished);
    * ``blocked``: nothing can run (the remaining packages depend on one being uninstalled);
    * ``pending``: stages to run and none running or failed: never started, part way through
      between two stages, or the CR asks for a new version.

    ``plan`` is a node's entry of ``planner.plan_rollout`` (or ``node_plan.plan_node``), ``state``
    its decoded nodeState for the CR. With ``package_keys`` (the CR's ``<package>|<version>``),
    only those entries count: an old version's entry left erroring does not make the node erroring.
    """
    if plan.get('complete'):
        return 'complete'
    states = set(entry.get('state') for key, entry in (state or {}).items()
                 if package_keys is None or key in package_keys)
    if 'erroring' in states:
        return 'erroring'
    if 'in_progress' in states or 'skipped' in states:
        return 'in_progress'
    if not plan.get('pending'):
        return 'blocked'
    return 'pending'


def internal_ip(node):
    """The first InternalIP of a Kubernetes Node (a dict in the API's shape), or None."""
    for address in ((node.get('status') or {}).get('addresses') or []):
        if isinstance(address, dict) and address.get('type') == 'InternalIP' and address.get('address'):
            return address['address']
    return None


def compact_node(node):
    """``{name, labels, annotations, internal_ip}`` of a Kubernetes Node, NodeWright annotations only."""
    meta = node.get('metadata') or {}
    annotations = meta.get('annotations') or {}
    return {
        'name': meta.get('name'),
        'labels': dict(meta.get('labels') or {}),
        'annotations': dict((k, v) for k, v in annotations.items() if k.startswith(ANNOTATION_PREFIXES)),
        'internal_ip': internal_ip(node),
    }


def all_groups(cr, plan, include_ignored=False):
    """Every group the plugin creates for a plan, hosts or not (so plays naming them find them)."""
    groups = [ALL_GROUP, cr_group(cr.name), NEEDS_DRAIN_GROUP]
    groups.extend(state_group(p) for p in PROGRESS)
    groups.extend(sorted(compartment_groups(c['name'] for c in plan['compartments']).values()))
    if include_ignored:
        groups.append(IGNORED_GROUP)
    return groups


def build_hosts(cr, plan, nodes, include_ignored=False, use_internal_ip=True, connection='local', gen=SKYHOOK):
    """The hosts of a plan: ``[{name, vars, groups}]`` sorted by name.

    ``plan`` is ``planner.plan_rollout(cr, nodes, ...)``; ``nodes`` the nodes it was made from
    (``compact_node``: name, labels, annotations, internal_ip). Ignored nodes are hosts only with
    ``include_ignored``, and then only in ``nodewright_ignored``. Nodes the CR does not select
    are not hosts.
    """
    by_name = dict((n['name'], n) for n in nodes)
    keys = frozenset(p.unique_name for p in cr.packages.values())
    compartments = compartment_groups(c['name'] for c in plan['compartments'])
    cr_group_name = cr_group(cr.name)
    state_key = node_annotations.node_state_key(cr.name, gen)
    hosts = []
    for name in sorted(plan['nodes']):
        node, planned = by_name[name], plan['nodes'][name]
        state = node_annotations.decode(node['annotations'].get(state_key), '%s annotation %s' % (name, state_key))
        value = progress(planned, state, keys)
        host_vars = _common_vars(node, cr.name, use_internal_ip, connection)
        host_vars['nodewright_compartment'] = planned['compartment']
        host_vars.update(_facts({
            'cr_name': cr.name,
            # Nodes in the same state share one plan: copies, so that no host's value is another's.
            'pending': _copied(planned['pending']),
            'needs_drain': planned['needs_drain'],
            'interrupt': _copied(planned['interrupt']),
            'blocked': _copied(planned['blocked']),
            'complete': planned['complete'],
            'status': planned['status'],
            'state': state,
            'progress': value,
            'cordoned_by': planned['cordoned_by'],
            'ignored': False,
        }))
        groups = [ALL_GROUP, cr_group_name, compartments[planned['compartment']], state_group(value)]
        if planned['needs_drain']:
            groups.append(NEEDS_DRAIN_GROUP)
        hosts.append({'name': name, 'vars': host_vars, 'groups': groups})
    if include_ignored:
        for name in plan['ignored']:
            node = by_name[name]
            host_vars = _common_vars(node, cr.name, use_internal_ip, connection)
            host_vars.update(_facts({
                'cr_name': cr.name,
                'status': node['annotations'].get(node_annotations.status_key(cr.name, gen)) or 'unknown',
                'cordoned_by': node_annotations.cordon_owners(node['annotations'], gen),
                'ignored': True,
            }))
            hosts.append({'name': name, 'vars': host_vars, 'groups': [IGNORED_GROUP]})
        hosts.sort(key=_host_name)
    return hosts


def _copied(value):
    """A copy of plain data (dicts, lists, scalars); several times faster than copy.deepcopy."""
    if isinstance(value, dict):
        return dict((k, _copied(v)) for k, v in value.items())
    if isinstance(value, list):
        return [_copied(v) for v in value]
    return value


def _host_name(host):
    return host['name']


def _facts(facts):
    """The host variables of a node's ``facts``: ``nodewright_node_facts``, and each fact flat (FLAT_FACTS) until
    2.0.0. The flat variables hold the same objects as the dict: one host's, never shared with another host."""
    host_vars = dict((FLAT_FACTS[key], value) for key, value in facts.items() if key in FLAT_FACTS)
    host_vars[FACTS_VAR] = facts
    return host_vars


def _common_vars(node, cr_name, use_internal_ip, connection):
    """The host variables that are inputs of the node role and the strategy, which a static inventory sets by hand."""
    host_vars = {
        'nodewright_node': node['name'],
        'nodewright_cr_name': cr_name,
        'nodewright_labels': dict(node['labels']),
    }
    if connection:
        host_vars['ansible_connection'] = connection
    if use_internal_ip and node.get('internal_ip'):
        host_vars['ansible_host'] = node['internal_ip']
    return host_vars
