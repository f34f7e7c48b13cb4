"""Where a call on a remote goes: the target's metastore, the database (and table) renamed both ways.

The remote database is a MANUAL naming with an alias (remote name -> local name); a remote
table's name is rewritten in the call (routing/table_rewrite.py) and back in its answer (links.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from hmsproxy.config.model import DatabaseResolution
from hmsproxy.features.remotes.copies import DerivedConfigs
from hmsproxy.features.remotes.factories import UnknownFactory
from hmsproxy.features.remotes.links import Link
from hmsproxy.features.remotes.tunnels import TunnelError
from hmsproxy.pipeline.call import Call
from hmsproxy.pipeline.errors import UNAVAILABLE_TYPES, InvalidRequest, ProxyError
from hmsproxy.protocol import idl
from hmsproxy.routing.naming import MetastoreNaming, split_catalog
from hmsproxy.routing.router import Route
from hmsproxy.routing.table_rewrite import rewrite_tables, table_renamer

hive = idl.hive

if TYPE_CHECKING:
    from hmsproxy.config.model import Config, MetastoreConfig
    from hmsproxy.features.remotes.targets import Targets


class RemoteUnavailable(ProxyError):
    preferred = UNAVAILABLE_TYPES
    outcome = "unavailable"


@dataclass
class RemotesSessionState:
    #: Target metastore -> the URIs this client's connection to it was made for.
    seen_uris: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: Remote databases this client was shown from their records (records.py), their metastore out of reach.
    shown_recorded: set[str] = field(default_factory=set)
    #: Remote databases whose tables this client listed with get_all_tables: the step of a Hive
    #: client's DROP DATABASE ... CASCADE that drops each table next (protection.py).
    listed_all: set[str] = field(default_factory=set)


class Routes:
    """`state(call)`: the client's RemotesSessionState; `note`: the call note that carries the link
    to the feature's later hooks."""

    def __init__(self, targets: Targets, config: Callable[[], Config], state: Callable[[Call], RemotesSessionState], note: str):
        self._targets = targets
        self._config = config
        self._state = state
        self._note = note
        #: The renaming copy of a target's config per (target, remote db, local db).
        self._renamed = DerivedConfigs()

    def route(self, call: Call, link: Link) -> None:
        """Send `call` to its remote's metastore, its names rewritten to the remote ones."""
        catalog = split_catalog(call.client_db)[0] if call.client_db else None
        call.subject = link.subject
        if call.spec.name == "lock":
            return self._lock_on_primary(call, link)
        ms = self.metastore(link)
        # A rebuilt SSH tunnel listens on a new port: this session's old connection is stale.
        seen = self._state(call).seen_uris
        if seen.get(ms.name, ms.uris) != ms.uris:
            call.session.discard(ms.name)
        seen[ms.name] = ms.uris
        if link.remote_db != link.local_db:
            ms = self._renaming(ms, link.remote_db, link.local_db)
        renamed = link.kind == "table" and link.local_table != link.remote_table
        tables = ((link.remote_table, link.local_table),) if renamed else ()
        call.route = Route(MetastoreNaming(ms, DatabaseResolution.MANUAL), link.remote_db, catalog, renamed_tables=tables)
        if renamed:
            rewrite_tables(call.args, table_renamer(link.local_table, link.remote_table))
        call.notes[self._note] = link

    def _renaming(self, ms: MetastoreConfig, remote_db: str, local_db: str) -> MetastoreConfig:
        """`ms` with `remote_db` named `local_db` to the client, the same object while `ms` is."""
        return self._renamed.of((ms.name, remote_db, local_db), ms, database_name_mapping={remote_db: local_db})

    def _lock_on_primary(self, call: Call, link: Link) -> None:
        """An Iceberg writer's commit lock on a remote table: a catalog has no Hive locks, so the
        primary holds it under the client's names; every proxy sharing the primary sees it, and
        check_lock and unlock find it by its (primary's) id. Only tables of the link, outside
        transactions (as Iceberg's commits lock), are locked here. On a read-only link the lock is
        granted all the same: the alter_table after it is refused, which Iceberg reports at once,
        where a refused lock is retried for minutes (iceberg.hive.lock-creation-timeout-ms)."""
        if call.args.rqst.txnid:
            raise InvalidRequest(f"hmsproxy: {link.subject} takes Iceberg commits, not transactions: lock it without a txnid")
        for component in call.args.rqst.component or ():
            db, table = split_catalog(component.dbname or "")[1].lower(), (component.tablename or "").lower()
            if not table or (f"{db}.{table}" != link.local if link.kind == "table" else db != link.local):
                raise InvalidRequest(f"hmsproxy: a lock on {link.subject} can only lock its tables, not {db}.{table or '*'}")
            # No ACID table's lock: the primary must not treat it as one (a Hive 2.3 metastore with
            # hive.in.test refuses pyiceberg's UNSET operation type; NO_TXN is what it is).
            component.isAcid = False
            if component.operationType in (None, hive.DataOperationType.UNSET):
                component.operationType = hive.DataOperationType.NO_TXN
        call.route = Route(MetastoreNaming(call.router.primary.metastore, DatabaseResolution.MANUAL), link.local_db, None)

    def metastore(self, link: Link):
        try:
            ms = self._targets.metastore(link.factory, link.properties)
        except TunnelError as e:
            raise RemoteUnavailable(f"hmsproxy: {link.subject}: metastore {link.where} is unavailable: {e}") from None
        except (ValueError, UnknownFactory) as e:
            raise InvalidRequest(f"hmsproxy: {link.subject}: {e}") from None
        if ms.sasl is not None and self._config().server.sasl is None:
            raise RemoteUnavailable(
                f"hmsproxy: {link.subject}: metastore {link.where} is Kerberized (hive.metastore.sasl.enabled) and this "
                "proxy has no Kerberos login to reach it: set server.sasl's principal and keytab (docs/kerberos.md)"
            )
        return ms
