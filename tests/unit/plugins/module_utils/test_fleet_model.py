# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""module_utils.model.fleet_model and planning.fleet_progress: a fleet read and checked, a stage's gate, its report."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.nodewright.bridge.plugins.module_utils.model import fleet_model
from ansible_collections.nodewright.bridge.plugins.module_utils.planning import fleet_progress

FLEET = {'name': 'gpu', 'clusters': {'canary': {'context': 'canary'}, 'us': {'kubeconfig': '/k/us.yaml'}, 'eu': None},
         'stages': [{'name': 'canary', 'clusters': ['canary'], 'soak': '30m'},
                    {'name': 'rest', 'clusters': ['us', 'eu'], 'max_concurrency': 1}],
         'max_failures': 1, 'progress_deadline': '1h30m'}


def _errors(**changes):
    fleet = dict(FLEET, **changes)
    with pytest.raises(fleet_model.FleetError) as raised:
        fleet_model.parse_fleet(fleet)
    return raised.value.errors


def test_a_fleet_is_read_with_its_defaults():
    fleet = fleet_model.parse_fleet(FLEET).as_dict()
    assert fleet['clusters'] == {'canary': {'kubeconfig': None, 'context': 'canary'},
                                 'us': {'kubeconfig': '/k/us.yaml', 'context': None}, 'eu': {'kubeconfig': None, 'context': None}}
    assert fleet['stages'] == [{'name': 'canary', 'clusters': ['canary'], 'max_concurrency': 1, 'soak_seconds': 1800.0},
                               {'name': 'rest', 'clusters': ['us', 'eu'], 'max_concurrency': 1, 'soak_seconds': 0.0}]
    assert fleet['max_failures'] == 1 and fleet['progress_deadline_seconds'] == 5400.0
    minimal = fleet_model.parse_fleet({'clusters': {'a': {}}, 'stages': [{'clusters': ['a']}]}).as_dict()
    assert minimal['name'] == 'fleet' and minimal['stages'][0]['name'] == 'stage-1'
    assert minimal['max_failures'] == 0 and minimal['progress_deadline_seconds'] is None


def test_every_problem_of_a_bad_fleet_names_its_field():
    errors = _errors(stages=[{'name': 'canary', 'clusters': ['canary', 'ghost'], 'soak': 'soon'},
                             {'name': 'canary', 'clusters': ['canary', 'us'], 'max_concurrency': 0},
                             {'name': 'empty', 'clusters': []}],
                     max_failures=-1, progress_deadline='0s', colour='blue')
    assert errors == [
        'colour: unknown field (expected one of name, clusters, stages, max_failures, progress_deadline, budget, '
        'coordination, budget_namespace, operator)',
        "stages[0].clusters[1]: 'ghost' is not a cluster of the fleet (clusters: canary, eu, us)",
        "stages[0].soak: must be a duration such as 30m or 1h30m, got 'soon'",
        'stages[1].clusters[0]: cluster canary is already in stages[0]; a cluster belongs to one stage',
        'stages[1].max_concurrency: must be an integer of at least 1, got 0',
        'stages[2].clusters: a stage needs at least one cluster, got []',
        'stages: the name canary is used by 2 stages',
        'clusters.eu: in no stage (every cluster of the fleet is in exactly one)',
        'max_failures: must be an integer of at least 0, got -1',
        "progress_deadline: must be more than 0s, got '0s'",
    ]


@pytest.mark.parametrize('change, expected', [
    ({'clusters': {}}, 'clusters: must be a non-empty mapping'),
    ({'clusters': {'Bad Name': {}}}, 'clusters.Bad Name: a cluster id is lowercase'),
    ({'clusters': {'a': {'context': ''}}, 'stages': [{'clusters': ['a']}]}, "clusters.a.context: must be a non-empty string"),
    ({'clusters': {'a': {'server': 'x'}}, 'stages': [{'clusters': ['a']}]}, 'clusters.a.server: unknown field'),
    ({'stages': []}, 'stages: must be a non-empty list'),
    ({'stages': ['canary']}, "stages[0]: must be a mapping with name and clusters, got 'canary'"),
    ({'progress_deadline': -5}, 'progress_deadline: must not be negative'),
    ({'max_failures': True}, 'max_failures: must be an integer'),
    ({'name': 'GPU fleet'}, 'name: lowercase letters'),
    ({'budget': {'count': 0}}, 'budget.count: must be an integer of at least 1'),
    ({'budget': {'percent': 150}}, 'budget.percent: must be more than 0 and at most 100'),
    ({'budget': {'percent': 0}}, 'budget.percent: must be more than 0 and at most 100'),
    ({'budget': {'count': 2, 'percent': 5}}, 'budget: exactly one of count or percent'),
    ({'budget': {'count': 2}, 'coordination': 'ghost'}, "coordination: 'ghost' is not a cluster of the fleet"),
    ({'budget': {'count': 2}, 'coordination': {}}, 'coordination: a cluster id of the fleet, or a mapping'),
    ({'coordination': 'canary'}, 'coordination: set only with budget'),
])
def test_bad_fields(change, expected):
    errors = _errors(**change)
    assert any(e.startswith(expected) for e in errors), errors


