"""Store: one SQLAlchemy engine, migrated to the newest schema when opened.

SQLite files get WAL mode and a busy timeout; their transactions are issued by
hand (the pysqlite driver's implicit ones would commit before DDL), and writers
use BEGIN IMMEDIATE so concurrent writers queue instead of failing. On
PostgreSQL the migrations run in one transaction under an advisory lock, so two
proxies starting at once apply each migration exactly once.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import Connection, create_engine, event, inspect, select, text
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import ArgumentError, IntegrityError, SQLAlchemyError

from hmsproxy.store import schema

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
    def __init__(self, url: str):
        from hmsproxy.features.remotes.store import RemoteRepository

        self.url = url
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
        except SQLAlchemyError as e:
            self.engine.dispose()
            raise StoreError(f"store {self._where}: can't open or migrate: {e.__class__.__name__}: {_first_line(e)}") from None
        self.remotes = RemoteRepository(self)

    # -- engine --------------------------------------------------------------------

    def _make_engine(self, url) -> Engine:
        if self.dialect != "sqlite":
            kwargs = {}
            if self.dialect == "postgresql" and "connect_timeout" not in url.query:
                kwargs["connect_args"] = {"connect_timeout": 10}  # libpq waits forever otherwise
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
                    cur.execute("PRAGMA journal_mode=WAL")
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

    def migrate(self) -> int:
        """Apply the migrations this database lacks; returns the schema version."""
        for attempt in range(5):
            try:
                return self._migrate_once()
            except IntegrityError:
                # Another process applied the same migration first (dialects without a lock).
                if attempt == 4:
                    raise
                time.sleep(0.05 * (attempt + 1))
        raise AssertionError("unreachable")

    def _migrate_once(self) -> int:
        with self.engine.connect() as conn:
            if self.dialect == "sqlite":
                conn = conn.execution_options(sqlite_begin="IMMEDIATE")
            with conn.begin():
                if self.dialect == "postgresql":
                    # Held until commit: a second proxy waits here, then finds the work done.
                    conn.execute(
                        text("SELECT pg_advisory_xact_lock(hashtext('hmsproxy.store.migrate:' || coalesce(current_schema(), '')))")
                    )
                if not inspect(conn).has_table(schema.schema_version.name):
                    schema.schema_version.create(conn)
                applied = set(conn.execute(select(schema.schema_version.c.version)).scalars())
                for number, migration in enumerate(schema.MIGRATIONS, start=1):
                    if number in applied:
                        continue
                    log.info("store %s: applying migration %d (%s)", self._where, number, migration.__name__)
                    migration(conn)
                    conn.execute(schema.schema_version.insert().values(version=number, applied_at=time.time()))
                    applied.add(number)
                newest = max(applied, default=0)
        if newest > len(schema.MIGRATIONS):
            raise StoreError(
                f"store {self._where} has schema version {newest}; this hmsproxy knows only "
                f"{len(schema.MIGRATIONS)} (a newer hmsproxy migrated it)"
            )
        return newest

    def schema_version(self) -> int:
        with self.reading() as conn:
            return (
                conn.execute(select(schema.schema_version.c.version).order_by(schema.schema_version.c.version.desc()).limit(1)).scalar()
                or 0
            )

    # -- generation ------------------------------------------------------------------

    def generation(self) -> int:
        with self.reading() as conn:
            return int(conn.execute(select(schema.generation.c.value).where(schema.generation.c.id == 1)).scalar_one())

    @staticmethod
    def bump(conn: Connection) -> None:
        g = schema.generation
        conn.execute(g.update().where(g.c.id == 1).values(value=g.c.value + 1))

    # -- life ------------------------------------------------------------------------

    def ping(self) -> None:
        with self.reading() as conn:
            conn.execute(text("SELECT 1"))

    def close(self) -> None:
        self.engine.dispose()

    def __repr__(self) -> str:
        return f"<Store {self._where}>"


def _first_line(e: Exception) -> str:
    msg = str(getattr(e, "orig", None) or e)
    return msg.strip().splitlines()[0] if msg.strip() else repr(e)


def store_check(store: Store):
    """A /readyz check: the store answers a trivial query."""

    def store_reachable():
        from hmsproxy.ops.readiness import CheckResult

        try:
            store.ping()
        except StoreError as e:
            return CheckResult("store", False, str(e))
        return CheckResult("store", True, store._where)

    return store_reachable
