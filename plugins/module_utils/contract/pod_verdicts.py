# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""What a package or interrupt pod's status means, as the NodeWright operator reads it.

* ``pod_outcome``: the verdict on a pod: running, succeeded, failed (after ``retries`` restarts) or missing, with
  the container, exit code, reason and restarts behind it and the package state the operator would record,
* ``pod_progress``: where a pod that has not finished stands, in one line for a timeout's message,
* ``killed_by_shutdown``: whether a failed pod is what a node shutdown does to a running pod (a reboot's own
  interrupt pod).

Apart from the manifests (pod_layout) because the verdict reads whatever pod runs a stage: the bare pod of the
v0.15 operator (pod_run) and the pod of a v0.18+ Job (job_run) alike; job_layout's Job verdict speaks the same
four words. Checked against NVIDIA/nodewright at commit ``71ca22b8`` (operator/internal/controller/pod_controller.go:
containerExitedSuccessfully).

No I/O and no ``kubernetes`` import: pods are the API's dicts.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

# pod_outcome verdicts
RUNNING, SUCCEEDED, FAILED, MISSING = 'running', 'succeeded', 'failed', 'missing'


def _get(obj, key):
    return obj.get(key) if isinstance(obj, dict) else None


def _container_state(status):
    """The operator's checkStatus: 'success', 'failed', 'running', 'waiting' or '' (no state yet)."""
    state = status.get('state') or {}
    terminated = state.get('terminated')
    if terminated is not None:
        return 'success' if (terminated.get('exitCode') or 0) == 0 else 'failed'
    if state.get('running') is not None:
        return 'running'
    waiting = state.get('waiting')
    if waiting is not None:
        return 'failed' if waiting.get('reason') == 'CrashLoopBackOff' else 'waiting'
    return ''


def _exit_info(status):
    """(exit code, reason) of the container's current or last termination."""
    state = status.get('state') or {}
    terminated = state.get('terminated')
    if terminated is None:
        terminated = (status.get('lastState') or {}).get('terminated')
    waiting = state.get('waiting') or {}
    exit_code = terminated.get('exitCode') if terminated else None
    reason = waiting.get('reason') or (terminated or {}).get('reason') or None
    return exit_code, reason


def _verdict(outcome, status=None, reason=None, state=None):
    exit_code, status_reason = _exit_info(status) if status else (None, None)
    return {
        'outcome': outcome,
        'container': status.get('name') if status else None,
        'exit_code': exit_code,
        'reason': reason or status_reason,
        'restarts': int(status.get('restartCount') or 0) if status else 0,
        'state': state,
    }


def pod_outcome(pod, retries=0):
    """Whether a package or interrupt pod has finished: a dict with

    * ``outcome``: ``running``, ``succeeded``, ``failed`` or ``missing`` (``pod`` is None, or it
      is being deleted without having succeeded: the operator recreates such a pod);
    * ``container``: the init container that failed (or that is running / waiting);
    * ``exit_code``, ``reason``: of its current or last termination (``reason`` is the waiting
      reason when waiting, e.g. CrashLoopBackOff or ImagePullBackOff, else the pod's or the
      termination's);
    * ``restarts``: its restartCount (on success, the last init container's: what the operator
      writes in the node state);
    * ``state``: the package state the operator would record now: ``complete``, ``erroring``
      (at the first failure, retried or not) or None (no change).

    The operator's rules (containerExitedSuccessfully): the init containers are taken in order;
    the first that terminated non-zero or waits in CrashLoopBackOff is a failure; otherwise the
    pod has succeeded when the last one terminated with 0. The kubelet restarts failed init
    containers (restartPolicy OnFailure) and the operator keeps waiting; here ``retries`` is how
    many restarts a failing container gets: ``failed`` once a failing container has
    ``restartCount >= retries``, or any init container has ``restartCount > retries`` (a
    failure that was not seen). A pod in phase Failed (evicted, ...) has failed, one in phase
    Succeeded has succeeded.
    """
    if pod is None:
        return _verdict(MISSING, reason='PodNotFound')
    status = _get(pod, 'status') or {}
    statuses = [s for s in (status.get('initContainerStatuses') or []) if isinstance(s, dict)]
    deleting = bool((_get(pod, 'metadata') or {}).get('deletionTimestamp'))

    failing = None
    last_state = ''
    for item in statuses:
        last_state = _container_state(item)
        if last_state == 'failed':
            failing = item
            break
    if failing is None and statuses and last_state == 'success':
        return _verdict(SUCCEEDED, statuses[-1], state='complete')
    if status.get('phase') == 'Succeeded':
        return _verdict(SUCCEEDED, statuses[-1] if statuses else None, state='complete')

    state = 'erroring' if failing is not None else None
    if failing is not None and int(failing.get('restartCount') or 0) >= retries:
        return _verdict(FAILED, failing, state=state)
    over = [s for s in statuses if int(s.get('restartCount') or 0) > retries]
    if over:
        return _verdict(FAILED, over[0], state=state)
    if status.get('phase') == 'Failed':
        return _verdict(FAILED, failing, reason=status.get('reason') or (None if failing else 'PodFailed'), state=state)
    if deleting:
        return _verdict(MISSING, failing, reason='PodDeleting', state=state)
    if failing is not None:
        return _verdict(RUNNING, failing, state=state)
    active = next((s for s in statuses if _container_state(s) != 'success'), None)
    if active is None:
        return _verdict(RUNNING, reason=status.get('reason') or status.get('phase') or 'Pending')
    return _verdict(RUNNING, active)


