# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""cr_model on the v0.20 nodewright.nvidia.com NodeWright: its CRD (cr_schema.NODEWRIGHT_SPEC) and its webhook
(NVIDIA/nodewright operator/api/nodewright/v1alpha1/nodewright_webhook.go @5a158dbc, nodewright_types.go @90d9979d),
beside the v0.15 skyhook.nvidia.com Skyhook, which keeps its own rules and refuses the fields it does not have."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

import pytest

from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_model
from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_validation

NODEWRIGHT = ('nodewright.nvidia.com/v1alpha1', 'NodeWright')
SKYHOOK = ('skyhook.nvidia.com/v1alpha1', 'Skyhook')
IMAGE = 'ghcr.io/nvidia/skyhook-packages/shellscript'
SHA = 'sha256:' + '0123456789abcdef' * 4
IMAGE_HINT = 'put the version in version (it supplies the tag) and a digest in containerSHA'
NEEDS = 'needs nodewright.nvidia.com/v1alpha1 (kind NodeWright); a skyhook.nvidia.com/v1alpha1 Skyhook has no such field'
NOT_DURATION = 'is not a duration such as 30s or 1m30s'


def make_cr(spec, group=NODEWRIGHT):
    return {'apiVersion': group[0], 'kind': group[1], 'metadata': {'name': 'demo'}, 'spec': spec}


def with_pkg(group=NODEWRIGHT, **fields):
    package = {'version': '1.2.0', 'image': IMAGE}
    package.update(fields)
    return make_cr({'packages': {'tuning': package}}, group)


# --------------------------------------------------------------------------- the upstream example


def test_the_v020_example_validates(v020_example_documents):
    policy, nodewright = v020_example_documents
    assert (policy['kind'], nodewright['kind']) == ('DeploymentPolicy', 'NodeWright')
    assert cr_validation.policy_errors(policy) == []
    assert cr_validation.cr_errors(nodewright) == []
    assert cr_validation.cr_errors(nodewright, stored=True) == []
    cr = cr_validation.build_cr(nodewright)
    assert cr.runtime_required is True and cr.runtime_required_cordon_after is True
    # the API server filled the drainConfig defaults; the operator rounds the grace period up to seconds
    assert cr.drain_config == {'deleteEmptyDirData': True, 'disableEviction': False, 'force': True, 'ignoreDaemonSets': True,
                               'timeout': '10m', 'gracePeriod': '30s', 'timeoutSeconds': 600, 'gracePeriodSeconds': 30}
    package = cr.packages['tuning']
    assert (package.stage_timeout_text, package.stage_timeout) == ('20m', 1200)
    assert package.image_ref == IMAGE + ':1.2.0'
    assert cr_validation.build_policy(policy).name == 'example-v020-policy'


def test_the_v020_example_as_stored_keeps_its_defaults(v020_example_documents):
    stored = cr_model.normalise_cr(v020_example_documents[1])['spec']
    assert stored['drainConfig'] == {'timeout': '10m', 'gracePeriod': '30s', 'disableEviction': False,
                                     'deleteEmptyDirData': True, 'force': True, 'ignoreDaemonSets': True}
    assert stored['runtimeRequiredCordonAfter'] is True
    assert stored['packages']['tuning']['stageTimeout'] == '20m'


# --------------------------------------------------------------------------- valid shapes

