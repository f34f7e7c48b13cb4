"""Python API for hmsproxy's own statements, through a running proxy.

    from hmsproxy.clients.proxy import HmsProxyClient
    with HmsProxyClient("thrift://proxy:9083", user="alice") as c:
        c.execute("CREATE REMOTE DATABASE sales WITH DBPROPERTIES ('hive.metastore.uris'='thrift://hms:9083')")
        [rs] = c.execute("SHOW REMOTE DATABASES")

A Kerberized proxy port (server.sasl) takes `sasl_principal="hive/_HOST@EXAMPLE.COM"` (the proxy's
principal): the caller is then who its ticket cache says (kinit / KRB5CCNAME), not `user`.

A script is checked here first (syntax errors are found before anything runs, with
their line and column), then sent whole: one `hmsproxy_execute_script` call answers
one result per statement. A proxy from before that call gets one `hmsproxy_execute`
per statement.
"""

from __future__ import annotations

import getpass
import re

from hmsproxy.ddl.errors import DdlSyntaxError
from hmsproxy.ddl.results import ResultSet
from hmsproxy.features import parse
from hmsproxy.protocol.statement_wire import UNKNOWN_METHOD, ApplicationError, MetaError, StatementConnection
from hmsproxy.protocol.uris import parse_uri

__all__ = ["DdlSyntaxError", "HmsProxyClient", "HmsProxyError", "ResultSet"]


#: Only a script naming INDEX may hold a statement run here (an index build: clients/rebuilds.py); any
#: other goes to the proxy whole, unparsed here (loading the parser is most of a short command's time).
_MAY_BUILD = re.compile(r"\bINDEX\b", re.IGNORECASE)
#: How the proxy's answer to a script it could not parse begins (features/statements.py).
_SYNTAX_ERROR = "hmsproxy: syntax error at line"


class HmsProxyError(Exception):
    """The proxy refused or failed a statement; the message is the proxy's."""


class HmsProxyClient:
    def __init__(
        self,
        uri: str = "thrift://127.0.0.1:9083",
        user: str | None = None,
        *,
        timeout_s: float = 60.0,
        transport: str = "buffered",
        sasl_principal: str | None = None,
    ):
        self.uri = uri
        #: Who the statements run as (set_ugi); the OS user by default, as Hive's clients do.
        self.user = user or getpass.getuser()
        host, port = parse_uri(uri)
        # Its three calls by hand (protocol/statement_wire.py), not through thriftpy2: loading that
        # and the IDL would be most of a short `hmsproxy sql`.
        self.sasl_principal = sasl_principal
        self._client = StatementConnection(host, port, timeout_s=timeout_s, framed=transport == "framed", sasl_principal=sasl_principal)
        try:
            self._client.set_ugi(self.user, [])  # who the proxy's write rules and the metastore see, as Hive's clients do
        except BaseException:
            self._client.close()
            raise

    def execute(self, sql: str, database: str | None = None, *, spark=None) -> list[ResultSet]:
        """Run every statement of `sql` in order; one ResultSet per statement.

        `database` is the current database (where `CREATE REMOTE TABLE t` goes); default "default".
        Index builds (ALTER INDEX … REBUILD, CREATE INDEX without DEFERRED REBUILD) run here, on
        `spark` or a local SparkSession (clients/rebuilds.py); everything else runs in the proxy.
        Raises DdlSyntaxError (nothing ran) or HmsProxyError (statements before it ran).
        """
        database = database or "default"
        if not _MAY_BUILD.search(sql):  # nothing to run here: the proxy parses the script itself
            try:
                return self._in_proxy([sql], database)
            except HmsProxyError as e:
                if _SYNTAX_ERROR in str(e):
                    parse(sql)  # raises it as DdlSyntaxError, with its line and column
                raise
        from hmsproxy.clients.rebuilds import builds_index, created_first, rebuild

        results: list[ResultSet] = []
        batch: list[str] = []
        for statement in parse(sql):
            if not builds_index(statement):
                batch.append(statement.source)
                continue
            results += self._in_proxy(batch, database)
            batch = []
            created = self._in_proxy([statement.source], database) if created_first(statement) else []
            built = rebuild(self.uri, self.user, database, statement, spark=spark, sasl_principal=self.sasl_principal)
            results.append(ResultSet(["result"], [row for rs in [*created, built] for row in rs.rows]))
        return results + self._in_proxy(batch, database)

    def _in_proxy(self, statements: list[str], database: str) -> list[ResultSet]:
        if not statements:
            return []
        try:
            try:
                answers = self._client.execute_script(";\n".join(statements), database)
            except ApplicationError as e:
                if e.type != UNKNOWN_METHOD:
                    raise
                answers = [self._client.execute(s, database) for s in statements]
        except MetaError as e:
            raise HmsProxyError(e.message) from None
        return [ResultSet(columns, rows) for columns, rows in answers]

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> HmsProxyClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
