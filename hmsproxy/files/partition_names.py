"""Hive's names for partitions: `k=v/k2=v2`, special characters %-escaped as Hive's FileUtils does."""

from __future__ import annotations

#: Partitions asked for by name in one get_partitions_by_names call (a long list goes in pieces).
NAMES_PER_CALL = 100

#: Characters Hive's FileUtils.escapePathName writes as %XX in directory names.
_HIVE_ESCAPED = set("\"#%'*/:=?\\\x7f{[]^")


def hive_escape(text: str) -> str:
    return "".join(f"%{ord(c):02X}" if c in _HIVE_ESCAPED or ord(c) < 0x20 else c for c in text)


def partition_name(keys: list[str], values: dict[str, str]) -> str:
    """Hive's name of the partition with these values: 'ds=2026-11-01/hr=3' (escaped as Hive does)."""
    return "/".join(f"{hive_escape(k)}={hive_escape(values[k])}" for k in keys)
