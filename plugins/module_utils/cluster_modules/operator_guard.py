# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""The code of the module nodewright.bridge.operator_guard (its options and everything after AnsibleModule).

Shared by the module (plugins/modules/operator_guard.py, which adds the documentation) and its action plugin,
which runs it in the controller's process (plugin_utils/execution/in_process.py).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time
from email.utils import parsedate_tz, mktime_tz

from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube as kube_api
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import operator_presence
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import _runner
from ansible_collections.nodewright.bridge.plugins.module_utils.model.cr_validation import cr_name_errors


def _http_date(headers):
    """Epoch seconds from an HTTP Date header, or None."""
    if not headers:
        return None
    try:
        value = headers.get('Date') or headers.get('date')
    except AttributeError:
        return None
    parsed = parsedate_tz(value) if value else None
    return float(mktime_tz(parsed)) if parsed else None


def read_lease(kube, namespace, name):
    """``(lease or None, why not, the API server's time or None)``.

    A GET of the Lease (coordination/v1) through ``kube.call`` (its errors), keeping the
    response's Date header so that ages are measured by the API server's clock.
    """
    seen = {}

    def read(*args, **kwargs):
        try:
            resp = kube_api.unchecked(kube.coordination.read_namespaced_lease)(*args, **kwargs)
        except kube_api.client_library().ApiException as exc:
            seen['date'] = _http_date(getattr(exc, 'headers', None))
            raise
        seen['date'] = _http_date(getattr(resp, 'headers', None))
        return resp

    what = kube_api.describe('get', 'lease', name, namespace)
    try:
        return kube.call(what, read, name, namespace), None, seen.get('date')
    except kube_api.NotFound:
        return None, 'not found', seen.get('date')
    except kube_api.KubeError as exc:
        if exc.status in (401, 403):
            return None, exc.message, seen.get('date')
        raise


def _rfc3339(epoch):
    return time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(epoch))


def describe_cr(cr, assessment):
    meta = cr.get('metadata') or {}
    status = cr.get('status') or {}
    return {
        'name': meta.get('name'),
        'kind': cr.get('kind'),
        'apiVersion': cr.get('apiVersion'),
        'generation': meta.get('generation'),
        'observedGeneration': status.get('observedGeneration'),
        'status': status.get('status'),
        'paused': assessment['paused'],
        'disabled': assessment['disabled'],
        'deleting': assessment['deleting'],
    }


def run(module, kube):
    params = module.params
    gen = kube.generation
    cr = kube.get_cr(params['cr_name'])
    # the generation's leases in its namespace (v0.18+ holds two), unless the options name one
    namespace = params['lease_namespace'] or gen.default_namespace
    names = [params['lease_name']] if params['lease_name'] else list(gen.leases)
    lease, lease_error, server_now = read_lease(kube, namespace, names[0])
    more = []
    for name in names[1:]:
        other, other_error, dummy = read_lease(kube, namespace, name)
        more.append(((namespace, name), other, other_error))
    local_now = time.time()
    now = server_now if server_now is not None else local_now
    assessment = operator_presence.assess(cr, lease, now, window=params['window'], lease_ref=(namespace, names[0]),
                                          lease_error=lease_error, managers=params['operator_managers'], gen=gen, more_leases=more)
    evidence = list(assessment['evidence'])
    skew = None if server_now is None else round(local_now - server_now, 3)
    if skew is not None and abs(skew) > 5:
        evidence.append('the local clock is %+.0fs off the API server\'s; ages are measured by the API server\'s' % skew)
    result = dict(
        changed=False,
        active=assessment['active'],
        operator_running=assessment['operator_running'],
        evidence=evidence,
        lease=assessment['lease'],
        last_operator_write=assessment['last_operator_write'],
        cr=describe_cr(cr, assessment),
        clock={'source': 'api-server' if server_now is not None else 'local', 'now': _rfc3339(now),
               'local_skew_seconds': skew},
    )
    warnings = list(assessment['warnings'])
    if lease is None and lease_error and lease_error != 'not found':
        warnings.append('the lease %s/%s could not be read (%s): only the CR\'s writes of the last %ss can show a '
                        'running operator' % (namespace, names[0], lease_error, params['window']))
    return result, assessment, warnings


def module_args():
    """The AnsibleModule keywords: the argument spec and its rules (also used in the controller process)."""
    argument_spec = kube_api.auth_argument_spec()
    argument_spec.update(
        cr_name=dict(type='str', required=True, **_runner.renamed('cr')),
        # default: the generation's namespace and every lease of its operator (api_generation)
        lease_namespace=dict(type='str'),
        lease_name=dict(type='str'),
        window=dict(type='int', default=operator_presence.DEFAULT_WINDOW),
        operator_managers=dict(type='list', elements='str', default=list(operator_presence.OPERATOR_MANAGERS)),
        force=dict(type='bool', default=False),
    )
    return dict(argument_spec=argument_spec, supports_check_mode=True)


def check(params):
    errors = cr_name_errors(params['cr_name'], 'cr_name')
    if params['window'] < 0:
        errors.append('window must be >= 0 seconds (got %d)' % params['window'])
    for key in ('lease_namespace', 'lease_name'):
        if params[key] is not None and not params[key]:
            errors.append('%s must not be empty' % key)
    if errors:
        raise _runner.ModuleFailed('; '.join(errors))


def guard_module(module, kube):
    """The run, its warnings, and the refusal when the operator is active (unless ``force``)."""
    result, assessment, warnings = run(module, kube)
    for warning in warnings:
        module.warn(warning)
    if assessment['active']:
        if not module.params['force']:
            raise _runner.ModuleFailed(operator_presence.refusal_message(assessment, kube.generation), **result)
        module.warn(operator_presence.force_warning(assessment))
    return result


def execute(module):
    """Everything after AnsibleModule: validation, the run, exit_json / fail_json (cluster_modules/_runner.py)."""
    cr_name = module.params['cr_name']
    _runner.execute(module, guard_module, context=dict(cr_name=cr_name), label='%s: ' % cr_name, check=check)
