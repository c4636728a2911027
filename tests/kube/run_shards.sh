#!/usr/bin/env bash
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
#
# The cluster tests as two or three pytest processes at once, each with a test cluster of its own
# (the Makefile's `kube` target). Most of their time is spent waiting on the cluster (fake kubelet
# stages, reboots, outages, maintenance windows), so the shards overlap well even on 2 cores.
#   tests/kube/run_shards.sh FILE...   the first shard runs FILE..., the second every other file
#   KUBE_SHARD_3="FILE ..."            a third shard of its own (the real-node tests: they wait on
#                                      stage timeouts and a kubelet, and use little CPU)
#   KUBE_BACKGROUND=CMD                also runs CMD meanwhile, niced, and does not wait for it
# Each shard's output is printed when all are done; the status is 0 only if every shard passed.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
py="${KUBE_PYTHON:-.venv/bin/python}"
out="${KUBE_SHARD_DIR:-build/kube-shards}"
mkdir -p "${out}"
read -r -a third <<< "${KUBE_SHARD_3:-}"
ignores=()
for file in "$@" "${third[@]}"; do ignores+=("--ignore=${file}"); done
# apply without the budgeted strategy runs on every ansible-core of the matrix (tests/strategy/run_matrix.sh), the
# default one included: not twice
ignores+=("--ignore=tests/kube/test_apply_builtin_strategy.py")
# the cluster binaries once, before the shards start (a cold cache builds them here instead of in
# both shards at once); the alert-gate tests' Prometheus is built by the first test that needs it
# (tests/cluster/prometheus.py; build.sh's lock makes the other wait), or by KUBE_BACKGROUND
tests/cluster/build.sh > /dev/null || exit 1
# KUBE_BACKGROUND: a command to run meanwhile at the lowest CPU priority, not waited for (make test
# builds the CPython of strategy-matrix-new here: the shards leave a core mostly idle)
if [ -n "${KUBE_BACKGROUND:-}" ]; then
  echo "kube: started in the background (log ${out}/background.log): ${KUBE_BACKGROUND}"
  # shellcheck disable=SC2086 # a command line: split on purpose
  nohup nice -n 19 ${KUBE_BACKGROUND} > "${out}/background.log" 2>&1 < /dev/null &
fi
started=${SECONDS}
"${py}" -m pytest "$@" -q -m cluster -p no:cacheprovider --durations=10 > "${out}/shard-1.log" 2>&1 &
one=$!
"${py}" -m pytest tests/kube -q -m cluster -p no:cacheprovider --durations=10 "${ignores[@]}" > "${out}/shard-2.log" 2>&1 &
two=$!
shards=(1 2)
rc_three=0
if [ "${#third[@]}" -gt 0 ]; then
  "${py}" -m pytest "${third[@]}" -q -m cluster -p no:cacheprovider --durations=10 > "${out}/shard-3.log" 2>&1 &
  three=$!
  shards+=(3)
fi
wait "${one}"; rc_one=$?
echo "kube shard 1 done after $((SECONDS - started)) s (rc ${rc_one})"
wait "${two}"; rc_two=$?
echo "kube shard 2 done after $((SECONDS - started)) s (rc ${rc_two})"
if [ "${#third[@]}" -gt 0 ]; then
  wait "${three}"; rc_three=$?
  echo "kube shard 3 done after $((SECONDS - started)) s (rc ${rc_three})"
fi
for n in "${shards[@]}"; do
  echo "=== kube shard ${n} (${out}/shard-${n}.log) ==="
  cat "${out}/shard-${n}.log"
done
[ "${rc_one}" -eq 0 ] && [ "${rc_two}" -eq 0 ] && [ "${rc_three}" -eq 0 ]
