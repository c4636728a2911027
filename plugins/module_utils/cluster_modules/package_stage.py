# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""The code of the module nodewright.bridge.package_stage (its options and everything after AnsibleModule).

Shared by the module (plugins/modules/package_stage.py, which adds the documentation) and its action plugin,
which runs it in the controller's process (plugin_utils/execution/in_process.py).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible_collections.nodewright.bridge.plugins.module_utils.api import job_run
from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube as kube_api
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import node_events
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import node_annotations
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import pod_layout
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import pod_verdicts
from ansible_collections.nodewright.bridge.plugins.module_utils.api import pod_run
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import _runner
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules._runner import ModuleFailed
from ansible_collections.nodewright.bridge.plugins.module_utils.model.stages import POD_STAGES


def _tail(text, lines=20):
    return '\n'.join((text or '').rstrip().splitlines()[-lines:])


def run(module, kube):
    gen = kube.generation
    params = pod_run.with_defaults(module.params, gen)
    started = time.time()
    node_name, stage = params['node'], params['stage']
    cr, doc = _runner.planned_cr(kube, params)
    if params['package'] not in cr.packages:
        raise ModuleFailed('package %r is not in %s %s (packages: %s); nothing was changed'
                           % (params['package'], cr.kind, cr.name, ', '.join(sorted(cr.packages)) or 'none'),
                           node=node_name)
    package = cr.packages[params['package']]
    key = package.unique_name
    result = dict(node=node_name, package=key, stage=stage, changed=False)

    node, dummy, current = pod_run.read_entry(kube, node_name, cr.name, key, gen=gen)
    skipped = pod_run.skipped_if_complete(result, current, stage, params['rerun'], started, '%s stage %s' % (key, stage))
    if skipped:
        return skipped
    hold = pod_run.held(kube, cr, node, cr_from_file=params['cr'] is not None, gen=gen)
    if hold is not None:  # rerun too: a paused or disabled CR, an ignored node starts no pod (as the operator)
        raise ModuleFailed(hold[1], node=node_name, package=key, changed=False, held=hold[0])

    uid, generation, status = pod_layout.cr_identity(doc)
    namespace = params['namespace']
    package_cm = pod_layout.package_configmap(cr, package, namespace, cr_uid=uid, gen=gen)
    metadata_cm = pod_layout.node_metadata_configmap(cr, node, namespace, agent_image=params['agent_image'], cr_uid=uid,
                                                     gen=gen)
    node_order = pod_layout.node_order_from_status(status, node_name)
    manifest = pod_layout.stage_pod(cr, package, stage, node_name, namespace, node_order=node_order,
                                    cr_uid=uid, cr_generation=generation, gen=gen, **pod_run.operator_settings(params))
    configmaps = [cm for cm in (package_cm, metadata_cm) if cm is not None]
    # a CR in the cluster can be edited while the stage runs; a CR given as a document cannot
    recheck = _superseded(kube, params, cr.name, package.name, stage, node_order, gen) if params['cr'] is None else None
    runner = job_run.runner_for(gen, kube, manifest, pod_layout.log_containers(package.name, stage), cr, package, stage,
                                cr_uid=uid, cr_generation=generation, retries=params['stage_retries'],
                                timeout=params['timeout'], delete=params['delete_pod'], log_lines=params['log_lines'],
                                entry=current, recheck=recheck)
    done = pod_run.run_recorded(module, kube, runner, _record(node_name, cr.name, package, stage, current, gen), result,
                                started, configmaps=configmaps, node=node,
                                # a CR in the cluster: its package ConfigMap changes only as an edit is rolled out
                                # (package_config), so a rollout under way finishes with the data it started with
                                create_only=[package_cm['metadata']['name']] if package_cm and params['cr'] is None else ())
    if done.planned:
        result.update(configmaps=dict((cm['metadata']['name'], 'planned') for cm in configmaps),
                      pod={'name': manifest['metadata']['name'], 'namespace': namespace})
        if module._diff:
            result['diff'] = node_annotations.node_diff(node_name, current, done.planned_state.get(key), key=key)
        return result
    if done.outcome == pod_run.SUPERSEDED:
        raise ModuleFailed('%s stage %s on node %s: the CR changed while the stage ran (%s); its pod was deleted and '
                           'the stage is left in progress for the next plan' % (key, stage, node_name, result['superseded']),
                           **result)
    result.update(configmaps=done.configmaps, restarts=done.restarts)
    if not done.succeeded:
        why = _why(done, params['timeout'], runner, kube, node_name)
        _runner.node_event(module, kube, node_name, node_events.stage_failed(package.name, package.version, stage, cr.name, why))
        _fail(result, done, key, stage, node_name, why)
    _runner.node_event(module, kube, node_name, node_events.stage_applied(package.name, package.version, stage, cr.name,
                                                                          done.restarts))
    return result


