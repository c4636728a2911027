# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""The per-node sequence of a NodeWright CR, as the operator works a node, over the cluster modules.

plan the node -> (operator guard) -> nothing if complete (record complete, release a leftover
cordon) -> the pending steps in the plan's order (package stages; the merged interrupt of each
wave, whose covered packages go skipped then complete), and if an interrupt is due, around
them: owned cordon, wait for the podNonInterruptLabels pods and drain, placed where the plan's
``after`` says (node_steps.STEPS) -> if drained: health gate (a new boot after a reboot) ->
record complete -> uncordon (only the CR's own cordon).
On a failure the node stays cordoned (its state is erroring) unless ``uncordon_on_failure``.

Every step is one of the collection's modules, run through ``run_step(module, args)`` which
the caller provides (in the controller process, or as a module on the delegated host), so
each step has exactly the behaviour, checks and messages documented for its module.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import contextlib
import threading
import time

from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube as kube_api
from ansible_collections.nodewright.bridge.plugins.module_utils.model import api_generation
from ansible_collections.nodewright.bridge.plugins.module_utils import cluster_modules
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import cr_handoff
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import drain_rules
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import node_annotations
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import node_steps
from ansible_collections.nodewright.bridge.plugins.module_utils.model.stages import INTERRUPT_STAGES
from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution import fleet_slots
from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution import status_keeper

# The steps whose changes are node transitions the CR's status reports.
STATUS_MODULES = frozenset(module.name for module in cluster_modules.MODULES.values() if module.changes_node_status)

# Keys of a step's result that are too bulky to repeat per node (the pod manifest, ConfigMaps,
# the arguments). A failed step keeps its logs.
BULKY_KEYS = ('manifest', 'configmaps', 'invocation', 'diff', 'cr_document', 'policy_document', 'compartments',
              'sources', 'nodes', 'logs', 'pods')


def segments(pending):
    """The plan's steps cut where they must not overlap: at each interrupt and between dependency waves."""
    out = []
    for step in pending:
        barrier = step['stage'] in INTERRUPT_STAGES
        if (barrier or not out or out[-1][0]['stage'] in INTERRUPT_STAGES
                or out[-1][0].get('wave') != step.get('wave')):
            out.append([step])
        else:
            out[-1].append(step)
    return out


# Plans again after a CR edit superseded a running stage (package_stage ``superseded``), at most: an edit loop
# (a tool rewriting the CR every few seconds) ends as a failure naming the edit rather than running for ever.
MAX_REPLANS = 3


class StepFailed(Exception):
    def __init__(self, step, result):
        super(StepFailed, self).__init__(result.get('msg') or 'failed')
        self.step = step
        self.result = result


class NodeSequence(object):
    """One node, one CR. ``params``: node_update's validated options; ``connection``: auth options for every step."""

    def __init__(self, params, connection, run_step, clock=time.time, parallel=False, keepers=None, check_mode=False,
                 session=None):
        self.params = params
        # the kube.KubeSession its in-process steps share (their caller hands it to run_step's modules): its own
        # status keeper's client shares it too; None: the keeper has its own
        self.session = session
        # who keeps the CR's status current on each node transition (plugin_utils/execution/status_keeper.py):
        # the engine's keepers, or one write at the end of this node; none in check mode
        self.keepers = keepers
        self.check_mode = check_mode
        self.keeper = None
        # packages of a dependency wave run at once unless the CR is serial, as the operator runs
        # them; only where run_step may be called from several threads (the in-process path)
        self.parallel = parallel
        self.connection = connection
        self.run_step = run_step
        self.clock = clock
        self.node = params['node']
        self.steps = []
        self.diffs = []
        self.warnings = []
        self.cr = None
        self.cr_doc = {}
        # the CR the plan read (cr_handoff.identity: uid, generation): handed to every pod step, which plans the
        # node again if the CR's generation moved since and stops it if its uid did (cr_handoff.change)
        self.cr_identity = None
        self.plan = None
        self.boot_before_reboot = None
        self.cordoned = False  # this run took the cordon (a failure before it leaves the node schedulable)
        self.replans = 0  # times the node was planned again after a CR edit superseded a running stage
        # the pods whose dry runs have passed on this node: a package's stage pods (its image), a
        # package's interrupt pods (the agent image it runs); their later ones skip the dry runs
        # (package_stage / node_interrupt option preflight)
        self.preflighted = set()

    # ------------------------------------------------------------------ steps

    def step(self, name, module, args):
        """Run one module; record it; raise StepFailed if it failed."""
        full = dict(self.connection)
        full.update(args)
        started = self.clock()
        result = self.run_step(module, full)
        record = dict((k, v) for k, v in result.items() if k not in BULKY_KEYS)
        # the kind is the timeline's (a cordon, an uncordon, a drain...): node_steps says it, no one guesses it later
        record.update(step=name, module=cluster_modules.MODULES[module].fqcn, kind=node_steps.step_kind(module, args),
                      seconds=round(self.clock() - started, 3), started=round(started, 3),
                      changed=bool(result.get('changed')))
        if result.get('pods') and module == 'node_drain':
            # the pods are bulky; which of them waited on which PodDisruptionBudget is kept (the timeline)
            record['pdb_waits'] = drain_rules.pdb_waits(result['pods'], started)
        if result.get('failed') and result.get('logs'):
            record['logs'] = result['logs']
        self.steps.append(record)
        self.warnings.extend(result.get('warnings') or [])
        if result.get('diff'):
            diffs = result['diff'] if isinstance(result['diff'], list) else [result['diff']]
            self.diffs.extend(diffs)
        if result.get('changed') and module in STATUS_MODULES:
            self.status_changed()
        if result.get('failed') or result.get('unreachable'):
            raise StepFailed(name, result)
        return result

    def status_changed(self):
        """A step changed the node's record for the CR: its status is due (a CR in the cluster only)."""
        if self.check_mode or self.params.get('cr') is not None or not self.cr:
            return  # a CR given as a file has no status in the cluster to keep
        if self.keeper is None:
            if self.keepers is None:
                self.keepers = status_keeper.Keepers(make=status_keeper.DeferredKeeper, session=self.session)
            self.keeper = self.keepers.get(self.connection, self.cr)
        self.keeper.changed()

    # ------------------------------------------------------------------ the sequence

    def run(self):
        params = self.params
        if params.get('cr') is None and not params.get('cr_name'):
            return self.finish('failed', 'set cr (the CR: a document, documents or a file; the role\'s nodewright_cr) or cr_name '
                                         '(a CR in the cluster; the role\'s nodewright_cr_name); nothing was changed', failed=True)
        try:
            plan = self.step('plan', 'rollout_plan', dict(
                cr=params.get('cr'), cr_name=params.get('cr_name'), node=self.node))
        except StepFailed as exc:
            return self.failure(exc, 'planning', cordon_held=False)
        self.cr = plan['cr']['name']
        self.plan = (plan.get('nodes') or {}).get(self.node)
        self.cr_doc = plan['cr']
        self.cr_identity = plan.get('cr_identity') if params.get('cr') is None else None
        replaced = self.replaced_since_batch()
        if replaced:
            result = self.finish('failed', replaced, failed=True)
            result.update(failed_step='plan', cr_replaced=True)
            return result
        gen = plan.get('api_generation') or {}
        if gen.get('name'):
            # every later step speaks the generation the plan read the nodes with (no detection per step)
            self.connection = dict(self.connection, nodewright_api=gen['name'])
        if self.plan is None:
            if self.node in (plan.get('ignored') or []):
                return self.finish('ignored', 'node %s carries %s=true; left alone'
                                   % (self.node, api_generation.by_name(gen.get('name') or 'skyhook').ignore_label))
            return self.finish('not-selected', 'node %s is not selected by %s %s (spec.nodeSelectors); nothing was changed'
                               % (self.node, plan['cr'].get('kind', 'CR'), self.cr), failed=True)
        try:
            if params['operator_guard'] and params.get('cr') is None and not self.plan['complete']:
                # only a CR read from the cluster can be reconciled by an operator; a CR given as a file is ours
                self.step('operator guard', 'operator_guard', dict(cr_name=self.cr, force=params['force']))
        except StepFailed as exc:
            return self.failure(exc, 'operator guard', cordon_held=False)
        if self.plan['complete']:
            return self.already_complete()
        return self.update()

    def replaced_since_batch(self):
        """The message when the CR the batch planned with (node_update's ``cr_identity``) was deleted and created
        again before this node's plan, else ''. A new generation needs nothing here: this plan was made from it."""
        batch = self.params.get('cr_identity')
        if not batch or self.cr_identity is None:
            return ''
        planned = dict(batch, name=self.cr)
        if cr_handoff.change(planned, self.cr_identity) != cr_handoff.REPLACED:
            return ''
        return '%s on node %s failed at "plan": %s; nothing was changed' % (
            self.cr, self.node, cr_handoff.describe(cr_handoff.REPLACED, planned, self.cr_identity))

    def already_complete(self):
        cordon_held = self.cr in self.plan.get('cordoned_by', [])
        try:
            # record complete; release a cordon left by a run stopped between its last stage and its uncordon
            self.run_steps(drained=False, cordon_held=cordon_held)
        except StepFailed as exc:
            return self.failure(exc, exc.step, cordon_held=cordon_held)
        return self.finish('complete', 'node %s is complete for %s' % (self.node, self.cr))

    def update(self):
        drained = self.plan['needs_drain']
        try:
            with self.fleet_slot(drained):
                return self.update_steps(drained)
        except fleet_slots.FleetBudgetError as exc:
            # the budget could not be asked before the cordon: the node was not touched
            failed = StepFailed('fleet budget', {'failed': True, 'msg': str(exc)})
            return self.failure(failed, failed.step, cordon_held=self.cr in self.plan.get('cordoned_by', []))

    @contextlib.contextmanager
    def fleet_slot(self, drained):
        """A node that will be cordoned holds a slot of the fleet's node-disruption budget (node_update's
        ``fleet_budget``) from before its cordon until its sequence ends: at no moment more nodes cordoned or
        rebooting across the fleet's clusters than the budget (fleet_slots.py). Nothing is taken in check mode."""
        options = self.params.get('fleet_budget')
        if not options or not drained or self.check_mode:
            yield
            return
        try:
            slots = fleet_slots.for_node(options, session=self.session)
        except kube_api.KubeError as exc:
            raise fleet_slots.FleetBudgetError('the fleet budget\'s cluster: %s' % exc)
        with slots.held('%s/%s' % (options['cluster'], self.node), on_wait=self.warnings.append):
            yield

    def update_steps(self, drained):
        cordon_held = self.cr in self.plan.get('cordoned_by', [])
        try:
            self.run_steps(drained=drained, cordon_held=cordon_held)
        except StepFailed as exc:
            if exc.result.get('cr_replaced'):
                # deleted and created again under the run: another CR, whose records are not this plan's
                return self.failure(exc, exc.step, cordon_held=cordon_held or self.cordoned)
            if exc.result.get('superseded') and self.replans < MAX_REPLANS:
                # the CR changed under a stage (its pod is gone): plan the node again from the CR as it is now, as
                # the operator's next reconcile does
                self.replans += 1
                return self.run()
            return self.failure(exc, exc.step, cordon_held=cordon_held or self.cordoned)
        return self.finish('updated', 'node %s updated for %s: %s' % (
            self.node, self.cr, ', '.join(s['step'] for s in self.steps if s['step'] not in ('plan', 'operator guard'))))

    def run_steps(self, drained, cordon_held):
        """The steps of node_steps.STEPS that apply, in their order.

        With packages at once (``parallel``, a CR that is not serial), the drain runs beside the cordoned
        packages (run_around_the_drain) rather than between them and the packages that need it.
        """
        values = _NodeValues(self)
        overlap = drained and self.parallel and not self.cr_doc.get('serial')
        for step in node_steps.STEPS:
            if not node_steps.applies(step.when, drained, cordon_held):
                continue
            if overlap and step.key in (node_steps.DRAIN, node_steps.PENDING):
                continue  # run with the cordoned part
            if overlap and step.key == node_steps.PENDING_CORDONED:
                self.run_around_the_drain(values)
            elif step.is_pending:
                for segment in segments(node_steps.pending_part(step, self.plan['pending'])):
                    self.run_segment(segment)
            else:
                self.step(step.key, step.module, step.args(values))
                if step.key == 'cordon':
                    self.cordoned = True

    def run_around_the_drain(self, values):
        """The cordoned packages and the drain at once; a package that needs the drain starts once it is done.

        The operator's reconcile: a package with an interrupt waits for EnsureNodeIsReadyForInterrupt (cordon,
        drain) before its first stage while the others start, so with nothing to evict every package's apply
        starts together (upstream e2e skyhook/config-skyhook), and while a protected pod holds the drain the
        others run (skyhook/interrupt). A failed package waits for the drain to end before the sequence fails:
        the rescue steps (an uncordon) never race an eviction.
        """
        drain_step = node_steps.step_by_key(node_steps.DRAIN)
        parts = (node_steps.pending_part(node_steps.step_by_key(node_steps.PENDING_CORDONED), self.plan['pending'])
                 + node_steps.pending_part(node_steps.step_by_key(node_steps.PENDING), self.plan['pending']))
        parts.sort(key=lambda p: p.get('wave', 0))  # stable: within a wave the plan's order
        gate = _DrainGate()
        drain = threading.Thread(target=gate.run, args=(lambda: self.step(drain_step.key, drain_step.module, drain_step.args(values)),),
                                 name='drain-%s' % self.node)
        drain.start()
        try:
            for segment in segments(parts):
                self.run_segment(segment, gate)
        finally:
            drain.join()
        gate.raise_failure()

    def run_segment(self, segment, gate=None):
        """Each package's steps in order; the packages at once when allowed. Raises the first failure in plan order.

        ``gate``: the drain that runs meanwhile (_DrainGate); a step that needs it waits for it.
        """
        by_package = {}
        for pending in segment:
            by_package.setdefault(pending['package'], []).append(pending)
        groups = list(by_package.values())
        if len(groups) < 2 or not self.parallel or self.cr_doc.get('serial'):
            for pending in segment:
                _await_drain(gate, pending)
                self.pending_step(pending)
            return
        failures = [None] * len(groups)

        def run_group(index, group):
            try:
                for pending in group:
                    _await_drain(gate, pending)
                    self.pending_step(pending)
            except StepFailed as exc:
                failures[index] = exc
            except Exception as exc:  # pylint: disable=broad-except
                failures[index] = StepFailed(group[0]['package'], {'failed': True, 'msg': 'unexpected error: %s' % exc})
            except BaseException as exc:  # pylint: disable=broad-except
                failures[index] = exc  # a run_step that stops the sequence (its caller is gone): raised below
        threads = [threading.Thread(target=run_group, args=(i, g), name='package-%s' % g[0]['package'])
                   for i, g in enumerate(groups)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        for failure in failures:
            if failure is not None:
                raise failure

    def pending_step(self, pending):
        values = _NodeValues(self)
        call = node_steps.pending_call(values, pending)
        if call is None:
            return  # covered by the merged interrupt of its wave
        module, args = call
        full = node_steps.pod_settings(values, module)
        full.update(args)
        # a succeeded stage's logs are not kept in the step record: do not read them
        full['collect_logs'] = 'on_failure'
        # the dry runs of a kind of pod pass once per node (package_stage / node_interrupt option preflight)
        kind = pending['package'] if module == 'package_stage' else ('interrupt', pending['package'])
        full['preflight'] = kind not in self.preflighted
        name = '%s %s' % (pending['package'], pending['stage'])
        if module == 'node_interrupt':
            name = '%s (%s)' % (name, (pending.get('interrupt') or {}).get('type', ''))
        result = self.step(name, module, full)
        self.preflighted.add(kind)
        if module == 'node_interrupt' and result.get('rebooted'):
            self.boot_before_reboot = result.get('boot_id_before')

    # ------------------------------------------------------------------ results

    def finish(self, status, message, failed=False):
        if self.keeper is not None:
            self.keeper.flush()
            self.warnings.extend(self.keeper.warnings)
            del self.keeper.warnings[:]  # each warning once, in the first result after it
        # cr: the old name of cr_name (cr is the CR document elsewhere), kept until 2.0.0
        result = dict(changed=any(s['changed'] for s in self.steps), node=self.node, cr_name=self.cr, cr=self.cr, status=status,
                      message=message, steps=self.steps, plan=self.plan,
                      seconds=round(sum(s['seconds'] for s in self.steps), 3))
        if failed:
            result.update(failed=True, msg=message)
        if self.diffs:
            result['diff'] = self.diffs
        if self.warnings:
            result['warnings'] = self.warnings
        return result

    def failure(self, exc, where, cordon_held):
        reason = exc.result.get('msg') or 'failed'
        gone = bool(exc.result.get('node_deleted'))
        released = gone  # a deleted node has no cordon left to release
        for step in () if gone else node_steps.RESCUE:
            if not self.cr or not node_steps.applies(step.when, False, cordon_held, failed=True,
                                                     uncordon_on_failure=self.params['uncordon_on_failure']):
                continue
            try:
                self.step(step.key, step.module, step.args(_NodeValues(self)))
                released = True
            except StepFailed as second:
                reason += ' (uncordon after the failure failed too: %s)' % second.result.get('msg')
        who = self.cr or self.params.get('cr_name') or 'the CR'
        message = '%s on node %s failed at "%s": %s' % (who, self.node, where, reason)
        if cordon_held and not released:
            message += ' (the node stays cordoned by %s)' % self.cr
        result = self.finish('failed', message, failed=True)
        if 'errors' in exc.result:
            result['errors'] = exc.result['errors']  # an invalid CR: every problem with its field path
        result['failed_step'] = where
        if exc.result.get('held'):
            # paused, disabled, ignored: no new pod started; the strategy admits nothing more for the CR
            result.update(held=exc.result['held'], status=exc.result['held'])
        if exc.result.get('cr_replaced'):
            result['cr_replaced'] = True  # deleted and created again under the run: not planned again
        if gone:
            result['node_deleted'] = True  # the strategy takes the node out of its compartment's counts
        return result


class _DrainGate(object):
    """The drain of run_around_the_drain, run in its own thread: ``wait`` until it is done; its failure, once."""

    def __init__(self):
        self.done = threading.Event()
        self.failure = None

    def run(self, drain):
        try:
            drain()
        except BaseException as exc:  # pylint: disable=broad-except
            self.failure = exc  # a failed or held drain (StepFailed), or a sequence stopped (Cancelled)
        finally:
            self.done.set()

    def wait(self):
        self.done.wait()
        if self.failure is not None:
            raise self.failure

    def raise_failure(self):
        if self.failure is not None:
            raise self.failure


def _await_drain(gate, pending):
    if gate is not None and pending.get('after', 'drain') == 'drain':
        gate.wait()


class _NodeValues(node_steps.ValueSource):
    """The node's concrete values: node_update's options, the CR, what the sequence has seen so far."""

    def __init__(self, sequence):
        self.sequence = sequence
        self.params = sequence.params
        self.node = sequence.node
        self.cr = sequence.cr

    def setting(self, name):
        return self.params[name]

    tuning = setting

    def setting_if_set(self, name):
        return self.params.get(name) or node_steps.OMIT

    def protected_pods(self):
        return self.sequence.cr_doc.get('podNonInterruptLabels') or node_steps.OMIT

    def drain_config(self):
        value = self.sequence.cr_doc.get('drainConfig')
        return node_steps.OMIT if value is None else value

    def boot_before_reboot(self):
        return self.sequence.boot_before_reboot or node_steps.OMIT

    def runtime_required_crs(self):
        return self.params['runtime_required_crs']

    def cordon_take_over(self):
        # the run's plan says (apply: planned before any status write), else the node's status for the CR,
        # on the node or in the CR's status (which `kubectl skyhook reset` keeps): a node the CR was in the
        # middle of
        if self.params.get('take_over') is not None:
            return self.params['take_over']
        plan = self.sequence.plan or {}
        return bool(set((plan.get('status'), plan.get('cr_status'))) & set(node_annotations.ROLLING_STATUSES))

    def cr_source(self):
        args = {'cr_name': self.cr}
        if self.params.get('cr') is not None:
            args['cr'] = self.params['cr']
        identity = self.sequence.cr_identity
        if identity and identity.get('uid'):
            # the CR this node's plan was made from: a pod step that finds another generation or uid starts no pod
            args['cr_identity'] = {'uid': identity['uid'], 'generation': identity.get('generation')}
        return args