VALID = [
    ('drainConfig-empty', make_cr({'drainConfig': {}})),
    ('drainConfig-every-field', make_cr({'drainConfig': {
        'timeout': '1h30m', 'gracePeriod': '300ms', 'disableEviction': True, 'deleteEmptyDirData': False,
        'force': False, 'ignoreDaemonSets': False}})),
    ('drainConfig-all-null', make_cr({'drainConfig': {
        'timeout': None, 'gracePeriod': None, 'disableEviction': None, 'deleteEmptyDirData': None,
        'force': None, 'ignoreDaemonSets': None}})),
    ('drainConfig-zero-durations', make_cr({'drainConfig': {'timeout': '0', 'gracePeriod': '0s'}})),
    ('drainConfig-minus-zero', make_cr({'drainConfig': {'timeout': '-0', 'gracePeriod': '-0s'}})),
    ('drainConfig-null', make_cr({'drainConfig': None})),                        # not nullable: pruned
    ('cordonAfter-with-runtimeRequired', make_cr({'runtimeRequired': True, 'runtimeRequiredCordonAfter': True})),
    ('cordonAfter-alone', make_cr({'runtimeRequiredCordonAfter': True})),         # the webhook does not refuse it
    ('cordonAfter-false', make_cr({'runtimeRequiredCordonAfter': False})),
    ('stageTimeout-20m', with_pkg(stageTimeout='20m')),
    ('stageTimeout-0', with_pkg(stageTimeout='0')),
    ('stageTimeout-1.5h', with_pkg(stageTimeout='1.5h')),
    ('stageTimeout-300ms', with_pkg(stageTimeout='300ms')),
    ('stageTimeout-null', with_pkg(stageTimeout=None)),                           # not nullable: pruned
    ('image-with-registry-port', with_pkg(image='localhost:5000/org/pkg')),
    ('image-port-and-containerSHA', with_pkg(image='localhost:5000/org/pkg', containerSHA=SHA)),
    ('containerSHA', with_pkg(containerSHA=SHA)),
    ('every-new-field', make_cr({
        'runtimeRequired': True, 'runtimeRequiredCordonAfter': True,
        'drainConfig': {'timeout': '10m', 'gracePeriod': '30s', 'disableEviction': False},
        'packages': {'tuning': {'version': '1.2.0', 'image': IMAGE, 'containerSHA': SHA, 'stageTimeout': '20m',
                                'gracefulShutdown': '30s', 'interrupt': {'type': 'reboot'},
                                'uninstall': {'enabled': True}}}})),
    # the legacy group keeps its own CRD: no image or containerSHA pattern, a tag equal to the version
    ('skyhook-short-containerSHA', with_pkg(SKYHOOK, containerSHA='sha256:abc')),
    ('skyhook-tag-equal-to-version', with_pkg(SKYHOOK, image=IMAGE + ':1.2.0')),
    ('skyhook-image-with-space', with_pkg(SKYHOOK, image='ghcr.io/x y')),
]


@pytest.mark.parametrize('doc', [d for unused, d in VALID], ids=[i for i, unused in VALID])
def test_valid_shapes(doc):
    assert cr_validation.cr_errors(doc) == []
    assert cr_validation.cr_errors(doc, stored=True) == []
    assert isinstance(cr_validation.build_cr(doc), cr_model.NodeWrightCR)


DEFAULT_DRAIN = {'deleteEmptyDirData': True, 'disableEviction': False, 'force': True, 'ignoreDaemonSets': True,
                 'timeout': None, 'gracePeriod': None, 'timeoutSeconds': None, 'gracePeriodSeconds': None}


def _drain(**changes):
    result = dict(DEFAULT_DRAIN)
    result.update(changes)
    return result


@pytest.mark.parametrize('name,drain', [
    ('drainConfig-empty', DEFAULT_DRAIN),
    ('drainConfig-every-field', _drain(timeout='1h30m', gracePeriod='300ms', timeoutSeconds=5400, gracePeriodSeconds=1,
                                       disableEviction=True, deleteEmptyDirData=False, force=False, ignoreDaemonSets=False)),
    ('drainConfig-all-null', DEFAULT_DRAIN),                     # a nil pointer takes drain.DefaultOptions' value
    ('drainConfig-zero-durations', _drain(timeout='0', gracePeriod='0s', gracePeriodSeconds=0)),   # 0: no timeout
    ('drainConfig-null', DEFAULT_DRAIN),
    ('cordonAfter-alone', DEFAULT_DRAIN),
])
def test_drain_config_as_the_operator_applies_it(name, drain):
    assert cr_validation.build_cr(dict(VALID)[name]).drain_config == drain


@pytest.mark.parametrize('name,cordon_after', [
    ('cordonAfter-with-runtimeRequired', True), ('cordonAfter-alone', True), ('cordonAfter-false', False),
    ('drainConfig-empty', False),
])
def test_runtime_required_cordon_after(name, cordon_after):
    assert cr_validation.build_cr(dict(VALID)[name]).runtime_required_cordon_after is cordon_after


@pytest.mark.parametrize('name,text,seconds', [
    ('stageTimeout-20m', '20m', 1200), ('stageTimeout-0', '0', 0), ('stageTimeout-1.5h', '1.5h', 5400),
    ('stageTimeout-300ms', '300ms', 1),         # rounded up, as job_builder.go's activeDeadlineSeconds
    ('stageTimeout-null', None, None), ('containerSHA', None, None),
])
def test_stage_timeout(name, text, seconds):
    package = cr_validation.build_cr(dict(VALID)[name]).packages['tuning']
    assert (package.stage_timeout_text, package.stage_timeout) == (text, seconds)
    assert package.to_dict()['stageTimeout'] == text


