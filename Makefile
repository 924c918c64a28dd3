# The README's two commands: `make reproduce` and `make test`.
VENV   ?= .venv
CORES  ?= 2
CONFIG ?= config.yaml
PYTHON ?= python3
EXTRAS ?= test,bench,st,onnx,ko

export PATH := $(abspath $(VENV))/bin:$(PATH)
export HF_HUB_OFFLINE ?= 1

.PHONY: reproduce test lint profile clean

# Re-install whenever the project's dependencies change.
$(VENV)/.installed-$(EXTRAS): pyproject.toml
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q --upgrade pip
	$(VENV)/bin/python -m pip install -q -e '.[$(EXTRAS)]'
	touch $@

reproduce: $(VENV)/.installed-$(EXTRAS)
	snakemake --cores $(CORES) --configfile $(CONFIG)
	@python -c "import yaml,sys; e=yaml.safe_load(open('$(CONFIG)'))['experiment']; print(f'\nDone. Outputs: results/{e}/ (start with results/{e}/report.md or report.html) and figures/{e}/')"

test: $(VENV)/.installed-$(EXTRAS)
	python -m pytest -q

profile: $(VENV)/.installed-$(EXTRAS)
	toolgate profile --config $(CONFIG)

lint: $(VENV)/.installed-$(EXTRAS)
	snakemake --lint

clean:
	rm -rf results figures logs benchmarks .snakemake
