"""Iceberg REST catalogs served as read-only Hive metastores (`VIA 'iceberg-rest'`, docs/remotes.md).

- factory.py: the `iceberg-rest` client factory (properties, the target, the catalog maker);
- catalog.py: the CatalogClient (catalogs/client.py) over the REST protocol's read endpoints;
- http.py: one requests Session per client, the `/v1/config` handshake, errors mapped to catalog errors;
- tokens.py: OAuth2 client credentials or a bearer token, shared by a target's connections;
- names.py: namespaces as Hive database names; describe.py and hive_types.py: Iceberg metadata
  as the Hive Table Iceberg's own HiveCatalog writes.
"""
