# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""The rollout timeline: the JSON report (``rollout_state.RolloutBus.report``) as one self-contained HTML page.

Per rollout (a budgeted play or phase), per compartment and batch, one row per node with its steps
(``nodes[host]['steps']``) as bars on the rollout's time axis, coloured by kind, failures in red with
their message, a stopped compartment's reason, and each batch's size against the policy.

The page is static HTML and CSS (no script, no external asset: it works offline, attached to a
ticket or an AWX job); bars are ``div`` elements positioned in percent of the axis, each with
``data-node``, ``data-step`` and ``data-index`` (its place in the node's ``steps``) so a test can
match them against the report, and a ``title`` with the exact times and the PDB waits. Everything
that comes from the cluster, the CR or the play is HTML-escaped. No I/O.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time
from html import escape

from ansible_collections.nodewright.bridge.plugins.plugin_utils.reporting import rollout_state

COLOURS = (
    ('plan', '#adb5bd', 'plan'), ('guard', '#868e96', 'operator guard'), ('cordon', '#f59f00', 'cordon'),
    ('wait', '#b197fc', 'wait for protected pods'), ('drain', '#f76707', 'drain'),
    ('stage', '#1c7ed6', 'package stage'), ('interrupt', '#ae3ec9', 'interrupt / reboot'),
    ('health', '#2f9e44', 'health gate'), ('state', '#22b8cf', 'record state'), ('uncordon', '#fcc419', 'uncordon'),
    ('task', '#495057', 'other task'),
)
_TICK_STEPS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400, 28800, 86400)
LABEL_WIDTH = 260

CSS = """
body{font:13px/1.4 system-ui,-apple-system,'Segoe UI',sans-serif;margin:16px;color:#212529;background:#fff}
h1{font-size:20px;margin:0 0 4px}h2{font-size:17px;margin:24px 0 4px}h3{font-size:14px;margin:16px 0 4px}
.meta{color:#495057;margin:2px 0}.legend{display:flex;flex-wrap:wrap;gap:4px 14px;margin:8px 0 4px}
.legend span{display:inline-flex;align-items:center;gap:4px}.sw{width:14px;height:10px;border-radius:2px;display:inline-block}
.stop{background:#fff5f5;border:1px solid #e03131;color:#c92a2a;padding:6px 10px;margin:6px 0;border-radius:4px}
.note{background:#f8f9fa;border:1px solid #dee2e6;padding:4px 10px;margin:4px 0;border-radius:4px}
.batch{position:relative;margin:2px 0 10px}.bh{font-weight:600;margin:6px 0 2px}.bh small{font-weight:400;color:#495057}
.row{display:grid;grid-template-columns:%(w)dpx 1fr;align-items:center;min-height:18px}
.label{white-space:nowrap;overflow:hidden;text-overflow:ellipsis;padding-right:8px;font-family:ui-monospace,monospace;font-size:12px}
.row.failed .label{color:#c92a2a;font-weight:600}.track{position:relative;height:14px;background:#f1f3f5;border-radius:2px}
.bar{position:absolute;top:1px;height:12px;min-width:2px;border-radius:2px;box-shadow:inset -1px 0 0 #fff}
.bar.failed{background-image:repeating-linear-gradient(45deg,#e03131 0 4px,#ffc9c9 4px 8px)!important;outline:2px solid #c92a2a}
.pdbwait{position:absolute;top:9px;height:4px;min-width:2px;background:#212529;opacity:.75}
.failmsg{grid-column:2;color:#c92a2a;font-size:12px;margin:0 0 4px;word-break:break-word}
.axis{display:grid;grid-template-columns:%(w)dpx 1fr;height:18px;font-size:11px;color:#495057}
.ticks,.lines{position:relative}.ticks span{position:absolute;transform:translateX(-50%%);white-space:nowrap}
.lines{position:absolute;left:%(w)dpx;right:0;top:0;bottom:0;pointer-events:none}
.lines i{position:absolute;top:0;bottom:0;border-left:1px dashed #dee2e6}
.status{font-size:11px;color:#495057;font-weight:400}
""" % {'w': LABEL_WIDTH}


