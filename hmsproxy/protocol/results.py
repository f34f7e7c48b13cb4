"""Filling a `<method>_result` struct with an error, by the exceptions the method declares."""

from __future__ import annotations

from thriftpy2.thrift import TApplicationException

from hmsproxy.protocol import idl


def declared_fields(result) -> dict[type, str]:
    """Exception class -> the result field that carries it, in the IDL's order."""
    return {cls: name for _, name, cls, *_ in (v for k, v in sorted(result.thrift_spec.items()) if k != 0)}


def declared_error(result):
    """The declared exception a `<method>_result` carries, or None (an answer, or a void call's nothing).
    A result carries at most one: the metastore sets one field."""
    return next((value for name, value in vars(result).items() if name != "success" and value is not None), None)


def put_exception(result, error) -> None:
    """Set `error` on the result field declared for its type; one the call does not declare becomes its MetaException."""
    fields = declared_fields(result)
    for cls, name in fields.items():
        if isinstance(error, cls):
            setattr(result, name, error)
            return
    meta = fields.get(idl.hive.MetaException)
    if meta is None:
        raise TApplicationException(TApplicationException.INTERNAL_ERROR, getattr(error, "message", None) or repr(error))
    setattr(result, meta, idl.hive.MetaException(message=getattr(error, "message", None) or repr(error)))
