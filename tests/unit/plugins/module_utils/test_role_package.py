# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""role_package: a role as a NodeWright package (stages, config.json, interrupts from handlers, the CR snippet)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re
from pathlib import Path

import pytest
import yaml

from ansible_collections.nodewright.bridge.plugins.module_utils.contract import playbook_package as pp
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import role_package as rp
from ansible_collections.nodewright.bridge.plugins.plugin_utils.rendering import ansible_yaml

GPU_TUNING = Path(__file__).resolve().parents[4] / 'examples' / 'roles' / 'gpu_tuning'
GPU_TUNING_PLAYBOOK = Path(__file__).resolve().parents[4] / 'examples' / 'playbooks' / 'gpu_tuning'


def _files(root=GPU_TUNING, **extra):
    files = dict((str(p.relative_to(root)), p.read_text()) for p in root.rglob('*') if p.is_file())
    # tasks__verify='...' is tasks/verify.yml
    files.update(dict((k.replace('__', '/') + ('' if '.' in k else '.yml'), v) for k, v in extra.items()))
    return files


def _role(**extra):
    return rp.role_from_files('gpu_tuning', _files(**extra))


def _dump(value):
    return yaml.safe_dump(value, default_flow_style=True).strip().rstrip('.').strip()


def test_the_default_stages_of_the_guide_role():
    stages = rp.stage_map(_role())
    assert stages == {
        'apply': {'tasks': 'main.yml', 'check_mode': False},
        'apply-check': {'tasks': 'main.yml', 'check_mode': True},
        'config': {'tasks': 'main.yml', 'check_mode': False},  # no config.yml: main again with the new variables
        'config-check': {'tasks': 'main.yml', 'check_mode': True},
        'uninstall': {'tasks': 'uninstall.yml', 'check_mode': False},
        'uninstall-check': {'tasks': 'uninstall.yml', 'check_mode': True},
    }


def test_verify_and_stage_files_of_the_role_and_overrides():
    role = _role(tasks__verify='- ansible.builtin.assert: {that: [true]}\n', tasks__config='[]\n',
                 tasks__upgrade='[]\n', tasks__post_interrupt='[]\n')
    stages = rp.stage_map(role)
    assert stages['config'] == {'tasks': 'config.yml', 'check_mode': False}
    assert stages['apply-check'] == stages['config-check'] == stages['upgrade-check'] == {
        'tasks': 'verify.yml', 'check_mode': False}
    assert stages['uninstall-check'] == {'tasks': 'uninstall.yml', 'check_mode': True}  # verify checks installed
    assert stages['post-interrupt'] == {'tasks': 'post_interrupt.yml', 'check_mode': False}
    changed = rp.stage_map(role, {'config': 'tasks/main.yml', 'apply-check': 'check', 'upgrade': None,
                                  'post-interrupt-check': None})
    assert changed['config']['tasks'] == 'main.yml' and changed['apply-check'] == {'tasks': 'main.yml', 'check_mode': True}
    assert 'upgrade' not in changed and 'upgrade-check' not in changed and 'post-interrupt-check' not in changed


@pytest.mark.parametrize('role, overrides, message', [
    (rp.role_from_files('empty', {'README.md': 'x'}), None, 'role empty has no tasks/main.yml for the apply stage'),
    (None, {'config': 'tasks/tune.yml'}, 'stages.config: role gpu_tuning has no tasks/tune.yml'),
    (None, {'upgrade-check': 'verify'}, 'stages.upgrade-check: the package has no upgrade stage'),
    (None, {'apply': 'check'}, 'stages.apply: check is for a -check stage'),
    (None, {'reboot': 'main'}, 'stages: reboot not a stage'),
])
def test_a_stage_mapping_at_fault_is_named(role, overrides, message):
    with pytest.raises(rp.RolePackageError, match=message.replace('.', r'\.')):
        rp.stage_map(role or _role(), overrides)


def test_no_files_and_vault_encrypted_files_are_refused_by_name():
    with pytest.raises(rp.RolePackageError, match='role gone: no files'):
        rp.role_from_files('gone', {})
    role = _role(vars__secret='$ANSIBLE_VAULT;1.1;AES256\n6231\n')
    with pytest.raises(rp.RolePackageError, match=r'vault-encrypted file\(s\) vars/secret.yml would be baked'):
        rp.refuse_vaulted(role, ansible_yaml.load)
    rp.refuse_vaulted(role, ansible_yaml.load, allow=True)
    rp.refuse_vaulted(_role(), ansible_yaml.load)


