#!/usr/bin/env bash
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
#
# Builds build/molecule-venv (MOLECULE_VENV) from requirements-molecule.txt, or reuses it while its
# stamp is newer than requirements-molecule.txt and requirements-test.txt (which it includes), and
# prints its path. A lock makes a second caller wait for the build under way instead of starting
# another: make test builds it in the background (tests/build-peers.sh) for the molecule test of
# kube shard 2 (tests/kube/test_molecule.py); make molecule uses it too.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv="${MOLECULE_VENV:-$root/build/molecule-venv}"
case "$venv" in /*) ;; *) venv="$root/$venv" ;; esac
mkdir -p "$(dirname "$venv")"
exec 9> "$venv.lock"
flock 9
if ! [ "$venv/.installed" -nt "$root/requirements-molecule.txt" ] || ! [ "$venv/.installed" -nt "$root/requirements-test.txt" ]; then
  rm -rf "$venv"
  "${MOLECULE_PYTHON:-python3}" -m venv "$venv" >&2
  "$venv/bin/pip" install --quiet --upgrade pip >&2
  "$venv/bin/pip" install --quiet -r "$root/requirements-molecule.txt" >&2
  touch "$venv/.installed"
fi
echo "$venv"
