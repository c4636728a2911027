# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""What nodewright.bridge.render writes: the data of the playbook and its generated parts.

``render_data`` decides which steps the playbook has (the steps of a node without the CR, an
upgrade beside the apply of a package some node has in an older version) and which nodes it
cannot update. ``playbook_parts`` writes the header and the per-node tasks, these from the one
definition of the sequence (module_utils/cluster_modules/node_steps.py) with the rendered playbook's Jinja as
values. playbooks/templates/cr_playbook.yml.j2 only places the parts.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import textwrap

from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import node_steps
from ansible_collections.nodewright.bridge.plugins.module_utils.planning.node_plan import step_id
from ansible_collections.nodewright.bridge.plugins.plugin_utils.rendering import block_yaml
from ansible_collections.nodewright.bridge.plugins.plugin_utils.rendering.block_yaml import Expression, scalar

TASK_INDENT = 8  # the tasks of the node play's block and rescue


# ---------------------------------------------------------------- data


def render_data(plan, fresh):
    """The steps of the playbook from ``plan`` (rollout_plan's result) and ``fresh`` (a node without the CR)."""
    steps_of = dict((node, [s['id'] for s in p['pending']]) for node, p in plan['nodes'].items())
    upgrades = sorted(set(s['package'] for p in plan['nodes'].values() for s in p['pending'] if s['stage'] == 'upgrade'))
    playbook_steps = []
    for step in fresh['pending']:
        if step['stage'] == 'apply' and step['package'] in upgrades:
            playbook_steps.append(step_id(dict(step, stage='upgrade')))
        playbook_steps.append(step['id'])
    unsupported = {}
    for node in sorted(plan['nodes']):
        missing = [s for s in steps_of[node] if s not in playbook_steps]
        if missing:
            unsupported[node] = missing
    nodes = plan['nodes']
    return {
        'playbook_steps': playbook_steps,
        'upgrades': upgrades,
        'unsupported': unsupported,
        'policy_text': policy_text(plan.get('policy_document'), plan.get('interruption_budget')),
        'runtime_required_crs': [plan['cr']['name']] if plan['cr'].get('runtimeRequired') else [],
        'nodes': {
            'selected': sorted(nodes),
            'complete': sorted(n for n, p in nodes.items() if p['complete']),
            'to_update': sorted(n for n, p in nodes.items() if not p['complete']),
            'unsupported': unsupported,
        },
    }


def _strategy(spec):
    strategy = (spec or {}).get('strategy') or {}
    return ' ' + list(strategy)[0] if strategy else ''


def policy_text(policy, interruption_budget):
    if not policy:
        return "the CR's interruptionBudget %s" % json.dumps(interruption_budget)
    spec = policy.get('spec') or {}
    parts = ['DeploymentPolicy %s:' % (policy.get('metadata') or {}).get('name', '(inline)')]
    parts.extend(' compartment %s budget %s%s;' % (c['name'], json.dumps(c.get('budget')), _strategy(c))
                 for c in spec.get('compartments') or [])
    default = spec.get('default') or {}
    parts.append(' default budget %s%s' % (json.dumps(default.get('budget')), _strategy(default)))
    return ''.join(parts)


# ---------------------------------------------------------------- words


def wordwrap(text, width, wrapstring):
    """Jinja's wordwrap without breaking words or at hyphens."""
    return wrapstring.join(wrapstring.join(textwrap.wrap(line, width=width, expand_tabs=False, replace_whitespace=False,
                                                         break_long_words=False, break_on_hyphens=False))
                           for line in text.splitlines())


def selector_text(selector):
    parts = ['%s=%s' % kv for kv in (selector.get('matchLabels') or {}).items()]
    for expr in selector.get('matchExpressions') or []:
        values = expr.get('values') or []
        parts.append('%s %s%s' % (expr['key'], expr['operator'], ' (%s)' % ','.join(values) if values else ''))
    return ', '.join(parts)


def interrupt_text(interrupt):
    if interrupt['type'] == 'service':
        return 'restart ' + ', '.join(interrupt['services'])
    if interrupt['type'] == 'restartAllServices':
        return 'restart all services'
    return interrupt['type']


def _label(r, package):
    return '%s %s' % (package, r['cr_document']['spec']['packages'][package]['version'])


