# schedbench: `make help` lists the targets.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
# prints numba's cache root (the folder of the numba-* kernel folders), as the package sees it
CACHE_ROOT = $(BIN)/python -c 'from schedbench._jit import cache_root; print(cache_root())'
# numba's compiled kernels live in the user cache folder (~/.cache/schedbench on Linux, or
# $NUMBA_CACHE_DIR), shared by make and the bare command line; schedbench keys a subfolder
# on the sources its kernels depend on (see sched/schedbench/kernel_sources.py).

.DEFAULT_GOAL := help
.PHONY: help setup test test-boundscheck test-oracle-full test-exhaustive report-check bench bench-perf bench-check bench-save compile-cost study study-sfs study-soner lint clean

help: ## list the targets
	@grep -E '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*## "}; {printf "  %-12s %s\n", $$1, $$2}'

# pip prints what it collects and installs: a minute or more on a fresh machine, which
# should be seen to be working.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@echo "setup: upgrading pip, then installing schedbench and its dependencies into $(VENV) ..."
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install -e '.[dev]'
	touch $(STAMP)

# The kernels a first `make bench` and a first `schedbench replay LOG.swf` need, compiled on
# every core with a line per loop (a few CPU minutes; loops already cached are loaded).
# make bench runs it first: the sweep then loads its loops, and a replay of a log right
# after make bench (-s easy -a ff, pool mode) starts at once rather than compiling.
setup: $(STAMP) ## create .venv (if missing), install schedbench with its dev extra, and compile the kernels of make bench and of schedbench replay's defaults
	$(BIN)/python -m schedbench warm --config $(BENCH_CONFIG) -s easy -a ff --mode pool

# One worker per core, whole files per worker (numba compiles dominate a cold run: the
# workers compile different kernels side by side; module fixtures load a log once).
test: $(STAMP) ## run the test suite (unit, oracle and property tests; no benchmarks)
	$(BIN)/python -m pytest -q -n auto --dist loadfile --durations=15

# Kernels compiled with bounds checks must not be loaded by ordinary runs (nor the reverse):
# they get their own cache folder, which make clean removes with the others.
test-boundscheck: $(STAMP) ## the test suite with numba's bounds checks in every kernel (an index error instead of a silent wrong read; compiles everything again, in its own cache folder)
	root="$$($(CACHE_ROOT))" && test -n "$$root" && \
	  NUMBA_BOUNDSCHECK=1 NUMBA_CACHE_DIR="$$root/numba-boundscheck" $(BIN)/python -m pytest -q -n auto --dist loadfile

test-oracle-full: $(STAMP) ## the engine-vs-oracle tests on the shared logs' first 20,000 jobs (make test uses 3,000; ten minutes or more)
	SCHEDBENCH_ORACLE_JOBS=20000 $(BIN)/python -m pytest -q -n auto --dist loadfile tests/core/test_engine_oracle.py tests/schedulers/test_conservative_oracle.py tests/schedulers/test_fairshare.py -k shared_logs

test-exhaustive: $(STAMP) ## conservative against the same replay without compression's shortcuts, job by job, on deep queues on nodes and on a pool (a few minutes: each loop compiles again in a child)
	$(BIN)/python bench/conservative_exhaustive.py --case burst-s0-ff --case burst-s0-bf --case burst-s2-ff \
	  --case eurora-balanced --case kth-one --case hpc2n-deep

