"""One definition per configuration key, and the generic reader derived from it.

A settings dataclass (config/model.py, a feature's config.py) declares each YAML key as a field
made by :func:`key`: its YAML name, its reader (fields.py's checks: ctx, path, raw -> value), its
one-line description, and whether it is required; the field's own default is the key's default.
From that one place come the keys a section allows (:func:`yaml_names`), the reading of a
section with file/key/reason errors (:func:`read_keys`, :func:`section`), and the key table of
``hmsproxy check-config --keys`` and docs/configuration-keys.md (:func:`key_rows`).

What spans several keys (a maximum not below its minimum, a prefix whose default depends on the
metastore's role) is a `check` of the section, written next to the dataclass it checks.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from hmsproxy.config.errors import Ctx, at_index, join_key
from hmsproxy.config.fields import present, read_bool, read_list, read_mapping, read_section

Reader = Callable[[Ctx, str, Any], Any]

#: Where a key's definition sits in a dataclass field's metadata.
_KEY = "hmsproxy.config.key"


@dataclass(frozen=True)
class Key:
    """A YAML key as its settings dataclass declares it."""

    yaml: str
    #: None: the key is read by the loader of the whole file (the metastores: config/metastores.py).
    read: Reader | None
    description: str
    #: Why it is needed, said when it is missing ("is required (...)"); None: optional.
    required: str | None = None
    #: The default as the key table shows it, when the field's default does not say it (e.g. one
    #: that depends on other keys); None: the field's default.
    shown_default: str | None = None
    #: The settings dataclass of a nested section, for the key table: the one its reader reads
    #: (:func:`section`, :func:`switched`, :func:`each` of them) unless given.
    nested: type | None = None


def key(
    yaml: str,
    read: Reader | None,
    description: str,
    *,
    default: Any = dataclasses.MISSING,
    default_factory: Any = dataclasses.MISSING,
    required: str | None = None,
    shown_default: str | None = None,
    nested: type | None = None,
) -> Any:
    """A dataclass field that is the YAML key `yaml` (see :class:`Key`)."""
    definition = Key(yaml, read, description, required, shown_default, nested or getattr(read, "settings", None))
    return dataclasses.field(default=default, default_factory=default_factory, metadata={_KEY: definition})


def keys_of(cls: type) -> Iterator[tuple[dataclasses.Field, Key]]:
    """The fields of `cls` that are YAML keys, in declaration order."""
    for field in dataclasses.fields(cls):
        definition = field.metadata.get(_KEY)
        if definition is not None:
            yield field, definition


def definition_of(cls: type, field_name: str) -> Key:
    """The key a field of `cls` is (for a format that spells it elsewhere, e.g. Waggle Dance's server file)."""
    for field, definition in keys_of(cls):
        if field.name == field_name:
            return definition
    raise KeyError(f"{cls.__name__}.{field_name} is not a configuration key")


def yaml_names(cls: type) -> tuple[str, ...]:
    """The keys a section of `cls` allows."""
    return tuple(definition.yaml for _, definition in keys_of(cls))


def read_keys(
    ctx: Ctx,
    path: str,
    raw: Any,
    cls: type,
    ignored: Mapping[str, Reader] | None = None,
) -> dict[str, Any]:
    """Field name -> checked value, for the keys of `cls` given in the mapping `raw`.

    Unknown keys are refused or warned about as fields.read_section does; a missing required key
    is an error.
    """
    given = read_section(ctx, path, read_mapping(ctx, path, raw), yaml_names(cls), ignored)
    return read_given(ctx, path, given, cls)


def read_given(ctx: Ctx, path: str, given: Mapping[str, Any], cls: type) -> dict[str, Any]:
    """Field name -> checked value of the keys of `cls` in `given` (a section already picked by
    fields.read_section, by YAML name), in declaration order: the first problem is the one reported."""
    values = {}
    for field, definition in keys_of(cls):
        if not present(given, definition.yaml):
            if definition.required:
                raise ctx.error(join_key(path, definition.yaml), definition.required)
        elif definition.read is not None:
            values[field.name] = definition.read(ctx, join_key(path, definition.yaml), given[definition.yaml])
    return values


def build(
    ctx: Ctx,
    path: str,
    raw: Any,
    cls: type,
    *,
    given_defaults: Mapping[str, Any] | None = None,
    check: Callable[[Ctx, str, Any], None] | None = None,
) -> Any:
    """An instance of `cls` from a YAML mapping: each key given read by its definition, the rest at
    their defaults (`given_defaults`, by field name, when the section's presence changes one);
    then `check(ctx, path, instance)`, the section's rule across its keys, raises if it is broken."""
    built = cls(**{**(given_defaults or {}), **read_keys(ctx, path, raw, cls)})
    if check is not None:
        check(ctx, path, built)
    return built


def section(cls: type, **options: Any) -> Reader:
    """The reader of a nested section of `cls` (options: those of :func:`build`)."""

    def read(ctx: Ctx, path: str, raw: Any) -> Any:
        return build(ctx, path, raw, cls, **options)

    read.settings = cls  # type: ignore[attr-defined]
    return read


def switched(cls: type, *, enabled_key: bool, **options: Any) -> Reader:
    """A section that may also be `true` (all defaults) or `false` (off: None); with `enabled_key`
    the mapping may say `enabled: false` too. Off is None."""
    allowed = (*yaml_names(cls), "enabled") if enabled_key else yaml_names(cls)

    def read(ctx: Ctx, path: str, raw: Any) -> Any:
        if raw is False:
            return None
        # Unknown keys are reported first, `enabled: false` or not; then only canonical names remain.
        given = {} if raw is True else read_section(ctx, path, read_mapping(ctx, path, raw), allowed)
        enabled = given.pop("enabled", None)
        if enabled is not None and not read_bool(ctx, join_key(path, "enabled"), enabled):
            return None
        return build(ctx, path, given, cls, **options)

    read.settings = cls  # type: ignore[attr-defined]
    read.switch_note = "`true`: all defaults; `false`" + (" or `enabled: false`" if enabled_key else "") + ": off"  # type: ignore[attr-defined]
    return read


def each(reader: Reader) -> Reader:
    """A YAML list of values `reader` reads, as a tuple."""

    def read(ctx: Ctx, path: str, raw: Any) -> tuple:
        return tuple(reader(ctx, at_index(path, i), item) for i, item in enumerate(read_list(ctx, path, raw)))

    return listed(read, reader)


def listed(reader: Reader, entry: Reader) -> Reader:
    """Marks `reader` as reading a list of what `entry` reads, so the key table names its entries'
    keys `key[].sub`."""
    reader.is_list = True  # type: ignore[attr-defined]
    reader.settings = getattr(entry, "settings", None)  # type: ignore[attr-defined]
    return reader


# --------------------------------------------------------------------------------------
# The key table


@dataclass(frozen=True)
class KeyRow:
    path: str
    default: str
    description: str


def _shown(field: dataclasses.Field, definition: Key) -> str:
    if definition.shown_default is not None:
        return definition.shown_default
    if definition.required:
        return "required"
    if field.default is not dataclasses.MISSING:
        value = field.default
    elif field.default_factory is not dataclasses.MISSING:
        value = field.default_factory()
    else:
        return "required"
    if value is None or value in ((), {}):
        return "none"
    if isinstance(value, bool):
        return str(value).lower()
    if hasattr(value, "value"):  # an enum member
        return str(value.value)
    if isinstance(value, tuple):
        return ", ".join(str(item) for item in value)
    return f"{value:g}" if isinstance(value, float) else str(value)


def key_rows(cls: type, path: str = "") -> list[KeyRow]:
    """Every key of `cls` and of its nested sections, with its default and description."""
    rows = []
    for field, definition in keys_of(cls):
        where = join_key(path, definition.yaml)
        note = getattr(definition.read, "switch_note", None)
        description = f"{definition.description} ({note})" if note else definition.description
        rows.append(KeyRow(where, _shown(field, definition), description))
        if definition.nested is not None:
            entries = f"{where}[]" if getattr(definition.read, "is_list", False) else where
            rows.extend(key_rows(definition.nested, entries))
    return rows
