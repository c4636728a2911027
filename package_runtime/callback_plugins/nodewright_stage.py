# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The tasks a role package's stage changed (or, in check mode, would change), for the stage script: a check stage
fails when any would change. Written to the file NODEWRIGHT_STAGE_RESULT names when the play ends. Part of the
runtime inside a role package (nodewright.bridge.role_package), loaded by the package's own ansible-core."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
name: nodewright_stage
type: aggregate
short_description: The tasks a NodeWright role package's stage changed
description:
  - Records the tasks (not the handlers) that changed, or in check mode would change, and the failed ones, and
    writes them as JSON to the file C(NODEWRIGHT_STAGE_RESULT) names.
author: nodewright.bridge contributors (@nodewright)
'''

import json
import os

from ansible.playbook.handler import Handler
from ansible.plugins.callback import CallbackBase


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = 'aggregate'
    CALLBACK_NAME = 'nodewright_stage'
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, *args, **kwargs):
        super(CallbackModule, self).__init__(*args, **kwargs)
        self.changed, self.failed = [], []

    def v2_runner_on_ok(self, result):
        if result._result.get('changed') and not isinstance(result._task, Handler):
            self.changed.append(result._task.get_name())

    def v2_runner_on_failed(self, result, ignore_errors=False):
        if not ignore_errors:
            self.failed.append('%s: %s' % (result._task.get_name(), result._result.get('msg', '')))

    def v2_runner_item_on_ok(self, result):
        self.v2_runner_on_ok(result)

    def v2_playbook_on_stats(self, stats):
        path = os.environ.get('NODEWRIGHT_STAGE_RESULT')
        if path:
            with open(path, 'w') as out:
                json.dump({'changed': self.changed, 'failed': self.failed}, out)
