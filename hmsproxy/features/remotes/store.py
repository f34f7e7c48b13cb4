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


def _m001_remote_tables(conn: Connection) -> None:
    # Stores of the previous release already have these tables: the store records them as
    # version 1 when it adopts such a store, so this never runs there.
    remote_databases.create(conn)
    remote_tables.create(conn)


#: Append-only: never edit or reorder a released migration.
REMOTES_SCHEMA = StoreSchema(COMPONENT, (_m001_remote_tables,))


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

    def _insert(self, table, names: dict, remote, what: str) -> None:
        """`names` plus what every remote has (factory, properties, owner, created_at)."""
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
                self._store.bump(conn, COMPONENT)
        except IntegrityError:
            raise AlreadyExists(f"{what} already exists") from None

    def _delete(self, table, *where) -> bool:
        with self._store.writing() as conn:
            gone = conn.execute(delete(table).where(*where)).rowcount > 0
            if gone:
                self._store.bump(conn, COMPONENT)
        return gone

    # -- databases -----------------------------------------------------------------

    def add_database(self, rd: RemoteDatabase) -> None:
        """Raises AlreadyExists if a remote database already has this local name."""
        row = dict(local_name=rd.local_name.lower(), remote_name=rd.remote_name.lower())
        self._insert(remote_databases, row, rd, f"remote database '{row['local_name']}'")

    def drop_database(self, local_name: str) -> bool:
        t = remote_databases
        return self._delete(t, t.c.local_name == local_name.lower())

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
        self._insert(remote_tables, row, rt, f"remote table '{row['local_db']}.{row['local_name']}'")

    def drop_table(self, local_db: str, local_name: str) -> bool:
        t = remote_tables
        return self._delete(t, t.c.local_db == local_db.lower(), t.c.local_name == local_name.lower())

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

    def generation(self) -> int:
        """Moves with every change of a remote (and nothing else), so caches reload only then."""
        return self._store.generation(COMPONENT)
