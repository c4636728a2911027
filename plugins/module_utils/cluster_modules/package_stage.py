# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The code of the module nodewright.bridge.package_stage (its options and everything after AnsibleModule).

Shared by the module (plugins/modules/package_stage.py, which adds the documentation) and its action plugin,
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


def _tail(text, lines=20):
    return '\n'.join((text or '').rstrip().splitlines()[-lines:])


def run(module, kube):
    params = module.params
    started = time.time()
    node_name, stage = params['node'], params['stage']
    cr, doc = pod_run.load_cr(kube, params['cr'], params['cr_name'])
    if params['package'] not in cr.packages:
        module.fail_json(msg='package %r is not in %s %s (packages: %s); nothing was changed'
                         % (params['package'], cr.kind, cr.name, ', '.join(sorted(cr.packages)) or 'none'),
                         node=node_name)
    package = cr.packages[params['package']]
    key = package.unique_name
    result = dict(node=node_name, package=key, stage=stage, changed=False)

    node = kube.get_node(node_name)
    annotations = (node.get('metadata') or {}).get('annotations') or {}
    state = node_state.decode(annotations.get(node_state.node_state_key(cr.name)),
                              where='node %s annotation %s' % (node_name, node_state.node_state_key(cr.name)))
    current = state.get(key)
    if current and current['stage'] == stage and current['state'] == 'complete' and not params['force']:
        result.update(outcome='skipped', entry=current, duration=round(time.time() - started, 3),
                      msg='%s stage %s is already complete on node %s' % (key, stage, node_name))
        return result

    uid, generation, status = pod_run.cr_identity(doc)
    settings = pod_run.operator_settings(params)
    namespace = params['namespace']
    package_cm = pod_layout.package_configmap(cr, package, namespace, cr_uid=uid)
    metadata_cm = pod_layout.node_metadata_configmap(cr, node, namespace, agent_image=params['agent_image'], cr_uid=uid)
    manifest = pod_layout.stage_pod(cr, package, stage, node_name, namespace,
                                    node_order=pod_layout.node_order_from_status(status, node_name),
                                    cr_uid=uid, cr_generation=generation, **settings)
    configmaps = [cm for cm in (package_cm, metadata_cm) if cm is not None]

    def in_progress(current_state):
        return node_state.upsert(current_state, package.name, package.version, package.image, 'in_progress', stage,
                                 0, package.container_sha)[0]

    # Nothing is written before the pod and the node write pass the API server as dry runs:
    # a missing namespace, an RBAC denial or an admission rejection fails here, with no change.
    runner = pod_run.PodRun(kube, manifest, pod_layout.log_containers(package.name, stage), retries=params['retries'],
                            timeout=params['timeout'], delete=params['delete_pod'], log_lines=params['log_lines'])
    dry_runs = params['preflight'] or module.check_mode
    adopted = runner.preflight(dry_run=dry_runs)
    if dry_runs:
        after_state = pod_run.write_node_state(kube, node_name, cr.name, in_progress, status='in_progress', dry_run=True,
                                               node=node)[0]
    if module.check_mode:
        result.update(changed=True, outcome='planned', manifest=manifest, adopt=adopted is not None, entry=after_state.get(key),
                      configmaps=dict((cm['metadata']['name'], 'planned') for cm in configmaps),
                      pod={'name': manifest['metadata']['name'], 'namespace': namespace},
                      duration=round(time.time() - started, 3))
        if module._diff:
            result['diff'] = {'before': {'entry': current}, 'after': {'entry': after_state.get(key)},
                              'before_header': 'node/%s %s' % (node_name, key), 'after_header': 'node/%s %s' % (node_name, key)}
        return result

    result['configmaps'] = dict((cm['metadata']['name'], kube.apply_configmap(cm)) for cm in configmaps)
    runner.start()
    try:
        pod_run.write_node_state(kube, node_name, cr.name, in_progress, status='in_progress')
    except (kube_api.KubeError, node_state.NodeStateError):
        runner.abandon()
        raise
    result['changed'] = True
    verdict = runner.wait()
    succeeded = verdict.get('outcome') == pod_layout.SUCCEEDED
    logs, unavailable = runner.logs() if not succeeded or params['collect_logs'] == 'always' else ({}, {})
    restarts = int(verdict.get('restarts') or 0)
    if succeeded:
        def finish(current_state):
            return node_state.stage_succeeded(current_state, package.name, package.version, package.image, stage,
                                              restarts, package.container_sha, has_interrupt=package.interrupt is not None)
        final_state = pod_run.write_node_state(kube, node_name, cr.name, finish)[0]
    else:
        def finish(current_state):
            return node_state.upsert(current_state, package.name, package.version, package.image, 'erroring', stage,
                                     restarts, package.container_sha)[0]
        final_state = pod_run.write_node_state(kube, node_name, cr.name, finish, status='erroring')[0]
    deleted = runner.cleanup(succeeded)
    result.update(
        outcome=verdict.get('outcome'), entry=final_state.get(key), logs=logs, logs_unavailable=unavailable,
        restarts=restarts, duration=round(time.time() - started, 3),
        pod={'name': runner.name, 'namespace': namespace, 'uid': runner.pod['metadata'].get('uid'),
             'adopted': runner.adopted, 'deleted': deleted})
    if module._diff:
        result['diff'] = {'before': {'entry': current}, 'after': {'entry': final_state.get(key)},
                          'before_header': 'node/%s %s' % (node_name, key), 'after_header': 'node/%s %s' % (node_name, key)}
    if not succeeded:
        container = verdict.get('container')
        result.update(container=container, exit_code=verdict.get('exit_code'), reason=verdict.get('reason'))
        if verdict.get('outcome') == 'timeout':
            why = 'did not finish within %ss' % params['timeout']
        elif verdict.get('outcome') == pod_layout.MISSING:
            why = 'pod %s/%s was deleted before it finished' % (namespace, runner.name)
        else:
            why = 'init container %s failed (exit code %s, reason %s, %d restart(s))' % (
                container, verdict.get('exit_code'), verdict.get('reason'), restarts)
        tail = _tail(logs.get(container)) if container else ''
        module.fail_json(msg='%s stage %s on node %s: %s; recorded as erroring%s' % (
            key, stage, node_name, why, ('\n--- %s log (last lines) ---\n%s' % (container, tail)) if tail else ''), **result)
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
        stage=dict(type='str', required=True, choices=list(pod_layout.POD_STAGES)),
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
