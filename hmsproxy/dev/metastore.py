"""A real, local Hive metastore (2.3 from pyspark's jars; 3.1, 4.0, 4.2 fetched; Derby) for ``hmsproxy dev`` and tests.

A :class:`LocalMetastore` runs ``org.apache.hadoop.hive.metastore.HiveMetaStore``
as a child JVM with an embedded Derby database. By default that is Hive 2.3, the
version Spark embeds, from the jars shipped inside the pyspark wheel;
``hive_version="3.1"``, ``"4.0"`` or ``"4.2"`` runs a standalone metastore whose jars
:mod:`hmsproxy.dev.maven` fetches on first use (:mod:`hmsproxy.dev.versions` has
what differs per version). All of its state --
the Derby database, the warehouse directory, the generated ``hive-site.xml``
and the log -- lives in one *state directory*, so stopping and starting it
again on the same directory keeps every database, table and partition.

Layout of a state directory::

    <state_dir>/conf/hive-site.xml   generated configuration (found via HIVE_CONF_DIR;
                                     the same settings are also passed as -D,
                                     which HiveConf overlays)
    <state_dir>/conf/metastore-log4j2.properties   (3.1, 4.0: they ship no log config)
    <state_dir>/metastore_db/        Derby database (created on first start)
    <state_dir>/warehouse/           hive.metastore.warehouse.dir
    <state_dir>/metastore.log        JVM stdout + stderr (Hive logs to stderr)
    <state_dir>/derby.log            Derby's own log
    <state_dir>/hive.log             (Hive's file appender; stays empty)
    <state_dir>/tmp/                 java.io.tmpdir of the JVM

Notes:

* Notifications: where :mod:`hmsproxy.dev.versions` knows a notification
  listener for the version, :meth:`LocalMetastore.start` fetches it (once, with
  Maven) and turns it on, so ``get_next_notification`` returns the metastore's
  events; if it cannot be fetched the metastore starts without it (a warning is
  logged). :attr:`LocalMetastore.notifications_enabled` says which it is.
* Hive 2.3's metastore has no bind-host setting: it listens on all
  interfaces. ``host`` is only the address clients (and the readiness probe)
  use.
* The JVM runs in its own process group; :meth:`LocalMetastore.stop` signals
  the whole group, and :mod:`hmsproxy.dev.lifetime` makes sure no JVM outlives
  the Python process that started it.
* Start-up (launch until ``get_all_databases`` answers), measured on a
  2-core VM with other work running: default JVM flags 4-6 s; with
  :data:`~hmsproxy.dev.jvm.FAST_START_JVM_FLAGS` ~3-3.5 s -- the same for a
  cold start (new Derby database) and a restart, because DataNucleus creates
  the schema quickly/lazily. Two metastores started together by
  :func:`start_metastores` take ~4 s of wall time.
* Hive 3.1 and 4.0 (same VM, JDK 17, fast flags), jars already fetched: 3.1 3-6 s
  cold or restarted; 4.0 5.5-7.5 s cold (the schema tool's ~2.5 s run included)
  and 2.5-4 s restarted. The first use also fetches the jars (~20 s with an empty
  Maven repository; see hmsproxy.dev.maven).
"""

from __future__ import annotations

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
from pathlib import Path
from xml.sax.saxutils import escape

from hmsproxy.dev import lifetime, maven
from hmsproxy.dev.jvm import (
    ADD_OPENS,
    FAST_START_JVM_FLAGS,
    LEAKY_ENV_VARS,
    java_executable,
)
from hmsproxy.dev.kerberos import MetastoreKerberos
from hmsproxy.dev.ports import free_port, free_ports
from hmsproxy.dev.versions import LOG_CONFIG_NAME, log4j2_properties
from hmsproxy.dev.versions import hive_version as version_facts

__all__ = ["LocalMetastore", "metastore_client", "start_metastores"]

_log = logging.getLogger(__name__)

DEFAULT_HEAP = "512m"

LogFn = Callable[[str], None]


def metastore_client(host: str, port: int, timeout_s: float = 60):
    """A new thriftpy2 ``ThriftHiveMetastore`` client (caller closes it)."""
    import thriftpy2.rpc
    from thriftpy2.protocol import TBinaryProtocolFactory
    from thriftpy2.transport import TBufferedTransportFactory

    from hmsproxy.protocol.idl import ThriftHiveMetastore

    return thriftpy2.rpc.make_client(
        ThriftHiveMetastore,
        host,
        port,
        timeout=int(timeout_s * 1000),
        trans_factory=TBufferedTransportFactory(),
        proto_factory=TBinaryProtocolFactory(),
    )


