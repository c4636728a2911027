#!/usr/bin/env bash
# Build the collection tarball, install it into an empty collections path and run the
# rollout_plan module from the installed copy (not from the checkout).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/build/galaxy"
rm -rf "$out" && mkdir -p "$out/collections"
ansible-galaxy collection build "$root" --output-path "$out" --force
tarball=$(ls "$out"/nodewright-bridge-*.tar.gz)
echo "built $tarball ($(du -h "$tarball" | cut -f1)): $(tar tzf "$tarball" | wc -l) files"
if tar tzf "$tarball" | grep -E '^(tests/(unit|cluster|kube|bench)|\.ci|\.venv|build)/' ; then
  echo "FAIL: test or build files leaked into the tarball" >&2; exit 1
fi
ansible-galaxy collection install "$tarball" -p "$out/collections" --force
export ANSIBLE_COLLECTIONS_PATH="$out/collections" ANSIBLE_COLLECTIONS_SCAN_SYS_PATH=false
export ANSIBLE_DEPRECATION_WARNINGS=false ANSIBLE_LOCALHOST_WARNING=false ANSIBLE_INVENTORY_UNPARSED_WARNING=false
cd "$out"   # away from the checkout, so only the installed copy can be found
ANSIBLE_NOCOLOR=1 ansible-doc nodewright.bridge.rollout_plan > "$out/rollout_plan.doc.txt"
grep -q "Reads a NodeWright (or Skyhook) custom resource" "$out/rollout_plan.doc.txt"
fixtures="$root/tests/unit/fixtures"
check() {  # check <expected batch_sizes json> <module args>
  local expected=$1; shift
  local got
  got=$(ansible localhost -o -m nodewright.bridge.rollout_plan -a "$*" | sed 's/^[^{]*//' |
        python3 -c 'import json,sys; print(json.dumps([c["batch_sizes"] for c in json.load(sys.stdin)["compartments"] if c["batch_sizes"]]))')
  if [ "$got" != "$expected" ]; then echo "FAIL: $* -> $got, expected $expected" >&2; exit 1; fi
  echo "ok: $* -> $got"
}
check '[[3, 3, 3, 1]]' "cr=$fixtures/budget33.yaml nodes=$fixtures/nodes10.yaml"
check '[[1, 2, 3, 4]]' "cr=$fixtures/linear4.json nodes=$fixtures/nodes10.yaml"
# bad input: non-zero exit and every problem named
if ansible localhost -o -m nodewright.bridge.rollout_plan -a "cr=$fixtures/invalid.yaml nodes=$fixtures/nodes10.yaml" > "$out/invalid.txt"; then
  echo "FAIL: an invalid CR did not fail" >&2; exit 1
fi
grep -q "spec.packages.tuning.interrupt.type: 'shutdown' is not one of" "$out/invalid.txt"
grep -q "spec.packages.Bad_Name: package name" "$out/invalid.txt"
echo "ok: invalid CR fails with field paths"
