"""hmsproxy's storage door and CLI on a Kerberized HDFS (issue #37): a real minicluster with Hadoop
security on (tests/support/kerberized_hdfs.py), its principals and the user's from the suite's KDC.

The user holds a ticket as Hadoop's own clients do: `kinit` into the cache KRB5CCNAME names, with
KRB5_CONFIG naming the realm and a HADOOP_CONF_DIR saying `hadoop.security.authentication=kerberos`.
Files written carry the ticket's user as their owner; `hmsproxy stream` and `hmsproxy lookup` go
through the session's proxy and Hive 2.3 metastore, which stays non-Kerberized: the table is made
at a local place and then pointed at the Kerberized HDFS, and the metastore never opens it (an
unpartitioned table: streaming into it adds no partition, so only hmsproxy touches its files).
Without a ticket: one line naming kinit, exit 1, within 10 s, nothing written; without
`hadoop.security.authentication=kerberos` in the client's settings: one line naming it, within 10 s.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

from hmsproxy.files import filesystems
from hmsproxy.files.hadoop_conf import SITE_FILES
from hmsproxy.files.locations import StorageError
from tests.support.kerberized_hdfs import kerberized_hdfs_conf, start_kerberized_hdfs
from tests.support.storage_stack import bad_table as table_at
from tests.support.storage_stack import site_xml

HMSPROXY = str(Path(sys.executable).with_name("hmsproxy"))
USER = "alice"
DB = "krb_hdfs"


@pytest.fixture(scope="module")
def kerberized_hdfs(kdc, tmp_path_factory):
    root = tmp_path_factory.mktemp("krb-hdfs")
    kdc.add_principal(USER)
    server = start_kerberized_hdfs(root, kdc)
    conf_dir = root / "conf"
    conf_dir.mkdir()
    (conf_dir / SITE_FILES[0]).write_text(site_xml(kerberized_hdfs_conf()))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HADOOP_CONF_DIR", str(conf_dir))
        filesystems.forget()
        try:
            yield server
        finally:
            server.stop()
            filesystems.forget()


@pytest.fixture
def ticket(kdc, kerberos_env):
    """The user's ticket in this test's own cache (KRB5CCNAME); a file system made earlier is dropped."""
    kdc.kinit(USER, kerberos_env)
    filesystems.forget()
    yield kerberos_env
    filesystems.forget()


@pytest.fixture
def no_ticket(kerberos_env):
    filesystems.forget()
    yield kerberos_env
    filesystems.forget()


def test_files_written_listed_and_read_through_the_door_belong_to_the_ticket_user(kerberized_hdfs, ticket):
    root = f"{kerberized_hdfs.uri}/door-{uuid.uuid4().hex[:8]}"
    filesystem, path = filesystems.filesystem(f"{root}/part-0.parquet")
    pq.write_table(pa.table({"id": list(range(100))}), path, filesystem=filesystem, row_group_size=10)
    listed = filesystem.get_file_info(pafs.FileSelector(path.rsplit("/", 1)[0]))
    assert [info.base_name for info in listed] == ["part-0.parquet"] and listed[0].size > 0
    assert pq.read_table(path, filesystem=filesystem).column("id").to_pylist() == list(range(100))
    # The NameNode took the ticket's principal as the writer (auth_to_local: alice@REALM -> alice).
    assert filesystem.handler.fs.info(path)["owner"] == USER != os.environ.get("USER")


def cli(argv: list[str], stdin: str = "", **env: str) -> tuple[subprocess.CompletedProcess, float]:
    started = time.monotonic()
    done = subprocess.run([HMSPROXY, *argv], input=stdin, capture_output=True, text=True, timeout=120, env={**os.environ, **env})
    return done, time.monotonic() - started


def test_stream_and_lookup_through_the_proxy_on_a_table_on_kerberized_hdfs(kerberized_hdfs, ticket, proxy, tmp_path):
    name = f"events_{uuid.uuid4().hex[:8]}"
    location = f"{kerberized_hdfs.uri}/warehouse/{name}"
    table_at(proxy, DB, name, location, tmp_path / name, partitioned=False)
    done, _ = cli(["stream", f"{DB}.{name}", "--uri", proxy.uri], "".join(f"{i}\n" for i in range(1, 31)))
    assert done.returncode == 0, done.stderr
    filesystem, path = filesystems.filesystem(location)
    written = [info for info in filesystem.get_file_info(pafs.FileSelector(path, recursive=True)) if info.is_file]
    assert written and all(filesystem.handler.fs.info(info.path)["owner"] == USER for info in written)
    done, _ = cli(["lookup", f"{DB}.{name}", "--uri", proxy.uri, "--where", "id IN (7, 29, 99)", "--format", "json"])
    assert done.returncode == 0, done.stderr
    assert sorted(row["id"] for row in json.loads(done.stdout)) == [7, 29]


def test_without_a_ticket_the_door_and_the_cli_say_kinit_in_one_line(kerberized_hdfs, kdc, no_ticket, proxy, tmp_path):
    location = f"{kerberized_hdfs.uri}/warehouse/no-ticket"
    with pytest.raises(StorageError) as raised:
        filesystems.filesystem(location)
    assert "kinit" in str(raised.value) and str(no_ticket) in str(raised.value)
    name = f"locked_{uuid.uuid4().hex[:8]}"
    table_at(proxy, DB, name, f"{location}/{name}", tmp_path / name, partitioned=False)
    for argv, stdin in (
        (["stream", f"{DB}.{name}", "--uri", proxy.uri], "1\n2\n"),
        (["lookup", f"{DB}.{name}", "--uri", proxy.uri, "--where", "id=1"], ""),
    ):
        done, took = cli(argv, stdin)
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 1 and len(lines) == 1, done.stderr
        assert location in lines[0] and "kinit" in lines[0] and "KRB5CCNAME" in lines[0], lines[0]
        assert took < 10, took
    kdc.kinit(USER, no_ticket)  # now look: the stream wrote nothing, not even its staging directory
    filesystems.forget()
    filesystem, path = filesystems.filesystem(f"{location}/{name}")
    assert filesystem.get_file_info(path).type == pafs.FileType.NotFound


def test_a_client_without_the_kerberos_setting_is_told_to_set_it_in_one_line(kerberized_hdfs, ticket, proxy, tmp_path):
    """hdfs-native would retry the NameNode's refusal of a SIMPLE login without end; the door stops it
    (in the CLI's process: the asking thread is left behind there)."""
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / SITE_FILES[0]).write_text(site_xml({}))
    name = f"unset_{uuid.uuid4().hex[:8]}"
    location = f"{kerberized_hdfs.uri}/warehouse/{name}"
    table_at(proxy, DB, name, location, tmp_path / name, partitioned=False)
    done, took = cli(["lookup", f"{DB}.{name}", "--uri", proxy.uri, "--where", "id=1"], HADOOP_CONF_DIR=str(tmp_path / "conf"))
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1 and len(lines) == 1, done.stderr
    assert location in lines[0] and "hadoop.security.authentication=kerberos" in lines[0], lines[0]
    assert took < 10, took
