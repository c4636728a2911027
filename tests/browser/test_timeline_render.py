# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The rollout timeline of a 200-node rollout in headless Chromium: every node-step has its bar, and it renders fast.

The report is synthetic (tests/browser/synthetic.py: recorded through rollout_state's own functions,
as the strategy records a run); the page of a real end-to-end run is tested against the cluster
in tests/kube/test_timeline_e2e.py. Render time: navigation start to the first frame painted after
the load event (two requestAnimationFrames), must be under 2 s.
"""

from __future__ import annotations

import json

import synthetic
import timeline_checks

from ansible_collections.nodewright.bridge.plugins.plugin_utils.reporting import rollout_timeline

RENDER_BUDGET_MS = 2000


def test_a_200_node_rollout_has_every_bar_and_renders_in_under_2_seconds(browser, output_dir):
    report = synthetic.report(nodes=200)
    nodes = report['rollouts'][0]['nodes']
    assert len(nodes) >= 150  # the stopped compartment leaves some never admitted
    (output_dir / 'timeline-200.json').write_text(json.dumps(report))
    page = output_dir / 'timeline-200.html'
    page.write_text(rollout_timeline.render(report), encoding='utf-8')
    seen = timeline_checks.open_page(browser, page, output_dir / 'timeline-200.png')
    expected = timeline_checks.report_steps(report)
    assert len(expected) > 1500
    assert seen['bars'] == expected
    assert any(drawn[4] for drawn in seen['bars']), 'the failed steps are marked'
    text = browser.evaluate('document.body.innerText')
    assert 'Stopped: 1 consecutive failed batch' in text
    assert 'batch 2: 4 nodes (policy: linear, budget 25% \u2192 12)' in text
    print('\n200-node timeline: %d bars, %.1f KiB; load event %.0f ms, first paint after it %.0f ms after navigation start'
          % (len(seen['bars']), page.stat().st_size / 1024.0, seen['load_ms'], seen['painted_ms']))
    assert seen['painted_ms'] < RENDER_BUDGET_MS


def test_the_pdb_waits_and_exact_times_are_in_the_hover_titles(browser, output_dir):
    report = synthetic.report(nodes=12, compartments=2)
    page = output_dir / 'timeline-12.html'
    page.write_text(rollout_timeline.render(report), encoding='utf-8')
    browser.load(page.resolve().as_uri())
    titles = browser.evaluate('[...document.querySelectorAll(".bar[data-kind=drain]")].map(e => e.title)')
    assert titles and all('took ' in t for t in titles)
    assert any('pod ml/inference-0 waited' in t and 'ml/inference (maxUnavailable 2' in t for t in titles)
    marks = browser.evaluate('document.querySelectorAll(".pdbwait").length')
    waits = sum(len(s.get('waits') or ()) for n in report['rollouts'][0]['nodes'].values() for s in n['steps'])
    assert marks == waits > 0
