# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""The code of the module nodewright.bridge.node_drain (its options and everything after AnsibleModule).

Shared by the module (plugins/modules/node_drain.py, which adds the documentation) and its action plugin,
which runs it in the controller's process (plugin_utils/execution/in_process.py).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import threading
import time

from ansible_collections.nodewright.bridge.plugins.module_utils.contract import drain_config
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import drain_rules
from ansible_collections.nodewright.bridge.plugins.module_utils.api import kube as kube_api
from ansible_collections.nodewright.bridge.plugins.module_utils.model import label_selector
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import node_events
from ansible_collections.nodewright.bridge.plugins.module_utils.contract import node_annotations
from ansible_collections.nodewright.bridge.plugins.module_utils.api import pod_run
from ansible_collections.nodewright.bridge.plugins.module_utils.api import slot_mailbox
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import _protected_wait
from ansible_collections.nodewright.bridge.plugins.module_utils.cluster_modules import _runner

SKIP_OPTIONS = {
    'daemonsets': 'skip_daemonsets', 'mirror_pods': 'skip_mirror_pods', 'finished': 'skip_finished',
    'unknown_phase': 'skip_unknown_phase', 'unschedulable_tolerant': 'skip_unschedulable_tolerant',
    'kube_system': 'skip_kube_system',
}
# Evictions run concurrently, but no more at once than this (one API connection each).
MAX_PARALLEL = kube_api.POOL_SIZE


class DrainError(_runner.ModuleFailed):
    """The drain failed: the message and the result so far (the pods, what was evicted, the duration)."""


def _pod_id(pod):
    meta = pod.get('metadata') or {}
    return '%s/%s' % (meta.get('namespace'), meta.get('name'))


