#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: node_health
short_description: Wait until a node is healthy again after NodeWright work (Ready, new boot, workloads Ready)
version_added: 0.1.0
author: nodewright.bridge contributors (@nodewright)
description:
  - The health gate before a node is handed back, by watch, not polling. It waits until the node is Ready.
    With O(boot_id_not), it also waits until the node reports a different C(status.nodeInfo.bootID) (it
    rebooted). With O(pod_selector), it also waits until the node's pods that match are Running and Ready.
  - Changes nothing.
extends_documentation_fragment:
  - nodewright.bridge.k8s_auth
options:
  node:
    description:
      - The node.
      - O(name) is a deprecated alias (removed in 2.0.0).
    type: str
    required: true
    aliases: [name]
  boot_id_not:
    description: A boot ID the node must no longer report (the one from before a reboot).
    type: str
  pod_selector:
    description:
      - A label selector (string such as C(app=dcgm-exporter), or a LabelSelector dictionary). Every pod on the node
        that matches must be Running and Ready, and at least O(min_pods) of them must exist.
    type: raw
  min_pods:
    description: How many pods matching O(pod_selector) must be on the node.
    type: int
    default: 1
  timeout:
    description: Seconds to wait for all of it.
    type: int
    default: 600
attributes:
  check_mode:
    support: full
    description: Read-only; it waits in check mode too.
  diff_mode:
    support: none
    description: Nothing changes.
'''

EXAMPLES = r'''
- name: Wait until the node is back and the GPU operator's pods run on it again
  nodewright.bridge.node_health:
    node: gpu-node-07
    boot_id_not: "{{ reboot.boot_id_before }}"
    pod_selector: app=nvidia-device-plugin-daemonset
    timeout: 900
'''

RETURN = r'''
node:
  description: The node.
  returned: always
  type: str
ready:
  description: Whether the node is Ready.
  returned: always
  type: bool
boot_id:
  description: The node's boot ID.
  returned: always
  type: str
pods:
  description: The pods matching O(pod_selector), C(namespace/name) with whether each is Ready.
  returned: when O(pod_selector) is set
  type: dict
waited:
  description: Seconds spent waiting.
  returned: always
  type: float
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules.node_health import execute, module_args


def main():
    execute(AnsibleModule(**module_args()))


if __name__ == '__main__':
    main()
