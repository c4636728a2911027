# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""node_state: the operator's node annotations, byte-for-byte as Go's encoding/json writes them."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest

from ansible_collections.nodewright.bridge.plugins.module_utils.contract import node_annotations
from ansible_collections.nodewright.bridge.plugins.module_utils.model.constants import IGNORE_LABEL


def entry(name='a', version='1.0.0', image='img', stage='apply', state='in_progress', **extra):
    item = {'name': name, 'version': version, 'image': image, 'stage': stage, 'state': state}
    item.update(extra)
    return item


@pytest.mark.parametrize('state,expected', [
    ({}, '{}'),
    ({'a|1.0.0': entry()},
     '{"a|1.0.0":{"name":"a","version":"1.0.0","image":"img","stage":"apply","state":"in_progress"}}'),
    # omitempty: containerSHA, state and restarts disappear when empty / zero; stage never does
    ({'a|1.0.0': entry(containerSHA='', state='', restarts=0)},
     '{"a|1.0.0":{"name":"a","version":"1.0.0","image":"img","stage":"apply"}}'),
    ({'a|1.0.0': entry(stage='', state='')},
     '{"a|1.0.0":{"name":"a","version":"1.0.0","image":"img","stage":""}}'),
    # struct field order, restarts as a bare integer
    ({'a|1.0.0': entry(restarts=2, containerSHA='sha256:ab', state='erroring', stage='config')},
     '{"a|1.0.0":{"name":"a","version":"1.0.0","image":"img","containerSHA":"sha256:ab","stage":"config",'
     '"state":"erroring","restarts":2}}'),
    # map keys sorted
    ({'b|1.0.0': entry(name='b'), 'a|2.0.0': entry(version='2.0.0', state='complete')},
     '{"a|2.0.0":{"name":"a","version":"2.0.0","image":"img","stage":"apply","state":"complete"},'
     '"b|1.0.0":{"name":"b","version":"1.0.0","image":"img","stage":"apply","state":"in_progress"}}'),
    # HTML-safe escapes of <, > and &, and of U+2028 / U+2029; other non-ASCII stays as UTF-8
    ({'a|1.0.0': entry(image=u'r<e>g&i\u2028\u2029\u00e9')},
     u'{"a|1.0.0":{"name":"a","version":"1.0.0","image":"r\\u003ce\\u003eg\\u0026i\\u2028\\u2029\u00e9",'
     u'"stage":"apply","state":"in_progress"}}'),
    ({'a|1.0.0': entry(image='q"b\\s\n\t')},
     '{"a|1.0.0":{"name":"a","version":"1.0.0","image":"q\\"b\\\\s\\n\\t","stage":"apply","state":"in_progress"}}'),
])
def test_encode_matches_go_json_marshal(state, expected):
    assert node_annotations.encode(state) == expected


REAL = ('{"nvidia-setup|0.2.0":{"name":"nvidia-setup","version":"0.2.0",'
        '"image":"ghcr.io/nvidia/skyhook-packages/nvidia-setup","stage":"post-interrupt","state":"complete"},'
        '"tuning|1.1.0":{"name":"tuning","version":"1.1.0","image":"ghcr.io/nvidia/skyhook-packages/tuning",'
        '"containerSHA":"sha256:0123456789abcdef","stage":"config","state":"erroring","restarts":3}}')


def test_round_trip_of_a_real_annotation():
    state = node_annotations.decode(REAL)
    assert state['tuning|1.1.0'] == {'name': 'tuning', 'version': '1.1.0',
                                     'image': 'ghcr.io/nvidia/skyhook-packages/tuning',
                                     'containerSHA': 'sha256:0123456789abcdef', 'stage': 'config',
                                     'state': 'erroring', 'restarts': 3}
    assert state['nvidia-setup|0.2.0']['restarts'] == 0
    assert state['nvidia-setup|0.2.0']['containerSHA'] == ''
    assert node_annotations.encode(state) == REAL


def test_encode_of_reordered_json_is_canonical():
    shuffled = json.dumps(dict(reversed(list(json.loads(REAL).items()))), indent=2)
    assert node_annotations.encode(node_annotations.decode(shuffled)) == REAL


@pytest.mark.parametrize('text', [None, ''])
def test_decode_empty(text):
    assert node_annotations.decode(text) == {}


@pytest.mark.parametrize('text,needle', [
    ('{not json', 'is not valid JSON'),
    ('[]', 'must be a JSON object'),
    ('{"a|1":[]}', "['a|1'] must be an object"),
    ('{"a|1":{"name":"a","version":"1","image":"i","stage":"deploy"}}', "['a|1'].stage 'deploy' is not one of"),
    ('{"a|1":{"name":"a","version":"1","image":"i","stage":"apply","state":"done"}}', "['a|1'].state 'done' is not one of"),
    ('{"a|1":{"name":"a","version":"1","image":"i","stage":"apply","restarts":"2"}}', "['a|1'].restarts must be an integer"),
])
def test_decode_errors_name_the_annotation(text, needle):
    where = 'node-1 annotation skyhook.nvidia.com/nodeState_demo'
    with pytest.raises(node_annotations.NodeStateError) as info:
        node_annotations.decode(text, where)
    assert str(info.value).startswith(where)
    assert needle in str(info.value)


