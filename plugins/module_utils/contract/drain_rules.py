# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""Which pods a NodeWright drain evicts, which PDBs guard them, which pods block an interrupt.

Pods and PodDisruptionBudgets are plain dicts as the API serializes them (camelCase keys,
e.g. ``ApiClient().sanitize_for_serialization(obj)``). No I/O, no ``kubernetes`` import.

The operator's rules (NVIDIA/nodewright ``71ca22b8``,
``operator/internal/controller/skyhook_controller.go``):

* ``ShouldEvict`` (lines 1392-1418) evicts a pod only when its phase is ``Running`` or
  ``Pending``, and then not when it has *any* toleration whose key is
  ``node.kubernetes.io/unschedulable`` (operator, value and effect are not looked at), not
  when it has more than one ownerReference and one of them is a ``DaemonSet``, and not when
  it is in ``kube-system``.
* ``IsDrained`` (1366-1390) calls the node drained when no pod on it passes ``ShouldEvict``;
  ``DrainNode`` (1657-1698) evicts (policy/v1 eviction subresource) every pod that passes.
  There is no ``--force``-like refusal, no emptyDir check and no pod selector.
* ``HasNonInterruptWork`` (1607-1641) converts ``spec.podNonInterruptLabels`` with
  ``metav1.LabelSelectorAsSelector`` (matchLabels *and* matchExpressions), returns "no
  work" for an empty selector, and otherwise lists the node's pods in *all* namespaces
  matching it; any of them ``Running`` or ``Pending`` makes
  ``EnsureNodeIsReadyForInterrupt`` (2584-2602) wait (cordoned, nothing evicted). Phase and
  labels are all it looks at: tolerations, owners and namespace do not matter.

``DrainRules()`` follows that code, with two documented differences:

1. **Mirror (static) pods are skipped** (``skip_mirror_pods``; annotation
   ``kubernetes.io/config.mirror``). The operator has no such rule: it would evict a
   running static pod outside kube-system, the kubelet recreates the mirror pod at once and
   ``IsDrained`` never turns true. ``kubectl drain`` always skips them. Set
   ``skip_mirror_pods: false`` to get the code's behaviour.
2. **DaemonSet pods are recognised by any ownerReference of kind DaemonSet**, not only when
   the pod has two or more owners (the operator's ``len(OwnerReferences) > 1`` guard makes
   its DaemonSet rule dead for ordinary DaemonSet pods, which have exactly one owner). The
   outcome is the same in practice: the DaemonSet controller gives every pod an ``Exists``
   toleration for ``node.kubernetes.io/unschedulable``, so the operator skips them through
   its toleration rule; here the reason reads ``daemonset``.

The NodeWright docs (docs/interrupt_flow.md, chart/README.md) only say that remaining
workloads are "gracefully evicted" and that ``podNonInterruptLabels`` selects pods "to never
interrupt"; they list no skip rules, so the code is the reference here.

Differences from ``kubectl drain`` (k8s.io/kubectl/pkg/drain), all deliberate, as the
operator does them:

* kubectl refuses to drain at all while a pod has no controller (unless ``--force``) or uses
  an ``emptyDir`` volume (unless ``--delete-emptydir-data``); the operator and these rules
  evict such pods. ``kubectl_objections`` tells a caller which pods kubectl would refuse.
* kubectl refuses DaemonSet pods unless ``--ignore-daemonsets`` and then skips them; here
  they are skipped.
* kubectl evicts finished (Succeeded/Failed) and ``Unknown``-phase pods; the operator leaves
  every pod that is neither Running nor Pending alone (``skip_finished``,
  ``skip_unknown_phase``).
* kubectl does not skip kube-system pods nor pods tolerating the cordon taint; the operator
  does (``skip_kube_system``, ``skip_unschedulable_tolerant``): such pods would be scheduled
  back onto the cordoned node.
* kubectl's ``--pod-selector`` corresponds to ``pod_selector`` here (same string syntax).

Order of the skip reasons when several apply: ``not-selected``, ``finished``,
``unknown-phase``, ``mirror``, ``daemonset``, ``kube-system``, ``tolerates-unschedulable``,
``protected``. Pods to evict carry the reason ``evictable``, or ``terminating`` when they
already have a deletionTimestamp (evicting them again is harmless and skips PDB checks; the
drain still has to wait for them to go).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.nodewright.bridge.plugins.module_utils.contract import protected_wait
from ansible_collections.nodewright.bridge.plugins.module_utils.model.constants import UNSCHEDULABLE_TAINT
from ansible_collections.nodewright.bridge.plugins.module_utils.model.label_selector import (
    matches, normalize_selector, selector_is_empty, selector_matches)

