# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""Turn play variables and host variables into a rollout scheduler.

Shared by the ``budgeted`` strategy and the ``--limit`` fallback driver (limit_driver.py).
Values arrive already templated; files are read through a callable the caller supplies
(the strategy passes the play's loader, so paths resolve like ``vars_files`` and vaulted
files work). Every problem is collected and raised together as RolloutConfigError, each
prefixed with the variable it came from and the field path inside it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.utils.vars import isidentifier

from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_model
from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_validation
from ansible_collections.nodewright.bridge.plugins.module_utils.model import duration
from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube as kube_api
from ansible_collections.nodewright.bridge.plugins.module_utils.planning import rollout_gates
from ansible_collections.nodewright.bridge.plugins.module_utils.model.constants import NODEWRIGHT_API_VERSION
from ansible_collections.nodewright.bridge.plugins.module_utils.planning.rollout_scheduler import (
    RolloutScheduler, SlidingWindowScheduler, batch_state_errors)

VAR_POLICY = 'nodewright_policy'
VAR_BUDGET = 'nodewright_interruption_budget'
# batch (the barrier between batches) or sliding: how hosts are admitted. Named apart from the maintenance
# windows (nodewright_maintenance_windows); nodewright_window is its deprecated name (removed in 2.0.0).
VAR_ADMISSION = 'nodewright_admission'
VAR_WINDOW = 'nodewright_window'
VAR_ORDER = 'nodewright_order'
VAR_LOCKSTEP = 'nodewright_batch_lockstep'
VAR_PHASES = 'nodewright_phases'
HOSTVAR_COMPARTMENT = 'nodewright_compartment'
HOSTVAR_LABELS = 'nodewright_labels'
# Set by the strategy on every host of a phase when the phase starts (the tasks read it).
HOSTVAR_PHASE = 'nodewright_phase'
VAR_SHARED = 'nodewright_shared_budget'
# a node waiting for its protected pods gives its batch slot back (docs/semantics.md 34); a wait this long is reported
VAR_PARK = 'nodewright_park_protected'
VAR_WAIT_WARNING = 'nodewright_protected_wait_warning'
# set by the strategy on each host of a rollout that parks: where the host's task tells it (slot_mailbox)
HOSTVAR_PARK = 'nodewright_park'
PLAY_VARS = (VAR_POLICY, VAR_BUDGET, VAR_ADMISSION, VAR_WINDOW, VAR_ORDER, VAR_LOCKSTEP, VAR_PHASES,
             VAR_SHARED, VAR_PARK, VAR_WAIT_WARNING) + rollout_gates.PLAY_VARS
# nodewright_shared_budget: where the Lease lives, how long a dead run's slots last, how to reach the API
SHARED_KEYS = ('name', 'namespace', 'slot_expiry')
HOST_VARS = (HOSTVAR_COMPARTMENT, HOSTVAR_LABELS)
ADMISSIONS = ('batch', 'sliding')
# a boolean play variable given as a string (an -e on the command line): these words, as Ansible reads them
TRUE_WORDS = ('1', 'true', 'yes', 'on')
FALSE_WORDS = ('0', 'false', 'no', 'off')
ORDERS = ('inventory', 'name')
# a node_update result's ``held`` that says the CR was paused or disabled during the run: nothing more of the phase
# starts (the operator starts no pod for such a CR); both drivers (play_phases, builtin_rollout) read it
HOLDING = ('paused', 'disabled')


class RolloutConfigError(rollout_gates.GateConfigError):
    """The rollout configuration is unusable; ``errors`` lists every problem (one message format with the gates')."""


