"""Every configuration key with its default and description, from the keys' definitions
(config/keys.py): ``hmsproxy check-config --keys``, whose output is docs/configuration-keys.md
(a contract test keeps the file equal to it)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from hmsproxy.config.keys import KeyRow, key_rows
from hmsproxy.config.model import Config
from hmsproxy.config.sections import ConfigSection

_HEADER = """# Configuration keys

Generated from the keys' definitions (config/keys.py, the fields of config/model.py and of the
features' settings) by `hmsproxy check-config --keys > docs/configuration-keys.md`. How the keys work together:
[configuration.md](configuration.md). Each entry of `federated-meta-stores` takes the keys of
`primary-meta-store`.
"""


def rows(feature_sections: Sequence[ConfigSection] = ()) -> list[KeyRow]:
    """hmsproxy's own keys, then those of the features' sections whose settings define their keys."""
    result = key_rows(Config)
    for section in feature_sections:
        settings = type(section.default)
        if dataclasses.is_dataclass(settings) and key_rows(settings):
            result.append(KeyRow(section.key, "", f"the {section.key} feature's settings"))
            result.extend(key_rows(settings, section.key))
    return result


def keyed_sections(feature_sections: Sequence[ConfigSection]) -> list[str]:
    """The feature sections whose keys are in the table (the others parse by hand)."""
    return [s.key for s in feature_sections if dataclasses.is_dataclass(type(s.default)) and key_rows(type(s.default))]


def markdown(feature_sections: Sequence[ConfigSection] = ()) -> str:
    def cell(text: str) -> str:
        return text.replace("|", "\\|")

    lines = [_HEADER, "| key | default | meaning |", "|---|---|---|"]
    lines += [f"| `{row.path}` | {cell(row.default)} | {cell(row.description)} |" for row in rows(feature_sections)]
    others = [s.key for s in feature_sections if s.key not in keyed_sections(feature_sections)]
    if others:
        lines += ["", f"Sections still parsed by hand (their own docs list their keys): {', '.join(f'`{k}`' for k in others)}."]
    return "\n".join(lines) + "\n"
