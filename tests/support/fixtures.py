"""Session-wide fixtures: hmsproxy in front of the real metastores, and Spark through it.

One proxy serves the whole test session; a test that needs another federation
swaps the config snapshot (as a live reload would) and the fixture puts the
default back. Spark gets one session per test process, pointed at the proxy.
"""

from __future__ import annotations

import contextlib

import pytest

from hmsproxy.protocol import idl
from tests.support.federation import prefixed_config, stored_in
from tests.support.served import served

#: proxy_client's socket timeout: a call the proxy holds longer ends in the client with a timeout.
CLIENT_TIMEOUT_S = 60


@pytest.fixture(scope="session")
def default_config(metastores, tmp_path_factory):
    config = prefixed_config(metastores[0].uri, metastores[1].uri)
    # The proxy's store (remotes, ...) lives in the session's temp dir, never in the repo's .state/.
    return stored_in(config, tmp_path_factory.mktemp("store"))


@pytest.fixture(scope="session")
def proxy(default_config):
    with served(default_config) as server:
        yield server


@pytest.fixture
def proxy_config(proxy, default_config):
    """`with proxy_config(lambda base: new_config): ...` serves `new_config` inside the block."""

    @contextlib.contextmanager
    def use(make):
        proxy.handler.apply_config(make(default_config))
        try:
            yield proxy.handler.config
        finally:
            proxy.handler.apply_config(default_config)

    return use


@pytest.fixture
def proxy_client(proxy):
    """A plain thriftpy2 metastore client connected to the proxy."""
    import thriftpy2.rpc

    client = thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", proxy.port, timeout=CLIENT_TIMEOUT_S * 1000)
    yield client
    client.close()


def backend_client(metastore):
    return metastore.client()


@pytest.fixture(scope="session")
def federated_dbs(metastores, tmp_path_factory):
    """Databases that exist only on the federated metastore: sales (writable) and hr (not)."""
    root = tmp_path_factory.mktemp("federated-warehouse")
    client = metastores[1].client()
    try:
        existing = set(client.get_all_databases())
        for name in ("sales", "hr"):
            if name not in existing:
                client.create_database(
                    idl.hive.Database(
                        name=name,
                        description=f"{name} on the federated metastore",
                        locationUri=(root / f"{name}.db").as_uri(),
                        parameters={},
                    )
                )
    finally:
        client.close()
    return ("sales", "hr")


@pytest.fixture(scope="session")
def federated_orders(spark, federated_dbs):
    """waggle_sales.orders, written through the proxy into the federated metastore's whitelisted db."""
    spark.sql("DROP TABLE IF EXISTS waggle_sales.orders")
    spark.sql("CREATE TABLE waggle_sales.orders (customer_id INT, amount INT) PARTITIONED BY (ds STRING) STORED AS PARQUET")
    spark.sql("INSERT INTO waggle_sales.orders PARTITION (ds='2026-11-01') VALUES (1, 10), (1, 20)")
    spark.sql("INSERT INTO waggle_sales.orders PARTITION (ds='2026-11-02') VALUES (2, 5)")
    return "waggle_sales.orders"


@pytest.fixture(scope="session")
def spark(proxy, tmp_path_factory):
    from tests.support.spark import make_spark

    session = make_spark(proxy.uri, tmp_path_factory.mktemp("spark-warehouse"))
    yield session
    session.stop()


@pytest.fixture(scope="session")
def spark_cluster(tmp_path_factory):
    """A standalone Spark master and two workers from pyspark's wheel (tests/support/spark_cluster.py),
    shared by the session's tests that run jobs or applications on a cluster."""
    from tests.support.spark_cluster import start_cluster

    cluster = start_cluster(tmp_path_factory.mktemp("spark-cluster"), workers=2)
    yield cluster
    cluster.stop()
