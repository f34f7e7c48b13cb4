"""Shared fixtures: real Hive metastores (and, on demand, the process's SparkSession).

Real metastores come from :mod:`hmsproxy.dev.metastore` (Hive 2.3 from pyspark's
jars, Derby in a temp dir). Starting one takes ~2-4 s, so:

* ``metastores`` -- two metastores shared by the whole session (started in
  parallel, stopped at the end). Tests may stop()/start()/restart() them (the
  port and data survive), but must leave them running, and should clean up
  databases they create or use unique names.
* ``metastore_factory`` -- ``metastore_factory(count=1, **kwargs)`` starts
  extra metastores (in parallel) when a test or a module-scoped fixture needs
  its own; they are stopped at session end (or earlier by the caller).
* ``private_metastore`` -- one fresh metastore for a single test, stopped
  after it. Use it for anything destructive.
* ``stoppable_metastore`` -- one metastore shared by the tests that SIGSTOP
  one (tests/support/stopped.py's ``Stopper`` resumes it when their block
  ends, so each finds it answering).
* ``spark_factory`` -- ``spark_factory(metastore_uri, warehouse_dir=None)``
  builds the process's one SparkSession (see tests/support/spark.py: only one
  SparkSession per process can exist) and stops it at session end.

Reusable pattern for another "real thing per session" fixture::

    @pytest.fixture(scope="session")
    def my_stack(metastore_factory):
        (hms,) = metastore_factory(1, name="my_stack")
        yield hms          # stopped by metastore_factory at session end
"""

from __future__ import annotations

import pytest

from hmsproxy.dev.metastore import LocalMetastore, start_metastores

# The proxy / federation / Spark-through-the-proxy fixtures built on `metastores`.
pytest_plugins = [
    "tests.support.fixtures",
    "tests.support.postgres",
    "tests.support.hive_cli",
    "tests.support.mixed_versions",
    "tests.support.ha_pair",
    "tests.support.kdc",
    "tests.support.s3",
    "tests.support.hdfs",
    "tests.support.storage_stack",
    "tests.support.iceberg_rest",
    "tests.support.glue",
]


def _say(msg: str) -> None:
    # Visible with `pytest -s`; pytest captures it otherwise.
    print(f"[devstack] {msg}")


@pytest.fixture(scope="session")
def metastore_factory(tmp_path_factory):
    """``start(count=1, *, name=None, **LocalMetastore kwargs) -> list[LocalMetastore]``."""
    started: list[LocalMetastore] = []
    counter = 0

    def start(count: int = 1, *, name: str | None = None, **kwargs) -> list[LocalMetastore]:
        nonlocal counter
        base = name or "hms"
        names = []
        for _ in range(count):
            names.append(f"{base}{counter}")
            counter += 1
        root = tmp_path_factory.mktemp(base, numbered=True)
        kwargs.setdefault("log", _say)
        result = start_metastores(count, root, names=names, **kwargs)
        started.extend(result)
        return result

    yield start
    for ms in started:
        ms.stop()


@pytest.fixture(scope="session")
def metastores(metastore_factory) -> list[LocalMetastore]:
    """Two running metastores for the whole session: [primary, federated]."""
    return metastore_factory(2, name="session_hms")


@pytest.fixture
def private_metastore(metastore_factory) -> LocalMetastore:
    """A fresh metastore only this test uses; stopped when the test ends."""
    (ms,) = metastore_factory(1, name="private_hms")
    yield ms
    ms.stop()


@pytest.fixture(scope="session")
def stoppable_metastore(metastore_factory) -> LocalMetastore:
    """The breaker tests' metastore to SIGSTOP: one JVM start for them all, not a private one each."""
    (ms,) = metastore_factory(1, name="stoppable_hms")
    return ms


@pytest.fixture(scope="session")
def spark_factory(tmp_path_factory):
    """``spark_factory(metastore_uri, warehouse_dir=None, app_name=...) -> SparkSession``.

    Only one SparkSession per process can exist: the first call builds it,
    later calls with the same URI return it, a different URI raises.
    """
    from tests.support.spark import make_spark

    made: list = []

    def factory(metastore_uri: str, warehouse_dir=None, app_name: str = "hmsproxy-tests"):
        if warehouse_dir is None:
            warehouse_dir = tmp_path_factory.mktemp("spark-warehouse")
        session = make_spark(metastore_uri, warehouse_dir, app_name=app_name)
        if not made:
            made.append(session)
        return session

    yield factory
    for session in made:
        session.stop()
