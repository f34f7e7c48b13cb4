"""The real Hive 2.3 CLI with Hive's DbTxnManager through the proxy: its locks on a federated table
are taken, shown and released on the federated metastore.

With `hive.support.concurrency=true` and DbTxnManager, every statement locks what it touches through
the metastore (`lock`, `check_lock`, `unlock`; shared read locks for a SELECT, exclusive ones for DDL),
and `SHOW LOCKS` / `SHOW TRANSACTIONS` ask it (`show_locks`, `get_open_txns_info`).
"""

from __future__ import annotations

import contextlib
import uuid

from hmsproxy.protocol import idl
from hmsproxy.testing import table
from tests.support.ops import handler_metric

hive = idl.hive

SETUP = """
SET hive.support.concurrency=true;
SET hive.txn.manager=org.apache.hadoop.hive.ql.lockmgr.DbTxnManager;
"""


def test_hive_cli_locks_a_federated_table_on_its_metastore(hive_cli, proxy, metastores, federated_dbs):
    name = f"cli_{uuid.uuid4().hex[:8]}"
    with contextlib.closing(metastores[1].client()) as direct:
        direct.create_table(table("sales", name))
    script = (
        SETUP
        + f"""
SELECT count(*) FROM waggle_sales.{name};
ALTER TABLE waggle_sales.{name} SET TBLPROPERTIES ('touched'='by-hive-cli');
SHOW LOCKS;
SHOW TRANSACTIONS;
"""
    )

    def calls(method: str, backend: str) -> float:
        return handler_metric(proxy.handler, "hmsproxy_requests_total", method=method, backend=backend, outcome="ok")

    before = {m: calls(m, "waggle") for m in ("lock", "unlock")}
    result = hive_cli(proxy.uri, script)
    assert result.returncode == 0, result.stderr[-3000:]
    # Each statement's lock was taken and released on the federated metastore, not on the primary.
    assert calls("lock", "waggle") >= before["lock"] + 2
    assert calls("unlock", "waggle") >= before["unlock"] + 2
    with contextlib.closing(metastores[1].client()) as direct:
        assert direct.get_table("sales", name).parameters["touched"] == "by-hive-cli"
        assert [e for e in direct.show_locks(hive.ShowLocksRequest()).locks if e.tablename == name] == []
    with contextlib.closing(metastores[0].client()) as primary:
        assert [e for e in primary.show_locks(hive.ShowLocksRequest()).locks if e.tablename == name] == []
    assert "Lock ID" in result.stdout and "Transaction ID" in result.stdout
