# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""The apply playbook's rollout without the budgeted strategy: one task on the controller drives every phase.

Why: ansible-core 2.19+ deprecates strategy plugins outside ansible.builtin (ansible/ansible #84725, no
replacement planned). When the budgeted strategy cannot be loaded, or ``nodewright_rollout_strategy: builtin``
says so, apply's rollout play runs on the stock linear strategy and its first task (the ``rollout_run`` action,
run once on the controller) drives the same rollout as the strategy would: the same phases and the same hosts
left out of them (rollout_config.excluded_hosts), the same Admission (batches per compartment, windows, gates,
the shared budget, the CR's batch states), each admitted node's node_update sequence in this process
(venue.BatchThreads). Every host then reports its own node's result as one task (recap, retry file and exit
code as with the strategy).

What it does not do: give a node's batch slot back while the node waits for its protected pods (the node
keeps its slot, as the operator's nodes do: docs/strategy.md), admit nodes one by one in a sliding window
(``nodewright_admission: sliding`` runs in batches, with a warning), or show each node's task as it ends
(the results come when the rollout ends).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube as kube_api
from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution import status_keeper
from ansible_collections.nodewright.bridge.plugins.plugin_utils.reporting import rollout_state
from ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout import budget_lease
from ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout import gate_checks
from ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout import protected_look
from ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout import limit_driver
from ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout import rollout_config
from ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout.admission import FAILED, Admission

NODE_UPDATE = 'nodewright.bridge.node_update'
NEVER_ADMITTED = 'never admitted'
# the apply playbook's variables a node's update reads: the CR its phase rolls out, the runtimeRequired CRs of the node
PHASE_CR = 'nw_apply_cr'
HOSTVAR_RUNTIME_REQUIRED = 'nodewright_runtime_required_crs'


def node_options(common, phase, name, host_vars):
    """node_update's arguments for host ``name`` in ``phase``: ``common`` (every node's) with the node's own, mapped
    as roles/node/tasks/main.yml maps them for a host of the strategy (tests/unit keeps the two in step)."""
    options = dict(common, node=name)
    planned = phase.host_vars.get(PHASE_CR)
    if planned is not None:
        options.pop('cr', None)
        options.pop('cr_name', None)
        if planned.get('docs'):
            options['cr'] = planned['docs']
        if planned.get('name'):
            options['cr_name'] = planned['name']
        if planned.get('rolling') is not None:
            options['take_over'] = name in planned['rolling']
        if planned.get('identity'):
            options['cr_identity'] = planned['identity']
    if host_vars.get(HOSTVAR_RUNTIME_REQUIRED) is not None:
        options['runtime_required_crs'] = host_vars[HOSTVAR_RUNTIME_REQUIRED]
    return options


def invalid_options(prepared, validate):
    """Every host's options checked before any node is touched: ``['host: why']`` (empty when all are valid).
    ``validate(phase, name)`` returns ``(params, connection)`` or ``(None, failed result)``."""
    problems = []
    for phase, names, dummy in prepared:
        for name in names:
            params, invalid = validate(phase, name)
            if params is None:
                where = '' if phase.name is None else ' (%s)' % phase.name
                problems.append('%s%s: %s' % (name, where, invalid.get('msg') or invalid))
    return problems


def prepare_phases(values, play_hosts, host_vars_of, read_file=None):
    """``[(Phase, [name], inputs)]`` for every phase of the play variables ``values`` over ``play_hosts`` (names).

    ``host_vars_of(name)``: a host's variables (its compartment and labels, read only for a policy with
    compartments the phase does not assign). Raises RolloutConfigError listing every problem of every phase.
    """
    def inputs_of(phase, names):
        # the phase's compartment, else (a policy with compartments) the host's variables, as play_rollout.host_inputs
        inputs = []
        for name in names:
            compartment, labels = phase.compartments.get(name), None
            if compartment is None and phase.settings.has_compartments:
                host_vars = host_vars_of(name)
                compartment = host_vars.get(rollout_config.HOSTVAR_COMPARTMENT)
                labels = host_vars.get(rollout_config.HOSTVAR_LABELS)
            inputs.append((name, compartment, labels))
        return inputs
    return rollout_config.prepare_phases(rollout_config.parse_phases(values, read_file=read_file), list(play_hosts),
                                         inputs_of)