def test_config_json_is_the_agents_schema_v1_on_the_host():
    role = _role(tasks__upgrade='[]\n')
    doc = rp.config_json('gpu-tuning', '1.0.0', rp.stage_map(role))
    assert doc['schema_version'] == 'v1' and doc['package_name'] == 'gpu-tuning' and doc['package_version'] == '1.0.0'
    assert sorted(doc['modes']) == ['apply', 'apply-check', 'config', 'config-check', 'uninstall', 'uninstall-check',
                                    'upgrade', 'upgrade-check']
    (apply,) = doc['modes']['apply']
    assert apply == {'name': 'apply', 'path': rp.STAGE_SCRIPT, 'arguments': ['apply'], 'returncodes': [0],
                     'on_host': True, 'env': {}, 'idempotence': True, 'upgrade_step': False}
    (upgrade,) = doc['modes']['upgrade']  # an UpgradeStep takes no arguments (skyhook_agent.step.UpgradeStep)
    assert upgrade['upgrade_step'] is True and upgrade['arguments'] == [] and upgrade['path'] == rp.UPGRADE_SCRIPTS['upgrade']


def test_the_handlers_become_the_package_interrupt_and_the_config_interrupts_of_the_keys_that_fire_them():
    role = _role()
    found = rp.interrupts(role, rp.stage_map(role), yaml.safe_load)
    restart = {'type': 'service', 'services': ['containerd']}
    assert found['interrupt'] == restart and found['mapped'] == {'Restart containerd': restart}
    # only the runtime key notifies the containerd restart; the sysctl keys notify a handler that stays in the stage
    assert found['config_interrupts'] == {'gpu_tuning_default_runtime': restart}
    # the sysctl reload is no interrupt: it runs in the stage, and the result says so, by name
    assert found['unmapped'] == ["handler 'Reload sysctl': ansible.builtin.command 'sysctl --system' is neither a "
                                 "reboot nor a service restart; it runs in the stage"]
    reload_sysctl, stub = found['handlers']
    assert reload_sysctl['ansible.builtin.command'] == 'sysctl --system'
    assert stub['name'] == 'Restart containerd' and 'left to NodeWright' in stub['ansible.builtin.debug']['msg']
    config_map = rp.config_map_skeleton(role, yaml.safe_load, _dump)
    assert config_map == {'gpu_tuning_default_runtime': 'nvidia', 'gpu_tuning_rmem_max': '134217728',
                          'gpu_tuning_swappiness': '1'}
    spec = rp.package_spec('registry.example/gpu-tuning', '1.0.0', found, config_map)
    assert spec == {'image': 'registry.example/gpu-tuning', 'version': '1.0.0', 'interrupt': restart,
                    'configInterrupts': {'gpu_tuning_default_runtime': restart}, 'configMap': config_map}


def test_a_reboot_wins_listen_topics_count_and_a_templated_service_is_not_mapped():
    handlers = ('- name: Reboot\n  ansible.builtin.reboot: {}\n  listen: kernel changed\n'
                '- name: Restart it\n  ansible.builtin.service: {name: "{{ svc }}", state: restarted}\n'
                '- name: Reload nginx\n  service: {name: nginx, state: reloaded}\n')
    tasks = ('- name: Kernel\n  ansible.builtin.copy: {dest: /x, content: "{{ kernel_args }}"}\n  notify: kernel changed\n'
             '- block:\n    - name: Web\n      ansible.builtin.template: {src: a, dest: "{{ web_conf }}"}\n'
             '      notify: [Reload nginx]\n')
    role = rp.role_from_files('r', {'tasks/main.yml': tasks, 'handlers/main.yml': handlers})
    found = rp.interrupts(role, rp.stage_map(role), yaml.safe_load)
    assert found['interrupt'] == {'type': 'reboot'}
    assert found['config_interrupts'] == {'kernel_args': {'type': 'reboot'},
                                          'web_conf': {'type': 'service', 'services': ['nginx']}}
    assert found['unmapped'] == ["handler 'Restart it': the service name '{{ svc }}' is templated; it runs in the stage"]
    assert [h['name'] for h in found['handlers']] == ['Reboot', 'Restart it', 'Reload nginx']
    assert found['handlers'][0]['listen'] == 'kernel changed' and 'ansible.builtin.debug' in found['handlers'][0]


