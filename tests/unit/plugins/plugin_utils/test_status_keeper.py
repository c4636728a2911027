# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""status_keeper and cr_status.sync without a cluster: who reads the CR, how writes coalesce, a conflict read afresh.

The writes against a real API server are in tests/kube (test_operator_contract, test_batch_state).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from ansible_collections.nodewright.bridge.plugins.module_utils.model import api_generation
from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube as kube_api
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import cr_status as cr_status_module
from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution import status_keeper

CR = {'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'Skyhook',
      'metadata': {'name': 'gpu', 'generation': 1, 'resourceVersion': '10',
                   'annotations': {'skyhook.nvidia.com/version': 'v0.15.0'}},
      'spec': {'nodeSelectors': {'matchLabels': {'pool': 'gpu'}},
               'packages': {'tuning': {'version': '1.0.0', 'image': 'ghcr.io/x/tuning'}}}}


class FakeKube(object):
    """The reads and the status write cr_status.sync makes; the first ``conflicts`` writes are refused with a 409."""

    generation = api_generation.SKYHOOK  # a v0.15 cluster

    def __init__(self, conflicts=0):
        self.conflicts = conflicts
        self.reads = []
        self.patches = []

    def get_cr(self, name, api_version=None, fresh=False):
        self.reads.append((name, fresh))
        return copy.deepcopy(CR)

    def get_policy(self, name):
        raise AssertionError('the CR names no policy')

    def list_nodes(self, label_selector=None):
        return {'items': [{'metadata': {'name': 'n1', 'labels': {'pool': 'gpu'}, 'annotations': {}},
                           'status': {'nodeInfo': {'bootID': 'b-1'}}}]}

    def patch_cr_status(self, doc, patch):
        if self.conflicts:
            self.conflicts -= 1
            raise kube_api.Conflict('patch skyhooks/status gpu: conflict', 409)
        self.patches.append(patch)
        return doc


def test_a_status_write_refused_with_a_conflict_reads_the_cr_afresh_past_the_watch():
    kube = FakeKube(conflicts=1)
    changed, wanted, unused = cr_status_module.sync(kube, 'gpu')
    # the first read may come from the engine's watch; the one after the conflict goes to the API server
    assert kube.reads == [('gpu', False), ('gpu', True)]
    assert changed and len(kube.patches) == 1
    assert kube.patches[0]['status']['nodeBootIds'] == {'n1': 'b-1'} and wanted['status'] == 'unknown'


def test_the_engines_keepers_read_the_cr_from_the_live_crs_of_their_connection():
    live = {}
    keepers = status_keeper.Keepers(make=status_keeper.DeferredKeeper,
                                    live_crs_for=lambda connection: live.setdefault(connection['kubeconfig'], object()))
    first = keepers.get({'kubeconfig': '/k'}, 'gpu')
    assert keepers.get({'kubeconfig': '/k'}, 'gpu') is first
    assert first.live_crs is live['/k']
    # a node's own keepers (a node_update in its own worker) have none: they GET the CR
    assert status_keeper.Keepers(make=status_keeper.DeferredKeeper).get({'kubeconfig': '/k'}, 'gpu').live_crs is None


def test_the_keepers_thread_writes_once_per_pending_burst_and_ends_when_none_is_pending():
    sleeps = []
    keeper = status_keeper.ThreadedKeeper({}, 'gpu', interval=1.0, sleep=sleeps.append)
    writes = []
    keeper.write = lambda: writes.append(1)
    keeper.dirty = True
    # what the thread does: sleep the interval, claim the pending write, write; then nothing is pending
    keeper._run()
    assert sleeps == [1.0, 1.0] and writes == [1]
    keeper.write_pending()
    assert writes == [1]