#: DataNucleus reads mapping overrides named package-<datanucleus.mapping>.orm from the classpath.
DERBY_MAPPING = "derby"
#: NOTIFICATION_LOG.MESSAGE as a CLOB, as Hive's own Derby schema scripts make it: the schema
#: DataNucleus creates by itself (2.3, 3.1) makes it LONG VARCHAR, at most 32,700 characters,
#: so recording an add_partitions of a few hundred partitions failed the call itself. Hive 3.1
#: ignores the setting (its ObjectStore passes only the datanucleus keys it knows, HIVE-17788),
#: so 3.1's local metastores keep that limit; 4.0's schema tool makes a CLOB itself.
_DERBY_ORM = """<?xml version="1.0" encoding="UTF-8"?>
<orm>
  <package name="org.apache.hadoop.hive.metastore.model">
    <class name="MNotificationLog" table="NOTIFICATION_LOG">
      <field name="message"><column name="MESSAGE" jdbc-type="CLOB"/></field>
    </class>
  </package>
</orm>
"""


def write_derby_mapping(conf_dir: Path) -> None:
    """The mapping override (see _DERBY_ORM), where DataNucleus finds it: conf_dir is on the classpath."""
    package = conf_dir / "org" / "apache" / "hadoop" / "hive" / "metastore" / "model"
    package.mkdir(parents=True, exist_ok=True)
    (package / f"package-{DERBY_MAPPING}.orm").write_text(_DERBY_ORM, encoding="utf-8")


#: The PostgreSQL JDBC driver's fetch name (poms/hive-postgresql-jdbc.xml) for hmsproxy.dev.maven.
POSTGRESQL_JDBC = "postgresql-jdbc"


def postgresql_driver_jars() -> Path:
    """The directory holding the PostgreSQL JDBC driver, fetched with Maven on first use."""
    return maven.fetch(POSTGRESQL_JDBC, ("dependency:copy-dependencies@lib",)) / "lib"


def _postgresql_properties(jdbc_url: str) -> dict[str, str]:
    """hive-site settings for a metastore database in PostgreSQL (see LocalMetastore's jdbc_url)."""
    return {
        "javax.jdo.option.ConnectionURL": jdbc_url,
        "javax.jdo.option.ConnectionDriverName": "org.postgresql.Driver",
        # The Derby mapping override (_DERBY_ORM) is Derby's; PostgreSQL takes DataNucleus' defaults.
        "datanucleus.mapping": "postgres",
        # hive.in.test makes 2.3 create its transaction tables with Derby's SQL; not on PostgreSQL.
        "hive.in.test": "false",
    }


def _log_command(logf, title: str, cmd: list[str]) -> None:
    """A header and the command line in the metastore's log, before the process writes to it."""
    logf.write(f"\n===== hmsproxy.dev.metastore: {title} =====\n$ {' '.join(cmd)}\n".encode())
    logf.flush()


def _hive_site_xml(properties: dict[str, str]) -> str:
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', "<!-- generated by hmsproxy.dev.metastore -->", "<configuration>"]
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