@pytest.mark.parametrize('name,image,ref', [
    ('image-with-registry-port', 'localhost:5000/org/pkg', 'localhost:5000/org/pkg:1.2.0'),      # the port stays
    ('image-port-and-containerSHA', 'localhost:5000/org/pkg', 'localhost:5000/org/pkg@' + SHA),
    ('skyhook-tag-equal-to-version', IMAGE, IMAGE + ':1.2.0'),                                  # a Skyhook's is cut
])
def test_image_as_the_operator_pulls_it(name, image, ref):
    package = cr_validation.build_cr(dict(VALID)[name]).packages['tuning']
    assert (package.image, package.image_ref) == (image, ref)


def test_a_skyhook_has_the_v020_defaults():
    cr = cr_validation.build_cr(with_pkg(SKYHOOK))
    assert cr.drain_config == DEFAULT_DRAIN and cr.runtime_required_cordon_after is False
    assert cr.packages['tuning'].stage_timeout is None
    assert 'runtimeRequiredCordonAfter' not in cr_model.normalise_cr(with_pkg(SKYHOOK))['spec']
    assert cr_model.normalise_cr(with_pkg())['spec']['runtimeRequiredCordonAfter'] is False


# --------------------------------------------------------------------------- invalid shapes

INVALID = [
    # what a server-side dry run with the v0.20 CRDs refused (crds/v0.20/README.md)
    ('image-with-space', with_pkg(image='ghcr.io/nvidia/skyhook packages'),
     ["spec.packages.tuning.image: 'ghcr.io/nvidia/skyhook packages' does not match ^\\S+$"]),
    ('malformed-containerSHA', with_pkg(containerSHA='sha256:abc'),
     ["spec.packages.tuning.containerSHA: 'sha256:abc' does not match ^sha256:[0-9a-f]{64}$"]),
    ('upper-case-containerSHA', with_pkg(containerSHA='sha256:' + 'ABCDEF0123456789' * 4),
     ["spec.packages.tuning.containerSHA: %r does not match ^sha256:[0-9a-f]{64}$" % ('sha256:' + 'ABCDEF0123456789' * 4)]),
    ('integer-stageTimeout', with_pkg(stageTimeout=1200),
     ['spec.packages.tuning.stageTimeout: must be a string, got integer (1200)']),
    ('unknown-drainConfig-field', make_cr({'drainConfig': {'timeout': '10m', 'podSelector': {}}}),
     ['spec.drainConfig.podSelector: unknown field']),
    ('package-without-image', make_cr({'packages': {'tuning': {'version': '1.2.0'}}}),
     ['spec.packages.tuning.image: required field is missing']),
    ('empty-image', with_pkg(image=''), ["spec.packages.tuning.image: '' does not match ^\\S+$"]),
    ('integer-drain-timeout', make_cr({'drainConfig': {'timeout': 600}}),
     ['spec.drainConfig.timeout: must be a string, got integer (600)']),
    ('string-drain-force', make_cr({'drainConfig': {'force': 'yes'}}),
     ["spec.drainConfig.force: must be a boolean, got string ('yes')"]),
    ('string-cordonAfter', make_cr({'runtimeRequiredCordonAfter': 'true'}),
     ["spec.runtimeRequiredCordonAfter: must be a boolean, got string ('true')"]),
    # only the webhook: an inline tag or digest
    ('tag-in-image', with_pkg(image=IMAGE + ':1.2.0'),
     ["spec.packages.tuning.image: %r carries an inline tag '1.2.0'; image must be a bare repository (%r): %s"
      % (IMAGE + ':1.2.0', IMAGE, IMAGE_HINT)]),
    ('digest-in-image', with_pkg(image=IMAGE + '@' + SHA),
     ["spec.packages.tuning.image: %r carries an inline digest %r; image must be a bare repository (%r): %s"
      % (IMAGE + '@' + SHA, SHA, IMAGE, IMAGE_HINT)]),
    ('tag-and-digest-in-image', with_pkg(image=IMAGE + ':1.2.0@' + SHA),
     ["spec.packages.tuning.image: %r carries an inline tag '1.2.0' and digest %r; image must be a bare repository (%r): %s"
      % (IMAGE + ':1.2.0@' + SHA, SHA, IMAGE, IMAGE_HINT)]),
    ('empty-tag', with_pkg(image='ghcr.io/x:'),
     ["spec.packages.tuning.image: 'ghcr.io/x:' carries an inline tag ''; image must be a bare repository ('ghcr.io/x'): %s"
      % IMAGE_HINT]),
    ('empty-digest', with_pkg(image='ghcr.io/x@'),
     ["spec.packages.tuning.image: 'ghcr.io/x@' carries an inline digest ''; image must be a bare repository ('ghcr.io/x'): %s"
      % IMAGE_HINT]),
    ('port-and-tag', with_pkg(image='localhost:5000/org/pkg:1.2.0'),
     ["spec.packages.tuning.image: 'localhost:5000/org/pkg:1.2.0' carries an inline tag '1.2.0'; image must be a bare "
      "repository ('localhost:5000/org/pkg'): %s" % IMAGE_HINT]),
    # only the webhook: negative durations (DrainConfig.Validate, the stageTimeout check)
    ('negative-drain-timeout', make_cr({'drainConfig': {'timeout': '-5s'}}),
     ["spec.drainConfig.timeout: '-5s' must be greater than or equal to 0 (unset or 0: no timeout)"]),
    ('negative-grace-period', make_cr({'drainConfig': {'gracePeriod': '-1m'}}),
     ["spec.drainConfig.gracePeriod: '-1m' must be greater than or equal to 0 (unset: each pod's terminationGracePeriodSeconds)"]),
    ('negative-stageTimeout', with_pkg(stageTimeout='-30s'),
     ["spec.packages.tuning.stageTimeout: '-30s' must be greater than or equal to 0 (unset: the operator default; 0: no time bound)"]),
    # only the webhook: what metav1.Duration cannot decode (time.ParseDuration)
    ('unitless-drain-timeout', make_cr({'drainConfig': {'timeout': '10'}}),
     ['spec.drainConfig.timeout: \'10\' %s (time: missing unit in duration "10")' % NOT_DURATION]),
    ('word-grace-period', make_cr({'drainConfig': {'gracePeriod': 'abc'}}),
     ['spec.drainConfig.gracePeriod: \'abc\' %s (time: invalid duration "abc")' % NOT_DURATION]),
    ('days-stageTimeout', with_pkg(stageTimeout='1d'),
     ['spec.packages.tuning.stageTimeout: \'1d\' %s (time: unknown unit "d" in duration "1d")' % NOT_DURATION]),
    ('spaced-stageTimeout', with_pkg(stageTimeout='20m '),
     ['spec.packages.tuning.stageTimeout: \'20m \' %s (time: unknown unit "m " in duration "20m ")' % NOT_DURATION]),
    ('empty-stageTimeout', with_pkg(stageTimeout=''),
     ['spec.packages.tuning.stageTimeout: \'\' %s (time: invalid duration "")' % NOT_DURATION]),
    # every problem at once, each by its path
    ('all-at-once', make_cr({
        'drainConfig': {'timeout': '-10m', 'gracePeriod': '1w', 'evict': True},
        'packages': {'tuning': {'version': '1.2.0', 'image': 'repo/tuning:1.2.0', 'stageTimeout': '-1h',
                                'containerSHA': 'abc'},
                     'other': {'version': '2.0.0', 'image': 'repo/other@' + SHA, 'stageTimeout': 'soon'}}}),
     ['spec.drainConfig.evict: unknown field',
      "spec.packages.tuning.containerSHA: 'abc' does not match ^sha256:[0-9a-f]{64}$",
      "spec.drainConfig.timeout: '-10m' must be greater than or equal to 0 (unset or 0: no timeout)",
      'spec.drainConfig.gracePeriod: \'1w\' %s (time: unknown unit "w" in duration "1w")' % NOT_DURATION,
      'spec.packages.other.stageTimeout: \'soon\' %s (time: invalid duration "soon")' % NOT_DURATION,
      "spec.packages.other.image: %r carries an inline digest %r; image must be a bare repository ('repo/other'): %s"
      % ('repo/other@' + SHA, SHA, IMAGE_HINT),
      "spec.packages.tuning.stageTimeout: '-1h' must be greater than or equal to 0 (unset: the operator default; 0: no time bound)",
      "spec.packages.tuning.image: 'repo/tuning:1.2.0' carries an inline tag '1.2.0'; image must be a bare repository "
      "('repo/tuning'): %s" % IMAGE_HINT]),
    # the fields a Skyhook does not have, each named with the group it needs
    ('skyhook-drainConfig', make_cr({'drainConfig': {'timeout': '10m'}}, SKYHOOK), ['spec.drainConfig: drainConfig ' + NEEDS]),
    ('skyhook-cordonAfter', make_cr({'runtimeRequired': True, 'runtimeRequiredCordonAfter': True}, SKYHOOK),
     ['spec.runtimeRequiredCordonAfter: runtimeRequiredCordonAfter ' + NEEDS]),
    ('skyhook-stageTimeout', with_pkg(SKYHOOK, stageTimeout='20m'),
     ['spec.packages.tuning.stageTimeout: stageTimeout ' + NEEDS]),
    ('skyhook-null-drainConfig', make_cr({'drainConfig': None}, SKYHOOK), ['spec.drainConfig: drainConfig ' + NEEDS]),
    ('skyhook-all-three', make_cr({'drainConfig': {}, 'runtimeRequiredCordonAfter': False, 'bogus': 1,
                                   'packages': {'tuning': {'version': '1.2.0', 'image': IMAGE, 'stageTimeout': 'x'}}},
                                  SKYHOOK),
     ['spec.bogus: unknown field', 'spec.drainConfig: drainConfig ' + NEEDS,
      'spec.packages.tuning.stageTimeout: stageTimeout ' + NEEDS,
      'spec.runtimeRequiredCordonAfter: runtimeRequiredCordonAfter ' + NEEDS]),
    # a Skyhook keeps its own tag rule (skyhook_webhook.go @2ff297d4)
    ('skyhook-other-tag', with_pkg(SKYHOOK, image=IMAGE + ':latest'),
     ["spec.packages.tuning.image: tag 'latest' of %r does not match the package version '1.2.0'; leave the tag off "
      "(the version is the tag)" % IMAGE]),
    ('skyhook-empty-image', with_pkg(SKYHOOK, image=''), ['spec.packages.tuning.image: must not be empty']),
]


