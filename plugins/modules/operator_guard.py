#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: operator_guard
short_description: Refuse to act for a CR that a running NodeWright operator is reconciling
version_added: 0.1.0
author: nodewright.bridge contributors (@nodewright)
description:
  - Decides whether a running NodeWright (Skyhook) operator is reconciling the CR O(cr_name), and
    fails if it is, so that a play does not cordon, drain or run package pods on nodes that the
    operator drives at the same time. Put it first in a play that acts for a CR.
  - "An operator is running when its leader-election Lease (O(lease_namespace)/O(lease_name)) is
    held and was renewed within its C(leaseDurationSeconds) (plus a 5 second grace), or when one of
    O(operator_managers) wrote the CR (its status, as the managedFields record) within the last
    O(window) seconds. A write made while a now stale lease was still held is the stopped leader's
    and does not count; a write made after the lease expired comes from an operator that does not
    hold this lease (leader election off, or another namespace) and does."
  - "C(status.observedGeneration == metadata.generation), status writes by other managers and the
    CR's C(status.status) are reported in RV(evidence) but never decide: they stay after the operator
    is gone."
  - "A CR annotated C(skyhook.nvidia.com/pause: \"true\") or C(skyhook.nvidia.com/disable: \"true\")
    is let through with a warning: the operator starts no package pod, cordon, drain or interrupt
    for it, but keeps setting C(skyhook.nvidia.com/status_<cr>) on its nodes, and takes the CR over
    again when the annotation goes. A CR being deleted is not let through: the operator's finalizer
    uncordons its nodes and strips the CR's annotations from them."
  - Times are judged by the API server's clock (the C(Date) of the lease response), so the clock of
    the host running the module does not matter; the local clock is used when the server sends no date.
  - Reads the CR and the lease, nothing else; changes nothing. See C(docs/operator-guard.md).
extends_documentation_fragment:
  - nodewright.bridge.k8s_auth
options:
  cr_name:
    description:
      - The Skyhook (C(skyhook.nvidia.com)) or NodeWright (C(nodewright.nvidia.com)) CR the play acts for.
      - O(cr) is a deprecated alias (removed in 2.0.0); in the other modules O(cr) is the CR document.
    type: str
    required: true
    aliases: [cr]
  lease_namespace:
    description:
      - Namespace of the operator's leader-election Lease, which is the namespace the operator runs
        in (the Helm release namespace; C(skyhook-operator-system) with the kustomize manifests).
      - Default, the operator's for the API generation (O(nodewright_api)), C(skyhook) or C(nodewright).
    type: str
  lease_name:
    description:
      - Name of the operator's leader-election Lease (the operator's C(LeaderElectionID)).
      - Default, every lease of the generation's operator, C(3c22c1ae.nvidia.com) and, for V(nodewright), also
        C(nodewright-webhook-bootstrap.nvidia.com); either one held means a running operator.
    type: str
  window:
    description:
      - Seconds within which a write of the CR by an operator manager shows a running operator.
      - The operator writes the CR only when something changes, so an idle operator without a
        readable lease is not seen once this has passed.
    type: int
    default: 300
  operator_managers:
    description:
      - Field managers (C(metadata.managedFields[].manager)) that are the operator. The operator sets
        none itself, so the API server records its binary's name, C(manager).
    type: list
    elements: str
    default: [manager]
  force:
    description:
      - Succeed, with a warning, even when an operator reconciles the CR.
    type: bool
    default: false
attributes:
  check_mode:
    support: full
    description: The module only reads; it runs the same in check mode.
  diff_mode:
    support: none
    description: Nothing is changed, so there is no diff.
