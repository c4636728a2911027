#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: rollout_metrics
short_description: Publish a NodeWright CR's operator metrics to a Prometheus Pushgateway, as the operator exports them
version_added: 0.2.0
author: nodewright.bridge contributors (@nodewright)
description:
  - Dashboards and alerts built on the NodeWright operator's Prometheus metrics show nothing for a rollout the
    collection runs, as no operator reconciles the CR. This module computes the operator's series for one CR from the
    cluster (the CR, its DeploymentPolicy and the nodes it selects, through the CR's status as
    M(nodewright.bridge.cr_status) derives it) and publishes them where a batch job publishes metrics, so the same
    queries return the same shape of data.
  - The series are the operator's of the cluster's API generation. V(skyhook) (v0.15) C(skyhook_status),
    C(skyhook_node_status_count), C(skyhook_node_target_count), C(skyhook_package_state_count),
    C(skyhook_package_stage_count), C(skyhook_package_restarts_count) and the eight C(skyhook_rollout_*) gauges per
    compartment, with the CR's name as C(skyhook_name). V(nodewright) (v0.18-v0.20) the same as C(nodewright_*) with
    C(nodewright_name) (without C(package_restarts_count), which the operator retired), and their C(skyhook_*) twins
    unless O(legacy_metrics=false) (the operator's C(PUBLISH_LEGACY_METRICS=false)). docs/metrics.md lists them.
  - The Pushgateway keeps one group per CR (O(job) and the CR-name label), and each push replaces the whole group
    (an HTTP C(PUT)), so a failed push leaves the last complete set, never half of one. Prometheus scrapes the
    Pushgateway with C(honor_labels) C(true).
  - A Pushgateway (or textfile directory) that cannot be written is a warning by default (O(on_error)); the module
    returns ok with C(error) set, and the rollout goes on.
extends_documentation_fragment:
  - nodewright.bridge.k8s_auth
options:
  cr_name:
    description: The name of the Skyhook / NodeWright CR in the cluster.
    type: str
    required: true
  state:
    description:
      - V(present) computes the CR's series and publishes them, replacing the CR's group.
      - V(absent) deletes the CR's group from the Pushgateway (and its textfile), as the operator stops exporting a
        deleted CR's series; use it when a CR is deleted or handed to the operator, whose own series would otherwise
        be counted beside the last ones pushed.
    type: str
    choices: [present, absent]
    default: present
  pushgateway_url:
    description:
      - The base URL of the Pushgateway (C(http://pushgateway.monitoring:9091)). The CR's group is
        C(<url>/metrics/job/<job>/<cr name label>/<cr>) plus O(grouping).
      - Without it and without O(textfile_dir) the module only computes the series (returned as RV(metrics)).
    type: str
  job:
    description: The C(job) label of the group (and the prefix of the textfile's name).
    type: str
    default: nodewright-bridge
  grouping:
    description:
      - More grouping labels of the group, added by the Pushgateway to every series of it (a cluster's name, say).
        The CR-name label (C(skyhook_name) or C(nodewright_name)) is always one.
    type: dict
    default: {}
  pushgateway_bearer_token:
    description: A bearer token the Pushgateway (or the proxy in front of it) wants.
    type: str
  pushgateway_ca_path:
    description: A CA bundle (PEM) to verify an https Pushgateway's certificate.
    type: path
  pushgateway_validate_certs:
    description:
      - Verify an https Pushgateway's certificate. (O(validate_certs) is the API server's.)
    type: bool
    default: true
  pushgateway_timeout:
    description: Seconds each request to the Pushgateway may take.
    type: int
    default: 10
  textfile_dir:
    description:
      - A directory of node-exporter's textfile collector; the series also go to C(<dir>/<job>_<cr>.prom), written to
        a temporary file and renamed over it. For a controller that runs node-exporter; the Pushgateway is the sink
        Prometheus documents for batch jobs.
    type: path
  legacy_metrics:
    description:
      - On a V(nodewright) cluster, publish the C(skyhook_*) twins too, as the v0.20 operator does by default. False
        drops them, as the operator's C(PUBLISH_LEGACY_METRICS=false). No effect on a V(skyhook) cluster.
    type: bool
    default: true
  on_error:
    description:
      - What a sink that cannot be written does. V(warn) (the task is ok, a warning names the URL or file and the error,
        RV(error) says it), V(ignore) (the same without the warning, for a caller that warned once already) or
        V(fail).
    type: str
    choices: [warn, fail, ignore]
    default: warn
  waiting_for:
    description:
      - The earlier CRs with C(sequencing) V(all) that hold this one (as M(nodewright.bridge.cr_status)'s
        O(nodewright.bridge.cr_status#module:waiting_for)); the CR's status series says V(waiting).
    type: list
    elements: str
    default: []
attributes:
  check_mode:
    support: full
    description: Computes the series (RV(metrics)) and pushes or writes nothing.
  diff_mode:
    support: none
    description: Nothing to compare; RV(metrics) is the whole text.
notes:
  - Needs C(get) on the CR and its DeploymentPolicy and C(list) on nodes (the read-only identity of examples/rbac has
    them).
  - The Pushgateway keeps a group until it is deleted (O(state=absent)) or the Pushgateway restarts without
    persistence; the series show the CR as the last push saw it. C(push_time_seconds) of the group says when.
seealso:
  - module: nodewright.bridge.cr_status
  - name: Pushgateway
    description: When to use the Pushgateway, its API and grouping keys.
    link: https://github.com/prometheus/pushgateway
'''

EXAMPLES = r'''
- name: Publish the CR's operator metrics to the Pushgateway (a failure is a warning)
  nodewright.bridge.rollout_metrics:
    cr_name: gpu-node-tuning
    pushgateway_url: http://pushgateway.monitoring:9091
  register: metrics

- name: The same through an authenticating proxy, without the legacy skyhook_* twins
  nodewright.bridge.rollout_metrics:
    cr_name: gpu-node-tuning
    pushgateway_url: https://pushgateway.example.com
    pushgateway_bearer_token: "{{ lookup('ansible.builtin.env', 'PUSHGATEWAY_TOKEN') }}"
    pushgateway_ca_path: /etc/pki/monitoring-ca.pem
    legacy_metrics: false

- name: Remove the CR's series once the CR is deleted
  nodewright.bridge.rollout_metrics:
    cr_name: gpu-node-tuning
    pushgateway_url: http://pushgateway.monitoring:9091
    state: absent
'''

RETURN = r'''
cr_name:
  description: The CR.
  returned: always
  type: str
metrics:
  description: The series in the Prometheus text format (0.0.4), as pushed.
  returned: with O(state=present)
  type: str
  sample: |
    # HELP skyhook_node_status_count Number of nodes in the cluster by status for the Skyhook Custom Resource
    # TYPE skyhook_node_status_count gauge
    skyhook_node_status_count{skyhook_name="gpu-node-tuning",status="complete"} 3
series:
  description: The number of samples in RV(metrics).
  returned: with O(state=present)
  type: int
pushed:
  description: Whether the Pushgateway took the push (or the delete).
  returned: always
  type: bool
group_url:
  description: The CR's group on the Pushgateway.
  returned: when O(pushgateway_url) was pushed to
  type: str
  sample: http://pushgateway.monitoring:9091/metrics/job/nodewright-bridge/skyhook_name/gpu-node-tuning
written:
  description: Whether the textfile was written (removed, with O(state=absent)).
  returned: always
  type: bool
textfile:
  description: The textfile's path.
  returned: when O(textfile_dir) was written
  type: str
error:
  description: What failed, with O(on_error=warn) or O(on_error=ignore); the URL or file and the reason.
  returned: when a sink failed
  type: str
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules.rollout_metrics import (
    execute, module_args)


def main():
    execute(AnsibleModule(**module_args()))


if __name__ == '__main__':
    main()
