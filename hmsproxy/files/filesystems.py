"""The one door to table files outside Spark: a location -> (pyarrow FileSystem, path in it).

S3 (s3a://, s3://, s3n://) goes through pyarrow's S3FileSystem with S3A's settings
(`s3_settings`); HDFS through `hdfs-native`, a Rust client speaking the NameNode's and DataNodes'
RPC (no JVM, no libhdfs: pyarrow's own HDFS needs both, and no pip install brings them), wrapped as
a pyarrow FileSystem so Parquet/ORC readers and writers take it unchanged. Settings come from
`hadoop_conf` (site files, a Spark driver's Hadoop configuration).

One file system is made per bucket or NameNode and kept; the first use of each is checked with one
cheap call (the bucket's or the root's status; for S3 one attempt, not retried, so an endpoint that
does not answer is reported within its connect or request timeout), so a wrong key, a missing
bucket or a NameNode that does not answer is one `StorageError` line naming the location and what
to set, before anything is written.
"""

from __future__ import annotations

import atexit
import functools
import gc
import os
import re
import socket
import threading
import time
from datetime import UTC, datetime
from typing import Any

from hmsproxy.files import hadoop_conf
from hmsproxy.files.hdfs_settings import client_config, namenode_addresses
from hmsproxy.files.locations import Place, StorageError, place
from hmsproxy.files.s3_settings import CHECKSUM_ENV, S3Settings, s3_settings

_lock = threading.Lock()
_made: dict[tuple[str, str], Any] = {}
_making: dict[tuple[str, str], threading.Lock] = {}
#: How long a NameNode may take to accept a connection before its location is reported down.
NAMENODE_CONNECT_TIMEOUT_S = 5.0
#: How long the first call to a NameNode that accepted the connection may take (login included).
FIRST_ANSWER_TIMEOUT_S = 5.0
#: How long the exit hook lets pyarrow's I/O threads release what they hold (release_native_clients).
NATIVE_RELEASE_PAUSE_S = 0.2


def filesystem(location: str) -> tuple[Any, str]:
    """(pyarrow FileSystem, path in it) for a location in any of Hadoop's forms (`locations`)."""
    conf = hadoop_conf.load()
    where = place(location, conf.get("fs.defaultFS"))
    if where.kind == "local":
        from pyarrow import fs

        return fs.LocalFileSystem(), where.path
    if where.kind == "arrow":
        from pyarrow import fs

        try:
            return fs.FileSystem.from_uri(location)
        except (OSError, ValueError) as exc:
            raise StorageError(f"{location}: {one_line(exc)}") from exc
    key = (where.kind, where.authority)
    with _lock:
        made = _made.get(key)
        making = _making.setdefault(key, threading.Lock()) if made is None else None
    if made is None:
        # One maker per bucket or NameNode: threads that ask at once (a job's partitions) wait for
        # the first one's file system instead of each making and checking their own.
        with making:
            with _lock:
                made = _made.get(key)
            if made is None:
                made = _s3(where, conf) if where.kind == "s3" else _hdfs(where, conf)
                with _lock:
                    _made[key] = made
    return made, where.path


_release_registered = False


def _release_at_exit() -> None:
    global _release_registered
    with _lock:
        if not _release_registered:
            atexit.register(release_native_clients)
            _release_registered = True


def release_native_clients() -> None:
    """At interpreter exit (registered with atexit when the first HDFS client is made), while Python
    still runs normally: drop the kept HDFS clients, collect what referred to them, and give
    pyarrow's I/O threads a moment (the GIL released) to let go of what they still hold.

    Why: left to the interpreter's finalization, the last references to hdfs-native's files and to
    pyarrow's handler can be released there by one of pyarrow's I/O threads; it then needs the GIL
    while Python finalizes, Python 3.11 ends it with pthread_exit, and that unwinding through
    pyarrow's C++ frames aborts the process ("terminate called without an active exception") after
    its work is done. Measured on the minicluster (a 1- or 16-file dataset read, then exit): 3 aborts
    in 120 runs without this, 1 in 40 with the drop and collection alone, 0 in 100 with the pause.
    The pause is a margin, not a guarantee, so the `hmsproxy` command also ends without
    finalization after using HDFS (cli.main); this protects scripts and notebooks."""
    with _lock:
        for key in [key for key in _made if key[0] == "hdfs"]:
            del _made[key]
    gc.collect()
    time.sleep(NATIVE_RELEASE_PAUSE_S)  # even if `forget` dropped them earlier: their files may still be held


