"""Dependent tables through the proxy without Spark: the statements from the Python client and
`hmsproxy sql`, the view written for them, refusals, drop protection for plain Thrift clients,
lineage events from a file sink, and a second proxy on the same PostgreSQL store.

(The seed's whole scenario in a real SparkSession is tests/spark/test_dependent_spark.py.)
"""

from __future__ import annotations

import dataclasses
import json
import re
import time

import pytest
import thriftpy2.rpc
from thriftpy2.thrift import TException

from hmsproxy.clients.proxy import HmsProxyClient, HmsProxyError
from hmsproxy.config.model import StoreConfig
from hmsproxy.features.dependent.config import DependentConfig, LineageConfig
from hmsproxy.protocol import idl
from hmsproxy.testing import partition, storage, table
from tests.integration.test_remotes_ddl import hmsproxy_sql
from tests.support.served import served_many

COLUMNS = (("key", "string"), ("value", "int"))
HOURLY = (("ds", "string"), ("hr", "string"))


def hourly(client, db: str, name: str, days, hours, *, columns=COLUMNS, keys=HOURLY) -> None:
    """A table partitioned like the seed's T, with a partition per (day, hour), made over Thrift
    (each with the table's columns, as Hive makes them, so Hive reads their files by them)."""
    client.create_table(table(db, name, columns=columns, partition_keys=keys))
    parts = [partition(db, name, [str(d), str(h)], sd=storage(columns)) for d in days for h in hours]
    if parts:
        client.add_partitions(parts)


@pytest.fixture
def events(proxy_client, run, tag):
    """default.ev_<tag> (days 1-3 x hours 1-3) and default.daily_<tag> depending on it; both gone afterwards."""
    ev, daily = f"ev_{tag}", f"daily_{tag}"
    hourly(proxy_client, "default", ev, range(1, 4), range(1, 4))
    run(f"CREATE DEPENDENT TABLE daily_{tag} PARTITIONED BY (ds string) DEPENDS ON TABLE ev_{tag}")
    yield ev, daily
    run(f"DROP DEPENDENT TABLE IF EXISTS {daily}")
    for name in proxy_client.get_all_tables("default"):
        if name.startswith(f"ev_{tag}") or name.startswith(f"v2_{tag}"):
            proxy_client.drop_table("default", name, True)


def test_a_dependent_table_is_served_as_a_view_of_what_it_publishes(proxy_client, run, events):
    ev, daily = events
    view = proxy_client.get_table("default", daily)
    assert view.tableType == "VIRTUAL_VIEW" and [(k.name, k.type) for k in view.partitionKeys] == [("ds", "string")]
    assert [(c.name, c.type) for c in view.sd.cols] == [("key", "string"), ("value", "int")]
    assert (
        view.viewExpandedText
        == "SELECT CAST(NULL AS string) AS `key`, CAST(NULL AS int) AS `value`, CAST(NULL AS string) AS `ds` WHERE 1 = 0"
    )
    assert daily in proxy_client.get_all_tables("default") and daily in proxy_client.get_tables_by_type("default", "*", "VIRTUAL_VIEW")

    (answer,) = run(f"ALTER TABLE {daily} ADD PARTITION (ds='1') PARTITION (ds=2)")
    assert answer["result"] == f"published in default.{daily}: ds=1 (3 partition(s) of default.{ev}), ds=2 (3 partition(s) of default.{ev})"
    view = proxy_client.get_table("default", daily)
    assert view.viewExpandedText == view.viewOriginalText == f"SELECT `key`, `value`, `ds` FROM `default`.`{ev}` WHERE `ds` IN ('1', '2')"
    assert view.parameters["hmsproxy.dependent.depends-on"] == f"default.{ev}"
    assert view.parameters["hmsproxy.dependent.partitions"] == "2"

    rows = run(f"SHOW DEPENDENCIES OF {daily} PARTITION (ds='1')")
    assert [(r["partition"], r["depends_on"], r["covers"], r["state"]) for r in rows] == [
        ("ds=1", f"default.{ev}", f"ds=1/hr={h}", "ok") for h in (1, 2, 3)
    ]
    assert all(r["location"].endswith(f"/{ev}/{r['covers']}") for r in rows)
    # An hour added after publishing is part of the day at once; one dropped is no longer.
    proxy_client.add_partitions([partition("default", ev, ["1", "4"])])
    assert [r["covers"] for r in run(f"SHOW DEPENDENCIES OF {daily} PARTITION (ds='1')")][-1] == "ds=1/hr=4"
    assert run(f"SHOW DEPENDENTS OF {ev}") == [
        {
            "dependent_table": f"default.{daily}",
            "partition": "(new partitions)",
            "covers": "",
            "state": "hmsproxy.dependent.on-change=restrict",
        },
        {"dependent_table": f"default.{daily}", "partition": "ds=1", "covers": "ds=1", "state": "ok"},
        {"dependent_table": f"default.{daily}", "partition": "ds=2", "covers": "ds=2", "state": "ok"},
    ]

    # A later table with a third partition column takes over new partitions; ds=2 is re-pointed.
    v2 = ev.replace("ev_", "v2_")
    hourly(proxy_client, "default", v2, [], [], keys=(*HOURLY, ("min", "string")))
    proxy_client.add_partitions([partition("default", v2, [d, "1", m]) for d in ("2", "4") for m in ("0", "30")])
    run(f"ALTER TABLE {daily} DEPENDS ON TABLE {v2}")
    run(f"ALTER TABLE {daily} ADD PARTITION (ds='4')")
    run(f"ALTER TABLE {daily} PARTITION (ds='2') DEPENDS ON TABLE {v2}")
    text = proxy_client.get_table("default", daily).viewExpandedText
    assert text == (
        f"SELECT `key`, `value`, `ds` FROM `default`.`{ev}` WHERE `ds` IN ('1')\nUNION ALL\n"
        f"SELECT `key`, `value`, `ds` FROM `default`.`{v2}` WHERE `ds` IN ('2', '4')"
    )
    assert [r["covers"] for r in run(f"SHOW DEPENDENCIES OF {daily} PARTITION (ds='2')")] == ["ds=2/hr=1/min=0", "ds=2/hr=1/min=30"]
    (dropped,) = run(f"ALTER TABLE {daily} DROP PARTITION (ds='4')")
    assert dropped["result"] == f"dropped from default.{daily}: ds=4"
    assert "'4'" not in proxy_client.get_table("default", daily).viewExpandedText