notes:
  - "RBAC: C(get) on the CR (C(skyhooks.skyhook.nvidia.com) or C(nodewrights.nodewright.nvidia.com))
    and, to see the lease, C(get) on C(leases.coordination.k8s.io) in O(lease_namespace). A lease that
    does not exist or may not be read is not an error: the decision then rests on the CR's writes,
    and a warning says so when the read was forbidden."
  - An operator running without leader election (the binary's default; the chart turns it on) and
    idle for longer than O(window) cannot be seen.
'''

EXAMPLES = r'''
- name: Make sure no NodeWright operator drives gpu-tuning while this play does
  nodewright.bridge.operator_guard:
    cr_name: gpu-tuning

- name: The operator was installed with the kustomize manifests
  nodewright.bridge.operator_guard:
    cr_name: gpu-tuning
    lease_namespace: skyhook-operator-system

- name: Look only, and decide later
  nodewright.bridge.operator_guard:
    cr_name: gpu-tuning
    force: true
  register: guard

- name: Show why
  ansible.builtin.debug:
    var: guard.evidence
  when: guard.active
'''

RETURN = r'''
active:
  description:
    - Whether a running operator reconciles the CR (the module fails on it unless O(force)).
  returned: always
  type: bool
  sample: true
operator_running:
  description:
    - Whether an operator is running at all; true with RV(active) false for a paused or disabled CR.
  returned: always
  type: bool
evidence:
  description: What the decision rests on, one fact a line.
  returned: always
  type: list
  elements: str
  sample:
    - "lease skyhook/3c22c1ae.nvidia.com is held by skyhook-operator-controller-manager-5d8c7-x2x9q_0c1d..., renewed 2s ago
      (lease duration 15s): an operator is running"
    - "status written by field manager 'manager' 20s ago, within the 300s window: the operator is reconciling this CR"
lease:
  description: The operator's lease, or null when it could not be read.
  returned: always
  type: dict
  contains:
    namespace:
      description: Its namespace.
      type: str
    name:
      description: Its name.
      type: str
    holder:
      description: C(spec.holderIdentity) (C(<pod>_<uuid>) for controller-runtime), null when released.
      type: str
    holder_pod:
      description: The pod part of RV(lease.holder).
      type: str
    renew_time:
      description: C(spec.renewTime) (C(spec.acquireTime) when there is none).
      type: str
    acquire_time:
      description: C(spec.acquireTime).
      type: str
    lease_duration_seconds:
      description: C(spec.leaseDurationSeconds) (15 when absent).
      type: int
    lease_transitions:
      description: C(spec.leaseTransitions).
      type: int
    age_seconds:
      description: Seconds since RV(lease.renew_time), by the API server's clock.
      type: float
    fresh:
      description: Whether the lease shows a running operator.
      type: bool
last_operator_write:
  description:
    - The newest write of the CR by an operator manager (from managedFields; from the newest condition
      when the CR has no managedFields), or null.
  returned: always
  type: dict
  contains:
    manager:
      description: The field manager.
      type: str
    operation:
      description: C(Update) or C(Apply).
      type: str
    subresource:
      description: C(status), or empty for the main resource.
      type: str
    time:
      description: When, as recorded.
      type: str
    age_seconds:
      description: Seconds since then.
      type: float
    source:
      description: C(managedFields) or C(conditions).
      type: str
cr:
  description: The CR as the guard saw it.
  returned: always
  type: dict
  sample: {"name": "gpu-tuning", "kind": "Skyhook", "apiVersion": "skyhook.nvidia.com/v1alpha1", "generation": 3,
           "observedGeneration": 3, "status": "in_progress", "paused": false, "disabled": false, "deleting": false}
clock:
  description: The time the decision was made at, and where it came from.
  returned: always
  type: dict
  contains:
    source:
      description: C(api-server) (the Date of the lease response) or C(local).
      type: str
    now:
      description: That time, RFC 3339.
      type: str
    local_skew_seconds:
      description: How far the local clock is ahead of the API server's (null when not known).
      type: float
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules.operator_guard import execute, module_args


def main():
    execute(AnsibleModule(**module_args()))


if __name__ == '__main__':
    main()
