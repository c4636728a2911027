# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""The code of the module nodewright.bridge.rollout_metrics: the NodeWright operator's Prometheus series of a CR,
computed from the cluster and pushed to a Pushgateway (or written as a node-exporter textfile), docs/metrics.md.

The series come from the CR's status as ``cluster_modules/cr_status.compute`` derives it from the nodes (the status
the run writes, the one the operator would report), rendered by module_utils/contract/operator_metrics.py; the sinks are
module_utils/api/metrics_sink.py's. One Pushgateway group per CR (the job, and the generation's CR-name label), replaced
whole by each push, so a failed push leaves the last complete set. A sink that fails is a warning by default
(``on_error``): the rollout goes on.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
import time

from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube as kube_api
from ansible_collections.nodewright.bridge.plugins.module_utils.api import metrics_sink
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import operator_metrics
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import protected_wait
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import _runner
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import cr_status as cr_status_module

ON_ERROR = ('warn', 'fail', 'ignore')
_LABEL_NAME = re.compile(r'^[a-zA-Z_][a-zA-Z0-9_]*$')


def grouping_key(params, gen):
    """The Pushgateway grouping labels of the CR: ``grouping``, then the generation's CR-name label (one group per
    CR, so that two CRs never replace each other's series)."""
    label = operator_metrics.naming(gen)['label']
    return dict(params.get('grouping') or {}, **{label: params['cr_name']})


def textfile_name(params):
    """``<job>_<cr>``: the textfile's name without ``.prom`` (one per CR)."""
    return '%s_%s' % (re.sub(r'[^A-Za-z0-9_.-]', '_', params['job']), params['cr_name'])


def metrics_of(kube, params, extra_gauges=()):
    """``(text, series)``: the exposition of the CR's operator series and its number of samples.

    ``extra_gauges``: more gauges of the CR in the same push (operator_metrics.Gauge; ``node_gauge`` builds a per-node
    one), rendered after the operator's with the generation's prefix, CR-name label and legacy twins."""
    found = cr_status_module.evaluate(kube, params['cr_name'], waiting_for=params['waiting_for'])
    gen = kube.generation
    naming = operator_metrics.naming(gen)
    gauges = operator_metrics.operator_gauges(found.cr, found.wanted, found.policy, restarts=naming['restarts'])
    gauges.append(operator_metrics.protected_wait_gauge(naming['kind'], _protected_waits(found.nodes)))
    gauges.extend(extra_gauges)
    text = operator_metrics.exposition(params['cr_name'], gauges, gen, legacy=params['legacy_metrics'])
    return text, sum(1 for line in text.splitlines() if line and not line.startswith('#'))


def _protected_waits(nodes, now=None):
    """``{node: seconds}`` of the CR's nodes (cr_status.StatusNode) that wait for their protected pods now."""
    now = time.time() if now is None else now
    return dict((n.name, round(protected_wait.waited_seconds(n.protected_wait, now), 1))
                for n in nodes if n.protected_wait is not None and not n.complete)


def _pushgateway(params):
    return metrics_sink.Pushgateway(params['pushgateway_url'], bearer_token=params['pushgateway_bearer_token'],
                                    ca_path=params['pushgateway_ca_path'],
                                    validate_certs=params['pushgateway_validate_certs'],
                                    timeout=params['pushgateway_timeout'])


def _write(params, gen, text, result):
    """Push and / or write ``text``; the messages of the sinks that failed."""
    errors = []
    if params['pushgateway_url']:
        try:
            result['group_url'] = _pushgateway(params).push(params['job'], grouping_key(params, gen), text)
            result['pushed'] = True
        except metrics_sink.SinkError as exc:
            errors.append(str(exc))
    if params['textfile_dir']:
        try:
            result['textfile'] = metrics_sink.write_textfile(params['textfile_dir'], textfile_name(params), text)
            result['written'] = True
        except metrics_sink.SinkError as exc:
            errors.append(str(exc))
    return errors


