"""Remote databases and tables at run time: routing, listing, read-only, DDL through plain clients.

A remote database `local` is a synonym for database `remote` in another
metastore; a remote table `local_db.local_tbl` is a synonym for
`remote_db.remote_tbl` there. Both live in the proxy's store (store.py) or the
config (config.py), seen through an in-memory snapshot (snapshot.py). This feature:

- routes every call on a remote to its target metastore (routes.py, targets.py),
  renaming the database and, for tables, the table in both directions;
- lists remotes (listing.py): database lists, table lists of local databases,
  get_table_meta and get_table_objects_by_name;
- refuses every write on a remote (but an Iceberg writer's commit on a link that takes them),
  turns a plain client's DROP into unlinking and its
  CREATE ... ('hmsproxy.remote.uris'=...) into a new remote (protection.py);
- shows the link as parameters of get_database / get_table answers (links.py), so
  DESCRIBE EXTENDED has it;
- answers a remote's get_table / get_database from what the link recorded when it was made while
  its metastore is out of reach or has lost the object (records.py), so the DROP that follows works.
"""

from __future__ import annotations

from hmsproxy.features.catalog import VirtualDatabase, VirtualTable
from hmsproxy.features.remotes import links
from hmsproxy.features.remotes.config import SECTION
from hmsproxy.features.remotes.listing import Listing
from hmsproxy.features.remotes.model import RemoteDatabase
from hmsproxy.features.remotes.protection import Protection
from hmsproxy.features.remotes.records import Fetched, Records, way_out
from hmsproxy.features.remotes.routes import RemotesSessionState, RemoteUnavailable, Routes
from hmsproxy.features.remotes.runners import CHECK_PROPERTY, Runners
from hmsproxy.features.remotes.snapshot import RemotesCache, RemotesSnapshot
from hmsproxy.features.remotes.statements import STATEMENTS
from hmsproxy.features.remotes.store import REMOTES_SCHEMA, RemoteRepository
from hmsproxy.features.remotes.targets import Targets
from hmsproxy.pipeline.call import Call
from hmsproxy.pipeline.errors import InvalidRequest, NotFound, ProxyError
from hmsproxy.pipeline.platform import Feature, Platform
from hmsproxy.routing.methods import Kind, MethodSpec


class Remotes(Feature):
    """Remote databases and tables: routes calls on them, lists them (features/catalog.py), refuses writes."""

    name = "remotes"
    memoizable_verdict = True  # its verdicts read only the call, the caller and its records
    config_section = SECTION
    store_schema = REMOTES_SCHEMA
    statements = STATEMENTS
    #: How often the store's remotes generation is checked (another proxy may have changed them).
    check_interval_s = 1.0
    #: Calls on remote tables are routed here (on_request), never answered by the catalog.
    routes_its_tables = True

    def __init__(self, platform: Platform):
        super().__init__(platform)
        self.repo = RemoteRepository(platform.store)
        self.cache = RemotesCache(self.repo, self.check_interval_s)
        self.targets = Targets(platform.backends, lambda: platform.config().server.connect_timeout_s)
        # Each part is given what it uses, never this feature.
        self.routes = Routes(self.targets, platform.config, self._state, self.name)
        self.records = Records(self.repo, self.routes.metastore)
        self._protection = Protection(self.cache, self.view, self._state, lambda: platform.features.get("statements"))
        self._listing = Listing(self.view, self.routes.metastore)

    def view(self, call: Call) -> RemotesSnapshot:
        """The remotes this call sees: the store's plus the config's (remotes.databases / .tables)."""
        return self.cache.view(self.settings(call.router.config))

    def _state(self, call: Call) -> RemotesSessionState:
        return call.session.state(self)

    # -- seams --------------------------------------------------------------------------------

    def wants(self, spec: MethodSpec) -> bool:
        return spec.kind is Kind.ROUTED

    def new_session_state(self) -> RemotesSessionState:
        return RemotesSessionState()

    def close(self) -> None:
        self.targets.close()

    def statement_runners(self) -> dict:
        # After a statement changed the store, this proxy serves the change at once.
        return Runners(self.repo, self.cache.refresh, self._record, self._check).runners()

    def _check(self, ctx, remote) -> Fetched:
        """A new link's object, asked of its catalog over the creating client's connections: a link
        to nothing (a typo) or to a catalog out of reach is refused before it is made."""
        link = _link_of(remote)
        fetched = self.records.fetch(ctx.client.session, link)
        if fetched.missing:
            raise NotFound(f"can't create {link.subject}: {fetched.missing}")
        if fetched.unreachable:
            raise RemoteUnavailable(
                f"can't create {link.subject}: {fetched.unreachable}; to make the link all the same "
                f"(it is checked on first use), add the property '{CHECK_PROPERTY}' = 'false'"
            )
        return fetched

    def _record(self, ctx, remote, fetched: Fetched | None) -> None:
        """A new link's record: what `_check` fetched, or (an unchecked link) taken now if it can be."""
        link = _link_of(remote)
        if fetched is None:
            self.records.take(ctx.client.session, link)
        else:
            self.records.keep(link, fetched)

    def describe(self) -> list[str]:
        """Lines for hmsproxy_describe (`hmsproxy status`): the remotes and their targets' health."""
        return self.targets.describe(self.cache.view(self.settings(self.platform.config())))

    def on_request(self, call: Call):
        created = self._protection.on_create(call)
        if created is not None:
            return created
        snap = self.view(call)
        if snap.empty:
            return None
        link = links.link_of(snap, call)
        if link is None:
            return None
        answer = self._protection.on_request(call, link)
        if answer is None:
            try:
                self.routes.route(call, link)
            except (RemoteUnavailable, InvalidRequest) as e:  # a tunnel that won't open, a factory gone
                return self._unreachable(call, link, e)
        return answer

    def on_unavailable(self, call: Call, error):
        link = call.notes.get(self.name)
        return self._unreachable(call, link, error) if link is not None else None

    def _unreachable(self, call: Call, link: links.Link, error):
        """Answer from what the link recorded, or fail saying how to get rid of the link."""
        state = call.session.state(self)
        answer = self.records.answer(call, link, str(error), empty_lists=link.local in state.shown_recorded)
        if answer is None:
            if isinstance(error, ProxyError):  # says what it is about already
                raise type(error)(f"{error}; {way_out(link)}") from None
            raise RemoteUnavailable(f"hmsproxy: {link.subject}: {error}; {way_out(link)}") from None
        if call.spec.gets_database:
            state.shown_recorded.add(link.local)
        call.backend = "hmsproxy"
        return answer

    def needs_result(self, call: Call) -> bool:
        return self.name in call.notes or call.spec.drops_database

    def on_response(self, call: Call, result) -> None:
        link = call.notes.get(self.name)
        if link is None:
            self._protection.on_response(call, result)
        elif not self.records.instead_of_missing(call, link, result):
            links.show(call, link, result)
            if call.spec.gets_database:  # it answers again: its table lists are its own again
                call.session.state(self).shown_recorded.discard(link.local)

    # -- the virtual catalog (features/catalog.py) ----------------------------------------

    def virtual_databases(self, call: Call) -> list[VirtualDatabase]:
        return self._listing.virtual_databases(call)

    def virtual_tables(self, call: Call, db: str | None) -> list[VirtualTable]:
        return self._listing.virtual_tables(call, db)


def _link_of(remote) -> links.Link:
    return links.db_link(remote) if isinstance(remote, RemoteDatabase) else links.table_link(remote)
