# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""Which API generation a client speaks (api_generation: the v0.15 Skyhook contract or the v0.18+ NodeWright one).

``GenerationAPI`` is the generation part of a ``kube.Kube`` (kube.py's ``generation``, ``generation_reason``,
``served_groups`` and ``generation_evidence`` are its). The option ``nodewright_api`` names one, or ``auto``
detects it once per client (once per CR and API server in a long-lived process: its ``LiveCRs.generations``) with
the fewest requests that settle it: discovery of the two groups, then the NodeWright, then the operator's leader
leases (leases.py). The node and CR parts (nodes.py, crs.py) ask it when they need the answer: a client that
never needs it spends no request on it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.nodewright.bridge.plugins.module_utils.model import api_generation
from ansible_collections.nodewright.bridge.plugins.module_utils.api.kube_transport import KubeError, NotFound, describe
from ansible_collections.nodewright.bridge.plugins.module_utils.api.client_state import ClientPart


class GenerationAPI(ClientPart):
    """The generation a ``kube.Kube`` speaks, its reason, and the evidence for ``auto``.

    From the state it shares with the client (client_state.py): the ``params`` and, at each use, the ``host`` and
    ``live_crs`` (the long-lived process's detections); the operator's leases through ``leases_api`` (leases.py).
    """

    def __init__(self, state, leases_api):
        super(GenerationAPI, self).__init__(state)
        self.leases_api = leases_api
        self.params = state.params
        self.custom = self.transport.custom
        self._generation = None
        self.generation_reason = None  # why ``generation`` is what it is, once known

    @property
    def generation(self):
        """The api_generation.Generation whose contract this client speaks (the option ``nodewright_api``).

        ``skyhook`` / ``nodewright``: that one, without a request (a controller that chose it already passes the
        choice down to every step; a wrong choice shows in the first CR read). ``auto``: api_generation.choose over
        ``generation_evidence`` for the module's ``cr_name``, once per client; its reason is ``generation_reason``.
        """
        if self._generation is None:
            option = self.params.get('nodewright_api') or api_generation.AUTO
            if option != api_generation.AUTO:
                self._generation = api_generation.by_name(option)
                self.generation_reason = 'nodewright_api=%s' % option
            else:
                self._generation, self.generation_reason = self._detected(self.params.get('cr_name'))
        return self._generation

    def _detected(self, cr_name):
        key = (self.host, cr_name)
        known = self.live_crs.generations.get(key) if self.live_crs is not None else None
        if known is not None:
            return known
        try:
            chosen = api_generation.choose(api_generation.AUTO, self.generation_evidence(api_generation.AUTO, cr_name=cr_name))
        except api_generation.GenerationError as exc:
            raise KubeError(str(exc))
        if self.live_crs is not None:
            self.live_crs.generations[key] = chosen
        return chosen

    def chosen(self):
        """``generation`` when it costs no request (an explicit ``nodewright_api``, or ``auto`` already detected),
        else None."""
        option = self.params.get('nodewright_api') or api_generation.AUTO
        if self._generation is None and option == api_generation.AUTO:
            return None
        return self.generation

    def served_groups(self):
        """{group: bool}: whether the API server serves each generation's CR, by discovery of ``/apis/<group>/<version>``.

        One GET per group: a 404 is not served (no CRD of the group); served is the resource list naming the CR's plural.
        """
        served = {}
        for generation in api_generation.GENERATIONS:
            try:
                doc = self.call(describe('get', 'API resources', generation.api_version), self.custom.get_api_resources,
                                generation.group, generation.version)
            except NotFound:
                served[generation.group] = False
                continue
            served[generation.group] = any(r.get('name') == generation.plural for r in doc.get('resources') or [])
        return served

    def generation_evidence(self, option='auto', cr_name=None, nodes=None):
        """The evidence api_generation.choose reads, with the fewest requests that settle the answer.

        Discovery of the two groups (2 GETs); the node keys from ``nodes``, the CR's nodes the caller already has (no
        read); then, only while api_generation.decided says more could change the answer, the NodeWright ``cr_name``
        (1 GET; without a name, one page of NodeWrights) and the operator's leases in the v0.18+ default namespace
        (a GET each, up to the first found). A read refused with 403 (no RBAC for it) goes in ``unread``.
        """
        found = api_generation.evidence(self.served_groups(), cr_name=cr_name, nodes=nodes)
        if api_generation.decided(option, found):
            return found
        found['nodewright_objects'] = self._nodewright_objects(cr_name, found['unread'])
        if api_generation.decided(option, found):
            return found
        found['leases'] = []
        for namespace, name in api_generation.NODEWRIGHT.lease_refs():
            if self._readable('lease %s/%s' % (namespace, name), found['unread'], self.leases_api.get_lease, namespace, name):
                found['leases'].append((namespace, name))
                break
        return found

    def _nodewright_objects(self, cr_name, unread):
        """api_generation.object_evidence of the NodeWright ``cr_name`` (or of one page of them); None when refused."""
        gen = api_generation.NODEWRIGHT
        if cr_name:
            doc = self._readable('NodeWright %s' % cr_name, unread, self.call, describe('get', gen.crd_name, cr_name),
                                 self.custom.get_cluster_custom_object, gen.group, gen.version, gen.plural, cr_name)
        else:
            doc = self._readable('NodeWright objects', unread, self.call, describe('list', gen.crd_name),
                                 self.custom.list_cluster_custom_object, gen.group, gen.version, gen.plural, limit=20)
        if doc is None:
            return None
        return api_generation.object_evidence(([doc] if doc else []) if cr_name else doc.get('items') or [])

    @staticmethod
    def _readable(what, unread, read, *args, **kwargs):
        """``read(*args, **kwargs)``'s answer; {} when not found; None (and ``what`` noted in ``unread``) when refused with 403."""
        try:
            return read(*args, **kwargs)
        except NotFound:
            return {}
        except KubeError as exc:
            if exc.status != 403:
                raise
            unread.append('%s (forbidden)' % what)
            return None
