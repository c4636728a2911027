# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""Connection options shared by every module that talks to the Kubernetes API.

Same names, aliases, meaning and ``K8S_AUTH_*`` variables as kubernetes.core, so a
play that already sets them for kubernetes.core.k8s works unchanged.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):

    DOCUMENTATION = r'''
options:
  kubeconfig:
    description:
      - Path to a kubeconfig file, or the kubeconfig as a dictionary.
      - Without it (and without O(host)), C(~/.kube/config) is used, and inside a pod the
        service account's in-cluster configuration.
      - Can also be set with the E(K8S_AUTH_KUBECONFIG) environment variable.
    type: raw
  context:
    description:
      - The kubeconfig context to use. Can also be set with E(K8S_AUTH_CONTEXT).
    type: str
  host:
    description:
      - URL of the Kubernetes API server, for example C(https://10.0.0.1:6443).
        Overrides the server of the kubeconfig. Can also be set with E(K8S_AUTH_HOST).
    type: str
  api_key:
    description:
      - A bearer token for the API server. Can also be set with E(K8S_AUTH_API_KEY).
    type: str
  username:
    description:
      - User name for basic authentication. Can also be set with E(K8S_AUTH_USERNAME).
    type: str
  password:
    description:
      - Password for basic authentication. Can also be set with E(K8S_AUTH_PASSWORD).
    type: str
  validate_certs:
    description:
      - Whether to verify the API server's TLS certificate. Can also be set with E(K8S_AUTH_VERIFY_SSL).
    type: bool
    aliases: [verify_ssl]
  ca_cert:
    description:
      - Path to a CA certificate to verify the API server with. Can also be set with E(K8S_AUTH_SSL_CA_CERT).
    type: path
    aliases: [ssl_ca_cert]
  client_cert:
    description:
      - Path to a client certificate. Can also be set with E(K8S_AUTH_CERT_FILE).
    type: path
    aliases: [cert_file]
  client_key:
    description:
      - Path to the key of O(client_cert). Can also be set with E(K8S_AUTH_KEY_FILE).
    type: path
    aliases: [key_file]
  proxy:
    description:
      - An HTTP proxy for API requests. Can also be set with E(K8S_AUTH_PROXY).
    type: str
  no_proxy:
    description:
      - Hosts that bypass O(proxy), comma separated. Can also be set with E(K8S_AUTH_NO_PROXY).
    type: str
  proxy_headers:
    description:
      - Headers for O(proxy), as kubernetes.core sends them (urllib3's C(make_headers)).
    type: dict
    suboptions:
      proxy_basic_auth:
        description:
          - C(user:password) for the proxy's basic authentication.
        type: str
      basic_auth:
        description:
          - C(user:password) for basic authentication through the proxy.
        type: str
      user_agent:
        description:
          - The User-Agent the proxy sees.
        type: str
  impersonate_user:
    description:
      - Act as this user (the C(Impersonate-User) header, as C(kubectl --as)); the identity the module authenticates
        with needs the C(impersonate) verb on it. Can also be set with E(K8S_AUTH_IMPERSONATE_USER).
      - The API server then authorizes every request as that user, so RBAC is that user's (docs/rbac.md).
    type: str
  impersonate_groups:
    description:
      - Groups to act as, with O(impersonate_user) (one C(Impersonate-Group) header each, as C(kubectl --as-group)). Can
        also be set with E(K8S_AUTH_IMPERSONATE_GROUPS), comma separated.
    type: list
    elements: str
  request_timeout:
    description:
      - Seconds to wait for one API request (not for the operation as a whole, which has its own timeouts).
    type: int
    default: 30
  api_outage_timeout:
    description:
      - Seconds a request keeps being retried, with backoff from 0.5 s to 5 s, while the API server does not
        answer or answers that it cannot now (connection refused or reset, HTTP 429, 502, 503, 504, or a 500
        that names etcd or a timeout), as during a control-plane restart or upgrade, an etcd restart or a
        managed cluster's blip. A wait (a drain, a package pod, a reboot) keeps its own timeout across the outage
        and its watch resumes where it stopped.
      - After that long the task fails with a message that says the API server has not answered.
        C(0) fails at the first refused request.
      - Not an option of kubernetes.core. If not set, the E(NODEWRIGHT_API_OUTAGE_TIMEOUT) environment
        variable is used.
      - See docs/reliability.md for what each fault does to a rollout.
    type: int
    default: 60
  nodewright_api:
    description:
      - Which contract of the NodeWright operator to speak to the cluster, see docs/api-generations.md.
      - V(skyhook) is the v0.15 one (API group, node keys and pod labels under C(skyhook.nvidia.com)); V(nodewright)
        the v0.18-v0.20 one (C(nodewright.nvidia.com), namespace C(nodewright)).
      - V(auto) detects it per cluster from the CRDs it serves and, when it serves both, from the traces of a
        v0.18+ operator (its node keys, a NodeWright object, its lease in namespace C(nodewright)).
        The strategy and M(nodewright.bridge.node_update) detect once and pass the choice to every step.
      - Not an option of kubernetes.core. If not set, the E(NODEWRIGHT_API) environment variable is used.
    type: str
    choices: [auto, skyhook, nodewright]
    default: auto
requirements:
  - kubernetes >= 29.0.0 (Python client)
  - PyYAML >= 5.4
notes:
  - The connection options follow kubernetes.core's names and environment variables.
'''