def test_the_budget_and_where_it_is_kept():
    fleet = fleet_model.parse_fleet(dict(FLEET, budget={'percent': 10})).as_dict()
    assert fleet['budget'] == {'percent': 10} and fleet['coordination'] == 'canary' and fleet['budget_namespace'] == 'skyhook'
    hub = fleet_model.parse_fleet(dict(FLEET, budget={'count': 4}, coordination={'context': 'hub'}, budget_namespace='ops'))
    assert hub.coordination == {'kubeconfig': None, 'context': 'hub'} and hub.budget_namespace == 'ops'


def test_a_fleet_that_is_not_a_mapping():
    with pytest.raises(fleet_model.FleetError, match='must be a mapping with clusters and stages, got list'):
        fleet_model.parse_fleet([])


def _plan(name, erroring=(), not_done=(), **extra):
    return dict({'item': name, 'decision': {'erroring': list(erroring), 'not_done': list(not_done)}}, **extra)


def test_a_run_leaves_the_nodes_its_final_plan_finds_not_complete():
    assert fleet_progress.nodes_left([_plan('gpu'), _plan('net'), {'skipped': True}]) == {}
    assert fleet_progress.nodes_left([_plan('gpu', erroring=['n2']), _plan('net', not_done=['n3', 'n1']),
                                      _plan('drv', failed=True, msg='unreachable')]) == {
        'gpu': {'erroring': ['n2'], 'not_done': []}, 'net': {'erroring': [], 'not_done': ['n1', 'n3']},
        'drv': {'failed': 'unreachable'}}


def test_a_stage_is_done_when_every_cluster_left_every_node_complete_and_none_erroring():
    assert fleet_progress.gate_problems({'a': {}, 'b': {}}) == []
    left = {'a': {'gpu': {'erroring': ['n2'], 'not_done': []}}, 'b': {'gpu': {'erroring': [], 'not_done': ['n1', 'n3']}},
            'c': {'gpu': {'failed': 'unreachable'}}, 'd': None}
    assert fleet_progress.gate_problems(left, ended={'d': 'apply ended with rc 2 (log d.log)'}) == [
        'a: gpu: 1 erroring (n2)', 'b: gpu: 2 not complete (n1, n3)', 'c: gpu: not planned (unreachable)',
        'd: its run reported no end state (apply ended with rc 2 (log d.log))']


def test_the_fleet_report_and_its_nodes():
    fleet = fleet_model.parse_fleet(FLEET).as_dict()
    results = {'canary': {'outcome': 'ok', 'rc': 0, 'msg': 'ok', 'log': '/l', 'elapsed': 3.0,
                          'nodes': {'n1': {'status': 'ok', 'compartment': '__default__', 'batch': 1}},
                          'report': {'rollouts': [{'play': 'apply: gpu', 'nodes': {}}]}},
               'us': {'outcome': 'failed', 'rc': 2, 'nodes': {'n9': {'status': 'failed', 'compartment': 'x', 'batch': 2}},
                      'report': None}}
    report = fleet_progress.fleet_report(results, fleet)
    assert report['fleet'] == 'gpu'
    assert report['clusters']['eu'] == {'stage': 'rest', 'outcome': 'not reached'}
    assert report['clusters']['us']['outcome'] == 'failed' and report['clusters']['canary']['stage'] == 'canary'
    assert report['rollouts'] == [{'play': 'canary: apply: gpu', 'nodes': {}, 'cluster': 'canary'}]
    outcomes = fleet_progress.fleet_report(results, fleet, with_rollouts=False)
    assert outcomes['clusters'] == report['clusters'] and outcomes['rollouts'] == []
    assert [n['name'] for n in fleet_progress.node_outcomes(results)] == ['canary/n1', 'us/n9']


