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
"$python" "$root/tests/cluster/launcher.py" up --nodes 9 --dir "$state" --kubeconfig "$state.kubeconfig" > /dev/null
dest=$("$root/tests/copy_collection.sh" "$work")
# The targets' modules read the kubeconfig; their own setup (a CR, a policy, a node's state or boot ID, a pod)
# goes to the API server with ansible.builtin.uri, so the server, its CA and the token are handed over as well.
# Each target has a node of its own: node_cordon 00, node_state 01, node_health 02, rollout_plan 03 to 07, node_drain 08.
"$python" - "$state.kubeconfig" "$dest/tests/integration/integration_config.yml" <<'PY'
import base64, os, sys, yaml
config = yaml.safe_load(open(sys.argv[1]))
cluster, user = config['clusters'][0]['cluster'], config['users'][0]['user']
ca = os.path.join(os.path.dirname(os.path.abspath(sys.argv[1])), 'integration-ca.crt')
if 'certificate-authority-data' in cluster:
    with open(ca, 'wb') as handle:
        handle.write(base64.b64decode(cluster['certificate-authority-data']))
else:
    ca = cluster['certificate-authority']
yaml.safe_dump({'nodewright_test_kubeconfig': os.path.abspath(sys.argv[1]),
                'nodewright_test_nodes': ['gpu-node-%02d' % i for i in range(9)],
                'nodewright_test_api': {'server': cluster['server'], 'token': user['token'], 'ca': ca}},
               open(sys.argv[2], 'w'))
PY
cd "$dest"
# a fresh git repo so ansible-test lists exactly these files
git init -q && git add -A && git -c user.email=ci@localhost -c user.name=ci commit -qm integration
python_version=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
ansible-test integration --local --python "$python_version" --allow-unsupported --color no "$@"
