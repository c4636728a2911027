#!/usr/bin/env bash
# ansible-lint, production profile (.ansible-lint), on a copy of the collection installed on a
# collections path (ansible_collections/nodewright/bridge), the way Galaxy lints it on import:
# FQCNs such as nodewright.bridge.node_update resolve to this tree's plugins and roles.
set -euo pipefail
if ! command -v ansible-lint >/dev/null; then
  echo "ansible-lint not found: run it through make lint (which makes the virtualenv)" >&2
  exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
work=${NW_LINT_DIR:-$root/build/lint}
dest=$("$root/tests/copy_collection.sh" "$work")
cd "$dest"
# --offline: the collection has no dependencies to install and the schemas ship with ansible-lint
ANSIBLE_COLLECTIONS_PATH="$work" ANSIBLE_HOME="$work/ansible-home" \
  exec ansible-lint --offline --nocolor --profile production "$@"
