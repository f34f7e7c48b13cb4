"""Text -> statements with the composed grammar (ddl/registry.py), and syntax errors in words."""

from __future__ import annotations

from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from hmsproxy.ddl.errors import DdlSyntaxError

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


# -- errors ---------------------------------------------------------------------------


def _expected_words(names, name_tokens: set[str]) -> tuple[str, ...]:
    names = set(names)
    words: list[str] = []
    if names & name_tokens and names & {"IDENT", "QUOTED_IDENT"}:
        names -= name_tokens
        words.append("a name")
    keywords = sorted(n for n in names if n not in _WORDS and n.isupper() and n.isalpha())
    words.extend(keywords)
    for n in sorted(names - set(keywords), key=lambda n: (n in ("SEMICOLON", "$END"), n)):
        w = _WORDS.get(n, n.lower())
        if w not in words:
            words.append(w)
    return tuple(words)


def _acceptable(grammar, e: UnexpectedInput, text: str) -> set[str]:
    """The terminals that could really come next.

    LALR's table for the failing state over-approximates (after `db.t` it still
    lists '.'), so ask an interactive parser, which tries each one.
    """
    if isinstance(e, UnexpectedToken) and getattr(e, "accepts", None):
        return set(e.accepts)
    if isinstance(e, UnexpectedCharacters):
        try:
            ip = grammar.lark.parse_interactive(text[: e.pos_in_stream])
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


def syntax_error(grammar, e: UnexpectedInput, text: str) -> DdlSyntaxError:
    """`e` as a DdlSyntaxError: where, what was found and what could have come instead."""
    # Soft keywords are names too; listing them all in "expected" would only confuse.
    name_tokens = {"IDENT", "QUOTED_IDENT", *grammar.soft_keywords}
    expected = _expected_words(_acceptable(grammar, e, text), name_tokens)
    line, column = getattr(e, "line", -1), getattr(e, "column", -1)
    at_end = isinstance(e, UnexpectedEOF) or (isinstance(e, UnexpectedToken) and e.token.type == "$END")
    if at_end or line in (-1, None):  # report where the input ends
        lines = text.split("\n")
        line, column = len(lines), len(lines[-1]) + 1
    found = _found(e, text)
    if len(expected) > 1:
        what = f"expected one of: {', '.join(expected)}"
    else:
        what = f"expected {expected[0]}" if expected else "unexpected input"
    message = f"found {found} but {what}"
    if not grammar.is_statement(text) and grammar.summary:
        message += f" (hmsproxy's statements are {grammar.summary})"
    return DdlSyntaxError(message, line, column, expected)