class Drain(object):

    def __init__(self, module, kube):
        self.module = module
        self.kube = kube
        self.params = module.params
        self.start = time.time()
        self.pdb_cache = {}
        self.lock = threading.Lock()
        # the CRs whose cordon the node carries (what the drain is for, in its Event); None until the node is read
        self.owners = None
        self.protected_wait = 0.0
        self.parked = False  # the wait for the protected pods gave the node's batch slot back (slot_mailbox)
        # drain_config (normalized; None: not given), and what it decides with the explicit options (rules)
        self.config = None
        self.delete = bool(self.params['disable_eviction'])
        self.grace_period = self.params['grace_period']
        # the CR whose drainStart_ / drainBlocked_ the node carries (the v0.18+ keys; drain_config only)
        self.cr_name = self.params['cr_name'] or self.params['hold_for']
        self.node = None
        self.deadline = None
        self.drain_deadline = None  # when drain_config's timeout ends the drain (epoch seconds), or None
        self.blockers = []  # the (pod, entry) pairs drain_config's force / deleteEmptyDirData keep on the node
        self.refused = {}  # pod uid -> (entry, the refusal's words) while a PodDisruptionBudget refuses its eviction

    def elapsed(self):
        return round(time.time() - self.start, 3)

    def pdbs_blocking(self, pod):
        namespace = (pod.get('metadata') or {}).get('namespace')
        with self.lock:
            if namespace not in self.pdb_cache:
                self.pdb_cache[namespace] = self.kube.list_pdbs(namespace).get('items') or []
            pdbs = self.pdb_cache[namespace]
        return [drain_rules.pdb_block_description(p) for p in drain_rules.matching_pdbs(pod, pdbs)]

    def wait_for_protected(self, node_name, selector):
        """Wait until no protected pod (podNonInterruptLabels, or opted in) runs on the node: recorded on the node,
        reported, and without a batch slot when the strategy gave its mailbox (cluster_modules/_protected_wait.py).
        ``(seconds waited, the node's pods when none was waited for, else None)``."""
        wait = _protected_wait.ProtectedWait(self, node_name, selector)
        waited = wait.run()
        self.parked = wait.parked
        return waited, wait.pods

    def preflight(self, pods):
        """Dry-run evictions of every pod; returns the pods a PDB would refuse."""
        blocked = []
        for pod in pods:
            meta = pod['metadata']
            outcome, message = self.kube.evict_pod(meta['namespace'], meta['name'], dry_run=True)
            if outcome == 'blocked':
                blocked.append({'namespace': meta['namespace'], 'name': meta['name'], 'uid': meta.get('uid'),
                                'pdbs': self.pdbs_blocking(pod), 'message': message})
        return blocked

    def evict_one(self, pod, entry, deadline):
        meta = pod['metadata']
        entry['started'] = self.elapsed()
        attempt = 0
        while True:
            attempt += 1
            entry['attempts'] = attempt
            if self.delete:
                deleted = self.kube.delete_pod(meta['namespace'], meta['name'], uid=meta.get('uid'),
                                               grace_period_seconds=self.grace_period)
                entry['action'] = 'deleted' if deleted else 'gone'
                break
            outcome, message = self.kube.evict_pod(meta['namespace'], meta['name'], grace_period_seconds=self.grace_period)
            if outcome != 'blocked':
                self.refusal(entry, None)
                entry['action'] = outcome
                break
            entry['pdbs'] = self.pdbs_blocking(pod)
            entry['message'] = message
            self.refusal(entry, message)
            delay = drain_rules.eviction_backoff(attempt)
            if time.time() + delay > deadline:
                entry['action'] = 'blocked'
                break
            time.sleep(delay)
            # A PDB's status is refreshed by the disruption controller; read it again next time.
            with self.lock:
                self.pdb_cache.pop(meta['namespace'], None)
        entry['finished'] = self.elapsed()

    def run(self):
        params = self.params
        name = params['node']
        pod_selector, protected, rules = self.rules(name)
        self.check_node(name)
        protected_wait, pods = 0.0, None
        if not self.module.check_mode:
            protected_wait, pods = self.wait_for_protected(name, protected)
        self.protected_wait = protected_wait
        if params['hold_for'] and not self.module.check_mode:
            self.check_hold(name)
        if pods is None:
            pods = self.kube.pods_on_node(name).get('items') or []
        entries, targets = self.plan(pods, rules, pod_selector, protected)
        targets = self.split_blockers(targets)
        result = dict(node=name, pods=entries, skipped=len(entries) - len(targets) - len(self.blockers), evicted=0,
                      protected_wait=protected_wait, parked=self.parked)
        if self.config is not None:
            result['drain_blocked'] = self.blocked_now()
        if params['preflight'] or self.module.check_mode:
            running_protected = drain_rules.protected_pods_running(pods, protected)
            if self.dry_run(name, targets, running_protected, result):
                return result
        self.begin(name, targets, result)
        try:
            self.evict(name, targets, result)
            self.wait_for_blockers(name, result)
        except DrainError as exc:
            blocked = self.blocked_now()
            self.record(blocked=blocked)  # what holds the drain, for the CR's DrainBlocked
            if self.config is not None:
                exc.result['drain_blocked'] = blocked
            raise
        self.record(drained=True)
        if self.config is not None:
            result['drain_blocked'] = self.blocked_now()
        if result['changed']:
            pdb_waits = len([e for unused, e in targets if drain_rules.waited_on_a_pdb(e)])
            _runner.node_event(self.module, self.kube, name, node_events.drained(
                name, self.owners, result['evicted'], result['skipped'], pdb_waits, protected_wait))
        return result

    # ------------------------------------------------------------------ drain_config

    def split_blockers(self, targets):
        """The targets drain_config lets the drain evict; the others (self.blockers) block it, as DecidePod's
        ActionBlock: an unmanaged pod without force, an emptyDir one without deleteEmptyDirData."""
        if self.config is None:
            return targets
        kept = []
        for pod, entry in targets:
            reason = drain_config.blocker(pod, self.config)
            if reason is None:
                kept.append((pod, entry))
                continue
            entry.update(action='blocked', reason=drain_config.DECISION_REASONS[reason], block=reason)
            self.blockers.append((pod, entry))
        return kept

    def blocked_now(self):
        """The drain's blockers now, as BlockedPods: the pods drain_config keeps that are still there, and the pods a
        PodDisruptionBudget refuses (the refusal's words as the detail)."""
        with self.lock:
            blocked = [drain_config.blocked_pod(e['namespace'], e['name'], e['block'])
                       for unused, e in self.blockers if e['action'] == 'blocked']
            blocked.extend(drain_config.blocked_pod(e['namespace'], e['name'], drain_config.PDB, words)
                           for e, words in self.refused.values())
        return sorted(blocked, key=lambda p: (p['namespace'], p['name']))

    def refusal(self, entry, words):
        """A PodDisruptionBudget refused ``entry``'s eviction (``words``), or stopped refusing it (None)."""
        if self.config is None:
            return
        with self.lock:
            changed = (words is None) == (entry['uid'] in self.refused)
            if words is None:
                self.refused.pop(entry['uid'], None)
            else:
                self.refused[entry['uid']] = (entry, words)
        if changed:
            self.record(blocked=self.blocked_now())  # drainBlocked_ says so while the drain waits

    def record(self, start=None, blocked=None, drained=False):
        """Write the node's drainStart_ / drainBlocked_ for cr_name (annotation_changes), under a generation that has
        them and with drain_config only; nothing in check mode."""
        if self.config is None or self.module.check_mode or not self.cr_name:
            return
        gen = self.kube.generation
        if gen.drain_start_key(self.cr_name) is None:
            return

        def mutate(node):
            annotations = (node.get('metadata') or {}).get('annotations')
            changes = drain_config.annotation_changes(annotations, gen, self.cr_name, start=start, blocked=blocked,
                                                      drained=drained)
            return {'metadata': {'annotations': changes}} if changes else None
        with self.lock:
            self.kube.update_node(self.params['node'], mutate)

    def begin(self, name, targets, result):
        """The drain's deadline (self.deadline): the task's ``timeout`` from now, or sooner drain_config's timeout
        from the node's drainStart_ (written now when it has none; DrainNode). A drain with nothing left to wait for
        clears them instead; one whose drain_config timeout has passed fails here, evicting nothing."""
        self.deadline = time.time() + self.params['timeout']
        if self.config is None:
            return
        if not targets and not self.blockers:
            return  # drained: run() clears the annotations
        key = self.kube.generation.drain_start_key(self.cr_name) if self.cr_name else None
        text = ((self.node.get('metadata') or {}).get('annotations') or {}).get(key) if key else None
        now = time.time()
        try:
            started = now if text is None else drain_config.parse_start(text)
        except ValueError as exc:
            raise DrainError('node %s: %s (%s); nothing was evicted' % (name, exc, key), changed=False, **result)
        timeout = self.config['timeoutSeconds']
        if drain_config.timed_out(started, timeout, now):
            # the blockers last recorded stay (DrainNode's DrainTimeout)
            result.update(changed=False, duration=self.elapsed(), drain_timed_out=True)
            raise DrainError('node %s: drain timed out after [%s] (drain_config timeout, counted from %s=%s); nothing '
                             'more is evicted: remove what blocks it, then that annotation (kubectl nodewright node reset)'
                             % (name, self.config['timeout'], key, text), **result)
        self.record(start=started, blocked=self.blocked_now())
        if timeout:
            self.drain_deadline = started + timeout
            self.deadline = min(self.deadline, self.drain_deadline)

    def drain_timed_out(self):
        """drain_config's timeout, not the task's, ended the drain (DrainNode's DrainTimeout)."""
        return self.drain_deadline is not None and self.drain_deadline <= self.deadline and time.time() >= self.drain_deadline

    def within(self):
        """The bound that ended a drain, for its failure message."""
        if self.drain_timed_out():
            return 'within the drain_config timeout [%s] (the drain timed out)' % self.config['timeout']
        return 'within %ss' % self.params['timeout']

    def wait_for_blockers(self, name, result):
        """Wait until the pods drain_config keeps have left the node (they are never evicted); raises DrainError."""
        uids = set(e['uid'] for unused, e in self.blockers)
        if not uids:
            return

        def gone(objects):
            left = set(objects) & uids
            for unused, entry in self.blockers:
                if entry['uid'] not in left:
                    entry['action'] = 'gone'
            return not left
        try:
            self.kube.watch_until('pods', gone, max(1, self.deadline - time.time()), field_selector='spec.nodeName=%s' % name,
                                  what='the pods that block the drain to leave node %s' % name)
        except kube_api.WaitTimeout:
            result.update(duration=self.elapsed(), drain_timed_out=self.drain_timed_out())
            raise DrainError('node %s: %d pod(s) block the drain and are still there %s: %s' % (
                name, len(self.blocked_now()), self.within(),
                '; '.join('%s/%s (%s)' % (p['namespace'], p['name'], p['reason']) for p in self.blocked_now())), **result)

    def check_hold(self, name):
        """Evict nothing for a CR paused or disabled since the run began, or on a node ignored meanwhile
        (the wait for the protected pods can be long)."""
        self.node = self.kube.get_node(name)  # as it is after the wait (its drainStart_: begin)
        hold = pod_run.held_by_name(self.kube, self.params['hold_for'], self.node, gen=self.kube.generation)
        if hold:
            raise _runner.ModuleFailed(hold[1].replace('no new pod starts', 'nothing is evicted'), node=name,
                                       changed=False, held=hold[0], protected_wait=self.protected_wait)

    def failed(self, exc):
        """The Warning Event of a drain that failed once the node was read (not for invalid options)."""
        if self.owners is not None and not isinstance(exc, kube_api.NodeGone):
            _runner.node_event(self.module, self.kube, self.params['node'], node_events.drain_failed(
                self.params['node'], self.owners, getattr(exc, 'msg', None) or getattr(exc, 'message', None) or str(exc)))

    def rules(self, name):
        """``(pod_selector, protected selector, DrainRules)`` from the options, and what drain_config decides where
        an option is not set (disable_eviction, grace_period, skip.daemonsets); raises DrainError."""
        params = self.params
        rules = dict((SKIP_OPTIONS[k], v) for k, v in (params['skip'] or {}).items() if v is not None)
        try:
            self.config = drain_config.normalize(params['drain_config'])
            if self.config is not None:
                rules = drain_config.rules(self.config, rules)
                if params['disable_eviction'] is None:
                    self.delete = self.config['disableEviction']
                if params['grace_period'] is None:
                    self.grace_period = self.config['gracePeriodSeconds']
            return (label_selector.normalize_selector(params['pod_selector'], 'pod_selector'),
                    label_selector.normalize_selector(params['wait_for'], 'wait_for'),
                    drain_rules.DrainRules.from_dict(rules))
        except ValueError as exc:
            raise DrainError(str(exc), node=name)

    def check_node(self, name):
        """The node exists; warnings for a schedulable node and for deletions that bypass PDBs."""
        node = self.kube.get_node(name)
        self.node = node
        self.owners = node_annotations.cordon_owners((node.get('metadata') or {}).get('annotations'), self.kube.generation)
        if not (node.get('spec') or {}).get('unschedulable'):
            self.module.warn('node %s is schedulable: evicted pods may be scheduled back onto it; cordon it first '
                             '(nodewright.bridge.node_cordon)' % name)
        if self.delete and not self.module.check_mode:
            self.module.warn('disable_eviction: pods on node %s are deleted, PodDisruptionBudgets are not respected' % name)

    @staticmethod
    def plan(pods, rules, pod_selector, protected):
        """``(entries, targets)``: every pod's result entry, and the (pod, entry) pairs to evict."""
        by_uid = dict((p['metadata'].get('uid'), p) for p in pods)
        entries, targets = [], []
        for item in drain_rules.plan_drain(pods, rules, pod_selector, protected):
            entry = dict(item, pdbs=[], attempts=0, started=None, finished=None)
            if item['action'] == drain_rules.SKIP:
                entry['action'] = 'skipped'
            else:
                targets.append((by_uid[item['uid']], entry))
            entries.append(entry)
        return entries, targets

    def dry_run(self, name, targets, running_protected, result):
        """The preflight (dry-run evictions); True when the run ends here (check mode); raises DrainError if a PDB refuses."""
        blocked = [] if self.delete else self.preflight([p for p, unused in targets])
        result['preflight'] = {'ok': not blocked, 'blocked': blocked}
        if self.module.check_mode:
            for unused, entry in targets:
                entry['action'] = 'would-evict' if not self.delete else 'would-delete'
            result.update(changed=bool(targets), duration=self.elapsed())
            if running_protected:
                result['waiting_for'] = [_pod_id(p) for p in running_protected]
            return True
        if blocked:
            result.update(changed=False, duration=self.elapsed())
            raise DrainError(
                'node %s: preflight failed, nothing was evicted; a PodDisruptionBudget would refuse: %s'
                % (name, '; '.join('%s/%s by %s' % (b['namespace'], b['name'], ', '.join(b['pdbs']) or b['message'])
                                   for b in blocked)), **result)
        return False

    def evict(self, name, targets, result):
        """Evict (or delete) the targets, at most MAX_PARALLEL at once, and wait for them to go; raises DrainError."""
        deadline = self.deadline
        threads = []
        for pod, entry in targets:
            while len([t for t in threads if t.is_alive()]) >= MAX_PARALLEL:
                time.sleep(0.05)
            thread = threading.Thread(target=self._guarded, args=(pod, entry, deadline))
            thread.daemon = True
            thread.start()
            threads.append(thread)
        for thread in threads:
            thread.join()
        errors = [e.pop('error') for unused, e in targets if 'error' in e]
        blocked = [e for unused, e in targets if e['action'] == 'blocked']
        gone_uids = set(e['uid'] for unused, e in targets if e['action'] in ('evicted', 'deleted'))
        result['evicted'] = len(gone_uids)
        result['changed'] = bool(gone_uids)
        if errors:
            result['duration'] = self.elapsed()
            raise DrainError('node %s: %s' % (name, '; '.join(errors)), **result)
        if gone_uids:
            self.wait_gone(name, gone_uids, deadline, result)
        result['duration'] = self.elapsed()
        if blocked:
            result['drain_timed_out'] = self.drain_timed_out()
            raise DrainError(
                'node %s: %d pod(s) could not be evicted %s: %s'
                % (name, len(blocked), self.within(),
                   '; '.join('%s/%s blocked by %s' % (e['namespace'], e['name'], ', '.join(e['pdbs']) or e.get('message'))
                             for e in blocked)), **result)

    def _guarded(self, pod, entry, deadline):
        try:
            self.evict_one(pod, entry, deadline)
        except kube_api.KubeError as exc:
            entry['action'] = 'failed'
            entry['error'] = exc.message
            entry['finished'] = self.elapsed()

    def wait_gone(self, node_name, uids, deadline, result):
        """Wait (by watch) until no pod with one of the evicted UIDs is left on the node."""
        def gone(objects):
            return not (set(objects) & uids)
        try:
            self.kube.watch_until('pods', gone, max(1, deadline - time.time()),
                                  field_selector='spec.nodeName=%s' % node_name,
                                  what='the evicted pods to leave node %s' % node_name)
        except kube_api.WaitTimeout as exc:
            left = sorted(_pod_id(p) for uid, p in (exc.last or {}).items() if uid in uids)
            result['duration'] = self.elapsed()
            raise DrainError('node %s: evicted pods still terminating, not gone %s: %s'
                             % (node_name, self.within(), ', '.join(left)), **result)


