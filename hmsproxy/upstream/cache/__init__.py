"""The metadata cache: answers of caller-independent read calls, per metastore, with invalidation
by the proxy's own writes, by the metastore's notification log and by TTL (docs/operations.md, "Metadata cache")."""