def test_upsert_changes():
    state, changed = node_annotations.upsert({}, 'a', '1.0.0', 'img', 'in_progress', 'apply')
    assert changed is True
    assert state == {'a|1.0.0': {'name': 'a', 'version': '1.0.0', 'image': 'img', 'containerSHA': '',
                                 'stage': 'apply', 'state': 'in_progress', 'restarts': 0}}
    same, changed = node_annotations.upsert(state, 'a', '1.0.0', 'img', 'in_progress', 'apply')
    assert changed is False and same is state
    same, changed = node_annotations.upsert(state, 'a', '1.0.0', 'other-image', 'in_progress', 'apply')
    assert changed is False and same['a|1.0.0']['image'] == 'img'      # the image alone is not a change
    for kwargs in ({'state_value': 'complete'}, {'stage': 'config'}, {'restarts': 1}, {'container_sha': 'sha256:1'}):
        args = dict(state_value='in_progress', stage='apply')
        args.update(kwargs)
        new, changed = node_annotations.upsert(state, 'a', '1.0.0', 'img', **args)
        assert changed is True, kwargs
        assert new is not state and state['a|1.0.0']['restarts'] == 0 and state['a|1.0.0']['stage'] == 'apply'
    other, changed = node_annotations.upsert(state, 'a', '2.0.0', 'img', 'in_progress', 'upgrade')
    assert changed is True and sorted(other) == ['a|1.0.0', 'a|2.0.0']


@pytest.mark.parametrize('state_value,stage', [('done', 'apply'), ('complete', 'deploy')])
def test_upsert_rejects_unknown_values(state_value, stage):
    with pytest.raises(ValueError):
        node_annotations.upsert({}, 'a', '1', 'i', state_value, stage)


def test_remove():
    state, dummy = node_annotations.upsert({}, 'a', '1.0.0', 'img', 'complete', 'config')
    new, changed = node_annotations.remove(state, 'a', '1.0.0')
    assert (new, changed) == ({}, True) and 'a|1.0.0' in state
    same, changed = node_annotations.remove(state, 'a', '9.9.9')
    assert changed is False and same is state


def test_keys():
    assert node_annotations.node_state_key('demo') == 'skyhook.nvidia.com/nodeState_demo'
    assert node_annotations.status_key('demo') == 'skyhook.nvidia.com/status_demo'
    assert node_annotations.cordon_key('demo') == 'skyhook.nvidia.com/cordon_demo'
    assert node_annotations.version_key('demo') == 'skyhook.nvidia.com/version_demo'
    assert node_annotations.unique_name('a', '1.0.0') == 'a|1.0.0'
    assert IGNORE_LABEL == 'skyhook.nvidia.com/ignore'


@pytest.mark.parametrize('annotations,owners', [
    (None, []),
    ({}, []),
    ({'skyhook.nvidia.com/cordon_zeta': 'true', 'skyhook.nvidia.com/cordon_alpha': 'true',
      'skyhook.nvidia.com/nodeState_alpha': '{}', 'example.com/cordon_x': 'true'}, ['alpha', 'zeta']),
])
def test_cordon_owners(annotations, owners):
    assert node_annotations.cordon_owners(annotations) == owners


@pytest.mark.parametrize('labels,ignored', [
    (None, False), ({}, False), ({'skyhook.nvidia.com/ignore': 'true'}, True),
    ({'skyhook.nvidia.com/ignore': 'True'}, False), ({'skyhook.nvidia.com/ignore': 'false'}, False),
    ({'nodewright.nvidia.com/ignore': 'true'}, False),
])
def test_is_ignored(labels, ignored):
    assert node_annotations.is_ignored(labels) is ignored


# --------------------------------------------------------------------------- metadata patches


def test_status_patch():
    assert node_annotations.status_patch('demo', 'in_progress') == {'metadata': {
        'annotations': {'skyhook.nvidia.com/status_demo': 'in_progress'},
        'labels': {'skyhook.nvidia.com/status_demo': 'in_progress'}}}
    with pytest.raises(ValueError):
        node_annotations.status_patch('demo', 'done')


def test_version_and_node_state_patches():
    assert node_annotations.version_patch('demo') == {'metadata': {'annotations': {
        'skyhook.nvidia.com/version_demo': node_annotations.OPERATOR_VERSION}}}
    state = {'a|1.0.0': entry()}
    assert node_annotations.node_state_patch('demo', state) == {'metadata': {'annotations': {
        'skyhook.nvidia.com/nodeState_demo': node_annotations.encode(state)}}}


def apply_patch(node, patch):
    """A node {'annotations', 'unschedulable'} after a strategic-merge style metadata/spec patch."""
    if patch is None:
        return node
    annotations = dict(node['annotations'])
    for key, value in patch.get('metadata', {}).get('annotations', {}).items():
        if value is None:
            annotations.pop(key, None)
        else:
            annotations[key] = value
    return {'annotations': annotations, 'unschedulable': patch.get('spec', {}).get('unschedulable', node['unschedulable'])}


