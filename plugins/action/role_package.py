# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""Action plugin for nodewright.bridge.role_package: an Ansible role or playbook built as a NodeWright package image,
on the controller with podman.

What the package is (stages, config.json, interrupts, the CR snippet) is module_utils/contract/role_package.py's; podman is
plugin_utils/rendering/image_build.py's; this reads the role (or the playbook's directory) and the collections it needs from the controller's paths, writes
the build contexts and reports.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import shutil
import tempfile

from ansible import constants as C
from ansible.plugins.action import ActionBase
from ansible.utils.collection_loader import AnsibleCollectionConfig

from ansible_collections.nodewright.bridge.plugins.module_utils.contract import playbook_package as pp
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import role_package as rp
from ansible_collections.nodewright.bridge.plugins.modules.role_package import ARGUMENT_RULES, argument_spec
from ansible_collections.nodewright.bridge.plugins.plugin_utils.rendering import ansible_yaml, image_build

# the collection's package_runtime/ (plugins/action/role_package.py -> the collection's root)
RUNTIME_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                           'package_runtime')
RUNTIME_REPOSITORY = 'localhost/nodewright-bridge-role-runtime'
CONTEXT_LABEL = 'org.nodewright.bridge.context'


def _collection_dirs():
    paths = list(AnsibleCollectionConfig.collection_paths or []) + list(C.COLLECTIONS_PATHS or [])
    return [p for p in dict.fromkeys(os.path.expanduser(p) for p in paths) if os.path.isdir(p)]


def _find_collection(name):
    namespace, collection = name.split('.')
    for base in _collection_dirs():
        path = os.path.join(base, 'ansible_collections', namespace, collection)
        if os.path.isdir(path):
            return path
    return None


def _find_role(role, search):
    """(path, name) of a role given as a path, a name on the roles path (or next to the playbook) or an FQCN."""
    if os.path.isdir(os.path.expanduser(role)):
        path = os.path.abspath(os.path.expanduser(role))
        return path, os.path.basename(path.rstrip('/'))
    if role.count('.') == 2:
        namespace, collection, name = role.split('.')
        found = _find_collection('%s.%s' % (namespace, collection))
        path = found and os.path.join(found, 'roles', name)
        if path and os.path.isdir(path):
            return path, name
        raise rp.RolePackageError('role %s: not found in the collections paths %s' % (role, ', '.join(_collection_dirs())))
    for base in search:
        path = os.path.join(os.path.expanduser(base), role)
        if os.path.isdir(path):
            return path, role
    raise rp.RolePackageError('role %s: not a directory, and not found in %s' % (role, ', '.join(search)))


def _read_tree(root, skip=('.git',)):
    """path relative to ``root`` -> (bytes, executable), every file (symlinks followed)."""
    files = {}
    for directory, dirs, names in os.walk(root, followlinks=True):
        dirs[:] = sorted(d for d in dirs if d not in skip)
        for name in sorted(names):
            path = os.path.join(directory, name)
            with open(path, 'rb') as handle:
                files[os.path.relpath(path, root)] = (handle.read(), os.access(path, os.X_OK))
    return files


def _text(files):
    out = {}
    for path, (data, dummy) in files.items():
        try:
            out[path] = data.decode('utf-8')
        except UnicodeDecodeError:
            out[path] = None
    return out


def _dump(value):
    if isinstance(value, str):
        return value
    return ansible_yaml.dump(value, sort_keys=True).rstrip('\n').replace('\n...', '')


def _runtime_files():
    files = {}
    for source, target in sorted(rp.RUNTIME_FILES.items()):
        with open(os.path.join(RUNTIME_DIR, source), 'rb') as handle:
            files['files/' + target] = (handle.read(), target.endswith('.sh') or target == 'runtime/bin/python')
    for name in rp.RUNTIME_BUILD_FILES:
        with open(os.path.join(RUNTIME_DIR, name), 'rb') as handle:
            files[name] = (handle.read(), name.endswith('.sh'))
    return files


