# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""cr_model: CR / DeploymentPolicy validation (CRD schema + the operator's webhooks), defaults, loading."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json

import pytest

from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_model
from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_validation

KINDS = [('skyhook.nvidia.com/v1alpha1', 'Skyhook'), ('nodewright.nvidia.com/v1alpha1', 'NodeWright')]


def make_cr(spec=None, name='demo', api_version='skyhook.nvidia.com/v1alpha1', kind='Skyhook', **top):
    doc = {'apiVersion': api_version, 'kind': kind, 'metadata': {'name': name}, 'spec': spec if spec is not None else {}}
    doc.update(top)
    return doc


def pkg(version='1.0.0', image='ghcr.io/example/tuning', **extra):
    spec = {'version': version, 'image': image}
    spec.update(extra)
    return spec


def with_pkgs(**packages):
    return make_cr({'packages': packages})


def errors_of(doc):
    return cr_validation.cr_errors(doc)


def assert_single_error(doc, *needles):
    errors = errors_of(doc)
    assert len(errors) == 1, errors
    for needle in needles:
        assert needle in errors[0], errors[0]
    with pytest.raises(cr_model.CRValidationError) as info:
        cr_validation.build_cr(doc)
    assert info.value.errors == errors
    return errors[0]


# --------------------------------------------------------------------------- valid CRs and defaults


@pytest.mark.parametrize('api_version,kind,image', [
    ('skyhook.nvidia.com/v1alpha1', 'Skyhook', 'ghcr.io/example/tuning:1.0.0'),   # the tag equal to the version is cut
    ('nodewright.nvidia.com/v1alpha1', 'NodeWright', 'ghcr.io/example/tuning'),   # v0.20: a bare repository only
])
def test_minimal_cr_and_defaults(api_version, kind, image):
    cr = cr_validation.build_cr(make_cr({'packages': {'tuning': pkg(image=image)}}, api_version=api_version, kind=kind))
    assert (cr.api_version, cr.kind, cr.name) == (api_version, kind, 'demo')
    assert cr.priority == 200
    assert cr.sequencing == 'node'
    assert cr.serial is False
    assert cr.runtime_required is False
    assert cr.auto_taint_new_nodes is False
    assert cr.reset_batch_state_on_completion is True
    assert cr.deployment_policy == ''
    assert cr.interruption_budget == {}
    assert cr.paused is False and cr.disabled is False
    package = cr.packages['tuning']
    assert package.name == 'tuning'                      # from the map key
    assert package.image == 'ghcr.io/example/tuning'     # tag cut off
    assert package.image_ref == 'ghcr.io/example/tuning:1.0.0'
    assert package.unique_name == 'tuning|1.0.0'
    assert (package.uninstall_enabled, package.uninstall_apply) == (False, False)
    assert package.is_uninstalling is False
    assert package.interrupt is None
    assert package.depends_on == {} and package.config_map == {} and package.config_interrupts == {}
    # the v0.20 fields, at their defaults in both groups
    assert cr.runtime_required_cordon_after is False
    assert cr.drain_config == {'deleteEmptyDirData': True, 'disableEviction': False, 'force': True, 'ignoreDaemonSets': True,
                               'timeout': None, 'gracePeriod': None, 'timeoutSeconds': None, 'gracePeriodSeconds': None}
    assert package.stage_timeout is None and package.stage_timeout_text is None


def test_explicit_values_survive():
    cr = cr_validation.build_cr(make_cr({
        'priority': 5, 'sequencing': 'all', 'serial': True, 'interruptionBudget': {'count': 2, 'percent': None},
        'packages': {'tuning': pkg(containerSHA='sha256:abc', interrupt={'type': 'service', 'services': ['kubelet']},
                                   uninstall={'enabled': True, 'apply': True})}},
        metadata={'name': 'demo', 'annotations': {'skyhook.nvidia.com/pause': 'true',
                                                  'skyhook.nvidia.com/disable': 'false'}}))
    assert (cr.priority, cr.sequencing, cr.serial) == (5, 'all', True)
    assert cr.interruption_budget == {'count': 2}
    assert cr.paused is True and cr.disabled is False
    package = cr.packages['tuning']
    assert package.image_ref == 'ghcr.io/example/tuning@sha256:abc'
    assert package.interrupt == {'type': 'service', 'services': ['kubelet']}
    assert package.is_uninstalling is True


