# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""The node-disruption budget over a fleet of clusters: at no moment more than ``count`` nodes cordoned or rebooting
across every cluster, whatever each cluster's own policy allows. Pure: the state and its rules.

The state (kept in one Lease's annotation in a coordination cluster, plugin_utils/rollout/fleet_slots.py) is the
slots taken: ``{'<cluster>/<node>': {'run': who took it, 'until': when it expires}}``. A node takes a slot before its
cordon and gives it back after its uncordon (or when its sequence ends); the run that holds it renews it while
the node is disrupted, so the slots of a dead run expire by themselves.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

ANNOTATION = 'nodewright.bridge/fleet-slots'
LABEL_FLEET = 'nodewright.bridge/fleet'


class FleetBudgetError(ValueError):
    """A state this collection did not write (or a budget given wrong)."""


def lease_name(fleet):
    return ('nodewright-fleet-%s' % fleet)[:63].rstrip('-.')


def parse_state(text):
    try:
        state = json.loads(text) if text else {}
    except ValueError as exc:
        raise FleetBudgetError('the fleet budget\'s annotation %s is not JSON: %s' % (ANNOTATION, exc))
    if not isinstance(state, dict) or not all(isinstance(v, dict) and 'until' in v for v in state.values()):
        raise FleetBudgetError('the fleet budget\'s annotation %s is not a map of slots' % ANNOTATION)
    return state


def dump_state(state):
    return json.dumps(state, sort_keys=True, separators=(',', ':'))


def live(state, now):
    """The slots not expired at ``now`` (the state pruned in place)."""
    for key in [k for k, slot in state.items() if slot['until'] <= now]:
        del state[key]
    return state


def take(state, key, run, now, count, expiry):
    """``key`` takes (or keeps) a slot: True, or False when ``count`` unexpired slots are held by other keys."""
    live(state, now)
    if key not in state and len(state) >= count:
        return False
    state[key] = {'run': run, 'until': now + expiry}
    return True


def renew(state, keys, run, now, expiry):
    """The slots of ``keys`` that ``run`` holds last ``expiry`` more seconds; a slot that expired is taken again only
    if there is room (it is then counted again)."""
    live(state, now)
    for key in keys:
        if key in state and state[key]['run'] == run:
            state[key]['until'] = now + expiry


def give_back(state, key, run):
    """``key``'s slot given back (only by the run that holds it)."""
    if key in state and state[key]['run'] == run:
        del state[key]


def budget_count(budget, total):
    """The node count of ``budget`` (fleet_model checked it): ``{count: N}`` as is, ``{percent: P}`` of the fleet's
    ``total`` selected nodes, rounded down, at least 1."""
    if budget.get('count') is not None:
        return budget['count']
    return max(1, int(total * budget['percent'] // 100))


def node_option(fleet, plans):
    """node_update's ``fleet_budget`` for every cluster's run (its ``cluster`` set per run), or None without a budget.

    ``fleet``: fleet_model.Fleet.as_dict(); ``plans``: rollout_plan results of every ``[cluster, cr name]`` (the
    percent is of the fleet's selected nodes: per cluster, the most any of its CRs selects).
    """
    if not fleet.get('budget'):
        return None
    selected = {}
    for plan in plans:
        cluster = plan['item'][0]
        selected[cluster] = max(selected.get(cluster, 0), int((plan.get('summary') or {}).get('matched') or 0))
    coordination = fleet['coordination']
    connection = coordination if isinstance(coordination, dict) else fleet['clusters'][coordination]
    option = {'fleet': fleet['name'], 'count': budget_count(fleet['budget'], sum(selected.values())),
              'namespace': fleet['budget_namespace']}
    option.update((k, v) for k, v in connection.items() if v)
    return option
