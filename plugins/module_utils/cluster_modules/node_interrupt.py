# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The code of the module nodewright.bridge.node_interrupt (its options and everything after AnsibleModule).

Shared by the module (plugins/modules/node_interrupt.py, which adds the documentation) and its action plugin,
which runs it in the controller's process (plugin_utils/in_process.py).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible_collections.nodewright.bridge.plugins.module_utils import cr_model
from ansible_collections.nodewright.bridge.plugins.module_utils import kube as kube_api
from ansible_collections.nodewright.bridge.plugins.module_utils import node_state
from ansible_collections.nodewright.bridge.plugins.module_utils import pod_layout
from ansible_collections.nodewright.bridge.plugins.module_utils import pod_run

# Ours, not the operator's: the boot ID before a reboot, so a re-run knows it already happened.
BOOT_ID_PREFIX = 'bridge.nodewright.io/boot-id-before-interrupt_'


def boot_id(node):
    return ((node.get('status') or {}).get('nodeInfo') or {}).get('bootID') or ''


def ready(node):
    for cond in (node.get('status') or {}).get('conditions') or []:
        if cond.get('type') == 'Ready':
            return cond.get('status') == 'True'
    return False


def wait_for_reboot(kube, node_name, before, timeout):
    """By watch: the node's boot ID differs from ``before`` and it is Ready. Returns the node or raises WaitTimeout."""
    def back(objects):
        for node in objects.values():
            if boot_id(node) and boot_id(node) != before and ready(node):
                return node
        return None
    return kube.watch_until('nodes', back, timeout, field_selector='metadata.name=%s' % node_name,
                            what='node %s to come back Ready with a new boot ID' % node_name)


def run(module, kube):
    params = module.params
    started = time.time()
    node_name, stage = params['node'], params['stage']
    cr, doc = pod_run.load_cr(kube, params['cr'], params['cr_name'])
    unknown = [p for p in [params['package']] + list(params['covered']) if p not in cr.packages]
    if unknown:
        module.fail_json(msg='package(s) %s not in %s %s (packages: %s); nothing was changed'
                         % (', '.join(unknown), cr.kind, cr.name, ', '.join(sorted(cr.packages)) or 'none'), node=node_name)
    package = cr.packages[params['package']]
    interrupt = params['interrupt'] or package.interrupt
    if not interrupt:
        module.fail_json(msg='package %s of %s %s has no interrupt; give one with the interrupt option'
                         % (package.name, cr.kind, cr.name), node=node_name)
    interrupt = {'type': interrupt['type'], 'services': list(interrupt.get('services') or [])}
    if interrupt['type'] == 'service' and not interrupt['services']:
        module.fail_json(msg='interrupt type service needs a list of services', node=node_name)
    key = package.unique_name
    result = dict(node=node_name, package=key, interrupt=interrupt, changed=False)

    node = kube.get_node(node_name)
    annotations = (node.get('metadata') or {}).get('annotations') or {}
    state_key = node_state.node_state_key(cr.name)
    state = node_state.decode(annotations.get(state_key), where='node %s annotation %s' % (node_name, state_key))
    current = state.get(key)
    if current and current['stage'] == stage and current['state'] == 'complete' and not params['force']:
        result.update(outcome='skipped', entry=current, duration=round(time.time() - started, 3),
                      msg='%s %s is already complete on node %s' % (key, stage, node_name))
        return result

    uid, generation, status = pod_run.cr_identity(doc)
    namespace = params['namespace']
    metadata_cm = pod_layout.node_metadata_configmap(cr, node, namespace, agent_image=params['agent_image'], cr_uid=uid)
    manifest = pod_layout.interrupt_pod(cr, package, interrupt, node_name, namespace, stage=stage,
                                        node_order=pod_layout.node_order_from_status(status, node_name),
                                        cr_uid=uid, cr_generation=generation, **pod_run.operator_settings(params))
    reboot = interrupt['type'] == 'reboot'
    boot_key = BOOT_ID_PREFIX + cr.name
    resumed = bool(current and current['stage'] == stage and current['state'] in ('in_progress', 'erroring')
                   and annotations.get(boot_key))
    before = annotations.get(boot_key) if resumed else boot_id(node)
    covered = [cr.packages[name] for name in params['covered'] if name != package.name]

    def in_progress(current_state):
        new = node_state.upsert(current_state, package.name, package.version, package.image, 'in_progress', stage,
                                0, package.container_sha)[0]
        for other in covered:
            other_entry = new.get(other.unique_name)
            if not (other_entry and other_entry['stage'] == 'interrupt' and other_entry['state'] == 'complete'):
                new = node_state.upsert(new, other.name, other.version, other.image, 'skipped', 'interrupt',
                                        0, other.container_sha)[0]
        return new

    extra = {boot_key: before} if reboot else None
    runner = pod_run.PodRun(kube, manifest, pod_layout.log_containers(package.name, stage), retries=params['retries'],
                            timeout=params['timeout'], delete=params['delete_pod'], log_lines=params['log_lines'])
    dry_runs = params['preflight'] or module.check_mode
    adopted = runner.preflight(dry_run=dry_runs)
    if dry_runs:
        after_state = pod_run.write_node_state(kube, node_name, cr.name, in_progress, status='in_progress',
                                               dry_run=True, annotations=extra, node=node)[0]
    if module.check_mode:
        result.update(changed=True, outcome='planned', manifest=manifest, adopt=adopted is not None, entry=after_state.get(key),
                      duration=round(time.time() - started, 3))
        return result

    if metadata_cm is not None:
        kube.apply_configmap(metadata_cm)
    runner.start()
    try:
        pod_run.write_node_state(kube, node_name, cr.name, in_progress, status='in_progress', annotations=extra)
    except (kube_api.KubeError, node_state.NodeStateError):
        runner.abandon()
        raise
    result['changed'] = True
    verdict = runner.wait()
    outcome = verdict.get('outcome')
    after = None
    # A rebooting node may take its pod down with it; what counts is that the node comes back.
    if reboot and outcome in (pod_layout.SUCCEEDED, pod_layout.MISSING):
        try:
            after = wait_for_reboot(kube, node_name, before, max(1, params['timeout'] - (time.time() - started)))
            outcome = pod_layout.SUCCEEDED
        except kube_api.WaitTimeout as exc:
            outcome = 'not-back'
            last = list((exc.last or {}).values())
            after = last[0] if last else None
    succeeded = outcome == pod_layout.SUCCEEDED
    logs, unavailable = runner.logs() if not succeeded or params['collect_logs'] == 'always' else ({}, {})
    if succeeded:
        def finish(current_state):
            return node_state.interrupt_succeeded(current_state, package.name, package.version, package.image, stage,
                                                  package.container_sha, covered=[p.name for p in covered])
        final_state = pod_run.write_node_state(kube, node_name, cr.name, finish,
                                               annotations={boot_key: None} if reboot else None)[0]
    else:
        def finish(current_state):
            return node_state.upsert(current_state, package.name, package.version, package.image, 'erroring', stage,
                                     int(verdict.get('restarts') or 0), package.container_sha)[0]
        final_state = pod_run.write_node_state(kube, node_name, cr.name, finish, status='erroring')[0]
    deleted = runner.cleanup(succeeded)
    result.update(outcome=outcome, entry=final_state.get(key), logs=logs, logs_unavailable=unavailable,
                  boot_id_before=before, boot_id_after=boot_id(after) if after else boot_id(kube.get_node(node_name)),
                  duration=round(time.time() - started, 3),
                  pod={'name': runner.name, 'namespace': namespace, 'uid': runner.pod['metadata'].get('uid'),
                       'adopted': runner.adopted, 'deleted': deleted})
    if reboot:
        result['rebooted'] = succeeded
    if module._diff:
        result['diff'] = {'before': {'entry': current}, 'after': {'entry': final_state.get(key)},
                          'before_header': 'node/%s %s' % (node_name, key), 'after_header': 'node/%s %s' % (node_name, key)}
    if not succeeded:
        if outcome == 'not-back':
            why = ('the node did not come back within %ss (Ready: %s, boot ID %s, was %s); it stays as it is, cordoned '
                   'if it was' % (params['timeout'], ready(after) if after else 'unknown',
                                  boot_id(after) if after else 'unknown', before))
        elif outcome == 'timeout':
            why = 'the interrupt pod did not finish within %ss' % params['timeout']
        elif outcome == pod_layout.MISSING:
            why = 'the interrupt pod was deleted before it finished'
        else:
            why = 'container %s failed (exit code %s, reason %s)' % (verdict.get('container'), verdict.get('exit_code'),
                                                                     verdict.get('reason'))
        module.fail_json(msg='%s interrupt (%s) on node %s: %s; recorded as erroring'
                         % (key, interrupt['type'], node_name, why), **result)
    return result