class LocalMetastore:
    """One Hive metastore JVM with its Derby database in ``state_dir``.

    ``log`` is an optional ``callable(str)`` for progress messages (default: the
    module logger at INFO). ``jvm_args`` are appended to the default JVM flags;
    ``hive_conf`` adds or overrides hive-site.xml properties; ``log_level`` is
    the metastore's own log level (INFO logs ~4 audit lines per call; WARN for
    benchmarks). ``fast_start=False`` drops :data:`FAST_START_JVM_FLAGS`.
    ``hive_version`` is "2.3" (pyspark's jars), "3.1", "4.0" or "4.2" (fetched on first start).
    ``notifications=False`` never adds the notification listener (see the module notes).
    ``extra_classpath``: jars put after the version's own (S3A's, for a warehouse on s3a://).
    ``jdbc_url`` (``jdbc:postgresql://host:port/db?user=...``) keeps the metastore's state in that
    PostgreSQL database instead of Derby, so several metastores can share it (an HA pair); the
    driver is fetched once (:func:`postgresql_driver_jars`). DataNucleus creates the schema: start
    one metastore on a new database before the others.
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
        hive_version: str = "2.3",
        notifications: bool = True,
        jdbc_url: str | None = None,
        kerberos: MetastoreKerberos | None = None,
        extra_classpath: Sequence[str | Path] = (),
    ) -> None:
        self.jdbc_url = jdbc_url
        #: Jars after the version's own (S3A's, for warehouses on s3a://: hmsproxy.dev.storage_jars).
        self.extra_classpath = tuple(str(p) for p in extra_classpath)
        #: SASL GSSAPI only (dev/kerberos.py); its readiness check connects with kerberos.client.
        self.kerberos = kerberos
        self.version = version_facts(hive_version)  # ValueError for an unknown version, before anything starts
        self.hive_version = hive_version
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
        self._want_notifications = notifications
        #: Whether the running (or last started) JVM records events for get_next_notification.
        self.notifications_enabled = False
        #: Why it does not, when notifications were asked for (None: they are on, or not asked for).
        self.notifications_unavailable: str | None = None
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
            "datanucleus.mapping": DERBY_MAPPING,
            # Local, single-user: no doAs, no auth.
            "hive.metastore.sasl.enabled": "false",
            "hive.metastore.execute.setugi": "false",
            "hive.security.authorization.enabled": "false",
            "hive.metastore.port": str(self.port),
        }
        if self.notifications_enabled:
            assert self.version.listener is not None
            props.update(self.version.listener.hive_conf)
        if self.jdbc_url is not None:
            props.update(_postgresql_properties(self.jdbc_url))
        props.update(self.version.hive_conf)
        if self.kerberos is not None:
            props.update(self.kerberos.hive_conf())
        props.update(self.hive_conf)
        return props

    def write_config(self) -> Path:
        """(Re)write ``conf/hive-site.xml``; returns its path."""
        self.conf_dir.mkdir(parents=True, exist_ok=True)
        site = self.conf_dir / "hive-site.xml"
        site.write_text(_hive_site_xml(self.hive_site_properties()), encoding="utf-8")
        write_derby_mapping(self.conf_dir)
        if self.kerberos is not None:  # Hadoop reads core-site.xml from the classpath (conf_dir is on it)
            (self.conf_dir / "core-site.xml").write_text(_hive_site_xml(self.kerberos.core_site()), encoding="utf-8")
        if self.version.fetched:
            (self.conf_dir / LOG_CONFIG_NAME).write_text(log4j2_properties(self.log_level), encoding="utf-8")
        return site

    def system_properties(self) -> dict[str, str]:
        """hive-site settings that are also passed as ``-D`` (HiveConf overlays them)."""
        props = self.hive_site_properties()
        return {k: v for k, v in props.items() if k != "hive.metastore.port"}

    def command(self) -> list[str]:
        """The full ``java ...`` command line."""
        return [*self._jvm_command(), self.version.main_class, "-p", str(self.port)]

    def schema_tool_command(self) -> list[str] | None:
        """``java ... MetastoreSchemaTool -initSchema -dbType derby``, for versions whose schema it makes."""
        if self.version.schema_tool_class is None:
            return None
        return [*self._jvm_command(), self.version.schema_tool_class, *self.version.schema_tool_args, "-dbType", "derby"]

    def _jvm_command(self) -> list[str]:
        """``java``, its flags and the classpath: everything before the main class."""
        tmp = self.state_dir / "tmp"
        cmd = [java_executable(self.version.java_release), f"-Xmx{self.heap}", "-Xss1m"]
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
        if self.version.fetched:
            cmd.append(f"-Dlog4j2.configurationFile={self.conf_dir / LOG_CONFIG_NAME}")
        cmd += [f"-D{k}={v}" for k, v in self.system_properties().items()]
        if self.kerberos is not None:
            cmd += self.kerberos.jvm_args()
        cmd += self.jvm_args
        classpath = self.version.classpath(self.conf_dir, with_listener=self.notifications_enabled)
        if self.jdbc_url is not None:
            classpath += f":{postgresql_driver_jars() / '*'}"
        classpath = ":".join([classpath, *self.extra_classpath])
        cmd += ["-cp", classpath]
        return cmd

    def _env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in LEAKY_ENV_VARS}
        env["HIVE_CONF_DIR"] = str(self.conf_dir)
        env.update(self.version.env())
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
            self.version.prepare(say=self._say)  # fetches 3.1/4.0 jars on first use (not timed below)
            self._prepare_notifications()
            self.state_dir.mkdir(parents=True, exist_ok=True)
            self.warehouse_dir.mkdir(parents=True, exist_ok=True)
            (self.state_dir / "tmp").mkdir(parents=True, exist_ok=True)
            self.write_config()
            cold = self.jdbc_url is None and not self.db_dir.exists()
            cmd = self.command()
            t0 = time.monotonic()
            if cold and self.version.schema_tool_class:
                self._init_schema(t0 + timeout_s)
            with open(self.log_path, "ab") as logf:
                _log_command(logf, f"starting {self.name} on port {self.port} at {time.strftime('%Y-%m-%d %H:%M:%S')}", cmd)
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
            lifetime.register(self)
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

    def _prepare_notifications(self) -> None:
        """Fetch the version's notification listener on first use; without it, start anyway."""
        listener = self.version.listener
        if not self._want_notifications:
            self.notifications_enabled, self.notifications_unavailable = False, None
            return
        if listener is None:  # a known gap, not worth a message at every start
            self.notifications_enabled = False
            self.notifications_unavailable = f"Hive {self.hive_version} has no notification listener (see hmsproxy.dev.versions)"
            return
        reason = listener.fetch(say=self._say)
        self.notifications_enabled = reason is None
        self.notifications_unavailable = reason
        if reason is not None:
            self._say(f"{self.name}: starting without notifications: {reason.splitlines()[0]}")

    def _init_schema(self, deadline: float) -> None:
        """Run the schema tool on a new Derby database; a failed run leaves no half-made database."""
        cmd = self.schema_tool_command()
        assert cmd is not None
        t0 = time.monotonic()
        with open(self.log_path, "ab") as logf:
            _log_command(logf, f"Hive {self.hive_version} schema tool", cmd)
            try:
                rc = subprocess.run(
                    cmd,
                    stdin=subprocess.DEVNULL,
                    stdout=logf,
                    stderr=subprocess.STDOUT,
                    cwd=str(self.state_dir),
                    env=self._env(),
                    timeout=max(1.0, deadline - t0),
                    start_new_session=True,
                ).returncode
            except subprocess.TimeoutExpired:
                rc = None
        if rc != 0:
            shutil.rmtree(self.db_dir, ignore_errors=True)
            what = "timed out" if rc is None else f"exited with code {rc}"
            raise RuntimeError(
                f"{self.name}: Hive {self.hive_version} schema tool {what}; last lines of {self.log_path}:\n{_tail(self.log_path)}"
            )
        self._say(f"{self.name}: Hive {self.hive_version} schema created in {time.monotonic() - t0:.1f}s")

    def _start_watchdog(self) -> None:
        assert self._proc is not None
        try:
            self._watchdog = lifetime.start_watchdog(self._proc.pid)  # session leader: pgid == pid
        except OSError as exc:  # no sh: the atexit hook still covers normal exits
            self._say(f"{self.name}: no watchdog ({exc})")
            self._watchdog = None

    def _wait_ready(self, deadline: float) -> None:
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
                client = self._readiness_client(max(0.5, min(attempt_timeout, remaining)))
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

    def _readiness_client(self, timeout_s: float):
        """A client for the readiness check: plain Thrift, or SASL as kerberos.client."""
        if self.kerberos is None:
            return metastore_client(self.host, self.port, timeout_s)
        return _SaslClient(self.name, self.uri, self.kerberos.client, timeout_s)

    def stop(self, grace_s: float = 10.0) -> None:
        """Stop the JVM's whole process group: SIGTERM, then SIGKILL. Idempotent."""
        with self._lock:
            self._stop_watchdog()
            proc = self._proc
            if proc is not None:
                pgid = proc.pid  # session leader => pgid == pid
                if proc.poll() is None:
                    self._say(f"{self.name}: stopping JVM pid {proc.pid}")
                    lifetime.killpg(pgid, signal.SIGTERM)
                    try:
                        proc.wait(timeout=grace_s)
                    except subprocess.TimeoutExpired:
                        lifetime.killpg(pgid, signal.SIGKILL)
                        proc.wait(timeout=30)
                # Anything else left in the group (the JVM spawns nothing, but be sure).
                lifetime.killpg(pgid, signal.SIGKILL)
            self._proc = None
            lifetime.unregister(self)

    def _stop_watchdog(self) -> None:
        watchdog, self._watchdog = self._watchdog, None
        lifetime.stop_watchdog(watchdog)

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
        return metastore_client(self.host, self.port, timeout_s)


