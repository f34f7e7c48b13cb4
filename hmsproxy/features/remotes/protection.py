"""What plain clients' writes do to remotes: a remote is read-only (but a link whose factory takes
commits lets an Iceberg writer's lock and alter_table through: docs/remotes.md); DROP DATABASE / DROP TABLE of
one drops only the link (nothing remote is touched); CREATE DATABASE ... WITH DBPROPERTIES
('hmsproxy.remote.uris'=...) and CREATE TABLE ... TBLPROPERTIES (...) make a remote; dropping a
local database takes the links of its remote tables with it.

Creating and dropping run as the statements they mean (runners.py holds their rules); only
the config's own remotes, which the store doesn't know, are checked here.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from hmsproxy.features.remote_marks import LINK_DATABASE, LINK_FACTORY, LINK_TABLE, is_link
from hmsproxy.features.remotes import statements as st
from hmsproxy.features.remotes.factories import COMMIT_METHODS, DEFAULT_FACTORY
from hmsproxy.features.remotes.links import Link
from hmsproxy.features.remotes.model import shown
from hmsproxy.features.remotes.targets import link_properties, normalize_factory
from hmsproxy.pipeline.call import Call
from hmsproxy.pipeline.errors import AccessDenied, Conflict, InvalidRequest, NotFound
from hmsproxy.protocol.results import declared_error
from hmsproxy.routing.naming import split_catalog

if TYPE_CHECKING:
    from hmsproxy.features.remotes.routes import RemotesSessionState
    from hmsproxy.features.remotes.snapshot import RemotesCache, RemotesSnapshot
    from hmsproxy.pipeline.platform import Feature

log = logging.getLogger(__name__)


class Protection:
    """`view(call)`: the remotes the call sees; `state(call)`: the client's RemotesSessionState;
    `statements()`: the statements feature, which runs a plain client's CREATE or DROP of a remote."""

    def __init__(
        self,
        cache: RemotesCache,
        view: Callable[[Call], RemotesSnapshot],
        state: Callable[[Call], RemotesSessionState],
        statements: Callable[[], Feature | None],
    ):
        self._cache = cache
        self._view = view
        self._state = state
        self._statements = statements

    def on_create(self, call: Call):
        """A CREATE that asks for a remote: made, and answered here (else None: not one)."""
        spec = call.spec
        if spec.creates_database:
            db = spec.new_database(call.args)
            if db is not None and is_link(db.parameters):
                return self._create_database(call, db)
        if spec.creates_table:
            tbl = spec.new_table(call.args)
            if tbl is not None and is_link(tbl.parameters):
                return self._create_table(call, tbl)
        return None

    def on_request(self, call: Call, link: Link):
        """A call on a remote: a DROP of it unlinks it (answered here), another write is refused."""
        spec = call.spec
        if link.kind == "database" and spec.drops_database:
            return self._unlink(call, link, st.DropRemoteDatabase(link.local, source=f"DROP REMOTE DATABASE {link.local}"))
        if link.kind == "table" and spec.drops_table:
            return self._unlink(call, link, st.DropRemoteTable(link.local_db, link.local_table, source=f"DROP REMOTE TABLE {link.local}"))
        if link.kind == "database" and spec.name == "get_all_tables":
            self._state(call).listed_all.add(link.local)
        if link.kind == "database" and spec.drops_table and link.local in self._state(call).listed_all:
            # A Hive client's DROP DATABASE ... CASCADE drops each table it listed before the database,
            # and goes on past a table that is not there: the DROP DATABASE then unlinks.
            raise NotFound(
                f"hmsproxy: {link.local}.{call.table} is not dropped: it is a table of {link.subject}, read-only; "
                f"DROP DATABASE {link.local} removes the link"
            )
        if spec.name == "lock":
            return None  # an Iceberg writer's commit lock: the primary holds it (routes.py); its alter_table decides
        if link.takes_commits and spec.name in COMMIT_METHODS:
            return None  # an Iceberg writer's commit: its catalog answers
        if spec.writes:
            raise AccessDenied(f"hmsproxy: {link.subject} is read-only: it links to {link.remote} in {link.where}")
        return None

    def on_response(self, call: Call, result) -> None:
        """After DROP DATABASE of a local database: the links of its remote tables go too."""
        if call.spec.drops_database and call.client_db and declared_error(result) is None:
            self._drop_links_of(call.client_db)

    # -- creating and dropping links -------------------------------------------------

    def _create_database(self, call: Call, db):
        local = split_catalog(db.name or "")[1].lower()
        if not local:
            raise InvalidRequest("hmsproxy: a remote database needs a name")
        params = dict(db.parameters or {})
        remote = (params.get(LINK_DATABASE) or local).strip().lower()
        factory, properties = normalize_factory(params.get(LINK_FACTORY)), link_properties(params)
        source = spelled(f"DATABASE {local} CONNECTED TO {remote}", factory, "DB", properties)
        statement = st.CreateRemoteDatabase(local, remote, factory, properties, source=source)
        return self._create(call, statement, static_clash=local in self._view(call).static_databases)

    def _create_table(self, call: Call, tbl):
        local_db = split_catalog(tbl.dbName or "")[1].lower()
        local_name = (tbl.tableName or "").lower()
        params = dict(tbl.parameters or {})
        remote_db = (params.get(LINK_DATABASE) or local_db).strip().lower()
        remote_name = (params.get(LINK_TABLE) or local_name).strip().lower()
        factory, properties = normalize_factory(params.get(LINK_FACTORY)), link_properties(params)
        source = spelled(f"TABLE {local_db}.{local_name} CONNECTED TO {remote_db}.{remote_name}", factory, "TBL", properties)
        statement = st.CreateRemoteTable(local_db, local_name, remote_db, remote_name, factory, properties, source=source)
        snap = self._view(call)
        clash = (local_db, local_name) in snap.static_tables or local_db in snap.static_databases
        return self._create(call, statement, static_clash=clash)

    def _create(self, call: Call, statement, *, static_clash: bool):
        """A plain client's CREATE with hmsproxy.remote.* properties, run as the statement it means."""
        what = f"remote {'table' if isinstance(statement, st.CreateRemoteTable) else 'database'}"
        if static_clash:
            raise Conflict(
                f"hmsproxy: can't create {what} {statement.name}: the name is taken by a remote defined in the proxy's configuration"
            )
        self._run(call, statement)
        return call.spec.result_cls()

    def _unlink(self, call: Call, link: Link, statement):
        """DROP DATABASE/TABLE of a remote from a plain client: the link goes, nothing remote is touched."""
        if link.static:
            raise AccessDenied(f"hmsproxy: {link.subject} is defined in the proxy's configuration (remotes.{link.kind}s); remove it there")
        self._run(call, statement)
        state = self._state(call)
        state.shown_recorded.discard(link.local)
        state.listed_all.discard(link.local)
        log.info("%s dropped by %s (the link only; %s in %s is untouched)", link.subject, call.session.user, link.remote, link.where)
        return call.spec.result_cls()

    def _run(self, call: Call, statement) -> None:
        self._statements().execute(statement, call.session.user, None, call=call)
        call.backend = "hmsproxy"

    def _drop_links_of(self, client_db: str) -> None:
        db = split_catalog(client_db)[1].lower()
        for rt in self._cache.snapshot().tables_of(db):
            self._cache.repository.drop_table(rt.local_db, rt.local_name)
        self._cache.refresh()


def spelled(what: str, factory: str, kind: str, properties: dict[str, str]) -> str:
    """A plain client's CREATE of a remote as the statement it means, for the log: secrets masked."""
    via = f" VIA '{factory}'" if factory != DEFAULT_FACTORY else ""
    props = ", ".join(f"'{k}'='{shown(k, v)}'" for k, v in sorted(properties.items()))
    return f"CREATE REMOTE {what}{via} WITH {kind}PROPERTIES ({props}) (a client's CREATE with hmsproxy.remote.* properties)"