def test_argument_specs_defaults_and_keys_that_cannot_be_variables():
    specs = ('argument_specs:\n  main:\n    options:\n      gpu_tuning_mtu: {type: int, default: 9000}\n'
             '      gpu_tuning_name: {type: str, required: true}\n')
    role = rp.role_from_files('gpu_tuning', dict(_files(), **{'meta/argument_specs.yml': specs}))
    assert rp.config_map_skeleton(role, yaml.safe_load, _dump)['gpu_tuning_mtu'] == '9000'
    with pytest.raises(rp.RolePackageError, match='meta/argument_specs.yml: not valid YAML'):
        rp.config_map_skeleton(rp.role_from_files('x', {'tasks/main.yml': '[]', 'meta/argument_specs.yml': 'a: [b'}),
                               yaml.safe_load, _dump)


def test_a_stage_whose_task_file_has_no_task_is_refused_by_name():
    role = _role(tasks__uninstall='---\n# nothing yet\n')
    assert rp.stage_map(role)['uninstall'] == {'tasks': 'uninstall.yml', 'check_mode': False}  # without a loader
    with pytest.raises(rp.RolePackageError, match=r'stages\.uninstall: role gpu_tuning tasks/uninstall\.yml has no task'):
        rp.stage_map(role, loader=yaml.safe_load)
    assert rp.stage_map(_role(), loader=yaml.safe_load) == rp.stage_map(_role())


# --- secrets: inline !vault values, named by file and variable (issue 40, item 3) ---

VAULTED = '!vault "$ANSIBLE_VAULT;1.1;AES256\\n6231"\n'  # at any indentation; a block below


def test_ansible_yaml_reads_and_writes_the_vault_and_unsafe_tags():
    data = ansible_yaml.load('a: ' + VAULTED + 'b: !unsafe "{{ raw }}"\nc: plain\n')
    assert isinstance(data['a'], rp.VaultedValue) and data['a'].startswith('$ANSIBLE_VAULT;1.1;AES256')
    assert isinstance(data['b'], rp.UnsafeValue) and data['b'] == '{{ raw }}'
    again = ansible_yaml.load(ansible_yaml.dump(data))
    assert again == data and isinstance(again['a'], rp.VaultedValue) and isinstance(again['b'], rp.UnsafeValue)
    assert ansible_yaml.dump({'s': 'two\nlines\n'}) == 's: |\n  two\n  lines\n'
    with pytest.raises(yaml.YAMLError):  # what the action read YAML with before: no word of the variable
        yaml.safe_load('a: ' + VAULTED)


def test_inline_vault_values_are_refused_naming_the_file_and_the_variable():
    role = _role(defaults__main='gpu_tuning_swappiness: 1\ndb_password: !vault |\n  $ANSIBLE_VAULT;1.1;AES256\n  6231\n'
                                'raw: !unsafe "{{ literal }}"\n',
                 vars__main='api:\n  url: https://x\n  token: ' + VAULTED + 'users:\n  - name: a\n    key: ' + VAULTED,
                 tasks__extra='- name: T\n  ansible.builtin.debug: {msg: x}\n  vars:\n    secret: ' + VAULTED)
    with pytest.raises(rp.RolePackageError) as failed:
        rp.refuse_vaulted(role, ansible_yaml.load)
    assert str(failed.value) == (
        'role gpu_tuning: inline !vault value(s) defaults/main.yml: db_password; tasks/extra.yml: [0].vars.secret; '
        'vars/main.yml: api.token, users[0].key would be baked into the image (set allow_vault to build anyway)')
    rp.refuse_vaulted(role, ansible_yaml.load, allow=True)
    # allowed: the vaulted default is no configMap key (a configMap is plain text in the cluster), nor the unsafe one
    # (a key reaches the stage as an extra variable, which Ansible templates)
    assert rp.config_map_skeleton(role, ansible_yaml.load, _dump) == {'gpu_tuning_swappiness': '1'}


