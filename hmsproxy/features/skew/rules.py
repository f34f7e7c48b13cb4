"""What makes skew metadata valid (the list bucketing design's "List Bucketing Validation").

Pure functions over Thrift structs: the statements and the Thrift calls that carry a
SkewedInfo (create_table, alter_table, add_partition, ...) are checked by the same rules.
Each returns the problems in words; an empty list means valid.
"""

from __future__ import annotations

from hmsproxy.protocol import idl

#: The directory Hive writes rows of no skewed value to; a partition value must not look like it.
DEFAULT_DIRECTORY = "HIVE_DEFAULT_LIST_BUCKETING_DIR_NAME"

#: Set on the alter_table calls of the skew statements (runners.py): the one way a skewed table
#: loses its skew (protection.py keeps it against clients that just leave it out).
CHANGE_MARK = "hmsproxy.skew.change"

hive = idl.hive


def is_skewed(sd) -> bool:
    return bool(sd is not None and sd.skewedInfo is not None and sd.skewedInfo.skewedColNames)


def key(values) -> tuple[str, ...]:
    """A skewed value as it is compared: strings, in column order."""
    return tuple(str(v) for v in values)


def table_problems(table) -> list[str]:
    """Why `table`'s skew (columns, values, location map, list bucketing) is not valid."""
    sd = table.sd
    if sd is None or sd.skewedInfo is None:
        return []
    info = sd.skewedInfo
    columns = [(c or "").lower() for c in info.skewedColNames or []]  # a nameless one is named '' in the refusal
    values = [key(v) for v in info.skewedColValues or []]
    locations = [key(k) for k in (info.skewedColValueLocationMaps or {})]
    if not columns:
        return [f"skewed values {values} need skewed columns"] if values or locations else []
    problems = []
    data = [(c.name or "").lower() for c in sd.cols or []]
    partition_keys = {(c.name or "").lower() for c in table.partitionKeys or []}
    for c in columns:
        if c in partition_keys:
            problems.append(f"skewed column '{c}' is a partition column; skew is on data columns ({', '.join(data)})")
        elif c not in data:
            problems.append(f"skewed column '{c}' is not a column of the table ({', '.join(data)})")
    if len(set(columns)) != len(columns):
        problems.append(f"skewed columns repeat: {', '.join(columns)}")
    if not values:
        problems.append(f"skewed columns ({', '.join(columns)}) need at least one skewed value")
    for v in values:
        if len(v) != len(columns):
            problems.append(f"skewed value {_show(v)} has {len(v)} part(s) for {len(columns)} skewed column(s) ({', '.join(columns)})")
    seen = set()
    for v in values:
        if v in seen:
            problems.append(f"skewed value {_show(v)} is listed twice")
        seen.add(v)
    for loc in locations:
        if loc not in seen:
            problems.append(f"SKEWED LOCATION names {_show(loc)}, which is not a skewed value of the table")
    if sd.storedAsSubDirectories:
        if (sd.numBuckets or 0) > 0 or sd.bucketCols:
            problems.append("list bucketing (STORED AS DIRECTORIES) cannot be combined with bucketing (CLUSTERED BY)")
        if (table.tableType or "").upper() == "EXTERNAL_TABLE" or (table.parameters or {}).get("EXTERNAL", "").upper() == "TRUE":
            problems.append("list bucketing (STORED AS DIRECTORIES) is not allowed on an external table")
    return problems


def partition_problems(table, values) -> list[str]:
    """Why a partition with these values may not be added to the skewed `table`."""
    if not is_skewed(table.sd):
        return []
    return [f"partition value '{v}' is the name of list bucketing's default directory" for v in values or [] if v == DEFAULT_DIRECTORY]


def _show(values: tuple[str, ...]) -> str:
    return f"'{values[0]}'" if len(values) == 1 else "(" + ", ".join(f"'{v}'" for v in values) + ")"


def show(values) -> str:
    return _show(key(values))
