"""hmsproxy's own statements: the shared grammar rules, composing features' fragments, parsing, running.

The statements of the features hmsproxy ships are composed in `hmsproxy.features`
(`builtin_grammar`, `parse`, ...); a proxy composes those of the features it installed.
"""

from hmsproxy.ddl.errors import DdlSyntaxError

__all__ = ["DdlSyntaxError"]