def test_refusals_say_what_is_wrong(proxy_client, run, events, tag):
    ev, daily = events
    refusals = {
        f"ALTER TABLE {daily} ADD PARTITION (hr='1')": r"must give exactly its partition columns \(ds\)",
        f"ALTER TABLE {daily} ADD PARTITION (ds='9')": rf"default.{ev} has no partition ds=9 yet.*ALLOW EMPTY",
        f"CREATE DEPENDENT TABLE d2_{tag} PARTITIONED BY (hr string) DEPENDS ON TABLE {ev}": r"\(hr\), which is not a prefix of .*\(ds, hr\)",
        f"CREATE DEPENDENT TABLE d2_{tag} PARTITIONED BY (ds int) DEPENDS ON TABLE {ev}": r"ds is int in .* but string in",
        f"CREATE DEPENDENT TABLE d2_{tag} PARTITIONED BY (ds) DEPENDS ON TABLE {daily}": r"is a dependent table: a dependent table depends on tables only",
        f"CREATE DEPENDENT TABLE d2_{tag} PARTITIONED BY (ds) DEPENDS ON TABLE d2_{tag}": r"can't depend on itself",
        f"CREATE DEPENDENT TABLE {ev} PARTITIONED BY (ds) DEPENDS ON TABLE {ev}": r"default.ev_\w+ exists already \(a table or view",
        f"CREATE DEPENDENT TABLE {daily} PARTITIONED BY (ds) DEPENDS ON TABLE {ev}": r"dependent table default.daily_\w+ exists already",
        f"CREATE DEPENDENT TABLE d2_{tag} PARTITIONED BY (ds) DEPENDS ON TABLE {ev} TBLPROPERTIES ('x'='y')": r"has no property x",
        f"CREATE DEPENDENT TABLE d2_{tag} PARTITIONED BY (ds) DEPENDS ON TABLE nothing_{tag}": r"nothing_\w+",
        f"ALTER TABLE {daily} SET TBLPROPERTIES ('hmsproxy.dependent.on-change'='ignore')": r"must be one of restrict, notify",
        f"ALTER TABLE {ev} ADD PARTITION (ds='1', hr='9')": rf"default.{ev} is not a dependent table",
        f"ALTER TABLE {daily} DROP PARTITION (ds='3')": r"ds=3 of default.daily_\w+ is not published",
    }
    for sql, message in refusals.items():
        with pytest.raises(HmsProxyError, match=message):
            run(sql)
    proxy_client.create_table(table("default", f"other_{tag}", columns=(("key", "string"), ("amount", "bigint")), partition_keys=HOURLY))
    try:
        with pytest.raises(
            HmsProxyError,
            match=rf"other_{tag} must have the data columns of default.{daily}, but it lacks value int; has amount bigint besides",
        ):
            run(f"ALTER TABLE {daily} DEPENDS ON TABLE other_{tag}")
    finally:
        proxy_client.drop_table("default", f"other_{tag}", True)
    # Many partitions in one statement: all or nothing.
    five = " ".join(f"PARTITION (ds='{d}')" for d in (1, 2, 3, 8, 9))
    with pytest.raises(HmsProxyError, match=rf"default.{ev} has no partition ds=8 yet"):
        run(f"ALTER TABLE {daily} ADD {five}")
    assert run(f"SHOW DEPENDENCIES OF {daily}")[1:] == []
    (answer,) = run(f"ALTER TABLE {daily} ADD {five} ALLOW EMPTY")
    assert answer["result"].endswith(
        "ds=3 (3 partition(s) of default."
        + ev
        + "), ds=8 (0 partition(s) of default."
        + ev
        + "), ds=9 (0 partition(s) of default."
        + ev
        + ")"
    )
    assert run(f"SHOW DEPENDENCIES OF {daily} PARTITION (ds='9')")[0]["state"] == "empty"
    assert len(run(f"SHOW DEPENDENCIES OF {daily}")) == 1 + 3 * 3 + 2


