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
the strategy (plugins/strategy/budgeted.py) only hooks the stock loop to these, and talks to
``PlayPhases`` alone.

The play's state, by meaning: ``PlayLedger`` (what the whole play did: what its end and the recap read),
``PhaseRun`` (the current phase: its Admission, its report record, its hosts' tasks), play_rollout.PlayCore
(the ansible-core side: the same state the stock strategies touch, nothing else) and ``PlayChannels``
(what the rollout reaches outside ansible-core: the cluster, the rollout bus, the waiting tasks' mailbox).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import time

from ansible import context
from ansible.errors import AnsibleError
from ansible.module_utils.parsing.convert_bool import boolean
from ansible.template import Templar
from ansible.utils.display import Display

from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube as kube_api
from ansible_collections.nodewright.bridge.plugins.module_utils.api import slot_mailbox
from ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout.admission import FAILED, OK, REMOVED, Admission
from ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout import admission_display
from ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout import play_rollout
from ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout import rollout_config
from ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout import gate_checks
from ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout import protected_look
from ansible_collections.nodewright.bridge.plugins.plugin_utils.reporting import rollout_state
from ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout import budget_lease
from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution import core_internals
from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution import status_keeper

display = Display()

PREFIX = admission_display.PREFIX
CUSTOM_STAT = 'nodewright_rollout'


class PlayLedger(object):
    """What the whole play did, phase after phase: what later phases, the play's end (``finish``) and the recap read."""

    def __init__(self, prior_excluded):
        self.prior_excluded = prior_excluded  # failed or unreachable before the play
        self.ran = set()  # hosts that ran a phase (their iterator state is spent)
        self.run_failed = set()  # scored failed, or never admitted, in an earlier phase of this play
        self.removed = set()  # hosts whose node was deleted from the cluster (a result with node_deleted)
        self.phase_failed = {}  # phase name -> whether any of its hosts failed or never ran
        self.admitted = []  # every admitted name, in order, once (free needs a list that only grows)
        self.any_stopped = False  # a rollout of the play stopped (the policy, a gate, the shared budget)
        self.fatal_reason = None  # why an any_errors_fatal / run_once failure stopped the rollout
        self.ended = None  # why the play ended early (end_play, terminated)
        self.forks_warned = False

    def admit(self, names):
        """``names`` started: each keeps its one place in the list of admitted hosts."""
        self.admitted.extend(n for n in names if n not in self.admitted)


class PhaseRun(object):
    """One phase's run: the phase, its Admission, the hosts it leaves out, its rollout record, its hosts' tasks.

    A phase starts only when nothing of the one before is in flight, so the tasks of a run are its own.
    """

    def __init__(self, index, phase, excluded, record, admission):
        self.index = index  # the phase's place in the play's phases
        self.phase = phase
        self.excluded = excluded  # name -> why, the phase's hosts that do not take part
        self.record = record  # the rollout_state.Rollout of the phase
        self.admission = admission
        self.closed = False
        self.last_task = {}  # name -> (task, task_vars) of the last task queued for it
        self.task_start = {}  # name -> when its task in flight was queued (the timeline's task intervals)


class PlayChannels(object):
    """What a budgeted play's rollout reaches outside ansible-core: the cluster, the rollout bus, the tasks that wait
    for a batch slot, and the process that answers them."""

    def __init__(self, connection, parks, bus=None):
        self.connection = connection  # how the strategy reaches the API (shared budget, NotReady gate)
        # the strategy's API clients in this play (shared budget, NotReady gate, batch states): one per connection
        self.kube_session = kube_api.KubeSession()
        # where the play's rollouts are recorded and the rollout callback hears of them: the run's one bus (a test's own)
        self.bus = bus if bus is not None else rollout_state.BUS
        self.pid = os.getpid()  # the strategy's process (forked workers inherit its signal handler)
        # where hosts waiting for their protected pods say so (module_utils/api/slot_mailbox.py), in a play whose
        # rollouts give such a host's slot back (batches on the free loop, nodewright_park_protected); else None
        self.mailbox = slot_mailbox.Mailbox.create() if parks else None


class PlayPhases(object):
    """One budgeted play, as the strategy sees it: its phases, the current phase's run, and what its hosts did."""

    def __init__(self, core, phases, excluded, connection=None, check_mode=False, bus=None):
        self.core = core  # play_rollout.PlayCore
        self.name = core.play().get_name()
        self.phases = phases  # [(Phase, [Host], inputs)], in run order
        self.sliding = phases[0][0].settings.admission == 'sliding'  # the play's, the same for every phase
        self.free_loop = phases[0][0].settings.free_loop  # sliding, or batches without lockstep: the stock free loop
        self.check_mode = check_mode  # --check or a play in check mode: no shared budget, windows and gates only looked at
        self.ledger = PlayLedger(excluded)
        self.channels = PlayChannels(connection if connection is not None else {}, phases[0][0].settings.parks, bus=bus)
        self.run = None  # the current phase's PhaseRun

    @classmethod
    def prepare(cls, iterator, tqm, inventory, variable_manager, loader):
        """The play's rollout, read and checked; raises AnsibleError (every problem listed) before any host runs."""
        play = core_internals.play_of(iterator)
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
        core = play_rollout.PlayCore(iterator, tqm, variable_manager, loader, play_hosts)
        return cls(core, prepared, core.excluded_before(), connection=connection,
                   check_mode=bool(context.CLIARGS.get('check')) or play.check_mode is True)

    def label(self, comp=None):
        """A compartment as banners show it, with its phase when the play has phases; no compartment: the phase's
        name, else the play's."""
        phase_name = self.run.phase.name if self.run is not None else None
        if comp is None:
            return phase_name or self.name
        return comp if phase_name is None else '%s/%s' % (phase_name, comp)

    def ending(self):
        """Whether the play is ending (end_play, a terminated run); remembers why."""
        reason = self.core.ending_reason()
        if reason is not None:
            self.ledger.ended = self.ledger.ended or reason
        return self.ledger.ended is not None

    # ------------------------------------------------------------------ phases

    def start(self):
        """The play's start: every host state set aside until its host is admitted, and the first phase started."""
        self.core.parking.park_all()
        self.start_phase(0)

    def start_phase(self, index):
        """Admission for phase ``index``: its eligible hosts, its scheduler and Admission, its progress record."""
        phase, hosts, inputs = self.phases[index]
        excluded = self._excluded(phase, hosts)
        eligible = [h for h in hosts if h.name not in excluded]
        self._prepare_hosts(phase, eligible)
        settings = phase.settings
        nodes, pinned = rollout_config.node_inputs(settings, [i for i in inputs if i[0] not in excluded])
        scheduler = rollout_config.build_scheduler(settings, nodes, pinned, batch_states=phase.batch_state, cr_name=phase.name)
        title = self.name if phase.name is None else '%s: %s' % (self.name, phase.name)
        channels = self.channels
        record = channels.bus.start_rollout(title, settings.admission, rollout_config.compartment_summaries(scheduler),
                                            excluded)
        gates = gate_checks.gates_for(settings.gates, channels.connection, phase.selector, [h.name for h in eligible],
                                      session=channels.kube_session)
        keeper = None
        if phase.cr_status and not self.check_mode:
            keeper = status_keeper.BatchStateKeeper(kube_api.connection_params(dict(channels.connection)), phase.name,
                                                    session=channels.kube_session)
        self.run = PhaseRun(index, phase, excluded, record, Admission(
            scheduler, sliding=self.sliding, record=record, reporter=admission_display.Banners(self), windows=settings.windows,
            gates=gates, keeper=keeper, check_mode=self.check_mode, ending=self.ending, independent=settings.independent,
            protected_look=protected_look.look_for(phase.protected, channels.connection, session=channels.kube_session)))
        if phase.name is not None:
            display.banner('NODEWRIGHT ROLLOUT %s: %s' % (phase.name, admission_display.plural(len(eligible))), cows=False)
        if excluded:
            display.warning(PREFIX + '%d host(s) left out of the rollout of %r: %s'
                            % (len(excluded), title, ', '.join('%s (%s)' % item for item in sorted(excluded.items()))))
        self.ledger.ran.update(h.name for h in eligible)
        if settings.shared is not None and self.check_mode:
            display.display('NODEWRIGHT SHARED BUDGET %s: not taken in check mode (nothing is written)'
                            % (settings.shared.get('name') or phase.name))
        elif settings.shared is not None:
            self._join_budget(phase)
        self.run.admission.keep_batch_states()

    def _prepare_hosts(self, phase, eligible):
        """The phase's hosts made ready: a host of an earlier phase starts the play again; the phase's host vars set."""
        for host in eligible:
            if host.name in self.ledger.ran:
                # the host ran an earlier phase: it runs the play's tasks again, from the start,
                # roles included (a role runs once per host and play unless it allows duplicates)
                self.core.restart(host.name)
            variables = []
            if phase.name is not None:
                variables.append((rollout_config.HOSTVAR_PHASE, phase.name))
            variables.extend(phase.host_vars.items())
            if self.channels.mailbox is not None:
                variables.append((rollout_config.HOSTVAR_PARK, {
                    'dir': self.channels.mailbox.directory, 'host': host.name, 'pid': self.channels.pid,
                    'warn_after': phase.settings.wait_warning}))
            self.core.set_host_vars(host.name, variables)

    def _excluded(self, phase, hosts):
        """name -> why, for the hosts of ``phase`` that do not take part in it."""
        ledger, core = self.ledger, self.core
        return rollout_config.excluded_hosts(phase, [h.name for h in hosts], ledger.prior_excluded, ledger.phase_failed,
                                             lambda name: name in ledger.run_failed or core.failed(name), core.unreachable)

    def _join_budget(self, phase):
        """Register this run in the shared budget of the phase (a Lease per compartment); a failure stops the phase."""
        shared = phase.settings.shared
        admission = self.run.admission
        try:
            # the key: a CR's phase, its spec digest; a play of your own, the name (the --limit driver's too)
            admission.budget = budget_lease.for_rollout(
                dict(self.channels.connection, **shared), admission.scheduler, phase.settings.admission,
                shared.get('name') or phase.name, key=phase.budget_key, namespace=shared.get('namespace'),
                expiry=shared['slot_expiry'], session=self.channels.kube_session)
        except (kube_api.KubeError, budget_lease.BudgetError) as exc:
            admission.budget_failed(exc)
            return
        admission.join()

    def next_phase(self):
        """End the current phase; start the next one unless the play is ending. True if one started."""
        self.end_phase()
        if self.ledger.fatal_reason or self.ending() or self.run.index + 1 >= len(self.phases):
            return False
        self.start_phase(self.run.index + 1)
        return True

    def end_phase(self):
        """Close the current phase (Admission.close); count its hosts never admitted and the ones other runs failed."""
        run, ledger = self.run, self.ledger
        if run.closed:
            return
        run.closed = True
        summary, elsewhere = run.admission.close(ended=ledger.ended)
        failed_elsewhere = sorted(n for n, outcome in elsewhere.items() if outcome == FAILED)
        if elsewhere:
            display.display('NODEWRIGHT SHARED BUDGET: %d host(s) finished by other runs: %s%s' % (
                len(elsewhere), ', '.join(sorted(elsewhere)),
                ' (failed there: %s)' % ', '.join(failed_elsewhere) if failed_elsewhere else ''))
        # a phase deferred to the next window (or held) is not a stopped rollout; a compartment the policy stopped is
        stopped = run.admission.policy_stopped()
        not_attempted = summary['not_attempted']
        for name in not_attempted:
            self.core.count_skipped(name)  # listed in the recap instead of silently missing from it
        for name in failed_elsewhere + (not_attempted if stopped else []):
            # like a failed host (the fleet's rollout failed on it, or it never ran in a stopped rollout):
            # later plays and the retry file see it
            self.core.mark_failed(name)
        ledger.run_failed.update(failed_elsewhere + not_attempted)
        if not_attempted:
            why = ('the rollout stopped' if stopped else 'the rollout was held (%s)' % summary['deferred']
                   if summary['deferred'] else 'the play ended (%s)' % ledger.ended)
            display.warning(PREFIX + '%d host(s) of %r were never admitted because %s: %s'
                            % (len(not_attempted), run.record.play, why, ', '.join(not_attempted)))
        ledger.any_stopped = ledger.any_stopped or stopped or run.admission.budget_failure is not None
        phase_hosts = [h.name for h in self.phases[run.index][1]]
        ledger.phase_failed[run.phase.name] = bool(run.excluded) or any(n in ledger.run_failed for n in phase_hosts)

    # ------------------------------------------------------------------ tasks, and hosts that ended

    def task_queued(self, name, task, task_vars):
        """A task was queued for host ``name``; whether it was fatal is worked out only if the host fails."""
        self.run.last_task[name] = (task, task_vars)
        self.run.task_start[name] = time.time()

    def task_results(self, results):
        """A pass's task results: deleted nodes, a CR held during the run, the timeline's steps."""
        run = self.run
        for result in results:
            host, task, data = core_internals.result_parts(result)
            name = host.name
            if data.get('failed') and data.get('node_deleted'):
                self.ledger.removed.add(name)
            if data.get('held') in rollout_config.HOLDING:
                run.admission.defer(data.get('msg') or 'the CR was %s' % data['held'], title='HELD',
                                    until='a run after the CR is resumed')
            try:
                action = getattr(task, 'resolved_action', None) or task.action
                rollout_state.task_finished(run.record, name, task.get_name(), action, data, run.task_start.pop(name, None))
            except Exception as exc:  # pylint: disable=broad-except
                # the timeline is a report: a result it cannot read must not break the rollout
                display.vvv(PREFIX + 'no timeline step for a result: %s' % exc)
        run.admission.renew()

    # ------------------------------------------------------------------ what the strategy asks (it reaches no further)

    def host(self, name):
        """The Host named ``name``."""
        return self.core.hosts[name]

    def admitted_hosts(self):
        """Every host admitted so far in the play, in order, once (the free loop's list: it only grows)."""
        return [self.core.hosts[n] for n in self.ledger.admitted]

    def flying_hosts(self):
        """The hosts in flight that are reachable (the linear loop's hosts for this pass)."""
        return [self.core.hosts[n] for n in self.flying() if not self.core.unreachable(n)]

    def restriction(self, in_flight=True):
        """The hosts the inventory is scoped to: those in flight, or at the end every host of the play (play order)."""
        if not in_flight:
            return self.core.play_hosts
        flying = set(self.flying())
        return [h for h in self.core.play_hosts if h.name in flying]

    def ansible_play(self):
        """The ansible-core Play being run."""
        return self.core.play()

    def unreachable(self, name):
        """Whether host ``name`` is unreachable in this run."""
        return self.core.unreachable(name)

    def outcome(self, name, done=True):
        """ok / failed / removed (failed because its node was deleted) for a host; not ``done``: given up on, failed."""
        ok = done and not self.core.host_failed(name)
        return OK if ok else REMOVED if name in self.ledger.removed else FAILED

    def retire(self, names):
        """Hosts done in their batch or window: their final state stored and set aside until the play's end."""
        self.core.retire(names)

    def flying(self):
        """The hosts in flight in the current phase (batches or windows, and parked hosts whose task still runs)."""
        return self.run.admission.flying()

    def batches_in_flight(self):
        """Batch mode: whether a batch of the current phase is in flight (the linear loop's waves wait for none)."""
        return bool(self.run.admission.active)

    def window_hosts(self):
        """Sliding mode: the hosts in the windows now."""
        return list(self.run.admission.in_flight)

    def compartment_order(self, comp):
        """The place of ``comp`` in the policy's order (banners and the loop's list follow it)."""
        return self.run.admission.scheduler.index_of(comp)

    def compartment_rollout(self, comp):
        """The current phase's rollout of compartment ``comp`` (rollout_scheduler.CompartmentRollout)."""
        return self.run.admission.scheduler.compartment(comp).rollout

    def admit(self):
        """What starts now, ``{comp: [names]}``: the current phase's next batch or window room; a phase with nothing in
        flight and nothing to admit is over and the next one starts. A fatal failure stops admission first."""
        if self.ledger.fatal_reason:
            self.run.admission.halt(self.ledger.fatal_reason)
        started = {}
        if not self.ending():
            started = self.run.admission.admit()
            while not started and not self.run.admission.busy and self.next_phase():
                started = self.run.admission.admit()
        return started

    def started(self, started):
        """Hosts admission started (``{comp: [names]}``): admitted for good, their states back in the iterator."""
        for comp in sorted(started, key=self.compartment_order):
            # a host of several phases keeps its one place in free's list
            self.ledger.admit(started[comp])
            self.core.parking.unpark(started[comp])

    def warn_forks(self, in_flight, workers):
        """Warn once when more hosts are in flight than ``forks`` runs at once."""
        if in_flight > workers and not self.ledger.forks_warned:
            self.ledger.forks_warned = True
            display.warning(PREFIX + '%d hosts are in flight but only %d run at once (forks); raise forks (in AWX, the job '
                            'template\'s Forks) to at least the largest batch.' % (in_flight, workers))

    def hosts_finished(self, outcomes, unfinished=()):
        """Hosts in flight ended (``{name: ok | failed | removed}``; ``unfinished``: given up on): the scored records."""
        return self.run.admission.finish(outcomes, unfinished)

    def leave_budget(self):
        """Ctrl-C or an error ended the loop: this run's unfinished nodes go back to the shared budget (recorded)."""
        if self.run is not None and self.run.admission.budget is not None:
            self.run.admission.leave()

    def abandon_budget(self):
        """SIGTERM, in the strategy's own process: leave the shared budget at once. True if there was one."""
        return os.getpid() == self.channels.pid and self.run is not None and self.run.admission.abandon()

    def slots_given_back(self):
        """What hosts waiting for their protected pods said since the last pass (slot_mailbox): a host that parks
        gives its slot to the next host of its compartment; one whose pods are gone takes a slot of its compartment's
        next batch (admission.py). Returns the hosts that started in parked hosts' places, ``{comp: [names]}``."""
        started = {}
        mailbox = self.channels.mailbox
        for name, kind, payload in mailbox.read() if mailbox is not None else ():
            if kind == slot_mailbox.PARK:
                for comp, names in self.run.admission.park(name, payload.get('pods') or (), payload.get('since')).items():
                    started.setdefault(comp, []).extend(names)
            else:
                self.run.admission.rejoin(name)
        return started

    def answer_waiting(self):
        """Tell the waiting tasks what the admission decided (a slot is theirs, or the rollout stopped)."""
        mailbox = self.channels.mailbox
        if mailbox is None:
            return
        for name, go, reason in self.run.admission.take_answers():
            mailbox.answer(name, go, reason)

    def give_back(self):
        """The end of the play: every host state set aside goes back to the iterator (TQM reads the failed hosts from
        them), and a task still waiting for a batch slot learns that none will come (the mailbox goes)."""
        self.core.parking.give_back()
        if self.channels.mailbox is not None:
            self.channels.mailbox.close()

    def scored(self, comp, names, failed, where, removed=()):
        """Hosts of this run scored (a batch, or a host leaving a sliding window): remember the failed ones.

        The first failure on an any_errors_fatal / run_once task stops the rollout, as linear stops the play.
        """
        ledger, last_task = self.ledger, self.run.last_task
        ledger.run_failed.update(failed)
        ledger.run_failed.update(removed)
        culprits = [n for n in failed if n in last_task and self._is_fatal(*last_task[n])]
        for name in names:
            last_task.pop(name, None)
        if culprits and ledger.fatal_reason is None:
            ledger.fatal_reason = ('a task with any_errors_fatal or run_once failed on %s (compartment %s, %s)'
                                   % (', '.join(culprits), comp, where))

    def hosts_ended(self, outcomes):
        """Sliding mode: hosts that left their window, each scored on its own."""
        sched = self.run.admission.scheduler
        for name, outcome in outcomes.items():
            self.scored(sched.compartment_of(name), [name], [] if outcome == OK else [name], 'sliding window')

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
                run_once = Templar(loader=self.core.loader, variables=task_vars).template(run_once)
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
        ledger, admission = self.ledger, self.run.admission
        if ledger.fatal_reason:
            admission.halt(ledger.fatal_reason)
        if ledger.ended is None and admission.scheduler.not_attempted():
            admission.halt('the play\'s run loop ended before the rollout finished')
        self.end_phase()
        for phase, hosts, dummy in self.phases[self.run.index + 1:]:
            # phases that never started (the play ended, or any_errors_fatal stopped the rollout)
            names = [h.name for h in hosts if h.name not in ledger.prior_excluded]
            for name in names:
                self.core.count_skipped(name)
                if ledger.fatal_reason:
                    self.core.mark_failed(name)
            if names:
                display.warning(PREFIX + '%d host(s) of %s never ran because %s: %s' % (
                    len(names), phase.name, ledger.fatal_reason or 'the play ended (%s)' % ledger.ended, ', '.join(names)))
        self.core.set_custom_stat(CUSTOM_STAT, self.channels.bus.report(nodes=False))
        return self.core.result_code(result, ledger.any_stopped)
