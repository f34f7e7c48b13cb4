"""The real Hive 2.3 CLI (CliDriver) as a client of the proxy: what Hive users run, unchanged."""

from __future__ import annotations

import uuid
from pathlib import Path
from urllib.parse import urlparse

from hmsproxy.protocol import idl

hive = idl.hive


def described_columns(stdout: str) -> list[tuple[str, str, str]]:
    """(name, type, comment) rows of DESCRIBE output: tab-separated, padded, before any `#` section."""
    rows = []
    for line in stdout.splitlines():
        cells = [c.strip() for c in line.split("\t")]
        if len(cells) == 3 and cells[0] and not cells[0].startswith("#"):
            rows.append(tuple(cells))
    return rows


def test_hive_cli_creates_shows_and_describes_through_the_proxy(hive_cli, proxy, metastores, tmp_path):
    db = f"hivecli_{uuid.uuid4().hex[:10]}"  # no federated prefix: PREFIXED routes it to the primary
    location = (tmp_path / f"{db}.db").as_uri()
    script = f"""
CREATE DATABASE {db} COMMENT 'made by the Hive CLI' LOCATION '{location}';
CREATE TABLE {db}.events (id INT COMMENT 'event id', name STRING) PARTITIONED BY (ds STRING) STORED AS PARQUET;
USE {db};
SHOW TABLES;
DESCRIBE {db}.events;
"""
    primary = metastores[0].client()
    try:
        result = hive_cli(proxy.uri, script)
        assert result.returncode == 0, f"stdout:\n{result.stdout[-3000:]}\nstderr:\n{result.stderr[-3000:]}"

        # SHOW TABLES prints one name a line right after its echoed statement.
        lines = [line.strip() for line in result.stdout.splitlines()]
        shown = lines[lines.index("SHOW TABLES") + 1]
        assert shown == "events"
        columns = described_columns(result.stdout)
        assert columns[:3] == [("id", "int", "event id"), ("name", "string", ""), ("ds", "string", "")]

        # What the primary metastore itself holds, asked directly.
        database = primary.get_database(db)
        assert database.description == "made by the Hive CLI"
        assert primary.get_all_tables(db) == ["events"]
        table = primary.get_table(db, "events")
        assert [(c.name, c.type, c.comment) for c in table.sd.cols] == [("id", "int", "event id"), ("name", "string", None)]
        assert [(c.name, c.type) for c in table.partitionKeys] == [("ds", "string")]
        assert "parquet" in table.sd.inputFormat.lower()
        assert Path(urlparse(table.sd.location).path) == tmp_path / f"{db}.db" / "events"  # Hive writes file:/..., not file:///...
        # Nothing leaked to the federated metastore.
        other = metastores[1].client()
        try:
            assert db not in other.get_all_databases()
        finally:
            other.close()
    finally:
        try:
            primary.drop_database(db, True, True)
        except hive.NoSuchObjectException:
            pass  # the CLI failed before creating it
        primary.close()