def _package_line(r, number, name):
    pkg = r['cr_document']['spec']['packages'][name]
    line = '#     %d. %s (%s)' % (number, _label(r, name), pkg['image'])
    if pkg.get('dependsOn'):
        line += '; depends on ' + ', '.join('%s %s' % kv for kv in pkg['dependsOn'].items())
    if pkg.get('interrupt'):
        line += '; interrupt: ' + interrupt_text(pkg['interrupt'])
    if pkg.get('configInterrupts'):
        line += '; configInterrupts for ' + ', '.join(pkg['configInterrupts'])
    if pkg.get('configMap'):
        line += '; configMap: ' + ', '.join(pkg['configMap'])
    return line


def _covers(fresh, interrupt):
    for step in fresh['pending']:
        if step['package'] == interrupt['package'] and step.get('wave') == interrupt['wave'] and 'interrupt' in step:
            return step.get('covers') or []
    return []


# ---------------------------------------------------------------- the header


def header(r):
    """The comment at the top: what the CR is, what the playbook does, how to run it."""
    cr, spec, fresh = r['cr'], r['cr_document']['spec'], r['fresh']
    name, base = cr['name'], os.path.basename(r['dest'])
    lines = ['---', '# %s: NodeWright CR %s as a playbook' % (base, name), '#',
             '# Rendered by nodewright.bridge.render on %s' % r['rendered_at'],
             '#   from:        %s' % ('the cluster (%s %s)' % (cr['kind'], name) if r['from_cluster'] else r['source']),
             '#   CR:          %s %s (%s), priority %s%s%s' % (
                 cr['kind'], name, cr['apiVersion'], cr['priority'], ', serial' if cr.get('serial') else '',
                 ', runtimeRequired' if cr.get('runtimeRequired') else ''),
             '#   nodes:       %s' % ('labelled ' + selector_text(spec['nodeSelectors']) if spec.get('nodeSelectors')
                                      else 'all (no nodeSelectors)'),
             '#   protected:   %s' % (('pods matching %s (podNonInterruptLabels): the drain waits until none runs'
                                       % selector_text(cr['podNonInterruptLabels'])) if cr.get('podNonInterruptLabels')
                                      else 'no podNonInterruptLabels'),
             '#   policy:      %s' % wordwrap(r['policy_text'], 80, '\n#                '),
             '#   packages, in the order they run on a node without them:']
    order = []
    for step in fresh['pending']:
        if step['package'] not in order:
            order.append(step['package'])
    lines.extend(_package_line(r, number, pkg) for number, pkg in enumerate(order, 1))
    for number, interrupt in enumerate(fresh['interrupts'], 1):
        covers = _covers(fresh, interrupt)
        lines.append('#   interrupt %d:  %s, run by %s%s' % (
            number, interrupt_text(interrupt), interrupt['package'],
            ' (merged with the interrupts of %s)' % ', '.join(covers) if covers else ''))
    lines.extend(_node_counts(r) + _what_it_does(r) + _how_to_run(base))
    return '\n'.join(lines)


def _node_counts(r):
    nodes, cr = r['nodes'], r['cr']
    to_update = nodes['to_update']
    lines = ['#   at render time: %d nodes selected, %d complete, %d to update%s' % (
        len(nodes['selected']), len(nodes['complete']), len(to_update),
        ': ' + ', '.join(to_update) if to_update and len(to_update) <= 20 else '')]
    if nodes['unsupported']:
        lines.append('#   WARNING: at render time these nodes need steps this playbook does not have (it refuses them):')
        lines.extend('#     %s: %s' % (n, ', '.join(steps)) for n, steps in nodes['unsupported'].items())
    if cr.get('paused') or cr.get('disabled'):
        lines.append('#   NOTE: the CR is %s: the playbook plans and reports, but updates no node.'
                     % ('paused' if cr.get('paused') else 'disabled'))
    return lines


