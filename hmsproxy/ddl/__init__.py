"""hmsproxy's own statements (CREATE/DROP/SHOW/DESCRIBE REMOTE ...): grammar, parser, executor."""

from hmsproxy.ddl.parser import DdlSyntaxError, is_hmsproxy_statement, parse, split

__all__ = ["DdlSyntaxError", "is_hmsproxy_statement", "parse", "split"]
