# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
#
# The budgeted strategy's tests. Include from the top-level Makefile:
#     include tests/strategy/strategy.mk
# and add `strategy` (or `strategy-matrix`) to `test`. Uses $(BIN) and the `venv`
# target of the top-level Makefile when it defines them.
#
#   make strategy          tests/strategy + the sliding-window unit tests, default virtualenv
#   make strategy-matrix   the same on every ansible-core the machine's Python runs
#                          (virtualenvs build/strategy-venvs/.venv-core<X.Y>; see run_matrix.sh)
#   make strategy-bench    1,000-host benchmark against an equivalent static serial list

STRATEGY_MK_DIR := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
STRATEGY_REPO_ROOT := $(abspath $(STRATEGY_MK_DIR)/../..)
STRATEGY_PYTHON ?= $(if $(BIN),$(abspath $(BIN))/python,python3)
STRATEGY_TESTS := tests/strategy tests/unit/plugins/module_utils/test_rollout_scheduler_sliding.py

.PHONY: strategy strategy-matrix strategy-bench

strategy: $(if $(BIN),venv,)
	cd $(STRATEGY_REPO_ROOT) && $(STRATEGY_PYTHON) -m pytest -q $(STRATEGY_TESTS)

strategy-matrix:
	$(STRATEGY_REPO_ROOT)/tests/strategy/run_matrix.sh

strategy-bench: $(if $(BIN),venv,)
	cd $(STRATEGY_REPO_ROOT) && $(STRATEGY_PYTHON) tests/bench/strategy_bench.py
