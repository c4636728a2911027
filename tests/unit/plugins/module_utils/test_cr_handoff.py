# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The CR handed down from a plan to its steps: its identity, what a changed CR means, one validation per version."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.nodewright.bridge.plugins.module_utils.contract import cr_handoff
from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_model
from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_validation
from ansible_collections.nodewright.bridge.plugins.module_utils.api import pod_run


def _doc(uid='u-1', generation=3, rv='100', image='registry.local/tuning'):
    meta = {'name': 'tuning'}
    if uid is not None:
        meta.update(uid=uid, generation=generation, resourceVersion=rv)
    return {'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'Skyhook', 'metadata': meta,
            'spec': {'packages': {'tuning': {'version': '1.0.0', 'image': image}}}}


def test_identity_of_a_stored_cr_and_of_a_file():
    assert cr_handoff.identity(_doc()) == {'name': 'tuning', 'uid': 'u-1', 'generation': 3, 'resource_version': '100'}
    assert cr_handoff.identity(_doc(uid=None)) == {'name': 'tuning', 'uid': None, 'generation': None,
                                                   'resource_version': None}


@pytest.mark.parametrize('planned,now,outcome', [
    ({'uid': 'u-1', 'generation': 3}, {'uid': 'u-1', 'generation': 3}, cr_handoff.SAME),
    # a status write or a pause moves the resourceVersion, not the generation: the spec planned with
    ({'uid': 'u-1', 'generation': 3, 'resource_version': '1'}, {'uid': 'u-1', 'generation': 3, 'resource_version': '9'},
     cr_handoff.SAME),
    ({'uid': 'u-1', 'generation': 3}, {'uid': 'u-1', 'generation': 4}, cr_handoff.NEW_GENERATION),
    # deleted and created again: another CR, whatever its generation
    ({'uid': 'u-1', 'generation': 3}, {'uid': 'u-2', 'generation': 1}, cr_handoff.REPLACED),
    ({'uid': 'u-1', 'generation': 3}, {'uid': 'u-2', 'generation': 3}, cr_handoff.REPLACED),
    # a CR from a file on either side, or nothing handed down: nothing to compare
    ({'uid': None, 'generation': None}, {'uid': 'u-1', 'generation': 3}, cr_handoff.SAME),
    (None, {'uid': 'u-1', 'generation': 3}, cr_handoff.SAME),
    ({'uid': 'u-1', 'generation': 3}, {'uid': None}, cr_handoff.SAME),
    ({'uid': 'u-1', 'generation': None}, {'uid': 'u-1', 'generation': 4}, cr_handoff.SAME),
])
def test_change(planned, now, outcome):
    assert cr_handoff.change(planned, now) == outcome


def test_describe_says_what_changed():
    planned, now = {'name': 'tuning', 'uid': 'u-1', 'generation': 3}, {'name': 'tuning', 'uid': 'u-1', 'generation': 4}
    assert 'generation 3, now 4' in cr_handoff.describe(cr_handoff.NEW_GENERATION, planned, now)
    replaced = cr_handoff.describe(cr_handoff.REPLACED, planned, dict(now, uid='u-2'))
    assert 'deleted and created again' in replaced and 'u-1' in replaced and 'u-2' in replaced
    assert cr_handoff.describe(cr_handoff.SAME, planned, planned) == ''


class _Counting(object):
    def __init__(self):
        self.count = 0

    def build(self, doc, stored=False):
        self.count += 1
        return cr_validation.build_cr(doc, stored=stored)


def test_a_stored_version_is_validated_once():
    cache, counter = cr_handoff.ValidatedCRs(), _Counting()
    first = cache.get(_doc(), True, lambda: counter.build(_doc(), stored=True))
    again = cache.get(_doc(), True, lambda: counter.build(_doc(), stored=True))
    assert again is first and counter.count == 1 and cache.builds == 1
    # any write moves the resourceVersion: that version is validated on its own
    newer = cache.get(_doc(rv='101'), True, lambda: counter.build(_doc(rv='101'), stored=True))
    assert newer is not first and counter.count == 2


def test_a_file_document_is_validated_every_time():
    cache, counter = cr_handoff.ValidatedCRs(), _Counting()
    for dummy in range(2):
        cache.get(_doc(uid=None), False, lambda: counter.build(_doc(uid=None)))
    # stored=False: even with a uid and resourceVersion, a document given is not the cluster's
    cache.get(_doc(), False, lambda: counter.build(_doc()))
    assert counter.count == 3 and not cache.models


def test_an_invalid_version_is_not_kept():
    cache = cr_handoff.ValidatedCRs()
    bad = _doc(image='')
    for dummy in range(2):
        with pytest.raises(cr_model.CRValidationError):
            cache.get(bad, True, lambda: cr_validation.build_cr(bad, stored=True))
    assert not cache.models


def test_the_table_is_bounded():
    cache = cr_handoff.ValidatedCRs(size=2)
    for rv in ('1', '2', '3'):
        cache.get(_doc(rv=rv), True, object)
    assert len(cache.models) == 2
    assert [key[3] for key in cache.models] == ['2', '3']  # the least recently used went


def test_stored_cr_without_a_session_builds():
    class Bare(object):
        pass
    assert cr_handoff.stored_cr(Bare(), _doc(), cr_validation.build_cr).name == 'tuning'


def _params(**overrides):
    params = dict(cr=None, cr_name='tuning', node='n1', package='tuning', stage='apply',
                  cr_identity={'uid': 'u-1', 'generation': 3})
    params.update(overrides)
    return params


def test_a_pod_step_goes_on_with_the_cr_planned():
    assert pod_run.planned_change(_params(), _doc(rv='555')) is None
    assert pod_run.planned_change(_params(cr_identity=None), _doc(generation=9)) is None
    # a CR given as a document: nothing to compare
    assert pod_run.planned_change(_params(cr=[_doc()]), _doc(generation=9)) is None


def test_a_pod_step_finds_a_new_generation_superseded():
    message, failure = pod_run.planned_change(_params(), _doc(generation=4))
    assert failure['superseded'] and 'generation 3, now 4' in failure['superseded']
    assert failure['changed'] is False and 'nothing was changed' in message and 'cr_replaced' not in failure


def test_a_pod_step_finds_a_replaced_cr():
    message, failure = pod_run.planned_change(_params(), _doc(uid='u-2', generation=1))
    assert failure['cr_replaced'] is True and 'superseded' not in failure
    assert 'deleted and created again' in message