EVICT = 'evict'
SKIP = 'skip'

MIRROR_ANNOTATION = 'kubernetes.io/config.mirror'
KUBE_SYSTEM = 'kube-system'

ACTIVE_PHASES = ('Running', 'Pending')
FINISHED_PHASES = ('Succeeded', 'Failed')

REASON_NOT_SELECTED = 'not-selected'
REASON_FINISHED = 'finished'
REASON_UNKNOWN_PHASE = 'unknown-phase'
REASON_MIRROR = 'mirror'
REASON_DAEMONSET = 'daemonset'
REASON_KUBE_SYSTEM = 'kube-system'
REASON_TOLERATES_UNSCHEDULABLE = 'tolerates-unschedulable'
REASON_PROTECTED = 'protected'
REASON_EVICTABLE = 'evictable'
REASON_TERMINATING = 'terminating'

TOLERATION_MATCH_MODES = ('key', 'taint')

# The reason of the cause in an eviction's 429 Status when a PodDisruptionBudget refused it (policyv1.DisruptionBudgetCause).
DISRUPTION_BUDGET_CAUSE = 'DisruptionBudget'


class DrainRules(object):
    """The switches of a drain; the defaults are the operator's ``ShouldEvict`` (see the module doc).

    ``unschedulable_toleration`` says what "tolerates node.kubernetes.io/unschedulable" means:
    ``key`` (default, the operator's code): any toleration with that key, whatever its
    operator, value or effect; ``taint``: Kubernetes' ``ToleratesTaint`` against the cordon
    taint ``node.kubernetes.io/unschedulable:NoSchedule``, so a key-less ``operator: Exists``
    toleration counts and an ``Equal`` toleration with a value or a ``NoExecute`` one does not.
    """

    SWITCHES = ('skip_daemonsets', 'skip_mirror_pods', 'skip_finished', 'skip_unknown_phase',
                'skip_unschedulable_tolerant', 'skip_kube_system')
    FIELDS = SWITCHES + ('unschedulable_toleration',)

    def __init__(self, skip_daemonsets=True, skip_mirror_pods=True, skip_finished=True, skip_unknown_phase=True,
                 skip_unschedulable_tolerant=True, skip_kube_system=True, unschedulable_toleration='key'):
        self.skip_daemonsets = skip_daemonsets
        self.skip_mirror_pods = skip_mirror_pods
        self.skip_finished = skip_finished
        self.skip_unknown_phase = skip_unknown_phase
        self.skip_unschedulable_tolerant = skip_unschedulable_tolerant
        self.skip_kube_system = skip_kube_system
        self.unschedulable_toleration = unschedulable_toleration
        errors = self.errors()
        if errors:
            raise ValueError('invalid drain rules: %s' % '; '.join(errors))

    def errors(self):
        """Every problem of the current settings."""
        errors = []
        for name in self.SWITCHES:
            if not isinstance(getattr(self, name), bool):
                errors.append('%s must be a boolean, got %r' % (name, getattr(self, name)))
        if self.unschedulable_toleration not in TOLERATION_MATCH_MODES:
            errors.append('unschedulable_toleration must be one of %s, got %r'
                          % (', '.join(TOLERATION_MATCH_MODES), self.unschedulable_toleration))
        return errors

    @classmethod
    def from_dict(cls, data):
        """Rules from a dict of the fields (missing fields keep their default); ``None`` gives the defaults.

        Unknown keys are errors (a misspelt switch would otherwise do nothing).
        """
        if data is None:
            return cls()
        if isinstance(data, cls):
            return data
        if not isinstance(data, dict):
            raise ValueError('drain rules must be a dict, got %s' % type(data).__name__)
        unknown = sorted(str(k) for k in data if k not in cls.FIELDS)
        if unknown:
            raise ValueError('unknown drain rule(s) %s; known: %s' % (', '.join(unknown), ', '.join(cls.FIELDS)))
        return cls(**dict(data))

    def as_dict(self):
        return dict((name, getattr(self, name)) for name in self.FIELDS)

    def __eq__(self, other):
        return isinstance(other, DrainRules) and self.as_dict() == other.as_dict()

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash(tuple(sorted(self.as_dict().items())))

    def __repr__(self):
        return 'DrainRules(%s)' % ', '.join('%s=%r' % (name, getattr(self, name)) for name in self.FIELDS)


