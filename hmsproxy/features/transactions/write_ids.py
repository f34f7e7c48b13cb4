"""get_valid_write_ids through the federation: its tables' metastore, their names, and a snapshot it can read.

Write ids belong to one table, so they already know their metastore: they pass unchanged. What needs
care is the request: its tables are "db.table" strings (renamed both ways here), they must all live
on one metastore, and its `validTxnList` is a snapshot of *transaction* ids, which are the primary's.
For another metastore the proxy sends that metastore's own snapshot, taken now (Hive's string:
``highWaterMark:minOpenTxn:open,...:aborted,...``), capped at the caller's own transaction when the
snapshot the client sent was taken for a transaction bound there, as Hive caps it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hmsproxy.features.transactions.translation import Note
from hmsproxy.pipeline.errors import ProxyError
from hmsproxy.protocol import idl
from hmsproxy.upstream.backends import version_tuple

if TYPE_CHECKING:
    from hmsproxy.features.transactions.feature import Transactions
    from hmsproxy.pipeline.call import Call

hive = idl.hive
P = idl.HmsProxy
#: What Hive writes for "no open transaction" (Long.MAX_VALUE).
NONE_OPEN = 2**63 - 1


def split_full_name(full_name: str) -> tuple[str, str]:
    db, dot, table = full_name.partition(".")
    if not dot or not db or not table:
        raise ProxyError(f"hmsproxy: {full_name!r} is not a full table name (db.table)")
    return db, table


def valid_txn_list(high_water_mark: int, open_txns: list[int], aborted: list[int]) -> str:
    """Hive's ValidReadTxnList string for a snapshot (ids above the mark are left out, as Hive does)."""
    open_txns = sorted(t for t in open_txns if t <= high_water_mark)
    aborted = sorted(t for t in aborted if t <= high_water_mark)
    min_open = open_txns[0] if open_txns else NONE_OPEN
    return f"{high_water_mark}:{min_open}:{','.join(map(str, open_txns))}:{','.join(map(str, aborted))}"


def snapshot_mark(valid_txn_list_string: str | None) -> int | None:
    """The high-water mark a client's snapshot string starts with (its own transaction, when it has one)."""
    if not valid_txn_list_string:
        return None
    head = valid_txn_list_string.split(":", 1)[0]
    return int(head) if head.lstrip("-").isdigit() else None


class WriteIds:
    def __init__(self, feature: Transactions):
        self.feature = feature

    def get_valid_write_ids(self, call: Call):
        rqst, router = call.args.rqst, call.router
        if not rqst.fullTableNames:
            return None
        routes = []
        for full_name in rqst.fullTableNames:
            db, table = split_full_name(full_name)
            routes.append((router.route(db), full_name, table))
        route = routes[0][0]
        for other, full_name, _ in routes[1:]:
            if other.metastore is not route.metastore:
                raise ProxyError(
                    f"hmsproxy: get_valid_write_ids needs all its tables on one metastore: {full_name!r} is on "
                    f"'{other.metastore.name}', {routes[0][1]!r} on '{route.metastore.name}'"
                )
        metastore = route.metastore.name
        version = self.feature.platform.backends.version(metastore)
        if version_tuple(version) and version_tuple(version) < (3,):
            raise ProxyError(
                f"hmsproxy: metastore '{metastore}' runs Hive {version}, which has no write ids (get_valid_write_ids needs Hive 3 or later)"
            )
        tables = {}
        backend_names = []
        for table_route, full_name, table in routes:
            backend = f"{table_route.backend_db}.{table}"
            tables[backend] = full_name
            backend_names.append(backend)
        rqst.fullTableNames = backend_names
        if metastore != router.primary.name:
            rqst.validTxnList = self._snapshot_of(call, metastore, snapshot_mark(rqst.validTxnList))
        call.route = route
        call.notes[self.feature.name] = Note(metastore, tables=tables)
        return None

    def _snapshot_of(self, call: Call, metastore: str, client_mark: int | None) -> str:
        answer = self.feature.call(call, metastore, "get_open_txns_info", P.get_open_txns_info_args()).success
        mark = answer.txn_high_water_mark
        if client_mark is not None:
            own = self.feature.bindings.bound(client_mark)
            if own is not None and own.metastore == metastore:
                mark = min(mark, own.real)
        infos = answer.open_txns or []
        return valid_txn_list(
            mark, [t.id for t in infos if t.state == hive.TxnState.OPEN], [t.id for t in infos if t.state == hive.TxnState.ABORTED]
        )

    @staticmethod
    def in_client_names(note: Note, response) -> None:
        for table in response.tblValidWriteIds or []:
            table.fullTableName = note.tables.get(table.fullTableName, table.fullTableName)
