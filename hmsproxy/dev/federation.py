"""What ``hmsproxy dev up`` starts: N local metastores and hmsproxy in front of them.

The first metastore is the primary, the others ``fed1``, ``fed2``, ... (see
:func:`hmsproxy.dev.config.dev_config`). Everything lives in one state
directory -- each metastore in ``<state>/hms<i>``, the proxy's store in
``<state>/hmsproxy.db`` -- so a second ``dev up`` on it finds the same data.
The caller serves ``server`` and, when it is told to stop, stops the server,
the handler and then :meth:`DevFederation.stop_metastores`. The ports stay the same from one
start to the next (``<state>/ports.json``, see :mod:`hmsproxy.dev.kept_ports`).
With ``storage`` "s3" or "hdfs" a store is started first and the metastores' warehouses are put
on it (:mod:`hmsproxy.dev.dev_storage`); it stops with the metastores.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path

from hmsproxy.config.model import Config, HttpConfig, StoreConfig
from hmsproxy.dev.config import dev_config
from hmsproxy.dev.demo import DEMO_DATABASE, DEMO_TABLE, add_demo_data
from hmsproxy.dev.dev_storage import DevStorage, start_storage
from hmsproxy.dev.kept_ports import KeptPorts
from hmsproxy.dev.metastore import LocalMetastore, start_metastores

#: The metastore the demo data goes to: the first federated one, so clients see `fed1_sales`.
DEMO_BACKEND = 1


@dataclasses.dataclass
class DevFederation:
    state_dir: Path
    config: Config
    metastores: list[LocalMetastore]
    handler: object  # hmsproxy.pipeline.handler.Handler
    server: object  # hmsproxy.downstream.server.ProxyServer, bound but not serving yet
    demo_table: str | None = None  # the client-side name of the demo table, if any
    storage: DevStorage | None = None  # the store the warehouses are on (None: the local disk)

    def stop_metastores(self) -> None:
        """The metastores, then the store they keep their files on."""
        for m in self.metastores:
            m.stop()
        if self.storage is not None:
            self.storage.stop()

    def usage(self) -> str:
        """What a user needs to point Spark at the proxy."""
        lines = [
            f"hmsproxy is serving {self.server.uri}. Use it from Spark with:",
            "  spark.sql.catalogImplementation=hive",
            f"  spark.hadoop.hive.metastore.uris={self.server.uri}",
            f"  spark.sql.warehouse.dir={self.state_dir / 'spark-warehouse'}",
            *_index_extension_lines(),
        ]
        backends = ", ".join(f"{ms.name} {ms.uris[0]}" for ms in self.config.metastores)
        lines.append(f"The metastores, for remotes (the same ports at every start on {self.state_dir}): {backends}")
        if self.storage is not None:
            lines.append(f"The warehouses are on {self.storage.describe()}. Reach them from Spark and hmsproxy's clients with:")
            lines.append(f"  {self.storage.exports()}")
        if self.demo_table:
            lines.append(f'Sample data: spark.sql("SELECT * FROM {self.demo_table}").show()')
        lines.append("Ctrl-C stops the proxy and the metastores.")
        return "\n".join(lines)


def parse_backends(text: str) -> list[str]:
    """`--backends`: a count of Hive 2.3 metastores ("2") or their versions, primary first ("2.3,3.1,4.0")."""
    from hmsproxy.dev.versions import hive_version

    text = text.strip()
    if text.isdigit():
        return ["2.3"] * int(text)
    versions = [v.strip() for v in text.split(",") if v.strip()]
    for v in versions:
        hive_version(v)  # ValueError naming the known versions
    return versions


def start_federation(
    backends: int | Sequence[str],
    state_dir: Path,
    *,
    host: str = "127.0.0.1",
    port: int | None = None,
    http_port: int | None = None,
    demo: bool = False,
    storage: str = "local",
    say: Callable[[str], None] = print,
) -> DevFederation:
    """Check the ports, start the metastores (in parallel), add the demo data if asked, and bind the proxy.

    Ports are kept in the state directory (hmsproxy.dev.kept_ports): `port` None or 0 and
    `http_port` 0 mean the kept port, if any. Raises ValueError for impossible requests and
    PortTaken, before any JVM starts, if a port is in use; FetchError if the store's jars were
    never fetched; if anything fails after the store or the metastores started, they are stopped
    before the error propagates.
    """
    from hmsproxy.app import build_handler
    from hmsproxy.downstream.server import ProxyServer

    versions = ["2.3"] * backends if isinstance(backends, int) else list(backends)
    if len(versions) < 1:
        raise ValueError("--backends must be at least 1")
    if demo and len(versions) <= DEMO_BACKEND:
        raise ValueError("--demo puts its sample data on the first federated metastore: use --backends 2 or more")
    state = Path(state_dir).resolve()
    names = [f"hms{i}" for i in range(len(versions))]
    kept = KeptPorts.load(state)
    port, http_port = kept.proxy_port(port, host), kept.http_port(http_port, host)
    kept.check_free("proxy", "the proxy (--port)", port, host)
    if http_port is not None:
        kept.check_free("http", "the operations endpoint (--http-port)", http_port, host)
    hms_ports = kept.metastore_ports(names, port, host)
    for name, hms_port in zip(names, hms_ports):
        if hms_port is not None:
            kept.check_free(name, f"metastore {name}", hms_port)
    store = _start_store(storage, state, kept, versions, say)
    try:
        say(f"starting {len(versions)} local metastores (Hive {', '.join(versions)}; state in {state}) ...")
        metastores = start_metastores(
            len(versions), state, ports=hms_ports, names=names, hive_versions=versions, log=say,
            hive_confs=[store.metastore_conf(n) for n in names] if store else None,
            extra_classpaths=[store.metastore_jars(v) for v in versions] if store else None,
        )  # fmt: skip
    except BaseException:
        if store is not None:
            store.stop()
        raise
    handler = None
    try:
        kept.save({"proxy": port, **({"http": http_port} if http_port is not None else {}), **{m.name: m.port for m in metastores}})
        config = dev_config([m.uri for m in metastores], host=host, port=port, hive_versions=versions)
        config = dataclasses.replace(config, store=StoreConfig(f"sqlite:///{state / 'hmsproxy.db'}"))  # the store lives with the state
        if http_port is not None:  # in the config, so that check-config's text and `hmsproxy status` show it
            config = dataclasses.replace(config, http=HttpConfig(host, http_port))
        demo_table = _add_demo(metastores[DEMO_BACKEND], config, say) if demo else None
        handler = build_handler(config)
        server = ProxyServer(handler, host, port)
    except BaseException:
        if handler is not None:
            handler.close()
        for m in metastores:
            m.stop()
        if store is not None:
            store.stop()
        raise
    return DevFederation(state, config, metastores, handler, server, demo_table, store)


def _start_store(storage: str, state: Path, kept: KeptPorts, versions: list[str], say: Callable[[str], None]) -> DevStorage | None:
    """The store at its kept port (checked free first), its port kept and its clients' settings
    written; this process's own clients (the proxy, the demo data) use them too."""
    import os

    if storage == "local":
        return None
    kept_port = kept.ports.get(storage)
    if kept_port is not None:
        kept.check_free(storage, f"the {storage} store", kept_port)
    store = start_storage(storage, state, kept_port, say, versions)
    try:
        kept.save({storage: store.port})
        store.write_client_conf()
    except BaseException:
        store.stop()
        raise
    os.environ.update(store.environment())
    from hmsproxy.files import filesystems

    filesystems.forget()  # made, if at all, with the settings before these
    return store


def _add_demo(metastore: LocalMetastore, config: Config, say: Callable[[str], None]) -> str:
    client = metastore.client()
    try:
        done = add_demo_data(client)
    finally:
        client.close()
    fed = config.federated[DEMO_BACKEND - 1]
    name = f"{fed.database_prefix}{DEMO_DATABASE}.{DEMO_TABLE}"
    say(f"demo data {name} on {metastore.name}: {'; '.join(done) if done else 'already there'}")
    return name


def _index_extension_lines() -> list[str]:
    """The Spark extension's settings (plain Spark SQL then uses fresh indexes), or how to build it."""
    from hmsproxy.jobs.spark_extension import index_extension_conf

    try:
        return [f"  {key}={value}" for key, value in index_extension_conf().items()]
    except FileNotFoundError as e:
        return [f"  (indexes in plain Spark SQL: {e})"]
