# nodewright.bridge development tasks. `make test` is what CI runs (.ci/run).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
export PATH := $(abspath $(BIN)):$(PATH)

.PHONY: scenarios help venv test checks after-kube lint docs docs-lint changelog-lint browser strategy-matrix-new unit sanity galaxy-smoke galaxy-import integration
.PHONY: kube interop bench bench-api bench-fleet bench-fleet-clusters bench-protected demo demo-up demo-run demo-down clean molecule

help:
	@echo "make demo          24 fake GPU nodes in 3 racks, examples/gpu-node-tuning.yaml applied with progress (make demo-down)"
	@echo "make venv          create $(VENV) with the pinned test requirements"
	@echo "make test          ansible-lint, unit tests, ansible-test sanity, galaxy build+install smoke, galaxy-importer,"
	@echo "                   cluster tests (molecule included),"
	@echo "                   strategy plugin tests on every ansible-core this Python runs (2.16-2.19), in three phases"
	@echo "                   of several jobs at once: make checks, make kube (interop beside it), make after-kube"
	@echo "make lint          ansible-lint, production profile, on an ansible_collections/nodewright/bridge copy"
	@echo "make unit          fast unit tests of the pure model (no cluster)"
	@echo "make browser       the rollout timeline in headless Chromium (Debian package chromium; 200 nodes under 2 s)"
	@echo "make sanity        ansible-test sanity on an ansible_collections/nodewright/bridge copy"
	@echo "make galaxy-smoke  build the tarball, install it, run rollout_plan from the installed copy"
	@echo "make galaxy-import galaxy-importer on the built tarball as Galaxy runs it (ansible-doc, ansible-lint, flake8);"
	@echo "                   log and result in build/artifacts/galaxy-import"
	@echo "make kube          tests against the real control plane (builds it the first time)"
	@echo "make interop       the real NodeWright operator and the collection on one test cluster (handoffs, guard)"
	@echo "make scenarios     NodeWright's own chainsaw e2e scenarios, the collection in the operator's place (not in make test)"
	@echo "make strategy      strategy plugin tests on the default ansible-core; strategy-matrix: 2.16-2.18"
	@echo "make strategy-matrix-new   the same on ansible-core 2.20, 2.21 and the newest (a CPython 3.13 built from source)"
	@echo "make cluster-up / cluster-down   a test cluster for manual use (.cluster/kubeconfig)"
	@echo "make bench         benchmarks under tests/bench (print figures; a role package against NVIDIA's shellscript with podman)"
	@echo "make bench-api     API requests of one node through the cluster modules (audit log)"
	@echo "make bench-fleet   the NodeWright operator vs nodewright.bridge.apply, 24 and 200 nodes (BENCH_FLEET_ARGS=...)"
	@echo "make bench-protected  a training pod that outlives the rollout: parked nodes vs the slot kept vs the operator"
	@echo "make ee            the execution environment: ansible-builder on a Debian base built here, podman, its checks"
	@echo "make molecule      molecule test of the node role against a test cluster (own venv; in make kube too)"
	@echo "make docs-lint     antsibull-docs lint-collection-docs, the plugin and role docs included"
	@echo "make changelog-lint  antsibull-changelog lint of changelogs/fragments"
	@echo "make integration   ansible-test integration (tests/integration/targets) against a test cluster of its own"
	@echo "make docs          the HTML docs site (antsibull-docs + Sphinx, own venv, not in make test): build/docs/html"

# The virtualenv is (re)installed whenever requirements-test.txt is newer than its stamp, so a
# checkout that changes a pin gets it on its next make, whichever target comes first.
$(VENV)/.installed: requirements-test.txt
	[ -x $(BIN)/python ] || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements-test.txt
	touch $@

venv: $(VENV)/.installed

test: checks kube after-kube
# The checks without a cluster, two at a time: each is mostly one process on one core (a 2-core machine's other
# core stood idle while they ran one after the other); each one's output comes in one piece when it ends. The
# longest first (sanity, the strategy tests on the pinned ansible-core), the short ones fill in beside them.
CHECKS := sanity strategy lint docs-lint changelog-lint unit browser galaxy-smoke galaxy-import
checks: venv
	$(MAKE) --no-print-directory -j2 --output-sync=target $(CHECKS)
# After the cluster tests, two at a time too: the matrices keep both cores busy, integration and ee mostly wait on
# their cluster and podman; the longest (the new matrix: its CPython, the newest ansible-test sanity) first.
AFTER_KUBE := strategy-matrix-new integration ee strategy-matrix
after-kube: venv
	$(MAKE) --no-print-directory -j2 --output-sync=target $(AFTER_KUBE)
# make test runs the interop tests (make interop) as one more kube shard: about 10 min on 2 cores, mostly waiting on
# the operator and a real node, which the cluster shards' waits leave room for
test: KUBE_SHARDS += ; tests/interop
# make test builds the operator (interop) and strategy-matrix-new's CPython during the cluster tests,
# niced, in the background (tests/build-peers.sh); each build takes a lock, so the step that needs
# one waits for that build instead of starting a second
test: KUBE_BACKGROUND = tests/build-peers.sh

