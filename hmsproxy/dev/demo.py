"""Sample data for ``hmsproxy dev up --demo``, the data the README's tour starts from.

Database ``sales`` with a small Hive text table ``orders`` on the first
federated metastore (clients see it as ``fed1_sales.orders``). The data file is
comma-delimited text (LazySimpleSerDe reads it), written through hmsproxy's storage
door, so it lands wherever the metastore put the table (a local disk, S3, HDFS). Running it again on the same state is a no-op:
existing objects are left as they are, and only a demo table's missing data
file is written again.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlparse

from hmsproxy.protocol import idl

hive = idl.hive

DEMO_DATABASE = "sales"
DEMO_TABLE = "orders"
COLUMNS = (("order_id", "int"), ("customer", "string"), ("amount", "double"))
ROWS = ((1, "alice", 12.5), (2, "bob", 7.25), (3, "carol", 30.0))
#: Marks tables this module made, so it never writes into a user's own `orders`.
DEMO_MARKER = "hmsproxy.demo"
DATA_FILE = "part-00000"
DELIMITER = ","


def orders_table() -> hive.Table:
    sd = hive.StorageDescriptor(
        cols=[hive.FieldSchema(name=n, type=t, comment=None) for n, t in COLUMNS],
        location=None,  # the metastore puts it in its warehouse
        inputFormat="org.apache.hadoop.mapred.TextInputFormat",
        outputFormat="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
        compressed=False,
        numBuckets=-1,
        serdeInfo=hive.SerDeInfo(
            name=None,
            serializationLib="org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe",
            parameters={"field.delim": DELIMITER, "serialization.format": DELIMITER},
        ),
        bucketCols=[],
        sortCols=[],
        parameters={},
    )
    return hive.Table(
        tableName=DEMO_TABLE,
        dbName=DEMO_DATABASE,
        owner="hmsproxy",
        sd=sd,
        partitionKeys=[],
        parameters={DEMO_MARKER: "true"},
        tableType="MANAGED_TABLE",
    )


def data_text() -> str:
    return "".join(DELIMITER.join(str(v) for v in row) + "\n" for row in ROWS)


def local_path(location: str) -> Path:
    """The directory of a ``file:`` table location (a local metastore's, without --storage)."""
    url = urlparse(location)
    if url.scheme not in ("", "file"):
        raise RuntimeError(f"demo table location {location!r} is not on the local file system")
    return Path(unquote(url.path))


def add_demo_data(client) -> list[str]:
    """Create ``sales.orders`` and its data on the metastore ``client`` talks to; returns what it did."""
    done = []
    # Ask before creating: Hive 2.3 answers some calls on missing objects with odd exceptions.
    if DEMO_DATABASE not in client.get_all_databases():
        client.create_database(hive.Database(name=DEMO_DATABASE, description="hmsproxy demo data", locationUri=None, parameters={}))
        done.append(f"created database {DEMO_DATABASE}")
    if DEMO_TABLE not in client.get_all_tables(DEMO_DATABASE):
        client.create_table(orders_table())
        done.append(f"created table {DEMO_DATABASE}.{DEMO_TABLE}")
    table = client.get_table(DEMO_DATABASE, DEMO_TABLE)
    if (table.parameters or {}).get(DEMO_MARKER) != "true":
        return done  # someone's own table of that name: not ours to fill
    from pyarrow import fs

    from hmsproxy.files.storage import arrow_filesystem, join

    data = join(table.sd.location, DATA_FILE)
    filesystem, path = arrow_filesystem(data)
    if filesystem.get_file_info(path).type == fs.FileType.NotFound:
        filesystem.create_dir(path.rsplit("/", 1)[0], recursive=True)
        with filesystem.open_output_stream(path) as out:
            out.write(data_text().encode("utf-8"))
        done.append(f"wrote {len(ROWS)} rows to {data}")
    return done
