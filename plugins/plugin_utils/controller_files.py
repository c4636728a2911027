# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""Base of the action plugins that read CR, policy and node files on the controller.

Playbooks keep CRs next to them (``files/``, role ``files/``); a module would look for
those paths on the managed host. The action plugins resolve string arguments the way
``copy`` and ``template`` do (``_find_needle``), load them with the play's loader (so
vaulted files work), and hand the parsed documents to the module.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible.errors import AnsibleError
from ansible.module_utils.common.text.converters import to_native, to_text
from ansible.plugins.action import ActionBase

try:
    import yaml
except ImportError:  # pragma: no cover - PyYAML ships with ansible-core
    yaml = None


class ControllerFilesAction(ActionBase):
    """Subclasses set MODULE (the FQCN to run) and FILE_ARGUMENTS (arguments that may be paths)."""

    MODULE = None
    FILE_ARGUMENTS = ()
    # Arguments whose file holds exactly one document, handed over as that document.
    SINGLE_DOCUMENT = ('nodes',)

    TRANSFERS_FILES = False
    _supports_check_mode = True

    def _load_file(self, name, value):
        try:
            path = self._find_needle('files', value)
        except AnsibleError as exc:
            raise AnsibleError('%s: cannot find file %r: %s' % (name, value, to_native(exc)))
        data, dummy = self._loader._get_file_contents(path)
        text = to_text(data, errors='surrogate_or_strict')
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

    def run(self, tmp=None, task_vars=None):
        result = super(ControllerFilesAction, self).run(tmp, task_vars)
        del tmp
        args = dict(self._task.args)
        try:
            for name in self.FILE_ARGUMENTS:
                if isinstance(args.get(name), str):
                    args[name] = self._load_file(name, args[name])
        except AnsibleError as exc:
            result.update(failed=True, msg=to_native(exc))
            return result
        result.update(self._execute_module(module_name=self.MODULE, module_args=args, task_vars=task_vars))
        return result
