# The two commands of the README: `make up` (a local federation) and `make test` (the whole suite).
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin

.PHONY: up test bench check-config clean

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

up: $(BIN)/.installed
	$(BIN)/hmsproxy dev up

test: $(BIN)/.installed
	$(BIN)/python -m pytest -q -rs

bench: $(BIN)/.installed
	$(BIN)/python -m tests.bench.bench_proxy

clean:
	rm -rf $(VENV) .state .pytest_cache