# ansible-core 2.20 and newer need Python >= 3.12: tests/python/build-python.sh builds CPython 3.13
# from Debian's source package (cached like the cluster binaries) and prints its path.
# NEW_CORE_VERSIONS: 2.20, 2.21 and the newest ansible-core PyPI serves for that Python; each gets
# the strategy tests, and the newest ansible-test sanity too (make sanity runs it with the pinned 2.19; one
# sanity run is 4 to 5 minutes of CI, and the versions between the two ends add little: NW_MATRIX_SANITY=1
# runs it with each)
NEW_PYTHON_CMD := tests/python/build-python.sh
NEW_CORE_VERSIONS ?= 2.20 2.21 newest
# Every strategy test on the ends of the range (2.16, the oldest requires_ansible allows; the newest), the subset of tests/strategy/run_matrix.sh (the internals the strategy reaches, its phases) on the versions
# between: a full run is about 6 min of a 2-core machine per version. NW_MATRIX_FULL=all runs every test on each.
# 2.19, the pinned one, is not in the matrix: make strategy (in make test's checks) and the kube shards test on it.
strategy-matrix: export NW_CORE_VERSIONS ?= 2.16 2.17 2.18
strategy-matrix: export NW_MATRIX_FULL ?= 2.16
strategy-matrix-new: export NW_MATRIX_FULL ?= newest
strategy-matrix-new:
	py=$$($(NEW_PYTHON_CMD)) && PYTHON="$$py" NW_CORE_VERSIONS="$(NEW_CORE_VERSIONS)" NW_MATRIX_SANITY=$${NW_MATRIX_SANITY:-last} \
	  NW_MATRIX_VENV_DIR=$(abspath build/strategy-venvs-new) tests/strategy/run_matrix.sh

lint: venv
	tests/lint.sh

unit: venv
	$(BIN)/python -m pytest tests/unit -q

# Chromium is required (the tests fail without it, never skip); pages and screenshots in build/browser/.
# The timeline of a real apply run is tested in make kube (tests/kube/test_timeline_e2e.py).
browser: venv
	$(BIN)/python -m pytest tests/browser -q -m browser

sanity: venv
	tests/sanity.sh

# the tarball installed and its modules run from the installed copy; then the README's commands as a new user runs
# them, in a fresh virtualenv with an empty home (tests/readme_check.py)
galaxy-smoke: venv
	tests/installed_smoke.sh
	$(BIN)/python tests/readme_check.py $$(ls build/galaxy/nodewright-bridge-*.tar.gz) build/readme

# ansible-test integration (tests/integration/targets) against a test cluster of its own (tests/integration.sh)
integration: venv
	tests/integration.sh

# galaxy-importer (requirements-test.txt) on the tarball, as Galaxy imports an upload: 0 errors and
# its success line, or the step fails; the log, its warnings and the JSON result in build/artifacts/galaxy-import.
galaxy-import: venv
	tests/galaxy_import.sh

# Four pytest processes at once, each with a cluster of its own (tests/kube/run_shards.sh): the
# cluster tests mostly wait on the cluster, so the shards overlap well on 2 cores.
# KUBE_SHARD_1 is the first shard's files (outages, windows, concurrent runs), and the v0.20 CRD cluster's tests
# (a cluster of their own, about 1.5 min).
KUBE_SHARD_1 ?= tests/kube/test_faults.py tests/kube/test_windows_and_gates.py tests/kube/test_shared_budget.py tests/kube/test_timeline_e2e.py \
  tests/kube/test_events.py tests/kube/test_nodewright_v020.py tests/kube/test_nodewright_jobs.py tests/kube/test_awx_jobs.py
# KUBE_SHARDS: the shards between the first and the last (';' between two): the real-node tests (mostly waiting on
# stage timeouts, a kubelet and the agent; their images and kubelet come from KUBE_BACKGROUND's build-peers) with the
# fleet tests (three control planes of their own); then the longest single tests of the rest (a node brought up to
# date, molecule, the config edits, the operator's contract, the maintenance role). The last shard is every other file.
# On a 2-core machine (AMD EPYC) with three shards, the longest took 35 to 43 min; each shard's JUnit XML in
# build/kube-shards gives every test's time for a new split.
KUBE_SHARDS ?= tests/kube/test_real_nodes.py tests/kube/test_fleet.py; \
  tests/kube/test_node_update.py tests/kube/test_molecule.py tests/kube/test_config_edits.py tests/kube/test_operator_contract.py \
  tests/kube/test_maintenance_role.py
kube: venv
	KUBE_PYTHON=$(BIN)/python KUBE_BACKGROUND="$(KUBE_BACKGROUND)" KUBE_SHARDS="$(KUBE_SHARDS)" tests/kube/run_shards.sh $(KUBE_SHARD_1)

