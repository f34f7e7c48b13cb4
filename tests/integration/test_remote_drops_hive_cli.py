"""The real Hive 2.3 CLI drops links to metastores it can't reach, through the proxy.

The CLI fetches what it drops (get_table, get_database; for CASCADE get_tables, get_all_tables)
before dropping it, as Spark does (tests/spark/test_remote_drops_spark.py); the proxy answers
those from what the link recorded (features/remotes/records.py). One CLI run (~10 s of start-up)
makes and drops links to an unresolvable host and to a closed port on 127.0.0.1 (made unchecked:
a link is checked when made, and refused while its metastore is out of reach), then is refused a
link to a table its metastore does not have.
"""

from __future__ import annotations

import socket
import uuid

from hmsproxy.protocol import idl

hive = idl.hive


def closed_port_uri() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"thrift://127.0.0.1:{s.getsockname()[1]}"


def link(uri: str, table: str | None = None, *, checked: bool = False) -> str:
    props = [f"'hmsproxy.remote.uris'='{uri}'", "'hmsproxy.remote.database'='sales'"]
    if not checked:
        props.append("'hmsproxy.remote.check'='false'")
    if table:
        props.append(f"'hmsproxy.remote.table'='{table}'")
    return ", ".join(props)


def test_hive_cli_drops_links_to_metastores_it_cannot_reach(hive_cli, proxy, metastores, tmp_path):
    tag = uuid.uuid4().hex[:8]
    shop = f"clishop_{tag}"
    targets = {"dns": "thrift://hms-eu.invalid:9083", "port": closed_port_uri()}
    make, drop = [], []
    for kind, uri in targets.items():
        make += [
            f"CREATE TABLE {shop}.orders_{kind} (id INT) TBLPROPERTIES ({link(uri, 'orders')});",
            f"CREATE DATABASE cli_{kind}_{tag} WITH DBPROPERTIES ({link(uri)});",
            f"CREATE DATABASE cli_{kind}_cascade_{tag} WITH DBPROPERTIES ({link(uri)});",
        ]
        drop += [
            f"DROP TABLE {shop}.orders_{kind};",
            f"DROP DATABASE cli_{kind}_{tag};",
            f"DROP DATABASE cli_{kind}_cascade_{tag} CASCADE;",
        ]
    script = "\n".join(
        [
            f"CREATE DATABASE {shop} LOCATION '{(tmp_path / 'shop.db').as_uri()}';",
            f"CREATE TABLE {shop}.events (id INT);",
            *make,
            *drop,
            # A typo in the target's name: refused, and the CLI stops here.
            f"CREATE TABLE {shop}.orders_typo (id INT) TBLPROPERTIES ({link(metastores[0].uri, 'no_such_table', checked=True)});",
        ]
    )
    repo = proxy.handler.features.get("remotes").repo
    primary = metastores[0].client()
    try:
        result = hive_cli(proxy.uri, script)
        assert result.returncode != 0, f"stdout:\n{result.stdout[-3000:]}\nstderr:\n{result.stderr[-3000:]}"
        assert "has no table 'sales.no_such_table'" in result.stderr, result.stderr[-3000:]
        # Every statement before the typo answered OK (the CLI stops at the first failure).
        oks = [line for line in result.stderr.splitlines() if line.strip() == "OK"]
        assert len(oks) == 2 + len(make) + len(drop), result.stderr[-3000:]
        assert repo.list_tables(shop) == []
        assert [d.local_name for d in repo.list_databases() if d.local_name.endswith(tag)] == []
        # The links went; the local database and its table did not.
        assert primary.get_all_tables(shop) == ["events"]
    finally:
        for rt in repo.list_tables(shop):
            repo.drop_table(rt.local_db, rt.local_name)
        for rd in repo.list_databases():
            if rd.local_name.endswith(tag):
                repo.drop_database(rd.local_name)
        proxy.handler.features.get("remotes").cache.refresh()
        try:
            primary.drop_database(shop, True, True)
        except hive.NoSuchObjectException:
            pass  # the CLI failed before creating it
        primary.close()
