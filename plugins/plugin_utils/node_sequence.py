# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The per-node sequence of a NodeWright CR, as the operator works a node, over the cluster modules.

plan the node -> (operator guard) -> nothing if complete (record complete, release a leftover
cordon) -> if an interrupt is due: owned cordon, wait for the podNonInterruptLabels pods and
drain -> the pending steps in the plan's order (package stages; the merged interrupt of each
wave, whose covered packages go skipped then complete) -> if drained: health gate (a new boot
after a reboot) -> record complete -> uncordon (only the CR's own cordon).
On a failure the node stays cordoned (its state is erroring) unless ``uncordon_on_failure``.

Every step is one of the collection's modules, run through ``run_step(module, args)`` which
the caller provides (in the controller process, or as a module on the delegated host), so
each step has exactly the behaviour, checks and messages documented for its module.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import threading
import time

INTERRUPT_STAGES = ('interrupt', 'uninstall-interrupt')

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


class StepFailed(Exception):
    def __init__(self, step, result):
        super(StepFailed, self).__init__(result.get('msg') or 'failed')
        self.step = step
        self.result = result


class NodeSequence(object):
    """One node, one CR. ``params``: node_update's validated options; ``connection``: auth options for every step."""

    def __init__(self, params, connection, run_step, clock=time.time, parallel=False):
        self.params = params
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
        self.plan = None
        self.boot_before_reboot = None
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
        record.update(step=name, module='nodewright.bridge.%s' % module, seconds=round(self.clock() - started, 3),
                      changed=bool(result.get('changed')))
        if result.get('failed') and result.get('logs'):
            record['logs'] = result['logs']
        self.steps.append(record)
        self.warnings.extend(result.get('warnings') or [])
        if result.get('diff'):
            diffs = result['diff'] if isinstance(result['diff'], list) else [result['diff']]
            self.diffs.extend(diffs)
        if result.get('failed') or result.get('unreachable'):
            raise StepFailed(name, result)
        return result

    def cr_args(self):
        args = {'cr_name': self.cr}
        if self.params.get('cr') is not None:
            args['cr'] = self.params['cr']
        return args

    def pod_args(self):
        args = self.cr_args()
        for key in ('namespace', 'agent_image', 'pause_image', 'image_pull_secret', 'copy_dir_root', 'agent_log_root',
                    'runtime_required_taint', 'delete_pod'):
            args[key] = self.params[key]
        args['retries'] = self.params['stage_retries']
        # a succeeded stage's logs are not kept in the step record: do not read them
        args['collect_logs'] = 'on_failure'
        return args

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
        if self.plan is None:
            if self.node in (plan.get('ignored') or []):
                return self.finish('ignored', 'node %s carries skyhook.nvidia.com/ignore=true; left alone' % self.node)
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

    def already_complete(self):
        try:
            self.complete()
            if self.cr in self.plan.get('cordoned_by', []):
                # a run stopped between its last stage and its uncordon
                self.step('uncordon', 'node_cordon', dict(name=self.node, owner=self.cr, state='uncordoned'))
        except StepFailed as exc:
            return self.failure(exc, exc.step, cordon_held=self.cr in self.plan.get('cordoned_by', []))
        return self.finish('complete', 'node %s is complete for %s' % (self.node, self.cr))

    def update(self):
        params, plan = self.params, self.plan
        drain = plan['needs_drain']
        cordon_held = self.cr in plan.get('cordoned_by', [])
        try:
            if drain:
                self.step('cordon', 'node_cordon', dict(name=self.node, owner=self.cr))
                cordon_held = True
                protected = self.cr_doc.get('podNonInterruptLabels')
                drain_args = dict(name=self.node, wait_for_timeout=params['wait_for_protected_timeout'],
                                  timeout=params['drain_timeout'], preflight=params['drain_preflight'],
                                  skip=params['drain_skip'])
                if protected:
                    drain_args['wait_for'] = protected
                self.step('drain', 'node_drain', drain_args)
            for segment in segments(plan['pending']):
                self.run_segment(segment)
            if drain:
                health = dict(name=self.node, min_pods=params['health_min_pods'], timeout=params['health_timeout'])
                if self.boot_before_reboot:
                    health['boot_id_not'] = self.boot_before_reboot
                if params.get('health_pod_selector'):
                    health['pod_selector'] = params['health_pod_selector']
                self.step('health', 'node_health', health)
            self.complete()
            if drain or cordon_held:
                self.step('uncordon', 'node_cordon', dict(name=self.node, owner=self.cr, state='uncordoned'))
        except StepFailed as exc:
            return self.failure(exc, exc.step, cordon_held=cordon_held or drain)
        return self.finish('updated', 'node %s updated for %s: %s' % (
            self.node, self.cr, ', '.join(s['step'] for s in self.steps if s['step'] not in ('plan', 'operator guard'))))

    def run_segment(self, segment):
        """Each package's steps in order; the packages at once when allowed. Raises the first failure in plan order."""
        by_package = {}
        for pending in segment:
            by_package.setdefault(pending['package'], []).append(pending)
        groups = list(by_package.values())
        if len(groups) < 2 or not self.parallel or self.cr_doc.get('serial'):
            for pending in segment:
                self.pending_step(pending)
            return
        failures = [None] * len(groups)

        def run_group(index, group):
            try:
                for pending in group:
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
        name = '%s %s' % (pending['package'], pending['stage'])
        if pending['stage'] not in INTERRUPT_STAGES:
            args = self.pod_args()
            args.update(node=self.node, package=pending['package'], stage=pending['stage'], timeout=self.params['stage_timeout'],
                        preflight=pending['package'] not in self.preflighted)
            self.step(name, 'package_stage', args)
            self.preflighted.add(pending['package'])
            return
        if pending.get('skipped'):
            return  # covered by the merged interrupt of its wave
        covered = [p['package'] for p in self.plan['pending']
                   if p.get('merged_into') == pending['package'] and p.get('wave') == pending.get('wave')]
        args = self.pod_args()
        args.update(node=self.node, package=pending['package'], stage=pending['stage'], interrupt=pending['interrupt'],
                    covered=covered, timeout=self.params['interrupt_timeout'],
                    preflight=('interrupt', pending['package']) not in self.preflighted)
        result = self.step('%s (%s)' % (name, (pending.get('interrupt') or {}).get('type', '')), 'node_interrupt', args)
        self.preflighted.add(('interrupt', pending['package']))
        if result.get('rebooted'):
            self.boot_before_reboot = result.get('boot_id_before')

    def complete(self):
        self.step('complete', 'node_state', dict(
            name=self.node, cr=self.cr, action='complete', runtime_required_crs=self.params['runtime_required_crs'],
            runtime_required_taint=self.params['runtime_required_taint']))

    # ------------------------------------------------------------------ results

    def finish(self, status, message, failed=False):
        result = dict(changed=any(s['changed'] for s in self.steps), node=self.node, cr=self.cr, status=status,
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
        released = False
        if cordon_held and self.params['uncordon_on_failure'] and self.cr:
            try:
                self.step('uncordon after failure', 'node_cordon',
                          dict(name=self.node, owner=self.cr, state='uncordoned'))
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
        return result