def module_args():
    """The AnsibleModule keywords: the argument spec and its rules (also used in the controller process)."""
    argument_spec = kube_api.auth_argument_spec()
    argument_spec.update(pod_run.OPERATOR_OPTIONS)
    argument_spec.update(
        node=dict(type='str', required=True),
        cr=dict(type='raw'),
        cr_name=dict(type='str'),
        package=dict(type='str', required=True),
        stage=dict(type='str', default='interrupt', choices=list(pod_layout.INTERRUPT_STAGES)),
        interrupt=dict(type='dict', options=dict(
            type=dict(type='str', required=True, choices=['reboot', 'service', 'restartAllServices', 'noop']),
            services=dict(type='list', elements='str'),
        )),
        covered=dict(type='list', elements='str', default=[]),
        timeout=dict(type='int', default=1800),
        retries=dict(type='int', default=0),
        delete_pod=dict(type='str', default='always', choices=list(pod_run.DELETE_POLICIES)),
        force=dict(type='bool', default=False),
        log_lines=dict(type='int', default=200),
        collect_logs=dict(type='str', default='always', choices=['always', 'on_failure']),
        preflight=dict(type='bool', default=True),
    )
    return dict(argument_spec=argument_spec, supports_check_mode=True,
                required_one_of=[('cr', 'cr_name')])


def execute(module):
    """Everything after AnsibleModule: validation, the run, exit_json / fail_json."""
    try:
        kube = kube_api.Kube(module.params)
        result = run(module, kube)
    except cr_model.CRValidationError as exc:
        module.fail_json(msg=str(exc), errors=exc.errors, node=module.params['node'])
    except kube_api.KubeError as exc:
        module.fail_json(msg=exc.message, node=module.params['node'], status=exc.status)
    except node_state.NodeStateError as exc:
        module.fail_json(msg=str(exc), node=module.params['node'])
    module.exit_json(**result)
