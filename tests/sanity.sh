#!/usr/bin/env bash
# Run ansible-test sanity on a copy of the collection laid out as ansible_collections/nodewright/bridge.
# ansible-test needs that layout; the repository root is the collection root.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# NW_SANITY_DIR: where the copy goes (runs on several ansible-core versions at once need one each)
work=${NW_SANITY_DIR:-$root/build/sanity}
dest=$("$root/tests/copy_collection.sh" "$work")
# ansible-test bootstraps pip in its virtualenvs with a get-pip.py from a host we cannot reach;
# put our stand-in (ensurepip + PyPI) where it looks for a cached copy.
pip_version=$(python -c 'import ansible_test._internal.python_requirements as r, inspect, re; print(re.search(r"pip=.([0-9.]+).", inspect.getsource(r)).group(1))')
mkdir -p ~/.ansible/test/cache
cp "$root/tests/pip_bootstrap.py" ~/.ansible/test/cache/"get_pip_${pip_version//./_}.py"
echo "${PIP_CERT:-${SSL_CERT_FILE:-}}" > ~/.ansible/test/cache/pip-cert-bundle
cd "$dest"
# a fresh git repo so ansible-test lists exactly these files
git init -q && git add -A && git -c user.email=ci@localhost -c user.name=ci commit -qm sanity
python_version=$(python -c 'import sys; print("%d.%d" % sys.version_info[:2])')
exec ansible-test sanity --requirements --python "$python_version" --color no "$@"
