# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""The code of the module nodewright.bridge.node_interrupt (its options and everything after AnsibleModule).

Shared by the module (plugins/modules/node_interrupt.py, which adds the documentation) and its action plugin,
which runs it in the controller's process (plugin_utils/execution/in_process.py).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible_collections.nodewright.bridge.plugins.module_utils.api import job_run
from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube as kube_api
from ansible_collections.nodewright.bridge.plugins.module_utils.model.constants import BOOT_ID_PREFIX
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import node_conditions
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import node_events
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import node_annotations
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import pod_layout
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import pod_verdicts
from ansible_collections.nodewright.bridge.plugins.module_utils.api import pod_run
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import _runner
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules._runner import ModuleFailed
from ansible_collections.nodewright.bridge.plugins.module_utils.model.stages import INTERRUPT_STAGES


def wait_for_reboot(kube, node_name, before, timeout):
    """By watch: the node's boot ID differs from ``before`` and it is Ready. Returns the node or raises WaitTimeout."""
    def back(node):
        return node if node_conditions.rebooted(node, before) else None
    return kube.watch_node(node_name, back, timeout, what='node %s to come back Ready with a new boot ID' % node_name)


def _interrupt(params, cr):
    """The interrupt to run (the option, else the package's), checked; raises ModuleFailed."""
    node_name = params['node']
    unknown = [p for p in [params['package']] + list(params['covered']) if p not in cr.packages]
    if unknown:
        raise ModuleFailed('package(s) %s not in %s %s (packages: %s); nothing was changed'
                           % (', '.join(unknown), cr.kind, cr.name, ', '.join(sorted(cr.packages)) or 'none'),
                           node=node_name)
    package = cr.packages[params['package']]
    interrupt = params['interrupt'] or package.interrupt
    if not interrupt:
        raise ModuleFailed('package %s of %s %s has no interrupt; give one with the interrupt option'
                           % (package.name, cr.kind, cr.name), node=node_name)
    interrupt = {'type': interrupt['type'], 'services': list(interrupt.get('services') or [])}
    if interrupt['type'] == 'service' and not interrupt['services']:
        raise ModuleFailed('interrupt type service needs a list of services', node=node_name)
    return interrupt


def run(module, kube):
    gen = kube.generation
    params = pod_run.with_defaults(module.params, gen)
    started = time.time()
    node_name, stage = params['node'], params['stage']
    cr, doc = _runner.planned_cr(kube, params)
    interrupt = _interrupt(params, cr)
    package = cr.packages[params['package']]
    key = package.unique_name
    result = dict(node=node_name, package=key, interrupt=interrupt, changed=False)

    node, annotations, current = pod_run.read_entry(kube, node_name, cr.name, key, gen=gen)
    skipped = pod_run.skipped_if_complete(result, current, stage, params['rerun'], started, '%s %s' % (key, stage))
    if skipped:
        return skipped
    hold = pod_run.held(kube, cr, node, cr_from_file=params['cr'] is not None, gen=gen)
    if hold is not None:  # rerun too: a paused or disabled CR, an ignored node starts no pod (as the operator)
        raise ModuleFailed(hold[1], node=node_name, package=key, changed=False, held=hold[0])

    uid, generation, status = pod_layout.cr_identity(doc)
    namespace = params['namespace']
    metadata_cm = pod_layout.node_metadata_configmap(cr, node, namespace, agent_image=params['agent_image'], cr_uid=uid,
                                                     gen=gen)
    manifest = pod_layout.interrupt_pod(cr, package, interrupt, node_name, namespace, stage=stage,
                                        node_order=pod_layout.node_order_from_status(status, node_name),
                                        cr_uid=uid, cr_generation=generation, gen=gen, **pod_run.operator_settings(params))
    reboot = interrupt['type'] == 'reboot'
    boot_key = BOOT_ID_PREFIX + cr.name
    under_way = bool(current) and current['stage'] == stage and current['state'] in ('in_progress', 'erroring')
    resumed = bool(under_way and annotations.get(boot_key))
    before = annotations.get(boot_key) if resumed else node_conditions.boot_id(node)
    covered = [cr.packages[name] for name in params['covered'] if name != package.name]
    record = _record(node_name, cr.name, package, stage, covered, current, gen)
    if reboot:
        record.annotations, record.success_annotations = {boot_key: before}, {boot_key: None}
    runner = job_run.runner_for(gen, kube, manifest, pod_layout.log_containers(package.name, stage), cr, package, stage,
                                cr_uid=uid, cr_generation=generation, retries=params['stage_retries'],
                                timeout=params['timeout'], delete=params['delete_pod'], log_lines=params['log_lines'],
                                entry=current, failed_is_stale=not (reboot and resumed))
    back = {}
    done = pod_run.run_recorded(module, kube, runner, record, result, started,
                                configmaps=[metadata_cm] if metadata_cm is not None else [], node=node,
                                settle=_reboot_wait(kube, node_name, before, params['timeout'], started, back)
                                if reboot else None)
    if done.planned:
        return result
    after = back.get('node')
    result.update(boot_id_before=before,
                  boot_id_after=node_conditions.boot_id(after) if after else node_conditions.boot_id(kube.get_node(node_name)),
                  duration=round(time.time() - started, 3))
    if reboot:
        result['rebooted'] = done.succeeded
    why = None if done.succeeded else _why(done, params['timeout'], after, before, runner, kube, node_name)
    _runner.node_event(module, kube, node_name, _event(node_name, cr.name, package, interrupt, covered, done, result,
                                                       why))
    if not done.succeeded:
        raise ModuleFailed('%s interrupt (%s) on node %s: %s; recorded as erroring'
                           % (key, interrupt['type'], node_name, why), **result)
    return result


