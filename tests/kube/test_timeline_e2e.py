# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""The rollout timeline of a real `nodewright.bridge.apply` run, checked in headless Chromium.

One run of two CRs (two rollouts): on rack a, a 3-package CR with a reboot, where the first
node waits for a protected training pod and its drain waits on a PodDisruptionBudget; on rack b,
a CR whose package fails, so its compartment stops after the first batch. The callback writes the
JSON report and the page (NODEWRIGHT_REPORT_HTML), the apply playbook's report play writes the
page again (nodewright_report_html, through nodewright.bridge.rollout_report in a forked worker).
The page must show a bar for every node-step of the JSON report, the failure and the stop reason;
its screenshot goes to build/browser/timeline-e2e.png. Chromium missing is a failure, not a skip.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml
from kubernetes import client as kclient

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'browser'))

# pylint: disable=wrong-import-position
import cdp  # noqa: E402
import helpers  # noqa: E402
import timeline_checks  # noqa: E402
from test_e2e_apply import Pool, _apply, _cr_docs, _policy  # noqa: E402

OUTPUT = Path(__file__).resolve().parents[2] / 'build' / 'browser'


@pytest.fixture
def chromium():
    path = cdp.find_chromium()
    if not path:
        pytest.fail('no Chromium: the timeline test needs it (Debian: apt-get install chromium; or CHROMIUM=<path>)',
                    pytrace=False)
    return path


def _web_pods_behind_a_pdb(cluster, namespace, node):
    """Two pods on ``node`` behind a PDB that allows no disruption (until it is relaxed)."""
    for i in range(2):
        cluster.core.create_namespaced_pod(namespace, {
            'metadata': {'name': f'web-{i}', 'labels': {'app': 'web'}},
            'spec': {'nodeName': node, 'containers': [{'name': 'web', 'image': 'registry.local/web:1'}]}})
        cluster.wait_pod(namespace, f'web-{i}', lambda p: p.status.phase == 'Running')
    kclient.PolicyV1Api(cluster.api).create_namespaced_pod_disruption_budget(namespace, {
        'metadata': {'name': 'web'}, 'spec': {'minAvailable': 2, 'selector': {'matchLabels': {'app': 'web'}}}})


def _release_later(cluster, namespace, node, done, problems):
    """Once ``node`` is cordoned: the training pod finishes 6 s later; the PDB is relaxed once it has refused the
    evictions of both web pods (429, counted by the API server). A failure is kept in ``problems``."""
    try:
        refused = helpers.apiserver_requests(cluster.api, subresource='eviction', code='429', dry_run='')
        helpers.wait_for(lambda: cluster.core.read_node(node).spec.unschedulable, 300, interval=0.5,
                         what=f'{node} cordoned by the run')
        # a timer, not a condition: the drain (the step after the cordon) waits for the training pod for the
        # at least 4 s _check_report asks of the 'wait' step; 6 s from the cordon leave it 2 s to start
        time.sleep(6)
        cluster.core.patch_namespaced_pod_status('train', namespace, {'status': {'phase': 'Succeeded'}})
        # the drain has asked to evict both web pods and the PDB refused it (its waits in the report)
        helpers.wait_for(lambda: helpers.apiserver_requests(cluster.api, subresource='eviction', code='429',
                                                            dry_run='') - refused >= 2,
                         300, what='the evictions of both web pods refused by the PDB')
        kclient.PolicyV1Api(cluster.api).patch_namespaced_pod_disruption_budget('web', namespace, {'spec': {'minAvailable': 0}})
        done.set()
    except Exception as exc:  # pylint: disable=broad-exception-caught
        problems.append(exc)


def _write_crs(tmp_path, good, bad):
    docs = [_cr_docs(f'tl-{good.id}', good.id, f'policy-{good.id}'), _policy(f'policy-{good.id}'),
            _cr_docs(f'tl-{bad.id}', bad.id, f'policy-{bad.id}', failing_image=True),
            _policy(f'policy-{bad.id}', failure_threshold=1)]
    path = tmp_path / 'timeline-crs.yaml'
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    return path