def test_vault_files_and_values_together_a_file_yaml_cannot_read_and_vars_files_without_extension():
    files = {'tasks/main.yml': '[]\n', 'files/key.pem': '$ANSIBLE_VAULT;1.1;AES256\n61\n',
             'vars/broken.yml': 'token: ' + VAULTED + 'bad: [\n', 'group_vars/gpu': 'pw: ' + VAULTED,
             'templates/x.j2': 'key: !vault {{ not_yaml }}\n', 'README.md': 'use `x: !vault |` for secrets\n'}
    whole, inline = rp.find_vaulted(files, ansible_yaml.load)
    assert whole == ['files/key.pem']
    assert inline == {'vars/broken.yml': ['token'], 'group_vars/gpu': ['pw']}
    with pytest.raises(rp.RolePackageError, match=r'role r: vault-encrypted file\(s\) files/key.pem and inline !vault '
                                                  r'value\(s\) group_vars/gpu: pw; vars/broken.yml: token would be baked'):
        rp.refuse_vaulted(rp.role_from_files('r', files), ansible_yaml.load)


# --- handlers: what becomes an interrupt, and what is reported with its reason (issue 40, item 1) ---

REBOOT = {'type': 'reboot', 'services': []}


@pytest.mark.parametrize('handler, interrupt, why', [
    ('ansible.builtin.reboot: {}', REBOOT, None),
    ('ansible.builtin.reboot: {reboot_timeout: 600}', REBOOT, None),
    ('action: ansible.builtin.reboot', REBOOT, None),
    ('ansible.builtin.command: shutdown -r now', REBOOT, None),
    ('ansible.builtin.command: shutdown -r now\n  async: 1\n  poll: 0', REBOOT, None),
    ('shell: /sbin/shutdown -r +1', REBOOT, None),
    ('ansible.builtin.command: {cmd: systemctl  reboot}', REBOOT, None),
    ('ansible.builtin.command: {argv: [/usr/sbin/reboot]}', REBOOT, None),
    ('ansible.builtin.command: systemctl restart kubelet', {'type': 'service', 'services': ['kubelet']}, None),
    ('ansible.legacy.shell: service nginx reload', {'type': 'service', 'services': ['nginx']}, None),
    ('ansible.builtin.systemd: {name: kubelet, state: reloaded}', {'type': 'service', 'services': ['kubelet']}, None),
    ('ansible.builtin.shell: sleep 2 && shutdown -r now', None,
     "ansible.builtin.shell 'sleep 2 && shutdown -r now' is neither a reboot nor a service restart"),
    ('ansible.builtin.command: "{{ reboot_command }}"', None, 'is neither a reboot nor a service restart'),
    ('ansible.builtin.systemd_service: {name: kubelet, state: restarted, daemon_reload: true}', None,
     'ansible.builtin.systemd_service also sets daemon_reload, which the interrupt does not'),
    ('ansible.builtin.service: {name: kubelet, state: started}', None,
     "ansible.builtin.service with state 'started' is not a restart or reload"),
    ('ansible.builtin.reboot: {}\n  when: reboot_allowed', None,
     'it is conditional (when: reboot_allowed), the package interrupt would not be'),
    ('ansible.builtin.include_tasks: restart.yml', None, 'ansible.builtin.include_tasks is neither a reboot nor'),
    ('ansible.builtin.debug: {msg: hi}', None, 'ansible.builtin.debug is neither a reboot nor a service restart'),
])
def test_a_handler_is_an_interrupt_or_reported_by_name_with_the_reason(handler, interrupt, why):
    role = rp.role_from_files('r', {'tasks/main.yml': '- name: T\n  ansible.builtin.debug: {}\n  notify: H\n',
                                    'handlers/main.yml': '- name: H\n  ' + handler + '\n'})
    found = rp.interrupts(role, rp.stage_map(role), ansible_yaml.load)
    if interrupt:
        assert found['mapped'] == {'H': interrupt} and found['unmapped'] == []
        assert 'ansible.builtin.debug' in found['handlers'][0]
    else:
        assert found['mapped'] == {} and found['interrupt'] is None
        (reported,) = found['unmapped']
        assert reported.startswith("handler 'H': ") and why in reported and reported.endswith('; it runs in the stage')
        assert found['handlers'] == ansible_yaml.load('- name: H\n  ' + handler + '\n')  # as written


