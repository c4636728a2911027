# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The README's commands, run as a new user runs them (make galaxy-smoke, after tests/installed_smoke.sh).

A fresh virtualenv (ansible-core as requirements-test.txt pins it, then the README's own `pip install` line), an
empty home, the built tarball installed with the README's `ansible-galaxy collection install`, and the working
directory away from the checkout: only the installed copy can be found. Then every command of the README before
"Development" that needs no cluster runs, and what the README shows of its output is checked against what it
printed:

- the plan of the example CR over the example nodes, from the installed copy (each line the README shows, in
  order, with `...` standing for lines left out), and that it fits on one screen;
- the plan as JSON, and written to a file;
- an invalid CR: the README's three problems, word for word;
- the v0.15 example planned the same way, and `to_skyhook` of the v0.20 example giving the v0.15 one;
- the "Budgeted batches for any play" example over local hosts, with the rollout callback and its report;
- every file the README names (links, paths in backticks) is in the installed copy.

The commands that need a cluster or the network say so in the README ("Then: a cluster", the git URL, AWX); they
are run by the cluster suites (tests/kube, tests/integration), not here.

    python tests/readme_check.py <tarball> <work directory>
"""
import json
import os
import re
import shlex
import shutil
import subprocess
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCREEN_LINES = 50  # a terminal page, more or less: the plan of 24 nodes must fit


def readme_blocks():
    """The README's fenced blocks before "## Development", in order: [(language, text)]."""
    with open(os.path.join(ROOT, 'README.md')) as handle:
        text = handle.read().split('\n## Development')[0]
    return re.findall(r'^```(\w*)\n(.*?)^```', text, re.S | re.M)


def block_after(blocks, marker):
    """The block that follows the one containing marker (the README shows a command, then what it prints)."""
    for index, (dummy, text) in enumerate(blocks):
        if marker in text:
            return blocks[index + 1][1]
    raise AssertionError('README: no block with %r' % marker)


def block_with(blocks, marker):
    return next(text for dummy, text in blocks if marker in text)


def shown_in(shown, printed, what):
    """Every line the README shows appears in what was printed, in the same order; `...` lines stand for others."""
    lines = printed.splitlines()
    at = 0
    for want in shown.strip('\n').splitlines():
        if want.strip() == '...':
            continue
        while at < len(lines) and lines[at].rstrip() != want.rstrip():
            at += 1
        if at == len(lines):
            raise AssertionError('%s: the README shows %r, which the command did not print (in this order):\n%s'
                                 % (what, want, printed))
        at += 1


class NewUser(object):
    """A fresh virtualenv and an empty home, away from the checkout."""

    def __init__(self, work):
        self.work = work
        self.home = os.path.join(work, 'home')
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(self.home)
        venv = os.path.join(work, 'venv')
        subprocess.check_call([sys.executable, '-m', 'venv', venv])
        self.bin = os.path.join(venv, 'bin')
        pins = {line.split('==')[0].lower(): line.strip() for line in open(os.path.join(ROOT, 'requirements-test.txt'))
                if '==' in line and not line.startswith('#')}
        self.env = {'PATH': self.bin + os.pathsep + '/usr/bin:/bin', 'HOME': self.home, 'LANG': 'C.UTF-8',
                    'ANSIBLE_NOCOLOR': '1', 'ANSIBLE_FORCE_COLOR': '0', 'PIP_DISABLE_PIP_VERSION_CHECK': '1'}
        self.run('pip install --quiet %s' % pins['ansible-core'])

    def run(self, command, expect_rc=0, env=None, stderr=True):
        """A README command line, in a shell, from the empty home; its output (stdout, then stderr unless not wanted)."""
        full = dict(self.env, **(env or {}))
        done = subprocess.run(['bash', '-c', command], cwd=self.home, env=full, capture_output=True, text=True, check=False)
        if expect_rc is not None and done.returncode != expect_rc:
            raise AssertionError('%s: exit %d, expected %d\n%s\n%s'
                                 % (command, done.returncode, expect_rc, done.stdout, done.stderr))
        return done.stdout + (done.stderr if stderr else '')


def install(user, blocks, tarball):
    lines = [line.split('#')[0].strip() for line in block_with(blocks, 'ansible-galaxy collection install').splitlines()]
    galaxy = next(line for line in lines if line.endswith('.tar.gz'))
    user.run(galaxy.replace(galaxy.split()[-1], shlex.quote(tarball)))
    user.run(next(line for line in lines if line.startswith('pip install')) + ' --quiet')
    print('ok: installed the tarball and the README\'s Python requirements in a fresh virtualenv')


def plan_from_files(user, blocks):
    command = block_with(blocks, 'ansible-playbook nodewright.bridge.plan \\').rstrip('\n')
    printed = user.run(command)
    shown_in(block_after(blocks, 'ansible-playbook nodewright.bridge.plan \\'), printed, 'the plan from files')
    report = [line for line in printed.splitlines() if line.startswith('        "')]
    assert 0 < len(report) <= SCREEN_LINES, 'the plan of 24 nodes is %d lines, not one screen' % len(report)
    print('ok: the plan of the example CR over 24 nodes, %d lines, as the README shows it' % len(report))
    # the "Show the plan" task's result, as the default callback prints it (JSON after "ok: [localhost] => ")
    printed = user.run(command + ' -e nodewright_plan_output=json', stderr=False)
    result = printed.split('TASK [Show the plan]')[1].split('ok: [localhost] => ', 1)[1].split('\n\n')[0]
    shown = json.loads(result)['msg']
    assert isinstance(shown, dict) and shown.get('crs'), result[:2000]
    user.run(command + ' -e nodewright_plan_report=plan.json')
    with open(os.path.join(user.home, 'plan.json')) as handle:
        written = json.load(handle)
    assert written, 'plan.json is empty'
    print('ok: -e nodewright_plan_output=json and -e nodewright_plan_report=plan.json')
    return command


def invalid_cr(user, blocks, command):
    shown = block_with(blocks, "Skyhook 'broken' is invalid")
    broken = {'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'Skyhook', 'metadata': {'name': 'broken'},
              'spec': {'interuptionBudget': {'count': 1},
                       'packages': {'Bad_Name': {'version': '1.0.0', 'image': 'ghcr.io/example/x'},
                                    'tuning': {'version': '1.0.0', 'image': 'ghcr.io/example/tuning',
                                               'interrupt': {'type': 'shutdown'}}}}}
    with open(os.path.join(user.home, 'broken.yaml'), 'w') as handle:
        yaml.safe_dump(broken, handle)
    cr = re.search(r'-e nodewright_cr=\S+', command).group(0)
    printed = user.run(command.replace(cr, '-e nodewright_cr=broken.yaml'), expect_rc=2)
    shown_in(shown, printed, 'the invalid CR')
    print('ok: the invalid CR fails with the README\'s three problems')


def skyhook_twin(user, command):
    collection = os.path.join(user.home, '.ansible/collections/ansible_collections/nodewright/bridge/examples')
    printed = user.run(command.replace('gpu-node-tuning.yaml', 'gpu-node-tuning-skyhook.yaml'))
    assert '== gpu-node-tuning (priority 200' in printed, printed
    user.run("ansible localhost -m ansible.builtin.copy -a \"dest=converted.json content={{ lookup('file', "
             "'%s/gpu-node-tuning.yaml') | from_yaml_all | list | nodewright.bridge.to_skyhook | to_json }}\"" % collection)
    with open(os.path.join(user.home, 'converted.json')) as handle:
        got = json.load(handle)
    with open(os.path.join(collection, 'gpu-node-tuning-skyhook.yaml')) as handle:
        want = list(yaml.safe_load_all(handle))
    assert got == want, 'to_skyhook of examples/gpu-node-tuning.yaml is not examples/gpu-node-tuning-skyhook.yaml'
    print('ok: the v0.15 example plans the same CR, and to_skyhook of the v0.20 example is the v0.15 one')


def budgeted_play(user, blocks):
    play = block_with(blocks, 'strategy: nodewright.bridge.budgeted')
    command = block_with(blocks, 'ansible-playbook -i inventory.yml')
    role = os.path.join(user.home, 'roles', 'my_gpu_maintenance', 'tasks')
    os.makedirs(role)
    with open(os.path.join(role, 'main.yml'), 'w') as handle:
        handle.write('- name: The maintenance\n  ansible.builtin.debug:\n    msg: maintained\n')
    with open(os.path.join(user.home, 'site.yml'), 'w') as handle:
        handle.write(play)
    hosts = {'gpu-%02d' % i: {'ansible_connection': 'local', 'ansible_python_interpreter': os.path.join(user.bin, 'python')}
             for i in range(8)}
    with open(os.path.join(user.home, 'inventory.yml'), 'w') as handle:
        yaml.safe_dump({'gpu_nodes': {'hosts': hosts}}, handle)
    printed = user.run(command.strip())
    with open(os.path.join(user.home, 'report.json')) as handle:
        report = json.load(handle)
    assert 'maintained' in printed and 'failed=0' in printed, printed
    # budget 25 % of 8 = 2, exponential from 1: batches of 1, 2, 2, 2, 1 (the ceiling caps the growth)
    sizes = [batch['size'] for batch in report['compartments']['__default__']['batches']]
    assert sizes == [1, 2, 2, 2, 1], report
    print('ok: the budgeted play over 8 local hosts, with the rollout callback and its report')


def named_paths(collection):
    """Every file the README names before "Development" (a relative link, or a path in backticks) is in the
    installed copy: a reader of the README on Galaxy, or of the installed one, finds it."""
    with open(os.path.join(ROOT, 'README.md')) as handle:
        text = handle.read().split('\n## Development')[0]
    links = [m for m in re.findall(r'\]\(([^)#\s]+)', text) if not m.startswith(('http://', 'https://'))]
    quoted = [m for m in re.findall(r'`([A-Za-z0-9_./-]+)`', text)
              if re.match(r'^(examples|docs|meta|playbooks|roles|plugins|changelogs)/', m)]
    missing = sorted(p for p in set(links + quoted) if not os.path.exists(os.path.join(collection, p)))
    assert not missing, 'the README names files the installed collection does not have: %s' % missing
    print('ok: the %d files the README names are in the installed collection' % len(set(links + quoted)))


def main(tarball, work):
    blocks = readme_blocks()
    user = NewUser(work)
    install(user, blocks, os.path.abspath(tarball))
    named_paths(os.path.join(user.home, '.ansible/collections/ansible_collections/nodewright/bridge'))
    command = plan_from_files(user, blocks)
    invalid_cr(user, blocks, command)
    skyhook_twin(user, command)
    budgeted_play(user, blocks)
    print('ok: every README command before "Development" that needs no cluster works from the installed tarball')


if __name__ == '__main__':
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], os.path.abspath(sys.argv[2]))
