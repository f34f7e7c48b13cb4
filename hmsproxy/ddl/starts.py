"""Telling a text is one of a set of statements by how it starts: one regex, no parser (lark loads
only when a script is parsed). Used by the composed grammar (registry.py) and, without any grammar,
by clients that only ask "is this hmsproxy's statement or Spark's?" (features.is_hmsproxy_statement)."""

from __future__ import annotations

import re
from collections.abc import Iterable

#: Whitespace, comments and empty statements before a statement.
LEADING_NOISE = r"(?:\s+|--[^\n]*(?:\n|\Z)|/\*.*?\*/|;)*"


def starts_regex(starts: Iterable[str]) -> re.Pattern:
    """Matches a text that starts (after LEADING_NOISE) with any of `starts` (case-insensitive);
    with none, matches nothing."""
    alternatives = "|".join(f"(?:{p})" for p in starts) or r"(?!)"
    return re.compile(rf"\A{LEADING_NOISE}(?:{alternatives})", re.I | re.S)
