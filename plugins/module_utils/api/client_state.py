# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""What a ``kube.Kube`` and its parts by resource share, and the parts' one base.

A Kube's requests are its parts' (nodes.py, workloads.py, crs.py, ...). Each part reads, at each use, what the
client's owner may change after building it (the session, the live CRs: kube.Kube's properties write here) and
what every part shares (the transport, the warnings for the module's result). The parts hold this state, not the
Kube, so no reference cycle ties a client to its parts: a client is freed when its last user lets it go.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ClientState(object):
    """One Kube's ``params``, ``transport``, ``session`` (a kube.KubeSession), ``live_crs`` (a long-lived process's
    watches, or None) and ``warnings`` (best-effort writes refused: for the module's result)."""

    def __init__(self, params, transport, session, live_crs):
        self.params = params
        self.transport = transport
        self.session = session
        self.live_crs = live_crs
        self.warnings = []


class ClientPart(object):
    """One resource's requests of a Kube, through the transport of the state it shares with the client."""

    def __init__(self, state):
        self.state = state
        self.transport = state.transport
        self.call = state.transport.call

    session = property(lambda self: self.state.session)
    live_crs = property(lambda self: self.state.live_crs)
    warnings = property(lambda self: self.state.warnings)
    host = property(lambda self: self.transport.host)
    request_timeout = property(lambda self: self.transport.request_timeout)