@pytest.mark.parametrize('doc,expected', [(d, e) for unused, d, e in INVALID], ids=[i for i, unused, unused_too in INVALID])
def test_invalid_shapes(doc, expected):
    assert cr_validation.cr_errors(doc) == expected
    with pytest.raises(cr_model.CRValidationError) as info:
        cr_validation.build_cr(doc)
    assert info.value.errors == expected


@pytest.mark.parametrize('name', ['tag-in-image', 'digest-in-image', 'negative-stageTimeout', 'days-stageTimeout'])
def test_a_stored_nodewright_is_refused_alike(name):
    # the v0.20 controller does not cut a tag off (Packages.UnmarshalJSON only names them): what the webhook refuses
    # cannot run, whether read from a file or from the API server
    doc = dict((i, d) for i, d, unused in INVALID)[name]
    assert cr_validation.cr_errors(doc, stored=True) == cr_validation.cr_errors(doc)
    assert cr_validation.image_tag_problems(doc) == []


def test_a_stored_skyhook_keeps_its_other_tag():
    doc = dict((i, d) for i, d, unused in INVALID)['skyhook-other-tag']
    assert cr_validation.cr_errors(doc, stored=True) == []
    assert cr_validation.build_cr(doc, stored=True).packages['tuning'].image_ref == IMAGE + ':1.2.0'


