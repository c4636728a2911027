# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""Test-only callback: one JSON line per runner event, for the tests under tests/strategy."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
name: nw_recorder
type: aggregate
short_description: Record runner events as JSON lines (tests only)
description:
  - Appends one JSON object per task start and result to the file named by C(NW_RECORDER), and at the end of
    the playbook how many processes ansible-playbook forked (workers, the sequence engine).
author:
  - nodewright.bridge contributors (@nodewright)
'''

import json
import os
import threading
import time

from ansible.plugins.callback import CallbackBase


def _attr(result, name):
    # ansible-core 2.19+ has .host/.task; earlier versions only the underscored names
    value = getattr(result, name, None)
    return value if value is not None else getattr(result, '_' + name)


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = 'aggregate'
    CALLBACK_NAME = 'nw_recorder'
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, *args, **kwargs):
        super(CallbackModule, self).__init__(*args, **kwargs)
        self._path = os.environ.get('NW_RECORDER')
        self._lock = threading.Lock()
        self._play = None
        self._pid = os.getpid()
        self._forks = 0
        if hasattr(os, 'register_at_fork'):
            os.register_at_fork(before=self._count_fork)

    def _count_fork(self):
        if os.getpid() == self._pid:  # ansible-playbook's forks, not a worker's
            self._forks += 1

    def _write(self, event, host, task):
        if not self._path:
            return
        line = json.dumps({'event': event, 'host': host.get_name(), 'task': task.get_name(), 'play': self._play,
                           'handler': type(task).__name__ == 'Handler', 'time': time.time()})
        with self._lock:
            with open(self._path, 'a') as handle:
                handle.write(line + '\n')

    def v2_playbook_on_stats(self, stats):
        if self._path:
            with self._lock:
                with open(self._path, 'a') as handle:
                    handle.write(json.dumps({'event': 'forks', 'count': self._forks, 'time': time.time()}) + '\n')

    def v2_playbook_on_play_start(self, play):
        self._play = play.get_name()

    def v2_runner_on_start(self, host, task):
        self._write('start', host, task)

    def v2_runner_on_ok(self, result):
        self._write('ok', _attr(result, 'host'), _attr(result, 'task'))

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._write('failed', _attr(result, 'host'), _attr(result, 'task'))

    def v2_runner_on_skipped(self, result):
        self._write('skipped', _attr(result, 'host'), _attr(result, 'task'))

    def v2_runner_on_unreachable(self, result):
        self._write('unreachable', _attr(result, 'host'), _attr(result, 'task'))