def cordon(node, cr_name, take_over=False):
    return apply_patch(node, node_annotations.cordon_patch(cr_name, node['annotations'], node['unschedulable'], take_over))


def cli_reset(node, cr_name):
    """`kubectl skyhook reset`: the CR's node annotations go, cordon_<cr> included; spec.unschedulable stays."""
    gone = (node_annotations.cordon_key(cr_name), node_annotations.node_state_key(cr_name), node_annotations.status_key(cr_name))
    return {'annotations': dict((k, v) for k, v in node['annotations'].items() if k not in gone),
            'unschedulable': node['unschedulable']}


def uncordon(node, cr_name):
    patch, schedulable = node_annotations.uncordon_patch(cr_name, node['annotations'], node['unschedulable'])
    node = apply_patch(node, patch)
    assert schedulable is (not node['unschedulable'])
    return node


def test_cordon_and_uncordon_a_schedulable_node():
    node = cordon({'annotations': {}, 'unschedulable': False}, 'demo')
    assert node == {'annotations': {'skyhook.nvidia.com/cordon_demo': 'true'}, 'unschedulable': True}
    assert node_annotations.cordon_patch('demo', node['annotations'], True) is None       # already held
    assert uncordon(node, 'demo') == {'annotations': {}, 'unschedulable': False}


def test_uncordon_without_holding_a_cordon():
    assert node_annotations.uncordon_patch('demo', {}, True) == (None, False)
    assert node_annotations.uncordon_patch('demo', {'skyhook.nvidia.com/cordon_other': 'true'}, False) == (None, True)


def test_inherited_cordon_survives_the_uncordon():
    node = cordon({'annotations': {}, 'unschedulable': True}, 'demo')         # kubectl cordon came first
    assert node['annotations'][node_annotations.inherited_cordon_key('demo')] == 'true'
    assert uncordon(node, 'demo') == {'annotations': {}, 'unschedulable': True}


@pytest.mark.parametrize('order', [('a', 'b'), ('b', 'a')])
def test_two_crs_on_a_node_they_cordoned(order):
    node = cordon(cordon({'annotations': {}, 'unschedulable': False}, 'a'), 'b')
    node = uncordon(node, order[0])
    assert node['unschedulable'] is True                    # the other CR still holds it
    assert uncordon(node, order[1]) == {'annotations': {}, 'unschedulable': False}


@pytest.mark.parametrize('order', [
    ('b', 'a'),
    ('a', 'b'),
])
def test_foreign_cordon_survives_two_crs(order):
    node = {'annotations': {}, 'unschedulable': True}      # kubectl cordon
    node = cordon(cordon(node, 'a'), 'b')
    node = uncordon(uncordon(node, order[0]), order[1])
    assert node == {'annotations': {}, 'unschedulable': True}


def test_a_cordon_stranded_by_reset_is_taken_over_and_released():
    # a reboot package failed: the node stays cordoned by the CR; `kubectl skyhook reset` drops cordon_demo
    node = cli_reset(cordon({'annotations': {}, 'unschedulable': False}, 'demo'), 'demo')
    assert node == {'annotations': {}, 'unschedulable': True}
    # the CR's status still says the node was erroring: the next run holds the cordon again, and releases it
    node = cordon(node, 'demo', take_over=True)
    assert node == {'annotations': {'skyhook.nvidia.com/cordon_demo': 'true'}, 'unschedulable': True}
    assert uncordon(node, 'demo') == {'annotations': {}, 'unschedulable': False}


def test_without_the_crs_record_an_unowned_cordon_stays_someone_elses():
    node = cordon({'annotations': {}, 'unschedulable': True}, 'demo', take_over=False)
    assert uncordon(node, 'demo') == {'annotations': {}, 'unschedulable': True}


def test_take_over_never_takes_a_cordon_that_was_someone_elses_first():
    # admin cordon, the CR inherits it, the rollout fails, reset: the marker says whose the cordon is
    node = cli_reset(cordon({'annotations': {}, 'unschedulable': True}, 'demo'), 'demo')
    assert node['annotations'] == {node_annotations.inherited_cordon_key('demo'): 'true'}
    node = cordon(node, 'demo', take_over=True)
    assert uncordon(node, 'demo') == {'annotations': {}, 'unschedulable': True}
    # nor one another CR holds
    other = cordon({'annotations': {}, 'unschedulable': False}, 'other')
    assert node_annotations.inherited_cordon_key('demo') not in cordon(other, 'demo', take_over=True)['annotations']
    assert uncordon(cordon(other, 'demo', take_over=True), 'demo')['unschedulable'] is True


