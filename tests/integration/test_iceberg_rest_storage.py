"""Iceberg REST tables whose data and metadata are on S3 (the session's s3proxy), served by Apache
Iceberg's own REST catalog server with its warehouse there (tests/support/iceberg_rest.py,
`iceberg_rest_s3`).

pyiceberg's RestCatalog makes and appends a table directly; through the proxy pyiceberg's HiveCatalog
lists, loads and scans it; a HiveCatalog commit through a link that takes commits lands, the proxy
reading the writer's metadata file from S3 with its own Hadoop settings (the session's core-site.xml,
tests/support/storage_stack.py); with wrong keys in those settings the commit is refused in one line
naming the file and the setting, and the table is unchanged.

HDFS (the session's minicluster): pyiceberg can't write there (its HDFS FileIO is pyarrow's, which
needs a JVM's libhdfs), so what is shown is the proxy's part, reading a writer's metadata file from
hdfs:// (and from S3 under s3a:// and s3://) and refusing one it can't reach in one line naming it.
"""

from __future__ import annotations

import gzip
import json
import uuid

import pytest
from pyarrow import fs as arrow_fs
from pyiceberg.catalog.hive import HiveCatalog
from pyiceberg.catalog.rest import RestCatalog

from hmsproxy.catalogs.client import CatalogRefused
from hmsproxy.catalogs.iceberg_rest.commits import read_metadata
from hmsproxy.clients.proxy import HmsProxyClient
from hmsproxy.dev.dev_storage import site_xml
from hmsproxy.files import filesystems
from hmsproxy.files.hadoop_conf import SITE_FILES
from hmsproxy.files.s3_settings import CHECKSUM_ENV
from tests.integration.test_iceberg_rest_writes import SCHEMA, ids, rows
from tests.support.iceberg_rest import S3_WAREHOUSE, with_namespace

NAMESPACE = "s3_sales"


@pytest.fixture(scope="module", autouse=True)
def plain_checksums():
    """s3proxy refuses the checksums newer AWS SDKs send unasked; pyiceberg's own S3 client (pyarrow's)
    is made without hmsproxy's door, so it is told as the door tells its own."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(CHECKSUM_ENV, "WHEN_REQUIRED")
        yield


@pytest.fixture
def s3_io(storage_conf) -> dict[str, str]:
    """pyiceberg's FileIO properties for s3proxy, from the session's S3A settings."""
    s3a = storage_conf.s3a
    return {
        "s3.endpoint": s3a["fs.s3a.endpoint"],  # a URL (http://127.0.0.1:PORT)
        "s3.access-key-id": s3a["fs.s3a.access.key"],
        "s3.secret-access-key": s3a["fs.s3a.secret.key"],
        "s3.region": s3a["fs.s3a.endpoint.region"],
    }


@pytest.fixture
def direct(iceberg_rest_s3, s3_io):
    return with_namespace(RestCatalog("direct_s3", uri=iceberg_rest_s3.uri, warehouse=iceberg_rest_s3.warehouse, **s3_io), NAMESPACE)


@pytest.fixture
def orders(direct):
    """A fresh table with rows 1 and 2, made directly; its name in the namespace."""
    name = f"orders_{uuid.uuid4().hex[:8]}"
    direct.create_table(f"{NAMESPACE}.{name}", schema=SCHEMA, properties={"commit.retry.num-retries": "0"}).append(rows(1, 2))
    yield name
    direct.drop_table(f"{NAMESPACE}.{name}")


@pytest.fixture
def uri(proxy):
    return f"thrift://127.0.0.1:{proxy.port}"


def link(uri: str, server, writes: bool) -> str:
    name = f"lake_{uuid.uuid4().hex[:8]}"
    opt_in = ", 'hmsproxy.iceberg.writes' = 'commit'" if writes else ""
    with HmsProxyClient(uri) as client:
        client.execute(
            f"CREATE REMOTE DATABASE {name} CONNECTED TO {NAMESPACE} VIA 'iceberg-rest' "
            f"WITH DBPROPERTIES ('uri' = '{server.uri}', 'warehouse' = '{server.warehouse}'{opt_in})"
        )
    return name


@pytest.fixture(params=[False, True], ids=["read-only", "commit"])
def lake(request, uri, iceberg_rest_s3, orders):
    name = link(uri, iceberg_rest_s3, request.param)
    yield name
    with HmsProxyClient(uri) as client:
        client.execute(f"DROP REMOTE DATABASE {name}")


@pytest.fixture
def committing_lake(uri, iceberg_rest_s3, orders):
    name = link(uri, iceberg_rest_s3, True)
    yield name
    with HmsProxyClient(uri) as client:
        client.execute(f"DROP REMOTE DATABASE {name}")


def on_s3(location: str, bucket: str) -> bool:
    """The location is in the session's bucket and the object is there (asked through hmsproxy's door)."""
    filesystem, path = filesystems.filesystem(location)
    return location.startswith(f"s3a://{bucket}/") and filesystem.get_file_info(path).type == arrow_fs.FileType.File


def test_a_rest_table_written_directly_has_its_data_and_metadata_on_s3(direct, orders, storage_conf):
    table = direct.load_table(f"{NAMESPACE}.{orders}")
    assert table.location() == f"s3a://{storage_conf.bucket}/{S3_WAREHOUSE}/{NAMESPACE}/{orders}"
    assert on_s3(table.metadata_location, storage_conf.bucket)  # written by the server, through S3A
    data_files = [task.file.file_path for task in table.scan().plan_files()]
    assert data_files and all(on_s3(path, storage_conf.bucket) for path in data_files)
    assert ids(table) == [1, 2]


def test_hive_catalog_through_the_proxy_lists_loads_and_scans_the_s3_table(direct, orders, lake, uri, s3_io):
    through = HiveCatalog("through_s3", uri=uri, **s3_io)
    assert (lake, orders) in through.list_tables(lake)
    table = through.load_table(f"{lake}.{orders}")
    expected = direct.load_table(f"{NAMESPACE}.{orders}")
    assert table.metadata_location == expected.metadata_location
    assert ids(table) == ids(expected) == [1, 2]


def test_a_commit_through_the_proxy_reads_the_writers_metadata_from_s3_and_lands(direct, orders, committing_lake, uri, s3_io, storage_conf):
    through = HiveCatalog("writer_s3", uri=uri, **s3_io).load_table(f"{committing_lake}.{orders}")
    through.append(rows(3, 4))
    assert on_s3(through.metadata_location, storage_conf.bucket)  # the writer's own file, which the proxy read
    table = direct.load_table(f"{NAMESPACE}.{orders}")
    assert ids(table) == [1, 2, 3, 4]
    assert table.current_snapshot().snapshot_id == through.current_snapshot().snapshot_id
    assert table.metadata_location != through.metadata_location  # the catalog wrote its own file for the commit


@pytest.fixture
def wrong_keys(storage_conf, tmp_path, monkeypatch):
    """The proxy's Hadoop settings with a wrong secret key, for this test only."""
    (tmp_path / SITE_FILES[0]).write_text(site_xml({**storage_conf.s3a, "fs.s3a.secret.key": "not-the-key"}))
    monkeypatch.setenv("HADOOP_CONF_DIR", str(tmp_path))
    filesystems.forget()
    yield
    monkeypatch.setenv("HADOOP_CONF_DIR", str(storage_conf.conf_dir))
    filesystems.forget()


