"""hmsproxy's statements, composed from the features that define them.

Each feature brings a ``StatementSet``: a lark grammar fragment (its statement rules and its
own keywords), a builder per statement rule (parse tree -> Statement), the regexes that say a
text is one of its statements, and its soft keywords (words that are keywords only in its
statements, so they may still be used as names). ``Grammar`` joins the fragments to the shared
rules in base.lark, writes the ``?statement`` alternation and parses scripts with one LALR
parser. Runners live with the features (``Feature.statement_runners``), not here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path

from lark import Lark, Tree
from lark.exceptions import GrammarError, UnexpectedInput

from hmsproxy.ddl.starts import starts_regex
from hmsproxy.ddl.statements import Statement

BASE_GRAMMAR = Path(__file__).with_name("base.lark")
#: Keywords of base.lark that are names too where a name is expected.
BASE_SOFT_KEYWORDS = ("TABLES", "DATABASES", "DESC", "SHOW", "DESCRIBE", "TBLPROPERTIES", "DBPROPERTIES")

Builder = Callable[[Tree, str], Statement]


@dataclass(frozen=True)
class StatementSet:
    """One feature's statements."""

    #: Lark rules and terminals; each statement rule is a key of `builders`.
    grammar: str
    #: statement rule -> builder(tree, source text) -> Statement
    builders: Mapping[str, Builder]
    #: Regexes (case-insensitive) matching how its statements start, e.g. r"(?:CREATE|DROP)\s+REMOTE\b".
    starts: tuple[str, ...]
    soft_keywords: tuple[str, ...] = ()
    #: How a user would recognise them, for "not an hmsproxy statement" hints.
    summary: str = ""

    @classmethod
    def from_file(cls, path: Path, **kwargs) -> StatementSet:
        return cls(grammar=path.read_text(), **kwargs)


class Grammar:
    """The composed grammar of a set of features' statements."""

    def __init__(self, sets: Iterable[StatementSet]):
        self.sets = tuple(sets)
        self.builders: dict[str, Builder] = {}
        for s in self.sets:
            clash = self.builders.keys() & s.builders.keys()
            if clash:
                raise GrammarError(f"statement rules defined twice: {', '.join(sorted(clash))}")
            self.builders.update(s.builders)
        self.soft_keywords = tuple(dict.fromkeys([*BASE_SOFT_KEYWORDS, *(k for s in self.sets for k in s.soft_keywords)]))
        self._start = starts_regex(p for s in self.sets for p in s.starts)

    @cached_property
    def text(self) -> str:
        rules = " | ".join(self.builders) or "_NO_STATEMENTS"
        parts = [BASE_GRAMMAR.read_text(), *(s.grammar for s in self.sets), f"?statement: {rules}"]
        parts.append(f"_soft_keyword: {' | '.join(self.soft_keywords)}")
        if not self.builders:
            parts.append('_NO_STATEMENTS: "\\0"')
        return "\n".join(parts)

    @cached_property
    def lark(self) -> Lark:
        return _lalr(self.text)

    @property
    def summary(self) -> str:
        return "; ".join(s.summary for s in self.sets if s.summary)

    def is_statement(self, text: str) -> bool:
        """Does `text` start with one of these statements? (Cheap: a regex, no parsing.)"""
        return bool(self._start.match(text or ""))

    def parse(self, text: str) -> list[Statement]:
        """All statements of a script (';' between them, a trailing ';' optional); DdlSyntaxError if any is wrong."""
        from hmsproxy.ddl.parser import syntax_error

        try:
            tree = self.lark.parse(text)
        except UnexpectedInput as e:
            raise syntax_error(self, e, text) from None
        return [self._build(child, text) for child in tree.children if isinstance(child, Tree)]

    def _build(self, tree: Tree, text: str) -> Statement:
        source = text[tree.meta.start_pos : tree.meta.end_pos] if not tree.meta.empty else ""
        return self.builders[tree.data](tree, source)


@lru_cache(maxsize=8)
def _lalr(text: str) -> Lark:
    """The parser of one grammar text. Building its LALR tables takes seconds, and every handler
    (each reload, each test) composes the same few grammars; a parser keeps no state between parses.
    A new process (each `hmsproxy sql`) reads the tables an earlier one saved (protocol/user_cache.py)."""
    import lark

    from hmsproxy.protocol.user_cache import cache_file, open_own, write_atomically

    saved = cache_file("lark", [lark.__version__, text])
    if saved is not None:
        try:
            with open_own(saved) as fh:
                return Lark.load(fh)
        except Exception:  # noqa: BLE001 - not made yet, or damaged: build it
            pass
    parser = Lark(text, parser="lalr", propagate_positions=True, maybe_placeholders=True)
    if saved is not None:
        write_atomically(saved, parser.save)
    return parser
