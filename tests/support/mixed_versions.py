"""Real Hive 3.1 and 4.0 metastores beside the session's 2.3 ones, and federations of all three.

A pytest plugin (tests/conftest.py): the metastores start once per test session, for every
test that mixes versions (Spark in tests/spark/, the Hive 4 Java client in tests/integration/).
"""

from __future__ import annotations

import dataclasses

import pytest

from hmsproxy.config.model import AccessControlType, MappedTables, MetastoreConfig
from hmsproxy.protocol import idl
from tests.support.hive_jars import require_hive

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