def pod_progress(pod, limit=300):
    """Where a pod that has not finished stands, in one line for a timeout's message: its phase, then the
    first init container that has not succeeded (running, or waiting with the kubelet's reason and message:
    ``ErrImagePull``, ``ImagePullBackOff``, ...), else the reason the pod is not scheduled or started.
    ``limit``: the most characters kept of a kubelet message. None when there is no pod."""
    if not pod:
        return None
    status = _get(pod, 'status') or {}
    words = ['pod %s' % (status.get('phase') or 'Pending')]
    for item in status.get('initContainerStatuses') or []:
        if not isinstance(item, dict) or _container_state(item) == 'success':
            continue
        state = item.get('state') or {}
        if state.get('waiting') is not None:
            waiting = state['waiting']
            message = (waiting.get('message') or '').strip()
            words.append('init container %s waiting: %s%s' % (
                item.get('name'), waiting.get('reason') or 'no reason',
                ' (%s)' % message[:limit] if message else ''))
        elif state.get('running') is not None:
            words.append('init container %s running since %s' % (item.get('name'), state['running'].get('startedAt')))
        else:
            words.append('init container %s %s' % (item.get('name'), _container_state(item) or 'not started'))
        if int(item.get('restartCount') or 0):
            words[-1] += ' (%s restarts)' % item['restartCount']
        return ', '.join(words)
    for cond in status.get('conditions') or []:
        if cond.get('status') == 'False' and cond.get('reason'):
            message = (cond.get('message') or '').strip()
            words.append('%s: %s%s' % (cond.get('type'), cond['reason'], ' (%s)' % message[:limit] if message else ''))
            break
    return ', '.join(words)


# Exit codes of a container killed by a signal (128 + SIGKILL, 128 + SIGTERM), and the kubelet's reasons for a
# container or pod that a node shutdown took away: Unknown (exit code 255) is containerd's report, after the boot,
# of a container whose task died with the node (seen on the test suite's real nodes)
_KILLED_EXIT_CODES = (137, 143)
_SHUTDOWN_REASONS = ('ContainerStatusUnknown', 'Unknown', 'Terminated', 'Shutdown', 'NodeShutdown')


def killed_by_shutdown(verdict):
    """Whether a failed pod's verdict (:func:`pod_outcome`) is what a node shutdown does to a running pod.

    The reboot interrupt's pod runs on the node it reboots: on a real node the shutdown kills it (SIGTERM,
    then SIGKILL: exit code 143 or 137), or the kubelet, back after the boot, reports the container gone.
    The operator's interrupt then completes once the node is back (the agent's flag makes the restarted
    container exit 0); the node's new boot ID, not the pod, says whether the reboot happened.
    """
    killed = verdict.get('exit_code') in _KILLED_EXIT_CODES or verdict.get('reason') in _SHUTDOWN_REASONS
    return verdict.get('outcome') == FAILED and killed
