# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""The NodeWright operator's Prometheus series for a CR, as the Prometheus text exposition (format 0.0.4). No I/O.

A platform team's dashboards and alerts read the operator's gauges; a rollout the collection runs writes the same
gauges (the module rollout_metrics pushes them to a Pushgateway, docs/metrics.md), computed from the same data the
operator computes them from: the CR's status as ``status_rollup.wanted_status`` derives it from the nodes (``status``,
``nodeStatus``, ``nodeState``, ``compartmentStatuses``), the CR's packages and its DeploymentPolicy.

What the operator exports, read in NVIDIA/nodewright (written here anew, nothing copied):

* v0.15 (``api_generation.SKYHOOK``), ``operator/internal/controller/metrics.go`` @71ca22b8: fourteen gauges
  ``skyhook_*`` with the CR's name as ``skyhook_name``. ``cluster_state_v2.go`` @71ca22b8 ``ReportState`` sets them on
  every reconcile of a CR (``setAllMetrics``): first every series of the CR to 0 (``ResetSkyhookMetricsToZero``:
  ``skyhook_status`` and ``skyhook_node_status_count`` for the eight statuses, ``package_state_count`` for the five
  states and ``package_stage_count`` for the seven stages of each package of the spec, the rollout gauges of each
  compartment), then ``skyhook_status`` 1 for the CR's status, ``node_target_count`` the CR's node count,
  ``node_status_count`` per status the nodes whose ``status_<cr>`` says it (missing: unknown), the package counts
  from each node's ``nodeState_<cr>`` entry ``<name>|<version>`` of a spec package, ``package_restarts_count`` the sum
  of those entries' restarts (only for a package some node has an entry of, never reset to 0), and the eight rollout
  gauges of each compartment from ``status.compartmentStatuses`` (the batch gauges 0 without a batchState), labelled
  with the policy's name (``legacy`` without one: the interruptionBudget's ``__default__`` compartment, a fixed
  strategy) and the compartment's strategy type (``wrapper.GetStrategyType``: fixed, linear, exponential, unknown).
  ``skyhook_controller.go`` @71ca22b8 deletes every series of a deleted CR (``zeroOutSkyhookMetrics``) and of a
  package removed from its spec (``zeroOutSkyhookPackageMetrics``).
* v0.18-v0.20 (``api_generation.NODEWRIGHT``), ``metrics.go`` @f85e3ee8 (and ``metrics_test.go`` there): each gauge is
  a ``dualGaugeVec``, published as ``nodewright_<name>`` keyed by ``nodewright_name`` and as its legacy twin
  ``skyhook_<name>`` keyed by ``skyhook_name``, same value and remaining labels, the twin's help text marked
  DEPRECATED; ``PUBLISH_LEGACY_METRICS=false`` unregisters the twins (``DisableLegacyMetrics``). The v0.20 release notes
  (``operator/RELEASE_NOTES.md`` @1ae01466) keep the twins through v0.20.x (removed in v0.21.0). That file has
  thirteen gauges: ``package_restarts_count`` was retired (NVIDIA/nodewright#656, issue #428: under Jobs with
  ``restartPolicy: Never`` it only ever read 0), so this generation leaves it out; the same setters and resets as
  v0.15 otherwise.

Where this differs from the operator (docs/metrics.md): ``package_state_count`` and ``package_stage_count`` are the
number of nodes per state and per stage, as their help texts say; the operator sets both from its (state, stage)
pairs one pair at a time, so where the nodes of one package are in one state but several stages (or the reverse) its
value is the count of whichever pair Go's map order set last. They agree whenever each state has one stage, as at
the end of a rollout.

``exposition(cr_name, gauges, gen, legacy)`` renders; ``operator_gauges(cr, status, policy)`` are the operator's;
``node_gauge`` is the hook for per-node series of this collection (a gauge with a ``node`` label beside the CR's
name label, twinned like the others), passed in ``gauges`` with the operator's.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math

from ansible_collections.nodewright.bridge.plugins.module_utils.contract import node_annotations
from ansible_collections.nodewright.bridge.plugins.module_utils.model.cr_model import DEFAULT_COMPARTMENT
from ansible_collections.nodewright.bridge.plugins.module_utils.model.stages import STAGES

CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8'
# The policy name of a CR without a DeploymentPolicy (metrics.go LegacyPolicyName).
LEGACY_POLICY = 'legacy'
# The release the v0.20 operator's legacy help texts name (RELEASE_NOTES.md @1ae01466: the window ends in v0.21.0).
LEGACY_REMOVAL_RELEASE = 'v0.21.0'
STRATEGY_UNKNOWN = 'unknown'

