# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""The budgeted strategy's glue to ansible-core's play objects: the rollout a play asks for, and its host states.

``rollout_phases`` reads the play's variables (templated as a play's are) and its hosts' compartment
variables into rollout_config's phases, each checked before any host runs; ``PlayCore`` is what a budgeted play
touches of ansible-core (the iterator, TQM's failed and unreachable hosts and stats, the variable manager), and
its ``HostParking`` keeps the iterator's states of the hosts not in flight aside. Nothing here decides admission
(admission.py).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleError
from ansible.executor.play_iterator import HostState
from ansible.module_utils.common.text.converters import to_text
from ansible.template import Templar

from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution import core_internals
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
        return to_text(core_internals.file_bytes(loader, real), errors='surrogate_or_strict')  # 2.16-2.18: vault-aware
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
    try:
        prepared = rollout_config.prepare_phases(
            phases, play_hosts, lambda phase, hosts: host_inputs(play, phase, hosts, variable_manager, loader),
            name_of=lambda host: host.name)
    except rollout_config.RolloutConfigError as exc:
        raise config_error(name, exc.errors)
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


class PlayCore(object):
    """What a budgeted play touches of ansible-core: the same state the stock strategies touch, nothing else.

    The iterator (and, aside from it, the states of the hosts not in flight), TQM's failed and unreachable hosts
    and stats, the variable manager and the loader, and the play's hosts. Private names of ansible-core are read
    through execution/core_internals.py.
    """

    def __init__(self, iterator, tqm, variable_manager, loader, play_hosts):
        self.iterator, self.tqm, self.variable_manager, self.loader = iterator, tqm, variable_manager, loader
        self.hosts = dict((h.name, h) for h in play_hosts)  # name -> Host, every host of the play
        self.play_hosts = play_hosts  # the restriction to restore at the end
        self.parking = HostParking(iterator)  # the host states not in flight, kept aside

    def play(self):
        """The Play being run."""
        return core_internals.play_of(self.iterator)

    def excluded_before(self):
        """name -> why, for the play's hosts that failed or were unreachable before the play."""
        excluded = {}
        for host in self.play_hosts:
            if self.unreachable(host.name):
                excluded[host.name] = 'unreachable in an earlier play'
            elif self.iterator.is_failed(host):
                excluded[host.name] = 'failed in an earlier play'
        return excluded

    def unreachable(self, name):
        """Whether host ``name`` is unreachable in this run."""
        return name in core_internals.unreachable_hosts(self.tqm)

    def failed(self, name):
        """Whether TQM counts host ``name`` failed (a failed task, or marked so by the strategy)."""
        return name in core_internals.failed_hosts(self.tqm)

    def host_failed(self, name):
        """Whether host ``name`` ended unreachable or failed (and not rescued), as the recap will count it."""
        return self.unreachable(name) or self.failed(name) or self.iterator.is_failed(self.hosts[name])

    def ending_reason(self):
        """Why the play is ending (``end_play``, ``terminated``), or None."""
        if self.iterator.end_play:
            return 'end_play'
        if core_internals.terminated(self.tqm):
            return 'terminated'
        return None

    def set_host_vars(self, name, variables):
        """Set host variables of ``name`` (in the order given), as set_fact would."""
        for variable, value in variables:
            self.variable_manager.set_host_variable(name, variable, value)

    def restart(self, name):
        """Host ``name`` runs the play's tasks again from the start, roles included (a later phase)."""
        self.parking.park(name, HostState(blocks=core_internals.play_blocks(self.iterator)))
        forget_roles(self.play(), name)

    def retire(self, names):
        """Hosts done in this phase: their final state stored, then set aside.

        What StrategyBase.run's final pass does for the hosts it still sees: storing the final state
        (peeking does not) lets is_failed and get_failed_hosts see the truth.
        """
        for name in names:
            if not self.unreachable(name):
                self.iterator.get_next_task_for_host(self.hosts[name])
            self.parking.park(name)
        self.parking.compact()

    def count_skipped(self, name):
        """The recap lists ``name`` as skipped (a host never admitted, instead of missing from the recap)."""
        core_internals.stats(self.tqm).increment('skipped', name)

    def mark_failed(self, name):
        """Like a failed host: later plays and the retry file see it."""
        core_internals.mark_failed(self.tqm, name)

    def set_custom_stat(self, name, value):
        """The run's custom stat ``name`` (set_stats' kind, for every host)."""
        core_internals.stats(self.tqm).set_custom_stats(name, value)

    def result_code(self, result, stopped):
        """The play's result code from the loop's ``result``; ``stopped``: a rollout of the play stopped."""
        tqm = self.tqm
        # 2.16's linear loop flags any_errors_fatal with RUN_FAILED_BREAK_PLAY (ending every later
        # play); 2.17+ only fails the batch. Use the 2.17+ behaviour on every version.
        result = int(result) & ~tqm.RUN_FAILED_BREAK_PLAY
        if result == tqm.RUN_OK:
            if core_internals.unreachable_hosts(tqm):
                result = tqm.RUN_UNREACHABLE_HOSTS
            elif stopped or self.iterator.get_failed_hosts() or core_internals.failed_hosts(tqm):
                result = tqm.RUN_FAILED_HOSTS
        return result


def forget_roles(play, host_name):
    """Let ``host_name`` run the play's roles again (a later phase), as if it had not run them in this play."""
    for roles in (getattr(play, 'role_cache', None) or {}).values():
        for role in roles if isinstance(roles, list) else [roles]:
            for record in core_internals.role_host_records(role):
                record.pop(host_name, None)
