"""The file system calls a job makes from its driver, on a classic session and on Spark Connect.

Listing, existence and deletes go through hmsproxy's storage door (files/filesystems.py) on either
kind of session, with the session's Hadoop settings where it has them (`hadoop_conf.use_spark`: a
classic session's Hadoop configuration, `spark.hadoop.*` of a Connect session's conf) over
HADOOP_CONF_DIR's site files. Moves go through a classic session's own Hadoop file systems (one
rename on HDFS, as Spark's own commits do); a Connect session has no JVM in this process, so the
driver moves with the door too.
"""

from __future__ import annotations

from typing import Any

from hmsproxy.files import hadoop_conf
from hmsproxy.files.storage import ArrowStorage, Storage, arrow_filesystem
from hmsproxy.jobs.errors import JobError
from hmsproxy.jobs.spark_sessions import is_connect


def job_storage(spark: Any) -> Storage:
    hadoop_conf.use_spark(spark)
    return ArrowStorage()


class HadoopMover:
    """mkdirs and rename through the session's Hadoop file systems."""

    def __init__(self, spark: Any):
        jvm = spark.sparkContext._jvm
        self._path = jvm.org.apache.hadoop.fs.Path
        self._conf = spark.sparkContext._jsc.hadoopConfiguration()

    def move(self, source: str, target: str) -> None:
        src, dst = self._path(source), self._path(target)
        fs = src.getFileSystem(self._conf)
        fs.mkdirs(dst.getParent())
        if not fs.rename(src, dst):
            raise JobError(f"could not move {source} to {target}")


class ArrowMover:
    """The same move through the storage door (a Connect client has no JVM in this process)."""

    def move(self, source: str, target: str) -> None:
        filesystem, dst = arrow_filesystem(target)
        filesystem.create_dir(dst.rsplit("/", 1)[0], recursive=True)
        try:
            ArrowStorage().move(source, target)
        except OSError as e:
            raise JobError(f"could not move {source} to {target}: {e}") from e


def job_mover(spark: Any) -> HadoopMover | ArrowMover:
    return ArrowMover() if is_connect(spark) else HadoopMover(spark)
