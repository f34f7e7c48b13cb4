"""`thrift://host:port`, the way Hive writes a metastore's address."""

from __future__ import annotations

from urllib.parse import urlparse


def parse_uri(uri: str) -> tuple[str, int]:
    parsed = urlparse(uri.strip())
    if parsed.scheme != "thrift" or not parsed.hostname or not parsed.port:
        raise ValueError(f"not a thrift://host:port URI: {uri!r}")
    return parsed.hostname, parsed.port
