"""Test helpers shipped with hmsproxy: fake metastores behind the Connection seam.

from hmsproxy.upstream.backends import Backends
from hmsproxy.testing import FakeMetastore, fake_connect, args, table

dw = FakeMetastore("dw", missing={"get_table"})      # a Hive 4-like backend
dw.create_database(database("sales")); dw.create_table(table("sales", "orders"))
backends = Backends(config, connect=fake_connect({"dw": dw}))
...
assert dw.calls_to("get_table_req")[0].user == "alice"
"""

from hmsproxy.testing.builders import args, database, partition, storage, table, unwrap
from hmsproxy.testing.connection import ConnectRequest, FakeConnection, FakeConnector, fake_connect, serve_message
from hmsproxy.testing.metastore import SUPPORTED, ClientState, FakeMetastore, RecordedCall, partition_name

__all__ = [
    "SUPPORTED",
    "ClientState",
    "ConnectRequest",
    "FakeConnection",
    "FakeConnector",
    "FakeMetastore",
    "RecordedCall",
    "args",
    "database",
    "fake_connect",
    "partition",
    "partition_name",
    "serve_message",
    "storage",
    "table",
    "unwrap",
]