def test_a_stale_inherited_marker_cannot_strand_the_node():
    # admin cordon, the CR inherits it, the rollout fails, the admin uncordons, reset: the marker is left
    node = cli_reset(cordon({'annotations': {}, 'unschedulable': True}, 'demo'), 'demo')
    node = dict(node, unschedulable=False)
    node = cordon(node, 'demo')
    assert node == {'annotations': {'skyhook.nvidia.com/cordon_demo': 'true'}, 'unschedulable': True}
    assert uncordon(node, 'demo') == {'annotations': {}, 'unschedulable': False}
    # the same without the reset: the CR's own cordon annotation is still there
    node = cordon({'annotations': {}, 'unschedulable': True}, 'demo')
    node = cordon(dict(node, unschedulable=False), 'demo')
    assert uncordon(node, 'demo') == {'annotations': {}, 'unschedulable': False}


# --------------------------------------------------------------------------- reset / ignore

def _annotated(cr, state):
    return {node_annotations.node_state_key(cr): node_annotations.encode(state), 'other': 'x'}


def _two_packages():
    state = node_annotations.upsert({}, 'a', '1.0', 'img/a', 'complete', 'config')[0]
    return node_annotations.upsert(state, 'b', '2.0', 'img/b', 'erroring', 'apply', restarts=3)[0]


def test_states_on_node_reads_every_cr_or_one():
    ann = _annotated('cr1', _two_packages())
    ann.update(_annotated('cr2', {}))
    everything = node_annotations.states_on_node(ann)
    assert sorted(everything) == ['cr1', 'cr2']
    assert everything['cr1']['b|2.0']['restarts'] == 3
    assert list(node_annotations.states_on_node(ann, 'cr2')) == ['cr2']
    assert node_annotations.states_on_node(ann, 'nope') == {}


def test_reset_whole_cr_removes_the_annotation_only():
    patch, reset = node_annotations.reset_patch('cr1', _annotated('cr1', _two_packages()))
    assert patch == {'metadata': {'annotations': {node_annotations.node_state_key('cr1'): None}}}
    assert reset == ['a|1.0', 'b|2.0']


def test_reset_without_state_is_a_no_op():
    assert node_annotations.reset_patch('cr1', {'other': 'x'}) == (None, [])
    assert node_annotations.reset_patch('cr1', _annotated('cr1', _two_packages()), package='zzz') == (None, [])


def test_reset_one_package_keeps_the_others():
    patch, reset = node_annotations.reset_patch('cr1', _annotated('cr1', _two_packages()), package='b')
    assert reset == ['b|2.0']
    left = node_annotations.decode(patch['metadata']['annotations'][node_annotations.node_state_key('cr1')])
    assert list(left) == ['a|1.0']


def test_reset_last_package_removes_the_annotation():
    state = node_annotations.upsert({}, 'a', '1.0', 'img/a', 'complete', 'config')[0]
    patch, reset = node_annotations.reset_patch('cr1', _annotated('cr1', state), package='a', version='1.0')
    assert patch == {'metadata': {'annotations': {node_annotations.node_state_key('cr1'): None}}}
    assert reset == ['a|1.0']


def test_rerun_from_stage_sets_in_progress():
    patch, reset = node_annotations.reset_patch('cr1', _annotated('cr1', _two_packages()), package='a', stage='apply')
    left = node_annotations.decode(patch['metadata']['annotations'][node_annotations.node_state_key('cr1')])
    assert reset == ['a|1.0']
    assert (left['a|1.0']['stage'], left['a|1.0']['state']) == ('apply', 'in_progress')
    assert left['b|2.0']['state'] == 'erroring'


def test_rerun_from_an_unknown_stage_is_refused():
    with pytest.raises(ValueError, match='uninstall'):
        node_annotations.reset_patch('cr1', _annotated('cr1', _two_packages()), package='a', stage='uninstall')


def test_ignore_patch():
    assert node_annotations.ignore_patch({}, True) == {'metadata': {'labels': {IGNORE_LABEL: 'true'}}}
    assert node_annotations.ignore_patch({IGNORE_LABEL: 'true'}, True) is None
    assert node_annotations.ignore_patch({IGNORE_LABEL: 'true'}, False) == {
        'metadata': {'labels': {IGNORE_LABEL: None}}}
    assert node_annotations.ignore_patch({}, False) is None
    # a label with another value is not "ignored" but is still removed by unignore
    assert node_annotations.ignore_patch({IGNORE_LABEL: 'false'}, False) == {
        'metadata': {'labels': {IGNORE_LABEL: None}}}


# --------------------------------------------------------------------------- pod verdicts

def test_stage_succeeded_marks_complete():
    state = node_annotations.upsert({}, 'a', '1.0', 'img/a', 'in_progress', 'apply')[0]
    new = node_annotations.stage_succeeded(state, 'a', '1.0', 'img/a', 'apply', restarts=1)
    assert (new['a|1.0']['stage'], new['a|1.0']['state'], new['a|1.0']['restarts']) == ('apply', 'complete', 1)
    assert state['a|1.0']['state'] == 'in_progress'  # the input is not modified


def test_upgrade_drops_the_other_versions_only():
    state = node_annotations.upsert({}, 'a', '1.0', 'img/a', 'complete', 'post-interrupt')[0]
    state = node_annotations.upsert(state, 'a', '2.0', 'img/a', 'in_progress', 'upgrade')[0]
    state = node_annotations.upsert(state, 'b', '1.0', 'img/b', 'complete', 'config')[0]
    new = node_annotations.stage_succeeded(state, 'a', '2.0', 'img/a', 'upgrade')
    assert sorted(new) == ['a|2.0', 'b|1.0'] and new['a|2.0']['state'] == 'complete'


