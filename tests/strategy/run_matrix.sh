#!/usr/bin/env bash
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
#
# Run the strategy tests (tests/strategy, the sliding-window unit tests, apply without the strategy) on every
# ansible-core minor version the machine's Python can run, each in its own virtualenv
# <venv dir>/.venv-core<X.Y> (created on first use, reused afterwards).
#
# Environment:
#   PYTHON              interpreter for the virtualenvs (default: python3)
#   NW_CORE_VERSIONS    space-separated minor versions (default: all the interpreter supports)
#   NW_MATRIX_VENV_DIR  where the virtualenvs live (default: build/strategy-venvs, git-ignored)
#   NW_MATRIX_JOBS      versions tested at the same time (default: 2)
#   PYTEST_ARGS         extra pytest arguments
#   NW_MATRIX_SANITY    1: also run ansible-test sanity (tests/sanity.sh) with each version; last: with the last
#                       (the newest) only
#   NW_MATRIX_FULL      the versions that run every test ('newest' allowed; default or 'all': every one); the others run
#                       the subset below: what differs between ansible-core releases is the internals the strategy
#                       reaches (test_core_internals_present) and the phase machinery on top of them. A full run is
#                       about 6 min of a 2-core machine (148 tests, most of them an ansible-playbook run each).
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
python=${PYTHON:-python3}
venv_dir=${NW_MATRIX_VENV_DIR:-$root/build/strategy-venvs}
jobs=${NW_MATRIX_JOBS:-2}
# and apply without the budgeted strategy against a cluster of its own (the cluster binaries make kube built; each
# version starts one, about 5 s): the path an ansible-core that drops third-party strategies takes
tests=(tests/strategy tests/unit/plugins/module_utils/test_rollout_scheduler_sliding.py tests/kube/test_apply_builtin_strategy.py)
subset=(tests/strategy/test_core_internals_present.py tests/strategy/test_budgeted_phases.py
        tests/unit/plugins/module_utils/test_rollout_scheduler_sliding.py)

py_version=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
# controller Python versions per ansible-core release (its Requires-Python)
supported() {
    case "$1" in
        2.16|2.17) [[ "$py_version" =~ ^3\.(10|11|12)$ ]] ;;
        2.18|2.19) [[ "$py_version" =~ ^3\.(11|12|13)$ ]] ;;
        2.20|2.21) [[ "$py_version" =~ ^3\.(12|13|14)$ ]] ;;
        *) return 0 ;;
    esac
}
newest() {
    local version
    version=$("$python" -m pip index versions ansible-core 2>/dev/null | sed -n 's/^ansible-core (\([0-9]*\.[0-9]*\).*/\1/p')
    if [[ -z "$version" ]]; then
        echo "cannot ask PyPI for the newest ansible-core" >&2
        exit 1
    fi
    echo "$version"
}
if [[ -n "${NW_CORE_VERSIONS:-}" ]]; then
    read -r -a requested <<<"$NW_CORE_VERSIONS"
    versions=()
    for version in "${requested[@]}"; do
        if [[ "$version" == newest ]]; then
            # the newest minor version PyPI serves for this interpreter (added when it is not listed already)
            version=$(newest)
            echo "newest ansible-core on PyPI for Python $py_version: $version"
            [[ " ${versions[*]} " == *" $version "* ]] && continue
        fi
        versions+=("$version")
    done
else
    versions=()
    for version in 2.16 2.17 2.18 2.19 2.20 2.21; do
        if supported "$version"; then
            versions+=("$version")
        else
            echo "skip ansible-core $version: not supported on Python $py_version"
        fi
    done
fi

# the test tools, pinned like the rest of the test suite when requirements-test.txt pins them
full=()
if [[ -n "${NW_MATRIX_FULL:-}" && "${NW_MATRIX_FULL}" != all ]]; then
    read -r -a named <<<"$NW_MATRIX_FULL"
    for version in "${named[@]}"; do
        [[ "$version" == newest ]] && version=$(newest)
        full+=("$version")
    done
else
    full=("${versions[@]}")
fi

pins=()
# kubernetes: cluster tasks run in the controller's process only where the client imports
for package in pytest PyYAML ansible-runner kubernetes; do
    pin=$(grep -i -E "^${package}==" "$root/requirements-test.txt" 2>/dev/null || true)
    pins+=("${pin:-$package}")
