"""Mapped tables: hiding tables a metastore's `mapped-tables` leave out of lists."""

from __future__ import annotations

from hmsproxy.routing.router import Route

#: Methods answering a list of table names of one database.
TABLE_NAME_LISTS = frozenset({"get_all_tables", "get_tables", "get_tables_by_type", "get_table_names_by_filter"})


def filter_tables(method: str, route: Route, success):
    """The answer of `method` without the tables the route's metastore hides."""
    naming, db = route.naming, route.backend_db
    if success is None:
        return None
    if method in TABLE_NAME_LISTS:
        return [t for t in success if naming.table_visible(db, t)]
    if method == "get_table_objects_by_name":
        return [t for t in success if naming.table_visible(db, t.tableName)]
    if method == "get_table_objects_by_name_req":
        success.tables = [t for t in success.tables or [] if naming.table_visible(db, t.tableName)]
    return success


def has_table_lists(method: str) -> bool:
    return method in TABLE_NAME_LISTS or method.startswith("get_table_objects_by_name")
