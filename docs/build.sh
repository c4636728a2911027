#!/usr/bin/env bash
# The collection's documentation tools, run on the collection as ansible-doc finds it (a
# collections path under build/ whose nodewright/bridge links to this checkout).
#   docs/build.sh lint                  the extra docs made from the guides, then antsibull-docs lint-collection-docs,
#                                       plugin and extra docs included (make docs-lint)
#   docs/build.sh html                  the HTML site in build/docs/html (make docs; needs requirements-docs.txt)
#   docs/build.sh changelog-release V   antsibull-changelog release --version V (more arguments are passed on)
#   docs/build.sh changelog-release-check   that release of galaxy.yml's version, made in a copy of the tree (make test)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

# A collections path of this run's own, removed at the end: no link back to the tree stays under
# build/ for other tools to walk into, and two runs at once do not share one.
link_collection() {
  mkdir -p "$root/build"
  collections=$(mktemp -d "$root/build/docs-collections.XXXXXX")
  trap 'rm -rf "$collections"' EXIT
  collection="$collections/ansible_collections/nodewright/bridge"
  mkdir -p "$(dirname "$collection")"
  ln -s "$root" "$collection"
  export ANSIBLE_COLLECTIONS_PATH="$collections" ANSIBLE_COLLECTIONS_SCAN_SYS_PATH=false
  # the strategy plugin's deprecation warning is ansible-core's, once per ansible-doc call
  export ANSIBLE_DEPRECATION_WARNINGS=false
}

lint() {
  # the extra docs are the guides converted (docs/docsite_rst.py): stale ones fail here, before the lint reads them
  python3 "$root/docs/docsite_rst.py" check
  # --validate-collection-refs dependent: references to ansible.builtin are checked too (the
  # collection has no dependencies; a reference to another one, kubernetes.core, is let be)
  antsibull-docs lint-collection-docs --plugin-docs --validate-collection-refs dependent "$collection"
}

# The few labels of the Ansible docsite that the generated plugin pages refer to, as a local
# intersphinx inventory: the build is offline, and an unresolved reference fails it (-W).
# A new "undefined label" warning means a line to add here.
ansible_inventory() {
  python3 - "$1" <<'EOF'
import sys, zlib
base = "https://docs.ansible.com/projects/ansible/devel/"
entries = [
    ("action_plugins", "std:label", "plugins/action.html#action-plugins", "Action plugins"),
    ("callback_plugins", "std:label", "plugins/callback.html#callback-plugins", "Callback plugins"),
    ("common_return_values", "std:label", "reference_appendices/common_return_values.html#common-return-values", "Return Values"),
    ("ansible_collections.kubernetes.core.k8s_drain_module", "std:label",
     "collections/kubernetes/core/k8s_drain_module.html#ansible-collections-kubernetes-core-k8s-drain-module",
     "kubernetes.core.k8s_drain module"),
    ("ansible_configuration_settings", "std:label",
     "reference_appendices/config.html#ansible-configuration-settings", "Ansible Configuration Settings"),
]
# ansible.builtin's modules the plugin docs name (role_package maps service, systemd_service, reboot and template)
for module in ("copy", "reboot", "service", "systemd_service", "template"):
    entries.append(("ansible_collections.ansible.builtin.%s_module" % module, "std:label",
                    "collections/ansible/builtin/%s_module.html#ansible-collections-ansible-builtin-%s-module"
                    % (module, module.replace("_", "-")), "ansible.builtin.%s module" % module))
for var in ("ANSIBLE_CACHE_PLUGIN", "ANSIBLE_CACHE_PLUGIN_CONNECTION", "ANSIBLE_CACHE_PLUGIN_PREFIX",
            "ANSIBLE_CACHE_PLUGIN_TIMEOUT"):
    entries.append((var, "std:envvar", "reference_appendices/config.html#envvar-" + var, "-"))
body = "".join("%s %s -1 %s %s\n" % e for e in entries).encode()
header = b"# Sphinx inventory version 2\n# Project: Ansible\n# Version: devel\n" \
         b"# The remainder of this file is compressed using zlib.\n"
with open(sys.argv[1], "wb") as f:
    f.write(header + zlib.compress(body))
print(base)
EOF
}

