# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""The collection's cluster modules, listed once: every module that talks to the API server.

Each has its code here (``cluster_modules/<name>.py``: ``module_args()`` and ``execute(module)``),
its documentation in ``plugins/modules/<name>.py`` and an action plugin ``plugins/action/<name>.py``
(a file of one import of the shared one, node_cordon.py's ``ActionModule``, which finds the task's
module here by its resolved action; node_update's is its own: it runs the sequence). What follows this list:

* the action plugins (``plugin_utils/execution/cluster_action.py``) find a task's code and its file arguments here;
* the sequence engine (``plugin_utils/execution/sequence_engine.py``) runs the modules that have a ``kind``;
* the rollout timeline (``plugin_utils/reporting/rollout_state.py``) colours a module's step by its ``kind``;
* ``meta/runtime.yml``'s action group ``cluster`` is static YAML; a unit test keeps it equal to this list.

No import of the code modules at import time: this package's ``__init__`` is loaded with each of
them (in a module's AnsiballZ payload too), and must stay small and free of I/O. The controller side
imports them with ``ClusterModule.import_code``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib

COLLECTION = 'nodewright.bridge'
CODE_PACKAGE = 'ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules'


class ClusterModule(object):
    """One cluster module.

    ``kind``: what its step is in node_update's sequence, for the timeline (``plan``, ``cordon``, ``drain``...);
    None for a module that is no step of the sequence (the timeline shows its task as a plain ``task``).
    ``file_arguments``: options that may name a file next to the playbook, read on the controller by the
    action plugin (``_find_needle``, vault) and handed to the module parsed.
    ``changes_node_status``: a change it makes is a node transition that the CR's status reports.
    """

    def __init__(self, name, kind=None, file_arguments=(), changes_node_status=False):
        self.name = name
        self.kind = kind
        self.file_arguments = tuple(file_arguments)
        self.changes_node_status = changes_node_status

    @property
    def fqcn(self):
        return '%s.%s' % (COLLECTION, self.name)

    @property
    def code(self):
        """The import name of its code (module_utils/cluster_modules/<name>.py)."""
        return '%s.%s' % (CODE_PACKAGE, self.name)

    def import_code(self):
        """Its code module, imported (the controller side: action plugins, the sequence engine)."""
        return importlib.import_module(self.code)

    @property
    def is_step(self):
        """Whether node_update's sequence runs it (so the sequence engine imports its code)."""
        return self.kind is not None

    def __repr__(self):
        return 'ClusterModule(%r)' % self.name


# In meta/runtime.yml's order.
_ALL = (
    ClusterModule('node_cordon', kind='cordon', changes_node_status=True),
    ClusterModule('node_drain', kind='drain'),
    ClusterModule('node_health', kind='health'),
    ClusterModule('node_interrupt', kind='interrupt', file_arguments=('cr',), changes_node_status=True),
    ClusterModule('node_state', kind='state', changes_node_status=True),
    ClusterModule('node_update', file_arguments=('cr',)),
    ClusterModule('package_stage', kind='stage', file_arguments=('cr',), changes_node_status=True),
    ClusterModule('rollout_plan', kind='plan', file_arguments=('cr', 'policy', 'nodes')),
    ClusterModule('operator_guard', kind='guard'),
    ClusterModule('cr_status'),
    ClusterModule('cr_finalize'),
    ClusterModule('package_config'),
    ClusterModule('rollout_metrics'),
)

# By short name (node_drain).
MODULES = dict((module.name, module) for module in _ALL)
NAMES = tuple(module.name for module in _ALL)


def by_action(action):
    """The module a task's action names: ``nodewright.bridge.node_drain``, ``node_drain`` (with ``collections:``)
    or any other prefix ansible-core resolved it under (``ansible.legacy.node_drain``); None when it is none of ours.
    """
    return MODULES.get(str(action or '').rsplit('.', 1)[-1])


def step_modules():
    """The modules node_update's sequence runs, by short name."""
    return [module for module in _ALL if module.is_step]
