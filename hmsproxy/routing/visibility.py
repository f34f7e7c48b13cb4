"""Mapped tables: hiding tables a metastore's `mapped-tables` leave out of lists."""

from __future__ import annotations

from hmsproxy.routing.methods import MethodSpec
from hmsproxy.routing.router import Route


def filter_tables(spec: MethodSpec, route: Route, success):
    """The answer of `spec` without the tables the route's metastore hides."""
    naming, db = route.naming, route.backend_db
    if success is None:
        return None
    if spec.lists_table_names:
        return [t for t in success if naming.table_visible(db, t)]
    if spec.name == "get_table_objects_by_name":
        return [t for t in success if naming.table_visible(db, t.tableName)]
    if spec.name == "get_table_objects_by_name_req":
        success.tables = [t for t in success.tables or [] if naming.table_visible(db, t.tableName)]
    return success


def has_table_lists(spec: MethodSpec) -> bool:
    return spec.lists_table_names or spec.lists_table_objects
