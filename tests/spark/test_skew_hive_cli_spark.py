"""The Hive 2.3 CLI's explicit skew changes through the proxy take effect, and Spark's rewrites still don't erase skew.

The CLI's NOT SKEWED reaches the proxy as an alter_table without skew, as Spark's whole-table
rewrite does; the proxy tells them apart by what each call carries (features/skew/protection.py).
"""

from __future__ import annotations

import uuid

import pytest

from hmsproxy.clients.spark import sql
from tests.spark.test_skew_spark import skew_of

pytestmark = pytest.mark.spark


def described(stdout: str, statement: str) -> str:
    """The output of the echoed `statement` in a CLI run's stdout, up to the next DESCRIBE."""
    after = stdout.split(statement, 1)[1]
    return after.split("DESCRIBE FORMATTED", 1)[0]


def test_hive_cli_not_skewed_and_not_stored_as_directories_take_effect_and_spark_keeps_a_new_skew(spark, hive_cli, proxy, metastores):
    name = f"hsk_{uuid.uuid4().hex[:8]}"
    t = f"default.{name}"
    script = f"""
CREATE TABLE {t} (x STRING, y INT) SKEWED BY (x) ON ('x1', 'x2') STORED AS DIRECTORIES;
ALTER TABLE {t} NOT STORED AS DIRECTORIES;
DESCRIBE FORMATTED {t} -- flat;
ALTER TABLE {t} SET SKEWED LOCATION ('x1'='file:/tmp/{name}/x1');
ALTER TABLE {t} NOT SKEWED;
DESCRIBE FORMATTED {t} -- unskewed;
"""
    try:
        result = hive_cli(proxy.uri, script)
        assert result.returncode == 0, f"stdout:\n{result.stdout[-3000:]}\nstderr:\n{result.stderr[-3000:]}"
        flat = described(result.stdout, "-- flat")
        assert "Skewed Columns:" in flat and "[x]" in flat and "Stored As SubDirectories" not in flat
        unskewed = described(result.stdout, "-- unskewed")
        assert "Skewed Columns:" not in unskewed and "Skewed Value" not in unskewed and "Stored As SubDirectories" not in unskewed

        # Spark, through the proxy, sees the table unskewed; so does the metastore (the location map gone too).
        shown = [r.asDict() for r in sql(spark, f"SHOW SKEW ON {t}").collect()]
        assert [(r["partition"], r["skewed_columns"], r["stored_as_directories"]) for r in shown] == [("(table)", "", "false")]
        assert skew_of(metastores[0], "default", name) == ([], [], False, {})

        # Skewed again; Spark's writes and rewrites keep it.
        sql(spark, f"ALTER TABLE {t} SKEWED BY (x) ON ('x1') STORED AS DIRECTORIES")
        spark.sql(f"INSERT INTO {t} VALUES ('x1', 1), ('x3', 2)")
        spark.sql(f"ALTER TABLE {t} SET TBLPROPERTIES ('owner.team'='sales')")  # Spark's rewrite without skew
        spark.sql(f"INSERT INTO {t} VALUES ('x1', 3)")
        assert skew_of(metastores[0], "default", name) == (["x"], [["x1"]], True, {})
        assert spark.sql(f"SELECT count(1) FROM {t}").collect()[0][0] == 3
        again = hive_cli(proxy.uri, f"DESCRIBE FORMATTED {t};\n")
        assert again.returncode == 0, again.stderr[-3000:]
        assert "Skewed Columns:" in again.stdout and "StoredAsSubDirectories:Yes" in "".join(again.stdout.split())
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {t}")
