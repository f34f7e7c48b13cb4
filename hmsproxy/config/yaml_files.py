"""Reading the configuration's YAML files, refusing duplicate keys.

Apart from errors.py so that catching a ConfigError (every command does) loads no YAML parser.
"""

from __future__ import annotations

from os import PathLike
from typing import Any

import yaml

from hmsproxy.config.errors import ConfigError, kind_of


class _Loader(yaml.SafeLoader):
    """SafeLoader that refuses duplicate keys (snakeyaml, used by Waggle Dance, does too)."""


def _construct_mapping(loader: _Loader, node: yaml.MappingNode, deep: bool = False) -> dict:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue
        key = loader.construct_object(key_node, deep=True)
        try:
            first = seen.get(key)
        except TypeError:  # unhashable key; SafeConstructor reports it
            continue
        if first is not None:
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"duplicate key {key!r} (first given on line {first + 1})",
                key_node.start_mark,
            )
        seen[key] = key_node.start_mark.line
    return yaml.SafeLoader.construct_mapping(loader, node, deep=deep)


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def read_yaml(path: str | PathLike[str]) -> dict:
    """The top-level mapping of a YAML file ({} for an empty file)."""
    name = str(path)
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as e:
        raise ConfigError(name, "", f"cannot read the file: {e.strerror or e}") from e
    except UnicodeDecodeError as e:
        raise ConfigError(name, "", f"the file is not UTF-8 text: {e}") from e
    try:
        data = yaml.load(text, Loader=_Loader)  # noqa: S506 - SafeLoader subclass
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        problem = e.problem or e.context or "syntax error"
        raise ConfigError(name, "", f"invalid YAML: {problem}{where}") from e
    except yaml.YAMLError as e:
        raise ConfigError(name, "", f"invalid YAML: {e}") from e
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(name, "", f"the file must hold a mapping of keys, got {kind_of(data)}")
    return data