def _e(value):
    return escape('' if value is None else str(value), quote=True)


def _clock(epoch):
    return time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime(epoch)) if epoch else '-'


def _tick_label(seconds):
    seconds = int(round(seconds))
    if seconds < 60:
        return '%ds' % seconds
    if seconds < 3600:
        return '%dm%02ds' % divmod(seconds, 60) if seconds % 60 else '%dm' % (seconds // 60)
    hours, rest = divmod(seconds, 3600)
    return '%dh%02dm' % (hours, rest // 60)


def ticks(span):
    """The axis' tick offsets (seconds): a round step giving at most 10 ticks over ``span``."""
    step = next((s for s in _TICK_STEPS if span / s <= 10), _TICK_STEPS[-1] * max(1, int(span // (_TICK_STEPS[-1] * 10)) + 1))
    return [i * step for i in range(int(span // step) + 1)]


class _Axis(object):
    def __init__(self, rollout):
        starts, ends = [], []
        for node in (rollout.get('nodes') or {}).values():
            for step in node.get('steps') or ():
                starts.append(step['started'])
                ends.append(step['finished'])
        self.start = rollout.get('started') or (min(starts) if starts else 0.0)
        if starts:
            self.start = min([self.start] + starts)
        end = self.start + float(rollout.get('elapsed') or 0.0)
        self.span = max([end] + ends) - self.start or 1.0

    def pct(self, epoch):
        return max(0.0, min(100.0, (epoch - self.start) * 100.0 / self.span))

    def html(self):
        marks = ''.join('<span style="left:%.3f%%">%s</span>' % (t * 100.0 / self.span, _tick_label(t)) for t in ticks(self.span))
        return '<div class="axis"><div></div><div class="ticks">%s</div></div>' % marks

    def lines(self):
        return '<div class="lines">%s</div>' % ''.join('<i style="left:%.3f%%"></i>' % (t * 100.0 / self.span)
                                                       for t in ticks(self.span)[1:])


def _policy(comp):
    strategy = comp.get('strategy')
    budget = comp.get('budget') or {}
    amount = '%s%%' % budget['percent'] if budget.get('percent') is not None else '%s' % budget.get('count', '?')
    return 'policy: %s, budget %s \u2192 %s' % (next(iter(strategy)) if strategy else 'budget', amount, comp.get('ceiling'))


def _strategy_detail(comp):
    strategy = comp.get('strategy')
    if not strategy:
        return 'one fixed batch size (interruptionBudget)'
    name = next(iter(strategy))
    params = strategy[name] or {}
    return '%s (%s)' % (name, ', '.join('%s %s' % (k, params[k]) for k in sorted(params) if params[k] is not None))


def _wait_text(wait):
    took = rollout_state.format_duration(wait.get('seconds'))
    return 'pod %s waited %s on PDB %s (%s attempts, %s)' % (
        wait.get('pod'), took, '; '.join(wait.get('pdbs') or ()) or '?', wait.get('attempts'), wait.get('action'))


def _bar(axis, host, index, step):
    started, finished = step['started'], step['finished']
    left = axis.pct(started)
    width = max(0.0, axis.pct(finished) - left)
    lines = ['%s (%s)' % (step['name'], step['kind']),
             'started +%.1fs (%s), took %.3fs' % (started - axis.start, _clock(started), finished - started),
             ('ok' + (', changed' if step.get('changed') else '')) if step.get('ok') else 'FAILED']
    if step.get('detail'):
        lines.append(step['detail'])
    lines.extend(_wait_text(w) for w in step.get('waits') or ())
    out = ['<div class="bar%s" style="left:%.3f%%;width:%.3f%%;background:%s" data-node="%s" data-step="%s" data-index="%d" '
           'data-kind="%s" title="%s"></div>' % ('' if step.get('ok') else ' failed', left, width, _KIND_COLOUR.get(step['kind'], '#495057'),
                                                 _e(host), _e(step['name']), index, _e(step['kind']), _e('\n'.join(lines)))]
    for wait in step.get('waits') or ():
        if wait.get('started') is not None:
            begin = axis.pct(wait['started'])
            out.append('<div class="pdbwait" style="left:%.3f%%;width:%.3f%%" data-node="%s" title="%s"></div>' % (
                begin, max(0.0, axis.pct(wait['started'] + (wait.get('seconds') or 0)) - begin), _e(host), _e(_wait_text(wait))))
    return ''.join(out)


_KIND_COLOUR = dict((kind, colour) for kind, colour, unused in COLOURS)


def _row(axis, host, node):
    steps = node.get('steps') or []
    failed = node.get('status') == 'failed' or any(not s.get('ok') for s in steps)
    label = '%s <span class="status">%s</span>' % (_e(host), _e(node.get('status') or ''))
    out = ['<div class="row%s" data-host="%s"><div class="label" title="%s">%s</div><div class="track">' % (
        ' failed' if failed else '', _e(host), _e(host), label)]
    out.extend(_bar(axis, host, i, s) for i, s in enumerate(steps))
    out.append('</div>')
    broken = [s for s in steps if not s.get('ok')]
    if broken:
        out.append('<div class="failmsg">failed at &quot;%s&quot;: %s</div>' % (_e(broken[0]['name']), _e(broken[0].get('detail'))))
    elif failed:
        out.append('<div class="failmsg">failed</div>')
    out.append('</div>')
    return ''.join(out)


def _batch_header(comp, number, record, hosts, sliding):
    word = 'group' if sliding else 'batch'
    if record is None:
        return '<div class="bh">%s %s: %d node%s <small>(%s; not scored)</small></div>' % (
            word, _e(number), len(hosts), '' if len(hosts) == 1 else 's', _e(_policy(comp)))
    parts = ['ok %d' % len(record.get('ok') or ()), 'failed %d' % len(record.get('failed') or ())]
    if record.get('removed'):
        parts.append('removed %d' % len(record['removed']))
    parts.append(rollout_state.format_duration(record.get('elapsed')))
    if record.get('failed_batch'):
        parts.append('<b>failed batch</b>')
    if record.get('stopped'):
        parts.append('<b>compartment stopped</b>')
    return '<div class="bh">%s %s: %d node%s <small>(%s) \u00b7 %s</small></div>' % (
        word, _e(record['number']), record['size'], '' if record['size'] == 1 else 's', _e(_policy(comp)),
        ' \u00b7 '.join(p if p.startswith('<b>') else _e(p) for p in parts))


def _compartment(axis, name, comp, nodes, sliding):
    out = ['<section class="compartment" data-compartment="%s"><h3>%s</h3>' % (_e(name), _e(name))]
    if comp is not None:
        out.append('<div class="meta">%s nodes, %s completed, %s failed, %s%% \u00b7 %s \u00b7 %s</div>' % (
            _e(comp.get('matched')), _e(comp.get('completed')), _e(comp.get('failed')), _e(comp.get('progress')),
            _e(_strategy_detail(comp)), _e(_policy(comp))))
        if comp.get('stopped'):
            out.append('<div class="stop"><b>Stopped:</b> %s</div>' % _e(comp.get('stop_reason') or 'stopped'))
    records = dict((b['number'], b) for b in (comp or {}).get('batches') or ())
    grouped = {}
    for host, node in nodes.items():
        grouped.setdefault(node.get('batch'), []).append(host)
    for number in sorted(set(records) | set(grouped), key=lambda n: (n is None, n or 0)):
        record = records.get(number)
        order = list((record or {}).get('hosts') or ())
        hosts = order + sorted(h for h in grouped.get(number, ()) if h not in order)
        out.append('<div class="batch" data-batch="%s">' % _e(number))
        out.append(_batch_header(comp or {}, number, record, hosts, sliding))
        out.append(axis.lines())
        out.extend(_row(axis, h, nodes.get(h) or {'status': 'no steps'}) for h in hosts)
        out.append('</div>')
    out.append('</section>')
    return ''.join(out)


def _outcome(rollout):
    if rollout.get('stopped'):
        return 'STOPPED'
    if not rollout.get('finished', True):
        return 'running'
    if rollout.get('ended'):
        return 'ended early (%s)' % rollout['ended']
    return 'complete' if not rollout.get('not_attempted') else 'incomplete'


def _rollout(index, rollout):
    axis = _Axis(rollout)
    nodes = rollout.get('nodes') or {}
    comps = rollout.get('compartments') or {}
    sliding = rollout.get('mode') == 'sliding'
    out = ['<section class="rollout" data-rollout="%d"><h2>%s</h2>' % (index, _e(rollout.get('play') or 'rollout')),
           '<div class="meta">%s window \u00b7 started %s \u00b7 took %s \u00b7 %d node%s \u00b7 <b>%s</b></div>' % (
               _e(rollout.get('mode') or 'batch'), _e(_clock(rollout.get('started'))),
               _e(rollout_state.format_duration(rollout.get('elapsed'))), len(nodes), '' if len(nodes) == 1 else 's',
               _e(_outcome(rollout)))]
    if rollout.get('not_attempted'):
        out.append('<div class="note">Never admitted: %s</div>' % _e(', '.join(rollout['not_attempted'])))
    if rollout.get('excluded'):
        out.append('<div class="note">Left out: %s</div>' % _e('; '.join('%s (%s)' % i for i in sorted(rollout['excluded'].items()))))
    out.append(axis.html())
    by_comp = {}
    for host, node in nodes.items():
        by_comp.setdefault(node.get('compartment'), {})[host] = node
    empty = [n for n in comps if n not in by_comp and not comps[n].get('matched') and not comps[n].get('batches')]
    for name in [n for n in comps if n not in empty] + sorted(n for n in by_comp if n not in comps and n is not None):
        out.append(_compartment(axis, name, comps.get(name), by_comp.get(name, {}), sliding))
    if empty:
        out.append('<div class="meta">Compartments without nodes: %s</div>' % _e(', '.join(empty)))
    if None in by_comp:
        out.append(_compartment(axis, '(no compartment)', None, by_comp[None], sliding))
    out.append('</section>')
    return ''.join(out)


def _legend():
    return '<div class="legend">%s<span><i class="sw" style="background:#e03131"></i>failed</span>' \
           '<span><i class="sw" style="background:#212529;height:4px"></i>waiting on a PodDisruptionBudget</span></div>' % ''.join(
               '<span><i class="sw" style="background:%s"></i>%s</span>' % (colour, _e(label)) for unused, colour, label in COLOURS)


def render(report, title='nodewright rollout timeline'):
    """The HTML page (a str) of a rollout report: every rollout of ``report['rollouts']``."""
    report = report or {}
    rollouts = report.get('rollouts')
    if rollouts is None:
        rollouts = [report] if report.get('compartments') else []
    body = [_rollout(i, r) for i, r in enumerate(rollouts)] or ['<p class="note">No budgeted rollout was recorded.</p>']
    steps = sum(len(n.get('steps') or ()) for r in rollouts for n in (r.get('nodes') or {}).values())
    return ''.join([
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>%s</title>' % _e(title),
        '<meta name="viewport" content="width=device-width,initial-scale=1"><style>%s</style></head><body>' % CSS,
        '<h1>%s</h1><div class="meta">%d rollout%s, %d step%s \u00b7 hover a bar for its times and details</div>' % (
            _e(title), len(rollouts), '' if len(rollouts) == 1 else 's', steps, '' if steps == 1 else 's'),
        _legend()] + body + ['</body></html>\n'])
