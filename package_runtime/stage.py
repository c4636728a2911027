# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""One agent step of a role package (nodewright.bridge.role_package): ``stage.py <mode>``.

Runs in the package's own Python (runtime/bin/python) on the host, where the agent runs every step: the role's
task file for the mode (nodewright_role_package.json, written at build time) with ansible-core's local connection,
so the tasks act on the host's root. A package built from a playbook runs the playbook file the manifest names for
the mode, with an inventory of one host (localhost) in every group its plays name, and ``ansible_connection:
local`` as an extra variable, so that every play runs on the host. The CR's configMap keys (the agent puts them in ${SKYHOOK_DIR}/configmaps)
are the role's variables, each value read as YAML. A ``-check`` mode runs the role's verify tasks, or the stage's
tasks in check mode and fails when any task would change. The play's output goes to the step's stdout, so the
failing task and its message are in the step's log (kubectl skyhook package logs, the collection's messages).
Exit status: the play's, or 1 when a check finds a change.
"""

import json
import os
import re
import shutil
import sys
import tempfile

import yaml

VARIABLE = re.compile(r'^[A-Za-z_][A-Za-z0-9_]*$')


def _variables(skyhook_dir, mode):
    """The configMap keys as variables (values parsed as YAML; a key that is no variable name is said and left)."""
    found = {'nodewright_stage': mode}
    for name, env in (('nodewright_previous_version', 'PREVIOUS_VERSION'), ('nodewright_current_version', 'CURRENT_VERSION')):
        if os.environ.get(env):
            found[name] = os.environ[env]
    directory = os.path.join(skyhook_dir, 'configmaps')
    for key in sorted(os.listdir(directory)) if os.path.isdir(directory) else []:
        path = os.path.join(directory, key)
        if not os.path.isfile(path):
            continue
        if not VARIABLE.match(key):
            print('nodewright: configMap key %r is not a variable name: not passed to the role' % key)
            continue
        with open(path) as handle:
            text = handle.read()
        try:
            found[key] = yaml.safe_load(text)
        except yaml.YAMLError:
            found[key] = text
    return found


def _playbook(manifest, stage, package_name, mode, python):
    return [{'name': 'NodeWright package %s | %s' % (package_name, mode), 'hosts': 'localhost',
             'connection': 'local', 'gather_facts': manifest['gather_facts'],
             'vars': {'ansible_python_interpreter': python},
             'tasks': [{'name': '%s (tasks/%s)' % (manifest['role'], stage['tasks']),
                        'ansible.builtin.import_role': {'name': manifest['role'], 'tasks_from': stage['tasks'],
                                                        'handlers_from': manifest['handlers_from']}}]}]


def _inventory(groups):
    """The step's inventory for a playbook: the host, localhost, in every group the plays name."""
    host = {'localhost': {}}
    return {'all': {'hosts': host, 'children': dict((g, {'hosts': host}) for g in groups)}}


def _stage_playbook(manifest, stage, package_name, mode, work):
    """(the playbook the step runs, its inventory, the extra variables it adds), for a role or a playbook."""
    runtime = os.path.dirname(os.path.abspath(__file__))
    package_dir = os.path.dirname(runtime)
    python = os.path.join(runtime, 'bin', 'python')
    if manifest.get('kind') == 'playbook':
        inventory = os.path.join(work, 'inventory.yml')
        with open(inventory, 'w') as out:
            yaml.safe_dump(_inventory(manifest['groups']), out)
        playbook = os.path.join(package_dir, manifest['playbook_dir'], stage['run'])
        return playbook, inventory, {'ansible_connection': 'local', 'ansible_python_interpreter': python}
    playbook = os.path.join(work, 'stage.yml')
    with open(playbook, 'w') as out:
        yaml.safe_dump(_playbook(manifest, stage, package_name, mode, python), out)
    return playbook, 'localhost,', {}


def main(argv):
    if len(argv) != 2:
        sys.stderr.write('usage: stage.py <mode>\n')
        return 2
    mode = argv[1]
    runtime = os.path.dirname(os.path.abspath(__file__))
    package_dir = os.path.dirname(runtime)  # skyhook_dir
    skyhook_dir = os.environ.get('SKYHOOK_DIR') or os.path.dirname(package_dir)
    with open(os.path.join(package_dir, 'nodewright_role_package.json')) as handle:
        manifest = json.load(handle)
    stage = manifest['stages'].get(mode)
    if stage is None:
        print('nodewright: this package has no %s stage: nothing to do' % mode)
        return 0
    with open(os.path.join(os.path.dirname(package_dir), 'config.json')) as handle:  # /skyhook-package/config.json
        package_name = json.load(handle).get('package_name') or manifest.get('role') or manifest.get('name')
    work = tempfile.mkdtemp(prefix='nodewright-role-')
    try:
        playbook, inventory, extra = _stage_playbook(manifest, stage, package_name, mode, work)
        variables = os.path.join(work, 'vars.json')
        with open(variables, 'w') as out:
            json.dump(dict(_variables(skyhook_dir, mode), **extra), out)
        result = os.path.join(work, 'result.json')
        os.environ.update({
            'ANSIBLE_HOME': os.path.join(work, 'home'), 'ANSIBLE_LOCAL_TEMP': os.path.join(work, 'tmp'),
            'ANSIBLE_REMOTE_TEMP': os.path.join(work, 'tmp'),
            'ANSIBLE_ROLES_PATH': os.path.join(package_dir, manifest.get('playbook_dir', ''), 'roles'),
            'ANSIBLE_COLLECTIONS_PATH': os.path.join(package_dir, 'collections'),
            'ANSIBLE_CALLBACK_PLUGINS': os.path.join(runtime, 'callback_plugins'),
            'ANSIBLE_CALLBACKS_ENABLED': 'nodewright_stage', 'NODEWRIGHT_STAGE_RESULT': result,
            'ANSIBLE_STDOUT_CALLBACK': 'default', 'ANSIBLE_NOCOLOR': '1', 'ANSIBLE_FORCE_COLOR': '0',
            'ANSIBLE_RETRY_FILES_ENABLED': '0', 'ANSIBLE_LOCALHOST_WARNING': '0',
            'ANSIBLE_INVENTORY_UNPARSED_WARNING': '0', 'ANSIBLE_COLLECTIONS_SCAN_SYS_PATH': '0',
            # each module sent through the local connection's stdin: no temporary files and commands per task
            'ANSIBLE_PIPELINING': '1',
            'ANSIBLE_PYTHON_INTERPRETER': os.path.join(runtime, 'bin', 'python')})
        args = ['ansible-playbook', '-i', inventory, playbook, '-e', '@' + variables]
        if stage['check_mode']:
            args += ['--check', '--diff']
        from ansible.cli.playbook import PlaybookCLI  # pylint: disable=import-outside-toplevel
        try:
            rc = PlaybookCLI.cli_executor(args)
        except SystemExit as exc:
            rc = exc.code if isinstance(exc.code, int) else 1
        if rc == 0 and stage['check_mode'] and os.path.isfile(result):
            with open(result) as handle:
                changed = json.load(handle)['changed']
            if changed:
                print('nodewright: %s failed: in check mode these tasks would change the host: %s'
                      % (mode, '; '.join(changed)))
                return 1
        return rc or 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    sys.exit(main(sys.argv))
