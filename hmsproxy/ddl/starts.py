"""Telling a text is one of a set of statements by how it starts: one regex, no parser.

The composed grammar uses it (registry.py), and so do clients that only ask "is this hmsproxy's
statement or Spark's?" (features.is_hmsproxy_statement, for `hmsproxy sql` and the Spark helper).
So that asking loads neither lark nor any feature's statements, each feature keeps its starts in
its own starts.py, which its statements.py gives to its StatementSet."""

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
