#!/usr/bin/env bash
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
#
# ansible-test integration (tests/integration/targets) against a test cluster of its own (make integration):
# the cluster started with tests/cluster/launcher.py, the collection copied as ansible_collections/nodewright/bridge,
# its kubeconfig and node names handed to the targets in integration_config.yml, the cluster stopped at the end.
# The targets are "unsupported" to ansible-test (they need this cluster), hence --allow-unsupported.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=${NW_INTEGRATION_DIR:-$root/build/integration}
state="$work-cluster"
python=$(command -v python)
"$python" "$root/tests/cluster/launcher.py" down --dir "$state" > /dev/null 2>&1 || true
trap '"$python" "$root/tests/cluster/launcher.py" down --dir "$state" > /dev/null 2>&1 || true' EXIT
"$python" "$root/tests/cluster/launcher.py" up --nodes 2 --dir "$state" --kubeconfig "$state.kubeconfig" > /dev/null
dest=$("$root/tests/copy_collection.sh" "$work")
cat > "$dest/tests/integration/integration_config.yml" <<CONFIG
nodewright_test_kubeconfig: $state.kubeconfig
nodewright_test_nodes: [gpu-node-00, gpu-node-01]
CONFIG
cd "$dest"
# a fresh git repo so ansible-test lists exactly these files
git init -q && git add -A && git -c user.email=ci@localhost -c user.name=ci commit -qm integration
python_version=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
ansible-test integration --local --python "$python_version" --allow-unsupported --color no "$@"