def _read_source(path, kind, name, loader, allow_vault):
    """(raw files, texts) of a role's or a playbook's directory, its vault values refused first (before any YAML
    of it is read otherwise)."""
    raw = _read_tree(path)
    texts = dict((p, t) for p, t in _text(raw).items() if t is not None)
    rp.refuse_vaulted({'kind': kind, 'name': name, 'files': texts}, loader, allow=allow_vault)
    return raw, texts


def _describe_role(params, basedir):
    search = list(C.DEFAULT_ROLES_PATH or [])
    if basedir:
        search = [os.path.join(basedir, 'roles'), basedir] + search
    path, role_name = _find_role(params['role'], search)
    raw, texts = _read_source(path, 'role', role_name, ansible_yaml.load, params['allow_vault'])
    role = rp.role_from_files(role_name, texts)
    stages = rp.stage_map(role, params['stages'], ansible_yaml.load)
    found = rp.interrupts(role, stages, ansible_yaml.load)
    collections = rp.needed_collections(role, texts.get('meta/main.yml'), ansible_yaml.load)
    files = dict(('skyhook-package/skyhook_dir/roles/%s/%s' % (role_name, p), v) for p, v in raw.items())
    files['skyhook-package/skyhook_dir/roles/%s/handlers/%s' % (role_name, rp.HANDLERS_FILE)] = (
        ansible_yaml.dump(found['handlers']).encode('utf-8'), False)
    files['skyhook-package/skyhook_dir/' + rp.PACKAGE_FILE] = (
        rp.runtime_manifest(role_name, stages, params['gather_facts']).encode('utf-8'), False)
    return {'kind': 'role', 'source': role_name, 'path': path,
            'name': params['name'] or _package_name(role_name), 'stages': stages, 'found': found,
            'collections': collections, 'config_map': rp.config_map_skeleton(role, ansible_yaml.load, _dump),
            'files': files}


def _find_playbook(playbook, basedir):
    """(the playbook's directory, the file's path in it) of a playbook file, relative to the play's directory or to
    the working directory."""
    candidates = [os.path.expanduser(playbook)] + ([os.path.join(basedir, playbook)] if basedir else [])
    for candidate in candidates:
        if os.path.isfile(candidate):
            path = os.path.abspath(candidate)
            return os.path.dirname(path), os.path.basename(path)
    raise rp.RolePackageError('playbook %s: not a file' % playbook)


def _describe_playbook(params, basedir):
    directory, playbook = _find_playbook(params['playbook'], basedir)
    raw, texts = _read_source(directory, 'playbook', playbook, ansible_yaml.load, params['allow_vault'])
    source = pp.playbook_from_files(playbook, texts)
    stages = pp.stage_map(source, params['stages'], ansible_yaml.load)
    found = pp.interrupts(source, stages, ansible_yaml.load)
    groups = pp.host_groups([g for s in stages.values() if 'playbook' in s
                             for g in pp.playbook_graph(source, s['playbook'], ansible_yaml.load)])
    collections = pp.needed_collections(source, stages, ansible_yaml.load)
    run, generated = pp.run_files(stages, found, params['gather_facts'])
    prefix = 'skyhook-package/skyhook_dir/%s/' % pp.PLAYBOOK_DIR
    files = dict((prefix + p, v) for p, v in raw.items())
    files.update((prefix + p, (ansible_yaml.dump(data).encode('utf-8'), False)) for p, data in generated.items())
    name = params['name'] or _package_name(source['name'])
    files['skyhook-package/skyhook_dir/' + rp.PACKAGE_FILE] = (
        pp.runtime_manifest(name, stages, run, groups).encode('utf-8'), False)
    return {'kind': 'playbook', 'source': playbook, 'path': directory,
            'name': name, 'stages': stages, 'found': found, 'collections': collections,
            'config_map': pp.config_map_skeleton(source, stages, ansible_yaml.load, _dump), 'files': files}


def _package_name(source_name):
    return source_name.replace('_', '-').lower()


