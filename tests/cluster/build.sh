#!/usr/bin/env bash
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
#
# Build (or reuse) the test control plane binaries:
#   ${CACHE}/k8s-${K8S_VERSION}/k8s    multi-call: etcd, kube-apiserver, kube-controller-manager, kube-scheduler
#   ${CACHE}/kwok-${KWOK_VERSION}/kwok
#   ${CACHE}/prometheus-${PROMETHEUS_VERSION}/prometheus   only with the argument `prometheus`
#   ${CACHE}/pushgateway-${PUSHGATEWAY_VERSION}/pushgateway   only with the argument `pushgateway`
#   ${CACHE}/k8s-${K8S_VERSION}/kubelet   only with the argument `kubelet`
# Usage: build.sh             the control plane (k8s, kwok, kwok's stock stages)
#        build.sh prometheus  Prometheus only (the alert gate tests build it on first use)
#        build.sh pushgateway The Pushgateway only (the metrics tests build it on first use; under a minute)
#        build.sh kubelet     the real nodes' kubelet only (tests/cluster/real_node.py)
# CACHE defaults to ~/.cache/nodewright-bridge (override: NODEWRIGHT_CACHE_DIR).
# The outputs are keyed by version only: once a binary exists nothing is rebuilt
# until versions.env changes (or FORCE=1 is set), so a cold build is paid once per machine.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# versions.env is plain KEY=VALUE (launcher.py parses it too); read, not sourced.
K8S_VERSION="$(sed -n 's/^K8S_VERSION=//p' "${here}/versions.env")"
KWOK_VERSION="$(sed -n 's/^KWOK_VERSION=//p' "${here}/versions.env")"
: "${K8S_VERSION:?missing in versions.env}" "${KWOK_VERSION:?missing in versions.env}"
PROMETHEUS_VERSION="$(sed -n 's/^PROMETHEUS_VERSION=//p' "${here}/versions.env")"
PUSHGATEWAY_VERSION="$(sed -n 's/^PUSHGATEWAY_VERSION=//p' "${here}/versions.env")"
cache="${NODEWRIGHT_CACHE_DIR:-${HOME}/.cache/nodewright-bridge}"
k8s_out="${cache}/k8s-${K8S_VERSION}/k8s"
kubelet_out="${cache}/k8s-${K8S_VERSION}/kubelet"
kwok_out="${cache}/kwok-${KWOK_VERSION}/kwok"
prometheus_out="${cache}/prometheus-${PROMETHEUS_VERSION}/prometheus"
pushgateway_out="${cache}/pushgateway-${PUSHGATEWAY_VERSION}/pushgateway"

# Flags as upstream's hack/lib/golang.sh uses for release binaries: static,
# no debug info, SELinux support, no test-only code, no grpc tracing.
# -buildvcs=false: the binaries come from module versions; the state of this
# repository's checkout must not end up in them.
export CGO_ENABLED=0
tags="selinux,notest,grpcnotrace"

log() { echo "build.sh: $*" >&2; }

# Install atomically (build to a temp name, then rename) so that a killed
# build never leaves a half-written binary that would be "reused".
# The -ldflags of a Kubernetes binary: its version, as `kubectl version` and the node's kubeletVersion show it.
version_ldflags() {
  local mod="${here}/k8s"
  if ! grep -q "^	k8s.io/kubernetes ${K8S_VERSION}\$" "${mod}/go.mod"; then
    log "k8s/go.mod does not require k8s.io/kubernetes ${K8S_VERSION}; run tests/cluster/k8s/gen-replaces.sh"
    exit 1
  fi
  local major="${K8S_VERSION#v}"; major="${major%%.*}"
  local minor="${K8S_VERSION#v*.}"; minor="${minor%%.*}"
  # The module proxy serves no VCS data, so the commit is not known; the
  # build date is the release's publication time from the proxy, which keeps
  # the build reproducible.
  local date
  date="$(cd "${mod}" && go mod download -json "k8s.io/kubernetes@${K8S_VERSION}" \
    | python3 -c 'import json,sys; print(json.load(open(json.load(sys.stdin)["Info"]))["Time"])')"
  local ld="-s -w"
  local pkg key val
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    for key in gitVersion:"${K8S_VERSION}" gitMajor:"${major}" gitMinor:"${minor}" \
               gitCommit:unknown gitTreeState:clean buildDate:"${date}"; do
      val="${key#*:}"; key="${key%%:*}"
      ld+=" -X ${pkg}.${key}=${val}"
    done
  done
  echo "${ld}"
}

