"""A call's remote (a `Link`: what it is called here, where it points) and how answers show it.

A remote's answers carry the link as parameters (hmsproxy.remote.uris, .database, .table,
.factory), so DESCRIBE EXTENDED has it; a remote managed table is shown as external.
"""

from __future__ import annotations

from dataclasses import dataclass

from hmsproxy.features.remote_marks import LINK_DATABASE, LINK_FACTORY, LINK_TABLE, LINK_URIS
from hmsproxy.features.remotes.factories import URIS_PROPERTY
from hmsproxy.features.remotes.targets import describe_target, takes_commits
from hmsproxy.pipeline.call import Call
from hmsproxy.routing.table_rewrite import rewrite_table_value, table_renamer

#: Where a remote managed table's own type is kept (clients see it as EXTERNAL_TABLE).
REMOTE_TABLE_TYPE = "hmsproxy.remote.table.type"


@dataclass(frozen=True)
class Link:
    """One call's remote: what it is called here and where it points."""

    kind: str  # "database" or "table"
    local: str  # "db" or "db.tbl"
    remote_db: str
    remote_table: str | None
    factory: str
    properties: dict
    #: Defined in the config file (remotes.databases / .tables), not in the store.
    static: bool = False

    @property
    def subject(self) -> str:
        return f"remote {self.kind} {self.local}"

    @property
    def where(self) -> str:
        return describe_target(self.factory, self.properties)

    @property
    def takes_commits(self) -> bool:
        return takes_commits(self.factory, self.properties)

    @property
    def local_db(self) -> str:
        return self.local.split(".", 1)[0]

    @property
    def local_table(self) -> str | None:
        return self.local.split(".", 1)[1] if self.kind == "table" else None

    @property
    def remote(self) -> str:
        return f"{self.remote_db}.{self.remote_table}" if self.remote_table else self.remote_db

    def parameters(self, table: str | None = None) -> dict[str, str]:
        params = {
            LINK_URIS: self.properties.get(URIS_PROPERTY, ""),
            LINK_DATABASE: self.remote_db,
            LINK_FACTORY: self.factory,
        }
        if self.remote_table or table:
            params[LINK_TABLE] = self.remote_table or table
        if self.properties.get("ssh.tunnel.route"):
            params["hmsproxy.remote.ssh.tunnel.route"] = self.properties["ssh.tunnel.route"]
        return params


def db_link(rd, static: bool = False) -> Link:
    return Link("database", rd.local_name, rd.remote_name, None, rd.factory, rd.properties, static)


def table_link(rt, static: bool = False) -> Link:
    return Link("table", f"{rt.local_db}.{rt.local_name}", rt.remote_db, rt.remote_name, rt.factory, rt.properties, static)


def link_of(snap, call: Call) -> Link | None:
    """The remote a call names: its database if that is a remote, else its table if that is one."""
    rd = snap.database(call.client_db)
    if rd is not None:
        return db_link(rd, rd.local_name in snap.static_databases)
    rt = snap.table(call.client_db, call.table)
    if rt is not None:
        return table_link(rt, (rt.local_db, rt.local_name) in snap.static_tables)
    return None


def show(call: Call, link: Link, result) -> None:
    """A remote's answer as clients see it: local names, the link in its parameters."""
    name = call.spec.name
    success = getattr(result, "success", None)
    if success is None:
        return
    if link.kind == "table" and link.remote_table != link.local_table:
        rewrite_table_value(success, call.spec.success_type, table_renamer(link.remote_table, link.local_table))
    if call.spec.gets_database:
        success.parameters = {**(success.parameters or {}), **link.parameters()}
    elif name == "get_table":
        add_params(success, link)
    elif name == "get_table_req" and success.table is not None:
        add_params(success.table, link)
    elif name == "get_table_objects_by_name":
        for t in success:
            add_params(t, link)
    elif name == "get_table_objects_by_name_req":
        for t in success.tables or []:
            add_params(t, link)


def add_params(table, link: Link) -> None:
    """Append the link to a remote table's parameters; show a managed table as external.

    The proxy owns no remote data: as an external table, clients that delete files
    themselves for managed tables (Spark's TRUNCATE TABLE) refuse before touching them.
    """
    if table is None:
        return
    params = {**(table.parameters or {}), **link.parameters(table.tableName if link.kind == "database" else None)}
    if table.tableType == "MANAGED_TABLE":
        table.tableType = "EXTERNAL_TABLE"
        params["EXTERNAL"] = "TRUE"
        params[REMOTE_TABLE_TYPE] = "MANAGED_TABLE"
    table.parameters = params
