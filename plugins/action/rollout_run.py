# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""Action plugin for nodewright.bridge.rollout_run: apply's rollout without the budgeted strategy (builtin_rollout.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.plugins.action import ActionBase
from ansible.utils.display import Display

from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube
from ansible_collections.nodewright.bridge.plugins.modules.rollout_run import argument_spec
from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution import venue
from ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout import builtin_rollout
from ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout import play_rollout
from ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout import rollout_config

display = Display()


class ActionModule(ActionBase):

    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        dummy, params = self.validate_argument_spec(argument_spec=argument_spec())
        if not kube.has_kubernetes():
            result.update(failed=True, msg='nodewright.bridge.rollout_run needs the kubernetes Python client on the controller')
            return result
        template = self._templar.template
        names = rollout_config.PLAY_VARS + tuple(var for var, dummy in play_rollout.CONNECTION_VARS)
        values = dict((var, template(task_vars[var])) for var in names if task_vars.get(var) is not None)
        hosts = list(task_vars.get('ansible_play_hosts_all') or [])
        hostvars = task_vars['hostvars']

        names = rollout_config.HOST_VARS + (builtin_rollout.HOSTVAR_RUNTIME_REQUIRED,)

        def host_vars_of(name):
            return dict((var, template(hostvars[name].get(var))) for var in names if hostvars[name].get(var) is not None)

        try:
            prepared = builtin_rollout.prepare_phases(values, hosts, host_vars_of, play_rollout.file_reader(self._loader))
        except rollout_config.RolloutConfigError as exc:
            result.update(failed=True, msg='invalid rollout configuration (%d problem%s): %s' % (
                len(exc.errors), '' if len(exc.errors) == 1 else 's', '; '.join(exc.errors)))
            return result

        def options_of(phase, name):
            return builtin_rollout.node_options(params['update'], phase, name, host_vars_of(name))
        runner = venue.BatchThreads(options_of, check_mode=self._task.check_mode)
        invalid = builtin_rollout.invalid_options(prepared, runner.validate)
        if invalid:
            result.update(failed=True, msg='invalid node_update options, no node touched: %s' % '; '.join(invalid))
            return result
        connection = dict((key, rollout_config.plain(values[var])) for var, key in play_rollout.CONNECTION_VARS
                          if values.get(var) not in (None, ''))
        rollout = builtin_rollout.BuiltinRollout(params.get('play_name') or task_vars.get('ansible_play_name') or 'rollout',
                                                 runner, connection, display.display, check_mode=self._task.check_mode)
        with kube.own_temp_files():
            try:
                result.update(rollout.run(prepared))
            finally:
                runner.close()
        return result