def forget() -> None:
    """Drop the kept file systems (new settings; tests that restart a server)."""
    with _lock:
        _made.clear()


def native_clients_made() -> bool:
    """Has this process made an HDFS client (hdfs-native behind pyarrow's PyFileSystem)?"""
    with _lock:
        return any(kind == "hdfs" for kind, _ in _made)


def one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


# -- S3 ---------------------------------------------------------------------------------------------

_env_lock = threading.Lock()


def _s3(where: Place, conf: dict[str, str]) -> Any:
    # Read under the lock: while another bucket's client is being made, the environment holds the
    # checksum setting put there for it, which would read as the user's own choice.
    with _env_lock:
        environ = dict(os.environ)
    settings = s3_settings(where.authority, conf, environ)
    _check_bucket(_new_s3(settings, attempts=1), where, settings)
    return _new_s3(settings, attempts=settings.attempts)


def _new_s3(settings: S3Settings, attempts: int) -> Any:
    from pyarrow import fs

    # The AWS SDK reads the checksum setting from the environment when the client is made.
    with _env_lock:
        before = os.environ.get(CHECKSUM_ENV)
        if settings.checksum_calculation:
            os.environ[CHECKSUM_ENV] = settings.checksum_calculation
        try:
            return fs.S3FileSystem(**settings.options, retry_strategy=fs.AwsStandardS3RetryStrategy(max_attempts=attempts))
        finally:
            if before is None:
                os.environ.pop(CHECKSUM_ENV, None)
            else:
                os.environ[CHECKSUM_ENV] = before


