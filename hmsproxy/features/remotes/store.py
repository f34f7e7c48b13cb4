"""Remote databases and tables as the store keeps them: the `remotes` component. Names are stored lower-cased.

Open the store with REMOTES_SCHEMA among its schemas, then wrap it in a RemoteRepository.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from sqlalchemy import Column, Connection, Float, MetaData, PrimaryKeyConstraint, String, Table, Text, delete, select
from sqlalchemy.exc import IntegrityError

from hmsproxy.features.remotes.model import RemoteDatabase, RemoteTable
from hmsproxy.store.db import AlreadyExists
from hmsproxy.store.schema import StoreSchema

if TYPE_CHECKING:
    from hmsproxy.store.db import Store

COMPONENT = "remotes"

metadata = MetaData()

remote_databases = Table(
    "hmsproxy_remote_databases",
    metadata,
    Column("local_name", String(256), primary_key=True),
    Column("remote_name", String(256), nullable=False),
    Column("factory", String(512), nullable=False),
    Column("properties", Text, nullable=False),  # JSON object of strings
    Column("owner", String(256), nullable=True),
    Column("created_at", Float, nullable=False),
)

remote_tables = Table(
    "hmsproxy_remote_tables",
    metadata,
    Column("local_db", String(256), nullable=False),
    Column("local_name", String(256), nullable=False),
    Column("remote_db", String(256), nullable=False),
    Column("remote_name", String(256), nullable=False),
    Column("factory", String(512), nullable=False),
    Column("properties", Text, nullable=False),
    Column("owner", String(256), nullable=True),
    Column("created_at", Float, nullable=False),
    PrimaryKeyConstraint("local_db", "local_name"),
)


#: What a link recorded of its object when it was made (records.py): the remote metastore's own
#: Table or Database, so the link can be shown, and dropped, while that metastore is unreachable.
#: Not part of the remotes' generation: a record changes no link.
remote_records = Table(
    "hmsproxy_remote_records",
    metadata,
    Column("kind", String(16), nullable=False),  # "database" or "table"
    Column("local_name", String(513), nullable=False),  # "db" or "db.tbl"
    Column("recorded", Text, nullable=False),  # the Thrift struct, binary protocol, base64
    Column("recorded_at", Float, nullable=False),
    PrimaryKeyConstraint("kind", "local_name"),
)


def _m001_remote_tables(conn: Connection) -> None:
    # Stores of the previous release already have these tables: the store records them as
    # version 1 when it adopts such a store, so this never runs there.
    remote_databases.create(conn)
    remote_tables.create(conn)


def _m002_remote_records(conn: Connection) -> None:
    remote_records.create(conn)


#: Append-only: never edit or reorder a released migration.
REMOTES_SCHEMA = StoreSchema(COMPONENT, (_m001_remote_tables, _m002_remote_records))


def _record_key(kind: str, local: str) -> tuple:
    return remote_records.c.kind == kind, remote_records.c.local_name == local


def _props(text: str) -> dict[str, str]:
    value = json.loads(text or "{}")
    return {str(k): str(v) for k, v in value.items()}


def _dump(props: dict[str, str]) -> str:
    return json.dumps({str(k): str(v) for k, v in (props or {}).items()}, sort_keys=True)


def _database(row) -> RemoteDatabase:
    return RemoteDatabase(row.local_name, row.remote_name, row.factory, _props(row.properties), row.owner, row.created_at)


def _table(row) -> RemoteTable:
    return RemoteTable(
        row.local_db, row.local_name, row.remote_db, row.remote_name, row.factory, _props(row.properties), row.owner, row.created_at
    )


class RemoteRepository:
    def __init__(self, store: Store):
        if COMPONENT not in store.components:
            raise ValueError(f"{store!r} was opened without REMOTES_SCHEMA")
        self._store = store

    # -- writes: one row, then this component's generation moves -----------------------

    def _insert(self, table, names: dict, remote, what: str, record: tuple[str, str]) -> None:
        """`names` plus what every remote has (factory, properties, owner, created_at). `record`:
        (kind, local name) of the link, whose record an earlier link of that name may have left."""
        values = {
            **names,
            "factory": remote.factory,
            "properties": _dump(remote.properties),
            "owner": remote.owner,
            "created_at": remote.created_at,
        }
        try:
            with self._store.writing() as conn:
                conn.execute(table.insert().values(**values))
                conn.execute(delete(remote_records).where(*_record_key(*record)))
                self._store.bump(conn, COMPONENT)
        except IntegrityError:
            raise AlreadyExists(f"{what} already exists") from None

    def _delete(self, table, *where, record: tuple[str, str]) -> bool:
        """Delete a link and its record."""
        with self._store.writing() as conn:
            gone = conn.execute(delete(table).where(*where)).rowcount > 0
            conn.execute(delete(remote_records).where(*_record_key(*record)))
            if gone:
                self._store.bump(conn, COMPONENT)
        return gone

    # -- databases -----------------------------------------------------------------

    def add_database(self, rd: RemoteDatabase) -> None:
        """Raises AlreadyExists if a remote database already has this local name."""
        row = dict(local_name=rd.local_name.lower(), remote_name=rd.remote_name.lower())
        self._insert(remote_databases, row, rd, f"remote database '{row['local_name']}'", ("database", row["local_name"]))

    def drop_database(self, local_name: str) -> bool:
        t = remote_databases
        return self._delete(t, t.c.local_name == local_name.lower(), record=("database", local_name.lower()))

    def get_database(self, local_name: str) -> RemoteDatabase | None:
        t = remote_databases
        with self._store.reading() as conn:
            row = conn.execute(select(t).where(t.c.local_name == local_name.lower())).first()
        return _database(row) if row is not None else None

    def list_databases(self) -> list[RemoteDatabase]:
        t = remote_databases
        with self._store.reading() as conn:
            return [_database(r) for r in conn.execute(select(t).order_by(t.c.local_name))]

    # -- tables --------------------------------------------------------------------

    def add_table(self, rt: RemoteTable) -> None:
        """Raises AlreadyExists if a remote table already has this local db.name."""
        row = dict(
            local_db=rt.local_db.lower(),
            local_name=rt.local_name.lower(),
            remote_db=rt.remote_db.lower(),
            remote_name=rt.remote_name.lower(),
        )
        local = f"{row['local_db']}.{row['local_name']}"
        self._insert(remote_tables, row, rt, f"remote table '{local}'", ("table", local))

    def drop_table(self, local_db: str, local_name: str) -> bool:
        t = remote_tables
        where = (t.c.local_db == local_db.lower(), t.c.local_name == local_name.lower())
        return self._delete(t, *where, record=("table", f"{local_db}.{local_name}".lower()))

    def get_table(self, local_db: str, local_name: str) -> RemoteTable | None:
        t = remote_tables
        with self._store.reading() as conn:
            row = conn.execute(select(t).where(t.c.local_db == local_db.lower(), t.c.local_name == local_name.lower())).first()
        return _table(row) if row is not None else None

    def list_tables(self, local_db: str | None = None) -> list[RemoteTable]:
        t = remote_tables
        query = select(t).order_by(t.c.local_db, t.c.local_name)
        if local_db is not None:
            query = query.where(t.c.local_db == local_db.lower())
        with self._store.reading() as conn:
            return [_table(r) for r in conn.execute(query)]

    # -- records (records.py) --------------------------------------------------------

    def record(self, kind: str, local: str, recorded: str, at: float) -> bool:
        """Keep what the link `local` ("db" or "db.tbl") recorded, if that link is in the store
        (it may have been dropped meanwhile); replaces an earlier record."""
        local = local.lower()
        if kind == "database":
            t, where = remote_databases, (remote_databases.c.local_name == local,)
        else:
            db, name = local.split(".", 1)
            t, where = remote_tables, (remote_tables.c.local_db == db, remote_tables.c.local_name == name)
        with self._store.writing() as conn:
            if conn.execute(select(t.c.local_name).where(*where)).first() is None:
                return False
            conn.execute(delete(remote_records).where(*_record_key(kind, local)))
            conn.execute(remote_records.insert().values(kind=kind, local_name=local, recorded=recorded, recorded_at=at))
        return True

    def recorded(self, kind: str, local: str) -> tuple[str, float] | None:
        """(recorded, recorded_at) of the link `local`, or None."""
        r = remote_records
        with self._store.reading() as conn:
            row = conn.execute(select(r.c.recorded, r.c.recorded_at).where(*_record_key(kind, local.lower()))).first()
        return (row.recorded, row.recorded_at) if row is not None else None

    def generation(self) -> int:
        """Moves with every change of a remote (and nothing else), so caches reload only then."""
        return self._store.generation(COMPONENT)
