# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""The one way a cluster module ends: ``execute(module, run, ...)`` builds the API client, runs the
module's code and turns its result into ``exit_json`` and each known error into ``fail_json``
(as kubernetes.core's ``module_utils/k8s/runner.py`` does for its modules).

Module code never calls ``fail_json`` itself: it raises. ``ModuleFailed`` carries a message and
the result fields of a failure the module describes in full (a failed stage, a drain that a
PodDisruptionBudget blocked); the other exceptions are the collection's error types, each
reported with the fields every failure of the module carries (``context``: the node, the CR).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_model
from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube as kube_api
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import node_annotations
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import operator_presence
from ansible_collections.nodewright.bridge.plugins.module_utils.api import pod_run


# Options renamed for one name per concept (the node: ``node``, a CR's name: ``cr_name``); the old
# names stay as aliases that warn until this version.
RENAMED_UNTIL = '2.0.0'
COLLECTION = 'nodewright.bridge'


def renamed(*old_names):
    """The argument-spec keywords that keep an option's old names working, with a deprecation warning."""
    return dict(aliases=list(old_names),
                deprecated_aliases=[dict(name=old, version=RENAMED_UNTIL, collection_name=COLLECTION) for old in old_names])


class ModuleFailed(Exception):
    """The module fails with ``msg`` and exactly the fields of ``result`` (no ``context`` added)."""

    def __init__(self, msg, **result):
        super(ModuleFailed, self).__init__(msg)
        self.msg = msg
        self.result = result


# Errors of the collection's pure code whose text is the whole message (after the module's ``label``).
DOMAIN_ERRORS = (node_annotations.NodeStateError, operator_presence.GuardError)


def failure(exc, context=None, label=''):
    """``(msg, fields)`` for ``fail_json`` from an exception of a module's run, or None if it is not one of ours.

    ``context``: the fields every failure of the module carries (e.g. ``{'node': 'n1'}``);
    ``label``: a prefix for the message of a domain error (e.g. ``'node n1: '``).
    """
    context = dict(context or {})
    if isinstance(exc, ModuleFailed):
        return exc.msg, dict(exc.result)
    if isinstance(exc, cr_model.CRValidationError):
        return str(exc), dict(context, errors=exc.errors)
    if isinstance(exc, kube_api.NodeGone):
        # node_deleted: the budgeted strategy counts the node out of its compartment, as the operator does
        return exc.message, dict(context, status=exc.status, node=exc.node, node_deleted=True)
    if isinstance(exc, kube_api.KubeError):
        return exc.message, dict(context, status=exc.status)
    if isinstance(exc, DOMAIN_ERRORS):
        return label + str(exc), context
    return None


def planned_cr(kube, params):
    """``(cr, doc)`` of a pod step (package_stage, node_interrupt), read now; ModuleFailed before any pod or write
    when the CR is no longer the one the node was planned with (pod_run.planned_change: the node is planned again,
    or stopped when the CR was replaced)."""
    cr, doc = pod_run.load_cr(kube, params['cr'], params['cr_name'])
    changed_since_plan = pod_run.planned_change(params, doc)
    if changed_since_plan is not None:
        raise ModuleFailed(changed_since_plan[0], **changed_since_plan[1])
    return cr, doc


def node_event(module, kube, node, event):
    """Leave ``event`` (a node_events.NodeEvent) on the node: best effort, and never in check mode.

    A failure to write it does not fail the step; the first one in this process is a warning.
    """
    if event is None or module.check_mode:
        return
    warning = kube.node_event(node, event.reason, event.message, event_type=event.type)
    if warning:
        module.warn(warning)


def module_session(module):
    """The kube.KubeSession of a module run: the one its caller hands down (in_process.ControllerModule's
    ``kube_session``: the steps of one node share it), else that of its live CRs (the sequence engine's), else a
    new one for this run (an AnsiballZ module, a task's module in a worker)."""
    session = getattr(module, 'kube_session', None)
    if session is None:
        session = getattr(getattr(module, 'live_crs', None), 'session', None)
    return session if session is not None else kube_api.KubeSession()


def execute(module, run, context=None, label='', check=None, build_kube=True):
    """Everything after AnsibleModule for a cluster module.

    ``check(params)``: validation before any client is built (raises ``ModuleFailed``);
    ``run(module, kube)`` returns the result (``kube`` is None without ``build_kube``: the
    module builds its client itself, when it needs one, with ``module_session``). The result goes to ``exit_json``;
    a ``ModuleFailed`` or an error of the collection to ``fail_json`` (see ``failure``).
    Any other exception is a bug and is left to show its traceback.
    """
    kube = None
    try:
        if check is not None:
            check(module.params)
        if build_kube:
            kube = kube_api.Kube(module.params, live_crs=getattr(module, 'live_crs', None), session=module_session(module))
        result = run(module, kube)
    except (ModuleFailed, cr_model.CRValidationError, kube_api.KubeError) + DOMAIN_ERRORS as exc:
        msg, fields = failure(exc, context, label)
        _kube_warnings(module, kube)
        module.fail_json(msg=msg, **fields)
    _kube_warnings(module, kube)
    module.exit_json(**result)


def _kube_warnings(module, kube):
    """The client's warnings (a best-effort write refused, e.g. the node conditions) as the module's."""
    for warning in getattr(kube, 'warnings', None) or ():
        module.warn(warning)
