"""Skew kept valid and kept at all, against every client (Spark, the Hive CLI, any Thrift client).

- validation (rules.py) of create_table, alter_table and add_partition calls that carry skew;
- protection: a client that rewrites a table or partition without its skew (Spark rebuilds
  whole tables from its own catalog, which knows nothing of skew) does not erase it. It changes
  through the statements (they mark their alter_table with rules.CHANGE_MARK), a client that
  sends a different, non-empty skew, or a client that read the table and cleared its skew
  (the Hive CLI's NOT SKEWED / NOT STORED AS DIRECTORIES): `left_out` tells these apart by the
  call's shape, and refuses the shape it can't read rather than doing nothing silently;
- inheritance: a partition added without skew gets the table's current skew (Hive's rule:
  a table-level change affects partitions created after it).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from thriftpy2.thrift import TApplicationException

from hmsproxy.features.skew import rules
from hmsproxy.pipeline.call import Call
from hmsproxy.pipeline.errors import InvalidRequest, NotFound, ProxyError
from hmsproxy.protocol import idl

if TYPE_CHECKING:
    from hmsproxy.pipeline.internal_client import InternalClient

log = logging.getLogger(__name__)
hive = idl.hive

#: Where each call keeps the partitions it writes (the table: MethodSpec.altered_table).
ADDED_PARTITIONS = {
    "add_partition": lambda a: [a.new_part],
    "add_partition_with_environment_context": lambda a: [a.new_part],
    "add_partitions": lambda a: a.new_parts,
    "add_partitions_req": lambda a: a.request.parts,
}
ALTERED_PARTITIONS = {
    "alter_partition": lambda a: [a.new_part],
    "alter_partition_with_environment_context": lambda a: [a.new_part],
    "alter_partitions": lambda a: a.new_parts,
    "alter_partitions_with_environment_context": lambda a: a.new_parts,
    "alter_partitions_req": lambda a: a.req.partitions,
}
#: The calls whose hooks run besides those that create or alter a table.
METHODS = frozenset(ADDED_PARTITIONS) | frozenset(ALTERED_PARTITIONS)


class Protection:
    """`client_for(call)`: calls metastores as the call's client (to read what a change starts from)."""

    def __init__(self, client_for: Callable[[Call], InternalClient]):
        self._client_for = client_for

    def on_request(self, call: Call) -> None:
        name = call.spec.name
        if call.spec.creates_table:
            self._check(call, call.spec.new_table(call.args))
        elif call.spec.alters_table:
            self._alter_table(call, call.spec.altered_table(call.args))
        elif name in ADDED_PARTITIONS:
            self._add_partitions(call, [p for p in ADDED_PARTITIONS[name](call.args) or [] if p is not None])
        elif name in ALTERED_PARTITIONS:
            self._alter_partitions(call, [p for p in ALTERED_PARTITIONS[name](call.args) or [] if p is not None])

    # -- tables ---------------------------------------------------------------------------

    @staticmethod
    def _check(call: Call, table) -> None:
        problems = rules.table_problems(table) if table is not None else []
        if problems:
            raise InvalidRequest(f"hmsproxy: {call.client_db}.{table.tableName}: " + "; ".join(problems))

    def _alter_table(self, call: Call, table) -> None:
        if table is None or table.sd is None:
            return
        if rules.is_skewed(table.sd) or _marked(call.args):
            self._check(call, table)
            return
        current = self._current_table(call)
        if current is None or not (rules.is_skewed(current.sd) or current.sd.storedAsSubDirectories):
            return
        how = left_out(table.sd)
        if how == REWRITE:  # left out, not taken away: keep what the metastore has
            table.sd.skewedInfo = current.sd.skewedInfo
            table.sd.storedAsSubDirectories = current.sd.storedAsSubDirectories
        elif how == CLEARED:
            # Hive's NOT SKEWED empties the columns and values but leaves the location map behind.
            table.sd.skewedInfo = hive.SkewedInfo(skewedColNames=[], skewedColValues=[], skewedColValueLocationMaps={})
            log.info("skew: %s.%s's skew cleared by the client (NOT SKEWED)", call.client_db, call.table)
        else:
            raise InvalidRequest(
                f"hmsproxy: {call.client_db}.{call.table} is skewed and this alter_table carries no SkewedInfo: "
                "hmsproxy can't tell whether it means to remove the skew or leaves it out. Send the table's "
                "SkewedInfo to keep it, or remove it with "
                f'`hmsproxy sql -e "ALTER TABLE {call.client_db}.{call.table} NOT SKEWED"`'
            )

    # -- partitions -----------------------------------------------------------------------

    def _add_partitions(self, call: Call, parts: list) -> None:
        table = self._current_table(call)
        if table is None or not rules.is_skewed(table.sd):
            return
        for p in parts:
            problems = rules.partition_problems(table, p.values)
            if problems:
                raise InvalidRequest(f"hmsproxy: {call.client_db}.{table.tableName}: " + "; ".join(problems))
            if p.sd is not None and not rules.is_skewed(p.sd):
                p.sd.skewedInfo = table.sd.skewedInfo
                p.sd.storedAsSubDirectories = table.sd.storedAsSubDirectories

    def _alter_partitions(self, call: Call, parts: list) -> None:
        unskewed = [p for p in parts if p.sd is not None and not rules.is_skewed(p.sd)]
        if not unskewed:
            return
        table = self._current_table(call)
        if table is None:
            return
        keys = [c.name for c in table.partitionKeys or []]
        names = {"/".join(f"{k}={v}" for k, v in zip(keys, p.values or [])): p for p in unskewed}
        try:
            with self._client_for(call) as client:
                current = client.call("get_partitions_by_names", db_name=call.client_db, tbl_name=call.table, names=list(names)) or []
        except (ProxyError, TApplicationException) as e:  # can't tell what is there: don't stop the write for it
            log.warning("skew: can't read %s.%s's partitions to keep their skew: %s", call.client_db, call.table, e)
            return
        by_values = {tuple(p.values): p for p in current}
        for p in unskewed:
            old = by_values.get(tuple(p.values or []))
            if old is not None and old.sd is not None and rules.is_skewed(old.sd):
                p.sd.skewedInfo = old.sd.skewedInfo
                p.sd.storedAsSubDirectories = old.sd.storedAsSubDirectories

    def _current_table(self, call: Call):
        if not call.client_db or not call.table:
            return None
        with self._client_for(call) as client:
            try:
                return client.call("get_table", dbname=call.client_db, tbl_name=call.table)
            except NotFound:
                return None


#: What an alter_table without skew means for a skewed table (left_out's answers).
REWRITE = "rewrite"
CLEARED = "cleared"
UNCLEAR = "unclear"


def left_out(sd) -> str:
    """Why an alter_table's storage descriptor has no skew, from what it carries (measured on Spark 4
    and the Hive 2.3 CLI). A table read from the metastore always has storedAsSubDirectories set;
    Spark builds the table it sends anew from its own catalog (Hive's Table.getEmptyTable: an empty
    SkewedInfo, storedAsSubDirectories unset), so does any client that knows nothing of skew: a
    REWRITE. A client that read the table and emptied its SkewedInfo (Hive's NOT SKEWED) meant it:
    CLEARED. A SkewedInfo dropped from a table that was read is UNCLEAR.
    """
    if sd.storedAsSubDirectories is None:
        return REWRITE
    return CLEARED if sd.skewedInfo is not None else UNCLEAR


def _marked(args) -> bool:
    context = getattr(args, "environment_context", None)
    return bool(context is not None and (context.properties or {}).get(rules.CHANGE_MARK) == "true")
