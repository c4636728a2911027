# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""A clock the waits of plugin_utils (windows, gates, the admission) take as ``clock`` and ``sleep``: time moves
only when they sleep, and every sleep is recorded."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime

# Monday 2026-06-01 17:00 UTC.
MONDAY_5PM = datetime.datetime(2026, 6, 1, 17, 0, tzinfo=datetime.timezone.utc).timestamp()


class FakeClock(object):
    def __init__(self, now=MONDAY_5PM):
        self.now = now
        self.sleeps = []

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        assert seconds >= 0
        self.sleeps.append(seconds)
        self.now += seconds
