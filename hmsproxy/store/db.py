"""Store: one SQLAlchemy engine; the core and each feature's component migrated when opened.

SQLite files get WAL mode and a busy timeout; their transactions are issued by
hand (the pysqlite driver's implicit ones would commit before DDL), and writers
use BEGIN IMMEDIATE so concurrent writers queue instead of failing. On
PostgreSQL the migrations run in one transaction under an advisory lock, so two
proxies starting at once apply each migration exactly once.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import Connection, create_engine, event, func, inspect, select, text
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import ArgumentError, IntegrityError, SQLAlchemyError

from hmsproxy.store import schema
from hmsproxy.store.schema import StoreSchema

log = logging.getLogger(__name__)

SQLITE_BUSY_TIMEOUT_S = 30.0


class StoreError(Exception):
    """The store can't be reached or used; the message says which store and why."""


class AlreadyExists(StoreError):
    pass


def _redacted(url: str) -> str:
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return url


class Store:
    def __init__(self, url: str, schemas: Sequence[StoreSchema] = ()):
        self.url = url
        self.schemas: tuple[StoreSchema, ...] = _checked(schemas)
        #: The components this store was opened with: the ones generation() and bump() accept.
        self.components: tuple[str, ...] = tuple(s.component for s in self.schemas)
        self._where = _redacted(url)
        #: Called once per failed store operation (metrics count them).
        self.on_error: Callable[[], None] = lambda: None
        try:
            parsed = make_url(url)
        except ArgumentError as e:
            raise StoreError(f"store url {url!r} is not a database URL: {e}") from None
        self.dialect = parsed.get_backend_name()
        try:
            self.engine = self._make_engine(parsed)
        except (ArgumentError, ImportError) as e:
            raise StoreError(f"store {self._where}: {e}") from None
        try:
            self.migrate()
        except StoreError:
            self.engine.dispose()
            raise
        except SQLAlchemyError as e:
            self.engine.dispose()
            raise StoreError(f"store {self._where}: can't open or migrate: {e.__class__.__name__}: {_first_line(e)}") from None

    # -- engine --------------------------------------------------------------------

    def _make_engine(self, url) -> Engine:
        if self.dialect != "sqlite":
            kwargs = {}
            if self.dialect == "postgresql" and "connect_timeout" not in url.query:
                kwargs["connect_args"] = {"connect_timeout": 10}  # libpq waits forever otherwise
            if self.dialect == "postgresql" and "+" not in url.drivername:
                # The driver the package depends on: SQLAlchemy 2.1's default for postgresql:// is psycopg 3.
                url = url.set(drivername="postgresql+psycopg2")
            return create_engine(url, pool_pre_ping=True, **kwargs)
        database = url.database
        memory = not database or database == ":memory:" or database.startswith("file::memory:")
        if not memory:
            Path(database).expanduser().resolve().parent.mkdir(parents=True, exist_ok=True)
        kwargs: dict = {"connect_args": {"check_same_thread": False, "timeout": SQLITE_BUSY_TIMEOUT_S}}
        if memory:
            from sqlalchemy.pool import StaticPool

            kwargs["poolclass"] = StaticPool  # one shared connection, or every connection sees its own db
        engine = create_engine(url, **kwargs)

        @event.listens_for(engine, "connect")
        def _on_connect(dbapi_conn, _record):
            dbapi_conn.isolation_level = None  # we issue BEGIN ourselves (see _on_begin)
            cur = dbapi_conn.cursor()
            try:
                if not memory:
                    _enable_wal(cur)
                cur.execute(f"PRAGMA busy_timeout={int(SQLITE_BUSY_TIMEOUT_S * 1000)}")
                cur.execute("PRAGMA foreign_keys=ON")
            finally:
                cur.close()

        @event.listens_for(engine, "begin")
        def _on_begin(conn):
            mode = conn.get_execution_options().get("sqlite_begin", "")
            conn.exec_driver_sql(f"BEGIN {mode}".strip())

        return engine

    @contextmanager
    def reading(self) -> Iterator[Connection]:
        """A connection in a read transaction; SQLAlchemy errors become StoreError."""
        with self._translate():
            with self.engine.connect() as conn, conn.begin():
                yield conn

    @contextmanager
    def writing(self) -> Iterator[Connection]:
        """A connection in a write transaction (SQLite: BEGIN IMMEDIATE), committed at the end."""
        with self._translate():
            with self.engine.connect() as conn:
                if self.dialect == "sqlite":
                    conn = conn.execution_options(sqlite_begin="IMMEDIATE")
                with conn.begin():
                    yield conn

    @contextmanager
    def _translate(self):
        try:
            yield
        except IntegrityError:
            raise
        except SQLAlchemyError as e:
            self.on_error()
            raise StoreError(f"store {self._where}: {e.__class__.__name__}: {_first_line(e)}") from None

    # -- migrations ----------------------------------------------------------------

    def migrate(self) -> dict[str, int]:
        """Apply the migrations this database lacks; returns the version of the core and each component."""
        for attempt in range(5):
            try:
                return self._migrate_once()
            except IntegrityError:
                # Another process applied the same migration first (dialects without a lock).
                if attempt == 4:
                    raise
                time.sleep(0.05 * (attempt + 1))
        raise AssertionError("unreachable")

    def _migrate_once(self) -> dict[str, int]:
        versions = {}
        with self.engine.connect() as conn:
            if self.dialect == "sqlite":
                conn = conn.execution_options(sqlite_begin="IMMEDIATE")
            with conn.begin():
                if self.dialect == "postgresql":
                    # Held until commit: a second proxy waits here, then finds the work done.
                    # (The key is the previous release's too, so old and new proxies never migrate at once.)
                    conn.execute(
                        text("SELECT pg_advisory_xact_lock(hashtext('hmsproxy.store.migrate:' || coalesce(current_schema(), '')))")
                    )
                if not inspect(conn).has_table(schema.migrations.name):
                    schema.migrations.create(conn)
                # The core first: it creates the tables the components' bookkeeping uses.
                for component in (schema.CORE_SCHEMA, *self.schemas):
                    versions[component.component] = self._migrate_component(conn, component)
                    if component is not schema.CORE_SCHEMA:
                        self._ensure_generation(conn, component.component)
        return versions

    def _migrate_component(self, conn: Connection, component: StoreSchema) -> int:
        m = schema.migrations
        name, known = component.component, len(component.migrations)
        applied = set(conn.execute(select(m.c.version).where(m.c.component == name)).scalars())
        newest = max(applied, default=0)
        if newest > known:
            # Raised inside the transaction: nothing of this open is kept.
            raise StoreError(
                f"store {self._where} has component '{name}' at schema version {newest}; this hmsproxy knows only "
                f"{known} (a newer hmsproxy migrated it)"
            )
        for version, migration in enumerate(component.migrations, start=1):
            if version in applied:
                continue
            log.info("store %s: applying migration %s %d (%s)", self._where, name, version, migration.__name__)
            migration(conn)
            conn.execute(m.insert().values(component=name, version=version, applied_at=time.time()))
            applied.add(version)
        return max(applied, default=0)

    @staticmethod
    def _ensure_generation(conn: Connection, component: str) -> None:
        # Created here, under the migration lock, so bump() is a plain UPDATE that never races an INSERT.
        g = schema.generations
        if conn.execute(select(g.c.value).where(g.c.component == component)).first() is None:
            conn.execute(g.insert().values(component=component, value=0))

    def schema_versions(self) -> dict[str, int]:
        """The applied version of each component in the store (the core's too, and other proxies' components)."""
        m = schema.migrations
        with self.reading() as conn:
            rows = conn.execute(select(m.c.component, func.max(m.c.version)).group_by(m.c.component)).all()
        return {component: int(version) for component, version in rows}

    # -- generations -----------------------------------------------------------------

    def generation(self, component: str) -> int:
        """The component's change counter: equal values mean nothing of the component changed."""
        self._require(component)
        g = schema.generations
        with self.reading() as conn:
            return int(conn.execute(select(g.c.value).where(g.c.component == component)).scalar_one())

    def bump(self, conn: Connection, component: str) -> int:
        """Count one change of the component; call it inside the `writing()` transaction that makes the change.
        The new generation: a writer that knows its change can apply it to its cache (GenerationCache.apply)."""
        self._require(component)
        g = schema.generations
        conn.execute(g.update().where(g.c.component == component).values(value=g.c.value + 1))
        return int(conn.execute(select(g.c.value).where(g.c.component == component)).scalar_one())

    def _require(self, component: str) -> None:
        if component not in self.components:
            raise ValueError(f"store {self._where}: component {component!r} is not one of the schemas it was opened with {self.components}")

    # -- life ------------------------------------------------------------------------

    @property
    def where(self) -> str:
        """The store's URL with any password left out (for status lines)."""
        return self._where

    def ping(self) -> None:
        with self.reading() as conn:
            conn.execute(text("SELECT 1"))

    def close(self) -> None:
        self.engine.dispose()

    def __repr__(self) -> str:
        return f"<Store {self._where}>"


def _enable_wal(cur) -> None:
    # Connections switching a new file to WAL at once deadlock on the lock upgrade, and SQLite
    # fails all but one at once instead of waiting (no busy handler): wait here as it would.
    deadline = time.monotonic() + SQLITE_BUSY_TIMEOUT_S
    while True:
        try:
            cur.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def _checked(schemas: Sequence[StoreSchema]) -> tuple[StoreSchema, ...]:
    schemas = tuple(schemas)
    for s in schemas:
        if not isinstance(s, StoreSchema):
            raise TypeError(f"store schemas must be StoreSchema, not {s!r}")
    names = [s.component for s in schemas]
    if schema.CORE in names:
        raise ValueError(f"store component name {schema.CORE!r} is the store's own")
    if len(set(names)) != len(names):
        raise ValueError(f"store components named twice: {sorted(n for n in set(names) if names.count(n) > 1)}")
    return schemas


def _first_line(e: Exception) -> str:
    msg = str(getattr(e, "orig", None) or e)
    return msg.strip().splitlines()[0] if msg.strip() else repr(e)
