#!/usr/bin/env bash
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
#
# The two test peers of the upstream e2e scenarios (tests/scenarios), built once and cached under
# ${XDG_CACHE_HOME:-$HOME/.cache}/nodewright-bridge/, keyed by version / commit:
#   cli        kubectl-skyhook-<commit>/kubectl-skyhook   the kubectl plugin, from the operator snapshot
#                                                         (../shared/upstream, vendored: builds offline)
#   chainsaw   chainsaw-<version>/chainsaw                github.com/kyverno/chainsaw from the Go module proxy
# usage: build-peers.sh [cli|chainsaw]...   (default both); prints one path per peer, in that order.
# Each build takes a lock of its own (flock), so make test's background build (tests/build-peers.sh)
# and the harness never build the same peer twice: the second waits and reuses the first's binary.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
CHAINSAW_VERSION=${CHAINSAW_VERSION:-v0.2.12}
# chainsaw v0.2.12 does not build with Go >= 1.25 (its testing.MainStart deps lack ModulePath): the
# go command fetches this toolchain (the module golang.org/toolchain) from the module proxy for it.
CHAINSAW_GOTOOLCHAIN=${CHAINSAW_GOTOOLCHAIN:-go1.24.0}
OPERATOR_COMMIT=71ca22b
cache=${XDG_CACHE_HOME:-$HOME/.cache}/nodewright-bridge
mkdir -p "$cache"

upstream_dir() {
    local candidate
    for candidate in "$here/../../../shared/upstream" /work/shared/upstream; do
        if [ -f "$candidate/nodewright-operator-$OPERATOR_COMMIT.tar.xz" ]; then
            (cd "$candidate" && pwd); return 0
        fi
    done
    echo "no operator snapshot: neither ../shared/upstream/ nor /work/shared/upstream/ holds" \
         "nodewright-operator-$OPERATOR_COMMIT.tar.xz" >&2
    return 1
}

build_cli() {
    local out="$cache/kubectl-skyhook-$OPERATOR_COMMIT"
    if [ ! -x "$out/kubectl-skyhook" ]; then
        local src work
        src=$(upstream_dir)
        work=$(mktemp -d)
        # shellcheck disable=SC2064
        trap "rm -rf '$work'" RETURN
        tar -xJf "$src/nodewright-operator-$OPERATOR_COMMIT.tar.xz" -C "$work" operator
        mkdir -p "$out"
        (cd "$work/operator" && GOFLAGS=-mod=vendor go build -trimpath -o "$out/kubectl-skyhook.tmp" ./cmd/cli) >&2
        mv "$out/kubectl-skyhook.tmp" "$out/kubectl-skyhook"
    fi
    echo "$out/kubectl-skyhook"
}

build_chainsaw() {
    local out="$cache/chainsaw-$CHAINSAW_VERSION"
    if [ ! -x "$out/chainsaw" ]; then
        local work
        work=$(mktemp -d)
        # shellcheck disable=SC2064
        trap "rm -rf '$work'" RETURN
        # go install into a temporary GOBIN, then one rename: a half-written binary is never cached
        (cd "$work" && GOTOOLCHAIN="$CHAINSAW_GOTOOLCHAIN" GOBIN="$work/bin" GOFLAGS=-mod=mod GO111MODULE=on go install "github.com/kyverno/chainsaw@$CHAINSAW_VERSION") >&2
        mkdir -p "$out"
        mv "$work/bin/chainsaw" "$out/chainsaw"
    fi
    echo "$out/chainsaw"
}

locked() {
    local name=$1
    (
        exec 9>"$cache/.build-$name.lock"
        flock 9
        "build_$name"
    )
}

[ $# -gt 0 ] || set -- cli chainsaw
for peer in "$@"; do
    case "$peer" in
        cli|chainsaw) locked "$peer" ;;
        *) echo "usage: $0 [cli|chainsaw]..." >&2; exit 2 ;;
    esac
done