def test_wrong_s3_keys_in_the_proxys_settings_refuse_the_commit_in_one_line_unchanged(
    direct, orders, committing_lake, uri, s3_io, wrong_keys
):
    before = direct.load_table(f"{NAMESPACE}.{orders}")
    through = HiveCatalog("writer_s3", uri=uri, **s3_io).load_table(f"{committing_lake}.{orders}")
    with pytest.raises(Exception) as e:
        through.append(rows(5))
    message = str(e.value)
    assert "\n" not in message.strip()
    assert "can't read the committed metadata file" in message
    assert "s3a://" in message and f"/{NAMESPACE}/{orders}/metadata/" in message  # the writer's file, by its location
    assert "fs.s3a.access.key" in message  # the setting to fix
    after = direct.load_table(f"{NAMESPACE}.{orders}")
    assert after.metadata_location == before.metadata_location
    assert ids(after) == [1, 2] and len(after.snapshots()) == 1


@pytest.mark.parametrize("store, scheme", [("hdfs", "hdfs"), ("s3", "s3a"), ("s3", "s3")])
def test_the_proxy_reads_a_writers_metadata_file_from_each_store(storage_conf, store, scheme):
    metadata = {"format-version": 2, "table-uuid": str(uuid.uuid4()), "location": storage_conf.root(store, "t")}
    written = f"{storage_conf.root(store, f'iceberg-{uuid.uuid4().hex[:8]}')}/metadata/00001-w.gz.metadata.json"
    filesystem, path = filesystems.filesystem(written)
    filesystem.create_dir(path.rsplit("/", 1)[0])
    with filesystem.open_output_stream(path) as out:
        out.write(gzip.compress(json.dumps(metadata).encode()))
    location = written if store == "hdfs" else f"{scheme}://{written.split('://', 1)[1]}"  # S3's three names, one store
    assert read_metadata(location) == metadata
    with pytest.raises(CatalogRefused, match=f"can't read the committed metadata file '{location}x'"):
        read_metadata(f"{location}x")


def test_a_metadata_file_on_a_namenode_that_does_not_answer_is_refused_naming_it_and_the_setting():
    location = "hdfs://127.0.0.1:1/w/t/metadata/00001.metadata.json"
    with pytest.raises(CatalogRefused) as e:
        read_metadata(location)
    assert location in str(e.value) and "fs.defaultFS" in str(e.value) and "\n" not in str(e.value)
