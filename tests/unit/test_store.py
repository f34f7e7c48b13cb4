"""The proxy's store on real SQLite (temp file) and real PostgreSQL (the session's throwaway cluster).

Each PostgreSQL test gets its own database from the `pg_url` fixture (tests/support/postgres.py).
"""

from __future__ import annotations

import dataclasses
import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import Column, Integer, MetaData, Table, create_engine, inspect, text
from sqlalchemy.engine import make_url

from hmsproxy.features.remotes.model import RemoteDatabase, RemoteTable
from hmsproxy.features.remotes.snapshot import RemotesCache
from hmsproxy.features.remotes.store import REMOTES_SCHEMA, RemoteRepository
from hmsproxy.store import AlreadyExists, Store, StoreError, StoreSchema, schema


@pytest.fixture
def sqlite_url(tmp_path):
    return f"sqlite:///{tmp_path / 'nested' / 'dir' / 'hmsproxy.db'}"


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request):
    return request.getfixturevalue("sqlite_url" if request.param == "sqlite" else "pg_url")


@pytest.fixture
def store(url):
    s = Store(url, [REMOTES_SCHEMA])
    yield s
    s.close()


@pytest.fixture
def remotes(store):
    return RemoteRepository(store)


def rdb(name="sales", **kw):
    return RemoteDatabase(
        local_name=name,
        remote_name=kw.pop("remote_name", name),
        factory=kw.pop("factory", "thrift"),
        properties=kw.pop("properties", {"hive.metastore.uris": "thrift://h:9083"}),
        owner=kw.pop("owner", "alice"),
        created_at=kw.pop("created_at", 1700000000.5),
    )


def rtb(db="default", name="orders", **kw):
    return RemoteTable(
        local_db=db,
        local_name=name,
        remote_db=kw.pop("remote_db", "sales"),
        remote_name=kw.pop("remote_name", name),
        factory="thrift",
        properties={"hive.metastore.uris": "thrift://h:9083"},
        owner=None,
        created_at=1.0,
    )


def component(name: str, versions: int, ran: list | None = None) -> StoreSchema:
    """A component whose migration n creates table `<name>_v<n>` (so applying one twice fails) and notes it in `ran`."""

    def migration(number):
        def create(conn):
            if ran is not None:
                ran.append((name, number))
            Table(f"{name}_v{number}", MetaData(), Column("id", Integer, primary_key=True)).create(conn)

        create.__name__ = f"create_{name}_v{number}"
        return create

    return StoreSchema(name, tuple(migration(n) for n in range(1, versions + 1)))


def applied_rows(store) -> list[tuple[str, int]]:
    with store.reading() as conn:
        return [tuple(r) for r in conn.execute(text("SELECT component, version FROM hmsproxy_migrations ORDER BY component, version"))]


def has_table(store, name: str) -> bool:
    with store.reading() as conn:
        return inspect(conn).has_table(name)


# -- the remotes component ---------------------------------------------------------------


def test_databases_round_trip(remotes):
    assert remotes.list_databases() == []
    remotes.add_database(rdb("Sales", remote_name="Sales_Prod", properties={"a": "1", "hive.metastore.uris": "x"}))
    got = remotes.get_database("SALES")
    assert got == RemoteDatabase("sales", "sales_prod", "thrift", {"a": "1", "hive.metastore.uris": "x"}, "alice", 1700000000.5)
    assert remotes.get_database("nope") is None
    remotes.add_database(rdb("alpha"))
    assert [d.local_name for d in remotes.list_databases()] == ["alpha", "sales"]
    with pytest.raises(AlreadyExists, match="remote database 'sales' already exists"):
        remotes.add_database(rdb("sAlEs"))
    assert remotes.drop_database("SALES") is True
    assert remotes.drop_database("sales") is False
    assert [d.local_name for d in remotes.list_databases()] == ["alpha"]


