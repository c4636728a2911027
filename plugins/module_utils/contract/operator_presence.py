# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""Is a running NodeWright operator reconciling a CR? (no I/O, no ``kubernetes`` import)

The collection and the operator must not drive the same CR's nodes at once: both cordon,
drain, run package pods and write the node annotations. ``assess()`` decides from what the
API returns for the CR (``metadata.generation``, ``metadata.managedFields``, annotations,
``status``) and for the operator's leader-election Lease, at a given time ``now``.

What the operator does (NVIDIA/nodewright ``71ca22b8``; docs/operator-guard.md has the
file:line references):

* Leader election: controller-runtime Lease ``3c22c1ae.nvidia.com`` (``LeaderElectionID``)
  in the namespace the operator pod runs in (the chart's release namespace, ``skyhook`` in
  the documented ``helm install``). The holder is ``<pod name>_<uuid>``; it renews every
  2 s, the lease lasts 15 s. The binary's default is no leader election; the chart and the
  kustomize manifests turn it on. The lease is not released on shutdown (its renewTime just
  stops moving); a client-go release would empty holderIdentity.
* Status: written only when something changed, through the status subresource (merge patch
  or update), with no explicit field manager, so the API server records the manager as the
  operator's User-Agent up to its first ``/``: the binary's name, ``manager``.
  ``status.observedGeneration`` is set to ``metadata.generation`` when the CR becomes
  ``complete`` (and bumped when the finalizer is added); conditions keep their
  ``lastTransitionTime`` until their status changes.
* ``skyhook.nvidia.com/pause: "true"`` and ``skyhook.nvidia.com/disable: "true"`` (exactly
  ``"true"``): the operator keeps reconciling the CR's status and conditions and sets the
  nodes' ``status_<cr>`` to ``paused`` / ``disabled``, but starts no package pod, cordon,
  drain or interrupt for it. A CR being deleted is different: the operator's finalizer
  uncordons its nodes and removes the CR's annotations from them, paused or not.

The rules (an operator is *running* when 1 or 2 holds; the guard *blocks* when it is running
and 4 does not exempt the CR):

1. The lease is held (non-empty holderIdentity) and was renewed within
   leaseDurationSeconds (15 when absent) plus ``lease_grace`` seconds of ``now``. A holder
   without renewTime/acquireTime cannot be shown stale and counts as held.
2. A write by an operator manager (``managers``; managedFields entries, the status
   subresource or the main resource) is at most ``window`` seconds old, unless the lease is
   readable and stale and the write is no later than the lease's expiry (+ grace): that
   write was made by the leader that has since stopped. A write *after* the lease expired
   comes from an operator that does not hold this lease (leader election off, or its lease
   is elsewhere) and counts. Without any managedFields in the document, the newest
   condition lastTransitionTime stands in for the operator's last status write.
3. ``status.observedGeneration == metadata.generation`` (with a status write after the
   last spec change) shows that an operator reconciled this spec once; it stays so after the
   operator is gone, so it is reported but never decides alone. Writes by other managers
   (``kubectl-skyhook`` resets, tools) are reported, never counted.
4. A paused or disabled CR is not blocked (the operator starts nothing on its nodes; the
   annotation is the per-CR hand-off), with warnings, unless it is being deleted.

The names are a generation's (``gen``, api_generation.SKYHOOK unless the caller says otherwise): the default
lease reference (``gen.lease_refs()``), the status key named in the warnings (``gen.status_prefix``) and, when
the CR document's ``apiVersion`` does not say, the pause and disable annotations; a CR of a known group is read
with its own group's annotations (``api_generation.by_api_version``), as that group's operator reads them. The
v0.18+ operator holds two leases in its namespace (``nodewright`` by default; NVIDIA/nodewright
operator/cmd/manager/main.go @1826d339): ``reconcileLeaseID = "3c22c1ae.nvidia.com"`` on the reconcile manager and,
with ENABLE_WEBHOOKS (the default), ``webhookBootstrapLeaseID = "nodewright-webhook-bootstrap.nvidia.com"`` on a
separate bootstrap manager in the same binary, which may stand aside and contend again and so be held by another
replica. Either one held by a live holder is an operator pod running: ``more_leases`` passes the others, and any
one fresh is rule 1. For rule 2 the lease that decides is a fresh one, else the readable one that expired last.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import calendar
import datetime
import re

