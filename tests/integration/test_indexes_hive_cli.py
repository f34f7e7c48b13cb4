"""The real Hive 2.3 CLI's index statements through the proxy, beyond CREATE/SHOW/DROP
(test_indexes.py): its own ALTER INDEX … REBUILD refused before it writes anything, with the
commands that build; DESCRIBE FORMATTED of an index table; CREATE INDEX's LOCATION and
TBLPROPERTIES clauses."""

from __future__ import annotations

import pytest
from thriftpy2.thrift import TException

from hmsproxy.features.indexes.compact import INDEX_OF
from hmsproxy.files.storage import ArrowStorage

#: Every statement runs, failed or not, so one CLI start (~10 s) covers a whole scenario.
KEEP_GOING = "set hive.cli.errors.ignore=true;\n"


def output(result) -> str:
    return result.stdout + result.stderr


def files_under(location: str) -> list[str]:
    """Every file below `location`, hidden ones included (Hive's staging directories are hidden)."""
    storage = ArrowStorage()
    found, todo = [], [location.rstrip("/")]
    while todo:
        here = todo.pop()
        for entry in storage.list(here):
            (todo if entry.is_dir else found).append(f"{here}/{entry.name}")
    return sorted(found)


@pytest.fixture
def cli_db(proxy_client, tag, tmp_path):
    db = f"hcrb_{tag}"
    yield db, (tmp_path / db).as_uri()
    proxy_client.drop_database(db, True, True)


def test_the_hive_cli_rebuild_is_refused_before_it_writes_and_other_index_statements_still_run(hive_cli, proxy, proxy_client, cli_db):
    db, location = cli_db
    index_table = f"{db}__events_user_idx__"
    script = f"""{KEEP_GOING}
CREATE DATABASE {db} LOCATION '{location}';
CREATE TABLE {db}.events (id INT, user_id BIGINT) PARTITIONED BY (ds STRING) STORED AS PARQUET;
INSERT INTO {db}.events PARTITION (ds='1') VALUES (1, 42), (2, 43);
CREATE INDEX user_idx ON TABLE {db}.events (user_id) AS 'COMPACT' WITH DEFERRED REBUILD;
ALTER INDEX user_idx ON {db}.events REBUILD;
ALTER INDEX user_idx ON {db}.events PARTITION (ds='1') REBUILD;
ALTER INDEX user_idx ON {db}.events SET IDXPROPERTIES ('team'='growth');
USE {db};
SHOW INDEX ON events;
DESCRIBE FORMATTED {index_table};
DESCRIBE INDEX user_idx ON events;
ALTER INDEX user_idx ON events PARTITION (ds='1') DROP PARTITION;
"""
    result = hive_cli(proxy.uri, script)
    text = output(result)
    failed = [line for line in text.splitlines() if line.startswith("FAILED:")]
    # Hive 2.3's grammar has neither DESCRIBE INDEX nor ALTER INDEX … DROP PARTITION (docs/indexes.md).
    assert len([line for line in failed if line.startswith("FAILED: ParseException")]) == 2, text[-4000:]
    refusals = [line for line in failed if not line.startswith("FAILED: ParseException")]
    expected = f"hmsproxy: ALTER INDEX user_idx ON {db}.events REBUILD is not run by Hive through hmsproxy"
    # Both rebuilds, and nothing else, failed, each naming the commands that build.
    assert len(refusals) == 2 and all(expected in line for line in refusals), text[-4000:]
    assert all(f"hmsproxy job rebuild-index {db}.events.user_idx" in line for line in refusals)
    assert f'hmsproxy sql -e "ALTER INDEX user_idx ON {db}.events' in refusals[0]
    # Refused at compile: no MapReduce job, nothing loaded, no index partition made, no file written.
    loads = [line for line in text.splitlines() if line.startswith("Loading data to table")]
    assert loads == [f"Loading data to table {db}.events partition (ds=1)"]  # the INSERT's, none into the index
    assert text.count("Launching Job 1 out of") == 1
    assert proxy_client.get_partition_names(db, index_table, -1) == []
    assert files_under(proxy_client.get_table(db, index_table).sd.location) == []
    # The statements around it: SET IDXPROPERTIES reached the proxy's record, SHOW INDEX lists it,
    # DESCRIBE FORMATTED shows the index table as Hive's INDEX_TABLE with its columns.
    assert proxy_client.get_index_by_name(db, "events", "user_idx").parameters["team"] == "growth"
    shown = [[c.strip() for c in line.split("\t")] for line in result.stdout.splitlines()]
    assert ["user_idx", "events", "user_id", index_table, "compact"] in [row[:5] for row in shown]
    described = {row[0].rstrip(":"): row[1] for row in shown if len(row) > 1 and row[0]}
    assert described["Table Type"] == "INDEX_TABLE"
    assert described["user_id"] == "bigint" and described["_bucketname"] == "string" and described["_offsets"] == "array<bigint>"
    assert described["ds"] == "string"  # partitioned like the base table

    # An unpartitioned base table, and DROP INDEX right after a refused rebuild on one connection.
    script = f"""{KEEP_GOING}
CREATE TABLE {db}.flat (id INT, user_id BIGINT) STORED AS PARQUET;
CREATE INDEX flat_idx ON TABLE {db}.flat (user_id) AS 'COMPACT' WITH DEFERRED REBUILD;
ALTER INDEX flat_idx ON {db}.flat REBUILD;
DROP INDEX flat_idx ON {db}.flat;
DROP INDEX user_idx ON {db}.events;
"""
    result = hive_cli(proxy.uri, script)
    text = output(result)
    refusals = [line for line in text.splitlines() if line.startswith("FAILED:")]
    assert len(refusals) == 1 and f"ALTER INDEX flat_idx ON {db}.flat REBUILD is not run by Hive" in refusals[0], text[-4000:]
    assert proxy_client.get_index_names(db, "flat", -1) == [] and proxy_client.get_index_names(db, "events", -1) == []
    assert set(proxy_client.get_all_tables(db)) == {"events", "flat"}