def test_tables_round_trip(remotes):
    remotes.add_table(rtb("Default", "Orders", remote_db="Sales", remote_name="ORDERS_V2"))
    remotes.add_table(rtb("analytics", "clicks"))
    remotes.add_table(rtb("default", "apples"))
    got = remotes.get_table("DEFAULT", "orders")
    assert (got.local_db, got.local_name, got.remote_db, got.remote_name) == ("default", "orders", "sales", "orders_v2")
    assert got.properties == {"hive.metastore.uris": "thrift://h:9083"} and got.owner is None
    assert [(t.local_db, t.local_name) for t in remotes.list_tables()] == [
        ("analytics", "clicks"),
        ("default", "apples"),
        ("default", "orders"),
    ]
    assert [t.local_name for t in remotes.list_tables("DEFAULT")] == ["apples", "orders"]
    with pytest.raises(AlreadyExists):
        remotes.add_table(rtb("default", "ORDERS"))
    assert remotes.drop_table("default", "orders") is True
    assert remotes.drop_table("default", "orders") is False
    assert remotes.get_table("default", "orders") is None


def test_generation_counts_changes_only(remotes, store):
    g0 = remotes.generation()
    remotes.add_database(rdb("a"))
    remotes.add_table(rtb())
    g2 = remotes.generation()
    assert g2 == g0 + 2 == store.generation("remotes")
    with pytest.raises(AlreadyExists):
        remotes.add_database(rdb("a"))
    assert remotes.drop_database("missing") is False
    assert remotes.drop_table("x", "y") is False
    remotes.list_databases()
    assert remotes.generation() == g2
    remotes.drop_database("a")
    remotes.drop_table("default", "orders")
    assert remotes.generation() == g2 + 2


def test_repository_needs_its_schema_in_the_store(sqlite_url):
    s = Store(sqlite_url)
    try:
        with pytest.raises(ValueError, match="without REMOTES_SCHEMA"):
            RemoteRepository(s)
        assert not has_table(s, "hmsproxy_remote_databases")
    finally:
        s.close()


def test_two_stores_share_rows_and_generation(url):
    a, b = Store(url, [REMOTES_SCHEMA]), Store(url, [REMOTES_SCHEMA])
    ra, rb = RemoteRepository(a), RemoteRepository(b)
    try:
        ra.add_database(rdb("shared"))
        assert rb.get_database("shared") is not None
        assert ra.generation() == rb.generation() == 1
        rb.drop_database("shared")
        assert ra.get_database("shared") is None
        assert ra.generation() == 2
        ra.add_table(rtb())
        with pytest.raises(AlreadyExists):
            rb.add_table(rtb())
    finally:
        a.close()
        b.close()


def test_remotes_cache_reloads_only_when_remotes_change(url):
    """Other components' changes don't move the remotes generation, so proxies don't reload remotes for them."""
    s = Store(url, [REMOTES_SCHEMA, component("other", 1)])
    repo = RemoteRepository(s)
    loads = []

    class Counting:
        def generation(self):
            return repo.generation()

        def list_databases(self):
            loads.append(1)
            return repo.list_databases()

        def list_tables(self, local_db=None):
            return repo.list_tables(local_db)

    try:
        cache = RemotesCache(Counting(), check_interval_s=0)
        cache.snapshot()
        with s.writing() as conn:
            s.bump(conn, "other")
        cache.snapshot()
        assert len(loads) == 1
        repo.add_database(rdb("x"))
        assert cache.snapshot().database("x") is not None
        assert len(loads) == 2
    finally:
        s.close()


# -- components, versions, generations -------------------------------------------------------