def test_writes_into_a_dependent_table_are_refused_for_any_client(proxy_client, events):
    ev, daily = events
    with pytest.raises(TException, match="is a dependent table.*add_partitions is refused"):
        proxy_client.add_partitions([partition("default", daily, ["1"])])
    with pytest.raises(TException, match=f"drop it with DROP DEPENDENT TABLE default.{daily}"):
        proxy_client.drop_table("default", daily, True)
    with pytest.raises(TException, match="exists already: it is a dependent table"):
        proxy_client.create_table(table("default", daily))
    # ALTER VIEW ... SET TBLPROPERTIES of the policy, as Spark or Hive send it, is the one change a client may make.
    view = proxy_client.get_table("default", daily)
    view.parameters["hmsproxy.dependent.on-change"] = "notify"
    proxy_client.alter_table("default", daily, view)
    assert proxy_client.get_table("default", daily).parameters["hmsproxy.dependent.on-change"] == "notify"
    view.parameters["comment"] = "mine"
    with pytest.raises(TException, match="alter_table is refused"):
        proxy_client.alter_table("default", daily, view)


def test_changes_to_depended_upon_tables_follow_the_policy_and_leave_lineage(proxy, proxy_client, proxy_config, run, events, tmp_path):
    ev, daily = events
    sink = tmp_path / "lineage.jsonl"
    with proxy_config(lambda base: base.with_section("dependent", DependentConfig(LineageConfig(file=str(sink))))):
        run(f"ALTER TABLE {daily} ADD PARTITION (ds='1')")
        # restrict (the default): refused, naming the dependent table and partition
        refusals = [
            (
                lambda: proxy_client.drop_table("default", ev, True),
                rf"dropping default.{ev} is refused: dependent table\(s\) default.{daily} depend on it \(published partitions default.{daily}@ds=1\)",
            ),
            (lambda: proxy_client.drop_partition("default", ev, ["1", "2"], True), r"dropping partition\(s\) 1/2 of .* is refused"),
            (
                lambda: proxy_client.drop_partition_by_name("default", ev, "ds=1/hr=3", True),
                r"dropping partition\(s\) 1/3 of .* is refused",
            ),
        ]
        for call, message in refusals:
            with pytest.raises(TException, match=message):
                call()
        renamed = proxy_client.get_table("default", ev)
        renamed.tableName = f"{ev}_old"
        with pytest.raises(TException, match=rf"renaming default.{ev} to default.{ev}_old is refused"):
            proxy_client.alter_table("default", ev, renamed)
        widened = proxy_client.get_table("default", ev)
        widened.sd.cols.append(idl.hive.FieldSchema(name="extra", type="string"))
        with pytest.raises(TException, match=r"changing the columns of .* has extra string besides\) is refused"):
            proxy_client.alter_table("default", ev, widened)
        proxy_client.drop_partition("default", ev, ["2", "1"], True)  # day 2 is not published: allowed
        assert len(proxy_client.get_partition_names("default", ev, -1)) == 8

        # notify: allowed; SHOW DEPENDENCIES marks the partition and a lineage event says what broke
        run(f"ALTER TABLE {daily} SET TBLPROPERTIES ('hmsproxy.dependent.on-change'='notify')")
        proxy_client.drop_partition("default", ev, ["1", "2"], True)
        (state,) = {r["state"] for r in run(f"SHOW DEPENDENCIES OF {daily} PARTITION (ds='1')")}
        assert state == f"a partition of default.{ev} was dropped (1/2)"
        proxy_client.alter_table("default", ev, renamed)  # records follow the rename
        assert f"FROM `default`.`{ev}_old`" in proxy_client.get_table("default", daily).viewExpandedText
        proxy_client.drop_table("default", f"{ev}_old", True)
        assert run(f"SHOW DEPENDENCIES OF {daily} PARTITION (ds='1')")[0]["state"] == f"not served: default.{ev}_old was dropped"
        assert proxy_client.get_table("default", daily).viewExpandedText.endswith("WHERE 1 = 0")

    events_seen = [json.loads(line) for line in sink.read_text().splitlines()]
    assert [e["run"]["facets"]["hmsproxy"]["action"] for e in events_seen] == ["publish", "drop-partition", "rename-table", "drop-table"]
    publish = events_seen[0]
    assert publish["eventType"] == "COMPLETE" and publish["schemaURL"].startswith("https://openlineage.io/spec/")
    assert publish["job"] == {"namespace": "hmsproxy", "name": f"ALTER TABLE {daily} ADD PARTITION (ds='1')"}
    assert publish["run"]["facets"]["hmsproxy"]["user"] == "alice"
    assert [(i["namespace"], i["name"], i["facets"]["partition"]["spec"]) for i in publish["inputs"]] == [
        ("hive://primary", f"default.{ev}", f"ds=1/hr={h}") for h in (1, 2, 3)
    ]
    assert all(i["facets"]["storage"]["location"].endswith(f"/{ev}/ds=1/hr={h}") for i, h in zip(publish["inputs"], (1, 2, 3)))
    assert publish["outputs"] == [
        {
            "namespace": "hive://primary",
            "name": f"default.{daily}",
            "facets": {"partition": {"_producer": publish["producer"], "spec": "ds=1"}},
        }
    ]
    broke = events_seen[1]
    assert broke["job"]["name"] == f"drop_partition default.{ev}"
    assert broke["run"]["facets"]["hmsproxy"]["problem"] == f"a partition of default.{ev} was dropped (1/2)"
    assert [o["name"] for o in broke["outputs"]] == [f"default.{daily}"] and broke["inputs"][0]["name"] == f"default.{ev}"


