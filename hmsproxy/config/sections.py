"""The top-level config keys features own: what a feature declares, what the loader is given."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hmsproxy.config.errors import Ctx


@dataclass(frozen=True)
class ConfigSection:
    """A top-level key of hmsproxy's YAML that one feature owns."""

    key: str
    #: (ctx, raw YAML value) -> the feature's typed, immutable settings; errors via ``ctx.error(key, reason)``.
    parse: Callable[[Ctx, Any], Any]
    #: The settings when the key is absent (and for Waggle Dance's files, which have no such key).
    default: Any
    #: settings -> lines for ``hmsproxy check-config``.
    describe: Callable[[Any], list[str]] = lambda settings: []


def keyed_section(
    key: str, settings: type, describe: Callable[[Any], list[str]] = lambda settings: [], *, default: Any = None, **options: Any
) -> ConfigSection:
    """The section of a settings dataclass whose keys are defined by config/keys.py's `key`: its
    parser derives from them (options: those of keys.build), its default is `default` or else
    `settings()`, and the key table (config/key_table.py) lists its keys."""
    from hmsproxy.config.keys import build  # not at import: a feature declaring its section reads no YAML

    def parse(ctx: Ctx, raw: Any) -> Any:
        return build(ctx, key, raw, settings, **options)

    return ConfigSection(key, parse, settings() if default is None else default, describe)