# --- configInterrupts: a variable read in a template, a condition or an included task file (issue 40, item 1) ---

def test_a_variable_read_only_in_a_template_gets_the_config_interrupt_of_the_handler_its_task_notifies():
    tasks = ('- name: Drop-in\n  ansible.builtin.template: {src: runtime.toml.j2, dest: /etc/containerd/conf.d/x.toml}\n'
             '  notify: Restart containerd\n'
             '- name: Limits\n  ansible.builtin.copy: {content: "{{ limit | default(fallback_limit) }}", dest: /etc/l}\n'
             '  when: manage_limits | bool\n  notify: Restart containerd\n'
             '- ansible.builtin.import_tasks: kernel.yml\n')
    kernel = '- name: Kernel\n  ansible.builtin.template: {src: kernel.conf.j2, dest: /etc/k}\n  notify: Reboot\n'
    files = {'tasks/main.yml': tasks, 'tasks/kernel.yml': kernel,
             'templates/runtime.toml.j2': 'runtime = "{{ runtime }}"\n{% include "parts/debug.j2" %}\n'
                                          '{% for k, v in extra_options.items() %}{{ k }} = {{ v }}\n{% endfor %}',
             'templates/parts/debug.j2': '{% if debug_level > 0 %}debug = {{ debug_level }}{% endif %}\n',
             'templates/kernel.conf.j2': '{{ hugepages }} {% set local = 1 %}{{ local }}\n',
             'handlers/main.yml': '- name: Restart containerd\n  ansible.builtin.service: {name: containerd, state: restarted}\n'
                                  '- name: Reboot\n  ansible.builtin.reboot: {}\n'}
    role = rp.role_from_files('r', files)
    found = rp.interrupts(role, rp.stage_map(role), ansible_yaml.load)
    restart = {'type': 'service', 'services': ['containerd']}
    assert found['config_interrupts'] == {
        'runtime': restart, 'debug_level': restart, 'extra_options': restart,  # the template and what it includes
        'limit': restart, 'fallback_limit': restart, 'manage_limits': restart,  # a filter's argument, the condition
        'hugepages': {'type': 'reboot'}}  # in the task file main.yml imports
    # the gpu_tuning role's only configInterrupt is still the runtime key's
    assert rp.interrupts(_role(), rp.stage_map(_role()), ansible_yaml.load)['config_interrupts'] == {
        'gpu_tuning_default_runtime': restart}


def test_jinja_names_of_templates_expressions_and_text_jinja_cannot_parse():
    assert rp.jinja_names('{{ a.b | default(c) }} {% for x in xs %}{{ x }}{% endfor %}') == {'a', 'c', 'xs'}
    assert rp.jinja_names('a is defined and b | bool', expression=True) == {'a', 'b'}
    # Ansible's filters and tests, and the collections', are names jinja2 does not know
    assert rp.jinja_names('{{ c | to_nice_yaml | regex_replace("x", d) }}{{ e is version("1", ">") }}') == {'c', 'd', 'e'}
    assert rp.jinja_names('{{ broken }} {% if %}') == {'broken'}  # not Jinja: the names the expressions start with
    assert rp.template_names('missing.j2', lambda src: None) == set()
    loop = {'a.j2': '{{ x }}{% include "b.j2" %}', 'b.j2': '{{ y }}{% include "a.j2" %}'}
    assert rp.template_names('a.j2', loop.get) == {'x', 'y'}


# --- a playbook as the package's source (issue 40, item 1) ---

def _playbook_files(root=GPU_TUNING_PLAYBOOK, **extra):
    files = dict((str(p.relative_to(root)), p.read_text()) for p in root.rglob('*') if p.is_file())
    files.update(extra)
    return files


def _playbook(playbook='gpu_tuning.yml', **extra):
    return pp.playbook_from_files(playbook, _playbook_files(**extra))


