"""Dependent tables (../shared/design/hive-dependent-tables.md, "Final Proposal"): published partitions
that depend on partitions of other tables, served to clients as views the proxy writes.

The standard rooms (docs/architecture.md, "A feature package"): feature.py, config.py,
statements.py + ddl.lark, runners.py, store.py, snapshot.py, protection.py (changes to tables
others depend on). Its own: model.py (the records), view.py (the view each dependent table is
served as), lineage.py (lineage events and their sink), schema_change.py (which column changes
the propagate policy carries over).
"""

#: The feature class, in feature.py.
FEATURE = "hmsproxy.features.dependent.feature:Dependent"
#: Its jobs and client helpers, by module (named, never imported: features import neither).
JOBS: tuple[str, ...] = ()
CLIENTS: tuple[str, ...] = ()
