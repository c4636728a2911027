# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""How a node waiting for its protected pods gives its batch slot back, and asks for one again: a mailbox.

A node's drain waits for the pods of the CR's ``podNonInterruptLabels`` before it evicts anything
(node_drain ``wait_for``). While it waits, only protected pods run on the cordoned node, so it need
not hold a slot of its compartment's budget (docs/semantics.md 34): the budgeted strategy gives the
slot to the next node and takes the waiting one back, at the front of its compartment's queue, once
its pods have finished. The drain runs in a task (a worker, or a thread of the sequence engine) and
the strategy in ``ansible-playbook``: they share only the controller's filesystem, so they talk
through files in a directory only this user can open, which the strategy creates per play:

* ``<host>.park``: the task's "I wait for these pods; my slot is free" (JSON: pods, since);
* ``<host>.rejoin``: "my pods are gone; I need a slot before I drain";
* ``<host>.answer``: the strategy's reply to a rejoin (JSON: ``go`` true, or false with ``reason``
  when the rollout stopped meanwhile).

Each file is written whole (a temporary file renamed), read once and removed by its reader. The task
side gives up when the directory goes (the play ended) or the strategy's process is gone.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import json
import os
import shutil
import tempfile
import time

PARK = 'park'
REJOIN = 'rejoin'
ANSWER = 'answer'
KINDS = (PARK, REJOIN)
POLL_SECONDS = 0.25
# The ``park`` option of node_drain and node_update (doc fragment nodewright.bridge.park): what the strategy hands a task.
PARK_ARGUMENT = dict(type='dict', options=dict(dir=dict(type='path'), host=dict(type='str'), pid=dict(type='int'),
                                               warn_after=dict(type='float')))


class Stopped(Exception):
    """No slot will come: the rollout stopped, the play ended, or the strategy is gone. The message says which."""


def _write(directory, name, payload):
    fd, tmp = tempfile.mkstemp(dir=directory, prefix='.%s.' % name)
    with os.fdopen(fd, 'w') as handle:
        json.dump(payload, handle)
    os.rename(tmp, os.path.join(directory, name))


def _read_and_remove(path):
    try:
        with open(path) as handle:
            text = handle.read()
        os.unlink(path)
    except (IOError, OSError):
        return None
    try:
        payload = json.loads(text)
    except ValueError:
        return {}
    return payload if isinstance(payload, dict) else {}


def process_alive(pid):
    """Whether process ``pid`` of this machine's pid namespace exists (EPERM: it does, it is someone else's)."""
    try:
        os.kill(pid, 0)
    except OSError as exc:
        return exc.errno != errno.ESRCH
    return True


class NodeSlot(object):
    """The task's side for one host: ``park``, then ``rejoin`` and ``wait_answer``."""

    def __init__(self, directory, host, pid=None, clock=time.time, sleep=time.sleep):
        self.directory = directory
        self.host = host
        self.pid = pid
        self.clock = clock
        self.sleep = sleep

    @classmethod
    def of(cls, park):
        """From node_drain's ``park`` option (``{dir, host, pid}``), or None when the task may not park."""
        if not park or not park.get('dir') or not park.get('host'):
            return None
        return cls(park['dir'], park['host'], park.get('pid'))

    def usable(self):
        """Whether the strategy's mailbox is there (a task delegated to another host cannot reach it)."""
        return os.path.isdir(self.directory)

    def park(self, pods, since):
        _write(self.directory, '%s.%s' % (self.host, PARK), {'pods': list(pods), 'since': since})

    def rejoin(self):
        _write(self.directory, '%s.%s' % (self.host, REJOIN), {})

    def wait_answer(self, stop=None):
        """Block until the strategy answers the rejoin; raises Stopped when it says no or is gone.

        ``stop()``: a reason to give up early (a pause read meanwhile), or None.
        """
        path = os.path.join(self.directory, '%s.%s' % (self.host, ANSWER))
        while True:
            answer = _read_and_remove(path)
            if answer is not None:
                if answer.get('go'):
                    return
                raise Stopped(answer.get('reason') or 'the rollout stopped')
            if not os.path.isdir(self.directory):
                raise Stopped('the play ended before a batch slot was free')
            if self.pid and not process_alive(self.pid):
                raise Stopped('ansible-playbook (pid %d) is gone' % self.pid)
            reason = stop() if stop is not None else None
            if reason:
                raise Stopped(reason)
            self.sleep(POLL_SECONDS)


class Mailbox(object):
    """The strategy's side: ``read`` the hosts' messages, ``answer`` a rejoin; ``close`` at the end of the play."""

    def __init__(self, directory):
        self.directory = directory

    @classmethod
    def create(cls):
        return cls(tempfile.mkdtemp(prefix='nodewright-slots-'))  # mode 0700: only this user

    def read(self):
        """``[(host, kind, payload)]``: the messages since the last read, a host's park before its rejoin."""
        try:
            names = os.listdir(self.directory)
        except OSError:
            return []
        messages = []
        for name in names:
            host, dot, kind = name.rpartition('.')
            if not dot or not host or kind not in KINDS or name.startswith('.'):
                continue
            payload = _read_and_remove(os.path.join(self.directory, name))
            if payload is not None:
                messages.append((host, kind, payload))
        messages.sort(key=lambda m: (KINDS.index(m[1]), m[0]))
        return messages

    def answer(self, host, go, reason=''):
        _write(self.directory, '%s.%s' % (host, ANSWER), {'go': bool(go), 'reason': reason})

    def close(self):
        shutil.rmtree(self.directory, ignore_errors=True)
