"""What differs between the Hive versions a :class:`~hmsproxy.dev.metastore.LocalMetastore` runs.

One :class:`HiveVersion` per version: where its jars come from, extra hive-site
settings, and how its Derby schema is made. Everything else (JVM flags, process
handling, readiness) is shared.

- **2.3**: the jars inside pyspark's wheel, exactly as before; DataNucleus creates
  the schema, ``hive.in.test`` the transaction tables.
- **3.1** (3.1.3): ``hive-standalone-metastore`` fetched with Maven
  (``poms/hive-3.1.xml``); schema as 2.3 (``TxnDbUtil.prepDb`` still runs under
  ``hive.in.test``).
- **4.0** (4.0.1): ``hive-standalone-metastore-server`` fetched with Maven
  (``poms/hive-4.0.xml``). 4.x no longer creates the transaction tables itself,
  so the schema tool (``-initSchema -dbType derby``, scripts from the binary
  release) makes the whole schema before the first start.

Notifications: each version may name a :class:`NotificationListener`, Hive's
``DbNotificationListener`` (in ``hive-hcatalog-server-extensions``, which no metastore
jar set carries), fetched once like the 3.1/4.0 jars (``poms/hive-<version>-listener.xml``).
With it the metastore records every event in NOTIFICATION_LOG, which
``get_next_notification`` reads. Without it (Maven can't fetch) the metastore still
starts, just without events: only tests that ask for events need them.
2.3 needs only that jar; 3.1 also Jackson 1 (its JSONMessageFactory uses it). **4.0 has
none**: no 4.0.x metastore jar has a listener that writes NOTIFICATION_LOG (only the
hcatalog one does), hive-hcatalog-server-extensions 4.0.0/4.0.1 were never published to
Maven Central, and 4.2.0's needs the 4.2 metastore API (on a 4.0.1 metastore it fails to
load: ``ClassNotFoundException: ...messaging.AlterPartitionsMessage``).

- **4.2** (4.2.0), the Hive 4 metastore that records events: Maven Central has no
  ``hive-standalone-metastore-server`` after 4.0.1, so its classes come from ``hive-exec``
  4.2.0, which bundles them, with ``hive-hcatalog-server-extensions`` 4.2.0's listener
  (``poms/hive-4.2.xml``, which says why each other jar is there). Built for Java 21: it runs
  on the first JDK of 21 or newer found (Temurin 25 here), with Hadoop 3.5.0, which works on
  Java 23+. Schema: 4.2's schema tool runs 4.0.1's Derby script (``-initSchemaTo 4.0.0``; no
  4.2 script is published), then DataNucleus creates what 4.1/4.2 added to its model (the
  transaction tables' own 4.1/4.2 changes, made by SQL scripts only, are not there).

JDK: 3.1 and 4.0 run on JDK 17 (the default ``java``) with the same flags as 2.3
(:data:`~hmsproxy.dev.jvm.ADD_OPENS`, :data:`~hmsproxy.dev.jvm.FAST_START_JVM_FLAGS`).
They do not start on Temurin 25: their Hadoop (3.1.0, 3.3.6) calls
``Subject.getSubject``, which throws UnsupportedOperationException since JDK 23
unless a Security Manager may be enabled, and JDK 24+ refuses
``-Djava.security.manager=allow``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from hmsproxy.dev import maven
from hmsproxy.dev.jvm import METASTORE_MAIN_CLASS, pyspark_jars_dir

_log = logging.getLogger(__name__)

LOG_CONFIG_NAME = "metastore-log4j2.properties"

# The default is hive-exec's PartitionExpressionForMetastore, which a standalone
# metastore does not have; this one evaluates partition filters without it.
_EXPRESSION_PROXY = {"metastore.expression.proxy": "org.apache.hadoop.hive.metastore.DefaultPartitionExpressionProxy"}
# hive.in.test makes the metastore refuse clients that lack a TEST capability.
_NO_CAPABILITY_CHECK = {"metastore.client.capability.check": "false"}


DB_NOTIFICATION_LISTENER = "org.apache.hive.hcatalog.listener.DbNotificationListener"

# Why a listener could not be fetched, per cache directory: asked once per process, so an
# offline machine does not run Maven again for every metastore it starts.
_listener_failures: dict[str, str] = {}
_listener_lock = threading.Lock()


@dataclass(frozen=True)
class NotificationListener:
    """The extra jars and settings that make a metastore record events for ``get_next_notification``."""

    #: maven.fetch's name for it: pom ``poms/hive-<fetch_name>.xml``, jars in ``hive_home(fetch_name)/lib``.
    fetch_name: str
    hive_conf: Mapping[str, str] = field(
        default_factory=lambda: {
            # Transactional: the event row is written in the same JDO transaction as the change
            # (what DbNotificationListener is meant for). The hive.* name is read by 2.3's HiveConf
            # and, as the alias of metastore.transactional.event.listeners, by 3.1's MetastoreConf.
            "hive.metastore.transactional.event.listeners": DB_NOTIFICATION_LISTENER,
        }
    )

    @property
    def jars_dir(self) -> Path:
        return maven.hive_home(self.fetch_name) / "lib"

    def fetch(self, say: Callable[[str], None] | None = None) -> str | None:
        """Fetch the jars on first use; returns why they are unavailable, or None when they are there."""
        key = str(self.jars_dir)
        with _listener_lock:
            if key in _listener_failures:
                return _listener_failures[key]
            try:
                maven.fetch(self.fetch_name, ("dependency:copy-dependencies@lib",), say=say)
                return None
            except maven.FetchError as exc:
                _listener_failures[key] = str(exc)
                _log.warning("no metastore notifications (get_next_notification stays empty): %s", exc)
                return str(exc)


@dataclass(frozen=True)
class HiveVersion:
    name: str
    #: dependency-plugin goals of ``poms/hive-<name>.xml``; empty: the jars are pyspark's.
    maven_goals: tuple[str, ...] = ()
    #: hive-site settings on top of LocalMetastore's own (the caller's hive_conf still wins).
    hive_conf: Mapping[str, str] = field(default_factory=dict)
    #: main class of the schema tool run once on a new Derby database; None: DataNucleus makes it.
    schema_tool_class: str | None = None
    #: what the schema tool is asked to do (after it, ``-dbType derby``).
    schema_tool_args: tuple[str, ...] = ("-initSchema",)
    #: the oldest Java release its jars run on (hmsproxy.dev.jvm.java_executable finds one).
    java_release: int = 17
    main_class: str = METASTORE_MAIN_CLASS
    #: what records events for get_next_notification; None: this version has none.
    listener: NotificationListener | None = None

    @property
    def fetched(self) -> bool:
        return bool(self.maven_goals)

    def prepare(self, say: Callable[[str], None] | None = None) -> None:
        """Fetch the jars on first use (no-op for pyspark's 2.3 or when already fetched)."""
        if self.fetched:
            maven.fetch(self.name, self.maven_goals, say=say)

    def classpath(self, conf_dir: Path, *, with_listener: bool = False) -> str:
        if not self.fetched:
            # hive-site.xml is found through HIVE_CONF_DIR; conf_dir is on the classpath for
            # DataNucleus' mapping override (metastore.write_derby_mapping).
            path = f"{conf_dir}:{pyspark_jars_dir() / '*'}"
        else:
            # Standalone metastores look for hive-site.xml and their log4j2 file on the classpath.
            path = f"{conf_dir}:{maven.hive_home(self.name) / 'lib' / '*'}"
        if with_listener and self.listener is not None:
            path += f":{self.listener.jars_dir / '*'}"
        return path

    def env(self) -> dict[str, str]:
        """Environment the JVMs of this version need (the schema tool finds its scripts via METASTORE_HOME)."""
        if not self.fetched:
            return {}
        releases = sorted(maven.hive_home(self.name).glob("apache-hive-metastore-*-bin"))
        return {"METASTORE_HOME": str(releases[-1])} if releases else {}


# Hive 4.x: jars and the schema tool's Derby scripts fetched, the schema made by the tool.
_HIVE4_GOALS = ("dependency:copy-dependencies@lib", "dependency:unpack@scripts")
_HIVE4_SCHEMA_TOOL = "org.apache.hadoop.hive.metastore.tools.schematool.MetastoreSchemaTool"
_HIVE4_CONF = {
    **_EXPRESSION_PROXY,
    **_NO_CAPABILITY_CHECK,
    # With DBCP, 4.0.1's request threads hang in the pool at ~10 concurrent clients
    # (seen by the benchmark at 16); HikariCP, Hive 4's own default, does not.
    "datanucleus.connectionPoolingType": "HikariCP",
}

HIVE_VERSIONS: dict[str, HiveVersion] = {
    "2.3": HiveVersion("2.3", listener=NotificationListener("2.3-listener")),
    "3.1": HiveVersion(
        "3.1",
        maven_goals=("dependency:copy-dependencies@lib",),
        hive_conf={
            **_EXPRESSION_PROXY,
            **_NO_CAPABILITY_CHECK,
            # The default list also names repl.DumpDirCleanerTask, which lives in hive-exec.
            "metastore.task.threads.always": ",".join(
                f"org.apache.hadoop.hive.metastore.{task}"
                for task in ("events.EventCleanerTask", "RuntimeStatsCleanerTask", "MaterializationsRebuildLockCleanerTask")
            ),
        },
        listener=NotificationListener("3.1-listener"),
    ),
    "4.0": HiveVersion(
        "4.0",
        maven_goals=_HIVE4_GOALS,
        hive_conf={
            **_HIVE4_CONF,
            # The schema tool made the whole schema; verification proves it is the right one.
            "datanucleus.schema.autoCreateAll": "false",
            "hive.metastore.schema.verification": "true",
        },
        schema_tool_class=_HIVE4_SCHEMA_TOOL,
        # No listener: see the module notes.
    ),
    "4.2": HiveVersion(
        "4.2",
        maven_goals=_HIVE4_GOALS,
        hive_conf={
            **_HIVE4_CONF,
            # The schema tool makes 4.0.0's schema (no 4.2 script is published); DataNucleus adds the
            # tables and columns 4.1/4.2 added to its model, and the version check would refuse 4.0.0.
            "datanucleus.schema.autoCreateAll": "true",
            "hive.metastore.schema.verification": "false",
        },
        schema_tool_class=_HIVE4_SCHEMA_TOOL,
        schema_tool_args=("-initSchemaTo", "4.0.0"),
        java_release=21,
        # Its listener is in the same jar set (poms/hive-4.2.xml): this fetch is the version's own.
        listener=NotificationListener("4.2"),
    ),
}


def hive_version(name: str) -> HiveVersion:
    try:
        return HIVE_VERSIONS[name]
    except KeyError:
        raise ValueError(f"unknown Hive version {name!r}; known: {', '.join(HIVE_VERSIONS)}") from None


def log4j2_properties(level: str) -> str:
    """A log4j2 config for 3.1/4.0 (they ship none): everything to stderr, i.e. metastore.log."""
    return (
        "status = WARN\n"
        "appender.console.type = Console\n"
        "appender.console.name = console\n"
        "appender.console.target = SYSTEM_ERR\n"
        "appender.console.layout.type = PatternLayout\n"
        "appender.console.layout.pattern = %d{ISO8601} %5p [%t] %c{2}: %m%n\n"
        f"rootLogger.level = {level}\n"
        "rootLogger.appenderRef.console.ref = console\n"
        # DataNucleus at INFO logs every class it enhances.
        "logger.datanucleus.name = DataNucleus\n"
        "logger.datanucleus.level = WARN\n"
    )
