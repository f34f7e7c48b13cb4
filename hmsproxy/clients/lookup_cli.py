"""`hmsproxy lookup TABLE --where COL=VALUE [--where "COL IN (V1, V2)"] [--format table|csv|json]`:
the matching rows through the table's compact index, read with pyarrow (no Spark).

Rows go to standard output; one line on standard error says what was read (the index used,
partitions fresh / scanned, files). Exit status: 0 done, 1 the lookup failed, 2 bad usage.
"""

from __future__ import annotations

import argparse
import datetime as dt
import decimal
import re
import sys

from hmsproxy.protocol.sasl_options import add_sasl_options, sasl_principal

_EQUALS = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$", re.S)
_IN = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s+IN\s*\((.*)\)\s*$", re.S | re.I)
_ITEM = re.compile(r"\s*('(?:[^']|'')*'|[^,]+?)\s*(?:,|$)")


def _unquote(text: str) -> str:
    return text[1:-1].replace("''", "'") if len(text) >= 2 and text[0] == text[-1] == "'" else text


def parse_where(text: str) -> tuple[str, list[str]]:
    """'user_id=42' -> ('user_id', ['42']); "country IN ('US', 'IN')" -> ('country', ['US', 'IN'])."""
    m = _IN.match(text)
    if m:
        items = [_unquote(i) for i in _ITEM.findall(m.group(2)) if i.strip()]
        if not items:
            raise argparse.ArgumentTypeError(f"no values in {text!r}")
        return m.group(1).lower(), items
    m = _EQUALS.match(text)
    if not m:
        raise argparse.ArgumentTypeError(f"expected COL=VALUE or 'COL IN (V1, V2)', not {text!r}")
    return m.group(1).lower(), [_unquote(m.group(2))]


def add_lookup_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "lookup",
        help="rows of a table by the values of its indexed columns, read through its compact index (no Spark)",
        description="Read the rows whose columns have these values, only from the files and row groups the "
        "table's compact index lists for partitions where it is fresh; other partitions are scanned.",
    )
    p.add_argument("table", metavar="TABLE", help="DATABASE.TABLE (or TABLE in database 'default')")
    p.add_argument(
        "--where", action="append", type=parse_where, required=True, metavar="COND", help="COL=VALUE or 'COL IN (V1, V2)' (repeatable: AND)"
    )
    p.add_argument("--format", choices=("table", "csv", "json"), default="table", help="how rows are printed (default: table)")
    p.add_argument("--uri", default="thrift://127.0.0.1:9083", help="the proxy (default thrift://127.0.0.1:9083)")
    p.add_argument("--user", help="look up as this user (set_ugi; default: the OS user)")
    add_sasl_options(p)
    p.set_defaults(func=cmd_lookup)


def _text(value) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    return str(value)


def _json_value(value):
    if isinstance(value, (dt.date, dt.datetime, decimal.Decimal, bytes)):
        return str(value)
    return value


def cmd_lookup(args) -> int:
    import csv  # here, not above: every command declares this one's options (hmsproxy.cli)
    import json

    from hmsproxy.clients.index_lookup import arrow_lookup
    from hmsproxy.ddl.results import ResultSet, format_table

    try:
        principal = sasl_principal(args)
    except ValueError as e:
        print(f"hmsproxy lookup: {e}", file=sys.stderr)
        return 2
    equals: dict[str, list[str]] = {}
    for column, values in args.where:
        if column in equals:
            print(f"hmsproxy lookup: --where names {column} twice", file=sys.stderr)
            return 2
        equals[column] = values
    try:
        result = arrow_lookup(args.uri, args.table, equals, user=args.user, sasl_principal=principal)
    except ValueError as e:
        print(f"hmsproxy lookup: {e}", file=sys.stderr)
        return 2
    except Exception as e:  # the proxy is down, no such table, unreadable files, ...
        print(f"hmsproxy lookup: {e}", file=sys.stderr)
        return 1
    rows = result.table.to_pylist()
    columns = result.table.column_names
    if args.format == "json":
        print(json.dumps([{k: _json_value(v) for k, v in r.items()} for r in rows]))
    elif args.format == "csv":
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows([["" if v is None else _text(v) for v in r.values()] for r in rows])
    else:
        print(format_table(ResultSet(columns, [[_text(v) for v in r.values()] for r in rows])))
    print(summary(result), file=sys.stderr)
    return 0


def summary(result) -> str:
    """What a lookup read, in one line."""
    plan = result.plan
    by_state: dict[str, int] = {}
    for read in plan.reads:
        by_state[read.state] = by_state.get(read.state, 0) + 1
    states = ", ".join(f"{n} {s}" for s, n in sorted(by_state.items()))
    used = f"index {plan.index}" if plan.index else "no index on these columns"
    return (
        f"{result.table.num_rows} row(s); {used}; partitions: {states or 'none'}; "
        f"read {result.files_opened} data file(s), {result.index_files_opened} index file(s), {result.bytes_read:,} bytes"
    )
