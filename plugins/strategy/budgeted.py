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
  - C(nodewright_admission=sliding) replaces the batch barrier with a sliding window; see the notes.
    C(nodewright_window) is its deprecated name.
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
options:
  # Play or extra vars, validated together before any host runs (plugin_utils/rollout_config.py, which lists
  # every problem with its field path); a unit test keeps this list equal to the variables it reads.
  nodewright_policy:
    description: >-
      A DeploymentPolicy (its spec, a full document, or a YAML/JSON file). Exclusive with C(nodewright_interruption_budget).
    type: raw
    vars: [{name: nodewright_policy}]
  nodewright_interruption_budget:
    description: >-
      A plain budget, C({percent: N}) or C({count: N}), run as a CR's C(interruptionBudget).
    type: dict
    vars: [{name: nodewright_interruption_budget}]
  nodewright_admission:
    description: >-
      How hosts are admitted, C(batch) (a barrier between batches) or C(sliding) (a window per compartment).
    type: str
    choices: [batch, sliding]
    default: batch
    vars:
      - name: nodewright_admission
      - name: nodewright_window
        deprecated: {why: named apart from the maintenance windows, version: 2.0.0, alternatives: nodewright_admission}
  nodewright_order:
    description: >-
      The order of each compartment's hosts, C(inventory) (the play's host order) or C(name).
    type: str
    choices: [inventory, name]
    default: inventory
    vars: [{name: nodewright_order}]
  nodewright_phases:
    description: >-
      Phases of the play (the apply playbook's CRs): a list of C({name, hosts, policy or interruption_budget,
      after_all, batch_state, budget_key, selector, cr_status}), each a rollout of its own, in order.
    type: list
    elements: dict
    vars: [{name: nodewright_phases}]
  nodewright_shared_budget:
    description: >-
      C(true) or C({name, namespace, slot_expiry} and connection options) to share the budget with other runs.
    type: raw
    vars: [{name: nodewright_shared_budget}]
  nodewright_maintenance_windows:
    description: >-
      Windows (C({days, start, end, timezone})) a batch may start in (C(docs/windows-and-gates.md)).
    type: list
    elements: dict
    vars: [{name: nodewright_maintenance_windows}]
  nodewright_maintenance_action:
    description: >-
      Outside a window, C(wait) for the next one or C(stop) (defer the rest to a later run).
    type: str
    choices: [wait, stop]
    default: wait
    vars: [{name: nodewright_maintenance_action}]
  nodewright_maintenance_timeout:
    description: >-
      Seconds to wait for a window before the rest is deferred.
    type: int
    default: 86400
    vars: [{name: nodewright_maintenance_timeout}]
  nodewright_gates:
    description: >-
      Checks before each batch (C(max_not_ready), C(prometheus), C(timeout), C(poll_interval)).
    type: dict
    vars: [{name: nodewright_gates}]
  nodewright_kubeconfig:
    description: >-
      The kubeconfig the strategy's own API calls use (shared budget, NotReady gate, CR status).
    type: path
    vars: [{name: nodewright_kubeconfig}]
  nodewright_context:
    description: >-
      The kubeconfig context of those calls.
    type: str
    vars: [{name: nodewright_context}]
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
from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.strategy.free import StrategyModule as FreeStrategyModule
from ansible.plugins.strategy.linear import StrategyModule as LinearStrategyModule
from ansible.template import Templar
from ansible.utils.display import Display

from ansible_collections.nodewright.bridge.plugins.module_utils import kube as kube_api
from ansible_collections.nodewright.bridge.plugins.plugin_utils import admission
from ansible_collections.nodewright.bridge.plugins.plugin_utils import admission_display
from ansible_collections.nodewright.bridge.plugins.plugin_utils import fork_preload
from ansible_collections.nodewright.bridge.plugins.plugin_utils import play_rollout
from ansible_collections.nodewright.bridge.plugins.plugin_utils import rollout_config
from ansible_collections.nodewright.bridge.plugins.plugin_utils import rollout_gates
from ansible_collections.nodewright.bridge.plugins.plugin_utils import rollout_state
from ansible_collections.nodewright.bridge.plugins.plugin_utils import shared_budget
from ansible_collections.nodewright.bridge.plugins.plugin_utils import sequence_engine
from ansible_collections.nodewright.bridge.plugins.plugin_utils import status_keeper

display = Display()

CUSTOM_STAT = 'nodewright_rollout'
PREFIX = admission_display.PREFIX


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


