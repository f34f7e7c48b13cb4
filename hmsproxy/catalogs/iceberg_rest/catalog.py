"""An Iceberg REST catalog as a CatalogClient (catalogs/client.py): namespaces are databases (named
as names.py says), tables are described as describe.py says. One client per proxy connection; its
Tokens are the target's (shared)."""

from __future__ import annotations

from urllib.parse import quote

from hmsproxy.catalogs.client import CatalogRefused
from hmsproxy.catalogs.iceberg_rest import describe, names
from hmsproxy.catalogs.iceberg_rest.hive_types import UnknownIcebergType
from hmsproxy.catalogs.iceberg_rest.http import RestHttp

#: Listings are paged (`pageToken` / `next-page-token`); at most this many pages are followed.
MAX_PAGES = 10_000


class IcebergRestCatalog:
    def __init__(self, http: RestHttp):
        self.http = http
        self.description = http.description

    def open(self) -> None:
        self.http.handshake()

    def close(self) -> None:
        self.http.close()

    def databases(self) -> list[str]:
        """Every namespace, nested ones too (each level's children listed with `parent`)."""
        found, todo = [], [None]
        while todo:
            parent = todo.pop()
            params = {"parent": names.query_value(parent)} if parent else {}
            what = f"no namespace '{parent}'" if parent else "no namespaces endpoint"
            for namespace in self._pages("/namespaces", params, "namespaces", what):
                name = names.database_name(namespace)
                found.append(name)
                todo.append(name)
        return sorted(found)

    def database(self, name: str):
        answer = self.http.get(f"/namespaces/{names.path_segment(name)}", None, f"no namespace '{name}'")
        warehouse = self.http.settings.get("warehouse")
        default = f"{warehouse.rstrip('/')}/{'/'.join(names.levels(name))}" if warehouse else None
        return describe.database(name, answer.get("properties") or {}, default)

    def tables(self, database: str) -> list[str]:
        path = f"/namespaces/{names.path_segment(database)}/tables"
        return [i["name"] for i in self._pages(path, {}, "identifiers", f"no namespace '{database}'")]

    def table(self, database: str, name: str):
        path = f"/namespaces/{names.path_segment(database)}/tables/{quote(name, safe='')}"
        loaded = self.http.get(path, {"snapshots": "refs"}, f"no table '{database}.{name}'")
        try:
            return describe.table(database, name, loaded)
        except UnknownIcebergType as e:
            raise CatalogRefused(f"{self.description}: table '{database}.{name}' can't be shown to Hive clients: {e}") from None

    def _pages(self, path: str, params: dict, key: str, missing: str) -> list:
        items, token = [], None
        for _ in range(MAX_PAGES):
            answer = self.http.get(path, {**params, "pageToken": token} if token else params or None, missing)
            items.extend(answer.get(key) or ())
            token = answer.get("next-page-token")
            if not token:
                break
        return items
