"""Errors of real Hive 2.3, 3.1 and 4.0 metastores, named as the client named things.

Each case is one call on a missing or conflicting object, made twice: on the metastore as the
proxy's upstream sends it (the metastore's names: what clients were told before), and through a
proxy by the client's names (a prefix, a mapped table, a `database-name-mapping`, a remote
database and a remote table with local names). The client's message must be the metastore's with
the metastore's name of the object swapped for the client's, and nothing else changed.

With HMSPROXY_ERROR_NAMES_TABLE=<file> the module writes the table docs/errors.md shows.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass

import pytest
import thriftpy2.rpc

from hmsproxy.config.model import AccessControlType, Config, DatabaseResolution, MappedTables, MetastoreConfig
from hmsproxy.downstream.server import ProxyServer
from hmsproxy.features.remotes.config import RemotesConfig
from hmsproxy.features.remotes.model import RemoteDatabase, RemoteTable
from hmsproxy.protocol import idl
from hmsproxy.testing import args, database, table
from hmsproxy.upstream.session import Session
from tests.support.federation import prefixed_config, stored_in
from tests.support.fixtures import CLIENT_TIMEOUT_S
from tests.support.served import served

hive = idl.hive

VERSIONS = ("2.3", "3.1", "4.0")
SRC, MAPPED, GONE, NONE, LOCAL = "names_src", "names_mt", "names_gone", "names_none", "names_local"


def short(version: str) -> str:
    return version.replace(".", "")


@pytest.fixture(scope="module")
def by_version(metastores, newer_metastores, tmp_path_factory) -> dict:
    """version -> metastore, each with names_src.orders (partitioned by ds) and names_mt.t_orders."""
    found = {"2.3": metastores[1], **newer_metastores}
    root = tmp_path_factory.mktemp("names-warehouse")
    for version, ms in found.items():
        client = ms.client()
        try:
            for db, name in ((SRC, "orders"), (MAPPED, "t_orders")):
                if db not in client.get_all_databases():
                    client.create_database(database(db, locationUri=(root / f"{db}_{short(version)}.db").as_uri()))
                if name not in client.get_all_tables(db):
                    client.create_table(table(db, name, partition_keys=(("ds", "string"),)))
        finally:
            client.close()
    yield found
    for ms in found.values():
        client = ms.client()
        try:
            for db in (SRC, MAPPED):
                client.drop_database(db, True, True)
        finally:
            client.close()


def federated(version: str, ms, **fields) -> MetastoreConfig:
    return MetastoreConfig(
        f"h{short(version)}",
        (ms.uri,),
        database_prefix=f"h{short(version)}_",
        access_control_type=AccessControlType.READ_AND_WRITE_ON_DATABASE_WHITELIST,
        writable_database_white_list=(SRC, MAPPED, NONE),
        mapped_tables=(MappedTables(MAPPED, ("t_.*",)),),
        hive_version=version,
        **fields,
    )


def remotes(by_version) -> RemotesConfig:
    """Per version: remote database r<v>_src (names_src there) and remote tables names_local.r<v>_items
    (names_src.orders there) and names_local.r<v>_gone (names_src.gone: no such table)."""
    dbs, tables = [], []
    for version, ms in by_version.items():
        v, uris = short(version), {"hive.metastore.uris": ms.uri}
        dbs.append(RemoteDatabase(f"r{v}_src", SRC, properties=uris))
        tables.append(RemoteTable(LOCAL, f"r{v}_items", SRC, "orders", properties=uris))
        tables.append(RemoteTable(LOCAL, f"r{v}_gone", SRC, "gone", properties=uris))
    return RemotesConfig(None, tuple(dbs), tuple(tables))


def serve(config: Config, tmp_path_factory):
    """The proxy of one resolution mode, with a store of its own."""
    return served(stored_in(config, tmp_path_factory.mktemp("names-store")))


@pytest.fixture(scope="module")
def prefixed(metastores, by_version, tmp_path_factory):
    """PREFIXED: h<v>_ before each version's databases; names_mt shows only t_* tables; the remotes."""
    base = prefixed_config(metastores[0].uri, metastores[1].uri)
    config = dataclasses.replace(base, federated=tuple(federated(v, ms) for v, ms in by_version.items()))
    client = metastores[0].client()
    try:
        if LOCAL not in client.get_all_databases():
            client.create_database(database(LOCAL, locationUri=tmp_path_factory.mktemp(LOCAL).as_uri()))
    finally:
        client.close()
    with serve(config.with_section("remotes", remotes(by_version)), tmp_path_factory) as server:
        yield server
    client = metastores[0].client()
    try:
        client.drop_database(LOCAL, True, True)
    finally:
        client.close()


