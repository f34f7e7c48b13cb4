"""Clients of a running proxy: the Python API for hmsproxy's statements and the PySpark helper."""

from hmsproxy.clients.proxy import DdlSyntaxError, HmsProxyClient, HmsProxyError, ResultSet

__all__ = ["DdlSyntaxError", "HmsProxyClient", "HmsProxyError", "ResultSet"]
