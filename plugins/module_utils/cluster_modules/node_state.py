# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""The code of the module nodewright.bridge.node_state (its options and everything after AnsibleModule).

Shared by the module (plugins/modules/node_annotations.py, which adds the documentation) and its action plugin,
which runs it in the controller's process (plugin_utils/execution/in_process.py).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import threading

from ansible_collections.nodewright.bridge.plugins.module_utils.contract import cr_handoff
from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_validation
from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube as kube_api
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import node_conditions
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import node_events
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import node_annotations
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import _runner
from ansible_collections.nodewright.bridge.plugins.module_utils.model.api_generation import SKYHOOK
from ansible_collections.nodewright.bridge.plugins.module_utils.model.cr_validation import cr_name_errors
from ansible_collections.nodewright.bridge.plugins.module_utils.model.stages import RERUN_STAGES


def _suffixed(annotations, prefix):
    return dict((k[len(prefix):], v) for k, v in sorted(annotations.items()) if k.startswith(prefix))


def describe_node(node, cr_name=None, gen=SKYHOOK):
    meta = node.get('metadata') or {}
    annotations = meta.get('annotations') or {}
    labels = meta.get('labels') or {}
    status = _suffixed(annotations, gen.status_prefix)
    versions = _suffixed(annotations, gen.version_prefix)
    if cr_name is not None:
        status = dict((k, v) for k, v in status.items() if k == cr_name)
        versions = dict((k, v) for k, v in versions.items() if k == cr_name)
    return {
        'states': node_annotations.states_on_node(annotations, cr_name, gen),
        'status': status,
        'versions': versions,
        'cordon_owners': node_annotations.cordon_owners(annotations, gen),
        'unschedulable': bool((node.get('spec') or {}).get('unschedulable')),
        'ignored': node_annotations.is_ignored(labels, gen),
        'taints': ['%s%s:%s' % (t.get('key'), '=' + t['value'] if t.get('value') else '', t.get('effect'))
                   for t in (node.get('spec') or {}).get('taints') or []],
    }


def complete_patch(node, cr_name, runtime_required_crs, taint_spec, gen=SKYHOOK, cordon_after=None):
    """Status complete (+ version) for the CR, and the runtime-required taint off when due; None if all is so.

    ``cordon_after()``: whether a runtimeRequired CR of the node sets runtimeRequiredCordonAfter (asked only when
    the taint comes off): the node is then cordoned in the same write (node_annotations.persistent_cordon).
    """
    annotations = (node.get('metadata') or {}).get('annotations') or {}
    state = node_annotations.states_on_node(annotations, cr_name, gen).get(cr_name) or {}
    unfinished = sorted(k for k, v in state.items() if v['state'] in ('in_progress', 'erroring'))
    if unfinished:
        raise node_annotations.NodeStateError('cannot record %s complete on node %s: %s still in progress or erroring'
                                              % (cr_name, (node.get('metadata') or {}).get('name'), ', '.join(unfinished)))
    patch = {'metadata': {'annotations': {}, 'labels': {}}}
    key = node_annotations.status_key(cr_name, gen)
    if annotations.get(key) != 'complete' or ((node.get('metadata') or {}).get('labels') or {}).get(key) != 'complete':
        patch = node_annotations.status_patch(cr_name, 'complete', gen)
    if annotations.get(node_annotations.version_key(cr_name, gen)) != gen.operator_version:
        patch['metadata']['annotations'].update(node_annotations.version_patch(cr_name, gen=gen)['metadata']['annotations'])
    if runtime_required_crs:
        # The taint decision sees this CR as complete already (that is what this patch records).
        seen = dict(node, metadata=dict(node.get('metadata') or {}, annotations=dict(
            annotations, **{key: 'complete'})))
        taint = node_annotations.runtime_taint_patch(seen, taint_spec, runtime_required_crs, gen)
        if taint and cordon_after is not None and cordon_after():
            taint = node_annotations.persistent_cordon(taint, gen)
        if taint:
            patch['spec'] = taint['spec']
            patch['metadata']['annotations'].update((taint.get('metadata') or {}).get('annotations') or {})
    stale = node_annotations.stale_persistent_cordon_patch(annotations, (node.get('spec') or {}).get('unschedulable'), gen)
    if stale:
        patch['metadata']['annotations'].update(stale['metadata']['annotations'])
    if not patch['metadata']['annotations'] and not patch['metadata'].get('labels') and 'spec' not in patch:
        return None
    return patch


