"""The proxy's store on real SQLite (temp file) and real PostgreSQL (127.0.0.1:5432, database `test`).

Each PostgreSQL test gets its own schema (dropped afterwards), so runs never collide.
"""

from __future__ import annotations

import threading
import uuid

import pytest
from sqlalchemy import create_engine, text

from hmsproxy.features.remotes.model import RemoteDatabase, RemoteTable
from hmsproxy.store import AlreadyExists, Store, StoreError, schema

PG_SERVER = "postgresql+psycopg2://postgres@127.0.0.1:5432/test"


def _pg_available() -> bool:
    try:
        engine = create_engine(PG_SERVER, connect_args={"connect_timeout": 3})
        with engine.connect() as c:
            c.execute(text("SELECT 1"))
        engine.dispose()
        return True
    except Exception:
        return False


PG = _pg_available()


@pytest.fixture
def pg_url():
    if not PG:
        pytest.skip("no PostgreSQL at 127.0.0.1:5432 (database test)")
    name = f"hmsproxy_test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(PG_SERVER, isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        c.execute(text(f'CREATE SCHEMA "{name}"'))
    yield f"{PG_SERVER}?options=-csearch_path%3D{name}"
    with admin.connect() as c:
        c.execute(text(f'DROP SCHEMA "{name}" CASCADE'))
    admin.dispose()


@pytest.fixture
def sqlite_url(tmp_path):
    return f"sqlite:///{tmp_path / 'nested' / 'dir' / 'hmsproxy.db'}"


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request):
    return request.getfixturevalue("sqlite_url" if request.param == "sqlite" else "pg_url")


@pytest.fixture
def store(url):
    s = Store(url)
    yield s
    s.close()


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


def test_databases_round_trip(store):
    assert store.remotes.list_databases() == []
    store.remotes.add_database(rdb("Sales", remote_name="Sales_Prod", properties={"a": "1", "hive.metastore.uris": "x"}))
    got = store.remotes.get_database("SALES")
    assert got == RemoteDatabase("sales", "sales_prod", "thrift", {"a": "1", "hive.metastore.uris": "x"}, "alice", 1700000000.5)
    assert store.remotes.get_database("nope") is None
    store.remotes.add_database(rdb("alpha"))
    assert [d.local_name for d in store.remotes.list_databases()] == ["alpha", "sales"]
    with pytest.raises(AlreadyExists, match="remote database 'sales' already exists"):
        store.remotes.add_database(rdb("sAlEs"))
    assert store.remotes.drop_database("SALES") is True
    assert store.remotes.drop_database("sales") is False
    assert [d.local_name for d in store.remotes.list_databases()] == ["alpha"]


def test_tables_round_trip(store):
    store.remotes.add_table(rtb("Default", "Orders", remote_db="Sales", remote_name="ORDERS_V2"))
    store.remotes.add_table(rtb("analytics", "clicks"))
    store.remotes.add_table(rtb("default", "apples"))
    got = store.remotes.get_table("DEFAULT", "orders")
    assert (got.local_db, got.local_name, got.remote_db, got.remote_name) == ("default", "orders", "sales", "orders_v2")
    assert got.properties == {"hive.metastore.uris": "thrift://h:9083"} and got.owner is None
    assert [(t.local_db, t.local_name) for t in store.remotes.list_tables()] == [
        ("analytics", "clicks"),
        ("default", "apples"),
        ("default", "orders"),
    ]
    assert [t.local_name for t in store.remotes.list_tables("DEFAULT")] == ["apples", "orders"]
    with pytest.raises(AlreadyExists):
        store.remotes.add_table(rtb("default", "ORDERS"))
    assert store.remotes.drop_table("default", "orders") is True
    assert store.remotes.drop_table("default", "orders") is False
    assert store.remotes.get_table("default", "orders") is None


def test_generation_counts_changes_only(store):
    g0 = store.remotes.generation()
    store.remotes.add_database(rdb("a"))
    store.remotes.add_table(rtb())
    g2 = store.remotes.generation()
    assert g2 == g0 + 2
    with pytest.raises(AlreadyExists):
        store.remotes.add_database(rdb("a"))
    assert store.remotes.drop_database("missing") is False
    assert store.remotes.drop_table("x", "y") is False
    store.remotes.list_databases()
    assert store.remotes.generation() == g2
    store.remotes.drop_database("a")
    store.remotes.drop_table("default", "orders")
    assert store.remotes.generation() == g2 + 2