def test_each_clusters_selected_nodes_are_what_its_crs_select():
    plans = [{'item': ['a', 'cr1'], 'nodes': {'n2': {}, 'n1': {}}}, {'item': ['a', 'cr2'], 'nodes': {'n3': {}}},
             {'item': ['b', 'cr1'], 'nodes': {}}, {'item': ['c', 'cr1'], 'failed': True}]
    assert fleet_progress.selected_nodes(plans) == {'a': ['n1', 'n2', 'n3'], 'b': []}


INVENTORY = {'groups': {'canary': ['canary'], 'gpu': ['us-east', 'eu-west'], 'empty': [], 'bad': ['US_East']},
             'hosts': {'canary': {'context': 'canary'}, 'us-east': {'kubeconfig': '/k/us.yaml'}, 'eu-west': {}}}


def test_a_stage_group_reads_its_clusters_from_the_inventory():
    fleet = fleet_model.parse_fleet({'stages': [{'name': 'canary', 'group': 'canary', 'soak': '1m'},
                                                {'name': 'rest', 'group': 'gpu', 'max_concurrency': 2}]},
                                    inventory=INVENTORY)
    assert [s.clusters for s in fleet.stages] == [['canary'], ['us-east', 'eu-west']]
    assert fleet.clusters == {'canary': {'kubeconfig': None, 'context': 'canary'},
                              'us-east': {'kubeconfig': '/k/us.yaml', 'context': None},
                              'eu-west': {'kubeconfig': None, 'context': None}}
    # the fleet as a mapping again reads back to the same fleet without the inventory (what the stage runs get)
    again = fleet_model.parse_fleet(fleet.as_input())
    assert again.as_dict() == fleet.as_dict()


def test_a_cluster_named_in_the_file_keeps_its_connection_beside_a_group():
    fleet = fleet_model.parse_fleet({'clusters': {'us-east': {'context': 'mine'}, 'lab': {}},
                                     'stages': [{'name': 'a', 'clusters': ['lab'], 'group': 'canary'},
                                                {'name': 'b', 'group': 'gpu'}]}, inventory=INVENTORY)
    assert fleet.stages[0].clusters == ['lab', 'canary']
    assert fleet.clusters['us-east'] == {'kubeconfig': None, 'context': 'mine'}


def test_bad_inventory_groups_name_their_field():
    with pytest.raises(fleet_model.FleetError) as raised:
        fleet_model.parse_fleet({'stages': [{'name': 'a', 'group': 'nope'}, {'name': 'b', 'group': 'empty'},
                                            {'name': 'c', 'group': 'bad'}, {'name': 'd', 'group': 'canary'},
                                            {'name': 'e', 'group': 'canary'}]}, inventory=INVENTORY)
    errors = raised.value.errors
    assert "stages[0].group: 'nope' is not a group of the inventory" in errors
    assert 'stages[1].group: the inventory group empty has no hosts' in errors
    assert any(e.startswith("stages[2].group: host 'US_East' of bad is not a cluster id") for e in errors)
    assert 'stages[4].clusters[0]: cluster canary is already in stages[3]; a cluster belongs to one stage' in errors
    with pytest.raises(fleet_model.FleetError) as raised:
        fleet_model.parse_fleet({'stages': [{'name': 'a', 'group': 'canary'}]})
    assert raised.value.errors[0].startswith('stages[0].group: an inventory group, read only by')


def test_a_fleet_with_a_budget_reads_back_from_its_mapping():
    fleet = fleet_model.parse_fleet(dict(FLEET, budget={'count': 4}, coordination={'context': 'hub'}, budget_namespace='ops'))
    assert fleet_model.parse_fleet(fleet.as_input()).as_dict() == fleet.as_dict()


