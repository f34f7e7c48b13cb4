"""Real Hive 3.1 and 4.0 metastores beside the session's 2.3 ones, and federations of all three.

A pytest plugin (tests/conftest.py): the metastores start once per test session, for every
test that mixes versions (Spark in tests/spark/, the Hive 4 Java client in tests/integration/).
"""

from __future__ import annotations

import dataclasses
from contextlib import ExitStack

import pytest

from hmsproxy.config.model import AccessControlType, MappedTables, MetastoreConfig
from hmsproxy.downstream.server import ProxyServer
from hmsproxy.protocol import idl
from hmsproxy.testing import storage, table
from tests.support.federation import stored_in
from tests.support.hive_jars import require_hive
from tests.support.served import served

hive = idl.hive

NEWER = ("3.1", "4.0")


@pytest.fixture(scope="session")
def newer_metastores(metastore_factory) -> dict:
    """A Hive 3.1 and a Hive 4.0 metastore (jars fetched with Maven on first use)."""
    for version in NEWER:
        require_hive(version)
    return dict(zip(NEWER, metastore_factory(2, name="mixed", hive_versions=list(NEWER))))


@pytest.fixture(scope="session")
def metastores_by_version(metastores, newer_metastores, tmp_path_factory) -> dict:
    """version -> metastore, each with a database `mixed_sales` (federated ones can't create databases)."""
    found = {"2.3": metastores[0], **newer_metastores}
    root = tmp_path_factory.mktemp("mixed-warehouse")
    for version, ms in found.items():
        client = ms.client()
        try:
            if "mixed_sales" not in client.get_all_databases():
                location = (root / f"sales_{version.replace('.', '')}.db").as_uri()
                client.create_database(hive.Database(name="mixed_sales", description=None, locationUri=location, parameters={}))
        finally:
            client.close()
    return found


#: Tables the federated metastores show; the rest of their databases is hidden (mapped-tables).
MAPPED = ("t_.*",)


def metastore_config(name: str, ms, version: str, *, primary: bool = False) -> MetastoreConfig:
    if primary:
        return MetastoreConfig(
            name, (ms.uri,), primary=True, access_control_type=AccessControlType.READ_AND_WRITE_AND_CREATE, hive_version=version
        )
    return MetastoreConfig(
        name,
        (ms.uri,),
        database_prefix=f"{name}_",
        access_control_type=AccessControlType.READ_AND_WRITE_ON_DATABASE_WHITELIST,
        writable_database_white_list=("mixed_sales",),
        mapped_tables=(MappedTables("mixed_sales", MAPPED),),
        hive_version=version,
    )


def federation(base, by_version, primary: str):
    """The session's proxy config with `primary` as the primary and the other two federated as h<version>."""
    # Distinct names per layout: a Spark session's backend connections are kept by metastore name.
    first = metastore_config(f"p{primary.replace('.', '')}", by_version[primary], primary, primary=True)
    others = tuple(metastore_config(f"h{v.replace('.', '')}", ms, v) for v, ms in by_version.items() if v != primary)
    return dataclasses.replace(base, primary=first, federated=others)


@pytest.fixture(scope="module")
def layout_proxy(default_config, metastores_by_version, tmp_path_factory):
    """layout_proxy(primary_version) -> a proxy serving federation(..., primary_version), started on first
    use, with a store of its own: a proxy's transaction ids are its primary's, so proxies with different
    primaries must not share the bindings of one store (the session proxy's)."""
    started: dict[str, ProxyServer] = {}

    def get(primary: str) -> ProxyServer:
        if primary not in started:
            config = stored_in(federation(default_config, metastores_by_version, primary), tmp_path_factory.mktemp(f"store-{primary}"))
            started[primary] = stack.enter_context(served(config))
        return started[primary]

    with ExitStack() as stack:
        yield get


def orc_storage():
    sd = storage()
    sd.inputFormat = "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat"
    sd.outputFormat = "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat"
    sd.serdeInfo.serializationLib = "org.apache.hadoop.hive.ql.io.orc.OrcSerde"
    return sd


def create_transactional_table(client, version: str, name: str) -> None:
    """mixed_sales.<name> created directly: transactional on 3.1 and 4.0, plain on 2.3 (no write ids there).

    Insert-only: a standalone metastore has no hive-exec to check a full-ACID table's ORC format
    ("must be stored using an ACID compliant format"); Hive 4 creates an ACID table only for a client
    that declares it can write one (create_table_req's processorCapabilities).
    """
    if version == "2.3":
        client.create_table(table("mixed_sales", name))
        return
    t = table("mixed_sales", name, sd=orc_storage(), parameters={"transactional": "true", "transactional_properties": "insert_only"})
    if version == "3.1":
        client.create_table(t)
    else:
        client.create_table_req(
            hive.CreateTableRequest(table=t, processorCapabilities=["HIVEMANAGEDINSERTWRITE"], processorIdentifier="test")
        )


def outrun(direct, proxy_client) -> None:
    """Take transaction ids on the metastore directly until its next one is past the primary's, so a
    transaction the proxy opens there gets a real id other than the client's (or the checks prove nothing)."""
    gap = proxy_client.get_open_txns().txn_high_water_mark - direct.get_open_txns_info().txn_high_water_mark
    if gap >= 0:
        take_ids(direct, gap + 3)


#: Transactions asked for in one open_txns: Hive's hive.txn.max.open.batch is 1000 by default, and
#: other tests' writers on the shared primary (a streaming batch opens hundreds) can put its ids
#: further ahead than that.
OPEN_BATCH = 500


def take_ids(direct, count: int) -> None:
    """Open and abort `count` transactions on the metastore `direct`, OPEN_BATCH a request at most."""
    while count > 0:
        taken = direct.open_txns(hive.OpenTxnRequest(num_txns=min(count, OPEN_BATCH), user="bob", hostname="elsewhere")).txn_ids
        if not taken:  # bounded: a metastore that opens none would loop here for ever
            raise AssertionError(f"open_txns opened no transaction with {count} still to take")
        direct.abort_txns(hive.AbortTxnsRequest(txn_ids=taken))
        count -= len(taken)
