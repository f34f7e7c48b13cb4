"""Skewed tables and list bucketing (../shared/design/hive-list-bucketing.md).

The standard rooms (docs/architecture.md, "A feature package"): feature.py, statements.py +
ddl.lark, runners.py (ALTER TABLE ... SKEWED BY and friends, SHOW SKEW), protection.py (skew
kept valid and in place against every client). Its own: create.py (CREATE TABLE ... SKEWED BY
and the Table it makes), spec.py (SKEWED BY ... ON ... from parse trees), rules.py (what valid
skew is), layout.py (the record the layout job leaves on each partition it laid out; compact
keeps it, jobs/compact_layout.py; the one-pass jobs read it too, skew_pass.py and compact_pass.py).
"""

#: The feature class, in feature.py.
FEATURE = "hmsproxy.features.skew.feature:Skew"
#: Its jobs and client helpers, by module (named, never imported: features import neither).
JOBS = ("hmsproxy.jobs.skew_layout", "hmsproxy.jobs.skew_pass", "hmsproxy.jobs.compact_layout", "hmsproxy.jobs.compact_pass")
CLIENTS = ("hmsproxy.clients.pruned_read",)
