"""What the Spark benchmarks run on: one real Hive 2.3 metastore (state in a temp dir), hmsproxy
in this process in front of it, and a local[2] SparkSession whose metastore is the proxy."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Stack:
    tmp: Path
    metastore: object  # hmsproxy.dev.metastore.LocalMetastore
    server: object  # hmsproxy.server.ProxyServer
    spark: object  # pyspark.sql.SparkSession


@contextlib.contextmanager
def spark_through_proxy(
    name: str, log: Callable[[str], None], *, driver_memory: str = "2g", keep_state: bool = False, production_jvm: bool = False
) -> Iterator[Stack]:
    """`production_jvm`: the metastore with the JVM's default compilers and collector and WARN logging,
    as fast per call as a production one (the dev default, C1 only and INFO audit lines, is slower)."""
    from hmsproxy.app import build_handler
    from hmsproxy.config_model import AccessControlType, Config, DatabaseResolution, MetastoreConfig, ServerConfig, StoreConfig
    from hmsproxy.dev.metastore import start_metastores
    from hmsproxy.server import ProxyServer
    from tests.support.spark import make_spark

    tmp = Path(tempfile.mkdtemp(prefix=f"hmsproxy-{name}-"))
    metastore = server = handler = spark = None
    try:
        log(f"starting a Hive 2.3 metastore (state in {tmp}) ...")
        tuning = {"fast_start": False, "log_level": "WARN"} if production_jvm else {}
        (metastore,) = start_metastores(1, tmp / "hms", log=lambda m: None, timeout_s=120, **tuning)
        primary = MetastoreConfig(
            "primary", (metastore.uri,), primary=True, access_control_type=AccessControlType.READ_AND_WRITE_AND_CREATE
        )
        config = Config(ServerConfig(port=0), DatabaseResolution.PREFIXED, primary, (), store=StoreConfig(f"sqlite:///{tmp}/store.db"))
        handler = build_handler(config)
        server = ProxyServer(handler, "127.0.0.1", 0).start()
        spark = make_spark(server.uri, tmp / "warehouse", f"hmsproxy-{name}", driver_memory=driver_memory)
        yield Stack(tmp, metastore, server, spark)
    finally:
        if spark is not None:
            spark.stop()
        if server is not None:
            server.stop()
        if handler is not None:
            handler.close()
        if metastore is not None:
            metastore.stop()
        if not keep_state:
            shutil.rmtree(tmp, ignore_errors=True)
