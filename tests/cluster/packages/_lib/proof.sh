# shellcheck shell=sh
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
#
# Sourced by the step scripts of the test packages (tests/cluster/images.py copies it into each
# package's skyhook_dir, beside package.env, which it writes from the package's config.json). The
# agent runs the steps chrooted into the node's root, so this is the HOST's /bin/sh (dash on
# Debian) and GNU coreutils: POSIX sh only. The agent sets SKYHOOK_DIR (the copy directory, the
# steps' cwd) and STEP_ROOT ($SKYHOOK_DIR/skyhook_dir), and passes its container's environment
# through: SKYHOOK_ROOT_DIR (/var/lib/skyhook/<cr>), SKYHOOK_RESOURCE_ID and the CR package's env.
#
# Each run appends one line to $PROOF_FILE (<proof dir>/<cr>/<the CR's package name>.log: a CR may hold
# the same image under two names), space-separated key=value fields without spaces:
#   stage=<stage> package=<the CR's package name> image=<the image's package name> version=<the image's version>
#   time=<UTC, ns> resource=<SKYHOOK_RESOURCE_ID> boot=<kernel boot_id> pid=<pid>
#   [more fields: cm.<key>=<base64 of the ConfigMap file>, from=, to=, fix=, sleep=]
# Environment a CR package may set:
#   NODEWRIGHT_PROOF_DIR  where the proof files go (default /var/lib/nodewright-proof)
#   PROOF_FAIL            a stage name (apply, config-check, ...): that stage records its line, then exits 1

. "$STEP_ROOT/package.env"

# <cr>: the agent's SKYHOOK_ROOT_DIR is /var/lib/skyhook/<cr> (the same for every generation of the CR)
PROOF_ID=$(basename "${SKYHOOK_ROOT_DIR:-${SKYHOOK_RESOURCE_ID:-unknown}}")
# the CR's name of the package: SKYHOOK_RESOURCE_ID is <cr>-<uid>-<generation>_<package>_<version> (no '_' in a name)
PROOF_PACKAGE=$(printf '%s\n' "${SKYHOOK_RESOURCE_ID:-}" | cut -s -d_ -f2)
PROOF_PACKAGE=${PROOF_PACKAGE:-$PACKAGE_NAME}
PROOF_FILE="${NODEWRIGHT_PROOF_DIR:-/var/lib/nodewright-proof}/$PROOF_ID/$PROOF_PACKAGE.log"
# what apply and upgrade "install": the version, removed by uninstall; the checks read it
PROOF_STATE="${NODEWRIGHT_PROOF_DIR:-/var/lib/nodewright-proof}/$PROOF_ID/$PROOF_PACKAGE.installed"

proof_record() {  # proof_record <stage> [key=value ...]
    proof_stage=$1
    shift
    proof_boot=$(cat /proc/sys/kernel/random/boot_id 2> /dev/null || echo none)
    proof_line="stage=$proof_stage package=$PROOF_PACKAGE image=$PACKAGE_NAME version=$PACKAGE_VERSION"
    proof_line="$proof_line time=$(date -u +%Y-%m-%dT%H:%M:%S.%NZ)"
    proof_line="$proof_line resource=${SKYHOOK_RESOURCE_ID:-none} boot=$proof_boot pid=$$"
    for proof_field in "$@"; do
        proof_line="$proof_line $proof_field"
    done
    mkdir -p "$(dirname "$PROOF_FILE")"
    printf '%s\n' "$proof_line" >> "$PROOF_FILE"
    echo "proof: $proof_line"
    if [ "${PROOF_FAIL:-}" = "$proof_stage" ]; then
        echo "proof: $proof_stage fails because PROOF_FAIL=$PROOF_FAIL" >&2
        exit 1
    fi
}

proof_configmaps() {  # the package ConfigMap's files (the agent's $SKYHOOK_DIR/configmaps) as cm.<key>=<base64> fields
    for proof_cm in "$SKYHOOK_DIR"/configmaps/*; do
        [ -f "$proof_cm" ] || continue
        printf ' cm.%s=%s' "$(basename "$proof_cm")" "$(base64 -w0 < "$proof_cm")"
    done
}

proof_install() {  # proof_install: what apply or upgrade leaves on the node
    mkdir -p "$(dirname "$PROOF_STATE")"
    printf '%s\n' "$PACKAGE_VERSION" > "$PROOF_STATE"
}

proof_check_installed() {  # exits 1 unless apply or upgrade of this version ran
    proof_have=$(cat "$PROOF_STATE" 2> /dev/null || echo none)
    if [ "$proof_have" != "$PACKAGE_VERSION" ]; then
        echo "proof: $PROOF_PACKAGE $PACKAGE_VERSION is not installed ($PROOF_STATE: $proof_have)" >&2
        exit 1
    fi
}
