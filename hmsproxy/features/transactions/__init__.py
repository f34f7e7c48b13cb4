"""Transactions, locks and write ids across the federation: every id reaches the metastore that owns it.

Rooms: feature.py (the hooks: which call goes where, with which real ids), ids.py (how an id names
its metastore), store.py (bindings and metastore slots in the proxy's store), bindings.py (binding a
transaction to its metastore), views.py (show_locks, get_open_txns_info and show_compact merged
across metastores), write_ids.py (get_valid_write_ids: table names and the transaction snapshot).
docs/transactions.md says what a client sees.
"""

#: The feature class, in feature.py.
FEATURE = "hmsproxy.features.transactions.feature:Transactions"
#: Its jobs and client helpers, by module (named, never imported: features import neither).
JOBS: tuple[str, ...] = ()
CLIENTS: tuple[str, ...] = ()
