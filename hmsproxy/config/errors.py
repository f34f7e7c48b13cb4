"""Where a configuration problem is, how it is reported, and reading the YAML files.

Every problem raises :class:`ConfigError`, located by file and key path.  :class:`Ctx`
carries the file being read and how forgiving to be about unknown keys; warnings go to
the ``hmsproxy.config`` logger.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from os import PathLike
from typing import Any

import yaml

# The name hmsproxy has always logged configuration warnings under.
log = logging.getLogger("hmsproxy.config")


class ConfigError(Exception):
    """A configuration problem, located by file and key path.

    ``str()`` reads ``<file>: <key.path[0].sub>: <reason>``; list indexes count from 0.
    """

    def __init__(self, file: str | PathLike[str], key_path: str, reason: str) -> None:
        self.file = str(file)
        self.key_path = key_path
        self.reason = reason
        super().__init__(self.file, key_path, reason)  # args that rebuild it (pickling)

    def __str__(self) -> str:
        if self.key_path:
            return f"{self.file}: {self.key_path}: {self.reason}"
        return f"{self.file}: {self.reason}"


@dataclass
class Ctx:
    """Where we are reading from and how forgiving to be."""

    file: str
    #: hmsproxy's own format: unknown keys are errors.  Waggle Dance's: warnings.
    strict: bool

    def error(self, path: str, reason: str) -> ConfigError:
        return ConfigError(self.file, path, reason)

    def warn(self, path: str, message: str) -> None:
        log.warning("%s", ConfigError(self.file, path, message))

    def debug(self, path: str, message: str) -> None:
        log.debug("%s", ConfigError(self.file, path, message))


def join_key(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def at_index(path: str, index: int) -> str:
    return f"{path}[{index}]"


def kind_of(value: Any) -> str:
    """What a YAML value is, for error messages."""
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, int):
        return f"an integer ({value})"
    if isinstance(value, float):
        return f"a number ({value})"
    if isinstance(value, str):
        return f"a string ({value!r})"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__


# --------------------------------------------------------------------------------------
# YAML reading


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
