"""Remote databases and tables: local names for objects in another metastore.

The standard rooms (docs/architecture.md, "A feature package"): feature.py, config.py,
statements.py + ddl.lark, runners.py, store.py, snapshot.py, protection.py (read-only remotes,
DROP unlinks, CREATE with link properties). Its own: links.py (a call's remote, how answers
show it), routes.py (where a call on a remote goes), listing.py (remotes in every listing),
targets.py, factories.py and tunnels.py (the metastores remotes point to), model.py (the records).
"""

#: The feature class, in feature.py.
FEATURE = "hmsproxy.features.remotes.feature:Remotes"
#: Its jobs and client helpers, by module (named, never imported: features import neither).
JOBS: tuple[str, ...] = ()
CLIENTS: tuple[str, ...] = ()
