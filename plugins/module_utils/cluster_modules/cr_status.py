# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""The code of the module nodewright.bridge.cr_status (its options and everything after AnsibleModule),
and ``sync``, the one writer of a CR's status, which node_update's runs also call on each node transition.

The status is computed from the nodes (module_utils/status_rollup.py) and sent as a JSON merge patch of the
status subresource, guarded by the CR's resourceVersion: a write made in between (the operator's, another
run's) is a conflict, and the status is computed again from fresh reads.
"""

from __future__ import absolute_import, division, print_function

import collections
import datetime

__metaclass__ = type

from ansible_collections.nodewright.bridge.plugins.module_utils.contract import cr_handoff
from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_validation
from ansible_collections.nodewright.bridge.plugins.module_utils.planning import status_rollup
from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube as kube_api
from ansible_collections.nodewright.bridge.plugins.module_utils.model import label_selector
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import _runner
from ansible_collections.nodewright.bridge.plugins.module_utils.planning.planner import normalise_nodes

ATTEMPTS = 4
# What a refused status write needs (RBAC), named in the warning.
PERMISSION = 'patch on skyhooks/status (nodewrights/status for nodewright.nvidia.com CRs)'


def _now():
    return datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')


def _policy(kube, cr):
    """``(policy, document, missing)`` of the DeploymentPolicy the CR names, read from the cluster."""
    if not cr.deployment_policy:
        return None, None, False
    try:
        doc = kube.get_policy(cr.deployment_policy)
    except kube_api.NotFound:
        return None, None, True
    return cr_validation.build_policy(doc), doc, False


# What one evaluation of a CR read: its document and model, its policy, its nodes as the status sees them, the status.
Evaluation = collections.namedtuple('Evaluation', 'doc cr policy nodes wanted')


def evaluate(kube, cr_name, batch_states=None, waiting_for=(), picked=(), fresh=False):
    """The CR's wanted status from fresh reads of the CR, its policy and its nodes (one read each), with what was read.

    ``batch_states``: compartment -> the BatchProcessingState a running rollout has reached (the strategy's);
    ``waiting_for``: the earlier sequencing-all CRs that hold this one (status_rollup.aggregate); ``picked``: the nodes
    a batch starts now (status_rollup.node_priority); ``fresh``: read the CR from the API server even where the
    process watches it (after a conflict).
    """
    doc = kube.get_cr(cr_name, fresh=fresh)
    cr = cr_handoff.stored_cr(kube, doc, cr_validation.build_cr)
    policy, policy_doc, missing = _policy(kube, cr)
    listing = kube.list_nodes(label_selector=label_selector.to_query(cr.node_selector) or None)
    items = listing.get('items') or []
    gen = kube.generation
    nodes = status_rollup.status_nodes(cr, normalise_nodes(items), gen)
    boot_ids = dict((item['metadata']['name'], ((item.get('status') or {}).get('nodeInfo') or {}).get('bootID'))
                    for item in items)
    wanted = status_rollup.wanted_status(cr, doc, nodes, policy=policy, policy_doc=policy_doc, policy_missing=missing,
                                         now=_now(), batch_states=batch_states, waiting_for=waiting_for, picked=picked,
                                         boot_ids=boot_ids, gen=gen)
    return Evaluation(doc, cr, policy, nodes, wanted)


def compute(kube, cr_name, batch_states=None, waiting_for=(), picked=(), fresh=False):
    """``(CR document, wanted status, patch or None)`` (``evaluate``'s reads)."""
    found = evaluate(kube, cr_name, batch_states, waiting_for, picked, fresh)
    return found.doc, found.wanted, status_rollup.status_patch(found.doc.get('status'), found.wanted)


def sync(kube, cr_name, check_mode=False, batch_states=None, waiting_for=(), picked=()):
    """Write the CR's status as its nodes say it is: ``(changed, wanted status, CR document)``.

    A conflict (someone wrote the CR since it was read) is computed again on fresh data, up to
    ATTEMPTS times. Raises KubeError (the caller decides whether a status write may fail anything).
    """
    for attempt in range(ATTEMPTS):
        doc, wanted, patch = compute(kube, cr_name, batch_states, waiting_for, picked, fresh=attempt > 0)
        if check_mode:
            return patch is not None, wanted, doc
        stamped = _stamp_version(kube, doc)
        if patch is None:
            return stamped, wanted, doc
        try:
            kube.patch_cr_status(doc, patch)
            return True, wanted, doc
        except kube_api.Conflict:
            if attempt == ATTEMPTS - 1:
                raise
    return False, wanted, doc


def _stamp_version(kube, doc):
    """The CR's version annotation, as the operator's first reconcile writes it (status_rollup.version_annotation_patch):
    once per CR; True when written. A refusal (no ``patch`` on the CR itself, which the status needs not) is let
    be: the plugin then warns that it cannot tell the operator's version, nothing else changes."""
    patch = status_rollup.version_annotation_patch(doc, kube.generation)
    if patch is None:
        return False
    try:
        after = kube.patch_cr(doc, patch)
    except kube_api.KubeError as exc:
        if exc.status in (401, 403, 404):
            return False
        raise
    # the status patch that follows is guarded by the CR's resourceVersion: carry the new one
    doc['metadata']['resourceVersion'] = (after.get('metadata') or {}).get('resourceVersion')
    doc['metadata'].setdefault('annotations', {}).update(patch['metadata']['annotations'])
    return True


def refusal_warning(cr_name, exc):
    """The warning for a status write the API server refused (the rollout goes on), naming the permission."""
    if exc.status == 403:
        return ('the status of %s was not written: the API server refused it (%s); grant %s (examples/rbac) so that '
                'kubectl get, kubectl wait and GitOps health checks see the rollout' % (cr_name, exc.message, PERMISSION))
    return 'the status of %s was not written: %s' % (cr_name, exc.message)


def run(module, kube):
    name = module.params['cr_name']
    before = None
    try:
        changed, wanted, doc = sync(kube, name, check_mode=module.check_mode, waiting_for=module.params['waiting_for'])
    except kube_api.KubeError as exc:
        if exc.status != 403 or module.params['fail_on_refusal']:
            raise
        module.warn(refusal_warning(name, exc))
        return dict(changed=False, cr_name=name, written=False)
    before = doc.get('status') or {}
    result = dict(changed=changed, cr_name=name, written=changed and not module.check_mode,
                  status=dict((k, v) for k, v in wanted.items() if v is not None))
    if module._diff:
        result['diff'] = {'before': dict((k, before.get(k)) for k in status_rollup.OWNED_FIELDS if k in before),
                          'after': result['status']}
    return result


def module_args():
    """The AnsibleModule keywords: the argument spec and its rules (also used in the controller process)."""
    argument_spec = kube_api.auth_argument_spec()
    argument_spec.update(
        cr_name=dict(type='str', required=True),
        fail_on_refusal=dict(type='bool', default=False),
        waiting_for=dict(type='list', elements='str', default=[]),
    )
    return dict(argument_spec=argument_spec, supports_check_mode=True)


def execute(module):
    """Everything after AnsibleModule: the run, exit_json / fail_json (cluster_modules/_runner.py)."""
    _runner.execute(module, run, context=dict(cr_name=module.params['cr_name']))
