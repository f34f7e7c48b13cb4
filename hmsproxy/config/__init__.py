"""Reading and checking the federation's configuration.

Two input formats produce the same immutable :class:`~hmsproxy.config.model.Config`:
hmsproxy's own single YAML file (:func:`load_config`, in :mod:`.own_format`) and Waggle
Dance's server + federation pair (:func:`load_waggle_dance`, in :mod:`.waggle_dance`).
Each key is defined once, as the model field it fills (:mod:`.keys`: its YAML name, reader,
default and description), and both formats read those definitions; metastores the Waggle Dance way
(:mod:`.metastores`); every problem raises :class:`ConfigError` (:mod:`.errors`).
:func:`load_from_paths` and :func:`load` pick the format (:mod:`.loading`);
:func:`describe` renders the result for ``hmsproxy check-config`` (:mod:`.description`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hmsproxy.config.description import describe
    from hmsproxy.config.errors import ConfigError
    from hmsproxy.config.loading import load, load_from_paths
    from hmsproxy.config.own_format import DEFAULT_RESOLUTION, load_config
    from hmsproxy.config.waggle_dance import (
        WAGGLE_DANCE_DEFAULT_PORT,
        WAGGLE_DANCE_DEFAULT_RESOLUTION,
        WAGGLE_DANCE_HOST,
        load_waggle_dance,
    )

#: Where each name lives, imported on first use: `hmsproxy.config.model` (which every package
#: reads) then costs a short command (`hmsproxy sql`) no YAML parser and no loaders.
_EXPORTS = {
    "describe": "description",
    "ConfigError": "errors",
    "load": "loading",
    "load_from_paths": "loading",
    "DEFAULT_RESOLUTION": "own_format",
    "load_config": "own_format",
    "WAGGLE_DANCE_DEFAULT_PORT": "waggle_dance",
    "WAGGLE_DANCE_DEFAULT_RESOLUTION": "waggle_dance",
    "WAGGLE_DANCE_HOST": "waggle_dance",
    "load_waggle_dance": "waggle_dance",
}


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "ConfigError",
    "DEFAULT_RESOLUTION",
    "WAGGLE_DANCE_DEFAULT_PORT",
    "WAGGLE_DANCE_DEFAULT_RESOLUTION",
    "WAGGLE_DANCE_HOST",
    "describe",
    "load",
    "load_config",
    "load_from_paths",
    "load_waggle_dance",
]