build_k8s() {
  local mod="${here}/k8s"
  local ld
  ld="$(version_ldflags)"
  mkdir -p "$(dirname "${k8s_out}")"
  log "building k8s ${K8S_VERSION} -> ${k8s_out} (cold: about 5-6 min on 2 cores)"
  (cd "${mod}" && go build -trimpath -buildvcs=false -tags "${tags}" -ldflags "${ld}" -o "${k8s_out}.tmp" .)
  mv -f "${k8s_out}.tmp" "${k8s_out}"
}

build_kwok() {
  local mod="${here}/kwok"
  if ! grep -q "^	sigs.k8s.io/kwok ${KWOK_VERSION}\( \|\$\)" "${mod}/go.mod"; then
    log "kwok/go.mod does not require sigs.k8s.io/kwok ${KWOK_VERSION}; run: cd tests/cluster/kwok && go get sigs.k8s.io/kwok@${KWOK_VERSION} && go mod tidy"
    exit 1
  fi
  mkdir -p "$(dirname "${kwok_out}")"
  # kwok reports its version from these ldflags (pkg/consts).
  local ld="-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=${KWOK_VERSION#v}"
  log "building kwok ${KWOK_VERSION} -> ${kwok_out}"
  (cd "${mod}" && go build -trimpath -buildvcs=false -ldflags "${ld}" -o "${kwok_out}.tmp" sigs.k8s.io/kwok/cmd/kwok)
  mv -f "${kwok_out}.tmp" "${kwok_out}"
}

# The real nodes' kubelet (tests/cluster/real_node.py): k8s.io/kubernetes/cmd/kubelet at the control
# plane's version, from the same module (tests/cluster/k8s/kubelet), with the same version ldflags.
build_kubelet() {
  local mod="${here}/k8s" ld
  ld="$(version_ldflags)"
  mkdir -p "$(dirname "${kubelet_out}")"
  log "building kubelet ${K8S_VERSION} -> ${kubelet_out} (about 1 min after the control plane, 4-5 min cold)"
  (cd "${mod}" && go build -trimpath -buildvcs=false -tags "${tags}" -ldflags "${ld}" \
    -o "${kubelet_out}.tmp" ./kubelet)
  mv -f "${kubelet_out}.tmp" "${kubelet_out}"
}

# kwok's stock stages (node-initialize, heartbeat, chaos, ...) are used as
# published; put them next to the binary so that starting a cluster needs
# neither Go nor a module cache.
stock_stages() {
  local mod="${here}/kwok" src dst="${cache}/kwok-${KWOK_VERSION}/stages"
  src="$(cd "${mod}" && go mod download -json "sigs.k8s.io/kwok@${KWOK_VERSION}" \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])')/kustomize/stage"
  rm -rf "${dst}.tmp"
  mkdir -p "${dst}.tmp"
  (cd "${src}" && find . -name '*.yaml' ! -name kustomization.yaml ! -path '*/testdata/*' \
    -exec cp --parents {} "${dst}.tmp/" \;)
  chmod -R u+w "${dst}.tmp"
  rm -rf "${dst}"
  mv "${dst}.tmp" "${dst}"
  log "stock kwok stages -> ${dst}"
}