def test_uninstall_with_and_without_interrupt():
    state = node_annotations.upsert({}, 'a', '1.0', 'img/a', 'in_progress', 'uninstall')[0]
    assert node_annotations.stage_succeeded(state, 'a', '1.0', 'img/a', 'uninstall') == {}
    moved = node_annotations.stage_succeeded(state, 'a', '1.0', 'img/a', 'uninstall', has_interrupt=True)
    assert (moved['a|1.0']['stage'], moved['a|1.0']['state']) == ('uninstall-interrupt', 'in_progress')
    assert node_annotations.interrupt_succeeded(moved, 'a', '1.0', 'img/a', stage='uninstall-interrupt') == {}


def test_interrupt_completes_the_packages_it_covered():
    state = node_annotations.upsert({}, 'a', '1.0', 'img/a', 'in_progress', 'interrupt')[0]
    state = node_annotations.upsert(state, 'b', '1.0', 'img/b', 'skipped', 'interrupt')[0]
    state = node_annotations.upsert(state, 'c', '1.0', 'img/c', 'skipped', 'interrupt')[0]
    new = node_annotations.interrupt_succeeded(state, 'a', '1.0', 'img/a', covered=('b',))
    assert new['a|1.0']['state'] == 'complete' and new['a|1.0']['stage'] == 'interrupt'
    assert new['b|1.0']['state'] == 'complete'
    assert new['c|1.0']['state'] == 'skipped'  # not covered by this interrupt


def test_parse_taint():
    assert node_annotations.parse_taint('skyhook.nvidia.com=runtime-required:NoSchedule') == {
        'key': 'skyhook.nvidia.com', 'value': 'runtime-required', 'effect': 'NoSchedule'}
    assert node_annotations.parse_taint('gpu:NoExecute') == {'key': 'gpu', 'effect': 'NoExecute'}
    assert node_annotations.parse_taint('k=:PreferNoSchedule') == {'key': 'k', 'effect': 'PreferNoSchedule'}


@pytest.mark.parametrize('spec', ['', 'no-effect', 'key', 'key=value', 'key=value:Sometimes', 'a=b=c:NoSchedule',
                                  'key:NoSchedule-', 'a:b:NoSchedule', '=v:NoSchedule'])
def test_bad_taints_are_refused_naming_the_value(spec):
    with pytest.raises(ValueError, match='taint %r' % spec):
        node_annotations.parse_taint(spec)


def test_unknown_taint_effect_names_the_effect():
    with pytest.raises(ValueError, match="effect 'Sometimes' is not one of NoSchedule, PreferNoSchedule, NoExecute"):
        node_annotations.parse_taint('key=value:Sometimes')


def _tainted(statuses, taints):
    annotations = dict((node_annotations.status_key(k), v) for k, v in statuses.items())
    return {'metadata': {'annotations': annotations}, 'spec': {'taints': taints}}


RUNTIME = {'key': 'skyhook.nvidia.com', 'value': 'runtime-required', 'effect': 'NoSchedule'}
OTHER = {'key': 'gpu', 'value': 'true', 'effect': 'NoSchedule'}


def test_runtime_taint_removed_only_when_every_required_cr_is_complete():
    spec = 'skyhook.nvidia.com=runtime-required:NoSchedule'
    node = _tainted({'a': 'complete', 'b': 'in_progress'}, [RUNTIME, OTHER])
    assert node_annotations.runtime_taint_patch(node, spec, ['a', 'b']) is None
    assert node_annotations.runtime_taint_patch(node, spec, ['a']) == {'spec': {'taints': [OTHER]}}
    alone = _tainted({'a': 'complete'}, [RUNTIME])
    assert node_annotations.runtime_taint_patch(alone, spec, ['a']) == {'spec': {'taints': None}}
    untainted = _tainted({'a': 'complete'}, [OTHER])
    assert node_annotations.runtime_taint_patch(untainted, spec, ['a']) is None


def test_forget_drops_everything_but_the_cordon():
    annotations = _annotated('cr1', _two_packages())
    annotations.update({node_annotations.status_key('cr1'): 'complete', node_annotations.version_key('cr1'): 'v0.15.0',
                        'skyhook.nvidia.com/autoTaint_cr1': 'true', node_annotations.cordon_key('cr1'): 'true',
                        node_annotations.status_key('cr2'): 'complete'})
    labels = {node_annotations.status_key('cr1'): 'complete', node_annotations.status_key('cr2'): 'complete'}
    patch = node_annotations.forget_patch('cr1', annotations, labels)
    assert patch == {'metadata': {
        'annotations': {node_annotations.node_state_key('cr1'): None, node_annotations.status_key('cr1'): None,
                        node_annotations.version_key('cr1'): None, 'skyhook.nvidia.com/autoTaint_cr1': None},
        'labels': {node_annotations.status_key('cr1'): None}}}
    assert node_annotations.forget_patch('cr3', annotations, labels) is None


