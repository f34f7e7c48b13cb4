"""Many partitions written straight into a Hive 2.3 metastore's PostgreSQL database, then read
back through the metastore.

`add_partitions` makes 2,000-4,000 partitions a minute on a loaded 2-core machine (Derby or
PostgreSQL behind the metastore), so 100,000 took most of an hour. Here the rows the metastore
itself writes for a partition (Hive 2.3's package.jdo: PARTITIONS, PARTITION_KEY_VALS,
PARTITION_PARAMS, and a storage descriptor of its own in SDS with its SERDES row, copied from the
table's with the partition's own location, sharing the table's column descriptor CD_ID as the
metastore does when the columns are the table's) go in with COPY, in one transaction.

Ids come from DataNucleus' SEQUENCE_TABLE as the metastore takes them: the ids below a class's
NEXT_VAL may sit in a running metastore's cached block, so the rows take [NEXT_VAL, NEXT_VAL + n)
and NEXT_VAL moves past them (its row locked meanwhile). `verify_partitions` then asks the
metastore (get_partition_names, get_num_partitions_by_filter, get_partition of a sample) that
they are partitions it serves. Tables with skewed columns are refused (their lists have ids of
their own, not copied here).

Used by tests/bench/bench_relay.py (``--store postgres``); the row building is pure
(`partition_rows`) and checked in tests/unit/test_bulk_partitions.py, the whole against a real
metastore in tests/integration/test_bulk_partitions_seeded.py.
"""

from __future__ import annotations

import io
import time
from dataclasses import dataclass
from urllib.parse import unquote

#: DataNucleus' id sequence for each table whose rows are made here (SEQUENCE_TABLE.SEQUENCE_NAME).
SEQUENCES = {
    "PARTITIONS": "org.apache.hadoop.hive.metastore.model.MPartition",
    "SDS": "org.apache.hadoop.hive.metastore.model.MStorageDescriptor",
    "SERDES": "org.apache.hadoop.hive.metastore.model.MSerDeInfo",
}
ID_COLUMNS = {"PARTITIONS": "PART_ID", "SDS": "SD_ID", "SERDES": "SERDE_ID"}
#: Rows hanging off a storage descriptor or its serde, copied per partition: table -> its key column.
SD_CHILDREN = {"SD_PARAMS": "SD_ID", "BUCKETING_COLS": "SD_ID", "SORT_COLS": "SD_ID"}
SERDE_CHILDREN = {"SERDE_PARAMS": "SERDE_ID"}
#: Characters Hive escapes as %XX in a partition name (FileUtils.escapePathName), besides 0x01-0x1F.
_ESCAPED = set("\"#%'*/:=?\\\x7f{[]^")


def escape_path_name(value: str) -> str:
    """`value` as a partition name or directory holds it."""
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED or "\x01" <= c <= "\x1f" else c for c in value)


def part_name(keys: list[str], values: list[str]) -> str:
    """Hive's partition name, "k1=v1/k2=v2", keys and values escaped."""
    if len(keys) != len(values):
        raise ValueError(f"{len(values)} values for {len(keys)} partition keys")
    return "/".join(f"{escape_path_name(k)}={escape_path_name(v)}" for k, v in zip(keys, values))


@dataclass(frozen=True)
class Template:
    """The table's rows each partition copies: its id, partition keys, SDS and SERDES rows
    ({column: value}) and their children ({table: [row, ...]})."""

    tbl_id: int
    keys: list[str]
    sd: dict
    serde: dict
    children: dict[str, list[dict]]


@dataclass(frozen=True)
class Rows:
    """One table's new rows: its columns and the rows' values in that order."""

    columns: list[str]
    values: list[tuple]


