# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""One stage of a fleet rollout: the apply playbook run on each of its clusters, at most ``max_concurrency`` at once.

Why a run of ``nodewright.bridge.apply`` per cluster: each cluster then gets the whole of what apply does for one
(its plan, its API generation detected on its own, the operator guard, the budgeted batches of its policy, the CR
status, Events and metrics), with the same code and the same tests; the fleet adds the order between clusters.
Each run is a process group of its own (a progress deadline stops it as Ctrl-C would: the nodes keep the state they
recorded, a later run resumes them) that is stopped when the fleet's run dies (killed, Ctrl-C), with its log and
its JSON report (the rollout callback's) in ``work_dir``; its progress lines (each compartment's batches) are said
again with its cluster's name.
A stage stops starting clusters once the fleet's failures exceed ``max_failures``; the runs in flight end first.

Before a cluster starts, a NodeWright operator that reconciles a CR of the run there is looked for (fleet_operator.py):
such a cluster is skipped, or handed over to that operator (the fleet waits, within the progress deadline, until it
has completed every node of those CRs there), as the fleet file chose for it; its apply run, which would refuse
the CR, never starts. Then the maintenance windows and the gates its apply run is given (``nodewright_maintenance_*``,
``nodewright_gates`` in ``apply_vars``) are checked for that cluster, as the run checks them before each batch: a
gate that stays blocked fails the cluster; outside the windows for good, the cluster and the rest of the fleet
wait for a later run (``deferred``, a clean stop).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

from ansible.module_utils.parsing.convert_bool import boolean

from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube as kube_api
from ansible_collections.nodewright.bridge.plugins.module_utils.model import fleet_model
from ansible_collections.nodewright.bridge.plugins.module_utils.planning import fleet_progress
from ansible_collections.nodewright.bridge.plugins.module_utils.planning import rollout_gates
from ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout import fleet_operator
from ansible_collections.nodewright.bridge.plugins.plugin_utils.rollout import gate_checks

OK, FAILED, DEADLINE, NOT_STARTED, DEFERRED = 'ok', 'failed', 'deadline', 'not started', 'deferred'
# a cluster whose NodeWright operator reconciles a CR of the run: left out, or completed by that operator
SKIPPED, HANDED_OVER = 'skipped', 'handed over'
# how often a cluster's apply log is read for its progress lines (and its run's end looked for)
FOLLOW_INTERVAL = 0.5
PROGRESS_PREFIX = 'nodewright: '
# what a terminal or AWX's event stream adds to a line: ansible-runner's event data (ESC[K, base64, ESC[<n>D) and colours
TERMINAL_ESCAPES = re.compile('\x1b\\[K[A-Za-z0-9+/=]*\x1b\\[[0-9]+D|\x1b\\[[0-9;]*[A-Za-z]')
# how often the fleet asks a handed-over cluster what its operator has left (one plan of each CR there)
HANDOVER_POLL = 10.0
# after SIGTERM, how long a run has to leave its shared budget and stop its sequences before SIGKILL
STOP_GRACE = 30.0
PR_SET_PDEATHSIG = 1


def collections_path():
    """ANSIBLE_COLLECTIONS_PATH for the runs: this collection's own tree first, then the caller's."""
    here = os.path.abspath(__file__)
    marker = os.sep + 'ansible_collections' + os.sep
    own = here[:here.index(marker)] if marker in here else None
    paths = [p for p in (own, os.environ.get('ANSIBLE_COLLECTIONS_PATH') or os.environ.get('ANSIBLE_COLLECTIONS_PATHS'))
             if p]
    return os.pathsep.join(paths)


