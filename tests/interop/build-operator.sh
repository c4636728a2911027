#!/usr/bin/env bash
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
#
# The NodeWright operator for the interop tests: runs ../shared/upstream/build-operator.sh (beside
# the checkout, or at the workplace's fixed path for a clone made elsewhere, as CI's) under a lock,
# and prints the binary's path. That script builds into <cache>/nodewright-operator-<commit>/ through
# one temporary file, so two builds at once (make test's background build, tests/build-peers.sh, and
# the interop fixture) must not overlap: the second waits here and then reuses the first's binary.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
script=
for candidate in "$here/../../../shared/upstream/build-operator.sh" /work/shared/upstream/build-operator.sh; do
    if [ -x "$candidate" ]; then script=$candidate; break; fi
done
if [ -z "$script" ]; then
    echo "no operator: neither ../shared/upstream/build-operator.sh nor /work/shared/upstream/build-operator.sh exists" \
         "(set NODEWRIGHT_OPERATOR to a built manager)" >&2
    exit 1
fi
cache=${XDG_CACHE_HOME:-$HOME/.cache}/nodewright-bridge  # build-operator.sh's default cache root
mkdir -p "$cache"
exec 9>"$cache/.build-operator.lock"
flock 9
"$script"
