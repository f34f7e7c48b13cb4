"""Text → statements, with the one grammar in grammar.lark."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from hmsproxy.ddl import statements as st

GRAMMAR = Path(__file__).with_name("grammar.lark")

#: What a terminal is, in words, for error messages.
_WORDS = {
    "IDENT": "a name",
    "QUOTED_IDENT": "a name",
    "SINGLE_QUOTED": "a quoted string",
    "DOUBLE_QUOTED": "a quoted string",
    "SEMICOLON": ";",
    "$END": ";",
    "LPAR": "(",
    "RPAR": ")",
    "EQUAL": "=",
    "COMMA": "a comma",
    "DOT": ".",
}
#: Soft keywords are names too; listing them all in "expected" would only confuse.
_NAME_TOKENS = {
    "IDENT",
    "QUOTED_IDENT",
    "REMOTE",
    "TABLES",
    "DATABASES",
    "CONNECTED",
    "VIA",
    "TBLPROPERTIES",
    "DBPROPERTIES",
    "DESC",
    "SHOW",
    "DESCRIBE",
}

#: CREATE/DROP/SHOW REMOTE is never Spark SQL (so a typo after REMOTE gets our error message);
#: DESCRIBE remote may be a table called "remote", so the next word must be ours too.
_STATEMENT_START = re.compile(
    r"\A(?:\s+|--[^\n]*(?:\n|\Z)|/\*.*?\*/|;)*"
    r"(?:(?:CREATE|DROP|SHOW)\s+REMOTE\b|DESC(?:RIBE)?\s+REMOTE\s+(?:TABLE|DATABASE|SCHEMA)\b)",
    re.I | re.S,
)


class DdlSyntaxError(ValueError):
    def __init__(self, message: str, line: int, column: int, expected: tuple[str, ...] = ()):
        self.line, self.column, self.expected = line, column, expected
        self.reason = message
        super().__init__(f"line {line}, column {column}: {message}")


@lru_cache(maxsize=1)
def _parser() -> Lark:
    return Lark(GRAMMAR.read_text(), parser="lalr", propagate_positions=True, maybe_placeholders=True)


def is_hmsproxy_statement(text: str) -> bool:
    """Does `text` start with one of hmsproxy's statements? (Cheap: no parsing.)"""
    return bool(_STATEMENT_START.match(text or ""))


def parse(text: str) -> list[st.Statement]:
    """All statements of a script (';' between them, a trailing ';' optional)."""
    try:
        tree = _parser().parse(text)
    except UnexpectedInput as e:
        raise _syntax_error(e, text) from None
    return [_statement(child, text) for child in tree.children if isinstance(child, Tree)]


def split(text: str) -> list[str]:
    """Each statement's own text, for sending a script one statement at a time."""
    return [s.source for s in parse(text)]


# -- errors ---------------------------------------------------------------------------


def _expected_words(names) -> tuple[str, ...]:
    names = set(names)
    words: list[str] = []
    if names & _NAME_TOKENS and names & {"IDENT", "QUOTED_IDENT"}:
        names -= _NAME_TOKENS
        words.append("a name")
    keywords = sorted(n for n in names if n not in _WORDS and n.isupper() and n.isalpha())
    words.extend(keywords)
    for n in sorted(names - set(keywords), key=lambda n: (n in ("SEMICOLON", "$END"), n)):
        w = _WORDS.get(n, n.lower())
        if w not in words:
            words.append(w)
    return tuple(words)


def _acceptable(e: UnexpectedInput, text: str) -> set[str]:
    """The terminals that could really come next.

    LALR's table for the failing state over-approximates (after `db.t` it still
    lists '.'), so ask an interactive parser, which tries each one.
    """
    if isinstance(e, UnexpectedToken) and getattr(e, "accepts", None):
        return set(e.accepts)
    if isinstance(e, UnexpectedCharacters):
        try:
            ip = _parser().parse_interactive(text[: e.pos_in_stream])
            ip.exhaust_lexer()
            return set(ip.accepts())
        except UnexpectedInput:
            return set(e.allowed or ())
    return set(getattr(e, "expected", None) or ())