# Per API generation (api_generation.Generation.name): the metric prefix, the CR's name label, the kind the help
# texts name, whether it has package_restarts_count, and the legacy twin (prefix, label) it may publish.
_NAMING = {
    'skyhook': {'prefix': 'skyhook_', 'label': 'skyhook_name', 'kind': 'Skyhook', 'restarts': True, 'twin': None},
    'nodewright': {'prefix': 'nodewright_', 'label': 'nodewright_name', 'kind': 'NodeWright', 'restarts': False,
                   'twin': ('skyhook_', 'skyhook_name')},
}

_COMPARTMENT_LABELS = ('policy_name', 'compartment_name', 'strategy')
_PACKAGE_LABELS = ('package_name', 'package_version')
# The operator's gauges in its registration order: (name after the prefix, help text ({kind}: Skyhook or
# NodeWright), the labels after the CR's name).
GAUGES = (
    ('status', 'Binary metric indicating the status of the {kind} Custom Resource (1 if in that status, 0 otherwise)',
     ('status',)),
    ('node_status_count', 'Number of nodes in the cluster by status for the {kind} Custom Resource', ('status',)),
    ('node_target_count', 'Total number of nodes targeted by this {kind} Custom Resource', ()),
    ('package_state_count', 'Number of nodes in the cluster by state for this package', _PACKAGE_LABELS + ('state',)),
    ('package_stage_count', 'Number of nodes in the cluster by stage for this package', _PACKAGE_LABELS + ('stage',)),
    ('package_restarts_count', 'Number of restarts for this package on this node', _PACKAGE_LABELS),
    ('rollout_matched_nodes', "Number of nodes matched by this compartment's selector", _COMPARTMENT_LABELS),
    ('rollout_ceiling', 'Maximum number of nodes that can be in progress at once in this compartment',
     _COMPARTMENT_LABELS),
    ('rollout_in_progress', 'Number of nodes currently in progress in this compartment', _COMPARTMENT_LABELS),
    ('rollout_completed', 'Number of nodes completed in this compartment', _COMPARTMENT_LABELS),
    ('rollout_progress_percent', 'Percentage of nodes completed in this compartment (0-100)', _COMPARTMENT_LABELS),
    ('rollout_current_batch', 'Current batch number in the rollout strategy (0 if no batch processing)',
     _COMPARTMENT_LABELS),
    ('rollout_consecutive_failures', 'Number of consecutive batch failures in this compartment', _COMPARTMENT_LABELS),
    ('rollout_should_stop',
     'Binary metric indicating if rollout should be stopped due to failures (1 = stopped, 0 = continuing)',
     _COMPARTMENT_LABELS),
)
_HELP = dict((name, text) for name, text, dummy in GAUGES)
_LABELS = dict((name, labels) for name, dummy, labels in GAUGES)
# compartmentStatuses field -> gauge; then the batchState's
_COMPARTMENT_FIELDS = (('matched', 'rollout_matched_nodes'), ('ceiling', 'rollout_ceiling'),
                       ('inProgress', 'rollout_in_progress'), ('completed', 'rollout_completed'),
                       ('progressPercent', 'rollout_progress_percent'))
_BATCH_FIELDS = (('currentBatch', 'rollout_current_batch'), ('consecutiveFailures', 'rollout_consecutive_failures'),
                 ('shouldStop', 'rollout_should_stop'))


class Gauge(object):
    """One gauge of a CR, independent of the generation: its name after the prefix (``node_status_count``), its help
    text, the names of its labels after the CR's name label, and its samples ``[(label values, value)]``."""

    def __init__(self, name, help_text, label_names, samples, twin=True):
        self.name = name
        self.help = help_text
        self.label_names = tuple(label_names)
        self.samples = list(samples)
        # published with the legacy twin too (v0.18-v0.20): the operator's gauges; not a series it never had
        self.twin = twin

    def __repr__(self):
        return 'Gauge(%s, %d samples)' % (self.name, len(self.samples))


def naming(gen):
    """The naming of ``gen`` (a Generation or its name): ``{prefix, label, kind, restarts, twin}``."""
    name = getattr(gen, 'name', gen)
    if name not in _NAMING:
        raise ValueError('no operator metrics for the API generation %r (known: %s)' % (name, ', '.join(_NAMING)))
    return _NAMING[name]


# ---------------------------------------------------------------------------- the operator's gauges


def _gauge(name, kind, values):
    """The operator's gauge ``name`` with ``values`` ({label values: value}), its samples sorted."""
    return Gauge(name, _HELP[name].format(kind=kind), _LABELS[name], sorted(values.items()))


