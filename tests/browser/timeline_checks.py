# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""What a browser test checks on a rollout timeline page: shared by tests/browser and tests/kube/test_timeline_e2e.py."""

from __future__ import annotations

import cdp

# every bar of the page, as the report names it: (node, index in the node's steps, step name, kind, failed)
BARS_JS = ('[...document.querySelectorAll(".bar[data-step]")].map(e => '
           '[e.dataset.node, Number(e.dataset.index), e.dataset.step, e.dataset.kind, e.classList.contains("failed")])')
# the first frame painted after the load event's layout: two animation frames later (ms since navigation start)
PAINTED_JS = 'new Promise(done => requestAnimationFrame(() => requestAnimationFrame(() => done(performance.now()))))'
LOAD_JS = 'performance.getEntriesByType("navigation")[0].loadEventEnd'


def report_steps(report):
    """Every node-step of a report, as BARS_JS returns it."""
    return sorted([host, index, step['name'], step['kind'], not step['ok']]
                  for rollout in report.get('rollouts') or ()
                  for host, node in (rollout.get('nodes') or {}).items()
                  for index, step in enumerate(node.get('steps') or ()))


def open_page(browser, html_path, png_path):
    """Load the page, screenshot it into ``png_path``; ``{'bars', 'load_ms', 'painted_ms', 'png'}``."""
    browser.load(html_path.resolve().as_uri())
    painted = browser.evaluate(PAINTED_JS)
    load = browser.evaluate(LOAD_JS)
    png = browser.screenshot()
    png_path.write_bytes(png)
    width, height, distinct = cdp.png_info(png)
    assert width >= 800 and height >= 300, (width, height)
    # a blank page compresses to a handful of byte values; bars, text and colours give far more
    assert distinct > 32, f'the screenshot {png_path} looks blank ({distinct} distinct bytes)'
    bars = sorted(browser.evaluate(BARS_JS))
    return {'bars': bars, 'load_ms': load, 'painted_ms': painted, 'png': (width, height)}