def test_create_index_location_and_tblproperties_from_the_hive_cli(hive_cli, proxy, proxy_client, cli_db):
    db, location = cli_db
    where = f"{location}/elsewhere/user_idx"
    script = f"""
CREATE DATABASE {db} LOCATION '{location}';
CREATE TABLE {db}.events (id INT, user_id BIGINT) PARTITIONED BY (ds STRING) STORED AS PARQUET;
CREATE INDEX user_idx ON TABLE {db}.events (user_id) AS 'COMPACT' WITH DEFERRED REBUILD
  LOCATION '{where}' TBLPROPERTIES ('owner_team'='search') COMMENT 'by user';
"""
    result = hive_cli(proxy.uri, script)
    assert result.returncode == 0, output(result)[-4000:]
    made = proxy_client.get_table(db, f"{db}__events_user_idx__")
    assert made.sd.location.rstrip("/").endswith("/elsewhere/user_idx")
    assert made.parameters["owner_team"] == "search"
    # Hive 2.3 keeps an index's COMMENT on the index, not on its table (SHOW INDEX's comment column).
    assert proxy_client.get_index_by_name(db, "events", "user_idx").parameters["comment"] == "by user"
    assert made.parameters[INDEX_OF] == f"{db}.events.user_idx" and made.tableType == "INDEX_TABLE"

    # A Thrift client that reads an index and then its table is served; one that sends exactly the
    # three calls Hive's rebuild compiles with is refused like Hive (docs/indexes.md).
    proxy_client.get_index_by_name(db, "events", "user_idx")
    assert proxy_client.get_table(db, made.tableName).tableName == made.tableName
    assert proxy_client.get_index_names(db, "events", -1) == ["user_idx"]  # any other call ends the sequence
    assert proxy_client.get_table(db, "events").tableName == "events"
    proxy_client.get_index_by_name(db, "events", "user_idx")
    proxy_client.get_table(db, made.tableName)
    with pytest.raises(TException, match="ALTER INDEX user_idx ON .* REBUILD is not run by Hive"):
        proxy_client.get_table(db, "events")
    assert proxy_client.get_table(db, "events").tableName == "events"  # only that call
