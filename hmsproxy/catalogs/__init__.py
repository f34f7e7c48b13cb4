"""Catalogs that don't speak Thrift, served as Hive metastores (docs/remotes.md).

A remote's `VIA` factory (features/remotes/factories.py) returns a MetastoreConfig; for a catalog
without a Thrift API its `connect` makes CatalogConnections (connection.py) over the CatalogClient
(client.py) the factory's maker makes, and Backends uses those instead of a socket;
metastore.py builds that MetastoreConfig (`catalog_metastore`).
Iceberg REST (iceberg_rest/) and AWS Glue (glue.py) are such clients.
"""
