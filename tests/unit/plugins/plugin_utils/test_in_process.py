# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The in-process adapter: the same validation, messages, check mode and no_log masking as AnsibleModule."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import io
import json
import os
import re
import sys

import pytest

from ansible.module_utils import basic

from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import node_cordon
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import node_drain
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import node_state
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import rollout_plan
from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution import in_process


def _real_module_result(module_code, args):
    """What the real AnsibleModule answers for ``args`` (validation only: execute is not reached on errors)."""
    try:
        from ansible.module_utils.testing import patch_module_args  # ansible-core 2.19+
    except ImportError:  # pragma: no cover - older ansible-core
        patch_module_args = None
    stdout = io.StringIO()
    old = sys.stdout
    sys.stdout = stdout
    try:
        if patch_module_args is not None:
            with patch_module_args(args):
                with pytest.raises(SystemExit):
                    basic.AnsibleModule(**module_code.module_args())
        else:  # pragma: no cover
            basic._ANSIBLE_ARGS = json.dumps({'ANSIBLE_MODULE_ARGS': args}).encode()
            with pytest.raises(SystemExit):
                basic.AnsibleModule(**module_code.module_args())
    finally:
        sys.stdout = old
    return json.loads(stdout.getvalue().strip().splitlines()[-1])


def _in_process_failure(name, module_code, args):
    result = in_process.run(name, module_code, args)
    assert result['failed'] is True
    return result['msg']


@pytest.mark.parametrize('module_code, args', [
    (node_cordon, {'name': 'n1', 'owner': 'tuning', 'colour': 'blue'}),           # unknown option
    (node_cordon, {'owner': 'tuning'}),                                            # missing required
    (node_cordon, {'name': 'n1', 'owner': 'tuning', 'state': 'gone'}),             # not a choice
    (node_drain, {'name': 'n1', 'timeout': 'soon'}),                               # wrong type
    (node_drain, {'name': 'n1', 'skip': {'daemonsets': 'maybe'}}),                 # wrong type in a sub-option
    (node_state, {'name': 'n1', 'action': 'reset'}),                               # required_if
    (node_state, {'name': 'n1', 'version': '1.0'}),                                # required_by
    (rollout_plan, {'cr_name': 'x', 'nodes': [], 'node': 'n1'}),                    # mutually_exclusive
    (rollout_plan, {'node': 'n1'}),                                                # required_one_of
])
def test_validation_fails_with_the_message_ansible_module_gives(module_code, args):
    expected = _real_module_result(module_code, dict(args))
    assert expected['failed'] is True
    name = 'nodewright.bridge.%s' % module_code.__name__.rsplit('.', 1)[-1]
    got = _in_process_failure(name, module_code, args)
    # AnsibleModule names itself after the running file in one message; everything else is the same
    assert re.sub(r'^Unsupported parameters for \([^)]*\)', '', got) == \
        re.sub(r'^Unsupported parameters for \([^)]*\)', '', expected['msg'])


def test_unknown_option_is_named():
    msg = _in_process_failure('nodewright.bridge.node_cordon', node_cordon, {'name': 'n1', 'owner': 't', 'colour': 'x'})
    assert msg.startswith('Unsupported parameters for (nodewright.bridge.node_cordon) module: colour')


class _Recorder(object):
    """A module file whose execute() records what it saw and answers as told."""

    def __init__(self, spec=None, answer=None, **keywords):
        self.spec = spec or {'name': {'type': 'str', 'required': True}, 'count': {'type': 'int', 'default': 3},
                             'token': {'type': 'str', 'no_log': True},
                             'kubeconfig': {'type': 'str', 'fallback': (basic.env_fallback, ['K8S_AUTH_KUBECONFIG'])}}
        self.keywords = dict(supports_check_mode=True, **keywords)
        self.answer = answer or (lambda module: module.exit_json(changed=True, seen=dict(module.params)))
        self.module = None

    def module_args(self):
        return dict(argument_spec=self.spec, **self.keywords)

    def execute(self, module):
        self.module = module
        self.answer(module)


def test_params_are_validated_and_converted_like_a_module():
    code = _Recorder()
    result = in_process.run('t.t.rec', code, {'name': 'n1', 'count': '7'})
    assert result['changed'] is True
    assert result['seen']['count'] == 7  # converted to int as AnsibleModule does
    assert result['invocation']['module_args']['name'] == 'n1'


def test_task_environment_feeds_the_env_fallbacks_and_is_restored():
    os.environ.pop('K8S_AUTH_KUBECONFIG', None)
    code = _Recorder()
    with in_process.TaskEnvironment({'K8S_AUTH_KUBECONFIG': '/k/config'}):
        result = in_process.run('t.t.rec', code, {'name': 'n1'})
    assert result['seen']['kubeconfig'] == '/k/config'
    assert 'K8S_AUTH_KUBECONFIG' not in os.environ


