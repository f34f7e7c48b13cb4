"""moto's AWS server as the tests' Glue Data Catalog, the only Glue endpoint reachable here.

`glue_server` (session) runs `python -m moto.server` on a free loopback port, stopped at the end;
`glue_env` (per module) puts fake keys and a region in this process's environment, which is the
in-process proxy's AWS chain. `seed_sales` fills a moto catalog with the database `sales`: `orders` (unpartitioned) and
`payments` (partitioned by `ds`, three partitions), over Parquet files pyarrow writes.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from hmsproxy.dev.ports import free_port
from tests.support.children import terminate

REGION = "eu-west-1"
#: The proxy's AWS chain in these tests: moto takes any keys; no instance-role look-ups.
AWS_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_DEFAULT_REGION": REGION,
    "AWS_EC2_METADATA_DISABLED": "true",
}
START_TIMEOUT_S = 60

PARQUET = {
    "InputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
    "OutputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
    "SerdeInfo": {
        "SerializationLibrary": "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
        "Parameters": {"serialization.format": "1"},
    },
}
ORDERS_COLUMNS = [("order_id", "bigint"), ("customer", "string"), ("amount", "double")]
ORDERS = [(1, "ann", 10.5), (2, "bob", 20.0), (3, "ann", 7.25)]
PAYMENTS_COLUMNS = [("order_id", "bigint"), ("paid", "double")]
PAYMENTS = {"2026-11-01": [(1, 10.5)], "2026-11-02": [(2, 20.0), (3, 3.0)], "2026-11-03": [(3, 4.25)]}


@dataclass
class MotoServer:
    port: int
    process: subprocess.Popen | None = None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> MotoServer:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, **AWS_ENV},
        )
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"moto's server exited with {self.process.returncode} on port {self.port}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return self
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"moto's server did not listen on {self.endpoint} within {START_TIMEOUT_S} s")

    def stop(self) -> None:
        if self.process is not None:
            terminate(self.process)

    def client(self):
        import boto3

        return boto3.client(
            "glue", region_name=REGION, endpoint_url=self.endpoint, aws_access_key_id="testing", aws_secret_access_key="testing"
        )


def start_moto() -> MotoServer:
    try:
        import boto3  # noqa: F401
        import moto.server  # noqa: F401
    except ImportError as e:
        from tests.support.required import unavailable

        unavailable(f"moto's server and boto3 are needed for the Glue tests (pip install -e '.[glue,test]'): {e}")
    return MotoServer(free_port()).start()


@pytest.fixture(scope="module")
def glue_env():
    """This process's AWS chain (the in-process proxy's) set to moto's fake keys for one module's
    tests; put back after them, so the session's other tests see the environment they were given."""
    before = {k: os.environ.get(k) for k in AWS_ENV}
    os.environ.update(AWS_ENV)
    yield AWS_ENV
    for key, value in before.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


@pytest.fixture(scope="session")
def glue_server(tmp_path_factory):
    """moto's server with the `sales` catalog seeded (see the module doc); stopped at the end."""
    server = start_moto()
    try:
        seed_sales(server.client(), tmp_path_factory.mktemp("glue-data"))
        yield server
    finally:
        server.stop()


def _write_parquet(path: Path, columns, rows) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    types = {"bigint": pa.int64(), "string": pa.string(), "double": pa.float64()}
    schema = pa.schema([(name, types[kind]) for name, kind in columns])
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist([dict(zip(schema.names, r)) for r in rows], schema=schema), path)


def _uri(path: Path) -> str:
    return f"file://{path}"  # as Hive writes one: Path.as_uri() would quote the '=' of ds=…


def _sd(columns, location: str) -> dict:
    return {"Columns": [{"Name": n, "Type": t} for n, t in columns], "Location": location, **PARQUET}


def seed_sales(glue, root: Path) -> None:
    """Database `sales` with `orders` and `payments` (see the module doc) in `glue`, files under `root`."""
    glue.create_database(DatabaseInput={"Name": "sales", "Description": "sales in Glue", "LocationUri": _uri(root / "sales")})
    orders = root / "sales" / "orders"
    _write_parquet(orders / "part-0.parquet", ORDERS_COLUMNS, ORDERS)
    glue.create_table(
        DatabaseName="sales",
        TableInput={
            "Name": "orders",
            "TableType": "EXTERNAL_TABLE",
            "Owner": "etl",
            "Parameters": {"EXTERNAL": "TRUE", "classification": "parquet"},
            "StorageDescriptor": _sd(ORDERS_COLUMNS, _uri(orders)),
        },
    )
    payments = root / "sales" / "payments"
    glue.create_table(
        DatabaseName="sales",
        TableInput={
            "Name": "payments",
            "TableType": "EXTERNAL_TABLE",
            "Parameters": {"EXTERNAL": "TRUE"},
            "StorageDescriptor": _sd(PAYMENTS_COLUMNS, _uri(payments)),
            "PartitionKeys": [{"Name": "ds", "Type": "string"}],
        },
    )
    for ds, rows in PAYMENTS.items():
        where = payments / f"ds={ds}"
        _write_parquet(where / "part-0.parquet", PAYMENTS_COLUMNS, rows)
        glue.create_partition(
            DatabaseName="sales",
            TableName="payments",
            PartitionInput={"Values": [ds], "StorageDescriptor": _sd(PAYMENTS_COLUMNS, _uri(where))},
        )