# --- pod accessors ---------------------------------------------------------------------------

def _metadata(obj):
    return (obj or {}).get('metadata') or {}


def pod_namespace(obj):
    """metadata.namespace, ``default`` when absent (as for a manifest without one)."""
    return _metadata(obj).get('namespace') or 'default'


def pod_name(obj):
    return _metadata(obj).get('name') or ''


def pod_key(obj):
    """``namespace/name`` of a pod (or any namespaced object)."""
    return '%s/%s' % (pod_namespace(obj), pod_name(obj))


def pod_phase(pod):
    return ((pod or {}).get('status') or {}).get('phase') or ''


def is_mirror_pod(pod):
    return MIRROR_ANNOTATION in (_metadata(pod).get('annotations') or {})


def is_daemonset_pod(pod):
    """True when any ownerReference is a DaemonSet."""
    return any((ref or {}).get('kind') == 'DaemonSet' for ref in _metadata(pod).get('ownerReferences') or [])


def is_terminating(pod):
    return bool(_metadata(pod).get('deletionTimestamp'))


def _toleration_tolerates_cordon(toleration):
    """Kubernetes ToleratesTaint against node.kubernetes.io/unschedulable:NoSchedule (no value)."""
    effect = toleration.get('effect') or ''
    if effect and effect != 'NoSchedule':
        return False
    key = toleration.get('key') or ''
    if key and key != UNSCHEDULABLE_TAINT:
        return False
    operator = toleration.get('operator') or ''
    if operator == 'Exists':
        return True
    if operator in ('', 'Equal'):
        return key != '' and (toleration.get('value') or '') == ''
    return False  # Lt / Gt compare numbers; the taint has no value


def tolerates_unschedulable(pod, mode='key'):
    """Whether the pod tolerates the cordon, by ``mode`` (see ``DrainRules``)."""
    if mode not in TOLERATION_MATCH_MODES:
        raise ValueError('unknown toleration match mode %r' % (mode,))
    tolerations = ((pod or {}).get('spec') or {}).get('tolerations') or []
    for toleration in tolerations:
        toleration = toleration or {}
        if mode == 'key':
            if toleration.get('key') == UNSCHEDULABLE_TAINT:
                return True
        elif _toleration_tolerates_cordon(toleration):
            return True
    return False


def pod_labels(pod):
    return _metadata(pod).get('labels') or {}


# --- classification ----------------------------------------------------------------------------

def classify_pod(pod, rules=None, pod_selector=None, protected_selector=None):
    """``(action, reason)`` for one pod: ``('evict', 'evictable' | 'terminating')`` or ``('skip', reason)``.

    ``rules``: ``DrainRules``, a dict of its fields, or ``None`` for the defaults.
    ``pod_selector``: scopes the drain (string / LabelSelector dict / list, see
    ``normalize_selector``); pods outside it are ``not-selected``. ``None`` or empty: all pods.
    ``protected_selector``: ``podNonInterruptLabels``; pods it matches are never evicted
    (``protected``); an empty selector protects nothing, as in the operator. Running or
    Pending protected pods must make the interrupt wait: see ``protected_pods_running``.
    """
    rules = DrainRules.from_dict(rules)
    pod = pod or {}
    labels = pod_labels(pod)
    if pod_selector is not None and not selector_matches(pod_selector, labels):
        return SKIP, REASON_NOT_SELECTED
    phase = pod_phase(pod)
    if phase in FINISHED_PHASES:
        if rules.skip_finished:
            return SKIP, REASON_FINISHED
    elif phase not in ACTIVE_PHASES and rules.skip_unknown_phase:
        return SKIP, REASON_UNKNOWN_PHASE
    if rules.skip_mirror_pods and is_mirror_pod(pod):
        return SKIP, REASON_MIRROR
    if rules.skip_daemonsets and is_daemonset_pod(pod):
        return SKIP, REASON_DAEMONSET
    if rules.skip_kube_system and pod_namespace(pod) == KUBE_SYSTEM:
        return SKIP, REASON_KUBE_SYSTEM
    if rules.skip_unschedulable_tolerant and tolerates_unschedulable(pod, rules.unschedulable_toleration):
        return SKIP, REASON_TOLERATES_UNSCHEDULABLE
    if protected_selector is not None and not selector_is_empty(protected_selector) and selector_matches(protected_selector, labels):
        return SKIP, REASON_PROTECTED
    if protected_wait.opted_in(pod):
        return SKIP, REASON_PROTECTED  # the workload's own opt-in (protected_wait.OPT_IN)
    if is_terminating(pod):
        return EVICT, REASON_TERMINATING
    return EVICT, REASON_EVICTABLE