@pytest.fixture(scope="module")
def manual(metastores, by_version, tmp_path_factory):
    """MANUAL: each version's names_src and names_gone (no such database) under aliases n<v>_src, n<v>_gone."""
    base = prefixed_config(metastores[0].uri, metastores[1].uri)
    primary = dataclasses.replace(base.primary, mapped_databases=("default",))
    feds = tuple(
        dataclasses.replace(
            federated(v, ms),
            database_prefix="",
            mapped_databases=(SRC, GONE),
            database_name_mapping={SRC: f"n{short(v)}_src", GONE: f"n{short(v)}_gone"},
            writable_database_white_list=(SRC, GONE),
            mapped_tables=(),
        )
        for v, ms in by_version.items()
    )
    with serve(
        dataclasses.replace(base, database_resolution=DatabaseResolution.MANUAL, primary=primary, federated=feds), tmp_path_factory
    ) as server:
        yield server


@dataclass(frozen=True)
class Case:
    what: str
    method: str
    client: dict  # the call's arguments as the client names things
    backend: dict  # the same call as the metastore knows it
    #: The object's name as the metastore and as the client name it (in that order).
    names: tuple[str, str]


#: A call's arguments naming database `d` and table `t`, by method.
TABLE_CALLS = {
    "get_table": lambda d, t: {"dbname": d, "tbl_name": t},
    "get_partition": lambda d, t: {"db_name": d, "tbl_name": t, "part_vals": ["9"]},
    "drop_table": lambda d, t: {"dbname": d, "name": t, "deleteData": False},
    "alter_table": lambda d, t: {"dbname": d, "tbl_name": t, "new_tbl": table(d, t)},
    "create_table": lambda d, t: {"tbl": table(d, t, partition_keys=(("ds", "string"),))},
}
DATABASE_CALLS = {
    "get_database": lambda d: {"name": d},
    "drop_database": lambda d: {"name": d, "deleteData": False, "cascade": False},
    "create_table": lambda d: {"tbl": table(d, "t")},
}


def on_table(what: str, client: tuple[str, str], backend: tuple[str, str]) -> Case:
    """`what` ("get_table, no such table"): a call on table `client` (db, table), `backend` to the metastore."""
    call = TABLE_CALLS[what.split(",")[0]]
    return Case(what, what.split(",")[0], call(*client), call(*backend), (".".join(backend), ".".join(client)))


def on_database(what: str, client: str, backend: str) -> Case:
    call = DATABASE_CALLS[what.split(",")[0]]
    return Case(what, what.split(",")[0], call(client), call(backend), (backend, client))


