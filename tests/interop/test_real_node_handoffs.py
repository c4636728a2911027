# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
"""Handoffs on a real node: the real v0.15 operator and nodewright.bridge.apply, one after the other, on a kubelet +
containerd node whose packages really run through the real agent (tests/kube/real_support.py).

The packages' scripts append a proof line on the host per stage they run, so "nothing ran again" is read on the
machine, not only in the API: after a handoff either way the proof files have no new line and no package pod was
created for the node (counted by watch), and the node is complete, uncordoned, with its resolv.conf its own.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import helpers
import interop_support as support
import real_support
from real_support import PREFIX, real_node, start_real_node

STAGES = ['apply', 'apply-check', 'config', 'config-check', 'post-interrupt', 'post-interrupt-check']


@pytest.fixture(scope='module')
def real(cluster):
    """A real node in the cluster for this module (real_support.start_real_node)."""
    node, stop = start_real_node(cluster)
    yield node
    stop()


def _cr(real):
    """A CR of two packages on the real node: one with a service interrupt (a cordon and a drain), one after it."""
    return real.create_cr({
        'tuning': real.package('proof', configMap={'sysctl.conf': 'vm.swappiness=10\n'},
                               interrupt={'type': 'service', 'services': ['containerd']}),
        'driver': real.package('proof', version='1.1.0', dependsOn={'tuning': '1.0.0'}),
    })


def _apply(playbooks, real, cr, **extra):
    return playbooks.run('nodewright.bridge.apply', run_timeout=900, extra_vars=dict(
        support.TIMEOUTS, nodewright_cr_name=cr, nodewright_agent_image=real.images['agent'], **extra))


def _proof(real, cr):
    return {package: real.stages(cr, package) for package in ('tuning', 'driver')}


def _complete(real, cr):
    node = real.node()
    labels = node.metadata.labels or {}
    state = real.state(cr)
    return (labels.get(f'{PREFIX}/status_{cr}') == 'complete' and not node.spec.unschedulable
            and sorted(state) == ['driver|1.1.0', 'tuning|1.0.0']
            and all(entry['state'] == 'complete' for entry in state.values()))


def _cr_status(real, cr):
    return real.custom.get_cluster_custom_object('skyhook.nvidia.com', 'v1alpha1', 'skyhooks', cr).get('status') or {}


def _resolv(real):
    return (Path(real.cluster.info.real_nodes[real.name]['dir']) / 'resolv.conf').read_bytes()


def _nothing_ran_again(real, cr, recorder, started, agent, proof, resolv, figures):
    """After a handoff: ``agent`` (the operator's or the bridge's user agent) created no pod for the node (watch and
    audit log), the host's proof files have no new line, and the node is complete with its own resolv.conf."""
    writes = support.audit_writes(real.cluster, agent, started, [real.name])
    figures(pods_on_the_real_node=len(recorder.since(started)), writes=writes, proof_lines_after=_proof(real, cr))
    assert recorder.since(started) == [] and writes['pods created'] == 0, writes
    assert _proof(real, cr) == proof, 'a stage ran again on the host'
    assert _complete(real, cr) and _resolv(real) == resolv


def test_the_bridge_rolls_a_real_node_then_the_operator_runs_nothing_on_it(real, playbooks, operators, figures):
    cr = _cr(real)
    resolv = _resolv(real)
    try:
        result = _apply(playbooks, real, cr)
        assert result.rc == 0, result.stdout[-3000:]
        proof = _proof(real, cr)
        assert proof == {'tuning': STAGES, 'driver': STAGES[:4]}, proof
        assert _complete(real, cr)

        recorder = support.PodRecorder(real.cluster, [real.name])
        started = time.time()
        operators.start(AGENT_IMAGE=real.images['agent'])
        support.wait_until(lambda: _cr_status(real, cr).get('status') == 'complete', 60,
                           'the operator to report the CR complete')
        # a negative assertion over a period: 45 s of the operator at work on the CR and nothing run again, checked
        # all along (no pod on the node, no new line in the host's proof files), then by _nothing_ran_again
        helpers.holds_for(lambda: recorder.since(started) == [] and _proof(real, cr) == proof,
                          max(0.0, started + 45 - time.time()), interval=1,
                          what='nothing run again on the real node by the operator')
        recorder.close()
        _nothing_ran_again(real, cr, recorder, started, support.OPERATOR_UA, proof, resolv, figures)
    finally:
        operators.stop_all()
        real.delete_cr(cr)


