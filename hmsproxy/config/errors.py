"""Where a configuration problem is and how it is reported (reading the YAML files: yaml_files.py).

Every problem raises :class:`ConfigError`, located by file and key path.  :class:`Ctx`
carries the file being read and how forgiving to be about unknown keys; warnings go to
the ``hmsproxy.config`` logger.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from os import PathLike
from typing import Any

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
    #: `--strict`: unknown keys are errors in Waggle Dance's files too (spellings stay forgiving).
    refuse_unknown: bool = False

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
