# The two commands of the README: `make up` (a local federation) and `make test` (the whole suite).
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin

.PHONY: up test lint bench check-config clean sshd postgresql

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

up: $(BIN)/.installed
	$(BIN)/hmsproxy dev up --demo

test: $(BIN)/.installed sshd postgresql lint
	$(BIN)/python -m pytest -q -rs

lint: $(BIN)/.installed
	$(BIN)/ruff check hmsproxy tests
	$(BIN)/ruff format --check hmsproxy tests

# Tests start their own sshd and PostgreSQL from Debian's packages; install them where apt-get can.
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
APT_INSTALL := $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q
# $(call apt_package,PACKAGE,CHECK,WHO NEEDS IT): install PACKAGE unless CHECK succeeds.
define apt_package
	@$(2) || ! command -v apt-get >/dev/null || $(APT_INSTALL) $(1) || \
		($(SUDO) apt-get update -q && $(APT_INSTALL) $(1)) || \
		echo "warning: could not install $(1); $(3) will skip (and fail with CI=true)"
endef

sshd:
	$(call apt_package,openssh-server,test -x /usr/sbin/sshd,the SSH tunnel tests)

postgresql:
	$(call apt_package,postgresql,ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1,the PostgreSQL store tests)

bench: $(BIN)/.installed
	$(BIN)/python -m tests.bench.bench_proxy

clean:
	rm -rf $(VENV) .state .pytest_cache
