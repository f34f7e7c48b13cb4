"""Operations seen from a real SparkSession: metrics, audit, live reload, TLS."""

from __future__ import annotations

import getpass
import json
import os
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from hmsproxy.app import load_config
from hmsproxy.config.model import AuditConfig, TlsConfig
from hmsproxy.ops.reload import reload_config
from tests.support.federation import federation_yaml
from tests.support.ops import handler_metric, make_test_certs
from tests.support.served import served

pytestmark = pytest.mark.spark

REPO_ROOT = Path(__file__).resolve().parents[2]


def databases(spark) -> set[str]:
    return {r[0] for r in spark.sql("SHOW DATABASES").collect()}


def test_metrics_count_the_calls_spark_makes(spark, proxy, federated_dbs):
    h = proxy.handler
    waggle_before = handler_metric(h, "hmsproxy_requests_total", backend="waggle", outcome="ok")
    fanout_before = handler_metric(h, "hmsproxy_requests_total", backend="*")
    spark.sql("SHOW TABLES IN waggle_sales").collect()  # get_database + table listing on the federated metastore
    databases(spark)  # a fan-out
    assert handler_metric(h, "hmsproxy_requests_total", backend="waggle", outcome="ok") >= waggle_before + 2
    assert handler_metric(h, "hmsproxy_requests_total", backend="*") >= fanout_before + 1
    assert handler_metric(h, "hmsproxy_request_duration_seconds_count", method="get_database", backend="waggle") >= 1
    assert handler_metric(h, "hmsproxy_client_connections") >= 1  # Spark's connection


def test_audit_lines_for_a_spark_session(spark, proxy_config, federated_dbs, tmp_path):
    log_file = tmp_path / "audit.log"
    with proxy_config(lambda base: replace(base, audit=AuditConfig(enabled=True, file=str(log_file)))):
        spark.sql("SHOW TABLES IN waggle_sales").collect()
    records = [json.loads(line) for line in log_file.read_text().splitlines()]
    mine = [r for r in records if r["method"] == "get_database" and r["db"] == "waggle_sales"]
    assert mine, records
    r = mine[0]
    assert (r["backend"], r["outcome"], r["error"]) == ("waggle", "ok", None)
    assert r["client"].startswith("127.0.0.1:")
    assert r["user"] == getpass.getuser()  # Spark's Hive client sends set_ugi with the OS user
    assert "sales" in r["args"]  # the name as sent to the metastore, prefix removed


def test_reload_swaps_a_mapping_under_an_open_spark_session(spark, proxy, default_config, metastores, federated_orders, tmp_path):
    assert "waggle_sales" in databases(spark)
    connections = handler_metric(proxy.handler, "hmsproxy_client_connections")
    cfg = tmp_path / "hmsproxy.yml"
    values = dict(primary_uri=metastores[0].uri, federated_uri=metastores[1].uri)
    cfg.write_text(federation_yaml(prefix="dw_", **values))
    try:
        assert reload_config(proxy.handler, lambda: load_config(cfg)) is True
        names = databases(spark)
        assert "dw_sales" in names and "waggle_sales" not in names
        # The new prefix serves the federated "sales" tables (orders, from federated_orders) under dw_sales.
        backend = metastores[1].client()
        try:
            expected = set(backend.get_all_tables("sales"))
        finally:
            backend.close()
        rows = [r for r in spark.sql("SHOW TABLES IN dw_sales").collect() if not r.isTemporary]  # other tests' temp views
        assert "orders" in expected
        assert {r.tableName for r in rows} == expected
        assert {r.namespace for r in rows} == {"dw_sales"}

        cfg.write_text(federation_yaml(prefix="dw_", **values) + "    latency: soon\n")
        assert reload_config(proxy.handler, lambda: load_config(cfg)) is False
        assert "dw_sales" in databases(spark)  # the old snapshot keeps serving
        # Spark kept its connection through both reloads.
        assert handler_metric(proxy.handler, "hmsproxy_client_connections") == connections
    finally:
        proxy.handler.apply_config(default_config)
    assert "waggle_sales" in databases(spark)


TLS_SPARK_SCRIPT = textwrap.dedent(
    """
    import json, sys
    from tests.support.spark import make_spark

    uri, warehouse, truststore, password = sys.argv[1:5]
    spark = make_spark(uri, warehouse, app_name="tls-spark-check", extra_conf={
        "spark.hadoop.hive.metastore.use.SSL": "true",
        "spark.hadoop.hive.metastore.truststore.path": truststore,
        "spark.hadoop.hive.metastore.truststore.password": password,
    })
    try:
        spark.sql("CREATE DATABASE tls_spark_db")
        dbs = [r[0] for r in spark.sql("SHOW DATABASES").collect()]
        print("RESULT " + json.dumps({"dbs": dbs}), flush=True)
    finally:
        spark.stop()
    """
)


def test_spark_over_tls(metastores, default_config, federated_dbs, tmp_path):
    """A Hive 2.3 client with hive.metastore.use.SSL and a truststore, in a subprocess
    (this process's one SparkSession points at the plain proxy)."""
    certs = make_test_certs(tmp_path / "certs")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    with served(default_config, tls=TlsConfig(str(certs.cert), str(certs.key))) as server:
        proc = subprocess.run(
            [
                sys.executable,
                "-c",
                TLS_SPARK_SCRIPT,
                server.uri,
                str(tmp_path / "warehouse"),
                str(certs.truststore),
                certs.truststore_password,
            ],
            capture_output=True,
            text=True,
            timeout=600,
            cwd=tmp_path,
            env=env,
        )
    results = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert proc.returncode == 0 and results, f"stdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-6000:]}"
    dbs = json.loads(results[-1][len("RESULT ") :])["dbs"]
    assert "tls_spark_db" in dbs and "waggle_sales" in dbs
    client = metastores[0].client()  # really created on the primary, through TLS
    try:
        assert "tls_spark_db" in client.get_all_databases()
        client.drop_database("tls_spark_db", True, True)
    finally:
        client.close()
