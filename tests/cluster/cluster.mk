# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
#
# Test control plane (etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler built from k8s.io/kubernetes, plus kwok fake GPU nodes).
# Include from the top-level Makefile:  include tests/cluster/cluster.mk
# See docs/dev/test-cluster.md.

PYTHON ?= python3
NODES ?= 8

# Paths are resolved from this file, so that the fragment works whatever the
# including Makefile's directory is.
CLUSTER_MK_DIR := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
CLUSTER_REPO_ROOT := $(abspath $(CLUSTER_MK_DIR)/../..)
CLUSTER_STATE ?= $(CLUSTER_REPO_ROOT)/.cluster/state
CLUSTER_KUBECONFIG ?= $(CLUSTER_REPO_ROOT)/.cluster/kubeconfig
# Extra launcher options, e.g. CLUSTER_UP_ARGS='--label-spread compartment=a,b,c' or
# CLUSTER_UP_ARGS=--no-fake-reboots (node_restart interrupt pods then reboot nothing)
CLUSTER_UP_ARGS ?=
# Real nodes (kubelet + containerd, tests/cluster/real_node.py) beside the fake ones, e.g. REAL_NODES=1; root only
REAL_NODES ?= 0
# The launcher and the tests import the kubernetes client: with the top-level Makefile (which
# defines BIN and `venv`) they run in its virtualenv, which each target makes first.
CLUSTER_PYTHON ?= $(if $(BIN),$(abspath $(BIN))/python,$(PYTHON))
CLUSTER_VENV := $(if $(BIN),venv,)

.PHONY: cluster-build cluster-up cluster-down cluster-test cluster-bench

# Build (first time: several minutes) or reuse the binaries in
# ~/.cache/nodewright-bridge/{k8s,kwok}-<version>/.
cluster-build: $(CLUSTER_VENV)
	$(CLUSTER_PYTHON) $(CLUSTER_MK_DIR)/launcher.py build

# Start a cluster with $(NODES) fake GPU nodes; kubeconfig in .cluster/kubeconfig.
# Tests reuse it with: NODEWRIGHT_KUBECONFIG=.cluster/kubeconfig
cluster-up: $(CLUSTER_VENV)
	$(CLUSTER_PYTHON) $(CLUSTER_MK_DIR)/launcher.py up --nodes $(NODES) --dir $(CLUSTER_STATE) \
		--kubeconfig $(CLUSTER_KUBECONFIG) --real-nodes $(REAL_NODES) $(CLUSTER_UP_ARGS)

# Stop every process of that cluster and remove its state and kubeconfig.
cluster-down: $(CLUSTER_VENV)
	$(CLUSTER_PYTHON) $(CLUSTER_MK_DIR)/launcher.py down --dir $(CLUSTER_STATE)
	rm -f $(CLUSTER_KUBECONFIG)
	-@rmdir $(dir $(CLUSTER_KUBECONFIG)) 2>/dev/null || true

# The cluster smoke suite (starts its own cluster unless NODEWRIGHT_KUBECONFIG is set).
cluster-test: $(CLUSTER_VENV)
	$(CLUSTER_PYTHON) -m pytest $(CLUSTER_REPO_ROOT)/tests/kube -m cluster

# Start/memory figures (200 fake nodes by default), see tests/bench/cluster_bench.py.
cluster-bench: $(CLUSTER_VENV)
	$(CLUSTER_PYTHON) $(CLUSTER_REPO_ROOT)/tests/bench/cluster_bench.py