def test_the_v020_policy_refuses_a_zero_percent_budget(v020_example_documents):
    policy = copy.deepcopy(v020_example_documents[0])
    policy['spec']['default']['budget'] = {'percent': 0}
    assert cr_validation.policy_errors(policy) == ['spec.default.budget.percent: 0 is less than the minimum 1']


def test_the_input_is_not_changed(v020_example_documents):
    doc = copy.deepcopy(v020_example_documents[1])
    cr_validation.build_cr(doc)
    assert doc == v020_example_documents[1]


@pytest.mark.parametrize('image,parts', [
    ('repo', ('repo', None, None)),
    ('ghcr.io/org/pkg', ('ghcr.io/org/pkg', None, None)),
    ('ghcr.io/org/pkg:1.0', ('ghcr.io/org/pkg', '1.0', None)),
    ('localhost:5000/org/pkg', ('localhost:5000/org/pkg', None, None)),
    ('localhost:5000/org/pkg:1.0', ('localhost:5000/org/pkg', '1.0', None)),
    ('repo@sha256:abc', ('repo', None, 'sha256:abc')),
    ('repo:1.0@sha256:abc', ('repo', '1.0', 'sha256:abc')),
    ('localhost:5000/repo@sha256:abc', ('localhost:5000/repo', None, 'sha256:abc')),
    ('repo:', ('repo', '', None)),
    ('repo@', ('repo', None, '')),
    ('a@b@c', ('a@b', None, 'c')),
])
def test_split_image_reference(image, parts):
    assert cr_model.split_image_reference(image) == parts
