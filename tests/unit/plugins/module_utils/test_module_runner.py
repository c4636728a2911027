# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""cluster_modules/_runner: each error of a module's run becomes the fail_json it has always been."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_model
from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube as kube_api
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import node_annotations
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import operator_presence
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import _runner
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import node_drain


class _Ended(BaseException):
    pass


class FakeModule(object):
    """The two exits of AnsibleModule, recorded; each ends the run as AnsibleModule's does."""

    def __init__(self, **params):
        self.params = params
        self.exited = None
        self.failed = None

    def exit_json(self, **result):
        self.exited = result
        raise _Ended()

    def fail_json(self, msg, **result):
        self.failed = dict(result, msg=msg)
        raise _Ended()


def _execute(run, **keywords):
    module = FakeModule(node='n1')
    with pytest.raises(_Ended):
        _runner.execute(module, run, build_kube=False, **keywords)
    return module


def _raises(exc):
    def run(module, kube):
        raise exc
    return run


def test_the_result_goes_to_exit_json_and_run_gets_the_module():
    module = _execute(lambda module, kube: dict(changed=True, node=module.params['node'], kube=kube))
    assert module.exited == {'changed': True, 'node': 'n1', 'kube': None}
    assert module.failed is None


@pytest.mark.parametrize('exc, expected', [
    (kube_api.KubeError('get node n1: not found', status=404), {'msg': 'get node n1: not found', 'status': 404, 'node': 'n1'}),
    (kube_api.NotFound('gone', status=404), {'msg': 'gone', 'status': 404, 'node': 'n1'}),
    (cr_model.CRValidationError('cr', ['spec.packages: required']),
     {'msg': str(cr_model.CRValidationError('cr', ['spec.packages: required'])), 'errors': ['spec.packages: required'],
      'node': 'n1'}),
    (node_annotations.NodeStateError('bad annotation'), {'msg': 'node n1: bad annotation', 'node': 'n1'}),
    (operator_presence.GuardError('not a date'), {'msg': 'node n1: not a date', 'node': 'n1'}),
])
def test_each_error_maps_to_its_fields_with_the_context(exc, expected):
    module = _execute(_raises(exc), context={'node': 'n1'}, label='node n1: ')
    assert module.failed == expected
    assert module.exited is None


def test_a_module_failure_carries_exactly_its_own_fields():
    module = _execute(_raises(_runner.ModuleFailed('stage failed', node='n1', outcome='failed', logs={})),
                      context={'node': 'other', 'cr_name': 'x'})
    assert module.failed == {'msg': 'stage failed', 'node': 'n1', 'outcome': 'failed', 'logs': {}}


def test_a_drain_error_is_a_module_failure():
    module = _execute(_raises(node_drain.DrainError('node n1: preflight failed', node='n1', evicted=0)))
    assert module.failed == {'msg': 'node n1: preflight failed', 'node': 'n1', 'evicted': 0}


def test_without_context_a_failure_has_only_msg_and_the_error_fields():
    module = _execute(_raises(kube_api.KubeError('forbidden', status=403)))
    assert module.failed == {'msg': 'forbidden', 'status': 403}


def test_check_runs_first_and_its_failure_stops_the_run():
    ran = []

    def check(params):
        raise _runner.ModuleFailed('cr_name: %r is not a name' % params['node'])
    module = _execute(lambda module, kube: ran.append(1), check=check, context={'node': 'n1'})
    assert module.failed == {'msg': "cr_name: 'n1' is not a name"}
    assert ran == []


def test_other_exceptions_are_not_turned_into_failures():
    # a bug keeps its traceback (in process: in_process.run reports it with the exception)
    with pytest.raises(ZeroDivisionError):
        _runner.execute(FakeModule(), _raises(ZeroDivisionError()), build_kube=False)
    assert _runner.failure(ValueError('x')) is None


def test_the_client_is_built_from_the_params_before_the_run(monkeypatch):
    built = []

    class FakeKube(object):
        def __init__(self, params, live_crs=None, session=None):
            built.append((params, live_crs))
    monkeypatch.setattr(kube_api, 'Kube', FakeKube)
    module = FakeModule(node='n1')
    with pytest.raises(_Ended):
        _runner.execute(module, lambda module, kube: dict(kube=type(kube).__name__))
    assert built == [({'node': 'n1'}, None)] and module.exited == {'kube': 'FakeKube'}
    # in the sequence engine the module carries the engine's live CRs: its client reads CRs from them
    module = FakeModule(node='n2')
    module.live_crs = live = object()
    with pytest.raises(_Ended):
        _runner.execute(module, lambda module, kube: {})
    assert built[-1] == ({'node': 'n2'}, live)


def test_a_client_that_cannot_be_built_fails_like_a_request(monkeypatch):
    def broken(params, live_crs=None, session=None):
        raise kube_api.KubeError('no kubeconfig', status=0)
    monkeypatch.setattr(kube_api, 'Kube', broken)
    module = FakeModule(node='n1')
    with pytest.raises(_Ended):
        _runner.execute(module, _raises(AssertionError('not reached')), context={'node': 'n1'})
    assert module.failed == {'msg': 'no kubeconfig', 'status': 0, 'node': 'n1'}


def test_renamed_keeps_the_old_names_as_deprecated_aliases():
    keywords = _runner.renamed('name')
    assert keywords == {'aliases': ['name'], 'deprecated_aliases': [
        {'name': 'name', 'version': '2.0.0', 'collection_name': 'nodewright.bridge'}]}
    assert _runner.renamed('name') is not _runner.renamed('name')  # a fresh dict for every spec