def _found(e: UnexpectedInput, text: str) -> str:
    if isinstance(e, UnexpectedEOF) or (isinstance(e, UnexpectedToken) and e.token.type == "$END"):
        return "the end of the input"
    if isinstance(e, UnexpectedToken):
        return repr(str(e.token))
    return repr(text[e.pos_in_stream : e.pos_in_stream + 1]) if e.pos_in_stream is not None else "a character"


def _syntax_error(e: UnexpectedInput, text: str) -> DdlSyntaxError:
    expected = _expected_words(_acceptable(e, text))
    line, column = getattr(e, "line", -1), getattr(e, "column", -1)
    at_end = isinstance(e, UnexpectedEOF) or (isinstance(e, UnexpectedToken) and e.token.type == "$END")
    if at_end or line in (-1, None):  # report where the input ends
        lines = text.split("\n")
        line, column = len(lines), len(lines[-1]) + 1
    found = _found(e, text)
    what = f"expected one of: {', '.join(expected)}" if len(expected) > 1 else f"expected {expected[0]}" if expected else "unexpected input"
    message = f"found {found} but {what}"
    if not is_hmsproxy_statement(text):
        message += " (hmsproxy's statements are CREATE/DROP/SHOW/DESCRIBE REMOTE ...)"
    return DdlSyntaxError(message, line, column, expected)


# -- tree → statements ------------------------------------------------------------------


def _unquote_ident(tok: Token) -> str:
    s = str(tok)
    if tok.type == "QUOTED_IDENT":
        return s[1:-1].replace("``", "`")
    return s


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", "'": "'", '"': '"'}


def _unquote_string(tok: Token) -> str:
    body, quote = str(tok)[1:-1], str(tok)[0]
    body = body.replace(quote * 2, quote)
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), body, flags=re.S)


def _name(tree: Tree) -> str:
    return _unquote_ident(tree.children[0]).lower()


def _qualified(tree: Tree) -> tuple[str | None, str]:
    first, second = tree.children
    return (None, _name(first)) if second is None else (_name(first), _name(second))


def _string(tree: Tree) -> str:
    return _unquote_string(tree.children[0])


def _find(tree: Tree, data: str) -> Tree | None:
    for c in tree.children:
        if isinstance(c, Tree) and c.data == data:
            return c
    return None


def _properties(tree: Tree) -> dict[str, str]:
    props = _find(tree, "properties")
    if props is None:
        return {}
    return {_string(p.children[0]): _string(p.children[1]) for p in props.children if isinstance(p, Tree)}


def _via(tree: Tree) -> str:
    via = _find(tree, "via")
    return _string(via.children[1]).strip() if via is not None else st.DEFAULT_FACTORY


def _statement(tree: Tree, text: str) -> st.Statement:
    source = text[tree.meta.start_pos : tree.meta.end_pos] if not tree.meta.empty else ""
    kind = tree.data
    if kind == "create_table":
        db, name = _qualified(_find(tree, "qualified"))
        connected = _find(tree, "connected_table")
        rdb, rname = _qualified(_find(connected, "qualified")) if connected is not None else (None, name)
        return st.CreateRemoteTable(
            db, name, rdb, rname, _via(tree), _properties(tree), _find(tree, "if_not_exists") is not None, source=source
        )
    if kind == "create_database":
        name = _name(_find(tree, "name"))
        connected = _find(tree, "connected_database")
        rname = _name(_find(connected, "name")) if connected is not None else name
        return st.CreateRemoteDatabase(name, rname, _via(tree), _properties(tree), _find(tree, "if_not_exists") is not None, source=source)
    if kind == "drop_table":
        db, name = _qualified(_find(tree, "qualified"))
        return st.DropRemoteTable(db, name, _find(tree, "if_exists") is not None, source=source)
    if kind == "drop_database":
        return st.DropRemoteDatabase(_name(_find(tree, "name")), _find(tree, "if_exists") is not None, source=source)
    if kind == "show_tables":
        db = _find(tree, "name")
        return st.ShowRemoteTables(_name(db) if db is not None else None, source=source)
    if kind == "show_databases":
        return st.ShowRemoteDatabases(source=source)
    if kind == "describe_table":
        db, name = _qualified(_find(tree, "qualified"))
        return st.DescribeRemoteTable(db, name, source=source)
    if kind == "describe_database":
        return st.DescribeRemoteDatabase(_name(_find(tree, "name")), source=source)
    raise AssertionError(f"grammar rule without a statement: {kind}")
