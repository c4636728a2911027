#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: node_state
short_description: Read, reset, ignore or unignore the NodeWright state of a node
version_added: 0.1.0
author: nodewright.bridge contributors (@nodewright)
description:
  - Reads the NodeWright annotations and labels of a node and returns them decoded, per CR
    and per package (C(skyhook.nvidia.com/nodeState_<cr>), C(status_<cr>), C(cordon_<cr>),
    C(version_<cr>), the C(skyhook.nvidia.com/ignore) label).
  - V(reset) does what C(kubectl skyhook node reset) does (drops the CR's whole node state, so
    every package re-runs) or, with O(package), what C(kubectl skyhook package rerun) does
    (drops that package's entries; with O(stage), re-runs it from that stage).
  - V(ignore) and V(unignore) set and remove the C(skyhook.nvidia.com/ignore=true) label, which
    keeps the node out of every rollout (C(kubectl skyhook node ignore / unignore)).
  - V(complete) records that the CR is complete on the node (C(status_<cr>=complete), annotation and label,
    and C(version_<cr>)), as the operator does when every package is done, and removes the runtime-required
    taint once every CR in O(runtime_required_crs) is complete on the node (the operator's HandleRuntimeRequired).
    It refuses when the node state says a package is still in progress or erroring.
  - Writes carry the node's resourceVersion, so a concurrent writer's changes are never lost.
extends_documentation_fragment:
  - nodewright.bridge.k8s_auth
options:
  name:
    description: The node.
    type: str
    required: true
    aliases: [node]
  cr:
    description:
      - The Skyhook / NodeWright CR whose state to read, reset or complete. Required for V(reset) and V(complete).
      - For V(read) without it, the state of every CR on the node is returned.
    type: str
  action:
    description: What to do.
    type: str
    choices: [read, reset, ignore, unignore, complete]
    default: read
  runtime_required_crs:
    description:
      - For V(complete), the CRs with C(runtimeRequired) that target the node. When the list is not empty and all of
        them are complete on the node, the runtime-required taint is removed.
    type: list
    elements: str
    default: []
  runtime_required_taint:
    description: The runtime-required taint, C(key=value:Effect).
    type: str
    default: skyhook.nvidia.com=runtime-required:NoSchedule
  package:
    description:
      - For V(reset), the package to re-run (all its versions on the node unless O(version) is set).
        Without it the CR's whole state is reset.
    type: str
  version:
    description: For V(reset) with O(package), only this version of the package.
    type: str
  stage:
    description:
      - For V(reset) with O(package), keep the package's entry but re-run it from this stage
        (its state becomes C(in_progress)), as C(kubectl skyhook package rerun --stage) does.
    type: str
    choices: [apply, config, interrupt, post-interrupt]
  forget:
    description:
      - For V(reset) without O(package), drop every annotation and label the CR keeps on the node (nodeState, status
        annotation and label, version, autoTaint), as C(kubectl skyhook reset) does, not just its node state.
      - A cordon the CR holds is not dropped here (that would leave the node unschedulable with no owner); release it
        with M(nodewright.bridge.node_cordon).
    type: bool
    default: false
attributes:
  check_mode:
    support: full
    description: Changes are sent to the API server as a dry run.
  diff_mode:
    support: full
    description: Shows the node's state (or its cordon) before and after.
notes:
  - As C(kubectl skyhook node reset), a reset leaves the C(status_<cr>) annotation and label alone;
    they are rewritten by the next run.
'''

EXAMPLES = r'''
- name: Read what every CR did on a node
  nodewright.bridge.node_state:
    name: gpu-node-07
  register: node_info

- name: Show the state of the tuning package
  ansible.builtin.debug:
    var: node_info.states['gpu-tuning']['tuning|1.2.0']

- name: Re-run one package from its config stage
  nodewright.bridge.node_state:
    name: gpu-node-07
    cr: gpu-tuning
    action: reset
    package: tuning
    stage: config

- name: Reset everything the CR did on the node
  nodewright.bridge.node_state:
    name: gpu-node-07
    cr: gpu-tuning
    action: reset

- name: Record the CR complete on the node and lift the runtime-required taint
  nodewright.bridge.node_state:
    name: gpu-node-07
    cr: gpu-tuning
    action: complete
    runtime_required_crs: [gpu-tuning]

- name: Keep a node out of every rollout
  nodewright.bridge.node_state:
    name: gpu-node-07
    action: ignore
'''

RETURN = r'''
node:
  description: The node's name.
  returned: always
  type: str
states:
  description:
    - The node state per CR (after the task), keyed by package C(<name>|<version>), decoded from
      C(skyhook.nvidia.com/nodeState_<cr>). Each entry has C(name), C(version), C(image),
      C(containerSHA), C(stage), C(state) and C(restarts).
  returned: always
  type: dict
  sample: {"gpu-tuning": {"tuning|1.2.0": {"name": "tuning", "version": "1.2.0", "image": "ghcr.io/acme/tuning",
           "containerSHA": "", "stage": "config", "state": "complete", "restarts": 0}}}
status:
  description: The node status per CR (C(skyhook.nvidia.com/status_<cr>)).
  returned: always
  type: dict
  sample: {"gpu-tuning": "complete"}
versions:
  description: The operator version per CR whose formats the annotations use (C(skyhook.nvidia.com/version_<cr>)).
  returned: always
  type: dict
cordon_owners:
  description: CRs holding a NodeWright cordon on the node.
  returned: always
  type: list
  elements: str
unschedulable:
  description: Whether the node is cordoned.
  returned: always
  type: bool
ignored:
  description: Whether the node carries C(skyhook.nvidia.com/ignore=true).
  returned: always
  type: bool
taints:
  description: The node's taints after the task, as C(key=value:Effect).
  returned: always
  type: list
  elements: str
reset:
  description: The package entries (C(<name>|<version>)) that V(reset) removed or set to re-run.
  returned: when O(action=reset)
  type: list
  elements: str
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.nodewright.bridge.plugins.module_utils import kube as kube_api
from ansible_collections.nodewright.bridge.plugins.module_utils import node_state
from ansible_collections.nodewright.bridge.plugins.module_utils.cr_model import cr_name_errors


def _suffixed(annotations, prefix):
    return dict((k[len(prefix):], v) for k, v in sorted(annotations.items()) if k.startswith(prefix))


def describe_node(node, cr_name=None):
    meta = node.get('metadata') or {}
    annotations = meta.get('annotations') or {}
    labels = meta.get('labels') or {}
    status = _suffixed(annotations, node_state.status_key(''))
    versions = _suffixed(annotations, node_state.version_key(''))
    if cr_name is not None:
        status = dict((k, v) for k, v in status.items() if k == cr_name)
        versions = dict((k, v) for k, v in versions.items() if k == cr_name)
    return {
        'states': node_state.states_on_node(annotations, cr_name),
        'status': status,
        'versions': versions,
        'cordon_owners': node_state.cordon_owners(annotations),
        'unschedulable': bool((node.get('spec') or {}).get('unschedulable')),
        'ignored': node_state.is_ignored(labels),
        'taints': ['%s%s:%s' % (t.get('key'), '=' + t['value'] if t.get('value') else '', t.get('effect'))
                   for t in (node.get('spec') or {}).get('taints') or []],
    }


def complete_patch(node, cr_name, runtime_required_crs, taint_spec):
    """Status complete (+ version) for the CR, and the runtime-required taint off when due; None if all is so."""
    annotations = (node.get('metadata') or {}).get('annotations') or {}
    state = node_state.states_on_node(annotations, cr_name).get(cr_name) or {}
    unfinished = sorted(k for k, v in state.items() if v['state'] in ('in_progress', 'erroring'))
    if unfinished:
        raise node_state.NodeStateError('cannot record %s complete on node %s: %s still in progress or erroring'
                                        % (cr_name, (node.get('metadata') or {}).get('name'), ', '.join(unfinished)))
    patch = {'metadata': {'annotations': {}, 'labels': {}}}
    if annotations.get(node_state.status_key(cr_name)) != 'complete' or \
            ((node.get('metadata') or {}).get('labels') or {}).get(node_state.status_key(cr_name)) != 'complete':
        patch = node_state.status_patch(cr_name, 'complete')
    if annotations.get(node_state.version_key(cr_name)) != node_state.OPERATOR_VERSION:
        patch['metadata']['annotations'].update(node_state.version_patch(cr_name)['metadata']['annotations'])
    if runtime_required_crs:
        # The taint decision sees this CR as complete already (that is what this patch records).
        seen = dict(node, metadata=dict(node.get('metadata') or {}, annotations=dict(
            annotations, **{node_state.status_key(cr_name): 'complete'})))
        taint = node_state.runtime_taint_patch(seen, taint_spec, runtime_required_crs)
        if taint:
            patch.update(taint)
    if not patch['metadata']['annotations'] and not patch['metadata'].get('labels') and 'spec' not in patch:
        return None
    return patch


def run(module, kube):
    params = module.params
    name, cr_name, action = params['name'], params['cr'], params['action']
    node = kube.get_node(name)
    before = describe_node(node, cr_name)
    reset = []
    if action == 'read':
        return dict(changed=False, node=name, **before)

    def mutate(current):
        meta = current.get('metadata') or {}
        if action == 'complete':
            return complete_patch(current, cr_name, params['runtime_required_crs'], params['runtime_required_taint'])
        if action == 'reset' and params['forget'] and not params['package']:
            state_now = node_state.states_on_node(meta.get('annotations'), cr_name).get(cr_name) or {}
            reset[:] = sorted(state_now)
            return node_state.forget_patch(cr_name, meta.get('annotations'), meta.get('labels'))
        if action == 'reset':
            patch, hits = node_state.reset_patch(cr_name, meta.get('annotations'), params['package'],
                                                 params['version'], params['stage'])
            reset[:] = hits
            return patch
        return node_state.ignore_patch(meta.get('labels'), action == 'ignore')

    after_node, patch = kube.update_node(name, mutate, node=node, dry_run=module.check_mode)
    after = describe_node(after_node, cr_name)
    result = dict(changed=patch is not None, node=name, **after)
    if action == 'reset':
        result['reset'] = list(reset)
    if module._diff:
        result['diff'] = {'before': before, 'after': after, 'before_header': 'node/%s' % name,
                          'after_header': 'node/%s' % name}
    return result


def module_args():
    """The AnsibleModule keywords: the argument spec and its rules (also used in the controller process)."""
    argument_spec = kube_api.auth_argument_spec()
    argument_spec.update(
        name=dict(type='str', required=True, aliases=['node']),
        cr=dict(type='str'),
        action=dict(type='str', default='read', choices=['read', 'reset', 'ignore', 'unignore', 'complete']),
        runtime_required_crs=dict(type='list', elements='str', default=[]),
        runtime_required_taint=dict(type='str', default='skyhook.nvidia.com=runtime-required:NoSchedule'),
        package=dict(type='str'),
        version=dict(type='str'),
        stage=dict(type='str', choices=list(node_state.RERUN_STAGES)),
        forget=dict(type='bool', default=False),
    )
    return dict(argument_spec=argument_spec, supports_check_mode=True,
                required_if=[('action', 'reset', ('cr',)), ('action', 'complete', ('cr',))],
                required_by={'version': 'package', 'stage': 'package'})


def execute(module):
    """Everything after AnsibleModule: validation, the run, exit_json / fail_json."""
    params = module.params
    if params['cr'] is not None:
        errors = cr_name_errors(params['cr'], 'cr')
        if errors:
            module.fail_json(msg='; '.join(errors))
    if params['action'] != 'reset' and params['package']:
        module.fail_json(msg='package is only used with action=reset (got action=%s)' % params['action'])
    try:
        kube = kube_api.Kube(params)
        result = run(module, kube)
    except kube_api.KubeError as exc:
        module.fail_json(msg=exc.message, node=params['name'], status=exc.status)
    except node_state.NodeStateError as exc:
        module.fail_json(msg='node %s: %s' % (params['name'], exc), node=params['name'])
    module.exit_json(**result)


def main():
    execute(AnsibleModule(**module_args()))


if __name__ == '__main__':
    main()
