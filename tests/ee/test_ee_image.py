# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The execution environment image (tests/ee/ee_build.py, docs/ee.md): built with ansible-builder from
the collection tarball on a base image of Debian's (no registry), then what AWX and a user run in it.

The first run builds the base and the EE (about 7 minutes on 2 busy cores, docs/dev/ee-build.md); later runs reuse them
(20 to 40 s for the tests).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest
import yaml

from base_image import base_image_name
from ee_build import BUILDER_HINT, REPO_ROOT, _build, build_tarball, ensure_ee_image, tool, write_definition
from podman_env import HINT, PodmanError, podman_env, smoke

FIXTURES = REPO_ROOT / 'tests' / 'unit' / 'fixtures'
VERSION = yaml.safe_load((REPO_ROOT / 'galaxy.yml').read_text(encoding='utf-8'))['version']


@pytest.fixture(scope='module')
def env():
    return podman_env()


@pytest.fixture(scope='module')
def ee_image(env):
    return ensure_ee_image(env)


def in_ee(env, image, *cmd, podman_args=(), **kwargs):
    """cmd in a throwaway container of the EE; the output, or a failure with podman's and cmd's output."""
    proc = subprocess.run(['podman', 'run', '--rm', '--network=host', *podman_args, image, *cmd], env=env,
                          capture_output=True, text=True, check=False, timeout=300, **kwargs)
    assert proc.returncode == 0, f'{" ".join(cmd)} in {image}: exit {proc.returncode}\n{proc.stdout}{proc.stderr}'
    return proc.stdout


def test_module_docs(env, ee_image):
    out = in_ee(env, ee_image, 'ansible-doc', 'nodewright.bridge.rollout_plan', podman_args=['-e', 'ANSIBLE_NOCOLOR=1'])
    assert 'Reads a NodeWright (or Skyhook) custom resource' in out


def test_collection_installed(env, ee_image):
    out = in_ee(env, ee_image, 'ansible-galaxy', 'collection', 'list', 'nodewright.bridge')
    assert re.search(rf'^nodewright\.bridge\s+{re.escape(VERSION)}\s*$', out, re.M), out
    assert '/usr/share/ansible/collections' in out


def test_python_requirements(env, ee_image):
    """The collection's requirements.txt, through ansible-builder's introspection of meta/execution-environment.yml."""
    out = in_ee(env, ee_image, 'python3', '-c', 'import kubernetes, yaml; print(kubernetes.__version__, yaml.__version__)')
    assert re.fullmatch(r'\S+ \S+\n', out), out


def test_ansible_and_runner_pins(env, ee_image):
    pins = dict(re.findall(r'^(ansible-core|ansible-runner)==(\S+)', (REPO_ROOT / 'requirements-test.txt').read_text(), re.M))
    assert in_ee(env, ee_image, 'ansible-runner', '--version').strip() == pins['ansible-runner']
    assert f'[core {pins["ansible-core"]}]' in in_ee(env, ee_image, 'ansible', '--version')


def test_module_runs(env, ee_image):
    """rollout_plan in the EE (its kubernetes and yaml imports) on the unit fixtures, read-only in the container."""
    out = in_ee(env, ee_image, 'ansible', 'localhost', '-o', '-m', 'nodewright.bridge.rollout_plan',
                '-a', 'cr=/fixtures/budget33.yaml nodes=/fixtures/nodes10.yaml',
                podman_args=['-v', f'{FIXTURES}:/fixtures:ro', '-e', 'ANSIBLE_LOCALHOST_WARNING=false',
                             '-e', 'ANSIBLE_INVENTORY_UNPARSED_WARNING=false'])
    result = json.loads(re.sub(r'^[^{]*', '', out))
    assert [c['batch_sizes'] for c in result['compartments'] if c['batch_sizes']] == [[3, 3, 3, 1]]


def test_runner_worker(env, ee_image, tmp_path):
    """What AWX does with an EE: ansible-runner transmit on the controller, `ansible-runner worker`
    in the image (stdin to stdout), ansible-runner process back on the controller."""
    private = tmp_path / 'private'
    (private / 'project').mkdir(parents=True)
    for name in ('budget33.yaml', 'nodes10.yaml'):
        shutil.copy(FIXTURES / name, private / 'project' / name)
    (private / 'project' / 'plan.yml').write_text('''---
- name: Plan a rollout in the EE
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Plan
      nodewright.bridge.rollout_plan:
        cr: "{{ playbook_dir }}/budget33.yaml"
        nodes: "{{ playbook_dir }}/nodes10.yaml"
      register: plan
    - name: Batches
      ansible.builtin.debug:
        msg: "batches {{ plan.compartments | map(attribute='batch_sizes') | select | list | to_json }}"
''', encoding='utf-8')
    transmit = subprocess.run([tool('ansible-runner'), 'transmit', str(private), '-p', 'plan.yml'],
                              capture_output=True, check=True, timeout=120)
    worker = subprocess.run(['podman', 'run', '--rm', '-i', '--network=host', ee_image, 'ansible-runner', 'worker'],
                            env=env, input=transmit.stdout, capture_output=True, check=False, timeout=300)
    assert worker.returncode == 0, worker.stderr.decode(errors='replace')
    out = tmp_path / 'out'
    processed = subprocess.run([tool('ansible-runner'), 'process', str(out)], input=worker.stdout,
                               capture_output=True, check=False, timeout=120)
    stdout = processed.stdout.decode(errors='replace')
    assert processed.returncode == 0, stdout + processed.stderr.decode(errors='replace')
    assert 'batches [[3, 3, 3, 1]]' in stdout, stdout
    # ansible-runner process writes the job's artifacts straight under artifacts/ (no ident directory)
    assert (out / 'artifacts' / 'status').read_text(encoding='utf-8') == 'successful'
    assert (out / 'artifacts' / 'rc').read_text(encoding='utf-8') == '0'


def test_broken_runtime_fails_with_podmans_error(ee_image, tmp_path):  # pylint: disable=unused-argument
    """A podman configuration naming a runtime that does not exist: the smoke check fails with
    podman's own error and the hint, not a bare exit code."""
    broken = podman_env(conf_dir=tmp_path / 'conf', runtime='/nonexistent/runc')
    with pytest.raises(PodmanError) as info:
        smoke(base_image_name(), broken)
    message = str(info.value)
    # podman 4.3: "Error: no valid executable found for OCI runtime /nonexistent/runc: invalid argument"
    assert re.search(r'^Error: .*OCI runtime /nonexistent/runc', message, re.M), message
    assert message.endswith(HINT)


def test_a_missing_base_image_fails_the_ee_build_with_podmans_error(env, tmp_path):
    """An EE definition whose base image no storage has and no registry serves: ansible-builder's podman build fails,
    and the error carries podman's own message, where the log is, and the hint."""
    inputs = tmp_path / 'definition'
    inputs.mkdir()
    definition = write_definition(inputs, 'localhost/nodewright-ee-base:missing', build_tarball(tmp_path / 'collection'))
    with pytest.raises(PodmanError) as info:
        _build('localhost/nodewright-bridge-ee:never', definition, env, tmp_path / 'build.log', context=tmp_path / 'context')
    message = str(info.value)
    assert re.search(r'^Error: .*localhost/nodewright-ee-base:missing', message, re.M), message
    assert str(tmp_path / 'build.log') in message and message.endswith(BUILDER_HINT)