def partition_rows(
    template: Template, values_list: list[list[str]], first_ids: dict[str, int], create_time: int, parameters: dict
) -> dict[str, Rows]:
    """Every row `values_list`'s partitions take, table by table, parents first. `first_ids` maps
    PARTITIONS, SDS and SERDES to the first id reserved for each; a partition's location is the
    table's joined with its name; its parameters are `parameters` and transient_lastDdlTime."""
    sd_columns = list(template.sd)
    serde_columns = list(template.serde)
    out = {
        "SERDES": Rows(serde_columns, []),
        "SDS": Rows(sd_columns, []),
        "PARTITIONS": Rows(["PART_ID", "CREATE_TIME", "LAST_ACCESS_TIME", "PART_NAME", "SD_ID", "TBL_ID"], []),
        "PARTITION_KEY_VALS": Rows(["PART_ID", "PART_KEY_VAL", "INTEGER_IDX"], []),
        "PARTITION_PARAMS": Rows(["PART_ID", "PARAM_KEY", "PARAM_VALUE"], []),
    }
    children = {table: rows for table, rows in template.children.items() if rows}
    for table, rows in children.items():
        out[table] = Rows(list(rows[0]), [])
    params = {**parameters, "transient_lastDdlTime": str(create_time)}
    for i, values in enumerate(values_list):
        part_id, sd_id, serde_id = first_ids["PARTITIONS"] + i, first_ids["SDS"] + i, first_ids["SERDES"] + i
        name = part_name(template.keys, values)
        out["SERDES"].values.append(tuple(serde_id if c == "SERDE_ID" else v for c, v in template.serde.items()))
        sd = {**template.sd, "SD_ID": sd_id, "SERDE_ID": serde_id, "LOCATION": f"{template.sd['LOCATION']}/{name}"}
        out["SDS"].values.append(tuple(sd[c] for c in sd_columns))
        out["PARTITIONS"].values.append((part_id, create_time, 0, name, sd_id, template.tbl_id))
        out["PARTITION_KEY_VALS"].values.extend((part_id, v, idx) for idx, v in enumerate(values))
        out["PARTITION_PARAMS"].values.extend((part_id, k, v) for k, v in params.items())
        for table, rows in children.items():
            new_id = serde_id if table in SERDE_CHILDREN else sd_id
            key = SERDE_CHILDREN.get(table) or SD_CHILDREN[table]
            out[table].values.extend(tuple(new_id if c == key else v for c, v in row.items()) for row in rows)
    return out


def copy_text(rows: Rows) -> str:
    """`rows` in COPY's text format (tab-separated, \\N for NULL, backslash escapes)."""

    def field(v) -> str:
        if v is None:
            return "\\N"
        if isinstance(v, bool):
            return "t" if v else "f"
        return str(v).replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")

    return "".join("\t".join(field(v) for v in row) + "\n" for row in rows.values)


def insert_partitions(conn, db: str, table: str, values_list: list[list[str]], parameters: dict | None = None) -> None:
    """`values_list`'s partitions of `db.table` into the metastore database `conn` (psycopg2) holds,
    in one transaction committed before returning."""
    with conn:
        with conn.cursor() as cur:
            template = read_template(cur, db, table)
            first_ids = {t: reserve_ids(cur, t, len(values_list)) for t in SEQUENCES}
            made = partition_rows(template, values_list, first_ids, int(time.time()), parameters or {})
            for name, rows in made.items():
                columns = ", ".join(f'"{c}"' for c in rows.columns)
                cur.copy_expert(f'COPY "{name}" ({columns}) FROM STDIN', io.StringIO(copy_text(rows)))


