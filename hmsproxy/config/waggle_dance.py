"""Waggle Dance's pair ``waggle-dance-server.yml`` + ``waggle-dance-federation.yml``
(:func:`load_waggle_dance`), taken as Waggle Dance users have them.

Waggle Dance itself ignores keys it does not know, so here unknown keys and keys hmsproxy
does not act on (SSH tunnels, filter hooks, Glue, metrics, ...) are logged as warnings,
never rejected.  Waggle Dance's default ``database-resolution`` is ``MANUAL`` and its
default port 48869.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from os import PathLike
from typing import Any

from hmsproxy.config import waggle_dance_kerberos as kerberos
from hmsproxy.config.errors import Ctx, join_key
from hmsproxy.config.fields import (
    ignore_silently,
    ignored_bool,
    ignored_int,
    ignored_mapping,
    ignored_time_unit,
    present,
    raw_value,
    read_section,
)
from hmsproxy.config.keys import definition_of, keys_of
from hmsproxy.config.metastores import check_federation, parse_federation
from hmsproxy.config.model import Config, DatabaseResolution, MetastoreConfig, ServerConfig
from hmsproxy.config.yaml_files import read_yaml

#: Waggle Dance listens on 0xBEE5 unless `port` says otherwise.
WAGGLE_DANCE_DEFAULT_PORT = 48869
#: Waggle Dance's `database-resolution` when the server file does not set it.
WAGGLE_DANCE_DEFAULT_RESOLUTION = DatabaseResolution.MANUAL
#: Waggle Dance binds every interface; a drop-in replacement must do the same.
WAGGLE_DANCE_HOST = "0.0.0.0"

#: The server file's keys that are hmsproxy's: each is read by its definition in config/model.py.
_WD_SERVER_TRANSLATED = {"port": definition_of(ServerConfig, "port"), "database-resolution": definition_of(Config, "database_resolution")}
_WD_SERVER_USED = (*_WD_SERVER_TRANSLATED, "configuration-properties")
_WD_SERVER_IGNORED: dict[str, Callable[[Ctx, str, Any], None]] = {
    "verbose": ignored_bool(False, "hmsproxy's logging is set by its own options"),
    "disconnect-connection-delay": ignored_int(5, "hmsproxy manages idle backend connections itself", minimum=1),
    "disconnect-time-unit": ignored_time_unit("MINUTES", "hmsproxy manages idle backend connections itself"),
    "status-polling-delay": ignored_int(5, "hmsproxy checks metastore status itself", minimum=1),
    "status-polling-delay-time-unit": ignored_time_unit("MINUTES", "hmsproxy checks metastore status itself"),
    "query-functions-across-all-metastores": ignored_bool(True, "hmsproxy decides itself where get_all_functions goes"),
    "thrift-server-stop-timeout-val-in-seconds": ignored_int(60, "hmsproxy's own server setting"),
    "thrift-server-request-timeout": ignored_int(20, "hmsproxy's own server setting"),
    "thrift-server-request-timeout-unit": ignored_time_unit("SECONDS", "hmsproxy's own server setting"),
    # hmsproxy never writes the federation file back, whatever this says.
    "yaml-storage": ignore_silently,
    # Spring Boot, metrics and extension settings of the Java service.
    "graphite": ignored_mapping("hmsproxy does not send Graphite metrics"),
    "prometheus": ignored_mapping("hmsproxy does not serve Waggle Dance's Prometheus endpoint"),
    "management": ignored_mapping("Spring Boot actuator settings"),
    "endpoints": ignored_mapping("Spring Boot actuator settings"),
    "logging": ignored_mapping("Spring Boot logging settings"),
    "server": ignored_mapping("Spring Boot's HTTP server settings"),
    "spring": ignored_mapping("Spring Boot settings"),
    "waggledance": ignored_mapping("Waggle Dance extension settings (e.g. rate limiting)"),
}
#: The federation file holds the metastore keys of hmsproxy's own file (those Config's loader reads).
_WD_FEDERATION_TOP = tuple(definition.yaml for _, definition in keys_of(Config) if definition.read is None)


def _misplaced_server_key(ctx: Ctx, path: str, value: Any) -> None:
    ctx.warn(path, "ignored: this is a server setting; it belongs in waggle-dance-server.yml")


_WD_FEDERATION_IGNORED = {key: _misplaced_server_key for key in _WD_SERVER_USED}


def _parse_wd_server(
    server_yml: str | PathLike[str] | None, refuse_unknown: bool = False
) -> tuple[int, DatabaseResolution, dict[str, str], Ctx | None]:
    """(port, resolution, the Hive properties of `configuration-properties`, the file's context)."""
    if server_yml is None:
        return WAGGLE_DANCE_DEFAULT_PORT, WAGGLE_DANCE_DEFAULT_RESOLUTION, {}, None
    data = read_yaml(server_yml)
    ctx = Ctx(str(server_yml), strict=False, refuse_unknown=refuse_unknown)
    section = read_section(ctx, "", data, _WD_SERVER_USED, _WD_SERVER_IGNORED)
    read = {name: definition.read(ctx, name, section[name]) for name, definition in _WD_SERVER_TRANSLATED.items() if present(section, name)}
    port = read.get("port", WAGGLE_DANCE_DEFAULT_PORT)
    resolution = read.get("database-resolution", WAGGLE_DANCE_DEFAULT_RESOLUTION)
    props = kerberos.read_properties(ctx, "configuration-properties", section.get("configuration-properties"))
    return port, resolution, props, ctx


def load_waggle_dance(
    server_yml: str | PathLike[str] | None, federation_yml: str | PathLike[str], *, refuse_unknown: bool = False
) -> Config:
    """Load a Waggle Dance configuration pair as Waggle Dance would read it.

    `server_yml` may be None, which means all of Waggle Dance's server defaults
    (port 48869, MANUAL resolution).  hmsproxy listens on all interfaces, like Waggle Dance.
    `refuse_unknown` (`--strict`): an unknown key is an error, not a warning.
    """
    port, resolution, server_props, server_ctx = _parse_wd_server(server_yml, refuse_unknown)
    data = read_yaml(federation_yml)
    ctx = Ctx(str(federation_yml), strict=False, refuse_unknown=refuse_unknown)
    primary, federated, section = parse_federation(ctx, data, "", _WD_FEDERATION_TOP, waggle_dance=True, ignored_top=_WD_FEDERATION_IGNORED)
    check_federation(ctx, resolution, [primary, *federated])
    if server_ctx is not None:
        kerberos.check_client_properties(server_ctx, "configuration-properties", server_props)
    metastores = _with_kerberos(ctx, section, server_props, [primary, *federated])
    sasl = None
    if server_ctx is not None:
        path = "configuration-properties"
        sasl = kerberos.server_sasl(server_ctx, path, server_props, any(m.sasl for m in metastores))
        kerberos.warn_unused(server_ctx, path, server_props, server=True)
    if sasl is None and any(m.sasl for m in metastores):  # no server file: no keytab to log in from
        raise ctx.error(
            "configuration-properties",
            f"a Kerberized metastore needs the proxy's keytab: {kerberos.PORT_PRINCIPAL} and {kerberos.PORT_KEYTAB} "
            "in waggle-dance-server.yml's configuration-properties",
        )
    sources = (str(federation_yml),) if server_yml is None else (str(server_yml), str(federation_yml))
    return Config(
        server=ServerConfig(host=WAGGLE_DANCE_HOST, port=port, sasl=sasl),
        database_resolution=resolution,
        primary=metastores[0],
        federated=tuple(metastores[1:]),
        sources=sources,
    )


def _with_kerberos(ctx: Ctx, section: dict, server_props: dict[str, str], parsed: list) -> list[MetastoreConfig]:
    """Each metastore with the `sasl` its Waggle Dance client would use: the server file's properties
    with its own `configuration-properties` over them."""
    raws = [section["primary-meta-store"], *(section.get("federated-meta-stores") or [])]
    result = []
    for p, raw in zip(parsed, raws, strict=True):
        path = join_key(p.path, "configuration-properties")
        own = kerberos.read_properties(ctx, path, raw_value(raw, "configuration-properties"))
        kerberos.warn_unused(ctx, path, own, server=False)
        kerberos.check_client_properties(ctx, path, own)
        sasl = kerberos.metastore_sasl(ctx, path, {**server_props, **own})
        result.append(replace(p.metastore, sasl=sasl) if sasl else p.metastore)
    return result
