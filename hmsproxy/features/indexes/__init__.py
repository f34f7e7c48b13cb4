"""Indexes (Hive's IndexDev): index metadata the proxy owns for every backend, index tables on the
base table's metastore, and the Hive 2.3 Thrift index calls answered from the proxy's store.

The standard rooms (docs/architecture.md, "A feature package"): feature.py, statements.py +
ddl.lark, runners.py, store.py, snapshot.py, protection.py (index tables and base tables against
any client). Its own: model.py (the records), calls.py (the Thrift index calls), recording.py
(builds carried by the rebuild's swap call), builds.py (what a build is), handlers.py (index
handlers, the proxy's side), compact.py (Hive's compact index), index_tables.py (index tables
dropped and released as the user), auto_rebuild.py (the AUTO REBUILD property).
"""

#: The feature class, in feature.py.
FEATURE = "hmsproxy.features.indexes.feature:Indexes"
#: Its jobs and client helpers, by module (named, never imported: features import neither).
JOBS = ("hmsproxy.jobs.rebuild_index", "hmsproxy.jobs.index_swaps", "hmsproxy.jobs.index_builders", "hmsproxy.jobs.index_watch")
CLIENTS = ("hmsproxy.clients.index_lookup", "hmsproxy.clients.indexed_read", "hmsproxy.clients.lookup_cli", "hmsproxy.clients.rebuilds")
