"""Index tables changed as the calling client, through the proxy: dropped with their index, released before
DROP DATABASE.

An index table is an INDEX_TABLE on a Hive 2.3 metastore, which refuses to drop one itself
("Please do drop index instead"): it is made an ordinary MANAGED_TABLE first (its marker
parameter stays).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from hmsproxy.features import identity
from hmsproxy.features.indexes import compact
from hmsproxy.features.indexes.model import IndexRecord
from hmsproxy.pipeline.call import Call
from hmsproxy.pipeline.errors import ProxyError

if TYPE_CHECKING:
    from hmsproxy.features.indexes.snapshot import IndexRecords
    from hmsproxy.pipeline.internal_client import InternalClient
    from hmsproxy.routing.router import Router

log = logging.getLogger(__name__)


def as_ordinary_table(client, db: str, table: str) -> None:
    """An INDEX_TABLE becomes a MANAGED_TABLE (its marker parameter stays)."""
    found = client.call("get_table", dbname=db, tbl_name=table)
    if found.tableType == compact.INDEX_TABLE:
        found.tableType = "MANAGED_TABLE"
        client.call("alter_table", dbname=db, tbl_name=table, new_tbl=found)


class IndexTables:
    def __init__(self, records: IndexRecords, router: Callable[[], Router], client_for: Callable[[Call], InternalClient]):
        self._records = records
        self._router = router
        self._client_for = client_for

    def drop(self, call: Call, record: IndexRecord, *, delete_data: bool, strict: bool = False) -> None:
        """Drop an index table as `call`'s client (its record is gone already, so it is an ordinary table now).
        A failure is logged, or with `strict` raised naming the table left behind."""
        table = record.index_table
        db = identity.client_db(self._router(), table.metastore, table.db)
        if db is None:
            log.warning("index table %s.%s (metastore %s) is not visible here: left in place", table.db, table.table, table.metastore)
            return
        with self._client_for(call) as client:
            try:
                as_ordinary_table(client, db, table.table)
                client.call("drop_table", dbname=db, name=table.table, deleteData=delete_data)
            except ProxyError as e:
                if strict:
                    raise type(e)(f"hmsproxy: index {record.name} is dropped, but its index table {db}.{table.table} is left: {e}") from e
                log.warning("index %s: dropping its index table %s.%s failed: %s", record.name, db, table.table, e)

    def release(self, call: Call, metastore: str, db: str) -> None:
        """Before DROP DATABASE: index tables in it become ordinary tables, which a Hive 2.3 metastore
        drops (it refuses to drop an INDEX_TABLE whose index it does not know)."""
        client_db = identity.client_db(self._router(), metastore, db)
        tables = [t for t in self._records.snapshot().by_index_table if (t.metastore, t.db) == (metastore, db)]
        if client_db is None or not tables:
            return
        with self._client_for(call) as client:
            for t in tables:
                try:
                    as_ordinary_table(client, client_db, t.table)
                except ProxyError as e:
                    log.warning("index table %s.%s: can't make it an ordinary table before DROP DATABASE: %s", client_db, t.table, e)