def plan_drain(pods, rules=None, pod_selector=None, protected_selector=None):
    """One dict per pod, ``{namespace, name, uid, action, reason}``, sorted by namespace, name, uid.

    Selectors and rules are validated once, before any pod is looked at (ValueError).
    """
    rules = DrainRules.from_dict(rules)
    pod_selector = normalize_selector(pod_selector, 'pod_selector')
    protected_selector = normalize_selector(protected_selector, 'protected_selector')
    plan = []
    for pod in pods or []:
        action, reason = classify_pod(pod, rules, pod_selector, protected_selector)
        plan.append({
            'namespace': pod_namespace(pod),
            'name': pod_name(pod),
            'uid': _metadata(pod).get('uid') or '',
            'action': action,
            'reason': reason,
        })
    plan.sort(key=lambda entry: (entry['namespace'], entry['name'], entry['uid']))
    return plan


def kubectl_objections(pod):
    """Why ``kubectl drain`` (without --force / --delete-emptydir-data) would refuse this pod.

    ``unreplicated``: no ownerReference with ``controller: true``; ``local-storage``: an
    ``emptyDir`` volume. Finished pods raise neither, as in kubectl. The operator and
    ``DrainRules`` evict such pods anyway; callers can warn with this.
    """
    if pod_phase(pod) in FINISHED_PHASES:
        return []
    objections = []
    if not any((ref or {}).get('controller') for ref in _metadata(pod).get('ownerReferences') or []):
        objections.append('unreplicated')
    volumes = ((pod or {}).get('spec') or {}).get('volumes') or []
    if any('emptyDir' in (volume or {}) for volume in volumes):
        objections.append('local-storage')
    return objections


# --- PodDisruptionBudgets ----------------------------------------------------------------------

def pdb_selects(pdb, pod):
    """policy/v1: same namespace, and a null selector matches no pod, an empty one every pod.

    A selector that Kubernetes could not convert (invalid key, operator or values) matches
    nothing, as the eviction subresource treats it.
    """
    if pod_namespace(pdb) != pod_namespace(pod):
        return False
    selector = ((pdb or {}).get('spec') or {}).get('selector')
    if selector is None:
        return False
    try:
        selector = normalize_selector(selector)
    except ValueError:
        return False
    return matches(selector, pod_labels(pod))


def matching_pdbs(pod, pdbs):
    """The PDBs (dicts) that guard ``pod``, sorted by name.

    The eviction subresource only consults them for a Running pod without a
    deletionTimestamp, and refuses (500) a pod that more than one PDB matches.
    """
    found = [pdb for pdb in pdbs or [] if pdb_selects(pdb, pod)]
    return sorted(found, key=pod_name)


def pdb_block_description(pdb):
    """``ns/name (minAvailable 2, currentHealthy 2, desiredHealthy 2, expectedPods 3, disruptionsAllowed 0)``.

    ``maxUnavailable`` replaces ``minAvailable`` when that is what the PDB sets; a PDB the
    disruption controller has not processed yet reads ``status not reported yet``, and one whose
    status is older than its spec adds ``status stale``.
    """
    pdb = pdb or {}
    spec = pdb.get('spec') or {}
    status = pdb.get('status')
    parts = []
    for field in ('minAvailable', 'maxUnavailable'):
        if spec.get(field) is not None:
            parts.append('%s %s' % (field, spec[field]))
    if not status:
        parts.append('status not reported yet')
    else:
        for field in ('currentHealthy', 'desiredHealthy', 'expectedPods', 'disruptionsAllowed'):
            parts.append('%s %s' % (field, status.get(field, 0)))
        generation = _metadata(pdb).get('generation')
        observed = status.get('observedGeneration')
        if generation is not None and observed is not None and observed < generation:
            parts.append('status stale')
    return '%s (%s)' % (pod_key(pdb), ', '.join(parts))


