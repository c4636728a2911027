#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: role_package
short_description: Build an Ansible role or playbook, unchanged, as a NodeWright package image
version_added: 0.2.0
author: nodewright.bridge contributors (@nodewright)
description:
  - Builds an OCI image that is a NodeWright package (C(/skyhook-package/config.json) and C(skyhook_dir/)) from a
    role (O(role)) or a playbook (O(playbook)), with podman on the controller, and returns the C(packages.<name>)
    entry of a CR that uses it.
  - "Stages: C(apply) runs the role's C(tasks/main.yml); C(config) runs C(tasks/config.yml), or C(tasks/main.yml)
    again; C(upgrade), C(post-interrupt) and C(uninstall) run C(tasks/upgrade.yml), C(tasks/post_interrupt.yml) and
    C(tasks/uninstall.yml) when the role has them. Each C(-check) stage runs C(tasks/verify.yml) when the role has
    one (not for C(uninstall-check)), else its stage's tasks in check mode, failing when any task would change.
    O(stages) overrides any of them."
  - "A playbook (O(playbook)): the package brings the playbook's directory; C(apply) runs the playbook, C(config)
    runs it again, C(apply-check) and C(config-check) run it in check mode; C(upgrade), C(post-interrupt) and
    C(uninstall) exist only when O(stages) maps them to a playbook or a task file of the directory (a path relative
    to it), their C(-check) being the same file in check mode. Every play runs on the host the step runs on, with
    the local connection: the step's inventory has one host in every group the plays' C(hosts) name. Templated
    C(hosts), name patterns (C(web*), C(~regex), C(group[0])) and plays that exclude a group another play runs on
    are refused, naming the play."
  - The CR's configMap keys are the role's variables (each value read as YAML); the returned snippet has one key
    per variable with a default (C(defaults/main.yml), C(meta/argument_specs.yml)).
  - Handlers that reboot (M(ansible.builtin.reboot), or a command that is only C(reboot), C(shutdown -r [now|+N])
    or C(systemctl reboot)) or restart or reload a service (M(ansible.builtin.service),
    M(ansible.builtin.systemd_service) with a plain name and nothing else set, or a command that is only C(systemctl
    restart|reload <unit>) or C(service <name> restart)) are the operator's interrupts, not the stage's - the
    package's C(interrupt), and the C(configInterrupts) of the keys whose tasks notify them (a variable in the
    task's arguments or conditions, or in the template a M(ansible.builtin.template) task renders). In the package
    they print that they are left to NodeWright. Every other handler - a conditional one too, a templated service
    name, any other module or command, and for a playbook the handlers of the roles its plays use - runs in the
    stage as written, and RV(unmapped_handlers) names it with the reason.
  - The package brings its own runtime - the base image's Python, its libraries and its dynamic loader, and
    ansible-core - in one layer shared by every role package built on the same base, so a stage runs on any host,
    whatever Python and libc it has. Every step is C(on_host), which the NodeWright agents (v6 and v7) run chrooted
    into the host's root; the role's tasks run there with the local connection. The play's output is the step's log.
  - The collections the role's tasks name modules of (and its C(meta/main.yml) C(collections)) - for a playbook,
    those its plays and the roles of its directory name modules or roles of, and the plays' C(collections) - are
    copied into the package from the controller's collections paths.
  - The same role and options give the same image (C(--timestamp 0), fixed file modes); an image whose content
    label matches is not built again (the task is not changed). With O(push), a tag podman's storage does not have
    is pulled from the registry first - if its content label matches, it is not built and the task is not changed
    (in check mode the registry is not asked, and a missing local image counts as a change).
