"""hmsproxy's storage door against real stores (s3proxy, an HDFS minicluster), without Spark:
listing, Parquet footers, a streamed transaction's staging, publish and recovery, and the one-line
errors of a store that can't be reached. The data features through the proxy with Spark are in
tests/spark/test_storage_spark.py."""

from __future__ import annotations

import socket
import time
import uuid

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hmsproxy.files import filesystems
from hmsproxy.files.compact_index import file_rows
from hmsproxy.files.locations import StorageError
from hmsproxy.files.storage import ArrowStorage, arrow_filesystem, data_files
from hmsproxy.streaming.publish import COMMITTED, STAGING, TxnFiles, recover

STORES = ("s3", "hdfs")


@pytest.fixture(params=STORES)
def root(request, storage_conf) -> str:
    return storage_conf.root(request.param, f"door-{uuid.uuid4().hex[:8]}")


def write_parquet(location: str, rows: int, row_group_size: int = 10) -> None:
    filesystem, path = arrow_filesystem(location)
    pq.write_table(pa.table({"id": list(range(rows))}), path, filesystem=filesystem, row_group_size=row_group_size)


def test_listing_and_footers_of_files_written_through_the_door(root):
    write_parquet(f"{root}/part-0.parquet", 25)
    write_parquet(f"{root}/_SUCCESS", 1)  # hidden: not data
    storage = ArrowStorage()
    assert storage.exists(root) and not storage.exists(f"{root}/nothing-here")
    files = data_files(storage.list(root))
    assert [(f.name, f.path) for f in files] == [("part-0.parquet", f"{root}/part-0.parquet")]
    assert files[0].size > 0 and files[0].modified > 0  # staleness compares these
    filesystem, path = arrow_filesystem(files[0].path)
    with filesystem.open_input_file(path) as source:
        assert pq.ParquetFile(source).num_row_groups == 3
    assert sum(pq.read_table(path, filesystem=filesystem).column("id").to_pylist()) == sum(range(25))
    storage.delete(root)
    assert not storage.exists(f"{root}/part-0.parquet")


def test_index_rows_of_a_data_file_on_the_store(root):
    """compact_index reads a data file's row groups one at a time from the store itself."""
    write_parquet(f"{root}/part-0.parquet", 25)  # ids 0..24, 10 a row group
    rows = file_rows(f"{root}/part-0.parquet", ["id"])
    assert [r[0] for r in rows] == list(range(25))
    assert rows[0][1:] == (f"{root}/part-0.parquet", [0]) and rows[24][1:] == (f"{root}/part-0.parquet", [2])
    ArrowStorage().delete(root)


def test_a_transaction_is_invisible_until_published_and_recovery_finishes_or_deletes(root):
    files = TxnFiles(root, 7, "parquet")
    filesystem, staged = arrow_filesystem(files.location)
    pq.write_table(pa.table({"id": [1, 2]}), files.staged_path(0), filesystem=filesystem)
    assert data_files(ArrowStorage().list(root)) == []  # staged under _hmsproxy_stream: no reader looks there
    names = files.publish()
    assert [f.name for f in data_files(ArrowStorage().list(root))] == names
    assert not ArrowStorage().exists(f"{root}/{STAGING}/7")

    dead = TxnFiles(root, 8, "parquet")  # its writer died before the metastore committed
    pq.write_table(pa.table({"id": [3]}), dead.staged_path(0), filesystem=filesystem)
    marked = TxnFiles(root, 9, "parquet")  # committed and marked, then its writer died
    pq.write_table(pa.table({"id": [4]}), marked.staged_path(0), filesystem=filesystem)
    with filesystem.open_output_stream(f"{marked.staging}/{COMMITTED}"):
        pass
    assert recover(root, {8: "gone", 9: "gone"}.__getitem__) == ([9], [8])
    visible = sorted(f.name for f in data_files(ArrowStorage().list(root)))
    assert len(visible) == 2 and any("stream-9-" in n for n in visible) and not any("stream-8-" in n for n in visible)
    ArrowStorage().delete(root)


def quick_error(location: str) -> str:
    filesystems.forget()
    started = time.monotonic()
    with pytest.raises(StorageError) as caught:
        arrow_filesystem(location)
    assert time.monotonic() - started < 10
    text = str(caught.value)
    assert "\n" not in text and location in text
    return text


def test_wrong_keys_a_missing_bucket_an_unknown_scheme_and_a_namenode_down(storage_conf, s3_server, monkeypatch):
    assert "does not exist" in quick_error("s3a://no-such-bucket/t")
    assert "no file system for scheme 'foo'" in quick_error("foo://lake/t")
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        down = f"hdfs://127.0.0.1:{unused.getsockname()[1]}/t"
        assert "no NameNode answers" in quick_error(down)
    (storage_conf.conf_dir / "core-site.xml").write_text(
        (storage_conf.conf_dir / "core-site.xml").read_text().replace(s3_server.s3a_conf()["fs.s3a.secret.key"], "wrong-secret")
    )
    try:
        text = quick_error(f"s3a://{storage_conf.bucket}/t")
        assert "refused the keys from fs.s3a.access.key" in text and "AWS_SECRET_ACCESS_KEY" in text
    finally:
        from tests.support.storage_stack import site_xml

        (storage_conf.conf_dir / "core-site.xml").write_text(site_xml(s3_server.s3a_conf()))
        filesystems.forget()


def test_threads_writing_at_once_to_a_bucket_not_used_yet_all_succeed(storage_conf):
    """A job's partitions reach a bucket's first client at once; each write is an upload s3proxy
    refuses unless the client was made with the checksum setting (the README s3 tour's flake)."""
    import threading

    root = storage_conf.root("s3", f"door-{uuid.uuid4().hex[:8]}")
    filesystems.forget()
    failures: list[str] = []

    def write(k: int) -> None:
        try:
            filesystem, path = arrow_filesystem(root)
            for i in range(5):
                with filesystem.open_output_stream(f"{path}/t{k}-{i}.json") as out:
                    out.write(b"{}" * 500)
        except OSError as exc:
            failures.append(filesystems.one_line(exc))

    threads = [threading.Thread(target=write, args=(k,)) for k in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert failures == [] and len(data_files(ArrowStorage().list(root))) == 40
    ArrowStorage().delete(root)
