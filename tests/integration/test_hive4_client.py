"""A real Hive 4.0.1 Java metastore client through the proxy on Hive 2.3 metastores.

Hive 4's HiveMetaStoreClient sends `*_req` calls (get_database_req, create_table_req,
get_partitions_req, ...), get_catalogs, and "@hive#db" names; a Hive 2.3 metastore has none
of them. java/Hive4Client.java runs a client's everyday work step by step; this test checks
every step's answer and that the proxy really translated (the 2.3 metastore lacked the calls).
"""

from __future__ import annotations

import contextlib
import subprocess
import uuid
from functools import partial
from pathlib import Path

import pytest
import thriftpy2.rpc

from hmsproxy.features.transactions.ids import SLOT_SHIFT
from hmsproxy.protocol import idl
from hmsproxy.testing import partition, table
from hmsproxy.upstream.translations import ADDED_IN_4_0
from tests.contract.jars import java_tool
from tests.support.hive_jars import require_hive
from tests.support.mixed_versions import create_transactional_table, federation, outrun

SOURCE = Path(__file__).parent / "java" / "Hive4Client.java"
hive = idl.hive


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


def answered(steps: dict, step: str) -> str:
    """A step's answer; it must have succeeded."""
    passed, value = steps[step]
    assert passed, f"{step}: {value}"
    return value


def refused(steps: dict, step: str) -> str:
    """A step's error; it must have failed."""
    passed, value = steps[step]
    assert not passed, f"{step} should have failed, answered {value}"
    return value


def check_everyday_work(steps: dict, db: str, fed: str, *, native: bool) -> None:
    """The answers of Hive4Client's steps; `native`: the primary is Hive 4 itself (no translation)."""

    ok, failed = partial(answered, steps), partial(refused, steps)

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


@pytest.fixture(scope="module")
def hive4_transaction(layout_proxy, metastores_by_version, hive4_client):
    """hive4_transaction(primary) -> (steps, table, client db, the write id before): Hive4Client's
    transaction steps on a table of the 4.0 metastore, through a proxy whose primary is that version
    (run once per primary; the 4.0 metastore is federated as h40_ unless it is the primary)."""
    runs = {}

    def run(primary: str):
        if primary not in runs:
            name, db = f"t_{uuid.uuid4().hex[:8]}", "mixed_sales" if primary == "4.0" else "h40_mixed_sales"
            with contextlib.closing(metastores_by_version["4.0"].client()) as direct:
                create_transactional_table(direct, "4.0", name)
                # The table's write ids count on the 4.0 metastore: one taken there directly first.
                first = direct.open_txns(hive.OpenTxnRequest(num_txns=1, user="bob", hostname="elsewhere")).txn_ids[0]
                rqst = hive.AllocateTableWriteIdsRequest(dbName="mixed_sales", tableName=name, txnIds=[first])
                (before,) = direct.allocate_table_write_ids(rqst).txnToWriteIds
                direct.commit_txn(hive.CommitTxnRequest(txnid=first))
                with contextlib.closing(thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", layout_proxy(primary).port)) as through:
                    outrun(direct, through)
            runs[primary] = (hive4_client("transaction", layout_proxy(primary).uri, db, name), name, db, before.writeId)
        return runs[primary]

    return run


@pytest.mark.parametrize("primary", ["2.3", "4.0"], ids=["federated-under-2.3", "primary"])
def test_hive4_client_writes_a_transaction_on_a_hive_4_metastore(hive4_transaction, metastores_by_version, primary):
    """openTxn, allocateTableWriteId, lock, checkLock, heartbeat, commitTxn: Hive 4's own client through the proxy."""
    steps, name, db, before = hive4_transaction(primary)

    ok, failed = partial(answered, steps), partial(refused, steps)

    txn, write_id = int(ok("openTxn")), before + 1
    assert (ok("allocateTableWriteId"), ok("allocateAgain")) == (str(write_id), str(write_id))
    lock_id, state = ok("lock").split(",")
    assert state == "ACQUIRED"
    if primary != "4.0":
        assert int(lock_id) >> SLOT_SHIFT > 0, "the 4.0 metastore's lock id, with its slot"
    assert (ok("checkLock"), ok("heartbeat")) == ("ACQUIRED", "ok")
    assert ok("showLocks") == f"{db},{lock_id},{txn}"
    assert ok("openTxns") == "OPEN"
    assert ok("validWriteIds") == f"{db}.{name},{write_id},[]", "the writer's own write is valid to it"
    assert ok("commitTxn") == "ok"
    assert failed("checkLockAfterCommit") == f"NoSuchLockException: No such lock lockid:{lock_id}"
    assert failed("heartbeatAfterCommit") == f"NoSuchTxnException: No such txn: {txn}"

    # On the 4.0 metastore itself: its write id, committed; no lock left.
    with contextlib.closing(metastores_by_version["4.0"].client()) as direct:
        snapshot = f"{direct.get_open_txns_info().txn_high_water_mark}:{2**63 - 1}::"
        (there,) = direct.get_valid_write_ids(
            hive.GetValidWriteIdsRequest(fullTableNames=[f"mixed_sales.{name}"], validTxnList=snapshot)
        ).tblValidWriteIds
        assert (there.writeIdHighWaterMark, there.invalidWriteIds) == (write_id, [])
        assert not [e for e in direct.show_locks(hive.ShowLocksRequest()).locks if e.tablename == name]


@pytest.mark.parametrize("primary", ["2.3", "4.0"], ids=["federated-under-2.3", "primary"])
def test_hive4_clients_snapshot_of_open_transactions(hive4_transaction, primary):
    """get_open_txns_req (Hive 4's getValidTxns, DbTxnManager's snapshot) goes to the primary, relayed: a 4.0
    primary answers it; a 2.3 primary has no such call and says so, as it does to a Hive 4 client directly."""
    steps, *_ = hive4_transaction(primary)
    passed, value = steps["getValidTxns"]
    if primary == "2.3":
        assert not passed and "Invalid method name: 'get_open_txns_req'" in value, value
        return
    txn = int(steps["openTxn"][1])
    assert passed and value.startswith(f"{txn}:"), value
