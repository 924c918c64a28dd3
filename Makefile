# The README's two commands: `make reproduce` and `make test`; `make test-native` runs the real-server tier.
VENV   ?= .venv
CORES  ?= 2
CONFIG ?= config.yaml
PYTHON ?= python3
EXTRAS ?= study,test,bench,st,onnx,ko

export PATH := $(abspath $(VENV))/bin:$(PATH)
export HF_HUB_OFFLINE ?= 1

NATIVE_EXTRAS ?= study,test,native-cpu

.PHONY: reproduce unlock bench test test-fast test-native lint profile clean

# Re-install whenever the project's dependencies change (one marker per set of extras). uv installs the same
# releases as pip in half its time (50 s against 1:45 for the default extras on 2 cores). uv reads no pip
# configuration: the sources and constraints pip is configured with (a machine's local wheels, such as the CPU build
# of torch, and its caps) are passed on, with pip's rule of taking the best match over all of them. Bytecode is
# compiled up front (where PYTHONDONTWRITEBYTECODE is set, every process would otherwise compile what it imports),
# except what no run imports: the packages' own test suites and transformers' model families other than BERT's
# (the bundled MiniLM) and the auto classes, 6,500 of the 16,600 modules and 25 of the 54 CPU-seconds it took. A
# module left out still runs, compiled when imported; one that does not compile (torch ships a file in Python 3.12's
# syntax among its test helpers) is left, as uv leaves it, to fail where something imports it.
NO_BYTECODE = /tests?/|/transformers/models/(?!auto/|bert/)
PIP_SOURCES = $(shell $(PYTHON) -m pip config list 2>/dev/null \
	| sed -n "s/^[^=]*\.\(find-links\|constraint\|index-url\|extra-index-url\)='\(.*\)'$$/\1 \2/p" \
	| awk '{for (i = 2; i <= NF; i++) print "--" $$1, $$i}' | sort -u)

$(VENV)/.installed-%: pyproject.toml
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q 'uv>=0.5'
	$(VENV)/bin/uv pip install -q --python $(VENV)/bin/python --index-strategy unsafe-best-match $(PIP_SOURCES) -e '.[$*]'
	$(VENV)/bin/python -m compileall -qq -j 0 -x '$(NO_BYTECODE)' $(VENV)/lib/python*/site-packages || true
	touch $@

# Every job of the workflow imports the package from this checkout (an editable install, which uv does not compile):
# compiled here once, where PYTHONDONTWRITEBYTECODE is set each job would compile what it imports (0.2 s a job).
# After a hard kill (make unlock), the jobs the dead run left incomplete run again.
reproduce: $(VENV)/.installed-$(EXTRAS)
	@$(MAKE) --no-print-directory unlock
	python -m compileall -q workflow/toolgate
	snakemake --cores $(CORES) --configfile $(CONFIG) --rerun-incomplete
	@python -c "import yaml,sys; e=yaml.safe_load(open('$(CONFIG)'))['experiment']; print(f'\nDone. Outputs: results/{e}/ (start with results/{e}/report.md or report.html) and figures/{e}/')"

# The lock of a run killed hard is removed only when no Snakemake process runs in this checkout: none whose working
# directory is this folder, or cannot be read (no /proc, another user's). A run in another checkout holds its own
# lock. `pgrep -f bin/[s]nakemake` matches the interpreter running .venv/bin/snakemake, not this recipe's shell.
unlock:
	@if [ -n "$$(ls -A .snakemake/locks 2>/dev/null)" ] && [ -z "$$(for p in $$(pgrep -f 'bin/[s]nakemake'); do \
		d=$$(readlink /proc/$$p/cwd 2>/dev/null); [ -n "$$d" ] && [ "$$d" != "$(CURDIR)" ] || echo $$p; done)" ]; then \
		echo "removing the lock of an interrupted run (no Snakemake process is running in this checkout)"; \
		snakemake --unlock --configfile $(CONFIG) >/dev/null; fi

# `make reproduce` plus the benchmarks beyond the paper that are mostly timing (config.yaml's `bench:`,
# set here): the scaling benchmark to 64,000 tools and the tokenizer ablation, with their sections in the report.
# Their timings need the machine to themselves: run it on a quiet machine.
bench: $(VENV)/.installed-$(EXTRAS)
	python -m compileall -q workflow/toolgate
	snakemake --cores $(CORES) --configfile $(CONFIG) --rerun-incomplete --config bench=True

# pytest rewrites every test module's asserts on import; where PYTHONDONTWRITEBYTECODE is set it cannot keep the
# result and redoes it in every worker on every run (7 s of each worker's start for the unit tier on 2 cores).
PYTEST_ENV = OMP_NUM_THREADS=1 PYTHONDONTWRITEBYTECODE=

# One worker per core, a test file per worker at a time (a file's tests share its workflow run), the files in the
# order they are collected (pyproject's testpaths: e2e, workflow, models, unit): the default workflow's regression run
# takes one worker while the other runs the imported workflows, then both take the workflow and model files and end on
# the small unit files. xdist's default order, the files with the most tests first, left the imported workflows to the
# end: one worker ran them for 40 s while the other idled. The test processes get one OpenMP/BLAS thread (snakemake
# sets each workflow job's own): with more processes than cores, an encoder's threads wait for each other at every
# barrier whenever one is descheduled (one e5 query: 62 ms on two threads with a core taken, 22 ms on one), and one
# thread gives the same embeddings bit for bit (tests/models/test_encoders.py).
test: $(VENV)/.installed-$(EXTRAS)
	$(PYTEST_ENV) python -m pytest -q -n $(CORES) --dist loadfile --no-loadscope-reorder

# The developer's loop: tests/unit only (in-process, no workflow run, no model beyond the bundled small encoders),
# one worker per core; about 30 s on 2 cores. `make test` (CI) runs every tier.
test-fast: $(VENV)/.installed-$(EXTRAS)
	$(PYTEST_ENV) python -m pytest -q -n $(CORES) -m unit

# tests/native_real against llama-cpp-python's server (the native-cpu extra: llama-cpp-python builds from source,
# about 10 minutes on 2 cores the first time); `make test` deselects this tier. The build is portable (AVX2, no
# AVX-512 or AMX): a -march=native build takes AMX kernels that die with SIGILL in VMs that do not enable AMX state.
test-native: export CMAKE_ARGS ?= -DGGML_NATIVE=OFF
test-native: export UV_NO_CACHE = 1
test-native: $(VENV)/.installed-$(NATIVE_EXTRAS)
	python -m pytest -q -m real_server tests/native_real

profile: $(VENV)/.installed-$(EXTRAS)
	toolgate profile --config $(CONFIG)

lint: $(VENV)/.installed-$(EXTRAS)
	snakemake --lint

clean:
	rm -rf results figures logs benchmarks .snakemake
