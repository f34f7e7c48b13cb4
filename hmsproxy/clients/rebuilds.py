"""Index builds a client runs itself: `ALTER INDEX … REBUILD`, and `CREATE INDEX` without
`WITH DEFERRED REBUILD` (created by the proxy, then built here).

A build reads the base table's files on Spark, which runs beside the client, never in the proxy:
the Spark helper builds on the caller's SparkSession; `hmsproxy sql` and the Python client start
a local one (the `rebuild-index` job's). Progress goes to standard error, a line per partition.
"""

from __future__ import annotations

import io
import sys
from typing import Any, TextIO

from hmsproxy.ddl.results import ResultSet
from hmsproxy.ddl.statements import Statement


def builds_index(statement: Statement) -> bool:
    """Is this a statement whose index build runs beside the client?"""
    from hmsproxy.features.indexes.statements import CreateIndex, RebuildIndex

    return isinstance(statement, RebuildIndex) or (isinstance(statement, CreateIndex) and not statement.deferred)


def created_first(statement: Statement) -> bool:
    """CREATE INDEX: the proxy creates it, then the client builds it."""
    from hmsproxy.features.indexes.statements import CreateIndex

    return isinstance(statement, CreateIndex)


def rebuild(
    uri: str,
    user: str,
    database: str,
    statement: Statement,
    *,
    spark: Any = None,
    stderr: TextIO | None = None,
    sasl_principal: str | None = None,
) -> ResultSet:
    """Build the index `statement` names (every partition, or the one ALTER INDEX … PARTITION names).
    `sasl_principal`: the proxy's, its port Kerberized; the build's connections and a session started
    here then authenticate as the caller's ticket cache."""
    from hmsproxy.jobs.context import JobContext
    from hmsproxy.jobs.errors import JobError
    from hmsproxy.jobs.rebuild_index import rebuild as rebuild_index
    from hmsproxy.jobs.skew_layout import open_metastore

    db, table = statement.table[0] or database, statement.table[1]
    spec = dict(getattr(statement, "partition", None) or ())
    out = io.StringIO()
    context = JobContext(uri, spark=spark, stdout=out, stderr=stderr or sys.stderr, user=user, sasl_principal=sasl_principal)
    try:
        with open_metastore(uri, user=user, sasl_principal=sasl_principal) as ms:
            ms.get_index(db, table, statement.name)  # a missing index is said before any Spark starts
            rebuild_index(context.spark, ms, db, table, statement.name, context, specs=[spec] if spec else [])
    except JobError as e:
        from hmsproxy.clients.proxy import HmsProxyError

        raise HmsProxyError(f"hmsproxy: index {statement.name} on {db}.{table}: {e}") from None
    finally:
        context.close()  # stops only a session it started
    lines = [line for line in out.getvalue().splitlines() if line]
    return ResultSet(["result"], [[line] for line in lines[-1:]])