class _Play(object):
    """What the strategy keeps for one play beside its phases' admissions (module_utils and plugin_utils/admission.py)."""

    def __init__(self, play, phases, hosts, play_hosts, excluded):
        self.name = play
        self.phases = phases  # [(Phase, [Host], inputs)], in run order
        self.phase_index = -1
        self.phase = None
        self.phase_closed = False
        self.sliding = phases[0][0].settings.admission == 'sliding'  # the play's, the same for every phase
        self.engine = None  # the current phase's Admission
        self.hosts = hosts  # name -> Host, every host of the play
        self.play_hosts = play_hosts  # the restriction to restore at the end
        self.prior_excluded = excluded  # failed or unreachable before the play
        self.excluded = {}  # the current phase's
        self.run_failed = set()  # scored failed, or never admitted, in an earlier phase of this play
        self.phase_failed = {}  # phase name -> whether any of its hosts failed or never ran
        self.ran = set()  # hosts that ran a phase (their iterator state is spent)
        self.any_stopped = False
        self.admitted = []  # every admitted name, in order, once (free needs a list that only grows)
        self.last_task = {}  # name -> (task, task_vars) of the last task queued for it
        self.task_started = {}  # name -> when its task in flight was queued (the timeline's task intervals)
        self.removed = set()  # hosts whose node was deleted from the cluster (a result with node_deleted)
        self.fatal_reason = None
        self.ended = None
        self.forks_warned = False
        self.record = None
        self.parking = None  # the host states not in flight, kept aside (play_rollout.HostParking)
        self.connection = {}  # how the strategy reaches the API (shared budget, NotReady gate)
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
        play = self._nw_prepare(iterator)
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
        if play.sliding:
            # The loop is chosen per play (a play var), after TQM built this instance. free's
            # run() calls super(free.StrategyModule, self), so the instance must really be one.
            self.__class__ = SlidingStrategyModule
            self._host_pinned = False
        self._nw = play
        result = self._tqm.RUN_OK
        previous_sigterm = signal.signal(signal.SIGTERM, self._nw_on_sigterm)
        if previous_sigterm is None:  # installed outside Python
            previous_sigterm = signal.SIG_DFL
        try:
            play.parking.park_all()
            self._nw_start_phase(iterator, 0)
            self._nw_admit_next(iterator)
            loop = FreeStrategyModule if play.sliding else LinearStrategyModule
            result = loop.run(self, iterator, play_context)
        finally:
            signal.signal(signal.SIGTERM, previous_sigterm)
            if play.engine.budget is not None:  # Ctrl-C, an error: the unfinished nodes go back to the budget
                play.engine.leave()
            if engine is not None:
                engine.stop()
            # always give back what was borrowed, even on errors: PlaybookExecutor's
            # restriction, and every host state (TQM reads the failed hosts from them)
            play.parking.give_back()
            self._inventory.restrict_to_hosts(play.play_hosts)
        return self._nw_finish(iterator, result)

    def _nw_on_sigterm(self, signum, frame):
        """SIGTERM (a stopped job): give this run's unfinished nodes back to the shared budget, then die of it.

        Forked workers inherit the handler; only the strategy's own process has a budget to give back.
        """
        play = self._nw
        budget = play.engine.budget if play is not None and play.engine is not None else None
        if os.getpid() == getattr(play, 'pid', None) and budget is not None:
            budget.kube.outage_timeout = min(budget.kube.outage_timeout, 5)  # a job being stopped waits little
            play.engine.budget = None
            budget.leave()
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)

    # ------------------------------------------------------------------ configuration

    def _nw_prepare(self, iterator):
        play = iterator._play
        name = play.get_name()
        if play.serial:
            raise AnsibleError(PREFIX + 'play %r sets serial; the rollout policy chooses the batches. '
                               'Remove serial (or use another strategy).' % name)
        if play.max_fail_percentage is not None:
            display.warning(PREFIX + 'max_fail_percentage is ignored in play %r; the policy\'s batchThreshold, '
                            'failureThreshold and safetyLimit decide when the rollout stops.' % name)
            play.max_fail_percentage = None  # TQM's per-run copy of the play; linear reads it
        play_hosts = self._inventory.get_hosts(play.hosts, order=play.order)
        prepared, connection = play_rollout.rollout_phases(play, play_hosts, self._variable_manager, self._loader)
        for message in prepared[0][0].settings.deprecations:  # the names are the play's, not a phase's
            display.deprecated(PREFIX + message, version='2.0.0', collection_name='nodewright.bridge')
        excluded = {}
        for host in play_hosts:
            if host.name in self._tqm._unreachable_hosts:
                excluded[host.name] = 'unreachable in an earlier play'
            elif iterator.is_failed(host):
                excluded[host.name] = 'failed in an earlier play'
        state = _Play(name, prepared, dict((h.name, h) for h in play_hosts), play_hosts, excluded)
        state.connection = connection
        state.check_mode = bool(context.CLIARGS.get('check')) or play.check_mode is True
        state.parking = play_rollout.HostParking(iterator)
        return state

    def _nw_start_phase(self, iterator, index):
        """Admission for phase ``index``: its eligible hosts, its scheduler and Admission, its progress record."""
        play = self._nw
        phase, hosts, inputs = play.phases[index]
        play.phase_index, play.phase, play.phase_closed = index, phase, False
        blocked = [a for a in phase.after_all if play.phase_failed.get(a)]
        excluded = {}
        for host in hosts:
            if host.name in play.prior_excluded:
                excluded[host.name] = play.prior_excluded[host.name]
            elif blocked:
                excluded[host.name] = 'waits until %s succeeded on every host' % ', '.join(blocked)
            elif host.name in self._tqm._unreachable_hosts:
                excluded[host.name] = 'unreachable in an earlier phase'
            elif host.name in play.run_failed or host.name in self._tqm._failed_hosts:
                excluded[host.name] = 'failed in an earlier phase'
        eligible = [h for h in hosts if h.name not in excluded]
        for host in eligible:
            if host.name in play.ran:
                # the host ran an earlier phase: it runs the play's tasks again, from the start,
                # roles included (a role runs once per host and play unless it allows duplicates)
                play.parking.park(host.name, HostState(blocks=iterator._blocks))
                self._nw_forget_roles(iterator._play, host.name)
            if phase.name is not None:
                self._variable_manager.set_host_variable(host.name, rollout_config.HOSTVAR_PHASE, phase.name)
        settings = phase.settings
        nodes, pinned = rollout_config.node_inputs(settings, [i for i in inputs if i[0] not in excluded])
        scheduler = rollout_config.build_scheduler(settings, nodes, pinned, batch_states=phase.batch_state, cr_name=phase.name)
        play.excluded = excluded
        title = play.name if phase.name is None else '%s: %s' % (play.name, phase.name)
        play.record = rollout_state.start_rollout(title, settings.admission, rollout_config.compartment_summaries(scheduler),
                                                  excluded)
        gates = rollout_gates.gates_for(settings.gates, play.connection, phase.selector, [h.name for h in eligible])
        keeper = None
        if phase.cr_status and not play.check_mode:
            keeper = status_keeper.BatchStateKeeper(kube_api.connection_params(dict(play.connection)), phase.name)
        play.engine = admission.Admission(scheduler, sliding=play.sliding, record=play.record, reporter=admission_display.Banners(play),
                                          windows=settings.windows, gates=gates, keeper=keeper, check_mode=play.check_mode,
                                          ending=lambda: self._nw_ending(iterator))
        if phase.name is not None:
            display.banner('NODEWRIGHT ROLLOUT %s: %s' % (phase.name, admission_display.plural(len(eligible))), cows=False)
        if excluded:
            display.warning(PREFIX + '%d host(s) left out of the rollout of %r: %s'
                            % (len(excluded), title, ', '.join('%s (%s)' % item for item in sorted(excluded.items()))))
        play.ran.update(h.name for h in eligible)
        if settings.shared is not None and play.check_mode:
            display.display('NODEWRIGHT SHARED BUDGET %s: not taken in check mode (nothing is written)'
                            % (settings.shared.get('name') or phase.name))
        elif settings.shared is not None:
            self._nw_join_budget(phase)
        play.engine.keep_batch_states()

    def _nw_join_budget(self, phase):
        """Register this run in the shared budget of the phase (a Lease per compartment); a failure stops the phase."""
        play = self._nw
        shared = phase.settings.shared
        try:
            # the key: a CR's phase, its spec digest; a play of your own, the name (the --limit driver's too)
            play.engine.budget = shared_budget.for_rollout(
                dict(play.connection, **shared), play.engine.scheduler, phase.settings.admission,
                shared.get('name') or phase.name, key=phase.budget_key, namespace=shared.get('namespace'),
                expiry=shared['slot_expiry'])
        except (kube_api.KubeError, shared_budget.BudgetError) as exc:
            play.engine.budget_failed(exc)
            return
        play.engine.join()

    @staticmethod
    def _nw_forget_roles(play, host_name):
        for roles in (getattr(play, 'role_cache', None) or {}).values():
            for role in roles if isinstance(roles, list) else [roles]:
                for record in (getattr(role, '_completed', None), getattr(role, '_had_task_run', None)):
                    if isinstance(record, dict):
                        record.pop(host_name, None)

    def _nw_next_phase(self, iterator):
        """End the current phase; start the next one unless the play is ending. True if one started."""
        play = self._nw
        self._nw_end_phase()
        if play.fatal_reason or self._nw_ending(iterator) or play.phase_index + 1 >= len(play.phases):
            return False
        self._nw_start_phase(iterator, play.phase_index + 1)
        return True

    # ------------------------------------------------------------------ hooks on the stock loop

    def get_hosts_left(self, iterator):
        play = self._nw
        if play is None:
            return super(_BudgetedMixin, self).get_hosts_left(iterator)
        if play.sliding:
            while self._nw_slide_once(iterator):
                # newly admitted hosts with nothing to do (a play without tasks) finish at once;
                # free ends its loop when no host it is shown has work
                if not any(self._nw_host_done(iterator, n) for n in play.engine.in_flight):
                    break
            # free indexes this list with a cursor kept across calls: it must never shrink
            return [play.hosts[n] for n in play.admitted]
        self._nw_advance_batches(iterator)
        unreachable = self._tqm._unreachable_hosts
        return [play.hosts[n] for n in play.engine.flying() if n not in unreachable]

    def _queue_task(self, host, task, task_vars, play_context):
        play = self._nw
        if play is not None:
            # only remembered here; whether it was fatal is worked out if the host fails
            play.last_task[host.name] = (task, task_vars)
            play.task_started[host.name] = time.time()
        return super(_BudgetedMixin, self)._queue_task(host, task, task_vars, play_context)

    def _process_pending_results(self, iterator, one_pass=False, max_passes=None):
        results = super(_BudgetedMixin, self)._process_pending_results(iterator, one_pass=one_pass, max_passes=max_passes)
        play = self._nw
        if play is not None:
            for result in results:
                name, task, data = _result_parts(result)
                if data.get('failed') and data.get('node_deleted'):
                    play.removed.add(name)
                if data.get('held') in HOLDING:
                    play.engine.defer(data.get('msg') or 'the CR was %s' % data['held'], title='HELD',
                                      until='a run after the CR is resumed')
                self._nw_timeline(name, task, data)
            play.engine.renew()
        return results

    def _nw_timeline(self, name, task, data):
        """Record a task's result as its host's timeline steps (rollout_state): here, so no callback is needed."""
        play = self._nw
        try:
            action = getattr(task, 'resolved_action', None) or task.action
            rollout_state.task_finished(play.record, name, task.get_name(), action, data, play.task_started.pop(name, None))
        except Exception as exc:  # pylint: disable=broad-except
            # the timeline is a report: a result it cannot read must not break the rollout
            display.vvv(PREFIX + 'no timeline step for a result: %s' % exc)

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

    # ------------------------------------------------------------------ hosts ending, and the admission

    def _nw_host_done(self, iterator, name):
        if name in self._tqm._unreachable_hosts:
            return True
        if self._blocked_hosts.get(name):
            return False
        return iterator.get_next_task_for_host(self._nw.hosts[name], peek=True)[1] is None

    def _nw_outcome(self, iterator, name, done=True):
        """ok / failed / removed (failed because its node was deleted) for a host; not ``done``: given up on, failed."""
        ok = done and not (name in self._tqm._unreachable_hosts or name in self._tqm._failed_hosts
                           or iterator.is_failed(self._nw.hosts[name]))
        return admission.OK if ok else admission.REMOVED if name in self._nw.removed else admission.FAILED

    def _nw_retire(self, iterator, name):
        # what StrategyBase.run's final pass does for the hosts it still sees: store the
        # final state (peeking does not), so is_failed/get_failed_hosts see the truth
        if name not in self._tqm._unreachable_hosts:
            iterator.get_next_task_for_host(self._nw.hosts[name])
        self._nw.parking.park(name)

    def _nw_ending(self, iterator):
        play = self._nw
        if iterator.end_play:
            play.ended = play.ended or 'end_play'
        elif self._tqm._terminated:
            play.ended = play.ended or 'terminated'
        return play.ended is not None

    def _nw_advance_batches(self, iterator):
        engine = self._nw.engine
        while True:
            # every pass: a finished host gives its slot back at once (other runs need not wait for this
            # batch); a batch is scored on its hosts' outcomes when its last host ends
            ended = dict((n, self._nw_outcome(iterator, n)) for n in engine.flying() if self._nw_host_done(iterator, n))
            scored = engine.finish(ended) if ended else []
            for comp, record in scored:
                self._nw_batch_scored(iterator, comp, record)
            if engine.active:
                if scored:
                    self._nw_restrict(iterator)
                return
            # the next wave; loop again in case it has nothing to do (a play without tasks),
            # since linear ends its loop when the hosts it is shown have no next task
            if not self._nw_admit_next(iterator):
                return

    def _nw_batch_scored(self, iterator, comp, record):
        names = record['hosts']
        for name in names:
            if self._nw_host_done(iterator, name):
                self._nw_retire(iterator, name)
        self._nw.parking.compact()
        self._nw.run_failed.update(record['failed'] + record.get('removed', []))
        self._nw_note_fatal(comp, names, record['failed'], 'batch %d' % record['number'])

    def _nw_slide_once(self, iterator):
        """Sliding mode: score the hosts that ended and refill the windows; True if any host was admitted."""
        play = self._nw
        ended = {}
        for name in list(play.engine.in_flight):
            if self._nw_host_done(iterator, name):
                ended[name] = self._nw_outcome(iterator, name)
                self._nw_retire(iterator, name)
        if ended:
            self._nw.parking.compact()
            self._nw_hosts_ended(ended)
            play.engine.finish(ended)
        admitted = self._nw_admit_next(iterator)
        if ended and not admitted:
            self._nw_restrict(iterator)
        return admitted

    def _nw_hosts_ended(self, outcomes):
        """Sliding mode: the run's own records of hosts that ended (any_errors_fatal stops admission at once)."""
        sched = self._nw.engine.scheduler
        for name, outcome in outcomes.items():
            failed = [] if outcome == admission.OK else [name]
            self._nw.run_failed.update(failed)
            self._nw_note_fatal(sched.compartment_of(name), [name], failed, 'sliding window')

    def _nw_note_fatal(self, comp, names, failed, where):
        """Remember the first failure on an any_errors_fatal / run_once task; forget the tasks of ``names``."""
        play = self._nw
        culprits = [n for n in failed if n in play.last_task and self._nw_is_fatal(*play.last_task[n])]
        for name in names:
            play.last_task.pop(name, None)
        if culprits and play.fatal_reason is None:
            play.fatal_reason = ('a task with any_errors_fatal or run_once failed on %s (compartment %s, %s)'
                                 % (', '.join(culprits), comp, where))

    def _nw_admit_next(self, iterator):
        """Start the next wave (batch mode) or fill the windows (sliding mode); True if any host was admitted."""
        play = self._nw
        if play.fatal_reason:
            play.engine.halt(play.fatal_reason)
        started = {}
        if not self._nw_ending(iterator):
            started = play.engine.admit()
            # a phase is over when it has nothing in flight and nothing to admit: the next one starts
            while not started and not play.engine.busy and self._nw_next_phase(iterator):
                started = play.engine.admit()
        for comp in sorted(started, key=play.engine.scheduler.index_of):
            # a host of several phases keeps its one place in free's list
            play.admitted.extend(n for n in started[comp] if n not in play.admitted)
            play.parking.unpark(started[comp])
        if started or not play.sliding:
            self._nw_restrict(iterator)
            self._nw_check_forks(len(play.engine.flying()))
        return bool(started)

    def _nw_restrict(self, iterator):
        """Scope the inventory to the hosts in flight, as PlaybookExecutor does for a serial batch.

        run_once results, a run_once failure, end_batch / end_play / clear_host_errors and
        ansible_play_batch all act on ``inventory.get_hosts(play.hosts)``; the restriction
        keeps them inside the batch and away from hosts that have not been admitted.
        """
        play = self._nw
        flying = set(play.engine.flying())
        self._inventory.restrict_to_hosts([h for h in play.play_hosts if h.name in flying])
        self._set_hosts_cache(iterator._play)

    def _nw_check_forks(self, in_flight):
        play = self._nw
        workers = len(self._workers)
        if in_flight > workers and not play.forks_warned:
            play.forks_warned = True
            display.warning(PREFIX + '%d hosts are in flight but only %d run at once (forks); raise forks (in AWX, the job '
                            'template\'s Forks) to at least the largest batch.' % (in_flight, workers))

    # ------------------------------------------------------------------ end of the play

    def _nw_finish(self, iterator, result):
        play = self._nw
        engine = play.engine
        # the loop can stop with hosts still in flight (2.16's any_errors_fatal returns early,
        # end_play, an interrupted run): score them now; a host that did not finish is failed
        outcomes, unfinished = {}, []
        for name in engine.flying():
            done = self._nw_host_done(iterator, name)
            outcomes[name] = self._nw_outcome(iterator, name, done)
            if not done:
                unfinished.append(name)
        if play.sliding:
            self._nw_hosts_ended(outcomes)
        for comp, record in engine.finish(outcomes, unfinished):
            if not play.sliding:
                self._nw_batch_scored(iterator, comp, record)
        self._nw_ending(iterator)
        if play.fatal_reason:
            engine.halt(play.fatal_reason)
        if play.ended is None and engine.scheduler.not_attempted():
            engine.halt('the play\'s run loop ended before the rollout finished')
        self._nw_end_phase()
        stats = self._tqm._stats
        for phase, hosts, dummy in play.phases[play.phase_index + 1:]:
            # phases that never started (the play ended, or any_errors_fatal stopped the rollout)
            names = [h.name for h in hosts if h.name not in play.prior_excluded]
            for name in names:
                stats.increment('skipped', name)
                if play.fatal_reason:
                    self._tqm._failed_hosts[name] = True
            if names:
                display.warning(PREFIX + '%d host(s) of %s never ran because %s: %s' % (
                    len(names), phase.name, play.fatal_reason or 'the play ended (%s)' % play.ended, ', '.join(names)))
        stats.set_custom_stats(CUSTOM_STAT, rollout_state.report(nodes=False))

        # 2.16's linear loop flags any_errors_fatal with RUN_FAILED_BREAK_PLAY (ending every later
        # play); 2.17+ only fails the batch. Use the 2.17+ behaviour on every version.
        result = int(result) & ~self._tqm.RUN_FAILED_BREAK_PLAY
        if result == self._tqm.RUN_OK:
            if self._tqm._unreachable_hosts:
                result = self._tqm.RUN_UNREACHABLE_HOSTS
            elif play.any_stopped or iterator.get_failed_hosts() or self._tqm._failed_hosts:
                result = self._tqm.RUN_FAILED_HOSTS
        return result

    def _nw_end_phase(self):
        """Close the current phase (Admission.close); count its hosts never admitted and the ones other runs failed."""
        play = self._nw
        if play.phase_closed:
            return
        play.phase_closed = True
        summary, elsewhere = play.engine.close(ended=play.ended)
        failed_elsewhere = sorted(n for n, outcome in elsewhere.items() if outcome == admission.FAILED)
        if elsewhere:
            display.display('NODEWRIGHT SHARED BUDGET: %d host(s) finished by other runs: %s%s' % (
                len(elsewhere), ', '.join(sorted(elsewhere)),
                ' (failed there: %s)' % ', '.join(failed_elsewhere) if failed_elsewhere else ''))
        # a phase deferred to the next window (or held) is not a stopped rollout; a compartment the policy stopped is
        stopped = play.engine.policy_stopped()
        not_attempted = summary['not_attempted']
        for name in not_attempted:
            self._tqm._stats.increment('skipped', name)  # listed in the recap instead of silently missing from it
        for name in failed_elsewhere + (not_attempted if stopped else []):
            # like a failed host (the fleet's rollout failed on it, or it never ran in a stopped rollout):
            # later plays and the retry file see it
            self._tqm._failed_hosts[name] = True
        play.run_failed.update(failed_elsewhere + not_attempted)
        if not_attempted:
            why = ('the rollout stopped' if stopped else 'the rollout was held (%s)' % summary['deferred']
                   if summary['deferred'] else 'the play ended (%s)' % play.ended)
            display.warning(PREFIX + '%d host(s) of %r were never admitted because %s: %s'
                            % (len(not_attempted), play.record.play, why, ', '.join(not_attempted)))
        play.any_stopped = play.any_stopped or stopped or play.engine.budget_failure is not None
        phase_hosts = [h.name for h in play.phases[play.phase_index][1]]
        play.phase_failed[play.phase.name] = bool(play.excluded) or any(n in play.run_failed for n in phase_hosts)


class StrategyModule(_BudgetedMixin, LinearStrategyModule):
    """Batch mode: the stock linear loop behind the admission gate."""


class SlidingStrategyModule(_BudgetedMixin, FreeStrategyModule):
    """Sliding mode: the stock free loop behind the admission gate (see StrategyModule.run)."""