def _counts(keys, found):
    """``{(key,): count}`` over ``keys`` (each 0 when not found), then any other key ``found`` has."""
    out = dict(((key,), 0) for key in keys)
    for key in found:
        out[(key,)] = out.get((key,), 0) + 1
    return out


def _package_values(cr, node_states):
    """``(state counts, stage counts, restarts)``: ``{(name, version, state|stage): n}`` (every state and stage of
    every spec package, zeros included) and ``{(name, version): restarts}`` (packages some node has an entry of)."""
    states, stages, restarts = {}, {}, {}
    for package in sorted(cr.packages.values(), key=lambda p: (p.name, p.version)):
        key = (package.name, package.version)
        states.update(((key + (state,)), 0) for state in node_annotations.STATES)
        stages.update(((key + (stage,)), 0) for stage in STAGES)
        for state in node_states:
            entry = (state or {}).get(package.unique_name)
            if not isinstance(entry, dict):
                continue
            # the status omits an empty state and zero restarts (omitempty)
            states[key + (entry.get('state') or '',)] = states.get(key + (entry.get('state') or '',), 0) + 1
            stages[key + (entry.get('stage') or '',)] = stages.get(key + (entry.get('stage') or '',), 0) + 1
            restarts[key] = restarts.get(key, 0) + int(entry.get('restarts') or 0)
    return states, stages, restarts


def compartment_strategy(policy, compartment):
    """The ``strategy`` label of ``compartment`` (wrapper.GetStrategyType): its strategy's type under ``policy`` (a
    cr_model DeploymentPolicy; None: the interruptionBudget's fixed ``__default__``), ``unknown`` without one."""
    if policy is None:
        return 'fixed'
    if compartment == DEFAULT_COMPARTMENT:
        spec = policy.default
    else:
        spec = next((c for c in policy.compartments if c.name == compartment), None)
    strategy = getattr(spec, 'strategy', None)
    return strategy.type if strategy is not None else STRATEGY_UNKNOWN


def _number(value):
    if isinstance(value, bool):
        return 1 if value else 0
    return value if isinstance(value, (int, float)) else 0


def _rollout_values(cr, compartments, policy):
    """``{gauge: {(policy, compartment, strategy): value}}`` from ``compartmentStatuses`` (None: no compartments)."""
    values = dict((gauge, {}) for dummy, gauge in _COMPARTMENT_FIELDS + _BATCH_FIELDS)
    policy_name = cr.deployment_policy or LEGACY_POLICY
    for name, entry in sorted((compartments or {}).items()):
        entry = entry if isinstance(entry, dict) else {}
        key = (policy_name, name, compartment_strategy(policy, name))
        batch = entry.get('batchState') if isinstance(entry.get('batchState'), dict) else {}
        for field, gauge in _COMPARTMENT_FIELDS:
            values[gauge][key] = _number(entry.get(field))
        for field, gauge in _BATCH_FIELDS:
            values[gauge][key] = _number(batch.get(field))
    return values


def operator_gauges(cr, status, policy=None, restarts=True):
    """The operator's gauges of ``cr`` (a cr_model NodeWrightCR) after a reconcile, as ``setAllMetrics`` sets them.

    ``status``: the CR's status as the operator writes it (``status_rollup.wanted_status``'s, or a CR's ``status`` as
    read): ``status``, ``nodeStatus`` (node -> status), ``nodeState`` (node -> its state, omitempty fields left out),
    ``compartmentStatuses`` (None or absent: no compartment, as when the policy is missing). ``policy``: the CR's
    DeploymentPolicy (cr_model), for the compartments' strategy labels. ``restarts``: include
    ``package_restarts_count`` (the generation's ``naming(gen)['restarts']``).
    """
    kind = 'NodeWright' if cr.kind == 'NodeWright' else 'Skyhook'
    node_statuses = status.get('nodeStatus') or {}
    node_states = [(status.get('nodeState') or {})[name] for name in sorted(status.get('nodeState') or {})]
    states, stages, package_restarts = _package_values(cr, node_states)
    current = status.get('status') or node_annotations.STATUSES[-1]
    gauges = [
        _gauge('status', kind, dict(((s,), 1 if s == current else 0) for s in node_annotations.STATUSES + (current,))),
        _gauge('node_status_count', kind, _counts(node_annotations.STATUSES, [node_statuses[n] for n in node_statuses])),
        _gauge('node_target_count', kind, {(): len(node_statuses)}),
        _gauge('package_state_count', kind, states),
        _gauge('package_stage_count', kind, stages),
    ]
    if restarts:
        gauges.append(_gauge('package_restarts_count', kind, package_restarts))
    rollout = _rollout_values(cr, status.get('compartmentStatuses'), policy)
    gauges.extend(_gauge(gauge, kind, rollout[gauge]) for dummy, gauge in _COMPARTMENT_FIELDS + _BATCH_FIELDS)
    return gauges


