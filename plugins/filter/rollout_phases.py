# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
name: rollout_phases
short_description: Decide what each of several CRs rolls out to in one run, in order
version_added: 0.1.0
author: nodewright.bridge contributors (@nodewright)
description:
  - Internal to the collection's playbooks (nodewright.bridge.apply), not a stable interface; it may change in any
    release (the collection's C(docs/versioning.md)).
  - Takes the results of M(nodewright.bridge.rollout_plan), one per CR, puts them in run order (priority, then
    name), and applies the operator's rules across CRs - paused and disabled CRs, C(sequencing) C(node) and C(all),
    runtimeRequired - the way the playbook C(nodewright.bridge.apply) does (module_utils/planning/planner.py holds the rules).
  - Returns the phases for the C(nodewright.bridge.budgeted) strategy's C(nodewright_phases) (one per CR with nodes
    to roll out), and per CR the nodes it runs, the complete ones, the ones blocked by an earlier CR and why a CR is
    skipped.
options:
  _input:
    description: rollout_plan results, in any order.
    type: list
    elements: dict
    required: true
  with_documents:
    description: Give each CR's documents (the CR and its policy) in C(crs[name].documents), for CRs read from a file.
    type: bool
    default: false
  phase_var:
    description:
      - The name of a host variable that each phase sets, through its C(host_vars), on every host it rolls out to.
        Its value is C({name, docs, identity, rolling}), the CR's name, its documents (C(with_documents)) or an empty
        string, its C(cr_identity) and the nodes it was rolling when planned. The apply playbook passes C(nw_apply_cr),
        which the role C(nodewright.bridge.node) reads.
      - Set by the strategy once per host and phase, the value is plain data; read through C(hostvars) it would be
        templated again for every host and every task argument that names it.
    type: str
    version_added: 0.2.0
'''

EXAMPLES = r'''
- name: Phases of the CRs planned in nw_planned (a looped rollout_plan), lowest priority first
  ansible.builtin.set_fact:
    nw_run: "{{ nw_planned.results | nodewright.bridge.rollout_phases(with_documents=true) }}"
'''

RETURN = r'''
_value:
  description: C(order) (the CR names in run order), C(phases) (for C(nodewright_phases)), C(crs) (name -> runs,
    complete (complete nodes whose record must be written), release, blocked, skipped, waiting (why the CR or some of
    its nodes wait, or null), documents) and C(runtime_required) (node -> the runtimeRequired CRs that select it).
  type: dict
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.nodewright.bridge.plugins.module_utils.planning.planner import rollout_phases


def _rollout_phases(plans, with_documents=False, phase_var=None):
    if not isinstance(plans, list) or not all(isinstance(p, dict) and 'cr' in p for p in plans):
        raise AnsibleFilterError('rollout_phases: expects a list of nodewright.bridge.rollout_plan results')
    run = rollout_phases(plans, with_documents=bool(with_documents))
    if phase_var:
        for phase in run['phases']:
            decision = run['crs'][phase['name']]
            phase['host_vars'] = {phase_var: {'name': phase['name'], 'docs': decision.get('documents') or '',
                                              'identity': decision.get('cr_identity'),
                                              'rolling': decision.get('rolling') or []}}
    return run


class FilterModule(object):
    def filters(self):
        return {'rollout_phases': _rollout_phases}
