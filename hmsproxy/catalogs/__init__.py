"""Catalogs that don't speak Thrift, served as Hive metastores (docs/remotes.md).

A remote's `VIA` factory (features/remotes/factories.py) returns a MetastoreConfig; for a catalog
without a Thrift API it carries a `catalog` maker, and Backends then connects with a
CatalogConnection (connection.py) over the CatalogClient (client.py) it makes, instead of a socket.
Iceberg REST (iceberg_rest/) and AWS Glue (glue.py) are such clients.
"""