# --------------------------------------------------------------------------- records the operator writes on nodes it does not run


def test_record_sets_annotation_and_label_once():
    key = node_annotations.status_key('demo')
    assert node_annotations.record_patch('demo', 'blocked', {}, {}) == {
        'metadata': {'annotations': {key: 'blocked'}, 'labels': {key: 'blocked'}}}
    assert node_annotations.record_patch('demo', 'blocked', {key: 'blocked'}, {key: 'blocked'}) is None
    assert node_annotations.record_patch('demo', 'blocked', {key: 'blocked'}, {}) is not None  # the label is missing


def test_a_reset_of_a_complete_node_records_it_unknown_in_the_same_patch():
    key, state_key = node_annotations.status_key('demo'), node_annotations.node_state_key('demo')
    reset = {'metadata': {'annotations': {state_key: None}}}
    assert node_annotations.unrecord_complete(reset, 'demo', {key: 'complete'}, {key: 'complete'}) == {
        'metadata': {'annotations': {state_key: None, key: 'unknown'}, 'labels': {key: 'unknown'}}}
    # a label left complete alone counts too (what kubectl get nodes -l shows)
    assert node_annotations.unrecord_complete(reset, 'demo', {key: 'erroring'}, {key: 'complete'})['metadata']['labels'] == {
        key: 'unknown'}
    assert node_annotations.unrecord_complete(reset, 'demo', {key: 'erroring'}, {key: 'erroring'}) == reset
    assert node_annotations.unrecord_complete(None, 'demo', {key: 'complete'}, {key: 'complete'}) is None


def test_auto_taint_puts_the_runtime_taint_and_its_marker_on_a_node_no_cr_has_written():
    spec = 'skyhook.nvidia.com=runtime-required:NoSchedule'
    other = {'key': 'gpu', 'effect': 'NoSchedule'}
    fresh = {'metadata': {'name': 'n', 'annotations': {'kubeadm.alpha.kubernetes.io/cri-socket': 'x'}},
             'spec': {'taints': [other]}}
    assert node_annotations.auto_taint_patch(fresh, spec) == {
        'metadata': {'annotations': {'skyhook.nvidia.com/autoTaint_skyhook.nvidia.com': 'true'}},
        'spec': {'taints': [other, {'key': 'skyhook.nvidia.com', 'value': 'runtime-required', 'effect': 'NoSchedule'}]}}
    # written by a CR already, or tainted (same key and effect, any value): nothing to do
    written = {'metadata': {'annotations': {'skyhook.nvidia.com/status_x': 'complete'}}, 'spec': {}}
    assert node_annotations.auto_taint_patch(written, spec) is None
    tainted = {'metadata': {}, 'spec': {'taints': [{'key': 'skyhook.nvidia.com', 'value': 'other', 'effect': 'NoSchedule'}]}}
    assert node_annotations.auto_taint_patch(tainted, spec) is None
    assert node_annotations.is_new_node({'bridge.nodewright.io/cordon-inherited_x': 'true'}) is True


# --------------------------------------------------------------------------- the v0.18+ migration copy
# operator/internal/wrapper/zz.migration.0.18.0.go @8127a97c (NVIDIA/nodewright): operator-owned legacy keys are
# copied under nodewright.nvidia.com/ unless the new key exists; the legacy ones stay; a user's keys are not copied.

def _legacy_node(annotations, labels=None):
    return {'metadata': {'name': 'n1', 'annotations': annotations, 'labels': labels or {}}}


def test_legacy_copies_take_the_operators_keys_only_and_let_a_new_key_win():
    from ansible_collections.nodewright.bridge.plugins.module_utils.model.api_generation import NODEWRIGHT  # pylint: disable=import-outside-toplevel
    node = _legacy_node({'skyhook.nvidia.com/nodeState_gpu': '{}', 'skyhook.nvidia.com/status_gpu': 'complete',
                         'skyhook.nvidia.com/version_gpu': 'v0.15.0', 'skyhook.nvidia.com/cordon_gpu': 'true',
                         'skyhook.nvidia.com/autoTaint_skyhook.nvidia.com': 'true', 'skyhook.nvidia.com/note': 'mine',
                         'nodewright.nvidia.com/status_gpu': 'in_progress'},
                        {'skyhook.nvidia.com/ignore': 'true', 'skyhook.nvidia.com/status_gpu': 'complete',
                         'skyhook.nvidia.com/pool': 'a'})
    copies = node_annotations.legacy_copies(node, NODEWRIGHT)
    assert copies == {
        'annotations': {'nodewright.nvidia.com/nodeState_gpu': '{}', 'nodewright.nvidia.com/version_gpu': 'v0.15.0',
                        'nodewright.nvidia.com/cordon_gpu': 'true',
                        'nodewright.nvidia.com/autoTaint_skyhook.nvidia.com': 'true'},
        'labels': {'nodewright.nvidia.com/ignore': 'true', 'nodewright.nvidia.com/status_gpu': 'complete'}}
    assert node_annotations.legacy_copies(node) == {}, 'nothing to copy under the legacy generation itself'
    view = node_annotations.with_copies(node, copies)
    assert view['metadata']['annotations']['nodewright.nvidia.com/status_gpu'] == 'in_progress'
    assert 'nodewright.nvidia.com/version_gpu' not in node['metadata']['annotations'], 'the input is left as it is'
    assert node_annotations.legacy_copies(view, NODEWRIGHT) == {}, 'a node once copied has nothing more to copy'


