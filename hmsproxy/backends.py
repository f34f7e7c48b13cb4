"""Backends: each metastore's health, Hive version and call translation.

The registry is shared by all sessions and holds only what is true of a
metastore (up or down, its version, calls it lacks). Connections belong to
sessions (see session.py).
"""

from __future__ import annotations

import logging
import re
import threading
import time
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Protocol

from thriftpy2.thrift import TApplicationException

from hmsproxy import idl
from hmsproxy.config_model import Config, MetastoreConfig
from hmsproxy.wire import BackendUnavailable, Connection, ThriftConnection

log = logging.getLogger(__name__)


@lru_cache(maxsize=64)
def version_tuple(version: str | None) -> tuple[int, ...]:
    if not version:
        return ()
    return tuple(int(x) for x in re.findall(r"\d+", version)[:3])


@dataclass(frozen=True)
class Translation:
    """How to call `target` on a backend that lacks `method`, and map the answer back."""

    target: str
    since: tuple[int, ...]  # the Hive version that removed `method`
    build: object  # args -> target args
    unwrap: object  # target success -> method success


def _get_table_req(args):
    req = idl.hive.GetTableRequest(dbName=args.dbname, tblName=args.tbl_name)
    return idl.HmsProxy.get_table_req_args(req=req)


def _get_tables_req(args):
    req = idl.hive.GetTablesRequest(dbName=args.dbname, tblNames=args.tbl_names)
    return idl.HmsProxy.get_table_objects_by_name_req_args(req=req)


#: Calls newer Hive removed, with their equivalents.
TRANSLATIONS: dict[str, Translation] = {
    "get_table": Translation("get_table_req", (4, 0, 1), _get_table_req, lambda r: r.table),
    "get_table_objects_by_name": Translation("get_table_objects_by_name_req", (4, 0, 1), _get_tables_req, lambda r: r.tables),
}


class ConnectionFactory(Protocol):
    """Makes a (not yet open) connection to one metastore; the seam tests replace (hmsproxy.testing)."""

    def __call__(self, metastore_name: str, uris: tuple[str, ...], *, connect_timeout_s: float, call_timeout_s: float) -> Connection: ...


def thrift_connect(metastore_name: str, uris: tuple[str, ...], *, connect_timeout_s: float, call_timeout_s: float) -> Connection:
    """The default factory: a real Thrift connection."""
    return ThriftConnection(metastore_name, uris, connect_timeout_s=connect_timeout_s, call_timeout_s=call_timeout_s)


@dataclass
class BackendState:
    """What the proxy knows about one metastore right now."""

    name: str
    up: bool | None = None  # None: not contacted yet
    last_error: str | None = None
    changed_at: float = field(default_factory=time.time)
    probed_version: str | None = None
    #: Methods the backend answered with "Invalid method name".
    missing_methods: set[str] = field(default_factory=set)
    #: Fan-out answers given without this metastore because it was too slow.
    fanout_timeouts: int = 0


class Backends:
    """Health, versions and translations for every metastore of the current config."""

    def __init__(self, config: Config, connect: ConnectionFactory | None = None):
        self._lock = threading.Lock()
        self._connect: ConnectionFactory = connect or thrift_connect
        self.config = config
        self.states: dict[str, BackendState] = {}
        #: Metastores outside the config that calls go to (remote databases' and tables' targets).
        self.extra: dict[str, MetastoreConfig] = {}
        self.reconfigure(config)

    def reconfigure(self, config: Config) -> None:
        with self._lock:
            self.config = config
            self.states = {m.name: self.states.get(m.name) or BackendState(m.name) for m in config.metastores}

    def metastore(self, name: str) -> MetastoreConfig:
        for m in self.config.metastores:
            if m.name == name:
                return m
        if name in self.extra:
            return self.extra[name]
        raise KeyError(name)

    def state(self, name: str) -> BackendState:
        st = self.states.get(name)
        return st if st is not None else self.states.setdefault(name, BackendState(name))

    def mark_up(self, name: str) -> None:
        st = self.state(name)
        if st.up is not True:
            if st.up is False:
                log.warning("metastore '%s' is reachable again", name)
            st.up, st.changed_at = True, time.time()

    def mark_down(self, name: str, reason: str) -> None:
        st = self.state(name)
        st.last_error = reason
        if st.up is not False:
            log.warning("metastore '%s' is down: %s", name, reason)
            st.up, st.changed_at = False, time.time()

    def note_timeout(self, name: str, reason: str) -> None:
        """A fan-out gave up waiting for this metastore (it is slow, not necessarily down)."""
        with self._lock:
            st = self.state(name)
            st.last_error = reason
            st.fanout_timeouts += 1

    def version(self, name: str) -> str | None:
        return self.metastore(name).hive_version or self.state(name).probed_version

    def translation_for(self, name: str, method: str) -> Translation | None:
        """The translation to use for `method` on metastore `name`, if it lacks the method."""
        tr = TRANSLATIONS.get(method)
        if tr is None:
            return None
        st = self.state(name)
        if method in st.missing_methods:
            return tr
        configured = version_tuple(self.metastore(name).hive_version)
        return tr if configured and configured >= tr.since else None

    def new_connection(self, metastore: MetastoreConfig, *, read_only: bool = False) -> Connection:
        server = self.config.server
        uris = metastore.read_only_uris if (read_only and metastore.read_only_uris) else metastore.uris
        return self._connect(
            metastore.name,
            tuple(uris),
            connect_timeout_s=server.connect_timeout_s,
            call_timeout_s=server.backend_timeout_s,
        )

    def call(self, conn: Connection, method: str, args):
        """Call `method` over `conn`, translating for the backend's version; returns the result struct."""
        name = conn.metastore
        tr = self.translation_for(name, method)
        try:
            if tr is not None:
                result = self._translated(conn, method, args, tr)
            else:
                try:
                    result = conn.call(method, args)
                except TApplicationException as e:
                    tr = TRANSLATIONS.get(method)
                    if tr is None or e.type != TApplicationException.UNKNOWN_METHOD:
                        raise
                    log.info("metastore '%s' lacks %s; using %s from now on", name, method, tr.target)
                    self.state(name).missing_methods.add(method)
                    result = self._translated(conn, method, args, tr)
        except BackendUnavailable as e:
            self.mark_down(name, e.reason)
            raise
        self.mark_up(name)
        return result

    @staticmethod
    def _translated(conn: Connection, method: str, args, tr: Translation):
        inner = conn.call(tr.target, tr.build(args))
        result = getattr(idl.HmsProxy, method + "_result")()
        success = getattr(inner, "success", None)
        result.success = None if success is None else tr.unwrap(success)
        for fname, value in vars(inner).items():
            if fname != "success" and value is not None and fname in vars(result):
                setattr(result, fname, value)
        return result

    def probe_version(self, conn: Connection) -> None:
        """Record what the backend reports as its version (fb303 getVersion), once."""
        st = self.state(conn.metastore)
        if st.probed_version is not None:
            return
        try:
            st.probed_version = conn.call("getVersion", idl.HmsProxy.getVersion_args()).success
        except TApplicationException:
            st.probed_version = "unknown"