def apply_command(cluster_id, connection, apply_vars, work_dir, check_mode):
    """``(argv, env, report path, log path)`` of the apply run for ``cluster_id``."""
    variables = dict(apply_vars)
    if variables.get('nodewright_fleet_budget'):
        # the fleet's budget knows each node by <cluster>/<node>
        variables['nodewright_fleet_budget'] = dict(variables['nodewright_fleet_budget'], cluster=cluster_id)
    for key in ('kubeconfig', 'context'):
        if connection.get(key):
            variables['nodewright_' + key] = connection[key]
    vars_file = os.path.join(work_dir, '%s.vars.json' % cluster_id)
    with open(vars_file, 'w') as handle:
        json.dump(variables, handle)
    report = os.path.join(work_dir, '%s.report.json' % cluster_id)
    log = os.path.join(work_dir, '%s.log' % cluster_id)
    binary = os.path.join(os.path.dirname(sys.executable), 'ansible-playbook')
    argv = [binary if os.path.exists(binary) else 'ansible-playbook', 'nodewright.bridge.apply', '-e', '@' + vars_file]
    if check_mode:
        argv.append('--check')
    env = dict(os.environ)
    callbacks = [c for c in (env.get('ANSIBLE_CALLBACKS_ENABLED') or '').split(',') if c.strip()]
    if 'nodewright.bridge.rollout' not in callbacks:
        callbacks.append('nodewright.bridge.rollout')
    # the run's log is for people and for RunProgress: the stock stdout callback, whatever the fleet's run prints with,
    # and not ansible-runner's callback directory (under AWX): its awx_display, loaded at all, wraps every line that
    # plugins display in the escapes that carry AWX's job events
    plugins = [p for p in (env.get('ANSIBLE_CALLBACK_PLUGINS') or '').split(os.pathsep)
               if p and not os.path.exists(os.path.join(p, 'awx_display.py'))]
    env.pop('ANSIBLE_CALLBACK_PLUGINS', None)
    if plugins:
        env['ANSIBLE_CALLBACK_PLUGINS'] = os.pathsep.join(plugins)
    env.update(ANSIBLE_COLLECTIONS_PATH=collections_path(), ANSIBLE_CALLBACKS_ENABLED=','.join(callbacks),
               NODEWRIGHT_REPORT=report, ANSIBLE_RETRY_FILES_ENABLED='false', ANSIBLE_NOCOLOR='1',
               ANSIBLE_STDOUT_CALLBACK='ansible.builtin.default')
    return argv, env, report, log


def _die_with_parent():
    """In the child before it runs apply (Linux): SIGTERM when the thread that started it dies, as when the fleet's
    run is killed or stopped with Ctrl-C; the run then stops as a stopped apply does (its nodes keep their state).
    Elsewhere a no-op: the run goes on to its end."""
    try:
        import ctypes  # pylint: disable=import-outside-toplevel
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        pass


def _read_report(path):
    try:
        with open(path) as handle:
            return json.load(handle)
    except (IOError, OSError, ValueError):
        return None


class RunProgress(object):
    """A cluster's apply log, read as it grows: its rollout's progress lines (``nodewright: `` first, the budgeted
    strategy's and the builtin rollout's: each rollout's compartments, each batch's size, outcome and progress) said
    again as ``nodewright fleet: [<cluster>] ...``, so the fleet's output names cluster, compartment and batch."""

    def __init__(self, cid, echo):
        self.cid = cid
        self.echo = echo
        self.partial = ''

    def read(self, handle):
        chunk = handle.read()
        if not chunk:
            return
        lines = (self.partial + chunk).split('\n')
        self.partial = lines.pop()  # a line still being written
        for line in (TERMINAL_ESCAPES.sub('', line) for line in lines):
            if line.startswith(PROGRESS_PREFIX) and not line.startswith(PROGRESS_PREFIX + 'report written'):
                self.echo('nodewright fleet: [%s] %s' % (self.cid, line[len(PROGRESS_PREFIX):]))


def node_outcomes(report):
    """node -> {'status', 'compartment', 'batch'} from a cluster's report (every rollout of its run, the last wins)."""
    nodes = {}
    for rollout in (report or {}).get('rollouts') or []:
        for name, entry in (rollout.get('nodes') or {}).items():
            nodes[name] = {'status': entry.get('status'), 'compartment': entry.get('compartment'),
                           'batch': entry.get('batch')}
    return nodes


