#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: rollout_report
short_description: Write the rollout timeline of the budgeted plays run so far, as one HTML page
version_added: 0.1.0
description:
  - Writes the rollout timeline, one self-contained HTML page (no external assets, works offline) showing, per budgeted
    play, compartment and batch, a row per node with its steps (cordon, wait for protected pods, drain with its
    PodDisruptionBudget waits, each package stage, interrupt or reboot, health gate, uncordon, and any other task
    of the play) as bars on a time axis, failures and the stop reason of a stopped compartment marked, and each
    batch's size against the policy.
  - The page is drawn from the report of the C(nodewright.bridge.budgeted) strategy (the JSON document of the
    C(nodewright.bridge.rollout) callback, see the collection's C(docs/strategy.md)), which the strategy records in
    the controller's process; this module reads it there, so the callback need not be enabled. Run it in a play
    after the budgeted ones.
  - Or draws O(report), a report given as data (for example a saved JSON report, read with C(from_json)).
  - Does not talk to the cluster.
author:
  - nodewright.bridge contributors (@nodewright)
options:
  path:
    description:
      - Where to write the HTML page (on the controller). Its directory is created if missing; the page is written
        to a temporary file in that directory, then renamed.
    type: path
    required: true
  report:
    description:
      - A rollout report to draw instead of the one recorded in this run.
    type: dict
  title:
    description:
      - The page's title.
    type: str
    default: nodewright rollout timeline
attributes:
  action:
    support: full
    description: The action plugin runs on the controller, where the strategy records the rollouts.
  check_mode:
    support: full
    description: Nothing is written; C(changed) says whether the page would change.
  diff_mode:
    support: none
    description: No diff of the HTML page is shown.
notes:
  - Only on the controller (its action plugin); the module itself cannot run on a host.
seealso:
  - plugin: nodewright.bridge.rollout
    plugin_type: callback
    description: Writes the same page at the end of every budgeted play when E(NODEWRIGHT_REPORT_HTML) is set.
'''

EXAMPLES = r'''
- name: Roll out
  hosts: gpu_nodes
  strategy: nodewright.bridge.budgeted
  vars:
    nodewright_interruption_budget: {percent: 25}
  tasks:
    - name: Bring the node up to date
      ansible.builtin.import_role:
        name: nodewright.bridge.node

- name: Report
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Write the rollout timeline
      nodewright.bridge.rollout_report:
        path: "{{ playbook_dir }}/rollout.html"

- name: Draw a saved JSON report (NODEWRIGHT_REPORT) again
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Write its timeline
      nodewright.bridge.rollout_report:
        path: /tmp/rollout.html
        report: "{{ lookup('ansible.builtin.file', 'report.json') | from_json }}"
'''

RETURN = r'''
path:
  description: The page's absolute path.
  returned: always
  type: str
  sample: /home/me/rollout.html
rollouts:
  description: How many rollouts (budgeted plays or phases) the page shows.
  returned: always
  type: int
  sample: 1
nodes:
  description: How many node rows the page shows, over every rollout.
  returned: always
  type: int
  sample: 24
steps:
  description: How many step bars the page shows.
  returned: always
  type: int
  sample: 192
'''

from ansible.module_utils.basic import AnsibleModule


def argument_spec():
    return dict(
        path=dict(type='path', required=True),
        report=dict(type='dict'),
        title=dict(type='str', default='nodewright rollout timeline'),
    )


def main():
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True)
    module.fail_json(msg='nodewright.bridge.rollout_report runs on the controller, through its action plugin; '
                         'it cannot run as a module on a host')


if __name__ == '__main__':
    main()
