# schedbench: `make help` lists the targets.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
export NUMBA_CACHE_DIR ?= $(CURDIR)/.cache/numba

.DEFAULT_GOAL := help
.PHONY: help setup test bench bench-perf bench-check bench-save lint clean

help: ## list the targets
	@grep -E '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*## "}; {printf "  %-12s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP) ## create .venv (if missing) and install schedbench with its dev extra

test: $(STAMP) ## run the test suite (unit, oracle and property tests; no benchmarks)
	$(BIN)/python -m pytest -q

bench: $(STAMP) ## run the default benchmark sweep on built-in workloads and print the summary
	$(BIN)/python -m pytest -q bench -m benchmark --benchmark-only -p no:cacheprovider

bench-perf: $(STAMP) ## time the hot paths with pytest-benchmark
	$(BIN)/python -m pytest -q bench -m benchmark --benchmark-only

lint: $(STAMP) ## ruff
	$(BIN)/ruff check sched tests bench

clean: ## remove the environment, caches and generated results
	rm -rf $(VENV) .cache .hypothesis .benchmarks .pytest_cache bench-results bench-report
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
