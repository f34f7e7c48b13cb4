"""Config snapshots the tests serve, built around the session's real metastores."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from dataclasses import replace
from functools import lru_cache

from hmsproxy.config_model import (
    AccessControlType,
    Config,
    DatabaseResolution,
    MetastoreConfig,
    ServerConfig,
    StoreConfig,
)

#: The federated metastore's databases the tests create; "sales" is writable through the proxy.
FEDERATED_WRITABLE = ("sales",)


@lru_cache(maxsize=1)
def temp_store() -> StoreConfig:
    """One proxy store per test process in a temp dir: tests never write the repo's .state/."""
    root = tempfile.mkdtemp(prefix="hmsproxy-test-store-")
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    return StoreConfig(f"sqlite:///{root}/hmsproxy.db")


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
    server = ServerConfig(port=port, fanout_timeout_ms=1500, connect_timeout_s=2.0, backend_timeout_s=120)
    return Config(server, DatabaseResolution.PREFIXED, primary, (fed,), store=temp_store())


def manual_config(base: Config, **federated) -> Config:
    fed = replace(base.federated[0], database_prefix="", **federated)
    return replace(base, database_resolution=DatabaseResolution.MANUAL, federated=(fed,))


def federation_yaml(primary_uri: str, federated_uri: str, *, prefix: str = "waggle_", port: int | None = None, state_dir=None) -> str:
    """hmsproxy's YAML for the tests' two-metastore federation (what `serve --config` reads).

    `state_dir` holds the proxy's store, so a served proxy never writes into the repository.
    """
    lines = []
    if port is not None:
        lines.append(f"server: {{host: 127.0.0.1, port: {port}}}")
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
    return "\n".join(lines) + "\n"