def test_reopen_keeps_data_and_schema_versions(url):
    s = Store(url, [REMOTES_SCHEMA])
    RemoteRepository(s).add_database(rdb("kept"))
    expected = {"core": len(schema.CORE_SCHEMA.migrations), "remotes": len(REMOTES_SCHEMA.migrations)}
    assert s.schema_versions() == expected
    s.close()
    s = Store(url, [REMOTES_SCHEMA])
    try:
        assert RemoteRepository(s).get_database("kept").owner == "alice"
        assert s.migrate() == expected
        assert applied_rows(s) == [("core", 1), ("remotes", 1), ("remotes", 2)]
        assert RemoteRepository(s).generation() == 1
    finally:
        s.close()


def test_components_have_their_own_generations(url):
    s = Store(url, [REMOTES_SCHEMA, component("alpha", 1), component("beta", 1)])
    try:
        assert [s.generation(c) for c in ("remotes", "alpha", "beta")] == [0, 0, 0]
        with s.writing() as conn:
            s.bump(conn, "alpha")
            s.bump(conn, "alpha")
        RemoteRepository(s).add_database(rdb("x"))
        assert [s.generation(c) for c in ("remotes", "alpha", "beta")] == [1, 2, 0]
        with pytest.raises(StoreError), s.writing() as conn:
            s.bump(conn, "beta")
            conn.execute(text("SELECT * FROM no_such_table"))  # the bump is rolled back with its change
        assert s.generation("beta") == 0
    finally:
        s.close()


def test_only_components_the_store_was_opened_with_are_counted(store):
    with pytest.raises(ValueError, match="'indexes' is not one of"):
        store.generation("indexes")
    with pytest.raises(ValueError, match="'indexes' is not one of"), store.writing() as conn:
        store.bump(conn, "indexes")


def test_a_component_added_later_migrates_on_the_next_open(url):
    s = Store(url, [REMOTES_SCHEMA])
    RemoteRepository(s).add_database(rdb("kept"))
    s.close()

    ran = []
    s = Store(url, [REMOTES_SCHEMA, component("alpha", 2, ran)])
    try:
        assert ran == [("alpha", 1), ("alpha", 2)]
        assert s.schema_versions() == {"core": 1, "remotes": 2, "alpha": 2}
        assert has_table(s, "alpha_v1") and has_table(s, "alpha_v2")
        assert RemoteRepository(s).get_database("kept") is not None
        assert s.generation("remotes") == 1 and s.generation("alpha") == 0
    finally:
        s.close()

    ran.clear()  # the next release appends a migration: only that one runs
    s = Store(url, [REMOTES_SCHEMA, component("alpha", 3, ran)])
    try:
        assert ran == [("alpha", 3)]
        assert s.schema_versions()["alpha"] == 3
    finally:
        s.close()


def test_components_the_store_is_not_opened_with_are_left_alone(url):
    Store(url, [REMOTES_SCHEMA, component("alpha", 2)]).close()
    s = Store(url, [component("beta", 1)])  # an older or differently configured proxy on the same store
    try:
        assert s.schema_versions() == {"core": 1, "remotes": 2, "alpha": 2, "beta": 1}
        assert has_table(s, "alpha_v2")
    finally:
        s.close()


def test_a_too_new_component_version_is_refused_with_its_name(url):
    Store(url, [component("alpha", 2)]).close()
    ran = []
    with pytest.raises(StoreError, match="component 'alpha' at schema version 2; this hmsproxy knows only 1"):
        Store(url, [component("beta", 1, ran), component("alpha", 1)])
    s = Store(url)
    try:
        # One transaction: beta's migration ran, but the refusal rolled it back.
        assert ran == [("beta", 1)]
        assert "beta" not in s.schema_versions() and not has_table(s, "beta_v1")
    finally:
        s.close()


def test_a_too_new_core_is_refused(url):
    s = Store(url)
    with s.writing() as conn:
        conn.execute(text("INSERT INTO hmsproxy_migrations (component, version, applied_at) VALUES ('core', 99, 0)"))
    s.close()
    with pytest.raises(StoreError, match="component 'core' at schema version 99"):
        Store(url, [REMOTES_SCHEMA])


