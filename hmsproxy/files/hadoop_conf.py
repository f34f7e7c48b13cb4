"""The Hadoop settings a location's file system is reached with, from where Hadoop users keep them.

In order, later wins: `core-site.xml` then `hdfs-site.xml` of `$HADOOP_CONF_DIR` (else
`$HADOOP_HOME/etc/hadoop`), then whatever a Spark driver registered (`use_spark`: the session's Hadoop
configuration, so a job sees the keys `spark.hadoop.*` set). Values are Hadoop's plain strings;
`${var}` substitution and `<final>` are not applied (S3A and HDFS keys rarely use them).
"""

from __future__ import annotations

import os
import threading
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

SITE_FILES = ("core-site.xml", "hdfs-site.xml")
#: The keys a Spark session contributes: file systems' and HDFS client's, nothing else.
_PREFIXES = ("fs.", "dfs.", "hadoop.security.", "hmsproxy.")

_lock = threading.Lock()
_from_spark: dict[str, str] = {}


def conf_dir(environ: dict[str, str] | None = None) -> Path | None:
    env = os.environ if environ is None else environ
    if env.get("HADOOP_CONF_DIR"):
        return Path(env["HADOOP_CONF_DIR"])
    if env.get("HADOOP_HOME"):
        return Path(env["HADOOP_HOME"]) / "etc" / "hadoop"
    return None


_read: dict[Path, tuple[int, dict[str, str]]] = {}  # path -> (mtime_ns, settings): the door asks per file


def read_site(path: Path) -> dict[str, str]:
    """The name -> value pairs of one Hadoop *-site.xml (a missing file is empty; a broken one raises ValueError)."""
    try:
        mtime = path.stat().st_mtime_ns
    except OSError:
        return {}
    kept = _read.get(path)
    if kept is not None and kept[0] == mtime:
        return kept[1]
    try:
        found = parse_site(path.read_text())
    except ET.ParseError as exc:
        raise ValueError(f"{path}: not a Hadoop configuration file ({exc})") from exc
    _read[path] = (mtime, found)
    return found


def parse_site(text: str) -> dict[str, str]:
    root = ET.fromstring(text)
    found = {}
    for prop in root.iter("property"):
        name, value = prop.findtext("name"), prop.findtext("value")
        if name:
            found[name.strip()] = (value or "").strip()
    return found


def load(environ: dict[str, str] | None = None) -> dict[str, str]:
    """The site files' settings overlaid with those a Spark driver registered."""
    merged: dict[str, str] = {}
    directory = conf_dir(environ)
    if directory is not None:
        for name in SITE_FILES:
            merged.update(read_site(directory / name))  # copied: callers may not change the kept dicts
    with _lock:
        merged.update(_from_spark)
    return merged


def use_spark(spark: Any) -> None:
    """Take the file system keys of a classic Spark session's Hadoop configuration (a Spark Connect
    session has none to give: the site files and `spark.hadoop.*` of its conf are used instead)."""
    keys = _spark_hadoop_keys(spark)
    with _lock:
        changed = keys != _from_spark
        if changed:
            _from_spark.clear()
            _from_spark.update(keys)
    if changed:
        from hmsproxy.files import filesystems

        filesystems.forget()  # file systems made with the old settings


def _spark_hadoop_keys(spark: Any) -> dict[str, str]:
    found: dict[str, str] = {}
    try:
        for key, value in spark.conf.getAll.items() if hasattr(spark.conf, "getAll") else []:
            if key.startswith("spark.hadoop.") and key[len("spark.hadoop.") :].startswith(_PREFIXES):
                found[key[len("spark.hadoop.") :]] = value
    except Exception:  # noqa: BLE001 - a conf that can't be listed gives nothing, the site files still apply
        pass
    jsc = getattr(getattr(spark, "sparkContext", None), "_jsc", None) if not is_connect(spark) else None
    if jsc is not None:
        # The whole configuration as one XML string: three JVM calls, not three per key.
        writer = spark.sparkContext._jvm.java.io.StringWriter()
        jsc.hadoopConfiguration().writeXml(writer)
        found.update((k, v) for k, v in parse_site(writer.toString()).items() if k.startswith(_PREFIXES))
    return found


def is_connect(spark: Any) -> bool:
    """A Spark Connect session (pyspark.sql.connect.session.SparkSession), without importing Connect's
    client (grpc, pandas) to ask."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def forget_spark() -> None:
    """Drop what a Spark session registered (tests; a driver that switches clusters)."""
    with _lock:
        _from_spark.clear()


def per_bucket(conf: dict[str, str], bucket: str, key: str, default: str | None = None) -> str | None:
    """S3A's rule: `fs.s3a.bucket.BUCKET.KEY` overrides `fs.s3a.KEY` for that bucket."""
    specific = conf.get(f"fs.s3a.bucket.{bucket}.{key}")
    if specific is not None and specific != "":
        return specific
    value = conf.get(f"fs.s3a.{key}")
    return value if value not in (None, "") else default


def flag(value: str | None, default: bool) -> bool:
    if value is None or value.strip() == "":
        return default
    return value.strip().lower() in ("true", "1", "yes", "on")
