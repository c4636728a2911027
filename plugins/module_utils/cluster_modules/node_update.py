# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""The code of the module nodewright.bridge.node_update (its options and everything after AnsibleModule).

Shared by the module (plugins/modules/node_update.py, which adds the documentation) and its action plugin,
which runs it in the controller's process (plugin_utils/execution/in_process.py).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube as kube_api
from ansible_collections.nodewright.bridge.plugins.module_utils.api import pod_run
from ansible_collections.nodewright.bridge.plugins.module_utils.api import slot_mailbox


def module_args():
    """The AnsibleModule keywords: the argument spec and its rules (the action plugin validates with them)."""
    argument_spec = kube_api.auth_argument_spec()
    argument_spec.update(pod_run.OPERATOR_OPTIONS)
    argument_spec.update(
        node=dict(type='str', required=True),
        cr=dict(type='raw'),
        cr_name=dict(type='str'),
        runtime_required_crs=dict(type='list', elements='str', default=[]),
        wait_for_protected_timeout=dict(type='int', default=3600),
        # set by the budgeted strategy (its host variable nodewright_park): node_drain's park
        park=slot_mailbox.PARK_ARGUMENT,
        drain_timeout=dict(type='int', default=600),
        drain_preflight=dict(type='bool', default=False),
        drain_skip=dict(type='dict', default={}),
        stage_timeout=dict(type='int', default=1800),
        interrupt_timeout=dict(type='int', default=1800),
        stage_retries=dict(type='int', default=0),
        delete_pod=dict(type='str', default='on_success', choices=list(pod_run.DELETE_POLICIES)),
        health_pod_selector=dict(type='raw'),
        health_min_pods=dict(type='int', default=1),
        health_timeout=dict(type='int', default=600),
        uncordon_on_failure=dict(type='bool', default=False),
        take_over=dict(type='bool'),
        cr_identity=dict(type='dict', options=dict(uid=dict(type='str'), generation=dict(type='int'))),
        operator_guard=dict(type='bool', default=True),
        force=dict(type='bool', default=False),
        # set by the fleet playbook (nodewright_fleet_budget): the node-disruption budget over a fleet of clusters
        fleet_budget=dict(type='dict', options=dict(
            fleet=dict(type='str', required=True), cluster=dict(type='str', required=True),
            count=dict(type='int', required=True), namespace=dict(type='str', default='skyhook'),
            kubeconfig=dict(type='str'), context=dict(type='str'), slot_expiry=dict(type='int', default=60))),
    )
    # cr / cr_name: one of them is required; the sequence says so in the role's words (NodeSequence.run)
    return dict(argument_spec=argument_spec, supports_check_mode=True)
