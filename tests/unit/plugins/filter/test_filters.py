# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.nodewright.bridge.plugins.filter.plan_report import plan_report
from ansible_collections.nodewright.bridge.plugins.filter.uninstall_apply import uninstall_apply


def test_uninstall_apply_marks_only_the_named_packages_and_copies():
    cr = {'kind': 'Skyhook', 'metadata': {'name': 'x'},
          'spec': {'packages': {'a': {'version': '1', 'uninstall': {'enabled': True}}, 'b': {'version': '2'}}}}
    policy = {'kind': 'DeploymentPolicy', 'metadata': {'name': 'p'}, 'spec': {}}
    out = uninstall_apply([cr, policy], ['a'])
    assert out[0]['spec']['packages']['a']['uninstall'] == {'enabled': True, 'apply': True}
    assert 'uninstall' not in out[0]['spec']['packages']['b']
    assert out[1] == policy
    assert cr['spec']['packages']['a']['uninstall'] == {'enabled': True}  # the input is untouched


def test_plan_report_merges_drain_previews():
    plans = {'cr1': {'cr': {'priority': 100, 'sequencing': 'node', 'paused': False, 'disabled': False},
                     'policy': None, 'interruption_budget': {'percent': 50}, 'summary': {'matched': 2},
                     'ignored': [], 'compartments': [{'name': '__default__', 'batch_sizes': [1, 1]}],
                     'nodes': {'n1': {'compartment': '__default__', 'complete': False, 'status': 'unknown',
                                      'pending': [{'package': 'a', 'stage': 'apply'}, {'package': 'a', 'stage': 'interrupt'}],
                                      'interrupt': {'type': 'reboot'}, 'needs_drain': True},
                               'n2': {'compartment': '__default__', 'complete': True, 'status': 'complete',
                                      'pending': [], 'interrupt': None, 'needs_drain': False}}}}
    drains = [{'item': ['cr1', 'n1'], 'pods': [
        {'namespace': 'ml', 'name': 'web-1', 'action': 'would-evict'},
        {'namespace': 'kube-system', 'name': 'dns', 'action': 'skipped', 'reason': 'kube-system'}],
        'preflight': {'ok': False, 'blocked': [{'namespace': 'ml', 'name': 'web-1', 'pdbs': ['ml/web (...)']}]}},
        {'item': ['cr1', 'n2'], 'skipped': True}]
    report = plan_report(plans, ['cr1'], drains)
    node = report['crs']['cr1']['nodes']['n1']
    assert node['pending'] == ['a apply', 'a interrupt']
    assert report['lines'][:2] == ['== cr1 (priority 100, sequencing node)', '   2 nodes: 0 complete, 0 to update (0 drained); '
                                   'interruptionBudget {"percent": 50}']
    assert node['evict'] == ['ml/web-1'] and node['skip'] == ['kube-system/dns (kube-system)']
    assert node['pdb_blockers'][0]['pdbs'] == ['ml/web (...)']
    assert 'evict' not in report['crs']['cr1']['nodes']['n2']
    assert report['order'] == ['cr1'] and report['crs']['cr1']['interruption_budget'] == {'percent': 50}


def test_cr_names_and_uninstallable_read_only_the_crs():
    from ansible_collections.nodewright.bridge.plugins.filter.cr_names import cr_names
    from ansible_collections.nodewright.bridge.plugins.filter.uninstallable import uninstallable
    docs = [{'kind': 'Skyhook', 'metadata': {'name': 'x'},
             'spec': {'packages': {'b': {'uninstall': {'enabled': True}}, 'a': {'uninstall': {'enabled': False}}}}},
            {'kind': 'DeploymentPolicy', 'metadata': {'name': 'p'}, 'spec': {'packages': {'c': {'uninstall': {'enabled': True}}}}},
            {'kind': 'NodeWright', 'metadata': {'name': 'y'}, 'spec': {'packages': {'d': {'uninstall': {'enabled': True}}, 'e': {}}}}]
    assert cr_names(docs) == ['x', 'y']
    assert uninstallable(docs) == ['b', 'd']


def test_plan_report_gives_the_budget_as_text():
    plans = {'cr1': {'cr': {}, 'policy': 'linear-4', 'nodes': {}}, 'cr2': {'cr': {}, 'interruption_budget': {'percent': 50}}}
    report = plan_report(plans, ['cr1', 'cr2'])
    assert report['crs']['cr1']['budget'] == 'policy linear-4'
    assert report['crs']['cr2']['budget'] == 'interruptionBudget {"percent": 50}'


def test_the_fleet_filter_reads_a_stage_group_from_the_inventory_hosts_variables():
    from ansible.errors import AnsibleFilterError  # pylint: disable=import-outside-toplevel
    from ansible_collections.nodewright.bridge.plugins.filter.fleet import fleet  # pylint: disable=import-outside-toplevel
    groups = {'all': ['canary', 'us-east', 'lab'], 'canary': ['canary'], 'gpu': ['us-east'], 'ungrouped': ['lab']}
    # nodewright_kubeconfig is the default of the clusters that name none (an extra variable would override it per host)
    hostvars = {'canary': {'nodewright_cluster_context': 'kind-canary', 'ansible_host': 'x'},
                'us-east': {'nodewright_cluster_kubeconfig': '/k/us.yaml', 'nodewright_kubeconfig': '/the/default.yaml'},
                'lab': {'nodewright_cluster_context': 'never-read'}}
    checked = fleet({'stages': [{'name': 'canary', 'group': 'canary'}, {'name': 'rest', 'group': 'gpu'}]},
                    groups=groups, hostvars=hostvars)
    assert checked['clusters'] == {'canary': {'kubeconfig': None, 'context': 'kind-canary'},
                                   'us-east': {'kubeconfig': '/k/us.yaml', 'context': None}}
    assert checked['input']['stages'][1]['clusters'] == ['us-east']
    assert fleet(checked['input'])['clusters'] == checked['clusters']
    try:
        fleet({'stages': [{'name': 'a', 'group': 'gpus'}]}, groups=groups, hostvars=hostvars)
    except AnsibleFilterError as exc:
        assert "stages[0].group: 'gpus' is not a group of the inventory" in str(exc)
    else:
        raise AssertionError('an unknown group must fail')
