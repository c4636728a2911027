# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""Whether a pod found under a stage pod's name is still the CR's (adopt it) or stale (replace it).

A run that finds a pod of an earlier run (an interrupted play, a pod the operator left) adopts it only while it
still is what the CR and the node's state ask for, as the operator does: ``stale_pod_reason`` says why a pod must
be replaced, or None to adopt it. It compares what the pod found runs with the manifest the caller built for the
CR as it is now (pod_layout's), then reads the node's nodeState entry and the pod's verdict (pod_verdicts).

Apart from the manifests and the verdicts because it is a rule of its own, over both: pod_run asks it of a bare
pod, job_run of the pod template of a Job.

No I/O and no ``kubernetes`` import.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible_collections.nodewright.bridge.plugins.module_utils.model.api_generation import SKYHOOK
from ansible_collections.nodewright.bridge.plugins.module_utils.contract.pod_verdicts import FAILED, pod_outcome

# The variables the operator adds to every container say where the CR and the node stand (the CR's
# uid and generation in SKYHOOK_DIR / SKYHOOK_RESOURCE_ID, the node's place in SKYHOOK_NODE_ORDER),
# not what the pod runs: an edit elsewhere in the CR bumps the generation, and must not make a
# running stage start over. What the pod runs is its package, image, stage verb and the package's env.
_OPERATOR_ENV = ('SKYHOOK_DIR', 'SKYHOOK_LOG_DIR', 'SKYHOOK_ROOT_DIR', 'COPY_RESOLV', 'SKYHOOK_RESOURCE_ID',
                 'SKYHOOK_NODE_ORDER')


def _get(obj, key):
    return obj.get(key) if isinstance(obj, dict) else None


def _container_fingerprint(container):
    env = [e for e in (container.get('env') or []) if e.get('name') not in _OPERATOR_ENV]
    # the agent's first argument is the stage verb; the rest is the copy directory (uid, generation)
    args = list(container.get('args') or [])[:1]
    return {'name': container.get('name'), 'image': container.get('image'), 'command': container.get('command'),
            'args': args, 'env': [(e.get('name'), e.get('value'), json.dumps(e.get('valueFrom'), sort_keys=True))
                                  for e in env]}


def _pod_fingerprint(pod, gen):
    spec = _get(pod, 'spec') or {}
    annotations = (_get(pod, 'metadata') or {}).get('annotations') or {}
    return {'package': annotations.get(gen.package_annotation),
            'init': [_container_fingerprint(c) for c in spec.get('initContainers') or []],
            'containers': [_container_fingerprint(c) for c in spec.get('containers') or []]}


def _first_difference(have, want):
    """A few words on the first field where a found pod differs from the one the CR asks for."""
    if have['package'] != want['package']:
        return 'its package annotation is %s, the CR asks for %s' % (have['package'], want['package'])
    for part in ('init', 'containers'):
        if [c['name'] for c in have[part]] != [c['name'] for c in want[part]]:
            return 'its containers are %s, the CR asks for %s' % (
                ', '.join(c['name'] for c in have[part]), ', '.join(c['name'] for c in want[part]))
        for got, wanted in zip(have[part], want[part]):
            for field in ('image', 'command', 'args', 'env'):
                if got[field] != wanted[field]:
                    if field == 'image':
                        return 'container %s runs image %s, the CR asks for %s' % (got['name'], got['image'], wanted['image'])
                    return 'the %s of container %s differ from what the CR asks for' % (field, got['name'])
    return None


def stale_pod_reason(pod, manifest, entry, stage, retries=0, failed_is_stale=True, by_state=True, gen=SKYHOOK):
    """Why a pod found under the name of ``manifest`` must be replaced rather than adopted, or None to adopt it.

    The operator adopts a pod of an interrupted run only while it is still the CR's pod for the node's
    state: it deletes one whose package, image, version or stage no longer matches the CR, or that the
    node's state does not list (``kubectl skyhook package rerun`` / ``node reset`` dropped it), and
    creates a new one. ``entry``: the package's nodeState entry on the node (None: not listed);
    ``stage``: the stage the pod is for. A failed pod is a finished attempt whose failure was recorded
    (the node says erroring): a new run makes a new attempt, never adopts the old verdict, unless
    ``failed_is_stale`` is false (a reboot's interrupt pod, which the reboot itself may kill: the
    new boot ID, not the pod, says whether it happened). ``by_state=False``: the CR alone decides.
    ``gen``: the generation whose package annotation (``<prefix>/package``) the pods carry.
    """
    difference = _first_difference(_pod_fingerprint(pod, gen), _pod_fingerprint(manifest, gen))
    if difference:
        return 'it no longer matches the CR: %s' % difference
    if not by_state:
        return None
    if entry is None:
        return "the node's state does not list its package (reset or rerun since it was created)"
    if entry.get('stage') != stage:
        return "the node's state is at stage %s, not %s" % (entry.get('stage'), stage)
    if entry.get('state') == 'complete':
        return "the node's state records stage %s complete: this run makes a new attempt" % stage
    if failed_is_stale and pod_outcome(pod, retries=retries)['outcome'] == FAILED:
        return 'it failed in an earlier attempt (recorded as %s)' % entry.get('state')
    return None
