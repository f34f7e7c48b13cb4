"""The skew statements from each entry point without Spark: `hmsproxy sql`, the Python client, the Hive 2.3 CLI.

(The Spark helper is tests/spark/test_skew_spark.py.) The Hive CLI has its own SKEWED BY syntax,
which reaches the proxy as alter_table: the same validation and protection apply.
"""

from __future__ import annotations

import uuid

import pytest

from hmsproxy.clients.proxy import HmsProxyClient, HmsProxyError
from hmsproxy.testing import table
from tests.integration.test_remotes_ddl import hmsproxy_sql


@pytest.fixture
def skew_table(proxy_client):
    name = f"sk_{uuid.uuid4().hex[:8]}"
    proxy_client.create_table(table("default", name, columns=(("id", "int"), ("country", "string")), partition_keys=(("ds", "string"),)))
    yield name
    proxy_client.drop_table("default", name, False)


def test_hmsproxy_sql_declares_and_shows_skew(proxy, skew_table):
    out = hmsproxy_sql(
        proxy.uri, "-e", f"ALTER TABLE default.{skew_table} SKEWED BY (country) ON ('US', 'IN'); SHOW SKEW ON default.{skew_table}"
    )
    assert out.returncode == 0, out.stderr
    assert "is skewed by (country) on 2 value(s)" in out.stdout
    assert "(table)   | country        | 'US', 'IN'" in out.stdout
    bad = hmsproxy_sql(proxy.uri, "-e", f"ALTER TABLE default.{skew_table} SKEWED BY (ds) ON ('1')")
    assert bad.returncode != 0 and "skewed column 'ds' is a partition column" in bad.stderr
    missing = hmsproxy_sql(proxy.uri, "-e", f"SHOW SKEW ON default.{skew_table} PARTITION (ds='9')")
    assert missing.returncode != 0 and f"default.{skew_table} has no partition (ds='9')" in missing.stderr and not missing.stdout


def test_python_client_declares_and_removes_skew(proxy, proxy_client, skew_table):
    with HmsProxyClient(proxy.uri, user="alice") as client:
        client.execute(f"ALTER TABLE {skew_table} SKEWED BY (id, country) ON ((1, 'US'), (2, 'IN'))", database="default")
        assert proxy_client.get_table("default", skew_table).sd.skewedInfo.skewedColValues == [["1", "US"], ["2", "IN"]]
        (shown,) = client.execute(f"SHOW SKEW ON {skew_table}", database="default")
        assert shown.as_dicts()[0]["skewed_values"] == "('1', 'US'), ('2', 'IN')"
        client.execute(f"ALTER TABLE {skew_table} NOT SKEWED", database="default")
        assert not proxy_client.get_table("default", skew_table).sd.skewedInfo.skewedColNames
        with pytest.raises(HmsProxyError, match="is not skewed: SKEWED BY first"):
            client.execute(f"ALTER TABLE {skew_table} SET SKEWED LOCATION ('US'='file:/x')", database="default")


def test_hive_cli_skew_reaches_the_metastore_and_shows_through_the_proxy(hive_cli, proxy, tmp_path):
    db = f"skcli_{uuid.uuid4().hex[:8]}"
    script = f"""
CREATE DATABASE {db} LOCATION '{(tmp_path / db).as_uri()}';
CREATE TABLE {db}.sk (x STRING, y INT) PARTITIONED BY (ds STRING) SKEWED BY (x) ON ('x1', 'x2');
ALTER TABLE {db}.sk ADD PARTITION (ds='1');
ALTER TABLE {db}.sk SET TBLPROPERTIES ('k'='v');
DESCRIBE FORMATTED {db}.sk;
"""
    try:
        result = hive_cli(proxy.uri, script)
        assert result.returncode == 0, f"stdout:\n{result.stdout[-3000:]}\nstderr:\n{result.stderr[-3000:]}"
        assert "Skewed Columns:" in result.stdout and "[x]" in result.stdout
        out = hmsproxy_sql(proxy.uri, "-e", f"SHOW SKEW ON {db}.sk")
        assert out.returncode == 0, out.stderr
        rows = [line for line in out.stdout.splitlines() if "|" in line][1:]
        assert [r.split("|")[0].strip() for r in rows] == ["(table)", "ds=1"] and all("'x1', 'x2'" in r for r in rows)
    finally:
        hive_cli(proxy.uri, f"DROP DATABASE IF EXISTS {db} CASCADE;")
