#!/usr/bin/env bash
# ansible-lint, production profile (.ansible-lint), on a copy of the collection installed on a
# collections path (ansible_collections/nodewright/bridge), the way Galaxy lints it on import:
# FQCNs such as nodewright.bridge.node_update resolve to this tree's plugins and roles.
set -euo pipefail
if ! command -v ansible-lint >/dev/null; then
  # a virtualenv made before ansible-lint was pinned: make venv installs only into a new one
  echo "ansible-lint not found: pip install -r requirements-test.txt (into the virtualenv)" >&2
  exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
work=${NW_LINT_DIR:-$root/build/lint}
dest="$work/ansible_collections/nodewright/bridge"
rm -rf "$work"
mkdir -p "$dest"
# tracked and untracked-but-not-ignored files, as they are in the working tree (as tests/sanity.sh)
(cd "$root" && git ls-files -co --exclude-standard -z) | while IFS= read -r -d '' f; do
  [ -e "$root/$f" ] || [ -L "$root/$f" ] || continue  # tracked but deleted in the working tree
  mkdir -p "$dest/$(dirname "$f")"
  cp -P "$root/$f" "$dest/$f"
done
cd "$dest"
# --offline: the collection has no dependencies to install and the schemas ship with ansible-lint
ANSIBLE_COLLECTIONS_PATH="$work" ANSIBLE_HOME="$work/ansible-home" \
  exec ansible-lint --offline --nocolor --profile production "$@"
