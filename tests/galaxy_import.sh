#!/usr/bin/env bash
# galaxy-importer (pinned in requirements-test.txt) on the tarball `ansible-galaxy collection build`
# makes, run as Galaxy runs it on an upload: python -m galaxy_importer.main <tarball>, with
# ansible-doc (the plugins' docs), ansible-lint (the collection) and flake8 (the Python files) on,
# and Automation Hub's required-tags check. Fails on a non-zero exit, any ERROR line, a tool the
# importer could not find, or a log that does not end with the importer's success line.
# The log, the warnings, the config and the importer's JSON result are kept in
# build/artifacts/galaxy-import/ (CI keeps build/artifacts).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work="$root/build/galaxy-import"
art="$root/build/artifacts/galaxy-import"
rm -rf "$work" "$art" && mkdir -p "$work/dist" "$work/ansible-tmp" "$work/tmp" "$art"
for tool in ansible-galaxy ansible-doc ansible-lint flake8; do
  command -v "$tool" > /dev/null || { echo "FAIL: $tool is not on PATH (make venv)" >&2; exit 1; }
done
ansible-galaxy collection build "$root" --output-path "$work/dist" --force > /dev/null
tarball=$(ls "$work"/dist/nodewright-bridge-*.tar.gz)

# The keys are galaxy_importer/config.py's (Config.DEFAULTS); unset ones keep its defaults
# (check_changelog on, offline_ansible_lint on, run_ansible_test off: that one needs a container).
cat > "$art/galaxy-importer.cfg" <<EOF
[galaxy-importer]
log_level_main = INFO
run_ansible_doc = True
run_ansible_lint = True
run_flake8 = True
check_required_tags = True
ansible_local_tmp = $work/ansible-tmp
tmp_root_dir = $work/tmp
EOF

log="$art/import.log"
start=$(date +%s)
set +e
# from the artifacts directory: the importer writes importer_result.json to its working directory
(cd "$art" && GALAXY_IMPORTER_CONFIG="$art/galaxy-importer.cfg" python -m galaxy_importer.main "$tarball") > "$log" 2>&1
rc=$?
set -e
echo "galaxy-importer on $(basename "$tarball"): exit $rc in $(( $(date +%s) - start )) s, log in ${log#"$root"/}"

fail() { echo "FAIL: $*" >&2; grep -E '^(ERROR|CRITICAL)' "$log" >&2 || tail -20 "$log" >&2; exit 1; }
[ "$rc" -eq 0 ] || fail "galaxy-importer exited $rc"
! grep -qE '^(ERROR|CRITICAL)' "$log" || fail "galaxy-importer reported errors"
! grep -q 'not found, skipping' "$log" || fail "galaxy-importer skipped a check: $(grep 'not found, skipping' "$log")"
for step in 'Getting doc strings via ansible-doc' 'Linting collection via ansible-lint' '...ansible-lint run complete'; do
  grep -qF -- "$step" "$log" || fail "the log has no '$step': the importer did not run that step"
done
[ "$(tail -n 1 "$log")" = "Importer processing completed successfully" ] || fail "the log does not end with the importer's success line"
[ -s "$art/importer_result.json" ] || fail "no importer_result.json"

# What Galaxy shows from the result: the plugins' docs (from ansible-doc), each role's README and the guides.
python3 - "$art/importer_result.json" "$root/docs" <<'EOF'
import json
import os
import sys

blob = json.load(open(sys.argv[1]))['docs_blob']
documented = ('module', 'inventory', 'strategy', 'callback', 'filter')
missing = ['%s %s: no doc_strings' % (c['content_type'], c['content_name']) for c in blob['contents']
           if c['content_type'] in documented and not c.get('doc_strings')]
roles = [c for c in blob['contents'] if c['content_type'] == 'role']
missing += ['role %s: no readme' % c['content_name'] for c in roles if not c.get('readme_html')]
if not roles:
    missing.append('no roles in the result')
if not blob.get('collection_readme', {}).get('html'):
    missing.append('no collection README')
# the guides: Galaxy and Automation Hub show every Markdown file at the top of docs/ (docs/dev/ is not shipped)
guides = sorted(f for f in os.listdir(sys.argv[2]) if f.endswith('.md'))
shown = sorted(d['name'] for d in blob.get('documentation_files') or [] if d.get('html'))
if shown != guides:
    missing.append('documentation_files %s, not the guides %s' % (shown, guides))
if missing:
    sys.exit('FAIL: importer_result.json: ' + '; '.join(missing))
print('ok: importer_result.json has the docs of %d plugins and modules, the READMEs of %d roles, %d guides'
      % (sum(1 for c in blob['contents'] if c['content_type'] in documented), len(roles), len(shown)))
EOF

grep -E '^WARNING' "$log" > "$art/warnings.txt" || true
echo "ok: galaxy-importer passed, 0 errors, $(wc -l < "$art/warnings.txt") warnings (${art#"$root"/}/warnings.txt):"
sed 's/^/  /' "$art/warnings.txt"