def test_the_default_stages_of_a_playbook_and_its_overrides():
    source = _playbook()
    run, check = {'playbook': 'gpu_tuning.yml', 'check_mode': False}, {'playbook': 'gpu_tuning.yml', 'check_mode': True}
    assert pp.stage_map(source, {}, ansible_yaml.load) == {
        'apply': run, 'apply-check': check, 'config': run, 'config-check': check}  # other stages only when mapped
    verify = '- name: Verify\n  hosts: all\n  tasks:\n    - ansible.builtin.assert: {that: [true]}\n'
    stages = pp.stage_map(_playbook(**{'verify.yml': verify}), {
        'uninstall': 'uninstall.yml', 'apply-check': './verify.yml', 'config': None, 'upgrade': 'gpu_tuning.yml',
        'upgrade-check': None}, ansible_yaml.load)
    assert stages == {'apply': run, 'apply-check': {'playbook': 'verify.yml', 'check_mode': False},
                      'uninstall': {'tasks': 'uninstall.yml', 'check_mode': False},
                      'uninstall-check': {'tasks': 'uninstall.yml', 'check_mode': True}, 'upgrade': run}


@pytest.mark.parametrize('overrides, extra, message', [
    ({'uninstall': 'remove.yml'}, {}, 'stages.uninstall: playbook gpu_tuning has no remove.yml'),
    ({'uninstall': 'templates/90-nvidia.toml.j2'}, {}, 'stages.uninstall: templates/90-nvidia.toml.j2 is not a YAML file'),
    ({'uninstall': 'empty.yml'}, {'empty.yml': '---\n# later\n'}, 'stages.uninstall: empty.yml: no play or task in it'),
    ({'apply': 'check'}, {}, 'stages.apply: check is for a -check stage'),
    ({'upgrade-check': 'gpu_tuning.yml'}, {}, 'stages.upgrade-check: the package has no upgrade stage'),
    ({'reboot': 'gpu_tuning.yml'}, {}, 'stages: reboot not a stage'),
])
def test_a_playbook_stage_mapping_at_fault_is_named(overrides, extra, message):
    with pytest.raises(rp.RolePackageError, match=message.replace('.', r'\.')):
        pp.stage_map(_playbook(**extra), overrides, ansible_yaml.load)


@pytest.mark.parametrize('hosts, groups', [
    ('all', []), ('localhost', []), ('gpu_nodes', ['gpu_nodes']), (['gpu', 'edge'], ['edge', 'gpu']),
    ('gpu:&prod', ['gpu', 'prod']), ('gpu:!canary', ['gpu']), ('gpu,db', ['db', 'gpu']), ('*', []),
])
def test_the_host_is_put_in_every_group_the_plays_name(hosts, groups):
    assert pp.host_groups([('site.yml', [{'name': 'P', 'hosts': hosts}])]) == groups


@pytest.mark.parametrize('plays, message', [
    ([{'name': 'P', 'hosts': '{{ target }}'}], "playbook site.yml play 'P': hosts '{{ target }}' is templated"),
    ([{'name': 'P', 'hosts': 'gpu*'}], "playbook site.yml play 'P': the host pattern 'gpu*' matches names"),
    ([{'name': 'P', 'hosts': '~gpu.*'}], "the host pattern '~gpu.*' matches names"),
    ([{'name': 'P', 'hosts': 'gpu[0]'}], "the host pattern 'gpu[0]' matches names"),
    ([{'name': 'P', 'hosts': 'all:!localhost'}], "play 'P': '!localhost' excludes the host the package runs on"),
    ([{'name': 'P'}], "playbook site.yml play 'P' has no hosts"),
    ([{'name': 'A', 'hosts': 'gpu'}, {'hosts': 'all:!gpu'}],
     "playbook site.yml play 2 excludes the group gpu, which playbook site.yml play 'A' runs on"),
])
def test_host_patterns_the_package_cannot_run_on_its_host_are_refused_naming_the_play(plays, message):
    with pytest.raises(rp.RolePackageError, match=re.escape(message)):
        pp.host_groups([('site.yml', plays)])