def test_two_stores_share_rows_and_generation(url):
    a, b = Store(url), Store(url)
    try:
        a.remotes.add_database(rdb("shared"))
        assert b.remotes.get_database("shared") is not None
        assert a.remotes.generation() == b.remotes.generation()
        b.remotes.drop_database("shared")
        assert a.remotes.get_database("shared") is None
        with pytest.raises(AlreadyExists):
            a.remotes.add_table(rtb()) or b.remotes.add_table(rtb())
    finally:
        a.close()
        b.close()


def test_reopen_keeps_data_and_schema_version(url):
    s = Store(url)
    s.remotes.add_database(rdb("kept"))
    assert s.schema_version() == len(schema.MIGRATIONS)
    s.close()
    s = Store(url)
    try:
        assert s.remotes.get_database("kept").owner == "alice"
        assert s.migrate() == len(schema.MIGRATIONS)
        with s.reading() as conn:
            versions = conn.execute(text("SELECT version FROM hmsproxy_schema_version")).scalars().all()
        assert versions == list(range(1, len(schema.MIGRATIONS) + 1))
    finally:
        s.close()


def test_concurrent_migration_is_safe(url):
    stores, errors = [], []
    barrier = threading.Barrier(4)

    def open_store():
        barrier.wait()
        try:
            stores.append(Store(url))
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
        with stores[0].reading() as conn:
            versions = conn.execute(text("SELECT version FROM hmsproxy_schema_version")).scalars().all()
        assert versions == list(range(1, len(schema.MIGRATIONS) + 1))
        assert stores[0].remotes.generation() == 0
    finally:
        for s in stores:
            s.close()


def test_concurrent_writers(store, url):
    other = Store(url)
    errors = []

    def add(s, prefix):
        try:
            for i in range(15):
                s.remotes.add_database(rdb(f"{prefix}{i}"))
        except Exception as e:  # pragma: no cover
            errors.append(e)

    threads = [threading.Thread(target=add, args=(s, p)) for s, p in ((store, "x"), (other, "y"), (store, "z"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    other.close()
    assert errors == []
    assert len(store.remotes.list_databases()) == 45
    assert store.remotes.generation() == 45


def test_ping_and_close(store):
    store.ping()
    store.close()


def test_sqlite_creates_parent_dir_and_uses_wal(sqlite_url, tmp_path):
    s = Store(sqlite_url)
    try:
        assert (tmp_path / "nested" / "dir" / "hmsproxy.db").is_file()
        with s.reading() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar().lower() == "wal"
    finally:
        s.close()


def test_sqlite_in_memory_works():
    s = Store("sqlite://")
    try:
        s.remotes.add_database(rdb("m"))
        assert s.remotes.get_database("m") is not None
    finally:
        s.close()


def test_unreachable_store_raises_store_error():
    with pytest.raises(StoreError, match="store postgresql"):
        Store("postgresql+psycopg2://nobody:secret@127.0.0.1:1/none?connect_timeout=2")
    with pytest.raises(StoreError, match="not a database URL"):
        Store("not a url")


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
    from hmsproxy.config_model import Config, DatabaseResolution, MetastoreConfig, ServerConfig, StoreConfig

    config = Config(
        ServerConfig(),
        DatabaseResolution.PREFIXED,
        MetastoreConfig("p", ("thrift://127.0.0.1:1",), primary=True),
        store=StoreConfig(sqlite_url),
    )
    handler = build_handler(config)
    try:
        with handler.store.writing() as conn:  # the table vanishes behind the store's back
            conn.exec_driver_sql("DROP TABLE hmsproxy_remote_databases")
        with pytest.raises(StoreError):
            handler.store.remotes.list_databases()
        assert handler.metrics.registry.get_sample_value("hmsproxy_store_errors_total") == 1
    finally:
        handler.close()
