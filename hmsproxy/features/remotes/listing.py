"""Remotes in every listing (features/catalog.py's virtual catalog): database lists, table lists
of local databases, get_table_meta, get_table_objects_by_name, get_table_names_by_filter.

Each remote is asked of its own metastore; one that fails is left out of the listing, and out
of further listings for a few seconds, rather than failing it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from hmsproxy.features.catalog import VirtualDatabase, VirtualTable
from hmsproxy.features.remotes.links import Link, add_params, db_link, table_link
from hmsproxy.pipeline.call import Call
from hmsproxy.pipeline.errors import ProxyError
from hmsproxy.protocol import idl
from hmsproxy.protocol.results import declared_error
from hmsproxy.routing.naming import join_catalog, split_catalog

if TYPE_CHECKING:
    from hmsproxy.config.model import MetastoreConfig
    from hmsproxy.features.remotes.snapshot import RemotesSnapshot

log = logging.getLogger(__name__)

#: Seconds a target that failed during a listing is left out of further listings.
LISTING_BACKOFF_S = 5.0


class Listing:
    """`view(call)`: the remotes the call sees; `metastore(link)`: where a link's calls go (routes.py)."""

    def __init__(self, view: Callable[[Call], RemotesSnapshot], metastore: Callable[[Link], MetastoreConfig]):
        self._view = view
        self._metastore = metastore
        self._backoff: dict[str, float] = {}
        self._backoff_lock = threading.Lock()

    def virtual_databases(self, call: Call) -> list[VirtualDatabase]:
        return [VirtualDatabase(local, self._metas_of(rd)) for local, rd in self._view(call).databases.items()]

    def virtual_tables(self, call: Call, db: str | None) -> list[VirtualTable]:
        snap = self._view(call)
        tables = snap.tables.values() if db is None else snap.tables_of(db)
        return [VirtualTable(rt.local_db, rt.local_name, self._loader(rt), routed=True, matches_filter=self._filter(rt)) for rt in tables]

    def _metas_of(self, rd):
        """get_table_meta of a remote database's tables, asked of its metastore."""

        def table_metas(call: Call, tbl_patterns: str, tbl_types) -> list:
            args = idl.HmsProxy.get_table_meta_args(db_patterns=rd.remote_name, tbl_patterns=tbl_patterns, tbl_types=tbl_types)
            answer = self._listing_call(call, db_link(rd), "get_table_meta", args)
            metas = list(answer.success or []) if answer is not None else []
            for meta in metas:
                meta.dbName = rd.local_name
            return metas

        return table_metas

    def _loader(self, rt):
        """The remote table as clients see it: local names, the link in its parameters."""

        def load(call: Call):
            link = table_link(rt)
            catalog = split_catalog(call.client_db or "")[0]
            args = idl.HmsProxy.get_table_args(dbname=join_catalog(catalog, rt.remote_db), tbl_name=rt.remote_name)
            answer = self._listing_call(call, link, "get_table", args)
            if answer is None or answer.success is None:
                return None
            table = answer.success
            table.dbName, table.tableName = join_catalog(catalog, rt.local_db), rt.local_name
            add_params(table, link)
            return table

        return load

    def _filter(self, rt):
        """get_table_names_by_filter: the remote metastore evaluates the filter on its own table."""

        def matches(call: Call, filter_text: str) -> bool:
            args = idl.HmsProxy.get_table_names_by_filter_args(dbname=rt.remote_db, filter=filter_text, max_tables=-1)
            answer = self._listing_call(call, table_link(rt), "get_table_names_by_filter", args)
            return answer is not None and rt.remote_name in {n.lower() for n in answer.success or []}

        return matches

    def _listing_call(self, call: Call, link: Link, method: str, args):
        """A call for a listing; a remote that fails is left out (and skipped for a few seconds)."""
        try:
            ms = self._metastore(link)
        except ProxyError as e:
            log.warning("%s: left %s out: %s", call.spec.name, link.subject, e)
            return None
        now = time.monotonic()
        with self._backoff_lock:
            if self._backoff.get(ms.name, 0) > now:
                return None
        try:
            answer = call.session.call(ms, method, args, read_only=True)
        except Exception as e:  # unavailable or a TApplicationException: a listing must not fail for it
            with self._backoff_lock:
                self._backoff[ms.name] = now + LISTING_BACKOFF_S
            log.warning("%s: left %s out: %s", call.spec.name, link.subject, e)
            return None
        if declared_error(answer) is not None:
            return None  # e.g. the remote table was dropped over there
        return answer