def node_gauge(name, help_text, per_node, label_names=(), samples=None, twin=True):
    """A per-node gauge of the CR (the hook for this collection's own series, e.g. the seconds a node waited on its
    protected pods): ``name`` after the prefix, labels ``node`` then ``label_names``; ``per_node``: ``{node: value}``
    (``samples``: ``{(node, *label values): value}`` instead, for gauges with more labels). Rendered by ``exposition``
    with the CR's name label and the generation's prefix, twinned like the operator's gauges."""
    values = dict(((node,), value) for node, value in (per_node or {}).items())
    values.update(samples or {})
    return Gauge(name, help_text, ('node',) + tuple(label_names), sorted(values.items()), twin=twin)


# This collection's own series (the design's duration metric, docs/semantics.md 34): the seconds each node of the CR
# has waited for its protected pods, while it waits. Not the operator's: no legacy twin.
PROTECTED_WAIT = 'bridge_protected_wait_seconds'
PROTECTED_WAIT_HELP = ('Seconds a node of the {kind} has waited for its non-interruptible pods before its drain (nodes '
                       'that wait only; nodewright.bridge)')


def protected_wait_gauge(kind, waits):
    """``{node: seconds}`` of the nodes waiting for their protected pods, as this collection's gauge."""
    return node_gauge(PROTECTED_WAIT, PROTECTED_WAIT_HELP.format(kind=kind), waits, twin=False)


# ---------------------------------------------------------------------------- the text exposition


def escape_label_value(value):
    """A label value in the text format: backslash, double quote and line feed escaped."""
    return str(value).replace('\\', '\\\\').replace('"', '\\"').replace('\n', '\\n')


def escape_help(text):
    """A HELP text: backslash and line feed escaped."""
    return str(text).replace('\\', '\\\\').replace('\n', '\\n')


def format_value(value):
    """A sample value as the text format writes it: integers as such, NaN and the infinities by name."""
    if isinstance(value, bool):
        return '1' if value else '0'
    if isinstance(value, int):
        return '%d' % value
    value = float(value)
    if math.isnan(value):
        return 'NaN'
    if math.isinf(value):
        return '+Inf' if value > 0 else '-Inf'
    if value.is_integer() and abs(value) < 1e15:
        return '%d' % value
    return repr(value)


def _family(gauge, prefix, label, cr_name, help_text):
    name = prefix + gauge.name
    lines = ['# HELP %s %s' % (name, escape_help(help_text)), '# TYPE %s gauge' % name]
    names = (label,) + gauge.label_names
    for values, value in gauge.samples:
        pairs = ','.join('%s="%s"' % (n, escape_label_value(v)) for n, v in zip(names, (cr_name,) + tuple(values)))
        lines.append('%s{%s} %s' % (name, pairs, format_value(value)))
    return lines


def legacy_help(help_text, name):
    """The help text of a v0.20 legacy twin (newDualGaugeVec): the current one, its replacement and the removal."""
    return '%s (DEPRECATED: use nodewright_%s with the nodewright_name label; removed in %s)' % (
        help_text, name, LEGACY_REMOVAL_RELEASE)


def exposition(cr_name, gauges, gen, legacy=True):
    """The text exposition (format 0.0.4) of ``gauges`` for the CR ``cr_name`` under ``gen``: each gauge under the
    generation's prefix and name label, then (NODEWRIGHT, ``legacy``) every legacy twin, as the operator registers
    them. A gauge without samples is left out, as a GaugeVec without series is."""
    names = naming(gen)
    lines = []
    for gauge in gauges:
        if gauge.samples:
            lines.extend(_family(gauge, names['prefix'], names['label'], cr_name, gauge.help))
    if names['twin'] is not None and legacy:
        prefix, label = names['twin']
        for gauge in gauges:
            if gauge.samples and gauge.twin:
                lines.extend(_family(gauge, prefix, label, cr_name, legacy_help(gauge.help, gauge.name)))
    return '\n'.join(lines) + '\n' if lines else ''


def series_names(gen, legacy=True, restarts=None):
    """The metric names the operator of ``gen`` exports (with its legacy twins when ``legacy``)."""
    names = naming(gen)
    restarts = names['restarts'] if restarts is None else restarts
    bases = [name for name, dummy, dummy_labels in GAUGES if restarts or name != 'package_restarts_count']
    out = [names['prefix'] + base for base in bases]
    if names['twin'] is not None and legacy:
        out.extend(names['twin'][0] + base for base in bases)
    return out
