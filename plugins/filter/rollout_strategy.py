# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
name: rollout_strategy
short_description: The strategy apply's rollout plays run with, the budgeted one when it can be loaded
version_added: 0.2.0
author: nodewright.bridge contributors (@nodewright)
description:
  - Internal to the collection's playbooks (nodewright.bridge.apply), not a stable interface; it may change in any
    release (the collection's C(docs/versioning.md)).
  - Chooses how the apply playbook's rollout plays run. V(nodewright.bridge.budgeted) when the
    C(nodewright.bridge.budgeted) strategy can be loaded by this ansible-core (ansible-core 2.19+ deprecates strategy
    plugins outside C(ansible.builtin); a release may remove them); else V(ansible.builtin.linear), with the
    rollout run by one task on the controller (M(nodewright.bridge.rollout_run)), with the same batches, results, report
    and exit codes.
options:
  _input:
    description:
      - V(auto) (the budgeted strategy where it loads), V(budgeted) (the budgeted strategy, an error where it does not
        load), or V(builtin) (never the budgeted strategy).
    type: str
    default: auto
'''

EXAMPLES = r'''
- name: Decide how the rollout plays run (nodewright_rollout_strategy)
  ansible.builtin.set_fact:
    nw_rollout_strategy: "{{ nodewright_rollout_strategy | default('auto') | nodewright.bridge.rollout_strategy }}"
'''

RETURN = r'''
_value:
  description: The strategy's name, V(nodewright.bridge.budgeted) or V(ansible.builtin.linear).
  type: str
'''

from ansible.errors import AnsibleFilterError

BUDGETED = 'nodewright.bridge.budgeted'
BUILTIN = 'ansible.builtin.linear'
CHOICES = ('auto', 'budgeted', 'builtin')


def budgeted_loads():
    """True when this ansible-core can load the budgeted strategy: it finds the plugin and has the stock strategies
    it builds on. Found, not loaded: loading prints ansible-core's deprecation warning (2.19+), which the play that
    runs it prints anyway."""
    try:
        # pylint: disable=import-outside-toplevel,unused-import
        from ansible.plugins.loader import strategy_loader
        from ansible.plugins.strategy.free import StrategyModule as Free  # noqa: F401
        from ansible.plugins.strategy.linear import StrategyModule as Linear  # noqa: F401
        return strategy_loader.find_plugin(BUDGETED) is not None
    except Exception:  # pylint: disable=broad-except
        # the strategy plugin type or its base classes gone: the builtin path needs neither
        return False


def rollout_strategy(choice='auto', loads=budgeted_loads):
    choice = 'auto' if choice in (None, '') else str(choice).strip().lower()
    if choice not in CHOICES:
        raise AnsibleFilterError('nodewright_rollout_strategy: expected one of %s, got %r' % (', '.join(CHOICES), choice))
    if choice == 'builtin':
        return BUILTIN
    if loads():
        return BUDGETED
    if choice == 'budgeted':
        raise AnsibleFilterError('nodewright_rollout_strategy: budgeted, but this ansible-core cannot load the %s strategy '
                                 '(set auto or builtin: the rollout then runs from one task, docs/strategy.md)' % BUDGETED)
    return BUILTIN


class FilterModule(object):

    def filters(self):
        return {'rollout_strategy': rollout_strategy}