def test_the_guide_playbook_maps_its_handlers_and_the_template_variable_to_the_interrupts():
    source = _playbook()
    stages = pp.stage_map(source, {'uninstall': 'uninstall.yml'}, ansible_yaml.load)
    found = pp.interrupts(source, stages, ansible_yaml.load)
    restart = {'type': 'service', 'services': ['containerd']}
    assert found['interrupt'] == restart and found['mapped'] == {'Restart containerd': restart}
    # the runtime key is read only in templates/90-nvidia.toml.j2
    assert found['config_interrupts'] == {'gpu_tuning_default_runtime': restart}
    assert found['unmapped'] == ["playbook gpu_tuning.yml play 'GPU tuning' handler 'Reload sysctl': ansible.builtin."
                                 "command 'sysctl --system' is neither a reboot nor a service restart; it runs in the stage"]
    (play,) = found['derived']['gpu_tuning.yml']
    assert [h['name'] for h in play['handlers']] == ['Reload sysctl', 'Restart containerd']
    assert play['handlers'][1] == {'name': 'Restart containerd', 'ansible.builtin.debug': {
        'msg': 'left to NodeWright: the package interrupt (service restart of containerd)'}}
    assert play['tasks'] == ansible_yaml.load(source['files']['gpu_tuning.yml'])[0]['tasks']  # the tasks as written
    config_map = pp.config_map_skeleton(source, stages, ansible_yaml.load, _dump)
    assert config_map == {'gpu_tuning_default_runtime': 'nvidia', 'gpu_tuning_rmem_max': '134217728',
                          'gpu_tuning_swappiness': '1'}
    assert rp.package_spec('r/gpu', '1.0.0', found, config_map)['configInterrupts'] == {'gpu_tuning_default_runtime': restart}
    run, files = pp.run_files(stages, found, gather_facts=False)
    assert run == {'apply': '.nodewright.gpu_tuning.yml', 'apply-check': '.nodewright.gpu_tuning.yml',
                   'config': '.nodewright.gpu_tuning.yml', 'config-check': '.nodewright.gpu_tuning.yml',
                   'uninstall': '.nodewright.stage-uninstall.yml', 'uninstall-check': '.nodewright.stage-uninstall-check.yml'}
    (wrapper,) = files['.nodewright.stage-uninstall.yml']
    assert wrapper['hosts'] == 'all' and wrapper['gather_facts'] is False and wrapper['handlers'] == play['handlers']
    assert wrapper['tasks'] == [{'name': 'uninstall.yml', 'ansible.builtin.import_tasks': 'uninstall.yml'}]
    assert wrapper['vars'] == play['vars']
    manifest = json.loads(pp.runtime_manifest('gpu-tuning', stages, run, ['gpu_nodes']))
    assert manifest['kind'] == 'playbook' and manifest['groups'] == ['gpu_nodes'] and manifest['playbook_dir'] == 'playbook'
    assert manifest['stages']['uninstall'] == {'tasks': 'uninstall.yml', 'check_mode': False,
                                               'run': '.nodewright.stage-uninstall.yml'}


def test_imported_playbooks_their_handlers_and_the_roles_whose_handlers_stay_in_the_stage():
    site = ('- name: Base\n  hosts: all\n  roles: [common, example.gpu.driver]\n  tasks:\n'
            '    - ansible.builtin.include_role: {name: tuned}\n'
            '- ansible.builtin.import_playbook: plays/kernel.yml\n')
    kernel = ('- name: Kernel\n  hosts: gpu\n  collections: [example.kernel]\n  tasks:\n'
              '    - name: Args\n      example.grub.args: {add: "{{ kernel_args }}"}\n      notify: Reboot\n'
              '  handlers:\n    - name: Reboot\n      ansible.builtin.reboot: {}\n'
              '- import_playbook: ../site.yml\n')
    files = {'site.yml': site, 'plays/kernel.yml': kernel, 'roles/common/tasks/main.yml': '- example.tools.x: {}\n',
             'roles/tuned/tasks/main.yml': '[]\n'}
    source = pp.playbook_from_files('site.yml', files)
    stages = pp.stage_map(source, {}, ansible_yaml.load)
    graph = pp.playbook_graph(source, 'site.yml', ansible_yaml.load)
    assert [path for path, dummy in graph] == ['site.yml', 'plays/kernel.yml']  # each once
    assert pp.host_groups(graph) == ['gpu']
    found = pp.interrupts(source, stages, ansible_yaml.load)
    assert found['interrupt'] == {'type': 'reboot'} and found['config_interrupts'] == {'kernel_args': {'type': 'reboot'}}
    assert found['unmapped'] == ["playbook site.yml play 'Base': the handlers of its role(s) common, example.gpu.driver, "
                                 "tuned run in the stage (a playbook source maps the plays' own handlers)"]
    assert found['derived']['site.yml'][1] == {'ansible.builtin.import_playbook': 'plays/.nodewright.kernel.yml'}
    assert found['derived']['plays/kernel.yml'][1] == {'import_playbook': '../.nodewright.site.yml'}
    assert pp.needed_collections(source, stages, ansible_yaml.load) == [
        'example.gpu', 'example.grub', 'example.kernel', 'example.tools']
    with pytest.raises(rp.RolePackageError, match="playbook site.yml play 'Base' uses the role tuned: not in roles/"):
        missing = pp.playbook_from_files('site.yml', dict((p, t) for p, t in files.items() if 'tuned' not in p))
        pp.needed_collections(missing, stages, ansible_yaml.load)


