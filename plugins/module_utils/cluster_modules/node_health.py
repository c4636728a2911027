# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""The code of the module nodewright.bridge.node_health (its options and everything after AnsibleModule).

Shared by the module (plugins/modules/node_health.py, which adds the documentation) and its action plugin,
which runs it in the controller's process (plugin_utils/execution/in_process.py).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible_collections.nodewright.bridge.plugins.module_utils.contract import drain_rules
from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube as kube_api
from ansible_collections.nodewright.bridge.plugins.module_utils.model import label_selector
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import node_conditions
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import node_events
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import node_annotations
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import _runner
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules._runner import ModuleFailed


def run(module, kube):
    params = module.params
    name = params['node']
    started = time.time()
    try:
        selector = label_selector.normalize_selector(params['pod_selector'], 'pod_selector')
    except ValueError as exc:
        raise ModuleFailed(str(exc), node=name)
    first = kube.get_node(name)  # a clear "does not exist" before waiting
    try:
        node = _wait_for_node(kube, name, params['boot_id_not'], params['timeout'])
        result = dict(changed=False, node=name, ready=True, boot_id=node_conditions.boot_id(node))
        if selector is not None:
            remaining = max(1, params['timeout'] - (time.time() - started))
            pods = _wait_for_pods(kube, name, selector, params['min_pods'], remaining, params['timeout'])
            result['pods'] = dict((drain_rules.pod_key(p), node_conditions.pod_ready(p)) for p in pods)
    except ModuleFailed as exc:
        # a health check that passes changes nothing and leaves no Event; one that fails is a Warning,
        # for the CRs whose cordon the node carries
        owners = node_annotations.cordon_owners((first.get('metadata') or {}).get('annotations'), kube.generation)
        _runner.node_event(module, kube, name, node_events.health_failed(name, owners, exc.msg))
        raise
    result['waited'] = round(time.time() - started, 3)
    return result


def _wait_for_node(kube, name, boot_id_not, timeout):
    """By watch: the node Ready (and, with ``boot_id_not``, with another boot ID); raises ModuleFailed."""
    def node_ok(node):
        healthy = node_conditions.rebooted(node, boot_id_not) if boot_id_not else node_conditions.is_ready(node)
        return node if healthy else None

    try:
        return kube.watch_node(name, node_ok, timeout,
                               what='node %s to be Ready%s' % (name, ' with a new boot ID' if boot_id_not else ''))
    except kube_api.WaitTimeout as exc:
        last = list((exc.last or {}).values())
        raise ModuleFailed('node %s is not healthy after %ss: Ready=%s, boot ID %s%s' % (
            name, timeout, node_conditions.is_ready(last[0]) if last else 'unknown',
            node_conditions.boot_id(last[0]) if last else 'unknown',
            ' (still the one from before the reboot)' if last and node_conditions.boot_id(last[0]) == boot_id_not else ''),
            node=name)


def _wait_for_pods(kube, name, selector, min_pods, remaining, timeout):
    """By watch: at least ``min_pods`` pods matching ``selector`` on the node, all Ready; raises ModuleFailed."""
    def pods_ok(objects):
        matching = [p for p in objects.values() if label_selector.selector_matches(selector, drain_rules.pod_labels(p))]
        return len(matching) >= min_pods and all(node_conditions.pod_ready(p) for p in matching) and matching

    try:
        return kube.watch_until('pods', pods_ok, remaining, field_selector='spec.nodeName=%s' % name,
                                what='the pods matching pod_selector on node %s to be Ready' % name)
    except kube_api.WaitTimeout as exc:
        matching = [p for p in (exc.last or {}).values() if label_selector.selector_matches(selector, drain_rules.pod_labels(p))]
        raise ModuleFailed('node %s: pods matching pod_selector not Ready after %ss (%d found, %d needed): %s' % (
            name, timeout, len(matching), min_pods,
            ', '.join('%s (%s)' % (drain_rules.pod_key(p), 'Ready' if node_conditions.pod_ready(p) else 'not Ready')
                      for p in matching) or 'none'), node=name)


def module_args():
    """The AnsibleModule keywords: the argument spec and its rules (also used in the controller process)."""
    argument_spec = kube_api.auth_argument_spec()
    argument_spec.update(
        node=dict(type='str', required=True, **_runner.renamed('name')),
        boot_id_not=dict(type='str'),
        pod_selector=dict(type='raw'),
        min_pods=dict(type='int', default=1),
        timeout=dict(type='int', default=600),
    )
    return dict(argument_spec=argument_spec, supports_check_mode=True)


def execute(module):
    """Everything after AnsibleModule: the run, exit_json / fail_json (cluster_modules/_runner.py)."""
    _runner.execute(module, run, context=dict(node=module.params['node']))
