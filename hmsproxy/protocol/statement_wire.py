"""The proxy's statement calls (`set_ugi`, `hmsproxy_execute_script`, `hmsproxy_execute`) in Thrift's
binary protocol, written out here rather than through thriftpy2.

Importing any part of thriftpy2 runs its package's `__init__`, which loads its IDL parser (ply,
urllib), and its protocol package loads JSON codecs; with the IDL's classes that is ~60 ms, most of
what a short `hmsproxy sql` spends. These three calls carry only strings and lists of strings, so
the client of hmsproxy's statements (clients/proxy.py) speaks them with this module and the
standard library. Structs are read by field id; a reply's other fields are skipped. The field ids
are hmsproxy.thrift's and hive_metastore.thrift's (`set_ugi`, `MetaException`), and Thrift's own for
`TApplicationException` (tests/unit/test_statement_wire.py checks both directions against thriftpy2).

Towards a Kerberized proxy port (`sasl_principal`) the calls go in SASL data frames after a GSSAPI
negotiation as the caller's ticket (protocol/kerberos_client.py); those modules, and gssapi, are
loaded only then.
"""

from __future__ import annotations

import io
import socket
import struct

# Thrift's binary protocol: type ids, message types and the strict header's version word.
STOP, BOOL, BYTE, DOUBLE, I16, I32, I64, STRING, STRUCT, MAP, SET, LIST = 0, 2, 3, 4, 6, 8, 10, 11, 12, 13, 14, 15
CALL, REPLY, EXCEPTION = 1, 2, 3
VERSION_1 = 0x80010000
_FIXED = {BOOL: "!?", BYTE: "!b", DOUBLE: "!d", I16: "!h", I32: "!i", I64: "!q"}
#: TApplicationException.type of a call the server does not have.
UNKNOWN_METHOD = 1


class ApplicationError(Exception):
    """The server's TApplicationException: `type` (UNKNOWN_METHOD, ...) and its message."""

    def __init__(self, message: str, type: int = 0):
        super().__init__(message)
        self.message, self.type = message, type


