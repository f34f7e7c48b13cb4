"""Local metastores that grant locks the way a production one does."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from hmsproxy.dev.metastore import LocalMetastore
from hmsproxy.protocol import idl


def accept_untyped_locks(*metastores: LocalMetastore) -> None:
    """Restart each running metastore with hive.in.test=false, on the same state dir (in parallel).

    hive.in.test=true (LocalMetastore's default) is what makes a 2.3 metastore create its
    transaction tables in Derby, but it also makes it refuse a lock whose component's
    operation type is UNSET ("Bug: operationType=UNSET"), which pyiceberg and other non-Hive
    clients send. The tables are created at the first transaction call, not at start, so
    one is made before the restart; they stay in Derby after it.
    """

    def restart(ms: LocalMetastore) -> None:
        client = ms.client()
        try:
            client.show_locks(idl.hive.ShowLocksRequest())
        finally:
            client.close()
        ms.stop()
        ms.in_test = False
        ms.start()

    with ThreadPoolExecutor(len(metastores)) as pool:
        list(pool.map(restart, metastores))