options:
  role:
    description:
      - The role - a directory, a role name on the roles path (or in C(roles/) next to the playbook), or the FQCN of a
        role in an installed collection.
      - Exactly one of O(role) and O(playbook).
    type: str
  playbook:
    description:
      - A playbook file (its path, or relative to the directory of the playbook that runs this task). The package
        brings the file's whole directory, byte for byte, and copies of its playbook files with the mapped
        handlers replaced.
      - Exactly one of O(role) and O(playbook).
    type: path
  version:
    description: The package version (semantic version), the CR's C(version) and the image's tag by default.
    type: str
    required: true
  image:
    description: The image repository, without tag (for example C(registry.example.com/gpu/gpu-tuning)).
    type: str
    required: true
  name:
    description:
      - The package name in config.json and the CR. Default, the role's name (or the playbook file's, without its
        extension) with C(_) as C(-).
    type: str
  tag:
    description: The image tag. Default, O(version).
    type: str
  stages:
    description:
      - Stage -> a task file of the role (C(tasks/x.yml) or C(x)), C(check) (a C(-check) stage - its stage's tasks in
        check mode), or C(null) (no such stage).
      - For a O(playbook) - a playbook or a task file of its directory (a path relative to it), C(check) or C(null).
    type: dict
    default: {}
  gather_facts:
    description:
      - Whether each stage gathers the host's facts before the role's tasks (for a playbook, before a task-file
        stage's tasks; its plays say for themselves).
    type: bool
    default: true
  allow_vault:
    description:
      - Build a role or playbook with vault-encrypted files or inline C(!vault) values (in any YAML file of it). Refused
        by default, naming the files and the variables - anyone who can pull the image reads them, and a stage has no
        vault password. A C(!vault) (or C(!unsafe)) default is no key of the returned configMap.
    type: bool
    default: false
  base_image:
    description:
      - The base of the image - a Debian (or Debian-like) image; its Python becomes the package's runtime and its GNU
        C(cp) copies the package to the host (the stage pods' init container).
    type: str
    default: docker.io/library/debian:trixie-slim
  push:
    description: Push the image to its registry; RV(digest) is then the digest the registry has.
    type: bool
    default: true
  tls_verify:
    description: Verify the registry's TLS certificate when pushing.
    type: bool
    default: true
  podman:
    description: The podman executable.
    type: str
    default: podman
attributes:
  check_mode:
    support: full
    description: Reads the role and reports the package and whether the image would change; builds nothing.
  diff_mode:
    support: none
    description: There is no diff.
notes:
  - Runs on the controller (an action plugin), where podman builds the image; the build pulls the base image and,
    once per base, the runtime's Python packages from PyPI.
  - The package's steps are POSIX C(sh) scripts - the host needs C(/bin/sh), nothing else.
  - Role dependencies (C(meta/main.yml) C(dependencies)) are refused - build each role as a package of its own.
  - "For a playbook - a role its plays use must be in C(roles/) of its directory or a collection's (FQCN);
    C(import_playbook) takes a plain path in the directory (not a templated one, nor a collection's playbook)."

seealso:
  - module: nodewright.bridge.package_stage
  - module: nodewright.bridge.rollout_plan
'''

EXAMPLES = r'''
- name: Build the gpu_tuning role as a package and push it
  nodewright.bridge.role_package:
    role: roles/gpu_tuning
    version: 1.0.0
    image: registry.example.com/gpu/gpu-tuning
  register: built

- name: The CR's packages entry that uses it
  ansible.builtin.debug:
    var: built.package

- name: A role of a collection, config stage from its own tasks, no upgrade stage
  nodewright.bridge.role_package:
    role: example.gpu.tuning
    version: 2.1.0
    image: registry.example.com/gpu/tuning
    stages:
      config: tasks/reconfigure.yml
      upgrade: null

- name: A playbook, with an uninstall stage from a task file next to it
  nodewright.bridge.role_package:
    playbook: playbooks/gpu_tuning.yml
    version: 1.0.0
    image: registry.example.com/gpu/gpu-tuning-play
    stages:
      uninstall: tasks/gpu_tuning_uninstall.yml
'''

RETURN = r'''
image:
  description: The image reference built (repository and tag).
  returned: always
  type: str
  sample: registry.example.com/gpu/gpu-tuning:1.0.0
digest:
  description: The image's manifest digest, as the registry has it.
  returned: when pushed
  type: str
  sample: sha256:4a3b0c...
image_id:
  description: The image's ID (its config digest) in podman's storage.
  returned: when not in check mode
  type: str
size:
  description: The image's size in bytes (base and runtime layers included).
  returned: when not in check mode
  type: int
runtime_image:
  description: The runtime image the package is built on (its Python and ansible-core), shared by role packages.
  returned: always
  type: str
package:
  description:
    - The CR's C(packages) entry - image, version, C(interrupt), C(configInterrupts) and the C(configMap) of the role's
      variables with defaults.
  returned: always
  type: dict
  sample: {gpu-tuning: {image: registry.example.com/gpu/gpu-tuning, version: 1.0.0,
           interrupt: {type: service, services: [containerd]}}}
package_name:
  description: The package's name.
  returned: always
  type: str
stages:
  description: Stage -> the role's task file it runs and whether in check mode.
  returned: always
  type: dict
  sample: {apply: {tasks: main.yml, check_mode: false}, apply-check: {tasks: main.yml, check_mode: true}}
  contains:
    tasks:
      description: The task file the stage runs (the role's, or a file of the playbook's directory).
      type: str
      returned: for a role, and a playbook's task-file stage
    playbook:
      description: The playbook file the stage runs (relative to the playbook's directory).
      type: str
      returned: for a playbook's playbook stage
    check_mode:
      description: Whether the stage runs it in check mode (failing when a task would change).
      type: bool
      returned: always
collections:
  description: The collections copied into the package.
  returned: always
  type: list
  elements: str
mapped_handlers:
  description: Handler name -> the interrupt it became.
  returned: always
  type: dict
unmapped_handlers:
  description:
    - Each handler that did not become an interrupt (it runs in the stage), by name, and why - and for a playbook,
      the plays whose roles' handlers run in the stage.
  returned: always
  type: list
  elements: str
context_digest:
  description: A digest of everything in the package's own layer and the runtime it is built on (the image's label).
  returned: always
  type: str
role:
  description: The role's name.
  returned: when built from a role
  type: str
playbook:
  description: The playbook file's name.
  returned: when built from a playbook
  type: str
'''

from ansible.module_utils.basic import AnsibleModule


def argument_spec():
    return dict(
        role=dict(type='str'),
        playbook=dict(type='path'),
        version=dict(type='str', required=True),
        image=dict(type='str', required=True),
        name=dict(type='str'),
        tag=dict(type='str'),
        stages=dict(type='dict', default={}),
        gather_facts=dict(type='bool', default=True),
        allow_vault=dict(type='bool', default=False),
        base_image=dict(type='str', default='docker.io/library/debian:trixie-slim'),
        push=dict(type='bool', default=True),
        tls_verify=dict(type='bool', default=True),
        podman=dict(type='str', default='podman'),
    )


# the rules between the options, the action plugin's as the module's
ARGUMENT_RULES = dict(mutually_exclusive=[('role', 'playbook')], required_one_of=[('role', 'playbook')])


def main():
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True, **ARGUMENT_RULES)
    module.fail_json(msg='nodewright.bridge.role_package runs on the controller, through its action plugin; '
                         'it cannot run as a module on a host')


if __name__ == '__main__':
    main()
