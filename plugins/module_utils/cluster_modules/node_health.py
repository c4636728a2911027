# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The code of the module nodewright.bridge.node_health (its options and everything after AnsibleModule).

Shared by the module (plugins/modules/node_health.py, which adds the documentation) and its action plugin,
which runs it in the controller's process (plugin_utils/in_process.py).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible_collections.nodewright.bridge.plugins.module_utils import drain_rules
from ansible_collections.nodewright.bridge.plugins.module_utils import kube as kube_api


def _condition(obj, kind):
    for cond in (obj.get('status') or {}).get('conditions') or []:
        if cond.get('type') == kind:
            return cond.get('status') == 'True'
    return False


def _boot_id(node):
    return ((node.get('status') or {}).get('nodeInfo') or {}).get('bootID') or ''


def _pod_ready(pod):
    return (pod.get('status') or {}).get('phase') == 'Running' and _condition(pod, 'Ready') \
        and not (pod.get('metadata') or {}).get('deletionTimestamp')


def run(module, kube):
    params = module.params
    name = params['name']
    started = time.time()
    try:
        selector = drain_rules.normalize_selector(params['pod_selector'], 'pod_selector')
    except ValueError as exc:
        module.fail_json(msg=str(exc), node=name)
    kube.get_node(name)  # a clear "does not exist" before waiting

    def node_ok(objects):
        for node in objects.values():
            if _condition(node, 'Ready') and (not params['boot_id_not'] or _boot_id(node) not in ('', params['boot_id_not'])):
                return node
        return None

    try:
        node = kube.watch_until('nodes', node_ok, params['timeout'], field_selector='metadata.name=%s' % name,
                                what='node %s to be Ready%s' % (name, ' with a new boot ID' if params['boot_id_not'] else ''))
    except kube_api.WaitTimeout as exc:
        last = list((exc.last or {}).values())
        module.fail_json(msg='node %s is not healthy after %ss: Ready=%s, boot ID %s%s' % (
            name, params['timeout'], _condition(last[0], 'Ready') if last else 'unknown',
            _boot_id(last[0]) if last else 'unknown',
            ' (still the one from before the reboot)' if last and _boot_id(last[0]) == params['boot_id_not'] else ''),
            node=name)
    result = dict(changed=False, node=name, ready=True, boot_id=_boot_id(node))
    if selector is not None:
        def pods_ok(objects):
            matching = [p for p in objects.values() if drain_rules.selector_matches(selector, drain_rules.pod_labels(p))]
            return len(matching) >= params['min_pods'] and all(_pod_ready(p) for p in matching) and matching
        remaining = max(1, params['timeout'] - (time.time() - started))
        try:
            pods = kube.watch_until('pods', pods_ok, remaining, field_selector='spec.nodeName=%s' % name,
                                    what='the pods matching pod_selector on node %s to be Ready' % name)
        except kube_api.WaitTimeout as exc:
            matching = [p for p in (exc.last or {}).values() if drain_rules.selector_matches(selector, drain_rules.pod_labels(p))]
            module.fail_json(msg='node %s: pods matching pod_selector not Ready after %ss (%d found, %d needed): %s' % (
                name, params['timeout'], len(matching), params['min_pods'],
                ', '.join('%s (%s)' % (drain_rules.pod_key(p), 'Ready' if _pod_ready(p) else 'not Ready') for p in matching)
                or 'none'), node=name)
        result['pods'] = dict((drain_rules.pod_key(p), _pod_ready(p)) for p in pods)
    result['waited'] = round(time.time() - started, 3)
    return result


def module_args():
    """The AnsibleModule keywords: the argument spec and its rules (also used in the controller process)."""
    argument_spec = kube_api.auth_argument_spec()
    argument_spec.update(
        name=dict(type='str', required=True, aliases=['node']),
        boot_id_not=dict(type='str'),
        pod_selector=dict(type='raw'),
        min_pods=dict(type='int', default=1),
        timeout=dict(type='int', default=600),
    )
    return dict(argument_spec=argument_spec, supports_check_mode=True)


def execute(module):
    """Everything after AnsibleModule: validation, the run, exit_json / fail_json."""
    try:
        result = run(module, kube_api.Kube(module.params))
    except kube_api.KubeError as exc:
        module.fail_json(msg=exc.message, node=module.params['name'], status=exc.status)
    module.exit_json(**result)
