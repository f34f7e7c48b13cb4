"""A real SparkSession altering an indexed table through the proxy: Spark rewrites the whole table
on every alter (ADD COLUMNS, a comment, SET TBLPROPERTIES, an INSERT's statistics), and all of that
keeps working with the index answering lookups; a rename or retype of the indexed column from a
client (Spark refuses those for Hive tables itself) is refused by the proxy, and the index still
answers lookups as a full scan would."""

from __future__ import annotations

import pytest
import thriftpy2.rpc
from thriftpy2.thrift import TException

from hmsproxy.clients.index_lookup import arrow_lookup
from hmsproxy.clients.spark import lookup, sql
from hmsproxy.protocol import idl
from tests.spark.test_index_rebuild_spark import DAYS, full_scan, make_events, rows_of, states

pytestmark = pytest.mark.spark


def assert_lookups_answer_as_a_full_scan(spark, proxy, table: str) -> None:
    names = [f.name for f in spark.table(table).schema]
    for user in (3, 4, 39):
        expected = full_scan(spark, table, f"user_id = {user}")
        assert expected
        assert rows_of(lookup(spark, table, user_id=user)) == expected
        # pyarrow reads the files, which hold only the columns there were when they were written:
        # a column added since is null, as Spark reads it.
        read = arrow_lookup(proxy.uri, table, {"user_id": user}).table.to_pylist()
        assert sorted(tuple(row.get(n) for n in names) for row in read) == expected


def test_spark_alters_an_indexed_table_and_a_client_cannot_retype_or_rename_its_indexed_column(spark, proxy):
    table = make_events(spark, "default")
    db, name = table.split(".")
    try:
        sql(spark, f"CREATE INDEX user_idx ON TABLE {table} (user_id) AS 'COMPACT'")  # built right away
        assert set(states(spark, table).values()) == {"fresh"}

        spark.sql(f"ALTER TABLE {table} SET TBLPROPERTIES ('owner.team'='growth')")
        spark.sql(f"ALTER TABLE {table} ALTER COLUMN user_id COMMENT 'who'")
        spark.sql(f"ALTER TABLE {table} ADD COLUMNS (channel STRING)")
        assert [f.name for f in spark.table(table).schema] == ["user_id", "action", "amount", "channel", "ds"]
        assert set(states(spark, table).values()) == {"fresh"}  # the files are as they were built from
        assert_lookups_answer_as_a_full_scan(spark, proxy, table)

        client = thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", proxy.port, timeout=60_000)
        try:
            for new_name, new_type, message in (
                ("uid", "bigint", "user_id would be dropped or renamed"),
                ("user_id", "string", "user_id would change type from bigint to string"),
            ):
                t = client.get_table(db, name)
                t.sd.cols[0].name, t.sd.cols[0].type = new_name, new_type
                with pytest.raises(TException, match=f"index user_idx: {message}.*DROP INDEX user_idx ON {table}"):
                    client.alter_table(db, name, t)
        finally:
            client.close()

        spark.catalog.refreshTable(table)
        assert spark.table(table).schema["user_id"].dataType.simpleString() == "bigint"
        spark.sql(f"INSERT INTO {table} PARTITION (ds='{DAYS[0]}') VALUES (3, 'late', 1.5, 'web')")  # and its statistics
        assert states(spark, table)[f"ds={DAYS[0]}"] == "stale"
        assert "late" in {r[1] for r in full_scan(spark, table, "user_id = 3")}
        assert_lookups_answer_as_a_full_scan(spark, proxy, table)
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {table}")
