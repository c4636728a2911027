# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""A budgeted play's rollout, phase by phase: what the budgeted strategy keeps between the stock loop's passes.

``PlayPhases.prepare`` reads the play (play_rollout.rollout_phases: every phase checked before any host
runs); ``start_phase`` picks a phase's eligible hosts and builds its Admission (admission.py) with its
windows, gates, shared budget and batch-state keeper; ``end_phase`` closes it and tells ansible-core
what it means (recap counts, failed hosts for later plays); ``finish`` accounts for the phases that
never started and gives the play's result code. Which hosts may start and when is the Admission's;
the strategy (plugins/strategy/budgeted.py) only hooks the stock loop to these.

It touches the same ansible-core state the stock strategies touch (the iterator, TQM's failed and
unreachable hosts and stats, the variable manager), nothing else.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import time

from ansible import context
from ansible.errors import AnsibleError
from ansible.executor.play_iterator import HostState
from ansible.module_utils.parsing.convert_bool import boolean
from ansible.template import Templar
from ansible.utils.display import Display

from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube as kube_api
from ansible_collections.nodewright.bridge.plugins.module_utils.api import slot_mailbox
from ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout import admission
from ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout import admission_display
from ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout import play_rollout
from ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout import rollout_config
from ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout import gate_checks
from ansible_collections.nodewright.bridge.plugins.plugin_utils.reporting import rollout_state
from ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout import budget_lease
from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution import status_keeper

display = Display()

PREFIX = admission_display.PREFIX
CUSTOM_STAT = 'nodewright_rollout'
# A node_update result that says the CR was paused or disabled during the run: no new pod started, and
# nothing more of the phase may start (the operator starts no pod for such a CR).
HOLDING = ('paused', 'disabled')