def test_the_fleets_plan_says_each_stage_and_each_clusters_batches():
    fleet = fleet_model.parse_fleet(FLEET).as_dict()
    canary_line = 'gpu (priority 200, sequencing node): 3 nodes, 3 to update, 3 to drain; budget 1 '
    plans = [{'item': ['canary', 'gpu'], 'decision': {'line': canary_line},
              'compartments': [{'name': '__default__', 'batch_sizes': [1, 1, 1]}]},
             {'item': ['us', 'gpu'], 'decision': {'line': 'gpu: 2 nodes'},
              'compartments': [{'name': 'a', 'batch_sizes': [2]}, {'name': 'b', 'batch_sizes': []}]},
             {'item': ['eu', 'gpu'], 'failed': True}]
    assert fleet_progress.plan_lines(fleet, plans) == [
        'stage 1/2 canary: canary (1 at once, soak 1800s)',
        '  canary: gpu (priority 200, sequencing node): 3 nodes, 3 to update, 3 to drain; budget 1; batches __default__ [1, 1, 1]',
        'stage 2/2 rest: us, eu (1 at once)',
        '  us: gpu: 2 nodes; batches a [2]']


def test_what_a_cluster_gets_when_its_operator_reconciles_a_cr():
    # skip unless the fleet or the cluster says handover; a cluster's own choice wins
    assert fleet_model.parse_fleet(FLEET).operators == {'canary': 'skip', 'us': 'skip', 'eu': 'skip'}
    clusters = dict(FLEET['clusters'], us={'kubeconfig': '/k/us.yaml', 'operator': 'skip'})
    fleet = fleet_model.parse_fleet(dict(FLEET, clusters=clusters, operator='handover'))
    assert fleet.operators == {'canary': 'handover', 'us': 'skip', 'eu': 'handover'}
    # the connections stay connections; the stage runs read the choice back from the fleet's input
    assert fleet.clusters['us'] == {'kubeconfig': '/k/us.yaml', 'context': None}
    assert fleet_model.parse_fleet(fleet.as_input()).operators == fleet.operators
    # an inventory host's nodewright_cluster_operator
    inventory = {'groups': {'gpu': ['x']}, 'hosts': {'x': {'context': 'x', 'operator': 'handover'}}}
    grouped = fleet_model.parse_fleet({'stages': [{'name': 'all', 'group': 'gpu'}]}, inventory=inventory)
    assert grouped.operators == {'x': 'handover'} and grouped.clusters == {'x': {'kubeconfig': None, 'context': 'x'}}


def test_a_bad_operator_choice_names_its_field():
    errors = _errors(operator='take-over', clusters=dict(FLEET['clusters'], us={'operator': True}))
    assert any(e.startswith("operator: skip (") and e.endswith("got 'take-over'") for e in errors), errors
    assert any(e.startswith('clusters.us.operator: skip (') and e.endswith('got True') for e in errors), errors
    inventory = {'groups': {'gpu': ['x']}, 'hosts': {'x': {'operator': 'later'}}}
    with pytest.raises(fleet_model.FleetError) as raised:
        fleet_model.parse_fleet({'stages': [{'name': 'all', 'group': 'gpu'}]}, inventory=inventory)
    assert any(e.startswith('stages[0].group: host x: nodewright_cluster_operator: skip (') for e in raised.value.errors)


def test_connection_variables_that_would_reach_every_cluster_at_one_server_are_refused():
    fleet = fleet_model.parse_fleet(FLEET)
    bearer = {'K8S_AUTH_HOST': 'https://one:6443', 'K8S_AUTH_API_KEY': 'token', 'K8S_AUTH_VERIFY_SSL': 'true'}
    problems = fleet_model.environment_problems(fleet, bearer)
    assert len(problems) == 1 and problems[0].startswith(
        "K8S_AUTH_HOST, K8S_AUTH_API_KEY set in the environment: it wins over every cluster's kubeconfig"), problems
    assert "each of the fleet's 3 clusters would be reached at one API server" in problems[0]
    # defaults that each cluster's own replaces, settings for every cluster, empty values: not refused
    assert fleet_model.environment_problems(fleet, {'K8S_AUTH_KUBECONFIG': '/k', 'K8S_AUTH_CONTEXT': 'x',
                                                    'K8S_AUTH_VERIFY_SSL': 'false', 'K8S_AUTH_HOST': ''}) == []
    # one cluster: the environment may well be its connection; with a coordination cluster outside, two are reached
    single = {'clusters': {'a': {}}, 'stages': [{'clusters': ['a']}]}
    assert fleet_model.environment_problems(fleet_model.parse_fleet(single), bearer) == []
    coordinated = dict(single, budget={'count': 2}, coordination={'context': 'hub'})
    assert len(fleet_model.environment_problems(fleet_model.parse_fleet(coordinated), bearer)) == 1
