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
  # Play or extra vars, validated together before any host runs (plugin_utils/rollout/rollout_config.py, which lists
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
  nodewright_batch_lockstep:
    description:
      - With C(batch) admission, whether a batch's hosts run the play in lockstep, task by task (the stock
        C(linear) loop; C(run_once) runs once per batch), so that compartments advance in waves; or each host on
        its own (the stock C(free) loop), so that each compartment starts its next batch as soon as its own
        batch is scored, whatever the others are doing (as the operator advances each compartment).
      - Budgets, the stop rules, windows and gates keep their per-compartment meaning either way. The apply
        playbook sets it to V(false). Ignored with C(sliding) admission, which always runs the C(free) loop.
    type: bool
    default: true
    vars: [{name: nodewright_batch_lockstep}]
  nodewright_phases:
    description: >-
      Phases of the play (the apply playbook's CRs): a list of C({name, hosts, policy or interruption_budget,
      after_all, batch_state, budget_key, selector, cr_status, host_vars}), each a rollout of its own, in order;
      C(host_vars) are set on each host of the phase when it starts.
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
  nodewright_park_protected:
    description:
      - With C(batch) admission on the C(free) loop (C(nodewright_batch_lockstep=false), as the apply playbook runs),
        whether a node whose M(nodewright.bridge.node_update) waits for the pods of the CR's C(podNonInterruptLabels)
        gives its batch slot back, so the next node of its compartment takes it, and takes a slot of its
        compartment's next batch again, before any fresh node, once those pods are gone (and before it is drained).
        The node stays cordoned meanwhile; nothing is evicted; the wait has no bound of its own.
      - The strategy sets the host variable C(nodewright_park) for the node role; a task delegated to another host
        than the controller cannot reach the strategy and keeps its slot, as do C(linear) and C(sliding) plays.
    type: bool
    default: true
    vars: [{name: nodewright_park_protected}]
  nodewright_protected_wait_warning:
    description: >-
      A wait for protected pods this long (seconds, or a Go duration such as C(30m) or C(2h)) is reported: a Warning
      Event on the node and the CR, a warning in the task's result. It never interrupts anything.
    type: raw
    vars: [{name: nodewright_protected_wait_warning}]
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

EXAMPLES = r'''
# A play of your own in NodeWright batches: a DeploymentPolicy's compartments, each host's from its labels
- name: Tune the GPU nodes, one rack compartment at a time, batches that grow while they succeed
  hosts: gpu_nodes
  gather_facts: false
  strategy: nodewright.bridge.budgeted
  vars:
    nodewright_policy: policies/gpu-racks.yaml  # a DeploymentPolicy document (or its spec as a mapping)
    # each host's nodewright_labels (a dict of node labels, as the nodewright.bridge.nodes inventory sets them)
    # is matched against the policy's compartment selectors
  tasks:
    - name: Drain and tune the node
      ansible.builtin.import_role:
        name: nodewright.bridge.maintenance

# A plain budget (as a CR's interruptionBudget), a sliding window instead of a barrier between batches, only inside
# a maintenance window, and one budget shared with every other run of the same name (AWX slices included)
- name: Patch the inference nodes, at most 2 at once
  hosts: inference_nodes
  gather_facts: false
  strategy: nodewright.bridge.budgeted
  vars:
    nodewright_interruption_budget: {count: 2}
    nodewright_admission: sliding
    nodewright_maintenance_windows:
      - {days: [sat, sun], start: "01:00", end: "05:00", timezone: UTC}
    nodewright_shared_budget: {name: inference-patching}
  tasks:
    - name: Patch the node
      ansible.builtin.include_tasks: patch.yml
'''

import os
import signal
import time

from ansible.plugins.strategy import StrategyBase
from ansible.plugins.strategy.free import StrategyModule as FreeStrategyModule
from ansible.plugins.strategy.linear import StrategyModule as LinearStrategyModule
from ansible.utils.display import Display

from ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout import play_phases
from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution import core_internals
from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution import venue

display = Display()


