"""Remote databases and tables: local names for objects in another metastore."""
