"""A dependent table's partitions through the proxy, for every partition read a client makes: a
Thrift client's, Hive 2.3's CLI (`SHOW PARTITIONS`) and `hmsproxy lookup`. They are the published
partitions as the proxy records them, in the shape of a partitioned view's (Hive's CREATE VIEW …
PARTITIONED ON); the reads that can't be answered from values are refused with the method's
declared exception naming the table as a dependent table."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlparse

import pytest
from thriftpy2.thrift import TException

from hmsproxy.clients.proxy import HmsProxyError
from hmsproxy.protocol import idl
from tests.integration.test_dependent_tables import hourly

hive = idl.hive


@pytest.fixture
def published(proxy_client, run, tag):
    """default.pev_<tag> (days 1-4 x hours 1-2) and default.pdaily_<tag> publishing days 1, 2 and 3."""
    ev, daily = f"pev_{tag}", f"pdaily_{tag}"
    hourly(proxy_client, "default", ev, range(1, 5), range(1, 3))
    run(f"CREATE DEPENDENT TABLE {daily} PARTITIONED BY (ds string) DEPENDS ON TABLE {ev}")
    run(f"ALTER TABLE {daily} ADD PARTITION (ds='1') PARTITION (ds='2') PARTITION (ds='3')")
    yield ev, daily
    run(f"DROP DEPENDENT TABLE IF EXISTS {daily}")
    proxy_client.drop_table("default", ev, True)


def test_every_partition_read_answers_the_published_partitions(proxy_client, published):
    ev, daily = published
    view = proxy_client.get_table("default", daily)
    assert view.tableType == "VIRTUAL_VIEW"
    assert [(k.name, k.type) for k in view.partitionKeys] == [("ds", "string")]  # partitioned, as Hive's views can be
    assert [c.name for c in view.sd.cols] == ["key", "value"]

    assert proxy_client.get_partition_names("default", daily, -1) == ["ds=1", "ds=2", "ds=3"]
    assert proxy_client.get_partition_names("default", daily, 2) == ["ds=1", "ds=2"]
    assert proxy_client.get_partition_names_ps("default", daily, ["2"], -1) == ["ds=2"]
    everything = proxy_client.get_partitions("default", daily, -1)
    assert [p.values for p in everything] == [["1"], ["2"], ["3"]]
    first = everything[0]
    assert (first.dbName, first.tableName, first.sd.location) == ("default", daily, None)
    assert [c.name for c in first.sd.cols] == ["key", "value"]
    assert first.parameters["hmsproxy.dependent.depends-on"] == f"default.{ev}"
    assert [p.values for p in proxy_client.get_partitions_with_auth("default", daily, -1, "alice", [])] == [["1"], ["2"], ["3"]]
    assert [p.values for p in proxy_client.get_partitions_ps("default", daily, ["3"], -1)] == [["3"]]
    assert [p.values for p in proxy_client.get_partitions_ps_with_auth("default", daily, [""], -1, "alice", [])] == [["1"], ["2"], ["3"]]
    # Spark's pushed-down filters, Hive's filter language.
    assert [p.values for p in proxy_client.get_partitions_by_filter("default", daily, 'ds = "2"', -1)] == [["2"]]
    assert [p.values for p in proxy_client.get_partitions_by_filter("default", daily, '(ds >= "2" and ds <> "3") or ds = "1"', -1)] == [
        ["1"],
        ["2"],
    ]
    assert [p.values for p in proxy_client.get_partitions_by_filter("default", daily, 'ds like "[23]"', -1)] == [["2"], ["3"]]
    assert proxy_client.get_num_partitions_by_filter("default", daily, 'ds in ("1", "4")') == 1
    assert [p.values for p in proxy_client.get_partitions_by_names("default", daily, ["ds=3", "ds=4"])] == [["3"]]
    assert proxy_client.get_partition("default", daily, ["2"]).values == ["2"]
    assert proxy_client.get_partition_with_auth("default", daily, ["2"], "alice", []).values == ["2"]
    assert proxy_client.get_partition_by_name("default", daily, "ds=1").values == ["1"]

    # Day 4 has data in the table it depends on but is not published: not a partition of the view.
    with pytest.raises(TException) as missing:
        proxy_client.get_partition("default", daily, ["4"])
    assert type(missing.value).__name__ == "NoSuchObjectException"
    assert f"default.{daily} is a dependent table with no published partition ds=4" in missing.value.message
    with pytest.raises(TException) as bad_filter:
        proxy_client.get_partitions_by_filter("default", daily, 'hr = "1"', -1)
    assert type(bad_filter.value).__name__ == "MetaException" and "hr is not a partition column" in bad_filter.value.message
    # Read only from values alone: the rest are refused with a declared exception saying what the table is.
    with pytest.raises(TException) as refused:
        proxy_client.get_partitions_pspec("default", daily, -1)
    assert type(refused.value).__name__ == "MetaException"
    assert f"default.{daily} is a dependent table (a view hmsproxy serves over default.{ev})" in refused.value.message


def test_hmsproxy_sql_shows_the_published_partitions(run, published):
    ev, daily = published
    assert run(f"SHOW PARTITIONS {daily}") == [{"partition": f"ds={d}"} for d in ("1", "2", "3")]
    assert run(f"SHOW PARTITIONS default.{daily} PARTITION (ds='2')") == [{"partition": "ds=2"}]
    with pytest.raises(
        HmsProxyError, match=rf"default.{ev} is not a dependent table \(not one of hmsproxy's objects: run the statement in Spark or Hive\)"
    ):
        run(f"SHOW PARTITIONS {ev}")


def test_the_hive_cli_shows_and_reads_the_published_partitions(hive_cli, proxy, proxy_client, published):
    ev, daily = published
    # A row in each hour of days 2 (published) and 4 (not): text files, Hive's ^A between fields.
    for ds, hr in [("2", "1"), ("2", "2"), ("4", "1")]:
        location = Path(urlparse(proxy_client.get_partition("default", ev, [ds, hr]).sd.location).path)
        location.mkdir(parents=True, exist_ok=True)
        (location / "part-0").write_text(f"k{ds}{hr}\x01{ds}{hr}\n")
    result = hive_cli(
        proxy.uri,
        f"SHOW PARTITIONS default.{daily};\nSHOW PARTITIONS default.{daily} PARTITION (ds='2');\n"
        # Reads with a partition filter: Hive expands the view over its source and prunes there.
        f"SELECT key, value, ds FROM default.{daily} WHERE ds='2';\n"
        f"SELECT key, value, ds FROM default.{daily} WHERE ds='4';\n"
        f"SELECT key, value, ds FROM default.{daily};\n"
        f"DESCRIBE EXTENDED default.{daily};\n",
    )
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    assert "FAILED" not in result.stderr and result.stderr.count("Time taken") == 6, result.stderr[-3000:]
    shown = [line.strip() for line in result.stdout.splitlines() if line.startswith("ds=")]  # the CLI echoes statements too
    assert shown == ["ds=1", "ds=2", "ds=3", "ds=2"], result.stdout
    # Day 2's rows twice (the filtered read and the whole one); day 4 is not published, so never.
    rows = [line.split("\t") for line in result.stdout.splitlines() if re.match(r"k\d+\t", line)]
    assert rows == [["k21", "21", "2"], ["k22", "22", "2"]] * 2, result.stdout
    # DESCRIBE EXTENDED prints the table's parameters: the published partitions and their source among them.
    assert f"hmsproxy.dependent.published=ds=1, ds=2, ds=3 <- default.{ev}" in result.stdout, result.stdout


def lookup(proxy, table: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "hmsproxy.cli", "lookup", table, "--where", "key=a", "--uri", proxy.uri],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_lookup_on_a_dependent_table_says_where_to_look(proxy, published):
    ev, daily = published
    out = lookup(proxy, f"default.{daily}")
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        f"hmsproxy lookup: default.{daily} is a dependent table (a view over default.{ev}): "
        f"look the rows up in default.{ev}, with --where ds=… for a published partition"
    ], out.stderr

    # Its source is a text table: lookup says what it needs (it rewrites nothing).
    text = lookup(proxy, f"default.{ev}")
    assert text.returncode == 1
    assert text.stderr.strip().splitlines() == [
        f"hmsproxy lookup: table default.{ev} is stored as org.apache.hadoop.mapred.TextInputFormat; a lookup reads Parquet and ORC files"
    ], text.stderr
