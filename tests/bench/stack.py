"""What the Spark benchmarks run on: one real Hive 2.3 metastore (state in a temp dir), hmsproxy
in front of it (in this process, or as `hmsproxy serve` in its own), and a local[2] SparkSession
whose metastore is the proxy."""

from __future__ import annotations

import contextlib
import dataclasses
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

#: A metastore creating its Derby schema on a 2-core machine shared with other JVMs (load 15-30) took
#: over 120 s to answer; a slow start is not what the benchmarks measure.
METASTORE_START_S = 360


@dataclass
class Stack:
    tmp: Path
    metastore: object  # hmsproxy.dev.metastore.LocalMetastore
    server: object  # hmsproxy.downstream.server.ProxyServer or a ServedProxy: its .uri is the proxy's
    spark: object  # pyspark.sql.SparkSession
    _started: list = dataclasses.field(default_factory=list)  # ProxyProcesses to stop

    def start_proxy(self, name: str, *, cache: bool = False) -> ServedProxy:
        """Another `hmsproxy serve` in front of the same metastore with the same store (it sees
        the same indexes and layouts); `cache`: with the metadata cache on. Stopped with the stack."""
        from hmsproxy.dev.ports import free_port
        from tests.bench.bench_proxy import ProxyProcess, write_proxy_config

        port = free_port()
        config = self.tmp / f"{name}.yml"
        write_proxy_config(config, port, self.metastore.uri, cache=cache, store_url=f"sqlite:///{self.tmp}/store.db")
        process = ProxyProcess(config, self.tmp / f"{name}.log")
        self._started.append(process)
        process.wait_ready("127.0.0.1", port)
        return ServedProxy(f"thrift://127.0.0.1:{port}", process)


@dataclass
class ServedProxy:
    """An `hmsproxy serve` process."""

    uri: str
    process: object  # tests.bench.bench_proxy.ProxyProcess


@contextlib.contextmanager
def spark_through_proxy(
    name: str,
    log: Callable[[str], None],
    *,
    driver_memory: str = "2g",
    keep_state: bool = False,
    production_jvm: bool = False,
    proxy_process: bool = False,
    hive_conf: dict[str, str] | None = None,
    extra_classpath: tuple = (),
    spark_conf: dict[str, str] | None = None,
) -> Iterator[Stack]:
    """`production_jvm`: the metastore with the JVM's default compilers and collector and WARN logging,
    as fast per call as a production one (the dev default, C1 only and INFO audit lines, is slower).
    `proxy_process`: the proxy as `hmsproxy serve` in a process of its own, as deployed (its Python
    then shares no interpreter lock with the benchmark's clients). `hive_conf`, `extra_classpath` and
    `spark_conf`: the metastore's hive-site additions and jars and the session's settings (a warehouse
    on S3: tests/bench/bench_index.py --store s3)."""
    from hmsproxy.app import build_handler
    from hmsproxy.config.model import AccessControlType, Config, DatabaseResolution, MetastoreConfig, ServerConfig, StoreConfig
    from hmsproxy.dev.metastore import start_metastores
    from hmsproxy.downstream.server import ProxyServer
    from tests.support.spark import make_spark

    tmp = Path(tempfile.mkdtemp(prefix=f"hmsproxy-{name}-"))
    metastore = server = handler = spark = stack = None
    try:
        log(f"starting a Hive 2.3 metastore (state in {tmp}) ...")
        tuning = {"fast_start": False, "log_level": "WARN"} if production_jvm else {}
        (metastore,) = start_metastores(
            1, tmp / "hms", log=lambda m: None, timeout_s=METASTORE_START_S, hive_conf=hive_conf, extra_classpath=extra_classpath, **tuning
        )
        primary = MetastoreConfig(
            "primary", (metastore.uri,), primary=True, access_control_type=AccessControlType.READ_AND_WRITE_AND_CREATE
        )
        stack = Stack(tmp, metastore, None, None)
        if proxy_process:
            server = stack.start_proxy("hmsproxy")
        else:
            config = Config(ServerConfig(port=0), DatabaseResolution.PREFIXED, primary, (), store=StoreConfig(f"sqlite:///{tmp}/store.db"))
            handler = build_handler(config)
            server = ProxyServer(handler, "127.0.0.1", 0).start()
        stack.server = server
        stack.spark = spark = make_spark(
            server.uri, tmp / "warehouse", f"hmsproxy-{name}", driver_memory=driver_memory, extra_conf=spark_conf
        )
        yield stack
    finally:
        if spark is not None:
            spark.stop()
        for process in stack._started if stack is not None else ():
            process.stop()
        if server is not None and not proxy_process:
            server.stop()
        if handler is not None:
            handler.close()
        if metastore is not None:
            metastore.stop()
        if not keep_state:
            shutil.rmtree(tmp, ignore_errors=True)
