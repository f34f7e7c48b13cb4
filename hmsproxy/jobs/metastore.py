"""A metastore client to the proxy: the few calls the jobs make, errors in words.

Plain thriftpy2 on the proxy's own IDL (`hmsproxy.protocol.idl`), as every hmsproxy
client does; the jobs talk to the proxy, never to a backend, so routing,
prefixes and write rules apply to them like to any other client.
"""

from __future__ import annotations

import getpass
from urllib.parse import urlparse

from thriftpy2.thrift import TException

from hmsproxy.files.partition_names import NAMES_PER_CALL
from hmsproxy.jobs.errors import JobError, UsageError, error_text
from hmsproxy.jobs.tables import parse_partition_name
from hmsproxy.protocol import idl
from hmsproxy.protocol.client import open_client
from hmsproxy.protocol.sasl import SaslError

hive = idl.hive


def parse_uris(uris: str) -> list[tuple[str, int]]:
    """'thrift://a:9083,thrift://b:9083' -> [(host, port), ...], as hive.metastore.uris is written."""
    result = []
    for uri in (u.strip() for u in uris.split(",")):
        if not uri:
            continue
        parsed = urlparse(uri)
        if parsed.scheme != "thrift" or not parsed.hostname or not parsed.port:
            raise UsageError(f"not a thrift://host:port URI: {uri!r}")
        result.append((parsed.hostname, parsed.port))
    if not result:
        raise UsageError(f"no metastore URI in {uris!r}")
    return result


class MetastoreClient:
    """One connection to the proxy (the first of the URIs that answers). Not thread-safe."""

    def __init__(self, uris: str, user: str | None = None, timeout_s: float = 600.0, *, sasl_principal: str | None = None):
        self.uris = uris
        self.user = user or getpass.getuser()
        errors = []
        for host, port in parse_uris(uris):
            try:
                self._client = open_client(host, port, user=self.user, timeout_s=timeout_s, sasl_principal=sasl_principal)
                break
            except (TException, OSError, SaslError) as e:
                errors.append(f"{host}:{port}: {error_text(e)}")
        else:
            raise JobError(f"can't reach the metastore at {uris}: {'; '.join(errors)}")

    def get_table(self, db: str, table: str):
        try:
            return self._client.get_table(db, table)
        except hive.NoSuchObjectException:
            raise JobError(f"table {db}.{table} does not exist (metastore {self.uris})") from None

    def databases(self) -> list[str]:
        return list(self._client.get_all_databases() or [])

    def table_names(self, db: str) -> list[str]:
        return list(self._client.get_all_tables(db) or [])

    def tables(self, db: str, names: list[str]) -> dict:
        """The tables of `db` with these names that exist, by name, in one call."""
        return {t.tableName.lower(): t for t in self._client.get_table_objects_by_name(db, names) or []}

    def partitions(self, db: str, table: str) -> list:
        """Every partition of the table, in one call."""
        return list(self._client.get_partitions(db, table, -1) or [])

    def partition_names(self, db: str, table: str) -> list[str]:
        return list(self._client.get_partition_names(db, table, -1))

    def partitions_matching(self, db: str, table: str, texts: dict[str, list]) -> list:
        """The partitions whose values are among `texts` (column -> the values' texts) for each of
        its columns `texts` names, chosen by their names (which carry the values): two calls."""
        names = []
        for name in self.partition_names(db, table):
            values = parse_partition_name(name)
            if all(values[k] in texts[k] for k in values if k in texts):
                names.append(name)
        return self.partitions_by_names(db, table, names) if names else []

    def partitions_by_names(self, db: str, table: str, names: list[str]) -> list:
        parts = []
        for i in range(0, len(names), NAMES_PER_CALL):
            parts.extend(self._client.get_partitions_by_names(db, table, names[i : i + NAMES_PER_CALL]))
        return parts

    def get_partition(self, db: str, table: str, values: list[str]):
        return self._client.get_partition(db, table, values)

    def alter_partition(self, db: str, table: str, partition) -> None:
        self._client.alter_partition(db, table, partition)

    def alter_table(self, db: str, table: str, new_table) -> None:
        self._client.alter_table(db, table, new_table)

    def get_index(self, db: str, table: str, index: str):
        try:
            return self._client.get_index_by_name(db, table, index)
        except hive.NoSuchObjectException as e:
            raise JobError(e.message or f"no index {index} on {db}.{table}") from None

    def indexes(self, db: str, table: str) -> list:
        return list(self._client.get_indexes(db, table, -1) or [])

    def find_partition(self, db: str, table: str, values: list[str]):
        """The partition, or None where there is none."""
        try:
            return self._client.get_partition(db, table, values)
        except hive.NoSuchObjectException:
            return None

    # The *_with_environment_context calls: the context carries what the proxy records with the change.

    def add_partition(self, partition, context: dict[str, str]) -> None:
        self._client.add_partition_with_environment_context(partition, hive.EnvironmentContext(properties=context))

    def alter_partition_with_context(self, db: str, table: str, partition, context: dict[str, str]) -> None:
        self._client.alter_partition_with_environment_context(db, table, partition, hive.EnvironmentContext(properties=context))

    def alter_partitions_with_context(self, db: str, table: str, partitions: list, context: dict[str, str]) -> None:
        """All of them in one metastore transaction: each re-pointed, or none."""
        self._client.alter_partitions_with_environment_context(db, table, partitions, hive.EnvironmentContext(properties=context))

    def alter_partitions(self, db: str, table: str, partitions: list) -> None:
        """All of them in one metastore transaction: each re-pointed, or none."""
        self._client.alter_partitions(db, table, partitions)

    def add_partitions(self, partitions: list) -> None:
        """All of them in one metastore transaction: each added, or none."""
        self._client.add_partitions(partitions)

    def alter_table_with_context(self, db: str, table: str, new_table, context: dict[str, str]) -> None:
        self._client.alter_table_with_environment_context(db, table, new_table, hive.EnvironmentContext(properties=context))

    # Locks and transactions (jobs/locks.py): the metastore's, through the proxy.

    def lock(self, request):
        return self._client.lock(request)

    def check_lock(self, lockid: int):
        return self._client.check_lock(hive.CheckLockRequest(lockid=lockid))

    def unlock(self, lockid: int) -> None:
        try:
            self._client.unlock(hive.UnlockRequest(lockid=lockid))
        except hive.NoSuchLockException:  # it timed out meanwhile: nothing to release
            pass

    def locks_on(self, db: str, table: str, partition: str | None) -> list:
        """show_locks of one table or partition: every lock on it, acquired or waiting."""
        answer = self._client.show_locks(hive.ShowLocksRequest(dbname=db, tablename=table, partname=partition))
        return list(answer.locks or [])

    def heartbeat_lock(self, lockid: int) -> None:
        self._client.heartbeat(hive.HeartbeatRequest(lockid=lockid))

    def open_txns_info(self) -> list:
        return list(self._client.get_open_txns_info().open_txns or [])

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> MetastoreClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
