"""Metastore calls the proxy makes for a user, through its own routing.

A statement's side effects (an index table created, a remote's name checked) and a
hook's reads (skew: the table a client alters) must obey the same rules as the user's
own calls: routing and name rewriting, access control, other features' hooks. So they
go through ``Handler.dispatch``, in process, not to a backend directly: on the calling
client's session (``Session.borrowed``: its identity and backend connections, so no
connection is opened) or, with no call at hand, on a private session as the user.
"""

from __future__ import annotations

from collections.abc import Callable

from thriftpy2.thrift import TApplicationException

from hmsproxy.pipeline.errors import Conflict, InvalidRequest, NotFound, ProxyError
from hmsproxy.protocol import idl
from hmsproxy.protocol.results import declared_error
from hmsproxy.upstream.session import Session

#: The metastore's declared exceptions as the proxy's own errors, so a statement that fails
#: on its side effect reaches the client through the same boundary as any refusal.
_AS_PROXY_ERROR = {
    "NoSuchObjectException": NotFound,
    "UnknownDBException": NotFound,
    "UnknownTableException": NotFound,
    "AlreadyExistsException": Conflict,
    "InvalidObjectException": InvalidRequest,
    "InvalidInputException": InvalidRequest,
    "InvalidOperationException": InvalidRequest,
}


class InternalClient:
    def __init__(self, dispatch: Callable, session: Session):
        self._dispatch = dispatch
        self.session = session

    @property
    def user(self) -> str | None:
        return self.session.user

    def call(self, method: str, **kwargs):
        """The method's answer, as a client of the proxy would get it; a declared exception
        is raised as the matching ProxyError (NotFound, Conflict, ...) with its message."""
        args = getattr(idl.HmsProxy, method + "_args")(**kwargs)
        result = self._dispatch(self.session, method, args)
        declared = declared_error(result)
        if declared is not None:
            error = _AS_PROXY_ERROR.get(type(declared).__name__, ProxyError)
            raise error(getattr(declared, "message", None) or repr(declared))
        return getattr(result, "success", None)

    def exists(self, method: str, **kwargs) -> bool | None:
        """Whether a get_* call finds its object: True, False (not found), None (can't tell)."""
        try:
            return self.call(method, **kwargs) is not None
        except NotFound:
            return False
        except (ProxyError, TApplicationException):
            return None

    def close(self) -> None:
        self.session.close()

    def __enter__(self) -> InternalClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
