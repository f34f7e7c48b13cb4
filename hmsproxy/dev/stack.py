"""Real, local Hive metastores for ``hmsproxy dev`` and for the test suite.

A :class:`LocalMetastore` runs ``org.apache.hadoop.hive.metastore.HiveMetaStore``
(Hive 2.3, the version Spark embeds) from the jars shipped inside the pyspark
wheel, as a child JVM with an embedded Derby database. All of its state --
the Derby database, the warehouse directory, the generated ``hive-site.xml``
and the log -- lives in one *state directory*, so stopping and starting it
again on the same directory keeps every database, table and partition.

Layout of a state directory::

    <state_dir>/conf/hive-site.xml   generated configuration (found via HIVE_CONF_DIR;
                                     the same settings are also passed as -D,
                                     which HiveConf overlays)
    <state_dir>/metastore_db/        Derby database (created on first start)
    <state_dir>/warehouse/           hive.metastore.warehouse.dir
    <state_dir>/metastore.log        JVM stdout + stderr (Hive logs to stderr)
    <state_dir>/derby.log            Derby's own log
    <state_dir>/hive.log             (Hive's file appender; stays empty)
    <state_dir>/tmp/                 java.io.tmpdir of the JVM

Notes:

* Hive 2.3's metastore has no bind-host setting: it listens on all
  interfaces. ``host`` is only the address clients (and the readiness probe)
  use.
* The JVM runs in its own process group; :meth:`LocalMetastore.stop` signals
  the whole group. An ``atexit`` hook stops every metastore still running when
  Python exits normally, and a tiny watchdog process (``sh``, reading a pipe
  only this Python process holds) kills the group if Python dies abruptly
  (SIGKILL, a crash), so no JVM outlives the Python process that started it.
* Start-up (launch until ``get_all_databases`` answers), measured on a
  2-core VM with other work running: default JVM flags 4-6 s; with
  :data:`FAST_START_JVM_FLAGS` ~3-3.5 s -- the same for a cold start (new
  Derby database) and a restart, because DataNucleus creates the schema
  quickly/lazily. Two metastores started together by
  :func:`start_metastores` take ~4 s of wall time.
"""

from __future__ import annotations

import atexit
import logging
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from importlib.util import find_spec
from pathlib import Path
from xml.sax.saxutils import escape

__all__ = [
    "ADD_OPENS",
    "FAST_START_JVM_FLAGS",
    "LocalMetastore",
    "dev_config",
    "free_port",
    "java_executable",
    "pyspark_jars_dir",
    "start_metastores",
]

_log = logging.getLogger(__name__)

METASTORE_MAIN_CLASS = "org.apache.hadoop.hive.metastore.HiveMetaStore"

#: Packages Hive 2.3 / Hadoop / DataNucleus reach into reflectively; Java 17
#: refuses that unless the package is opened (the same list Spark passes).
ADD_OPENS: tuple[str, ...] = tuple(
    f"--add-opens=java.base/{pkg}=ALL-UNNAMED"
    for pkg in (
        "java.lang",
        "java.lang.invoke",
        "java.lang.reflect",
        "java.io",
        "java.net",
        "java.nio",
        "java.util",
        "java.util.concurrent",
        "java.util.concurrent.atomic",
        "java.util.regex",
        "java.text",
        "sun.nio.ch",
        "sun.nio.cs",
        "sun.security.action",
        "sun.util.calendar",
    )
) + (
    "--add-opens=java.sql/java.sql=ALL-UNNAMED",
    "--add-opens=java.security.jgss/sun.security.krb5=ALL-UNNAMED",
)