class _SaslClient:
    """The readiness check's client of a Kerberized metastore (the proxy's own wire code)."""

    def __init__(self, name: str, uri: str, sasl, timeout_s: float):
        from hmsproxy.upstream.wire import ThriftConnection

        self._conn = ThriftConnection(name, (uri,), connect_timeout_s=timeout_s, call_timeout_s=timeout_s, sasl=sasl)

    def get_all_databases(self):
        from hmsproxy.protocol.idl import HmsProxy

        result = self._conn.call("get_all_databases", HmsProxy.get_all_databases_args())
        if result.success is None:
            raise RuntimeError(f"get_all_databases failed: {result.o1}")
        return result.success

    def close(self) -> None:
        self._conn.close()


def start_metastores(
    count: int,
    state_root: Path,
    *,
    ports: Iterable[int | None] | None = None,
    names: Sequence[str] | None = None,
    in_test: bool = True,
    host: str = "127.0.0.1",
    log: LogFn | None = None,
    timeout_s: float = 180,
    hive_versions: Sequence[str] | None = None,
    hive_confs: Sequence[dict[str, str]] | None = None,
    extra_classpaths: Sequence[Sequence[str | Path]] | None = None,
    **kwargs,
) -> list[LocalMetastore]:
    """Start ``count`` metastores in parallel, state in ``state_root/<name>``.

    Names default to ``hms0``, ``hms1``, ...; ports default to distinct free
    ports (so does a ``None`` in ``ports``: only those may move if taken at start); ``hive_versions`` gives each its Hive version (default: all 2.3).
    ``hive_confs`` gives each its own hive-site additions (their warehouses on one store), and
    ``extra_classpaths`` its own extra jars (S3A at the Hadoop of its version).
    Extra keyword arguments go to :class:`LocalMetastore`. If any fails
    to start, all are stopped and the first error is raised.
    """
    state_root = Path(state_root)
    names = list(names) if names is not None else [f"hms{i}" for i in range(count)]
    if len(names) != count:
        raise ValueError(f"{count} metastores but {len(names)} names")
    asked = list(ports) if ports is not None else [None] * count
    if len(asked) != count:
        raise ValueError(f"{count} metastores but {len(asked)} ports")
    picked = iter(free_ports(asked.count(None), host))
    port_list = [port if port is not None else next(picked) for port in asked]
    versions = list(hive_versions) if hive_versions is not None else ["2.3"] * count
    if len(versions) != count:
        raise ValueError(f"{count} metastores but {len(versions)} Hive versions")
    confs = list(hive_confs) if hive_confs is not None else [kwargs.pop("hive_conf", None)] * count
    if len(confs) != count:
        raise ValueError(f"{count} metastores but {len(confs)} hive-site additions")
    jars = list(extra_classpaths) if extra_classpaths is not None else [kwargs.pop("extra_classpath", ())] * count
    if len(jars) != count:
        raise ValueError(f"{count} metastores but {len(jars)} extra classpaths")
    metastores = [
        LocalMetastore(
            port,
            state_root / name,
            in_test=in_test,
            host=host,
            log=log,
            name=name,
            hive_version=version,
            hive_conf=conf,
            extra_classpath=extra,
            **kwargs,
        )
        for name, port, version, conf, extra in zip(names, port_list, versions, confs, jars)
    ]
    if count == 0:
        return metastores

    def start_one(ms: LocalMetastore, auto_port: bool) -> None:
        for attempt in range(3):
            try:
                ms.start(timeout_s)
                return
            except RuntimeError as exc:
                # Someone grabbed the free port between picking and binding:
                # with ports we chose ourselves, just take another one.
                if not (auto_port and attempt < 2 and "Address already in use" in str(exc)):
                    raise
                ms.port = free_port(host)

    with ThreadPoolExecutor(max_workers=count, thread_name_prefix="hms-start") as pool:
        futures = [pool.submit(start_one, ms, port is None) for ms, port in zip(metastores, asked)]
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