def test_the_operator_rolls_a_real_node_then_the_bridge_runs_nothing_on_it(real, playbooks, operators, figures):
    cr = _cr(real)
    resolv = _resolv(real)
    try:
        operator = operators.start(AGENT_IMAGE=real.images['agent'])
        support.wait_until(lambda: _complete(real, cr), 300, f'the operator to complete {cr} on the real node')
        operator.stop()
        proof = _proof(real, cr)
        # the operator's pods ran the same stages through the same agent, once each
        assert proof == {'tuning': STAGES, 'driver': STAGES[:4]}, proof

        recorder = support.PodRecorder(real.cluster, [real.name])
        started = time.time()
        # the operator is stopped; its last writes are seconds old and it held no lease (the guard's documented
        # way on is force, as in test_handoffs)
        result = _apply(playbooks, real, cr, nodewright_force=True)
        recorder.close()
        assert result.rc == 0, result.stdout[-3000:]
        _nothing_ran_again(real, cr, recorder, started, support.BRIDGE_UA, proof, resolv, figures)
    finally:
        operators.stop_all()
        real.delete_cr(cr)


@pytest.fixture(scope='module')
def role_package(real, tmp_path_factory):
    """The migration guide's gpu_tuning role built unchanged as a package (nodewright.bridge.package), pushed to the
    node's registry: the CR's packages entry."""
    role = Path(__file__).resolve().parents[2] / 'examples' / 'roles' / 'gpu_tuning'
    del real  # the node's images (and so the registry and the base) first
    return real_support.build_role_package(role, '1.0.0', 'localhost/nodewright-packages/gpu-tuning',
                                           tmp_path_factory.mktemp('role-package'))['gpu-tuning']


def _role_host(real):
    """What the role package left on the node's host: its two files and the shim calls (sysctl, restarts)."""
    info = real.cluster.info
    files = {}
    for which, name in (('sysctl.d', '90-gpu.conf'), ('containerd', 'conf.d/90-nvidia.toml')):
        path = real_node.etc_dir(info, real.name, which) / name
        files[name] = path.read_text() if path.exists() else None
    calls = [' '.join(c.split()[1:]) for c in real_node.calls(info, real.name)
             if ' sysctl ' in c or ' systemctl restart ' in c]
    return files, calls


def _role_complete(real, cr):
    node = real.node()
    entry = real.state(cr).get('gpu-tuning|1.0.0') or {}
    return ((node.metadata.labels or {}).get(f'{PREFIX}/status_{cr}') == 'complete' and not node.spec.unschedulable
            and (entry.get('stage'), entry.get('state')) == ('post-interrupt', 'complete'))


def test_the_operator_rolls_a_role_package_as_the_bridge_does_and_takes_over_its_node_with_nothing_run_again(
        real, role_package, playbooks, operators):
    # the operator, then (the host reverted) the bridge: the same files and the same interrupt on the host; then the
    # operator takes the bridge's node over and runs nothing
    results = {}
    for side in ('operator', 'bridge'):
        cr = real.create_cr({'gpu-tuning': dict(role_package)})
        before = len(_role_host(real)[1])
        try:
            if side == 'operator':
                operator = operators.start(AGENT_IMAGE=real.images['agent'])
                support.wait_until(lambda: _role_complete(real, cr), 300, f'the operator to complete {cr}')
                operator.stop()
            else:
                result = _apply(playbooks, real, cr)
                assert result.rc == 0, result.stdout[-3000:]
                assert _role_complete(real, cr)
            files, calls = _role_host(real)
            results[side] = (files, calls[before:])
            if side == 'bridge':
                recorder = support.PodRecorder(real.cluster, [real.name])
                started = time.time()
                operators.start(AGENT_IMAGE=real.images['agent'])
                helpers.holds_for(lambda: recorder.since(started) == [] and _role_host(real) == (files, calls),
                                  45, interval=1, what='nothing run again on the real node by the operator')
                recorder.close()
                assert _role_complete(real, cr) and recorder.since(started) == []
        finally:
            operators.stop_all()
            real.delete_cr(cr)
            for which in ('sysctl.d', 'containerd'):  # the host as before the next side's rollout
                for path in real_node.etc_dir(real.cluster.info, real.name, which).rglob('*'):
                    if path.is_file():
                        path.unlink()
    print(f'\nrole package: operator {results["operator"]}; bridge {results["bridge"]}')
    assert results['operator'] == results['bridge'], results
    files, calls = results['operator']
    assert files['90-gpu.conf'] == 'vm.swappiness = 1\nnet.core.rmem_max = 134217728\n'
    assert calls == ['sysctl --system', 'systemctl restart containerd'], calls