def _remove(params, gen, result):
    """state=absent: the CR's group deleted and its textfile removed; the messages of the sinks that failed."""
    errors = []
    if params['pushgateway_url']:
        try:
            result['group_url'] = _pushgateway(params).delete(params['job'], grouping_key(params, gen))
            result['pushed'] = True
        except metrics_sink.SinkError as exc:
            errors.append(str(exc))
    if params['textfile_dir']:
        try:
            result['written'] = metrics_sink.remove_textfile(params['textfile_dir'], textfile_name(params))
            result['textfile'] = metrics_sink.textfile_path(params['textfile_dir'], textfile_name(params))
        except metrics_sink.SinkError as exc:
            errors.append(str(exc))
    return errors


def failure_message(cr_name, errors, state='present'):
    """One message for the sinks that failed (each names its URL or file and the reason)."""
    what = 'the metrics of %s were not written' % cr_name if state == 'present' else \
        'the metrics of %s were not removed' % cr_name
    return '%s (the sink keeps what it had: nothing half-written): %s' % (what, '; '.join(errors))


def check_params(params):
    """The options' own rules, before any client is built (ModuleFailed)."""
    bad = sorted(k for k in (params.get('grouping') or {}) if not _LABEL_NAME.match(str(k)) or str(k) == 'job')
    if bad:
        raise _runner.ModuleFailed('grouping: %s: not a label name a Pushgateway group can have (a Prometheus label '
                                   'name, not job)' % ', '.join(bad), cr_name=params['cr_name'])
    url = params.get('pushgateway_url')
    if url and not re.match(r'^https?://[^/]+', url):
        raise _runner.ModuleFailed('pushgateway_url: %r is not an http:// or https:// URL of a Pushgateway' % url,
                                   cr_name=params['cr_name'])


def run(module, kube):
    params = module.params
    gen = kube.generation
    result = dict(changed=False, cr_name=params['cr_name'], pushed=False, written=False)
    sinks = bool(params['pushgateway_url'] or params['textfile_dir'])
    if params['state'] == 'absent':
        if module.check_mode:
            return dict(result, changed=sinks)
        errors = _remove(params, gen, result)
    else:
        result['metrics'], result['series'] = metrics_of(kube, params)
        if module.check_mode:
            return dict(result, changed=sinks)
        errors = _write(params, gen, result['metrics'], result)
    result['changed'] = result['pushed'] or result['written']
    if errors:
        message = failure_message(params['cr_name'], errors, params['state'])
        if params['on_error'] == 'fail':
            raise _runner.ModuleFailed(message, **result)
        result['error'] = message
        if params['on_error'] == 'warn':
            module.warn(message + '; the rollout goes on (on_error=fail stops the play on it)')
    return result


def module_args():
    """The AnsibleModule keywords: the argument spec and its rules (also used in the controller process)."""
    argument_spec = kube_api.auth_argument_spec()
    argument_spec.update(
        cr_name=dict(type='str', required=True),
        state=dict(type='str', default='present', choices=['present', 'absent']),
        pushgateway_url=dict(type='str'),
        job=dict(type='str', default=metrics_sink.DEFAULT_JOB),
        grouping=dict(type='dict', default={}),
        # the Pushgateway's connection (validate_certs and the others without a prefix are the API server's)
        pushgateway_bearer_token=dict(type='str', no_log=True),
        pushgateway_ca_path=dict(type='path'),
        pushgateway_validate_certs=dict(type='bool', default=True),
        pushgateway_timeout=dict(type='int', default=metrics_sink.DEFAULT_TIMEOUT),
        textfile_dir=dict(type='path'),
        legacy_metrics=dict(type='bool', default=True),
        on_error=dict(type='str', default='warn', choices=list(ON_ERROR)),
        waiting_for=dict(type='list', elements='str', default=[]),
    )
    return dict(argument_spec=argument_spec, supports_check_mode=True)


def execute(module):
    """Everything after AnsibleModule: the run, exit_json / fail_json (cluster_modules/_runner.py)."""
    _runner.execute(module, run, context=dict(cr_name=module.params['cr_name']), check=check_params)
