# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""The code of the module nodewright.bridge.package_config (its options and everything after AnsibleModule).

The rules are module_utils/planning/config_edits.py's; this reads the CR, its package ConfigMaps, its nodes and
package pods, and writes what an applied edit changes, in the operator's order: the erroring pods go,
``status.configUpdates``, the nodes' state and status, then the ConfigMap.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.nodewright.bridge.plugins.module_utils.planning import config_edits
from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_validation
from ansible_collections.nodewright.bridge.plugins.module_utils.planning import status_rollup
from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube as kube_api
from ansible_collections.nodewright.bridge.plugins.module_utils.model import label_selector
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import node_annotations
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import pod_layout
from ansible_collections.nodewright.bridge.plugins.module_utils.api import pod_run
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import _runner

ATTEMPTS = 4


def _nodes(kube, cr):
    """``(node name -> decoded state, node name -> the node as listed)``, every node the CR selects; a state
    that cannot be read fails the module."""
    listing = kube.list_nodes(label_selector=label_selector.to_query(cr.node_selector) or None)
    states, nodes = {}, {}
    key = node_annotations.node_state_key(cr.name, kube.generation)
    for node in listing.get('items') or []:
        meta = node['metadata']
        if not label_selector.matches(cr.node_selector, meta.get('labels') or {}):
            continue
        states[meta['name']] = node_annotations.decode((meta.get('annotations') or {}).get(key),
                                                       where='node %s annotation %s' % (meta['name'], key))
        nodes[meta['name']] = node
    return states, nodes


def _package_pods(kube, cr, package, namespace):
    """The pods of ``package`` (any node), as the operator finds them by its name and package labels."""
    gen = kube.generation
    query = '%s=%s,%s=%s' % (gen.name_label, cr.name, gen.package_label, pod_layout.package_label(package))
    return kube.list_pods(namespace=namespace, label_selector=query).get('items') or []


def _write_updates(kube, name, wanted_of):
    """``status.configUpdates`` as ``wanted_of(current)`` leaves it, on fresh reads (guarded by the resourceVersion)."""
    for attempt in range(ATTEMPTS):
        doc = kube.get_cr(name)
        current = (doc.get('status') or {}).get('configUpdates') or {}
        wanted = wanted_of(current)
        if wanted == current:
            return
        try:
            kube.patch_cr_status(doc, {'status': {'configUpdates': status_rollup.map_patch(current, wanted)}})
            return
        except kube_api.Conflict:
            if attempt == ATTEMPTS - 1:
                raise


def _apply(kube, cr, doc, package, keys, decision, pods, params, nodes):
    """The edit, written: the erroring pods deleted, configUpdates, every node back in config, the ConfigMap."""
    for pod in pods:
        if pod['spec'].get('nodeName') in decision['restart']:
            kube.delete_pod(pod['metadata']['namespace'], pod['metadata']['name'], uid=pod['metadata'].get('uid'))
    all_complete = decision['all_complete']
    _write_updates(kube, cr.name,
                   lambda current: config_edits.config_updates_after(current, package.name, keys, all_complete))
    for name in sorted(nodes):
        # from the node as listed, no GET per node (a node written since is read again: resourceVersion-guarded)
        pod_run.write_node_state(kube, name, cr.name, lambda state: config_edits.restarted_state(state, package)[0],
                                 status='in_progress', node=nodes[name], gen=kube.generation)
    uid = pod_layout.cr_identity(doc)[0]
    kube.apply_configmap(pod_layout.package_configmap(cr, package, params['namespace'], cr_uid=uid, gen=kube.generation))


def run(module, kube):
    params = pod_run.with_defaults(module.params, kube.generation)
    name = params['cr_name']
    doc = kube.get_cr(name)
    cr = cr_validation.build_cr(doc, stored=True)
    result = dict(cr_name=name, changed=False, packages={})
    if cr.paused or cr.disabled:
        return dict(result, msg='%s is %s: its configMap edits wait' % (name, 'paused' if cr.paused else 'disabled'),
                    applied=[], waiting=[])
    states = nodes = None
    if cr.config_updates:
        # a version change ends an edit's keys (HandleVersionChange): the new version runs no old config interrupt
        states, nodes = _nodes(kube, cr)
        dropped = config_edits.dropped_by_version_change(cr, states)
        if dropped:
            result.update(changed=True, dropped=dropped)
            if not module.check_mode:
                _write_updates(kube, name, lambda current: dict((k, v) for k, v in current.items() if k not in dropped))
            cr.config_updates = dict((k, v) for k, v in cr.config_updates.items() if k not in dropped)
    dropped_msg = ('; configUpdates of %s dropped (a version change)' % ', '.join(result['dropped'])
                   if result.get('dropped') else '')
    listing = kube.list_configmaps(params['namespace'], label_selector='%s=%s' % (kube.generation.name_label, name))
    configmaps = dict((cm['metadata']['name'], cm.get('data') or {}) for cm in listing.get('items') or [])
    found = config_edits.edits(cr, configmaps)
    if not found:
        return dict(result, msg='%s: no package configMap differs from its ConfigMap%s' % (name, dropped_msg),
                    applied=[], waiting=[])
    if states is None:
        states, nodes = _nodes(kube, cr)
    for package, keys in found:
        pods = _package_pods(kube, cr, package, params['namespace'])
        decision = config_edits.decide(cr, package, states, pods_left=set(p['spec'].get('nodeName') for p in pods))
        result['packages'][package.name] = dict(keys=keys, action=decision['action'], why=decision['why'],
                                                restart=decision['restart'])
        if decision['action'] != 'apply':
            continue
        result['changed'] = True
        if not module.check_mode:
            _apply(kube, cr, doc, package, keys, decision, pods, params, nodes)
    applied = sorted(p for p, r in result['packages'].items() if r['action'] == 'apply')
    return dict(result, msg='%s: configMap edits %s%s' % (name, ', '.join(
        '%s %s (%s)' % (p, r['action'], r['why']) for p, r in sorted(result['packages'].items())), dropped_msg),
        applied=applied, waiting=config_edits.waiting(result['packages']))


def module_args():
    """The AnsibleModule keywords: the argument spec and its rules (also used in the controller process)."""
    argument_spec = kube_api.auth_argument_spec()
    argument_spec.update(cr_name=dict(type='str', required=True),
                         namespace=dict(type='str'))  # default: the generation's (pod_layout.defaults)
    return dict(argument_spec=argument_spec, supports_check_mode=True)


def execute(module):
    """Everything after AnsibleModule: the run, exit_json / fail_json (cluster_modules/_runner.py)."""
    _runner.execute(module, run, context=dict(cr_name=module.params['cr_name']))