# The real NodeWright operator (../shared/upstream/build-operator.sh, cached) and the collection on
# one test cluster: handoffs both ways, an upgrade across sides, the operator guard (tests/interop).
interop: venv
	$(BIN)/python -m pytest tests/interop -q -m interop

# NodeWright's own e2e scenarios (chainsaw, from ../shared/upstream) against nodes the collection manages:
# a bridge reconciler runs nodewright.bridge.apply as the operator would (tests/scenarios; not in make test).
# Builds kubectl-skyhook and chainsaw the first time (tests/scenarios/build-peers.sh, cached).
scenarios: venv
	$(BIN)/python -m pytest tests/scenarios -q -m cluster $(SCENARIOS_ARGS)

bench: venv
	$(BIN)/python tests/bench/plan_bench.py
	$(BIN)/python tests/bench/plan_bench.py --unique-states
	$(BIN)/python tests/bench/strategy_bench.py
	$(BIN)/python tests/bench/role_package_bench.py

bench-api: venv
	$(BIN)/python tests/bench/api_requests_bench.py

# Side by side: the real operator (built by ../shared/upstream/build-operator.sh) and
# nodewright.bridge.apply, each on a fresh test cluster; not part of make test. See docs/dev/benchmarks.md.
# e.g. make bench-fleet BENCH_FLEET_ARGS='--sizes 24 --side operator'
BENCH_FLEET_ARGS ?=
bench-fleet: venv
	$(BIN)/python tests/bench/fleet_bench.py $(BENCH_FLEET_ARGS)

# nodewright.bridge.fleet over three clusters against apply on one (docs/dev/benchmarks.md); not part of make test
BENCH_FLEET_CLUSTERS_ARGS ?=
bench-fleet-clusters: venv
	$(BIN)/python tests/bench/fleet_clusters_bench.py $(BENCH_FLEET_CLUSTERS_ARGS)

# e.g. make bench-protected BENCH_PROTECTED_ARGS='--cases bridge --training 60'
BENCH_PROTECTED_ARGS ?=
bench-protected: venv
	$(BIN)/python tests/bench/protected_bench.py $(BENCH_PROTECTED_ARGS)

demo: demo-up demo-run

demo-up: venv
	$(BIN)/python demo/demo.py up

demo-run: venv
	$(BIN)/python demo/demo.py run

demo-down: venv
	$(BIN)/python demo/demo.py down

clean:
	rm -rf build .pytest_cache

# The collection's execution environment (docs/ee.md, docs/dev/ee-build.md): ansible-builder builds it on a base image
# debootstrap makes (no registry here), both cached in podman's storage by content
# (~/.cache/nodewright-bridge/ee); then what a user runs in it. make test builds it in the background of
# the cluster tests (tests/build-peers.sh), runs AWX's jobs in it there (tests/kube/test_awx_jobs.py), then this.
.PHONY: ee
ee: venv
	$(BIN)/python -m pytest tests/ee -q -m ee

# molecule/default in a venv of its own (requirements-molecule.txt, tests/molecule_venv.sh). make test runs it
# too, as a test of kube shard 2 (tests/kube/test_molecule.py), with the venv built in the background meanwhile.
# ANSIBLE_HOME keeps what molecule writes (the collection it installs from this tree, the
# scenario's ephemeral directory with the cluster's state) under the venv, out of ~/.ansible.
MOLECULE_VENV ?= build/molecule-venv
molecule:
	venv=$$(MOLECULE_VENV=$(MOLECULE_VENV) MOLECULE_PYTHON=$(PYTHON) tests/molecule_venv.sh) && \
	  PATH=$$venv/bin:$$PATH ANSIBLE_HOME=$$venv/ansible-home molecule test

docs-lint: venv
	docs/build.sh lint

# A release: docs/build.sh changelog-release 0.2.0 (antsibull-changelog release with the collection
# on a collections path); fragments added after a release went out only belong to the next one.
changelog-lint: venv
	antsibull-changelog lint
	PATH=$(abspath $(BIN)):$$PATH docs/build.sh changelog-release-check

# The site in a venv of its own (requirements-docs.txt: the test pins, Sphinx's theme); the guides are its extra docs (docs/docsite/).
DOCS_VENV ?= build/docs-venv
docs: venv
	@[ $(DOCS_VENV)/.installed -nt requirements-docs.txt ] && [ $(DOCS_VENV)/.installed -nt requirements-test.txt ] || { \
	  $(PYTHON) -m venv $(DOCS_VENV) && $(DOCS_VENV)/bin/pip install --quiet --upgrade pip && \
	  $(DOCS_VENV)/bin/pip install --quiet -r requirements-docs.txt && touch $(DOCS_VENV)/.installed; }
	PATH=$(abspath $(DOCS_VENV))/bin:$$PATH docs/build.sh html

-include tests/cluster/cluster.mk
-include tests/strategy/strategy.mk