#: JVM flags that shorten start-up of a short-lived, lightly loaded metastore:
#: C1 only (start-up is dominated by class loading and interpretation, C2
#: compiles would only compete for the two cores), the serial collector (no
#: GC threads to start, fine for a 512 MiB heap), the JDK's default shared
#: class archive for its own classes, and no -XX:+UsePerfData mmap file.
FAST_START_JVM_FLAGS: tuple[str, ...] = (
    "-XX:TieredStopAtLevel=1",
    "-XX:+UseSerialGC",
    "-Xshare:auto",
    "-XX:-UsePerfData",
)

DEFAULT_HEAP = "512m"

LogFn = Callable[[str], None]


# --------------------------------------------------------------------------
# helpers


def pyspark_jars_dir() -> Path:
    """The ``jars`` folder of the installed pyspark (without importing it)."""
    spec = find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("pyspark is not installed; it provides the Hive metastore jars")
    for location in spec.submodule_search_locations:
        jars = Path(location) / "jars"
        if jars.is_dir():
            return jars
    raise RuntimeError(f"pyspark at {list(spec.submodule_search_locations)} has no 'jars' directory")


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free on ``host`` right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def _free_ports(count: int, host: str = "127.0.0.1") -> list[int]:
    """``count`` distinct free ports (all sockets held until every port is picked)."""
    socks = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            socks.append(sock)
            sock.bind((host, 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for sock in socks:
            sock.close()


def java_executable() -> str:
    """``$JAVA_HOME/bin/java`` if set, else ``java`` from ``PATH``."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        candidate = Path(java_home) / "bin" / "java"
        if candidate.is_file():
            return str(candidate)
    found = shutil.which("java")
    if not found:
        raise RuntimeError("no 'java' found (set JAVA_HOME or put java on PATH); Java 17 is needed")
    return found


def _hive_site_xml(properties: dict[str, str]) -> str:
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', "<!-- generated by hmsproxy.dev.stack -->", "<configuration>"]
    for name, value in properties.items():
        lines.append(f"  <property><name>{escape(name)}</name><value>{escape(value)}</value></property>")
    lines.append("</configuration>")
    return "\n".join(lines) + "\n"


def _tail(path: Path, max_lines: int = 60, max_bytes: int = 64 * 1024) -> str:
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - max_bytes))
            data = fh.read()
    except OSError as exc:
        return f"<cannot read {path}: {exc}>"
    lines = data.decode("utf-8", "replace").splitlines()
    return "\n".join(lines[-max_lines:])


# --------------------------------------------------------------------------
# process bookkeeping: stop everything at exit

_live_lock = threading.Lock()
_live: dict[int, LocalMetastore] = {}


def _stop_all_at_exit() -> None:
    with _live_lock:
        running = list(_live.values())
    for ms in running:
        try:
            ms.stop(grace_s=3.0)
        except Exception:  # noqa: BLE001 - best effort at interpreter exit
            pass


atexit.register(_stop_all_at_exit)

# Reads one line from its stdin, a pipe whose write end only the Python
# process holds. EOF means Python is gone (or closed it on purpose), so kill
# the metastore's process group. stop() kills the watchdog first, so a normal
# stop never reaches the kill lines.
_WATCHDOG_SCRIPT = 'read _ignored; kill -TERM -"$1" 2>/dev/null || exit 0; sleep 5; kill -KILL -"$1" 2>/dev/null; exit 0'


# --------------------------------------------------------------------------


class LocalMetastore:
    """One Hive metastore JVM with its Derby database in ``state_dir``.

    ``log`` is an optional ``callable(str)`` for progress messages (default: the
    module logger at INFO). ``jvm_args`` are appended to the default JVM flags;
    ``hive_conf`` adds or overrides hive-site.xml properties; ``log_level`` is
    the metastore's own log level (INFO logs ~4 audit lines per call; WARN for
    benchmarks). ``fast_start=False`` drops :data:`FAST_START_JVM_FLAGS`.
    """

    def __init__(
        self,
        port: int,
        state_dir: Path,
        *,
        in_test: bool = True,
        host: str = "127.0.0.1",
        log: LogFn | None = None,
        heap: str = DEFAULT_HEAP,
        jvm_args: Sequence[str] = (),
        hive_conf: dict[str, str] | None = None,
        fast_start: bool = True,
        name: str | None = None,
        log_level: str = "INFO",
    ) -> None:
        self.port = int(port)
        self.state_dir = Path(state_dir).resolve()
        self.in_test = in_test
        self.host = host
        self.heap = heap
        self.jvm_args = tuple(jvm_args)
        self.hive_conf = dict(hive_conf or {})
        self.fast_start = fast_start
        self.name = name or f"metastore:{self.port}"
        self.log_level = log_level
        self._log_fn = log
        self._proc: subprocess.Popen | None = None
        self._watchdog: subprocess.Popen | None = None
        self._lock = threading.RLock()
        #: Seconds the last successful start() took (launch until first answer).
        self.last_start_seconds: float | None = None

    # -- paths / addresses -------------------------------------------------

    @property
    def uri(self) -> str:
        return f"thrift://{self.host}:{self.port}"

    @property
    def warehouse_dir(self) -> Path:
        return self.state_dir / "warehouse"

    @property
    def conf_dir(self) -> Path:
        return self.state_dir / "conf"

    @property
    def db_dir(self) -> Path:
        return self.state_dir / "metastore_db"

    @property
    def log_path(self) -> Path:
        return self.state_dir / "metastore.log"

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def is_running(self) -> bool:
        proc = self._proc
        return proc is not None and proc.poll() is None

    def __repr__(self) -> str:
        state = "running" if self.is_running else "stopped"
        return f"<LocalMetastore {self.uri} {state} state_dir={str(self.state_dir)!r}>"

    def _say(self, msg: str) -> None:
        if self._log_fn is not None:
            self._log_fn(msg)
        else:
            _log.info("%s", msg)

    # -- configuration -------------------------------------------------------

    def hive_site_properties(self) -> dict[str, str]:
        props = {
            "javax.jdo.option.ConnectionURL": (f"jdbc:derby:;databaseName={self.db_dir};create=true"),
            "javax.jdo.option.ConnectionDriverName": "org.apache.derby.jdbc.EmbeddedDriver",
            "hive.metastore.warehouse.dir": self.warehouse_dir.as_uri(),
            "datanucleus.schema.autoCreateAll": "true",
            "hive.metastore.schema.verification": "false",
            "hive.async.log.enabled": "false",
            "datanucleus.connectionPoolingType": "DBCP",
            # Makes the metastore create the ACID/transaction tables in Derby.
            "hive.in.test": "true" if self.in_test else "false",
            "hive.metastore.event.db.notification.api.auth": "false",
            # Local, single-user: no doAs, no auth.
            "hive.metastore.sasl.enabled": "false",
            "hive.metastore.execute.setugi": "false",
            "hive.security.authorization.enabled": "false",
            "hive.metastore.port": str(self.port),
        }
        props.update(self.hive_conf)
        return props

    def write_config(self) -> Path:
        """(Re)write ``conf/hive-site.xml``; returns its path."""
        self.conf_dir.mkdir(parents=True, exist_ok=True)
        site = self.conf_dir / "hive-site.xml"
        site.write_text(_hive_site_xml(self.hive_site_properties()), encoding="utf-8")
        return site

    def system_properties(self) -> dict[str, str]:
        """hive-site settings that are also passed as ``-D`` (HiveConf overlays them)."""
        props = self.hive_site_properties()
        return {k: v for k, v in props.items() if k != "hive.metastore.port"}

    def command(self) -> list[str]:
        """The full ``java ...`` command line."""
        jars = pyspark_jars_dir()
        tmp = self.state_dir / "tmp"
        cmd = [java_executable(), f"-Xmx{self.heap}", "-Xss1m"]
        if self.fast_start:
            cmd += FAST_START_JVM_FLAGS
        cmd += ADD_OPENS
        cmd += [
            "-Djava.net.preferIPv4Stack=true",
            f"-Djava.io.tmpdir={tmp}",
            f"-Dderby.system.home={self.state_dir}",
            f"-Dderby.stream.error.file={self.state_dir / 'derby.log'}",
            # Hive's log4j2 config: log to the console (i.e. our log file).
            "-Dhive.root.logger=console",
            f"-Dhive.log.level={self.log_level}",
            f"-Dhive.log.dir={self.state_dir}",
            "-Dlog4j2.formatMsgNoLookups=true",
        ]
        cmd += [f"-D{k}={v}" for k, v in self.system_properties().items()]
        cmd += self.jvm_args
        cmd += [
            # hive-site.xml is found through HIVE_CONF_DIR (see _env), so the
            # classpath is just the pyspark jars.
            "-cp",
            str(jars / "*"),
            METASTORE_MAIN_CLASS,
            "-p",
            str(self.port),
        ]
        return cmd

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        # Don't let a developer's Hadoop/Hive/Spark setup leak into the child.
        for var in (
            "HADOOP_CONF_DIR",
            "HIVE_HOME",
            "HADOOP_HOME",
            "CLASSPATH",
            "JAVA_TOOL_OPTIONS",
            "_JAVA_OPTIONS",
            "JDK_JAVA_OPTIONS",
            "HADOOP_USER_NAME",
        ):
            env.pop(var, None)
        env["HIVE_CONF_DIR"] = str(self.conf_dir)
        return env

    # -- lifecycle -------------------------------------------------------------

    def start(self, timeout_s: float = 180) -> LocalMetastore:
        """Launch the JVM and return once it answers ``get_all_databases``.

        Raises RuntimeError (with the tail of the log) if the JVM exits first
        or does not answer within ``timeout_s``.
        """
        with self._lock:
            if self.is_running:
                return self
            self._cleanup_handles()
            self.state_dir.mkdir(parents=True, exist_ok=True)
            self.warehouse_dir.mkdir(parents=True, exist_ok=True)
            (self.state_dir / "tmp").mkdir(parents=True, exist_ok=True)
            self.write_config()
            cold = not self.db_dir.exists()
            cmd = self.command()
            t0 = time.monotonic()
            with open(self.log_path, "ab") as logf:
                logf.write(
                    f"\n===== hmsproxy.dev.stack: starting {self.name} on port {self.port} "
                    f"at {time.strftime('%Y-%m-%d %H:%M:%S')} =====\n".encode()
                )
                logf.write(("$ " + " ".join(cmd) + "\n").encode())
                logf.flush()
                self._proc = subprocess.Popen(
                    cmd,
                    stdin=subprocess.DEVNULL,
                    stdout=logf,
                    stderr=subprocess.STDOUT,
                    cwd=str(self.state_dir),
                    env=self._env(),
                    start_new_session=True,  # own session => own process group
                    close_fds=True,
                )
            with _live_lock:
                _live[id(self)] = self
            self._start_watchdog()
            self._say(
                f"{self.name}: started JVM pid {self._proc.pid} ({'cold, creating Derby schema' if cold else 'existing state'}); "
                f"waiting for {self.uri}"
            )
            try:
                self._wait_ready(t0 + timeout_s)
            except BaseException:
                self.stop()
                raise
            self.last_start_seconds = time.monotonic() - t0
            self._say(f"{self.name}: ready at {self.uri} after {self.last_start_seconds:.1f}s")
            return self

    def _start_watchdog(self) -> None:
        assert self._proc is not None
        try:
            self._watchdog = subprocess.Popen(
                ["sh", "-c", _WATCHDOG_SCRIPT, "hmsproxy-devstack-watchdog", str(self._proc.pid)],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
                close_fds=True,
            )
        except OSError as exc:  # no sh: the atexit hook still covers normal exits
            self._say(f"{self.name}: no watchdog ({exc})")
            self._watchdog = None

    def _wait_ready(self, deadline: float) -> None:
        import thriftpy2.rpc
        from thriftpy2.protocol import TBinaryProtocolFactory
        from thriftpy2.transport import TBufferedTransportFactory

        from hmsproxy.idl import ThriftHiveMetastore

        last_error: BaseException | None = None
        # Per-attempt socket timeout: short at first, so that a port answered by
        # something else (which never replies) cannot hide our JVM's exit for
        # long; doubled after each timeout in case the metastore is just slow.
        attempt_timeout = 3.0
        while True:
            proc = self._proc
            assert proc is not None
            rc = proc.poll()
            if rc is not None:
                raise RuntimeError(
                    f"{self.name}: metastore JVM exited with code {rc} before answering on "
                    f"{self.uri}; last lines of {self.log_path}:\n{_tail(self.log_path)}"
                )
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise RuntimeError(
                    f"{self.name}: metastore on {self.uri} did not answer within the timeout "
                    f"(last error: {last_error!r}); last lines of {self.log_path}:\n"
                    f"{_tail(self.log_path)}"
                )
            client = None
            try:
                client = thriftpy2.rpc.make_client(
                    ThriftHiveMetastore,
                    self.host,
                    self.port,
                    timeout=int(max(0.5, min(attempt_timeout, remaining)) * 1000),
                    trans_factory=TBufferedTransportFactory(),
                    proto_factory=TBinaryProtocolFactory(),
                )
                client.get_all_databases()
                return
            except Exception as exc:  # noqa: BLE001 - not up yet
                last_error = exc
                if isinstance(exc, (socket.timeout, TimeoutError)) or "timed out" in str(exc):
                    attempt_timeout = min(attempt_timeout * 2, 30.0)
            finally:
                if client is not None:
                    try:
                        client.close()
                    except Exception:  # noqa: BLE001
                        pass
            time.sleep(0.25)

    def stop(self, grace_s: float = 10.0) -> None:
        """Stop the JVM's whole process group: SIGTERM, then SIGKILL. Idempotent."""
        with self._lock:
            self._stop_watchdog()
            proc = self._proc
            if proc is not None:
                pgid = proc.pid  # session leader => pgid == pid
                if proc.poll() is None:
                    self._say(f"{self.name}: stopping JVM pid {proc.pid}")
                    _killpg(pgid, signal.SIGTERM)
                    try:
                        proc.wait(timeout=grace_s)
                    except subprocess.TimeoutExpired:
                        _killpg(pgid, signal.SIGKILL)
                        proc.wait(timeout=30)
                # Anything else left in the group (the JVM spawns nothing, but be sure).
                _killpg(pgid, signal.SIGKILL)
            self._proc = None
            with _live_lock:
                _live.pop(id(self), None)

    def _stop_watchdog(self) -> None:
        wd = self._watchdog
        self._watchdog = None
        if wd is None:
            return
        if wd.poll() is None:
            try:
                wd.kill()
            except ProcessLookupError:
                pass
        try:
            wd.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        if wd.stdin is not None:
            try:
                wd.stdin.close()
            except OSError:
                pass

    def _cleanup_handles(self) -> None:
        """Reap a JVM that died on its own and its watchdog before a new start."""
        if self._proc is not None or self._watchdog is not None:
            self.stop()

    def restart(self, timeout_s: float = 180) -> LocalMetastore:
        self.stop()
        return self.start(timeout_s=timeout_s)

    def __enter__(self) -> LocalMetastore:
        if not self.is_running:
            self.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self.stop()

    # -- convenience -------------------------------------------------------------

    def client(self, timeout_s: float = 60):
        """A new thriftpy2 ``ThriftHiveMetastore`` client (caller closes it)."""
        import thriftpy2.rpc
        from thriftpy2.protocol import TBinaryProtocolFactory
        from thriftpy2.transport import TBufferedTransportFactory

        from hmsproxy.idl import ThriftHiveMetastore

        return thriftpy2.rpc.make_client(
            ThriftHiveMetastore,
            self.host,
            self.port,
            timeout=int(timeout_s * 1000),
            trans_factory=TBufferedTransportFactory(),
            proto_factory=TBinaryProtocolFactory(),
        )


def _killpg(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def start_metastores(
    count: int,
    state_root: Path,
    *,
    ports: Iterable[int] | None = None,
    names: Sequence[str] | None = None,
    in_test: bool = True,
    host: str = "127.0.0.1",
    log: LogFn | None = None,
    timeout_s: float = 180,
    **kwargs,
) -> list[LocalMetastore]:
    """Start ``count`` metastores in parallel, state in ``state_root/<name>``.

    Names default to ``hms0``, ``hms1``, ...; ports default to distinct free
    ports. Extra keyword arguments go to :class:`LocalMetastore`. If any fails
    to start, all are stopped and the first error is raised.
    """
    state_root = Path(state_root)
    names = list(names) if names is not None else [f"hms{i}" for i in range(count)]
    if len(names) != count:
        raise ValueError(f"{count} metastores but {len(names)} names")
    port_list = list(ports) if ports is not None else _free_ports(count, host)
    if len(port_list) != count:
        raise ValueError(f"{count} metastores but {len(port_list)} ports")
    metastores = [
        LocalMetastore(port, state_root / name, in_test=in_test, host=host, log=log, name=name, **kwargs)
        for name, port in zip(names, port_list)
    ]
    if count == 0:
        return metastores
    auto_ports = ports is None

    def start_one(ms: LocalMetastore) -> None:
        for attempt in range(3):
            try:
                ms.start(timeout_s)
                return
            except RuntimeError as exc:
                # Someone grabbed the free port between picking and binding:
                # with ports we chose ourselves, just take another one.
                if not (auto_ports and attempt < 2 and "Address already in use" in str(exc)):
                    raise
                ms.port = free_port(host)

    with ThreadPoolExecutor(max_workers=count, thread_name_prefix="hms-start") as pool:
        futures = [pool.submit(start_one, ms) for ms in metastores]
        errors = []
        for fut in futures:
            try:
                fut.result()
            except BaseException as exc:  # noqa: BLE001
                errors.append(exc)
    if errors:
        for ms in metastores:
            ms.stop()
        raise errors[0]
    return metastores


def dev_config(uris: Sequence[str], *, host: str = "127.0.0.1", port: int = 9083):
    """The federation ``hmsproxy dev up`` serves in front of local metastores.

    ``uris[0]`` is the primary (read, write, create); every further URI is a
    federated metastore ``fedN`` (N = 1, 2, ...), visible in PREFIXED mode as
    ``fedN_<database>`` and writable in all its databases (federated
    metastores cannot create databases, as in Waggle Dance).
    """
    from hmsproxy.config_model import (
        AccessControlType,
        Config,
        DatabaseResolution,
        MetastoreConfig,
        ServerConfig,
    )

    if not uris:
        raise ValueError("dev_config needs at least one metastore URI")
    primary = MetastoreConfig(
        "primary",
        (uris[0],),
        primary=True,
        access_control_type=AccessControlType.READ_AND_WRITE_AND_CREATE,
        hive_version="2.3",
    )
    federated = tuple(
        MetastoreConfig(
            f"fed{i}",
            (uri,),
            database_prefix=f"fed{i}_",
            access_control_type=AccessControlType.READ_AND_WRITE_ON_DATABASE_WHITELIST,
            writable_database_white_list=(".*",),
            hive_version="2.3",
        )
        for i, uri in enumerate(uris[1:], start=1)
    )
    return Config(
        ServerConfig(host=host, port=port),
        DatabaseResolution.PREFIXED,
        primary,
        federated,
        sources=("hmsproxy dev up",),
    )
