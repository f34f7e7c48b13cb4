"""`REPL DUMP` with the Hive 2.3 CLI through the proxy with the merged notification log on
(docs/notifications.md): a bootstrap dump of a primary database and of a federated one, then an
incremental dump of each from the id its bootstrap printed. Hive 2.3's REPL DUMP reads the log with
get_current_notificationEventId and get_next_notification (it has no events count): each incremental
dump holds its database's event under the merged log's id, the table named as the federation shows it.
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlparse

from hmsproxy.features.notifications.config import NotificationsConfig


def notifying(base):
    return base.with_section("notifications", NotificationsConfig(federate=True))


def dumped(result) -> list[tuple[Path, int]]:
    """(dump dir, last repl id) of each REPL DUMP: the CLI prints them tab-separated."""
    out = []
    for line in result.stdout.splitlines():
        parts = line.split("\t")
        if len(parts) == 2 and parts[0].startswith("file:") and parts[1].strip().isdigit():
            out.append((Path(urlparse(parts[0]).path), int(parts[1])))
    return out


def dumped_events(dump: Path) -> dict[int, tuple[str, dict]]:
    """An incremental dump's events: id -> (event type, the table object of its _metadata)."""
    out = {}
    for d in dump.iterdir():
        if d.is_dir():
            kind = (d / "_dumpmetadata").read_text().split("\t")[0]
            table = json.loads(json.loads((d / "_metadata").read_text())["table"])
            out[int(d.name)] = (kind, table)
    return out


def test_hive_2_3_repl_dump_through_the_proxy_reads_the_merged_log(hive_cli, proxy, proxy_config, federated_dbs, tmp_path):
    conf = ("--hiveconf", f"hive.repl.rootdir={(tmp_path / 'repl').as_uri()}")
    with proxy_config(notifying):
        first = hive_cli(
            proxy.uri,
            "CREATE DATABASE IF NOT EXISTS notif_repl;\nCREATE TABLE notif_repl.t1 (id INT);\nREPL DUMP notif_repl;\nREPL DUMP waggle_sales;\n",
            args=conf,
        )
        assert first.returncode == 0, first.stderr[-3000:]
        (_, own_from), (_, fed_from) = dumped(first)
        second = hive_cli(
            proxy.uri,
            "CREATE TABLE notif_repl.t2 (id INT);\n"
            "CREATE TABLE waggle_sales.t_repl (id INT);\n"
            f"REPL DUMP notif_repl FROM {own_from};\n"
            f"REPL DUMP waggle_sales FROM {fed_from};\n"
            "DROP TABLE waggle_sales.t_repl;\n"
            "DROP DATABASE notif_repl CASCADE;\n",
            args=conf,
        )
        assert second.returncode == 0, second.stderr[-3000:]
    (own_dump, own_last), (fed_dump, fed_last) = dumped(second)
    own_events, fed_events = dumped_events(own_dump), dumped_events(fed_dump)
    # The two CREATE TABLEs are the merged log's next two ids, each in its own database's dump.
    assert (own_last, fed_last) == (own_from + 1, own_from + 2)
    assert list(own_events) == [own_last] and list(fed_events) == [fed_last]
    assert own_events[own_last][0] == fed_events[fed_last][0] == "EVENT_CREATE_TABLE"
    assert (own_events[own_last][1]["2"]["str"], own_events[own_last][1]["1"]["str"]) == ("notif_repl", "t2")
    assert (fed_events[fed_last][1]["2"]["str"], fed_events[fed_last][1]["1"]["str"]) == ("waggle_sales", "t_repl")


def test_hive_2_3_repl_load_of_dumps_made_through_the_proxy(hive_cli, proxy, proxy_config, federated_dbs, tmp_path):
    """The other half of replication: a bootstrap dump of a federated database and an incremental dump
    from the merged log, both made through the proxy, loaded by the Hive 2.3 CLI (through the proxy)
    into a new database of the primary; the incremental load brings the table created in between."""
    conf = ("--hiveconf", f"hive.repl.rootdir={(tmp_path / 'repl').as_uri()}")
    with proxy_config(notifying):
        first = hive_cli(proxy.uri, "CREATE TABLE waggle_sales.t_load1 (id INT);\nREPL DUMP waggle_sales;\n", args=conf)
        assert first.returncode == 0, first.stderr[-3000:]
        ((bootstrap, fed_from),) = dumped(first)
        second = hive_cli(
            proxy.uri,
            f"REPL LOAD notif_loaded FROM '{bootstrap.as_uri()}';\n"
            "CREATE TABLE waggle_sales.t_load2 (id INT);\n"
            f"REPL DUMP waggle_sales FROM {fed_from};\n",
            args=conf,
        )
        assert second.returncode == 0, second.stderr[-3000:]
        ((incremental, last),) = dumped(second)
        third = hive_cli(
            proxy.uri,
            f"REPL LOAD notif_loaded FROM '{incremental.as_uri()}';\nSHOW TABLES IN notif_loaded;\nREPL STATUS notif_loaded;\n"
            "DROP DATABASE notif_loaded CASCADE;\nDROP TABLE waggle_sales.t_load1;\nDROP TABLE waggle_sales.t_load2;\n",
            args=conf,
        )
        assert third.returncode == 0, third.stderr[-3000:]
    lines = third.stdout.split()
    assert "t_load1" in lines and "t_load2" in lines
    assert str(last) in lines  # REPL STATUS: the loaded database is at the merged log's id of its last event
