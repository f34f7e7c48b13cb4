"""What operators see: locks, open transactions and compactions of every metastore, in the client's ids and names.

Each metastore answers for itself (a fan-out: one that is down is left out, logged, unless it is the
primary); lock ids and transaction ids come back as clients hold them (ids.py, bindings.py), database
names as clients know them, and objects a client can't see (databases hidden by mapped-databases)
are left out. The high-water mark of `get_open_txns_info` is the primary's, as the ids it hands out are.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Executor
from typing import TYPE_CHECKING

from hmsproxy.features.transactions.translation import Note
from hmsproxy.pipeline.errors import ProxyError
from hmsproxy.pipeline.fanout import FanOut
from hmsproxy.protocol import idl

if TYPE_CHECKING:
    from hmsproxy.features.transactions.bindings import Bindings
    from hmsproxy.features.transactions.ids import Place
    from hmsproxy.pipeline.call import Call

hive = idl.hive
P = idl.HmsProxy


class MergedViews:
    """`locate_txn(call, id)`: where a client's transaction id works; `note`: the call note the
    feature's on_response reads."""

    def __init__(self, bindings: Bindings, executor: Executor, locate_txn: Callable[[Call, int], Place], note: str):
        self.bindings = bindings
        self._executor = executor
        self._locate_txn = locate_txn
        self._note = note

    def _gather(self, call: Call, method: str, args, namings=None):
        fanout = FanOut(self._executor, call.router.config.server.fanout_timeout_ms)
        call.backend = "*"
        return fanout.gather(call.session, namings or call.router.namings, method, lambda _naming: args)

    # -- show_locks --------------------------------------------------------------------------------

    def show_locks(self, call: Call):
        rqst, router = call.args.rqst, call.router
        primary = router.primary.name
        txn = None
        if getattr(rqst, "txnid", None):  # Hive 4: the locks of one transaction, on its metastore
            try:
                txn = self._locate_txn(call, rqst.txnid)
            except ProxyError:  # an id no metastore of the federation gave: it holds no locks
                return P.show_locks_result(success=hive.ShowLocksResponse(locks=[]))
            rqst.txnid = txn.real
        if rqst.dbname:  # routed by its database (the handler renames); ids translated in on_response
            call.notes[self._note] = Note(router.route(rqst.dbname).metastore.name)
            return None
        namings = [router.by_name[txn.metastore]] if txn is not None else None
        locks = []
        for naming, result in self._gather(call, "show_locks", P.show_locks_args(rqst=rqst), namings):
            response = result.success
            if response is None:
                continue
            self.show_locks_in_client_ids(naming.name, response, primary)
            for element in response.locks or []:
                client = router.client_name(naming, element.dbname)
                if client is not None and (not element.tablename or naming.table_visible(element.dbname, element.tablename)):
                    element.dbname = client
                    locks.append(element)
        return P.show_locks_result(success=hive.ShowLocksResponse(locks=locks))

    def show_locks_in_client_ids(self, metastore: str, response, primary: str) -> None:
        elements = response.locks or []
        txn_ids = self.bindings.proxy_txn_ids(metastore, [e.txnid for e in elements if e.txnid], primary)
        for e in elements:
            e.lockid = self.bindings.encode(metastore, e.lockid, primary)
            if e.blockedByExtId:
                e.blockedByExtId = self.bindings.encode(metastore, e.blockedByExtId, primary)
            if e.txnid:
                e.txnid = txn_ids[e.txnid]

    # -- open transactions and compactions ---------------------------------------------------------------

    def open_txns_info(self, call: Call):
        primary = call.router.primary.name
        high_water_mark, txns = 0, []
        for naming, result in self._gather(call, "get_open_txns_info", P.get_open_txns_info_args()):
            answer = result.success
            if answer is None:
                continue
            if naming.name == primary:
                high_water_mark = answer.txn_high_water_mark
            ids = self.bindings.proxy_txn_ids(naming.name, [t.id for t in answer.open_txns or []], primary)
            for info in answer.open_txns or []:
                info.id = ids[info.id]
                txns.append(info)
        return P.get_open_txns_info_result(success=hive.GetOpenTxnsInfoResponse(txn_high_water_mark=high_water_mark, open_txns=txns))

    def show_compact(self, call: Call):
        router, compacts = call.router, []
        for naming, result in self._gather(call, "show_compact", call.args):
            for element in (result.success.compacts if result.success else None) or []:
                client = router.client_name(naming, element.dbname)
                if client is not None:
                    element.dbname = client
                    compacts.append(element)
        return P.show_compact_result(success=hive.ShowCompactResponse(compacts=compacts))