class StageRun(object):
    """Run ``stage`` (a fleet_model.Stage) of ``fleet``; ``echo(line)`` says what happens."""

    def __init__(self, fleet, stage, apply_vars, work_dir, echo, check_mode=False, failed_before=0, popen=subprocess.Popen,
                 clock=time.time, selected=None, cr_names=(), operator=fleet_operator, sleep=time.sleep):
        self.fleet = fleet
        self.stage = stage
        self.apply_vars = apply_vars
        self.work_dir = work_dir
        self.echo = echo
        self.check_mode = check_mode
        self.failed_before = failed_before
        self.popen = popen
        self.clock = clock
        self.results = {}
        self.lock = threading.Lock()
        # the windows and gates every cluster's run checks before its batches: checked before it starts too
        self.windows, self.gates = rollout_gates.parse_play_vars(
            dict((k, apply_vars.get(k)) for k in rollout_gates.PLAY_VARS))
        self.deferred = None
        self.selected = selected or {}  # cluster -> the nodes its CRs select (the NotReady gate counts those)
        self.cr_names = list(cr_names)  # the run's CRs: an operator reconciling one of them takes the cluster
        self.operator = operator  # fleet_operator (its reconciled, describe and left; replaced in tests)
        self.sleep = sleep
        # as each cluster's apply run guards: not with nodewright_force, nor with nodewright_operator_guard false
        self.guard = (boolean(apply_vars.get('nodewright_operator_guard', True), strict=False)
                      and not boolean(apply_vars.get('nodewright_force', False), strict=False))
        self.api = apply_vars.get('nodewright_api') or None

    def _before_start(self, cid):
        """``(outcome, msg)`` when cluster ``cid`` may not start now (a gate held, or no window in time), else None."""
        windows = self.windows if self.windows is not None and self.windows.enabled else None
        gates = gate_checks.gates_for(self.gates, self.fleet.clusters[cid], names=self.selected.get(cid))
        if (windows is None and gates is None) or self.check_mode:
            return None
        reason, deferred = gate_checks.wait_before_batch(
            windows, gates, clock=self.clock, on_wait=lambda message: self.echo('nodewright fleet: [%s] %s' % (cid, message)))
        if reason is None:
            return None
        if deferred:
            with self.lock:
                self.deferred = self.deferred or '%s: %s' % (cid, reason)
            return DEFERRED, 'not started: %s (a later run starts it)' % reason
        return FAILED, 'not started: %s' % reason

    def over_budget(self):
        """More failed clusters over the fleet than ``max_failures``: nothing more starts."""
        failed = sum(1 for r in self.results.values() if r['outcome'] in (FAILED, DEADLINE))
        return self.failed_before + failed > self.fleet.max_failures

    def run(self):
        """Every cluster of the stage run (or left out once over the failure budget): ``{cluster: result}``."""
        pending = list(self.stage.clusters)
        running = {}
        while pending or running:
            with self.lock:
                stop = self.over_budget() or self.deferred is not None
            while pending and len(running) < self.stage.max_concurrency and not stop:
                cid = pending.pop(0)
                running[cid] = threading.Thread(target=self._run_cluster, args=(cid,), name='cluster-%s' % cid, daemon=True)
                running[cid].start()
            if stop:
                why = ('the fleet waits for a maintenance window (%s)' % self.deferred if self.deferred is not None else
                       '%d cluster(s) of the fleet failed (max_failures %d)' % (self.failed_before + self._failed(),
                                                                                self.fleet.max_failures))
                for cid in pending:
                    self.results[cid] = {'outcome': NOT_STARTED, 'rc': None, 'nodes': {}, 'elapsed': 0.0,
                                         'msg': 'not started: %s' % why}
                    self.echo('nodewright fleet: [%s] %s' % (cid, self.results[cid]['msg']))
                pending = []
            for cid, thread in list(running.items()):
                thread.join(timeout=0.5)
                if not thread.is_alive():
                    del running[cid]
        return self.results

    def _failed(self):
        return sum(1 for r in self.results.values() if r['outcome'] in (FAILED, DEADLINE))

    def _operator_first(self, cid, started):
        """The cluster's result when a NodeWright operator reconciles a CR of the run there (skipped, or handed over and
        waited for), else None (its apply run goes on: also when the cluster cannot be asked, which that run reports)."""
        if not self.cr_names or not self.guard:
            return None
        try:
            found = self.operator.reconciled(self.fleet.clusters[cid], self.cr_names, api=self.api)
        except kube_api.KubeError:
            return None
        if not found:
            return None
        why = self.operator.describe(found)
        if self.fleet.operators.get(cid) != fleet_model.HANDOVER:
            return {'outcome': SKIPPED, 'rc': None, 'nodes': {}, 'elapsed': self.clock() - started,
                    'msg': 'skipped: %s (operator: skip; nothing in this cluster was touched)' % why}
        self.echo('nodewright fleet: [%s] stage %s: handed over: %s; waiting for it to complete every node' % (
            cid, self.stage.name, why))
        if self.check_mode:
            return {'outcome': HANDED_OVER, 'rc': None, 'nodes': {}, 'elapsed': 0.0, 'left': None,
                    'msg': 'handed over: %s (check mode: not waited for)' % why}
        return self._wait_for_operator(cid, started, why)

    def _wait_for_operator(self, cid, started, why):
        """Until the cluster's operator completed every node of the run's CRs there, or the progress deadline passed."""
        deadline, said = self.fleet.progress_deadline_seconds, None
        while True:
            try:
                left = self.operator.left(self.fleet.clusters[cid], self.cr_names, api=self.api)
                problems = fleet_progress.gate_problems({cid: left})
            except kube_api.KubeError as exc:
                left, problems = None, ['%s: not asked (%s)' % (cid, exc)]
            elapsed = self.clock() - started
            if left == {}:
                return {'outcome': HANDED_OVER, 'rc': None, 'nodes': {}, 'elapsed': elapsed, 'left': left,
                        'msg': 'handed over: %s; it completed every node' % why}
            if deadline is not None and elapsed >= deadline:
                return {'outcome': DEADLINE, 'rc': None, 'nodes': {}, 'elapsed': elapsed, 'left': left,
                        'msg': 'handed over: %s; not complete after the progress deadline (%.0f s): %s' % (
                            why, deadline, '; '.join(problems))}
            if problems != said:
                self.echo('nodewright fleet: [%s] stage %s: its operator has left %s' % (cid, self.stage.name, '; '.join(problems)))
                said = problems
            self.sleep(HANDOVER_POLL if deadline is None else max(0.0, min(HANDOVER_POLL, deadline - elapsed)))

    def _run_cluster(self, cid):
        started = self.clock()
        held = self._operator_first(cid, started)
        if held is not None:
            with self.lock:
                self.results[cid] = held
            self.echo('nodewright fleet: [%s] stage %s: %s' % (cid, self.stage.name, held['msg']))
            return
        held = self._before_start(cid)
        if held is not None:
            result = {'outcome': held[0], 'rc': None, 'nodes': {}, 'elapsed': self.clock() - started, 'msg': held[1]}
            with self.lock:
                self.results[cid] = result
            self.echo('nodewright fleet: [%s] stage %s: %s' % (cid, self.stage.name, held[1]))
            return
        argv, env, report, log = apply_command(cid, self.fleet.clusters[cid], self.apply_vars, self.work_dir, self.check_mode)
        self.echo('nodewright fleet: [%s] stage %s: apply started (log %s)' % (cid, self.stage.name, log))
        deadline = self.fleet.progress_deadline_seconds
        with open(log, 'w') as out:
            # stdin: the worker's is non-blocking, which ansible-playbook refuses
            proc = self.popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                              start_new_session=True, preexec_fn=_die_with_parent)
            rc, outcome = self._follow(cid, proc, log, deadline)
        result = {'outcome': outcome, 'rc': rc, 'log': log, 'report': _read_report(report), 'elapsed': self.clock() - started}
        result['nodes'] = node_outcomes(result['report'])
        # what the run's final plan left not complete (apply's custom stat), None when its run did not get that far
        result['left'] = ((result['report'] or {}).get('custom_stats') or {}).get('nodewright_apply_left')
        if outcome == DEADLINE:
            result['msg'] = 'stopped after the progress deadline (%.0f s); its nodes keep their state, a run resumes them' % deadline
        elif outcome == FAILED:
            result['msg'] = 'apply ended with rc %s (log %s)' % (rc, log)
        else:
            result['msg'] = 'apply ended with rc 0'
        with self.lock:
            self.results[cid] = result
        self.echo('nodewright fleet: [%s] stage %s: %s, %d node(s) in its rollouts, %.1f s' % (
            cid, self.stage.name, result['msg'], len(result['nodes']), result['elapsed']))

    def _follow(self, cid, proc, log, deadline):
        """``(rc, outcome)`` of the run, stopped after ``deadline`` seconds (None: none); meanwhile its rollout's
        progress lines (each compartment's batches, rollout_progress) said with the cluster's name."""
        started = self.clock()
        progress = RunProgress(cid, self.echo)
        with open(log) as tail:
            while True:
                try:
                    rc = proc.wait(timeout=FOLLOW_INTERVAL)
                except subprocess.TimeoutExpired:
                    rc = None
                progress.read(tail)
                if rc is not None:
                    return rc, OK if rc == 0 else FAILED
                if deadline is not None and self.clock() - started >= deadline:
                    return self._stop(proc), DEADLINE

    @staticmethod
    def _stop(proc):
        """The run's process group stopped: SIGTERM (the strategy leaves the shared budget), SIGKILL after STOP_GRACE."""
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            return proc.wait(timeout=STOP_GRACE)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            return proc.wait()
        except OSError:
            return proc.wait()
