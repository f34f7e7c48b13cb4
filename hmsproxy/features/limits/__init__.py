"""Limits (issue #28): token buckets per user, per client address and per method class, and a cap on
concurrent calls per metastore. A call over a limit is refused with a MetaException naming the limit
and when to retry, or waits up to `limits.queue-s` first.

Rooms (docs/architecture.md, "A feature package"): feature.py (the on_arrival hook, metrics,
reloads), config.py (the `limits` section). Its own: classes.py (which class a method belongs to),
buckets.py (the token buckets and the rules choosing them). The per-metastore cap is enforced where
backend calls happen, upstream/slots.py; this feature only sets it. Every limit is per process.
"""

#: The feature class, in feature.py.
FEATURE = "hmsproxy.features.limits.feature:Limits"
#: Its jobs and client helpers, by module (named, never imported: features import neither).
JOBS: tuple[str, ...] = ()
CLIENTS: tuple[str, ...] = ()
