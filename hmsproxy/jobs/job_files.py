"""The file system calls a job makes from its driver, on a classic session and on Spark Connect.

A classic session reaches tables' files through its own JVM's Hadoop file systems (any scheme the
cluster reads, with Spark's credentials). A Connect session has no JVM in this process, so the
driver reaches them with pyarrow's file systems (files/storage.py's ArrowStorage): the client must
then reach the storage itself.
"""

from __future__ import annotations

from typing import Any

from hmsproxy.files.storage import ArrowStorage, HadoopStorage, Storage, arrow_filesystem
from hmsproxy.jobs.errors import JobError
from hmsproxy.jobs.spark_sessions import is_connect


def job_storage(spark: Any) -> Storage:
    return ArrowStorage() if is_connect(spark) else HadoopStorage(spark)


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
    """The same move with pyarrow's file systems (a Connect client)."""

    def move(self, source: str, target: str) -> None:
        filesystem, src = arrow_filesystem(source)
        _, dst = arrow_filesystem(target)
        filesystem.create_dir(dst.rsplit("/", 1)[0], recursive=True)
        try:
            filesystem.move(src, dst)
        except OSError as e:
            raise JobError(f"could not move {source} to {target}: {e}") from e


def job_mover(spark: Any) -> HadoopMover | ArrowMover:
    return ArrowMover() if is_connect(spark) else HadoopMover(spark)
