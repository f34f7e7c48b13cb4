"""Turning the proxy's own refusals and failures into what the IDL lets a method throw."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from thriftpy2.thrift import TApplicationException

    from hmsproxy.routing.methods import MethodSpec

# thriftpy2 is imported where an answer is made, not here: a client catching these (the command
# line's `hmsproxy sql`, through ddl/errors.py) then loads no Thrift.

#: Exception classes to prefer, by kind of problem, when a method declares several.
NOT_FOUND_TYPES = ("NoSuchObjectException", "UnknownDBException", "MetaException")
REFUSED_TYPES = ("MetaException", "InvalidOperationException", "InvalidObjectException", "NoSuchObjectException")
UNAVAILABLE_TYPES = ("MetaException", "NoSuchObjectException", "InvalidOperationException")


class ProxyError(Exception):
    """An error the proxy reports to the client as one of the method's declared exceptions."""

    preferred: tuple[str, ...] = REFUSED_TYPES
    #: How the call ends up in audit lines and metrics.
    outcome = "refused"


class AccessDenied(ProxyError):
    preferred = REFUSED_TYPES
    outcome = "denied"


class Conflict(ProxyError):
    """The name is taken."""

    preferred = ("AlreadyExistsException", "InvalidObjectException", "MetaException")
    outcome = "refused"


class InvalidRequest(ProxyError):
    """The request itself is wrong (a bad property, an unknown factory, ...)."""

    preferred = ("InvalidObjectException", "InvalidInputException", "MetaException")
    outcome = "refused"


class Limited(ProxyError):
    """A call over one of the configured limits (features/limits/, upstream/slots.py): the message names
    the limit and when to retry."""

    preferred = ("MetaException", *REFUSED_TYPES)
    outcome = "limited"


class NotFound(ProxyError):
    preferred = NOT_FOUND_TYPES
    outcome = "not_found"


def declared_result(spec: MethodSpec, preferred: tuple[str, ...], message: str):
    """A `<method>_result` carrying `message` in the best declared exception.

    Methods that declare none get a TApplicationException instead (raised).
    """
    by_class = {cls.__name__: fname for fname, cls in spec.exceptions}
    for name in preferred:
        if name in by_class:
            return _result_with(spec, by_class[name], message)
    for fname, cls in spec.exceptions:
        if "message" in {v[1] for v in cls.thrift_spec.values()}:
            return _result_with(spec, fname, message)
    from thriftpy2.thrift import TApplicationException

    raise TApplicationException(TApplicationException.UNKNOWN, message)


def _result_with(spec: MethodSpec, fname: str, message: str):
    cls = dict(spec.exceptions)[fname]
    result = spec.result_cls()
    setattr(result, fname, cls(message=message))
    return result


def internal_error(method: str, why: str = "") -> TApplicationException:
    """Java's wording for an unexpected server-side failure (`why` appended where the proxy knows it)."""
    from thriftpy2.thrift import TApplicationException

    return TApplicationException(TApplicationException.INTERNAL_ERROR, f"Internal error processing {method}" + (f": {why}" if why else ""))


def unknown_method(method: str) -> TApplicationException:
    from thriftpy2.thrift import TApplicationException

    return TApplicationException(TApplicationException.UNKNOWN_METHOD, f"Invalid method name: '{method}'")