def _superseded(kube, params, cr_name, package_name, stage, node_order, gen):
    """``recheck`` of the stage's runner: why the CR as it is now no longer asks for the running pod (or Job), or None.

    One GET of the CR per check; the pod it would ask for is built as run() builds it (the node order the
    stage started with, which a CR edit does not change) and compared by the runner (``differs``) as an adopted
    pod is (by the CR alone).
    """
    def recheck(runner):
        try:
            now, doc = pod_run.load_cr(kube, None, cr_name)
        except kube_api.NotFound:
            return None  # deleted: the deletion's own handling decides (cr_deletion), not a stage in flight
        package = now.packages.get(package_name)
        if package is None:
            return 'package %s is no longer in the CR' % package_name
        uid, generation, dummy = pod_layout.cr_identity(doc)
        wanted = pod_layout.stage_pod(now, package, stage, params['node'], params['namespace'], node_order=node_order,
                                      cr_uid=uid, cr_generation=generation, gen=gen, **pod_run.operator_settings(params))
        return runner.differs(wanted)
    return recheck


def _record(node_name, cr_name, package, stage, current, gen):
    """The stage's nodeState entry: in_progress, then complete (stage_succeeded's rules) or erroring."""
    def in_progress(current_state):
        return pod_run.set_entry(current_state, package, stage, 'in_progress')

    def succeeded(current_state, restarts):
        return node_annotations.stage_succeeded(current_state, package.name, package.version, package.image, stage,
                                                restarts, package.container_sha, has_interrupt=package.interrupt is not None)

    def failed(current_state, restarts):
        return pod_run.set_entry(current_state, package, stage, 'erroring', restarts)
    return pod_run.NodeRecord(node_name, cr_name, package.unique_name, current, in_progress, succeeded, failed, gen=gen)


def _why(done, timeout, runner, kube, node_name):
    """Why the stage failed, in a few words (its message and its Event); a timeout's says where the pod stood and
    what a node that is not Ready reports (pod_run.timed_out_detail)."""
    verdict = done.verdict
    if verdict.get('outcome') == 'timeout':
        return 'did not finish within %ss; %s' % (timeout, pod_run.timed_out_detail(runner, kube, node_name))
    if verdict.get('outcome') == pod_verdicts.MISSING:
        return '%s %s/%s was deleted before it finished' % (runner.kind, runner.namespace, runner.name)
    if verdict.get('container') is None and verdict.get('message'):
        return verdict['message']  # a Job that failed without a failed pod (its deadline, its pod failure policy)
    return 'init container %s failed (exit code %s, reason %s, %d restart(s))' % (
        verdict.get('container'), verdict.get('exit_code'), verdict.get('reason'), done.restarts)


def _fail(result, done, key, stage, node_name, why):
    verdict = done.verdict
    container = verdict.get('container')
    result.update(container=container, exit_code=verdict.get('exit_code'), reason=verdict.get('reason'))
    tail = _tail(done.logs.get(container)) if container else ''
    raise ModuleFailed('%s stage %s on node %s: %s; recorded as erroring%s' % (
        key, stage, node_name, why, ('\n--- %s log (last lines) ---\n%s' % (container, tail)) if tail else ''), **result)


def module_args():
    """The AnsibleModule keywords: the argument spec and its rules (also used in the controller process)."""
    return pod_run.pod_module_args(stage=dict(type='str', required=True, choices=list(POD_STAGES)))


def execute(module):
    """Everything after AnsibleModule: the run, exit_json / fail_json (cluster_modules/_runner.py)."""
    _runner.execute(module, run, context=dict(node=module.params['node']))
