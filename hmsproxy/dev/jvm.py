"""The Java side of a local metastore: which ``java``, pyspark's Hive jars, and JVM flags."""

from __future__ import annotations

import os
import shutil
from importlib.util import find_spec
from pathlib import Path

METASTORE_MAIN_CLASS = "org.apache.hadoop.hive.metastore.HiveMetaStore"

#: Packages Hive 2.3 / Hadoop / DataNucleus reach into reflectively; Java 17
#: refuses that unless the package is opened (the same list Spark passes).
#: Hive 3.1 and 4.0 need exactly these too (JDK notes in hmsproxy.dev.versions).
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

#: Settings of a developer's Hadoop/Hive/Spark/Java setup that must not leak into a child JVM.
LEAKY_ENV_VARS = (
    "HADOOP_CONF_DIR",
    "HIVE_HOME",
    "HADOOP_HOME",
    "CLASSPATH",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "JDK_JAVA_OPTIONS",
    "HADOOP_USER_NAME",
)


def pyspark_jars_dir() -> Path:
    """The ``jars`` folder of the installed pyspark (without importing it)."""
    spec = find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("pyspark is not installed (pip install 'hmsproxy[spark]'); it provides the Hive metastore jars")
    for location in spec.submodule_search_locations:
        jars = Path(location) / "jars"
        if jars.is_dir():
            return jars
    raise RuntimeError(f"pyspark at {list(spec.submodule_search_locations)} has no 'jars' directory")


def java_executable(min_release: int = 17) -> str:
    """``$JAVA_HOME/bin/java`` if set, else ``java`` from ``PATH``; for a version needing a newer Java
    than that (Hive 4.2: 21), the first JDK of at least ``min_release`` among those and /usr/lib/jvm."""
    java_home = os.environ.get("JAVA_HOME")
    found = None
    if java_home and (Path(java_home) / "bin" / "java").is_file():
        found = str(Path(java_home) / "bin" / "java")
    found = found or shutil.which("java")
    if min_release <= 17:
        if not found:
            raise RuntimeError("no 'java' found (set JAVA_HOME or put java on PATH); Java 17 is needed")
        return found
    homes = [Path(found).resolve().parent.parent] if found else []
    homes += sorted(p for p in Path(JDK_ROOT).glob("*") if p.is_dir()) if Path(JDK_ROOT).is_dir() else []
    for home in homes:
        if (home / "bin" / "java").is_file() and (java_release(home) or 0) >= min_release:
            return str(home / "bin" / "java")
    raise RuntimeError(f"no Java {min_release} or newer found (JAVA_HOME, PATH, {JDK_ROOT}/*)")


#: Where the JDKs of Linux packages live: searched for a Java newer than JAVA_HOME's.
JDK_ROOT = "/usr/lib/jvm"


def java_release(home: Path) -> int | None:
    """The feature release (17, 25) a JDK's ``release`` file states; None if it has none."""
    try:
        text = (home / "release").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("JAVA_VERSION="):
            version = line.split("=", 1)[1].strip().strip('"')
            head = version.split(".")[0]
            return int(head) if head.isdigit() else None
    return None