def _what_it_does(r):
    name, drained = r['cr']['name'], r['fresh']['needs_drain']
    lines = ['#', '# What it does, on every node the CR selects that is not complete yet, in the batches of the',
             '# policy (strategy nodewright.bridge.budgeted):']
    if drained:
        lines.append('#   cordon for %s -> wait for protected pods, drain ->' % name)
    shown = [s + (' (or upgrade)' if s.endswith(':apply') and s[:-6] in r['upgrades'] else '')
             for s in r['playbook_steps'] if not s.endswith(':upgrade')]
    lines.append('#   ' + wordwrap(' -> '.join(shown), 92, '\n#   '))
    lines.append('#   %srecord %s complete%s' % (
        '-> health check -> ' if drained else '', name, ' -> uncordon' if drained else ''))
    lines.extend([
        '#',
        "# Every step first asks the node's plan, made from its state annotations when its batch starts:",
        '# a step that is no longer pending is skipped. So a re-run leaves complete nodes alone and a',
        '# node that failed resumes where it stopped. A node that fails stays cordoned, its state',
        '# erroring. A node that needs steps this playbook does not have (an uninstall, a changed',
        '# configMap, an interrupt merged differently) is refused before anything is done to it.'])
    if r['upgrades']:
        lines.append('# Packages some node had in an older version when rendered get an upgrade task too.')
    return lines


def _how_to_run(base):
    return [
        '#',
        '# Run it:',
        '#   ansible-playbook %s' % base,
        '#   ansible-playbook %s -e nodewright_kubeconfig=~/.kube/gpu-cluster -e nodewright_namespace=skyhook' % base,
        '# Needs the nodewright.bridge collection and the kubernetes and PyYAML Python packages.',
        '# The connection: nodewright_kubeconfig / nodewright_context, or the K8S_AUTH_* variables.',
        '# The other settings (namespace, images, time limits) are the variables of the second play.']


# ---------------------------------------------------------------- the node's tasks


class RenderedValues(node_steps.ValueSource):
    """The rendered playbook's values: its Jinja for what is known at run time, the CR's for the rest."""

    node = Expression('{{ inventory_hostname }}')

    def __init__(self, r):
        self.r = r
        self.cr = r['cr']['name']
        self.reboots = any(node_steps.reboots(s) for s in r['fresh']['pending'])

    def setting(self, name):
        return Expression('{{ nodewright_%s }}' % name)

    def setting_if_set(self, name):
        return Expression('{{ nodewright_%s | default(omit, true) }}' % name)

    def tuning(self, name):
        return node_steps.OMIT

    def protected_pods(self):
        return self.r['cr'].get('podNonInterruptLabels') or node_steps.OMIT

    def drain_config(self):
        value = self.r['cr'].get('drainConfig')
        return node_steps.OMIT if value is None else value

    def boot_before_reboot(self):
        return Expression('{{ nw_boot_before_reboot | default(omit, true) }}') if self.reboots else node_steps.OMIT

    def runtime_required_crs(self):
        return self.r['runtime_required_crs']

    def cr_source(self):
        if self.r['from_cluster']:
            return {'cr_name': self.cr}
        return {'cr': Expression('{{ nw_documents }}')}


WHEN = {
    node_steps.ALWAYS: None,
    node_steps.IF_DRAINED: 'nw_needs_drain',
    node_steps.IF_CORDON_HELD: 'nw_needs_drain or nw_cordoned',
    node_steps.ON_FAILURE_IF_ASKED: 'nodewright_uncordon_on_failure | bool and (nw_needs_drain or nw_cordoned)',
}


def _titles(r, values):
    name, protected = r['cr']['name'], r['cr'].get('podNonInterruptLabels')
    return {
        'cordon': 'Cordon the node for %s' % name,
        'drain': ('Wait until no pod matching %s runs, then drain' % selector_text(protected)) if protected else 'Drain',
        'health': 'Check the node is healthy (Ready%s; pods matching nodewright_health_pod_selector Ready, if set)'
                  % (', a new boot ID after the reboot' if values.reboots else ''),
        'complete': 'Record %s complete on the node' % name,
        'uncordon': "Uncordon (only %s's own cordon is released)" % name,
        'uncordon after failure': 'Uncordon after the failure, as asked (nodewright_uncordon_on_failure)',
    }


def _task(title, module, args, when=None, register=None):
    task = {'name': title, 'nodewright.bridge.' + module: args}
    if register:
        task['register'] = register
    if when:
        task['when'] = when
    return task