def test_merge_copies_puts_the_copies_under_the_patch():
    copies = {'annotations': {'nodewright.nvidia.com/version_gpu': 'v0.15.0', 'nodewright.nvidia.com/status_gpu': 'complete'}}
    patch = {'metadata': {'annotations': {'nodewright.nvidia.com/version_gpu': 'v0.20.0'}}, 'spec': {'unschedulable': True}}
    assert node_annotations.merge_copies(patch, copies) == {'spec': {'unschedulable': True}, 'metadata': {'annotations': {
        'nodewright.nvidia.com/version_gpu': 'v0.20.0', 'nodewright.nvidia.com/status_gpu': 'complete'}}}
    assert node_annotations.merge_copies(None, copies) is None and node_annotations.merge_copies(patch, {}) is patch


def test_a_legacy_node_state_that_cannot_be_read_is_named_by_its_own_key():
    from ansible_collections.nodewright.bridge.plugins.module_utils.model.api_generation import NODEWRIGHT  # pylint: disable=import-outside-toplevel
    with pytest.raises(node_annotations.NodeStateError, match='node n1 annotation skyhook.nvidia.com/nodeState_gpu'):
        node_annotations.legacy_copies(_legacy_node({'skyhook.nvidia.com/nodeState_gpu': '{x'}), NODEWRIGHT)


def test_under_nodewright_the_runtime_required_taint_removal_also_drops_the_legacy_one():
    from ansible_collections.nodewright.bridge.plugins.module_utils.model.api_generation import NODEWRIGHT  # pylint: disable=import-outside-toplevel
    node = {'metadata': {'annotations': {'nodewright.nvidia.com/status_gpu': 'complete'}}, 'spec': {'taints': [
        {'key': 'nodewright.nvidia.com', 'value': 'runtime-required', 'effect': 'NoSchedule'},
        {'key': 'skyhook.nvidia.com', 'value': 'runtime-required', 'effect': 'NoSchedule'},
        {'key': 'other', 'effect': 'NoSchedule'}]}}
    assert node_annotations.runtime_taint_patch(node, NODEWRIGHT.runtime_required_taint, ['gpu'], NODEWRIGHT) == {
        'spec': {'taints': [{'key': 'other', 'effect': 'NoSchedule'}]}}


# --------------------------------------------------------------------------- runtimeRequiredCordonAfter (v0.19+)
# NVIDIA/nodewright operator/internal/controller/skyhook_controller_test.go, "HandleRuntimeRequired with
# runtimeRequiredCordonAfter", and internal/wrapper/node.go hasSkyhookCordon.

def _rr_tainted(annotations=None, unschedulable=False):
    return {'metadata': {'name': 'n1', 'annotations': dict({'nodewright.nvidia.com/status_gpu': 'complete'}, **(annotations or {}))},
            'spec': {'unschedulable': unschedulable,
                     'taints': [{'key': 'nodewright.nvidia.com', 'value': 'runtime-required', 'effect': 'NoSchedule'}]}}


def test_the_taint_comes_off_with_the_persistent_cordon_when_a_cr_asks_for_it():
    from ansible_collections.nodewright.bridge.plugins.module_utils.model.api_generation import NODEWRIGHT  # pylint: disable=import-outside-toplevel
    from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import node_state as module  # pylint: disable=import-outside-toplevel
    taint = NODEWRIGHT.runtime_required_taint
    patch = module.complete_patch(_rr_tainted(), 'gpu', ['gpu'], taint, NODEWRIGHT, cordon_after=lambda: True)
    assert patch['spec'] == {'taints': None, 'unschedulable': True}
    assert patch['metadata']['annotations']['nodewright.nvidia.com/runtimeRequiredCordon'] == 'true'
    plain = module.complete_patch(_rr_tainted(), 'gpu', ['gpu'], taint, NODEWRIGHT, cordon_after=lambda: False)
    assert plain['spec'] == {'taints': None} and 'nodewright.nvidia.com/runtimeRequiredCordon' not in plain['metadata']['annotations']
    asked = []
    untainted = dict(_rr_tainted(), spec={})
    module.complete_patch(untainted, 'gpu', ['gpu'], taint, NODEWRIGHT, cordon_after=lambda: asked.append(1) or True)
    assert asked == [], 'a node without the taint is never cordoned for it (nor are the CRs read)'


