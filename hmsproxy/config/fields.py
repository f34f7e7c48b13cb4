"""Typed readers for single configuration values, and for sections of keys.

Each reader takes the :class:`~hmsproxy.config.errors.Ctx`, the key path and the raw YAML
value, and returns the checked value or raises :class:`~hmsproxy.config.errors.ConfigError`.
:func:`read_section` picks a mapping's keys (strict in hmsproxy's own format, forgiving in
Waggle Dance's); the ``ignored_*`` handlers deal with Waggle Dance keys hmsproxy accepts
but does not act on.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from hmsproxy.config.errors import Ctx, at_index, join_key, kind_of

_JAVA_TIME_UNITS = (
    "NANOSECONDS",
    "MICROSECONDS",
    "MILLISECONDS",
    "SECONDS",
    "MINUTES",
    "HOURS",
    "DAYS",
)
_URI_RE = re.compile(
    r"^thrift://(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)"
    r":(?P<port>\d+)/?$"
)


# --------------------------------------------------------------------------------------
# Scalar and collection readers


def read_str(ctx: Ctx, path: str, value: Any, *, allow_empty: bool = False) -> str:
    """A string; YAML numbers are taken as their text (Waggle Dance does the same)."""
    if isinstance(value, bool) or value is None or isinstance(value, (dict, list)):
        hint = " (quote it in the YAML)" if isinstance(value, bool) else ""
        raise ctx.error(path, f"must be a string, got {kind_of(value)}{hint}")
    if isinstance(value, (int, float)):
        value = str(value)
    if not isinstance(value, str):
        raise ctx.error(path, f"must be a string, got {kind_of(value)}")
    value = value.strip()
    if not value and not allow_empty:
        raise ctx.error(path, "must not be empty")
    return value


def read_int(ctx: Ctx, path: str, value: Any, *, minimum: int | None = None, maximum: int | None = None) -> int:
    number: int | None = None
    if isinstance(value, bool):
        number = None
    elif isinstance(value, int):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d+\s*", value):
        number = int(value)
    if number is None:
        raise ctx.error(path, f"must be a whole number, got {kind_of(value)}")
    if minimum is not None and maximum is not None and not minimum <= number <= maximum:
        raise ctx.error(path, f"{number} is out of range (must be {minimum}..{maximum})")
    if minimum is not None and number < minimum:
        raise ctx.error(path, f"{number} is too small (must be at least {minimum})")
    if maximum is not None and number > maximum:
        raise ctx.error(path, f"{number} is too large (must be at most {maximum})")
    return number


def read_positive_number(ctx: Ctx, path: str, value: Any) -> float:
    number = _read_number(ctx, path, value)
    if number <= 0:
        raise ctx.error(path, f"{value} must be greater than 0")
    return number


def read_non_negative_number(ctx: Ctx, path: str, value: Any) -> float:
    number = _read_number(ctx, path, value)
    if number < 0:
        raise ctx.error(path, f"{value} must be 0 or more")
    return number


def _read_number(ctx: Ctx, path: str, value: Any) -> float:
    number: float | None = None
    if isinstance(value, bool):
        number = None
    elif isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            number = None
    if number is None or number != number:  # NaN
        raise ctx.error(path, f"must be a number, got {kind_of(value)}")
    return number


def read_bool(ctx: Ctx, path: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise ctx.error(path, f"must be true or false, got {kind_of(value)}")


def read_choice(ctx: Ctx, path: str, value: Any, choices: Iterable[str]) -> str:
    """One of `choices` (upper- or lower-case as listed), matched case-insensitively."""
    choices = tuple(choices)
    if isinstance(value, str):
        wanted = value.strip().lower()
        for choice in choices:
            if choice.lower() == wanted:
                return choice
    shown = repr(value) if isinstance(value, str) else kind_of(value)
    raise ctx.error(path, f"{shown} is not one of {', '.join(choices)}")


def read_enum(ctx: Ctx, path: str, value: Any, enum_cls: type) -> Any:
    name = read_choice(ctx, path, value, [member.value for member in enum_cls])
    return enum_cls(name)


def read_mapping(ctx: Ctx, path: str, value: Any) -> dict:
    if not isinstance(value, dict):
        raise ctx.error(path, f"must be a mapping of keys, got {kind_of(value)}")
    return value


def read_list(ctx: Ctx, path: str, value: Any) -> list:
    if not isinstance(value, list):
        raise ctx.error(path, f"must be a list, got {kind_of(value)}")
    return value


def read_regex_list(ctx: Ctx, path: str, value: Any) -> tuple[str, ...]:
    """A list of case-insensitive regular expressions (whitespace around each trimmed)."""
    patterns = []
    for i, item in enumerate(read_list(ctx, path, value)):
        item_path = at_index(path, i)
        pattern = read_str(ctx, item_path, item)
        check_regex(ctx, item_path, pattern)
        patterns.append(pattern)
    return tuple(patterns)


def check_regex(ctx: Ctx, path: str, pattern: str) -> None:
    try:
        re.compile(pattern, re.IGNORECASE)
    except re.error as e:
        where = f" at position {e.pos}" if e.pos is not None else ""
        raise ctx.error(path, f"{pattern!r} is not a valid regular expression: {e.msg}{where}") from e


def read_uris(ctx: Ctx, path: str, value: Any) -> tuple[str, ...]:
    """`thrift://host:port` URIs from a comma-separated string (or, as a courtesy, a list)."""
    if isinstance(value, list):
        parts = [read_str(ctx, at_index(path, i), item) for i, item in enumerate(value)]
    else:
        parts = read_str(ctx, path, value).split(",")
    uris: list[str] = []
    for raw in parts:
        raw = raw.strip()
        if not raw:
            continue  # "a,b," as Java's split() tolerates
        match = _URI_RE.match(raw)
        if not match:
            raise ctx.error(path, f"{raw!r} is not a metastore URI of the form thrift://host:port")
        port = int(match.group("port"))
        if not 1 <= port <= 65535:
            raise ctx.error(path, f"{raw!r} has port {port}, which is out of range (1..65535)")
        uri = f"thrift://{match.group('host')}:{port}"
        if uri not in uris:
            uris.append(uri)
    if not uris:
        raise ctx.error(path, "must name at least one thrift://host:port URI")
    return tuple(uris)


# --------------------------------------------------------------------------------------
# Key handling


def canonical_key(key: str) -> str:
    """camelCase / snake_case / kebab-case -> kebab-case (Spring and Waggle Dance accept all)."""
    key = re.sub(r"(?<=[a-z0-9])([A-Z])", r"-\1", key)
    return key.replace("_", "-").lower()


def raw_value(raw: Mapping[str, Any], key: str) -> Any:
    """The value of canonical `key` in a mapping read leniently (any spelling canonical_key accepts)."""
    for spelt, value in raw.items():
        if isinstance(spelt, str) and canonical_key(spelt) == key:
            return value
    return None


def _suggest(key: str, known: Iterable[str]) -> str:
    known = sorted(set(known))
    canonical = canonical_key(key)
    if canonical in known and canonical != key:
        return f" (did you mean '{canonical}'?)"
    close = difflib.get_close_matches(canonical, known, n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def read_section(
    ctx: Ctx,
    path: str,
    raw: dict,
    known: Iterable[str],
    ignored: Mapping[str, Callable[[Ctx, str, Any], None]] | None = None,
) -> dict[str, Any]:
    """The keys of a mapping, by canonical name.

    In strict mode keys must be spelt exactly as in `known`; otherwise camelCase and
    snake_case spellings are accepted.  Keys in `ignored` are handed to their handler (which
    validates and warns).  Any other key is an error in strict mode (or with `refuse_unknown`), else a warning.
    """
    known = tuple(known)
    ignored = ignored or {}
    result: dict[str, Any] = {}
    spelt: dict[str, str] = {}
    for key, value in raw.items():
        if not isinstance(key, str):
            if ctx.strict:
                raise ctx.error(join_key(path, str(key)), f"keys must be names, got {kind_of(key)}")
            ctx.warn(join_key(path, str(key)), "ignored: keys must be names")
            continue
        canonical = key if ctx.strict else canonical_key(key)
        if canonical in spelt:
            raise ctx.error(join_key(path, key), f"given twice (also as '{spelt[canonical]}')")
        spelt[canonical] = key
        if canonical in known:
            result[canonical] = value
        elif canonical in ignored:
            ignored[canonical](ctx, join_key(path, key), value)
        elif ctx.strict or ctx.refuse_unknown:
            raise ctx.error(join_key(path, key), f"unknown key{'' if ctx.strict else ' (--strict)'}" + _suggest(key, (*known, *ignored)))
        else:
            ctx.warn(
                join_key(path, key),
                "unknown key, ignored" + _suggest(key, (*known, *ignored)) + "; --strict refuses it",
            )
    return result


def present(section: Mapping[str, Any], key: str) -> bool:
    """A key counts as given only with a non-null value (Waggle Dance treats null as unset)."""
    return section.get(key) is not None


# Handlers for Waggle Dance keys hmsproxy accepts but does not act on.  Each checks the
# value's shape (Waggle Dance would refuse a malformed one) and warns only when the value
# asks for something hmsproxy does not do.


def ignore_silently(ctx: Ctx, path: str, value: Any) -> None:
    ctx.debug(path, "ignored")


def ignored_mapping(note: str) -> Callable[[Ctx, str, Any], None]:
    def handle(ctx: Ctx, path: str, value: Any) -> None:
        if value is None:
            return
        if value and not isinstance(value, dict):
            raise ctx.error(path, f"must be a mapping of keys, got {kind_of(value)}")
        if value:
            ctx.warn(path, f"accepted but not acted on: {note}")
        else:
            ctx.debug(path, "empty; ignored")

    return handle


def ignored_bool(default: bool, note: str) -> Callable[[Ctx, str, Any], None]:
    def handle(ctx: Ctx, path: str, value: Any) -> None:
        if value is None:
            return
        if read_bool(ctx, path, value) != default:
            ctx.warn(path, f"accepted but not acted on: {note}")

    return handle


def ignored_int(default: int, note: str, minimum: int | None = None):
    def handle(ctx: Ctx, path: str, value: Any) -> None:
        if value is None:
            return
        if read_int(ctx, path, value, minimum=minimum) != default:
            ctx.warn(path, f"accepted but not acted on: {note}")

    return handle


def ignored_time_unit(default: str, note: str):
    def handle(ctx: Ctx, path: str, value: Any) -> None:
        if value is None:
            return
        if read_choice(ctx, path, value, _JAVA_TIME_UNITS) != default:
            ctx.warn(path, f"accepted but not acted on: {note}")

    return handle


def ignored_str(note: str):
    def handle(ctx: Ctx, path: str, value: Any) -> None:
        if value is None:
            return
        if read_str(ctx, path, value, allow_empty=True):
            ctx.warn(path, f"accepted but not acted on: {note}")

    return handle


def ignored_connection_type(ctx: Ctx, path: str, value: Any) -> None:
    if value is None:
        return
    if read_choice(ctx, path, value, ("DIRECT", "TUNNELED")) == "TUNNELED":
        ctx.warn(path, "accepted but not acted on: hmsproxy connects to metastores directly")