def test_name_field_equal_to_key_is_accepted():
    assert errors_of(with_pkgs(tuning=pkg(name='tuning'))) == []


@pytest.mark.parametrize('key', ['ab', 'a' * 43, 'nvidia-setup', 'a1-b'])
def test_valid_package_names(key):
    assert errors_of(make_cr({'packages': {key: pkg()}})) == []


def test_image_tag_equal_to_version_is_accepted():
    assert errors_of(with_pkgs(tuning=pkg(version='1.2.3', image='repo/img:1.2.3'))) == []


def test_a_stored_cr_has_its_other_tag_replaced_by_the_version():
    # the webhook refuses it (a file to apply); one the API server admitted runs as the controller runs it
    doc = with_pkgs(tuning=pkg(version='1.2.3', image='repo/img:bogus'), other=pkg(version='1.0.0', image='repo/o'))
    expected = ["spec.packages.tuning.image: tag 'bogus' of 'repo/img' does not match the package version '1.2.3'; "
                "leave the tag off (the version is the tag)"]
    assert cr_validation.image_tag_problems(doc) == expected
    with pytest.raises(cr_model.CRValidationError) as info:
        cr_validation.build_cr(doc)
    assert info.value.errors == expected
    cr = cr_validation.build_cr(doc, stored=True)
    assert cr.packages['tuning'].image_ref == 'repo/img:1.2.3' and cr.packages['other'].image_ref == 'repo/o:1.0.0'
    # every other rule still holds for a stored CR
    broken = with_pkgs(tuning=pkg(version='not-semver', image='repo/img:bogus'))
    assert [e for e in cr_validation.cr_errors(broken, stored=True) if 'tag' in e] == []
    assert any('not a valid semantic version' in e for e in cr_validation.cr_errors(broken, stored=True))


def test_glob_config_interrupt_matching_a_key_is_accepted():
    assert errors_of(with_pkgs(tuning=pkg(configMap={'a.sh': 'x', 'b.conf': 'y'},
                                          configInterrupts={'*.sh': {'type': 'service', 'services': ['kubelet']},
                                                            'b.conf': {'type': 'reboot'}}))) == []


def test_resources_ok():
    assert errors_of(with_pkgs(tuning=pkg(resources={'cpuRequest': '100m', 'cpuLimit': '200m',
                                                     'memoryRequest': '128Mi', 'memoryLimit': '256Mi'}))) == []


def test_resources_all_zero_is_unset():
    assert errors_of(with_pkgs(tuning=pkg(resources={'cpuRequest': '0', 'cpuLimit': 0}))) == []


def test_dependency_ok():
    assert errors_of(with_pkgs(base=pkg(), app=pkg(dependsOn={'base': '1.0.0'}))) == []


@pytest.mark.parametrize('duration', ['30s', '1m30s', '0', '1h'])
def test_graceful_shutdown_ok(duration):
    assert errors_of(with_pkgs(tuning=pkg(gracefulShutdown=duration))) == []


def test_metadata_name_of_53_characters_is_accepted():
    assert errors_of(make_cr(name='n' * 53)) == []


# --------------------------------------------------------------------------- one rule at a time


