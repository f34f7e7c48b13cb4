"""The catalog-client interface: what a catalog must answer to be served as a read-only Hive metastore.

A CatalogClient answers in Hive's own structs (protocol/idl's `hive` module), with names as the
catalog knows them; the proxy renames them for its clients as for any metastore. It raises
CatalogNotFound for a database, table or partition that does not exist, CatalogRefused when the
catalog turns the request down (credentials, permissions, a request it can't serve) and
CatalogUnavailable when it can't be reached or answered with a server error: the last makes the
catalog a sick backend like a metastore that is down (breaker, health, status).

Only `open`, `close`, `databases`, `database`, `tables` and `table` are required; partitions are
for catalogs that have them (Glue): CatalogConnection answers an unpartitioned table's partition
calls itself when a client doesn't implement `partitions`. A client that has `commit`
(CommittingCatalog) takes an Iceberg writer's `alter_table` (its swap of `metadata_location`); one
without it is read-only, and its link's `alter_table` is refused.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol


class CatalogError(Exception):
    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class CatalogNotFound(CatalogError):
    """The database, table or partition does not exist: a NoSuchObjectException to the client."""


class CatalogRefused(CatalogError):
    """The catalog answered, refusing: a MetaException naming the reason (and the property to fix)."""


class CatalogConflict(CatalogRefused):
    """A commit lost: the table is no longer the version the writer started from; nothing changed."""


class CatalogUnavailable(CatalogError):
    """No answer, or a server error: the catalog is down for the proxy's health and breaker."""


class CatalogClient(Protocol):
    #: How messages name the catalog: "Iceberg REST catalog https://…", "Glue catalog eu-west-1".
    description: str

    def open(self) -> None:
        """Connect (a handshake, a token); raises CatalogUnavailable or CatalogRefused."""

    def close(self) -> None:
        """Never raises."""

    def databases(self) -> list[str]:
        """Every database (namespace) name."""

    def database(self, name: str):
        """hive.Database of `name`."""

    def tables(self, database: str) -> list[str]:
        """The table names of `database`."""

    def table(self, database: str, name: str):
        """hive.Table of `database`.`name`, described the way Hive clients read it."""


class PartitionedCatalog(CatalogClient, Protocol):
    def partitions(self, database: str, table: str, max_parts: int = -1, filter: str | None = None) -> list:
        """hive.Partition of the table, in the catalog's order; at most `max_parts` if not negative;
        only those `filter` (Hive's get_partitions_by_filter expression, e.g. "ds >= '2026-11-01'")
        selects when given."""


class CommittingCatalog(CatalogClient, Protocol):
    def commit(self, database: str, table: str, parameters: dict[str, str], expected_location: str | None) -> None:
        """Make the table the version whose metadata file `parameters['metadata_location']` names
        (written by the client), if its current metadata file is still `expected_location`; else raise
        CatalogConflict naming the current one. Nothing changes when it raises."""


#: Makes a catalog client with the proxy's timeouts: (connect_timeout_s, call_timeout_s) -> client.
CatalogMaker = Callable[[float, float], CatalogClient]
