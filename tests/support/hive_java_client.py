"""Hive's own Java `HiveMetaStoreClient` reading a notification log (java/NotificationReader.java).

Compiled and run against one Hive version's jars: "2.3" is pyspark's (hive-metastore 2.3.10), "3.1"
the standalone metastore's lib/ that `hmsproxy dev fetch` caches. Hive 3.1's client throws
"Notification events are missing" itself when an id is not the previous plus one; 2.3.10's has no
such check, so the reader makes it (the message says which did).
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from hmsproxy.dev.jvm import pyspark_jars_dir
from tests.contract.jars import java_tool
from tests.support.hive_jars import require_hive

SOURCE = Path(__file__).parent / "java" / "NotificationReader.java"
#: Bounds one read: the JVM start plus a few hundred events.
RUN_TIMEOUT_S = 180


@dataclass(frozen=True)
class JavaEvent:
    id: int
    type: str
    db: str | None
    table: str | None
    format: str | None
    message: str | None


@dataclass(frozen=True)
class JavaRead:
    current: int
    events: list[JavaEvent]


class JavaReadFailed(AssertionError):
    """The Java client refused the log (a hole, a connection error): its stderr is in the message."""


def hive_classpath(version: str) -> str:
    jars = pyspark_jars_dir() if version == "2.3" else require_hive(version) / "lib"
    return str(jars / "*")


class HiveJavaReader:
    """NotificationReader compiled once against `version`'s jars into `workdir`."""

    def __init__(self, version: str, workdir: Path):
        self.version = version
        self.classpath = hive_classpath(version)
        self.classes = workdir / f"notification-reader-{version}"
        self.classes.mkdir(parents=True, exist_ok=True)
        javac = java_tool("javac")
        subprocess.run(
            [javac, "-nowarn", "-d", str(self.classes), "-cp", self.classpath, str(SOURCE)],
            check=True,
            capture_output=True,
            timeout=RUN_TIMEOUT_S,
        )

    def read(self, uri: str, last: int, batch: int = 1000) -> JavaRead:
        """The current id, then every event after `last` up to it, as the Java client received them."""
        cmd = [
            java_tool("java"),
            "-Xmx256m",
            "-cp",
            f"{self.classes}{os.pathsep}{self.classpath}",
            "NotificationReader",
            uri,
            str(last),
            str(batch),
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
        if proc.returncode != 0:
            tail = "\n".join(proc.stderr.strip().splitlines()[-15:])
            raise JavaReadFailed(f"Hive {self.version}'s HiveMetaStoreClient failed ({proc.returncode}):\n{tail}")
        lines = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
        (first, *rest) = lines
        return JavaRead(first["current"], [JavaEvent(**e) for e in rest])
