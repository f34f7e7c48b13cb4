"""Streaming ingest into Hive tables through the proxy (issue #27)."""
