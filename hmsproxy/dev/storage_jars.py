"""The jars real storage needs, fetched with Maven once into the cache like the Hive jars.

- S3A (``hadoop-aws`` and its AWS SDK bundle, ~530 MiB) at the Hadoop version of pyspark's wheel:
  Spark's and the Hive 2.3 metastores' way to s3a:// (a metastore makes the directories of databases
  and managed tables itself, so it needs S3A as much as Spark does).
- S3A for a fetched Hive version's metastore (:func:`metastore_s3a_jars`): hadoop-aws must match the
  hadoop-common on that classpath exactly, so it is taken at the ``hadoop.version`` of the Hive pom
  (3.1: Hadoop 3.1.0 with the AWS SDK v1 bundle, ~85 MiB).
- s3proxy 3.0.0: an S3 API server over a local directory, for the tests and `dev` stacks.
- hadoop-client-minicluster: a real NameNode and DataNode in one JVM (MiniDFSCluster).

Each has a pom in ``poms/`` named ``<artifact>-<version>.xml``; a pyspark whose Hadoop has no pom
here is a clear FetchError naming the version.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path

from hmsproxy.dev import maven
from hmsproxy.dev.jvm import pyspark_jars_dir

S3PROXY_VERSION = "3.0.0"
S3PROXY_JAR = f"s3proxy-{S3PROXY_VERSION}-jar-with-dependencies.jar"

Say = Callable[[str], None] | None


def pyspark_hadoop_version() -> str:
    """The Hadoop version pyspark's wheel carries (its hadoop-client-api jar)."""
    for jar in sorted(pyspark_jars_dir().glob("hadoop-client-api-*.jar")):
        found = re.fullmatch(r"hadoop-client-api-(\d+\.\d+\.\d+)\.jar", jar.name)
        if found:
            return found.group(1)
    raise maven.FetchError(f"no hadoop-client-api jar in {pyspark_jars_dir()}: cannot tell pyspark's Hadoop version")


def _fetch(name: str, goal: str, label: str, say: Say) -> Path:
    if not maven._pom(name).is_file():
        raise maven.FetchError(f"{label}: no pom {name}.xml in {maven.POMS_DIR} (pyspark's Hadoop is {pyspark_hadoop_version()})")
    return maven.fetch_pom(name, (goal,), label=label, say=say) / "lib"


def s3a_jars(say: Say = None, hadoop_version: str | None = None) -> list[Path]:
    """hadoop-aws and the AWS SDK bundle matching `hadoop_version` (default pyspark's Hadoop: for
    spark.jars and a Hive 2.3 metastore's classpath)."""
    version = hadoop_version or pyspark_hadoop_version()
    lib = _fetch(f"hadoop-aws-{version}", "dependency:copy-dependencies@lib", f"hadoop-aws {version}", say)
    return sorted(lib.glob("*.jar"))


def spark_class_path(jars: Sequence[Path | str]) -> dict[str, str]:
    """Spark settings that put `jars` on the driver's and the executors' class path where they lie, for
    executors that find them at the same paths (local mode, a cluster on this machine). Not
    `spark.jars`: Spark copies those into every session's local directory, 530 MiB a session with
    the AWS SDK bundle, seconds to a minute per Spark start on a busy disk."""
    path = os.pathsep.join(str(j) for j in jars)
    return {"spark.driver.extraClassPath": path, "spark.executor.extraClassPath": path}


def metastore_hadoop_version(hive_version: str) -> str:
    """The Hadoop on a local metastore's classpath: pyspark's for 2.3 (its jars), else the
    ``hadoop.version`` its pom pins hadoop-common at."""
    pom = maven.pom_path(hive_version)
    if not pom.is_file():
        return pyspark_hadoop_version()
    found = re.search(r"<hadoop\.version>([^<]+)</hadoop\.version>", pom.read_text())
    if not found:
        raise maven.FetchError(f"Hive {hive_version}: {pom} pins no hadoop.version, so no hadoop-aws can be matched to it")
    return found.group(1)


def metastore_s3a_jars(hive_version: str, say: Say = None) -> list[Path]:
    """S3A for a metastore of `hive_version` (LocalMetastore's extra_classpath)."""
    return s3a_jars(say, metastore_hadoop_version(hive_version))


def s3proxy_jar(say: Say = None) -> Path:
    return _fetch(f"s3proxy-{S3PROXY_VERSION}", "dependency:copy@jar", f"s3proxy {S3PROXY_VERSION}", say) / S3PROXY_JAR


def minicluster_classpath(say: Say = None) -> str:
    version = pyspark_hadoop_version()
    return str(_fetch(f"hadoop-minicluster-{version}", "dependency:copy-dependencies@lib", f"Hadoop minicluster {version}", say) / "*")


def require_fetched(store: str, hive_versions: Sequence[str] = ("2.3",)) -> None:
    """FetchError, one line naming `hmsproxy dev fetch`, unless the jars a dev stack on `store`
    ("s3" or "hdfs") with metastores of `hive_versions` needs are in the cache: dev up starts
    offline, it does not download 600 MiB."""
    version = pyspark_hadoop_version()
    if store == "s3":  # Spark's S3A, and each metastore's at its own Hadoop
        hadoops = dict.fromkeys([version, *(metastore_hadoop_version(v) for v in hive_versions)])
        names = [f"s3proxy-{S3PROXY_VERSION}", *(f"hadoop-aws-{h}" for h in hadoops)]
    else:
        names = [f"hadoop-minicluster-{version}"]
    missing = [name for name in names if not maven._is_fetched(name)]
    if missing:
        raise maven.FetchError(
            f"--storage {store} needs jars not fetched yet ({', '.join(missing)}): run `hmsproxy dev fetch storage` once"
        )


def fetch_all(say: Say = None) -> list[str]:
    """Everything above; returns a line per part (what `hmsproxy dev fetch` prints)."""
    return [
        f"S3A (hadoop-aws {pyspark_hadoop_version()}): {s3a_jars(say)[0].parent}",
        f"S3A for Hive 3.1 metastores (hadoop-aws {metastore_hadoop_version('3.1')}): {metastore_s3a_jars('3.1', say)[0].parent}",
        f"s3proxy {S3PROXY_VERSION}: {s3proxy_jar(say)}",
        f"HDFS minicluster: {minicluster_classpath(say)}",
    ]
