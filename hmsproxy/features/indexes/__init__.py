"""Indexes (Hive's IndexDev): index metadata the proxy owns for every backend, index tables on the
base table's metastore, and the Hive 2.3 Thrift index calls answered from the proxy's store."""