from ansible_collections.nodewright.bridge.plugins.module_utils.model import api_generation
from ansible_collections.nodewright.bridge.plugins.module_utils.model.api_generation import SKYHOOK

# The v0.15 names, for callers that name them; the functions read the generation's (``gen``).
OPERATOR_NAMESPACE = SKYHOOK.default_namespace
LEASE_NAME = SKYHOOK.leases[0]
PAUSE_ANNOTATION = SKYHOOK.pause_annotation
DISABLE_ANNOTATION = SKYHOOK.disable_annotation
OPERATOR_MANAGERS = ('manager',)
DEFAULT_WINDOW = 300
LEASE_GRACE = 5
DEFAULT_LEASE_DURATION = 15


_TIME_RE = re.compile(r'^(\d{4})-(\d\d)-(\d\d)[Tt ](\d\d):(\d\d):(\d\d)(\.\d+)?([Zz]|[+-]\d\d:?\d\d)?$')


class GuardError(ValueError):
    """The inputs cannot be judged (a value of the wrong type)."""


# --------------------------------------------------------------------------- time


def parse_time(value):
    """An RFC 3339 time as the API writes it (Time, MicroTime; 'Z' or an offset) -> epoch seconds, or None."""
    if value is None or value == '':
        return None
    if isinstance(value, datetime.datetime):
        return to_epoch(value)
    match = _TIME_RE.match(str(value).strip())
    if not match:
        return None
    year, month, day, hour, minute, second = (int(match.group(i)) for i in range(1, 7))
    try:
        epoch = calendar.timegm((year, month, day, hour, minute, second, 0, 0, 0))
    except (ValueError, OverflowError):
        return None
    if match.group(7):
        epoch += float(match.group(7))
    zone = match.group(8)
    if zone and zone not in ('Z', 'z'):
        sign = -1 if zone[0] == '-' else 1
        digits = zone[1:].replace(':', '')
        epoch -= sign * (int(digits[:2]) * 3600 + int(digits[2:]) * 60)
    return float(epoch)


def to_epoch(now):
    """``now`` as epoch seconds: a number, an aware datetime, or a naive one taken as UTC."""
    if isinstance(now, bool):
        raise GuardError('now must be a datetime or epoch seconds, not %r' % (now,))
    if isinstance(now, (int, float)):
        return float(now)
    if isinstance(now, datetime.datetime):
        if now.tzinfo is not None and now.utcoffset() is not None:
            now = now - now.utcoffset()
        return calendar.timegm(now.timetuple()[:6] + (0, 0, 0)) + now.microsecond / 1e6
    parsed = parse_time(now) if isinstance(now, str) else None
    if parsed is None:
        raise GuardError('now must be a datetime or epoch seconds, not %r' % (now,))
    return parsed


