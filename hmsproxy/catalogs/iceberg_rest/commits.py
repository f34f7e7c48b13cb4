"""An Iceberg REST catalog that takes Hive-catalog writers' commits (link property
`hmsproxy.iceberg.writes` = `commit`): their `alter_table`, which swaps the table's
`metadata_location` for a metadata file the writer wrote itself, becomes the REST commit of what
that file changes (updates.py), with requirements that make it fail if the table moved on.

Checked before anything is sent: the writer started from the catalog's current metadata file
(`previous_metadata_location`, or Iceberg's `expected_parameter_value`); else it lost, with Hive's
own message for that, which Iceberg's Java HiveCatalog reads as a failed commit. The writer's
metadata file is read through the storage door (hmsproxy.files.filesystems: s3a://, s3://, hdfs://,
file: or a path) with the proxy's own Hadoop settings, never with the writer's.
"""

from __future__ import annotations

import gzip
import json
from urllib.parse import quote

from hmsproxy.catalogs.client import CatalogConflict, CatalogError, CatalogRefused, CatalogUnavailable
from hmsproxy.catalogs.iceberg_rest import names
from hmsproxy.catalogs.iceberg_rest.catalog import IcebergRestCatalog
from hmsproxy.catalogs.iceberg_rest.updates import UnsupportedChange, commit_changes
from hmsproxy.files import filesystems
from hmsproxy.files.locations import StorageError

#: The link property that lets writers commit, and its value.
WRITES_PROPERTY = "hmsproxy.iceberg.writes"
COMMIT = "commit"
READ_ONLY = "read-only"
#: What a writer's alter_table names: the new metadata file, and the one it replaces.
METADATA_LOCATION = "metadata_location"
PREVIOUS_METADATA_LOCATION = "previous_metadata_location"
#: Metadata files are small; a bigger one is not a metadata file.
MAX_METADATA_BYTES = 64 << 20


class CommittingIcebergRestCatalog(IcebergRestCatalog):
    def commit(self, database: str, table: str, parameters: dict[str, str], expected_location: str | None) -> None:
        what = f"{self.description}: table '{database}.{table}'"
        new_location = (parameters or {}).get(METADATA_LOCATION)
        if not new_location:
            raise CatalogRefused(f"{what} takes only Iceberg commits (a new '{METADATA_LOCATION}'), not other table changes")
        path = f"/namespaces/{names.path_segment(database)}/tables/{quote(table, safe='')}"
        loaded = self.http.get(path, None, f"no table '{database}.{table}'")
        current = loaded.get("metadata-location")
        if new_location == current:
            raise CatalogRefused(f"{what} takes only Iceberg commits: '{METADATA_LOCATION}' is unchanged")
        if not expected_location:
            raise CatalogRefused(f"{what}: the commit names no '{PREVIOUS_METADATA_LOCATION}', so what it replaces is unknown")
        if expected_location != current:
            raise CatalogConflict(conflict(current, expected_location, what))
        try:
            new_metadata = read_metadata(new_location)
            requirements, updates = commit_changes(loaded.get("metadata") or {}, new_metadata)
        except UnsupportedChange as e:
            raise CatalogRefused(f"{what}: {e}") from None
        if not updates:
            return
        body = {"identifier": {"namespace": names.levels(database), "name": table}, "requirements": requirements, "updates": updates}
        try:
            self.http.post(path, body, f"no table '{database}.{table}'")
        except CatalogConflict as e:
            raise CatalogConflict(f"{conflict(None, expected_location, what)}: {e.message}") from None
        except CatalogUnavailable as e:
            # No answer or a 5xx: the commit may have landed. Saying it failed when it did would make
            # a writer delete files the table now uses, so look before answering.
            if not self._landed(path, new_metadata):
                raise CatalogUnavailable(f"{e.message}; the commit's outcome is unknown: reload the table before writing again") from None

    def _landed(self, path: str, new_metadata: dict) -> bool:
        """Whether the catalog's table now is what the writer's metadata file says (nothing left to send)."""
        try:
            current = self.http.get(path, None, "no such table").get("metadata") or {}
            return commit_changes(current, new_metadata) == ([], [])
        except (CatalogError, UnsupportedChange):
            return False


def conflict(current: str | None, expected: str, what: str) -> str:
    """Hive's words for a lost swap (HiveAlterHandler), which Iceberg's HiveTableOperations looks for."""
    now = f"'{current}'" if current else "another (a concurrent commit went first)"
    return (
        f"The table has been modified. The parameter value for key '{METADATA_LOCATION}' is {now}. "
        f"The expected was value was '{expected}' ({what}: nothing was changed)"
    )


def read_metadata(location: str) -> dict:
    """The table metadata JSON a writer wrote (gzip'd if its name says so), wherever it is stored."""
    try:
        filesystem, path = filesystems.filesystem(location)
    except StorageError as e:
        # Already names the location and the setting to fix (fs.s3a.*, fs.defaultFS, kinit, ...).
        raise CatalogRefused(f"hmsproxy can't read the committed metadata file: {filesystems.one_line(e)}") from None
    try:
        with filesystem.open_input_stream(path) as stream:
            raw = stream.read(MAX_METADATA_BYTES + 1)
    except OSError as e:
        raise CatalogRefused(f"hmsproxy can't read the committed metadata file '{location}': {filesystems.one_line(e)}") from None
    if len(raw) > MAX_METADATA_BYTES:
        raise CatalogRefused(f"'{location}' is bigger than a metadata file ({MAX_METADATA_BYTES >> 20} MiB)")
    try:
        return json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
    except (OSError, ValueError) as e:
        raise CatalogRefused(f"'{location}' is not a table metadata file: {e}") from None
