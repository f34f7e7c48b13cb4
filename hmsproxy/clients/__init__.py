"""Clients of a running proxy: the Python API for hmsproxy's statements and the PySpark helper."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hmsproxy.clients.proxy import DdlSyntaxError, HmsProxyClient, HmsProxyError, ResultSet

__all__ = ["DdlSyntaxError", "HmsProxyClient", "HmsProxyError", "ResultSet"]


def __getattr__(name: str):
    """The client's names, imported on first use: the command line imports `clients.lookup_cli` for
    every command, and this package's client (Thrift, the IDL) only `hmsproxy sql` needs."""
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from hmsproxy.clients import proxy

    value = getattr(proxy, name)
    globals()[name] = value
    return value
