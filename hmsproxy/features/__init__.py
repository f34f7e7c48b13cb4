"""The features hmsproxy ships, each on the platform (pipeline/platform.py); app.py installs them.

A proxy parses statements with the grammar of the features it installed (features/statements.py).
Clients that read a script before sending it (the Python client splits out index rebuilds, the
Spark helper tells hmsproxy's statements from Spark's) parse with these same features' statements:
`builtin_grammar` (tests/contract/test_layout.py keeps it equal to app.FEATURES' statements).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the grammar loads when a script is first read: importing a feature's module stays cheap
    from hmsproxy.ddl.registry import Grammar
    from hmsproxy.ddl.statements import Statement


@lru_cache(maxsize=1)
def builtin_grammar() -> Grammar:
    """The statements of the features hmsproxy ships, in app.FEATURES' order."""
    from hmsproxy.ddl.registry import Grammar
    from hmsproxy.features.dependent.statements import STATEMENTS as dependent
    from hmsproxy.features.indexes.statements import STATEMENTS as indexes
    from hmsproxy.features.remotes.statements import STATEMENTS as remotes
    from hmsproxy.features.skew.statements import STATEMENTS as skew

    return Grammar((remotes, skew, dependent, indexes))


def is_hmsproxy_statement(text: str) -> bool:
    """Does `text` start with one of hmsproxy's statements? (Cheap: a regex, and no grammar loaded.)"""
    return _builtin_starts().match(text or "") is not None


@lru_cache(maxsize=1)
def _builtin_starts() -> re.Pattern:
    """builtin_grammar()'s `is_statement` regex, from the features' starts.py alone: `hmsproxy sql` asks
    this of every script, and loading the features' statements costs more than the rest of the command."""
    from hmsproxy.ddl.starts import starts_regex
    from hmsproxy.features.dependent.starts import STARTS as dependent
    from hmsproxy.features.indexes.starts import STARTS as indexes
    from hmsproxy.features.remotes.starts import STARTS as remotes
    from hmsproxy.features.skew.starts import STARTS as skew

    return starts_regex((*remotes, *skew, *dependent, *indexes))


def parse(text: str) -> list[Statement]:
    """All statements of a script (DdlSyntaxError when any is wrong)."""
    return builtin_grammar().parse(text)


def split(text: str) -> list[str]:
    """Each statement's own text, for sending a script one statement at a time."""
    return [s.source for s in parse(text)]
