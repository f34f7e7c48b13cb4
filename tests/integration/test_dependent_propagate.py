"""The `propagate` policy of dependent tables, and DESCRIBE of one: a compatible change of the
source's columns follows into the dependent table (from the Python client's alter_table and the
real Hive 2.3 CLI), an incompatible one is refused naming why, and the Hive CLI reads the
dependent table's rows — old files and new — as it reads them from the source.

(Spark's ADD COLUMNS / comment change: tests/spark/test_dependent_spark.py.)
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import urlparse

import pytest
from thriftpy2.thrift import TException

from hmsproxy.features.dependent.config import DependentConfig, LineageConfig
from hmsproxy.protocol import idl
from hmsproxy.testing import partition, storage, table
from tests.integration.test_dependent_tables import COLUMNS, HOURLY
from tests.integration.test_remotes_ddl import hmsproxy_sql

hive = idl.hive
PROPAGATE = "TBLPROPERTIES ('hmsproxy.dependent.on-change'='propagate')"


def columns(t) -> list[tuple[str, str, str | None]]:
    return [(c.name, c.type, c.comment or None) for c in t.sd.cols]


@pytest.fixture
def following(proxy_client, run, tag):
    """default.fev_<tag> (text; days 1-2 x hours 1-2, each partition with the table's columns) and
    default.fdaily_<tag> following it (propagate), days 1 and 2 published."""
    ev, daily = f"fev_{tag}", f"fdaily_{tag}"
    proxy_client.create_table(table("default", ev, columns=COLUMNS, partition_keys=HOURLY))
    proxy_client.add_partitions([partition("default", ev, [d, h], sd=storage(COLUMNS)) for d in "12" for h in "12"])
    run(f"CREATE DEPENDENT TABLE {daily} PARTITIONED BY (ds) DEPENDS ON TABLE {ev} {PROPAGATE}")
    run(f"ALTER TABLE {daily} ADD PARTITION (ds='1') PARTITION (ds='2')")
    yield ev, daily
    run(f"DROP DEPENDENT TABLE IF EXISTS {daily}")
    for name in proxy_client.get_all_tables("default"):
        if name.startswith((ev, f"fv2_{tag}")):
            proxy_client.drop_table("default", name, True)


def test_a_compatible_change_follows_and_an_incompatible_one_is_refused(proxy_client, proxy_config, run, following, tag, tmp_path):
    ev, daily = following
    source = proxy_client.get_table("default", ev)
    source.sd.cols[0].comment = "the key"
    source.sd.cols[1].type = "bigint"  # widened
    source.sd.cols.append(hive.FieldSchema(name="note", type="string", comment="added later"))
    sink = tmp_path / "lineage.jsonl"
    with proxy_config(lambda base: base.with_section("dependent", DependentConfig(LineageConfig(file=str(sink))))):
        proxy_client.alter_table("default", ev, source)
    (event,) = [json.loads(line) for line in sink.read_text().splitlines()]
    assert event["run"]["facets"]["hmsproxy"]["action"] == "propagate-columns" and "problem" not in event["run"]["facets"]["hmsproxy"]
    assert [i["name"] for i in event["inputs"]] == [f"default.{ev}"] and [o["name"] for o in event["outputs"]] == [f"default.{daily}"]

    want = [("key", "string", "the key"), ("value", "bigint", None), ("note", "string", "added later")]
    assert columns(proxy_client.get_table("default", ev)) == want
    view = proxy_client.get_table("default", daily)
    assert columns(view) == want
    assert view.viewExpandedText == f"SELECT `key`, `value`, `note`, `ds` FROM `default`.`{ev}` WHERE `ds` IN ('1', '2')"
    assert columns(proxy_client.get_partition("default", daily, ["1"])) == want  # its partitions too
    # Nothing broke: the published partitions stay "ok".
    assert {r["state"] for r in run(f"SHOW DEPENDENCIES OF {daily}")[1:]} == {"ok"}

    refused = {
        "drops": (lambda cols: cols[:2], rf"it drops column\(s\) note of default.{ev}"),
        "renames": (
            lambda cols: [cols[0], hive.FieldSchema(name="amount", type="bigint"), cols[2]],
            r"column value .* would become amount",
        ),
        "narrows": (
            lambda cols: [cols[0], hive.FieldSchema(name="value", type="int"), cols[2]],
            r"column value of .* would change from bigint to int, which does not hold every bigint value",
        ),
        "inserts": (lambda cols: [cols[0], hive.FieldSchema(name="x", type="int"), *cols[1:]], r"column value .* would become x"),
    }
    for what, (change, message) in refused.items():
        t = proxy_client.get_table("default", ev)
        t.sd.cols = change(t.sd.cols)
        with pytest.raises(TException, match=rf"is refused: dependent table default.{daily} follows it .*propagate\) but {message}"):
            proxy_client.alter_table("default", ev, t)
        assert columns(proxy_client.get_table("default", ev)) == want, what  # nothing changed, in the metastore or the view
        assert columns(proxy_client.get_table("default", daily)) == want, what

    # A dependent table reading two tables can't take a column only one of them has.
    v2 = f"fv2_{tag}"
    proxy_client.create_table(table("default", v2, columns=[(n, t) for n, t, _ in want], partition_keys=HOURLY))
    proxy_client.add_partitions([partition("default", v2, ["2", "1"])])
    run(f"ALTER TABLE {daily} PARTITION (ds='2') DEPENDS ON TABLE {v2}")
    t = proxy_client.get_table("default", ev)
    t.sd.cols.append(hive.FieldSchema(name="extra", type="int"))
    with pytest.raises(TException, match=rf"but it also depends on default.{v2}, which would not have the new columns"):
        proxy_client.alter_table("default", ev, t)
    # notify lets it through unpropagated and says what broke.
    run(f"ALTER TABLE {daily} SET TBLPROPERTIES ('hmsproxy.dependent.on-change'='notify')")
    proxy_client.alter_table("default", ev, t)
    assert columns(proxy_client.get_table("default", daily)) == want
    (row,) = run(f"SHOW DEPENDENCIES OF {daily} PARTITION (ds='1')")[:1]
    assert row["state"] == f"the columns of default.{ev} changed: it has extra int besides"


def test_describe_extended_lists_the_published_partitions_and_their_sources(proxy, proxy_client, run, following):
    ev, daily = following
    assert proxy_client.get_table("default", daily).parameters["hmsproxy.dependent.published"] == f"ds=1, ds=2 <- default.{ev}"
    for statement in (f"DESCRIBE EXTENDED {daily}", f"DESC FORMATTED default.{daily}"):
        rows = [(r["col_name"], r["data_type"], r["comment"]) for r in run(statement)]
        assert rows == [
            ("key", "string", ""),
            ("value", "int", ""),
            ("ds", "string", ""),
            ("", "", ""),
            ("# Partition Information", "", ""),
            ("# col_name", "data_type", "comment"),
            ("ds", "string", ""),
            ("", "", ""),
            ("# Published partitions", "reads", "state"),
            ("(new partitions)", f"default.{ev}", "hmsproxy.dependent.on-change=propagate"),
            *[(f"ds={d}", f"default.{ev}@ds={d}/hr={h}", "ok") for d in "12" for h in "12"],
        ], statement
    with pytest.raises(Exception, match=rf"default.{ev} is not a dependent table \(not one of hmsproxy's objects"):
        run(f"DESCRIBE EXTENDED {ev}")
    # The same through the command line.
    out = hmsproxy_sql(proxy.uri, "-e", f"DESCRIBE EXTENDED default.{daily}")
    assert out.returncode == 0, out.stderr
    assert re.search(rf"\nds=2 +\| default\.{ev}@ds=2/hr=2 +\| ok\n", out.stdout), out.stdout


def _write(proxy_client, ev: str, values: list[str], lines: list[str]) -> None:
    """A text file of rows (Hive's default ^A delimiter) in one partition of `ev`."""
    location = Path(urlparse(proxy_client.get_partition("default", ev, values).sd.location).path)
    location.mkdir(parents=True, exist_ok=True)
    (location / "part-0").write_text("".join("\x01".join(line.split(",")) + "\n" for line in lines))


def test_the_hive_cli_changes_the_source_and_reads_the_dependent_table(hive_cli, proxy, proxy_client, run, following):
    ev, daily = following
    _write(proxy_client, ev, ["1", "1"], ["a,1", "b,2"])  # written before the change: two columns
    _write(proxy_client, ev, ["2", "2"], ["c,3"])
    script = f"""
set hive.cli.errors.ignore=true;
ALTER TABLE default.{ev} ADD COLUMNS (note string COMMENT 'added by hive');
ALTER TABLE default.{ev} CHANGE value value bigint;
ALTER TABLE default.{ev} CHANGE key k string;
ALTER TABLE default.{ev} ADD PARTITION (ds='1', hr='3');
"""
    result = hive_cli(proxy.uri, script)
    output = result.stdout + result.stderr
    assert result.stderr.count("Time taken") == 3, output[-3000:]  # the rename alone failed
    assert f"column key of default.{ev} would become k (a rename or a move)" in output, output[-3000:]
    want = [("key", "string", None), ("value", "bigint", None), ("note", "string", "added by hive")]
    assert columns(proxy_client.get_table("default", daily)) == want
    _write(proxy_client, ev, ["1", "3"], ["d,4000000000,late"])  # written after: three columns, a value beyond int

    read = hive_cli(
        proxy.uri,
        f"SELECT key, value, note, ds FROM default.{daily} WHERE ds='1';\n"
        f"SELECT key, value, note, ds FROM default.{daily};\n"
        f"DESCRIBE FORMATTED default.{daily};\n",
    )
    assert read.returncode == 0 and "FAILED" not in read.stderr, (read.stdout + read.stderr)[-3000:]
    shown = [tuple(line.split("\t")) for line in read.stdout.splitlines() if re.match(r"^[abcd]\t", line)]
    day_one = [("a", "1", "NULL", "1"), ("b", "2", "NULL", "1"), ("d", "4000000000", "late", "1")]
    assert sorted(shown[:3]) == day_one, read.stdout
    assert sorted(shown[3:]) == sorted([*day_one, ("c", "3", "NULL", "2")]), read.stdout
    # DESCRIBE FORMATTED: the propagated columns, and the published partitions with their source in the parameters.
    assert re.search(r"^note\s+string\s+added by hive", read.stdout, re.M), read.stdout
    assert re.search(r"^value\s+bigint", read.stdout, re.M), read.stdout
    assert re.search(rf"hmsproxy.dependent.published\s+ds=1, ds=2 <- default.{ev}", read.stdout), read.stdout
