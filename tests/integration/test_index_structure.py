"""Tables that change under an index, through the proxy from a plain Thrift client and the real
Hive 2.3 CLI: dropping, renaming or retyping an indexed column, or retyping a partition key, is
refused with a message naming the index and the DROP INDEX to run first; adding a column,
comments and properties go through; an index table's own columns can't be changed. Spark's side,
and lookups after a refusal: tests/spark/test_index_structure_spark.py."""

from __future__ import annotations

import pytest
from thriftpy2.thrift import TException

from hmsproxy.protocol import idl
from hmsproxy.testing import table

hive = idl.hive
COLUMNS = (("user_id", "bigint"), ("action", "string"))


def with_columns(t, *pairs: tuple[str, str]):
    t.sd.cols = [hive.FieldSchema(name=n, type=ty, comment=None) for n, ty in pairs]
    return t


def columns(t) -> list[tuple[str, str]]:
    return [(c.name, c.type) for c in t.sd.cols]


@pytest.fixture
def indexed(proxy_client, run, tag):
    """default.ev_<tag> (user_id, action) by ds, with index user_idx on user_id; dropped afterwards."""
    name = f"ev_{tag}"
    proxy_client.create_table(table("default", name, columns=COLUMNS, partition_keys=(("ds", "string"),)))
    run(f"CREATE INDEX user_idx ON TABLE {name} (user_id) AS 'COMPACT' WITH DEFERRED REBUILD")
    yield name
    proxy_client.drop_table("default", name, True)  # its index table goes with it


def test_a_thrift_client_cannot_drop_rename_or_retype_an_indexed_column(proxy_client, indexed):
    ev = indexed
    context = hive.EnvironmentContext(properties={})
    refused = {
        "user_id would be dropped or renamed": lambda t: proxy_client.alter_table(
            "default", ev, with_columns(t, ("uid", "bigint"), ("action", "string"))
        ),
        "user_id would change type from bigint to string": lambda t: proxy_client.alter_table_with_cascade(
            "default", ev, with_columns(t, ("user_id", "string"), ("action", "string")), True
        ),
        "index user_idx: user_id would be dropped or renamed": lambda t: proxy_client.alter_table_with_environment_context(
            "default", ev, with_columns(t, ("action", "string")), context
        ),
    }
    for message, alter in refused.items():
        with pytest.raises(TException, match=f"{message}.*run DROP INDEX user_idx ON default.{ev} first"):
            alter(proxy_client.get_table("default", ev))
    retyped_key = proxy_client.get_table("default", ev)
    retyped_key.partitionKeys[0].type = "date"
    with pytest.raises(TException, match="partition key ds would change type from string to date"):
        proxy_client.alter_table("default", ev, retyped_key)
    unchanged = proxy_client.get_table("default", ev)
    assert columns(unchanged) == list(COLUMNS) and unchanged.partitionKeys[0].type == "string"

    # What leaves the indexed column as it is goes through: a new column, a comment, a property.
    changed = with_columns(proxy_client.get_table("default", ev), *COLUMNS, ("amount", "double"))
    changed.sd.cols[0].comment = "who did it"
    changed.parameters["owner.team"] = "growth"
    proxy_client.alter_table("default", ev, changed)
    after = proxy_client.get_table("default", ev)
    assert columns(after) == [*COLUMNS, ("amount", "double")] and after.sd.cols[0].comment == "who did it"
    assert after.parameters["owner.team"] == "growth"
    assert proxy_client.get_index_names("default", ev, -1) == ["user_idx"]
    # An unindexed column may go (REPLACE COLUMNS without it).
    proxy_client.alter_table(
        "default", ev, with_columns(proxy_client.get_table("default", ev), ("user_id", "bigint"), ("amount", "double"))
    )
    assert columns(proxy_client.get_table("default", ev)) == [("user_id", "bigint"), ("amount", "double")]