def _check_bucket(filesystem: Any, where: Place, settings: S3Settings) -> None:
    from pyarrow import fs

    endpoint = settings.endpoint or "AWS S3"
    try:
        info = filesystem.get_file_info(where.authority)
    except OSError as exc:
        text = one_line(exc)
        if any(s in text for s in ("ACCESS_DENIED", "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "403", "credentials")):
            raise StorageError(
                f"{where.location}: {endpoint} refused the keys from {settings.keys_from} for bucket {where.authority}: "
                f"set fs.s3a.access.key/fs.s3a.secret.key (or fs.s3a.bucket.{where.authority}.*) in core-site.xml, "
                "or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY"
            ) from exc
        raise StorageError(
            f"{where.location}: S3 endpoint {endpoint} did not answer for bucket {where.authority} ({text}): "
            f"check fs.s3a.endpoint (or fs.s3a.bucket.{where.authority}.endpoint) in core-site.xml"
        ) from exc
    if info.type == fs.FileType.NotFound:
        raise StorageError(f"{where.location}: bucket {where.authority} does not exist at {endpoint}: create it or fix the location")


# -- HDFS -------------------------------------------------------------------------------------------


def _hdfs(where: Place, conf: dict[str, str]) -> Any:
    from pyarrow import fs

    try:
        from hdfs_native.fsspec import HdfsFileSystem
    except ImportError as exc:
        raise StorageError(f"{where.location}: HDFS needs the hdfs-native package (pip install hdfs-native)") from exc

    class WithTimes(HdfsFileSystem):
        """hdfs-native's fsspec view, with the modification times pyarrow's FileInfo carries."""

        def _convert_file_status(self, status):
            info = super()._convert_file_status(status)
            info["mtime"] = datetime.fromtimestamp(status.modification_time / 1000, tz=UTC)
            return info

    _check_namenodes(where, conf)
    host, _, port = where.authority.partition(":")
    try:
        _release_at_exit()
        client = WithTimes(host=host, port=int(port) if port else None, skip_instance_cache=True, **client_config(conf))
        filesystem = fs.PyFileSystem(listing_handler()(client))
        _first_answer(filesystem, where, conf)
    except StorageError:
        raise
    except Exception as exc:  # noqa: BLE001 - hdfs-native raises its own RuntimeErrors and OSErrors
        raise StorageError(_refusal(where, one_line(exc))) from exc
    return filesystem


@functools.cache
def listing_handler() -> type:
    """pyarrow's FSSpecHandler, listing without its race: it asks `isdir`, then `exists`, so a
    directory another writer makes between the two reads as a file (NotADirectoryError: two
    streaming writers on one HDFS location, each recovering `_hmsproxy_stream`), and one removed
    after `isdir` fails a listing that allows it to be missing."""
    from pyarrow import fs

    class RaceFreeListing(fs.FSSpecHandler):
        def get_file_info_selector(self, selector):
            try:
                return super().get_file_info_selector(selector)
            except NotADirectoryError:
                return super().get_file_info_selector(selector)  # a directory by now; a file raises again
            except FileNotFoundError:
                if selector.allow_not_found:
                    return []
                raise

    return RaceFreeListing


def _first_answer(filesystem: Any, where: Place, conf: dict[str, str]) -> None:
    """The root's status, or StorageError within `FIRST_ANSWER_TIMEOUT_S`: hdfs-native retries without
    end when a NameNode refuses its login (a Kerberized one refusing SIMPLE), so it is asked from a
    thread that is left behind (a daemon: it does not hold the process) if no answer comes."""
    outcome: list[BaseException | None] = []

    def ask() -> None:
        try:
            filesystem.get_file_info("/")
            outcome.append(None)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            outcome.append(exc)

    asker = threading.Thread(target=ask, name=f"hdfs-first-answer-{where.authority}", daemon=True)
    asker.start()
    asker.join(FIRST_ANSWER_TIMEOUT_S)
    if not outcome:
        if conf.get("hadoop.security.authentication", "simple").lower() != "kerberos":
            raise StorageError(
                f"{where.location}: HDFS at {where.authority} did not answer in {FIRST_ANSWER_TIMEOUT_S:.0f} s; a Kerberized "
                "NameNode refuses a client without Kerberos and hdfs-native retries without end: set "
                "hadoop.security.authentication=kerberos (and dfs.data.transfer.protection as the DataNodes have it) in "
                "HADOOP_CONF_DIR's core-site.xml, and kinit"
            )
        raise StorageError(f"{where.location}: HDFS at {where.authority} did not answer in {FIRST_ANSWER_TIMEOUT_S:.0f} s{_HDFS_HINT}")
    if outcome[0] is not None:
        raise outcome[0]


#: What hdfs-native's errors say when the Kerberos login, not the address, is what failed.
_KERBEROS_SIGNS = ("GSSAPI", "GSS_S_", "Kerberos", "SASL")


def _refusal(where: Place, reason: str) -> str:
    if any(sign in reason for sign in _KERBEROS_SIGNS):
        # A GSSAPIError's repr ends with Kerberos' own sentence in quotes: keep that, not the codes.
        reason = (re.findall(r'"([^"]+)"', reason) or [reason])[-1]
        cache = os.environ.get("KRB5CCNAME", "the default ticket cache")
        return (
            f"{where.location}: HDFS at {where.authority} needs a Kerberos ticket and found none usable in {cache} ({reason}): "
            "run kinit (or kinit -kt KEYTAB PRINCIPAL) into the cache KRB5CCNAME names; KRB5_CONFIG names the realm's krb5.conf"
        )
    return f"{where.location}: HDFS at {where.authority} refused the client ({reason}){_HDFS_HINT}"


_HDFS_HINT = (
    ": check the location's host:port, or fs.defaultFS and the HA nameservice keys (dfs.nameservices, dfs.ha.namenodes.*, "
    "dfs.namenode.rpc-address.*) in HADOOP_CONF_DIR"
)


def _check_namenodes(where: Place, conf: dict[str, str]) -> None:
    """One NameNode of the location accepts connections, or StorageError within seconds."""
    addresses = namenode_addresses(where.authority, conf)
    if not addresses:
        raise StorageError(f"{where.location}: nameservice {where.authority} lists no NameNode{_HDFS_HINT}")
    errors = []
    for host, port in addresses:
        try:
            socket.create_connection((host, port), timeout=NAMENODE_CONNECT_TIMEOUT_S).close()
            return
        except OSError as exc:
            errors.append(f"{host}:{port}: {one_line(exc)}")
    raise StorageError(f"{where.location}: no NameNode answers ({'; '.join(errors)}){_HDFS_HINT}")
