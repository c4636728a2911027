# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""Action plugin for nodewright.bridge.fleet_stage: one stage of a fleet rollout (plugin_utils/rollout/fleet_runs.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import resource

from ansible.plugins.action import ActionBase
from ansible.utils.display import Display

from ansible_collections.nodewright.bridge.plugins.module_utils.model import fleet_model
from ansible_collections.nodewright.bridge.plugins.module_utils.planning import fleet_progress
from ansible_collections.nodewright.bridge.plugins.module_utils.planning import rollout_gates
from ansible_collections.nodewright.bridge.plugins.modules.fleet_stage import argument_spec
from ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout import fleet_runs

display = Display()


class ActionModule(ActionBase):

    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        dummy, params = self.validate_argument_spec(argument_spec=argument_spec())
        try:
            fleet = fleet_model.parse_fleet(params['fleet'])
        except fleet_model.FleetError as exc:
            result.update(failed=True, msg='nodewright_fleet: %s' % exc)
            return result
        stages = dict((s.name, s) for s in fleet.stages)
        if params['stage'] not in stages:
            result.update(failed=True, msg='stage: %r is not a stage of the fleet (%s)' % (params['stage'], ', '.join(stages)))
            return result
        work_dir = params['work_dir']
        if not os.path.isdir(work_dir):
            os.makedirs(work_dir)
        try:
            run = fleet_runs.StageRun(fleet, stages[params['stage']], params['apply_vars'], work_dir, display.display,
                                      check_mode=self._task.check_mode, failed_before=len(params['failed_before_names']),
                                      selected=params['selected_nodes'], cr_names=params['cr_names'])
        except rollout_gates.GateConfigError as exc:
            result.update(failed=True, msg='apply_vars: %s' % '; '.join(exc.errors))
            return result
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        clusters = run.run()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        # the stage's apply runs (this task's only children): what the fleet adds is the rest (docs/dev/benchmarks.md)
        runs_cpu = round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 2)
        display.display('nodewright fleet: stage %s: the apply runs used %.2f CPU-s' % (params['stage'], runs_cpu))
        failed = sorted(c for c, r in clusters.items() if r['outcome'] in (fleet_runs.FAILED, fleet_runs.DEADLINE))
        # a node in a cluster's rollout was out of date (apply rolls out only those): changed, unless only planned
        stopped = run.over_budget() or run.deferred is not None
        every_failed = list(params['failed_before_names']) + failed
        reason = ''
        if run.over_budget():
            reason = '%d cluster(s) failed (%s), more than max_failures %d' % (
                len(every_failed), ', '.join(every_failed), fleet.max_failures)
        # the gate before the next stage: what each cluster's run left not complete, as its final plan (apply's last
        # play plans every CR again from the cluster) said it: every node complete and none erroring, or the stage holds.
        # A cluster whose run failed is max_failures' to count, not the gate's (within it, the rollout goes on); one
        # handed over to its operator is gated as one rolled here; a skipped one is left out, as the fleet chose
        ran = dict((cid, r) for cid, r in clusters.items() if r['outcome'] in (fleet_runs.OK, fleet_runs.HANDED_OVER))
        gate = [] if self._task.check_mode or stopped else fleet_progress.gate_problems(
            dict((cid, r.get('left')) for cid, r in ran.items()), ended=dict((cid, r.get('msg')) for cid, r in ran.items()))
        result.update(clusters=clusters, failed_clusters=failed, stopped=stopped, stop_reason=reason, deferred=run.deferred,
                      runs_cpu_seconds=runs_cpu, gate=gate,
                      changed=not self._task.check_mode and any(r['nodes'] for r in clusters.values()))
        return result
