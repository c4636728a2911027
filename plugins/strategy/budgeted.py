# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
name: budgeted
short_description: Run a play in NodeWright budgeted batches that react to failures
version_added: 0.1.0
description:
  - Runs the play over its hosts in batches chosen by the NodeWright rollout scheduler, the same
    rules the operator applies to nodes (see the collection's C(docs/strategy.md)). Each batch runs
    the whole play (tasks and handlers) like a C(serial) batch; when it finishes, the batch is
    scored and the scheduler picks the next one from the outcome, so batches grow, shrink, or
    stop the rollout as the policy says.
  - >-
    Configure it with play or extra vars. C(nodewright_policy) is a DeploymentPolicy (its spec as
    a dict, a full document, or the path of a YAML/JSON file, resolved like C(vars_files)).
    C(nodewright_interruption_budget) is a plain budget, C({percent: N}) or C({count: N}), run as
    the operator runs a CR's C(interruptionBudget) (one fixed batch size). Set exactly one.
  - Each host's compartment comes from its C(nodewright_compartment) hostvar, or else from its
    C(nodewright_labels) hostvar (a dict of node labels) matched against the policy's selectors.
    Hosts matching no selector go to the policy's default compartment.
  - C(nodewright_window=sliding) replaces the batch barrier with a sliding window; see the notes.
    C(nodewright_order=name) orders each compartment's hosts by name instead of the play's host order.
  - An invalid configuration fails the play before any host runs, listing every problem with its
    field path. C(serial) on the same play is an error; C(max_fail_percentage) is ignored with a
    warning (the policy's thresholds decide).
  - A stopped rollout fails the play. Hosts never admitted are reported (warning, the recap counts them
    as skipped, custom stat C(nodewright_rollout)) and marked failed so later plays skip them.
  - >-
    C(nodewright_shared_budget) (C(true) or a mapping with C(name), C(namespace), C(slot_expiry) and the
    cluster modules' connection options) shares the budget with every other run of the same name. One
    C(coordination.k8s.io) Lease per compartment holds the fleet's batch and the nodes in flight, so any
    number of runs and AWX slices together keep to the policy (the collection's C(docs/shared-budget.md)).
  - >-
    C(nodewright_maintenance_windows) (with C(nodewright_maintenance_action) and
    C(nodewright_maintenance_timeout)) lets a batch start only inside a window; C(nodewright_gates) checks
    NotReady nodes and firing Prometheus alerts before each batch (C(docs/windows-and-gates.md)). A window
    that does not open in time defers the rest of the phase (a clean stop); a gate blocked past its
    timeout stops the rollout.
author:
  - nodewright.bridge contributors (@nodewright)
requirements:
  - kubernetes >= 29.0.0 (Python client), for its cluster calls (C(nodewright_shared_budget), C(nodewright_gates))
notes:
  - >-
    Select it per play with C(strategy: nodewright.bridge.budgeted) (the FQCN is required).
  - ansible-core 2.19 and later print a deprecation warning for every strategy plugin outside
    C(ansible.builtin). The plugin is a thin admission gate over the stock C(linear) and C(free)
    loops; C(docs/strategy.md) explains the fallback (the same scheduler driving C(--limit) runs).
  - Batch mode runs on the C(linear) loop. When several compartments have work, their current
    batches run together as one wave; each compartment is scored and sized on its own. C(run_once)
    runs once per wave, C(meta) C(end_batch) ends the wave, and a failing C(any_errors_fatal) or
    C(run_once) task ends the rollout after the current wave.
  - Sliding mode runs on the C(free) loop, with its limits (C(run_once) runs on every host,
    C(any_errors_fatal) ends the rollout once the hosts in flight finish). At most the current
    group size (never more than the ceiling) is in flight; every C(size) hosts to finish form a
    group that is scored like a batch.
  - A host is scored failed when it failed (and was not rescued) or was unreachable. Hosts that
    failed or were unreachable in an earlier play are left out of the rollout.
  - Real parallelism is at most C(forks); a warning is printed when a batch is larger.
  - Batch banners are printed on the display. The C(nodewright.bridge.rollout) callback adds
    progress, ETA, a summary table and a JSON report.
  - While a play runs, the strategy keeps one process, the sequence engine, that runs the
    M(nodewright.bridge.node_update) tasks of every host in flight; their workers wait on it, so
    the controller holds one copy of the API client and the sequence's memory instead of one per
    node (C(docs/in-process.md)). Ctrl-C and the end of the play end it. Set
    E(NODEWRIGHT_BRIDGE_ENGINE_ENABLED=0) to run each node_update in its own worker instead.
seealso:
  - name: NodeWright deployment policies
    description: Compartments, budgets and strategies.
    link: https://github.com/NVIDIA/nodewright/blob/main/docs/deployment_policy.md
'''

import gc
import os
import signal
import time

from ansible import context
from ansible.errors import AnsibleError
from ansible.executor.play_iterator import HostState
from ansible.module_utils.common.text.converters import to_text
from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.strategy.free import StrategyModule as FreeStrategyModule
from ansible.plugins.strategy.linear import StrategyModule as LinearStrategyModule
from ansible.template import Templar
from ansible.utils.display import Display

from ansible_collections.nodewright.bridge.plugins.module_utils import kube as kube_api
from ansible_collections.nodewright.bridge.plugins.module_utils import shared_budget as budget_rules
from ansible_collections.nodewright.bridge.plugins.module_utils.rollout_scheduler import halt
from ansible_collections.nodewright.bridge.plugins.module_utils import rollout_gates as gate_rules
from ansible_collections.nodewright.bridge.plugins.plugin_utils import fork_preload
from ansible_collections.nodewright.bridge.plugins.plugin_utils import rollout_config
from ansible_collections.nodewright.bridge.plugins.plugin_utils import rollout_gates
from ansible_collections.nodewright.bridge.plugins.plugin_utils import rollout_state
from ansible_collections.nodewright.bridge.plugins.plugin_utils import shared_budget
from ansible_collections.nodewright.bridge.plugins.plugin_utils import sequence_engine
from ansible_collections.nodewright.bridge.plugins.plugin_utils import status_keeper

display = Display()

CUSTOM_STAT = 'nodewright_rollout'
# Play vars the strategy reads the API connection from (as the apply playbook's module_defaults do);
# nodewright_shared_budget's own connection options come first, K8S_AUTH_* after.
CONNECTION_VARS = ('nodewright_kubeconfig', 'nodewright_context')


def _result_parts(result):
    """``(host name, task, result dict)`` of a task result, on ansible-core 2.16 to 2.21."""
    utr = getattr(result, 'utr', None)
    if utr is not None:  # ansible-core 2.21: a HostTaskResult around the unified task result
        data = utr.as_result_dict()
    else:  # ``_return_data`` from ansible-core 2.19, ``_result`` before
        data = getattr(result, '_return_data', None)
        if data is None:
            data = getattr(result, '_result', None)
    host = getattr(result, 'host', None) or getattr(result, '_host', None)
    task = getattr(result, 'task', None) or getattr(result, '_task', None)
    return host.name, task, data if isinstance(data, dict) else {}


# A node_update result that says the CR was paused or disabled during the run: no new pod started, and
# nothing more of the phase may start (the operator starts no pod for such a CR).
HOLDING = ('paused', 'disabled')


def _node_deleted(data):
    """Whether a task result says its node was deleted (a failure with ``node_deleted``)."""
    return bool(data.get('failed') and data.get('node_deleted'))


def _by_compartment(scheduler, names):
    """compartment -> the hosts of ``names`` in it (the rollout summary counts a slice's hosts that other runs finished)."""
    grouped = {}
    for name in names:
        grouped.setdefault(scheduler.compartment_of(name), []).append(name)
    return grouped


class _Gate(object):
    """Per-play admission state (not the scheduler's rules, which live in module_utils)."""

    def __init__(self, play, phases, hosts, play_hosts, excluded):
        self.play = play
        self.phases = phases  # [(Phase, [Host], inputs)], in run order
        self.phase_index = -1
        self.phase = None
        self.phase_closed = False
        self.settings = phases[0][0].settings  # window and order are the play's, the same for every phase
        self.sliding = self.settings.window == 'sliding'
        self.scheduler = None  # the current phase's
        self.hosts = hosts  # name -> Host, every host of the play
        self.play_hosts = play_hosts  # the restriction to restore at the end
        self.prior_excluded = excluded  # failed or unreachable before the play
        self.excluded = {}  # the current phase's
        self.run_failed = set()  # scored failed, or never admitted, in an earlier phase of this play
        self.phase_failed = {}  # phase name -> whether any of its hosts failed or never ran
        self.ran = set()  # hosts that ran a phase (their iterator state is spent)
        self.any_stopped = False
        self.active = {}  # batch mode: compartment -> [names] of its batch in flight
        self.numbers = {}  # batch mode: compartment -> number of the batch in flight
        self.in_flight = {}  # sliding mode: name -> admission time
        self.admit_times = {}  # sliding mode: name -> admission time, kept after the host finishes
        self.admitted = []  # every admitted name, in order, once (free needs a list that only grows)
        self.last_task = {}  # name -> (task, task_vars) of the last task queued for it
        self.task_started = {}  # name -> when its task in flight was queued (the timeline's task intervals)
        self.removed = set()  # hosts whose node was deleted from the cluster (a result with node_deleted)
        self.fatal_reason = None
        self.ended = None
        self.forks_warned = False
        self.record = None
        self.parked = {}  # host states moved out of the iterator while not in flight
        self.parking = True
        self.budget = None  # the current phase's shared budget (plugin_utils/shared_budget.py), or None
        self.batch_keeper = None  # writes the phase's batch states to its CR's status (a CR in the cluster), or None
        self.released = set()  # hosts whose slot in the shared budget was given back
        self.elsewhere = {}  # the current phase's hosts that other runs of the shared budget finished: name -> outcome
        self.budget_polled = 0.0  # sliding mode: when the budget was last asked without waiting
        self.budget_waiting = set()  # compartments whose wait for the shared budget was announced
        self.connection = {}  # how the strategy reaches the API (shared budget, NotReady gate)
        self.windows = None  # the play's maintenance windows (module_utils.rollout_gates.WindowSettings)
        self.gates = None  # the current phase's BatchGates, or None
        self.deferred = None  # why the rest of the phase waits for the next window (a clean stop, not a failure)
        self.gate_probed = 0.0  # sliding mode: when the windows and gates were last looked at without waiting
        self.gate_blocked = None  # sliding mode: the reason they block, while hosts are in flight
        self.check_mode = False  # --check or a play in check mode: no shared budget, windows and gates only looked at
        self.pid = os.getpid()  # the strategy's process (forked workers inherit its signal handler)

    def label(self, comp):
        """A compartment as banners show it: with its phase when the play has phases."""
        return comp if self.phase is None or self.phase.name is None else '%s/%s' % (self.phase.name, comp)


class _BudgetedMixin(object):
    """The admission gate: ``get_hosts_left`` only ever shows the loop the admitted hosts."""

    _nw = None

    # ------------------------------------------------------------------ entry point

    def run(self, iterator, play_context):
        gate = self._nw_prepare(iterator)
        # What every worker (and the sequence engine) would load for itself after its fork, loaded
        # once here: the kubernetes client classes and the templating plugins (docs/in-process.md).
        fork_preload.before_fork()
        # Every worker is a fork of this process and lives as long as its host's task (a node's
        # whole update). Python's collector walks every object a process holds and so writes to
        # (copies) the pages they are on: freezing what exists now keeps them shared with the
        # workers (the collector of a worker skips them). Measured: the workers' private memory
        # drops to a fraction (docs/benchmarks.md).
        gc.freeze()
        # The play's node_update tasks run in one process, not one each (their workers wait on it).
        engine = None
        if sequence_engine.enabled():
            engine = sequence_engine.start(fork_lock=getattr(display, '_lock', None))
        if gate.sliding:
            # The loop is chosen per play (a play var), after TQM built this instance. free's
            # run() calls super(free.StrategyModule, self), so the instance must really be one.
            self.__class__ = SlidingStrategyModule
            self._host_pinned = False
        self._nw = gate
        result = self._tqm.RUN_OK
        previous_sigterm = signal.signal(signal.SIGTERM, self._nw_on_sigterm)
        if previous_sigterm is None:  # installed outside Python
            previous_sigterm = signal.SIG_DFL
        try:
            self._nw_park(iterator)
            self._nw_start_phase(iterator, 0)
            self._nw_admit_next(iterator)
            if gate.sliding:
                result = FreeStrategyModule.run(self, iterator, play_context)
            else:
                result = LinearStrategyModule.run(self, iterator, play_context)
        finally:
            signal.signal(signal.SIGTERM, previous_sigterm)
            if gate.budget is not None:  # Ctrl-C, an error: the unfinished nodes go back to the budget
                gate.budget.leave()
                gate.budget = None
            if engine is not None:
                engine.stop()
            # always give back what was borrowed, even on errors: PlaybookExecutor's
            # restriction, and every host state (TQM reads the failed hosts from them)
            gate.parking = False
            iterator.host_states.update(gate.parked)
            gate.parked = {}
            self._inventory.restrict_to_hosts(gate.play_hosts)
        return self._nw_finish(iterator, result)

    def _nw_on_sigterm(self, signum, frame):
        """SIGTERM (a stopped job): give this run's unfinished nodes back to the shared budget, then die of it.

        Forked workers inherit the handler; only the strategy's own process has a budget to give back.
        """
        gate = self._nw
        if os.getpid() == getattr(gate, 'pid', None) and gate.budget is not None:
            gate.budget.kube.outage_timeout = min(gate.budget.kube.outage_timeout, 5)  # a job being stopped waits little
            gate.budget.leave()
            gate.budget = None
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)

    def _nw_park(self, iterator):
        """Take the states of every host not in flight out of the iterator until the end of the run.

        The result processing of every ansible-core version copies the iterator's whole
        host-state dict once per pass; with one iterator for the whole rollout that copy
        grows with the inventory instead of the batch (measurable at 1,000 hosts). Only
        hosts in flight need to be there: everything touching other hosts is scoped by the
        inventory restriction.
        """
        states = iterator.host_states
        for name in list(states):
            self._nw.parked[name] = states.pop(name)
        self._nw_compact(iterator)

    def _nw_unpark(self, iterator, names):
        self._nw_pick(names)
        states = iterator.host_states
        for name in names:
            if name in self._nw.parked:
                states[name] = self._nw.parked.pop(name)
        self._nw_compact(iterator)

    @staticmethod
    def _nw_compact(iterator):
        # a dict never shrinks its table on deletion, and copying one with deleted slots
        # walks the whole table: rebuild it so the per-pass copy is O(hosts in flight)
        states = iterator.host_states
        live = dict(states)
        states.clear()
        states.update(live)

    # ------------------------------------------------------------------ configuration

    def _nw_prepare(self, iterator):
        play = iterator._play
        name = play.get_name()
        if play.serial:
            raise AnsibleError('nodewright.bridge.budgeted: play %r sets serial; the rollout policy chooses the batches. '
                               'Remove serial (or use another strategy).' % name)
        if play.max_fail_percentage is not None:
            display.warning('nodewright.bridge.budgeted: max_fail_percentage is ignored in play %r; the policy\'s '
                            'batchThreshold, failureThreshold and safetyLimit decide when the rollout stops.' % name)
            play.max_fail_percentage = None  # TQM's per-run copy of the play; linear reads it
        play_vars = self._variable_manager.get_vars(play=play)
        templar = Templar(loader=self._loader, variables=play_vars)
        values = {}
        for var in rollout_config.PLAY_VARS + CONNECTION_VARS:
            if play_vars.get(var) is not None:
                values[var] = templar.template(play_vars[var])
        try:
            phases = rollout_config.parse_phases(values, read_file=self._nw_read_file)
        except rollout_config.RolloutConfigError as exc:
            raise AnsibleError(self._nw_config_message(name, exc.errors))

        play_hosts = self._inventory.get_hosts(play.hosts, order=play.order)
        by_name = dict((h.name, h) for h in play_hosts)
        excluded = {}
        for host in play_hosts:
            if host.name in self._tqm._unreachable_hosts:
                excluded[host.name] = 'unreachable in an earlier play'
            elif iterator.is_failed(host):
                excluded[host.name] = 'failed in an earlier play'
        prepared, errors = [], []
        for phase in phases:
            where = '' if phase.name is None else '%s %s: ' % (rollout_config.VAR_PHASES, phase.name)
            if phase.hosts is None:
                hosts = list(play_hosts)
            else:
                wanted = set(phase.hosts)
                errors.extend('%shost %s is not a host of the play' % (where, n) for n in phase.hosts if n not in by_name)
                hosts = [h for h in play_hosts if h.name in wanted]
            inputs = self._nw_host_inputs(play, phase, hosts)
            try:
                # every phase is checked now, so that a bad one fails the play before any host runs
                nodes, pinned = rollout_config.node_inputs(phase.settings, inputs)
                rollout_config.build_scheduler(phase.settings, nodes, pinned)
            except rollout_config.RolloutConfigError as exc:
                errors.extend(where + err for err in exc.errors)
            prepared.append((phase, hosts, inputs))
        if errors:
            raise AnsibleError(self._nw_config_message(name, errors))
        gate = _Gate(name, prepared, by_name, play_hosts, excluded)
        gate.connection = dict((key, rollout_config.plain(values[var])) for var, key in zip(CONNECTION_VARS, ('kubeconfig', 'context'))
                               if values.get(var) not in (None, ''))
        windows = prepared[0][0].settings.windows
        gate.windows = windows if windows is not None and windows.enabled else None
        gate.check_mode = bool(context.CLIARGS.get('check')) or play.check_mode is True
        return gate

    def _nw_host_inputs(self, play, phase, hosts):
        """``[(name, compartment, labels)]``: the phase's compartment, else the host's variables."""
        inputs = []
        for host in hosts:
            compartment = labels = None
            if host.name in phase.compartments:
                compartment = phase.compartments[host.name]
            elif phase.settings.has_compartments:
                # only a policy with compartments needs per-host data; skipping get_vars keeps
                # a plain budget as cheap as serial on large inventories
                host_vars = self._variable_manager.get_vars(play=play, host=host, include_hostvars=False)
                host_templar = Templar(loader=self._loader, variables=host_vars)
                if host_vars.get(rollout_config.HOSTVAR_COMPARTMENT) is not None:
                    compartment = host_templar.template(host_vars[rollout_config.HOSTVAR_COMPARTMENT])
                if host_vars.get(rollout_config.HOSTVAR_LABELS) is not None:
                    labels = host_templar.template(host_vars[rollout_config.HOSTVAR_LABELS])
            inputs.append((host.name, compartment, labels))
        return inputs

    def _nw_start_phase(self, iterator, index):
        """Admission state for phase ``index``: its eligible hosts, its scheduler, its progress record."""
        gate = self._nw
        phase, hosts, inputs = gate.phases[index]
        gate.phase_index, gate.phase, gate.phase_closed = index, phase, False
        blocked = [a for a in phase.after_all if gate.phase_failed.get(a)]
        excluded = {}
        for host in hosts:
            if host.name in gate.prior_excluded:
                excluded[host.name] = gate.prior_excluded[host.name]
            elif blocked:
                excluded[host.name] = 'waits until %s succeeded on every host' % ', '.join(blocked)
            elif host.name in self._tqm._unreachable_hosts:
                excluded[host.name] = 'unreachable in an earlier phase'
            elif host.name in gate.run_failed or host.name in self._tqm._failed_hosts:
                excluded[host.name] = 'failed in an earlier phase'
        eligible = [h for h in hosts if h.name not in excluded]
        for host in eligible:
            if host.name in gate.ran:
                # the host ran an earlier phase: it runs the play's tasks again, from the start,
                # roles included (a role runs once per host and play unless it allows duplicates)
                gate.parked[host.name] = HostState(blocks=iterator._blocks)
                self._nw_forget_roles(iterator._play, host.name)
            if phase.name is not None:
                self._variable_manager.set_host_variable(host.name, rollout_config.HOSTVAR_PHASE, phase.name)
        nodes, pinned = rollout_config.node_inputs(phase.settings, [i for i in inputs if i[0] not in excluded])
        gate.scheduler = rollout_config.build_scheduler(phase.settings, nodes, pinned, batch_states=phase.batch_state,
                                                        cr_name=phase.name)
        gate.excluded = excluded
        gate.budget, gate.elsewhere, gate.released, gate.budget_waiting = None, {}, set(), set()
        gate.deferred, gate.gate_blocked = None, None
        gates = phase.settings.gates
        gate.gates = None
        if gates is not None and gates.enabled:
            gate.gates = rollout_gates.BatchGates(gates, kube_factory=self._nw_kube, label_selector=phase.selector,
                                                  names=None if phase.selector else [h.name for h in eligible])
        title = gate.play if phase.name is None else '%s: %s' % (gate.play, phase.name)
        gate.record = rollout_state.start_rollout(title, phase.settings.window,
                                                  rollout_config.compartment_summaries(gate.scheduler), excluded)
        if phase.name is not None:
            display.banner('NODEWRIGHT ROLLOUT %s: %d host%s' % (phase.name, len(eligible), '' if len(eligible) == 1 else 's'),
                           cows=False)
        if excluded:
            display.warning('nodewright.bridge.budgeted: %d host(s) left out of the rollout of %r: %s'
                            % (len(excluded), title, ', '.join('%s (%s)' % item for item in sorted(excluded.items()))))
        gate.ran.update(h.name for h in eligible)
        if phase.settings.shared is not None and gate.check_mode:
            display.display('NODEWRIGHT SHARED BUDGET %s: not taken in check mode (nothing is written)'
                            % (phase.settings.shared.get('name') or phase.name))
        elif phase.settings.shared is not None:
            self._nw_join_budget(phase)
        gate.batch_keeper = None
        if phase.cr_status and not gate.check_mode:
            gate.batch_keeper = status_keeper.BatchStateKeeper(kube_api.connection_params(dict(gate.connection)),
                                                               phase.name)
            self._nw_keep_batch_states()

    @staticmethod
    def _nw_forget_roles(play, host_name):
        for roles in (getattr(play, 'role_cache', None) or {}).values():
            for role in roles if isinstance(roles, list) else [roles]:
                for record in (getattr(role, '_completed', None), getattr(role, '_had_task_run', None)):
                    if isinstance(record, dict):
                        record.pop(host_name, None)

    def _nw_next_phase(self, iterator):
        """End the current phase; start the next one unless the play is ending. True if one started."""
        gate = self._nw
        self._nw_end_phase()
        if gate.fatal_reason or self._nw_ending(iterator) or gate.phase_index + 1 >= len(gate.phases):
            return False
        self._nw_start_phase(iterator, gate.phase_index + 1)
        return True

    def _nw_read_file(self, path):
        real = self._loader.path_dwim(path)
        if hasattr(self._loader, 'get_text_file_contents'):  # 2.19+
            return self._loader.get_text_file_contents(real)
        data, dummy = self._loader._get_file_contents(real)  # 2.16-2.18: vault-aware, bytes
        return to_text(data, errors='surrogate_or_strict')

    @staticmethod
    def _nw_config_message(play, errors):
        return ('nodewright.bridge.budgeted: invalid rollout configuration in play %r (%d problem%s):\n  - %s'
                % (play, len(errors), '' if len(errors) == 1 else 's', '\n  - '.join(errors)))

    # ------------------------------------------------------------------ hooks on the stock loop

    def get_hosts_left(self, iterator):
        gate = self._nw
        if gate is None:
            return super(_BudgetedMixin, self).get_hosts_left(iterator)
        self._nw_advance(iterator)
        unreachable = self._tqm._unreachable_hosts
        if gate.sliding:
            # free indexes this list with a cursor kept across calls: it must never shrink
            return [gate.hosts[n] for n in gate.admitted]
        return [gate.hosts[n] for names in gate.active.values() for n in names if n not in unreachable]

    def _queue_task(self, host, task, task_vars, play_context):
        gate = self._nw
        if gate is not None:
            # only remembered here; whether it was fatal is worked out if the host fails
            gate.last_task[host.name] = (task, task_vars)
            gate.task_started[host.name] = time.time()
        return super(_BudgetedMixin, self)._queue_task(host, task, task_vars, play_context)

    def _process_pending_results(self, iterator, one_pass=False, max_passes=None):
        results = super(_BudgetedMixin, self)._process_pending_results(iterator, one_pass=one_pass, max_passes=max_passes)
        gate = self._nw
        if gate is not None:
            for result in results:
                name, task, data = _result_parts(result)
                if _node_deleted(data):
                    gate.removed.add(name)
                if data.get('held') in HOLDING and gate.deferred is None:
                    self._nw_defer(data.get('msg') or 'the CR was %s' % data['held'], title='HELD',
                                   until='a run after the CR is resumed')
                self._nw_timeline(name, task, data)
            if gate.budget is not None:
                try:
                    gate.budget.renew_if_due()
                except shared_budget.BudgetError as exc:
                    self._nw_budget_failed(exc)
        return results

    def _nw_timeline(self, name, task, data):
        """Record a task's result as its host's timeline steps (rollout_state): here, so no callback is needed."""
        gate = self._nw
        try:
            action = getattr(task, 'resolved_action', None) or task.action
            rollout_state.task_finished(gate.record, name, task.get_name(), action, data, gate.task_started.pop(name, None))
        except Exception as exc:  # pylint: disable=broad-except
            # the timeline is a report: a result it cannot read must not break the rollout
            display.vvv('nodewright.bridge.budgeted: no timeline step for a result: %s' % exc)

    def _nw_removed(self, name, ok):
        """Whether a finished host is scored removed: it failed because its node was deleted."""
        return not ok and name in self._nw.removed

    def _nw_is_fatal(self, task, task_vars):
        """Would linear treat a failure of this task as fatal for the batch (any_errors_fatal / run_once)?"""
        if task.ignore_errors:
            return False
        if task.any_errors_fatal:
            return True
        if self._nw.sliding:
            return False  # free runs run_once tasks on every host; a failure is an ordinary failure
        run_once = task.run_once
        if isinstance(run_once, str):
            try:
                run_once = Templar(loader=self._loader, variables=task_vars).template(run_once)
            except AnsibleError:
                return False  # the worker reports the templating error as the task's failure
        try:
            return boolean(run_once, strict=False)
        except TypeError:
            return False

    # ------------------------------------------------------------------ admission and scoring

    def _nw_host_done(self, iterator, name):
        if name in self._tqm._unreachable_hosts:
            return True
        if self._blocked_hosts.get(name):
            return False
        return iterator.get_next_task_for_host(self._nw.hosts[name], peek=True)[1] is None

    def _nw_host_ok(self, iterator, name):
        return not (name in self._tqm._unreachable_hosts or name in self._tqm._failed_hosts
                    or iterator.is_failed(self._nw.hosts[name]))

    def _nw_retire(self, iterator, name):
        # what StrategyBase.run's final pass does for the hosts it still sees: store the
        # final state (peeking does not), so is_failed/get_failed_hosts see the truth
        if name not in self._tqm._unreachable_hosts:
            iterator.get_next_task_for_host(self._nw.hosts[name])
        states = iterator.host_states
        if self._nw.parking and name in states:
            self._nw.parked[name] = states.pop(name)

    def _nw_ending(self, iterator):
        gate = self._nw
        if iterator.end_play:
            gate.ended = gate.ended or 'end_play'
        elif self._tqm._terminated:
            gate.ended = gate.ended or 'terminated'
        return gate.ended is not None

    def _nw_advance(self, iterator):
        if self._nw.sliding:
            self._nw_advance_sliding(iterator)
        else:
            self._nw_advance_batches(iterator)

    def _nw_advance_batches(self, iterator):
        gate = self._nw
        while True:
            if gate.budget is not None:
                # a finished host gives its slot back at once: other runs need not wait for this batch
                self._nw_release(iterator, [n for names in gate.active.values() for n in names
                                            if n not in gate.released and self._nw_host_done(iterator, n)])
            changed = False
            for comp, names in list(gate.active.items()):
                if all(self._nw_host_done(iterator, n) for n in names):
                    self._nw_score_batch(iterator, comp, names, interrupted=False)
                    changed = True
            if gate.active:
                if changed:
                    self._nw_restrict(iterator)
                return
            # the next wave; loop again in case it has nothing to do (a play without tasks),
            # since linear ends its loop when the hosts it is shown have no next task
            if not self._nw_admit_next(iterator):
                return

    def _nw_score_batch(self, iterator, comp, names, interrupted):
        gate = self._nw
        ok = [n for n in names if self._nw_host_ok(iterator, n) and (not interrupted or self._nw_host_done(iterator, n))]
        removed = [n for n in names if n not in ok and self._nw_removed(n, False)]
        failed = [n for n in names if n not in ok and n not in removed]
        for name in names:
            if self._nw_host_done(iterator, name):
                self._nw_retire(iterator, name)
        self._nw_compact(iterator)
        if gate.budget is not None:
            self._nw_release(iterator, [n for n in names if n not in gate.released])
        record = gate.scheduler.record(comp, ok, failed, removed)
        if self._nw_sync_stop(comp):
            record['stopped'] = True  # this run's share of the fleet's batch that stopped the compartment
        self._nw_keep_batch_states([comp])
        gate.run_failed.update(failed + removed)
        del gate.active[comp]
        gate.numbers.pop(comp, None)
        self._nw_note_fatal(comp, names, failed, 'batch %d' % record['number'])
        self._nw_banner_end(comp, record)
        rollout_state.batch_finished(gate.record, comp, record)

    def _nw_note_fatal(self, comp, names, failed, where):
        """Remember the first failure on an any_errors_fatal / run_once task; forget the tasks of ``names``."""
        gate = self._nw
        culprits = [n for n in failed if n in gate.last_task and self._nw_is_fatal(*gate.last_task[n])]
        for name in names:
            gate.last_task.pop(name, None)
        if culprits and gate.fatal_reason is None:
            gate.fatal_reason = ('a task with any_errors_fatal or run_once failed on %s (compartment %s, %s)'
                                 % (', '.join(culprits), comp, where))

    def _nw_admit_next(self, iterator):
        """Start the next wave (batch mode) or fill the windows (sliding mode); True if any host was admitted."""
        gate = self._nw
        if gate.sliding:
            return self._nw_advance_sliding(iterator)
        if gate.fatal_reason:
            self._nw_halt(gate.fatal_reason)
        batches = {}
        if not self._nw_ending(iterator):
            batches = self._nw_next_batches(iterator)
            # a phase is over when it has nothing in flight and nothing to admit: the next one starts
            while not batches and not gate.active and self._nw_next_phase(iterator):
                batches = self._nw_next_batches(iterator)
            for comp in sorted(batches, key=self._nw_comp_index):
                names = batches[comp]
                gate.active[comp] = names
                gate.numbers[comp] = gate.scheduler.compartment(comp).next_number
                gate.admitted.extend(names)
                self._nw_unpark(iterator, names)
                rollout_state.batch_started(gate.record, comp, gate.numbers[comp], names)
                display.banner('NODEWRIGHT BATCH %d [%s] %d host%s: %s' % (
                    gate.numbers[comp], gate.label(comp), len(names), '' if len(names) == 1 else 's', ', '.join(names)), cows=False)
        self._nw_restrict(iterator)
        self._nw_check_forks(sum(len(n) for n in gate.active.values()))
        return bool(batches)

    def _nw_advance_sliding(self, iterator):
        """Score finished hosts and refill the windows; True if any host was admitted."""
        admitted_any = False
        while self._nw_slide_once(iterator):
            admitted_any = True
            # newly admitted hosts with nothing to do (a play without tasks) finish at once;
            # free ends its loop when no host it is shown has work
            if not any(self._nw_host_done(iterator, n) for n in self._nw.in_flight):
                break
        return admitted_any

    def _nw_slide_once(self, iterator):
        gate = self._nw
        sched = gate.scheduler
        changed = admitted_any = False
        for name in list(gate.in_flight):
            if not self._nw_host_done(iterator, name):
                continue
            started = gate.in_flight.pop(name)
            ok = self._nw_host_ok(iterator, name)
            self._nw_retire(iterator, name)
            self._nw_compact(iterator)
            changed = True
            comp = sched.compartment_of(name)
            if not ok:
                gate.run_failed.add(name)
            # checked per host: in sliding mode any_errors_fatal stops admission at once
            self._nw_note_fatal(comp, [name], [] if ok else [name], 'sliding window')
            if gate.budget is not None:
                self._nw_release(iterator, [name])
            records = sched.complete(name, ok, removed=self._nw_removed(name, ok))
            fleet_stopped = self._nw_sync_stop(comp)
            if records:
                self._nw_keep_batch_states([comp])
            for record in records:
                if fleet_stopped and not record.get('drain'):
                    record['stopped'] = True
                group_start = min([started] + [gate.admit_times.get(n, started) for n in record['hosts']])
                self._nw_banner_end(comp, record)
                rollout_state.batch_finished(gate.record, comp, record, started=group_start)
        if gate.fatal_reason:
            self._nw_halt(gate.fatal_reason)
        if not self._nw_ending(iterator):
            admitted = self._nw_sliding_admit(iterator)
            # a phase is over when it has nothing in flight and nothing to admit: the next one starts
            while not admitted and not gate.in_flight and self._nw_next_phase(iterator):
                sched = gate.scheduler
                admitted = self._nw_sliding_admit(iterator)
            now = time.time()
            for comp in sorted(admitted, key=self._nw_comp_index):
                for name in admitted[comp]:
                    gate.in_flight[name] = now
                    gate.admit_times[name] = now
                    if name not in gate.admitted:  # a host of several phases keeps its one place
                        gate.admitted.append(name)
                self._nw_unpark(iterator, admitted[comp])
                window = sched.compartment(comp)
                display.display('NODEWRIGHT ADMIT [%s] %s (in flight %d of window %d)' % (
                    gate.label(comp), ', '.join(admitted[comp]), len(window.in_flight), window.window))
                changed = admitted_any = True
        if changed:
            self._nw_restrict(iterator)
            self._nw_check_forks(len(gate.in_flight))
        return admitted_any

    # ------------------------------------------------------------------ the shared budget

    def _nw_join_budget(self, phase):
        """Register this run in the shared budget of the phase (a Lease per compartment); a failure stops the phase."""
        gate = self._nw
        shared = phase.settings.shared
        rollouts = [getattr(c, 'rollout', c) for c in gate.scheduler.compartments]
        for rollout in rollouts:
            rollout.judged = False  # the fleet's batches decide the stop (module_utils/shared_budget.py)
        rules = dict((r.name, budget_rules.Rules.of(r)) for r in rollouts)
        scope = shared.get('name') or phase.name
        # a CR's phase: its spec digest; a play of your own: the name (the --limit driver uses the same)
        key = phase.budget_key if phase.budget_key is not None else scope
        try:
            client = kube_api.Kube(kube_api.connection_params(dict(gate.connection, **shared)))
            namespace = shared.get('namespace') or client.generation.default_namespace
            gate.budget = shared_budget.SharedBudget(client, namespace, scope, gate.settings.window,
                                                     rules, key=key, expiry=shared['slot_expiry'])
            # a fresh fleet rollout continues the batch state the CR's status had (rollout_config.build_scheduler)
            gate.budget.join(dict((r.name, list(r.queue)) for r in rollouts),
                             seeds=dict((r.name, budget_rules.seed_counters(r)) for r in rollouts))
        except (kube_api.KubeError, shared_budget.BudgetError) as exc:
            self._nw_budget_failed(exc)
            return
        display.display('NODEWRIGHT SHARED BUDGET %s: run %s joined %s' % (
            gate.budget.scope, gate.budget.run, ', '.join(gate.budget.where(c) for c in sorted(gate.budget.joined))))

    def _nw_budget_failed(self, exc):
        """The shared budget cannot be used: stop admitting (hosts in flight finish) and say why."""
        gate = self._nw
        reason = 'shared budget: %s' % (getattr(exc, 'message', None) or exc)
        display.error('nodewright.bridge.budgeted: %s' % reason)
        if gate.budget is not None:
            gate.budget.joined = set()  # nothing more is written: the slots expire (or the next run clears them)
        gate.budget = None
        self._nw_halt(reason)
        gate.any_stopped = True

    def _nw_leave_budget(self):
        gate = self._nw
        if gate.budget is None:
            return
        budget, gate.budget = gate.budget, None
        budget.leave()
        done_elsewhere = sorted(gate.elsewhere)
        if done_elsewhere:
            failed = [n for n in done_elsewhere if gate.elsewhere[n] == 'failed']
            display.display('NODEWRIGHT SHARED BUDGET: %d host(s) finished by other runs: %s%s' % (
                len(done_elsewhere), ', '.join(done_elsewhere), ' (failed there: %s)' % ', '.join(failed) if failed else ''))
            for name in failed:
                # the fleet's rollout failed on it: this run's result says so too
                self._tqm._failed_hosts[name] = True
                gate.run_failed.add(name)
        rollout_state.shared_budget(gate.record, {
            'run': budget.run, 'leases': [budget.where(c) for c in sorted(budget.names)], 'writes': budget.writes,
            'max_in_flight': dict(budget.max_in_flight), 'elsewhere': dict(gate.elsewhere),
            'elsewhere_by_compartment': _by_compartment(gate.scheduler, done_elsewhere)})

    def _nw_outcome(self, iterator, name):
        ok = self._nw_host_ok(iterator, name)
        return 'removed' if self._nw_removed(name, ok) else 'ok' if ok else 'failed'

    def _nw_release(self, iterator, names):
        """Give the slots of finished hosts back, with their outcomes (one write per compartment)."""
        gate = self._nw
        by_comp = {}
        for name in names:
            if name in gate.released or not self._nw_host_done(iterator, name):
                continue  # a host that did not finish keeps its slot until the run leaves (then it is freed, not scored)
            gate.released.add(name)
            by_comp.setdefault(gate.scheduler.compartment_of(name), {})[name] = self._nw_outcome(iterator, name)
        for comp, outcomes in sorted(by_comp.items()):
            if gate.budget is None:
                return
            try:
                records = gate.budget.finish(comp, outcomes)
            except shared_budget.BudgetError as exc:
                self._nw_budget_failed(exc)
                return
            for record in records:
                display.banner('NODEWRIGHT FLEET %s %d [%s] scored: %d nodes over every run, %d ok, %d failed, %s; fleet '
                               'progress %d%%%s' % (
                                   'GROUP' if gate.sliding else 'BATCH', record['number'], gate.label(comp), record['size'],
                                   len(record['ok']), len(record['failed']), 'FAILED BATCH' if record['failed_batch'] else 'ok',
                                   record['progress'], '; STOPPED' if record['stopped'] else ''), cows=False)
            self._nw_sync_stop(comp)
            if records:
                self._nw_keep_batch_states([comp])

    def _nw_pick(self, names):
        """The hosts start: the CR's status lists them as picked (nodePriority), before their first pod reads it
        (SKYHOOK_NODE_ORDER), as the operator's node picker does; one status write per batch."""
        keeper = self._nw.batch_keeper
        if keeper is None or not names:
            return
        known = len(keeper.warnings)
        keeper.pick(names)
        for warning in keeper.warnings[known:]:
            display.warning('nodewright.bridge.budgeted: %s' % warning)

    def _nw_keep_batch_states(self, comps=None):
        """The batch state of the phase's compartments (``comps``: only these) in its CR's status.

        The fleet's when a shared budget runs the compartment (any run that scores a fleet batch
        writes it), else this run's; a compartment without a strategy has none.
        """
        gate = self._nw
        keeper = gate.batch_keeper
        if keeper is None:
            return
        states = {}
        for comp in gate.scheduler.compartments:
            rollout = getattr(comp, 'rollout', comp)
            if rollout.strategy is None or (comps is not None and rollout.name not in comps):
                continue
            fleet = gate.budget.batch_state(rollout.name) if gate.budget is not None else None
            states[rollout.name] = fleet if fleet is not None else rollout.batch_state()
        known = len(keeper.warnings)
        keeper.keep(states)
        for warning in keeper.warnings[known:]:
            display.warning('nodewright.bridge.budgeted: %s' % warning)

    def _nw_sync_stop(self, comp):
        """A fleet compartment stopped (by any run's batch): this run's compartment stops with the same reason."""
        gate = self._nw
        reason = gate.budget.stopped(comp) if gate.budget is not None else None
        if reason is None:
            return False
        rollout = gate.scheduler.compartment(comp)
        rollout = getattr(rollout, 'rollout', rollout)
        if not rollout.stopped:
            rollout.stopped, rollout.stop_reason = True, reason
        return True

    def _nw_drop_elsewhere(self, rollout, waiting, finished, busy):
        """Take hosts other runs finished out of this run's queue; move the ones they run to its back. The new waiting list."""
        gate = self._nw
        state = gate.budget.states.get(rollout.name) or {'done': {}}
        for name in finished:
            gate.elsewhere[name] = state['done'].get(name, 'ok')
        gone = set(finished) | set(busy)
        rollout.queue = [n for n in rollout.queue if n not in finished]
        return [n for n in waiting if n not in gone] + [n for n in waiting if n in busy]

    def _nw_budget_wait(self, iterator, comps):
        """Wait for the shared budget between two polls; False when the run is ending."""
        gate = self._nw
        for comp in comps:
            if comp not in gate.budget_waiting:
                gate.budget_waiting.add(comp)
                state = gate.budget.states.get(comp) or {'slots': {}}
                others = sorted(set(s['run'] for s in state['slots'].values() if s['run'] != gate.budget.run))
                display.display('NODEWRIGHT WAIT [%s]: the shared budget is in use (%d in flight, runs %s); polling every %.0f s' % (
                    gate.label(comp), len(state['slots']), ', '.join(others) or 'none', shared_budget.POLL_SECONDS))
        try:
            gate.budget.wait()
        except shared_budget.BudgetError as exc:
            self._nw_budget_failed(exc)
            return False
        return not self._nw_ending(iterator)

    def _nw_take(self, name, rollout, waiting):
        """Ask the fleet's batch or window for nodes of ``waiting`` (this run's queue of a compartment).

        Returns ``(granted, waiting)``: the nodes to start, and the queue without them and without
        the nodes other runs finished (the ones they run go to its back); None when the budget failed.
        """
        gate = self._nw
        try:
            granted, finished, busy = gate.budget.take(name, list(waiting))
        except shared_budget.BudgetError as exc:
            self._nw_budget_failed(exc)
            return None
        waiting = self._nw_drop_elsewhere(rollout, waiting, finished, busy)
        self._nw_sync_stop(name)
        if granted:
            gate.budget_waiting.discard(name)
        return granted, [n for n in waiting if n not in granted]

    def _nw_next_batches(self, iterator):
        """Batch mode: the next wave, from this run's scheduler or (shared) what the fleet's batch has room for."""
        gate = self._nw
        if any(c.queue and not c.stopped for c in gate.scheduler.compartments) and not self._nw_clear_to_start(iterator):
            return {}
        while gate.budget is not None:
            batches, waiting = {}, []
            for comp in gate.scheduler.compartments:
                if comp.stopped or not comp.queue:
                    continue
                taken = self._nw_take(comp.name, comp, comp.queue)
                if taken is None:
                    return {}
                granted, comp.queue = taken
                if granted:
                    comp.current = batches[comp.name] = granted
                elif comp.queue and not comp.stopped:
                    waiting.append(comp.name)
            if batches or not waiting or not self._nw_budget_wait(iterator, waiting):
                return batches
        return gate.scheduler.next_batches()

    def _nw_sliding_admit(self, iterator):
        """Sliding mode: nodes to start now (this run's windows, or the fleet's when the budget is shared)."""
        gate = self._nw
        if any(c.waiting and not c.stopped for c in gate.scheduler.compartments) and not self._nw_clear_to_start(iterator):
            return {}
        while gate.budget is not None:
            if gate.in_flight and time.time() - gate.budget_polled < shared_budget.POLL_SECONDS:
                return {}  # hosts are running: ask again on a later pass, not on every one
            gate.budget_polled = time.time()
            admitted, waiting = {}, []
            for comp in gate.scheduler.compartments:
                if comp.stopped or not comp.waiting:
                    continue
                taken = self._nw_take(comp.name, comp.rollout, comp.waiting)
                if taken is None:
                    return {}
                granted, comp.waiting = taken
                if comp.pending and not comp.in_flight and not comp.waiting:
                    # the rest went to other runs: what this run finished is its last group
                    group, comp.pending = comp.pending, []
                    record = comp._score(group)  # pylint: disable=protected-access
                    self._nw_banner_end(comp.name, record)
                    rollout_state.batch_finished(gate.record, comp.name, record)
                if granted:
                    comp.in_flight.extend(granted)
                    comp.max_in_flight = max(comp.max_in_flight, len(comp.in_flight))
                    admitted[comp.name] = granted
                elif comp.waiting and not comp.stopped:
                    waiting.append(comp.name)
            if admitted or not waiting or gate.in_flight or not self._nw_budget_wait(iterator, waiting):
                return admitted
        return gate.scheduler.admit()

    # ------------------------------------------------------------------ maintenance windows and gates

    def _nw_kube(self):
        return kube_api.Kube(kube_api.connection_params(dict(self._nw.connection)))

    def _nw_fleet_in_flight(self):
        """Nodes this rollout has in flight (every run of a shared budget): the NotReady gate does not count them."""
        gate = self._nw
        names = set(gate.in_flight) | set(n for names in gate.active.values() for n in names)
        if gate.budget is not None:
            for state in gate.budget.states.values():
                names.update(state['slots'])
                names.update(state.get('orphans') or ())
        return names

    def _nw_sleep(self, seconds):
        gate = self._nw
        if gate.budget is not None:
            gate.budget.wait(seconds)  # keeps this run's slots and registration alive
        else:
            time.sleep(seconds)

    def _nw_on_wait(self, message):
        display.display('NODEWRIGHT WAIT [%s]: %s' % (self._nw.phase.name or self._nw.play, message))

    def _nw_clear_to_start(self, iterator):
        """Before a batch (or an admission): the maintenance window and the gates. False: nothing may start.

        Batch mode (and sliding mode with nothing in flight) waits here, as the settings say; a
        sliding window with hosts in flight only looks (every poll interval) and admits nothing
        while blocked. Outside a window for good, the rest of the phase is deferred (a clean
        stop); a gate that stays blocked stops the rollout with its reason.
        """
        gate = self._nw
        if gate.windows is None and gate.gates is None:
            return True
        if gate.check_mode:
            # a check run shows the whole rollout: say what would hold it, wait for nothing
            if gate.gate_blocked is None:
                reason = gate_rules.window_block(gate.windows, time.time()) if gate.windows is not None else None
                reason = reason or (gate.gates.probe(self._nw_fleet_in_flight())[0] if gate.gates is not None else None)
                gate.gate_blocked = reason or ''
                if reason:
                    display.display('NODEWRIGHT CHECK MODE [%s]: a real run would wait here: %s' % (
                        gate.phase.name or gate.play, reason))
            return True
        if gate.sliding and gate.in_flight:
            return self._nw_look_before_admitting()
        try:
            while True:
                reason = None
                if gate.windows is not None:
                    reason = rollout_gates.wait_for_window(gate.windows, sleep=self._nw_sleep, on_wait=self._nw_on_wait)
                if reason is not None:
                    self._nw_defer(reason)
                    return False
                if gate.gates is not None:
                    reason = gate.gates.wait(sleep=self._nw_sleep, on_wait=self._nw_on_wait, rebooting=self._nw_fleet_in_flight)
                if reason is not None:
                    self._nw_halt(reason)
                    return False
                if gate.windows is None or gate_rules.window_open(gate.windows.windows, time.time()):
                    return not self._nw_ending(iterator)
        except shared_budget.BudgetError as exc:
            self._nw_budget_failed(exc)
            return False

    def _nw_look_before_admitting(self):
        gate = self._nw
        poll = gate.gates.settings.poll_interval if gate.gates is not None else 10
        if gate.gate_blocked is None or time.time() - gate.gate_probed >= poll:
            gate.gate_probed = time.time()
            reason = gate_rules.window_block(gate.windows, time.time()) if gate.windows is not None else None
            if reason is None and gate.gates is not None:
                reason = gate.gates.probe(self._nw_fleet_in_flight())[0]
            if reason is not None and reason != gate.gate_blocked:
                self._nw_on_wait('admitting nothing while %s (%d host(s) in flight finish first)' % (reason, len(gate.in_flight)))
            gate.gate_blocked = reason or ''
        return not gate.gate_blocked

    def _nw_defer(self, reason, title='DEFERRED', until='the next run'):
        """A clean stop: nothing more starts in this phase; its other hosts wait for a later run (skipped, not failed).

        Outside the maintenance windows (DEFERRED), or the CR paused or disabled mid-run (HELD).
        """
        gate = self._nw
        gate.deferred = reason
        self._nw_halt('deferred: %s' % reason)
        display.banner('NODEWRIGHT %s [%s]: %s; the hosts not started wait for %s' % (
            title, gate.phase.name or gate.play, reason, until), cows=False)

    def _nw_halt(self, reason):
        sched = self._nw.scheduler
        if self._nw.sliding:
            sched.halt(reason)
        else:
            halt(sched, reason)

    def _nw_comp_index(self, comp):
        return [c.name for c in self._nw.scheduler.compartments].index(comp)

    def _nw_restrict(self, iterator):
        """Scope the inventory to the hosts in flight, as PlaybookExecutor does for a serial batch.

        run_once results, a run_once failure, end_batch / end_play / clear_host_errors and
        ansible_play_batch all act on ``inventory.get_hosts(play.hosts)``; the restriction
        keeps them inside the batch and away from hosts that have not been admitted.
        """
        gate = self._nw
        if gate.sliding:
            flying = set(gate.in_flight)
        else:
            flying = set(n for names in gate.active.values() for n in names)
        self._inventory.restrict_to_hosts([h for h in gate.play_hosts if h.name in flying])
        self._set_hosts_cache(iterator._play)

    def _nw_check_forks(self, in_flight):
        gate = self._nw
        workers = len(self._workers)
        if in_flight > workers and not gate.forks_warned:
            gate.forks_warned = True
            display.warning('nodewright.bridge.budgeted: %d hosts are in flight but only %d run at once (forks); raise '
                            'forks (in AWX, the job template\'s Forks) to at least the largest batch.'
                            % (in_flight, workers))

    def _nw_banner_end(self, comp, record):
        status = 'FAILED BATCH' if record['failed_batch'] else 'ok'
        if record.get('drain'):
            status += ' (hosts in flight when the compartment stopped)'
        removed = ', %d removed (node deleted)' % len(record['removed']) if record.get('removed') else ''
        line = 'NODEWRIGHT %s %d [%s] done: %d ok, %d failed%s, %s; progress %d%%' % (
            'GROUP' if self._nw.sliding else 'BATCH', record['number'], self._nw.label(comp), len(record['ok']), len(record['failed']),
            removed, status, record['progress'])
        rollout = self._nw.scheduler.compartment(comp)
        rollout = getattr(rollout, 'rollout', rollout)
        if rollout.stopped and not record.get('drain'):
            line += '; COMPARTMENT STOPPED: %s' % rollout.stop_reason
        display.banner(line, cows=False)

    # ------------------------------------------------------------------ end of the play

    def _nw_finish(self, iterator, result):
        gate = self._nw
        sched = gate.scheduler
        # the loop can stop with hosts still in flight (2.16's any_errors_fatal returns early,
        # end_play, an interrupted run): score them now; a host that did not finish is failed
        if gate.sliding:
            for name in list(gate.in_flight):
                done = self._nw_host_done(iterator, name)
                ok = done and self._nw_host_ok(iterator, name)
                gate.in_flight.pop(name)
                comp = sched.compartment_of(name)
                if not ok:
                    gate.run_failed.add(name)
                if gate.budget is not None:
                    self._nw_release(iterator, [name])
                self._nw_note_fatal(comp, [name], [] if ok else [name], 'sliding window')
                for record in sched.complete(name, ok, removed=self._nw_removed(name, ok)):
                    self._nw_banner_end(comp, record)
                    rollout_state.batch_finished(gate.record, comp, record)
        else:
            for comp, names in list(gate.active.items()):
                self._nw_score_batch(iterator, comp, names, interrupted=True)
        self._nw_ending(iterator)
        if gate.fatal_reason:
            self._nw_halt(gate.fatal_reason)
        if gate.ended is None and sched.not_attempted():
            self._nw_halt('the play\'s run loop ended before the rollout finished')
        self._nw_end_phase()
        stats = self._tqm._stats
        for phase, hosts, dummy in gate.phases[gate.phase_index + 1:]:
            # phases that never started (the play ended, or any_errors_fatal stopped the rollout)
            names = [h.name for h in hosts if h.name not in gate.prior_excluded]
            for name in names:
                stats.increment('skipped', name)
                if gate.fatal_reason:
                    self._tqm._failed_hosts[name] = True
            if names:
                display.warning('nodewright.bridge.budgeted: %d host(s) of %s never ran because %s: %s' % (
                    len(names), phase.name, gate.fatal_reason or 'the play ended (%s)' % gate.ended, ', '.join(names)))
        stats.set_custom_stats(CUSTOM_STAT, rollout_state.report(nodes=False))

        # 2.16's linear loop flags any_errors_fatal with RUN_FAILED_BREAK_PLAY (ending every later
        # play); 2.17+ only fails the batch. Use the 2.17+ behaviour on every version.
        result = int(result) & ~self._tqm.RUN_FAILED_BREAK_PLAY
        if result == self._tqm.RUN_OK:
            if self._tqm._unreachable_hosts:
                result = self._tqm.RUN_UNREACHABLE_HOSTS
            elif gate.any_stopped or iterator.get_failed_hosts() or self._tqm._failed_hosts:
                result = self._tqm.RUN_FAILED_HOSTS
        return result

    def _nw_end_phase(self):
        """Close the current phase: hosts never admitted, the progress record, the stop banners."""
        gate = self._nw
        if gate.phase_closed:
            return
        gate.phase_closed = True
        sched = gate.scheduler
        self._nw_leave_budget()
        not_attempted = sched.not_attempted()
        stopped = sched.stopped
        stats = self._tqm._stats
        title = gate.record.play
        if gate.deferred is not None:
            # a phase deferred to the next window is not a stopped rollout; a compartment the policy stopped is
            stopped = any(c.stopped and not (c.stop_reason or '').startswith('deferred: ') for c in
                          [getattr(c, 'rollout', c) for c in sched.compartments])
        for name in not_attempted:
            # listed in the recap (as skipped) instead of silently missing from it
            stats.increment('skipped', name)
            if stopped:
                # like a failed host: later plays and the retry file see it
                self._tqm._failed_hosts[name] = True
        gate.run_failed.update(not_attempted)
        if not_attempted:
            why = ('the rollout stopped' if stopped else 'the rollout was held (%s)' % gate.deferred if gate.deferred
                   else 'the play ended (%s)' % gate.ended)
            display.warning('nodewright.bridge.budgeted: %d host(s) of %r were never admitted because %s: %s'
                            % (len(not_attempted), title, why, ', '.join(not_attempted)))
        summaries = sched.summary()['compartments']
        rollout_state.finish_rollout(gate.record, summaries, not_attempted, ended=gate.ended)
        for summary in summaries:
            if summary['stopped']:
                display.banner('NODEWRIGHT ROLLOUT STOPPED [%s]: %s' % (gate.label(summary['name']), summary['stop_reason']),
                               cows=False)
        gate.any_stopped = gate.any_stopped or stopped
        phase_hosts = [h.name for h in gate.phases[gate.phase_index][1]]
        gate.phase_failed[gate.phase.name] = bool(gate.excluded) or any(n in gate.run_failed for n in phase_hosts)


class StrategyModule(_BudgetedMixin, LinearStrategyModule):
    """Batch mode: the stock linear loop behind the admission gate."""


class SlidingStrategyModule(_BudgetedMixin, FreeStrategyModule):
    """Sliding mode: the stock free loop behind the admission gate (see StrategyModule.run)."""