@pytest.mark.parametrize('doc,needles', [
    (make_cr({'foo': 1}), ['spec.foo: unknown field']),
    (with_pkgs(tuning=pkg(intterupt={'type': 'reboot'})), ['spec.packages.tuning.intterupt: unknown field']),
    (with_pkgs(tuning=pkg(interrupt={'type': 'reboot', 'service': ['a']})),
     ['spec.packages.tuning.interrupt.service: unknown field']),
    (make_cr(extra=1), ['extra: unknown field']),
    (make_cr({'priority': 'x'}), ["spec.priority: must be an integer, got string ('x')"]),
    (make_cr({'priority': 0}), ['spec.priority: 0 is less than the minimum 1']),
    (make_cr({'serial': 'yes'}), ["spec.serial: must be a boolean, got string ('yes')"]),
    (with_pkgs(tuning=pkg(interrupt={'type': 'shutdown'})),
     ["spec.packages.tuning.interrupt.type: 'shutdown' is not one of"]),
    (with_pkgs(tuning=pkg(interrupt={'services': ['a']})),
     ['spec.packages.tuning.interrupt.type: required field is missing']),
    (make_cr({'sequencing': 'global'}), ["spec.sequencing: 'global' is not one of 'all', 'node'"]),
    (make_cr({'packages': {'Bad_Name': pkg()}}), ["spec.packages.Bad_Name: package name 'Bad_Name' is not valid"]),
    (make_cr({'packages': {'a': pkg()}}), ["spec.packages.a: package name 'a' is not valid"]),
    (make_cr({'packages': {'a' * 44: pkg()}}), ["spec.packages.%s: package name" % ('a' * 44)]),
    (make_cr({'packages': {'11': pkg()}}), ["spec.packages.11: package name '11' is not valid"]),
    (with_pkgs(tuning=pkg(name='other')), ["spec.packages.tuning.name: 'other' differs from the map key 'tuning'"]),
    (with_pkgs(tuning=pkg(version='2024/07/06')),
     ["spec.packages.tuning.version: '2024/07/06' is not a valid semantic version"]),
    (with_pkgs(tuning=pkg(version=1.0)), ['spec.packages.tuning.version: must be a string, got number (1.0)']),
    (with_pkgs(tuning=pkg(version='01.0.0')), ["spec.packages.tuning.version: '01.0.0' is not a valid"]),
    (with_pkgs(tuning=pkg(image='repo/img:2.0.0')),
     ["spec.packages.tuning.image: tag '2.0.0' of 'repo/img' does not match the package version '1.0.0'"]),
    (with_pkgs(tuning=pkg(image='')), ['spec.packages.tuning.image: must not be empty']),
    (with_pkgs(tuning={'image': 'x'}), ['spec.packages.tuning.version: required field is missing']),
    (make_cr({'interruptionBudget': {'percent': 10, 'count': 2}}),
     ['spec.interruptionBudget: percent and count are mutually exclusive']),
    (make_cr({'deploymentPolicy': 'p', 'interruptionBudget': {'percent': 10}}),
     ['spec.deploymentPolicy: deploymentPolicy and interruptionBudget are mutually exclusive']),
    (with_pkgs(tuning=pkg(resources={'cpuRequest': '100m', 'memoryRequest': '1Gi', 'memoryLimit': '1Gi'})),
     ['spec.packages.tuning.resources: if any resource override is set, all of', '(missing cpuLimit)']),
    (with_pkgs(tuning=pkg(resources={'cpuRequest': '100m', 'cpuLimit': '50m',
                                     'memoryRequest': '128Mi', 'memoryLimit': '256Mi'})),
     ['spec.packages.tuning.resources.cpuLimit: 50m must be >= cpuRequest (100m)']),
    (with_pkgs(tuning=pkg(resources={'cpuRequest': '100m', 'cpuLimit': '200m',
                                     'memoryRequest': '128Mi', 'memoryLimit': '64Mi'})),
     ['spec.packages.tuning.resources.memoryLimit: 64Mi must be >= memoryRequest (128Mi)']),
    (with_pkgs(tuning=pkg(resources={'cpuRequest': '-100m', 'cpuLimit': '200m',
                                     'memoryRequest': '128Mi', 'memoryLimit': '256Mi'})),
     ['spec.packages.tuning.resources: all resource values must be positive (cpuRequest)']),
    (with_pkgs(app=pkg(dependsOn={'base': '1.0.0'})),
     ["spec.packages.app.dependsOn.base: package 'base' is not in spec.packages"]),
    (with_pkgs(base=pkg(), app=pkg(dependsOn={'base': '2.0.0'})),
     ["spec.packages.app.dependsOn.base: needs base version '2.0.0' but spec.packages.base.version is '1.0.0'"]),
    (with_pkgs(base=pkg(), app=pkg(dependsOn={'base': ''})), ['spec.packages.app.dependsOn.base: version is empty']),
    (with_pkgs(aa=pkg(dependsOn={'bb': '1.0.0'}), bb=pkg(dependsOn={'aa': '1.0.0'})),
     ['spec.packages.aa.dependsOn: dependency cycle aa -> bb -> aa']),
    (with_pkgs(aa=pkg(dependsOn={'aa': '1.0.0'})), ['spec.packages.aa.dependsOn: dependency cycle aa -> aa']),
    (with_pkgs(tuning=pkg(uninstall={'enabled': False, 'apply': True})),
     ['spec.packages.tuning.uninstall.apply: requires uninstall.enabled to be true']),
    (with_pkgs(tuning=pkg(configMap={'a.sh': 'x'}, configInterrupts={'b.sh': {'type': 'reboot'}})),
     ["spec.packages.tuning.configInterrupts.b.sh: no configMap key 'b.sh'"]),
    (with_pkgs(tuning=pkg(configMap={'a.conf': 'x'}, configInterrupts={'*.sh': {'type': 'reboot'}})),
     ["spec.packages.tuning.configInterrupts.*.sh: glob '*.sh' does not match any configMap key"]),
    (with_pkgs(tuning=pkg(gracefulShutdown='30')),
     ["spec.packages.tuning.gracefulShutdown: '30' is not a duration"]),
    (with_pkgs(tuning=pkg(gracefulShutdown='5 minutes')), ['spec.packages.tuning.gracefulShutdown:']),
    (make_cr(name='n' * 54), ["metadata.name: '%s' is too long" % ('n' * 54), 'at most 53 characters']),
    (make_cr(name='Bad_Name'), ["metadata.name: 'Bad_Name' must be a lowercase DNS-1123 subdomain"]),
    ({'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'Skyhook', 'metadata': {}, 'spec': {}},
     ['metadata.name: required field is missing']),
    ({'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'Skyhook', 'spec': {}},
     ['metadata.name: required field is missing']),
    (make_cr(metadata={'name': 'demo', 'namespace': 'default'}), ['metadata.namespace: the resource is cluster-scoped']),
    (make_cr(metadata={'name': 'demo', 'labels': {'a': 1}}), ['metadata.labels: must be a map of strings']),
    (make_cr([]), ['spec: must be an object, got array ([])']),
    (make_cr(api_version='skyhook.nvidia.com/v1', kind='Skyhook'), ["apiVersion/kind: 'skyhook.nvidia.com/v1'/'Skyhook'"]),
    (make_cr(api_version='skyhook.nvidia.com/v1alpha1', kind='NodeWright'), ['apiVersion/kind:']),
    (make_cr(api_version='nodewright.nvidia.com/v1alpha1', kind='Skyhook'), ['apiVersion/kind:']),
    (make_cr({'nodeSelectors': {'matchExpressions': [{'key': 'a', 'operator': 'In'}]}}),
     ['spec.nodeSelectors.matchExpressions[0].values: must be specified when operator is In']),
    (make_cr({'podNonInterruptLabels': {'matchLabels': {'-bad': 'x'}}}), ["spec.podNonInterruptLabels.matchLabels: key '-bad'"]),
    (make_cr({'additionalTolerations': [{'key': 'k', 'operator': 'Equals'}]}),
     ["spec.additionalTolerations[0].operator: 'Equals' is not one of Exists, Equal"]),
    (make_cr({'additionalTolerations': [{'key': 'k', 'operator': 'Exists', 'value': 'v'}]}),
     ['spec.additionalTolerations[0].value: must be empty when operator is Exists']),
    (make_cr({'additionalTolerations': [{'key': 'k', 'effect': 'NoRun'}]}),
     ["spec.additionalTolerations[0].effect: 'NoRun' is not one of"]),
], ids=lambda value: value[0] if isinstance(value, list) else None)
def test_single_rule(doc, needles):
    assert_single_error(doc, *needles)


def test_cycle_of_three_reported_once():
    doc = with_pkgs(aa=pkg(dependsOn={'bb': '1.0.0'}), bb=pkg(dependsOn={'cc': '1.0.0'}),
                    cc=pkg(dependsOn={'aa': '1.0.0'}))
    assert errors_of(doc) == ['spec.packages.aa.dependsOn: dependency cycle aa -> bb -> cc -> aa']


@pytest.mark.parametrize('api_version,kind', KINDS)
def test_all_errors_are_reported_together(api_version, kind):
    doc = make_cr({'foo': 1, 'priority': 'x', 'packages': {'tuning': pkg(interrupt={'type': 'shutdown'})}},
                  api_version=api_version, kind=kind)
    errors = errors_of(doc)
    assert len(errors) == 3, errors
    assert any(e.startswith('spec.foo: ') for e in errors)
    assert any(e.startswith('spec.priority: ') for e in errors)
    assert any(e.startswith("spec.packages.tuning.interrupt.type: 'shutdown' is not one of") for e in errors)
    with pytest.raises(cr_model.CRValidationError) as info:
        cr_validation.build_cr(doc)
    assert info.value.errors == errors
    assert '(3 problems)' in str(info.value)
    assert "%s 'demo'" % kind in str(info.value)


def test_cr_errors_does_not_modify_its_input():
    doc = with_pkgs(tuning=pkg(image='img:1.0.0'))
    before = copy.deepcopy(doc)
    cr_validation.build_cr(doc)
    assert doc == before


@pytest.mark.parametrize('uninstall', [{'enabled': True}, {'apply': False}, {}])
def test_uninstall_fields_default_to_false(uninstall):
    doc = with_pkgs(tuning=pkg(uninstall=uninstall))
    assert errors_of(doc) == []
    package = cr_validation.build_cr(doc).packages['tuning']
    assert package.uninstall_enabled is bool(uninstall.get('enabled'))
    assert package.uninstall_apply is False


def test_metadata_name_with_trailing_newline_is_rejected():
    assert errors_of(make_cr(name='demo\n')) != []


# --------------------------------------------------------------------------- glob semantics


@pytest.mark.parametrize('pattern,name,expected', [
    ('*.sh', 'a.sh', True),
    ('*.sh', 'a.conf', False),
    ('*', 'anything', True),
    ('*.sh', 'dir/a.sh', False),       # '*' does not cross '/'
    ('a?.sh', 'ab.sh', True),
    ('a?.sh', 'abc.sh', False),
    ('[ab].sh', 'b.sh', True),
    ('[^ab].sh', 'c.sh', True),
    ('[^ab].sh', 'a.sh', False),
    ('a.sh', 'a.sh', True),
    ('a.sh', 'axsh', False),           # '.' is literal
    ('[unterminated', '[unterminated', False),
])
def test_glob_match(pattern, name, expected):
    assert cr_model.glob_match(pattern, name) is expected


# --------------------------------------------------------------------------- strategies and policies


@pytest.mark.parametrize('kind,params,expected', [
    ('fixed', {}, {'fixed': {'initialBatch': 1, 'batchThreshold': 100, 'safetyLimit': 50, 'failureThreshold': None}}),
    ('linear', {}, {'linear': {'initialBatch': 1, 'batchThreshold': 100, 'safetyLimit': 50, 'failureThreshold': None,
                               'delta': 1}}),
    ('exponential', {}, {'exponential': {'initialBatch': 1, 'batchThreshold': 100, 'safetyLimit': 50,
                                         'failureThreshold': None, 'growthFactor': 2}}),
    ('linear', {'initialBatch': 3, 'delta': 2, 'failureThreshold': 4, 'batchThreshold': 80, 'safetyLimit': 30},
     {'linear': {'initialBatch': 3, 'batchThreshold': 80, 'safetyLimit': 30, 'failureThreshold': 4, 'delta': 2}}),
])
def test_strategy_defaults(kind, params, expected):
    strategy = cr_model.Strategy.from_spec({kind: params})
    assert strategy.type == kind
    assert strategy.to_dict() == expected


def test_strategy_from_empty_spec():
    assert cr_model.Strategy.from_spec(None) is None
    assert cr_model.Strategy.from_spec({}) is None


def policy_doc(spec, name='pol', api_version='skyhook.nvidia.com/v1alpha1'):
    return {'apiVersion': api_version, 'kind': 'DeploymentPolicy', 'metadata': {'name': name}, 'spec': spec}


def default_spec(budget=None, strategy=None):
    return {'budget': budget if budget is not None else {'percent': 100},
            'strategy': strategy if strategy is not None else {'fixed': {}}}


def comp(name, labels, budget=None, strategy=None):
    item = {'name': name, 'selector': {'matchLabels': labels}, 'budget': budget if budget is not None else {'count': 1}}
    if strategy is not None:
        item['strategy'] = strategy
    return item


@pytest.mark.parametrize('api_version', ['skyhook.nvidia.com/v1alpha1', 'nodewright.nvidia.com/v1alpha1'])
def test_policy_build(api_version):
    policy = cr_validation.build_policy(policy_doc({
        'default': default_spec({'percent': 25}, {'linear': {'delta': 2}}),
        'compartments': [comp('critical', {'tier': 'critical'}, {'count': 1}, {'fixed': {'failureThreshold': 1}}),
                         comp('rest', {'tier': 'rest'}, {'percent': 10})],
        'resetBatchStateOnCompletion': False}, api_version=api_version))
    assert policy.name == 'pol'
    assert policy.reset_batch_state_on_completion is False
    assert policy.default.name == cr_model.DEFAULT_COMPARTMENT
    assert policy.default.selector is None
    assert policy.default.budget == {'percent': 25}
    assert policy.default.strategy.type == 'linear' and policy.default.strategy.delta == 2
    assert [c.name for c in policy.compartments] == ['critical', 'rest']
    assert policy.compartments[0].selector == {'matchLabels': {'tier': 'critical'}}
    assert policy.compartments[0].strategy.failure_threshold == 1
    assert policy.compartments[1].strategy is None
    assert policy.compartments[1].budget == {'percent': 10}


def test_bare_policy_spec_is_accepted():
    spec = {'default': default_spec({'count': 3})}
    assert cr_validation.policy_errors(spec) == []
    policy = cr_validation.build_policy(spec, name='inline-one')
    assert policy.name == 'inline-one'
    assert policy.default.budget == {'count': 3}
    assert policy.reset_batch_state_on_completion is True
    assert cr_validation.build_policy(spec).name == '<inline>'


@pytest.mark.parametrize('spec,needle', [
    ({'default': default_spec(strategy={})}, 'spec.default.strategy: exactly one of fixed, linear, or exponential must be set'),
    ({'default': default_spec(strategy={'fixed': {}, 'linear': {}})},
     'spec.default.strategy: exactly one of fixed, linear, or exponential must be set (got fixed, linear)'),
    ({'default': {'strategy': {'fixed': {}}}}, 'spec.default.budget: exactly one of percent or count must be set'),
    ({'default': default_spec(budget={})}, 'spec.default.budget: exactly one of percent or count must be set'),
    ({'default': default_spec(budget={'percent': 10, 'count': 1})},
     'spec.default.budget: percent and count are mutually exclusive'),
    ({'default': default_spec(budget={'percent': 0})}, 'spec.default.budget.percent: 0 is less than the minimum 1'),
    ({'default': default_spec(budget={'count': 0})}, 'spec.default.budget.count: 0 is less than the minimum 1'),
    ({'default': default_spec(strategy={'fixed': {'batchThreshold': 0}})},
     'spec.default.strategy.fixed.batchThreshold: 0 is less than the minimum 1'),
    ({'default': default_spec(strategy={'fixed': {'batchThreshold': 101}})},
     'spec.default.strategy.fixed.batchThreshold: 101 is greater than the maximum 100'),
    ({'default': default_spec(strategy={'exponential': {'growthFactor': 1}})},
     'spec.default.strategy.exponential.growthFactor: 1 is less than the minimum 2'),
    ({'default': default_spec(strategy={'linear': {'safetyLimit': 0}})},
     'spec.default.strategy.linear.safetyLimit: 0 is less than the minimum 1'),
    ({'default': default_spec(strategy={'linear': {'delta': 0}})},
     'spec.default.strategy.linear.delta: 0 is less than the minimum 1'),
    ({'default': default_spec(strategy={'fixed': {'delta': 1}})}, 'spec.default.strategy.fixed.delta: unknown field'),
    ({'default': default_spec(strategy={'fixed': {'failureThreshold': 0}})},
     'spec.default.strategy.fixed.failureThreshold: 0 is less than the minimum 1'),
    ({'default': default_spec(), 'compartments': [comp('__default__', {'a': 'b'})]},
     "spec.compartments[0].name: '__default__' is reserved and cannot be used"),
    ({'default': default_spec(), 'compartments': [comp('dup', {'a': 'b'}), comp('dup', {'a': 'c'})]},
     "spec.compartments[1].name: 'dup' is not unique (also spec.compartments[0])"),
    ({'default': default_spec(), 'compartments': [comp('one', {'a': 'b'}), comp('two', {'a': 'b'})]},
     'spec.compartments[1].selector: identical to the selector of spec.compartments[0]'),
    ({'default': default_spec(), 'compartments': [comp('one', {'a': 'b'}, budget={})]},
     'spec.compartments[0].budget: exactly one of percent or count must be set'),
    ({'default': default_spec(), 'compartments': [comp('one', {'a': 'b'}, strategy={'linear': {}, 'exponential': {}})]},
     'spec.compartments[0].strategy: exactly one of fixed, linear, or exponential must be set (got linear, exponential)'),
    ({'default': default_spec(), 'compartments': [{'name': 'x', 'budget': {'count': 1},
                                                   'selector': {'matchExpressions': [{'key': 'a', 'operator': 'Exists',
                                                                                      'values': ['v']}]}}]},
     'spec.compartments[0].selector.matchExpressions[0].values: may not be specified when operator is Exists'),
    ({'default': default_spec(), 'compartments': [{'name': 'x', 'budget': {'count': 1}}]},
     'spec.compartments[0].selector: required field is missing'),
])
def test_policy_rules(spec, needle):
    for doc in (policy_doc(spec), spec):
        errors = cr_validation.policy_errors(doc)
        assert len(errors) == 1, errors
        assert needle in errors[0]
        with pytest.raises(cr_model.CRValidationError):
            cr_validation.build_policy(doc)


@pytest.mark.parametrize('doc,needle', [
    ({'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'Policy', 'metadata': {'name': 'p'},
      'spec': {'default': default_spec()}}, 'apiVersion/kind:'),
    ({'apiVersion': 'apps/v1', 'kind': 'DeploymentPolicy', 'metadata': {'name': 'p'},
      'spec': {'default': default_spec()}}, 'apiVersion/kind:'),
    ({'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'DeploymentPolicy', 'metadata': {'name': 'p'}},
     'spec: required field is missing'),
    ({'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'DeploymentPolicy', 'spec': {'default': default_spec()}},
     'metadata.name: required field is missing'),
])
def test_policy_document_envelope(doc, needle):
    errors = cr_validation.policy_errors(doc)
    assert len(errors) == 1, errors
    assert needle in errors[0]


def test_policy_errors_reported_together():
    spec = {'default': {'strategy': {}}, 'compartments': [comp('__default__', {'a': 'b'}), comp('x', {'a': 'b'})]}
    assert len(cr_validation.policy_errors(spec)) == 4


# --------------------------------------------------------------------------- legacy interruptionBudget


@pytest.mark.parametrize('budget,nodes,initial', [
    ({}, 10, 10),
    ({'percent': 33}, 10, 3),
    ({'percent': 25}, 10, 2),
    ({'percent': 29}, 100, 29),        # the documented integer formula, not float64 (28 in the operator)
    ({'percent': 57}, 100, 57),        # docs/semantics.md difference 2
    ({'percent': 0}, 10, 1),
    ({'percent': 10}, 5, 1),
    ({'percent': 50}, 0, 1),
    ({'count': 4}, 10, 4),
    ({'count': 40}, 10, 10),
    ({'count': 0}, 10, 1),
])
def test_legacy_compartment(budget, nodes, initial):
    cr = cr_validation.build_cr(make_cr({'interruptionBudget': budget} if budget else {}))
    legacy = cr.legacy_compartment(nodes)
    assert legacy.name == cr_model.DEFAULT_COMPARTMENT
    assert legacy.selector is None
    assert legacy.budget == (budget or {'percent': 100})
    assert legacy.strategy.type == 'fixed'
    assert legacy.strategy.initial_batch == initial


# --------------------------------------------------------------------------- loading


MULTI = """\
apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata: {name: one}
spec: {}
---
---
apiVersion: nodewright.nvidia.com/v1alpha1
kind: NodeWright
metadata: {name: two}
spec: {}
---
apiVersion: skyhook.nvidia.com/v1alpha1
kind: DeploymentPolicy
metadata: {name: pol}
spec:
  default:
    budget: {count: 1}
    strategy: {fixed: {}}
"""


def test_load_yaml_documents_and_split():
    docs = cr_model.load_yaml_documents(MULTI)
    assert [d['metadata']['name'] for d in docs] == ['one', 'two', 'pol']
    crs, policies = cr_model.split_documents(docs)
    assert [d['metadata']['name'] for d in crs] == ['one', 'two']
    assert [d['metadata']['name'] for d in policies] == ['pol']


def test_load_json_document():
    assert cr_model.load_yaml_documents('{"kind": "Skyhook"}') == [{'kind': 'Skyhook'}]


def test_load_fixture_files(fixture_text):
    crs, policies = cr_model.split_documents(cr_model.load_yaml_documents(fixture_text('budget33.yaml')))
    assert policies == [] and cr_validation.build_cr(crs[0]).interruption_budget == {'percent': 33}
    crs, policies = cr_model.split_documents(json.loads(fixture_text('linear4.json')))
    assert cr_validation.build_cr(crs[0]).deployment_policy == 'linear-4'
    assert cr_validation.build_policy(policies[0]).default.strategy.type == 'linear'


@pytest.mark.parametrize('text,needle', [
    ('a: [1, 2', 'not valid YAML'),
    ('- 1\n- 2\n', 'document 1: must be a mapping, got list'),
    ('kind: Skyhook\n---\nplain string\n', 'document 2: must be a mapping, got str'),
])
def test_load_yaml_errors(text, needle):
    with pytest.raises(cr_model.CRValidationError) as info:
        cr_model.load_yaml_documents(text, source='file.yaml')
    assert info.value.what == 'file.yaml'
    assert any(needle in e for e in info.value.errors), info.value.errors


def test_split_documents_rejects_other_kinds():
    docs = [make_cr(), {'apiVersion': 'v1', 'kind': 'ConfigMap'}, make_cr(kind='NodeWright')]
    with pytest.raises(cr_model.CRValidationError) as info:
        cr_model.split_documents(docs, source='in.yaml')
    assert len(info.value.errors) == 2
    assert info.value.errors[0].startswith("document 2: apiVersion 'v1' kind 'ConfigMap'")
    assert info.value.errors[1].startswith("document 3: apiVersion 'skyhook.nvidia.com/v1alpha1' kind 'NodeWright'")


def test_a_misspelled_field_says_which_one_was_meant():
    errors = errors_of(make_cr({'interuptionBudget': {'count': 1}, 'nodeSelector': {}, 'packages': {
        'tuning': pkg(intterupt={'type': 'reboot'})}}))
    assert 'spec.interuptionBudget: unknown field (did you mean interruptionBudget?)' in errors, errors
    assert 'spec.nodeSelector: unknown field (did you mean nodeSelectors?)' in errors, errors
    assert 'spec.packages.tuning.intterupt: unknown field (did you mean interrupt?)' in errors, errors
    # nothing close: no guess
    assert 'spec.colour: unknown field' in errors_of(make_cr({'colour': 'blue', 'packages': {'tuning': pkg()}}))


def test_the_problems_of_a_cr_and_of_its_policy_come_in_one_error():
    policy = {'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'DeploymentPolicy', 'metadata': {'name': 'racks'},
              'spec': {'default': {'budget': {'count': 0}, 'strategy': {'fixed': {}}}}}
    cr_error = cr_model.CRValidationError("Skyhook 'demo'", ['spec.foo: unknown field'])
    combined = cr_validation.with_policy_problems(cr_error, [policy])
    assert combined.what == "Skyhook 'demo' (and its DeploymentPolicy 'racks')"
    assert combined.errors == ['spec.foo: unknown field',
                               "DeploymentPolicy 'racks': spec.default.budget.count: 0 is less than the minimum 1"]
    valid = dict(policy, spec={'default': {'budget': {'count': 1}, 'strategy': {'fixed': {}}}})
    assert cr_validation.with_policy_problems(cr_error, [valid]) is cr_error


def test_a_plan_of_a_bad_cr_file_lists_the_crs_and_its_policys_problems_at_once():
    # pylint: disable-next=import-outside-toplevel
    from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import rollout_plan
    cr = make_cr({'deploymentPolicy': 'racks', 'packages': {'tuning': pkg(intterupt={'type': 'reboot'})}})
    policy = {'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'DeploymentPolicy', 'metadata': {'name': 'racks'},
              'spec': {'default': {'budget': {'percent': 0}, 'strategy': {'fixed': {}}}}}
    other = dict(policy, metadata={'name': 'other'})  # in the file, not the CR's: not its problem
    params = dict((k, None) for k in rollout_plan.module_args()['argument_spec'])
    params.update(cr=[cr, policy, other], nodes=[], node_order='name', cap_batches_at_ceiling=True, require_crd=False,
                  nodewright_api='auto')
    with pytest.raises(cr_model.CRValidationError) as raised:
        rollout_plan.run(params, lambda text: None)
    assert raised.value.errors == [
        'spec.packages.tuning.intterupt: unknown field (did you mean interrupt?)',
        "DeploymentPolicy 'racks': spec.default.budget.percent: 0 is less than the minimum 1"], raised.value.errors