def read_template(cur, db: str, table: str) -> Template:
    cur.execute(
        'SELECT t."TBL_ID", t."SD_ID" FROM "TBLS" t JOIN "DBS" d ON t."DB_ID" = d."DB_ID" WHERE d."NAME" = %s AND t."TBL_NAME" = %s',
        (db.lower(), table.lower()),
    )
    found = cur.fetchone()
    if found is None:
        raise LookupError(f"no table {db}.{table} in the metastore's database")
    tbl_id, sd_id = found
    cur.execute('SELECT "PKEY_NAME" FROM "PARTITION_KEYS" WHERE "TBL_ID" = %s ORDER BY "INTEGER_IDX"', (tbl_id,))
    keys = [k for (k,) in cur.fetchall()]
    if not keys:
        raise ValueError(f"{db}.{table} has no partition keys")
    cur.execute('SELECT count(*) FROM "SKEWED_COL_NAMES" WHERE "SD_ID" = %s', (sd_id,))
    if cur.fetchone()[0]:
        raise ValueError(f"{db}.{table} has skewed columns: their lists are not copied here")
    sd = _rows(cur, "SDS", "SD_ID", sd_id)[0]
    serde = _rows(cur, "SERDES", "SERDE_ID", sd["SERDE_ID"])[0]
    children = {t: _rows(cur, t, key, sd_id) for t, key in SD_CHILDREN.items()}
    children.update({t: _rows(cur, t, key, sd["SERDE_ID"]) for t, key in SERDE_CHILDREN.items()})
    return Template(tbl_id, keys, sd, serde, children)


def _rows(cur, table: str, key: str, value) -> list[dict]:
    cur.execute(f'SELECT * FROM "{table}" WHERE "{key}" = %s', (value,))
    columns = [d[0] for d in cur.description]
    return [dict(zip(columns, row)) for row in cur.fetchall()]


def reserve_ids(cur, table: str, count: int) -> int:
    """The first of `count` ids for `table`'s rows that no metastore will hand out (see the module doc)."""
    sequence, id_column = SEQUENCES[table], ID_COLUMNS[table]
    cur.execute('SELECT "NEXT_VAL" FROM "SEQUENCE_TABLE" WHERE "SEQUENCE_NAME" = %s FOR UPDATE', (sequence,))
    found = cur.fetchone()
    cur.execute(f'SELECT coalesce(max("{id_column}"), 0) + 1 FROM "{table}"')
    first = max(found[0] if found else 0, cur.fetchone()[0])
    if found:
        cur.execute('UPDATE "SEQUENCE_TABLE" SET "NEXT_VAL" = %s WHERE "SEQUENCE_NAME" = %s', (first + count, sequence))
    else:
        cur.execute('INSERT INTO "SEQUENCE_TABLE" ("SEQUENCE_NAME", "NEXT_VAL") VALUES (%s, %s)', (sequence, first + count))
    return first


def verify_partitions(client, db: str, table: str, values_list: list[list[str]], parameters: dict | None = None, sample: int = 5) -> int:
    """Through the metastore (a thrift client): every seeded partition listed by name, counted by
    a filter on its first key, and a sample read whole (values, own location, the table's columns
    and serde, parameters). Returns how many partitions the table has; raises AssertionError."""
    tbl = client.get_table(db, table)
    keys = [k.name for k in tbl.partitionKeys]
    names = client.get_partition_names(db, table, -1)
    missing = {part_name(keys, v) for v in values_list} - set(names)
    assert not missing, f"{len(missing)} seeded partitions not listed by the metastore, e.g. {sorted(missing)[:3]}"
    lowest = min(v[0] for v in values_list)
    expected = sum(1 for n in names if unquote(_first_value(n)) >= lowest)  # the database's C collation: code point order
    counted = client.get_num_partitions_by_filter(db, table, f'{keys[0]} >= "{lowest}"')
    assert counted == expected, f"get_num_partitions_by_filter counts {counted}, the names say {expected}"
    step = max(1, len(values_list) // sample)
    for values in values_list[::step][:sample] + values_list[-1:]:
        got = client.get_partition(db, table, values)
        assert got.values == values, (got.values, values)
        assert got.sd.location == f"{tbl.sd.location}/{part_name(keys, values)}", got.sd.location
        assert got.sd.cols == tbl.sd.cols and got.sd.serdeInfo == tbl.sd.serdeInfo, values
        assert got.sd.inputFormat == tbl.sd.inputFormat and got.sd.outputFormat == tbl.sd.outputFormat, values
        assert {k: got.parameters[k] for k in parameters or {}} == (parameters or {}), got.parameters
    return len(names)


def _first_value(name: str) -> str:
    return name.split("/", 1)[0].split("=", 1)[1]