def test_an_index_table_s_own_columns_are_the_index_s(proxy_client, indexed):
    index_table = f"default__{indexed}_user_idx__"
    before = proxy_client.get_table("default", index_table)
    widened = proxy_client.get_table("default", index_table)
    widened.sd.cols.append(hive.FieldSchema(name="extra", type="int", comment=None))
    with pytest.raises(TException, match=f"is the index table of index user_idx on default.{indexed}, whose columns the index sets"):
        proxy_client.alter_table("default", index_table, widened)
    retyped = proxy_client.get_table("default", index_table)
    retyped.sd.cols[0].type = "string"
    with pytest.raises(TException, match=f"lacks user_id bigint.*DROP INDEX user_idx ON default.{indexed}"):
        proxy_client.alter_table("default", index_table, retyped)
    assert columns(proxy_client.get_table("default", index_table)) == columns(before)
    renamed = proxy_client.get_table("default", index_table)
    renamed.tableName = f"{index_table}_renamed"
    with pytest.raises(TException, match=f"can't be renamed to default.{index_table}_renamed; DROP INDEX user_idx ON default.{indexed}"):
        proxy_client.alter_table("default", index_table, renamed)
    assert proxy_client.get_table("default", index_table).tableName == index_table
    # Its properties are the client's to change (a rebuild re-points it the same way).
    marked = proxy_client.get_table("default", index_table)
    marked.parameters["note"] = "kept"
    proxy_client.alter_table("default", index_table, marked)
    assert proxy_client.get_table("default", index_table).parameters["note"] == "kept"


def test_the_hive_cli_change_and_replace_columns_are_refused_add_columns_is_not(hive_cli, proxy, proxy_client, tag, tmp_path):
    db = f"hcst_{tag}"
    setup = f"""
CREATE DATABASE {db} LOCATION '{(tmp_path / db).as_uri()}';
CREATE TABLE {db}.events (id INT, user_id BIGINT) PARTITIONED BY (ds STRING) STORED AS PARQUET;
CREATE INDEX user_idx ON TABLE {db}.events (user_id) AS 'COMPACT' WITH DEFERRED REBUILD;
"""
    # hive.cli.errors.ignore: every statement runs, refused or not; each refusal is in the output.
    changes = f"""
set hive.cli.errors.ignore=true;
ALTER TABLE {db}.events CHANGE user_id uid BIGINT;
ALTER TABLE {db}.events CHANGE user_id user_id STRING CASCADE;
ALTER TABLE {db}.events REPLACE COLUMNS (id INT);
ALTER TABLE {db}.events PARTITION COLUMN (ds DATE);
ALTER TABLE {db}.events ADD COLUMNS (amount DOUBLE);
ALTER TABLE {db}.events CHANGE user_id user_id BIGINT COMMENT 'who';
ALTER TABLE {db}.events CHANGE id id2 INT;
"""
    try:
        result = hive_cli(proxy.uri, setup)
        assert result.returncode == 0, f"stdout:\n{result.stdout[-3000:]}\nstderr:\n{result.stderr[-3000:]}"
        result = hive_cli(proxy.uri, changes)
        output = result.stdout + result.stderr
        drop = f"run DROP INDEX user_idx ON {db}.events first"
        for message in (
            "user_id would be dropped or renamed",
            "user_id would change type from bigint to string",
            "partition key ds would change type from string to date",
        ):
            assert f"{message}): {drop}" in output, output[-4000:]
        assert output.count(drop) == 4, output[-4000:]  # CHANGE (rename), CHANGE (retype), REPLACE, PARTITION COLUMN
        after = proxy_client.get_table(db, "events")
        assert columns(after) == [("id2", "int"), ("user_id", "bigint"), ("amount", "double")]
        assert after.sd.cols[1].comment == "who" and after.partitionKeys[0].type == "string"
        assert proxy_client.get_index_names(db, "events", -1) == ["user_idx"]
    finally:
        proxy_client.drop_database(db, True, True)
