# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""Action plugin for nodewright.bridge.rollout_plan: read CR, policy and node files on the controller.

Playbooks keep CRs next to them (``files/``, role ``files/``); a module would look for
those paths on the managed host. This plugin resolves string arguments the way ``copy``
and ``template`` do (``_find_needle``), loads them with the play's loader (so vaulted files
work), and hands the parsed documents to the module.
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

FILE_ARGUMENTS = ('cr', 'policy', 'nodes')


class ActionModule(ActionBase):

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
        if name == 'nodes' and len(docs) == 1:
            return docs[0]
        return docs

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        args = dict(self._task.args)
        try:
            for name in FILE_ARGUMENTS:
                if isinstance(args.get(name), str):
                    args[name] = self._load_file(name, args[name])
        except AnsibleError as exc:
            result.update(failed=True, msg=to_native(exc))
            return result
        result.update(self._execute_module(module_name='nodewright.bridge.rollout_plan', module_args=args,
                                           task_vars=task_vars))
        return result
