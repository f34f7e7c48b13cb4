# The two commands of the README: `make up` (a local federation) and `make test` (the whole suite).
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin

.PHONY: up test lint bench check-config clean sshd

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

up: $(BIN)/.installed
	$(BIN)/hmsproxy dev up

test: $(BIN)/.installed sshd lint
	$(BIN)/python -m pytest -q -rs

lint: $(BIN)/.installed
	$(BIN)/ruff check hmsproxy tests
	$(BIN)/ruff format --check hmsproxy tests

# The SSH-tunnel tests start a real OpenSSH server on loopback; install it where apt-get can.
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
sshd:
	@test -x /usr/sbin/sshd || ! command -v apt-get >/dev/null || \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q openssh-server || \
		($(SUDO) apt-get update -q && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q openssh-server) || \
		echo "warning: could not install openssh-server; the SSH tunnel tests will be skipped"

bench: $(BIN)/.installed
	$(BIN)/python -m tests.bench.bench_proxy

clean:
	rm -rf $(VENV) .state .pytest_cache
