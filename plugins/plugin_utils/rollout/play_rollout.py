# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""The budgeted strategy's glue to ansible-core's play objects: the rollout a play asks for, and its host states.

``rollout_phases`` reads the play's variables (templated as a play's are) and its hosts' compartment
variables into rollout_config's phases, each checked before any host runs; ``HostParking`` keeps the
iterator's states of the hosts not in flight aside. Nothing here decides admission (admission.py).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleError
from ansible.module_utils.common.text.converters import to_text
from ansible.template import Templar

from ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout import admission_display
from ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout import rollout_config

# Play vars the strategy reads the API connection from (as the apply playbook's module_defaults do);
# nodewright_shared_budget's own connection options come first, K8S_AUTH_* after.
CONNECTION_VARS = (('nodewright_kubeconfig', 'kubeconfig'), ('nodewright_context', 'context'))


def config_error(play_name, errors):
    """The AnsibleError of an invalid rollout configuration, every problem on its own line."""
    return AnsibleError(admission_display.PREFIX + 'invalid rollout configuration in play %r (%d problem%s):\n  - %s'
                        % (play_name, len(errors), '' if len(errors) == 1 else 's', '\n  - '.join(errors)))


def file_reader(loader):
    """``read_file(path)`` for rollout_config: resolved like vars_files (relative to the playbook), vault-aware."""
    def read_file(path):
        real = loader.path_dwim(path)
        if hasattr(loader, 'get_text_file_contents'):  # 2.19+
            return loader.get_text_file_contents(real)
        data, dummy = loader._get_file_contents(real)  # 2.16-2.18: vault-aware, bytes
        return to_text(data, errors='surrogate_or_strict')
    return read_file


def rollout_phases(play, play_hosts, variable_manager, loader):
    """``(prepared, connection)``: ``[(Phase, [Host], inputs)]`` for every phase of ``play``, and the strategy's
    own connection options (``{kubeconfig, context}``).

    Raises AnsibleError listing every problem of every phase (field paths), so that a bad phase fails the
    play before any host runs.
    """
    name = play.get_name()
    play_vars = variable_manager.get_vars(play=play)
    templar = Templar(loader=loader, variables=play_vars)
    values = dict((var, templar.template(play_vars[var])) for var in rollout_config.PLAY_VARS + tuple(v for v, dummy in CONNECTION_VARS)
                  if play_vars.get(var) is not None)
    try:
        phases = rollout_config.parse_phases(values, read_file=file_reader(loader))
    except rollout_config.RolloutConfigError as exc:
        raise config_error(name, exc.errors)
    by_name = dict((h.name, h) for h in play_hosts)
    prepared, errors = [], []
    for phase in phases:
        where = '' if phase.name is None else '%s %s: ' % (rollout_config.VAR_PHASES, phase.name)
        hosts = list(play_hosts)
        if phase.hosts is not None:
            wanted = set(phase.hosts)
            errors.extend('%shost %s is not a host of the play' % (where, n) for n in phase.hosts if n not in by_name)
            hosts = [h for h in play_hosts if h.name in wanted]
        inputs = host_inputs(play, phase, hosts, variable_manager, loader)
        try:
            nodes, pinned = rollout_config.node_inputs(phase.settings, inputs)
            rollout_config.build_scheduler(phase.settings, nodes, pinned)
        except rollout_config.RolloutConfigError as exc:
            errors.extend(where + err for err in exc.errors)
        prepared.append((phase, hosts, inputs))
    if errors:
        raise config_error(name, errors)
    connection = dict((key, rollout_config.plain(values[var])) for var, key in CONNECTION_VARS
                      if values.get(var) not in (None, ''))
    return prepared, connection


def host_inputs(play, phase, hosts, variable_manager, loader):
    """``[(name, compartment, labels)]``: the phase's compartment, else the host's variables."""
    inputs = []
    for host in hosts:
        compartment = labels = None
        if host.name in phase.compartments:
            compartment = phase.compartments[host.name]
        elif phase.settings.has_compartments:
            # only a policy with compartments needs per-host data; skipping get_vars keeps
            # a plain budget as cheap as serial on large inventories
            host_vars = variable_manager.get_vars(play=play, host=host, include_hostvars=False)
            host_templar = Templar(loader=loader, variables=host_vars)
            if host_vars.get(rollout_config.HOSTVAR_COMPARTMENT) is not None:
                compartment = host_templar.template(host_vars[rollout_config.HOSTVAR_COMPARTMENT])
            if host_vars.get(rollout_config.HOSTVAR_LABELS) is not None:
                labels = host_templar.template(host_vars[rollout_config.HOSTVAR_LABELS])
        inputs.append((host.name, compartment, labels))
    return inputs


class HostParking(object):
    """The iterator's host states of the hosts not in flight, kept aside until the end of the run.

    The result processing of every ansible-core version copies the iterator's whole host-state dict
    once per pass; with one iterator for the whole rollout that copy grows with the inventory instead
    of the batch (measurable at 1,000 hosts). Only hosts in flight need to be there: everything
    touching other hosts is scoped by the inventory restriction.
    """

    def __init__(self, iterator):
        self.iterator = iterator
        self.parked = {}
        self.parking = True

    def park_all(self):
        states = self.iterator.host_states
        for name in list(states):
            self.parked[name] = states.pop(name)
        self.compact()

    def unpark(self, names):
        states = self.iterator.host_states
        for name in names:
            if name in self.parked:
                states[name] = self.parked.pop(name)
        self.compact()

    def park(self, name, state=None):
        """Park ``name``'s state (``state``: a fresh one, for a host that runs the play again in a later phase)."""
        states = self.iterator.host_states
        if state is not None:
            self.parked[name] = state
        elif self.parking and name in states:
            self.parked[name] = states.pop(name)

    def compact(self):
        # a dict never shrinks its table on deletion, and copying one with deleted slots
        # walks the whole table: rebuild it so the per-pass copy is O(hosts in flight)
        states = self.iterator.host_states
        live = dict(states)
        states.clear()
        states.update(live)

    def give_back(self):
        """Every state back into the iterator (TQM reads the failed hosts from them), even after an error."""
        self.parking = False
        self.iterator.host_states.update(self.parked)
        self.parked = {}
