"""Transactions and locks at run time: each id goes to the metastore it belongs to, with its real id.

Where each call goes (docs/transactions.md has the table):

- `open_txns` and `get_open_txns` go to the primary, as in Waggle Dance: a new transaction's id is
  the primary's, and a reader's snapshot of transaction ids is the primary's.
- The first call of a transaction that names a database (`lock` with its id,
  `allocate_table_write_ids`, `add_dynamic_partitions`) binds it to that database's metastore
  (bindings.py). Every later call carrying its id (`commit_txn`, `abort_txn(s)`, `heartbeat`,
  `heartbeat_txn_range`, `check_lock`, ...) goes there with the real id; answers and error messages
  carry the client's ids. A call that would take it to a second metastore is refused, naming both.
- Lock ids say their metastore themselves (ids.py): `check_lock`, `unlock` and `heartbeat` of a lock
  need no store.
- `show_locks` (without a database), `get_open_txns_info` and `show_compact` are merged across the
  metastores (views.py); `get_valid_write_ids` goes to its tables' metastore (write_ids.py).
- A lock is a write unless every component is a shared read: a read lock on a read-only metastore is
  allowed, anything stronger needs write access to that component's database.
"""

from __future__ import annotations

import logging
import socket
from collections import deque

from hmsproxy.features.transactions.bindings import Bindings, Crossing, UnknownId
from hmsproxy.features.transactions.ids import Place
from hmsproxy.features.transactions.store import TRANSACTIONS_SCHEMA, TxnRepository
from hmsproxy.features.transactions.sweep import Sweep, open_ids
from hmsproxy.features.transactions.translation import Note, ids_in, rewrite_ids
from hmsproxy.features.transactions.views import MergedViews
from hmsproxy.features.transactions.write_ids import WriteIds
from hmsproxy.pipeline.call import Call
from hmsproxy.pipeline.errors import ProxyError
from hmsproxy.pipeline.platform import Feature, Platform
from hmsproxy.protocol import idl
from hmsproxy.protocol.results import declared_error
from hmsproxy.routing.router import Route
from hmsproxy.upstream.backends import version_tuple
from hmsproxy.upstream.session import Session

log = logging.getLogger(__name__)
hive = idl.hive
P = idl.HmsProxy

#: Transactions a connection bound that are remembered as its own (Hive runs one at a time per connection).
OWN_TXNS_KEPT = 16
#: Operation types that write an ACID table's files (2.3 names its transaction ids in them).
ACID_WRITES = frozenset({hive.DataOperationType.INSERT, hive.DataOperationType.UPDATE, hive.DataOperationType.DELETE})


class BackendSaid(ProxyError):
    """A metastore's own declared exception, passed on as the client's method declares it."""

    outcome = "refused"

    def __init__(self, exc):
        super().__init__(exc.message)
        self.preferred = (type(exc).__name__, "MetaException")


