"""The federation ``hmsproxy dev up`` serves in front of its local metastores."""

from __future__ import annotations

from collections.abc import Sequence

from hmsproxy.config.model import (
    AccessControlType,
    Config,
    DatabaseResolution,
    MetastoreConfig,
    ServerConfig,
)

DEV_FANOUT_TIMEOUT_MS = 30_000


def dev_config(uris: Sequence[str], *, host: str = "127.0.0.1", port: int = 9083, hive_versions: Sequence[str] | None = None) -> Config:
    """The federation ``hmsproxy dev up`` serves in front of local metastores.

    ``uris[0]`` is the primary (read, write, create); every further URI is a
    federated metastore ``fedN`` (N = 1, 2, ...), visible in PREFIXED mode as
    ``fedN_<database>`` and writable in all its databases (federated
    metastores cannot create databases, as in Waggle Dance).
    """
    if not uris:
        raise ValueError("dev_config needs at least one metastore URI")
    versions = list(hive_versions) if hive_versions is not None else ["2.3"] * len(uris)
    primary = MetastoreConfig(
        "primary",
        (uris[0],),
        primary=True,
        access_control_type=AccessControlType.READ_AND_WRITE_AND_CREATE,
        hive_version=versions[0],
    )
    federated = tuple(
        MetastoreConfig(
            f"fed{i}",
            (uri,),
            database_prefix=f"fed{i}_",
            access_control_type=AccessControlType.READ_AND_WRITE_ON_DATABASE_WHITELIST,
            writable_database_white_list=(".*",),
            hive_version=versions[i],
        )
        for i, uri in enumerate(uris[1:], start=1)
    )
    return Config(
        # Local metastores share the machine with Spark and the tests: give fan-out calls time
        # rather than leave a busy local metastore out of SHOW DATABASES.
        ServerConfig(host=host, port=port, fanout_timeout_ms=DEV_FANOUT_TIMEOUT_MS),
        DatabaseResolution.PREFIXED,
        primary,
        federated,
        sources=("hmsproxy dev up",),
    )
