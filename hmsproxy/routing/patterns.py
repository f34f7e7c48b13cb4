"""Hive's name patterns: '*' matches anything, '|' separates alternatives, case-insensitive."""

from __future__ import annotations

import re
from functools import lru_cache


@lru_cache(maxsize=256)
def compile_hive_pattern(pattern: str) -> tuple[re.Pattern, ...]:
    compiled = []
    for alternative in pattern.split("|"):
        text = alternative.strip().replace("*", ".*")
        try:
            compiled.append(re.compile(text, re.IGNORECASE))
        except re.error:
            compiled.append(re.compile(re.escape(alternative.strip()), re.IGNORECASE))
    return tuple(compiled)


def hive_match(pattern: str | None, name: str) -> bool:
    if pattern is None or pattern in ("", "*"):
        return True
    return any(p.fullmatch(name) for p in compile_hive_pattern(pattern))


def is_literal(pattern: str | None) -> bool:
    """True if the pattern names exactly one object."""
    return bool(pattern) and not any(c in pattern for c in "*|.?[(+")