def test_no_log_values_never_leave_the_run():
    code = _Recorder(answer=lambda module: module.fail_json(msg='token %s refused' % module.params['token']))
    result = in_process.run('t.t.rec', code, {'name': 'n1', 'token': 's3cr3t-token'})
    assert 's3cr3t-token' not in json.dumps(result)
    assert result['failed'] is True and 'refused' in result['msg']


def test_check_mode_diff_and_warnings_reach_the_module_and_the_result():
    def answer(module):
        module.warn('careful')
        module.deprecate('old option', version='2.0.0', collection_name='nodewright.bridge')
        module.exit_json(check=module.check_mode, diff_wanted=module._diff)
    result = in_process.run('t.t.rec', _Recorder(answer=answer), {'name': 'n1'}, check_mode=True, diff=True)
    assert result['check'] is True and result['diff_wanted'] is True
    assert result['warnings'] == ['careful']
    assert result['deprecations'][0]['msg'] == 'old option'
    assert result['changed'] is False


def test_check_mode_without_support_skips():
    code = _Recorder(answer=lambda module: pytest.fail('must not run'))
    code.keywords['supports_check_mode'] = False
    result = in_process.run('t.t.rec', code, {'name': 'n1'}, check_mode=True)
    assert result['skipped'] is True


def test_an_exception_in_the_module_fails_the_task_with_its_name():
    def answer(module):
        raise KeyError('boom')
    result = in_process.run('t.t.rec', _Recorder(answer=answer), {'name': 'n1'})
    assert result['failed'] is True
    assert "module t.t.rec failed in the controller process: KeyError: 'boom'" == result['msg']
    assert 'Traceback' in result['exception']


def test_a_broad_except_in_the_module_cannot_swallow_exit():
    def answer(module):
        try:
            module.fail_json(msg='really failed')
        except Exception:  # pylint: disable=broad-except
            module.exit_json(changed=True)
    result = in_process.run('t.t.rec', _Recorder(answer=answer), {'name': 'n1'})
    assert result['failed'] is True and result['msg'] == 'really failed'


def test_a_module_that_never_exits_fails():
    result = in_process.run('t.t.rec', _Recorder(answer=lambda module: None), {'name': 'n1'})
    assert result['failed'] is True and 'without exit_json' in result['msg']


def test_arguments_and_results_are_plain_json_types():
    class Tagged(str):
        pass
    code = _Recorder(spec={'name': {'type': 'raw'}},
                     answer=lambda module: module.exit_json(value=module.params['name'], pair=(1, 2), group={'b', 'a'}))
    result = in_process.run('t.t.rec', code, {'name': {'k': (Tagged('v'),)}})
    assert type(code.module.params['name']['k'][0]) is str  # pylint: disable=unidiomatic-typecheck
    assert result['value'] == {'k': ['v']}
    assert result['pair'] == [1, 2] and result['group'] == ['a', 'b']


def test_unsupported_ansible_module_keywords_are_refused():
    code = _Recorder()
    code.keywords['add_file_common_args'] = True
    result = in_process.run('t.t.rec', code, {'name': 'n1'})
    assert result['failed'] is True and 'add_file_common_args' in result['msg']


def test_a_deprecated_alias_is_reported_as_ansible_module_does():
    code = _Recorder(spec={'node': {'type': 'str', 'required': True, 'aliases': ['name'], 'deprecated_aliases': [
        {'name': 'name', 'version': '2.0.0', 'collection_name': 'nodewright.bridge'}]}},
        answer=lambda module: module.exit_json(node=module.params['node']))
    result = in_process.run('t.t.rec', code, {'name': 'n1'})
    assert result['node'] == 'n1'
    assert result['deprecations'] == [{'msg': "Alias 'name' is deprecated. See the module docs for more information",
                                       'version': '2.0.0', 'collection_name': 'nodewright.bridge'}]
    assert 'deprecations' not in in_process.run('t.t.rec', code, {'node': 'n1'})


def test_no_log_values_are_masked_as_remove_values_did_through_every_container():
    result = in_process.masked({'a': 's3cr3t', 'b': ['x s3cr3t y', ('s3cr3t',)], 'c': {'d': 1234, 'e': True}, 'f': None},
                               {'s3cr3t', 1234})
    assert result == {'a': in_process.NO_LOG_WHOLE, 'b': ['x ******** y', (in_process.NO_LOG_WHOLE,)],
                      'c': {'d': in_process.NO_LOG_WHOLE, 'e': True}, 'f': None}
    assert in_process.masked({'a': 'keep'}, set()) == {'a': 'keep'}