def cases(mode: str, v: str) -> list[Case]:
    """The calls of one mode on version `v`'s metastore (`v` as in h23)."""
    if mode in ("prefix", "mapped table"):
        db, src, t = (f"h{v}_{SRC}", SRC, "") if mode == "prefix" else (f"h{v}_{MAPPED}", MAPPED, "t_")
        found = [
            on_table(f"{m}, no such table", (db, f"{t}nosuch"), (src, f"{t}nosuch"))
            for m in ("get_table", "get_partition", "drop_table", "alter_table")
        ]
        found.append(on_table("create_table, table exists", (db, f"{t}orders"), (src, f"{t}orders")))
        if mode == "mapped table":
            return found
        return [
            *found,
            on_table("get_partition, no such partition", (db, "orders"), (SRC, "orders")),
            *(on_database(f"{m}, no such database", f"h{v}_{NONE}", NONE) for m in ("create_table", "get_database", "drop_database")),
            on_database("drop_database, not empty", db, SRC),
        ]
    if mode == "database-name-mapping":
        db = f"n{v}_src"
        return [
            *(on_table(f"{m}, no such table", (db, "nosuch"), (SRC, "nosuch")) for m in ("get_table", "alter_table")),
            on_table("create_table, table exists", (db, "orders"), (SRC, "orders")),
            on_database("get_database, no such database", f"n{v}_gone", GONE),
            on_database("drop_database, not empty", db, SRC),
        ]
    if mode == "remote database":
        return [on_table(f"{m}, no such table", (f"r{v}_src", "nosuch"), (SRC, "nosuch")) for m in ("get_table", "get_partition")]
    assert mode == "remote table"
    return [
        *(on_table(f"{m}, remote table gone", (LOCAL, f"r{v}_gone"), (SRC, "gone")) for m in ("get_table", "get_partition")),
        on_table("get_partition, no such partition", (LOCAL, f"r{v}_items"), (SRC, "orders")),
    ]


MODES = ("prefix", "mapped table", "database-name-mapping", "remote database", "remote table")

#: (mode, version, what, error type, the metastore's message, the client's) for the docs' table.
SEEN: list[tuple[str, ...]] = []


def metastore_error(handler, version: str, case: Case):
    """The declared exception the metastore answers `case` with, as the proxy's upstream calls it
    (for 4.0, get_table goes as get_table_req: Hive 4 has no get_table)."""
    session = Session(handler.backends, "test")
    try:
        result = session.call(handler.backends.metastore(f"h{short(version)}"), case.method, args(case.method, **case.backend))
    finally:
        session.close()
    errors = [v for k, v in vars(result).items() if k != "success" and v is not None]
    assert errors, f"{case.what}: the metastore answered without an error"
    return errors[0]


def client_error(server: ProxyServer, case: Case):
    client = thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", server.port, timeout=CLIENT_TIMEOUT_S * 1000)
    try:
        getattr(client, case.method)(**case.client)
    except Exception as e:  # the declared exception the client gets
        return e
    finally:
        client.close()
    raise AssertionError(f"{case.method} through the proxy answered without an error")


@pytest.fixture(scope="module", autouse=True)
def docs_table():
    """After the module: what its tests saw, as Markdown (a row a call, a column a version), where asked."""
    yield
    target = os.environ.get("HMSPROXY_ERROR_NAMES_TABLE")
    if not target or not SEEN:
        return
    rows: dict[tuple[str, str], dict[str, str]] = {}
    for mode, version, what, kind, before, after in SEEN:
        cell = f"`{before}`" if before == after else f"`{before}` → `{after}`"
        rows.setdefault((mode, what), {})[version] = f"{kind}: {cell}"
    lines = [f"| through | call | {' | '.join(f'Hive {v}' for v in VERSIONS)} |", "|---|---|" + "---|" * len(VERSIONS)]
    for (mode, what), by_version in sorted(rows.items(), key=lambda r: (MODES.index(r[0][0]), r[0][1])):
        lines.append(f"| {mode} | {what} | {' | '.join(by_version.get(v, '') for v in VERSIONS)} |")
    with open(target, "w") as out:
        out.write("\n".join(lines) + "\n")


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("mode", MODES)
def test_errors_name_what_the_client_named(mode, version, prefixed, manual):
    server = manual if mode == "database-name-mapping" else prefixed
    named_by_metastore = 0
    for case in cases(mode, short(version)):
        before = metastore_error(prefixed.handler, version, case)
        after = client_error(server, case)
        SEEN.append((mode, version, case.what, type(before).__name__, before.message, after.message))
        assert type(after) is type(before), case.what
        backend_name, client_name = case.names
        assert after.message == before.message.replace(backend_name, client_name), case.what
        named_by_metastore += backend_name in before.message
    # The cases prove something only where the metastore's message names the object at all.
    assert named_by_metastore, f"no {mode} case on Hive {version} names a database or table"
