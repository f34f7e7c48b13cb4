"""Remote databases and tables: local names for objects that live in another metastore."""