def _cordon_after(kube, cr_names, gen):
    """Whether one of the runtimeRequired CRs ``cr_names`` sets runtimeRequiredCordonAfter (a v0.19+ field: never under
    the legacy generation). Read when a node's taint comes off; in the sequence engine from its CR watches."""
    if gen.runtime_required_cordon_annotation is None:
        return False
    for name in cr_names:
        cr = cr_handoff.stored_cr(kube, kube.get_cr(name, gen.api_version), cr_validation.build_cr)
        if cr.runtime_required and cr.runtime_required_cordon_after:
            return True
    return False


# Nodes one task with ``nodes`` writes at once. The apply playbook records every node of a new CR waiting before the
# first batch, and one node after the other that took 32 s at 1,000 nodes (three requests each).
RECORD_THREADS = 16


def run(module, kube):
    if module.params['nodes'] is not None:
        return record_on_nodes(module, kube)
    return run_on_node(module, kube, module.params['node'])


def record_on_nodes(module, kube):
    """action=record on every node of ``nodes`` (RECORD_THREADS at once): ``nodes`` maps each to its own result.

    Each node's write stands on its own (one guarded patch, as for one node): when some fail, the others keep
    their record and the task fails naming each node at fault and why.
    """
    names = [n for n in dict.fromkeys(module.params['nodes']) if n]
    results, errors, todo = {}, {}, list(reversed(names))

    def work():
        while True:
            try:
                name = todo.pop()
            except IndexError:
                return
            try:
                results[name] = run_on_node(module, kube, name)
            except (kube_api.KubeError, node_annotations.NodeStateError) as exc:
                errors[name] = getattr(exc, 'message', None) or str(exc)

    threads = [threading.Thread(target=work, name='node_state record') for dummy in range(min(RECORD_THREADS, len(names)))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    result = dict(changed=any(r['changed'] for r in results.values()),
                  nodes=dict((n, dict((k, v) for k, v in results[n].items() if k != 'diff')) for n in names if n in results))
    if module._diff:
        result['diff'] = [results[n]['diff'] for n in names if 'diff' in results.get(n, {})]
    if errors:
        failed = [n for n in names if n in errors]
        raise _runner.ModuleFailed('%d of %d nodes not recorded %s: %s' % (
            len(failed), len(names), module.params['status'],
            '; '.join(errors[n] if n in errors[n] else 'node %s: %s' % (n, errors[n]) for n in failed)),
            failed_nodes=failed, **result)
    return result


def run_on_node(module, kube, name):
    params = module.params
    cr_name, action = params['cr_name'], params['action']
    node = kube.get_node(name)  # first: a node that is not there (or no API server) is what the task says
    gen = kube.generation
    before = describe_node(node, cr_name, gen)
    reset = []
    taint = params['runtime_required_taint'] or gen.runtime_required_taint
    if action == 'read':
        return dict(changed=False, node=name, **before)

    def mutate(current):
        meta = current.get('metadata') or {}
        if action == 'complete':
            return complete_patch(current, cr_name, params['runtime_required_crs'], taint, gen,
                                  cordon_after=lambda: _cordon_after(kube, params['runtime_required_crs'], gen))
        if action == 'reset' and params['forget'] and not params['package']:
            state_now = node_annotations.states_on_node(meta.get('annotations'), cr_name, gen).get(cr_name) or {}
            reset[:] = sorted(state_now)
            return node_annotations.forget_patch(cr_name, meta.get('annotations'), meta.get('labels'), gen)
        if action == 'reset':
            patch, hits = node_annotations.reset_patch(cr_name, meta.get('annotations'), params['package'],
                                                       params['version'], params['stage'], gen)
            reset[:] = hits
            return node_annotations.unrecord_complete(patch, cr_name, meta.get('annotations'), meta.get('labels'), gen)
        if action == 'record':
            return node_annotations.record_patch(cr_name, params['status'], meta.get('annotations'), meta.get('labels'), gen)
        if action == 'auto_taint':
            return node_annotations.auto_taint_patch(current, taint, gen)
        return node_annotations.ignore_patch(meta.get('labels'), action == 'ignore', gen)

    # the CR's node conditions follow its record on the node (not for ignore / unignore: no record changes)
    conditions = node_conditions.writer(cr_name, gen=gen) if action in ('complete', 'reset', 'record') else None
    after_node, patch = kube.update_node(name, mutate, node=node, dry_run=module.check_mode, conditions=conditions)
    after = describe_node(after_node, cr_name, gen)
    result = dict(changed=patch is not None, node=name, **after)
    if action == 'complete' and patch is not None and before['status'].get(cr_name) != 'complete':
        _runner.node_event(module, kube, name, node_events.complete(cr_name))
    if action == 'reset':
        result['reset'] = list(reset)
    if module._diff:
        result['diff'] = node_annotations.node_diff(name, before, after)
    return result


def module_args():
    """The AnsibleModule keywords: the argument spec and its rules (also used in the controller process)."""
    argument_spec = kube_api.auth_argument_spec()
    argument_spec.update(
        node=dict(type='str', **_runner.renamed('name')),
        nodes=dict(type='list', elements='str'),
        cr_name=dict(type='str', **_runner.renamed('cr')),
        action=dict(type='str', default='read',
                    choices=['read', 'reset', 'ignore', 'unignore', 'complete', 'record', 'auto_taint']),
        status=dict(type='str', choices=list(node_annotations.RECORDED_STATUSES)),
        runtime_required_crs=dict(type='list', elements='str', default=[]),
        # default: the generation's RUNTIME_REQUIRED_TAINT (api_generation), known once the client has chosen it
        runtime_required_taint=dict(type='str'),
        package=dict(type='str'),
        version=dict(type='str'),
        stage=dict(type='str', choices=list(RERUN_STAGES)),
        forget=dict(type='bool', default=False),
    )
    return dict(argument_spec=argument_spec, supports_check_mode=True,
                required_one_of=[('node', 'nodes')], mutually_exclusive=[('node', 'nodes')],
                required_if=[('action', 'reset', ('cr_name',)), ('action', 'complete', ('cr_name',)),
                             ('action', 'record', ('cr_name', 'status'))],
                required_by={'version': 'package', 'stage': 'package'})


def check(params):
    if params['cr_name'] is not None:
        errors = cr_name_errors(params['cr_name'], 'cr_name')
        if errors:
            raise _runner.ModuleFailed('; '.join(errors))
    if params['action'] != 'reset' and params['package']:
        raise _runner.ModuleFailed('package is only used with action=reset (got action=%s)' % params['action'])
    if params['action'] != 'record' and params['status']:
        raise _runner.ModuleFailed('status is only used with action=record (got action=%s)' % params['action'])
    if params['nodes'] is not None and params['action'] != 'record':
        raise _runner.ModuleFailed('nodes is only used with action=record (got action=%s); give one node' % params['action'])
    if params['nodes'] is not None and not [n for n in params['nodes'] if n]:
        raise _runner.ModuleFailed('nodes: give at least one node name')


def execute(module):
    """Everything after AnsibleModule: validation, the run, exit_json / fail_json (cluster_modules/_runner.py)."""
    node = module.params['node']
    if node is None:  # several nodes: each one's failure is named in the message (record_on_nodes)
        _runner.execute(module, run, check=check)
    else:
        _runner.execute(module, run, context=dict(node=node), label='node %s: ' % node, check=check)