def plain(value):
    """A copy of ``value`` made of plain dict/list/str/int/float/bool/None.

    ansible-core 2.19+ hands out tagged subclasses of the builtin types; the scheduler's
    results end up in JSON reports and custom stats, so strip them at the boundary.
    """
    if isinstance(value, dict):
        return dict((plain(k), plain(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    return value


class Settings(object):
    """What the play asked for: a policy or a plain budget, the admission (batch or sliding) and the node order."""

    def __init__(self, policy=None, budget=None, admission='batch', order='inventory', source=None, shared=None,
                 windows=None, gates=None, deprecations=(), lockstep=True, park=True, wait_warning=None):
        self.policy = policy  # cr_model.DeploymentPolicy or None
        self.budget = budget  # {'percent': N} / {'count': N} or None
        self.admission = admission
        # batch admission: a batch's hosts run the play in lockstep (the linear loop; compartments advance in
        # waves), or each host on its own (the free loop; each compartment starts its next batch when its own
        # batch is scored). Sliding admission always runs the free loop.
        self.lockstep = lockstep
        self.deprecations = list(deprecations)  # what the deprecated names the play used say (removed in 2.0.0)
        self.order = order
        self.source = source
        self.shared = shared  # the shared budget's settings (parse_shared), or None: this run's budget only
        self.windows = windows  # module_utils.planning.rollout_gates.WindowSettings (maintenance windows), or None
        self.gates = gates  # module_utils.planning.rollout_gates.GateSettings (checked before each batch), or None
        self.park = park  # whether a node waiting for its protected pods gives its slot back (batches on the free loop)
        self.wait_warning = wait_warning  # seconds of such a wait after which it is reported (never interrupted), or None

    @property
    def independent(self):
        """Batch admission whose compartments advance each on its own (not in waves)."""
        return self.admission == 'batch' and not self.lockstep

    @property
    def free_loop(self):
        """Whether the play runs on the stock free loop (sliding admission, or batches without lockstep)."""
        return self.admission == 'sliding' or not self.lockstep

    @property
    def parks(self):
        """Whether nodes waiting for their protected pods give their slots back: batches on the free loop only (a
        node that joins a batch mid-way cannot run in lockstep; a sliding window is not a batch)."""
        return self.park and self.independent

    @property
    def has_compartments(self):
        return bool(self.policy is not None and self.policy.compartments)

    def compartment_names(self):
        if self.policy is None:
            return [cr_model.DEFAULT_COMPARTMENT]
        return [c.name for c in self.policy.compartments] + [cr_model.DEFAULT_COMPARTMENT]


def _policy_document(docs, source):
    """The DeploymentPolicy in a list of YAML documents (or a bare policy spec)."""
    policies = [d for d in docs if cr_model.is_policy_document(d)]
    if len(policies) == 1:
        return policies[0]
    if len(policies) > 1:
        names = [(d.get('metadata') or {}).get('name') for d in policies]
        raise RolloutConfigError(['%s: %s holds %d DeploymentPolicy documents (%s); keep one per file'
                                  % (VAR_POLICY, source, len(policies), ', '.join(str(n) for n in names))])
    if len(docs) == 1 and 'kind' not in docs[0] and 'apiVersion' not in docs[0]:
        return docs[0]
    raise RolloutConfigError(['%s: %s holds no DeploymentPolicy document' % (VAR_POLICY, source)])


def load_policy(value, read_file=None):
    """A DeploymentPolicy from a spec dict, a full document, or a file path (via ``read_file``)."""
    source = 'the policy'
    if isinstance(value, str):
        if read_file is None:
            raise RolloutConfigError(['%s: a file path was given but no file reader is available' % VAR_POLICY])
        source = value
        try:
            text = read_file(value)
        except Exception as exc:  # the loader raises several error types; all mean "cannot read it"
            raise RolloutConfigError(['%s: cannot read %s: %s' % (VAR_POLICY, value, exc)])
        try:
            docs = cr_model.load_yaml_documents(text, source=value)
        except cr_model.CRValidationError as exc:
            raise RolloutConfigError(['%s: %s: %s' % (VAR_POLICY, value, err) for err in exc.errors])
        value = _policy_document(docs, value)
    elif not isinstance(value, dict):
        raise RolloutConfigError(['%s: must be a DeploymentPolicy (a dict, a full document, or a file path), got %s'
                                  % (VAR_POLICY, type(value).__name__)])
    value = plain(value)
    try:
        return cr_validation.build_policy(value), source
    except cr_model.CRValidationError as exc:
        prefix = VAR_POLICY if source == 'the policy' else '%s (%s)' % (VAR_POLICY, source)
        raise RolloutConfigError(['%s: %s' % (prefix, err) for err in exc.errors])


def budget_errors(budget):
    """Problems of a plain interruption budget, checked like a CR's ``spec.interruptionBudget``."""
    if not isinstance(budget, dict):
        return ['%s: must be a dict with percent or count, got %s' % (VAR_BUDGET, type(budget).__name__)]
    budget = plain(budget)
    if budget.get('percent') is None and budget.get('count') is None:
        return ['%s: exactly one of percent or count must be set' % VAR_BUDGET]
    try:
        cr_validation.build_cr(budget_cr(budget))
    except cr_model.CRValidationError as exc:
        return [err.replace('spec.interruptionBudget', VAR_BUDGET) for err in exc.errors]
    return []


def budget_cr(budget):
    """A minimal CR carrying ``budget`` as its interruptionBudget (the operator's legacy mode)."""
    return {'apiVersion': NODEWRIGHT_API_VERSION, 'kind': 'NodeWright',
            'metadata': {'name': 'ansible-play'}, 'spec': {'interruptionBudget': dict(budget)}}


def parse_shared(value, errors):
    """``nodewright_shared_budget``: None / false (off), true (the defaults) or a mapping; the settings or None."""
    value = plain(value)
    if value is None or value is False:
        return None
    if value is True:
        value = {}
    if not isinstance(value, dict):
        errors.append('%s: must be true, false or a mapping (%s and the connection options), got %s'
                      % (VAR_SHARED, ', '.join(SHARED_KEYS), type(value).__name__))
        return None
    auth = tuple(kube_api.AUTH_ARG_SPEC)
    unknown = sorted(k for k in value if k not in SHARED_KEYS + auth + ('enabled',))
    if unknown:
        errors.append('%s: unknown keys %s (known: %s and the connection options %s)'
                      % (VAR_SHARED, ', '.join(unknown), ', '.join(SHARED_KEYS), ', '.join(auth)))
    value = dict((k, v) for k, v in value.items() if v not in (None, '', 'None'))  # unset in a templated mapping
    enabled = value.get('enabled', True)
    if isinstance(enabled, str):
        enabled = enabled.lower() in TRUE_WORDS
    if not enabled:
        return None
    expiry = value.get('slot_expiry', 120)
    if isinstance(expiry, str) and expiry.isdigit():
        expiry = value['slot_expiry'] = int(expiry)
    if isinstance(expiry, bool) or not isinstance(expiry, int) or expiry < 10:
        errors.append('%s.slot_expiry: must be an integer of at least 10 (seconds), got %r' % (VAR_SHARED, expiry))
    for key in ('name', 'namespace'):
        if value.get(key) is not None and (not isinstance(value[key], str) or not value[key]):
            errors.append('%s.%s: must be a non-empty string, got %r' % (VAR_SHARED, key, value[key]))
    shared = dict((k, v) for k, v in value.items() if k != 'enabled' and v is not None)
    # no namespace: the operator's of the cluster's API generation, known once the strategy has a client
    shared.setdefault('slot_expiry', 120)
    return shared


def parse_settings(play_vars, read_file=None, play_level=None):
    """Settings from the (templated) play variables; RolloutConfigError lists every problem.

    ``play_level``: the play's variables when ``play_vars`` are a phase's (windows and gates are the play's).
    """
    if play_level is not None:
        play_vars = dict(play_vars, **dict((k, play_level.get(k)) for k in rollout_gates.PLAY_VARS))
    errors = []
    shared = parse_shared(play_vars.get(VAR_SHARED), errors)
    windows = gates = None
    try:
        windows, gates = rollout_gates.parse_play_vars(dict((k, plain(play_vars.get(k))) for k in rollout_gates.PLAY_VARS))
    except rollout_gates.GateConfigError as exc:
        errors.extend(exc.errors)
    policy_value, budget_value = play_vars.get(VAR_POLICY), play_vars.get(VAR_BUDGET)
    admission, admission_var, deprecations = _admission(play_vars, errors)
    order = plain(play_vars.get(VAR_ORDER)) or 'inventory'
    lockstep = _lockstep(play_vars.get(VAR_LOCKSTEP), errors)
    park = _boolean(play_vars.get(VAR_PARK), VAR_PARK, True, errors)
    wait_warning = _duration(play_vars.get(VAR_WAIT_WARNING), VAR_WAIT_WARNING, errors)
    if admission not in ADMISSIONS:
        errors.append('%s: must be one of %s, got %r' % (admission_var, ', '.join(ADMISSIONS), admission))
    if order not in ORDERS:
        errors.append('%s: must be one of %s, got %r' % (VAR_ORDER, ', '.join(ORDERS), order))
    policy = budget = source = None
    if policy_value is not None and budget_value is not None:
        errors.append('%s and %s are mutually exclusive (as deploymentPolicy and interruptionBudget are in a CR)'
                      % (VAR_POLICY, VAR_BUDGET))
    elif policy_value is not None:
        try:
            policy, source = load_policy(policy_value, read_file)
        except RolloutConfigError as exc:
            errors.extend(exc.errors)
    elif budget_value is not None:
        problems = budget_errors(budget_value)
        errors.extend(problems)
        if not problems:
            budget = plain(budget_value)
            budget = dict((k, v) for k, v in budget.items() if v is not None)
    else:
        errors.append('set %s (a DeploymentPolicy) or %s ({percent: N} or {count: N}) as a play or extra var'
                      % (VAR_POLICY, VAR_BUDGET))
    if errors:
        raise RolloutConfigError(errors)
    return Settings(policy=policy, budget=budget, admission=admission, order=order, source=source, shared=shared,
                    windows=windows, gates=gates, deprecations=deprecations, lockstep=lockstep, park=park,
                    wait_warning=wait_warning)


def _lockstep(value, errors):
    """nodewright_batch_lockstep as a bool (default true); a problem appended to ``errors``."""
    return _boolean(value, VAR_LOCKSTEP, True, errors)


def _boolean(value, name, default, errors):
    """A boolean play variable (``default`` when unset); a problem appended to ``errors``."""
    value = plain(value)
    if value is None or value == '':
        return default
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in TRUE_WORDS + FALSE_WORDS:
        return value.lower() in TRUE_WORDS
    errors.append('%s: must be a boolean, got %r' % (name, value))
    return default


def _duration(value, name, errors):
    """Seconds from a duration play variable: a number of seconds or a Go duration (``90s``, ``30m``, ``1h30m``);
    None when unset; a problem appended to ``errors``."""
    value = plain(value)
    if value is None or value == '':
        return None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if value < 0:
            errors.append('%s: must not be negative, got %r' % (name, value))
            return None
        return float(value)
    if isinstance(value, str):
        try:
            seconds = duration.parse_go_duration(value.strip()) / float(duration.SECOND)
        except ValueError as exc:
            errors.append('%s: %r is not a duration (a number of seconds, or 90s, 30m, 1h30m): %s' % (name, value, exc))
            return None
        if seconds < 0:
            errors.append('%s: must not be negative, got %r' % (name, value))
            return None
        return seconds
    errors.append('%s: must be a duration (a number of seconds, or 90s, 30m, 1h30m), got %r' % (name, value))
    return None


def _admission(play_vars, errors):
    """``(value, the variable it came from, deprecations)``: nodewright_admission, or its deprecated name."""
    value, old = plain(play_vars.get(VAR_ADMISSION)), plain(play_vars.get(VAR_WINDOW))
    if old is None:
        return value or 'batch', VAR_ADMISSION, []
    if value is not None and value != old:
        errors.append('%s is the deprecated name of %s; they disagree (%r, %r): set only %s'
                      % (VAR_WINDOW, VAR_ADMISSION, old, value, VAR_ADMISSION))
    return value or old, VAR_WINDOW if value is None else VAR_ADMISSION, [
        '%s is deprecated: use %s (the same values, batch or sliding), named apart from the maintenance windows'
        % (VAR_WINDOW, VAR_ADMISSION)]


class Phase(object):
    """One rollout of a play: its settings and hosts. A play without nodewright_phases is one phase of every host.

    ``hosts``: names (None: every host of the play); ``compartments``: name -> compartment or None (the
    ``nodewright_compartment`` hostvar / labels then decide); ``after_all``: phases every host of which
    must have succeeded before this one starts.
    """

    def __init__(self, name, settings, hosts=None, compartments=None, after_all=(), budget_key=None, selector=None,
                 batch_state=None, cr_status=False, host_vars=None, protected=None):
        self.name = name
        # {selector: the CR's podNonInterruptLabels, nodes: the hosts whose drain would wait for such a pod}, or None
        self.protected = protected
        # variables set on each host of the phase when it starts (as nodewright_phase): values the play's tasks would
        # otherwise template from another host's variables for every host and task
        self.host_vars = host_vars or {}
        # compartment -> the BatchProcessingState of the CR's status this rollout continues (rollout_plan's
        # batch_state); cr_status: the phase is a CR in the cluster, whose status gets the batch state
        self.batch_state = batch_state or {}
        self.cr_status = cr_status
        self.selector = selector  # the CR's node selection (the NotReady gate counts in it), or None: the hosts
        self.budget_key = budget_key  # what the phase rolls out (a CR's version): the shared budget's fingerprint
        self.settings = settings
        self.hosts = hosts
        self.compartments = compartments or {}
        self.after_all = list(after_all)


def parse_phases(play_vars, read_file=None):
    """The play's phases, in run order; RolloutConfigError lists every problem of every phase.

    ``nodewright_phases`` runs several rollouts one after the other in one play (the apply playbook
    runs each CR as a phase): a list of ``{name, policy | interruption_budget, hosts, after_all}``,
    where ``hosts`` is a list of host names or a mapping of host name to compartment.
    """
    value = play_vars.get(VAR_PHASES)
    if value is None:
        settings = parse_settings(play_vars, read_file)
        if settings.shared is not None and not settings.shared.get('name'):
            # a phase's budget is named after the phase (a CR); a play alone has no such name
            raise RolloutConfigError(['%s.name: required in a play without %s (every run with this name shares the budget)'
                                      % (VAR_SHARED, VAR_PHASES)])
        return [Phase(None, settings)]
    errors = []
    if play_vars.get(VAR_POLICY) is not None or play_vars.get(VAR_BUDGET) is not None:
        errors.append('%s replaces %s and %s; set them per phase' % (VAR_PHASES, VAR_POLICY, VAR_BUDGET))
    if not isinstance(value, list) or not value:
        raise RolloutConfigError(errors + ['%s: must be a non-empty list of phases, got %r' % (VAR_PHASES, value)])
    phases, seen = [], set()
    for index, entry in enumerate(value):
        phase = _parse_phase(index, entry, seen, play_vars, read_file, errors)
        if phase is not None:
            phases.append(phase)
    if errors:
        raise RolloutConfigError(errors)
    return phases


def excluded_hosts(phase, names, prior_excluded, phase_failed, failed, unreachable=lambda name: False):
    """name -> why, for the hosts ``names`` of ``phase`` that do not take part in it (whichever driver runs the phases).

    ``prior_excluded``: name -> why, hosts out before the play; ``phase_failed``: phase name -> whether any of its
    hosts failed or never ran; ``failed(name)`` / ``unreachable(name)``: the host failed (or was unreachable) in an
    earlier phase. A phase after an "all" CR that failed anywhere waits; a host that failed an earlier phase is out.
    """
    blocked = [a for a in phase.after_all if phase_failed.get(a)]
    excluded = {}
    for name in names:
        if name in prior_excluded:
            excluded[name] = prior_excluded[name]
        elif blocked:
            excluded[name] = 'waits until %s succeeded on every host' % ', '.join(blocked)
        elif unreachable(name):
            excluded[name] = 'unreachable in an earlier phase'
        elif failed(name):
            excluded[name] = 'failed in an earlier phase'
    return excluded


def prepare_phases(phases, play_hosts, inputs_of, name_of=lambda host: host):
    """``[(Phase, hosts, inputs)]``: each phase's hosts (``play_hosts`` in play order, those it names), and their
    ``inputs_of(phase, hosts)`` (``[(name, compartment, labels)]``), every phase's scheduler built once to check it
    (whichever driver runs the phases). ``name_of(host)``: a host's name. RolloutConfigError lists every problem."""
    known = set(name_of(h) for h in play_hosts)
    prepared, errors = [], []
    for phase in phases:
        where = '' if phase.name is None else '%s %s: ' % (VAR_PHASES, phase.name)
        hosts = list(play_hosts)
        if phase.hosts is not None:
            wanted = set(phase.hosts)
            errors.extend('%shost %s is not a host of the play' % (where, n) for n in phase.hosts if n not in known)
            hosts = [h for h in play_hosts if name_of(h) in wanted]
        inputs = inputs_of(phase, hosts)
        try:
            nodes, pinned = node_inputs(phase.settings, inputs)
            build_scheduler(phase.settings, nodes, pinned)
        except RolloutConfigError as exc:
            errors.extend(where + err for err in exc.errors)
        prepared.append((phase, hosts, inputs))
    if errors:
        raise RolloutConfigError(errors)
    return prepared


def _parse_phase(index, entry, seen, play_vars, read_file, errors):
    """Phase ``index`` of ``nodewright_phases`` (its name added to ``seen``), or None; its problems appended to ``errors``."""
    where = '%s[%d]' % (VAR_PHASES, index)
    if not isinstance(entry, dict):
        errors.append('%s: must be a mapping, got %s' % (where, type(entry).__name__))
        return None
    entry = plain(entry)
    name = entry.get('name')
    if not isinstance(name, str) or not name:
        errors.append('%s.name: must be a non-empty string' % where)
        return None
    where = '%s[%d] (%s)' % (VAR_PHASES, index, name)
    if name in seen:
        errors.append('%s: the name is used twice' % where)
    unknown = sorted(set(entry) - set(('name', 'policy', 'interruption_budget', 'hosts', 'after_all', 'budget_key',
                                      'selector', 'batch_state', 'cr_status', 'host_vars', 'protected')))
    if unknown:
        errors.append('%s: unknown keys %s' % (where, ', '.join(unknown)))
    hosts = entry.get('hosts')
    compartments = {}
    if isinstance(hosts, dict):
        compartments = dict((k, v) for k, v in hosts.items() if v is not None)
        hosts = list(hosts)
    if not isinstance(hosts, list) or not all(isinstance(h, str) for h in hosts):
        errors.append('%s.hosts: must be a list of host names or a mapping of host name to compartment' % where)
        hosts = []
    after_all = entry.get('after_all') or []
    if not isinstance(after_all, list) or any(a not in seen for a in after_all):
        errors.append('%s.after_all: must list earlier phases (got %r)' % (where, after_all))
        after_all = []
    seen.add(name)
    batch_state = entry.get('batch_state') or {}
    if not isinstance(batch_state, dict):
        errors.append('%s.batch_state: must be a mapping of compartment names to batch states' % where)
        batch_state = {}
    for comp, state in sorted(batch_state.items()):
        errors.extend(batch_state_errors(state, '%s.batch_state.%s' % (where, comp)))
    host_vars = entry.get('host_vars') or {}
    if not isinstance(host_vars, dict) or not all(isidentifier(str(k)) for k in host_vars):
        errors.append('%s.host_vars: must be a mapping of variable names to values, got %r' % (where, host_vars))
        host_vars = {}
    try:
        settings = parse_settings({VAR_POLICY: entry.get('policy'), VAR_BUDGET: entry.get('interruption_budget'),
                                   VAR_ADMISSION: play_vars.get(VAR_ADMISSION), VAR_WINDOW: play_vars.get(VAR_WINDOW),
                                   VAR_ORDER: play_vars.get(VAR_ORDER), VAR_LOCKSTEP: play_vars.get(VAR_LOCKSTEP),
                                   VAR_SHARED: play_vars.get(VAR_SHARED), VAR_PARK: play_vars.get(VAR_PARK),
                                   VAR_WAIT_WARNING: play_vars.get(VAR_WAIT_WARNING)},
                                  read_file, play_vars)
    except RolloutConfigError as exc:
        errors.extend('%s: %s' % (where, err) for err in exc.errors)
        return None
    protected = entry.get('protected')
    if protected is not None and (not isinstance(protected, dict) or not isinstance(protected.get('nodes', []), list)):
        errors.append('%s.protected: must be a mapping with selector and nodes, got %r' % (where, protected))
        protected = None
    return Phase(name, settings, hosts, compartments, after_all, entry.get('budget_key'), entry.get('selector'),
                 batch_state, bool(entry.get('cr_status')), host_vars, protected)


def _labels(host, value, errors):
    if value is None:
        return {}
    if not isinstance(value, dict):
        errors.append('%s of %s: must be a mapping of label keys to values, got %s'
                      % (HOSTVAR_LABELS, host, type(value).__name__))
        return {}
    labels = {}
    for key, val in plain(value).items():
        if isinstance(val, bool):
            val = 'true' if val else 'false'
        elif isinstance(val, (int, float)):
            val = str(val)
        if not isinstance(key, str) or not isinstance(val, str):
            errors.append('%s of %s: %r: label keys and values must be strings' % (HOSTVAR_LABELS, host, key))
            continue
        labels[key] = val
    return labels


def node_inputs(settings, hosts):
    """``(nodes, compartment_of)`` for the scheduler from ``[(name, compartment, labels)]``.

    ``compartment`` (the ``nodewright_compartment`` hostvar) pins a host; otherwise its
    ``nodewright_labels`` are matched against the policy's selectors.
    """
    errors = []
    known = settings.compartment_names()
    nodes, pinned = [], {}
    for name, compartment, labels in hosts:
        nodes.append((name, _labels(name, labels, errors)))
        if compartment is None:
            continue
        compartment = plain(compartment)
        if not isinstance(compartment, str) or compartment not in known:
            errors.append('%s of %s: %r is not a compartment of the policy (known: %s)'
                          % (HOSTVAR_COMPARTMENT, name, compartment, ', '.join(known)))
            continue
        pinned[name] = compartment
    if errors:
        raise RolloutConfigError(errors)
    return nodes, pinned


def build_scheduler(settings, nodes, compartment_of=None, batch_states=None, cr_name=None):
    """The scheduler for ``nodes`` (``[(name, labels)]``): SlidingWindowScheduler or RolloutScheduler.

    ``batch_states``: compartment -> the BatchProcessingState the rollout continues (``cr_name`` is the CR's).
    """
    kwargs = {'order': settings.order, 'batch_states': batch_states, 'cr_name': cr_name}
    if settings.policy is not None:
        kwargs['policy'] = settings.policy
        kwargs['compartment_of'] = compartment_of or {}
    else:
        kwargs['legacy_cr'] = cr_validation.build_cr(budget_cr(settings.budget))
    try:
        scheduler = RolloutScheduler.build(nodes, **kwargs)
    except ValueError as exc:
        raise RolloutConfigError([str(exc)])
    if settings.admission == 'sliding':
        return SlidingWindowScheduler(scheduler)
    return scheduler


def compartment_summaries(scheduler):
    """name / matched / ceiling / strategy / budget of every compartment, for the progress store."""
    out = []
    for rollout in scheduler.rollouts:
        out.append({'name': rollout.name, 'matched': len(rollout.nodes), 'ceiling': rollout.ceiling,
                    'strategy': rollout.strategy.to_dict() if rollout.strategy else None,
                    'budget': dict(rollout.budget)})
    return out
