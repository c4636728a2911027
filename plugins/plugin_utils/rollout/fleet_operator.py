# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""A fleet cluster whose NodeWright operator reconciles a CR of the run: found before the cluster starts, and, for a
cluster handed over to its operator, what that operator has left to do.

Why before the cluster starts: each cluster's apply run refuses such a CR (its operator guard), which a fleet would
count as a failed cluster. The fleet asks first, the same way (module_utils' operator guard: the operator's leader
Lease held, or its recent writes of the CR), and gives the cluster what the fleet file chose for it
(fleet_model.SKIP or HANDOVER). A CR only in the run's file, not in the cluster, is no operator's to reconcile.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube as kube_api
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import operator_guard
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import rollout_plan
from ansible_collections.nodewright.bridge.plugins.module_utils.planning import fleet_progress


class _Params(object):
    """What the operator guard's run reads of a module: its params."""

    def __init__(self, params):
        self.params = params


def _params(cluster_module, connection, api, cr_name):
    """A cluster module's params for ``cr_name`` in the cluster of ``connection``: its own argument spec's defaults
    (module_utils.cluster_modules.<name>.module_args), as the module would have them."""
    given = dict(connection, cr_name=cr_name, nodewright_api=api)
    validator = ArgumentSpecValidator(cluster_module.module_args()['argument_spec'])
    return validator.validate(dict((k, v) for k, v in given.items() if v is not None)).validated_parameters


def reconciled(connection, cr_names, api=None, session=None):
    """``[(cr name, evidence)]`` of the CRs of ``cr_names`` that a running NodeWright operator reconciles in the
    cluster of ``connection`` ({kubeconfig, context}); ``api``: the run's nodewright_api (None: auto). KubeError when
    the cluster cannot be asked."""
    kube = None
    found = []
    for name in cr_names:
        params = _params(operator_guard, connection, api, name)
        kube = kube or kube_api.Kube(params, session=session)
        try:
            # the guard's own reads (the CR, then the operator's leases) and judgement
            dummy, assessment, dummy_warnings = operator_guard.run(_Params(params), kube)
        except kube_api.NotFound:
            continue  # only in the run's file: no operator reconciles it
        if assessment['active']:
            found.append((name, '; '.join(assessment['evidence'][:2]) or 'its operator is running'))
    return found


def describe(found):
    """'the NodeWright operator reconciles gpu-tuning (its lease ...)' for the CRs ``reconciled`` found."""
    return 'the NodeWright operator reconciles %s' % ', '.join('%s (%s)' % (name, evidence) for name, evidence in found)


def left(connection, cr_names, api=None, session=None):
    """What is left to do of ``cr_names`` in the cluster, as the fleet's gate reads it (fleet_progress.nodes_left:
    ``{cr: {erroring, not_done}}``, empty when every node is complete): each CR planned from the cluster."""
    plans = []
    for name in cr_names:
        try:
            plans.append(dict(rollout_plan.run(_params(rollout_plan, connection, api, name), lambda text: None,
                                               session=session), item=name))
        except kube_api.NotFound:
            continue  # not in the cluster: nothing of it for the operator to do there
        except (kube_api.KubeError, ValueError) as exc:
            plans.append({'item': name, 'failed': True, 'msg': str(exc)})
    return fleet_progress.nodes_left(plans)
