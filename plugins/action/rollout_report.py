# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""Action plugin for nodewright.bridge.rollout_report: the rollout timeline of this run, written on the controller.

The budgeted strategy records its rollouts on the run's bus (``plugin_utils/reporting/rollout_state.BUS``) in the
controller process. A worker is forked from that process when its task starts, so it holds every rollout
recorded until then (the plays before this one): the report is read here, in the worker.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import io
import os

from ansible.plugins.action import ActionBase

from ansible_collections.nodewright.bridge.plugins.modules.rollout_report import argument_spec
from ansible_collections.nodewright.bridge.plugins.plugin_utils.reporting import rollout_state
from ansible_collections.nodewright.bridge.plugins.plugin_utils.reporting import rollout_timeline


def _read(path):
    try:
        with io.open(path, encoding='utf-8', errors='replace') as handle:
            return handle.read()
    except (IOError, OSError):
        return None


class ActionModule(ActionBase):

    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        validation, params = self.validate_argument_spec(argument_spec=argument_spec())
        del validation
        report = params['report'] if params.get('report') is not None else rollout_state.BUS.report()
        page = rollout_timeline.render(report, title=params['title'])
        path = os.path.abspath(os.path.expanduser(params['path']))
        changed = _read(path) != page
        if changed and not self._task.check_mode:
            rollout_state.write_atomically(path, page)
        rollouts = report.get('rollouts') or []
        nodes = [n for r in rollouts for n in (r.get('nodes') or {}).values()]
        result.update(changed=changed, path=path, rollouts=len(rollouts), nodes=len(nodes),
                      steps=sum(len(n.get('steps') or ()) for n in nodes))
        return result