def _pending_tasks(r, values, step):
    """The tasks (or a comment) of one pending step of a node without the CR."""
    label = _label(r, step['package'])
    call = node_steps.pending_call(values, step)
    if call is None:
        return ['# %s: interrupt - merged into the interrupt of %s' % (label, step['merged_into'])]
    module, args = call
    when = "'%s' in nw_pending" % step['id']
    if module == 'package_stage':
        tasks = []
        if step['stage'] == 'apply' and step['package'] in r['upgrades']:
            upgrade = dict(step, stage='upgrade')
            tasks.append(_task('%s: upgrade (a node with an older version)' % label, module, dict(args, stage='upgrade'),
                               "'%s' in nw_pending" % step_id(upgrade)))
        return tasks + [_task('%s: %s' % (label, step['stage']), module, args, when)]
    covers = step.get('covers') or []
    title = '%s: interrupt, %s%s' % (label, interrupt_text(step['interrupt']),
                                     ' (also for %s)' % ', '.join(covers) if covers else '')
    if not node_steps.reboots(step):
        return [_task(title, module, args, when)]
    return [_task(title, module, args, when, register='nw_reboot'),
            {'name': 'Remember the boot before the reboot, for the health check',
             'ansible.builtin.set_fact': {'nw_boot_before_reboot': Expression('{{ nw_reboot.boot_id_before }}')},
             'when': 'nw_reboot is not skipped and nw_reboot.rebooted | default(false)'}]


def node_tasks(r, steps):
    """The tasks of ``steps`` (node_steps.STEPS or RESCUE) for the rendered playbook: dicts and comments."""
    values = RenderedValues(r)
    titles = _titles(r, values)
    out = []
    for step in steps:
        if step.when == node_steps.IF_DRAINED and not r['fresh']['needs_drain']:
            continue  # a node without the CR is never drained: the playbook has no such task
        if step.is_pending:
            for pending in node_steps.pending_part(step, r['fresh']['pending']):
                out.extend(_pending_tasks(r, values, pending))
            continue
        out.append(_task(titles[step.key], step.module, step.args(values), WHEN[step.when]))
    return out


def tasks_yaml(tasks, indent=TASK_INDENT):
    """Tasks as a YAML list, a blank line between them; a string is a comment line."""
    pad = ' ' * indent
    chunks = []
    for task in tasks:
        if isinstance(task, str):
            chunks.append(pad + task)
        else:
            chunks.append(pad + '-' + block_yaml.item(task, indent + 2))
    return '\n\n'.join(chunks)


def pod_module_defaults(r, indent):
    values = RenderedValues(r)
    defaults = {'nodewright.bridge.package_stage': node_steps.pod_settings(values, 'package_stage')}
    if r['fresh']['interrupts']:
        defaults['nodewright.bridge.node_interrupt'] = node_steps.pod_settings(values, 'node_interrupt')
    return block_yaml.to_block_yaml(defaults, indent)


def playbook_parts(r):
    """The generated parts of the playbook, for the template to place (``r``: render.yml's nw_r)."""
    r = dict(r)
    r.update(r.pop('render', None) or {})  # render_data's result
    name = r['cr']['name']
    cr_arg = RenderedValues(r).cr_source()
    return {
        'header': header(r),
        'name': scalar(name),
        'cr_arg': block_yaml.to_block_yaml(cr_arg, 0),
        'cr_document': block_yaml.to_block_yaml(r['cr_document'], 4, 'nw_cr_document'),
        'policy_document': block_yaml.to_block_yaml(r['policy_document'], 4, 'nw_policy_document'),
        'policy_name': ((r['policy_document'] or {}).get('metadata') or {}).get('name', '(inline)'),
        'interruption_budget': block_yaml.flow(r['interruption_budget']),
        'runtime_required_crs': block_yaml.flow(r['runtime_required_crs']),
        'playbook_steps': block_yaml.to_block_yaml(r['playbook_steps'], 4, 'nw_playbook_steps'),
        'settings': '\n'.join(block_yaml.to_block_yaml(v, 4, k) for k, v in r['settings'].items()),
        'module_defaults': pod_module_defaults(r, 4),
        'block': tasks_yaml(node_tasks(r, node_steps.STEPS)),
        'rescue': tasks_yaml(node_tasks(r, node_steps.RESCUE)),
    }