@pytest.mark.parametrize('target, message', [
    ('"{{ next_playbook }}"', "imports '{{ next_playbook }}': only a playbook file of the directory, by a plain path"),
    ('example.gpu.site', "imports 'example.gpu.site': only a playbook file of the directory"),
    ('../elsewhere.yml', "imports '../elsewhere.yml': not in the playbook's directory"),
    ('missing.yml', "imports 'missing.yml': not in the playbook's directory"),
])
def test_imports_the_package_cannot_bring_are_refused_by_name(target, message):
    source = pp.playbook_from_files('site.yml', {'site.yml': '- ansible.builtin.import_playbook: %s\n' % target})
    with pytest.raises(rp.RolePackageError, match=re.escape('playbook site: site.yml ' + message)):
        pp.playbook_graph(source, 'site.yml', ansible_yaml.load)


def test_a_playbook_and_a_task_file_are_told_apart():
    assert pp.file_kind([{'hosts': 'all'}], 'x') == 'playbook'
    assert pp.file_kind([{'import_playbook': 'a.yml'}], 'x') == 'playbook'
    assert pp.file_kind([{'name': 'T', 'ansible.builtin.debug': {}}], 'x') == 'tasks'
    for data in (None, [], {'hosts': 'all'}, ['text']):
        with pytest.raises(rp.RolePackageError, match='x: no play or task in it'):
            pp.file_kind(data, 'x')
    with pytest.raises(rp.RolePackageError, match='playbook gone.yml: not found'):
        pp.playbook_from_files('gone.yml', {})


# --- changed: the image's content against the local image, else the registry's (issue 40, item 1) ---

class _FakePodman(object):
    """podman's storage (ref -> labels) and a registry (ref -> labels) a pull copies from."""

    def __init__(self, local=None, registry=None):
        self.local, self.registry, self.pulled = dict(local or {}), dict(registry or {}), []

    def inspect(self, ref):
        return {'Id': 'x', 'Labels': self.local[ref]} if ref in self.local else None

    def pull(self, ref, tls_verify=True):
        self.pulled.append((ref, tls_verify))
        if ref in self.registry:
            self.local[ref] = self.registry[ref]
        return ref in self.registry


@pytest.mark.parametrize('local, registry, pull, same, pulled', [
    ({'r:1': 'ctx'}, {}, True, True, False),            # built before, here: nothing to build, nothing pulled
    ({'r:1': 'old'}, {'r:1': 'ctx'}, True, False, False),  # here, another content: built again (no pull)
    ({}, {'r:1': 'ctx'}, True, True, True),              # not here, the registry has this content: pulled, not changed
    ({}, {'r:1': 'old'}, True, False, True),             # the registry's is another content: built
    ({}, {}, True, False, True),                         # nowhere: built
    ({}, {'r:1': 'ctx'}, False, False, False),           # not pushed (or check mode): the registry is not asked
])
def test_the_image_is_the_same_when_podman_or_else_its_registry_has_this_content(local, registry, pull, same, pulled):
    from ansible_collections.nodewright.bridge.plugins.action import role_package as action  # pylint: disable=import-outside-toplevel
    podman = _FakePodman(dict((r, {action.CONTEXT_LABEL: c}) for r, c in local.items()),
                         dict((r, {action.CONTEXT_LABEL: c}) for r, c in registry.items()))
    assert action.same_image(podman, 'r:1', 'ctx', pull=pull, tls_verify=False) is same
    assert podman.pulled == ([('r:1', False)] if pulled else [])
