# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""Fallback for the budgeted strategy: one ``ansible-playbook --limit`` run per batch.

ansible-core 2.19+ deprecates strategy plugins outside ansible.builtin, with no replacement
announced. This driver needs no strategy plugin: it asks the same scheduler for a batch, runs
the playbook (with the stock linear strategy) limited to that batch, reads which hosts failed
from the run's retry file, feeds the outcome back, and repeats. Compartments advance in waves,
one run per wave, as in the strategy's batch mode with lockstep; with ``--no-lockstep``
(``independent``) each compartment's batch is a run of its own, the runs of several
compartments at the same time, and a compartment's next batch starts as soon as its own
run ended, as in the strategy's batch mode without lockstep.

Use ``drive()`` with your own ``run_batch(hosts) -> failed hosts`` (for example through
ansible-runner, see docs/strategy.md), or the command line::

    PYTHONPATH=<dir holding ansible_collections> python -m \\
        ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout.limit_driver \\
        -i inventory.yml --budget percent=25 --report report.json site.yml [-- ansible-playbook args]

Exit status: 0 when every admitted host succeeded and nothing was left out, 2 otherwise,
1 on a configuration or run error.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import argparse
import contextlib
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading

import yaml

from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube as kube_api
from ansible_collections.nodewright.bridge.plugins.module_utils.planning import rollout_gates
from ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout.admission import FAILED, OK, Admission, Reporter
from ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout import rollout_config
from ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout import gate_checks
from ansible_collections.nodewright.bridge.plugins.plugin_utils.reporting import rollout_state
from ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout import budget_lease


class BatchRunError(RuntimeError):
    """A batch run ended in a way that says nothing about its hosts (syntax error, crash)."""


class LineReporter(Reporter):
    """What the admission says, as ``nodewright: ...`` lines (the --limit driver's, and apply's rollout without the
    strategy: plugin_utils/rollout/builtin_rollout.py)."""

    def __init__(self, echo):
        self.echo = echo or (lambda line: None)

    def scored(self, comp, record):
        self.echo('nodewright: [%s] batch %d: size %d, ok %d, failed %d, progress %d%%%s' % (
            comp, record['number'], record['size'], len(record['ok']), len(record['failed']), record['progress'],
            ' -- compartment stopped' if record['stopped'] else ''))

    def fleet_scored(self, comp, record):
        self.echo('nodewright: [%s] fleet batch %d scored: %d nodes over every run, %d ok, %d failed%s' % (
            comp, record['number'], record['size'], len(record['ok']), len(record['failed']),
            ' -- stopped' if record['stopped'] else ''))

    def waiting(self, comp, message):
        self.echo('nodewright: waiting%s: %s' % ('' if comp is None else ' [%s]' % comp, message))

    def deferred(self, title, reason, until):
        self.echo('nodewright: %s: %s; the hosts not started wait for %s' % (title.lower(), reason, until))

    def warning(self, message):
        self.echo('nodewright: warning: %s' % message)

    def error(self, message):
        self.echo('nodewright: %s' % message)

    def stopped(self, comp, reason):
        self.echo('nodewright: [%s] stopped: %s' % (comp, reason))