def format_age(seconds):
    """4s, 3m12s, 2h5m, 3d4h (negative ages, from clocks apart, read as 0s)."""
    seconds = int(max(0, seconds) + 0.5)
    if seconds < 60:
        return '%ds' % seconds
    if seconds < 3600:
        return '%dm%02ds' % (seconds // 60, seconds % 60)
    if seconds < 86400:
        return '%dh%02dm' % (seconds // 3600, seconds % 3600 // 60)
    return '%dd%dh' % (seconds // 86400, seconds % 86400 // 3600)


# --------------------------------------------------------------------------- the lease


def _lease_spec(lease):
    if not isinstance(lease, dict):
        raise GuardError('the lease must be a dict (a Lease object or its spec), not %s' % type(lease).__name__)
    if 'spec' in lease or 'metadata' in lease or lease.get('kind') == 'Lease':
        return lease.get('spec') or {}, lease.get('metadata') or {}
    return lease, {}


def holder_pod(holder):
    """controller-runtime's identity is ``<hostname>_<uuid>``; the hostname is the pod's name."""
    if holder and '_' in holder:
        return holder.rsplit('_', 1)[0]
    return holder


def lease_facts(lease, now, lease_ref=None, grace=LEASE_GRACE):
    """The lease summarised: holder, renew time, age, duration, expiry and whether it is fresh (rule 1)."""
    now = to_epoch(now)
    spec, meta = _lease_spec(lease)
    ref = lease_ref or (None, None)
    namespace = meta.get('namespace') or ref[0]
    name = meta.get('name') or ref[1]
    holder = spec.get('holderIdentity') or ''
    duration = spec.get('leaseDurationSeconds')
    if not isinstance(duration, int) or isinstance(duration, bool) or duration <= 0:
        duration = DEFAULT_LEASE_DURATION
    renew_text = spec.get('renewTime') or spec.get('acquireTime')
    renewed = parse_time(renew_text)
    age = None if renewed is None else now - renewed
    expires = None if renewed is None else renewed + duration
    if not holder:
        fresh = False
    elif renewed is None:
        fresh = True  # held, and nothing shows that it is stale
    else:
        fresh = age <= duration + grace
    return {
        'namespace': namespace,
        'name': name,
        'holder': holder or None,
        'holder_pod': holder_pod(holder) or None,
        'renew_time': renew_text,
        'acquire_time': spec.get('acquireTime'),
        'lease_duration_seconds': duration,
        'lease_transitions': spec.get('leaseTransitions'),
        'age_seconds': None if age is None else round(age, 3),
        'expires': expires,
        'fresh': fresh,
    }


def _lease_label(facts):
    return '%s/%s' % (facts['namespace'], facts['name'])


# --------------------------------------------------------------------------- managedFields


def _is_status_entry(entry):
    if entry.get('subresource'):
        return entry.get('subresource') == 'status'
    # API servers before 1.22 record no subresource: an entry owning only status is one.
    fields = entry.get('fieldsV1') or {}
    return bool(fields) and set(fields) == set(['f:status'])


def managed_writes(cr):
    """Every managedFields entry as {manager, operation, subresource, time, epoch, spec}; None without managedFields."""
    meta = cr.get('metadata') or {}
    entries = meta.get('managedFields')
    if entries is None:
        return None
    writes = []
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        status = _is_status_entry(entry)
        fields = entry.get('fieldsV1') or {}
        writes.append({
            'manager': entry.get('manager') or '',
            'operation': entry.get('operation'),
            'subresource': 'status' if status else (entry.get('subresource') or ''),
            'time': entry.get('time'),
            'epoch': parse_time(entry.get('time')),
            'spec': not status and 'f:spec' in fields,
        })
    return writes


def _newest(items):
    dated = [i for i in items if i.get('epoch') is not None]
    if not dated:
        return None
    # Newest first; at equal times a status write before a main-resource write.
    return sorted(dated, key=lambda i: (-i['epoch'], i['subresource'] != 'status'))[0]


def _condition_write(status):
    conditions = [c for c in (status.get('conditions') or []) if isinstance(c, dict)]
    dated = [(parse_time(c.get('lastTransitionTime')), c) for c in conditions]
    dated = [(e, c) for e, c in dated if e is not None]
    if not dated:
        return None
    epoch, cond = sorted(dated, key=lambda p: -p[0])[0]
    return {'manager': None, 'operation': None, 'subresource': 'status', 'time': cond.get('lastTransitionTime'),
            'epoch': epoch, 'source': 'conditions', 'condition': cond.get('type')}


def _write_label(write):
    if write.get('source') == 'conditions':
        return 'status condition %s changed' % (write.get('condition') or '?')
    what = 'status' if write['subresource'] == 'status' else (write['subresource'] or 'the CR')
    return "%s written by field manager '%s'" % (what, write['manager'])


# --------------------------------------------------------------------------- the decision


def _flag(annotations, key, word, evidence):
    value = annotations.get(key)
    if value is None:
        return False
    if value == 'true':
        return True
    evidence.append('%s=%r is not "true": the operator does not treat the CR as %s' % (key, value, word))
    return False


def cr_generation(cr, gen=SKYHOOK):
    """The generation of the CR document's ``apiVersion`` (whose operator reads that group's pause and disable
    annotations), else ``gen`` (no apiVersion, or one of no known group)."""
    try:
        return api_generation.by_api_version(cr.get('apiVersion'))
    except api_generation.GenerationError:
        return gen


def _reported(facts):
    """A lease's facts as the result reports them (without the expiry, an internal epoch)."""
    if facts is None:
        return None
    return dict((k, v) for k, v in facts.items() if k != 'expires')


def assess(cr, lease, now, window=DEFAULT_WINDOW, lease_ref=None, lease_error=None,
           managers=OPERATOR_MANAGERS, lease_grace=LEASE_GRACE, gen=SKYHOOK, more_leases=()):
    """Whether a running operator reconciles ``cr`` (see the module docstring for the rules).

    ``cr``: the CR as the API returns it. ``lease``: the Lease object (or its spec), None when
    it could not be read (``lease_error`` says why). ``lease_ref``: (namespace, name) for the
    messages (default: ``gen``'s first lease in its default namespace). ``more_leases``: the generation's
    other leases as ``(lease_ref, lease or None, why not)`` (v0.18+: the webhook bootstrap lease,
    ``gen.lease_refs()[1:]``); any one fresh shows a running operator. Returns ``{'active', 'operator_running',
    'evidence', 'warnings', 'lease', 'leases', 'last_operator_write', 'paused', 'disabled', 'deleting', 'summary',
    'kind', 'name', 'pause_annotation'}``: ``active`` is the guard's verdict (block unless forced); ``lease`` the
    lease that decided (see the module docstring), ``leases`` every one read.
    """
    if not isinstance(cr, dict):
        raise GuardError('the CR must be a dict as the API returns it, not %s' % type(cr).__name__)
    now = to_epoch(now)
    if window is None or window < 0:
        raise GuardError('window must be a number of seconds >= 0, not %r' % (window,))
    managers = tuple(managers or ())
    meta = cr.get('metadata') or {}
    status = cr.get('status') or {}
    kind = cr.get('kind') or gen.kind
    name = meta.get('name') or '?'
    evidence = []
    warnings = []

    every = _judge_leases([(lease_ref or gen.lease_refs()[0], lease, lease_error)] + _lease_entries(more_leases),
                          now, lease_grace, evidence)
    facts = _deciding_lease(every)
    lease_fresh = facts is not None and facts['fresh']
    writes = managed_writes(cr)
    last = _last_operator_write(writes, status, managers)
    write_decides = _judge_last_write(last, writes, facts, now, window, managers, lease_grace, evidence)
    _report_reconciled(writes, last, meta, status, now, managers, evidence)
    operator_running = lease_fresh or write_decides
    hold = _judge_hold(meta, kind, name, operator_running, evidence, warnings, cr_generation(cr, gen), gen)
    active = operator_running and not hold['exempt']
    summary = _summary(facts, last, write_decides, active and hold['deleting'], now)
    return {
        'active': active,
        'operator_running': operator_running,
        'evidence': evidence,
        'warnings': warnings,
        'lease': _reported(facts),
        'leases': [_reported(f) for f in every if f is not None],
        'last_operator_write': _write_report(last, now),
        'paused': hold['paused'],
        'disabled': hold['disabled'],
        'deleting': hold['deleting'],
        'summary': summary,
        'kind': kind,
        'name': name,
        'pause_annotation': hold['pause_annotation'],
    }


def _lease_entries(more_leases):
    """``more_leases`` as a list of ``(lease_ref, lease, lease_error)``, checked."""
    entries = []
    for entry in more_leases or ():
        if not isinstance(entry, (list, tuple)) or len(entry) != 3:
            raise GuardError('more_leases takes (lease_ref, lease or None, why not) triples, not %r' % (entry,))
        entries.append(tuple(entry))
    return entries


def _judge_leases(entries, now, lease_grace, evidence):
    """Rule 1 for each ``(ref, lease, error)``: its facts (None when it could not be read), in order."""
    return [_judge_lease(lease, now, ref, error, lease_grace, evidence) for ref, lease, error in entries]


def _deciding_lease(every):
    """The lease that decides: the first fresh one, else the readable one that expired last (a write until then
    was made while an operator still held a lease), else the first readable one, else None."""
    readable = [f for f in every if f is not None]
    fresh = [f for f in readable if f['fresh']]
    if fresh:
        return fresh[0]
    expired = [f for f in readable if f['expires'] is not None]
    if expired:
        return sorted(expired, key=lambda f: -f['expires'])[0]
    return readable[0] if readable else None


def _judge_lease(lease, now, ref, lease_error, lease_grace, evidence):
    """Rule 1: the lease's facts (None when it could not be read), its evidence appended."""
    if lease is None:
        evidence.append('lease %s/%s is not readable (%s): only the CR\'s own writes can show a running operator '
                        '(one without leader election takes no lease)' % (ref[0], ref[1], lease_error or 'not given'))
        return None
    facts = lease_facts(lease, now, ref, lease_grace)
    label = _lease_label(facts)
    if facts['fresh'] and facts['age_seconds'] is None:
        evidence.append('lease %s is held by %s (no renewTime to judge its age): an operator is running'
                        % (label, facts['holder']))
    elif facts['fresh']:
        evidence.append('lease %s is held by %s, renewed %s ago (lease duration %ss): an operator is running'
                        % (label, facts['holder'], format_age(facts['age_seconds']), facts['lease_duration_seconds']))
    elif not facts['holder']:
        when = ' (released %s ago)' % format_age(facts['age_seconds']) if facts['age_seconds'] is not None else ''
        evidence.append('lease %s has no holder%s: no operator is leader' % (label, when))
    else:
        evidence.append('lease %s is held by %s but was last renewed %s ago, more than its %ss duration (+%ss grace): '
                        'its holder is gone' % (label, facts['holder'], format_age(facts['age_seconds']),
                                                facts['lease_duration_seconds'], lease_grace))
    return facts


def _last_operator_write(writes, status, managers):
    """The newest write by an operator manager (the newest dated condition without managedFields), or None."""
    if writes is None:
        return _condition_write(status)
    last = _newest([w for w in writes if w['manager'] in managers])
    return dict(last, source='managedFields') if last is not None else None


def _judge_last_write(last, writes, facts, now, window, managers, lease_grace, evidence):
    """Rule 2: whether the operator's last write shows it running, its evidence appended."""
    if last is None:
        if writes is None:
            evidence.append('the CR has no managedFields and no dated condition: its writers are unknown')
        else:
            evidence.append('no write by an operator manager (%s) in the CR\'s managedFields'
                            % (', '.join(managers) or 'none given'))
        return False
    age = now - last['epoch']
    said = '%s %s ago' % (_write_label(last), format_age(age))
    lease_expired = facts is not None and not facts['fresh'] and facts['expires'] is not None
    if age > window:
        evidence.append('%s, outside the %ss window' % (said, window))
        return False
    if lease_expired and last['epoch'] <= facts['expires'] + lease_grace:
        evidence.append('%s, while lease %s was still held (it expired %s ago): written by the operator that has '
                        'stopped since' % (said, _lease_label(facts), format_age(now - facts['expires'])))
        return False
    if lease_expired:
        evidence.append('%s, after lease %s expired %s ago: an operator that does not hold this lease is running '
                        '(leader election off, or its lease is in another namespace)'
                        % (said, _lease_label(facts), format_age(now - facts['expires'])))
    else:
        evidence.append('%s, within the %ss window: the operator is reconciling this CR' % (said, window))
    return True


def _report_reconciled(writes, last, meta, status, now, managers, evidence):
    """Rule 3: facts that never decide alone (other status writers, observedGeneration, status)."""
    for other in writes or []:
        if other['manager'] in managers or other['subresource'] != 'status' or other['epoch'] is None:
            continue
        evidence.append("status also written by field manager '%s' %s ago (not counted: not one of %s)"
                        % (other['manager'], format_age(now - other['epoch']), ', '.join(managers) or 'none'))
    spec_change = _newest([w for w in (writes or []) if w['spec']])
    generation = meta.get('generation')
    observed = status.get('observedGeneration')
    if isinstance(generation, int) and isinstance(observed, int):
        if observed == generation:
            text = ('status.observedGeneration == metadata.generation (%d): an operator reconciled this spec once '
                    '(this stays after it stops, so it does not decide)' % generation)
            if last is not None and spec_change is not None and last['epoch'] >= spec_change['epoch']:
                text += "; its last write came after the last spec change (by '%s' %s ago)" % (
                    spec_change['manager'], format_age(now - spec_change['epoch']))
            evidence.append(text)
        else:
            evidence.append('status.observedGeneration %d != metadata.generation %d: the current spec has not been '
                            'marked complete by an operator' % (observed, generation))
    if status.get('status'):
        evidence.append('status.status is %s' % status['status'])


def _judge_hold(meta, kind, name, operator_running, evidence, warnings, cr_gen=SKYHOOK, gen=SKYHOOK):
    """Rule 4: paused, disabled, being deleted; ``exempt``: a running operator does not block the CR.

    ``cr_gen``: the generation of the CR's group (its pause and disable annotations); ``gen``: the operator's
    (the status key its nodes get).
    """
    annotations = meta.get('annotations') or {}
    paused = _flag(annotations, cr_gen.pause_annotation, 'paused', evidence)
    disabled = _flag(annotations, cr_gen.disable_annotation, 'disabled', evidence)
    deleting = bool(meta.get('deletionTimestamp'))
    exempt = False
    held = [w for w, on in (('paused', paused), ('disabled', disabled)) if on]
    if operator_running and deleting:
        evidence.append('the CR is being deleted: the operator\'s finalizer uncordons its nodes and removes the CR\'s '
                        'annotations from them%s' % (' (paused or disabled makes no difference)' if held else ''))
    elif operator_running and held:
        exempt = True
        how = ' and '.join(held)
        evidence.append('the CR is %s: the operator starts no package pod, cordon, drain or interrupt for it' % how)
        warnings.append('%s %s is %s, so the guard lets it through, but a NodeWright operator is running: it keeps '
                        'setting %s%s on the CR\'s nodes to %s, and takes the CR over again as '
                        'soon as the annotation is removed' % (kind, name, how, gen.status_prefix, name, held[0]))
    elif held:
        evidence.append('the CR is %s' % ' and '.join(held))
    return {'paused': paused, 'disabled': disabled, 'deleting': deleting, 'exempt': exempt,
            'pause_annotation': cr_gen.pause_annotation}


def _summary(facts, last, write_decides, blocked_deleting, now):
    """The short reasons of a verdict: the fresh lease, the deciding write, a deletion that blocks."""
    summary = []
    lease_fresh = facts is not None and facts['fresh']
    if lease_fresh:
        if facts['age_seconds'] is None:
            summary.append('lease %s held by %s' % (_lease_label(facts), facts['holder_pod']))
        else:
            summary.append('lease %s held by %s, renewed %s ago'
                           % (_lease_label(facts), facts['holder_pod'], format_age(facts['age_seconds'])))
    if last is not None and (write_decides or lease_fresh):
        summary.append('%s %s ago' % (_write_label(last), format_age(now - last['epoch'])))
    if blocked_deleting:
        summary.append('the CR is being deleted')
    return summary


def _write_report(last, now):
    """The operator's last write as the result reports it (None: none seen)."""
    if last is None:
        return None
    return {'manager': last.get('manager'), 'operation': last.get('operation'),
            'subresource': last.get('subresource'), 'time': last.get('time'),
            'age_seconds': round(now - last['epoch'], 3), 'source': last.get('source')}


def refusal_message(assessment, gen=SKYHOOK):
    """The failure message for an active assessment; the pause annotation it advises is the one assess read
    (the CR's group's), else ``gen``'s."""
    how = '; '.join(assessment['summary']) or 'see evidence'
    advice = 'Stop the operator, or set force: true'
    if not assessment['deleting']:
        advice = ('Stop the operator, pause the CR (%s: "true"; the operator then starts nothing on its nodes), '
                  'or set force: true' % (assessment.get('pause_annotation') or gen.pause_annotation))
    return ('%s %s is being reconciled by a running NodeWright operator (%s); refusing to act on its nodes. %s'
            % (assessment['kind'], assessment['name'], how, advice))


def force_warning(assessment):
    """The warning when force lets an active assessment through."""
    how = '; '.join(assessment['summary']) or 'see evidence'
    return ('force: true: acting on %s %s although a running NodeWright operator reconciles it (%s); the operator '
            'may cordon, drain and run pods on the same nodes at the same time'
            % (assessment['kind'], assessment['name'], how))
