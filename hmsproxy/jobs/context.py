"""What a job gets besides its arguments: Spark, the metastore, progress and output streams.

Everything is made on first use, so a job that needs no Spark (`list`) never
starts a JVM, and a test can hand in the process's existing SparkSession.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any, TextIO

from hmsproxy.jobs.metastore import MetastoreClient
from hmsproxy.jobs.progress import Progress, make_progress
from hmsproxy.jobs.session import (
    DEFAULT_URI,
    METASTORE_URIS_CONF,
    bound_uri,
    build_session,
    check_same_metastore,
    kerberized_conf,
    under_spark_submit,
)
from hmsproxy.jobs.spark_sessions import spark_user


def _spark_running_here() -> bool:
    """A SparkContext in this process (a notebook, a test): build_session would use it, whatever its metastore."""
    if "pyspark" not in sys.modules:  # never imported: nothing runs, and importing it just to ask costs time
        return False
    from pyspark import SparkContext

    return SparkContext._active_spark_context is not None


class JobContext:
    def __init__(
        self,
        uri: str | None = None,
        *,
        spark: Any = None,
        spark_conf: dict[str, str] | None = None,
        stdout: TextIO | None = None,
        stderr: TextIO | None = None,
        user: str | None = None,
        sasl_principal: str | None = None,
        master: str | None = None,
        remote: str | None = None,
    ):
        #: The proxy as given (--uri); None: the session's metastore, else the local dev proxy.
        self.requested_uri = uri
        #: The proxy's Kerberos principal (--sasl --principal): every connection, Spark's included,
        #: then authenticates as the caller's ticket cache.
        self.sasl_principal = sasl_principal
        self.spark_conf = kerberized_conf(sasl_principal, spark_conf or {}) if sasl_principal else dict(spark_conf or {})
        #: The Spark master (--master); None: spark.master of the settings, spark-submit's, else local[*].
        self.master = master
        #: A Spark Connect server (--remote sc://…, or SPARK_REMOTE): the job's session is its client.
        self.remote = remote
        self.stdout = stdout or sys.stdout
        self.stderr = stderr or sys.stderr
        self.user = user
        self._spark = spark
        self._owns_spark = False
        if spark is not None:
            check_same_metastore(spark, uri)
            from hmsproxy.files import hadoop_conf

            hadoop_conf.use_spark(spark)

    @property
    def spark_started(self) -> bool:
        return self._spark is not None

    @property
    def spark(self) -> Any:
        if self._spark is None:
            self._spark, self._owns_spark = build_session(self.requested_uri, self.spark_conf, master=self.master, remote=self.remote)
            from hmsproxy.files import hadoop_conf

            hadoop_conf.use_spark(self._spark)  # files the driver reads itself (index footers, listings) use its S3A/HDFS keys
        return self._spark

    @property
    def uri(self) -> str:
        """The proxy the job's metastore calls go to: always the one Spark reads and writes through."""
        if self.requested_uri:
            return self.requested_uri
        if self._spark is not None:
            return bound_uri(self._spark) or DEFAULT_URI
        return DEFAULT_URI

    def check_first(self, check: Callable[[Any], object], connect: Callable[..., Any] | None = None) -> None:
        """`check(client)` on the proxy before Spark starts: a missing table, partition or index fails the
        job in a second rather than after Spark's start-up. The job reads again on its own connection once
        Spark runs; when only the session knows its metastore (spark-submit without --uri), nothing is checked."""
        uri = self._uri_without_spark()
        if uri is None:
            return
        with (connect or MetastoreClient)(uri, user=self.user, sasl_principal=self.sasl_principal) as client:
            check(client)

    def _uri_without_spark(self) -> str | None:
        """The proxy Spark will use, if it is known before Spark runs (as build_session picks it); None
        when Spark runs already (nothing to save, and the session decides: another --uri is a usage
        error there) or only the session will know (spark-submit without --uri)."""
        if self._spark is not None or _spark_running_here():
            return None
        if self.requested_uri:
            return self.requested_uri
        if under_spark_submit() or self.remote or os.environ.get("SPARK_REMOTE"):
            return None  # the server's metastore, known once connected
        return self.spark_conf.get(METASTORE_URIS_CONF) or DEFAULT_URI

    def metastore(self) -> MetastoreClient:
        """A new connection to the proxy; close it (it is a context manager)."""
        user = self.user
        if user is None and self._spark is not None:
            user = spark_user(self._spark)  # the same user Spark's own metastore calls use
        return MetastoreClient(self.uri, user=user, sasl_principal=self.sasl_principal)

    def progress(self, title: str, total: int, **kwargs) -> Progress:
        return make_progress(title, total, self.stderr, **kwargs)

    def out(self, line: str) -> None:
        print(line, file=self.stdout, flush=True)

    def close(self) -> None:
        """Stop Spark if this context started it (never a session it was given or found)."""
        if self._owns_spark and self._spark is not None:
            self._spark.stop()
        self._spark = None
        self._owns_spark = False