# Prometheus' go.mod has no replace directives, so `go install pkg@version` builds it with its
# own go.mod and go.sum, as released; no module directory of ours is needed.
# remove_all_sd drops the cloud service discovery SDKs (AWS, Azure, GCE, Kubernetes, ...):
# the tests use static targets only, and it roughly halves the cold build. netgo as upstream's
# .promu.yml; no builtinassets: the web UI is not needed (its API is what the tests query).
build_prometheus() {
  : "${PROMETHEUS_VERSION:?missing in versions.env}"
  local release="${PROMETHEUS_VERSION#v0.}"
  # module v0.316.0 is Prometheus 3.16.0: the version the binary reports.
  release="${release:0:1}.$((10#${release:1:2})).${release#*.}"
  local ld="-s -w -X github.com/prometheus/common/version.Version=${release}"
  ld+=" -X github.com/prometheus/common/version.Revision=unknown -X github.com/prometheus/common/version.Branch=HEAD"
  local tmp="${prometheus_out}.tmpdir"
  rm -rf "${tmp}"
  mkdir -p "${tmp}"
  log "building prometheus ${release} (module ${PROMETHEUS_VERSION}) -> ${prometheus_out}"
  (cd "${tmp}" && GOBIN="${tmp}" go install -trimpath -buildvcs=false -tags netgo,remove_all_sd \
    -ldflags "${ld}" "github.com/prometheus/prometheus/cmd/prometheus@${PROMETHEUS_VERSION}")
  mv -f "${tmp}/prometheus" "${prometheus_out}"
  rm -rf "${tmp}"
}

# The Pushgateway as released (its go.mod has no replace directives either): netgo as its .promu.yml, the version
# ldflags prometheus/common reads; its web UI's assets are embedded and small, kept (the API is what the tests use).
build_pushgateway() {
  : "${PUSHGATEWAY_VERSION:?missing in versions.env}"
  local ld="-s -w -X github.com/prometheus/common/version.Version=${PUSHGATEWAY_VERSION#v}"
  ld+=" -X github.com/prometheus/common/version.Revision=unknown -X github.com/prometheus/common/version.Branch=HEAD"
  local tmp="${pushgateway_out}.tmpdir"
  rm -rf "${tmp}"
  mkdir -p "${tmp}"
  log "building pushgateway ${PUSHGATEWAY_VERSION} -> ${pushgateway_out}"
  (cd "${tmp}" && GOBIN="${tmp}" go install -trimpath -buildvcs=false -tags netgo \
    -ldflags "${ld}" "github.com/prometheus/pushgateway@${PUSHGATEWAY_VERSION}")
  mv -f "${tmp}/pushgateway" "${pushgateway_out}"
  rm -rf "${tmp}"
}

# One build at a time per cache and target: callers that start together (make kube's two shards,
# two test sessions, make test's background build) wait here for the first one's binaries instead
# of building the same files at once. Prometheus and the Pushgateway have locks of their own, so a cluster
# that only needs the control plane never waits for their builds.
mkdir -p "${cache}"
case "${1:-}" in
  prometheus) exec 9>"${cache}/.build-prometheus.lock" ;;
  pushgateway) exec 9>"${cache}/.build-pushgateway.lock" ;;
  kubelet) exec 9>"${cache}/.build-kubelet.lock" ;;
  *) exec 9>"${cache}/.build.lock" ;;
esac
flock 9

if [ "${1:-}" = prometheus ]; then
  if [ "${FORCE:-0}" = 1 ] || [ ! -x "${prometheus_out}" ]; then build_prometheus; else log "reusing ${prometheus_out}"; fi
  echo "${prometheus_out}"
  exit 0
fi
if [ "${1:-}" = pushgateway ]; then
  if [ "${FORCE:-0}" = 1 ] || [ ! -x "${pushgateway_out}" ]; then build_pushgateway; else log "reusing ${pushgateway_out}"; fi
  echo "${pushgateway_out}"
  exit 0
fi
if [ "${1:-}" = kubelet ]; then
  if [ "${FORCE:-0}" = 1 ] || [ ! -x "${kubelet_out}" ]; then build_kubelet; else log "reusing ${kubelet_out}"; fi
  echo "${kubelet_out}"
  exit 0
fi
if [ -n "${1:-}" ]; then
  log "unknown target ${1} (known: prometheus, pushgateway, kubelet; none for the control plane)"
  exit 2
fi
if [ "${FORCE:-0}" = 1 ] || [ ! -x "${k8s_out}" ]; then build_k8s; else log "reusing ${k8s_out}"; fi
if [ "${FORCE:-0}" = 1 ] || [ ! -x "${kwok_out}" ]; then build_kwok; else log "reusing ${kwok_out}"; fi
if [ "${FORCE:-0}" = 1 ] || [ ! -f "${cache}/kwok-${KWOK_VERSION}/stages/node/fast/node-initialize.yaml" ]; then
  stock_stages
fi
echo "${k8s_out}"
echo "${kwok_out}"
