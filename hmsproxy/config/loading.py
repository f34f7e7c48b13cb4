"""Choosing a loader: hmsproxy's own file or Waggle Dance's pair, from paths or arguments."""

from __future__ import annotations

from collections.abc import Sequence
from os import PathLike
from typing import Any

from hmsproxy.config.errors import ConfigError
from hmsproxy.config.model import Config
from hmsproxy.config.own_format import load_config
from hmsproxy.config.sections import ConfigSection
from hmsproxy.config.waggle_dance import load_waggle_dance


def load_from_paths(
    config: str | PathLike[str] | None = None,
    server_config: str | PathLike[str] | None = None,
    federation_config: str | PathLike[str] | None = None,
    feature_sections: Sequence[ConfigSection] = (),
    strict: bool = False,
) -> Config:
    """hmsproxy's own file (`config`), or Waggle Dance's pair; not both.

    `server_config` alone is not enough: Waggle Dance's metastores live in the federation file.
    `strict`: unknown keys are errors in Waggle Dance's files too (in hmsproxy's own they always are).
    """
    where = "command line"
    if config is not None and (server_config is not None or federation_config is not None):
        raise ConfigError(
            where,
            "",
            "give either hmsproxy's own configuration file or Waggle Dance's server/federation files, not both",
        )
    if config is not None:
        return load_config(config, feature_sections)
    if federation_config is not None:
        return load_waggle_dance(server_config, federation_config, refuse_unknown=strict)
    if server_config is not None:
        raise ConfigError(
            where,
            "",
            "a Waggle Dance server file needs its federation file (waggle-dance-federation.yml) as well",
        )
    raise ConfigError(
        where,
        "",
        "no configuration given: pass hmsproxy's configuration file, or Waggle Dance's federation file (and optionally its server file)",
    )


def load(args: Any, feature_sections: Sequence[ConfigSection] = ()) -> Config:
    """:func:`load_from_paths` from an argparse namespace with `config`, `server_config`,
    `federation_config` attributes (missing attributes count as not given)."""
    return load_from_paths(
        config=getattr(args, "config", None),
        server_config=getattr(args, "server_config", None),
        federation_config=getattr(args, "federation_config", None),
        feature_sections=feature_sections,
        strict=getattr(args, "strict", False),
    )
