"""An HA pair of Hive 2.3 metastores: two JVMs over one PostgreSQL database.

What `remote-meta-store-uris: thrift://a,thrift://b` names in production: two metastore
instances that answer alike because they share their database. The database lives in a
throwaway PostgreSQL cluster (tests/support/postgres.py); the first instance creates the
schema (DataNucleus' autoCreateAll) before the second starts, so they never race to make it.
The warehouse directory is shared too, so a table made through one is readable through the other.

`stalled(ms)` SIGSTOPs an instance's JVM (its sockets stay open, nothing answers: a hung
metastore) and SIGCONTs it afterwards, whatever happens inside. `ha_pair` is the fixture: one pair
per test module (a pytest plugin of tests/conftest.py).
"""

from __future__ import annotations

import os
import signal
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from hmsproxy.dev.metastore import LocalMetastore
from hmsproxy.dev.ports import free_port
from tests.support.required import unavailable


@dataclass
class HaPair:
    first: LocalMetastore
    second: LocalMetastore

    @property
    def uris(self) -> str:
        """The pair as a metastore entry's remote-meta-store-uris."""
        return f"{self.first.uri},{self.second.uri}"

    def stop(self) -> None:
        for ms in (self.second, self.first):
            resume(ms)  # a stopped JVM would not take its SIGTERM
            ms.stop()


@pytest.fixture(scope="module")
def ha_pair(postgres_server, tmp_path_factory):
    """A pair for the test module, on the session's PostgreSQL cluster (skipped, or failed in CI, without one)."""
    if isinstance(postgres_server, str):
        unavailable(postgres_server)
    made = start_ha_pair(postgres_server, tmp_path_factory.mktemp("ha_pair"))
    yield made
    made.stop()


def ha_config(pair: HaPair, hedge, *, backend_timeout_s: float = 120.0):
    """A proxy config whose writable primary is the pair (both URIs, the first first), `hedge` its
    HedgeConfig or None (hedging off)."""
    from hmsproxy.config.model import AccessControlType, Config, DatabaseResolution, MetastoreConfig, ServerConfig
    from tests.support.federation import temp_store

    primary = MetastoreConfig(
        "primary",
        (pair.first.uri, pair.second.uri),
        primary=True,
        access_control_type=AccessControlType.READ_AND_WRITE_AND_CREATE,
        hedge=hedge,
    )
    server = ServerConfig(port=0, connect_timeout_s=2.0, backend_timeout_s=backend_timeout_s)
    return Config(server, DatabaseResolution.PREFIXED, primary, store=temp_store(primary.uris))


def plain_table(db: str, name: str):
    """A one-column text table `db.name` to create through any client."""
    from hmsproxy.protocol import idl

    hive = idl.hive
    serde = hive.SerDeInfo(serializationLib="org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe", parameters={})
    sd = hive.StorageDescriptor(
        cols=[hive.FieldSchema(name="id", type="int", comment="")],
        inputFormat="org.apache.hadoop.mapred.TextInputFormat",
        outputFormat="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
        serdeInfo=serde,
        parameters={},
        bucketCols=[],
        sortCols=[],
    )
    return hive.Table(tableName=name, dbName=db, sd=sd, partitionKeys=[], parameters={}, tableType="MANAGED_TABLE")


def create_database(server, prefix: str = "hms_ha") -> str:
    """A new database in `server` (tests/support/postgres.py's PostgresServer); its JDBC URL."""
    import psycopg2

    name = f"{prefix}_{uuid.uuid4().hex[:10]}"
    conn = psycopg2.connect(host="127.0.0.1", port=server.port, user="postgres", dbname="postgres")
    try:
        conn.autocommit = True
        with conn.cursor() as cur:
            cur.execute(f'CREATE DATABASE "{name}" TEMPLATE template0')
    finally:
        conn.close()
    return f"jdbc:postgresql://127.0.0.1:{server.port}/{name}?user=postgres"


def start_ha_pair(server, root: Path, *, log=None, log_level: str = "WARN", fast_start: bool = True) -> HaPair:
    """Two 2.3 metastores on one new database of `server`, the first started (schema made) before the second."""
    jdbc_url = create_database(server)
    warehouse = root / "warehouse"
    warehouse.mkdir(parents=True, exist_ok=True)
    conf = {"hive.metastore.warehouse.dir": warehouse.as_uri()}
    made = [
        LocalMetastore(
            free_port(),
            root / name,
            name=name,
            jdbc_url=jdbc_url,
            hive_conf=conf,
            log=log,
            log_level=log_level,
            notifications=False,
            fast_start=fast_start,
        )
        for name in ("ha_a", "ha_b")
    ]
    try:
        for ms in made:
            ms.start()
    except BaseException:
        for ms in made:
            ms.stop()
        raise
    return HaPair(*made)


def resume(ms: LocalMetastore) -> None:
    if ms.pid is not None:
        try:
            os.killpg(ms.pid, signal.SIGCONT)
        except ProcessLookupError:
            pass


@contextmanager
def stalled(ms: LocalMetastore):
    """`ms`'s JVM SIGSTOPped for the block (sockets open, no answers), SIGCONTed after it."""
    assert ms.pid is not None, f"{ms.name} is not running"
    os.killpg(ms.pid, signal.SIGSTOP)
    try:
        yield ms
    finally:
        resume(ms)
