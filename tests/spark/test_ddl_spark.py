"""hmsproxy.clients.spark.sql: hmsproxy's statements from a real SparkSession, everything else to Spark."""

from __future__ import annotations

import uuid

import pytest

from hmsproxy.clients.proxy import HmsProxyError
from hmsproxy.clients.spark import sql

pytestmark = pytest.mark.spark


def test_show_remote_databases_is_a_dataframe(spark, proxy, metastores):
    db = f"spark_{uuid.uuid4().hex[:8]}"
    created = sql(
        spark, f"CREATE REMOTE DATABASE {db} CONNECTED TO sales WITH DBPROPERTIES ('hive.metastore.uris'='{metastores[1].uri}')"
    ).collect()
    try:
        assert created[0]["result"].startswith(f"created remote database '{db}'")
        df = sql(spark, "SHOW REMOTE DATABASES")
        assert df.columns == ["database_name", "remote_database", "via", "owner", "created_at"]
        assert all(f.dataType.typeName() == "string" for f in df.schema.fields)
        rows = {r["database_name"]: r for r in df.collect()}
        assert rows[db]["remote_database"] == "sales"
        assert rows[db]["owner"] == spark.sparkContext.sparkUser()
        assert proxy.handler.features.get("remotes").repo.get_database(db).owner == spark.sparkContext.sparkUser()
    finally:
        sql(spark, f"DROP REMOTE DATABASE IF EXISTS {db}")
    assert db not in {r["database_name"] for r in sql(spark, "SHOW REMOTE DATABASES").collect()}


def test_remote_table_goes_to_sparks_current_database(spark, proxy, metastores):
    t = f"spark_{uuid.uuid4().hex[:8]}"
    current = spark.catalog.currentDatabase()
    # No such table over there: the link is refused when made (a typo links to nothing) ...
    with pytest.raises(HmsProxyError, match=rf"has no table '{current}.{t}'"):
        sql(spark, f"CREATE REMOTE TABLE {t} WITH TBLPROPERTIES ('hive.metastore.uris'='{metastores[1].uri}')")
    # ... unless the statement asks for no check: only the names are under test here.
    sql(spark, f"CREATE REMOTE TABLE {t} WITH TBLPROPERTIES ('hive.metastore.uris'='{metastores[1].uri}', 'hmsproxy.remote.check'='false')")
    try:
        [row] = [r for r in sql(spark, f"SHOW REMOTE TABLES IN {current}").collect() if r["table_name"] == t]
        assert (row["database_name"], row["remote_database"], row["remote_table"]) == (current, current, t)
        described = {r["property"]: r["value"] for r in sql(spark, f"DESCRIBE REMOTE TABLE {t}").collect()}
        assert described["hive.metastore.uris"] == metastores[1].uri
    finally:
        sql(spark, f"DROP REMOTE TABLE {current}.{t}")


def test_other_statements_go_to_spark(spark):
    assert sql(spark, "SELECT 1 AS x").collect()[0]["x"] == 1
    assert "default" in {r[0] for r in sql(spark, "SHOW DATABASES").collect()}


def test_errors_reach_the_caller(spark):
    with pytest.raises(HmsProxyError, match="remote database 'no_such_remote' does not exist"):
        sql(spark, "DROP REMOTE DATABASE no_such_remote")