def module_args():
    """The AnsibleModule keywords: the argument spec and its rules (also used in the controller process)."""
    argument_spec = kube_api.auth_argument_spec()
    argument_spec.update(
        node=dict(type='str', required=True, **_runner.renamed('name')),
        timeout=dict(type='int', default=300),
        pod_selector=dict(type='raw'),
        wait_for=dict(type='raw'),
        wait_for_timeout=dict(type='int', default=3600),
        hold_for=dict(type='str'),
        # the budgeted strategy's mailbox (slot_mailbox): the node's batch slot goes back while the protected pods run
        park=slot_mailbox.PARK_ARGUMENT,
        cr_name=dict(type='str'),
        drain_config=dict(type='dict'),
        preflight=dict(type='bool', default=False),
        disable_eviction=dict(type='bool'),
        grace_period=dict(type='int'),
        # daemonsets: unset, drain_config's ignoreDaemonSets decides (true without one)
        skip=dict(type='dict', default={}, options=dict(
            (key, dict(type='bool', default=None if key == 'daemonsets' else True)) for key in SKIP_OPTIONS)),
    )
    return dict(argument_spec=argument_spec, supports_check_mode=True)


def execute(module):
    """Everything after AnsibleModule: the drain, exit_json / fail_json (cluster_modules/_runner.py)."""
    def run(module, kube):
        drain = Drain(module, kube)
        try:
            return drain.run()
        except (kube_api.KubeError, DrainError) as exc:
            drain.failed(exc)
            raise
    _runner.execute(module, run, context=dict(node=module.params['node']))
