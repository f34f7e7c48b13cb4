"""A statement's syntax error: where it is, and what could have come instead.

Apart from the parser (parser.py, which loads lark) so that a client catching it loads no parser.
"""

from __future__ import annotations

from hmsproxy.pipeline.errors import InvalidRequest


class DdlSyntaxError(InvalidRequest):
    def __init__(self, message: str, line: int, column: int, expected: tuple[str, ...] = ()):
        self.line, self.column, self.expected = line, column, expected
        self.reason = message
        super().__init__(f"line {line}, column {column}: {message}")
