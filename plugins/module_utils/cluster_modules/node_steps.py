# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""The per-node sequence of a CR, defined once: which module runs, when, with which arguments.

    the plan's steps that need no cordon -> cordon -> the steps that run cordoned -> wait for
    the protected pods and drain -> the steps that need the drain (the packages with an
    interrupt and what depends on them; the merged interrupt of each wave) -> health gate (a
    new boot ID after a reboot) -> record complete -> uncordon;  on a failure: uncordon, only
    if asked. Which of the plan's steps goes where is the plan's ``after`` (node_plan).

Three things follow this definition:

* ``plugin_utils/execution/node_sequence.py`` (``nodewright.bridge.node_update``, and so the node role)
  runs it with the node's concrete values;
* the render (``plugins/filter/render_playbook.py``) writes it out as tasks whose values are
  the rendered playbook's Jinja expressions;
* the maintenance role (``roles/maintenance/tasks/main.yml``, hand-written: the user's step sits
  in the middle) has the same cluster steps minus the CR state; a unit test compares them.

An argument builder reads every value from a ``ValueSource``; a value that is ``OMIT`` is not
passed (the module's default applies). The option names the modules accept are only here.
No I/O.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.nodewright.bridge.plugins.module_utils import cluster_modules
from ansible_collections.nodewright.bridge.plugins.module_utils.model.stages import INTERRUPT_STAGES


class _Omit(object):
    def __repr__(self):
        return 'OMIT'


OMIT = _Omit()

# When a step applies, by what the plan says of the node.
ALWAYS = 'always'
IF_DRAINED = 'drained'  # an interrupt is due: the node is cordoned and drained for it
IF_CORDON_HELD = 'cordon held'  # drained now, or cordoned by the CR from an earlier run
ON_FAILURE_IF_ASKED = 'failure, uncordon_on_failure and cordon held'


class ValueSource(object):
    """Where the argument values come from. The methods name what the value is, not how it is found."""

    node = None  # the node's name
    cr = None  # the CR's name

    def setting(self, name):
        """A setting of the sequence (a node_update option, a node role variable without ``nodewright_``)."""
        raise NotImplementedError

    def setting_if_set(self, name):
        """A setting passed only when it is not empty."""
        raise NotImplementedError

    def tuning(self, name):
        """A node_update option that a rendered playbook leaves at the module's default."""
        raise NotImplementedError

    def protected_pods(self):
        """The CR's podNonInterruptLabels, or OMIT."""
        raise NotImplementedError

    def drain_config(self):
        """A NodeWright's drainConfig (the plan's, defaults filled in), or OMIT (a Skyhook has none)."""
        return OMIT

    def boot_before_reboot(self):
        """The node's boot ID before the interrupt rebooted it, or OMIT."""
        raise NotImplementedError

    def runtime_required_crs(self):
        raise NotImplementedError

    def cr_source(self):
        """How a pod module finds the CR: ``{'cr_name': ...}`` and/or ``{'cr': documents}``; node_update adds the
        ``cr_identity`` its plan read (uid, generation), which the step compares with the CR it reads."""
        raise NotImplementedError

    def cordon_take_over(self):
        """Whether the CR's records say it was rolling the node (node_cordon take_over), or OMIT."""
        return OMIT


class Step(object):
    """One step of the sequence: ``key`` (its name in node_update's result), module, when, argument builder.

    A step without a module is a place for the plan's pending steps: those whose ``after`` is
    ``pending_after``.
    """

    def __init__(self, key, module, when, build=None, records_state=False, pending_after=None):
        self.key = key
        self.module = module
        self.when = when
        self.build = build
        # a step about the CR's state on the node (the maintenance role, without a CR, has none)
        self.records_state = records_state
        self.pending_after = pending_after

    @property
    def is_pending(self):
        return self.module is None

    def args(self, source):
        return without_omitted(self.build(source))

    def __repr__(self):
        return 'Step(%r, %r)' % (self.key, self.module)


def without_omitted(args):
    return dict((k, v) for k, v in args.items() if v is not OMIT)


def _cordon_args(src):
    # hold: a pause, disable or ignore written since the plan takes no cordon, as it starts no pod
    return {'node': src.node, 'cr_name': src.cr, 'take_over': src.cordon_take_over(), 'hold': True}


def _uncordon_args(src):
    return {'node': src.node, 'cr_name': src.cr, 'state': 'uncordoned'}


def _drain_args(src):
    return {
        'node': src.node,
        'wait_for': src.protected_pods(),
        'wait_for_timeout': src.setting('wait_for_protected_timeout'),
        'hold_for': src.cr,  # a pause during the wait for the protected pods evicts nothing (and names drainStart_)
        # the budgeted strategy's mailbox: the node's batch slot goes back while its protected pods run
        'park': src.setting_if_set('park'),
        'drain_config': src.drain_config(),
        'timeout': src.setting('drain_timeout'),
        'preflight': src.setting('drain_preflight'),
        'skip': src.setting('drain_skip'),
    }


def _health_args(src):
    return {
        'node': src.node,
        'boot_id_not': src.boot_before_reboot(),
        'pod_selector': src.setting_if_set('health_pod_selector'),
        'min_pods': src.setting('health_min_pods'),
        'timeout': src.setting('health_timeout'),
    }


def _complete_args(src):
    return {
        'node': src.node,
        'cr_name': src.cr,
        'action': 'complete',
        'runtime_required_crs': src.runtime_required_crs(),
        'runtime_required_taint': src.tuning('runtime_required_taint'),
    }


# the places of the plan's pending steps (pending_call), by what they wait for (node_plan's ``after``)
PENDING_FIRST = 'pending, before the cordon'
PENDING_CORDONED = 'pending, cordoned'
PENDING = 'pending'
DRAIN = 'drain'

STEPS = (
    Step(PENDING_FIRST, None, ALWAYS, pending_after=None),
    Step('cordon', 'node_cordon', IF_DRAINED, _cordon_args),
    Step(PENDING_CORDONED, None, IF_DRAINED, pending_after='cordon'),
    Step(DRAIN, 'node_drain', IF_DRAINED, _drain_args),
    Step(PENDING, None, ALWAYS, pending_after='drain'),
    Step('health', 'node_health', IF_DRAINED, _health_args),
    Step('complete', 'node_state', ALWAYS, _complete_args, records_state=True),
    Step('uncordon', 'node_cordon', IF_CORDON_HELD, _uncordon_args),
)

RESCUE = (
    Step('uncordon after failure', 'node_cordon', ON_FAILURE_IF_ASKED, _uncordon_args),
)


def step_kind(module, args):
    """What a call of ``module`` with ``args`` is, for the timeline: its module's kind (the registry,
    module_utils/cluster_modules), but ``uncordon`` for a node_cordon that uncordons; ``task`` for a module
    that is no step of the sequence."""
    if module == 'node_cordon' and args.get('state') == 'uncordoned':
        return 'uncordon'
    registered = cluster_modules.MODULES.get(module)
    return registered.kind if registered is not None and registered.is_step else 'task'


def applies(when, drained, cordon_held, failed=False, uncordon_on_failure=False):
    """Whether a step with ``when`` runs, for the plan's facts about the node."""
    held = drained or cordon_held
    return {
        ALWAYS: True,
        IF_DRAINED: drained,
        IF_CORDON_HELD: held,
        ON_FAILURE_IF_ASKED: failed and uncordon_on_failure and held,
    }[when]


# ---------------------------------------------------------------- the pending steps


def pod_settings(src, module):
    """The arguments every call of a pod module shares (a rendered playbook's module_defaults)."""
    timeout = 'interrupt_timeout' if module == 'node_interrupt' else 'stage_timeout'
    args = dict(src.cr_source())
    args.update({
        'namespace': src.setting('namespace'),
        'agent_image': src.setting('agent_image'),
        'pause_image': src.tuning('pause_image'),
        'image_pull_secret': src.setting('image_pull_secret'),
        'copy_dir_root': src.tuning('copy_dir_root'),
        'agent_log_root': src.tuning('agent_log_root'),
        'runtime_required_taint': src.tuning('runtime_required_taint'),
        'timeout': src.setting(timeout),
        'stage_retries': src.setting('stage_retries'),
        'delete_pod': src.setting('delete_pod'),
    })
    return without_omitted(args)


def pending_call(src, step):
    """``(module, arguments)`` of one of the plan's pending steps (pod_settings apart), or None.

    None for an interrupt merged into another package's (the plan's ``skipped``): the interrupt
    that covers it records it.
    """
    if step['stage'] not in INTERRUPT_STAGES:
        return 'package_stage', {'node': src.node, 'package': step['package'], 'stage': step['stage']}
    if step.get('skipped'):
        return None
    return 'node_interrupt', {'node': src.node, 'package': step['package'], 'stage': step['stage'],
                              'interrupt': step['interrupt'], 'covered': list(step.get('covers') or [])}


def step_by_key(key):
    """The step of STEPS named ``key``."""
    return next(step for step in STEPS if step.key == key)


def pending_part(step, pending):
    """The plan's ``pending`` steps that go in the place ``step``.

    A step without ``after`` (a plan made before there was one) goes where every step went then:
    after the drain.
    """
    return [p for p in pending if p.get('after', 'drain') == step.pending_after]


def reboots(step):
    """Whether the step's interrupt reboots the node (the health gate then wants a new boot ID)."""
    return (step.get('interrupt') or {}).get('type') == 'reboot' and not step.get('skipped')