def same_image(podman, ref, context, pull=False, tls_verify=True):
    """Whether ``ref`` is already the image of this content (its CONTEXT_LABEL is ``context``): in podman's storage,
    or, with ``pull`` and not there, in the registry (pulled, so that it is here and not built again)."""
    before = podman.inspect(ref)
    if before is None and pull and podman.pull(ref, tls_verify=tls_verify):
        before = podman.inspect(ref)
    return before is not None and (before.get('Labels') or {}).get(CONTEXT_LABEL) == context


class ActionModule(ActionBase):

    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        dummy, params = self.validate_argument_spec(argument_spec=argument_spec(), **ARGUMENT_RULES)
        try:
            result.update(self._package(params, task_vars or {}))
        except (rp.RolePackageError, image_build.ImageBuildError) as exc:
            result.update(failed=True, msg=str(exc))
        return result

    def _describe(self, params, task_vars):
        """Everything but the build: the source read, its stages, interrupts, collections, the package's files."""
        basedir = task_vars.get('playbook_dir')
        if params['playbook']:
            described = _describe_playbook(params, basedir)
        else:
            described = _describe_role(params, basedir)
        for collection in described['collections']:
            where = _find_collection(collection)
            if where is None:
                raise rp.RolePackageError('%s %s needs the collection %s: not found in the collections paths %s'
                                          % (described['kind'], described['source'], collection, ', '.join(_collection_dirs())))
            prefix = 'skyhook-package/skyhook_dir/collections/ansible_collections/%s/' % collection.replace('.', '/')
            described['files'].update(dict((prefix + p, v) for p, v in _read_tree(where, skip=('.git', 'tests')).items()))
        described['files']['skyhook-package/config.json'] = (json.dumps(
            rp.config_json(described['name'], params['version'], described['stages']), indent=1, sort_keys=True).encode('utf-8'), False)
        return described

    def _package(self, params, task_vars):
        described = self._describe(params, task_vars)
        tag = params['tag'] or params['version']
        ref = '%s:%s' % (params['image'], tag)
        runtime_files = _runtime_files()
        runtime_containerfile = rp.runtime_containerfile(params['base_image'])
        runtime_ref = '%s:%s' % (RUNTIME_REPOSITORY, image_build.tree_digest(runtime_files, runtime_containerfile)[:16])
        context = image_build.tree_digest(described['files'], runtime_ref)
        found = described['found']
        out = {'image': ref, 'runtime_image': runtime_ref, 'package_name': described['name'], described['kind']: described['source'],
               'stages': described['stages'], 'collections': described['collections'],
               'unmapped_handlers': found['unmapped'], 'mapped_handlers': found['mapped'],
               'package': {described['name']: rp.package_spec(params['image'], tag, found, described['config_map'])},
               'context_digest': context}
        podman = image_build.Podman(params['podman'])
        # pushed, the image's home is its registry: a tag missing here but there with the same content is no change
        same = same_image(podman, ref, context, pull=params['push'] and not self._task.check_mode,
                          tls_verify=params['tls_verify'])
        out['changed'] = not same
        if self._task.check_mode:
            return out
        if not same:
            if podman.inspect(runtime_ref) is None:
                self._build(podman, runtime_files, runtime_containerfile, runtime_ref)
            containerfile = rp.package_containerfile(runtime_ref, {CONTEXT_LABEL: context})
            self._build(podman, described['files'], containerfile, ref)
        after = podman.inspect(ref)
        out.update(image_id=after['Id'], size=after.get('Size'))
        if params['push']:
            out['digest'] = podman.push(ref, tls_verify=params['tls_verify'])
        return out

    @staticmethod
    def _build(podman, files, containerfile, ref):
        work = tempfile.mkdtemp(prefix='nodewright-package-')
        try:
            image_build.write_tree(work, dict(files, Containerfile=containerfile))
            podman.build(work, ref)
        finally:
            shutil.rmtree(work, ignore_errors=True)
