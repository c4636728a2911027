#!/usr/bin/env bash
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
#
# Builds (or finds in the cache) the peers that make test needs during and after its cluster
# tests, one after the other: Prometheus (the alert-gate tests, several minutes into the shards), the Pushgateway
# (the metrics tests),
# the molecule venv (tests/kube/test_molecule.py, in shard 2), the EE (the AWX jobs, make ee), the real nodes' images,
# the NodeWright operator (interop) and CPython 3.13 (strategy-matrix-new). make test runs it
# niced in the background while the cluster tests mostly wait on their clusters; each build takes
# a lock, so the step that needs one waits for it, never builds twice.
set -euo pipefail
cd "$(dirname "$0")/.."
tests/cluster/build.sh prometheus
tests/cluster/build.sh pushgateway > /dev/null
# a failed venv build stops nothing here: the molecule test builds it again and shows why
tests/molecule_venv.sh || echo 'build-peers: the molecule venv failed to build' >&2
# the execution environment (tests/ee/ee_build.py: its base from debootstrap, then ansible-builder), for the AWX jobs
# of kube shard 1 (tests/kube/test_awx_jobs.py, whose fixture waits for this build's lock, or builds it itself)
.venv/bin/python tests/ee/ee_build.py > /dev/null || echo 'build-peers: the EE failed to build' >&2
# the real test nodes' images (tests/cluster/images.py: the NodeWright agent from upstream's source, the pause, the
# test packages) on the EE's base, pushed to the local registry it starts (127.0.0.1:80), before the tests that run
# real nodes pull them; a failure stops nothing here: those tests build them again and show why
.venv/bin/python tests/cluster/images.py ensure > /dev/null || echo 'build-peers: the real-node images failed to build' >&2
# the real nodes' kubelet (tests/cluster/real_node.py), from the control plane's module: about a minute now
tests/cluster/build.sh kubelet > /dev/null || echo 'build-peers: the kubelet failed to build' >&2
tests/interop/build-operator.sh
tests/python/build-python.sh