class _BudgetedMixin(object):
    """The admission gate: ``get_hosts_left`` only ever shows the stock loop the admitted hosts.

    The play's phases and what their ends mean are plugin_utils/rollout/play_phases.py's; which hosts may start
    is plugin_utils/rollout/admission.py's. This class only hooks them to the loop, through the play's one
    PlayPhases (its methods; it reaches none of that object's parts).
    """

    _nw = None  # the play's PlayPhases
    _nw_loop = None  # the free-loop instance a sliding play was handed to (see run)
    _nw_venue = venue.PlayVenue()  # where the play's cluster tasks run (execution/venue.py); no engine until run

    # ------------------------------------------------------------------ entry point

    def run(self, iterator, play_context):
        play = self._nw or play_phases.PlayPhases.prepare(iterator, self._tqm, self._inventory, self._variable_manager,
                                                          self._loader)
        if play.free_loop and not isinstance(self, FreeStrategyModule):
            # The loop is chosen by play variables, after TQM built this (linear) instance: the play is
            # handed to a free-loop instance. One results thread may read TQM's queue, so this one's stops
            # first (nothing of the play has been queued yet); cleanup() then goes to the new instance.
            StrategyBase.cleanup(self)
            self._nw_loop = SlidingStrategyModule(self._tqm)
            self._nw_loop._nw = play
            return self._nw_loop.run(iterator, play_context)
        self._nw = play
        # what the workers share, loaded before they fork, and the play's sequence engine (docs/in-process.md)
        self._nw_venue = venue.PlayVenue.start(fork_lock=core_internals.display_lock(display))
        result = self._tqm.RUN_OK
        previous_sigterm = signal.signal(signal.SIGTERM, self._nw_on_sigterm)
        if previous_sigterm is None:  # installed outside Python
            previous_sigterm = signal.SIG_DFL
        try:
            play.start()
            self._nw_admit_next()
            result = super(_BudgetedMixin, self).run(iterator, play_context)
        finally:
            signal.signal(signal.SIGTERM, previous_sigterm)
            play.leave_budget()  # Ctrl-C, an error: the unfinished nodes go back to the shared budget
            self._nw_venue.stop()
            # always give back what was borrowed, even on errors: PlaybookExecutor's
            # restriction, and every host state (TQM reads the failed hosts from them)
            play.give_back()
            self._inventory.restrict_to_hosts(play.restriction(in_flight=False))
        return self._nw_finish(iterator, result)

    def cleanup(self):
        if self._nw_loop is not None:
            return self._nw_loop.cleanup()
        return super(_BudgetedMixin, self).cleanup()

    def _nw_on_sigterm(self, signum, frame):
        """SIGTERM (a stopped job): give this run's unfinished nodes back to the shared budget, then die of it.

        Forked workers inherit the handler; only the strategy's own process has a budget to give back.
        """
        if self._nw is not None:
            self._nw.abandon_budget()
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)

    # ------------------------------------------------------------------ hooks on the stock loop

    def get_hosts_left(self, iterator):
        play = self._nw
        if play is None:
            return super(_BudgetedMixin, self).get_hosts_left(iterator)
        if play.free_loop:
            self._nw_wait_while_busy(iterator)
        if play.sliding:
            while self._nw_slide_once(iterator):
                # newly admitted hosts with nothing to do (a play without tasks) finish at once;
                # free ends its loop when no host it is shown has work
                if not any(self._nw_host_done(iterator, n) for n in play.window_hosts()):
                    break
            # free indexes this list with a cursor kept across calls: it must never shrink
            return play.admitted_hosts()
        self._nw_started(play.slots_given_back())  # hosts that started in the slots of parked hosts
        self._nw_advance_batches(iterator)
        play.answer_waiting()
        if play.free_loop:
            return play.admitted_hosts()
        return play.flying_hosts()

    def _nw_wait_while_busy(self, iterator):
        """Free loop: while every host in flight that is not done runs a task, wait for a result (at most 0.5 s, 5 ms steps).

        free passes over every host it was ever shown, then sleeps 1 ms, and again: with hosts running long
        tasks (a node's update) that spin cost most of a core (measured: 50 hosts, 6 s tasks, +45 % CPU against
        linear). Here nothing could start before a result comes (or an admission poll is due), so the pass waits.
        """
        flying = self._nw.flying()
        if self._results or not any(self._blocked_hosts.get(n) for n in flying):
            return
        if any(not self._blocked_hosts.get(n) and not self._nw_host_done(iterator, n) for n in flying):
            return  # a host can start its next task now
        deadline = time.time() + 0.5  # admission's own polls (windows, gates, the shared budget) are 1 s or more apart
        while not self._results and not core_internals.terminated(self._tqm) and time.time() < deadline:
            time.sleep(0.005)

    def _queue_task(self, host, task, task_vars, play_context):
        if self._nw is not None:
            self._nw.task_queued(host.name, task, task_vars)
        # a node_update task the engine serves waits in a thread of this process, not a forked worker
        with self._nw_venue.queueing(task):
            return super(_BudgetedMixin, self)._queue_task(host, task, task_vars, play_context)

    def _process_pending_results(self, iterator, one_pass=False, max_passes=None):
        results = super(_BudgetedMixin, self)._process_pending_results(iterator, one_pass=one_pass, max_passes=max_passes)
        if self._nw is not None:
            self._nw.task_results(results)
        return results

    # ------------------------------------------------------------------ hosts ending, and the admission

    def _nw_host_done(self, iterator, name):
        if self._nw.unreachable(name):
            return True
        if self._blocked_hosts.get(name):
            return False
        return iterator.get_next_task_for_host(self._nw.host(name), peek=True)[1] is None

    def _nw_advance_batches(self, iterator):
        play = self._nw
        while True:
            # every pass: a finished host gives its slot back at once (other runs need not wait for this
            # batch); a batch is scored on its hosts' outcomes when its last host ends
            ended = dict((n, play.outcome(n)) for n in play.flying() if self._nw_host_done(iterator, n))
            scored = play.hosts_finished(ended) if ended else []
            for comp, record in scored:
                self._nw_batch_scored(iterator, comp, record)
            # linear: the next wave once no batch is in flight; free (no lockstep): the next batch of each
            # compartment whose own batch was scored, whatever the others do
            if (play.batches_in_flight() and not play.free_loop) or not self._nw_admit_next():
                if scored:
                    self._nw_restrict()
                return
            # loop again in case the new batch has nothing to do (a play without tasks), since the loops
            # end when the hosts they are shown have no next task

    def _nw_batch_scored(self, iterator, comp, record):
        names = record['hosts']
        self._nw.retire([n for n in names if self._nw_host_done(iterator, n)])
        self._nw.scored(comp, names, record['failed'], 'batch %s' % record.get('number', '(none: a parked host)'),
                        removed=record.get('removed', []))

    def _nw_slide_once(self, iterator):
        """Sliding mode: score the hosts that ended and refill the windows; True if any host was admitted."""
        play = self._nw
        ended = dict((n, play.outcome(n)) for n in play.window_hosts() if self._nw_host_done(iterator, n))
        if ended:
            play.retire(list(ended))
            play.hosts_ended(ended)
            play.hosts_finished(ended)
        admitted = self._nw_admit_next()
        if ended and not admitted:
            self._nw_restrict()
        return admitted

    def _nw_admit_next(self):
        """Start the next wave (batch mode) or fill the windows (sliding mode); True if any host was admitted."""
        started = self._nw.admit()
        return self._nw_started(started, restrict=bool(started) or not self._nw.free_loop)

    def _nw_started(self, started, restrict=None):
        """Show the loop the hosts admission started (``{comp: [names]}``); scope the inventory to those in flight."""
        play = self._nw
        play.started(started)
        if restrict if restrict is not None else started:
            self._nw_restrict()
            play.warn_forks(len(play.flying()), len(self._workers))
        return bool(started)

    def _nw_restrict(self):
        """Scope the inventory to the hosts in flight, as PlaybookExecutor does for a serial batch.

        run_once results, a run_once failure, end_batch / end_play / clear_host_errors and
        ansible_play_batch all act on ``inventory.get_hosts(play.hosts)``; the restriction
        keeps them inside the batch and away from hosts that have not been admitted.
        """
        play = self._nw
        self._inventory.restrict_to_hosts(play.restriction())
        self._set_hosts_cache(play.ansible_play())

    # ------------------------------------------------------------------ end of the play

    def _nw_finish(self, iterator, result):
        play = self._nw
        # the loop can stop with hosts still in flight (2.16's any_errors_fatal returns early,
        # end_play, an interrupted run): score them now; a host that did not finish is failed
        outcomes, unfinished = {}, []
        for name in play.flying():
            done = self._nw_host_done(iterator, name)
            outcomes[name] = play.outcome(name, done)
            if not done:
                unfinished.append(name)
        if play.sliding:
            play.hosts_ended(outcomes)
        for comp, record in play.hosts_finished(outcomes, unfinished):
            if not play.sliding:
                self._nw_batch_scored(iterator, comp, record)
        return play.finish(result)


class StrategyModule(_BudgetedMixin, LinearStrategyModule):
    """Batch mode: the stock linear loop behind the admission gate (a sliding play is handed to SlidingStrategyModule)."""


class SlidingStrategyModule(_BudgetedMixin, FreeStrategyModule):
    """Sliding mode, or batches without lockstep: the stock free loop behind the admission gate (see _BudgetedMixin.run)."""
