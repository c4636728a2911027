# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The private ansible-core names plugin_utils/execution/core_internals.py lists, on the ansible-core running the tests.

The strategy matrix runs this file on every version it tests: a release that drops or moves a name fails here,
with the name, before a rollout meets the accessor's fallback. A name the list bounds to other versions is skipped.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from strategy_helpers import import_collection

import_collection()

from ansible import __version__ as ANSIBLE_VERSION  # noqa: E402 pylint: disable=wrong-import-position

from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution import core_internals  # noqa: E402 pylint: disable=wrong-import-position
from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution import task_threads  # noqa: E402 pylint: disable=wrong-import-position


@pytest.mark.parametrize('internal', core_internals.INTERNALS, ids=lambda i: '%s.%s' % (i.owner, i.name))
def test_each_listed_name_exists_on_this_ansible_core(internal):
    if not core_internals.applies(internal, ANSIBLE_VERSION):
        pytest.skip('listed for ansible-core %s to %s' % (internal.versions[0], internal.versions[1] or 'the newest'))
    assert core_internals.missing(ANSIBLE_VERSION, [internal]) == [], (
        'ansible-core %s has no %s on %s (used in %s; without it: %s)'
        % (ANSIBLE_VERSION, internal.name, internal.owner, ', '.join(internal.used_in), internal.fallback))


def test_the_task_threads_shapes_are_listed_for_exactly_the_versions_whose_worker_it_mirrors():
    shapes = [i for i in core_internals.INTERNALS if i.used_in == (core_internals.TASK_THREADS,)]
    assert shapes
    assert all(core_internals.applies(i, ANSIBLE_VERSION) for i in shapes) == task_threads._SHAPE_OK
