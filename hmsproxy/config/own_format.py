"""hmsproxy's own single YAML file (:func:`load_config`; see config/hmsproxy.example.yml).

Its keys are kebab-case and mirror Waggle Dance's where the concept is the same; unknown
keys are errors.  Beyond the metastores it holds the server (including TLS and workers),
the operations HTTP port, the audit log, the store, and one section per feature that has
settings (config/sections.py ConfigSection; e.g. `remotes`). Every key is defined once, as
the field of config/model.py it fills (config/keys.py); this module adds the checks across
sections.
"""

from __future__ import annotations

from collections.abc import Sequence
from os import PathLike
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from hmsproxy.config.errors import Ctx, join_key
from hmsproxy.config.fields import present
from hmsproxy.config.keys import read_given, yaml_names
from hmsproxy.config.metastores import check_federation, parse_federation
from hmsproxy.config.model import Config, ServerConfig
from hmsproxy.config.waggle_dance import WAGGLE_DANCE_DEFAULT_RESOLUTION
from hmsproxy.config.yaml_files import read_yaml

if TYPE_CHECKING:
    from hmsproxy.config.sections import ConfigSection

#: hmsproxy's own format uses Waggle Dance's default resolution too.
DEFAULT_RESOLUTION = WAGGLE_DANCE_DEFAULT_RESOLUTION


def check_sasl(ctx: Ctx, server: ServerConfig, metastores: Sequence[Any]) -> None:
    """A Kerberized metastore needs the proxy's own principal and keytab."""
    for parsed in metastores:
        if parsed.metastore.sasl is not None and server.sasl is None:
            raise ctx.error(
                join_key(parsed.path, "sasl"),
                "needs the proxy's own Kerberos identity: give server.sasl.principal and server.sasl.keytab",
            )


def load_config(path: str | PathLike[str], feature_sections: Sequence[ConfigSection] = ()) -> Config:
    """Load hmsproxy's own YAML configuration file (see config/hmsproxy.example.yml).

    `feature_sections`: the top-level keys features own (app.config_sections() for the features a
    proxy runs); any other key is an error.
    """
    data = read_yaml(path)
    ctx = Ctx(str(path), strict=True)
    top_keys = (*yaml_names(Config), *(s.key for s in feature_sections))
    primary, federated, section = parse_federation(ctx, data, "", top_keys, waggle_dance=False)
    # The keys Config defines with a reader (the metastores were read above, with their checks).
    values = read_given(ctx, "", section, Config)
    server = values.pop("server", ServerConfig())
    resolution = values.pop("database_resolution", DEFAULT_RESOLUTION)

    check_federation(ctx, resolution, [primary, *federated])
    check_sasl(ctx, server, [primary, *federated])
    # Features' own sections (config/sections.py ConfigSection), e.g. `remotes`.
    owned = {s.key: s.parse(ctx, section[s.key]) for s in feature_sections if present(section, s.key)}
    return Config(
        server=server,
        database_resolution=resolution,
        primary=primary.metastore,
        federated=tuple(p.metastore for p in federated),
        sources=(str(path),),
        sections=MappingProxyType(owned),
        **values,
    )
