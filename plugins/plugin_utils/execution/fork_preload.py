# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""What every forked Ansible worker would otherwise load for itself, loaded once in ``ansible-playbook``.

A worker is a fork of ``ansible-playbook`` and lives as long as its host's task; for
``node_update`` that is a node's whole update, so with forks 50 there are 50 of them at once.
What a worker imports after the fork is private to it. Measured on ansible-core 2.19: the
first template with a filter or a test in a process loads every builtin filter and test plugin
file (``core``, ``mathstuff``, ``encryption``, ``urls``, ...), about 3 MiB, and the parent
never templates task arguments, so every worker loaded them again (docs/in-process.md).
Loading them here, in the parent, lets every worker share them; likewise the ``kubernetes``
client, which ``kube`` imports on first use.

Nothing here happens at import: the process that forks calls ``before_fork`` (the budgeted
strategy, when a play starts, before its workers and the sequence engine fork).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube

# A filter from the builtin filter plugins and a test from the builtin test plugins: using one
# name loads all the files of its kind, as a worker's first template would.
WARM_TEMPLATE = '{{ (nw_preload | default(0) | int) is truthy }}'

_DONE = []


def before_fork():
    """Load, in this process, what its forked workers would each load again: the kubernetes client
    classes every cluster task uses (``kube.preload``: about 0.7 s a process) and the templating plugins.
    Never raises: a preload is an optimisation."""
    kube.preload()
    templating()


def templating():
    """Load the builtin filter and test plugins into this process (once; never raises).

    The template is a constant with no lookups, so rendering it has no effect but the loading.
    """
    if _DONE:
        return
    _DONE.append(True)
    try:
        from ansible.parsing.dataloader import DataLoader
        from ansible.template import Templar
        try:
            from ansible.template import trust_as_template  # ansible-core 2.19+: only trusted strings are templates
        except ImportError:
            def trust_as_template(value):
                return value
        Templar(loader=DataLoader(), variables={}).template(trust_as_template(WARM_TEMPLATE))
    except Exception:  # pylint: disable=broad-except
        # a preload is an optimisation: a worker then loads the plugins itself, as before
        pass
