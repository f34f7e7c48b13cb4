"""A real Hive 4.0.1 Java metastore client through the proxy on Hive 2.3 metastores.

Hive 4's HiveMetaStoreClient sends `*_req` calls (get_database_req, create_table_req,
get_partitions_req, ...), get_catalogs, and "@hive#db" names; a Hive 2.3 metastore has none
of them. java/Hive4Client.java runs a client's everyday work step by step; this test checks
every step's answer and that the proxy really translated (the 2.3 metastore lacked the calls).
"""

from __future__ import annotations

import subprocess
import uuid
from pathlib import Path

import pytest

from hmsproxy.testing import partition, table
from hmsproxy.upstream.translations import ADDED_IN_4_0
from tests.contract.jars import java_tool
from tests.support.hive_jars import require_hive
from tests.support.mixed_versions import federation

SOURCE = Path(__file__).parent / "java" / "Hive4Client.java"


@pytest.fixture(scope="module")
def hive4_client(tmp_path_factory):
    """A function running Hive4Client with the given arguments; returns {step: (ok, value)}."""
    lib = require_hive("4.0") / "lib"
    classes = tmp_path_factory.mktemp("hive4-client")
    classpath = f"{lib}/*"
    subprocess.run(
        [java_tool("javac"), "-nowarn", "-cp", classpath, "-d", str(classes), str(SOURCE)], check=True, capture_output=True, timeout=300
    )

    def run(*args: str) -> dict[str, tuple[bool, str]]:
        proc = subprocess.run(
            [java_tool("java"), "-cp", f"{classes}:{classpath}", "Hive4Client", *args],
            capture_output=True,
            text=True,
            timeout=300,
        )
        steps = {}
        for line in proc.stdout.splitlines():
            name, status, value = line.split("\t", 2)
            steps[name] = (status == "OK", value)
        assert proc.returncode == 0 and steps, f"Hive4Client failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr[-3000:]}"
        return steps

    return run


def check_everyday_work(steps: dict, db: str, fed: str, *, native: bool) -> None:
    """The answers of Hive4Client's steps; `native`: the primary is Hive 4 itself (no translation)."""

    def ok(step: str) -> str:
        passed, value = steps[step]
        assert passed, f"{step}: {value}"
        return value

    def failed(step: str) -> str:
        passed, value = steps[step]
        assert not passed, f"{step} should have failed, answered {value}"
        return value

    # Databases and catalogs.
    assert fed.split(".")[0] in ok("databases")
    assert ok("getDatabase") == f"{db},hive,via Hive 4"
    assert ok("getDatabases") == f"[{db}]"
    assert ok("getCatalogs") == "[hive]"
    assert ok("getCatalog") == "hive,true"
    assert failed("getOtherCatalog").startswith("NoSuchObjectException:")
    # Tables: the Hive 3 catName (Table field 17) is set; a constraint 2.3 cannot keep fails the whole create.
    assert ok("createTable") == "visits"
    if native:
        assert ok("createTableWithUniqueConstraint") == "constrained"
    else:
        assert failed("createTableWithUniqueConstraint").startswith("InvalidObjectException:")
    assert ok("constrainedExists") == str(native).lower()
    assert ok("getTable") == f"{db}.visits,hive,2"
    assert ok("getTableReq") == "visits,hive"
    assert set(ok("getAllTables").strip("[]").split(", ")) == ({"visits", "constrained"} if native else {"visits"})
    assert ok("getTableObjectsByName") == "1,visits"
    assert (ok("getFields"), ok("getSchema")) == ("2", "3")
    assert ok("alterTable") == "v"
    # Partitions, every way the client reads and writes them.
    assert ok("addPartitions") == "2"
    assert ok("appendPartition") == "[2026-11-03]"
    assert ok("listPartitionNames") == "[ds=2026-11-01, ds=2026-11-02, ds=2026-11-03]"
    assert ok("listPartitions") == "[2026-11-01]@hive [2026-11-02]@hive [2026-11-03]@hive"
    assert ok("getPartition") == "[2026-11-02]@hive"
    assert ok("getPartitionByName") == "[2026-11-01]"
    assert ok("getPartitionsByNames") == "[2026-11-01]@hive [2026-11-02]@hive"
    assert ok("listPartitionsByFilter") == "[2026-11-02]@hive [2026-11-03]@hive"
    assert ok("renamePartition") == "[ds=2026-11-01, ds=2026-11-02, ds=2026-11-04]"
    assert ok("alterPartitions") == "yes"
    assert ok("dropPartition") == "true"
    assert ok("namesAfterDrop") == "[ds=2026-11-02, ds=2026-11-04]"
    # A federated Hive 2.3 metastore, through its prefix; a database outside its white list refuses writes.
    assert ok("federatedTable") == f"{fed},hive"
    assert ok("federatedPartitions") == "[2026-11-01]@hive [2026-11-02]@hive"
    assert "not allowed" in failed("readOnlyCreate")
    # Dropping, and drop_database_req's ignoreUnknownDb.
    assert ok("dropTable") == "false"
    assert ok("dropDatabase") == "false"
    assert ok("dropMissingDatabase") == "ignored"


def test_hive4_client_on_a_hive_2_3_federation(proxy, federated_orders, hive4_client, tmp_path):
    db = f"hive4_{uuid.uuid4().hex[:8]}"
    steps = hive4_client(proxy.uri, db, tmp_path.as_uri(), "waggle_sales", "orders", "waggle_hr")
    check_everyday_work(steps, db, "waggle_sales.orders", native=False)

    # The 2.3 metastores lacked the calls: the proxy translated them (hmsproxy/upstream/translations.py).
    primary = proxy.handler.config.primary.name
    missing = proxy.handler.backends.state(primary).missing_methods
    assert {"get_database_req", "create_table_req", "get_partitions_req", "drop_partition_req", "get_catalogs"} <= missing
    assert proxy.handler.backends.state(primary).knows_catalogs is False


def test_hive4_client_on_a_hive_4_primary_with_2_3_and_3_1_federated(proxy, proxy_config, metastores_by_version, hive4_client, tmp_path):
    """Hive 4 on Hive 4 gets its calls unchanged (constraints too); the federated 2.3 table still answers."""
    tag = uuid.uuid4().hex[:8]
    direct = metastores_by_version["2.3"].client()
    try:
        direct.create_table(table("mixed_sales", f"t_{tag}", partition_keys=(("ds", "string"),)))
        direct.add_partitions([partition("mixed_sales", f"t_{tag}", [day]) for day in ("2026-11-01", "2026-11-02")])
    finally:
        direct.close()
    with proxy_config(lambda base: federation(base, metastores_by_version, "4.0")) as config:
        db = f"hive4_{tag}"
        steps = hive4_client(proxy.uri, db, tmp_path.as_uri(), "h23_mixed_sales", f"t_{tag}", "h31_default")
        check_everyday_work(steps, db, f"h23_mixed_sales.t_{tag}", native=True)
        assert not proxy.handler.backends.state(config.primary.name).missing_methods & set(ADDED_IN_4_0)
