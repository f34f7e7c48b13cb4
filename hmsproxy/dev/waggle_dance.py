"""Waggle Dance, the Java federating proxy hmsproxy replaces, run locally for comparison.

``make bench`` measures it beside hmsproxy (tests/bench/bench_waggle_dance.py) and an
integration test keeps that harness alive. :func:`fetch` gets Waggle Dance 3.13.3's
executable jar once with Maven (``poms/waggle-dance-3.13.3.xml``, cached like the Hive
jars: :mod:`hmsproxy.dev.maven`); :class:`WaggleDance` runs it as a child JVM on the two
YAML files hmsproxy also reads (:func:`write_config`).

Facts it depends on (Waggle Dance 3.13.3, measured on JDK 17):

- it starts on Java 17 only with its Groovy template auto-configuration excluded
  (:data:`JVM_FLAGS`; Groovy 2.4 fails otherwise);
- it rewrites its federation file on shutdown unless
  ``yaml-storage.overwrite-config-on-shutdown: false``;
- relative config paths fail (commons-vfs wants an absolute URI), so paths are resolved;
- it logs a ``WD Audit:[...]`` line per call at INFO, its default level (logger
  :data:`AUDIT_LOGGER`); ``audit=False`` raises that logger to WARN.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from hmsproxy.dev import lifetime, maven
from hmsproxy.dev.jvm import LEAKY_ENV_VARS, java_executable
from hmsproxy.dev.metastore import _tail, metastore_client

VERSION = "3.13.3"
POM_NAME = f"waggle-dance-{VERSION}"
JAR_NAME = f"waggle-dance-boot-{VERSION}-exec.jar"
#: Without this, Spring Boot's Groovy template auto-configuration (Groovy 2.4) fails on Java 17.
JVM_FLAGS = ("-Dspring.autoconfigure.exclude=org.springframework.boot.autoconfigure.groovy.template.GroovyTemplateAutoConfiguration",)
#: The logger of Waggle Dance's audit line per call.
AUDIT_LOGGER = "com.hotels.bdp.waggledance.server.ExceptionWrappingHMSHandler"


def fetch(say: Callable[[str], None] | None = None) -> Path:
    """The executable jar, fetched with Maven on first use; raises maven.FetchError."""
    home = maven.fetch_pom(POM_NAME, ("dependency:copy@jar",), label=f"Waggle Dance {VERSION}", say=say)
    return home / "lib" / JAR_NAME


def write_config(directory: Path, port: int, primary_uri: str) -> tuple[Path, Path]:
    """waggle-dance-server.yml and waggle-dance-federation.yml: PREFIXED resolution and one
    primary (``READ_AND_WRITE_AND_CREATE``), as hmsproxy's benchmark config has it; the
    federation file is not rewritten on shutdown. Returns (server, federation)."""
    directory.mkdir(parents=True, exist_ok=True)
    server = directory / "waggle-dance-server.yml"
    federation = directory / "waggle-dance-federation.yml"
    server.write_text(
        f"port: {port}\ndatabase-resolution: PREFIXED\nyaml-storage:\n  overwrite-config-on-shutdown: false\n",
        encoding="utf-8",
    )
    federation.write_text(
        f"primary-meta-store:\n  name: primary\n  remote-meta-store-uris: {primary_uri}\n  access-control-type: READ_AND_WRITE_AND_CREATE\n",
        encoding="utf-8",
    )
    return server.resolve(), federation.resolve()


class WaggleDance:
    """One Waggle Dance JVM (its own process group, stopped with the Python process at the latest)."""

    def __init__(self, jar: Path, server_yml: Path, federation_yml: Path, log_path: Path, *, port: int, audit: bool = True):
        self.port = port
        self.log_path = log_path
        self.cmd = [
            java_executable(),
            *JVM_FLAGS,
            "-jar",
            str(jar),
            f"--server-config={Path(server_yml).resolve()}",
            f"--federation-config={Path(federation_yml).resolve()}",
            *(() if audit else (f"--logging.level.{AUDIT_LOGGER}=WARN",)),
        ]
        self._proc: subprocess.Popen | None = None
        self._watchdog: subprocess.Popen | None = None
        #: Seconds from launch until get_all_databases answered.
        self.ready_s: float | None = None
        self.pid: int | None = None

    def start(self, timeout_s: float = 180) -> WaggleDance:
        env = {k: v for k, v in os.environ.items() if k not in LEAKY_ENV_VARS}
        t0 = time.monotonic()
        with open(self.log_path, "ab") as log:
            self._proc = subprocess.Popen(
                self.cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True, close_fds=True
            )
        self.pid = self._proc.pid
        lifetime.register(self)
        try:
            self._watchdog = lifetime.start_watchdog(self._proc.pid)
        except OSError:
            self._watchdog = None  # no sh: the atexit hook still stops it
        try:
            self._wait_ready(t0 + timeout_s)
        except BaseException:
            self.stop()
            raise
        self.ready_s = time.monotonic() - t0
        return self

    def _wait_ready(self, deadline: float) -> None:
        while True:
            assert self._proc is not None
            if self._proc.poll() is not None:
                raise RuntimeError(f"Waggle Dance exited with code {self._proc.returncode}; {self.log_path}:\n{_tail(self.log_path)}")
            try:
                client = metastore_client("127.0.0.1", self.port, timeout_s=10)
                try:
                    client.get_all_databases()
                    return
                finally:
                    client.close()
            except Exception:  # noqa: BLE001 - not listening yet
                if time.monotonic() > deadline:
                    raise RuntimeError(f"Waggle Dance did not answer in time; {self.log_path}:\n{_tail(self.log_path)}") from None
                time.sleep(0.05)

    def stop(self, grace_s: float = 15.0) -> None:
        """SIGTERM to its process group, then SIGKILL. Idempotent."""
        lifetime.stop_watchdog(self._watchdog)
        self._watchdog = None
        proc, self._proc = self._proc, None
        if proc is not None:
            if proc.poll() is None:
                lifetime.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=grace_s)
                except subprocess.TimeoutExpired:
                    lifetime.killpg(proc.pid, signal.SIGKILL)
                    proc.wait(timeout=30)
            lifetime.killpg(proc.pid, signal.SIGKILL)
        lifetime.unregister(self)