class BuiltinRollout(object):
    """Every phase of one rollout play, one after the other, each admitted by an Admission and run by ``runner``.

    ``runner``: ``run_batch(phase, names) -> {name: result}`` (venue.BatchThreads); ``connection``: the API
    connection of the shared budget, the NotReady gate and the batch states; ``echo(line)``: progress lines.
    """

    def __init__(self, play_name, runner, connection, echo, check_mode=False, prior_excluded=None):
        self.play_name = play_name
        self.runner = runner
        self.connection = connection
        self.echo = echo
        self.check_mode = check_mode
        self.bus = rollout_state.RolloutBus()  # this task's rollouts: the result carries them to the report
        self.session = kube_api.KubeSession()
        self.prior_excluded = dict(prior_excluded or {})
        self.results = {}  # name -> the node's result (the last phase that ran it)
        self.failed = set()  # scored failed, or never admitted in a stopped rollout (later phases leave them out)
        self.phase_failed = {}
        self.never_admitted = {}  # name -> why (a stopped rollout: failed; deferred or held: skipped)
        self.stopped = False
        self.budget_failure = None

    def run(self, prepared):
        """Run the ``prepare_phases`` result; the task's result (``nodes``, ``rollouts``, ``stopped``...)."""
        for phase, names, inputs in prepared:
            if phase.settings.admission == 'sliding':
                self.echo('nodewright: warning: %s: nodewright_admission sliding runs in batches without the budgeted '
                          'strategy' % (phase.name or self.play_name))
            self.run_phase(phase, names, inputs)
        return self.result()

    def run_phase(self, phase, names, inputs):
        """One phase: its eligible hosts admitted and run to the end of its rollout."""
        excluded = rollout_config.excluded_hosts(phase, names, self.prior_excluded, self.phase_failed,
                                                 lambda name: name in self.failed)
        settings = phase.settings
        nodes, pinned = rollout_config.node_inputs(settings, [i for i in inputs if i[0] not in excluded])
        scheduler = rollout_config.build_scheduler(settings, nodes, pinned, batch_states=phase.batch_state,
                                                   cr_name=phase.name)
        title = self.play_name if phase.name is None else '%s: %s' % (self.play_name, phase.name)
        record = self.bus.start_rollout(title, 'batch', rollout_config.compartment_summaries(scheduler), excluded)
        eligible = [n for n in names if n not in excluded]
        if excluded:
            self.echo('nodewright: warning: %d host(s) left out of the rollout of %r: %s' % (
                len(excluded), title, ', '.join('%s (%s)' % item for item in sorted(excluded.items()))))
        admission = Admission(
            scheduler, record=record, reporter=limit_driver.LineReporter(self.echo), windows=settings.windows,
            gates=gate_checks.gates_for(settings.gates, self.connection, phase.selector, eligible, session=self.session),
            keeper=self._keeper(phase), check_mode=self.check_mode, independent=settings.independent,
            protected_look=protected_look.look_for(phase.protected, self.connection, session=self.session))
        self._join_budget(phase, admission)

        def run_batch(batch):
            results = self.runner(phase, batch)
            for name, result in results.items():
                # a host of several phases: changed if any of them changed it
                result['changed'] = bool(result.get('changed') or self.results.get(name, {}).get('changed'))
                self.results[name] = result
                if result.get('held') in rollout_config.HOLDING:
                    admission.defer(result.get('msg') or 'the CR was %s' % result['held'], title='HELD',
                                    until='a run after the CR is resumed')
                rollout_state.task_finished(record, name, 'Bring the node up to date with the CR', NODE_UPDATE, result,
                                            result.pop('_started', None))
            return set(n for n, r in results.items() if r.get('failed'))
        summary, elsewhere = limit_driver.run_admission(admission, run_batch, self.echo, before=admission.keep_batch_states)
        self._phase_ended(phase, names, excluded, admission, summary, elsewhere)

    def _keeper(self, phase):
        if not phase.cr_status or self.check_mode:
            return None
        return status_keeper.BatchStateKeeper(kube_api.connection_params(dict(self.connection)), phase.name,
                                              session=self.session)

    def _join_budget(self, phase, admission):
        """The phase's shared budget handed to ``admission`` (joined when it starts); one that cannot be made stops it."""
        shared = phase.settings.shared
        if shared is None:
            return
        if self.check_mode:
            self.echo('nodewright: shared budget %s: not taken in check mode (nothing is written)'
                      % (shared.get('name') or phase.name))
            return
        try:
            # the key: a CR's phase, its spec digest (as the strategy's PlayPhases._join_budget)
            admission.budget = budget_lease.for_rollout(
                dict(self.connection, **shared), admission.scheduler, phase.settings.admission,
                shared.get('name') or phase.name, key=phase.budget_key, namespace=shared.get('namespace'),
                expiry=shared['slot_expiry'], session=self.session)
        except (kube_api.KubeError, budget_lease.BudgetError) as exc:
            admission.budget_failed(exc)

    def _phase_ended(self, phase, names, excluded, admission, summary, elsewhere):
        """What the phase means for the later ones and the hosts' results (as PlayPhases.end_phase for the strategy)."""
        stopped = admission.policy_stopped()
        failed_elsewhere = sorted(n for n, outcome in elsewhere.items() if outcome == FAILED)
        for name in failed_elsewhere:
            self.results[name] = {'failed': True, 'msg': 'the node failed in another run of the shared budget'}
        for name in summary['not_attempted']:
            why = ('the rollout stopped' if stopped else 'the rollout was held (%s)' % summary['deferred']
                   if summary['deferred'] else 'the rollout ended')
            self.never_admitted[name] = why
            self.results[name] = {'failed': stopped, 'skipped': not stopped, 'msg': '%s: %s' % (NEVER_ADMITTED, why)}
        if summary['not_attempted']:
            self.echo('nodewright: warning: %d host(s) of %r were never admitted: %s' % (
                len(summary['not_attempted']), phase.name or self.play_name, ', '.join(summary['not_attempted'])))
        self.failed.update(n for n in names if self.results.get(n, {}).get('failed'))
        self.failed.update(summary['not_attempted'])
        if admission.budget_failure is not None and self.budget_failure is None:
            self.budget_failure = admission.budget_failure
        self.stopped = self.stopped or stopped or admission.budget_failure is not None
        self.phase_failed[phase.name] = bool(excluded) or any(n in self.failed for n in names)

    def result(self):
        """The task's result: every node's own result, the rollouts (the report's), whether a rollout stopped."""
        nodes = dict((name, result) for name, result in self.results.items())
        result = {
            'changed': any(r.get('changed') for r in nodes.values()),
            'nodes': nodes,
            'rollouts': self.bus.rollouts(),
            'report': self.bus.report(nodes=False),
            'stopped': self.stopped,
            'failed_nodes': sorted(n for n, r in nodes.items() if r.get('failed')),
        }
        if self.budget_failure is not None:
            # the nodes it left out fail on their own (never admitted in a stopped rollout), as with the strategy
            result['budget_failure'] = self.budget_failure
        return result
