#!/usr/bin/env bash
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
#
# tests/copy_collection.sh WORK: a fresh copy of the working tree at WORK/ansible_collections/nodewright/bridge
# (the tracked and untracked-but-not-ignored files, as they are in the working tree; prints that path).
# ansible-test and ansible-lint need the collection in that layout (tests/sanity.sh, tests/lint.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$1
dest="$work/ansible_collections/nodewright/bridge"
rm -rf "$work"
mkdir -p "$dest"
(cd "$root" && git ls-files -co --exclude-standard -z) | while IFS= read -r -d '' f; do
  [ -e "$root/$f" ] || [ -L "$root/$f" ] || continue  # tracked but deleted in the working tree
  mkdir -p "$dest/$(dirname "$f")"
  cp -P "$root/$f" "$dest/$f"
done
echo "$dest"