def test_the_persistent_cordon_outlives_the_crs_cordons_and_its_mark_goes_when_uncordoned_by_hand():
    from ansible_collections.nodewright.bridge.plugins.module_utils.model.api_generation import NODEWRIGHT  # pylint: disable=import-outside-toplevel
    marked = {'nodewright.nvidia.com/cordon_gpu': 'true', 'nodewright.nvidia.com/runtimeRequiredCordon': 'true'}
    patch, schedulable = node_annotations.uncordon_patch('gpu', marked, True, NODEWRIGHT)
    assert patch == {'metadata': {'annotations': {'nodewright.nvidia.com/cordon_gpu': None}}} and not schedulable
    assert node_annotations.stale_persistent_cordon_patch(marked, True, NODEWRIGHT) is None
    assert node_annotations.stale_persistent_cordon_patch(marked, False, NODEWRIGHT) == {
        'metadata': {'annotations': {'nodewright.nvidia.com/runtimeRequiredCordon': None}}}
    # the legacy generation has no such field: its cordon rules are v0.15's
    assert node_annotations.uncordon_patch('gpu', {'skyhook.nvidia.com/cordon_gpu': 'true'}, True)[1] is True
    assert node_annotations.persistent_cordon({'spec': {'taints': None}}) == {'spec': {'taints': None}}


# --------------------------------------------------------------------------- key-guarded node patches

GUARDED_NODE = {'metadata': {'resourceVersion': '7', 'annotations': {'skyhook.nvidia.com/nodeState_a': '{}', 'other': 'x'},
                             'labels': {'kubernetes.io/hostname': 'n1'}}}


def test_a_key_guarded_patch_tests_each_key_it_writes_at_the_value_read_null_when_absent():
    ops = node_annotations.key_guarded_patch(GUARDED_NODE, {'metadata': {
        'annotations': {'skyhook.nvidia.com/nodeState_a': '{"p":1}', 'skyhook.nvidia.com/status_a': 'in_progress'},
        'labels': {'skyhook.nvidia.com/status_a': 'in_progress'}}})
    assert ops == [
        {'op': 'test', 'path': '/metadata/annotations/skyhook.nvidia.com~1nodeState_a', 'value': '{}'},
        {'op': 'add', 'path': '/metadata/annotations/skyhook.nvidia.com~1nodeState_a', 'value': '{"p":1}'},
        {'op': 'test', 'path': '/metadata/annotations/skyhook.nvidia.com~1status_a', 'value': None},
        {'op': 'add', 'path': '/metadata/annotations/skyhook.nvidia.com~1status_a', 'value': 'in_progress'},
        {'op': 'test', 'path': '/metadata/labels/skyhook.nvidia.com~1status_a', 'value': None},
        {'op': 'add', 'path': '/metadata/labels/skyhook.nvidia.com~1status_a', 'value': 'in_progress'}]
    assert node_annotations.guards_hold(GUARDED_NODE, ops)


def test_a_key_guarded_patch_holds_the_keys_it_was_decided_from_and_removes_only_what_is_there():
    ops = node_annotations.key_guarded_patch(GUARDED_NODE, {'metadata': {'annotations': {
        'skyhook.nvidia.com/nodeState_a': None, 'skyhook.nvidia.com/status_a': None, 'x~y/z': 'v'}}},
        read=['other', 'skyhook.nvidia.com/nodeState_a'])
    assert ops == [
        {'op': 'test', 'path': '/metadata/annotations/other', 'value': 'x'},
        {'op': 'test', 'path': '/metadata/annotations/skyhook.nvidia.com~1nodeState_a', 'value': '{}'},
        {'op': 'remove', 'path': '/metadata/annotations/skyhook.nvidia.com~1nodeState_a'},
        {'op': 'test', 'path': '/metadata/annotations/skyhook.nvidia.com~1status_a', 'value': None},  # absent: no remove
        {'op': 'test', 'path': '/metadata/annotations/x~0y~1z', 'value': None},
        {'op': 'add', 'path': '/metadata/annotations/x~0y~1z', 'value': 'v'}]
    changed = dict(GUARDED_NODE, metadata=dict(GUARDED_NODE['metadata'], annotations={'other': 'y'}))
    assert not node_annotations.guards_hold(changed, ops)  # a key read changed: the refusal is a conflict
    moved = dict(GUARDED_NODE, metadata=dict(GUARDED_NODE['metadata'], resourceVersion='8'))
    assert node_annotations.guards_hold(moved, ops)  # a new version alone: the refusal was for something else


@pytest.mark.parametrize('patch, node', [
    ({'spec': {'unschedulable': True}, 'metadata': {'annotations': {'a': 'b'}}}, GUARDED_NODE),  # a cordon: by version
    ({'metadata': {'annotations': {'a': 'b'}, 'finalizers': []}}, GUARDED_NODE),
    ({'metadata': {'annotations': {'a': 'b'}}}, {'metadata': {'resourceVersion': '1'}}),  # no map to add a member to
    ({'metadata': {'annotations': {'skyhook.nvidia.com/status_a': None}}}, GUARDED_NODE),  # removes what is not there
])
def test_a_patch_a_key_guard_cannot_express_is_left_to_the_resource_version(patch, node):
    assert node_annotations.key_guarded_patch(node, patch) is None
