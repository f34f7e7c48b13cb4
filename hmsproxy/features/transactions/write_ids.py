"""get_valid_write_ids through the federation: its tables' metastore, their names, and a snapshot it can read.

Write ids belong to one table, so they already know their metastore: they pass unchanged. What needs
care is the request: its tables are "db.table" strings (renamed both ways here), they must all live
on one metastore, and its `validTxnList` is a snapshot of *transaction* ids, which are the primary's.
For another metastore the proxy sends that metastore's own snapshot, taken now (Hive's string:
``highWaterMark:minOpenTxn:open,...:aborted,...``). A client's snapshot for its own transaction is
capped at it and leaves it out (TxnUtils.createValidReadTxnList), so its own writes are valid to it;
the proxy does the same when the snapshot's mark is a transaction this client's connection bound
there. Only then: the primary committed the empty twin of every bound transaction, so another
client's snapshot may end at the same mark without that transaction being its own (it must see the
write as open, not valid).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import TYPE_CHECKING

from hmsproxy.features.transactions.translation import Note
from hmsproxy.pipeline.errors import ProxyError
from hmsproxy.protocol import idl
from hmsproxy.upstream.backends import version_tuple

if TYPE_CHECKING:
    from hmsproxy.features.transactions.bindings import Bindings
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
    """`version(metastore)`: the Hive version it runs; `ask(call, metastore, method, args)`: a call on a
    metastore over the client's session; `own_txns(call)`: the transactions the client's connection
    bound; `note`: the call note the feature's on_response reads."""

    def __init__(
        self,
        bindings: Bindings,
        version: Callable[[str], str | None],
        ask: Callable[..., object],
        own_txns: Callable[[Call], Collection[int]],
        note: str,
    ):
        self._bindings = bindings
        self._version = version
        self._ask = ask
        self._own_txns = own_txns
        self._note = note

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
        version = self._version(metastore)
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
        call.notes[self._note] = Note(metastore, tables=tables)
        return None

    def _snapshot_of(self, call: Call, metastore: str, client_mark: int | None) -> str:
        answer = self._ask(call, metastore, "get_open_txns_info", P.get_open_txns_info_args()).success
        mark, own = answer.txn_high_water_mark, None
        if client_mark is not None and client_mark in self._own_txns(call):
            place = self._bindings.bound(client_mark, call.router.primary.name)
            if place is not None and place.metastore == metastore:
                mark, own = min(mark, place.real), place.real
        infos = answer.open_txns or []
        return valid_txn_list(
            mark,
            [t.id for t in infos if t.state == hive.TxnState.OPEN and t.id != own],
            [t.id for t in infos if t.state == hive.TxnState.ABORTED],
        )

    @staticmethod
    def in_client_names(note: Note, response) -> None:
        for table in response.tblValidWriteIds or []:
            table.fullTableName = note.tables.get(table.fullTableName, table.fullTableName)
