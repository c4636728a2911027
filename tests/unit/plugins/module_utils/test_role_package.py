# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""role_package: a role as a NodeWright package (stages, config.json, interrupts from handlers, the CR snippet)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from pathlib import Path

import pytest
import yaml

from ansible_collections.nodewright.bridge.plugins.module_utils.contract import role_package as rp

GPU_TUNING = Path(__file__).resolve().parents[4] / 'examples' / 'roles' / 'gpu_tuning'


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
        rp.refuse_vaulted(role)
    rp.refuse_vaulted(role, allow=True)
    rp.refuse_vaulted(_role())


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
    assert found['unmapped'] == []
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
