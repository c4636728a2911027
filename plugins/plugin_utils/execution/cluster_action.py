# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""Base of the collection's action plugins: every cluster module has one.

Which module: the registry (module_utils/cluster_modules) lists the cluster modules, and every
``plugins/action/<m>.py`` but node_update's is a file of one import of node_cordon.py's ``ActionModule``
(this class as it is; a file, not a symlink, which antsibull-docs would read as an alias of the module
it points to), so the task's resolved action says which module it runs (``find_module``); the registry
gives its code and its file arguments.

Two jobs, both on the controller:

* Files: playbooks keep CRs next to them (``files/``, role ``files/``); a module would look
  for those paths on the managed host. Arguments listed in FILE_ARGUMENTS are resolved the way
  ``copy`` and ``template`` do (``_find_needle``), loaded with the play's loader (so vaulted
  files work), and handed to the module parsed.
* Where the module runs: execution/venue.py decides (``venue.run``), in this worker process or as a module.

Importing this file loads no module code and starts nothing: the budgeted strategy loads what the
workers share before they fork (``venue.PlayVenue.start``); a task under another strategy imports its
module's code when it first runs (``find_module``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import contextlib
import json

from ansible.errors import AnsibleError
from ansible.module_utils.common.text.converters import to_native, to_text
from ansible.plugins.action import ActionBase

from ansible_collections.nodewright.bridge.plugins.module_utils import cluster_modules
from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube
from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution import core_internals
from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution import in_process
from ansible_collections.nodewright.bridge.plugins.plugin_utils.execution import venue

try:
    import yaml
except ImportError:  # pragma: no cover - PyYAML ships with ansible-core
    yaml = None


class ClusterAction(ActionBase):
    """The task's cluster module, found in the registry by the task's action (``find_module``).

    MODULE (the FQCN), MODULE_CODE (the imported code) and FILE_ARGUMENTS are the registry's; an action
    plugin for a module outside the registry (the tests') sets the three itself.
    """

    MODULE = None
    MODULE_CODE = None
    FILE_ARGUMENTS = ()
    # Arguments whose file holds exactly one document, handed over as that document.
    SINGLE_DOCUMENT = ('nodes',)

    TRANSFERS_FILES = False
    _supports_check_mode = True
    # an async task runs as a module under the async wrapper (venue.run); node_update refuses it there
    _supports_async = True

    def _load_file(self, name, value):
        try:
            path = self._find_needle('files', value)
        except AnsibleError as exc:
            raise AnsibleError('%s: cannot find file %r: %s' % (name, value, to_native(exc)))
        text = to_text(core_internals.file_bytes(self._loader, path), errors='surrogate_or_strict')
        try:
            return json.loads(text)
        except ValueError:
            pass
        if yaml is None:
            raise AnsibleError('%s: PyYAML is required to read %s' % (name, path))
        try:
            docs = [d for d in yaml.safe_load_all(text) if d is not None]
        except yaml.YAMLError as exc:
            raise AnsibleError('%s: %s is not valid YAML or JSON: %s' % (name, path, to_native(exc)))
        if name in self.SINGLE_DOCUMENT and len(docs) == 1:
            return docs[0]
        return docs

    def find_module(self):
        """MODULE, MODULE_CODE and FILE_ARGUMENTS of the task's module, from the registry; an error message or None.

        The task's resolved action is the module's FQCN however the task names it (``node_drain`` with
        ``collections:``, ``nodewright.bridge.node_drain``); its short name decides, since this plugin is the
        collection's own whatever prefix ansible-core found it under.
        """
        if self.MODULE is not None:
            return None  # set by the class
        action = getattr(self._task, 'resolved_action', None) or self._task.action
        module = cluster_modules.by_action(action)
        if module is None:
            return '%s is not one of the cluster modules of %s (%s)' % (
                action, cluster_modules.COLLECTION, ', '.join(cluster_modules.NAMES))
        self.MODULE, self.MODULE_CODE, self.FILE_ARGUMENTS = module.fqcn, module.import_code(), module.file_arguments
        return None

    def run(self, tmp=None, task_vars=None):
        result = super(ClusterAction, self).run(tmp, task_vars)
        del tmp
        unknown = self.find_module()
        if unknown is not None:
            result.update(failed=True, msg=unknown)
            return result
        args = dict(self._task.args)
        try:
            for name in self.FILE_ARGUMENTS:
                if isinstance(args.get(name), str):
                    args[name] = self._load_file(name, args[name])
        except AnsibleError as exc:
            result.update(failed=True, msg=to_native(exc))
            return result
        # where it runs (this process, the sequence engine, or a module) is the venue's one decision
        result.update(venue.run(self, args, task_vars))
        return result

    @contextlib.contextmanager
    def task_process(self):
        """This worker made ready for module code: the task's ``environment:`` in os.environ (the
        ``K8S_AUTH_*`` fallbacks read it), and the kubeconfig loader's temporary files removed after."""
        with in_process.TaskEnvironment(self.task_environment()), kube.own_temp_files():
            yield

    def task_environment(self):
        """The task's ``environment:`` (empty when it sets none)."""
        environment = {}
        self._compute_environment_string(environment)
        return environment
