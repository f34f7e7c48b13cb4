"""The view a dependent table is served as (seed: "the query on Tdep is re-written to access the
underlying tables"): a UNION ALL with one SELECT per depended-upon table, each keeping only the
published partitions' leading values, so a reader's partition filter prunes the underlying tables.

Served as a virtual table of the catalog (features/catalog.py). Written from the records alone, on every get_table: no metastore call, and the text follows
each change of the records (in this proxy at once, in others sharing the store within a second).
"""

from __future__ import annotations

from hmsproxy.features import identity
from hmsproxy.features.catalog import VirtualTable
from hmsproxy.features.dependent import model
from hmsproxy.features.dependent.model import DependentPartition, DependentTable
from hmsproxy.features.dependent.snapshot import DependentSnapshot
from hmsproxy.features.identity import TableRef
from hmsproxy.pipeline.call import Call
from hmsproxy.protocol import idl
from hmsproxy.routing.router import Router

hive = idl.hive

VIEW = "VIRTUAL_VIEW"
#: Marks a get_table answer as a dependent table (and what DESCRIBE EXTENDED shows of it).
MARK = "hmsproxy.dependent"


def literal(value: str) -> str:
    """A string literal both Spark and Hive read back as `value`."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _keep(columns: tuple[str, ...], specs: list[tuple[str, ...]]) -> str:
    if len(columns) == 1:
        return f"{identity.ident(columns[0])} IN ({', '.join(literal(s[0]) for s in specs)})"
    return " OR ".join("(" + " AND ".join(f"{identity.ident(c)} = {literal(v)}" for c, v in zip(columns, s)) + ")" for s in specs)


def view_text(router: Router, table: DependentTable, partitions: tuple[DependentPartition, ...]) -> str:
    """SELECT <columns>, <partition columns> FROM <t> WHERE <leading values> [UNION ALL ...]."""
    columns = [c.name for c in table.columns] + list(table.partition_names)
    select = ", ".join(identity.ident(c) for c in columns)
    by_target: dict[TableRef, list[tuple[str, ...]]] = {}
    for p in partitions:
        if not p.target_gone:
            by_target.setdefault(p.target, []).append(p.values)
    branches = []
    for target, specs in sorted(by_target.items()):
        source = identity.quoted(router, target)
        if source is not None:  # else the table is hidden from this proxy's clients: they can't read it
            branches.append(f"SELECT {select} FROM {source} WHERE {_keep(table.partition_names, specs)}")
    if not branches:  # nothing published (or nothing left): the schema and no rows, naming no table that may be gone
        cast = ", ".join(f"CAST(NULL AS {c.type}) AS {identity.ident(c.name)}" for c in (*table.columns, *table.partition_columns))
        return f"SELECT {cast} WHERE 1 = 0"
    return "\nUNION ALL\n".join(branches)


def _fields(columns) -> list:
    return [hive.FieldSchema(name=c.name, type=c.type, comment=c.comment) for c in columns]


def storage(columns) -> object:
    """The storage descriptor of the view and of its partitions: no location, as Hive's views have."""
    return hive.StorageDescriptor(
        cols=_fields(columns),
        location=None,
        inputFormat="org.apache.hadoop.mapred.SequenceFileInputFormat",
        outputFormat="org.apache.hadoop.hive.ql.io.HiveSequenceFileOutputFormat",
        compressed=False,
        numBuckets=-1,
        serdeInfo=hive.SerDeInfo(name=None, serializationLib=None, parameters={}),
        bucketCols=[],
        sortCols=[],
        parameters={},
    )


def published(router: Router, table: DependentTable, partitions: tuple[DependentPartition, ...]) -> str:
    """The published partitions and what each is made of, for DESCRIBE (Hive's and Spark's show table
    parameters): `ds=1, ds=2 <- default.events; ds=3 <- default.events_v2`; a partition a notify policy
    let break says so."""
    # Every get_table writes it: one name per table (naming asks the router), specs joined directly.
    names = table.partition_names
    by_target: dict[TableRef, list[str]] = {}
    for p in partitions:
        spec = "/".join(map("=".join, zip(names, p.values)))
        if p.problem:
            spec += f" ({'not served: ' if p.target_gone else ''}{p.problem})"
        by_target.setdefault(p.target, []).append(spec)
    return "; ".join(f"{', '.join(specs)} <- {identity.client_name(router, t)}" for t, specs in by_target.items()) or "none"


def as_table(
    router: Router,
    client_db: str,
    table: DependentTable,
    partitions: tuple[DependentPartition, ...],
    written: tuple[str, str] | None = None,
) -> object:
    """The Table a client gets for a dependent table: a view over what it depends on now
    (`written`: its view text and published parameter, if already written from these records)."""
    text, listed = written or (view_text(router, table, partitions), published(router, table, partitions))
    served = [p for p in partitions if not p.target_gone]
    parameters = {
        MARK: "true",
        f"{MARK}.depends-on": identity.client_name(router, table.target),
        f"{MARK}.partitioned-by": ",".join(table.partition_names),
        f"{MARK}.partitions": str(len(served)),
        f"{MARK}.published": listed,
        model.POLICY_KEY: table.policy,
        "comment": f"dependent table: {len(served)} published partition(s); new ones depend on {identity.client_name(router, table.target)}",
    }
    return hive.Table(
        tableName=table.ref.table,
        dbName=client_db,
        owner=table.owner,
        createTime=int(table.created_at),
        lastAccessTime=0,
        retention=0,
        sd=storage(table.columns),
        # A partitioned view, as Hive's CREATE VIEW … PARTITIONED ON keeps one: the data columns in
        # the storage descriptor, the partition columns last (clients' schema: the two joined).
        partitionKeys=_fields(table.partition_columns),
        parameters=parameters,
        viewOriginalText=text,
        viewExpandedText=text,
        tableType=VIEW,
        temporary=False,
    )


def virtual_tables(snapshot: DependentSnapshot, router: Router, db: str | None) -> list[VirtualTable]:
    """The dependent tables of client database `db` (None: of every database) for the virtual catalog."""
    if not snapshot.tables:
        return []
    if db is not None:
        key = identity.db_key(router, db)
        refs = [t for t in snapshot.tables if (t.metastore, t.db) == key] if key in snapshot.by_database else []
    else:
        refs = list(snapshot.tables)
    found = []
    for ref in refs:
        client_db = db if db is not None else identity.client_db(router, ref.metastore, ref.db)
        if client_db is not None:
            found.append(VirtualTable(client_db, ref.table, _loader(snapshot, ref, client_db)))
    return found


def _loader(snapshot: DependentSnapshot, ref: TableRef, client_db: str):
    def load(call: Call):
        table, partitions = snapshot.tables[ref], snapshot.partitions.get(ref, ())
        # Written once per records and router (a reload brings a new router): 365 days cost ~1 ms to write.
        router, *written = snapshot.memo.get(ref) or (None,)
        if router is not call.router:
            written = [view_text(call.router, table, partitions), published(call.router, table, partitions)]
            snapshot.memo[ref] = (call.router, *written)
        return as_table(call.router, client_db, table, partitions, tuple(written))

    return load