@contextlib.contextmanager
def _renewal(budget):
    """While the block runs batches, a thread keeps the run's slots alive (a batch may outlast their expiry)."""
    if budget is None:
        yield
        return
    done = threading.Event()
    failure = []

    def renew():
        while not done.wait(2.0):
            try:
                budget.renew_if_due()
            except budget_lease.BudgetError as exc:
                failure.append(exc)
                return
    thread = threading.Thread(target=renew, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
        if failure:
            raise BatchRunError(str(failure[0]))


def _outcomes(hosts, failed):
    return dict((n, FAILED if n in failed else OK) for n in hosts)


def _in_waves(admission, run_batch, echo, order):
    """One run per wave: the batches of every compartment without one in flight, together."""
    while True:
        batches = admission.admit()
        if not batches:
            return
        wave = [h for name in order for h in batches.get(name, [])]
        if echo:
            echo('nodewright: running %s' % ', '.join('%s: %s' % (n, ','.join(batches[n])) for n in order if n in batches))
        with _renewal(admission.budget):
            failed = set(run_batch(wave))
        admission.finish(_outcomes(wave, failed))


def _independently(admission, run_batch, echo, order):
    """A run per compartment batch, several at once: a compartment's next batch starts when its own run ended.

    Only this thread touches the admission; each run's thread hands its outcome back through a queue. A run
    that fails to run (BatchRunError) stops admission and leaves its hosts unscored; the runs in flight end
    first, then it is raised.
    """
    ended, running, errors = queue.Queue(), {}, []

    def run(comp, hosts):
        try:
            ended.put((comp, hosts, set(run_batch(hosts)), None))
        except Exception as exc:  # pylint: disable=broad-except
            ended.put((comp, hosts, None, exc))
    with _renewal(admission.budget):
        while True:
            started = {} if errors else admission.admit()
            for comp in sorted(started, key=order.index):
                if echo:
                    echo('nodewright: running %s: %s' % (comp, ','.join(started[comp])))
                running[comp] = threading.Thread(target=run, args=(comp, started[comp]), daemon=True)
                running[comp].start()
            if not running:
                break
            try:
                # at most a second: while runs go on, idle compartments are asked again (a window, a gate, the budget)
                comp, hosts, failed, error = ended.get(timeout=1.0)
            except queue.Empty:
                continue
            running.pop(comp).join()
            if error is not None:
                # a run that says nothing about its hosts: they stay unscored (as in waves, where it is raised at once)
                errors.append(error)
                admission.halt('a batch run failed: %s' % error)
                continue
            admission.finish(_outcomes(hosts, failed))
    if errors:
        raise errors[0]


def drive(scheduler, run_batch, record=None, echo=None, budget=None, windows=None, gates=None, independent=False):
    """Run ``scheduler`` (a RolloutScheduler) to the end; ``run_batch(hosts)`` returns the failed hosts.

    ``record`` is an optional rollout_state.Rollout to log batches into; ``echo(line)`` prints progress.
    ``budget``: a plugin_utils.rollout.budget_lease.SharedBudget (joined by this call) to share the batches
    with other runs, as the strategy does; ``windows`` (module_utils' WindowSettings) and ``gates``
    (plugin_utils.rollout.gate_checks.BatchGates) are checked before each wave, as the strategy checks them
    before each batch (plugin_utils/rollout/admission.py holds these rules for both). Returns the scheduler's
    summary, with ``deferred`` set when a window did not open in time. A shared budget that cannot be
    used raises budget_lease.BudgetError once the wave in flight ended. ``independent``: each
    compartment's batch in a run of its own, runs of several compartments at once (``run_batch`` is
    then called from several threads); else one run per wave.
    """
    admission = Admission(scheduler, record=record, reporter=LineReporter(echo), budget=budget, windows=windows,
                          gates=gates, independent=independent)
    summary, elsewhere = run_admission(admission, run_batch, echo)
    if echo and elsewhere:
        echo('nodewright: finished by other runs of the shared budget: %s' % ', '.join(sorted(elsewhere)))
    if admission.budget_failure is not None:
        raise budget_lease.BudgetError(admission.budget_failure)
    return summary


def run_admission(admission, run_batch, echo=None, before=None):
    """``admission`` (an Admission, its shared budget not joined yet) run to its end: ``(summary, elsewhere)`` as
    ``Admission.close`` returns them. ``before()``, if given, runs once the budget is joined (batch states kept)."""
    order = [c.name for c in admission.scheduler.compartments]
    try:
        admission.join()
        if before is not None:
            before()
        (_independently if admission.independent else _in_waves)(admission, run_batch, echo, order)
    finally:
        closed = admission.close()
    return closed


def playbook_runner(playbook, inventory, extra_args=(), env=None, binary='ansible-playbook', echo=None):
    """A ``run_batch`` that runs ``ansible-playbook --limit @file`` and reads the retry file.

    The retry file lists exactly the hosts that failed or were unreachable, whatever the
    stdout callback; return codes 0, 2 and 4 are outcomes, anything else raises BatchRunError.
    """
    def run_batch(hosts):
        work = tempfile.mkdtemp(prefix='nodewright-batch-')
        try:
            limit = os.path.join(work, 'limit')
            with open(limit, 'w') as handle:
                handle.write('\n'.join(hosts) + '\n')
            run_env = dict(os.environ if env is None else env)
            run_env.update({'ANSIBLE_RETRY_FILES_ENABLED': 'true', 'ANSIBLE_RETRY_FILES_SAVE_PATH': work})
            cmd = [binary] + sum([['-i', inv] for inv in inventory], []) + ['--limit', '@' + limit, playbook]
            cmd += list(extra_args)
            if echo:
                echo('nodewright: %s' % ' '.join(cmd))
            rc = subprocess.call(cmd, env=run_env)
            if rc not in (0, 2, 4):
                raise BatchRunError('%s exited with %d for batch %s' % (binary, rc, ', '.join(hosts)))
            retry = os.path.join(work, os.path.splitext(os.path.basename(playbook))[0] + '.retry')
            if not os.path.exists(retry):
                if rc != 0:
                    raise BatchRunError('%s exited with %d but wrote no retry file' % (binary, rc))
                return set()
            with open(retry) as handle:
                return set(line.strip() for line in handle if line.strip())
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return run_batch


def load_nodes(inventory, pattern='all', limit=None):
    """``[(name, compartment, labels)]`` for the hosts ``pattern`` selects, in inventory order.

    Uses ansible-core's own inventory and variable manager, so group_vars, host_vars and
    templated values resolve as they would for a play.
    """
    from ansible.inventory.manager import InventoryManager
    from ansible.parsing.dataloader import DataLoader
    from ansible.template import Templar
    from ansible.vars.manager import VariableManager

    loader = DataLoader()
    manager = InventoryManager(loader=loader, sources=list(inventory))
    if limit:
        manager.subset(limit)
    variables = VariableManager(loader=loader, inventory=manager)
    out = []
    for host in manager.get_hosts(pattern):
        host_vars = variables.get_vars(host=host, include_hostvars=False)
        templar = Templar(loader=loader, variables=host_vars)
        values = []
        for var in rollout_config.HOST_VARS:
            values.append(templar.template(host_vars[var]) if host_vars.get(var) is not None else None)
        out.append((host.name, values[0], values[1]))
    return out


def _budget(text):
    key, sep, value = text.partition('=')
    if not sep or key not in ('percent', 'count'):
        raise argparse.ArgumentTypeError('expected percent=N or count=N, got %r' % text)
    try:
        return {key: int(value)}
    except ValueError:
        raise argparse.ArgumentTypeError('%s must be an integer, got %r' % (key, value))


def _arguments(argv):
    parser = argparse.ArgumentParser(description='Run a playbook in NodeWright budgeted batches, one --limit run per batch.')
    parser.add_argument('playbook')
    parser.add_argument('-i', '--inventory', action='append', required=True)
    parser.add_argument('--hosts', default='all', help='host pattern of the rollout (the play\'s hosts)')
    parser.add_argument('--limit', help='like ansible-playbook --limit, applied before budgets are computed')
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument('--policy', help='DeploymentPolicy file (YAML or JSON; may also hold the CR)')
    group.add_argument('--budget', type=_budget, help='plain interruption budget: percent=N or count=N')
    parser.add_argument('--order', choices=rollout_config.ORDERS, default='inventory')
    parser.add_argument('--no-lockstep', action='store_true', help='each compartment\'s batch in a run of its own, runs of '
                        'several compartments at once: a compartment starts its next batch when its own run ended '
                        '(as the strategy with nodewright_batch_lockstep: false); default, one run per wave')
    parser.add_argument('--report', help='write the JSON report (the format of the rollout callback) here')
    parser.add_argument('--ansible-playbook', default='ansible-playbook', dest='binary')
    parser.add_argument('--shared-budget', metavar='NAME', help='share the budget with every run of NAME (a Lease per '
                        'compartment, as nodewright_shared_budget does for the strategy)')
    parser.add_argument('--budget-namespace', help='the Leases\' namespace (default: the operator namespace of the '
                        'cluster\'s API generation, skyhook or nodewright, as the strategy\'s)')
    parser.add_argument('--slot-expiry', type=int, default=budget_lease.DEFAULT_EXPIRY)
    parser.add_argument('--kubeconfig')
    parser.add_argument('--context')
    parser.add_argument('--gates', metavar='FILE', help='YAML or JSON with nodewright_maintenance_windows, '
                        'nodewright_maintenance_action, nodewright_maintenance_timeout and nodewright_gates '
                        '(docs/windows-and-gates.md), checked before each batch')
    parser.add_argument('extra', nargs=argparse.REMAINDER, help='arguments for ansible-playbook, after --')
    return parser.parse_args(argv)


def _play_vars(args):
    """The play variables the arguments stand for; RolloutConfigError when --gates cannot be read."""
    play_vars = {rollout_config.VAR_ORDER: args.order}
    if args.gates:
        try:
            with open(args.gates) as handle:
                gate_vars = yaml.safe_load(handle) or {}
        except (IOError, OSError, yaml.YAMLError) as exc:
            raise rollout_config.RolloutConfigError(['--gates %s: %s' % (args.gates, exc)])
        if not isinstance(gate_vars, dict):
            raise rollout_config.RolloutConfigError(['--gates %s: must hold a mapping of variables' % args.gates])
        play_vars.update((k, gate_vars.get(k)) for k in rollout_gates.PLAY_VARS)
    if args.policy:
        play_vars[rollout_config.VAR_POLICY] = args.policy
    else:
        play_vars[rollout_config.VAR_BUDGET] = args.budget
    return play_vars


def _budget_and_gates(args, settings, scheduler, hosts):
    """``(budget, gates)``: the shared budget and the gates (plugin_utils.rollout.gate_checks.BatchGates), each or None."""
    connection = {'kubeconfig': args.kubeconfig, 'context': args.context}
    # one session for the driver's clients: the budget's Lease writes and the NotReady gate's listing share a client
    session = kube_api.KubeSession()
    budget = None
    if args.shared_budget:
        budget = budget_lease.for_rollout(connection, scheduler, 'batch', args.shared_budget,
                                          namespace=args.budget_namespace, expiry=args.slot_expiry, session=session)
    return budget, gate_checks.gates_for(settings.gates, connection, names=[h[0] for h in hosts], session=session)


def main(argv=None):
    args = _arguments(argv)
    extra = args.extra[1:] if args.extra[:1] == ['--'] else args.extra

    def read_file(path):
        with open(path) as handle:
            return handle.read()

    try:
        settings = rollout_config.parse_settings(_play_vars(args), read_file=read_file)
        hosts = load_nodes(args.inventory, args.hosts, args.limit)
        nodes, pinned = rollout_config.node_inputs(settings, hosts)
        scheduler = rollout_config.build_scheduler(settings, nodes, pinned)
    except rollout_config.RolloutConfigError as exc:
        sys.stderr.write('nodewright: %s\n' % exc)
        return 1

    lock = threading.Lock()

    def echo(line):
        # one write per line, under a lock: with --no-lockstep runs of several compartments echo at once
        with lock:
            sys.stdout.write(line + '\n')
            sys.stdout.flush()

    # the driver's own record of its rollout (no callback listens in this process: it writes the report itself)
    bus = rollout_state.RolloutBus()
    record = bus.start_rollout(os.path.basename(args.playbook), 'batch', rollout_config.compartment_summaries(scheduler))
    runner = playbook_runner(args.playbook, args.inventory, extra, binary=args.binary, echo=echo)
    try:
        budget, gates = _budget_and_gates(args, settings, scheduler, hosts)
        summary = drive(scheduler, runner, record=record, echo=echo, budget=budget, windows=settings.windows, gates=gates,
                        independent=args.no_lockstep)
    except (BatchRunError, budget_lease.BudgetError, kube_api.KubeError) as exc:
        sys.stderr.write('nodewright: %s\n' % exc)
        return 1
    finally:
        if args.report:
            with open(args.report, 'w') as handle:
                json.dump(bus.report(), handle, indent=2, sort_keys=True)
    failed = any(c['failed'] for c in summary['compartments'])
    if summary['not_attempted']:
        echo('nodewright: never admitted: %s' % ', '.join(summary['not_attempted']))
    if summary['deferred'] and not failed:
        return 0  # outside the maintenance windows: a clean stop, as in the strategy
    return 2 if failed or summary['stopped'] or summary['not_attempted'] else 0


if __name__ == '__main__':
    sys.exit(main())
