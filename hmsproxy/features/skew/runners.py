"""What the skew statements do: read the table, change its SkewedInfo, check it, alter it."""

from __future__ import annotations

from hmsproxy.ddl.executor import StatementContext, status
from hmsproxy.ddl.results import ResultSet
from hmsproxy.features.skew import layout, rules
from hmsproxy.features.skew import statements as st
from hmsproxy.features.skew.create import CreateSkewedTable
from hmsproxy.pipeline.errors import InvalidRequest, NotFound
from hmsproxy.protocol import idl

hive = idl.hive

SHOW_COLUMNS = ["partition", "skewed_columns", "skewed_values", "stored_as_directories", "locations", "layout"]


class Runners:
    """The runners of the skew statements; they keep no state (skew is the metastore's own metadata)."""

    def runners(self) -> dict:
        return {
            CreateSkewedTable: self.create_table,
            st.AlterSkew: self.alter_skew,
            st.AlterNotSkewed: self.not_skewed,
            st.AlterNotDirectories: self.not_directories,
            st.AlterSkewedLocation: self.set_location,
            st.ShowSkew: self.show_skew,
        }

    def create_table(self, s: CreateSkewedTable, ctx: StatementContext) -> ResultSet:
        db = s.database or ctx.database
        table = s.table(db, ctx.user)
        problems = rules.table_problems(table)
        if problems:
            raise InvalidRequest(f"hmsproxy: {db}.{s.name}: " + "; ".join(problems))
        if s.if_not_exists and ctx.client.exists("get_table", dbname=db, tbl_name=s.name):
            return status(f"{db}.{s.name} exists already (IF NOT EXISTS): nothing done")
        ctx.client.call("create_table", tbl=table)
        return status(f"created {db}.{s.name}, skewed by ({', '.join(s.skewed_columns)}) on {len(s.values)} value(s)")

    def alter_skew(self, s: st.AlterSkew, ctx: StatementContext) -> ResultSet:
        db, table = _get(ctx, s)
        # Hive's ALTER ... SKEWED BY replaces the skew whole, locations included.
        table.sd.skewedInfo = hive.SkewedInfo(
            skewedColNames=list(s.columns), skewedColValues=[list(v) for v in s.values], skewedColValueLocationMaps={}
        )
        table.sd.storedAsSubDirectories = s.directories
        _alter(ctx, db, table)
        how = " stored as directories" if s.directories else ""
        return status(
            f"{db}.{s.table} is skewed by ({', '.join(s.columns)}) on {len(s.values)} value(s){how}; "
            "partitions added from now on carry it, existing ones keep theirs"
        )

    def not_skewed(self, s: st.AlterNotSkewed, ctx: StatementContext) -> ResultSet:
        db, table = _get(ctx, s)
        table.sd.skewedInfo = hive.SkewedInfo(skewedColNames=[], skewedColValues=[], skewedColValueLocationMaps={})
        table.sd.storedAsSubDirectories = False  # NOT SKEWED turns list bucketing off too
        _alter(ctx, db, table)
        return status(f"{db}.{s.table} is not skewed any more (existing partitions keep theirs)")

    def not_directories(self, s: st.AlterNotDirectories, ctx: StatementContext) -> ResultSet:
        db, table = _get(ctx, s)
        table.sd.storedAsSubDirectories = False
        _alter(ctx, db, table)
        return status(f"{db}.{s.table} is not stored as directories any more; its skew stays")

    def set_location(self, s: st.AlterSkewedLocation, ctx: StatementContext) -> ResultSet:
        db, table = _get(ctx, s)
        if not rules.is_skewed(table.sd):
            raise InvalidRequest(f"hmsproxy: {db}.{s.table} is not skewed: SKEWED BY first")
        info = table.sd.skewedInfo
        locations = {rules.key(k): v for k, v in (info.skewedColValueLocationMaps or {}).items()}
        locations.update({rules.key(values): where for values, where in s.locations})
        info.skewedColValueLocationMaps = locations
        _alter(ctx, db, table)
        return status(f"{db}.{s.table}: {len(s.locations)} skewed location(s) set")

    def show_skew(self, s: st.ShowSkew, ctx: StatementContext) -> ResultSet:
        db, table = _get(ctx, s)
        rows = [_row("(table)", table.sd, table.parameters)]
        keys = [c.name.lower() for c in table.partitionKeys or []]
        if s.partition is not None:
            asked = dict(s.partition)
            unknown = sorted(set(asked) - set(keys))
            if unknown:
                raise InvalidRequest(
                    f"hmsproxy: {db}.{s.table} has no partition column {', '.join(unknown)} (it has: {', '.join(keys) or 'none'})"
                )
            if len(asked) == len(keys):  # one partition: fetched by name
                name = "/".join(f"{k}={asked[k]}" for k in keys)
                parts = ctx.client.call("get_partitions_by_names", db_name=db, tbl_name=s.table, names=[name]) or []
            else:  # a partial spec: every partition it matches
                parts = [p for p in _partitions(ctx, db, s.table) if all(dict(zip(keys, p.values)).get(k) == v for k, v in asked.items())]
            if not parts:
                spec = ", ".join(f"{k}='{v}'" for k, v in s.partition)
                raise NotFound(f"hmsproxy: {db}.{s.table} has no partition ({spec})")
        else:
            parts = _partitions(ctx, db, s.table) if keys else []
        for p in parts:
            rows.append(_row("/".join(f"{k}={v}" for k, v in zip(keys, p.values)), p.sd, p.parameters))
        return ResultSet(list(SHOW_COLUMNS), rows)


def _get(ctx: StatementContext, s) -> tuple[str, object]:
    db = s.database or ctx.database
    return db, ctx.client.call("get_table", dbname=db, tbl_name=s.table)


def _alter(ctx: StatementContext, db: str, table) -> None:
    problems = rules.table_problems(table)
    if problems:
        raise InvalidRequest(f"hmsproxy: {db}.{table.tableName}: " + "; ".join(problems))
    context = hive.EnvironmentContext(properties={rules.CHANGE_MARK: "true"})
    ctx.client.call("alter_table_with_environment_context", dbname=db, tbl_name=table.tableName, new_tbl=table, environment_context=context)


def _partitions(ctx: StatementContext, db: str, table: str) -> list:
    return sorted(ctx.client.call("get_partitions", db_name=db, tbl_name=table, max_parts=-1) or [], key=lambda p: p.values)


def _row(where: str, sd, parameters) -> list[str]:
    if not rules.is_skewed(sd):
        return [where, "", "", "false", "", "not skewed"]
    info = sd.skewedInfo
    values = ", ".join(rules.show(v) for v in info.skewedColValues or [])
    locations = ", ".join(f"{rules.show(k)}={v}" for k, v in sorted((info.skewedColValueLocationMaps or {}).items()))
    return [where, ", ".join(info.skewedColNames), values, str(bool(sd.storedAsSubDirectories)).lower(), locations, _layout(parameters)]


def _layout(parameters) -> str:
    """What the skew-layout job recorded for this partition (layout.py). Whether the files still
    match it is checked by readers, which can list them; a rewritten partition reads in full."""
    record = layout.from_parameters(parameters)
    if record is None:
        return "not laid out"
    how = "directories" if record.subdirectories else "flat"
    return f"{len(record.groups)} groups ({how}), {record.rows} rows, laid out {record.laid_out_at}"