# make test skips the browser test when no Chromium is installed; this target installs
# Debian's (as root, or through sudo) and makes the test required.
report-check: $(STAMP) ## open a report in headless Chromium and check that every figure loads (installs Debian's chromium if missing)
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || { \
	  echo "report-check: installing Debian's chromium"; \
	  $(if $(filter 0,$(shell id -u)),,sudo) sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium'; }
	SCHEDBENCH_REQUIRE_BROWSER=1 $(BIN)/python -m pytest -q -p no:cacheprovider tests/analysis/test_report_browser.py

# Benchmarks: the default sweep and report (bench), hot-path timings (bench-perf) and a
# baseline of them (bench-save, bench-check; see bench/check.py for the noise band).
BENCH_CONFIG   ?= bench/default.toml
BENCH_RESULTS  ?= bench-results
BENCH_REPORT   ?= bench-report
BENCH_JOBS     ?=
BENCH_BASELINE ?= bench/baselines/baseline.json
BENCH_BAND     ?=

bench: setup ## compile ahead as make setup does, then run the default sweep (BENCH_CONFIG) into bench-results/, write bench-report/ and print the summary
	$(BIN)/python -m schedbench sweep $(BENCH_CONFIG) -o $(BENCH_RESULTS) $(if $(BENCH_JOBS),--jobs $(BENCH_JOBS)); \
	status=$$?; \
	$(BIN)/python -m schedbench report $(BENCH_RESULTS) -o $(BENCH_REPORT) && exit $$status

bench-perf: $(STAMP) ## time the hot paths (engine, allocators, SWF parse) with pytest-benchmark
	$(BIN)/python -m pytest -q bench -m benchmark --benchmark-only -p no:cacheprovider

bench-check: $(STAMP) ## run the hot-path timings and fail on a slowdown beyond the noise band vs BENCH_BASELINE
	$(BIN)/python bench/check.py compare --baseline $(BENCH_BASELINE) $(if $(BENCH_BAND),--band $(BENCH_BAND))

bench-save: $(STAMP) ## run the hot-path timings and save them (with the machine) as BENCH_BASELINE
	$(BIN)/python bench/check.py save --baseline $(BENCH_BASELINE)

compile-cost: $(STAMP) ## numba compile seconds from an empty cache: per kernel, per scheduler x allocator (ff, bf) x pool/nodes, repeated specialisations (two rounds, about 15 CPU minutes)
	$(BIN)/python bench/compile_cost.py --rounds 2 -a ff -a bf --parallel 2

# NETTI: extra options of bench/netti_study.py, e.g. NETTI="--schedulers cph --months apr2015 --orders file
# --loads '' --no-instances" for the paper's CPH rows of April 2015 (CP-SAT: about half an hour)
NETTI ?=
study: $(STAMP) ## Netti et al.'s allocation study: SJF/EASY/EBF-AccaSim/PRB/FCFS x five allocators on Eurora data, two generator loads and the paper's four months sliced from continuous calibrated runs, under three node orders, beside the paper's Tables 2-3 (NETTI="..." passes options)
	$(BIN)/python bench/netti_study.py -o $(BENCH_RESULTS)/netti-study.md $(NETTI)

# SONER: extra options of bench/soner_study.py, e.g. SONER="--workloads ESP,ESP-RS --experiments 1,2,7,8"
# for the ESP columns alone (backfill and AUCSCHED: minutes), or SONER="--z-times doubled"
SONER ?=
study-soner: $(STAMP) ## Soner & Ozturan's study: backfill, IPSCHED and AUCSCHED x basic/multifactor on ESP cpu-gpu, ESP random sizes and workloads I-V (Machine-L); tables and figures (SONER="..." passes options)
	$(BIN)/python bench/soner_study.py -o $(BENCH_RESULTS)/soner-study $(SONER)

study-sfs: $(STAMP) ## Steffen's SFS study: linear vs SFS x age/size-dominant on Alice, Bob and Chris; latency table and Gantt charts
	$(BIN)/python bench/steffen_study.py -o $(BENCH_RESULTS)/steffen-study

study-tsafrir: $(STAMP) ## Tsafrir et al.'s EASY, EASY+, EASY++ and PERFECT(++): mean wait and bounded slowdown (their Tables 2-3) on the shared SWF logs into docs/studies/tsafrir-easy-plus-plus.md, or on LOGS="file-or-catalog-name ..." into $(BENCH_RESULTS)/tsafrir-study.md
ifeq ($(strip $(LOGS)),)
	$(BIN)/python bench/tsafrir_study.py -o docs/studies/tsafrir-easy-plus-plus.md
else
	$(BIN)/python bench/tsafrir_study.py $(LOGS) -o $(BENCH_RESULTS)/tsafrir-study.md
endif

lint: $(STAMP) ## ruff
	$(BIN)/ruff check sched tests bench

# The cache folder holds numba's compiled kernels (numba-<digest> subfolders) and the logs
# `schedbench traces fetch` downloaded, side by side: clean deletes the kernels only (a
# trace is a download to repeat; delete one with rm when you mean it).  Old kernel folders
# are also pruned as new ones appear (schedbench._jit.prune).
clean: ## remove .venv, numba's compiled kernels (the cache's numba-* folders; downloaded traces are kept) and local generated files
	-test -x $(BIN)/python && root="$$($(CACHE_ROOT))" \
	  && test -n "$$root" && rm -rf "$$root"/numba-*
	rm -rf $(VENV) .cache .hypothesis .benchmarks .pytest_cache bench-results bench-report
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