class PlayPhases(object):
    """One budgeted play: its phases, the current phase's Admission, and what the play's hosts did."""

    def __init__(self, iterator, tqm, variable_manager, loader, phases, hosts, play_hosts, excluded, bus=None):
        self.iterator, self.tqm, self.variable_manager, self.loader = iterator, tqm, variable_manager, loader
        self.name = iterator._play.get_name()
        self.phases = phases  # [(Phase, [Host], inputs)], in run order
        self.phase_index = -1
        self.phase = None
        self.phase_closed = False
        self.sliding = phases[0][0].settings.admission == 'sliding'  # the play's, the same for every phase
        self.free_loop = phases[0][0].settings.free_loop  # sliding, or batches without lockstep: the stock free loop
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
        self.task_start = {}  # name -> when its task in flight was queued (the timeline's task intervals)
        self.removed = set()  # hosts whose node was deleted from the cluster (a result with node_deleted)
        self.fatal_reason = None
        self.ended = None
        self.forks_warned = False
        self.record = None
        self.parking = play_rollout.HostParking(iterator)  # the host states not in flight, kept aside
        self.connection = {}  # how the strategy reaches the API (shared budget, NotReady gate)
        # the strategy's API clients in this play (shared budget, NotReady gate, batch states): one per connection
        self.kube_session = kube_api.KubeSession()
        # where the play's rollouts are recorded and the rollout callback hears of them: the run's one bus (a test's own)
        self.bus = bus if bus is not None else rollout_state.BUS
        self.check_mode = False  # --check or a play in check mode: no shared budget, windows and gates only looked at
        self.pid = os.getpid()  # the strategy's process (forked workers inherit its signal handler)
        # where hosts waiting for their protected pods say so (module_utils/api/slot_mailbox.py), in a play whose
        # rollouts give such a host's slot back (batches on the free loop, nodewright_park_protected); else None
        self.mailbox = None
        if phases[0][0].settings.parks:
            self.mailbox = slot_mailbox.Mailbox.create()

    @classmethod
    def prepare(cls, iterator, tqm, inventory, variable_manager, loader):
        """The play's rollout, read and checked; raises AnsibleError (every problem listed) before any host runs."""
        play = iterator._play
        name = play.get_name()
        if play.serial:
            raise AnsibleError(PREFIX + 'play %r sets serial; the rollout policy chooses the batches. '
                               'Remove serial (or use another strategy).' % name)
        if play.max_fail_percentage is not None:
            display.warning(PREFIX + 'max_fail_percentage is ignored in play %r; the policy\'s batchThreshold, '
                            'failureThreshold and safetyLimit decide when the rollout stops.' % name)
            play.max_fail_percentage = None  # TQM's per-run copy of the play; linear reads it
        play_hosts = inventory.get_hosts(play.hosts, order=play.order)
        prepared, connection = play_rollout.rollout_phases(play, play_hosts, variable_manager, loader)
        for message in prepared[0][0].settings.deprecations:  # the names are the play's, not a phase's
            display.deprecated(PREFIX + message, version='2.0.0', collection_name='nodewright.bridge')
        excluded = {}
        for host in play_hosts:
            if host.name in tqm._unreachable_hosts:
                excluded[host.name] = 'unreachable in an earlier play'
            elif iterator.is_failed(host):
                excluded[host.name] = 'failed in an earlier play'
        phases = cls(iterator, tqm, variable_manager, loader, prepared, dict((h.name, h) for h in play_hosts), play_hosts, excluded)
        phases.connection = connection
        phases.check_mode = bool(context.CLIARGS.get('check')) or play.check_mode is True
        return phases

    def label(self, comp):
        """A compartment as banners show it: with its phase when the play has phases."""
        return comp if self.phase is None or self.phase.name is None else '%s/%s' % (self.phase.name, comp)

    def ending(self):
        """Whether the play is ending (end_play, a terminated run); remembers why."""
        if self.iterator.end_play:
            self.ended = self.ended or 'end_play'
        elif self.tqm._terminated:
            self.ended = self.ended or 'terminated'
        return self.ended is not None

    # ------------------------------------------------------------------ phases

    def start_phase(self, index):
        """Admission for phase ``index``: its eligible hosts, its scheduler and Admission, its progress record."""
        phase, hosts, inputs = self.phases[index]
        self.phase_index, self.phase, self.phase_closed = index, phase, False
        excluded = self._excluded(phase, hosts)
        eligible = [h for h in hosts if h.name not in excluded]
        for host in eligible:
            if host.name in self.ran:
                # the host ran an earlier phase: it runs the play's tasks again, from the start,
                # roles included (a role runs once per host and play unless it allows duplicates)
                self.parking.park(host.name, HostState(blocks=self.iterator._blocks))
                forget_roles(self.iterator._play, host.name)
            if phase.name is not None:
                self.variable_manager.set_host_variable(host.name, rollout_config.HOSTVAR_PHASE, phase.name)
            for variable, value in phase.host_vars.items():
                self.variable_manager.set_host_variable(host.name, variable, value)
            if self.mailbox is not None:
                self.variable_manager.set_host_variable(host.name, rollout_config.HOSTVAR_PARK, {
                    'dir': self.mailbox.directory, 'host': host.name, 'pid': self.pid,
                    'warn_after': phase.settings.wait_warning})
        settings = phase.settings
        nodes, pinned = rollout_config.node_inputs(settings, [i for i in inputs if i[0] not in excluded])
        scheduler = rollout_config.build_scheduler(settings, nodes, pinned, batch_states=phase.batch_state, cr_name=phase.name)
        self.excluded = excluded
        title = self.name if phase.name is None else '%s: %s' % (self.name, phase.name)
        self.record = self.bus.start_rollout(title, settings.admission, rollout_config.compartment_summaries(scheduler),
                                             excluded)
        gates = gate_checks.gates_for(settings.gates, self.connection, phase.selector, [h.name for h in eligible],
                                      session=self.kube_session)
        keeper = None
        if phase.cr_status and not self.check_mode:
            keeper = status_keeper.BatchStateKeeper(kube_api.connection_params(dict(self.connection)), phase.name,
                                                    session=self.kube_session)
        self.engine = admission.Admission(scheduler, sliding=self.sliding, record=self.record, reporter=admission_display.Banners(self),
                                          windows=settings.windows, gates=gates, keeper=keeper, check_mode=self.check_mode,
                                          ending=self.ending, independent=settings.independent)
        if phase.name is not None:
            display.banner('NODEWRIGHT ROLLOUT %s: %s' % (phase.name, admission_display.plural(len(eligible))), cows=False)
        if excluded:
            display.warning(PREFIX + '%d host(s) left out of the rollout of %r: %s'
                            % (len(excluded), title, ', '.join('%s (%s)' % item for item in sorted(excluded.items()))))
        self.ran.update(h.name for h in eligible)
        if settings.shared is not None and self.check_mode:
            display.display('NODEWRIGHT SHARED BUDGET %s: not taken in check mode (nothing is written)'
                            % (settings.shared.get('name') or phase.name))
        elif settings.shared is not None:
            self._join_budget(phase)
        self.engine.keep_batch_states()

    def _excluded(self, phase, hosts):
        """name -> why, for the hosts of ``phase`` that do not take part in it."""
        blocked = [a for a in phase.after_all if self.phase_failed.get(a)]
        excluded = {}
        for host in hosts:
            if host.name in self.prior_excluded:
                excluded[host.name] = self.prior_excluded[host.name]
            elif blocked:
                excluded[host.name] = 'waits until %s succeeded on every host' % ', '.join(blocked)
            elif host.name in self.tqm._unreachable_hosts:
                excluded[host.name] = 'unreachable in an earlier phase'
            elif host.name in self.run_failed or host.name in self.tqm._failed_hosts:
                excluded[host.name] = 'failed in an earlier phase'
        return excluded

    def _join_budget(self, phase):
        """Register this run in the shared budget of the phase (a Lease per compartment); a failure stops the phase."""
        shared = phase.settings.shared
        try:
            # the key: a CR's phase, its spec digest; a play of your own, the name (the --limit driver's too)
            self.engine.budget = budget_lease.for_rollout(
                dict(self.connection, **shared), self.engine.scheduler, phase.settings.admission,
                shared.get('name') or phase.name, key=phase.budget_key, namespace=shared.get('namespace'),
                expiry=shared['slot_expiry'], session=self.kube_session)
        except (kube_api.KubeError, budget_lease.BudgetError) as exc:
            self.engine.budget_failed(exc)
            return
        self.engine.join()

    def next_phase(self):
        """End the current phase; start the next one unless the play is ending. True if one started."""
        self.end_phase()
        if self.fatal_reason or self.ending() or self.phase_index + 1 >= len(self.phases):
            return False
        self.start_phase(self.phase_index + 1)
        return True

    def end_phase(self):
        """Close the current phase (Admission.close); count its hosts never admitted and the ones other runs failed."""
        if self.phase_closed:
            return
        self.phase_closed = True
        summary, elsewhere = self.engine.close(ended=self.ended)
        failed_elsewhere = sorted(n for n, outcome in elsewhere.items() if outcome == admission.FAILED)
        if elsewhere:
            display.display('NODEWRIGHT SHARED BUDGET: %d host(s) finished by other runs: %s%s' % (
                len(elsewhere), ', '.join(sorted(elsewhere)),
                ' (failed there: %s)' % ', '.join(failed_elsewhere) if failed_elsewhere else ''))
        # a phase deferred to the next window (or held) is not a stopped rollout; a compartment the policy stopped is
        stopped = self.engine.policy_stopped()
        not_attempted = summary['not_attempted']
        for name in not_attempted:
            self.tqm._stats.increment('skipped', name)  # listed in the recap instead of silently missing from it
        for name in failed_elsewhere + (not_attempted if stopped else []):
            # like a failed host (the fleet's rollout failed on it, or it never ran in a stopped rollout):
            # later plays and the retry file see it
            self.tqm._failed_hosts[name] = True
        self.run_failed.update(failed_elsewhere + not_attempted)
        if not_attempted:
            why = ('the rollout stopped' if stopped else 'the rollout was held (%s)' % summary['deferred']
                   if summary['deferred'] else 'the play ended (%s)' % self.ended)
            display.warning(PREFIX + '%d host(s) of %r were never admitted because %s: %s'
                            % (len(not_attempted), self.record.play, why, ', '.join(not_attempted)))
        self.any_stopped = self.any_stopped or stopped or self.engine.budget_failure is not None
        phase_hosts = [h.name for h in self.phases[self.phase_index][1]]
        self.phase_failed[self.phase.name] = bool(self.excluded) or any(n in self.run_failed for n in phase_hosts)

    # ------------------------------------------------------------------ tasks, and hosts that ended

    def task_queued(self, name, task, task_vars):
        """A task was queued for host ``name``; whether it was fatal is worked out only if the host fails."""
        self.last_task[name] = (task, task_vars)
        self.task_start[name] = time.time()

    def task_results(self, results):
        """A pass's task results: deleted nodes, a CR held during the run, the timeline's steps."""
        for result in results:
            name, task, data = result_parts(result)
            if data.get('failed') and data.get('node_deleted'):
                self.removed.add(name)
            if data.get('held') in HOLDING:
                self.engine.defer(data.get('msg') or 'the CR was %s' % data['held'], title='HELD',
                                  until='a run after the CR is resumed')
            try:
                action = getattr(task, 'resolved_action', None) or task.action
                rollout_state.task_finished(self.record, name, task.get_name(), action, data, self.task_start.pop(name, None))
            except Exception as exc:  # pylint: disable=broad-except
                # the timeline is a report: a result it cannot read must not break the rollout
                display.vvv(PREFIX + 'no timeline step for a result: %s' % exc)
        self.engine.renew()

    # ------------------------------------------------------------------ what the strategy asks (it reaches no further)

    def flying(self):
        """The hosts in flight in the current phase (batches or windows, and parked hosts whose task still runs)."""
        return self.engine.flying()

    def batches_in_flight(self):
        """Batch mode: whether a batch of the current phase is in flight (the linear loop's waves wait for none)."""
        return bool(self.engine.active)

    def window_hosts(self):
        """Sliding mode: the hosts in the windows now."""
        return list(self.engine.in_flight)

    def compartment_order(self, comp):
        """The place of ``comp`` in the policy's order (banners and the loop's list follow it)."""
        return self.engine.scheduler.index_of(comp)

    def admit(self):
        """What starts now, ``{comp: [names]}``: the current phase's next batch or window room; a phase with nothing in
        flight and nothing to admit is over and the next one starts. A fatal failure stops admission first."""
        if self.fatal_reason:
            self.engine.halt(self.fatal_reason)
        started = {}
        if not self.ending():
            started = self.engine.admit()
            while not started and not self.engine.busy and self.next_phase():
                started = self.engine.admit()
        return started

    def hosts_finished(self, outcomes, unfinished=()):
        """Hosts in flight ended (``{name: ok | failed | removed}``; ``unfinished``: given up on): the scored records."""
        return self.engine.finish(outcomes, unfinished)

    def leave_budget(self):
        """Ctrl-C or an error ended the loop: this run's unfinished nodes go back to the shared budget (recorded)."""
        if self.engine is not None and self.engine.budget is not None:
            self.engine.leave()

    def abandon_budget(self):
        """SIGTERM, in the strategy's own process: leave the shared budget at once. True if there was one."""
        return os.getpid() == self.pid and self.engine is not None and self.engine.abandon()

    def slots_given_back(self):
        """What hosts waiting for their protected pods said since the last pass (slot_mailbox): a host that parks
        gives its slot to the next host of its compartment; one whose pods are gone takes a slot of its compartment's
        next batch (admission.py). Returns the hosts that started in parked hosts' places, ``{comp: [names]}``."""
        started = {}
        for name, kind, payload in self.mailbox.read() if self.mailbox is not None else ():
            if kind == slot_mailbox.PARK:
                for comp, names in self.engine.park(name, payload.get('pods') or (), payload.get('since')).items():
                    started.setdefault(comp, []).extend(names)
            else:
                self.engine.rejoin(name)
        return started

    def answer_waiting(self):
        """Tell the waiting tasks what the admission decided (a slot is theirs, or the rollout stopped)."""
        if self.mailbox is None:
            return
        for name, go, reason in self.engine.take_answers():
            self.mailbox.answer(name, go, reason)

    def give_back(self):
        """The end of the play: every host state set aside goes back to the iterator (TQM reads the failed hosts from
        them), and a task still waiting for a batch slot learns that none will come (the mailbox goes)."""
        self.parking.give_back()
        if self.mailbox is not None:
            self.mailbox.close()

    def scored(self, comp, names, failed, where, removed=()):
        """Hosts of this run scored (a batch, or a host leaving a sliding window): remember the failed ones.

        The first failure on an any_errors_fatal / run_once task stops the rollout, as linear stops the play.
        """
        self.run_failed.update(failed)
        self.run_failed.update(removed)
        culprits = [n for n in failed if n in self.last_task and self._is_fatal(*self.last_task[n])]
        for name in names:
            self.last_task.pop(name, None)
        if culprits and self.fatal_reason is None:
            self.fatal_reason = ('a task with any_errors_fatal or run_once failed on %s (compartment %s, %s)'
                                 % (', '.join(culprits), comp, where))

    def hosts_ended(self, outcomes):
        """Sliding mode: hosts that left their window, each scored on its own."""
        sched = self.engine.scheduler
        for name, outcome in outcomes.items():
            self.scored(sched.compartment_of(name), [name], [] if outcome == admission.OK else [name], 'sliding window')

    def _is_fatal(self, task, task_vars):
        """Would linear treat a failure of this task as fatal for the batch (any_errors_fatal / run_once)?"""
        if task.ignore_errors:
            return False
        if task.any_errors_fatal:
            return True
        if self.free_loop:
            return False  # free runs run_once tasks on every host; a failure is an ordinary failure
        run_once = task.run_once
        if isinstance(run_once, str):
            try:
                run_once = Templar(loader=self.loader, variables=task_vars).template(run_once)
            except AnsibleError:
                return False  # the worker reports the templating error as the task's failure
        try:
            return boolean(run_once, strict=False)
        except TypeError:
            return False

    # ------------------------------------------------------------------ end of the play

    def finish(self, result):
        """The play's result code, after its last phase ended: the phases that never started are counted."""
        self.ending()
        if self.fatal_reason:
            self.engine.halt(self.fatal_reason)
        if self.ended is None and self.engine.scheduler.not_attempted():
            self.engine.halt('the play\'s run loop ended before the rollout finished')
        self.end_phase()
        tqm = self.tqm
        for phase, hosts, dummy in self.phases[self.phase_index + 1:]:
            # phases that never started (the play ended, or any_errors_fatal stopped the rollout)
            names = [h.name for h in hosts if h.name not in self.prior_excluded]
            for name in names:
                tqm._stats.increment('skipped', name)
                if self.fatal_reason:
                    tqm._failed_hosts[name] = True
            if names:
                display.warning(PREFIX + '%d host(s) of %s never ran because %s: %s' % (
                    len(names), phase.name, self.fatal_reason or 'the play ended (%s)' % self.ended, ', '.join(names)))
        tqm._stats.set_custom_stats(CUSTOM_STAT, self.bus.report(nodes=False))
        # 2.16's linear loop flags any_errors_fatal with RUN_FAILED_BREAK_PLAY (ending every later
        # play); 2.17+ only fails the batch. Use the 2.17+ behaviour on every version.
        result = int(result) & ~tqm.RUN_FAILED_BREAK_PLAY
        if result == tqm.RUN_OK:
            if tqm._unreachable_hosts:
                result = tqm.RUN_UNREACHABLE_HOSTS
            elif self.any_stopped or self.iterator.get_failed_hosts() or tqm._failed_hosts:
                result = tqm.RUN_FAILED_HOSTS
        return result


def result_parts(result):
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


def forget_roles(play, host_name):
    """Let ``host_name`` run the play's roles again (a later phase), as if it had not run them in this play."""
    for roles in (getattr(play, 'role_cache', None) or {}).values():
        for role in roles if isinstance(roles, list) else [roles]:
            for record in (getattr(role, '_completed', None), getattr(role, '_had_task_run', None)):
                if isinstance(record, dict):
                    record.pop(host_name, None)