def test_schemas_are_checked():
    def m(conn):
        pass

    assert StoreSchema("indexes", [m]).migrations == (m,)  # a list becomes a tuple: the schema stays frozen
    with pytest.raises(dataclasses.FrozenInstanceError):
        REMOTES_SCHEMA.migrations = ()
    for bad in ("", "Remotes", "a b", "x" * 65):
        with pytest.raises(ValueError, match="store component name"):
            StoreSchema(bad, (m,))
    with pytest.raises(ValueError, match="not callable"):
        StoreSchema("indexes", ("create",))
    with pytest.raises(ValueError, match="named twice: \\['remotes'\\]"):
        Store("sqlite://", [REMOTES_SCHEMA, StoreSchema("remotes", ())])
    with pytest.raises(ValueError, match="'core' is the store's own"):
        Store("sqlite://", [StoreSchema("core", ())])
    with pytest.raises(TypeError):
        Store("sqlite://", [("remotes", (m,))])


@pytest.mark.parametrize("fresh", [True, False], ids=["new-store", "new-component"])
def test_concurrent_opening_applies_each_migration_once(url, fresh):
    if not fresh:  # the store exists; the proxies restart together with a new component
        Store(url, [REMOTES_SCHEMA]).close()
    ran, stores, errors = [], [], []
    schemas = [REMOTES_SCHEMA, component("alpha", 2, ran)]
    barrier = threading.Barrier(4)

    def open_store():
        barrier.wait()
        try:
            stores.append(Store(url, schemas))
        except Exception as e:  # pragma: no cover - the failure we look for
            errors.append(e)

    threads = [threading.Thread(target=open_store) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    try:
        assert errors == []
        assert len(stores) == 4
        assert ran == [("alpha", 1), ("alpha", 2)]
        assert applied_rows(stores[0]) == [("alpha", 1), ("alpha", 2), ("core", 1), ("remotes", 1), ("remotes", 2)]
        assert [stores[0].generation(c) for c in ("remotes", "alpha")] == [0, 0]
    finally:
        for s in stores:
            s.close()


def test_postgresql_openers_queue_on_the_migration_lock(pg_url):
    """Deterministic: all four openers are made to wait on the lock, then released together."""
    Store(pg_url, [REMOTES_SCHEMA]).close()  # an existing store; the proxies restart with a new component
    ran, stores, errors = [], [], []
    key = "hashtext('hmsproxy.store.migrate:' || coalesce(current_schema(), ''))"  # the previous release's key too
    waiting = (
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
        " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
    )

    def open_store():
        try:
            stores.append(Store(pg_url, [REMOTES_SCHEMA, component("alpha", 2, ran)]))
        except Exception as e:  # pragma: no cover - the failure we look for
            errors.append(e)

    holder = create_engine(pg_url, isolation_level="AUTOCOMMIT")
    threads = [threading.Thread(target=open_store) for _ in range(4)]
    try:
        with holder.connect() as conn:
            conn.execute(text(f"SELECT pg_advisory_lock({key})"))
            for t in threads:
                t.start()
            deadline = time.monotonic() + 30
            while conn.execute(text(waiting)).scalar() < 4:
                assert time.monotonic() < deadline, "the openers did not wait for the migration lock"
                time.sleep(0.02)
            assert ran == []
            conn.execute(text(f"SELECT pg_advisory_unlock({key})"))
        for t in threads:
            t.join(60)
        assert errors == []
        assert len(stores) == 4
        assert ran == [("alpha", 1), ("alpha", 2)]
    finally:
        for t in threads:
            t.join(60)
        holder.dispose()
        for s in stores:
            s.close()


def test_concurrent_writers(store, remotes, url):
    other = Store(url, [REMOTES_SCHEMA])
    errors = []

    def add(repo, prefix):
        try:
            for i in range(15):
                repo.add_database(rdb(f"{prefix}{i}"))
        except Exception as e:  # pragma: no cover
            errors.append(e)

    jobs = ((remotes, "x"), (RemoteRepository(other), "y"), (remotes, "z"))
    threads = [threading.Thread(target=add, args=job) for job in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    other.close()
    assert errors == []
    assert len(remotes.list_databases()) == 45
    assert remotes.generation() == 45


# -- upgrade from the previous release ----------------------------------------------------------

# The previous release's DDL, as it created its stores: one global schema version
# (version 1 = the remote tables) and one global generation row.
PREVIOUS_RELEASE_DDL = (
    "CREATE TABLE hmsproxy_schema_version (version INTEGER NOT NULL PRIMARY KEY, applied_at FLOAT NOT NULL)",
    "CREATE TABLE hmsproxy_generation (id INTEGER NOT NULL PRIMARY KEY, value BIGINT NOT NULL)",
    "CREATE TABLE hmsproxy_remote_databases (local_name VARCHAR(256) NOT NULL PRIMARY KEY, remote_name VARCHAR(256) NOT NULL,"
    " factory VARCHAR(512) NOT NULL, properties TEXT NOT NULL, owner VARCHAR(256), created_at FLOAT NOT NULL)",
    "CREATE TABLE hmsproxy_remote_tables (local_db VARCHAR(256) NOT NULL, local_name VARCHAR(256) NOT NULL,"
    " remote_db VARCHAR(256) NOT NULL, remote_name VARCHAR(256) NOT NULL, factory VARCHAR(512) NOT NULL,"
    " properties TEXT NOT NULL, owner VARCHAR(256), created_at FLOAT NOT NULL, PRIMARY KEY (local_db, local_name))",
    "INSERT INTO hmsproxy_schema_version (version, applied_at) VALUES (1, 1700000000.0)",
    "INSERT INTO hmsproxy_generation (id, value) VALUES (1, 7)",
    "INSERT INTO hmsproxy_remote_databases VALUES ('sales', 'sales_prod', 'thrift', '{\"hive.metastore.uris\": \"thrift://h:9083\"}',"
    " 'alice', 1700000000.5)",
    "INSERT INTO hmsproxy_remote_tables VALUES ('default', 'orders', 'sales', 'orders_v2', 'thrift', '{}', NULL, 1.0)",
)


def make_previous_release_store(url: str) -> None:
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            for statement in PREVIOUS_RELEASE_DDL:
                conn.exec_driver_sql(statement)
    finally:
        engine.dispose()


def test_a_previous_release_store_is_adopted_with_its_remotes(url):
    make_previous_release_store(url)
    s = Store(url, [REMOTES_SCHEMA])
    try:
        repo = RemoteRepository(s)
        assert repo.get_database("sales") == RemoteDatabase(
            "sales", "sales_prod", "thrift", {"hive.metastore.uris": "thrift://h:9083"}, "alice", 1700000000.5
        )
        assert [(t.local_db, t.local_name, t.remote_name) for t in repo.list_tables()] == [("default", "orders", "orders_v2")]
        assert s.schema_versions() == {"core": 1, "remotes": 2}  # version 2 (links' records) ran on top
        assert repo.generation() == 7  # carried over: proxies that cached generation 7 stay valid
        repo.add_database(rdb("new"))
        assert repo.generation() == 8
        assert not has_table(s, "hmsproxy_generation")  # a still running old proxy's writes now fail, not go unnoticed
    finally:
        s.close()
    s = Store(url, [REMOTES_SCHEMA])  # and it opens again as a store of this release
    try:
        assert [d.local_name for d in RemoteRepository(s).list_databases()] == ["new", "sales"]
        assert applied_rows(s) == [("core", 1), ("remotes", 1), ("remotes", 2)]
    finally:
        s.close()


def test_the_previous_release_would_refuse_a_store_of_this_one(store):
    # The previous release opens a store only if hmsproxy_schema_version's newest version is at most 1.
    with store.reading() as conn:
        versions = conn.execute(text("SELECT version FROM hmsproxy_schema_version ORDER BY version")).scalars().all()
    assert versions == [1, 2]


# -- engine, errors, life ---------------------------------------------------------------------


def test_ping_and_close(url):
    s = Store(url)
    errors = []
    s.on_error = lambda: errors.append(1)
    s.ping()
    assert errors == []
    assert s.engine.pool.checkedin() == 1  # ping returned its connection to the pool
    s.close()
    assert s.engine.pool.checkedin() == 0  # close dropped the pooled connections


def test_sqlite_creates_parent_dir_and_uses_wal(sqlite_url, tmp_path):
    s = Store(sqlite_url)
    try:
        assert (tmp_path / "nested" / "dir" / "hmsproxy.db").is_file()
        with s.reading() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar().lower() == "wal"
    finally:
        s.close()


def test_sqlite_in_memory_works():
    s = Store("sqlite://", [REMOTES_SCHEMA])
    try:
        RemoteRepository(s).add_database(rdb("m"))
        assert RemoteRepository(s).get_database("m") is not None
    finally:
        s.close()


def test_unreachable_store_raises_store_error():
    with pytest.raises(StoreError, match="store postgresql"):
        Store("postgresql+psycopg2://nobody:secret@127.0.0.1:1/none?connect_timeout=2")
    with pytest.raises(StoreError, match="not a database URL"):
        Store("not a url")


def test_plain_postgresql_url_uses_the_psycopg2_driver():
    """postgresql://, as the docs and the deploy files write it, reaches the driver hmsproxy depends on."""
    with pytest.raises(StoreError, match="store postgresql") as e:
        Store("postgresql://nobody@127.0.0.1:1/none?connect_timeout=2")
    assert "No module named" not in str(e.value)


def test_password_is_not_in_errors():
    with pytest.raises(StoreError) as e:
        Store("postgresql+psycopg2://nobody:s3cr3t@127.0.0.1:1/none?connect_timeout=2")
    assert "s3cr3t" not in str(e.value)


def test_ping_fails_when_database_goes_away(pg_url):
    s = Store(pg_url)
    try:
        s.ping()
        s.engine.dispose()
        s.engine = create_engine("postgresql+psycopg2://postgres@127.0.0.1:1/test?connect_timeout=2")
        with pytest.raises(StoreError):
            s.ping()
    finally:
        s.close()


def test_failed_operations_are_reported_for_metrics(sqlite_url):
    from hmsproxy.app import build_handler
    from hmsproxy.config.model import Config, DatabaseResolution, MetastoreConfig, ServerConfig, StoreConfig

    config = Config(
        ServerConfig(),
        DatabaseResolution.PREFIXED,
        MetastoreConfig("p", ("thrift://127.0.0.1:1",), primary=True),
        store=StoreConfig(sqlite_url),
    )
    handler = build_handler(config)
    try:
        with pytest.raises(StoreError), handler.store.reading() as conn:
            conn.execute(text("SELECT * FROM no_such_table"))
        assert handler.features.get("metrics").registry.get_sample_value("hmsproxy_store_errors_total") == 1
    finally:
        handler.close()


def test_failed_operations_call_on_error_once_each(sqlite_url):
    s = Store(sqlite_url, [REMOTES_SCHEMA])
    errors = []
    s.on_error = lambda: errors.append(1)
    try:
        repo = RemoteRepository(s)
        repo.list_databases()
        with s.writing() as conn:  # the table vanishes behind the repository's back
            conn.exec_driver_sql("DROP TABLE hmsproxy_remote_databases")
        assert errors == []
        with pytest.raises(StoreError):
            repo.list_databases()
        repo.add_table(rtb())
        with pytest.raises(AlreadyExists):  # not a store failure: not counted
            repo.add_table(rtb())
        assert errors == [1]
    finally:
        s.close()