def _event(node_name, cr_name, package, interrupt, covered, done, result, why):
    """The interrupt's Event: Interrupt (a service restart...), Reboot (back with a new boot ID), or either failed."""
    before = result['boot_id_before']
    if not done.succeeded:
        return node_events.interrupt_failed(node_name, package.name, package.version, cr_name, interrupt, why)
    covered_refs = ['%s:%s' % (p.name, p.version) for p in covered]
    if interrupt['type'] == 'reboot':
        return node_events.rebooted(node_name, package.name, package.version, cr_name, before, result['boot_id_after'],
                                    covered_refs)
    return node_events.interrupted(node_name, package.name, package.version, cr_name, interrupt, covered_refs)


def _record(node_name, cr_name, package, stage, covered, current, gen):
    """The carrier's entry in_progress -> complete or erroring; the covered packages skipped -> complete."""
    def in_progress(current_state):
        new = pod_run.set_entry(current_state, package, stage, 'in_progress')
        for other in covered:
            other_entry = new.get(other.unique_name)
            if not (other_entry and other_entry['stage'] == 'interrupt' and other_entry['state'] == 'complete'):
                new = pod_run.set_entry(new, other, 'interrupt', 'skipped')
        return new

    def succeeded(current_state, restarts):
        del restarts  # an interrupt that succeeded is recorded complete, without a count
        return node_annotations.interrupt_succeeded(current_state, package.name, package.version, package.image, stage,
                                                    package.container_sha, covered=[p.name for p in covered])

    def failed(current_state, restarts):
        return pod_run.set_entry(current_state, package, stage, 'erroring', restarts)
    return pod_run.NodeRecord(node_name, cr_name, package.unique_name, current, in_progress, succeeded, failed, gen=gen)


def _reboot_wait(kube, node_name, before, timeout, started, back):
    """The ``settle`` of a reboot: the node back with a new boot ID (``back['node']``: the node last seen)."""
    def settle(verdict):
        outcome = verdict.get('outcome')
        # A rebooting node may take its pod down with it (deleted, or killed by the shutdown); what counts is
        # that the node comes back with a new boot ID. Any other failure is the interrupt's own.
        if outcome not in (pod_verdicts.SUCCEEDED, pod_verdicts.MISSING) and not pod_verdicts.killed_by_shutdown(verdict):
            return outcome
        try:
            back['node'] = wait_for_reboot(kube, node_name, before, max(1, timeout - (time.time() - started)))
            return pod_verdicts.SUCCEEDED
        except kube_api.WaitTimeout as exc:
            last = list((exc.last or {}).values())
            back['node'] = last[0] if last else None
            return 'not-back'
    return settle


def _why(done, timeout, after, before, runner, kube, node_name):
    """Why the interrupt failed, in a few words (its message and its Event); a timeout's says where the pod stood
    and what a node that is not Ready reports (pod_run.timed_out_detail)."""
    verdict = done.verdict
    if done.outcome == 'not-back':
        return ('the node did not come back within %ss (Ready: %s, boot ID %s, was %s); it stays as it is, cordoned '
                'if it was' % (timeout, node_conditions.is_ready(after) if after else 'unknown',
                               node_conditions.boot_id(after) if after else 'unknown', before))
    if done.outcome == 'timeout':
        return 'the interrupt pod did not finish within %ss; %s' % (timeout, pod_run.timed_out_detail(runner, kube, node_name))
    if done.outcome == pod_verdicts.MISSING:
        return 'the interrupt pod was deleted before it finished'
    return 'container %s failed (exit code %s, reason %s)' % (
        verdict.get('container'), verdict.get('exit_code'), verdict.get('reason'))


def module_args():
    """The AnsibleModule keywords: the argument spec and its rules (also used in the controller process)."""
    return pod_run.pod_module_args(
        stage=dict(type='str', default='interrupt', choices=list(INTERRUPT_STAGES)),
        interrupt=dict(type='dict', options=dict(
            type=dict(type='str', required=True, choices=['reboot', 'service', 'restartAllServices', 'noop']),
            services=dict(type='list', elements='str'),
        )),
        covered=dict(type='list', elements='str', default=[]),
    )


def execute(module):
    """Everything after AnsibleModule: the run, exit_json / fail_json (cluster_modules/_runner.py)."""
    _runner.execute(module, run, context=dict(node=module.params['node']))