class Transactions(Feature):
    name = "transactions"
    memoizable_verdict = True  # its verdicts read only the call, the caller and its records
    store_schema = TRANSACTIONS_SCHEMA
    methods = frozenset(
        {
            "lock", "check_lock", "unlock", "heartbeat", "heartbeat_txn_range", "commit_txn", "abort_txn", "abort_txns",
            "allocate_table_write_ids", "get_valid_write_ids", "add_dynamic_partitions", "show_locks",
            "get_open_txns_info", "show_compact",
        }
    )  # fmt: skip
    #: Lock components are checked one by one (a shared read lock is a read).
    checks_own_writes = frozenset({"lock"})

    def __init__(self, platform: Platform):
        super().__init__(platform)
        if platform.store is None:
            raise ValueError("the transactions feature needs the proxy's store (bindings live there)")
        self.bindings = Bindings(TxnRepository(platform.store))
        # Each part is given what it uses, never this feature.
        self.views = MergedViews(self.bindings, platform.executor, self.locate_txn, self.name)
        self.write_ids = WriteIds(self.bindings, platform.backends.version, self.call, self.own_txns, self.name)
        self.sweep = Sweep(self.bindings, self._open_txn_ids, platform.executor.submit)
        self._by_id = {
            "commit_txn": self._by_txn,
            "abort_txn": self._by_txn,
            "abort_txns": self._abort_txns,
            "check_lock": self._by_lock,
            "unlock": self._by_lock,
            "heartbeat": self._heartbeat,
            "heartbeat_txn_range": self._heartbeat_range,
            "get_valid_write_ids": self.write_ids.get_valid_write_ids,
            "get_open_txns_info": self.views.open_txns_info,
            "show_compact": self.views.show_compact,
            "show_locks": self.views.show_locks,
        }
        self._by_database = {
            "lock": self._lock,
            "allocate_table_write_ids": self._allocate_write_ids,
            "add_dynamic_partitions": self._add_dynamic_partitions,
        }

    def new_session_state(self) -> deque:
        """The transactions this client's connection bound, newest last (its own: write_ids.py)."""
        return deque(maxlen=OWN_TXNS_KEPT)

    def own_txns(self, call: Call) -> deque:
        return call.session.state(self)

    def describe(self) -> list[str]:
        return ["transactions: ids bound to their metastores in the store (docs/transactions.md)"]

    # -- hooks ---------------------------------------------------------------------------------

    def on_request(self, call: Call):
        self.sweep.maybe()
        handle = self._by_id.get(call.method)
        return handle(call) if handle is not None else None

    def on_routed(self, call: Call):
        handle = self._by_database.get(call.method)
        return handle(call) if handle is not None else None

    def needs_result(self, call: Call) -> bool:
        return self.name in call.notes

    def on_response(self, call: Call, result) -> None:
        note: Note | None = call.notes.get(self.name)
        if note is None:
            return
        primary = call.router.primary.name
        error = declared_error(result)
        if error is not None and getattr(error, "message", None):  # the metastore's, in the client's ids
            error.message = self.in_client_ids(error.message, note, primary)
        success = getattr(result, "success", None)  # void calls have none
        if note.encode_lock and success is not None:
            success.lockid = self.bindings.encode(note.metastore, success.lockid, primary)
        if call.method == "allocate_table_write_ids" and success is not None:
            for pair in success.txnToWriteIds or []:
                pair.txnId = note.txns.get(pair.txnId, pair.txnId)
        if call.method == "get_valid_write_ids" and success is not None:
            self.write_ids.in_client_names(note, success)
        if call.method == "show_locks" and success is not None:
            self.views.show_locks_in_client_ids(note.metastore, success, primary)

    def in_client_ids(self, message: str, note: Note, primary: str) -> str:
        """A metastore's message with every id it names as the client knows it (not only this call's)."""
        txns, locks = ids_in(message)
        known_txns = {**self.bindings.proxy_txn_ids(note.metastore, txns - set(note.txns), primary), **note.txns}
        known_locks = {real: self.bindings.encode(note.metastore, real, primary) for real in locks}
        return rewrite_ids(message, known_txns, {**known_locks, **note.locks})

    # -- for the notifications feature (which finds this one by name): ids inside events ---------------

    def event_txn_ids(self, metastore: str, reals, primary: str) -> tuple[dict[int, int], frozenset[int]]:
        """For transaction ids named in `metastore`'s notification events: real id -> the id clients
        hold (a binding's, else encoded as merged views show it), and the reals the proxy opened there
        for a client's transaction (bound: that transaction's OPEN_TXN is the primary's)."""
        reals = set(reals)
        if metastore == primary:
            return {r: r for r in reals}, frozenset()
        bound = self.bindings.repo.proxy_ids(primary, metastore, reals) if reals else {}
        return self.bindings.proxy_txn_ids(metastore, reals, primary), frozenset(bound)

    def bound_elsewhere(self, primary_txns, primary: str) -> frozenset[int]:
        """Those of the primary's transaction ids bound to another metastore: the primary's own
        transaction under that id is the empty twin the proxy committed when binding."""
        found = self.bindings.repo.bindings_of(primary, primary_txns)
        return frozenset(t for t, place in found.items() if place.metastore != primary)

    def _open_txn_ids(self, metastore: str) -> set[int]:
        """The real ids of `metastore`'s open transactions, asked on the proxy's own connection (sweep.py)."""
        session = Session(self.platform.backends, "hmsproxy")
        try:
            answer = session.call(self.platform.backends.metastore(metastore), "get_open_txns_info", P.get_open_txns_info_args())
            return open_ids(answer.success)
        finally:
            session.close()

    # -- calls carrying ids only ------------------------------------------------------------------

    def _by_txn(self, call: Call):
        """commit_txn / abort_txn: to the transaction's metastore (its binding stays: sweep.py)."""
        rqst = call.args.rqst
        place = self.locate_txn(call, rqst.txnid)
        if place.metastore != call.router.primary.name:
            self.send_to(call, place, txns={place.real: rqst.txnid})
            rqst.txnid = place.real
        return None

    def _abort_txns(self, call: Call):
        """abort_txns: each metastore aborts its own; the first error (in the client's ids) is the answer."""
        rqst, primary = call.args.rqst, call.router.primary.name
        groups: dict[str, dict[int, int]] = {}
        for proxy in rqst.txn_ids:
            place = self.locate_txn(call, proxy)
            groups.setdefault(place.metastore, {})[place.real] = proxy
        if set(groups) <= {primary}:
            return None  # all the primary's, under their own ids: as it is
        result = call.spec.result_cls()
        for metastore, reals in groups.items():
            answer = self.call(
                call, metastore, "abort_txns", P.abort_txns_args(rqst=hive.AbortTxnsRequest(txn_ids=list(reals), errorCode=rqst.errorCode))
            )
            if answer.o1 is not None and result.o1 is None:
                answer.o1.message = rewrite_ids(answer.o1.message, reals, {})
                result.o1 = answer.o1
        return result

    def _by_lock(self, call: Call):
        """check_lock / unlock: where the lock id says; a check's transaction id goes along."""
        rqst, primary = call.args.rqst, call.router.primary.name
        lock = self.locate_lock(rqst.lockid, primary)
        if lock.metastore == primary:
            return None  # the primary's lock, its transaction the primary's too (else the primary says so)
        txns = {}
        if getattr(rqst, "txnid", None):
            txn = self.locate_txn(call, rqst.txnid)
            txns = {txn.real: rqst.txnid}
            rqst.txnid = txn.real
        self.send_to(call, lock, txns=txns, locks={lock.real: rqst.lockid}, encode_lock=call.method == "check_lock")
        rqst.lockid = lock.real
        return None

    def _heartbeat(self, call: Call):
        ids_, primary = call.args.ids, call.router.primary.name
        txn = self.locate_txn(call, ids_.txnid) if ids_.txnid else None  # first, as Hive checks them
        lock = self._lock_or_primarys(ids_.lockid, primary) if ids_.lockid else None
        place = txn or lock
        if place is None or (place.metastore == primary and (lock is None or lock.metastore == primary)):
            return None
        txns = {txn.real: ids_.txnid} if txn else {}
        locks = {lock.real: ids_.lockid} if lock else {}
        self.send_to(call, place, txns=txns, locks=locks)
        ids_.txnid, ids_.lockid = (txn.real if txn else None), (lock.real if lock else None)
        return None

    def _heartbeat_range(self, call: Call):
        """heartbeat_txn_range: the primary heartbeats the range; transactions bound elsewhere are
        heartbeated on their metastores, one by one (their real ids need not be adjacent there)."""
        rqst, primary = call.args.txns, call.router.primary.name
        bound = {
            p: place for p, place in self.bindings.repo.bindings_between(primary, rqst.min, rqst.max).items() if place.metastore != primary
        }
        if not bound:
            return None
        answer = self.call(call, primary, "heartbeat_txn_range", P.heartbeat_txn_range_args(txns=rqst)).success
        aborted = set(answer.aborted or ()) - set(bound)
        nosuch = set(answer.nosuch or ()) - set(bound)
        for proxy, place in sorted(bound.items()):
            beat = self.call(call, place.metastore, "heartbeat", P.heartbeat_args(ids=hive.HeartbeatRequest(txnid=place.real)))
            if beat.o2 is not None:
                nosuch.add(proxy)
            elif beat.o3 is not None:
                aborted.add(proxy)
        return P.heartbeat_txn_range_result(success=hive.HeartbeatTxnRangeResponse(aborted=aborted, nosuch=nosuch))

    # -- calls naming a database: they bind their transaction ----------------------------------------

    def _lock(self, call: Call):
        rqst = call.args.rqst
        access = self.platform.features.get("access")
        for component in rqst.component:  # stronger than a shared read: a write to that database
            if access is not None and component.type != hive.LockType.SHARED_READ:
                access.check(call.spec, call.router.route(component.dbname), component.dbname)
        metastore, primary = call.route.metastore.name, call.router.primary.name
        txns = {}
        if rqst.txnid:
            if metastore != primary and self._names_txn_in_files(call, rqst):
                raise ProxyError(
                    f"hmsproxy: metastore '{metastore}' runs Hive 2.3, which names transaction ids in an ACID "
                    f"table's files; transaction {rqst.txnid} is the primary's id, not one '{metastore}' knows. "
                    "Write to this table through a Hive 3+ metastore's proxy route, or directly."
                )
            place = self.bind(call, rqst.txnid, metastore, user=rqst.user, host=rqst.hostname, agent=rqst.agentInfo)
            txns = {place.real: rqst.txnid}
            rqst.txnid = place.real
        if metastore != primary or txns:
            call.notes[self.name] = Note(metastore, txns=txns, encode_lock=metastore != primary)
        return None

    def _names_txn_in_files(self, call: Call, rqst) -> bool:
        version = version_tuple(self.platform.backends.version(call.route.metastore.name))
        writes = any(c.isAcid and c.operationType in ACID_WRITES for c in rqst.component)
        return writes and bool(version) and version < (3,)

    def _allocate_write_ids(self, call: Call):
        rqst, metastore = call.args.rqst, call.route.metastore.name
        version = version_tuple(self.platform.backends.version(metastore))
        if version and version < (3,):
            raise ProxyError(
                f"hmsproxy: metastore '{metastore}' runs Hive {self.platform.backends.version(metastore)}, which has no "
                "write ids: allocate_table_write_ids needs Hive 3 or later"
            )
        txns = {}
        reals = []
        for proxy in rqst.txnIds or []:
            place = self.bind(call, proxy, metastore, user=call.session.user or "hmsproxy")
            txns[place.real] = proxy
            reals.append(place.real)
        if rqst.txnIds:
            rqst.txnIds = reals
        call.notes[self.name] = Note(metastore, txns=txns)
        return None

    def _add_dynamic_partitions(self, call: Call):
        rqst, metastore = call.args.rqst, call.route.metastore.name
        place = self.bind(call, rqst.txnid, metastore, user=call.session.user or "hmsproxy")
        call.notes[self.name] = Note(metastore, txns={place.real: rqst.txnid})
        rqst.txnid = place.real
        return None

    # -- shared by the rooms -------------------------------------------------------------------

    def locate_txn(self, call: Call, proxy_txn: int) -> Place:
        return self._placed(call, proxy_txn) or Place(call.router.primary.name, proxy_txn)

    def _placed(self, call: Call, proxy_txn: int) -> Place | None:
        try:
            return self.bindings.placed(proxy_txn, call.router.primary.name)
        except UnknownId:
            raise ProxyError(f"hmsproxy: no such transaction txnid:{proxy_txn} (its id names no metastore)") from None

    def locate_lock(self, proxy_lock: int, primary: str) -> Place:
        try:
            return self.bindings.locate_lock(proxy_lock, primary)
        except UnknownId:
            raise ProxyError(f"hmsproxy: no such lock lockid:{proxy_lock} (its id names no metastore)") from None

    def _lock_or_primarys(self, proxy_lock: int, primary: str) -> Place:
        """A heartbeat's lock: an id no metastore gave goes to the primary, which answers for it after
        its check of the transaction, in Hive's order (NoSuchTxn before NoSuchLock)."""
        try:
            return self.bindings.locate_lock(proxy_lock, primary)
        except UnknownId:
            return Place(primary, proxy_lock)

    def bind(self, call: Call, proxy_txn: int, metastore: str, *, user: str, host: str | None = None, agent: str | None = None) -> Place:
        """Where the transaction works from now on: `metastore`, opened there on its first call (module doc)."""
        primary = call.router.primary.name
        own = self.own_txns(call)
        if proxy_txn not in own:
            own.append(proxy_txn)
        place = self._placed(call, proxy_txn)  # one look-up: an unbound id costs one store read
        if place is not None:
            if place.metastore != metastore:
                raise ProxyError(str(Crossing(proxy_txn, place.metastore, metastore)))
            return place

        def open_there() -> int:
            # Still open on the primary? Else the client hears what the primary says (no such, aborted).
            beat = self.call(call, primary, "heartbeat", P.heartbeat_args(ids=hive.HeartbeatRequest(txnid=proxy_txn)))
            for exc in (beat.o1, beat.o2, beat.o3):
                if exc is not None:
                    raise BackendSaid(exc)
            request = hive.OpenTxnRequest(num_txns=1, user=user, hostname=host or socket.gethostname(), agentInfo=agent or "hmsproxy")
            return self.call(call, metastore, "open_txns", P.open_txns_args(rqst=request)).success.txn_ids[0]

        def drop(real: int) -> None:
            self.call(call, metastore, "abort_txn", P.abort_txn_args(rqst=hive.AbortTxnRequest(txnid=real)))

        try:
            place = self.bindings.bind(proxy_txn, metastore, primary, open_there, drop)
        except Crossing as e:
            raise ProxyError(str(e)) from None
        if metastore != primary:  # the primary's transaction was only a name for it: it ends, empty
            done = self.call(call, primary, "commit_txn", P.commit_txn_args(rqst=hive.CommitTxnRequest(txnid=proxy_txn)))
            if done.o1 is not None or done.o2 is not None:
                log.warning("transaction %s: the primary's empty one did not commit: %s", proxy_txn, done.o1 or done.o2)
        log.info("transaction %s bound to metastore '%s' as %s", proxy_txn, place.metastore, place.real)
        return place

    def send_to(self, call: Call, place: Place, **note) -> None:
        """Route `call` to the place's metastore, and remember what its answer must get back."""
        naming = call.router.by_name.get(place.metastore)
        if naming is None:
            raise ProxyError(f"hmsproxy: metastore '{place.metastore}' of this id is no longer in the config")
        if place.metastore != call.router.primary.name:
            call.route = Route(naming, "")
        call.notes[self.name] = Note(place.metastore, **note)

    def call(self, call: Call, metastore: str, method: str, args):
        """`method` on `metastore` over the client's own session (its set_ugi user)."""
        return call.session.call(call.router.by_name[metastore].metastore, method, args)