# Every plugin and role ansible-doc knows has its page, and every guide (docs/*.md) its page among the extra docs.
check_site() {
  local out=$1
  ansible-doc --metadata-dump --no-fail-on-errors nodewright.bridge | python3 -c '
import json, os, sys
out, docs = sys.argv[1], sys.argv[2]
found = json.load(sys.stdin)["all"]
pages = ["%s_%s.html" % (name.split(".")[-1], kind)
         for kind, names in found.items() if kind != "keyword" for name in names]
pages += ["docsite/%s.html" % f[:-3] for f in os.listdir(docs) if f.endswith(".md")]
missing = [p for p in pages if not os.path.isfile(os.path.join(out, p))]
if missing:
    sys.exit("missing pages in %s: %s" % (out, ", ".join(sorted(missing))))
print("%d pages checked: every plugin, role and guide" % len(pages))
' "$out" "$root/docs"
}

html() {
  local site="$root/build/docs/site" out="$root/build/docs/html"
  rm -rf "$site" "$out"
  mkdir -p "$site/rst"
  antsibull-docs sphinx-init --use-current --squash-hierarchy --dest-dir "$site" \
    --project nodewright.bridge --copyright "nodewright.bridge contributors" \
    --title "nodewright.bridge" nodewright.bridge > /dev/null
  chmod og-w "$site/rst"  # antsibull-docs wants the directory writable by itself only
  antsibull-docs --config-file "$site/antsibull-docs.cfg" collection --use-current --squash-hierarchy \
    --fail-on-error --cleanup everything --dest-dir "$site/rst" nodewright.bridge
  # antsibull-docs title-cases the index's heading (Nodewright.Bridge); the collection's name is lower case
  sed -i 's/^Nodewright\.Bridge$/nodewright.bridge/' "$site/rst/index.rst"
  local inventory_url
  inventory_url=$(ansible_inventory "$site/ansible_devel.inv")
  cat >> "$site/conf.py" <<EOF

# added by docs/build.sh
intersphinx_mapping = {'ansible_devel': ('$inventory_url', '$site/ansible_devel.inv')}
# the guides' unlabelled code blocks (shell sessions, JSON) fall back to plain text
suppress_warnings = ['misc.highlighting_failure']
EOF
  sphinx-build -q -b html -c "$site" -W --keep-going "$site/rst" "$out"
  check_site "$out"
  echo "$out/index.html"
}

cmd=${1:-}
case "$cmd" in
  lint) link_collection; lint ;;
  html) link_collection; html ;;
  changelog-release)
    shift; [ $# -ge 1 ] || { echo "usage: $0 changelog-release VERSION [antsibull-changelog options]" >&2; exit 2; }
    version=$1; shift
    link_collection
    cd "$root" && antsibull-changelog release --reload-plugins --version "$version" "$@" ;;
  changelog-release-check)
    # the release galaxy.yml names, made from a copy of the tree (the tree keeps its fragments): what
    # `changelog-release` would write, checked to name that version and to have taken in every fragment
    version=$(python3 -c 'import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))["version"])' "$root/galaxy.yml")
    mkdir -p "$root/build"
    copy=$(mktemp -d "$root/build/changelog-release.XXXXXX")
    trap 'rm -rf "$copy"' EXIT
    # the tree's files as git sees them (tracked, and new ones not ignored); a listed file deleted since is skipped
    (cd "$root" && git ls-files -co --exclude-standard -z | while IFS= read -r -d '' file; do
       if [ -e "$file" ]; then cp --parents "$file" "$copy"; fi
     done)
    collections=$(mktemp -d "$copy/.collections.XXXXXX")
    mkdir -p "$collections/ansible_collections/nodewright"
    ln -s "$copy" "$collections/ansible_collections/nodewright/bridge"
    (cd "$copy" && ANSIBLE_COLLECTIONS_PATH="$collections" ANSIBLE_COLLECTIONS_SCAN_SYS_PATH=false \
       ANSIBLE_DEPRECATION_WARNINGS=false antsibull-changelog release --reload-plugins --version "$version" --date 2000-01-01)
    grep -q "^v$version\$" "$copy/CHANGELOG.rst" || { echo "CHANGELOG.rst has no v$version section" >&2; exit 1; }
    left=$(find "$copy/changelogs/fragments" -name '*.yml' | wc -l)
    [ "$left" -eq 0 ] || { echo "$left fragment(s) not taken into v$version" >&2; exit 1; }
    echo "antsibull-changelog release $version: $(grep -c '^- ' "$copy/CHANGELOG.rst") entries in CHANGELOG.rst" ;;
  *) echo "usage: $0 lint | html | changelog-release VERSION [options] | changelog-release-check" >&2; exit 2 ;;
esac
