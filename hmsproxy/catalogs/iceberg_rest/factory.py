"""`VIA 'iceberg-rest'`: a remote database or table in an Iceberg REST catalog (docs/remotes.md).

Properties: `uri` (required, http(s)://, the catalog's base before /v1), `warehouse`, and either
OAuth2 client credentials (`credential` = 'client-id:secret' or 'secret', `scope`,
`oauth2-server-uri`, default <uri>/v1/oauth/tokens) or a bearer `token`; `hmsproxy.iceberg.writes`
= `commit` lets Iceberg writers commit through the link (commits.py; default `read-only`). The target
is the uri and warehouse: remotes on one share a health record and one login (the Tokens made here).
"""

from __future__ import annotations

from urllib.parse import urlparse

from hmsproxy.catalogs.client import CatalogMaker
from hmsproxy.catalogs.iceberg_rest.catalog import IcebergRestCatalog
from hmsproxy.catalogs.iceberg_rest.commits import COMMIT, READ_ONLY, WRITES_PROPERTY, CommittingIcebergRestCatalog
from hmsproxy.catalogs.iceberg_rest.http import RestHttp
from hmsproxy.catalogs.iceberg_rest.tokens import Tokens
from hmsproxy.catalogs.metastore import catalog_metastore
from hmsproxy.config.model import MetastoreConfig

NAME = "iceberg-rest"
URI, WAREHOUSE, CREDENTIAL, TOKEN, SCOPE, TOKEN_URI = "uri", "warehouse", "credential", "token", "scope", "oauth2-server-uri"
_TUNNEL_PREFIX = "ssh.tunnel."


class IcebergRestFactory:
    def validate(self, properties: dict[str, str]) -> None:
        uri = (properties.get(URI) or "").strip()
        if not uri:
            raise ValueError(f"property '{URI}' is required (the REST catalog's base URL, http(s)://host[:port][/path])")
        _http_url(URI, uri)
        if properties.get(TOKEN_URI):
            _http_url(TOKEN_URI, properties[TOKEN_URI].strip())
        credential = properties.get(CREDENTIAL)
        if credential is not None:
            client_id, sep, secret = credential.rpartition(":")
            if not secret or (sep and not client_id):
                raise ValueError(f"property '{CREDENTIAL}' must be 'client-id:secret' or 'secret'")
            if properties.get(TOKEN):
                raise ValueError(f"properties '{CREDENTIAL}' and '{TOKEN}' exclude each other: give one")
        if properties.get(WRITES_PROPERTY, READ_ONLY).strip().lower() not in (COMMIT, READ_ONLY):
            raise ValueError(f"property '{WRITES_PROPERTY}' must be '{COMMIT}' or '{READ_ONLY}', not '{properties[WRITES_PROPERTY]}'")
        tunnels = sorted(k for k in properties if k.startswith(_TUNNEL_PREFIX))
        if tunnels:
            raise ValueError(f"'{NAME}' catalogs are reached over HTTP(S), not SSH tunnels: remove {', '.join(tunnels)}")

    def where(self, properties: dict[str, str]) -> str:
        """The uri and warehouse (never the credential): how messages name the catalog, and its key."""
        uri = (properties.get(URI) or "").strip().rstrip("/")
        warehouse = (properties.get(WAREHOUSE) or "").strip()
        return f"{uri} warehouse {warehouse}" if warehouse else uri

    def commits(self, properties: dict[str, str]) -> bool:
        """Whether a link with these properties takes Iceberg writers' commits (its alter_table)."""
        return properties.get(WRITES_PROPERTY, READ_ONLY).strip().lower() == COMMIT

    def metastore(self, key: str, properties: dict[str, str]) -> MetastoreConfig:
        return catalog_metastore(key, self.where(properties), self.maker(properties), commits=self.commits(properties))

    def maker(self, properties: dict[str, str]) -> CatalogMaker:
        """Makes the target's clients, all sharing one Tokens (one login per target)."""
        self.validate(properties)
        uri = properties[URI].strip().rstrip("/")
        warehouse = (properties.get(WAREHOUSE) or "").strip() or None
        tokens = Tokens(
            (properties.get(TOKEN_URI) or "").strip() or f"{uri}/v1/oauth/tokens",
            credential=properties.get(CREDENTIAL),
            token=properties.get(TOKEN),
            scope=properties.get(SCOPE),
        )
        description = f"Iceberg REST catalog {self.where(properties)}"
        catalog = CommittingIcebergRestCatalog if self.commits(properties) else IcebergRestCatalog

        def maker(connect_timeout_s: float, call_timeout_s: float) -> IcebergRestCatalog:
            return catalog(RestHttp(uri, warehouse, tokens, description, (connect_timeout_s, call_timeout_s)))

        return maker


def _http_url(name: str, value: str) -> None:
    parsed = urlparse(value)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise ValueError(f"property '{name}' must be an http:// or https:// URL, not '{value}'")
