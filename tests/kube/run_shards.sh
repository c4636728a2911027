#!/usr/bin/env bash
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
#
# The cluster tests as several pytest processes at once, each with a test cluster of its own (the
# Makefile's `kube` target). Most of their time is spent waiting on the cluster (fake kubelet
# stages, reboots, outages, maintenance windows), so the shards overlap well even on 2 cores.
#   tests/kube/run_shards.sh FILE...   the first shard runs FILE..., the last one every file no shard names
#   KUBE_SHARDS="FILE ...;FILE ..."    more shards of their own, one per ';'-separated list (the real-node
#                                      tests: they wait on stage timeouts and a kubelet, and use little CPU)
#   KUBE_BACKGROUND=CMD                also runs CMD meanwhile, niced, and does not wait for it
# A shard may name other test folders too: make test runs tests/interop (the real operator, a cluster of its own,
# mostly waiting on it) as a shard, hence the interop marker beside the cluster one.
# Each shard's output is printed when all are done, and its JUnit XML (every test's time, what a new
# split is worked out from) is kept beside its log; the status is 0 only if every shard passed.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
py="${KUBE_PYTHON:-.venv/bin/python}"
out="${KUBE_SHARD_DIR:-build/kube-shards}"
mkdir -p "${out}"
# shard n's files, n = 1 .. count - 1; the last shard is every other file
shards=("$*")
IFS=';' read -r -a named <<< "${KUBE_SHARDS:-}"
for files in "${named[@]}"; do
  [ -n "${files// /}" ] && shards+=("${files}")
done
ignores=()
for files in "${shards[@]}"; do
  read -r -a list <<< "${files}"
  for file in "${list[@]}"; do ignores+=("--ignore=${file}"); done
done
# the cluster binaries once, before the shards start (a cold cache builds them here instead of in
# every shard at once); the alert-gate tests' Prometheus is built by the first test that needs it
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
pids=()
run_shard() {  # run_shard <n> <pytest arguments>...
  local n=$1
  shift
  "${py}" -m pytest "$@" -q -m 'cluster or interop' -p no:cacheprovider --durations=10 --junitxml="${out}/shard-${n}.xml" \
    > "${out}/shard-${n}.log" 2>&1 &
  pids+=($!)
}
for i in "${!shards[@]}"; do
  read -r -a list <<< "${shards[$i]}"
  run_shard $((i + 1)) "${list[@]}"
done
last=$((${#shards[@]} + 1))
run_shard "${last}" tests/kube "${ignores[@]}"
status=0
for i in "${!pids[@]}"; do
  wait "${pids[$i]}"
  rc=$?
  echo "kube shard $((i + 1)) done after $((SECONDS - started)) s (rc ${rc})"
  [ "${rc}" -eq 0 ] || status=1
done
for n in $(seq 1 "${last}"); do
  echo "=== kube shard ${n} (${out}/shard-${n}.log) ==="
  cat "${out}/shard-${n}.log"
done
exit "${status}"
