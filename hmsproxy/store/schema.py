"""The store's tables and the ordered migrations that create and change them.

A migration is a function of one Connection, run inside the migration
transaction; its number is its position in MIGRATIONS (1-based). Never edit or
reorder a released migration: append a new one.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Column,
    Connection,
    Float,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
)

metadata = MetaData()

schema_version = Table(
    "hmsproxy_schema_version",
    metadata,
    Column("version", Integer, primary_key=True, autoincrement=False),
    Column("applied_at", Float, nullable=False),
)

#: One row (id 1): bumped by every change, so other proxies' caches notice changes cheaply.
generation = Table(
    "hmsproxy_generation",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("value", BigInteger, nullable=False),
)

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


def _m001_remotes(conn: Connection) -> None:
    for table in (generation, remote_databases, remote_tables):
        table.create(conn)
    conn.execute(generation.insert().values(id=1, value=0))


#: Applied in order; schema_version holds one row per applied migration.
MIGRATIONS = (_m001_remotes,)