done

mkdir -p "$venv_dir"

prepare() {
    local version=$1 venv="$venv_dir/.venv-core$1"
    if [[ -x "$venv/bin/python" ]] && "$venv/bin/python" -c "import ansible, ansible_runner, kubernetes, pytest, yaml, sys; sys.exit(not ansible.__version__.startswith('$version.'))" 2>/dev/null; then
        return 0
    fi
    rm -rf "$venv"
    "$python" -m venv "$venv"
    "$venv/bin/pip" install --quiet --upgrade pip
    "$venv/bin/pip" install --quiet "ansible-core==$version.*" "${pins[@]}"
}

run_one() {
    local version=$1 log="$venv_dir/pytest-core$1.log" started rc=0
    started=$(date +%s)
    if ! prepare "$version" >"$log" 2>&1; then
        echo "ansible-core $version: virtualenv setup FAILED (see $log)"
        return 1
    fi
    local run=("${subset[@]}") what=subset
    if [[ " ${full[*]} " == *" $version "* ]]; then
        run=("${tests[@]}")
        what='every test'
    fi
    # shellcheck disable=SC2086  # PYTEST_ARGS is a list of words
    (cd "$root" && "$venv_dir/.venv-core$version/bin/python" -m pytest -q -p no:cacheprovider ${PYTEST_ARGS:-} "${run[@]}") >>"$log" 2>&1 || rc=$?
    echo "ansible-core $("$venv_dir/.venv-core$version/bin/python" -c 'import ansible; print(ansible.__version__)') ($what): $(tail -n 1 "$log") [$(($(date +%s) - started))s, log $log]"
    return $rc
}

sanity_one() {
    # ansible-test sanity of one ansible-core on this Python, on a copy of its own; one at a time
    # (ansible-test's virtualenvs under ~/.ansible/test are shared between versions)
    local version=$1 log="$venv_dir/sanity-core$1.log" started rc=0 skip=() requirements test_name
    started=$(date +%s)
    # a sanity test whose pinned requirements are not all on a package registry (ansible-core 2.22's pylint takes dill
    # from a GitHub archive) cannot be installed here: skipped, and said so
    for requirements in "$venv_dir/.venv-core$version"/lib/python3*/site-packages/ansible_test/_data/requirements/sanity.*.txt; do
        [[ -e "$requirements" ]] || continue
        if grep -q ' @ https\?://' "$requirements"; then
            test_name=$(basename "$requirements" .txt)
            test_name=${test_name#sanity.}
            echo "ansible-core $version: ansible-test sanity skips $test_name: $(grep ' @ http' "$requirements" | head -n 1 | cut -d'#' -f1) is not on a package registry"
            skip+=(--skip-test "$test_name")
        fi
    done
    PATH="$venv_dir/.venv-core$version/bin:$PATH" NW_SANITY_DIR="$venv_dir/sanity-core$version" \
        "$root/tests/sanity.sh" "${skip[@]}" >"$log" 2>&1 || rc=$?
    if [[ $rc == 0 ]]; then
        echo "ansible-core $version: ansible-test sanity passed [$(($(date +%s) - started))s, log $log]"
    else
        echo "ansible-core $version: ansible-test sanity FAILED [$(($(date +%s) - started))s, log $log]"
        grep -E '^ERROR' "$log" | head -n 20
    fi
    return $rc
}

started=$(date +%s)
pids=()
for version in "${versions[@]}"; do
    while (($(jobs -rp | wc -l) >= jobs)); do
        sleep 1
    done
    run_one "$version" &
    pids+=($!)
done
failed=0
for pid in "${pids[@]}"; do
    wait "$pid" || failed=1
done
if [[ "${NW_MATRIX_SANITY:-0}" == 1 ]]; then
    for version in "${versions[@]}"; do
        sanity_one "$version" || failed=1
    done
elif [[ "${NW_MATRIX_SANITY:-0}" == last ]]; then
    sanity_one "${versions[-1]}" || failed=1
fi
echo "strategy matrix: ${#versions[@]} ansible-core versions in $(($(date +%s) - started))s"
exit $failed