def _check_report(report, good, bad, namespace):
    rollouts = {r['play'].rsplit(': ', 1)[-1]: r for r in report['rollouts']}
    good_run, bad_run = rollouts[f'tl-{good.id}'], rollouts[f'tl-{bad.id}']
    first = good_run['nodes'][good.names[0]]
    kinds = [s['kind'] for s in first['steps']]
    for kind in ('plan', 'cordon', 'wait', 'drain', 'stage', 'interrupt', 'health', 'state', 'uncordon'):
        assert kind in kinds, (kind, kinds)
    drain = next(s for s in first['steps'] if s['kind'] == 'drain')
    assert any(w['pod'].startswith(namespace + '/web-') and f'{namespace}/web' in w['pdbs'][0] for w in drain['waits']), drain
    wait = next(s for s in first['steps'] if s['kind'] == 'wait')
    assert wait['finished'] - wait['started'] >= 4, wait
    assert [good_run['nodes'][n]['status'] for n in good.names] == ['ok', 'ok']
    # rack-a: fixed, 1 node a batch; the training node is picked last (selection prefers the nodes no protected pod
    # holds) and parks under apply's shared budget, so batch 2 ends empty and it completes in batch 3
    assert sorted(good_run['nodes'][n]['batch'] for n in good.names) == [1, 3]
    steps = [s for n in good_run['nodes'].values() for s in n['steps']]
    assert all(s['started'] >= good_run['started'] - 1 and s['finished'] >= s['started'] for s in steps)
    comp = bad_run['compartments']['rack-b']
    assert comp['stopped'] and comp['stop_reason']
    failed = [n for n in bad_run['nodes'].values() if n['status'] == 'failed']
    assert len(failed) == 1 and any(not s['ok'] for s in failed[0]['steps']), failed
    return comp['stop_reason']


# pylint: disable-next=too-many-locals
def test_the_timeline_of_an_apply_run_shows_every_step_the_pdb_wait_and_the_stop(
        cluster, playbooks, namespace, tmp_path, chromium, monkeypatch):
    good, bad = Pool(cluster, tmp_path, {'a': 2}), Pool(cluster, tmp_path, {'b': 3})  # 1 of 3 is below the safetyLimit (50%)
    try:
        path = _write_crs(tmp_path, good, bad)
        node = good.names[0]
        cluster.core.create_namespaced_pod(namespace, {
            'metadata': {'name': 'train', 'labels': {'workload': 'training'}},
            'spec': {'nodeName': node, 'restartPolicy': 'Never', 'containers': [{'name': 't', 'image': 'registry.local/train:1'}]}})
        cluster.wait_pod(namespace, 'train', lambda p: p.status.phase == 'Running')
        _web_pods_behind_a_pdb(cluster, namespace, node)
        released, problems = threading.Event(), []
        threading.Thread(target=_release_later, args=(cluster, namespace, node, released, problems), daemon=True).start()
        by_callback, by_playbook = tmp_path / 'callback.html', tmp_path / 'playbook.html'
        monkeypatch.setenv('NODEWRIGHT_REPORT_HTML', str(by_callback))
        result = playbooks.run('nodewright.bridge.apply', extra_vars=_apply(
            playbooks, path, namespace, nodewright_report_html=str(by_playbook)))
        assert not problems, problems
        assert released.is_set(), 'the run ended before the drain had to wait'
        assert result.rc != 0 and result.report, result  # rack b stopped
        stop_reason = _check_report(result.report, good, bad, namespace)
        # the report play's page (a worker forked after the rollouts) is the callback's, byte for byte
        assert by_playbook.read_text(encoding='utf-8') == by_callback.read_text(encoding='utf-8')
        OUTPUT.mkdir(parents=True, exist_ok=True)
        (OUTPUT / 'timeline-e2e.json').write_text(json.dumps(result.report, indent=1))
        (OUTPUT / 'timeline-e2e.html').write_bytes(by_callback.read_bytes())
        with cdp.Browser(chromium) as browser:
            seen = timeline_checks.open_page(browser, by_callback, OUTPUT / 'timeline-e2e.png')
            text = browser.evaluate('document.body.innerText')
            titles = browser.evaluate('[...document.querySelectorAll(".bar[data-kind=drain]")].map(e => e.title).join("\\n")')
        assert seen['bars'] == timeline_checks.report_steps(result.report)
        assert any(drawn[4] for drawn in seen['bars']), 'the failed step has a red bar'
        assert 'Stopped: ' + stop_reason in text
        assert 'failed at "nccl-tuning apply"' in text
        assert f'{namespace}/web' in titles and 'waited' in titles
        print(f"\ne2e timeline: {len(seen['bars'])} bars, painted {seen['painted_ms']:.0f} ms after navigation start")
    finally:
        good.close()
        bad.close()
