# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""Print the results of the last scenario runs (build/scenarios/results/*/*/summary.json) as a table.

    .venv/bin/python tests/scenarios/report.py

Assertions are counted again from chainsaw's report (one operation per YAML document of an assert
file, as chainsaw runs them) by class: node, pod, ConfigMap, CR (Skyhook / DeploymentPolicy).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

# pylint: disable=wrong-import-position
import scenario_support as ss  # noqa: E402
from test_upstream_scenarios import REMOVED, SCENARIOS, XFAIL  # noqa: E402


def counts(scenario, report):
    src = ss.upstream_tree() / scenario
    doc = ss.rewrite(yaml.safe_load((src / 'chainsaw-test.yaml').read_text()), REMOVED.get(scenario, {}))
    files = ss.assert_files(src, doc)
    out = {}
    for test in (report or {}).get('tests') or []:
        for step in test.get('steps') or []:
            for op in step.get('operations') or []:
                if op.get('type') not in ('assert', 'error'):
                    continue
                key = files.get((step.get('name'), op.get('name')))
                cls = ss.assertion_class(key) if key else '?'
                entry = out.setdefault(cls, [0, 0])
                entry[1] += 1
                entry[0] += 0 if op.get('failure') else 1
    return out


def main():
    total = {}
    for scenario in SCENARIOS:
        path = ss.BUILD / 'results' / scenario / 'summary.json'
        if not path.is_file():
            print(f'{scenario:45} not run')
            continue
        summary = json.loads(path.read_text())
        report_path = ss.BUILD / 'results' / scenario / 'chainsaw-report.json'
        report = json.loads(report_path.read_text()) if report_path.is_file() else None
        by_class = counts(scenario, report)
        for cls, (ok, all_) in by_class.items():
            entry = total.setdefault(cls, [0, 0])
            entry[0] += ok
            entry[1] += all_
        verdict = 'passed' if summary['rc'] == 0 else 'FAILED'
        if scenario in XFAIL:
            verdict += ' (xfail)'
        classes = ', '.join(f'{c} {ok}/{n}' for c, (ok, n) in sorted(by_class.items()))
        print(f'{scenario:45} {verdict:16} {summary["seconds"]:7.1f}s  removed {len(summary["removed"])}  {classes}')
    print('total: ' + ', '.join(f'{c} {ok}/{n}' for c, (ok, n) in sorted(total.items())))


if __name__ == '__main__':
    main()