class MetaError(Exception):
    """The call's declared MetaException (what the proxy says when a statement fails)."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


#: One statement's result: its column names and rows (HmsProxyResult).
Result = tuple[list[str], list[list[str]]]


class StatementConnection:
    """One connection to a proxy, buffered (Hive's default) or framed; SASL GSSAPI with `sasl_principal`
    (the proxy's, `_HOST` standing for `host`)."""

    def __init__(self, host: str, port: int, *, timeout_s: float, framed: bool = False, sasl_principal: str | None = None):
        self.framed = framed
        self._seqid = 0
        try:
            self._sock = socket.create_connection((host, port), timeout=timeout_s)
        except OSError as e:
            raise ConnectionError(f"could not connect to {host}:{port}: {e.strerror or e}") from None
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if sasl_principal:
            self._sock = _negotiated(self._sock, sasl_principal, host)
            self._in = _Reader(self._sock)
        else:
            self._in = self._sock.makefile("rb")

    def set_ugi(self, user: str, groups: list[str]) -> list[str]:
        args = _string_field(1, user) + _field_header(LIST, 2) + _string_list(groups)
        return [_text(g) for g in self._call("set_ugi", args) or []]

    def execute_script(self, statements: str, database: str) -> list[Result]:
        """One result per statement, in order (ApplicationError UNKNOWN_METHOD from a proxy before it)."""
        return [_result(r) for r in self._call("hmsproxy_execute_script", _string_field(1, statements) + _string_field(2, database))]

    def execute(self, statements: str, database: str) -> Result:
        """The last statement's result."""
        return _result(self._call("hmsproxy_execute", _string_field(1, statements) + _string_field(2, database)))

    def close(self) -> None:
        self._in.close()
        self._sock.close()

    def _call(self, method: str, args: bytes):
        self._seqid += 1
        name = method.encode()
        message = struct.pack("!Ii", VERSION_1 | CALL, len(name)) + name + struct.pack("!i", self._seqid) + args + bytes([STOP])
        self._sock.sendall(struct.pack("!i", len(message)) + message if self.framed else message)
        stream = io.BytesIO(_read(self._in, struct.unpack("!i", _read(self._in, 4))[0])) if self.framed else self._in
        header = struct.unpack("!I", _read(stream, 4))[0]
        if header & 0xFFFF0000 != VERSION_1:
            raise ApplicationError(f"{method}: not a strict binary-protocol answer (header {header:#x})")
        _read(stream, struct.unpack("!i", _read(stream, 4))[0] + 4)  # the method's name and the seqid
        body = _value(stream, STRUCT)
        if header & 0xFF == EXCEPTION:  # TApplicationException {1: string message, 2: i32 type}
            raise ApplicationError(_text(body.get(1, b"")), body.get(2, 0))
        if 1 in body:  # o1: MetaException {1: string message}
            raise MetaError(_text(body[1].get(1, b"")))
        if 0 not in body:
            raise ApplicationError(f"{method} failed: unknown result", 5)  # Thrift's MISSING_RESULT
        return body[0]


def _negotiated(sock, principal: str, host: str):
    """`sock` after SASL GSSAPI as the caller: its data-frame layer (a SaslSocket). Raises
    ConnectionError naming the principal and Kerberos' reason (closing `sock`)."""
    from thriftpy2.transport import TTransportException  # loaded by protocol/sasl.py anyway

    from hmsproxy.protocol.kerberos_client import caller_mechanism
    from hmsproxy.protocol.sasl import PROXY, SaslError, SaslSocket, negotiate

    target, mechanism_for = caller_mechanism(principal, host, PROXY)  # only the proxy answers hmsproxy_execute
    try:
        mechanism = mechanism_for()
        negotiate(sock, mechanism)
    except (SaslError, TTransportException, OSError) as e:
        sock.close()
        raise ConnectionError(f"SASL GSSAPI to {target} failed: {e}") from None
    return SaslSocket(sock, mechanism)


class _Reader:
    """`read(n)`: n bytes (fewer only at the end) from a socket-like `recv` (the SASL frame layer)."""

    def __init__(self, sock):
        self._sock = sock

    def read(self, n: int) -> bytes:
        data = bytearray()
        while len(data) < n and (chunk := self._sock.recv(n - len(data))):
            data += chunk
        return bytes(data)

    def close(self) -> None:
        pass


def _field_header(ttype: int, fid: int) -> bytes:
    return struct.pack("!bh", ttype, fid)


def _string(text: str) -> bytes:
    data = text.encode()
    return struct.pack("!i", len(data)) + data


def _string_field(fid: int, text: str) -> bytes:
    return _field_header(STRING, fid) + _string(text)


def _string_list(items: list[str]) -> bytes:
    return struct.pack("!bi", STRING, len(items)) + b"".join(_string(i) for i in items)


def _text(value: bytes) -> str:
    return value.decode("utf-8", "replace")


def _result(fields: dict) -> Result:
    """HmsProxyResult {1: list<string> columns, 2: list<list<string>> rows}."""
    return [_text(c) for c in fields.get(1) or []], [[_text(v) for v in row] for row in fields.get(2) or []]


def _read(stream, n: int) -> bytes:
    data = stream.read(n)
    if len(data) != n:
        raise ConnectionError("the proxy closed the connection")
    return data


def _value(stream, ttype: int):
    """One value: a struct as {field id: value}, lists and sets as lists, maps as (key, value) pairs,
    strings as bytes."""
    if ttype in _FIXED:
        fmt = _FIXED[ttype]
        return struct.unpack(fmt, _read(stream, struct.calcsize(fmt)))[0]
    if ttype == STRING:
        return _read(stream, struct.unpack("!i", _read(stream, 4))[0])
    if ttype == STRUCT:
        fields = {}
        while (ftype := _read(stream, 1)[0]) != STOP:
            fid = struct.unpack("!h", _read(stream, 2))[0]
            fields[fid] = _value(stream, ftype)
        return fields
    if ttype in (LIST, SET):
        etype, size = struct.unpack("!bi", _read(stream, 5))
        return [_value(stream, etype) for _ in range(size)]
    if ttype == MAP:
        ktype, vtype, size = struct.unpack("!bbi", _read(stream, 6))
        return [(_value(stream, ktype), _value(stream, vtype)) for _ in range(size)]
    raise ApplicationError(f"unknown Thrift type {ttype} in the answer")
