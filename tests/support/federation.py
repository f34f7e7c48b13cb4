"""Config snapshots the tests serve, built around the session's real metastores."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from dataclasses import replace
from functools import cache

from hmsproxy.config.model import (
    AccessControlType,
    Config,
    DatabaseResolution,
    MetastoreConfig,
    ServerConfig,
    StoreConfig,
)

#: The federated metastore's databases the tests create; "sales" is writable through the proxy.
FEDERATED_WRITABLE = ("sales",)

#: Fan-out deadline of a backend a test expects an answer from: far above any normal latency, so
#: a busy 2-core machine (JVM GC, JIT, parallel tests) never turns a slow answer into a missing one.
ANSWER_DEADLINE_MS = 60_000

#: Fan-out deadline of a backend a test expects to be left out. Only backends that provably never
#: answer (a socket that accepts and never replies, a SIGSTOPped metastore) get it; see
#: `leave_out_after`.
LEAVE_OUT_DEADLINE_MS = 1_000


@cache
def temp_store(primary_uris: tuple[str, ...]) -> StoreConfig:
    """A proxy store in a temp dir (tests never write the repo's .state/), one per primary metastore
    and test process: the store binds transaction ids, which are the primary's, to metastores by
    name, so a proxy in front of another primary would take another federation's binding of the
    same id for its own (a streaming test failed so after the transaction tests had run)."""
    root = tempfile.mkdtemp(prefix="hmsproxy-test-store-")
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    return sqlite_store(root)


def sqlite_store(directory) -> StoreConfig:
    """A proxy store of its own: an SQLite file in `directory`."""
    return StoreConfig(f"sqlite:///{directory}/hmsproxy.db")


def stored_in(config: Config, directory) -> Config:
    """`config` with a store of its own in `directory` (proxies sharing a store share its records)."""
    return replace(config, store=sqlite_store(directory))


def prefixed_config(primary_uri: str, federated_uri: str, port: int = 0, **federated) -> Config:
    primary = MetastoreConfig(
        "primary",
        (primary_uri,),
        primary=True,
        access_control_type=AccessControlType.READ_AND_WRITE_AND_CREATE,
    )
    fed = MetastoreConfig(
        "waggle",
        (federated_uri,),
        database_prefix="waggle_",
        access_control_type=AccessControlType.READ_AND_WRITE_ON_DATABASE_WHITELIST,
        writable_database_white_list=FEDERATED_WRITABLE,
    )
    fed = replace(fed, **federated)
    server = ServerConfig(port=port, fanout_timeout_ms=ANSWER_DEADLINE_MS, connect_timeout_s=2.0, backend_timeout_s=120)
    return Config(server, DatabaseResolution.PREFIXED, primary, (fed,), store=temp_store(primary.uris))


def primary_only_config(uri: str, hive_version: str | None = None) -> Config:
    """One writable primary metastore (of `hive_version`, when a test needs the proxy told)."""
    primary = MetastoreConfig(
        "primary", (uri,), primary=True, hive_version=hive_version, access_control_type=AccessControlType.READ_AND_WRITE_AND_CREATE
    )
    return Config(ServerConfig(port=0), DatabaseResolution.PREFIXED, primary, store=temp_store(primary.uris))


def leave_out_after(config: Config, *never_answering: MetastoreConfig, deadline_ms: int = LEAVE_OUT_DEADLINE_MS) -> Config:
    """`config` plus `never_answering` metastores, which fan-out calls leave out after `deadline_ms`.

    The fan-out deadline is the server's base plus each metastore's `latency`, so the base
    becomes `deadline_ms` and every other metastore (named in `never_answering` or already in
    `config`, matched by name) keeps ANSWER_DEADLINE_MS through its latency. Which backend is
    left out then depends only on which one never answers, not on how fast the others are.
    """
    quiet = {m.name for m in never_answering}

    def deadline(m: MetastoreConfig) -> MetastoreConfig:
        return replace(m, latency_ms=0 if m.name in quiet else ANSWER_DEADLINE_MS - deadline_ms)

    added = tuple(m for m in never_answering if m.name not in {config.primary.name, *(f.name for f in config.federated)})
    return replace(
        config,
        server=replace(config.server, fanout_timeout_ms=deadline_ms),
        primary=deadline(config.primary),
        federated=tuple(deadline(m) for m in (*config.federated, *added)),
    )


def manual_config(base: Config, **federated) -> Config:
    fed = replace(base.federated[0], database_prefix="", **federated)
    return replace(base, database_resolution=DatabaseResolution.MANUAL, federated=(fed,))


def federation_yaml(
    primary_uri: str,
    federated_uri: str,
    *,
    prefix: str = "waggle_",
    port: int | None = None,
    state_dir=None,
    writable: tuple[str, ...] = (),
) -> str:
    """hmsproxy's YAML for the tests' two-metastore federation (what `serve --config` reads).

    `state_dir` holds the proxy's store, so a served proxy never writes into the repository;
    `writable`: the federated databases clients may write (a white list).
    """
    server = f"fanout-timeout-ms: {ANSWER_DEADLINE_MS}"  # as prefixed_config: slow answers are still answers
    lines = [f"server: {{host: 127.0.0.1, port: {port}, {server}}}" if port is not None else f"server: {{{server}}}"]
    if state_dir is not None:
        lines.append(f"store: {{url: 'sqlite:///{state_dir}/hmsproxy.db'}}")
    lines += [
        "database-resolution: PREFIXED",
        "primary-meta-store:",
        "  name: primary",
        f"  remote-meta-store-uris: {primary_uri}",
        "  access-control-type: READ_AND_WRITE_AND_CREATE",
        "federated-meta-stores:",
        "  - name: waggle",
        f"    remote-meta-store-uris: {federated_uri}",
        f"    database-prefix: {prefix}",
    ]
    if writable:
        lines += [
            "    access-control-type: READ_AND_WRITE_ON_DATABASE_WHITELIST",
            f"    writable-database-white-list: [{', '.join(writable)}]",
        ]
    return "\n".join(lines) + "\n"
