# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
name: nodes
short_description: The nodes a NodeWright CR selects, as hosts grouped by compartment and state
version_added: 0.1.0
description:
  - Reads a NodeWright (or Skyhook) custom resource from a file or from the cluster, lists the nodes its
    C(nodeSelectors) select (with their labels and NodeWright annotations), plans the rollout as
    M(nodewright.bridge.rollout_plan) does, and makes every selected node a host.
  - Groups C(nodewright) (every host), C(nodewright_<cr>), C(nodewright_compartment_<name>) (C(__default__)
    becomes C(default)), C(nodewright_state_<complete|erroring|in_progress|blocked|pending>),
    C(nodewright_needs_drain), and with O(include_ignored) C(nodewright_ignored). Characters a group name
    cannot hold become C(_).
  - Host variable C(nodewright_node_facts), the node's read-only facts, a dict with the keys C(cr_name) (the CR's
    name), C(pending), C(needs_drain), C(interrupt), C(blocked), C(complete), C(status), C(state), C(progress),
    C(cordoned_by) and C(ignored) (an ignored host has C(cr_name), C(status), C(cordoned_by) and C(ignored) only).
  - Host variables that are inputs of other parts, filled in as a static inventory would set them by hand, namely
    C(nodewright_node) (read by the C(nodewright.bridge.node) and C(nodewright.bridge.maintenance) roles),
    C(nodewright_cr_name) (the CR's name, read by the C(nodewright.bridge.node) role),
    C(nodewright_labels) and C(nodewright_compartment) (read by the P(nodewright.bridge.budgeted#strategy) strategy).
    Also C(ansible_host) and C(ansible_connection).
  - Deprecated (removed in 2.0.0), each fact but C(cr_name) also as a host variable of its own, C(nodewright_<key>).
    Read C(nodewright_node_facts) instead. The CR's name is no longer set as C(nodewright_cr), the name the
    C(nodewright.bridge.node) role and the playbooks give their input that holds the CR documents (as a host
    variable it won over the role's default).
  - Nodes labelled C(skyhook.nvidia.com/ignore=true) are not hosts, unless O(include_ignored) is set.
  - Nodes always come from the cluster. A CR or DeploymentPolicy that is invalid, a CR or policy missing
    from the cluster, or an API server that cannot be reached fails the inventory source with a message
    naming the problem (for an invalid CR, every problem with its field path). A CR that selects no node
    gives an inventory without hosts.
  - The inventory source is a YAML file whose name ends in C(.nodewright.yml) or C(.nodewright.yaml).
author:
  - nodewright.bridge contributors (@nodewright)
requirements:
  - kubernetes >= 29.0.0 (Python client)
  - PyYAML >= 5.4
extends_documentation_fragment:
  - constructed
  - inventory_cache
options:
  plugin:
    description: Marks the file as a source for this plugin.
    required: true
    type: str
    choices: [nodewright.bridge.nodes]
  cr:
    description:
      - Path of a YAML or JSON file holding the CR (C(Skyhook) or C(NodeWright)), relative to the inventory file.
        Vault-encrypted files are read.
      - The file may hold several documents; the DeploymentPolicy the CR names can be one of them. A CR
        naming a policy that is not in the file reads it from the cluster.
      - When omitted, the CR named O(cr_name) is read from the cluster (a C(Skyhook), then a C(NodeWright)),
        and so is the DeploymentPolicy it names.
      - One of O(cr) and O(cr_name) is required.
    type: str
  cr_name:
    description:
      - The CR to read from the cluster when O(cr) is omitted; which CR of O(cr) to use when the file holds several.
    type: str
  policy:
    description:
      - Path of a YAML or JSON file holding the DeploymentPolicy (a full document or its C(spec)), relative to
        the inventory file. It replaces the policy the CR names (which must then be this one) or the CR's
        C(interruptionBudget).
      - The file may hold other documents (the CR, for example), but exactly one DeploymentPolicy.
    type: str
  connection:
    description:
      - The C(ansible_connection) of every host. With V(local) (the default) tasks run on the controller and
        talk to the cluster, and C(ansible_python_interpreter) is set to C({{ ansible_playbook_python }}), as for
        the implicit localhost, so that the modules find the C(kubernetes) library.
      - Set V(ssh) to reach the nodes themselves; an empty value leaves C(ansible_connection) unset.
    type: str
    default: local
  use_internal_ip:
    description:
      - Set C(ansible_host) to the node's C(InternalIP) address (for ssh tasks on the nodes).
    type: bool
    default: true
  include_ignored:
    description:
      - Also make the selected nodes labelled C(skyhook.nvidia.com/ignore=true) hosts, in group C(nodewright_ignored)
        only, with C(nodewright_node_facts.ignored=true) and no plan facts.
    type: bool
    default: false
  kubeconfig:
    description:
      - Path to a kubeconfig file, or the kubeconfig as a dictionary.
      - Without it (and without O(host)), C(~/.kube/config) is used, and inside a pod the service account's
        in-cluster configuration.
    type: raw
    env:
      - name: K8S_AUTH_KUBECONFIG
  context:
    description: The kubeconfig context to use.
    type: str
    env:
      - name: K8S_AUTH_CONTEXT
  host:
    description:
      - URL of the Kubernetes API server, for example C(https://10.0.0.1:6443). Overrides the server of the kubeconfig.
    type: str
    env:
      - name: K8S_AUTH_HOST
  api_key:
    description: A bearer token for the API server.
    type: str
    env:
      - name: K8S_AUTH_API_KEY
  username:
    description: User name for basic authentication.
    type: str
    env:
      - name: K8S_AUTH_USERNAME
  password:
    description: Password for basic authentication.
    type: str
    env:
      - name: K8S_AUTH_PASSWORD
  validate_certs:
    description: Whether to verify the API server's TLS certificate.
    type: bool
    aliases: [verify_ssl]
    env:
      - name: K8S_AUTH_VERIFY_SSL
  ca_cert:
    description: Path to a CA certificate to verify the API server with.
    type: path
    aliases: [ssl_ca_cert]
    env:
      - name: K8S_AUTH_SSL_CA_CERT
  client_cert:
    description: Path to a client certificate.
    type: path
    aliases: [cert_file]
    env:
      - name: K8S_AUTH_CERT_FILE
  client_key:
    description: Path to the key of O(client_cert).
    type: path
    aliases: [key_file]
    env:
      - name: K8S_AUTH_KEY_FILE
  proxy:
    description: An HTTP proxy for API requests.
    type: str
    env:
      - name: K8S_AUTH_PROXY
  no_proxy:
    description: Hosts that bypass O(proxy), comma separated.
    type: str
    env:
      - name: K8S_AUTH_NO_PROXY
  impersonate_user:
    description: Act as this user (C(kubectl --as)); the inventory's identity needs the C(impersonate) verb on it.
    type: str
    env:
      - name: K8S_AUTH_IMPERSONATE_USER
  impersonate_groups:
    description: Groups to act as, with O(impersonate_user) (C(kubectl --as-group)).
    type: list
    elements: str
    env:
      - name: K8S_AUTH_IMPERSONATE_GROUPS
  request_timeout:
    description: Seconds to wait for one API request.
    type: int
    default: 30
  nodewright_api:
    description:
      - The NodeWright contract whose node keys the hosts' states are read from (see docs/api-generations.md),
        V(skyhook) (v0.15) or V(nodewright) (v0.18-v0.20); V(auto) detects it from the cluster (cached with the rest).
    type: str
    choices: [auto, skyhook, nodewright]
    default: auto
    env:
      - name: NODEWRIGHT_API
notes:
  - The connection options have the names, aliases and C(K8S_AUTH_*) environment variables of kubernetes.core.
  - With O(cache), what was read from the cluster (the nodes, and the CR and policy when they come from it) is
    cached; the plan is made again from it on every run. C(--flush-cache) (of ansible-playbook, and of
    ansible-inventory from ansible-core 2.19) reads the cluster again.
  - The budgets, compartments and node plans follow U(https://github.com/NVIDIA/nodewright/blob/main/docs/deployment_policy.md);
    differences from the operator's code are listed in the collection's C(docs/semantics.md).
seealso:
  - module: nodewright.bridge.rollout_plan
'''

EXAMPLES = r'''
# gpu.nodewright.yml: the nodes gpu-node-tuning.yaml selects, from the current kubeconfig context
plugin: nodewright.bridge.nodes
cr: gpu-node-tuning.yaml            # relative to this file; its DeploymentPolicy may be in the same file

---
# prod.nodewright.yml: the CR (and its DeploymentPolicy) from the cluster, ssh to the nodes
plugin: nodewright.bridge.nodes
cr_name: gpu-node-tuning
kubeconfig: ~/.kube/prod-gpu
context: prod
connection: ssh
compose:
  ansible_user: "'ubuntu'"
keyed_groups:
  - key: nodewright_labels['nvidia.com/gpu.product'] | default('unknown')
    prefix: gpu
  - key: nodewright_node_facts.progress
    prefix: progress
groups:
  reboot_due: nodewright_node_facts.interrupt is not none and nodewright_node_facts.interrupt.type == 'reboot'

---
# cached.nodewright.yml: keep what was read from the cluster for 10 minutes
plugin: nodewright.bridge.nodes
cr_name: gpu-node-tuning
cache: true
cache_plugin: ansible.builtin.jsonfile
cache_connection: /tmp/nodewright-inventory
cache_timeout: 600
'''

import os

from ansible.errors import AnsibleError, AnsibleParserError
from ansible.module_utils.common.text.converters import to_native, to_text
from ansible.plugins.inventory import BaseInventoryPlugin, Cacheable, Constructable
from ansible.utils.unsafe_proxy import wrap_var

from ansible_collections.nodewright.bridge.plugins.module_utils.model import api_generation
from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_model
from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_validation
from ansible_collections.nodewright.bridge.plugins.module_utils.planning import inventory_groups
from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube as kube_api
from ansible_collections.nodewright.bridge.plugins.module_utils.model import label_selector
from ansible_collections.nodewright.bridge.plugins.module_utils.planning.planner import (
    choose_policy, cr_warnings, normalise_nodes, plan_rollout, plan_warnings)
from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution import core_internals

try:
    # ansible-core 2.19 and later: strings from an inventory plugin are never templated unless marked
    # trusted, so cluster data needs no unsafe wrapping (which costs about 2 s per 10,000 hosts there).
    from ansible.template import trust_as_template
    as_data = None
except ImportError:  # pragma: no cover - older ansible-core templates inventory strings unless wrapped unsafe
    def trust_as_template(value):
        return value
    as_data = wrap_var

AUTH_OPTIONS = ('kubeconfig', 'context', 'host', 'api_key', 'username', 'password', 'validate_certs', 'ca_cert',
                'client_cert', 'client_key', 'proxy', 'no_proxy', 'impersonate_user', 'impersonate_groups', 'request_timeout',
                'nodewright_api')
SUFFIXES = ('.nodewright.yml', '.nodewright.yaml')


class _ClusterReader(object):
    """Reads the CR, the policy and the nodes from the cluster, through the inventory cache.

    ``responses`` maps one key per request made in this run (``cr:<name>``, ``policy:<name>``,
    ``nodes:<selector>``) to what the API server answered, so that a cache made for another CR or
    selector is never taken for this one, and the cache written holds only what this run used.
    The client is made on the first request that the cache cannot answer.
    """

    def __init__(self, params, cached=None):
        self.params = params
        self.cached = cached or {}
        self.responses = {}
        self.fetched = False
        self._kube = None

    def _get(self, key, request):
        if key in self.cached:
            self.responses[key] = self.cached[key]
        elif key not in self.responses:
            if self._kube is None:
                self._kube = kube_api.Kube(self.params)
            self.responses[key] = request(self._kube)
            self.fetched = True
        return self.responses[key]

    def cr(self, name):
        return self._get('cr:%s' % name, lambda kube: kube.get_cr(name))

    def generation(self, cr_name):
        """The cluster's API generation (Kube.generation; its name is cached with the rest)."""
        option = self.params.get('nodewright_api') or api_generation.AUTO
        if option != api_generation.AUTO:
            return api_generation.by_name(option)
        return api_generation.by_name(self._get('generation:%s' % cr_name, lambda kube: kube.generation.name))

    def policy(self, name):
        return self._get('policy:%s' % name, lambda kube: kube.get_policy(name))

    def nodes(self, selector):
        query = label_selector.to_query(selector)

        def request(kube):
            listing = kube.list_nodes(label_selector=query or None)
            return [inventory_groups.compact_node(item) for item in listing.get('items') or []]
        return self._get('nodes:%s' % query, request)


class InventoryModule(BaseInventoryPlugin, Constructable, Cacheable):

    NAME = 'nodewright.bridge.nodes'

    def verify_file(self, path):
        return super(InventoryModule, self).verify_file(path) and path.endswith(SUFFIXES)

    def parse(self, inventory, loader, path, cache=True):
        super(InventoryModule, self).parse(inventory, loader, path, cache)
        self._read_config_data(path)
        cache_key = self.get_cache_key(path)
        use_cache = self.get_option('cache') and cache
        update_cache = self.get_option('cache') and not cache
        cached = None
        if use_cache:
            try:
                cached = self._cache[cache_key]
            except KeyError:
                update_cache = True
        reader = _ClusterReader(dict((k, self.get_option(k)) for k in AUTH_OPTIONS), cached if isinstance(cached, dict) else None)
        try:
            cr, plan, nodes, gen = self._plan(path, reader)
        except cr_model.CRValidationError as exc:
            raise AnsibleParserError('%s: %s' % (self.NAME, to_native(exc)))
        except kube_api.KubeError as exc:
            raise AnsibleParserError('%s: %s' % (self.NAME, exc.message))
        if self.get_option('cache') and (update_cache or reader.fetched):
            self._cache[cache_key] = reader.responses
        self._populate(cr, plan, nodes, gen)

    # ------------------------------------------------------------------ reading

    def _path(self, inventory_path, value):
        path = os.path.expanduser(value)
        if not os.path.isabs(path):
            path = os.path.join(os.path.dirname(os.path.abspath(inventory_path)), path)
        return path

    def _documents(self, option, inventory_path):
        path = self._path(inventory_path, self.get_option(option))
        if not os.path.isfile(path):
            raise AnsibleParserError('%s: %s: file %s does not exist' % (self.NAME, option, path))
        try:
            data = core_internals.file_bytes(self.loader, path)
        except AnsibleError as exc:  # not readable, or a vault that cannot be opened
            raise AnsibleParserError('%s: %s: cannot read %s: %s' % (self.NAME, option, path, to_native(exc)))
        return cr_model.load_yaml_documents(to_text(data, errors='surrogate_or_strict'), '%s file %s' % (option, path))

    def _plan(self, path, reader):
        cr_name = self.get_option('cr_name')
        if self.get_option('cr'):
            source = 'cr file %s' % self._path(path, self.get_option('cr'))
            cr_doc, bundled = cr_model.select_cr(self._documents('cr', path), cr_name, source)
        elif cr_name:
            source = 'the cluster'
            cr_doc, bundled = reader.cr(cr_name), []
        else:
            raise AnsibleParserError('%s: set cr (a file with the CR) or cr_name (a CR in the cluster) in %s' % (self.NAME, path))
        try:
            cr = cr_validation.build_cr(cr_doc, stored=not self.get_option('cr'))
        except cr_model.CRValidationError as exc:
            raise cr_model.CRValidationError('%s (from %s)' % (exc.what, source), exc.errors)
        given = where = None
        if self.get_option('policy'):
            where = 'policy file %s' % self._path(path, self.get_option('policy'))
            given = self._documents('policy', path)
        policy = choose_policy(cr, bundled, given=given, fetch=reader.policy, where=where)[0]
        nodes = reader.nodes(cr.node_selector)
        for warning in cr_warnings(cr):
            self.display.warning('%s: %s' % (self.NAME, warning))
        gen = reader.generation(cr.name)
        plan = plan_rollout(cr, normalise_nodes(nodes), policy=policy, gen=gen)
        for warning in plan_warnings(plan):
            self.display.warning('%s: %s' % (self.NAME, warning))
        return cr, plan, nodes, gen

    # ------------------------------------------------------------------ populating

    def _populate(self, cr, plan, nodes, gen):
        include_ignored = self.get_option('include_ignored')
        connection = self.get_option('connection')
        for group in inventory_groups.all_groups(cr, plan, include_ignored):
            self.inventory.add_group(group)
        hosts = inventory_groups.build_hosts(cr, plan, nodes, include_ignored=include_ignored, gen=gen,
                                             use_internal_ip=self.get_option('use_internal_ip'), connection=connection)
        strict = self.get_option('strict')
        for host in hosts:
            name = self.inventory.add_host(host['name'])
            for group in host['groups']:
                self.inventory.add_child(group, name)
            for key, value in host['vars'].items():
                # Labels, annotations and CR fields are data, never templates.
                self.inventory.set_variable(name, key, as_data(value) if as_data else value)
            if connection == 'local':
                self.inventory.set_variable(name, 'ansible_python_interpreter', trust_as_template('{{ ansible_playbook_python }}'))
            host_vars = self.inventory.get_host(name).get_vars()
            self._set_composite_vars(self.get_option('compose'), host_vars, name, strict=strict)
            self._add_host_to_composed_groups(self.get_option('groups'), host_vars, name, strict=strict)
            self._add_host_to_keyed_groups(self.get_option('keyed_groups'), host_vars, name, strict=strict)