def pdb_cause(status):
    """The PDB's own words in an eviction's 429 Status: the message of its ``DisruptionBudget`` cause
    (``details.causes[].reason``), e.g. "The disruption budget web needs 2 healthy pods and has 2 currently", as the
    v0.20 operator quotes it in DrainBlocked (classifyEvictionRejection, NVIDIA/nodewright
    operator/internal/controller/skyhook_controller.go @01cc2f2d). The first such cause with a message; '' when its
    causes have none; None when the 429 has no such cause: not a PDB refusal."""
    found = None
    for cause in ((status or {}).get('details') or {}).get('causes') or []:
        if isinstance(cause, dict) and cause.get('reason') == DISRUPTION_BUDGET_CAUSE:
            if cause.get('message'):
                return cause['message']
            found = ''
    return found


# --- podNonInterruptLabels ---------------------------------------------------------------------

def protected_pods_running(pods, selector):
    """The pods matching ``podNonInterruptLabels`` that are Running or Pending, sorted by namespace/name.

    The operator's HasNonInterruptWork: the whole LabelSelector (matchLabels and
    matchExpressions), pods of every namespace on the node, phase Running or Pending, nothing
    else considered (not tolerations, owners, namespace or deletionTimestamp). An empty or
    absent selector protects nothing. While the result is not empty the interrupt must wait
    and nothing is evicted. ``selector`` also takes the string form.
    """
    normalized = normalize_selector(selector, 'podNonInterruptLabels')
    if normalized is not None and selector_is_empty(normalized):
        normalized = None
    found = [pod for pod in pods or []
             if pod_phase(pod) in ACTIVE_PHASES and is_protected(pod, normalized)]
    return sorted(found, key=lambda pod: (pod_namespace(pod), pod_name(pod), _metadata(pod).get('uid') or ''))


def is_protected(pod, normalized_selector):
    """Whether the pod must never be interrupted: it matches podNonInterruptLabels (normalized, or None), or it
    opted in with the annotation protected_wait.OPT_IN (the collection's, ahead of the operator)."""
    if normalized_selector is not None and matches(normalized_selector, pod_labels(pod)):
        return True
    return protected_wait.opted_in(pod)


# --- retries -------------------------------------------------------------------------------------

def eviction_backoff(attempt, base=5, cap=60, retry_after=None):
    """Seconds to wait before retrying an eviction refused with 429 (a PDB allows no disruption).

    ``attempt`` is the number of refusals so far (1 for the first): ``base * 2**(attempt-1)``,
    at most ``cap``: 5, 10, 20, 40, 60, 60, ... with the defaults (kubectl retries every 5 s).
    A server ``Retry-After`` (``retry_after`` seconds) lengthens the wait, still within ``cap``.
    Deterministic: no jitter.
    """
    if isinstance(attempt, bool) or not isinstance(attempt, int) or attempt < 1:
        raise ValueError('attempt must be an integer >= 1, got %r' % (attempt,))
    if base <= 0 or cap <= 0:
        raise ValueError('base and cap must be positive, got base=%r cap=%r' % (base, cap))
    delay = base
    for _ignored in range(attempt - 1):
        if delay >= cap:
            break
        delay *= 2
    if retry_after is not None and retry_after > delay:
        delay = retry_after
    return min(delay, cap)


def waited_on_a_pdb(pod):
    """Whether a drained pod's eviction was refused at least once (a PodDisruptionBudget held it)."""
    return isinstance(pod, dict) and (pod.get('attempts') or 0) > 1


def pdb_waits(pods, offset=0.0, most=20, chars=300):
    """The drained pods whose eviction a PodDisruptionBudget refused at least once, in a few fields each.

    ``pods``: node_drain's ``pods`` (``started``/``finished`` in seconds from the drain's start);
    ``offset``: the drain's start (epoch seconds), so the waits' ``started`` are epoch seconds too;
    at most ``most`` pods, each PDB's description cut at ``chars`` (the timeline keeps them per step).
    """
    out = []
    for pod in pods or ():
        if not waited_on_a_pdb(pod):
            continue
        entry = {'pod': '%s/%s' % (pod.get('namespace'), pod.get('name')), 'attempts': pod['attempts'],
                 'action': str(pod.get('action')), 'pdbs': [str(p)[:chars] for p in pod.get('pdbs') or ()][:5]}
        if pod.get('started') is not None and pod.get('finished') is not None:
            entry['started'] = round(offset + pod['started'], 3)
            entry['seconds'] = round(max(0.0, pod['finished'] - pod['started']), 3)
        out.append(entry)
        if len(out) >= most:
            break
    return out