def test_hmsproxy_sql_runs_the_statements(proxy, proxy_client, events):
    ev, daily = events
    out = hmsproxy_sql(proxy.uri, "-e", f"ALTER TABLE default.{daily} ADD PARTITION (ds='3'); SHOW DEPENDENCIES OF default.{daily}")
    assert out.returncode == 0, out.stderr
    assert f"published in default.{daily}: ds=3 (3 partition(s) of default.{ev})" in out.stdout
    assert re.search(rf"\nds=3 +\| default\.{ev} +\| ds=3/hr=2 +\| file:\S+/{ev}/ds=3/hr=2 +\| ok\n", out.stdout), out.stdout
    bad = hmsproxy_sql(proxy.uri, "-e", f"ALTER TABLE default.{daily} ADD PARTITION (ds='3')")
    assert bad.returncode != 0 and f"partition ds=3 of default.{daily} is published already" in bad.stderr


def test_a_second_proxy_on_the_same_store_serves_the_new_view_text(default_config, pg_url, metastores, tag):
    config = dataclasses.replace(default_config, store=StoreConfig(pg_url))
    with served_many(config, 2) as servers:
        clients = [thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", s.port, timeout=60000) for s in servers]
        ev, daily = f"ev_{tag}", f"daily_{tag}"
        try:
            hourly(clients[0], "default", ev, [1, 2], [1])
            with HmsProxyClient(f"thrift://127.0.0.1:{servers[0].port}") as first:
                first.execute(f"CREATE DEPENDENT TABLE default.{daily} PARTITIONED BY (ds) DEPENDS ON TABLE default.{ev}")
                assert clients[1].get_table("default", daily).viewExpandedText.endswith("WHERE 1 = 0")
                first.execute(f"ALTER TABLE default.{daily} ADD PARTITION (ds='2')")
                changed = time.monotonic()
                # It checks the store every check-interval-s (1 s): 30 s is reached only by a proxy that
                # never looks again (the interval itself: tests/unit/test_store_snapshot.py).
                deadline = changed + 30
                while not clients[1].get_table("default", daily).viewExpandedText.endswith("WHERE `ds` IN ('2')"):
                    assert time.monotonic() < deadline, "the second proxy never served the new view text"
                    time.sleep(0.05)
                print(f"second proxy served the new text after {time.monotonic() - changed:.2f} s")
                first.execute(f"DROP DEPENDENT TABLE default.{daily}")
        finally:
            clients[0].drop_table("default", ev, True)
            for c in clients:
                c.close()


def test_drop_database_cascade_is_protected_and_leaves_no_records(proxy_client, run, tag, tmp_path):
    src, home = f"src_{tag}", f"home_{tag}"
    for db in (src, home):
        proxy_client.create_database(idl.hive.Database(name=db, locationUri=(tmp_path / db).as_uri(), parameters={}))
    hourly(proxy_client, src, "ev", [1], [1, 2])
    hourly(proxy_client, "default", f"ev_{tag}", [1], [1])
    try:
        run(f"CREATE DEPENDENT TABLE default.daily_{tag} PARTITIONED BY (ds) DEPENDS ON TABLE {src}.ev")
        run(f"ALTER TABLE default.daily_{tag} ADD PARTITION (ds='1')")
        with pytest.raises(TException, match=rf"dropping database {src} is refused: dependent table\(s\) default.daily_{tag}"):
            proxy_client.drop_database(src, True, True)
        # A database holding a dependent table may go: its records go with it.
        run(f"CREATE DEPENDENT TABLE {home}.daily PARTITIONED BY (ds) DEPENDS ON TABLE default.ev_{tag}")
        run(f"ALTER TABLE {home}.daily ADD PARTITION (ds='1')")
        assert [r["dependent_table"] for r in run(f"SHOW DEPENDENTS OF default.ev_{tag}")] == [f"{home}.daily"] * 2
        proxy_client.drop_database(home, True, True)
        assert run(f"SHOW DEPENDENTS OF default.ev_{tag}") == []
        proxy_client.drop_table("default", f"ev_{tag}", True)  # nothing depends on it any more
    finally:
        run(f"DROP DEPENDENT TABLE IF EXISTS default.daily_{tag}")
        proxy_client.drop_database(src, True, True)


def test_the_hive_cli_meets_the_same_protection(hive_cli, proxy, proxy_client, run, events):
    ev, daily = events
    run(f"ALTER TABLE {daily} ADD PARTITION (ds='1')")
    # Hive drops partitions with drop_partitions_req and a serialized expression: the proxy asks the
    # metastore which partitions it means. hive.cli.errors.ignore: each statement runs, failed or not.
    script = f"""
set hive.cli.errors.ignore=true;
ALTER TABLE default.{ev} DROP PARTITION (ds='1', hr='2');
ALTER TABLE default.{ev} DROP PARTITION (ds='3', hr='2');
DROP TABLE default.{ev};
SELECT 'reached the end';
"""
    result = hive_cli(proxy.uri, script)
    output = result.stdout + result.stderr
    assert f"dropping partition(s) 1/2 of default.{ev} is refused" in output, output[-3000:]
    assert f"dropping default.{ev} is refused: dependent table(s) default.{daily}" in output, output[-3000:]
    assert "reached the end" in output
    names = proxy_client.get_partition_names("default", ev, -1)
    assert "ds=1/hr=2" in names and "ds=3/hr=2" not in names and len(names) == 8


def test_a_remote_table_can_be_depended_upon_by_its_local_name(proxy_client, run, metastores, tag, tmp_path):
    from tests.integration.test_remotes import add_source, link_table

    add_source(metastores[1], tmp_path)  # rsrc.items on the other metastore: partitioned by ds, partition ds=1
    proxy_client.create_table(link_table("default", f"items_{tag}", metastores[1].uri))
    try:
        run(f"CREATE DEPENDENT TABLE daily_{tag} PARTITIONED BY (ds) DEPENDS ON TABLE items_{tag}")
        (answer,) = run(f"ALTER TABLE daily_{tag} ADD PARTITION (ds='1')")
        assert answer["result"] == f"published in default.daily_{tag}: ds=1 (1 partition(s) of default.items_{tag})"
        assert proxy_client.get_table("default", f"daily_{tag}").viewExpandedText.endswith(
            f"FROM `default`.`items_{tag}` WHERE `ds` IN ('1')"
        )
        (row,) = run(f"SHOW DEPENDENCIES OF daily_{tag} PARTITION (ds='1')")
        assert row["covers"] == "ds=1" and row["location"].endswith("/items/ds=1")
    finally:
        run(f"DROP DEPENDENT TABLE IF EXISTS daily_{tag}")
        proxy_client.drop_table("default", f"items_{tag}", False)  # unlinks the remote table
