# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""The code of the module nodewright.bridge.node_cordon (its options and everything after AnsibleModule).

Shared by the module (plugins/modules/node_cordon.py, which adds the documentation) and its action plugin,
which runs it in the controller's process (plugin_utils/execution/in_process.py).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube as kube_api
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import node_events
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import node_annotations
from ansible_collections.nodewright.bridge.plugins.module_utils.api import pod_run
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import _runner
from ansible_collections.nodewright.bridge.plugins.module_utils.model.constants import INHERITED_CORDON_PREFIX
from ansible_collections.nodewright.bridge.plugins.module_utils.model.cr_validation import cr_name_errors


def _view(node, gen):
    meta = node.get('metadata') or {}
    annotations = meta.get('annotations') or {}
    ours = dict((k, v) for k, v in annotations.items()
                if k.startswith(gen.cordon_prefix) or k.startswith(INHERITED_CORDON_PREFIX))
    return {'unschedulable': bool((node.get('spec') or {}).get('unschedulable')), 'annotations': ours}


def run(module, kube):
    name, owner, state = module.params['node'], module.params['cr_name'], module.params['state']

    def mutate(node):
        meta = node.get('metadata') or {}
        unschedulable = bool((node.get('spec') or {}).get('unschedulable'))
        if state == 'cordoned':
            return node_annotations.cordon_patch(owner, meta.get('annotations'), unschedulable,
                                                 take_over=module.params['take_over'], gen=gen)
        return node_annotations.uncordon_patch(owner, meta.get('annotations'), unschedulable, gen)[0]

    before_node = kube.get_node(name)  # first: a node that is not there (or no API server) is what the task says
    gen = kube.generation
    if state == 'cordoned' and module.params['hold']:
        hold = pod_run.held_by_name(kube, owner, before_node, gen=gen)
        if hold:
            raise _runner.ModuleFailed(hold[1].replace('no new pod starts', 'no cordon is taken'), node=name,
                                       changed=False, held=hold[0])
    before = _view(before_node, gen)
    after_node, patch = kube.update_node(name, mutate, node=before_node, dry_run=module.check_mode)
    # In check mode the server's dry run answers with the node as it would be.
    after = _view(after_node, gen)
    annotations = after['annotations']
    owners = node_annotations.cordon_owners(annotations, gen)
    inherited = annotations.get(node_annotations.inherited_cordon_key(owner)) == 'true'
    held = owner in owners
    if state == 'cordoned':
        message = 'node %s is cordoned by %s%s' % (
            name, owner, ' (inherited: it was already cordoned by someone else)' if inherited else '')
    elif after['unschedulable']:
        if patch is None and owner not in node_annotations.cordon_owners(before['annotations'], gen):
            why = 'it is not cordoned by %s' % owner
        elif owners:
            why = 'it is still cordoned by %s' % ', '.join(owners)
        else:
            why = 'it was cordoned by someone else before %s cordoned it' % owner
        message = 'node %s stays cordoned; %s' % (name, why)
    else:
        message = 'node %s is schedulable' % name
    if patch is not None:
        _runner.node_event(module, kube, name, node_events.cordoned(name, owner, inherited) if state == 'cordoned' else
                           node_events.uncordoned(name, owner, owners, after['unschedulable']))
    result = dict(changed=patch is not None, node=name, unschedulable=after['unschedulable'], owners=owners,
                  held=held, inherited=inherited, message=message)
    if module._diff:
        result['diff'] = node_annotations.node_diff(name, before, after)
    return result


def module_args():
    """The AnsibleModule keywords: the argument spec and its rules (also used in the controller process)."""
    argument_spec = kube_api.auth_argument_spec()
    argument_spec.update(
        node=dict(type='str', required=True, **_runner.renamed('name')),
        cr_name=dict(type='str', required=True, **_runner.renamed('owner')),
        state=dict(type='str', default='cordoned', choices=['cordoned', 'uncordoned']),
        take_over=dict(type='bool', default=False),
        hold=dict(type='bool', default=False),
    )
    return dict(argument_spec=argument_spec, supports_check_mode=True)


def check(params):
    errors = cr_name_errors(params['cr_name'], 'cr_name')
    if errors:
        raise _runner.ModuleFailed('; '.join(errors))


def execute(module):
    """Everything after AnsibleModule: validation, the run, exit_json / fail_json (cluster_modules/_runner.py)."""
    _runner.execute(module, run, context=dict(node=module.params['node']), check=check)
