# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""The nodes of a batch rollout that wait for their protected pods, their slot given back (docs/semantics.md 34).

What an Admission (admission.py) keeps of them: the parked nodes, those whose pods finished and wait for a slot
again (rejoining), and the replies due to their waiting tasks (slot_mailbox). Which node parks, takes its slot
and when is the Admission's; this is only the state and its bookkeeping.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.nodewright.bridge.plugins.plugin_utils.reporting import rollout_state

OK, FAILED, REMOVED = 'ok', 'failed', 'removed'


class ParkedNodes(object):
    """``parked``: name -> {'comp', 'since', 'pods', 'at'} while the node's pods run; ``rejoining``: the same entries,
    once their pods finished and until a batch takes them; ``answers``: ``(name, go, reason)`` due to waiting tasks."""

    def __init__(self):
        self.parked = {}
        self.rejoining = {}
        self.answers = []

    def names(self):
        """Every parked or rejoining node (their tasks still run)."""
        return list(self.parked) + list(self.rejoining)

    def __bool__(self):
        return bool(self.parked or self.rejoining)

    __nonzero__ = __bool__

    def answer(self, name, go, reason=''):
        self.answers.append((name, go, reason))

    def answer_rejoined(self, names):
        """``names`` took a slot: those that were rejoining are told to go on."""
        for name in names:
            if self.rejoining.pop(name, None) is not None:
                self.answer(name, True)

    def deny(self, scheduler, reason=None):
        """A stopped compartment (or an ending play) takes no parked node back: each waiting task is told why, once."""
        for waiting in (self.parked, self.rejoining):
            for name, entry in list(waiting.items()):
                rollout = scheduler.compartment(entry['comp']).rollout
                why = reason or (rollout.stop_reason if rollout.stopped else None)
                if why and not entry.get('denied'):
                    entry['denied'] = True
                    self.answer(name, False, 'the rollout of compartment %s stopped (%s) before node %s took a batch '
                                             'slot again' % (entry['comp'], why, name))

    def take_answers(self):
        """The replies due to waiting tasks, once each: ``[(name, go, reason)]``."""
        answers, self.answers = self.answers, []
        return answers

    def settle(self, ended, scheduler, record):
        """Parked nodes whose task ended before they took a slot again (a failure, a pause): removed from ``ended``
        (name -> outcome) and counted, in no batch. Returns ``[(comp, record)]`` of each."""
        settled = []
        for name in [n for n in ended if n in self.parked or n in self.rejoining]:
            entry = self.parked.pop(name, None) or self.rejoining.pop(name)
            outcome = ended.pop(name)
            scheduler.compartment(entry['comp']).rollout.settle_parked(name, outcome)
            if record is not None:
                rollout_state.node_settled(record, entry['comp'], name, outcome)
            settled.append((entry['comp'], {'hosts': [name], 'ok': [name] if outcome == OK else [],
                                            'failed': [name] if outcome == FAILED else [],
                                            'removed': [name] if outcome == REMOVED else [], 'settled': True}))
        return settled
